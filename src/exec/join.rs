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
//!  HASH JOIN     build input ─► sink: rows kept in a hash table on the join keys
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
//! `Source` enum they recurse through; this module runs them.

use super::ExecContext;
use super::FilterStage;
use super::downstream::{ConsumeRow, RowSink};
use super::index_source::IndexAccess;
use super::pipeline::{Stage, push};
pub use super::source::{InputFigures, Join, JoinInput, JoinKind, JoinMethod, NestedInner};
use crate::access::Flow;
use crate::error::Result;
use crate::expr::Expr;
use crate::expr::functions::FunctionContext;
use crate::index::KeyBound;
use crate::stats::Stat;
use crate::types::{DataType, Datum, Value};
use smallvec::SmallVec;
use std::borrow::Cow;
use std::cmp::Ordering;
use std::collections::HashMap;

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

/// A hash join's table: each key of the build input and the build rows that have it
/// (by their place in the kept rows). Hashed with foldhash: the keys are the query's own
/// values, and SipHash's defence against chosen keys would cost every row.
type KeyTable = HashMap<Vec<Value>, Vec<u32>, foldhash::fast::RandomState>;

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
        match &self.method {
            JoinMethod::Hash { build_right } => self.hash(*build_right, stages, ctx),
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

    /// HASH JOIN: the build input's rows into a hash table, then the probe input's rows
    /// looked up in it as they come.
    fn hash(&self, build_right: bool, stages: &mut [Stage<'_>], ctx: &mut ExecContext<'_>) -> Result<()> {
        let (build, probe) = if build_right { (&self.right, &self.left) } else { (&self.left, &self.right) };
        let (build_keys, probe_keys) =
            if build_right { (&self.right_keys, &self.left_keys) } else { (&self.left_keys, &self.right_keys) };
        let (keep_build, keep_probe) = if build_right {
            (self.kind.keeps_right(), self.kind.keeps_left())
        } else {
            (self.kind.keeps_left(), self.kind.keeps_right())
        };
        let rows = collect(build, ctx)?;
        let mut table: KeyTable = HashMap::default();
        let mut key = Vec::new();
        for (i, row) in rows.iter().enumerate() {
            if key_of(build_keys, row, &mut ctx.functions, &mut key)? {
                table.entry(std::mem::take(&mut key)).or_default().push(i as u32);
            }
        }
        let mut matched = vec![false; if keep_build { rows.len() } else { 0 }];
        let stopped = {
            let mut probe_side = HashProbe {
                join: self,
                build_right,
                rows: &rows,
                table: &table,
                probe_keys,
                keep_probe,
                matched: &mut matched,
                key: Vec::new(),
                rest: &mut *stages,
                f: ctx.functions.clone(),
                stopped: false,
            };
            run_into(probe, &mut probe_side, ctx)?;
            ctx.functions.random = probe_side.f.random.clone();
            probe_side.stopped
        };
        if stopped || !keep_build {
            return Ok(());
        }
        for (row, _) in rows.iter().zip(&matched).filter(|(_, m)| !**m) {
            let out = if build_right {
                joined(None, self.left.width, Some(row), self.right.width)
            } else {
                joined(Some(row), self.left.width, None, self.right.width)
            };
            if self.emit(&out, stages, &mut ctx.functions)? == Flow::Stop {
                break;
            }
        }
        Ok(())
    }

    /// NESTED LOOPS: for each row of the left input, the rows of the right input that
    /// join it, found by an index probe on the row's keys or by running the right input
    /// again.
    fn nested_loops(&self, inner: &NestedInner, stages: &mut [Stage<'_>], ctx: &mut ExecContext<'_>) -> Result<()> {
        let probe_access = match inner {
            NestedInner::Index { access, keys, types, filter } => Some((access.probe_copy(), keys, types, filter)),
            NestedInner::Rescan => None,
        };
        let inner_ctx = ExecContext {
            access: ctx.access,
            catalog: ctx.catalog,
            inmemory: ctx.inmemory,
            functions: ctx.functions.clone(),
            helpers: 0,
        };
        let mut outer_side = NestedOuter {
            join: self,
            probe: probe_access,
            key: Vec::new(),
            inner_ctx,
            rest: &mut *stages,
            f: ctx.functions.clone(),
            stopped: false,
        };
        run_into(&self.left, &mut outer_side, ctx)?;
        ctx.functions.random = outer_side.f.random.clone();
        Ok(())
    }

    /// MERGE JOIN: both inputs kept and sorted on their keys (SORT JOIN), then merged in
    /// key order.
    fn merge(&self, stages: &mut [Stage<'_>], ctx: &mut ExecContext<'_>) -> Result<()> {
        let sorted =
            |input: &JoinInput, keys: &[Expr], ctx: &mut ExecContext<'_>| -> Result<Vec<(Vec<Value>, Vec<Value>)>> {
                let rows = collect(input, ctx)?;
                let mut keyed = Vec::with_capacity(rows.len());
                for row in rows {
                    let mut key = Vec::new();
                    // A row with a NULL key joins nothing: it sorts with an empty key, first.
                    if !key_of(keys, &row, &mut ctx.functions, &mut key)? {
                        key.clear();
                    }
                    keyed.push((key, row));
                }
                keyed.sort_by(|a, b| compare_keys(&a.0, &b.0));
                ctx.access.stats.add(Stat::SortsMemory, 1);
                ctx.access.stats.add(Stat::SortsRows, keyed.len() as u64);
                Ok(keyed)
            };
        let left = sorted(&self.left, &self.left_keys, ctx)?;
        let right = sorted(&self.right, &self.right_keys, ctx)?;
        let f = &mut ctx.functions;
        let mut right_matched = vec![false; right.len()];
        let (mut i, mut j) = (0, 0);
        let emit = |out: &[Datum<'_>], stages: &mut [Stage<'_>], f: &mut FunctionContext| self.emit(out, stages, f);
        while i < left.len() {
            let key = &left[i].0;
            let group_end =
                left[i..].iter().position(|r| compare_keys(&r.0, key) != Ordering::Equal).map_or(left.len(), |n| i + n);
            if key.is_empty() {
                for (_, row) in &left[i..group_end] {
                    if self.kind.keeps_left()
                        && emit(&joined(Some(row), self.left.width, None, self.right.width), stages, f)? == Flow::Stop
                    {
                        return Ok(());
                    }
                }
                i = group_end;
                continue;
            }
            while j < right.len() && (right[j].0.is_empty() || compare_keys(&right[j].0, key) == Ordering::Less) {
                j += 1;
            }
            let right_end = right[j..]
                .iter()
                .position(|r| compare_keys(&r.0, key) != Ordering::Equal)
                .map_or(right.len(), |n| j + n);
            for (_, l) in &left[i..group_end] {
                let mut any = false;
                for (k, (_, r)) in right[j..right_end].iter().enumerate() {
                    let out = joined(Some(l), self.left.width, Some(r), self.right.width);
                    if !self.residual_holds(&out, f)? {
                        continue;
                    }
                    any = true;
                    right_matched[j + k] = true;
                    if emit(&out, stages, f)? == Flow::Stop {
                        return Ok(());
                    }
                }
                if !any
                    && self.kind.keeps_left()
                    && emit(&joined(Some(l), self.left.width, None, self.right.width), stages, f)? == Flow::Stop
                {
                    return Ok(());
                }
            }
            i = group_end;
        }
        if self.kind.keeps_right() {
            for ((_, r), _) in right.iter().zip(&right_matched).filter(|(_, m)| !**m) {
                if emit(&joined(None, self.left.width, Some(r), self.right.width), stages, f)? == Flow::Stop {
                    break;
                }
            }
        }
        Ok(())
    }
}

/// Orders two keys of one type family (an empty key, a row with a NULL key, first).
fn compare_keys(a: &[Value], b: &[Value]) -> Ordering {
    match (a.is_empty(), b.is_empty()) {
        (true, true) => Ordering::Equal,
        (true, false) => Ordering::Less,
        (false, true) => Ordering::Greater,
        _ => a.iter().zip(b).map(|(x, y)| x.sort_cmp(y)).find(|o| *o != Ordering::Equal).unwrap_or(Ordering::Equal),
    }
}

/// Runs `input` into `consumer`, through the input's filter, adding the run to the
/// input's figures.
fn run_into(input: &JoinInput, consumer: &mut dyn ConsumeRow, ctx: &mut ExecContext<'_>) -> Result<()> {
    let mut stages: Vec<Stage<'_>> = Vec::with_capacity(2);
    if let Some(filter) = &input.filter {
        stages.push(Stage::Filter(FilterStage::new(filter.clone())));
    }
    let mut counted = Counted { consumer, rows: 0 };
    stages.push(Stage::Sink(RowSink { visible: input.read, consume: Box::new(Forward(&mut counted)) }));
    let mut figures = input.figures.get();
    let stats = ctx.access.stats;
    let ran = figures.measure(stats, || super::run::run_pipeline_in_place(&input.source, &mut stages, ctx));
    drop(stages);
    figures.rows += counted.rows;
    input.figures.set(figures);
    ran.map(|_| ())
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

/// The probe input's end of a hash join.
struct HashProbe<'j, 'r, 'a> {
    join: &'j Join,
    build_right: bool,
    rows: &'j [Vec<Value>],
    table: &'j KeyTable,
    probe_keys: &'j [Expr],
    keep_probe: bool,
    /// Which build rows joined a probe row (only when the build input is preserved).
    matched: &'j mut Vec<bool>,
    key: Vec<Value>,
    rest: &'r mut [Stage<'a>],
    f: FunctionContext,
    stopped: bool,
}

impl HashProbe<'_, '_, '_> {
    fn pair<'x>(&self, probe: &'x [Datum<'_>], build: Option<&'x [Datum<'_>]>) -> JoinedRow<'x> {
        let (lw, rw) = (self.join.left.width, self.join.right.width);
        if self.build_right { joined(Some(probe), lw, build, rw) } else { joined(build, lw, Some(probe), rw) }
    }
}

impl ConsumeRow for HashProbe<'_, '_, '_> {
    fn consume(&mut self, values: &[Datum<'_>]) -> Result<()> {
        if self.stopped {
            return Ok(());
        }
        let mut any = false;
        let mut key = std::mem::take(&mut self.key);
        if key_of(self.probe_keys, values, &mut self.f, &mut key)?
            && let Some(hits) = self.table.get(key.as_slice())
        {
            for &b in hits {
                let out = self.pair(values, Some(self.rows[b as usize].as_slice()));
                if !self.join.residual_holds(&out, &mut self.f)? {
                    continue;
                }
                any = true;
                if let Some(m) = self.matched.get_mut(b as usize) {
                    *m = true;
                }
                if self.join.emit(&out, self.rest, &mut self.f)? == Flow::Stop {
                    self.stopped = true;
                    break;
                }
            }
        }
        self.key = key;
        if !any && self.keep_probe && !self.stopped {
            let out = self.pair(values, None);
            self.stopped = self.join.emit(&out, self.rest, &mut self.f)? == Flow::Stop;
        }
        Ok(())
    }

    fn stopped(&self) -> bool {
        self.stopped
    }
}

/// A nested loop's index probe: the path (its key range set for each outer row), the
/// outer row's key expressions, the key columns' types, and the inner rows' filter.
type IndexProbe<'j> = (IndexAccess, &'j Vec<Expr>, &'j Vec<DataType>, &'j Option<Expr>);

/// The outer input's end of a nested loop: runs the inner side for each outer row.
struct NestedOuter<'j, 'r, 'a, 'c> {
    join: &'j Join,
    /// The index probe of the inner table, its key evaluated from each outer row.
    probe: Option<IndexProbe<'j>>,
    key: Vec<Value>,
    inner_ctx: ExecContext<'c>,
    rest: &'r mut [Stage<'a>],
    f: FunctionContext,
    stopped: bool,
}

impl ConsumeRow for NestedOuter<'_, '_, '_, '_> {
    fn consume(&mut self, outer: &[Datum<'_>]) -> Result<()> {
        if self.stopped {
            return Ok(());
        }
        let join = self.join;
        let mut inner_side = NestedInnerRows {
            join,
            outer,
            filter: self.probe.as_ref().and_then(|(_, _, _, filter)| filter.as_ref()),
            rest: &mut *self.rest,
            f: &mut self.f,
            passed: 0,
            any: false,
            stopped: false,
        };
        match &mut self.probe {
            Some((access, keys, types, _)) => {
                let mut key = std::mem::take(&mut self.key);
                let joins_some = key_of(keys, outer, inner_side.f, &mut key)?;
                if joins_some {
                    let mut encoded = Vec::new();
                    crate::index::encode_key(&key, &types[..key.len()], &mut encoded)?;
                    access.lower = KeyBound::Included(encoded.clone());
                    access.upper = KeyBound::Included(encoded);
                    let mut stages = vec![Stage::Sink(RowSink {
                        visible: join.right.read,
                        consume: Box::new(Forward(&mut inner_side)),
                    })];
                    let mut figures = join.right.figures.get();
                    let stats = self.inner_ctx.access.stats;
                    let ran = figures.measure(stats, || access.run(&mut stages, &mut self.inner_ctx));
                    drop(stages);
                    figures.rows += inner_side.passed;
                    join.right.figures.set(figures);
                    let (mut line, run) = (join.probe_figures.get(), access.figures.get());
                    line.entries += run.entries;
                    line.consistent_gets += run.consistent_gets;
                    line.physical_reads += run.physical_reads;
                    line.time_ns += run.time_ns;
                    join.probe_figures.set(line);
                    ran?;
                }
                self.key = key;
            }
            None => run_into(&join.right, &mut inner_side, &mut self.inner_ctx)?,
        }
        let (any, stopped) = (inner_side.any, inner_side.stopped);
        self.stopped = stopped;
        if !any && !stopped && join.kind.keeps_left() {
            let out = joined(Some(outer), join.left.width, None, join.right.width);
            self.stopped = join.emit(&out, self.rest, &mut self.f)? == Flow::Stop;
        }
        Ok(())
    }

    fn stopped(&self) -> bool {
        self.stopped
    }
}

/// The inner side's rows for one outer row of a nested loop.
struct NestedInnerRows<'j, 'o, 'v, 'r, 'a> {
    join: &'j Join,
    outer: &'o [Datum<'v>],
    /// The inner input's own filter, when its source does not run it (an index probe).
    filter: Option<&'j Expr>,
    rest: &'r mut [Stage<'a>],
    f: &'r mut FunctionContext,
    /// Inner rows that met the inner input's filter.
    passed: u64,
    any: bool,
    stopped: bool,
}

impl ConsumeRow for NestedInnerRows<'_, '_, '_, '_, '_> {
    fn consume(&mut self, inner: &[Datum<'_>]) -> Result<()> {
        if self.stopped {
            return Ok(());
        }
        if let Some(filter) = self.filter
            && filter.eval_condition(inner, self.f)? != Some(true)
        {
            return Ok(());
        }
        self.passed += 1;
        let join = self.join;
        let out = joined(Some(self.outer), join.left.width, Some(inner), join.right.width);
        // The key pairs hold for an index probe's rows; a rescan's are checked here.
        if matches!(&join.method, JoinMethod::NestedLoops(n) if matches!(**n, NestedInner::Rescan)) {
            let lw = join.left.width;
            for (l, r) in join.left_keys.iter().zip(&join.right_keys) {
                let (a, b) = (l.eval(out.as_slice(), self.f)?, r.eval(&out[lw..], self.f)?);
                if a.is_null() || b.is_null() || a != b {
                    return Ok(());
                }
            }
        }
        if !join.residual_holds(&out, self.f)? {
            return Ok(());
        }
        self.any = true;
        self.stopped = join.emit(&out, self.rest, self.f)? == Flow::Stop;
        Ok(())
    }

    fn stopped(&self) -> bool {
        self.stopped
    }
}
