//! Query blocks as row sources: a query read by the query around it (an inline view, a
//! WITH query, a stored view: Oracle's VIEW line), and the set operations over query
//! blocks (UNION-ALL, INTERSECTION HASH, MINUS HASH).
//!
//! A [`QueryBlock`] is a plan of its own, a source and its stages; running it pushes its
//! result rows into the stages of the plan reading it as they come, through a sink it
//! adds at the end of its stages for that run (so nothing is collected on the way, and
//! a limit above the view stops the view's source). Its stages are kept between runs
//! and reset at the start of each: a nested loop may run a view once an outer row.
//!
//! Subqueries in expressions run here too: an [`InitPlan`] (one that reads nothing of
//! the rows around it) once before its plan's source ([`run_init_plans`]), a
//! [`CorrelatedPlan`] for each row's values in a [`SubqueryFilter`] (the FILTER line),
//! or for each changed row of an UPDATE or DELETE ([`CorrelatedPlan::run_for`]), its
//! answers per outer values cached for the execution. A multi-column IN keeps the
//! subquery's distinct rows (`InitKind::Rows`). An answer goes into the
//! statement's function context for `Expr::Subquery` to read; a scalar subquery's second
//! row is an error only when its answer is read.
//!
//! A materialized WITH query is an init plan too (`InitKind::Table`, all its rows in
//! order), one of the loads a [`TempTableTransformation`] runs before the query that
//! reads it; each reference then reads those rows from the function context
//! (`Source::Materialized`), however often it runs.
//!
//! INTERSECT and MINUS keep the right branch's distinct rows in a hash set, then pass
//! each distinct row of the left branch that the set holds (INTERSECT) or does not hold
//! (MINUS). Rows compare as GROUP BY compares them: NULLs equal each other.
//!
//! A block that is only a table read through filters and a projection of its columns
//! hands its source over ([`QueryBlock::into_table_read`]): an unnested subquery then
//! joins as its table's line rather than as a view. A block that groups a table's rows
//! by the columns a hash join probes it with takes that join's filter on the scanned
//! rows, right after its leading filters and before the GROUP BY
//! ([`QueryBlock::group_key_columns`], [`QueryBlock::run_join_filtered`]): a dropped row
//! takes away only its own group, which the join would have dropped. The filter's stage
//! is inserted for that run and taken out before the stages are kept again.
//!
//! The types live in `source`, beside the enum they recurse through; running them is
//! this module's. Invariant: a block's kept stages never hold a sink (its constructor
//! refuses one and a run takes its own sink off again), so a block is `Send` like the
//! rest of a kept plan.

use super::ExecContext;
use super::downstream::{ConsumeRow, RowSink};
use super::join::{Counted, Forward};
use super::join_filter::JoinFilterStage;
use super::pipeline::{Stage, insert_probes, probe_at, push};
use super::source::{BlockStages, InputFigures, Source};
pub use super::source::{
    CorrelatedPlan, InitKind, InitPlan, QueryBlock, SetOperation, SetOperator, SubqueryFilter, TempTableTransformation,
};
use crate::access::Flow;
use crate::error::{Error, Result};
use crate::expr::Expr;
use crate::expr::functions::{FunctionContext, SubqueryAnswer};
use crate::types::{Datum, Value};
use std::cell::{Cell, RefCell};
use std::collections::HashSet;

/// A query block that is a table's rows read through filters
/// ([`QueryBlock::into_table_read`]).
pub struct TableRead {
    pub source: Source,
    /// The columns of the source's rows.
    pub width: usize,
    pub filter: Option<Expr>,
    /// The source column each of the block's columns is.
    pub columns: Vec<usize>,
}

impl QueryBlock {
    /// The block reading `source` through `stages` (which end with no collect or sink of
    /// their own), its rows `width` columns wide.
    ///
    /// # Panics
    /// When `stages` holds a sink: a plan's stages only end with one once it runs.
    pub fn new(
        source: Source,
        stages: Vec<Stage<'static>>,
        width: usize,
        probe_positions: Vec<usize>,
        probe_lines: Vec<usize>,
        init: Vec<InitPlan>,
    ) -> QueryBlock {
        assert!(!stages.iter().any(|s| matches!(s, Stage::Sink(_))), "a query block's stages hold no sink");
        let lines = probe_positions.len();
        QueryBlock {
            source,
            stages: BlockStages::new(stages),
            width,
            probe_positions,
            probe_lines,
            figures: Cell::default(),
            line_rows: RefCell::new(vec![0; lines]),
            init,
            used: None,
        }
    }

    /// The block as a table's rows read through filters, when it is only that: a table
    /// read (a full scan, an index path to the table, the column store) with no init
    /// plan, whose stages are filters and then one projection of columns. Gives the
    /// source, its rows' width, the filters' conjunction, and the source column each of
    /// the block's columns is; else the block back.
    pub fn into_table_read(self: Box<Self>) -> std::result::Result<TableRead, Box<QueryBlock>> {
        let table_width = match &self.source {
            Source::TableScan { table, .. } => Some(table.columns.len()),
            Source::Index(access) if access.table_access => Some(access.table.columns.len()),
            Source::InMemory(access) => Some(access.table.columns.len()),
            _ => None,
        };
        let shape = {
            let stages = self.stages.borrow().expect("a block between runs has its stages");
            match stages.split_last() {
                Some((Stage::Project(project), filters))
                    if filters.iter().all(|s| matches!(s, Stage::Filter(_))) && self.init.is_empty() =>
                {
                    let columns: Option<Vec<usize>> = project
                        .exprs
                        .iter()
                        .map(|e| match e {
                            Expr::Column(c) => Some(*c),
                            _ => None,
                        })
                        .collect();
                    columns.zip(table_width)
                }
                _ => None,
            }
        };
        let Some((columns, width)) = shape else { return Err(self) };
        let QueryBlock { stages, source, .. } = *self;
        let stages = stages.into_inner();
        let filters = stages.into_iter().filter_map(|s| match s {
            Stage::Filter(f) => Some(f.predicate),
            _ => None,
        });
        let filter = filters.reduce(|a, b| Expr::And(Box::new(a), Box::new(b)));
        Ok(TableRead { source, width, filter, columns })
    }

    /// WINDOW SORT PUSHED RANK: when the block's column `column` is a ranking function's
    /// value (ROW_NUMBER, RANK, DENSE_RANK) of its window stage, and only projections and
    /// sorts follow that stage, the stage keeps only the rows ranked at most `limit`;
    /// gives the call's text then.
    pub fn push_rank(&self, column: usize, limit: i64) -> Option<Box<str>> {
        let mut stages = self.stages.borrow()?;
        let at = stages.iter().position(|s| matches!(s, Stage::Window(_)))?;
        let (window, after) = stages[at..].split_first_mut()?;
        let Stage::Window(window) = window else { return None };
        if !after.iter().all(|s| matches!(s, Stage::Project(_) | Stage::Sort(_))) {
            return None;
        }
        // The column through the projections after the window, back to the window's.
        let mut c = column;
        for stage in after.iter().rev() {
            if let Stage::Project(project) = stage {
                let Expr::Column(from) = project.exprs.get(c)? else { return None };
                c = *from;
            }
        }
        let call = c.checked_sub(window.width)?;
        window.push_rank(call, limit).then(|| window.calls[call].text.clone())
    }

    /// Starts a statement's execution: the figures of the last one are dropped, the
    /// block's and those of the blocks inside it (a block run again within the execution,
    /// under a nested loop, adds each run to them).
    pub fn clear_figures(&self) {
        self.figures.set(InputFigures::default());
        self.line_rows.borrow_mut().iter_mut().for_each(|r| *r = 0);
        self.source.clear_block_figures();
        self.init.iter().for_each(|p| p.block.clear_figures());
    }

    /// Runs the block, pushing its rows into `rest` (the stages of the plan reading it).
    pub fn run(&self, rest: &mut [Stage<'_>], ctx: &mut ExecContext<'_>) -> Result<()> {
        let mut into = PushInto { rest, f: ctx.functions.clone(), stopped: false };
        let ran = self.run_into(&mut into, ctx);
        ctx.functions.random = into.f.random.clone();
        ran
    }

    /// Runs the block, handing each of its rows to `consumer`.
    pub fn run_into(&self, consumer: &mut dyn ConsumeRow, ctx: &mut ExecContext<'_>) -> Result<()> {
        self.run_filtered_into(consumer, None, ctx)
    }

    /// [`QueryBlock::run`], its source's rows also through `join_filter` (a hash join's
    /// filter on the block's rows, checked on its source's columns: see
    /// [`QueryBlock::group_key_columns`]) after the block's own filters.
    pub fn run_join_filtered(
        &self,
        rest: &mut [Stage<'_>],
        join_filter: JoinFilterStage<'_>,
        ctx: &mut ExecContext<'_>,
    ) -> Result<()> {
        let mut into = PushInto { rest, f: ctx.functions.clone(), stopped: false };
        let ran = self.run_filtered_into(&mut into, Some(join_filter), ctx);
        ctx.functions.random = into.f.random.clone();
        ran
    }

    /// The source columns of the block's columns `columns`, where the block groups its
    /// source's rows by them: its source is a full scan of one table, its stages filters
    /// of the scanned rows, a GROUP BY whose keys include each of `columns` as a plain
    /// scanned column, then only projections and filters of the groups. A row whose key
    /// is dropped before the GROUP BY then takes away only its own group, which a join
    /// on those columns would have dropped: a hash join's filter may be checked on the
    /// scanned rows ([`QueryBlock::run_join_filtered`]). `None` otherwise.
    pub fn group_key_columns(&self, columns: &[usize]) -> Option<Vec<usize>> {
        if !matches!(self.source, Source::TableScan { .. } | Source::InMemory(_)) {
            return None;
        }
        let stages = self.stages.borrow()?;
        let at = stages.iter().position(|s| !matches!(s, Stage::Filter(_)))?;
        let Stage::Aggregate(aggregate) = &stages[at] else { return None };
        let after = &stages[at + 1..];
        if !after.iter().all(|s| matches!(s, Stage::Project(_) | Stage::Filter(_))) {
            return None;
        }
        columns
            .iter()
            .map(|&column| {
                // The column through the projections after the GROUP BY, back to its output.
                let mut c = column;
                for stage in after.iter().rev() {
                    if let Stage::Project(project) = stage {
                        let Expr::Column(from) = project.exprs.get(c)? else { return None };
                        c = *from;
                    }
                }
                match aggregate.group_by.get(c)? {
                    Expr::Column(scanned) => Some(*scanned),
                    _ => None,
                }
            })
            .collect()
    }

    /// Runs the block, handing each of its rows to `consumer`, its source's rows through
    /// `join_filter` too when given, right after the block's leading filters.
    fn run_filtered_into(
        &self,
        consumer: &mut dyn ConsumeRow,
        join_filter: Option<JoinFilterStage<'_>>,
        ctx: &mut ExecContext<'_>,
    ) -> Result<()> {
        run_init_plans(&self.init, ctx)?;
        let Some(mut kept) = self.stages.borrow() else {
            return Err(Error::unsupported("a query block read inside its own run"));
        };
        let mut stages: Vec<Stage<'_>> = std::mem::take(&mut *kept);
        stages.iter_mut().for_each(Stage::reset);
        let leading_filters = stages.iter().take_while(|s| matches!(s, Stage::Filter(_))).count();
        let probes = ctx.row_source_statistics.then(|| insert_probes(&mut stages, &self.probe_positions));
        // After the last leading filter, before the probe that counts the source line's
        // rows: that line shows the rows the join filter passed.
        let filter_at = join_filter.map(|j| {
            let at = match leading_filters {
                0 => 0,
                n => {
                    let mut seen = 0;
                    1 + stages
                        .iter()
                        .position(|s| {
                            seen += usize::from(matches!(s, Stage::Filter(_)));
                            seen == n
                        })
                        .expect("the leading filters are still there")
                }
            };
            stages.insert(at, Stage::JoinFilter(j));
            at
        });
        let mut counted = Counted { consumer, rows: 0 };
        stages.push(Stage::Sink(RowSink {
            visible: self.width,
            used: self.used.as_deref(),
            only: None,
            consume: Box::new(Forward(&mut counted)),
        }));
        let mut figures = self.figures.get();
        let ran =
            figures.measure(ctx.access.stats, || super::run::run_pipeline_in_place(&self.source, &mut stages, ctx));
        stages.pop();
        if let Some(at) = filter_at
            && let Stage::JoinFilter(mut j) = stages.remove(at)
        {
            j.hand_counts(ctx.access.stats);
        }
        if let Some(probes) = probes {
            let mut rows = self.line_rows.borrow_mut();
            for (total, &at) in rows.iter_mut().zip(&probes) {
                *total += probe_at(&stages, at).rows;
            }
        }
        *kept = stages.into_iter().filter_map(Stage::detached).collect();
        figures.rows += counted.rows;
        self.figures.set(figures);
        ran.map(|_| ())
    }

    /// Whether the block, or a subquery it runs first, reads the table with data object
    /// id `object_id`.
    pub fn reads_table(&self, object_id: u32) -> bool {
        self.source.reads_table(object_id) || self.init.iter().any(|p| p.block.reads_table(object_id))
    }

    /// Whether the block, or a subquery it runs first, holds rows read when the
    /// statement was planned.
    pub fn holds_planned_rows(&self) -> bool {
        self.source.holds_planned_rows() || self.init.iter().any(|p| p.block.holds_planned_rows())
    }
}

/// Runs the init plans `plans`, setting each one's answer in the statement's function
/// context.
pub fn run_init_plans(plans: &[InitPlan], ctx: &mut ExecContext<'_>) -> Result<()> {
    for plan in plans {
        let answer = answer_of(&plan.block, plan.kind, ctx)?;
        ctx.functions.set_subquery(plan.slot, std::sync::Arc::new(answer));
    }
    Ok(())
}

/// Runs the subquery `block` for the answer `kind` asks.
fn answer_of(block: &QueryBlock, kind: InitKind, ctx: &mut ExecContext<'_>) -> Result<SubqueryAnswer> {
    Ok(match kind {
        InitKind::Scalar => {
            let mut one = OneRow { value: None, more: false };
            block.run_into(&mut one, ctx)?;
            match one {
                OneRow { more: true, .. } => SubqueryAnswer::TooManyRows,
                OneRow { value, .. } => SubqueryAnswer::Scalar(value.unwrap_or(Datum::Null)),
            }
        }
        InitKind::Exists => {
            let mut first = FirstRow(false);
            block.run_into(&mut first, ctx)?;
            SubqueryAnswer::Values { values: HashSet::new(), any: first.0, has_null: false, kinds: 0 }
        }
        InitKind::Values => {
            let (mut values, mut any, mut has_null, mut kinds) = (HashSet::new(), false, false, 0u8);
            let mut keep = |row: &[Datum<'_>]| -> Result<()> {
                any = true;
                match row.first() {
                    None | Some(Datum::Null) => has_null = true,
                    Some(v) => {
                        kinds |= crate::expr::functions::value_kind(v);
                        values.insert(v.clone().into_owned());
                    }
                }
                Ok(())
            };
            block.run_into(&mut keep, ctx)?;
            SubqueryAnswer::Values { values, any, has_null, kinds }
        }
        InitKind::Rows => {
            let (mut rows, mut with_null, mut kinds) = (HashSet::new(), Vec::new(), Vec::new());
            let mut keep = |row: &[Datum<'_>]| -> Result<()> {
                kinds.resize(row.len(), 0u8);
                for (k, v) in kinds.iter_mut().zip(row) {
                    *k |= crate::expr::functions::value_kind(v);
                }
                let row: Vec<Value> = row.iter().map(|v| v.clone().into_owned()).collect();
                if row.iter().any(Datum::is_null) {
                    with_null.push(row);
                } else {
                    rows.insert(row);
                }
                Ok(())
            };
            block.run_into(&mut keep, ctx)?;
            SubqueryAnswer::Rows { rows, with_null, kinds }
        }
        InitKind::Table => {
            let mut rows = Vec::new();
            let mut keep = |row: &[Datum<'_>]| -> Result<()> {
                rows.push(row.iter().map(|v| v.clone().into_owned()).collect());
                Ok(())
            };
            block.run_into(&mut keep, ctx)?;
            SubqueryAnswer::Table(rows)
        }
    })
}

impl TempTableTransformation {
    /// Loads the WITH queries' rows, then pushes the query's into `rest`.
    pub fn run(&self, rest: &mut [Stage<'_>], ctx: &mut ExecContext<'_>) -> Result<()> {
        run_init_plans(&self.loads, ctx)?;
        self.body.run(rest, ctx)
    }
}

impl SubqueryFilter {
    pub fn run(&self, rest: &mut [Stage<'_>], ctx: &mut ExecContext<'_>) -> Result<()> {
        for plan in &self.subplans {
            plan.forget_answers();
        }
        let inner_ctx = ctx.for_inner_runs();
        let into = PushInto { rest, f: ctx.functions.clone(), stopped: false };
        let mut rows = FilterRows { filter: self, inner_ctx, into };
        let ran = self.input.run_into(&mut rows, ctx);
        ctx.functions.random = rows.into.f.random.clone();
        ran
    }
}

/// The input's end of a FILTER with correlated subqueries.
struct FilterRows<'s, 'c, 'r, 'a> {
    filter: &'s SubqueryFilter,
    /// Where the subqueries run: the statement's context with the outer row's values.
    inner_ctx: ExecContext<'c>,
    into: PushInto<'r, 'a>,
}

impl ConsumeRow for FilterRows<'_, '_, '_, '_> {
    fn consume(&mut self, values: &[Datum<'_>]) -> Result<()> {
        for plan in &self.filter.subplans {
            let key = plan.key_of(values, &mut self.into.f)?;
            let answer = match plan.cached(&key) {
                Some(answer) => answer,
                None => plan.run_for(key, &mut self.inner_ctx)?,
            };
            self.into.f.set_subquery(plan.slot, answer);
        }
        let passes = match &self.filter.predicate {
            Some(p) => p.eval_condition(values, &mut self.into.f)? == Some(true),
            None => true,
        };
        if passes {
            self.into.consume(values)?;
        }
        Ok(())
    }

    fn stopped(&self) -> bool {
        self.into.stopped
    }
}

impl CorrelatedPlan {
    /// The outer values of outer row `row` this subquery reads: the key of its answer.
    pub fn key_of<R: crate::access::RowAccess + ?Sized>(&self, row: &R, f: &mut FunctionContext) -> Result<Vec<Value>> {
        self.correlation.iter().map(|(_, e)| e.eval(row, f).map(Datum::into_owned)).collect()
    }

    /// The answer of this execution's run for outer values `key`, if it ran for them.
    pub fn cached(&self, key: &[Value]) -> Option<std::sync::Arc<SubqueryAnswer>> {
        self.cache.borrow().get(key).cloned()
    }

    /// Runs the subquery for outer values `key` in `ctx` (a context for inner runs, see
    /// [`ExecContext::for_inner_runs`]) and keeps its answer for the execution.
    pub fn run_for(&self, key: Vec<Value>, ctx: &mut ExecContext<'_>) -> Result<std::sync::Arc<SubqueryAnswer>> {
        for ((slot, _), v) in self.correlation.iter().zip(&key) {
            let outer = &mut ctx.functions.outer;
            if outer.len() <= *slot {
                outer.resize(*slot + 1, Datum::Null);
            }
            outer[*slot] = v.clone();
        }
        let answer = std::sync::Arc::new(answer_of(&self.block, self.kind, ctx)?);
        self.cache.borrow_mut().insert(key, answer.clone());
        Ok(answer)
    }

    /// Forgets the answers kept (an execution begins: the tables may have changed).
    pub fn forget_answers(&self) {
        self.cache.borrow_mut().clear();
    }
}

/// A consumer that takes one row's first value, and stops at a second row.
struct OneRow {
    value: Option<Value>,
    more: bool,
}

impl ConsumeRow for OneRow {
    fn consume(&mut self, values: &[Datum<'_>]) -> Result<()> {
        match self.value {
            Some(_) => self.more = true,
            None => self.value = Some(values.first().map_or(Datum::Null, |v| v.clone().into_owned())),
        }
        Ok(())
    }

    fn stopped(&self) -> bool {
        self.more
    }
}

/// A consumer that wants one row: EXISTS.
struct FirstRow(bool);

impl ConsumeRow for FirstRow {
    fn consume(&mut self, _: &[Datum<'_>]) -> Result<()> {
        self.0 = true;
        Ok(())
    }

    fn stopped(&self) -> bool {
        self.0
    }
}

impl SetOperation {
    pub fn run(&self, rest: &mut [Stage<'_>], ctx: &mut ExecContext<'_>) -> Result<()> {
        let mut into = PushInto { rest, f: ctx.functions.clone(), stopped: false };
        let ran = self.run_into(&mut into, ctx);
        ctx.functions.random = into.f.random.clone();
        ran
    }

    fn run_into(&self, into: &mut PushInto<'_, '_>, ctx: &mut ExecContext<'_>) -> Result<()> {
        match self.operator {
            SetOperator::UnionAll => {
                for branch in &self.branches {
                    branch.run_into(into, ctx)?;
                    if into.stopped {
                        break;
                    }
                }
                Ok(())
            }
            SetOperator::Intersect | SetOperator::Minus => {
                let [left, right] = &self.branches[..] else {
                    return Err(Error::unsupported("INTERSECT or MINUS of other than two query blocks"));
                };
                let mut other: HashSet<Vec<Value>> = HashSet::new();
                let mut keep = |values: &[Datum<'_>]| -> Result<()> {
                    other.insert(values.iter().map(|v| v.clone().into_owned()).collect());
                    Ok(())
                };
                right.run_into(&mut keep, ctx)?;
                let wanted = self.operator == SetOperator::Intersect;
                let mut distinct = Distinct { seen: HashSet::new(), other: &other, wanted, into };
                left.run_into(&mut distinct, ctx)
            }
        }
    }

    fn reads_table(&self, object_id: u32) -> bool {
        self.branches.iter().any(|b| b.reads_table(object_id))
    }
}

impl Source {
    /// Drops the figures of the query blocks and joins in this source (and in a join's
    /// inputs), for a new execution that gathers row-source statistics.
    pub fn clear_block_figures(&self) {
        match self {
            Source::View(block) => block.clear_figures(),
            Source::SetOperation(set) => set.branches.iter().for_each(QueryBlock::clear_figures),
            Source::SubqueryFilter(filter) => {
                filter.input.clear_figures();
                filter.subplans.iter().for_each(|p| p.block.clear_figures());
            }
            Source::TempTable(temp) => {
                temp.body.clear_figures();
                temp.loads.iter().for_each(|p| p.block.clear_figures());
            }
            Source::Index(access) => access.clear_totals(),
            Source::Join(join) => {
                join.clear_figures();
                join.left.source.clear_block_figures();
                join.right.source.clear_block_figures();
            }
            _ => {}
        }
    }

    /// Whether a query block in this source reads the table with data object id
    /// `object_id`.
    pub(super) fn block_reads_table(&self, object_id: u32) -> bool {
        match self {
            Source::View(block) => block.reads_table(object_id),
            Source::SetOperation(set) => set.reads_table(object_id),
            Source::SubqueryFilter(filter) => {
                filter.input.reads_table(object_id) || filter.subplans.iter().any(|p| p.block.reads_table(object_id))
            }
            Source::TempTable(temp) => {
                temp.body.reads_table(object_id) || temp.loads.iter().any(|p| p.block.reads_table(object_id))
            }
            _ => false,
        }
    }
}

/// Pushes the rows it is handed into the stages of the plan reading a block.
struct PushInto<'r, 'a> {
    rest: &'r mut [Stage<'a>],
    f: FunctionContext,
    stopped: bool,
}

impl ConsumeRow for PushInto<'_, '_> {
    fn consume(&mut self, values: &[Datum<'_>]) -> Result<()> {
        if !self.stopped && push(self.rest, values, &mut self.f)? == Flow::Stop {
            self.stopped = true;
        }
        Ok(())
    }

    fn stopped(&self) -> bool {
        self.stopped
    }
}

/// The left branch's end of INTERSECT and MINUS: each distinct row whose presence in the
/// right branch's rows is `wanted` goes on.
struct Distinct<'o, 'i, 'r, 'a> {
    seen: HashSet<Vec<Value>>,
    other: &'o HashSet<Vec<Value>>,
    wanted: bool,
    into: &'i mut PushInto<'r, 'a>,
}

impl ConsumeRow for Distinct<'_, '_, '_, '_> {
    fn consume(&mut self, values: &[Datum<'_>]) -> Result<()> {
        let row: Vec<Value> = values.iter().map(|v| v.clone().into_owned()).collect();
        if self.other.contains(&row) != self.wanted || self.seen.contains(&row) {
            return Ok(());
        }
        self.into.consume(&row)?;
        self.seen.insert(row);
        Ok(())
    }

    fn stopped(&self) -> bool {
        self.into.stopped()
    }
}
