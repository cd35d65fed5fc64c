//! SQL: from statement text to a result.
//!
//! ```text
//!  text ─► front (ALTER SESSION/SYSTEM, SHOW, EXPLAIN PLAN FOR, ANALYZE, PCTFREE, COMPRESS,
//!                CREATE / ALTER SEQUENCE, identity clauses)
//!       ─► sqlparser (Oracle dialect) ─► ddl | index_ddl | sequence_ddl | analyze | dml | modify
//!                                      | plan (optimizer) ─► exec pipeline ─► QueryResult
//! ```
//!
//! `ddl` creates tables (`data_types` reads their declared column types, `ctas` types
//! the columns of CREATE TABLE ... AS SELECT, whose rows `dml` loads), `table_move`
//! moves a table's rows into a new segment (ALTER TABLE ... MOVE), `sequence_ddl` makes,
//! alters and drops sequences, `reserved_words` lists the names no new object takes,
//! `dml` is INSERT and COPY, `modify` UPDATE and DELETE, `index_maintenance` keeps a
//! table's indexes in step with both; `transaction` gives each of them statement-level
//! atomicity and autocommit, and runs COMMIT, ROLLBACK, SAVEPOINT and SET TRANSACTION.
//! `plan` builds a query's plan tree and its pipeline and asks `optimizer` how to read its
//! table (full scan or an index path, from the statistics `analyze` gathers, the cost
//! model and hints); `row_source_stats` runs a plan with a probe at each node's exit;
//! `operation` names what a plan's nodes do, for EXPLAIN and, by a one-byte code, for
//! the `v$` views (`views`, computed when a statement reading them is planned).
//! `cursor` keeps a parsed statement, and a query's plan, to run again with new bind
//! values. `result` is what a statement returns; `call` accounts one statement as a user
//! call of its session (`v$session`, DB time and DB CPU, `v$sql`).
//!
//! Unquoted identifiers are upper-cased, as Oracle stores them. Anything lioscope does not
//! implement is an error naming the construct and, where sqlparser knows it, its position.
//! `syntax_errors` words the parser's errors as Oracle's (ORA-00923, ORA-00933, ...).

mod analyze;
mod authorize;
mod call;
pub mod bind;
mod byte_mask;
mod csv_records;
mod constraint_ddl;
mod cursor_cache;
mod constraints;
mod fixed_rows;
mod foreign_keys;
mod ctas;
mod data_types;
pub mod cursor;
mod ddl;
pub mod describe;
mod dml;
mod explain_dml;
mod merge;
mod modify;
mod operation;
mod oracle_types;
mod pg_catalog;
mod privileges;
mod transaction;
pub mod front;
mod index_ddl;
mod index_maintenance;
mod information_schema;
mod interval;
pub mod optimizer;
pub mod plan;
mod reserved_words;
mod result;
mod row_checks;
mod row_encoder;
pub mod row_source_stats;
mod security_views;
mod sequence_ddl;
mod syntax_errors;
mod system;
mod table_move;
mod user_ddl;
mod user_statement;
mod view_expansion;
mod view_ddl;
mod views;

use crate::error::{Error, Result};
use crate::exec::{ExecContext, run_pipeline};
use crate::expr::functions::FunctionContext;
use crate::instance::Session;
use crate::stats::activity::flags;
use crate::stats::{Stat, TimeModel};
use front::Front;
use sqlparser::ast::{self, Statement};
use std::time::Instant;

pub(crate) use call::user_call;
pub(crate) use cursor_cache::execute as execute_cached;
pub use plan::Estimate;
pub use result::{QueryResult, StatementKind};
pub use row_source_stats::{PlanStatistics, RowSourceLine};

/// The context a statement of `session` runs in, with the functions' context `functions`.
pub(crate) fn exec_context(session: &Session, functions: FunctionContext) -> ExecContext<'_> {
    exec_context_at(session, functions, session.db.clock.current())
}

/// [`exec_context`] reading as of SCN `now` (see [`Session::access_context_at`]).
pub(crate) fn exec_context_at(session: &Session, functions: FunctionContext, now: u64) -> ExecContext<'_> {
    let db = &session.db;
    let mut ctx = ExecContext::new(
        session.access_context_at(now),
        &db.catalog,
        &db.inmemory,
        functions,
        session.parallel_max_servers(),
    );
    ctx.workarea = session.workarea();
    ctx
}

/// A statement's text without surrounding blanks and a trailing `;`: what runs, and what
/// `v$sql` tells statements apart by.
pub fn statement_text(text: &str) -> &str {
    text.trim().trim_end_matches(';').trim_end()
}

/// Runs one statement in `session`, parsed and planned anew (`cursor_cache::execute` runs
/// a query kept from an earlier execution of its text).
pub fn execute(session: &Session, text: &str) -> Result<QueryResult> {
    let text = statement_text(text);
    let parsed = parse_text(session, text);
    // A text that fails to parse counts as a hard parse too.
    session.stats().add(Stat::ParseCountHard, 1);
    let (front, parsed) = parsed?;
    run_parsed(session, front, parsed)
}

/// Reads statement `text` (without its trailing `;`): what lioscope reads itself, and
/// sqlparser's statement for standard statements and EXPLAIN PLAN. Counted in `parse count
/// (total)` and `parse time elapsed`, whether or not the text parses.
fn parse_text(session: &Session, text: &str) -> Result<(Front, Option<Statement>)> {
    if text.is_empty() {
        return Err(Error::Parse { message: "empty statement".into(), position: None });
    }
    let parse_started = Instant::now();
    session.stats().add(Stat::ParseCountTotal, 1);
    let _parsing = session.stats().activity().enter(flags::IN_PARSE | flags::IN_HARD_PARSE, flags::IN_SQL_EXECUTION);
    let parsed = front::classify(text).and_then(|front| {
        let statement = match &front {
            Front::Standard { sql, .. } | Front::ExplainPlan(sql) => Some(parse_one(sql)?),
            _ => None,
        };
        Ok((front, statement))
    });
    session.stats().add_time(TimeModel::ParseTimeElapsed, parse_started.elapsed().as_micros() as u64);
    parsed
}

/// Runs a statement `parse_text` read.
fn run_parsed(session: &Session, front: Front, parsed: Option<Statement>) -> Result<QueryResult> {
    session.stats().add(Stat::ExecuteCount, 1);
    if !matches!(front, Front::Standard { .. } | Front::CommitWrite(_)) {
        // Standard statements are checked in `dispatch`; a commit checks itself.
        session.db.check_alive()?;
    }
    authorize::authorize_front(session, &front)?;
    match (front, parsed) {
        (Front::AlterSession { name, value }, _) => system::alter_session(session, &name, &value),
        (Front::AlterSystemSet { name, value }, _) => system::alter_system(session, &name, &value),
        (Front::FlushBufferCache, _) => system::flush_buffer_cache(session),
        (Front::Checkpoint, _) => system::checkpoint(session),
        (Front::SwitchLogfile, _) => system::switch_logfile(session),
        (Front::CommitWrite(write), _) => transaction::commit(session, write),
        (Front::ShowParameters(filter), _) => Ok(system::show_parameters(session, filter.as_deref())),
        (Front::ExplainPlan(_), Some(statement)) => explain(session, &statement),
        (Front::Analyze { table, sample }, _) => {
            transaction::ddl(session, || analyze::analyze_table(session, &table, sample))
        }
        (Front::AlterTableInMemory { table, spec }, _) => {
            transaction::ddl(session, || ddl::alter_inmemory(session, &table, spec))
        }
        (Front::AlterTableMove { table, compress }, _) => {
            transaction::ddl(session, || table_move::alter_table_move(session, &table, compress))
        }
        (Front::AlterTableConstraint { table, name, enable }, _) => {
            let change = match enable {
                true => constraint_ddl::AlterConstraint::Enable { name },
                false => constraint_ddl::AlterConstraint::Disable { name },
            };
            transaction::ddl(session, || constraint_ddl::alter_constraint(session, &table, change))
        }
        (Front::DropTableCascadeConstraints { table }, _) => {
            transaction::ddl(session, || ddl::drop_tables(session, false, &[table], true))
        }
        (Front::Sequence(statement), _) => transaction::ddl(session, || sequence_ddl::run(session, &statement)),
        (Front::User(statement), _) => transaction::ddl(session, || user_ddl::run(session, &statement)),
        (Front::PopulateWait { priority, percentage, timeout_seconds }, _) => {
            ddl::populate_wait(session, priority, percentage, timeout_seconds)
        }
        (Front::Standard { clauses, .. }, Some(statement)) => dispatch(session, &statement, clauses),
        _ => unreachable!("standard and EXPLAIN statements were parsed above"),
    }
}

/// Parses exactly one statement.
pub(crate) fn parse_one(sql: &str) -> Result<Statement> {
    let mut statements = oracle_types::parse_statements(sql).map_err(|e| syntax_errors::parse_error(e, sql))?;
    match statements.len() {
        1 => Ok(statements.remove(0)),
        0 => Err(Error::Parse { message: "empty statement".into(), position: None }),
        n => Err(Error::Parse {
            message: format!("expected one statement, found {n} (run them one at a time)"),
            position: None,
        }),
    }
}

pub(crate) fn dispatch(session: &Session, statement: &Statement, clauses: front::Clauses) -> Result<QueryResult> {
    dispatch_keeping(session, statement, clauses, &mut KeptBinding::default())
}

/// What a cursor keeps of a DML statement's binding between its executions: an UPDATE's
/// or DELETE's ([`modify::BoundChange`]), an INSERT ... VALUES' ([`dml::BoundInsert`]).
#[derive(Default)]
pub(crate) struct KeptBinding {
    change: Option<modify::BoundChange>,
    insert: Option<dml::BoundInsert>,
}

/// [`dispatch`] for a cursor that keeps what a DML statement was bound to in `kept`
/// between its executions (see [`KeptBinding`]).
pub(crate) fn dispatch_keeping(
    session: &Session,
    statement: &Statement,
    clauses: front::Clauses,
    kept: &mut KeptBinding,
) -> Result<QueryResult> {
    if clauses.pctfree.is_some() && !matches!(statement, Statement::CreateTable(_) | Statement::CreateIndex(_)) {
        return Err(Error::unsupported("PCTFREE outside CREATE TABLE"));
    }
    if clauses.compress.is_some() && !matches!(statement, Statement::CreateTable(_)) {
        return Err(Error::unsupported("COMPRESS outside CREATE TABLE"));
    }
    if !matches!(statement, Statement::Rollback { .. } | Statement::Commit { .. }) {
        // A dead instance runs ROLLBACK alone (a commit checks itself).
        session.db.check_alive()?;
    }
    authorize::authorize_ddl(session, statement)?;
    match statement {
        Statement::Query(q) => run_query(session, q),
        Statement::Insert(insert) => transaction::statement(session, || dml::insert(session, insert, &mut kept.insert)),
        Statement::Copy { source, to, target, options, legacy_options, values } => {
            transaction::statement(session, || {
                dml::copy(session, dml::CopyStatement { source, to: *to, target, options, legacy_options, values })
            })
        }
        Statement::Update(update) => {
            transaction::statement(session, || modify::update(session, update, &mut kept.change))
        }
        Statement::Delete(delete) => {
            transaction::statement(session, || modify::delete(session, delete, &mut kept.change))
        }
        Statement::Merge(m) => transaction::statement(session, || merge::merge(session, m)),
        Statement::Commit { chain: false, .. } => transaction::commit(session, Default::default()),
        Statement::Rollback { chain: false, savepoint } => transaction::rollback(session, savepoint.as_ref()),
        Statement::Savepoint { name } => transaction::savepoint(session, name),
        Statement::Set(ast::Set::SetTransaction { modes, snapshot: None, session: false }) => {
            transaction::set_transaction(session, modes)
        }
        Statement::CreateTable(create) => transaction::ddl(session, || ddl::create_table(session, create, clauses)),
        Statement::CreateIndex(create) => {
            transaction::ddl(session, || index_ddl::create_index(session, create, clauses.pctfree))
        }
        Statement::CreateView(create) => transaction::ddl(session, || view_ddl::create_view(session, create)),
        Statement::Drop { object_type: ast::ObjectType::View, if_exists, names, cascade: false, .. } => {
            transaction::ddl(session, || view_ddl::drop_view(session, names, *if_exists))
        }
        Statement::Drop { object_type: ast::ObjectType::Sequence, if_exists, names, cascade: false, .. } => {
            let names = names.iter().map(ddl::single_name).collect::<Result<Vec<_>>>()?;
            transaction::ddl(session, || sequence_ddl::drop(session, &names, *if_exists))
        }
        Statement::Drop { object_type: ast::ObjectType::Index, if_exists, names, cascade: false, .. } => {
            transaction::ddl(session, || index_ddl::drop_index(session, names, *if_exists))
        }
        Statement::Drop { object_type, if_exists, names, cascade, purge, .. } => {
            transaction::ddl(session, || ddl::drop(session, *object_type, *if_exists, names, *cascade, *purge))
        }
        Statement::AlterTable(alter) => transaction::ddl(session, || constraint_ddl::alter_table(session, alter)),
        Statement::Truncate(t) => transaction::ddl(session, || ddl::truncate(session, t)),
        Statement::Explain { statement, analyze: false, .. } => explain(session, statement),
        Statement::Explain { statement, analyze: true, .. } => explain_analyze(session, statement),
        other => {
            let text = other.to_string();
            let words: Vec<&str> = text.split_whitespace().take(2).collect();
            let position = bind::position_of(other).or_else(|| Some("line 1, column 1".into()));
            Err(Error::Unsupported { construct: format!("statement {}", words.join(" ")), position })
        }
    }
}

/// The function context of a new statement: its SYSDATE, the session's random stream,
/// and the values of its bind variables (those a cursor runs it with).
/// What a statement kept between executions (a query's plan, an UPDATE's or DELETE's
/// binding) was made from: the dictionary's version and the count of parameter changes.
/// It runs again only while both are as they were (DDL, ANALYZE, a GRANT, ALTER SESSION
/// or SYSTEM move them on).
fn kept_version(session: &Session) -> (u64, u64) {
    (session.db.catalog.version(), session.db.parameter_changes.load(std::sync::atomic::Ordering::Acquire))
}

fn function_context(session: &Session) -> FunctionContext {
    let mut state = session.state.lock();
    let seed = state.random_seed;
    state.random_seed = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
    with_binds(session, FunctionContext::at_first_use(seed))
}

/// `f` with the bind variables of the statement running now, and the session's sequences.
fn with_binds(session: &Session, mut f: FunctionContext) -> FunctionContext {
    f.sequences = Some(session.sequence_source());
    let binds = session.binds.borrow();
    f.bind_names = binds.names.clone();
    f.binds = binds.values.clone();
    f
}

pub(crate) fn run_query(session: &Session, query: &ast::Query) -> Result<QueryResult> {
    let functions = function_context(session);
    let planned = plan::plan_statement_query(query, session, &functions)?;
    run_planned(session, planned, functions)
}

/// Runs a plan once, gathering row-source statistics when the statement or the session
/// asks for them.
pub(crate) fn run_planned(
    session: &Session,
    planned: plan::Planned<'_>,
    functions: FunctionContext,
) -> Result<QueryResult> {
    publish_plan_line(session, planned.reading_line);
    let mut ctx = exec_context(session, functions);
    if planned.gather_plan_statistics || session.gathers_plan_statistics() {
        let columns = planned.columns.clone();
        let (rows, statistics) = row_source_stats::run_with_statistics(planned, &mut ctx)?;
        session.call_workareas.borrow_mut().extend(statistics.workareas());
        let mut result = QueryResult::rows(StatementKind::Query, columns, rows);
        result.plan_statistics = Some(statistics);
        return Ok(result);
    }
    crate::exec::query_block::run_init_plans(&planned.init, &mut ctx)?;
    let rows = run_pipeline(&planned.source, planned.stages, &mut ctx)?;
    session.call_workareas.borrow_mut().extend(row_source_stats::workareas(&planned.tree, &planned.source));
    Ok(QueryResult::rows(StatementKind::Query, planned.columns, rows))
}

/// Publishes the plan line a query's rows are read in (for Active Session History).
pub(crate) fn publish_plan_line(session: &Session, reading_line: Option<(u16, u8)>) {
    if let Some((line, code)) = reading_line {
        session.stats().activity().set_plan_line(line, code);
    }
}

/// EXPLAIN ANALYZE: runs the query gathering row-source statistics and returns them in
/// place of its rows (one line a row), as tkprof prints them.
fn explain_analyze(session: &Session, statement: &Statement) -> Result<QueryResult> {
    let Statement::Query(query) = statement else {
        return Err(Error::unsupported("EXPLAIN ANALYZE of a statement other than a query"));
    };
    let functions = function_context(session);
    let planned = plan::plan_statement_query(query, session, &functions)?;
    let notes = planned.notes.clone();
    let mut ctx = exec_context(session, functions);
    let (_, statistics) = row_source_stats::run_with_statistics(planned, &mut ctx)?;
    session.call_workareas.borrow_mut().extend(statistics.workareas());
    let mut lines = statistics.format(true);
    if !notes.is_empty() {
        lines.push(String::new());
        lines.extend(notes.iter().map(|n| format!("Note: {n}")));
    }
    let rows = lines.into_iter().map(|l| vec![crate::types::Datum::string(l)]).collect();
    let mut result = QueryResult::rows(StatementKind::Describe, vec!["ROW_SOURCE_STATISTICS".into()], rows);
    result.plan_statistics = Some(statistics);
    Ok(result)
}

/// EXPLAIN PLAN FOR: the plan as DBMS_XPLAN.DISPLAY prints it (one PLAN_TABLE_OUTPUT row
/// a line); the statement is not run.
fn explain(session: &Session, statement: &Statement) -> Result<QueryResult> {
    // Planned only: the session's random stream is left as it is.
    let f = with_binds(session, FunctionContext::at_first_use(0));
    let (tree, notes) = match statement {
        Statement::Query(query) => {
            let planned = plan::plan_statement_query(query, session, &f)?;
            (planned.tree, planned.notes)
        }
        other => explain_dml::plan_of(session, other, &f)?,
    };
    let lines = plan::format_plan(&tree, &notes);
    let rows = lines.into_iter().map(|l| vec![crate::types::Datum::string(l)]).collect();
    Ok(QueryResult::rows(StatementKind::Describe, vec!["PLAN_TABLE_OUTPUT".into()], rows))
}
