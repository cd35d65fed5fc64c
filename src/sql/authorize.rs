//! Which privileges each statement needs before it runs: the system privileges of DDL
//! and `ALTER SYSTEM`, ownership or an `... ANY ...` privilege for changing another
//! user's object. Queries and DML are checked where they resolve their names (planning,
//! binding), by [`super::privileges`]' object checks.

use super::privileges::{require_create, require_owner_or, require_system};
use crate::catalog::SystemPrivilege;
use crate::error::Result;
use crate::instance::Session;
use crate::sql::front::Front;
use sqlparser::ast::{self, Statement};

/// Checks that the session's user may run `front`, a statement lioscope reads itself.
pub(crate) fn authorize_front(session: &Session, front: &Front) -> Result<()> {
    match front {
        Front::AlterSystemSet { .. }
        | Front::FlushBufferCache
        | Front::Checkpoint
        | Front::SwitchLogfile
        | Front::PopulateWait { .. } => require_system(session, SystemPrivilege::AlterSystem),
        Front::Analyze { table, .. } => require_owner_or(session, table, SystemPrivilege::AnalyzeAny),
        Front::AlterTableInMemory { table, .. }
        | Front::AlterTableMove { table, .. }
        | Front::AlterTableConstraint { table, .. } => require_owner_or(session, table, SystemPrivilege::AlterAnyTable),
        Front::DropTableCascadeConstraints { table } => require_owner_or(session, table, SystemPrivilege::DropAnyTable),
        Front::Sequence(s) if s.alter => require_owner_or(session, &s.name, SystemPrivilege::AlterAnySequence),
        Front::Sequence(_) => {
            require_create(session, SystemPrivilege::CreateSequence, SystemPrivilege::CreateAnySequence)
        }
        // ALTER SESSION and SHOW PARAMETERS are every session's; EXPLAIN PLAN is checked
        // as its statement is planned; users and grants check themselves.
        Front::AlterSession { .. }
        | Front::ShowParameters(_)
        | Front::CommitWrite(_)
        | Front::ExplainPlan(_)
        | Front::User(_)
        | Front::Standard { .. } => Ok(()),
    }
}

/// Checks that the session's user may run the DDL `statement`; queries and DML are
/// checked where their names are resolved.
pub(crate) fn authorize_ddl(session: &Session, statement: &Statement) -> Result<()> {
    let names = |names: &[ast::ObjectName]| -> Vec<String> {
        names.iter().filter_map(|n| super::ddl::single_name(n).ok()).collect()
    };
    let each = |objects: Vec<String>, any: SystemPrivilege| -> Result<()> {
        objects.iter().try_for_each(|o| require_owner_or(session, o, any))
    };
    match statement {
        Statement::CreateTable(_) => {
            require_create(session, SystemPrivilege::CreateTable, SystemPrivilege::CreateAnyTable)
        }
        Statement::CreateView(create) => {
            let name = names(std::slice::from_ref(&create.name));
            if create.or_replace && name.iter().any(|n| session.db.catalog.view(n).is_some()) {
                return each(name, SystemPrivilege::CreateAnyView);
            }
            require_create(session, SystemPrivilege::CreateView, SystemPrivilege::CreateAnyView)
        }
        Statement::CreateIndex(create) => {
            each(names(std::slice::from_ref(&create.table_name)), SystemPrivilege::CreateAnyIndex)
        }
        Statement::Drop { object_type, names: dropped, .. } => {
            let any = match object_type {
                ast::ObjectType::View => SystemPrivilege::DropAnyView,
                ast::ObjectType::Sequence => SystemPrivilege::DropAnySequence,
                ast::ObjectType::Index => SystemPrivilege::DropAnyIndex,
                _ => SystemPrivilege::DropAnyTable,
            };
            each(names(dropped), any)
        }
        Statement::AlterTable(alter) => each(names(std::slice::from_ref(&alter.name)), SystemPrivilege::AlterAnyTable),
        Statement::Truncate(t) => {
            let tables: Vec<ast::ObjectName> = t.table_names.iter().map(|t| t.name.clone()).collect();
            each(names(&tables), SystemPrivilege::DropAnyTable)
        }
        Statement::Copy { target: ast::CopyTarget::File { .. }, .. } => {
            // The table's INSERT is checked as its rows are shaped; reading a file of the
            // server's is more.
            require_system(session, SystemPrivilege::CreateAnyDirectory)
        }
        _ => Ok(()),
    }
}
