//! CREATE [OR REPLACE] VIEW and DROP VIEW. A view is stored as the text of its query and
//! its columns' names (see [`crate::catalog::ViewDef`]); a query naming it plans that
//! text as an inline view. CREATE plans the query once, so a view that does not plan
//! (a table it reads is missing, a column name is wrong) is refused then, and a view
//! whose definition reads itself, directly or through other views, is refused (ORA-01731).
//!
//! Invariant: a stored view's text planned on its creation and its column count matched
//! its query's; a query naming a view whose tables changed since plans the text again
//! and reports what no longer plans.

use super::ddl::{new_object_name, single_name};
use super::result::{QueryResult, StatementKind};
use crate::catalog::ViewDef;
use crate::error::{Error, Result};
use crate::instance::Session;
use sqlparser::ast;

pub fn create_view(session: &Session, create: &ast::CreateView) -> Result<QueryResult> {
    if create.or_alter
        || create.materialized
        || create.secure
        || create.temporary
        || create.if_not_exists
        || create.to.is_some()
        || create.params.is_some()
        || !create.cluster_by.is_empty()
        || create.comment.is_some()
        || create.with_no_schema_binding
        || create.copy_grants
        || !matches!(create.options, ast::CreateTableOptions::None)
    {
        return Err(Error::unsupported(format!("CREATE VIEW form {create}")));
    }
    let name = new_object_name(&create.name, "view")?;
    if session.db.catalog.table(&name).is_some() || session.db.catalog.index(&name).is_some() {
        return Err(Error::ObjectExists { kind: "object", name });
    }
    if !create.or_replace && session.db.catalog.view(&name).is_some() {
        return Err(Error::ObjectExists { kind: "view", name });
    }
    let query_columns = {
        // The view reads as its owner: a view made anew is the session's user's.
        let owner = match session.db.catalog.view(&name) {
            Some(_) => std::sync::Arc::from(session.db.catalog.owner_of(&name)),
            None => session.user(),
        };
        let _expanding = super::view_expansion::Expanding::enter(&name, owner)?;
        let mut f = crate::expr::functions::FunctionContext::at_first_use(0);
        // Known, so that a view reading one is refused for it (ORA-02287).
        f.sequences = Some(session.sequence_source());
        super::plan::plan_query(&create.query, session, &f)?.columns
    };
    let columns: Vec<String> = if create.columns.is_empty() {
        query_columns
    } else {
        if create.columns.len() != query_columns.len() {
            return Err(Error::InvalidValue {
                context: name,
                message: format!(
                    "ORA-01730: invalid number of column names specified ({} named, the query gives {})",
                    create.columns.len(),
                    query_columns.len()
                ),
            });
        }
        create.columns.iter().map(|c| super::bind::ident_name(&c.name)).collect()
    };
    for (i, column) in columns.iter().enumerate() {
        if columns[..i].contains(column) {
            return Err(Error::InvalidValue {
                context: name,
                message: format!("ORA-00957: duplicate column name {column} (give the query's columns aliases)"),
            });
        }
    }
    let view = ViewDef {
        name,
        text: super::oracle_types::as_written(&create.query.to_string()),
        columns,
        created: crate::types::local_now(),
    };
    session.db.catalog.create_view(view, create.or_replace, &session.user())?;
    Ok(QueryResult::message(StatementKind::Ddl, "View created."))
}

pub fn drop_view(session: &Session, names: &[ast::ObjectName], if_exists: bool) -> Result<QueryResult> {
    for name in names {
        let name = single_name(name)?;
        if session.db.catalog.view(&name).is_none() {
            if if_exists {
                continue;
            }
            return Err(Error::UnknownObject { kind: "view", name });
        }
        session.db.catalog.remove_view(&name)?;
    }
    Ok(QueryResult::message(StatementKind::Ddl, "View dropped."))
}
