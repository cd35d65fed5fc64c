//! Joins as row sources: HASH JOIN, NESTED LOOPS and MERGE JOIN, inner and outer, each
//! joining two inputs into rows that hold the left input's columns then the right's.
//!
//! An input is a plan of its own: a source (a scan, an index path, another join) and the
//! filter of the conjuncts on its own columns. It runs as a pipeline whose last stage is
//! a sink handing each row to the join ([`RowSink`]), so the rows of a scan reach the
//! join still inside their block, and the joined rows go on into the stages above the
//! join as they are made:
//!
//! ```text
//!  HASH JOIN     build input ─► sink: rows kept in a hash table on the join keys, within
//!                               the work area, partitions spilled to temp beyond it
//!                probe input ─► sink: each row's key looked up ─► joined rows ─► stages
//!  NESTED LOOPS  outer input ─► sink: for each row, the inner input run again (an index
//!                               probe on the row's keys, or a full scan) ─► stages
//!  MERGE JOIN    both inputs ─► SORT JOIN: kept and sorted on the keys ─► merged ─► stages
//! ```
//!
//! Semantics, for every method alike:
//! - a pair of rows joins when every key pair is equal (a NULL key never joins) and the
//!   residual condition (the rest of the ON clause, or of the WHERE clause's conjuncts
//!   on both inputs) is true;
//! - an outer join keeps the rows of its preserved input (the left for LEFT, the right
//!   for RIGHT, both for FULL) that joined no row, with NULLs for the other input's
//!   columns;
//! - a semi join gives each left row that joins some right row once, an anti join each
//!   left row that joins none, both with NULLs for the right input's columns; neither
//!   looks further once one right row joined (a hash join building on the left input
//!   marks its rows as they join, and skips a marked row's residual condition);
//! - keys of a pair are compared as values of one type family (the planner pairs only
//!   keys whose values share one), so hashing and sorting agree with `=`.
//!
//! Every input's rows count as its own source counts them (logical reads, `table scan
//! rows gotten`); a nested loop's inner input counts once per outer row, as Oracle's do.
//!
//! The types of a join (its inputs, kind and method) are `super::source`'s, beside the
//! `Source` enum they recurse through; this module runs them, one file a method
//! ([`hash`], [`nested_loops`], [`merge`]), with what they share here.

mod hash;
mod merge;
mod nested_loops;

use super::ExecContext;
use super::FilterStage;
use super::downstream::{ConsumeRow, RowSink};
use super::join_filter::JoinFilterStage;
use super::pipeline::{Stage, push};
pub use super::source::{InputFigures, Join, JoinFilterSpec, JoinInput, JoinKind, JoinMethod, NestedInner};
use crate::access::{Flow, RowAccess};
use crate::error::Result;
use crate::expr::Expr;
use crate::expr::functions::FunctionContext;
use crate::stats::Stat;
use crate::types::{Datum, Fixed, Value};
use std::borrow::Cow;

impl InputFigures {
    /// These figures less `other`'s gets, reads and time (work `other` measured inside
    /// the run these measured).
    pub fn less(self, other: InputFigures) -> InputFigures {
        InputFigures {
            consistent_gets: self.consistent_gets.saturating_sub(other.consistent_gets),
            physical_reads: self.physical_reads.saturating_sub(other.physical_reads),
            time_ns: self.time_ns.saturating_sub(other.time_ns),
            ..self
        }
    }

    /// Adds what `work` (one run of the input, giving rows `rows` counts) did to the
    /// figures.
    pub(in crate::exec) fn measure<T>(&mut self, stats: &crate::stats::SessionStats, work: impl FnOnce() -> T) -> T {
        let (gets, reads) = (stats.get(Stat::ConsistentGets), stats.get(Stat::PhysicalReads));
        let started = std::time::Instant::now();
        let out = work();
        self.starts += 1;
        self.time_ns += started.elapsed().as_nanos() as u64;
        self.consistent_gets += stats.get(Stat::ConsistentGets) - gets;
        self.physical_reads += stats.get(Stat::PhysicalReads) - reads;
        out
    }
}

/// `d`, its string borrowed.
fn borrowed<'x>(d: &'x Datum<'_>) -> Datum<'x> {
    match d {
        Datum::Str(s) => Datum::Str(Cow::Borrowed(s)),
        other => other.reborrow(),
    }
}

/// The joined row of `left` (or NULLs) and `right` (or NULLs), read in place; `left`
/// gives the first `left_width` columns.
fn joined<'x, 'v>(left: Option<&'x [Datum<'v>]>, left_width: usize, right: Option<&'x [Datum<'v>]>) -> Pair<'x, 'v> {
    Pair {
        left: left.map(SideRow::whole).unwrap_or_default(),
        right: right.map(SideRow::whole).unwrap_or_default(),
        left_width,
    }
}

/// The values of `keys` over `row`, into `out`; false when one is NULL (the row joins
/// nothing).
fn key_of(keys: &[Expr], row: &[Datum<'_>], f: &mut FunctionContext, out: &mut Vec<Value>) -> Result<bool> {
    out.clear();
    for k in keys {
        let v = k.eval(row, f)?;
        if v.is_null() {
            return Ok(false);
        }
        out.push(v.into_owned());
    }
    Ok(true)
}

impl Join {
    /// Starts a statement's execution: the figures of the last one are dropped.
    pub fn clear_figures(&self) {
        self.left.figures.set(InputFigures::default());
        self.right.figures.set(InputFigures::default());
        self.probe_figures.set(Default::default());
        self.emitted.set(InputFigures::default());
    }

    /// Runs the join, pushing its rows into `stages`. Its inputs' figures add up over
    /// the runs of an execution (a join inside a correlated subquery or a nested loop's
    /// inner view runs many times) until [`Join::clear_figures`]; its work area's are the
    /// last run's.
    pub fn run(&self, stages: &mut [Stage<'_>], ctx: &mut ExecContext<'_>) -> Result<()> {
        self.workarea.set(None);
        match &self.method {
            JoinMethod::Hash { build_right } => hash::run(self, *build_right, stages, ctx),
            JoinMethod::NestedLoops(inner) => self.nested_loops(inner, stages, ctx),
            JoinMethod::Merge => self.merge(stages, ctx),
        }
    }

    /// Whether running the join reads the table with data object id `object_id`.
    pub fn reads_table(&self, object_id: u32) -> bool {
        let inner_reads = match &self.method {
            JoinMethod::NestedLoops(inner) => match &**inner {
                NestedInner::Index { access, .. } => access.table.object_id == object_id,
                NestedInner::Rescan => false,
            },
            _ => false,
        };
        inner_reads || self.left.source.reads_table(object_id) || self.right.source.reads_table(object_id)
    }

    /// Pushes the joined row `row` into `stages`, its columns in the output's order.
    fn emit<R: RowAccess + ?Sized>(&self, row: &R, stages: &mut [Stage<'_>], f: &mut FunctionContext) -> Result<Flow> {
        match &self.output {
            None => push(stages, row, f),
            Some(order) => push(stages, &Ordered { row, order }, f),
        }
    }

    /// [`Join::emit`], adding what it took to `Join::emitted` when `meter` is given.
    fn emit_metered<R: RowAccess + ?Sized>(
        &self,
        row: &R,
        stages: &mut [Stage<'_>],
        f: &mut FunctionContext,
        meter: Option<&crate::stats::SessionStats>,
    ) -> Result<Flow> {
        let Some(stats) = meter else { return self.emit(row, stages, f) };
        let mut emitted = self.emitted.get();
        let flow = emitted.measure(stats, || self.emit(row, stages, f));
        self.emitted.set(emitted);
        flow
    }

    /// Whether the pair `row` (already joined) meets the residual condition.
    fn residual_holds<R: RowAccess + ?Sized>(&self, row: &R, f: &mut FunctionContext) -> Result<bool> {
        match &self.residual {
            None => Ok(true),
            Some(r) => Ok(r.eval_condition(row, f)? == Some(true)),
        }
    }
}

/// One input's side of a joined row, read in place: its values, all of them or only
/// the columns an input keeps (`slots[c]`: where column `c` is among `values`, or
/// [`NOT_KEPT`]); a column it does not hold, or a missing side, is NULL.
#[derive(Clone, Copy, Default)]
struct SideRow<'x, 'v> {
    values: &'x [Datum<'v>],
    slots: Option<&'x [u32]>,
}

/// A column an input's kept rows do not hold.
const NOT_KEPT: u32 = u32::MAX;

impl<'x, 'v> SideRow<'x, 'v> {
    /// A side holding every column, `values[c]` being column `c`.
    fn whole(values: &'x [Datum<'v>]) -> Self {
        SideRow { values, slots: None }
    }

    /// Column `c` of the side, `None` for NULL.
    #[inline]
    fn value(&self, c: usize) -> Option<&Datum<'v>> {
        let i = match self.slots {
            None => c,
            Some(slots) => match slots.get(c) {
                Some(&i) if i != NOT_KEPT => i as usize,
                _ => return None,
            },
        };
        self.values.get(i)
    }

    /// Column `c` of the side.
    #[inline]
    fn get(&self, c: usize) -> Datum<'_> {
        self.value(c).map_or(Datum::Null, borrowed)
    }
}

impl RowAccess for SideRow<'_, '_> {
    #[inline]
    fn column(&self, i: usize) -> Result<Datum<'_>> {
        Ok(self.get(i))
    }

    #[inline]
    fn is_null(&self, i: usize) -> bool {
        self.value(i).is_none_or(Datum::is_null)
    }

    #[inline]
    fn small_int(&self, i: usize) -> Option<i64> {
        match self.value(i) {
            Some(Datum::Int(v)) => Some(*v),
            _ => None,
        }
    }

    #[inline]
    fn small_fixed(&self, i: usize) -> Option<Fixed> {
        Fixed::of(self.value(i)?)
    }
}

/// A joined row read in place: the left side's columns, then the right's.
struct Pair<'x, 'v> {
    left: SideRow<'x, 'v>,
    right: SideRow<'x, 'v>,
    left_width: usize,
}

impl RowAccess for Pair<'_, '_> {
    #[inline]
    fn column(&self, c: usize) -> Result<Datum<'_>> {
        Ok(if c < self.left_width { self.left.get(c) } else { self.right.get(c - self.left_width) })
    }

    #[inline]
    fn is_null(&self, c: usize) -> bool {
        if c < self.left_width { self.left.is_null(c) } else { self.right.is_null(c - self.left_width) }
    }

    #[inline]
    fn small_int(&self, c: usize) -> Option<i64> {
        if c < self.left_width { self.left.small_int(c) } else { self.right.small_int(c - self.left_width) }
    }

    #[inline]
    fn small_fixed(&self, c: usize) -> Option<Fixed> {
        if c < self.left_width { self.left.small_fixed(c) } else { self.right.small_fixed(c - self.left_width) }
    }
}

/// A joined row with its columns in the output's order: column `c` is `order[c]` of
/// `row`.
struct Ordered<'r, R: ?Sized> {
    row: &'r R,
    order: &'r [usize],
}

impl<R: RowAccess + ?Sized> RowAccess for Ordered<'_, R> {
    #[inline]
    fn column(&self, c: usize) -> Result<Datum<'_>> {
        self.row.column(self.order[c])
    }

    #[inline]
    fn is_null(&self, c: usize) -> bool {
        self.row.is_null(self.order[c])
    }

    #[inline]
    fn small_int(&self, c: usize) -> Option<i64> {
        self.row.small_int(self.order[c])
    }

    #[inline]
    fn small_fixed(&self, c: usize) -> Option<Fixed> {
        self.row.small_fixed(self.order[c])
    }
}

/// Runs `input` into `consumer`, through the input's filter, adding the run to the
/// input's figures.
fn run_into(input: &JoinInput, consumer: &mut dyn ConsumeRow, ctx: &mut ExecContext<'_>) -> Result<()> {
    run_filtered(input, None, None, consumer, ctx)
}

/// [`run_into`], the rows handed over holding only the columns `only` when given (see
/// [`RowSink::only`]), and also through `join_filter` after the input's filter (a hash
/// join's probe input), whose counts go to the session's statistics; a view's input
/// checks it inside the view, on its scanned rows ([`super::QueryBlock::run_join_filtered`]).
fn run_filtered(
    input: &JoinInput,
    only: Option<&[usize]>,
    join_filter: Option<JoinFilterStage<'_>>,
    consumer: &mut dyn ConsumeRow,
    ctx: &mut ExecContext<'_>,
) -> Result<()> {
    let mut stages: Vec<Stage<'_>> = Vec::with_capacity(3);
    if let Some(filter) = &input.filter {
        stages.push(Stage::Filter(FilterStage::new(filter.clone())));
    }
    // The planner gives a view a filter only where its GROUP BY keys are the join's.
    let (join_filter, into_view) = match (&input.source, join_filter) {
        (super::Source::View(block), Some(j)) => (None, Some((block, j))),
        (_, j) => (j, None),
    };
    stages.extend(join_filter.map(Stage::JoinFilter));
    let mut counted = Counted { consumer, rows: 0 };
    stages.push(Stage::Sink(RowSink {
        visible: input.read,
        used: input.used.as_deref(),
        only,
        consume: Box::new(Forward(&mut counted)),
    }));
    let mut figures = input.figures.get();
    let stats = ctx.access.stats;
    let ran = figures.measure(stats, || match into_view {
        Some((block, j)) => block
            .run_join_filtered(&mut stages, j, ctx)
            .and_then(|()| super::pipeline::finish(&mut stages, &mut ctx.functions)),
        None => super::run::run_pipeline_in_place(&input.source, &mut stages, ctx).map(drop),
    });
    for stage in &mut stages {
        if let Stage::JoinFilter(j) = stage {
            j.hand_counts(stats);
        }
    }
    drop(stages);
    figures.rows += counted.rows;
    input.figures.set(figures);
    ran.map(|_| ())
}

/// A consumer that counts the rows it passes on.
pub(in crate::exec) struct Counted<'c> {
    pub(in crate::exec) consumer: &'c mut dyn ConsumeRow,
    pub(in crate::exec) rows: u64,
}

impl ConsumeRow for Counted<'_> {
    fn consume(&mut self, values: &[Datum<'_>]) -> Result<()> {
        self.rows += 1;
        self.consumer.consume(values)
    }

    fn stopped(&self) -> bool {
        self.consumer.stopped()
    }
}

/// The rows of `input`, kept (a hash join's build input, a sort join's).
fn collect(input: &JoinInput, ctx: &mut ExecContext<'_>) -> Result<Vec<Vec<Value>>> {
    let mut rows = Vec::new();
    let mut keep = |values: &[Datum<'_>]| -> Result<()> {
        rows.push(values.iter().map(|v| v.clone().into_owned()).collect());
        Ok(())
    };
    run_into(input, &mut keep, ctx)?;
    Ok(rows)
}

/// A consumer borrowed into a sink.
pub(in crate::exec) struct Forward<'c>(pub(in crate::exec) &'c mut dyn ConsumeRow);

impl ConsumeRow for Forward<'_> {
    fn consume(&mut self, values: &[Datum<'_>]) -> Result<()> {
        self.0.consume(values)
    }

    fn stopped(&self) -> bool {
        self.0.stopped()
    }
}
