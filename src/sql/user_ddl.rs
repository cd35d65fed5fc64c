//! CREATE USER, ALTER USER, DROP USER, GRANT and REVOKE run: the users and grants are
//! the catalog's ([`crate::catalog::users`]), the statements' text `user_statement`'s,
//! the checks of who may do what [`super::privileges`]'. A password is kept only as its
//! SCRAM-SHA-256 verifier.

use super::privileges::{require_owner_or, require_system};
use super::result::{QueryResult, StatementKind};
use super::user_statement::{Granted, UserStatement};
use crate::catalog::users::{PUBLIC, SYS};
use crate::catalog::{ObjectPrivilege, Role, ScramVerifier, SystemPrivilege, UserDef};
use crate::error::{Error, Result};
use crate::instance::Session;

/// Runs a user or grant statement (DDL: it commits the session's transaction first).
pub fn run(session: &Session, statement: &UserStatement) -> Result<QueryResult> {
    let catalog = &session.db.catalog;
    match statement {
        UserStatement::CreateUser { name, password, locked } => {
            require_system(session, SystemPrivilege::CreateUser)?;
            if name == PUBLIC {
                return Err(Error::ObjectExists { kind: "user", name: name.clone() });
            }
            let verifier = password.as_deref().map(ScramVerifier::of_password).transpose()?;
            let mut user = UserDef::new(name.clone(), crate::types::local_now(), verifier);
            user.locked = *locked;
            catalog.create_user(user)?;
            Ok(QueryResult::message(StatementKind::Ddl, "User created."))
        }
        UserStatement::AlterUser { name, password, locked } => {
            // Anyone may change their own password; the rest needs ALTER USER.
            if *name != *session.user() || locked.is_some() {
                require_system(session, SystemPrivilege::AlterUser)?;
            }
            let verifier = password.as_deref().map(ScramVerifier::of_password).transpose()?;
            catalog.alter_user(name, |user| {
                if let Some(verifier) = verifier {
                    user.password = Some(verifier);
                }
                if let Some(locked) = locked {
                    user.locked = *locked;
                }
                Ok(())
            })?;
            Ok(QueryResult::message(StatementKind::Ddl, "User altered."))
        }
        UserStatement::DropUser { name, cascade } => {
            require_system(session, SystemPrivilege::DropUser)?;
            if catalog.user(name).is_none() {
                return Err(Error::UnknownObject { kind: "user", name: name.clone() });
            }
            if name == SYS {
                return Err(Error::InsufficientPrivileges { what: "SYS cannot be dropped".into() });
            }
            let sessions = session.db.registry.sessions();
            if let Some(connected) = sessions.iter().find(|s| *s.user.lock().as_ref() == **name) {
                return Err(Error::InvalidValue {
                    context: name.clone(),
                    message: format!(
                        "ORA-01940: cannot drop a user that is currently connected (session {})",
                        connected.sid
                    ),
                });
            }
            if *cascade {
                drop_objects_of(session, name)?;
            }
            catalog.drop_user(name)?;
            Ok(QueryResult::message(StatementKind::Ddl, "User dropped."))
        }
        UserStatement::Grant { what, grantees, with_option } => {
            check_grantees(session, grantees, what)?;
            match what {
                Granted::System { privileges, roles, .. } => {
                    may_grant_system(session, privileges, roles)?;
                    for grantee in grantees {
                        catalog.alter_user(grantee, |user| {
                            for p in privileges {
                                *user.system_privileges.entry(*p).or_insert(false) |= *with_option;
                            }
                            for r in roles {
                                *user.roles.entry(*r).or_insert(false) |= *with_option;
                            }
                            Ok(())
                        })?;
                    }
                }
                Granted::Object { privileges, object, .. } => {
                    may_grant_object(session, object, privileges)?;
                    for grantee in grantees {
                        catalog.grant_object(object, grantee, privileges, *with_option)?;
                    }
                }
            }
            Ok(QueryResult::message(StatementKind::Ddl, "Grant succeeded."))
        }
        UserStatement::Revoke { what, grantees } => {
            check_grantees(session, grantees, what)?;
            match what {
                Granted::System { privileges, roles, all } => {
                    may_grant_system(session, privileges, roles)?;
                    for grantee in grantees {
                        catalog.alter_user(grantee, |user| {
                            let missing = privileges.iter().find(|p| !user.system_privileges.contains_key(p));
                            let missing_role = roles.iter().find(|r| !user.roles.contains_key(r));
                            match (missing, missing_role) {
                                (Some(p), _) if !*all => Err(not_granted(p.name(), grantee)),
                                (_, Some(r)) => Err(not_granted(r.name(), grantee)),
                                _ => {
                                    privileges.iter().for_each(|p| _ = user.system_privileges.remove(p));
                                    roles.iter().for_each(|r| _ = user.roles.remove(r));
                                    Ok(())
                                }
                            }
                        })?;
                    }
                }
                Granted::Object { privileges, object, all } => {
                    may_grant_object(session, object, privileges)?;
                    for grantee in grantees {
                        catalog.revoke_object(object, grantee, (!*all).then_some(privileges.as_slice()))?;
                    }
                }
            }
            Ok(QueryResult::message(StatementKind::Ddl, "Revoke succeeded."))
        }
    }
}

fn not_granted(what: &str, grantee: &str) -> Error {
    Error::InvalidValue {
        context: grantee.to_owned(),
        message: format!("ORA-01952: {what} was not granted to {grantee}"),
    }
}

/// Refuses grantees that are no user (ORA-01917), SYS (whose privileges are all its
/// own), and PUBLIC for system privileges (which go to users).
fn check_grantees(session: &Session, grantees: &[String], what: &Granted) -> Result<()> {
    for grantee in grantees {
        if grantee == SYS {
            return Err(Error::InvalidValue {
                context: grantee.clone(),
                message: "ORA-01749: SYS holds every privilege; none is granted to or revoked from it".into(),
            });
        }
        let public_ok = matches!(what, Granted::Object { .. });
        if (grantee == PUBLIC && !public_ok) || (grantee != PUBLIC && session.db.catalog.user(grantee).is_none()) {
            return Err(Error::UnknownObject { kind: "user", name: grantee.clone() });
        }
    }
    Ok(())
}

/// Refuses a grantor who may not grant these system privileges and roles: it needs
/// GRANT ANY PRIVILEGE (GRANT ANY ROLE) or each one WITH ADMIN OPTION.
fn may_grant_system(session: &Session, privileges: &[SystemPrivilege], roles: &[Role]) -> Result<()> {
    let user = session.user();
    if *user == *SYS {
        return Ok(());
    }
    let def = session.db.catalog.user(&user).ok_or(Error::LogonDenied { user: user.to_string() })?;
    let refused = privileges.iter().find(|p| !def.may_grant(**p)).map(|p| p.name());
    let refused = refused.or_else(|| roles.iter().find(|r| !def.may_grant_role(**r)).map(|r| r.name()));
    match refused {
        Some(name) => Err(Error::InsufficientPrivileges { what: format!("{user} may not grant or revoke {name}") }),
        None => Ok(()),
    }
}

/// Refuses a grantor who may not grant these privileges on `object`: its owner may, a
/// user holding them WITH GRANT OPTION may, and so may GRANT ANY OBJECT PRIVILEGE.
fn may_grant_object(session: &Session, object: &str, privileges: &[ObjectPrivilege]) -> Result<()> {
    let catalog = &session.db.catalog;
    if !matches!(catalog.kind_of(object), Some("table" | "view" | "sequence")) {
        return Err(Error::UnknownObject { kind: "table, view or sequence", name: object.to_owned() });
    }
    let user = session.user();
    let grantable =
        catalog.grants_on(object).get(&*user).is_some_and(|held| privileges.iter().all(|p| held.get(p) == Some(&true)));
    if grantable {
        return Ok(());
    }
    require_owner_or(session, object, SystemPrivilege::GrantAnyObjectPrivilege)
}

/// Drops every view, table and sequence `user` owns (DROP USER ... CASCADE), views
/// first; a table's foreign keys from other users' tables go with it.
fn drop_objects_of(session: &Session, user: &str) -> Result<()> {
    let catalog = &session.db.catalog;
    for name in catalog.objects_owned_by(user).iter().filter(|o| catalog.view(o).is_some()) {
        catalog.remove_view(name)?;
    }
    for table in catalog.objects_owned_by(user).into_iter().filter(|o| catalog.table(o).is_some()) {
        super::ddl::drop_tables(session, false, &[table], true)?;
    }
    // What is left are sequences (identity columns' went with their tables).
    let sequences = catalog.objects_owned_by(user);
    if !sequences.is_empty() {
        super::sequence_ddl::drop(session, &sequences, true)?;
    }
    Ok(())
}
