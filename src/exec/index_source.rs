//! Index access paths as a pipeline source: INDEX UNIQUE / RANGE / FULL SCAN (leaf by
//! leaf in key order, ascending or descending) and INDEX FAST FULL SCAN (leaves in segment
//! order with multiblock reads), each either followed by TABLE ACCESS BY INDEX ROWID or
//! answering from the keys alone when the index holds every column the query reads.
//!
//! ```text
//!  IndexScan ──leaf's rowids──► RowFetcher: runs of rows in one pinned block ──► stages
//!            └─(index only)──► key decoded into the row's key columns ──────────► stages
//! ```
//!
//! - A run holds the table's visibility lock, so DDL that would free the index's or the
//!   table's blocks waits for it; an index dropped or rebuilt since planning is an error.
//! - A run's table rows come through a [`RowFetcher`]: the run's own, released at its end
//!   ([`IndexAccess::run`]), or one its caller keeps from run to run
//!   ([`IndexAccess::run_with`]: a nested loop's probes), whose last block then stays
//!   pinned between runs; such a caller holds the table's visibility lock as long.
//! - A count the row kernel can do ([`CountKernel`]) is done on each row in its block,
//!   walked by the full scan's fast walk of the fetcher's width where it can be (one
//!   copy of the run loop a width, as the full scan has), and, for the kernel's common
//!   shapes (at most one term, one count), by the full scan's own step for that shape
//!   with the totals carried by value ([`CountKernel::fold_rows`]); an index-only
//!   COUNT(*) counts the qualifying entries of each leaf unread.
//! - Memory latency is hidden by prefetching: the block of the row a few entries ahead
//!   (for rows in other blocks), the block of the next long run over the rows of this one
//!   (a well clustered index), and the next leaf of a range or full scan a line per entry.
//!   A run of one entry (a badly clustered index's) is walked as one row
//!   ([`RowFetcher::walk_one`]) and loads no block over itself.
//! - The source measures the index row source itself (entries, consistent gets, physical
//!   reads, time), for the plan line under TABLE ACCESS BY INDEX ROWID; only when
//!   row-source statistics are gathered (a probe stage), else it reads no clock.

use super::ExecContext;
use super::kernel::{CountKernel, FoldRows, FoldStep, FoldTotals, KernelVerdict};
use super::pipeline::{Stage, push};
use crate::access::AccessContext;
use crate::access::Flow;
use crate::access::WalkedRow;
use crate::access::by_rowid::{RowFetcher, RunEnd, RunRows};
use crate::access::fast_walk::FastRow;
use crate::access::full_scan::NextBlockPrefetch;
use crate::buffer::{BufferCache, PrefetchTarget};
use crate::catalog::{IndexDef, TableDef};
use crate::error::Result;
use crate::expr::functions::FunctionContext;
use crate::index::IndexScanKind;
use crate::index::{self, IndexScan, KeyBound, LeafEntries, RowId};
use crate::stats::SessionStats;
use crate::stats::Stat;
use crate::types::{DataType, Datum, Value};
use std::cell::Cell;
use std::sync::Arc;
use std::time::Instant;

/// How many entries ahead the row of an entry (or, in another block, that block) is
/// prefetched.
const ROWS_AHEAD: usize = 4;

/// Cache lines of a block prefetched ahead of its get: header, ITL and the start of the
/// row directory.
const BLOCK_LINES_AHEAD: usize = 3;

/// Cache lines prefetched around the guessed place of a row ahead ([`Emitter::row_guess`]):
/// from the line a line before it, so that a row of 160 bytes lies in them wherever in
/// its line it starts.
const ROW_LINES_AHEAD: usize = 4;

/// Rowids the emitter's buffer holds before it grows: the entries of a well-filled leaf
/// of an 8 KiB block with short keys.
const LEAF_ROWIDS: usize = 256;

/// A run of at least this many consecutive entries in one table block (a well clustered
/// index) has the block after it loaded while it is read.
const LONG_RUN: usize = 8;

/// The scan of a unique or range path (or a full one, unbounded): a unique lookup when
/// the path is unique and its key fixed, else the entries between the bounds.
pub fn open_scan<'c>(
    index: &IndexDef,
    kind: IndexScanKind,
    lower: KeyBound,
    upper: KeyBound,
    descending: bool,
) -> IndexScan<'c> {
    match (kind, lower) {
        (IndexScanKind::Unique, KeyBound::Included(key)) => IndexScan::unique(index, key),
        (_, lower) => IndexScan::range(index, lower, upper, descending),
    }
}

/// What the index row source did in one run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct IndexLineFigures {
    pub entries: u64,
    pub consistent_gets: u64,
    pub physical_reads: u64,
    pub time_ns: u64,
}

impl IndexLineFigures {
    /// These figures and `other`'s, added.
    pub fn plus(self, other: IndexLineFigures) -> IndexLineFigures {
        IndexLineFigures {
            entries: self.entries + other.entries,
            consistent_gets: self.consistent_gets + other.consistent_gets,
            physical_reads: self.physical_reads + other.physical_reads,
            time_ns: self.time_ns + other.time_ns,
        }
    }
}

/// An index access path, ready to run.
pub struct IndexAccess {
    pub table: Arc<TableDef>,
    pub index: Arc<IndexDef>,
    pub kind: IndexScanKind,
    pub lower: KeyBound,
    pub upper: KeyBound,
    pub descending: bool,
    /// False when the keys answer the query (no table access).
    pub table_access: bool,
    /// Table columns the plan reads (the fetcher locates up to the last of them).
    pub columns_read: Vec<bool>,
    /// What the index scan did in the last run.
    pub figures: Cell<IndexLineFigures>,
    /// What it did in all the runs of the execution (a scan inside a block run many
    /// times), until [`IndexAccess::clear_totals`].
    pub totals: Cell<IndexLineFigures>,
    /// The buffer a run gathers a leaf's rowids in, kept from run to run (a kept plan's
    /// executions allocate it once).
    pub rowid_buffer: Cell<Vec<RowId>>,
    /// Whether a run measures the index line's gets, reads and time even with no probe
    /// stage in its pipeline (a nested loop's index probes, whose join adds them up).
    pub measured: bool,
}

/// The figures of the index line, gathered only when row-source statistics are (a probe
/// stage in the pipeline): otherwise the scan reads no clock.
struct LineMeter<'s> {
    stats: Option<&'s SessionStats>,
    figures: IndexLineFigures,
}

impl LineMeter<'_> {
    /// Adds to the figures the gets, reads and time `work` spends.
    fn measure<T>(&mut self, work: impl FnOnce() -> T) -> T {
        let Some(stats) = self.stats else { return work() };
        let (gets, reads) = (stats.get(Stat::ConsistentGets), stats.get(Stat::PhysicalReads));
        let started = Instant::now();
        let out = work();
        self.figures.time_ns += started.elapsed().as_nanos() as u64;
        self.figures.consistent_gets += stats.get(Stat::ConsistentGets) - gets;
        self.figures.physical_reads += stats.get(Stat::PhysicalReads) - reads;
        out
    }
}

impl IndexAccess {
    /// Starts a statement's execution: the totals of the last one are dropped.
    pub fn clear_totals(&self) {
        self.totals.set(IndexLineFigures::default());
    }

    /// A copy of this path for a nested loop's probes (each run within its outer row's
    /// key, [`IndexAccess::run_within`]), measured on its own.
    pub fn probe_copy(&self) -> IndexAccess {
        IndexAccess {
            table: self.table.clone(),
            index: self.index.clone(),
            kind: self.kind,
            lower: self.lower.clone(),
            upper: self.upper.clone(),
            descending: self.descending,
            table_access: self.table_access,
            columns_read: self.columns_read.clone(),
            figures: Cell::new(self.figures.get()),
            totals: Cell::new(self.totals.get()),
            rowid_buffer: Default::default(),
            measured: true,
        }
    }

    /// The rowid buffer of the last run, empty, with room for the entries of a typical
    /// leaf (so a run does not grow it step by step).
    fn take_rowid_buffer(&self) -> Vec<RowId> {
        let mut rowids = self.rowid_buffer.take();
        rowids.clear();
        rowids.reserve(LEAF_ROWIDS);
        rowids
    }

    /// The fetcher of this path's table rows: the first columns up to the last the plan
    /// reads located.
    pub fn fetcher<'f>(&'f self, ctx: &AccessContext<'f>) -> RowFetcher<'f> {
        let width = self.columns_read.iter().rposition(|&r| r).map_or(0, |last| last + 1);
        RowFetcher::new(ctx, &self.table, width)
    }

    /// Runs the path, its table rows fetched by a fetcher of its own, released (its
    /// pinned block let go) when the run ends.
    pub fn run(&self, stages: &mut [Stage<'_>], ctx: &mut ExecContext<'_>) -> Result<()> {
        let mut fetcher = self.fetcher(&ctx.access);
        self.run_with(stages, ctx, &mut fetcher)
    }

    /// Runs the path, its table rows fetched by `fetcher`, which the caller keeps: the
    /// block it holds pinned at the end stays pinned for the caller's next run (a nested
    /// loop's next probe), and is let go when the caller releases or drops it; the caller
    /// holds the table's visibility lock while it keeps it. `fetcher` is one of this
    /// path's ([`IndexAccess::fetcher`]). The rows fetched are added to the session's
    /// statistics at the end of the run.
    pub fn run_with<'x: 'f, 'f>(
        &self,
        stages: &mut [Stage<'_>],
        ctx: &mut ExecContext<'x>,
        fetcher: &mut RowFetcher<'f>,
    ) -> Result<()> {
        self.run_within(stages, ctx, fetcher, self.lower.clone(), self.upper.clone()).0
    }

    /// [`IndexAccess::run_with`] within `lower` and `upper` instead of the path's bounds,
    /// given back with the result: a nested loop, whose bounds are each outer row's key,
    /// encodes the next key into their bytes (no allocation a probe).
    pub fn run_within<'x: 'f, 'f>(
        &self,
        stages: &mut [Stage<'_>],
        ctx: &mut ExecContext<'x>,
        fetcher: &mut RowFetcher<'f>,
        lower: KeyBound,
        upper: KeyBound,
    ) -> (Result<()>, (KeyBound, KeyBound)) {
        // DDL that would free the index's or the table's blocks (DROP INDEX, TRUNCATE, DROP
        // TABLE) waits for the scan; one that finished since the plan was made is an error.
        let locks = ctx.access.locks.table(self.table.object_id);
        let _visible = locks.visibility.read_recursive();
        let current = ctx.catalog.index(&self.index.name);
        if current.as_ref().is_none_or(|ix| ix.object_id != self.index.object_id) {
            let error = crate::error::Error::Transaction {
                message: format!(
                    "index {} was dropped or rebuilt (TRUNCATE) after the statement was planned; run it again",
                    self.index.name
                ),
            };
            return (Err(error), (lower, upper));
        }
        let ExecContext { access, functions, .. } = ctx;
        let mut emitter = Emitter::new(self, stages, access, fetcher);
        let probed = self.measured || stages.iter().any(|s| matches!(s, Stage::Probe(_)));
        let mut meter = LineMeter { stats: probed.then_some(access.stats), figures: IndexLineFigures::default() };
        let (result, bounds) = if self.kind == IndexScanKind::FastFull {
            // Every block the scan reads is the index's: its figures are the whole run's.
            debug_assert!(!self.table_access, "a fast full scan answers from the keys alone");
            let mut entries = 0;
            let result = meter.measure(|| {
                index::fast_full_scan(access, &self.index, |leaf| {
                    // A cancel or timeout stops the scan at its next leaf.
                    access.stats.check_interrupt()?;
                    let (flow, used) = emitter.emit(leaf, stages, functions)?;
                    entries += used as u64;
                    Ok(flow)
                })
            });
            meter.figures.entries = entries;
            (result, (lower, upper))
        } else {
            let mut scan = open_scan(&self.index, self.kind, lower, upper, self.descending);
            let result = loop {
                if let Err(cancelled) = access.stats.check_interrupt() {
                    break Err(cancelled);
                }
                let rowids = self.table_access.then_some(&mut emitter.rowids);
                let leaf = meter.measure(|| scan.next_leaf_with(access, rowids));
                let leaf = match leaf {
                    Ok(Some(leaf)) => leaf,
                    Ok(None) => break Ok(()),
                    Err(e) => break Err(e),
                };
                match emitter.emit(&leaf, stages, functions) {
                    Ok((flow, used)) => {
                        meter.figures.entries += used as u64;
                        if flow == Flow::Stop {
                            break Ok(());
                        }
                    }
                    Err(e) => break Err(e),
                }
            };
            (result, scan.into_bounds())
        };
        self.rowid_buffer.set(emitter.finish(stages));
        self.figures.set(meter.figures);
        self.totals.set(self.totals.get().plus(meter.figures));
        (result, bounds)
    }
}

/// A count kernel taking the rows of a run ([`RowFetcher::walk_run`]) in its general
/// form, for the shapes [`CountKernel::fold_rows`] has no loop for: it keeps its own
/// totals.
struct KernelRows<'k>(&'k mut CountKernel);

impl<const W: usize> RunRows<W> for KernelRows<'_> {
    type Totals = ();

    #[inline(always)]
    fn fast(&mut self, (): (), row: &FastRow<'_, W>) -> Option<()> {
        (self.0.apply_fast(row) == KernelVerdict::Done).then_some(())
    }

    #[inline(always)]
    fn walked(&mut self, (): (), row: WalkedRow<'_>) -> Option<()> {
        (self.0.apply(row) == KernelVerdict::Done).then_some(())
    }
}

/// A count kernel's step for its shape ([`CountKernel::fold_rows`]) taking the rows of
/// a run, the totals by value; a row the fast walk cannot take is decided by the kernel
/// the general way, into its own totals.
struct FoldedRows<'k, S> {
    kernel: &'k mut CountKernel,
    step: S,
}

impl<const W: usize, S: FoldStep<W>> RunRows<W> for FoldedRows<'_, S> {
    type Totals = FoldTotals;

    #[inline(always)]
    fn fast(&mut self, totals: FoldTotals, row: &FastRow<'_, W>) -> Option<FoldTotals> {
        (self.step)(totals, row)
    }

    #[inline(always)]
    fn walked(&mut self, totals: FoldTotals, row: WalkedRow<'_>) -> Option<FoldTotals> {
        (self.kernel.apply(row) == KernelVerdict::Done).then_some(totals)
    }
}

/// The runs of one leaf's rows, for [`CountKernel::fold_rows`] to fold with the step of
/// its shape ([`Emitter::emit_runs`]).
struct LeafRuns<'e, 'r, 'f, 's, 'p> {
    emitter: &'e mut Emitter<'r, 'f>,
    stages: &'e mut [Stage<'s>],
    functions: &'p mut FunctionContext,
}

impl<const W: usize> FoldRows<W> for LeafRuns<'_, '_, '_, '_, '_> {
    type Out = Result<(Flow, usize)>;

    #[inline(always)]
    fn fold(self, kernel: &mut CountKernel, step: impl FoldStep<W>) -> (Self::Out, FoldTotals) {
        let mut rows = FoldedRows { kernel, step };
        match self.emitter.emit_runs::<W, _>(self.stages, self.functions, &mut rows, (0, 0)) {
            Ok((flow, totals)) => (Ok(flow), totals),
            Err(e) => (Err(e), (0, 0)),
        }
    }
}

/// What one run keeps from leaf to leaf while it turns entries into rows.
struct Emitter<'r, 'f> {
    access: &'r IndexAccess,
    ctx: &'r AccessContext<'f>,
    /// The buffer cache and the block size, taken from `ctx` once for the run: the row
    /// loop's prefetches read them for every row.
    cache: &'r BufferCache,
    block_size: usize,
    /// The table's rows by rowid, and the block of the last one pinned: the run's own,
    /// or one its caller keeps from run to run.
    fetcher: &'r mut RowFetcher<'f>,
    /// The whole per-row work of a filtered count, done on the row in its block; or, with
    /// no table access, a COUNT(*) of the entries.
    kernel: Option<CountKernel>,
    /// The width of the fast walk the kernel's rows take (the fetcher's, where the kernel
    /// reads only those columns and they are at most 16), or 0: every row the general way.
    fast_width: usize,
    /// Index-only: the key columns' types, whether any column is read at all (COUNT(*)
    /// reads none: keys need no decoding), and the row the keys are decoded into.
    types: Vec<DataType>,
    decode_keys: bool,
    row: Vec<Value>,
    /// The rowids of the leaf being emitted (a buffer kept across leaves).
    rowids: Vec<RowId>,
    /// The table's average row length, for guessing where a row lies in its block.
    row_len: Option<usize>,
    /// The block of the next long run of entries in one block, loaded over this run: set
    /// where a run of more than one entry starts, and left alone by a run of one, which
    /// loads none.
    upcoming: Option<NextBlockPrefetch<'r>>,
    /// The leaf the scan reads next and how far its lines are loaded: a line per entry
    /// of this leaf, so it is in the CPU cache when the scan gets it.
    next_leaf: Option<(PrefetchTarget<'r>, usize)>,
}

impl<'r, 'f> Emitter<'r, 'f> {
    fn new(
        access: &'r IndexAccess,
        stages: &[Stage<'_>],
        ctx: &'r AccessContext<'f>,
        fetcher: &'r mut RowFetcher<'f>,
    ) -> Emitter<'r, 'f> {
        let kernel = if access.table_access {
            CountKernel::for_stages(stages, fetcher.kinds())
        } else {
            // Index only: the keys' entries are counted where no column is read.
            CountKernel::for_stages(stages, &[]).filter(CountKernel::reads_no_columns)
        };
        let width = fetcher.width();
        let fast_width = match &kernel {
            Some(k) if access.table_access && width <= 16 && k.reads_below(width) => width,
            _ => 0,
        };
        Emitter {
            access,
            ctx,
            cache: ctx.cache,
            block_size: ctx.space.block_size,
            fetcher,
            kernel,
            // Only an index-only path decodes keys into rows.
            types: if access.table_access { Vec::new() } else { access.index.key_types(&access.table) },
            decode_keys: access.columns_read.iter().any(|&r| r),
            row: if access.table_access { Vec::new() } else { vec![Datum::Null; access.table.columns.len()] },
            rowids: access.take_rowid_buffer(),
            row_len: access.table.stats.as_ref().map(|s| s.avg_row_len as usize),
            next_leaf: None,
            upcoming: None,
            fast_width,
        }
    }

    /// Pushes the rows of one leaf's entries; returns how many entries were used (fewer
    /// than the leaf's when a stage stopped the scan). With table access, the scan has
    /// put the leaf's rowids in `self.rowids` as it found the entries.
    fn emit(
        &mut self,
        leaf: &LeafEntries<'_>,
        stages: &mut [Stage<'_>],
        f: &mut FunctionContext,
    ) -> Result<(Flow, usize)> {
        let table_access = self.access.table_access;
        debug_assert!(!table_access || self.rowids.len() == leaf.len(), "the scan gathered the leaf's rowids");
        // A range or full scan goes on to the sibling; a unique scan reads one leaf, and a
        // fast full scan reads leaves in segment order, multiblock.
        let goes_on = matches!(self.access.kind, IndexScanKind::Range | IndexScanKind::Full);
        self.next_leaf = goes_on
            .then(|| leaf.sibling(self.access.descending))
            .flatten()
            .and_then(|rdba| self.cache.prefetch_lines(rdba))
            .map(|target| (target, 0));
        if !table_access && let Some(kernel) = &mut self.kernel {
            kernel.count_rows(leaf.len() as u64);
            self.prefetch_next_leaf(leaf.len());
            return Ok((Flow::Continue, leaf.len()));
        }
        if table_access && self.kernel.is_some() {
            return self.emit_runs_by_width(stages, f);
        }
        for i in 0..leaf.len() {
            self.prefetch_next_leaf(1);
            let flow = if table_access {
                self.prefetch_ahead(i);
                let rowid = self.rowids[i];
                self.fetcher.fetch(self.ctx, rowid, |r| push(stages, r, f))?.unwrap_or(Flow::Continue)
            } else {
                if self.decode_keys {
                    let (columns, row) = (&self.access.index.columns, &mut self.row);
                    index::decode_key(leaf.key(i), &self.types, |k, v| row[columns[k]] = v)?;
                }
                push(stages, self.row.as_slice(), f)?
            };
            if flow == Flow::Stop {
                return Ok((Flow::Stop, i + 1));
            }
        }
        Ok((Flow::Continue, leaf.len()))
    }

    /// [`Emitter::emit_runs`] with the fast walk of `fast_width` columns (0: none), and
    /// the kernel's loop for its shape where it has one.
    fn emit_runs_by_width(&mut self, stages: &mut [Stage<'_>], f: &mut FunctionContext) -> Result<(Flow, usize)> {
        macro_rules! by_width {
            ($($w:literal)*) => {
                match self.fast_width {
                    $($w => self.emit_runs_folded::<$w>(stages, f),)*
                    _ => self.emit_runs_folded::<0>(stages, f),
                }
            };
        }
        by_width!(1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16)
    }

    /// [`Emitter::emit_runs`] with the kernel's step for its shape, folding the totals by
    /// value, or the kernel's general form where it has none. The kernel is out of the
    /// emitter meanwhile, and back when the leaf is done. Out of line, with the loops it
    /// holds inlined: each of them then knows its step's columns as constants (a step
    /// handed to a loop out of line is data, its column tested every row), and its
    /// registers go to the few things it reads per row rather than to the other ways of
    /// emitting.
    #[inline(never)]
    fn emit_runs_folded<const W: usize>(
        &mut self,
        stages: &mut [Stage<'_>],
        functions: &mut FunctionContext,
    ) -> Result<(Flow, usize)> {
        let mut kernel = self.kernel.take().expect("emit_runs is called with a kernel");
        let emitted = match kernel.fold_rows::<W, _>(LeafRuns { emitter: self, stages, functions }) {
            Ok(emitted) => emitted,
            Err(LeafRuns { emitter, stages, functions }) => {
                emitter.emit_runs::<W, _>(stages, functions, &mut KernelRows(&mut kernel), ()).map(|(flow, ())| flow)
            }
        };
        self.kernel = Some(kernel);
        emitted
    }

    /// [`Emitter::emit`] with table access and a row kernel: the rows of each run of
    /// entries in one table block are walked in one go ([`RowFetcher::walk_run`], with
    /// the fast walk of `W` columns, or none where `W` is 0; a run of one entry by
    /// [`RowFetcher::walk_one`]) and handed to `rows` with the totals so far, from
    /// `totals`; a row it leaves undecided is fetched whole and pushed. Returns how the
    /// leaf ended and the totals.
    #[inline(always)]
    fn emit_runs<const W: usize, R: RunRows<W>>(
        &mut self,
        stages: &mut [Stage<'_>],
        f: &mut FunctionContext,
        rows: &mut R,
        mut totals: R::Totals,
    ) -> Result<((Flow, usize), R::Totals)> {
        let mut i = 0;
        while i < self.rowids.len() {
            self.prefetch_ahead(i);
            let rdba = self.rowids[i].rdba;
            // A run of one entry (a badly clustered index's) is walked as one row, and
            // looks for no long run after it.
            let starts_run = i == 0 || self.rowids[i - 1].rdba != rdba;
            let alone = starts_run && self.rowids.get(i + 1).is_none_or(|r| r.rdba != rdba);
            if starts_run && !alone {
                self.upcoming = self.next_run_block(i);
            }
            let (after, end) = if alone {
                self.fetcher.walk_one::<W, R>(self.ctx, &self.rowids[i], rows, totals)?
            } else {
                let run = &self.rowids[i..];
                self.fetcher.walk_run::<W, R>(self.ctx, run, self.upcoming.as_mut(), rows, totals)?
            };
            totals = after;
            match end {
                RunEnd::Walked(n) => {
                    self.prefetch_next_leaf(n);
                    i += n;
                }
                RunEnd::Undecided(n) => {
                    let rowid = self.rowids[i + n];
                    i += n + 1;
                    let flow = self.fetcher.fetch_pinned(self.ctx, rowid, |r| push(stages, r, f))?;
                    if flow == Some(Flow::Stop) {
                        return Ok(((Flow::Stop, i), totals));
                    }
                }
            }
        }
        Ok(((Flow::Continue, self.rowids.len()), totals))
    }

    /// Starts loading what the rows a few entries ahead will need: a row in the pinned
    /// block; or, for a row in another block, that block's header, row directory and the
    /// row's probable place, and the bucket hint of the block after it.
    #[inline]
    fn prefetch_ahead(&self, i: usize) {
        let Some(&next) = self.rowids.get(i + ROWS_AHEAD) else { return };
        if next.rdba == self.rowids[i].rdba {
            self.fetcher.prefetch(next);
            return;
        }
        let cache = self.cache;
        cache.prefetch_block(next.rdba, BLOCK_LINES_AHEAD, self.row_guess(next.slot));
        if let Some(further) = self.rowids.get(i + 2 * ROWS_AHEAD) {
            cache.prefetch_hint(further.rdba);
        }
    }

    /// The block of the run after the one starting at entry `i`, to be loaded over the
    /// rows of this one, when that run is long (a well clustered index). The caller asks
    /// only over a run of more than one entry: a badly clustered index's runs are of one,
    /// where there is no time to load a block over one row, and the entries ahead are
    /// prefetched one by one ([`Emitter::prefetch_ahead`]); the caller's test of the next
    /// entry then spares it a call at every row.
    fn next_run_block(&self, i: usize) -> Option<NextBlockPrefetch<'r>> {
        let rdba = self.rowids[i].rdba;
        let next = i + self.rowids[i..].iter().position(|r| r.rdba != rdba)?;
        let run = self.rowids.get(next..next + LONG_RUN)?;
        if run.iter().any(|r| r.rdba != run[0].rdba) {
            return None;
        }
        self.cache.prefetch_lines(run[0].rdba).map(|block| NextBlockPrefetch::new(Some(block)))
    }

    /// Loads `lines` more lines of the next leaf, into L2 (read a leaf later).
    #[inline]
    fn prefetch_next_leaf(&mut self, lines: usize) {
        if let Some((target, at)) = &mut self.next_leaf {
            target.range_to_l2(*at, *at + lines * 64);
            *at += lines * 64;
        }
    }

    /// Where in its block the row in `slot` probably lies: rows are placed from the
    /// block's end down in slot order, so slot s starts about s + 1 average row lengths
    /// before the end. A guess only (`None` without statistics): the byte a line before
    /// it, and [`ROW_LINES_AHEAD`], the lines to load from there.
    fn row_guess(&self, slot: u16) -> Option<(usize, usize)> {
        let at = self.block_size.checked_sub((usize::from(slot) + 1) * self.row_len?)?;
        Some((at.saturating_sub(64), ROW_LINES_AHEAD))
    }

    /// Ends the run: the fetcher's counts and a kernel's handed on (the fetcher's pinned
    /// block stays with its owner). Returns the rowid buffer for the next run.
    fn finish(mut self, stages: &mut [Stage<'_>]) -> Vec<RowId> {
        self.fetcher.hand_counts();
        if let Some(kernel) = &self.kernel {
            kernel.hand_totals(stages, self.ctx.stats);
        }
        std::mem::take(&mut self.rowids)
    }
}
