//! Checking rows against a table's CHECK constraints before they are written, and how
//! constraint errors name a column or a constraint. Every path that writes rows uses it:
//! `dml` (INSERT, INSERT ... SELECT, APPEND, COPY) and `modify` (UPDATE); a condition
//! that is FALSE refuses the row (ORA-02290), TRUE and UNKNOWN pass.

use super::bind::{Binder, Scope};
use crate::access::RowAccess;
use crate::catalog::{ConstraintKind, SCHEMA, TableDef};
use crate::error::{Error, Result};
use crate::expr::Expr;
use crate::expr::functions::FunctionContext;
use crate::instance::Session;
use std::cell::RefCell;

/// Binds a CHECK condition over `table`'s columns.
pub(super) fn bind_condition(session: &Session, table: &TableDef, condition: &str) -> Result<Expr> {
    let parsed = super::oracle_types::parser(&sqlparser::dialect::OracleDialect {}, condition)
        .and_then(|mut p| p.parse_expr())
        .map_err(|e| Error::Parse { message: format!("CHECK condition {condition}: {e}"), position: None })?;
    let names = table.columns.iter().map(|c| c.name.clone()).collect();
    let scope = Scope { names, qualifiers: vec![table.name.clone()], ..Default::default() };
    let f = super::function_context(session);
    Binder { scope: &scope, f: &f, grouping: None, subqueries: None }.bind(&parsed)
}

/// `"SCHEMA"."TABLE"."COLUMN"`, as ORA-01400 and ORA-01407 name a column.
pub(super) fn column_path(table: &str, column: &str) -> String {
    format!("\"{SCHEMA}\".\"{table}\".\"{column}\"")
}

/// `SCHEMA.NAME`, as Oracle's constraint errors name a constraint.
pub(super) fn qualified(name: &str) -> String {
    format!("{SCHEMA}.{name}")
}

/// The enabled CHECK conditions of a table, bound, for checking rows before they are
/// written.
pub(super) struct RowChecks {
    /// (qualified constraint name, condition)
    checks: Vec<(String, Expr)>,
    /// The statement's function context, for evaluating the conditions.
    f: RefCell<FunctionContext>,
}

impl RowChecks {
    /// The checks of `table`, or `None` if it has no enabled CHECK constraint.
    pub(super) fn of(session: &Session, table: &TableDef) -> Result<Option<RowChecks>> {
        let mut checks = Vec::new();
        for c in table.constraints.iter().filter(|c| c.enabled) {
            if let ConstraintKind::Check { condition } = &c.kind {
                checks.push((qualified(&c.name), bind_condition(session, table, condition)?));
            }
        }
        if checks.is_empty() {
            return Ok(None);
        }
        Ok(Some(RowChecks { checks, f: RefCell::new(super::function_context(session)) }))
    }

    /// Refuses `row` (the whole row as it will be stored) if a condition is FALSE.
    pub(super) fn check<R: RowAccess + ?Sized>(&self, row: &R) -> Result<()> {
        let mut f = self.f.borrow_mut();
        for (name, condition) in &self.checks {
            if condition.eval_condition(row, &mut f)? == Some(false) {
                return Err(Error::CheckViolation { constraint: name.clone() });
            }
        }
        Ok(())
    }
}
