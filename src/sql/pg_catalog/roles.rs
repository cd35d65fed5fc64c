//! The users and roles of `pg_catalog`: `pg_roles` (`pg_authid`), `pg_user` and
//! `pg_auth_members`, from lioscope's users and its roles CONNECT, RESOURCE and DBA.

use super::super::fixed_rows::{Rows, cols, text};
use super::{SYS_OID, flag, hashed_oid, number, oid, pg_name, user_oid};
use crate::catalog::users::SYS;
use crate::catalog::{Catalog, Role};
use crate::types::Datum;
use crate::types::Value;

/// Users (who may log in) and the roles CONNECT, RESOURCE and DBA (who may not). A
/// superuser is SYS or a holder of DBA.
pub(super) fn roles(catalog: &Catalog) -> Rows {
    let mut rows: Vec<Vec<Value>> = catalog
        .users()
        .into_iter()
        .map(|u| {
            let superuser = is_superuser(&u);
            let may = |p| u.has(p);
            vec![
                oid(user_oid(&u.name)),
                text(pg_name(&u.name)),
                flag(superuser),
                flag(true),
                flag(may(crate::catalog::SystemPrivilege::CreateUser)),
                flag(superuser),
                flag(!u.locked && may(crate::catalog::SystemPrivilege::CreateSession)),
                flag(false),
                number(-1),
                text("********"),
                Datum::Null,
                flag(superuser),
                Datum::Null,
            ]
        })
        .collect();
    for role in Role::ALL {
        rows.push(vec![
            oid(hashed_oid("role", role.name())),
            text(pg_name(role.name())),
            flag(false),
            flag(true),
            flag(false),
            flag(false),
            flag(false),
            flag(false),
            number(-1),
            Datum::Null,
            Datum::Null,
            flag(false),
            Datum::Null,
        ]);
    }
    (
        cols(&[
            "OID",
            "ROLNAME",
            "ROLSUPER",
            "ROLINHERIT",
            "ROLCREATEROLE",
            "ROLCREATEDB",
            "ROLCANLOGIN",
            "ROLREPLICATION",
            "ROLCONNLIMIT",
            "ROLPASSWORD",
            "ROLVALIDUNTIL",
            "ROLBYPASSRLS",
            "ROLCONFIG",
        ]),
        rows,
    )
}

/// A PostgreSQL superuser: SYS, or a holder of DBA.
fn is_superuser(user: &crate::catalog::UserDef) -> bool {
    user.name == SYS || user.roles.contains_key(&Role::Dba)
}

pub(super) fn users(catalog: &Catalog) -> Rows {
    let rows = catalog
        .users()
        .into_iter()
        .map(|u| {
            let superuser = is_superuser(&u);
            vec![
                text(pg_name(&u.name)),
                oid(user_oid(&u.name)),
                flag(superuser),
                flag(superuser),
                flag(false),
                flag(superuser),
                text("********"),
                Datum::Null,
                Datum::Null,
            ]
        })
        .collect();
    (
        cols(&[
            "USENAME",
            "USESYSID",
            "USECREATEDB",
            "USESUPER",
            "USEREPL",
            "USEBYPASSRLS",
            "PASSWD",
            "VALUNTIL",
            "USECONFIG",
        ]),
        rows,
    )
}

/// Who holds which of the roles CONNECT, RESOURCE and DBA.
pub(super) fn role_members(catalog: &Catalog) -> Rows {
    let mut rows = Vec::new();
    for u in catalog.users() {
        for (role, admin) in &u.roles {
            rows.push(vec![oid(hashed_oid("role", role.name())), oid(user_oid(&u.name)), oid(SYS_OID), flag(*admin)]);
        }
    }
    (cols(&["ROLEID", "MEMBER", "GRANTOR", "ADMIN_OPTION"]), rows)
}
