//! Index access paths as a pipeline source: INDEX UNIQUE / RANGE / FULL SCAN (leaf by
//! leaf in key order, ascending or descending) and INDEX FAST FULL SCAN (leaves in segment
//! order with multiblock reads), each either followed by TABLE ACCESS BY INDEX ROWID or
//! answering from the keys alone when the index holds every column the query reads.
//!
//! ```text
//!  IndexScan ──leaf entries──► RowFetcher (block pinned while rowids stay in it) ──► stages
//!            └─(index only)──► key decoded into the row's key columns ──────────► stages
//! ```
//!
//! The source measures the index row source itself (entries, consistent gets, physical
//! reads, time), for the plan line that sits under TABLE ACCESS BY INDEX ROWID.

use super::ExecContext;
use super::kernel::{CountKernel, KernelVerdict};
use super::pipeline::{Stage, push};
use crate::access::by_rowid::{RowFetcher, Walked};
use crate::access::full_scan::Flow;
use crate::catalog::{IndexDef, TableDef};
use crate::error::Result;
use crate::index::{self, IndexScan, KeyBound, LeafEntries};
use crate::sql::optimizer::IndexScanKind;
use crate::stats::Stat;
use crate::types::{DataType, Datum, Value};
use std::cell::Cell;
use std::sync::Arc;
use std::time::Instant;

/// How many entries ahead the row of an entry is prefetched (when in the pinned block).
const ROWS_AHEAD: usize = 4;

/// Cache lines of a block prefetched ahead of its get: header, ITL and the start of the
/// row directory.
const BLOCK_LINES_AHEAD: usize = 3;

/// What the index row source did in one run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct IndexLineFigures {
    pub entries: u64,
    pub consistent_gets: u64,
    pub physical_reads: u64,
    pub time_ns: u64,
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
    /// The rowids of the leaf being emitted (a buffer kept across leaves).
    pub rowids: std::cell::RefCell<Vec<crate::index::RowId>>,
    /// Whether an index-only path must decode keys (false when no column is read, as
    /// for COUNT(*)).
    pub decode_keys: bool,
}

/// Counters around the index's own work.
struct Meter {
    figures: IndexLineFigures,
}

impl Meter {
    fn measure<T>(&mut self, stats: &crate::stats::SessionStats, work: impl FnOnce() -> T) -> T {
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
    pub fn run(&self, stages: &mut [Stage<'_>], ctx: &mut ExecContext<'_>) -> Result<()> {
        // DDL that would free the index's or the table's blocks (DROP INDEX, TRUNCATE, DROP
        // TABLE) waits for the scan; one that finished since the plan was made is an error.
        let locks = ctx.access.db.table_locks(self.table.object_id);
        let _visible = locks.visibility.read_recursive();
        let current = ctx.access.db.catalog.index(&self.index.name);
        if current.as_ref().is_none_or(|ix| ix.object_id != self.index.object_id) {
            return Err(crate::error::Error::Transaction {
                message: format!(
                    "index {} was dropped or rebuilt (TRUNCATE) after the statement was planned; run it again",
                    self.index.name
                ),
            });
        }
        let mut meter = Meter { figures: IndexLineFigures::default() };
        let width = self.columns_read.iter().rposition(|&r| r).map_or(0, |last| last + 1);
        let mut fetcher = RowFetcher::new(&self.table, width);
        // The whole per-row work of a filtered count, done on the row in its block.
        let mut kernel =
            if self.table_access { super::kernel::CountKernel::for_stages(stages, fetcher.kinds()) } else { None };
        let types: Vec<DataType> = self.index.columns.iter().map(|&c| self.table.columns[c].data_type).collect();
        let mut row: Vec<Value> = vec![Datum::Null; self.table.columns.len()];
        let ExecContext { access, functions } = ctx;
        let result = if self.kind == IndexScanKind::FastFull {
            let started = Instant::now();
            let (gets, reads) = (access.stats.get(Stat::ConsistentGets), access.stats.get(Stat::PhysicalReads));
            let visit = |leaf: &LeafEntries<'_>| -> Result<Flow> {
                let (flow, used) =
                    self.emit(leaf, stages, functions, &types, &mut row, &mut fetcher, &mut kernel, access)?;
                meter.figures.entries += used as u64;
                Ok(flow)
            };
            let result = index::fast_full_scan(access, &self.index, visit);
            // The scan's blocks are all the index's: its figures are the whole run's.
            meter.figures.time_ns = started.elapsed().as_nanos() as u64;
            meter.figures.consistent_gets = access.stats.get(Stat::ConsistentGets) - gets;
            meter.figures.physical_reads = access.stats.get(Stat::PhysicalReads) - reads;
            result
        } else {
            self.range(stages, access, functions, &mut meter, &types, &mut row, &mut fetcher, &mut kernel)
        };
        fetcher.release();
        if let Some(kernel) = &kernel {
            kernel.hand_totals(stages);
        }
        self.figures.set(meter.figures);
        result
    }

    #[allow(clippy::too_many_arguments)]
    fn range<'c>(
        &self,
        stages: &mut [Stage<'_>],
        access: &crate::access::AccessContext<'c>,
        functions: &mut crate::sql::functions::FunctionContext,
        meter: &mut Meter,
        types: &[DataType],
        row: &mut [Value],
        fetcher: &mut RowFetcher<'c>,
        kernel: &mut Option<CountKernel>,
    ) -> Result<()> {
        let mut scan = match (&self.kind, &self.lower) {
            (IndexScanKind::Unique, KeyBound::Included(key)) => IndexScan::unique(&self.index, key.clone()),
            _ => IndexScan::range(&self.index, self.lower.clone(), self.upper.clone(), self.descending),
        };
        loop {
            let leaf = meter.measure(access.stats, || scan.next_leaf(access))?;
            let Some(leaf) = leaf else { return Ok(()) };
            let (flow, used) = self.emit(&leaf, stages, functions, types, row, fetcher, kernel, access)?;
            meter.figures.entries += used as u64;
            if flow == Flow::Stop {
                return Ok(());
            }
        }
    }

    /// Pushes the rows of one leaf's entries.
    #[allow(clippy::too_many_arguments)]
    fn emit<'c>(
        &self,
        leaf: &LeafEntries<'_>,
        stages: &mut [Stage<'_>],
        f: &mut crate::sql::functions::FunctionContext,
        types: &[DataType],
        row: &mut [Value],
        fetcher: &mut RowFetcher<'c>,
        kernel: &mut Option<CountKernel>,
        access: &crate::access::AccessContext<'c>,
    ) -> Result<(Flow, usize)> {
        let mut rowids = std::mem::take(&mut *self.rowids.borrow_mut());
        rowids.clear();
        if self.table_access {
            leaf.rowids_into(&mut rowids);
        }
        let flow = self.emit_rows(leaf, &rowids, stages, f, types, row, fetcher, kernel, access);
        *self.rowids.borrow_mut() = rowids;
        flow
    }

    /// Where in its block the row in `slot` probably lies, for a prefetch: rows are
    /// placed from the block's end down in slot order, so slot s starts about s + 1
    /// average row lengths (from the table's statistics) before the end. A guess only,
    /// `None` without statistics; three lines around it are asked for.
    fn row_guess(&self, slot: u16, block_size: usize) -> Option<(usize, usize)> {
        let len = self.table.stats.as_ref()?.avg_row_len as usize;
        let at = block_size.checked_sub((usize::from(slot) + 1) * (len + 2))?;
        Some((at.saturating_sub(64), at + 128))
    }

    /// [`IndexAccess::emit`] with the leaf's rowids decoded (when rows come from the table);
    /// also returns how many entries were used (fewer than the leaf's when stopped).
    #[allow(clippy::too_many_arguments)]
    fn emit_rows<'c>(
        &self,
        leaf: &LeafEntries<'_>,
        rowids: &[crate::index::RowId],
        stages: &mut [Stage<'_>],
        f: &mut crate::sql::functions::FunctionContext,
        types: &[DataType],
        row: &mut [Value],
        fetcher: &mut RowFetcher<'c>,
        kernel: &mut Option<CountKernel>,
        access: &crate::access::AccessContext<'c>,
    ) -> Result<(Flow, usize)> {
        for i in 0..leaf.len() {
            if self.table_access {
                let rowid = rowids[i];
                // Rows ahead in the pinned block, and blocks ahead in the cache: their
                // memory loads while this row is evaluated. A block two steps ahead gets
                // its hash chain loaded, one step ahead its header and row directory.
                if let Some(&next) = rowids.get(i + ROWS_AHEAD) {
                    if next.rdba == rowid.rdba {
                        fetcher.prefetch(next);
                    } else {
                        access.db.cache.prefetch_block(
                            access.stats,
                            next.rdba,
                            BLOCK_LINES_AHEAD,
                            self.row_guess(next.slot, access.db.block_size),
                        );
                        if let Some(further) = rowids.get(i + 2 * ROWS_AHEAD) {
                            access.db.cache.prefetch_chain(further.rdba);
                        }
                    }
                }
            }
            let flow = if let Some(k) = kernel {
                let rowid = rowids[i];
                match fetcher.fetch_walked(access, rowid, |w| k.apply(w))? {
                    Walked::Absent | Walked::Done(KernelVerdict::Done) => Flow::Continue,
                    Walked::Done(KernelVerdict::Fallback) | Walked::Chained => {
                        fetcher.fetch_pinned(access, rowid, |r| push(stages, r, f))?.unwrap_or(Flow::Continue)
                    }
                }
            } else if self.table_access {
                fetcher.fetch(access, rowids[i], |r| push(stages, r, f))?.unwrap_or(Flow::Continue)
            } else {
                if self.decode_keys {
                    let values = index::decode_key(leaf.key(i), types)?;
                    for (&c, v) in self.index.columns.iter().zip(values) {
                        row[c] = v;
                    }
                }
                push(stages, &*row, f)?
            };
            if flow == Flow::Stop {
                return Ok((Flow::Stop, i + 1));
            }
        }
        Ok((Flow::Continue, leaf.len()))
    }
}
