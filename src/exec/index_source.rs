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
use crate::access::AccessContext;
use crate::access::by_rowid::{RowFetcher, Walked};
use crate::access::full_scan::Flow;
use crate::catalog::{IndexDef, TableDef};
use crate::error::Result;
use crate::index::{self, IndexScan, KeyBound, LeafEntries, RowId};
use crate::sql::functions::FunctionContext;
use crate::sql::optimizer::IndexScanKind;
use crate::stats::SessionStats;
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
}

/// Adds to `figures` the gets, reads and time `work` spends.
fn measured<T>(stats: &SessionStats, figures: &mut IndexLineFigures, work: impl FnOnce() -> T) -> T {
    let (gets, reads) = (stats.get(Stat::ConsistentGets), stats.get(Stat::PhysicalReads));
    let started = Instant::now();
    let out = work();
    figures.time_ns += started.elapsed().as_nanos() as u64;
    figures.consistent_gets += stats.get(Stat::ConsistentGets) - gets;
    figures.physical_reads += stats.get(Stat::PhysicalReads) - reads;
    out
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
        let ExecContext { access, functions } = ctx;
        let mut emitter = Emitter::new(self, stages, access);
        let mut figures = IndexLineFigures::default();
        let result = if self.kind == IndexScanKind::FastFull {
            // Every block the scan reads is the index's: its figures are the whole run's.
            let mut entries = 0;
            let result = measured(access.stats, &mut figures, || {
                index::fast_full_scan(access, &self.index, |leaf| {
                    let (flow, used) = emitter.emit(leaf, stages, functions)?;
                    entries += used as u64;
                    Ok(flow)
                })
            });
            figures.entries = entries;
            result
        } else {
            let mut scan = match (&self.kind, &self.lower) {
                (IndexScanKind::Unique, KeyBound::Included(key)) => IndexScan::unique(&self.index, key.clone()),
                _ => IndexScan::range(&self.index, self.lower.clone(), self.upper.clone(), self.descending),
            };
            loop {
                let leaf = measured(access.stats, &mut figures, || scan.next_leaf(access));
                let leaf = match leaf {
                    Ok(Some(leaf)) => leaf,
                    Ok(None) => break Ok(()),
                    Err(e) => break Err(e),
                };
                match emitter.emit(&leaf, stages, functions) {
                    Ok((flow, used)) => {
                        figures.entries += used as u64;
                        if flow == Flow::Stop {
                            break Ok(());
                        }
                    }
                    Err(e) => break Err(e),
                }
            }
        };
        emitter.finish(stages);
        self.figures.set(figures);
        result
    }
}

/// What one run keeps from leaf to leaf while it turns entries into rows.
struct Emitter<'r> {
    access: &'r IndexAccess,
    ctx: &'r AccessContext<'r>,
    fetcher: RowFetcher<'r>,
    /// The whole per-row work of a filtered count, done on the row in its block.
    kernel: Option<CountKernel>,
    /// Index-only: the key columns' types, whether any column is read at all (COUNT(*)
    /// reads none: keys need no decoding), and the row the keys are decoded into.
    types: Vec<DataType>,
    decode_keys: bool,
    row: Vec<Value>,
    /// The rowids of the leaf being emitted (a buffer kept across leaves).
    rowids: Vec<RowId>,
    /// The table's average row length, for guessing where a row lies in its block.
    row_len: Option<usize>,
}

impl<'r> Emitter<'r> {
    fn new(access: &'r IndexAccess, stages: &[Stage<'_>], ctx: &'r AccessContext<'r>) -> Emitter<'r> {
        let table: &'r TableDef = &access.table;
        let width = access.columns_read.iter().rposition(|&r| r).map_or(0, |last| last + 1);
        let fetcher = RowFetcher::new(table, width);
        let kernel = if access.table_access { CountKernel::for_stages(stages, fetcher.kinds()) } else { None };
        Emitter {
            access,
            ctx,
            fetcher,
            kernel,
            types: access.index.columns.iter().map(|&c| access.table.columns[c].data_type).collect(),
            decode_keys: access.columns_read.iter().any(|&r| r),
            row: vec![Datum::Null; access.table.columns.len()],
            rowids: Vec::new(),
            row_len: access.table.stats.as_ref().map(|s| s.avg_row_len as usize),
        }
    }

    /// Pushes the rows of one leaf's entries; returns how many entries were used (fewer
    /// than the leaf's when a stage stopped the scan).
    fn emit(
        &mut self,
        leaf: &LeafEntries<'_>,
        stages: &mut [Stage<'_>],
        f: &mut FunctionContext,
    ) -> Result<(Flow, usize)> {
        let table_access = self.access.table_access;
        self.rowids.clear();
        if table_access {
            leaf.rowids_into(&mut self.rowids);
        }
        for i in 0..leaf.len() {
            let flow = if table_access {
                self.prefetch_ahead(i);
                let rowid = self.rowids[i];
                match &mut self.kernel {
                    Some(k) => match self.fetcher.fetch_walked(self.ctx, rowid, |w| k.apply(w))? {
                        Walked::Absent | Walked::Done(KernelVerdict::Done) => Flow::Continue,
                        Walked::Done(KernelVerdict::Fallback) | Walked::Chained => self
                            .fetcher
                            .fetch_pinned(self.ctx, rowid, |r| push(stages, r, f))?
                            .unwrap_or(Flow::Continue),
                    },
                    None => self.fetcher.fetch(self.ctx, rowid, |r| push(stages, r, f))?.unwrap_or(Flow::Continue),
                }
            } else {
                if self.decode_keys {
                    let values = index::decode_key(leaf.key(i), &self.types)?;
                    for (&c, v) in self.access.index.columns.iter().zip(values) {
                        self.row[c] = v;
                    }
                }
                push(stages, self.row.as_slice(), f)?
            };
            if flow == Flow::Stop {
                return Ok((Flow::Stop, i + 1));
            }
        }
        Ok((Flow::Continue, leaf.len()))
    }

    /// Starts loading what the rows a few entries ahead will need: a row in the pinned
    /// block; or, for a row in another block, that block's header, row directory and the
    /// row's probable place, and the hash chain of the block after it.
    #[inline]
    fn prefetch_ahead(&self, i: usize) {
        let Some(&next) = self.rowids.get(i + ROWS_AHEAD) else { return };
        if next.rdba == self.rowids[i].rdba {
            self.fetcher.prefetch(next);
            return;
        }
        let cache = &self.ctx.db.cache;
        cache.prefetch_block(self.ctx.stats, next.rdba, BLOCK_LINES_AHEAD, self.row_guess(next.slot));
        if let Some(further) = self.rowids.get(i + 2 * ROWS_AHEAD) {
            cache.prefetch_chain(further.rdba);
        }
    }

    /// Where in its block the row in `slot` probably lies: rows are placed from the
    /// block's end down in slot order, so slot s starts about s + 1 average row lengths
    /// before the end. A guess only (`None` without statistics); a few lines around it.
    fn row_guess(&self, slot: u16) -> Option<(usize, usize)> {
        let at = self.ctx.db.block_size.checked_sub((usize::from(slot) + 1) * self.row_len?)?;
        Some((at.saturating_sub(64), at + 128))
    }

    /// Ends the run: the pinned block is let go and a kernel's counts handed on.
    fn finish(mut self, stages: &mut [Stage<'_>]) {
        self.fetcher.release();
        if let Some(kernel) = &self.kernel {
            kernel.hand_totals(stages);
        }
    }
}
