//! Privilege checks: whether the user a statement runs as may do what it asks, as
//! Oracle decides it.
//!
//! - SYS may do anything; the owner of a table, view or sequence may do anything to it.
//! - Reading or changing another user's table or view needs the object privilege (a
//!   grant to the user or to PUBLIC) or the matching `... ANY TABLE` system privilege;
//!   a foreign key to another user's table needs REFERENCES on it.
//! - Inside a view, what the view reads is checked against the view's owner, not the
//!   user who queries it (definer's rights): a grant on a view is enough to query it.
//! - Creating needs `CREATE TABLE` (`VIEW`, `SEQUENCE`); dropping or altering another
//!   user's object needs the `... ANY ...` privilege; `ALTER SYSTEM` needs its own (which
//!   statement needs which is `authorize`'s).
//!
//! The decision itself is the catalog's (`Catalog::holds`); this module asks it for the
//! acting user. Checks run where a statement resolves the names it uses (planning a query,
//! binding a DML statement, each DDL statement): a GRANT or REVOKE changes the
//! dictionary, which makes every kept plan anew, so a revoked privilege stops the next
//! execution. A refusal is ORA-01031 and changes nothing.

use crate::catalog::users::SYS;
use crate::catalog::{ObjectPrivilege, SystemPrivilege};
use crate::error::{Error, Result};
use crate::instance::Session;
use std::sync::Arc;

/// The user whose privileges apply now: the owner of the view being planned, else the
/// session's user.
pub(crate) fn acting_user(session: &Session) -> Arc<str> {
    super::view_expansion::Expanding::owner().unwrap_or_else(|| session.user())
}

/// Refuses unless the acting user may use `privilege` on table or view `object`.
pub(crate) fn require_on(session: &Session, object: &str, privilege: ObjectPrivilege) -> Result<()> {
    let user = acting_user(session);
    if *user == *SYS {
        return Ok(());
    }
    if session.db.catalog.holds(&user, object, privilege, privilege.on_any_table()) {
        return Ok(());
    }
    Err(Error::InsufficientPrivileges { what: format!("{user} may not {} {object}", verb(privilege)) })
}

/// Refuses unless the session's user holds `privilege`.
pub(crate) fn require_system(session: &Session, privilege: SystemPrivilege) -> Result<()> {
    let user = session.user();
    if *user == *SYS || session.db.catalog.user(&user).is_some_and(|u| u.has(privilege)) {
        return Ok(());
    }
    Err(Error::InsufficientPrivileges { what: format!("{user} lacks the {} privilege", privilege.name()) })
}

/// Refuses unless the session's user owns `object` (a table, view, sequence or index) or
/// holds `any`, the privilege to do the same to anyone's (DROP ANY TABLE, ...). An object
/// that does not exist is left to the statement to report.
pub(crate) fn require_owner_or(session: &Session, object: &str, any: SystemPrivilege) -> Result<()> {
    let user = session.user();
    let catalog = &session.db.catalog;
    if *user == *SYS || catalog.kind_of(object).is_none() || catalog.owner_of(object) == *user {
        return Ok(());
    }
    require_system(session, any).map_err(|_| Error::InsufficientPrivileges {
        what: format!(
            "{object} belongs to {} and {user} lacks the {} privilege",
            session.db.catalog.owner_of(object),
            any.name()
        ),
    })
}

/// Refuses unless the session's user may create an object: `own` (CREATE TABLE) or `any`
/// (CREATE ANY TABLE).
pub(crate) fn require_create(session: &Session, own: SystemPrivilege, any: SystemPrivilege) -> Result<()> {
    require_system(session, own).or_else(|e| require_system(session, any).map_err(|_| e))
}

/// Refuses a session reading lioscope's dynamic performance views (`V$...`) without
/// SELECT ANY DICTIONARY; the `USER_...` views are everyone's.
pub(crate) fn require_dictionary_view(session: &Session, view: &str) -> Result<()> {
    if !view.starts_with("V$") && !view.starts_with("DBA_") {
        return Ok(());
    }
    let user = acting_user(session);
    if *user == *SYS || session.db.catalog.user(&user).is_some_and(|u| u.has(SystemPrivilege::SelectAnyDictionary)) {
        return Ok(());
    }
    Err(Error::InsufficientPrivileges { what: format!("{user} may not read {view} (SELECT ANY DICTIONARY)") })
}

fn verb(privilege: ObjectPrivilege) -> &'static str {
    match privilege {
        ObjectPrivilege::Select => "select from",
        ObjectPrivilege::Insert => "insert into",
        ObjectPrivilege::Update => "update",
        ObjectPrivilege::Delete => "delete from",
        ObjectPrivilege::References => "refer by a foreign key to",
    }
}
