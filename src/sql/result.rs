//! What a statement returns: its kind, its rows or its message, and the row-source
//! statistics a query gathered.

use crate::types::Value;

/// What kind of statement produced a result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StatementKind {
    /// A query: `rows` holds its result.
    Query,
    /// INSERT or COPY: `rows_affected` rows were added.
    Insert,
    /// UPDATE or DELETE: `rows_affected` rows were changed.
    Change,
    /// COMMIT, ROLLBACK, SAVEPOINT, SET TRANSACTION.
    Transaction,
    /// CREATE, DROP, TRUNCATE.
    Ddl,
    /// ALTER SESSION, ALTER SYSTEM.
    Alter,
    /// EXPLAIN PLAN or SHOW: `rows` holds the text.
    Describe,
}

/// The result of one statement.
#[derive(Debug, Clone)]
pub struct QueryResult {
    pub kind: StatementKind,
    pub columns: Vec<String>,
    pub rows: Vec<Vec<Value>>,
    pub rows_affected: u64,
    /// What SQL*Plus would print after a statement that returns no rows ("Table created.").
    pub message: Option<String>,
    /// The plan with what each row source did, when the query gathered them (see
    /// [`Session::set_plan_statistics`](crate::Session::set_plan_statistics)).
    pub plan_statistics: Option<crate::sql::PlanStatistics>,
}

impl QueryResult {
    pub(crate) fn message(kind: StatementKind, message: impl Into<String>) -> QueryResult {
        QueryResult {
            kind,
            columns: Vec::new(),
            rows: Vec::new(),
            rows_affected: 0,
            message: Some(message.into()),
            plan_statistics: None,
        }
    }

    pub(crate) fn rows(kind: StatementKind, columns: Vec<String>, rows: Vec<Vec<Value>>) -> QueryResult {
        QueryResult { kind, columns, rows, rows_affected: 0, message: None, plan_statistics: None }
    }
}
