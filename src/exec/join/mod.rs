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
//! - keys of a pair are compared as values of one type family (the planner pairs only
//!   keys whose columns share one), so hashing and sorting agree with `=`.
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
use super::join_filter::{BloomFilter, JoinFilterFill, JoinFilterStage};
use super::pipeline::{Stage, push};
pub use super::source::{InputFigures, Join, JoinFilterSpec, JoinInput, JoinKind, JoinMethod, NestedInner};
use crate::access::Flow;
use crate::error::Result;
use crate::expr::Expr;
use crate::expr::functions::FunctionContext;
use crate::stats::Stat;
use crate::types::{Datum, Value};
use smallvec::SmallVec;
use std::borrow::Cow;

impl InputFigures {
    /// Adds what `work` (one run of the input, giving rows `rows` counts) did to the
    /// figures.
    fn measure<T>(&mut self, stats: &crate::stats::SessionStats, work: impl FnOnce() -> T) -> T {
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

/// A joined row being pushed.
type JoinedRow<'v> = SmallVec<[Datum<'v>; 16]>;

/// `d`, its string borrowed.
fn borrowed<'x>(d: &'x Datum<'_>) -> Datum<'x> {
    match d {
        Datum::Str(s) => Datum::Str(Cow::Borrowed(s)),
        other => other.reborrow(),
    }
}

/// The joined row of `left` (or NULLs) and `right` (or NULLs), each padded with NULLs to
/// its input's width.
fn joined<'x>(
    left: Option<&'x [Datum<'_>]>,
    left_width: usize,
    right: Option<&'x [Datum<'_>]>,
    right_width: usize,
) -> JoinedRow<'x> {
    let mut row = JoinedRow::with_capacity(left_width + right_width);
    for (side, width) in [(left, left_width), (right, right_width)] {
        let values = side.unwrap_or(&[]);
        row.extend(values.iter().take(width).map(borrowed));
        row.extend((values.len().min(width)..width).map(|_| Datum::Null));
    }
    row
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
    /// Runs the join, pushing its rows into `stages`.
    pub fn run(&self, stages: &mut [Stage<'_>], ctx: &mut ExecContext<'_>) -> Result<()> {
        self.left.figures.set(InputFigures::default());
        self.right.figures.set(InputFigures::default());
        self.probe_figures.set(Default::default());
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
    fn emit(&self, row: &[Datum<'_>], stages: &mut [Stage<'_>], f: &mut FunctionContext) -> Result<Flow> {
        match &self.output {
            None => push(stages, row, f),
            Some(order) => {
                let out: JoinedRow<'_> = order.iter().map(|&c| borrowed(&row[c])).collect();
                push(stages, out.as_slice(), f)
            }
        }
    }

    /// Whether the pair `row` (already joined) meets the residual condition.
    fn residual_holds(&self, row: &[Datum<'_>], f: &mut FunctionContext) -> Result<bool> {
        match &self.residual {
            None => Ok(true),
            Some(r) => Ok(r.eval_condition(row, f)? == Some(true)),
        }
    }
}

/// Runs `input` into `consumer`, through the input's filter, adding the run to the
/// input's figures.
fn run_into(input: &JoinInput, consumer: &mut dyn ConsumeRow, ctx: &mut ExecContext<'_>) -> Result<()> {
    run_filtered(input, None, consumer, ctx)
}

/// [`run_into`], the rows also through `join_filter` after the input's filter (a hash
/// join's probe input), whose counts go to the session's statistics.
fn run_filtered(
    input: &JoinInput,
    join_filter: Option<JoinFilterStage<'_>>,
    consumer: &mut dyn ConsumeRow,
    ctx: &mut ExecContext<'_>,
) -> Result<()> {
    let mut stages: Vec<Stage<'_>> = Vec::with_capacity(3);
    if let Some(filter) = &input.filter {
        stages.push(Stage::Filter(FilterStage::new(filter.clone())));
    }
    stages.extend(join_filter.map(Stage::JoinFilter));
    let mut counted = Counted { consumer, rows: 0 };
    stages.push(Stage::Sink(RowSink { visible: input.read, consume: Box::new(Forward(&mut counted)) }));
    let mut figures = input.figures.get();
    let stats = ctx.access.stats;
    let ran = figures.measure(stats, || super::run::run_pipeline_in_place(&input.source, &mut stages, ctx));
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

/// Runs a hash join's build input into `consumer`, its rows' `keys` also into a join
/// filter when the join has one (`filter`), given back once every row was read.
fn run_build(
    filter: Option<&JoinFilterSpec>,
    input: &JoinInput,
    keys: &[Expr],
    consumer: &mut dyn ConsumeRow,
    ctx: &mut ExecContext<'_>,
) -> Result<Option<BloomFilter>> {
    if filter.is_none() {
        return run_into(input, consumer, ctx).map(|_| None);
    }
    let mut fill = JoinFilterFill::new(keys, consumer, ctx.functions.clone());
    run_into(input, &mut fill, ctx)?;
    Ok(Some(fill.finish()))
}

/// A consumer that counts the rows it passes on.
struct Counted<'c> {
    consumer: &'c mut dyn ConsumeRow,
    rows: u64,
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
struct Forward<'c>(&'c mut dyn ConsumeRow);

impl ConsumeRow for Forward<'_> {
    fn consume(&mut self, values: &[Datum<'_>]) -> Result<()> {
        self.0.consume(values)
    }

    fn stopped(&self) -> bool {
        self.0.stopped()
    }
}
