//! The planner: turns a SELECT into a physical plan: a tree of row sources (module
//! `tree`), each node holding its work, and the pipeline built from the tree that runs
//! it, a source and a chain of stages. Here: the planned statement; the tree's nodes in
//! `builder`, EXPLAIN's text in `explain`, the constants a plan is sized by in
//! `constants`, the refusals of what is not supported in `unsupported`.
//!
//! The stage order follows SQL's logical order, as Oracle's row sources do:
//!
//! ```text
//!  source ─► FILTER (WHERE) ─► FILTER (correlated subqueries) ─► COUNT STOPKEY (ROWNUM <= n)
//!         ─► COUNT (ROWNUM) ─► SORT AGGREGATE / HASH GROUP BY (+ HAVING) ─► WINDOW SORT
//!         ─► project ─► HASH UNIQUE (DISTINCT) ─► SORT ORDER BY ─► FETCH FIRST / OFFSET ─► result
//! ```
//!
//! The FILTER of correlated subqueries gets its source last: the plan below it, as a
//! query block it runs (module `query_block`, which also plans views, WITH queries, set
//! operations and the subqueries the binder meets; their answers are set before the
//! plan's source runs, [`Planned::init`]). Before that, module `unnest` turns what it
//! can of the FILTER's conjuncts into semi, anti or grouped joins under it, where
//! cheaper (a nested loop of them probing an index in module `semi_probe`); the FILTER
//! keeps the rest, or goes.
//!
//! Before its FROM clause is planned, a SELECT is rewritten where that gives the same
//! rows: its parenthesized joins are spelled out (module `nested_join`), and the WHERE
//! conjuncts that read one view's columns alone are moved into that view, over its own
//! FROM clause (module `predicate_push`), for the view's plan to use.
//!
//! Only the select list of a statement's top query block (a query's, INSERT ... SELECT's)
//! may read sequences ([`plan_statement_query`]; the block takes the flag
//! `FunctionContext::sequence_top`, so no view, subquery or set operation branch does),
//! and only without DISTINCT, GROUP BY, aggregates or ORDER BY.
//!
//! A WHERE clause over a full scan runs inside the scan's pipeline on rows still in their
//! block, and EXPLAIN shows it as the `filter(...)` of TABLE ACCESS FULL, as Oracle does.
//!
//! Once the other nodes are planned, the optimizer chooses how to read the table
//! (`Builder::choose_access`) and the table's node gets its source: a full scan, an
//! in-memory scan, or an index access, for which the conjuncts the key range answers
//! leave the node's filter (shown as `access(...)`), the table's node becomes the
//! index's (or TABLE ACCESS BY INDEX ROWID over a new index node when rows are
//! fetched), and a sort the index order makes needless is dropped with its node and
//! stage. The builder keeps the ids of the nodes it may rewrite (the table's, the
//! sort's); it never finds a node by its text. Then the pipeline is built from the tree
//! ([`PlanTree::build_pipeline`]), which records where each node's rows leave it
//! ([`RowsAt`], for row-source probes); each [`PlanNode`] also says how its estimated
//! rows follow from its child's ([`RowsRule`]).
//!
//! A plan may run again (a cursor keeps it): its stages are reset, and an index path
//! whose range bind variables give keeps the conjuncts to compute the range anew from
//! each execution's values ([`Planned::rebind_range`]). What planning took as constants
//! from one execution (SYSDATE, binds that size the plan) is recorded in the statement's
//! [`FunctionContext::taken`] for the cursor to check.

use super::bind::{Binder, Grouping, Scope, canonical, contains_aggregate, ident_name, literal, position_of};
use super::optimizer::{self, hints, hints::Hints};
use super::views;
use crate::catalog::TableDef;
use crate::error::{Error, Result};
use crate::exec::downstream::ConsumeRow;
use crate::exec::{
    AggregateStage, CollectStage, FilterStage, LimitStage, ProjectStage, RowSink, RownumStage, SortKey, SortStage,
    Source, Stage,
};
use crate::expr::Expr;
use crate::expr::functions::FunctionContext;
use crate::expr::predicates;
use crate::index::KeyBound;
use crate::instance::Session;
use crate::types::{Datum, Value};
use sqlparser::ast::{self, BinaryOperator, Spanned};
use std::sync::Arc;

mod builder;
mod constants;
mod explain;
mod family;
mod join;
mod nested_join;
mod predicate_push;
mod query_block;
mod semi_probe;
mod subquery_filter;
mod tree;
mod unnest;
mod unsupported;
mod with_query;

pub use super::operation::Operation;
use builder::*;
use constants::*;
pub(crate) use constants::{rownum_limit, split_and};
pub use explain::format_plan;
pub(crate) use family::{Family, expr_family};
pub(crate) use join::deterministic;
pub(crate) use nested_join::unparenthesized;
use query_block::{NamedQuery, OuterQuery, Subqueries, fixed_families};
use subquery_filter::{SubqueryFilterPlan, UpperFilter};
pub use tree::{Estimate, NodeId, PlanNode, PlanTree, Predicate, RowsAt, RowsRule};
use unsupported::*;

/// A planned query, ready to run.
pub struct Planned<'a> {
    /// The pipeline, built from the tree.
    pub source: Source,
    pub stages: Vec<Stage<'a>>,
    pub columns: Vec<String>,
    /// The family of each result column's values, where the plan can tell it.
    pub families: Vec<Option<Family>>,
    /// Each result column's CHAR length, where it is a CHAR column's value (a view's
    /// columns compare with literals blank-padded, as the table's do).
    pub char_lengths: Vec<Option<u32>>,
    /// The plan's row sources, as a tree.
    pub tree: PlanTree,
    pub notes: Vec<String>,
    /// The statement asked for row-source statistics (`GATHER_PLAN_STATISTICS`).
    pub gather_plan_statistics: bool,
    /// How the index path's key range follows from bind variables, when it does.
    pub rebind: Option<RangeRebind>,
    /// The plan line that reads the rows, and its operation's code, for Active Session
    /// History (published when the plan runs).
    pub reading_line: Option<(u16, u8)>,
    /// The subqueries run when the plan starts, their lines the last children of the
    /// query's top line (the root's child), in this order.
    pub init: Vec<crate::exec::query_block::InitPlan>,
}

/// An index path whose key range bind variables give: a later execution computes the
/// range again from its own values ([`Planned::rebind_range`]).
pub struct RangeRebind {
    /// The WHERE clause's conjuncts, their bounds those of the last values.
    conjuncts: Vec<predicates::Conjunct>,
    /// The index's key column types.
    types: Vec<crate::types::DataType>,
    /// The conjuncts the planned range used, and those it answers (left out of the
    /// filter): the range of other values must use and answer the same.
    used: Vec<usize>,
    answered: Vec<usize>,
}

impl RangeRebind {
    /// How the range of index `path` follows from `conjuncts` (WHERE's, their bounds
    /// those of the values it was chosen for), given its key column `types`.
    pub(in crate::sql) fn new(
        conjuncts: Vec<predicates::Conjunct>,
        types: Vec<crate::types::DataType>,
        path: &optimizer::IndexPath,
    ) -> RangeRebind {
        RangeRebind { conjuncts, types, used: path.bounds.clone(), answered: path.access.clone() }
    }

    /// The index's key column types.
    pub(in crate::sql) fn types(&self) -> &[crate::types::DataType] {
        &self.types
    }

    /// The key range bind values `binds` give `index`; `None` when it is of another
    /// shape (a conjunct the range used or answered no longer bounds it).
    pub(in crate::sql) fn range_for(
        &mut self,
        binds: &[Value],
        index: &crate::catalog::IndexDef,
    ) -> Option<optimizer::KeyRange> {
        predicates::rebind(&mut self.conjuncts, binds);
        let range = optimizer::key_range(&self.types, &self.conjuncts, index);
        (range.used[..] == self.used[..] && range.answered[..] == self.answered[..]).then_some(range)
    }
}

impl<'a> Planned<'a> {
    /// Sets the index path's key range for an execution with bind values `binds`.
    /// Returns false when these values give a range of another shape (a conjunct the
    /// plan answers with the range no longer bounds it, as `col > :lo` with a NULL): the
    /// plan does not fit them and the statement must be planned again.
    pub fn rebind_range(&mut self, binds: &[Value]) -> Result<bool> {
        let (Some(rebind), Source::Index(access)) = (&mut self.rebind, &mut self.source) else { return Ok(true) };
        let Some(range) = rebind.range_for(binds, &access.index) else { return Ok(false) };
        rekey_bound(&mut access.lower, &range.lower, &rebind.types)?;
        rekey_bound(&mut access.upper, &range.upper, &rebind.types)?;
        Ok(true)
    }

    /// Whether the plan, or a subquery it runs first, holds rows read when it was
    /// planned (a `v$` view's): such a plan must not run again.
    pub fn holds_planned_rows(&self) -> bool {
        self.source.holds_planned_rows() || self.init.iter().any(|p| p.block.holds_planned_rows())
    }

    /// Whether the plan, or a subquery it runs first, reads the table with data object id
    /// `object_id`.
    pub fn reads_table(&self, object_id: u32) -> bool {
        self.source.reads_table(object_id) || self.init.iter().any(|p| p.block.reads_table(object_id))
    }

    /// The same plan with its result rows handed to `consume` instead of collected.
    pub fn into_sink(mut self, consume: Box<dyn ConsumeRow + 'a>) -> Planned<'a> {
        let last = self.stages.last_mut().expect("a plan ends with its collect stage");
        assert!(matches!(last, Stage::Collect(_)), "a plan ends with its collect stage");
        *last = Stage::Sink(RowSink::new(self.columns.len(), consume));
        self
    }
}

/// Plans a query; its result rows are collected (see [`Planned::into_sink`]).
pub fn plan_query<'a>(query: &ast::Query, session: &Session, f: &FunctionContext) -> Result<Planned<'a>> {
    use crate::stats::activity::flags;
    let _hard_parse = session.stats().activity().enter(flags::IN_PARSE | flags::IN_HARD_PARSE, flags::IN_SQL_EXECUTION);
    plan_query_in(query, session, f, &[], None)
}

/// Plans the query of a statement whose top select list may read sequences (a query
/// run or explained, INSERT ... SELECT).
pub fn plan_statement_query<'a>(query: &ast::Query, session: &Session, f: &FunctionContext) -> Result<Planned<'a>> {
    f.sequence_top.set(true);
    let planned = plan_query(query, session, f);
    f.sequence_top.set(false);
    planned
}

/// Plans a query that sees the WITH queries `named` (those of the queries around it).
fn plan_query_in<'a>(
    query: &ast::Query,
    session: &Session,
    f: &FunctionContext,
    named: &[NamedQuery<'_>],
    outer: Option<&OuterQuery<'_>>,
) -> Result<Planned<'a>> {
    // Only the statement's first query block may read sequences, and only in its select
    // list: a block planned while that list is bound (a subquery in it) may not.
    let top = f.sequence_top.take();
    let enclosing = f.sequence_refs_allowed.replace(false);
    let planned = plan_query_block(query, session, f, named, outer, top);
    f.sequence_refs_allowed.set(enclosing);
    planned
}

/// [`plan_query_in`] of one query block; `sequences_top` when it is the statement's top.
fn plan_query_block<'a>(
    query: &ast::Query,
    session: &Session,
    f: &FunctionContext,
    named: &[NamedQuery<'_>],
    outer: Option<&OuterQuery<'_>>,
    sequences_top: bool,
) -> Result<Planned<'a>> {
    reject_unsupported_query_parts(query)?;
    let mut visible: Vec<NamedQuery<'_>> = named.to_vec();
    let mut load_notes = Vec::new();
    let loads = match &query.with {
        Some(with) => {
            let own_start = visible.len();
            query_block::add_with(with, &mut visible)?;
            with_query::plan_loads(query, with, &mut visible, own_start, session, f, &mut load_notes)?
        }
        None => Vec::new(),
    };
    let mut b = Builder::new(session, f, &visible, outer);
    b.sequences_top = sequences_top;
    let mut planned: Planned<'static> = match &*query.body {
        ast::SetExpr::Select(select) => b.select(query, select),
        ast::SetExpr::Query(inner)
            if query.order_by.is_none() && query.limit_clause.is_none() && query.fetch.is_none() =>
        {
            plan_query_block(inner, session, f, &visible, outer, sequences_top)
        }
        ast::SetExpr::SetOperation { .. } | ast::SetExpr::Query(_) => b.set_query(query),
        other => Err(unsupported(format!("query form {other}"), other)),
    }?;
    for note in load_notes {
        if !planned.notes.contains(&note) {
            planned.notes.push(note);
        }
    }
    Ok(if loads.is_empty() { planned } else { with_query::with_temp_tables(planned, loads, f) })
}

impl<'s> Builder<'s> {
    /// A builder of a plan, with no node yet, that sees the WITH queries `named`.
    fn new(
        session: &'s Session,
        f: &'s FunctionContext,
        named: &'s [NamedQuery<'s>],
        outer: Option<&'s OuterQuery<'s>>,
    ) -> Builder<'s> {
        Builder {
            session,
            f,
            named,
            tree: PlanTree::default(),
            notes: Vec::new(),
            table: None,
            table_node: None,
            sort_node: None,
            order_from_access: false,
            rebind: None,
            join: None,
            where_node: None,
            families: Vec::new(),
            subqueries: Subqueries::new(session, f, named, outer),
            subquery_filter: None,
            upper_filter: None,
            pushed: Vec::new(),
            sequences_top: false,
        }
    }

    /// Plans a query whose body is one SELECT.
    fn select<'a>(mut self, query: &ast::Query, select: &ast::Select) -> Result<Planned<'a>> {
        let unparenthesized = nested_join::unparenthesized(select)?;
        let select = unparenthesized.as_ref().unwrap_or(select);
        let pushed = self.push_predicates(select)?;
        let select = pushed.as_ref().unwrap_or(select);
        reject_unsupported_select_parts(select)?;
        let b = &mut self;
        let mut scope = b.source(select)?;
        b.where_clause(select, &mut scope)?;
        b.rownum(select, query, &mut scope);
        let order_by: Vec<&ast::Expr> = match query.order_by.as_ref().map(|o| &o.kind) {
            Some(ast::OrderByKind::Expressions(items)) => items.iter().map(|i| &i.expr).collect(),
            _ => Vec::new(),
        };
        let (mut exprs, mut columns, grouping) = b.aggregate(select, &scope, &order_by)?;
        if let Some(u) = b.subqueries.unnesting() {
            let plain = grouping.is_some() == u.groups()
                && select.distinct.is_none()
                && order_by.is_empty()
                && query.limit_clause.is_none()
                && query.fetch.is_none()
                && !b.tree.pre_order().iter().any(|&(id, _)| {
                    matches!(b.tree.node(id).operation, Operation::WindowSort | Operation::WindowBuffer)
                })
                && !scope.names.iter().any(|n| n == "ROWNUM");
            let keys = grouping.as_ref().map_or(0, |g| g.grouping.keys.len());
            u.select_list(&mut exprs, &mut columns, plain, keys);
        }
        if grouping.is_none() {
            b.subquery_filter_for_select_list(scope.names.len(), &scope.names);
        }
        let families = b.output_families(&exprs[..columns.len().min(exprs.len())]);
        let char_lengths = b.output_char_lengths(&exprs[..columns.len().min(exprs.len())], &scope);
        let distinct = match &select.distinct {
            None | Some(ast::Distinct::All) => false,
            Some(ast::Distinct::Distinct) => true,
            Some(other) => return Err(Error::unsupported(format!("{other}"))),
        };
        b.project_order_and_limit(query, distinct, &scope, grouping.as_ref(), exprs, &columns)?;
        let hints = hints::parse(&select.optimizer_hints.iter().map(|h| h.text.as_str()).collect::<Vec<_>>());
        if let Some(join) = b.join.take() {
            b.plan_join(join, &hints, &scope)?;
            b.notes.extend(hints.ignored.iter().cloned());
        } else if let (Some(table), Some(scan)) = (b.table.clone(), b.table_node) {
            let mut columns_read = columns_read_by(b.tree.stages(), table.columns.len());
            b.read_by_subquery_filter(&mut columns_read);
            let alias = match select.from.first().map(|f| &f.relation) {
                Some(ast::TableFactor::Table { alias: Some(a), .. }) => Some(ident_name(&a.name)),
                _ => None,
            };
            let source = match b.choose_access(&table, alias.as_deref(), &hints, &columns_read, false)? {
                Some(index) => index,
                None => match b.inmemory_access(&table, alias.as_deref(), columns_read.clone(), &hints) {
                    Some(inmemory) => inmemory,
                    None => Source::TableScan { table, columns_read },
                },
            };
            b.tree.node_mut(scan).work.source = Some(source);
        } else {
            b.notes.extend(
                hints
                    .hints
                    .iter()
                    .filter(|h| h.table.is_some())
                    .map(|h| format!("hint not used: {} (no table to apply it to)", h.text)),
            );
            b.notes.extend(hints.ignored.iter().cloned());
        }
        self.wrap_subquery_filters();
        let gather = hints.gather_plan_statistics();
        self.finish(columns, families, char_lengths, gather)
    }

    /// The plan, once its nodes are planned: the statement's node on top, the estimates,
    /// and the pipeline built from the tree.
    fn finish<'a>(
        mut self,
        columns: Vec<String>,
        families: Vec<Option<Family>>,
        char_lengths: Vec<Option<u32>>,
        gather: bool,
    ) -> Result<Planned<'a>> {
        // The subqueries' lines hang under the query's top line, after its input.
        let planned = self.subqueries.take();
        if !planned.correlated.is_empty() {
            return Err(Error::unsupported(query_block::CORRELATED_PLACES));
        }
        for note in planned.notes {
            if !self.notes.contains(&note) {
                self.notes.push(note);
            }
        }
        let mut init = Vec::with_capacity(planned.init.len());
        if let Some(top) = self.tree.root() {
            for (plan, tree) in planned.init {
                let line = self.tree.adopt(tree);
                self.tree.node_mut(top).children.extend(line);
                init.push(plan);
            }
        }
        self.running(Operation::SelectStatement, RowsRule::Same, Stage::Collect(CollectStage::new(columns.len())));
        self.tree.estimate();
        let reading_line =
            self.tree.reading_line().map(|(line, op)| (u16::try_from(line).unwrap_or(u16::MAX), op.code()));
        let (source, stages) = self.tree.build_pipeline();
        Ok(Planned {
            source,
            stages,
            columns,
            families,
            char_lengths,
            tree: self.tree,
            notes: self.notes,
            gather_plan_statistics: gather,
            rebind: self.rebind,
            reading_line,
            init,
        })
    }
}

/// The subqueries of a statement that is not a query (UPDATE, DELETE): planned as its
/// expressions are bound. Those that read nothing of the changed rows run once before
/// the statement changes rows; the correlated ones run for each changed row's values.
pub(crate) struct StatementSubqueries<'s>(Subqueries<'s>);

impl<'s> StatementSubqueries<'s> {
    pub(crate) fn new(session: &'s Session, f: &'s FunctionContext) -> StatementSubqueries<'s> {
        let subqueries = Subqueries::new(session, f, &[], None);
        subqueries.correlated_allowed.set(true);
        StatementSubqueries(subqueries)
    }

    /// What binds the statement's expressions' subqueries.
    pub(crate) fn planner(&self) -> &dyn crate::sql::bind::SubqueryPlanner {
        &self.0
    }

    /// The slots of the correlated subqueries planned so far.
    pub(crate) fn correlated_slots(&self) -> Vec<usize> {
        self.0.planned_correlated().iter().map(|(p, _)| p.slot).collect()
    }

    /// The lines of the statement's subqueries, for EXPLAIN PLAN: those run before the
    /// statement changes rows, then the correlated ones.
    pub(crate) fn into_lines(self) -> Vec<PlanTree> {
        let planned = self.0.take();
        let init = planned.init.into_iter().map(|(_, tree)| tree);
        init.chain(planned.correlated.into_iter().map(|(_, tree)| tree)).collect()
    }

    /// The subqueries to run before the statement changes rows, and the correlated ones.
    pub(crate) fn into_plans(
        self,
    ) -> (Vec<crate::exec::query_block::InitPlan>, Vec<crate::exec::query_block::CorrelatedPlan>) {
        let planned = self.0.take();
        (
            planned.init.into_iter().map(|(plan, _)| plan).collect(),
            planned.correlated.into_iter().map(|(plan, _)| plan).collect(),
        )
    }
}

/// The blocks a table never analyzed has below its high-water mark, which the optimizer
/// estimates its rows from (`None` when it was analyzed): one consistent get of the
/// segment header, counted in the statement's statistics.
pub(super) fn blocks_to_estimate_from(ctx: &crate::access::AccessContext<'_>, table: &TableDef) -> Result<Option<u64>> {
    if table.stats.is_some() {
        return Ok(None);
    }
    Ok(Some(u64::from(crate::access::segments::read_map(ctx, table)?.hwm.saturating_sub(1))))
}

/// The session's cost model: the database's block size, its multiblock read count, its
/// optimizer settings and, with `optimizer_cache_awareness`, the blocks each segment has
/// in the buffer cache now (one pass over the cache's headers).
pub(super) fn cost_model(session: &Session) -> optimizer::cost::CostModel {
    let settings = session.optimizer_settings();
    let mut model =
        optimizer::cost::CostModel::new(session.db.space.block_size as u32, session.multiblock_read_count());
    model.index_caching = settings.index_caching as f64 / 100.0;
    model.index_cost_adj = settings.index_cost_adj as f64 / 100.0;
    if settings.cache_awareness {
        model.cached_blocks = Some(std::sync::Arc::new(session.db.cache.cached_blocks_by_object()));
    }
    model
}

/// One end of an index key range as the scan takes it: the key encoded.
pub(super) fn key_bound(end: &Option<optimizer::KeyEnd>, types: &[crate::types::DataType]) -> Result<KeyBound> {
    let mut bound = KeyBound::Unbounded;
    rekey_bound(&mut bound, end, types)?;
    Ok(bound)
}

/// Sets `bound` to the key bound of `end`, encoding into the key buffer `bound` already
/// has (a kept plan's new range for each execution allocates nothing once warm).
fn rekey_bound(bound: &mut KeyBound, end: &Option<optimizer::KeyEnd>, types: &[crate::types::DataType]) -> Result<()> {
    let mut key = match std::mem::replace(bound, KeyBound::Unbounded) {
        KeyBound::Included(key) | KeyBound::Excluded(key) => key,
        KeyBound::Unbounded => Vec::new(),
    };
    let Some(end) = end else { return Ok(()) };
    key.clear();
    crate::index::encode_key(&end.values, &types[..end.values.len()], &mut key)?;
    *bound = if end.inclusive { KeyBound::Included(key) } else { KeyBound::Excluded(key) };
    Ok(())
}

/// `e`'s conjuncts, appended to `out`.
fn split_conjuncts(e: Expr, out: &mut Vec<Expr>) {
    match e {
        Expr::And(l, r) => {
            split_conjuncts(*l, out);
            split_conjuncts(*r, out);
        }
        other => out.push(other),
    }
}

/// The conjunction of `parts`, if any.
fn and_all(parts: Vec<Expr>) -> Option<Expr> {
    parts.into_iter().reduce(|a, b| Expr::And(Box::new(a), Box::new(b)))
}

/// The heading of an unaliased select item, as Oracle shows it.
fn output_name(e: &ast::Expr) -> String {
    match e {
        ast::Expr::Identifier(i) => ident_name(i),
        ast::Expr::CompoundIdentifier(parts) => parts.last().map(ident_name).unwrap_or_default(),
        other => heading_text(&crate::sql::oracle_types::as_written(&other.to_string())),
    }
}

/// An expression as a column heading: upper case and without blanks, except inside
/// quoted strings.
fn heading_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut quoted = false;
    for c in text.chars() {
        if c == '\'' {
            quoted = !quoted;
        }
        match c {
            ' ' if !quoted => {}
            c if quoted => out.push(c),
            c => out.push(c.to_ascii_uppercase()),
        }
    }
    out
}

/// Where an identifier starts (None when the parser gave it no place).
fn ident_position(ident: &ast::Ident) -> Option<String> {
    let start = ident.span.start;
    (start.line > 0).then(|| format!("line {}, column {}", start.line, start.column))
}
