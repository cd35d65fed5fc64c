//! Cursors: a statement parsed once and run many times with bind values, as an
//! application holds an Oracle cursor open (PL/SQL's static SQL, a prepared statement).
//!
//! ```text
//!  Session::prepare(text) ─► parse once; name the bind variables (:lo, :1, ...) by slot
//!  Cursor::execute(values) ─► kept plan fits these values? ─yes─► run it again
//!                                                         └─no──► plan anew, keep it
//! ```
//!
//! A query is planned at its first execution, the optimizer peeking at that execution's
//! bind values for its estimates (as Oracle peeks at binds), and the plan is kept. A later
//! execution runs the kept plan, its stages reset, when nothing it was made from changed:
//! - the dictionary and the parameters (DDL, ANALYZE, ALTER SESSION or SYSTEM anywhere);
//! - SYSDATE, when the plan holds it as a constant;
//! - the bind values that size the plan (`ROWNUM <= :n`, `FETCH FIRST :n ROWS ONLY`);
//! - the shape of an index path's key range: bind variables that bound the range give it
//!   anew at each execution ([`Planned::rebind_range`]), and values that would leave a
//!   conjunct the range answers unbounded (a NULL) make the plan anew.
//!
//! What a cursor holds apart from its session (the parsed statement, the kept plan) is a
//! [`ParsedStatement`]; the session cursor cache (`cursor_cache`) keeps those of queries
//! run from their text, so that the same text runs its kept plan again.
//!
//! Making a plan counts in `parse count (hard)`; running a kept one parses nothing. A
//! plan whose source holds rows read while planning (a v$ view, alone or joined) is not kept, nor one run
//! with row-source statistics. An UPDATE or DELETE is bound once and keeps its binding and
//! access path on the same terms (`modify::BoundChange`: kept unless its binding holds an
//! execution's values or a subquery; an index range recomputed from each execution's
//! binds). An INSERT ... VALUES keeps its table, columns and bound values on the same
//! terms (`dml::BoundInsert`, kept also unless its table has a CHECK constraint or an
//! identity column, whose state is the session's), its values evaluated at each
//! execution. INSERT ... SELECT and the other statements sqlparser reads are parsed once
//! and bound at each execution; those lioscope reads itself (ALTER
//! SESSION, ANALYZE, ...) take no binds and are read from their text at each execution,
//! except user and grant statements, read once and kept with their text redacted (a
//! password never stays in a cursor). A description ([`PreparedStatement::describe`]) is
//! kept until the dictionary changes.

use super::plan::{self, Planned};
use crate::error::{Error, Result};
use crate::exec::Stage;
use crate::exec::run::run_pipeline_in_place;
use crate::expr::functions::{FunctionContext, PlanInputs, normalized_bind_name};
use crate::instance::Session;
use crate::sql::{QueryResult, StatementKind};
use crate::stats::{Stat, TimeModel};
use crate::types::Value;
use crate::types::datetime::timestamp_seconds;
use sqlparser::ast::{self, Statement};
use sqlparser::dialect::OracleDialect;
use sqlparser::tokenizer::{Token, Tokenizer};
use std::sync::Arc;
use std::time::Instant;

/// A parsed statement of one session, run with [`Cursor::execute`].
pub struct Cursor<'s> {
    session: &'s Session,
    statement: PreparedStatement,
}

/// A parsed statement that holds no borrow of its session: what a [`Cursor`] holds, for
/// a caller that keeps statements beside the session they belong to (a server keeps a
/// client's prepared statements so). It runs only in the session that prepared it.
pub struct PreparedStatement {
    /// The session that prepared it: its plan was made from that session's settings.
    sid: u32,
    statement: ParsedStatement,
    /// Its description, and the dictionary's version it was made at: describing again
    /// costs nothing until DDL (or a GRANT) changes what it reads.
    described: Option<(u64, super::describe::Description)>,
}

/// A statement parsed, and its query's plan once made, apart from the session that runs
/// it: what a cursor holds, and what the session cursor cache (`cursor_cache`) keeps
/// between executions of one text.
pub(crate) struct ParsedStatement {
    /// The statement's text (what `v$sql` tells it by).
    text: Arc<str>,
    /// The hash of its SQL_ID, published while it runs.
    sql_hash: u64,
    /// The bind variables' names by slot: each name at its first appearance.
    bind_names: Arc<[String]>,
    body: Body,
    /// The query's plan, once made.
    kept: Option<KeptPlan>,
    /// What an UPDATE, DELETE or INSERT ... VALUES was bound to, once bound.
    kept_binding: super::KeptBinding,
}

/// What a cursor runs.
enum Body {
    Query(Box<ast::Query>),
    /// Any other statement sqlparser parses, with the storage clauses the front took out.
    Statement(Box<Statement>, super::front::Clauses),
    /// A statement lioscope reads itself (ALTER SESSION, ANALYZE, ...): run from its text.
    Text,
    /// A user or grant statement, read once: its text may hold a password, and the
    /// cursor keeps only the text with it redacted.
    User(super::user_statement::UserStatement),
}

/// A query plan kept for later executions, and what it was made from.
struct KeptPlan {
    planned: Planned<'static>,
    /// The dictionary's version and the parameter changes when it was made.
    version: (u64, u64),
    /// SYSDATE, SYSTIMESTAMP and bind values the plan holds as constants, and their values.
    inputs: PlanInputs,
    /// The statement's time the plan took as a constant (0 where it took none).
    now: i64,
    values: Vec<Value>,
}

// SAFETY: a plan is not `Send` by its type only because a pipeline stage may be a row
// sink (`Stage::Sink`), whose consumer may borrow what the thread that made it holds.
// Sinks are added by INSERT ... SELECT to a plan it runs at once; `run_query` keeps no
// plan holding one, in its pipeline or in its tree (whose nodes' stages the pipeline took
// when it was built). Every other part of a kept plan is `Send`, as the check below makes
// the compiler prove, so a kept plan may move with its session to another thread.
unsafe impl Send for KeptPlan {}

/// Fails to compile when a part of a kept plan other than a sink is not `Send`.
const _: fn() = || {
    fn send<T: Send>() {}
    use crate::exec::*;
    send::<Source>();
    send::<(plan::Operation, String, Vec<plan::Predicate>, plan::RowsAt, plan::RowsRule, Option<plan::Estimate>)>();
    send::<Option<plan::RangeRebind>>();
    send::<PlanInputs>();
    send::<Vec<Value>>();
    send::<(FilterStage, RownumStage, LimitStage, ProjectStage, AggregateStage)>();
    send::<(SortStage, CollectStage, ProbeStage, join_filter::JoinFilterStage<'static>, window::WindowStage)>();
};

impl KeptPlan {
    /// Whether the plan can run with `binds` in the statement `functions` runs for; sets
    /// its index range for them.
    fn fits(&mut self, version: (u64, u64), functions: &FunctionContext, binds: &[Value]) -> Result<bool> {
        Ok(self.version == version
            && (!self.inputs.sysdate || timestamp_seconds(self.now) == timestamp_seconds(functions.now()))
            && (!self.inputs.systimestamp || self.now == functions.now())
            && self.inputs.binds.iter().all(|&slot| self.values.get(slot) == binds.get(slot))
            && self.planned.rebind_range(binds)?)
    }
}

impl<'s> Cursor<'s> {
    /// Parses `sql` for `session` (see [`PreparedStatement::parse`]).
    pub(crate) fn open(session: &'s Session, sql: &str) -> Result<Cursor<'s>> {
        Ok(Cursor { session, statement: PreparedStatement::parse(session, sql)? })
    }

    /// The bind variables' names by slot (`:LO`, `:1`): the order [`Cursor::execute`]
    /// takes their values in.
    pub fn bind_names(&self) -> &[String] {
        self.statement.bind_names()
    }

    /// The statement's text.
    pub fn text(&self) -> &str {
        self.statement.text()
    }

    /// Runs the statement with `binds`, one value a bind variable in slot order.
    pub fn execute(&mut self, binds: &[Value]) -> Result<QueryResult> {
        self.statement.execute(self.session, binds)
    }
}

impl PreparedStatement {
    /// Parses `sql` for `session` (counted in `parse count (total)` and `parse time
    /// elapsed`); its bind variables are named from the text.
    pub(crate) fn parse(session: &Session, sql: &str) -> Result<PreparedStatement> {
        let text = super::statement_text(sql);
        if text.is_empty() {
            return Err(Error::Parse { message: "empty statement".into(), position: None });
        }
        let started = Instant::now();
        session.stats().add(Stat::ParseCountTotal, 1);
        let _parsing = session.stats().activity().enter(crate::stats::activity::flags::IN_PARSE, 0);
        let bind_names = bind_names(text)?;
        let body = match super::front::classify(text)? {
            super::front::Front::Standard { sql, clauses } => match super::parse_one(&sql)? {
                Statement::Query(query) if clauses.is_empty() => Body::Query(query),
                statement => Body::Statement(Box::new(statement), clauses),
            },
            super::front::Front::User(statement) if bind_names.is_empty() => Body::User(statement),
            _ if !bind_names.is_empty() => {
                return Err(Error::Unsupported {
                    construct: format!("bind variables in this statement ({})", bind_names.join(", ")),
                    position: None,
                });
            }
            _ => Body::Text,
        };
        session.stats().add_time(TimeModel::ParseTimeElapsed, started.elapsed().as_micros() as u64);
        let text = super::user_statement::redacted(text);
        let sql_hash = crate::stats::sqlarea::sql_hash(&text);
        let statement = ParsedStatement {
            text: text.into(),
            sql_hash,
            bind_names: bind_names.into(),
            body,
            kept: None,
            kept_binding: Default::default(),
        };
        Ok(PreparedStatement { sid: session.sid(), statement, described: None })
    }

    /// The bind variables' names by slot (`:LO`, `:1`): the order
    /// [`PreparedStatement::execute`] takes their values in.
    pub fn bind_names(&self) -> &[String] {
        &self.statement.bind_names
    }

    /// The statement's text.
    pub fn text(&self) -> &str {
        &self.statement.text
    }

    /// What the statement gives and takes, before it runs in `session` (the one that
    /// prepared it): a query's result columns, the types of its bind variables (see
    /// `sql::describe`). A query is planned for its names, its bind variables NULL, once
    /// while the dictionary stays as it was (a driver describes at each Parse).
    pub fn describe(&mut self, session: &Session) -> Result<super::describe::Description> {
        let version = session.db.catalog.version();
        if let Some((at, description)) = &self.described
            && *at == version
        {
            return Ok(description.clone());
        }
        if matches!(self.statement.body, Body::Query(_)) {
            session.stats().add(Stat::ParseCountHard, 1);
        }
        let description = self.describe_now(session)?;
        self.described = Some((version, description.clone()));
        Ok(description)
    }

    /// Describes the statement; a query is planned for it (a hard parse).
    fn describe_now(&self, session: &Session) -> Result<super::describe::Description> {
        let names = &self.statement.bind_names;
        Ok(match &self.statement.body {
            Body::Query(query) => super::describe::Description {
                columns: super::describe::query_columns(session, query, names)?,
                binds: super::describe::bind_types(session, &Statement::Query(query.clone()), names),
            },
            Body::Statement(statement, _) => super::describe::Description {
                columns: Vec::new(),
                binds: super::describe::bind_types(session, statement, names),
            },
            Body::Text | Body::User(_) => Default::default(),
        })
    }

    /// Runs the statement in `session`, the one that prepared it, with `binds`, one
    /// value a bind variable in slot order.
    pub fn execute(&mut self, session: &Session, binds: &[Value]) -> Result<QueryResult> {
        if session.sid() != self.sid {
            return Err(Error::InvalidValue {
                context: format!("prepared statement \"{}\"", self.statement.text),
                message: format!("prepared in session {}, run in session {}", self.sid, session.sid()),
            });
        }
        let statement = &mut self.statement;
        if binds.len() != statement.bind_names.len() {
            return Err(Error::InvalidValue {
                context: format!("bind values for \"{}\"", statement.text),
                message: format!(
                    "the statement has {} bind variable{} ({}), {} value{} given",
                    statement.bind_names.len(),
                    if statement.bind_names.len() == 1 { "" } else { "s" },
                    statement.bind_names.join(", "),
                    binds.len(),
                    if binds.len() == 1 { " was" } else { "s were" },
                ),
            });
        }
        let (text, sql_hash) = (statement.text.clone(), statement.sql_hash);
        crate::sql::call::user_call_hashed(session, &text, sql_hash, || statement.run(session, binds))
    }
}

impl ParsedStatement {
    /// A query without bind variables, parsed from `text` (the session cursor cache's).
    pub(crate) fn query(text: &str, query: Box<ast::Query>) -> ParsedStatement {
        Self::without_binds(text, Body::Query(query))
    }

    /// A transaction-control statement without bind variables (COMMIT, ROLLBACK,
    /// SAVEPOINT, SET TRANSACTION), parsed from `text`: nothing is planned for it, so the
    /// session cursor cache keeps it as it is.
    pub(crate) fn transaction_control(text: &str, statement: Statement) -> ParsedStatement {
        debug_assert!(is_transaction_control(&statement));
        Self::without_binds(text, Body::Statement(Box::new(statement), Default::default()))
    }

    fn without_binds(text: &str, body: Body) -> ParsedStatement {
        let sql_hash = crate::stats::sqlarea::sql_hash(text);
        ParsedStatement {
            text: text.into(),
            sql_hash,
            bind_names: Arc::new([]),
            body,
            kept: None,
            kept_binding: Default::default(),
        }
    }

    /// The statement's text.
    pub(crate) fn text(&self) -> &Arc<str> {
        &self.text
    }

    /// Runs the statement for `session` with `binds` (as many as it has bind variables).
    pub(crate) fn run(&mut self, session: &Session, binds: &[Value]) -> Result<QueryResult> {
        match &self.body {
            Body::Text => super::execute(session, &self.text),
            Body::User(statement) => {
                session.stats().add(Stat::ExecuteCount, 1);
                super::transaction::ddl(session, || super::user_ddl::run(session, statement))
            }
            Body::Statement(statement, clauses) => {
                session.stats().add(Stat::ExecuteCount, 1);
                let _binds = BindsSet::new(session, &self.bind_names, binds);
                super::dispatch_keeping(session, statement, clauses.clone(), &mut self.kept_binding)
            }
            Body::Query(query) if session.gathers_plan_statistics() => {
                // Row-source statistics need a plan of their own, with its probes.
                session.db.check_alive()?;
                session.stats().add(Stat::ExecuteCount, 1);
                session.stats().add(Stat::ParseCountHard, 1);
                let _binds = BindsSet::new(session, &self.bind_names, binds);
                super::run_query(session, query)
            }
            Body::Query(_) => {
                session.db.check_alive()?;
                self.run_query(session, binds)
            }
        }
    }

    /// Gives back what the last execution left in the plan's stages (rows sorted or
    /// collected, groups), keeping the plan.
    pub(crate) fn release(&mut self) {
        if let Some(kept) = &mut self.kept {
            kept.planned.stages.iter_mut().for_each(Stage::reset);
        }
    }

    /// Runs the kept plan when it fits these values, else plans anew.
    fn run_query(&mut self, session: &Session, binds: &[Value]) -> Result<QueryResult> {
        session.stats().add(Stat::ExecuteCount, 1);
        let mut functions = super::function_context(session);
        functions.bind_names = self.bind_names.clone();
        functions.binds = binds.to_vec();
        let version = super::kept_version(session);
        let fits = match &mut self.kept {
            Some(kept) => kept.fits(version, &functions, binds)?,
            None => false,
        };
        if !fits {
            self.kept = None;
            let Body::Query(query) = &self.body else { unreachable!("run_query runs queries") };
            let started = Instant::now();
            session.stats().add(Stat::ParseCountHard, 1);
            let planned = plan::plan_statement_query(query, session, &functions)?;
            session.stats().add_time(TimeModel::ParseTimeElapsed, started.elapsed().as_micros() as u64);
            let inputs = functions.taken.take();
            let keep = !planned.gather_plan_statistics
                && !planned.holds_planned_rows()
                && !planned.stages.iter().chain(planned.tree.stages()).any(|stage| matches!(stage, Stage::Sink(_)));
            if !keep {
                return super::run_planned(session, planned, functions);
            }
            // The time only where the plan took it as a constant: others never read the clock.
            let now = if inputs.sysdate || inputs.systimestamp { functions.now() } else { 0 };
            self.kept = Some(KeptPlan { planned, version, inputs, now, values: binds.to_vec() });
        }
        let kept = self.kept.as_mut().expect("kept above");
        functions.taken = Default::default();
        let planned = &mut kept.planned;
        super::publish_plan_line(session, planned.reading_line);
        planned.stages.iter_mut().for_each(Stage::reset);
        let mut ctx = super::exec_context(session, functions);
        crate::exec::query_block::run_init_plans(&planned.init, &mut ctx)?;
        let rows = run_pipeline_in_place(&planned.source, &mut planned.stages, &mut ctx)?;
        session.call_workareas.borrow_mut().extend(super::row_source_stats::workareas(&planned.tree, &planned.source));
        Ok(QueryResult::rows(StatementKind::Query, planned.columns.clone(), rows))
    }
}

/// The session's bind values while a statement of a cursor runs; none again after.
struct BindsSet<'s> {
    session: &'s Session,
}

impl<'s> BindsSet<'s> {
    fn new(session: &'s Session, names: &Arc<[String]>, values: &[Value]) -> BindsSet<'s> {
        let mut binds = session.binds.borrow_mut();
        binds.names = names.clone();
        binds.values.clear();
        binds.values.extend_from_slice(values);
        BindsSet { session }
    }
}

impl Drop for BindsSet<'_> {
    fn drop(&mut self) {
        *self.session.binds.borrow_mut() = Default::default();
    }
}

/// The bind variables of `text` by slot: each name (normalized: `:lo` is `:LO`) at its
/// first appearance. `?` is refused: Oracle's SQL names its bind variables.
pub fn bind_names(text: &str) -> Result<Vec<String>> {
    let tokens = Tokenizer::new(&OracleDialect {}, text)
        .tokenize()
        .map_err(|e| Error::Parse { message: e.to_string(), position: None })?;
    if tokens.iter().any(|t| matches!(t, Token::Placeholder(p) if p == "?")) {
        return Err(Error::Unsupported { construct: "bind variable ? (name it: :1, :name)".into(), position: None });
    }
    let mut names: Vec<String> = Vec::new();
    for pair in tokens.windows(2) {
        let name = match pair {
            [Token::Colon, Token::Word(w)] => format!(":{}", w.value),
            [Token::Colon, Token::Number(n, _)] => format!(":{n}"),
            _ => continue,
        };
        let name = normalized_bind_name(&name);
        if !names.contains(&name) {
            names.push(name);
        }
    }
    Ok(names)
}

/// Whether `statement` only controls the session's transaction (COMMIT, ROLLBACK,
/// SAVEPOINT, SET TRANSACTION): it reads no table and has no plan.
pub(crate) fn is_transaction_control(statement: &Statement) -> bool {
    matches!(
        statement,
        Statement::Commit { chain: false, .. }
            | Statement::Rollback { chain: false, .. }
            | Statement::Savepoint { .. }
            | Statement::Set(ast::Set::SetTransaction { snapshot: None, session: false, .. })
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bind_variables_are_named_by_their_first_appearance() {
        let names = bind_names("SELECT * FROM t WHERE a > :lo AND b = :1 AND c <= :LO + :Hi").unwrap();
        assert_eq!(names, [":LO", ":1", ":HI"]);
    }

    #[test]
    fn strings_and_comments_hold_no_bind_variables() {
        let names = bind_names("SELECT ':x' FROM t -- :y\n WHERE a = :z").unwrap();
        assert_eq!(names, [":Z"]);
    }

    #[test]
    fn question_marks_are_refused() {
        let e = bind_names("SELECT * FROM t WHERE a = ?").unwrap_err();
        assert!(e.to_string().contains("name it"), "{e}");
    }
}
