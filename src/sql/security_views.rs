//! The dictionary views of users and privileges, as Oracle names them: `DBA_USERS`,
//! `ALL_USERS`, `USER_USERS`, `DBA_SYS_PRIVS`, `DBA_ROLE_PRIVS`, `DBA_TAB_PRIVS` (the `DBA_` views
//! need SELECT ANY DICTIONARY), the session's own `USER_SYS_PRIVS`, `USER_ROLE_PRIVS`,
//! `USER_TAB_PRIVS`, `SESSION_PRIVS` and `SESSION_ROLES`, and `ALL_TABLES`: the tables
//! the session's user may read, with their owners. Computed when a statement that reads
//! them is planned, like the other fixed views (`views`).

use super::fixed_rows::{Rows, cols, text};
use crate::catalog::users::SYS;
use crate::catalog::{ObjectPrivilege, Role, SystemPrivilege, UserDef};
use crate::instance::Session;
use crate::types::{Datum, Value};

/// The rows of view `name`, if it is one of these.
pub(super) fn view(name: &str, session: &Session) -> Option<Rows> {
    Some(match name {
        "DBA_USERS" => dba_users(session),
        "ALL_USERS" => all_users(session),
        "USER_USERS" => user_users(session),
        "DBA_SYS_PRIVS" => sys_privs(session, None),
        "USER_SYS_PRIVS" => sys_privs(session, Some(&session.user())),
        "DBA_ROLE_PRIVS" => role_privs(session, None),
        "USER_ROLE_PRIVS" => role_privs(session, Some(&session.user())),
        "DBA_TAB_PRIVS" => tab_privs(session, None),
        "USER_TAB_PRIVS" => tab_privs(session, Some(&session.user())),
        "SESSION_PRIVS" => session_privs(session),
        "SESSION_ROLES" => session_roles(session),
        "ALL_TABLES" => all_tables(session),
        _ => return None,
    })
}

fn yes_no(on: bool) -> Value {
    text(if on { "YES" } else { "NO" })
}

fn dba_users(session: &Session) -> Rows {
    let rows = session
        .db
        .catalog
        .users()
        .into_iter()
        .map(|u| {
            vec![
                text(u.name.clone()),
                text(if u.locked { "LOCKED" } else { "OPEN" }),
                Datum::Date(u.created),
                text(if u.password.is_some() { "PASSWORD" } else { "NONE" }),
                text(if u.password.is_some() { "SCRAM-SHA-256" } else { "" }),
            ]
        })
        .collect();
    (cols(&["USERNAME", "ACCOUNT_STATUS", "CREATED", "AUTHENTICATION_TYPE", "PASSWORD_VERSIONS"]), rows)
}

/// The session's own user.
fn user_users(session: &Session) -> Rows {
    let rows = users_of(session, Some(&session.user()))
        .into_iter()
        .map(|u| vec![text(u.name.clone()), text(if u.locked { "LOCKED" } else { "OPEN" }), Datum::Date(u.created)])
        .collect();
    (cols(&["USERNAME", "ACCOUNT_STATUS", "CREATED"]), rows)
}

fn all_users(session: &Session) -> Rows {
    let rows =
        session.db.catalog.users().into_iter().map(|u| vec![text(u.name.clone()), Datum::Date(u.created)]).collect();
    (cols(&["USERNAME", "CREATED"]), rows)
}

/// The users a view lists: all, or the one named.
fn users_of(session: &Session, only: Option<&str>) -> Vec<UserDef> {
    session.db.catalog.users().into_iter().filter(|u| only.is_none_or(|o| u.name == o)).collect()
}

fn sys_privs(session: &Session, only: Option<&str>) -> Rows {
    let mut rows = Vec::new();
    for user in users_of(session, only) {
        for (privilege, admin) in &user.system_privileges {
            rows.push(vec![text(user.name.clone()), text(privilege.name()), yes_no(*admin)]);
        }
    }
    (cols(&["GRANTEE", "PRIVILEGE", "ADMIN_OPTION"]), rows)
}

fn role_privs(session: &Session, only: Option<&str>) -> Rows {
    let mut rows = Vec::new();
    for user in users_of(session, only) {
        for (role, admin) in &user.roles {
            rows.push(vec![text(user.name.clone()), text(role.name()), yes_no(*admin)]);
        }
    }
    (cols(&["GRANTEE", "GRANTED_ROLE", "ADMIN_OPTION"]), rows)
}

/// Grants on objects: all, or those to or on the objects of user `only`.
fn tab_privs(session: &Session, only: Option<&str>) -> Rows {
    let catalog = &session.db.catalog;
    let mut rows = Vec::new();
    for (object, grants) in catalog.all_grants() {
        let owner = catalog.owner_of(&object);
        for (grantee, privileges) in grants {
            if only.is_some_and(|u| u != grantee && u != owner) {
                continue;
            }
            for (privilege, grantable) in privileges {
                let kind = catalog.kind_of(&object).unwrap_or("table").to_ascii_uppercase();
                rows.push(vec![
                    text(grantee.clone()),
                    text(owner.clone()),
                    text(object.clone()),
                    text(privilege.name()),
                    yes_no(grantable),
                    text(kind),
                ]);
            }
        }
    }
    (cols(&["GRANTEE", "OWNER", "TABLE_NAME", "PRIVILEGE", "GRANTABLE", "TYPE"]), rows)
}

/// The session's user's system privileges, direct or through roles.
fn session_privs(session: &Session) -> Rows {
    let user = session.user();
    let privileges: Vec<SystemPrivilege> = match session.db.catalog.user(&user) {
        Some(def) => def.effective_privileges().into_iter().collect(),
        None => Vec::new(),
    };
    (cols(&["PRIVILEGE"]), privileges.into_iter().map(|p| vec![text(p.name())]).collect())
}

fn session_roles(session: &Session) -> Rows {
    let user = session.user();
    let roles: Vec<Role> = match session.db.catalog.user(&user) {
        Some(def) if def.name == SYS => Role::ALL.to_vec(),
        Some(def) => def.roles.keys().copied().collect(),
        None => Vec::new(),
    };
    (cols(&["ROLE"]), roles.into_iter().map(|r| vec![text(r.name())]).collect())
}

/// The tables the session's user may read: its own, those granted to it or to PUBLIC,
/// every table with SELECT ANY TABLE.
fn all_tables(session: &Session) -> Rows {
    let catalog = &session.db.catalog;
    let user = session.user();
    let rows = catalog
        .tables()
        .iter()
        .filter(|t| catalog.holds(&user, &t.name, ObjectPrivilege::Select, Some(SystemPrivilege::SelectAnyTable)))
        .map(|t| vec![text(catalog.owner_of(&t.name)), text(t.name.clone()), text("USERS")])
        .collect();
    (cols(&["OWNER", "TABLE_NAME", "TABLESPACE_NAME"]), rows)
}
