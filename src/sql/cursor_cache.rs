//! The session cursor cache: the queries a session ran from their text, kept parsed with
//! their plans, so that running the same text again is a soft parse, as Oracle's
//! `session_cached_cursors` makes it.
//!
//! ```text
//!  Session::execute(text) ─► kept for this text? ─yes─► the cursor runs it: its kept plan
//!                                                │      when that still fits, else anew
//!                                                └─no──► parse; a query without bind
//!                                                        variables runs as a cursor and
//!                                                        is kept; anything else runs as
//!                                                        parsed and is not
//! ```
//!
//! A transaction-control statement (COMMIT, ROLLBACK, SAVEPOINT, SET TRANSACTION) is kept
//! too: it has no plan to go stale, and a client that ends each transaction with the text
//! `COMMIT` should not pay a parse for it each time.
//!
//! Invariants:
//! - A kept query answers as its text parsed and planned anew would: the cursor makes its
//!   plan again when anything the plan was made from changed (the dictionary and its
//!   statistics, the parameters, SYSDATE held as a constant; see `cursor`), and a plan
//!   that holds rows read while planning (a `v$` view) or gathers row-source statistics
//!   is made at each execution.
//! - At most `session_cached_cursors` queries are kept; the least recently run goes first.
//!   0 keeps none: every statement is parsed and planned anew.
//! - A query is out of the cache while it runs (a statement running the same text inside
//!   it parses its own), and goes back after, even when the execution failed; a query
//!   whose first execution failed is not kept.
//! - Only queries and transaction control are kept. DML, DDL and lioscope's own
//!   statements are parsed anew at each execution (their planning is part of running
//!   them), and so is text with bind variables, which needs a cursor to give them values.
//!
//! Oracle caches a cursor at its third parse call and shares parsed statements between
//! sessions (the shared pool); lioscope keeps a query from its first execution, for its
//! own session.

use super::cursor::{ParsedStatement, bind_names, is_transaction_control};
use super::front::Front;
use super::{QueryResult, statement_text};
use crate::error::Result;
use crate::instance::Session;
use crate::stats::Stat;
use sqlparser::ast::Statement;
use std::collections::HashMap;
use std::sync::Arc;

/// Runs statement `text` in `session`: a statement kept from an earlier execution of the
/// same text runs again without parsing; any other is parsed (and a query or a
/// transaction-control statement without bind variables kept).
pub(crate) fn execute(session: &Session, text: &str) -> Result<QueryResult> {
    let text = statement_text(text);
    let capacity = session.session_cached_cursors();
    if capacity == 0 {
        return super::execute(session, text);
    }
    if let Some(mut statement) = with_cache(session, |cache| cache.take(text)) {
        session.stats().add(Stat::ParseCountTotal, 1);
        session.stats().add(Stat::SessionCursorCacheHits, 1);
        let result = statement.run(session, &[]);
        keep(session, statement, capacity);
        return result;
    }
    let (front, parsed) = super::parse_text(session, text).inspect_err(|_| {
        // A text that fails to parse counts as a hard parse, as when nothing is kept.
        session.stats().add(Stat::ParseCountHard, 1);
    })?;
    match (front, parsed) {
        (Front::Standard { clauses, .. }, Some(Statement::Query(query))) if clauses.is_empty() && !has_binds(text) => {
            // Planned (and counted in `parse count (hard)`) as the cursor runs it.
            let mut statement = ParsedStatement::query(text, query);
            let result = statement.run(session, &[]);
            if result.is_ok() {
                session.stats().add(Stat::SessionCursorCacheCount, 1);
                keep(session, statement, capacity);
            }
            result
        }
        (Front::Standard { clauses, .. }, Some(statement))
            if clauses.is_empty() && is_transaction_control(&statement) && !has_binds(text) =>
        {
            session.stats().add(Stat::ParseCountHard, 1);
            session.stats().add(Stat::SessionCursorCacheCount, 1);
            let mut statement = ParsedStatement::transaction_control(text, statement);
            let result = statement.run(session, &[]);
            keep(session, statement, capacity);
            result
        }
        (front, parsed) => {
            session.stats().add(Stat::ParseCountHard, 1);
            super::run_parsed(session, front, parsed)
        }
    }
}

/// Whether `text` holds a bind variable (or a `?`, which is refused where it is parsed).
fn has_binds(text: &str) -> bool {
    text.bytes().any(|b| b == b':' || b == b'?') && !matches!(bind_names(text), Ok(names) if names.is_empty())
}

/// Puts `statement` back in the session's cache, what its execution left in its stages
/// given back.
fn keep(session: &Session, mut statement: ParsedStatement, capacity: usize) {
    statement.release();
    with_cache(session, |cache| cache.put(statement, capacity));
}

/// `f` with the session's cache, made at its first use.
fn with_cache<T>(session: &Session, f: impl FnOnce(&mut CursorCache) -> T) -> T {
    let mut slot = session.cursor_cache.borrow_mut();
    let cache = slot.get_or_insert_with(|| Box::new(CursorCache::default()));
    f(cache.downcast_mut().expect("a session's cursor cache slot holds a CursorCache"))
}

/// The statements one session keeps, by text, with the tick of their last run.
#[derive(Default)]
struct CursorCache {
    statements: HashMap<Arc<str>, (ParsedStatement, u64)>,
    tick: u64,
}

impl CursorCache {
    /// The statement kept for `text`, taken out of the cache.
    fn take(&mut self, text: &str) -> Option<ParsedStatement> {
        self.statements.remove(text).map(|(statement, _)| statement)
    }

    /// Keeps `statement` as the most recently run, first dropping the least recently run
    /// until fewer than `capacity` (at least 1) are kept.
    fn put(&mut self, statement: ParsedStatement, capacity: usize) {
        while self.statements.len() >= capacity.max(1) {
            let oldest = self.statements.iter().min_by_key(|(_, (_, tick))| *tick).map(|(text, _)| text.clone());
            if let Some(text) = oldest {
                self.statements.remove(&text);
            }
        }
        self.tick += 1;
        self.statements.insert(statement.text().clone(), (statement, self.tick));
    }
}
