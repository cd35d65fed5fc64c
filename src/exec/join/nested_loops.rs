//! NESTED LOOPS: for each row of the outer (left) input, the inner (right) input's rows
//! that join it, found by an index probe keyed from the outer row or by running the
//! inner input's own plan again. The inner side counts its work once per outer row, as
//! Oracle's does.
//!
//! The index probes share one row fetcher for the whole join, so the inner table's block
//! the last probe read stays pinned for the next: a probe whose first row is in that
//! block reads it from the pin (`buffer is pinned count`) instead of taking a consistent
//! get. Outer rows in the order of the inner table's rows (a well clustered inner index,
//! the outer rows in key order) cost about one get an inner table block, outer rows in
//! random order about one a probe, as in Oracle, whose nested loops keep the table
//! buffer pinned across probes the same way. The pin is the snapshot's version of the
//! block (the snapshot is the statement's, the same for every probe), and it is let go
//! when the join ends, however it ends: the fetcher is dropped with the join's outer end.
//! While the join keeps it, the join holds the inner table's visibility lock (shared),
//! so TRUNCATE or DROP, which drop the table's cached blocks, wait for the join rather
//! than meet a pinned block between two probes.
//!
//! Only the table block is kept. Each probe descends the index from its root, as a
//! single index access does, and lets its leaf go at its end: what the access paths'
//! accounting of logical reads measures is the table's blocks revisited (the clustering
//! factor); the index's gets stay those of one index access a probe.

use super::{Forward, Join, JoinKind, JoinMethod, NestedInner, joined, key_of, run_into};
use crate::access::Flow;
use crate::access::by_rowid::RowFetcher;
use crate::error::Result;
use crate::exec::ExecContext;
use crate::exec::downstream::{ConsumeRow, RowSink};
use crate::exec::index_source::IndexAccess;
use crate::exec::pipeline::Stage;
use crate::expr::Expr;
use crate::expr::functions::FunctionContext;
use crate::index::KeyBound;
use crate::types::{DataType, Datum, Value};

impl Join {
    /// NESTED LOOPS: for each row of the left input, the rows of the right input that
    /// join it, found by an index probe on the row's keys or by running the right input
    /// again.
    pub(super) fn nested_loops(
        &self,
        inner: &NestedInner,
        stages: &mut [Stage<'_>],
        ctx: &mut ExecContext<'_>,
    ) -> Result<()> {
        let (probe_access, inner_index) = match inner {
            NestedInner::Index { access, keys, types, filter } => {
                (Some((access.probe_copy(), keys, types, filter)), Some(access))
            }
            NestedInner::Rescan => (None, None),
        };
        // The inner table's blocks stay in place for the whole join (TRUNCATE and DROP
        // wait), since its fetcher keeps one pinned between probes.
        let inner_locks = inner_index.map(|access| ctx.access.locks.table(access.table.object_id));
        let _inner_visible = inner_locks.as_ref().map(|locks| locks.visibility.read_recursive());
        let inner_ctx = ctx.for_inner_runs();
        let fetcher = inner_index.map(|access| access.fetcher(&inner_ctx.access));
        let mut outer_side = NestedOuter {
            join: self,
            probe: probe_access,
            fetcher,
            key: Vec::new(),
            bounds: Default::default(),
            inner_ctx,
            rest: &mut *stages,
            f: ctx.functions.clone(),
            stopped: false,
        };
        let ran = run_into(&self.left, &mut outer_side, ctx);
        // The inner table's pinned block is let go (and its fetches counted) here, ended
        // or stopped or failed, before the table's visibility lock.
        drop(outer_side.fetcher.take());
        ran?;
        ctx.functions.random = outer_side.f.random.clone();
        Ok(())
    }
}

/// A nested loop's index probe: the path (run within each outer row's key), the outer
/// row's key expressions, the key columns' types, and the inner rows' filter.
type IndexProbe<'j> = (IndexAccess, &'j Vec<Expr>, &'j Vec<DataType>, &'j Option<Expr>);

/// The outer input's end of a nested loop: runs the inner side for each outer row.
struct NestedOuter<'j, 'r, 'a, 'c> {
    join: &'j Join,
    /// The index probe of the inner table, its key evaluated from each outer row.
    probe: Option<IndexProbe<'j>>,
    /// The probes' fetcher of inner table rows, kept from one probe to the next with the
    /// block of the last row it fetched pinned (`Some` with `probe`).
    fetcher: Option<RowFetcher<'c>>,
    key: Vec<Value>,
    /// The lower and upper bound's bytes of the last probe (both its key), kept for the
    /// next probe's key.
    bounds: (Vec<u8>, Vec<u8>),
    inner_ctx: ExecContext<'c>,
    rest: &'r mut [Stage<'a>],
    f: FunctionContext,
    stopped: bool,
}

impl<'c> NestedOuter<'_, '_, '_, 'c> {
    /// Where the joined rows' pushes are measured: the session's statistics, when
    /// row-source statistics are gathered.
    fn meter(&self) -> Option<&'c crate::stats::SessionStats> {
        self.inner_ctx.row_source_statistics.then_some(self.inner_ctx.access.stats)
    }
}

impl ConsumeRow for NestedOuter<'_, '_, '_, '_> {
    fn consume(&mut self, outer: &[Datum<'_>]) -> Result<()> {
        if self.stopped {
            return Ok(());
        }
        // A cancel or timeout stops the join before its next outer row's probe.
        self.inner_ctx.access.stats.check_interrupt()?;
        let join = self.join;
        let mut inner_side = NestedInnerRows {
            join,
            meter: self.meter(),
            outer,
            filter: self.probe.as_ref().and_then(|(_, _, _, filter)| filter.as_ref()),
            rest: &mut *self.rest,
            f: &mut self.f,
            passed: 0,
            any: false,
            answered: false,
            stopped: false,
        };
        let emitted_before = join.emitted.get();
        match &self.probe {
            Some((access, keys, types, _)) => {
                let mut key = std::mem::take(&mut self.key);
                let joins_some = key_of(keys, outer, inner_side.f, &mut key)?;
                if joins_some {
                    // The key into the bytes of the last probe's bounds.
                    let (mut lower, mut upper) = std::mem::take(&mut self.bounds);
                    lower.clear();
                    crate::index::encode_key(&key, &types[..key.len()], &mut lower)?;
                    upper.clear();
                    upper.extend_from_slice(&lower);
                    let (lower, upper) = (KeyBound::Included(lower), KeyBound::Included(upper));
                    let mut stages = [Stage::Sink(RowSink {
                        visible: join.right.read,
                        used: join.right.used.as_deref(),
                        only: None,
                        consume: Box::new(Forward(&mut inner_side)),
                    })];
                    let mut figures = join.right.figures.get();
                    let stats = self.inner_ctx.access.stats;
                    let fetcher = self.fetcher.as_mut().expect("an index probe has its fetcher");
                    let (ran, (lower, upper)) = figures
                        .measure(stats, || access.run_within(&mut stages, &mut self.inner_ctx, fetcher, lower, upper));
                    self.bounds = (lower.into_bytes(), upper.into_bytes());
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
        // The inner run's figures leave out what its joined rows did above the join.
        let emitted = join.emitted.get().less(emitted_before);
        join.right.figures.set(join.right.figures.get().less(emitted));
        let (any, stopped) = (inner_side.any, inner_side.stopped);
        self.stopped = stopped;
        let alone = if any { join.kind == JoinKind::Semi } else { join.kind.keeps_left() };
        if alone && !stopped {
            let out = joined(Some(outer), join.left.width, None);
            let meter = self.meter();
            self.stopped = join.emit_metered(&out, self.rest, &mut self.f, meter)? == Flow::Stop;
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
    /// Where the joined rows' pushes are measured (row-source statistics).
    meter: Option<&'r crate::stats::SessionStats>,
    /// Inner rows that met the inner input's filter.
    passed: u64,
    any: bool,
    /// A semi or anti join's outer row found an inner row that joins: its answer is
    /// known, and the inner run stops.
    answered: bool,
    stopped: bool,
}

impl ConsumeRow for NestedInnerRows<'_, '_, '_, '_, '_> {
    fn consume(&mut self, inner: &[Datum<'_>]) -> Result<()> {
        if self.stopped || self.answered {
            return Ok(());
        }
        if let Some(filter) = self.filter
            && filter.eval_condition(inner, self.f)? != Some(true)
        {
            return Ok(());
        }
        self.passed += 1;
        let join = self.join;
        let out = joined(Some(self.outer), join.left.width, Some(inner));
        // The key pairs hold for an index probe's rows; a rescan's are checked here.
        if matches!(&join.method, JoinMethod::NestedLoops(n) if matches!(**n, NestedInner::Rescan)) {
            for (l, r) in join.left_keys.iter().zip(&join.right_keys) {
                let (a, b) = (l.eval(self.outer, self.f)?, r.eval(inner, self.f)?);
                if a.is_null() || b.is_null() || a != b {
                    return Ok(());
                }
            }
        }
        if !join.residual_holds(&out, self.f)? {
            return Ok(());
        }
        self.any = true;
        if !join.kind.gives_pairs() {
            self.answered = true;
            return Ok(());
        }
        self.stopped = join.emit_metered(&out, self.rest, self.f, self.meter)? == Flow::Stop;
        Ok(())
    }

    fn stopped(&self) -> bool {
        self.stopped || self.answered
    }
}
