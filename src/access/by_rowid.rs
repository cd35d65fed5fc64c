//! TABLE ACCESS BY ROWID: rows fetched one by one at the addresses an index gave.
//!
//! The fetcher keeps the block of the last row pinned (its consistent version, a CR clone
//! if the snapshot needs one). A row in the same block as the one before is read from
//! the pinned buffer and counts `buffer is pinned count`, no new logical read; a row in
//! another block releases it and takes a consistent get of the new one. So an index
//! whose entries visit the table's blocks in order (a low clustering factor) costs about
//! one logical read a table block, and one in random order about one a row, as in
//! Oracle. A chained or migrated row is followed (`table fetch continued row`).
//!
//! [`RowFetcher::walk_run`] takes the rowids of a run in one block at once for a row
//! kernel: each row is walked in place (by the full scan's fast walk where it can take
//! the row, see `fast_walk`) and handed over, while the block of the next run loads
//! ([`NextBlockPrefetch`]). A row the kernel cannot decide, or a chained one, ends
//! the walk ([`RunEnd::Undecided`]) and is fetched whole with
//! [`RowFetcher::fetch_pinned`]; [`RowFetcher::walk_one`] is that walk for a run of one
//! rowid. Every row reached counts `table fetch by rowid` (and, after the first of a
//! block, `buffer is pinned count`) once, whichever way it is read; the counts reach the
//! session's statistics when the fetcher is released (or, for one kept across index
//! scans, at the end of each scan: [`RowFetcher::hand_counts`]).
//!
//! A fetcher lives as long as its caller keeps it: one index scan's, or a whole nested
//! loop's (its probes, one index scan an outer row, share it, so a probe whose first row
//! is in the block the previous probe's last row was in counts `buffer is pinned count`,
//! as Oracle's nested loops do). Within one statement the snapshot does not move, so the
//! version pinned is the one a new get would give: a current version stays unchanged
//! under the shared content lock the pin holds, and a CR clone serves the snapshot it
//! was built for. No statement writes a block its own query holds pinned (one that writes
//! a table its query reads gathers the query's rows before it writes), so it never waits
//! on its own pin. Dropping the fetcher releases the pin, so no path (the end, an error,
//! a stage above stopping early) keeps it past its owner.
//!
//! Which slots hold a live row, and which are corrupt, is the full scan's rule
//! (`full_scan::live_row`) on every path.
//!
//! A rowid into a compressed table's compression unit (CU) names the CU's head block and
//! the row's number in the CU. Its block is then a CU head: the fetcher takes it as the
//! snapshot sees it (a consistent get, a CR clone if needed: the head's deleted-row
//! bitmap as of the snapshot), decompresses the whole CU through the context's
//! reader (`AccessContext::read_cu`: the column store is a layer above this one)
//! and keeps it, keyed by the head's
//! address: the next rowids into the same CU, now or after rows of other blocks, take
//! their rows from it without decompressing it again, the head's deleted marks taken
//! afresh from the head version each visit gets ([`DecodedCu::refresh_marks`]). Each
//! decompression counts `EHCC Rowid CUs Decompressed`. A CU row is handed over as a
//! whole-row piece located as a row of a block (rdba = the head, slot = the row number);
//! [`RowFetcher::walk_run`] leaves every CU row to [`RowFetcher::fetch_pinned`].
//!
//! ```text
//!  rowid (head, r) ─► consistent get of the head (CR clone: the snapshot's marks)
//!    same head as the kept CU? ─yes─► refresh its marks
//!                               └no──► ReadCu: pieces, every column decompressed
//!    row r marked deleted? ─yes─► no row   └no─► row r as a whole-row piece ─► f
//! ```
//!
//! Invariant: a row is handed out only while its block (or the clone it was read from)
//! is pinned, and only if it is a live row head as the snapshot sees it (for a CU row:
//! not marked deleted in the head version pinned).

use super::AccessContext;
use super::cu::DecodedCu;
use super::fast_walk::{FastBlock, FastRow, KnownHead};
use super::full_scan::{LiveRow, NextBlockPrefetch, live_row};
use super::row_at::whole_row;
use super::row_view::{BlockRow, WalkedRow};
use crate::buffer::{PrefetchTarget, ReadGuard};
use crate::catalog::TableDef;
use crate::error::Result;
use crate::stats::Stat;
use crate::storage::block::{BlockHeader, BlockType};
use crate::storage::row::{ColumnSpan, PieceAddr};
use crate::txn::cr::make_consistent_in_place;
use crate::types::encoding::PayloadKind;

/// Bytes of a row a prefetch asks for: the head and the first columns of a typical row.
const ROW_PREFETCH_BYTES: usize = 128;

/// Fetches rows of one table by rowid for one statement.
pub struct RowFetcher<'c> {
    table: &'c TableDef,
    kinds: Vec<PayloadKind>,
    spans: Vec<ColumnSpan>,
    scratch: Vec<u8>,
    /// Per row of an in-place walk: where each column's length byte is.
    positions: Vec<u16>,
    /// The block of the last row, as the snapshot sees it.
    pinned: Option<ReadGuard<'c>>,
    /// Rows fetched and rows found in the pinned block, not yet added to the session's
    /// statistics (added when the fetcher is released or dropped).
    fetched: u64,
    pinned_hits: u64,
    stats: &'c crate::stats::SessionStats,
    /// The last CU decompressed, kept for the next rowids into it.
    cu: Option<Box<dyn DecodedCu>>,
    /// Whether the pinned block is a CU head (then `cu` is its CU, its marks the pinned
    /// version's).
    in_cu: bool,
    /// The head of the last row the fast walk took, kept from run to run: a table's rows
    /// mostly share it, across its blocks too.
    known: KnownHead,
}

/// What [`RowFetcher::walk_run`] hands each row of a run to, a row kernel: a row the
/// fast walk of `W` columns took, or one walked the general way. Each takes the run's
/// totals so far and answers with the new ones, or `None` where it could not decide the
/// row (it is fetched whole instead). The totals travel by value through the run's loop,
/// so that they stay in registers.
pub trait RunRows<const W: usize> {
    type Totals: Copy;
    fn fast(&mut self, totals: Self::Totals, row: &FastRow<'_, W>) -> Option<Self::Totals>;
    fn walked(&mut self, totals: Self::Totals, row: WalkedRow<'_>) -> Option<Self::Totals>;
}

/// Where [`RowFetcher::walk_run`] ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunEnd {
    /// The first this many rowids (all in one block) were walked and handed over.
    Walked(usize),
    /// The rowid at this index (its block pinned, the ones before it handed over) is a
    /// row the walk's consumer could not decide or one not in one piece: fetch it with
    /// [`RowFetcher::fetch_pinned`].
    Undecided(usize),
}

impl<'c> RowFetcher<'c> {
    /// A fetcher locating the first `width` columns of each row, counting into the
    /// statistics of `ctx`'s session.
    pub fn new(ctx: &AccessContext<'c>, table: &'c TableDef, width: usize) -> RowFetcher<'c> {
        let width = width.min(table.columns.len());
        RowFetcher {
            table,
            kinds: table.columns[..width].iter().map(|c| PayloadKind::from(c.data_type)).collect(),
            spans: vec![ColumnSpan::NULL; width],
            scratch: Vec::new(),
            positions: vec![0; width],
            pinned: None,
            fetched: 0,
            pinned_hits: 0,
            stats: ctx.stats,
            cu: None,
            in_cu: false,
            known: KnownHead::default(),
        }
    }

    /// How each located column decodes.
    pub fn kinds(&self) -> &[PayloadKind] {
        &self.kinds
    }

    /// Makes the block of `rowid` the pinned one, counting the visit.
    #[inline]
    fn visit(&mut self, ctx: &AccessContext<'c>, rowid: PieceAddr) -> Result<()> {
        self.fetched += 1;
        match &self.pinned {
            Some(guard) if guard.rdba() == rowid.rdba => self.pinned_hits += 1,
            _ => {
                // The guard goes straight into its place and is checked there: a
                // corrupt block stays pinned only until the fetcher is dropped.
                self.pinned = None;
                self.in_cu = false;
                let current = self.pinned.insert(ctx.cache.consistent_get(ctx.stats, rowid.rdba)?);
                if is_cu_head(self.table, current) {
                    make_consistent_in_place(ctx, &mut self.pinned, ctx.reader)?;
                    self.open_cu(ctx, rowid.rdba)?;
                } else {
                    ctx.check_table_block(self.table, rowid.rdba, current)?;
                    make_consistent_in_place(ctx, &mut self.pinned, ctx.reader)?;
                }
            }
        }
        Ok(())
    }

    /// The pinned block is the head of a CU at `rdba`: the kept CU if it is this one, its
    /// marks refreshed from the pinned version, else the CU read and decompressed whole.
    #[cold]
    #[inline(never)]
    fn open_cu(&mut self, ctx: &AccessContext<'c>, rdba: u32) -> Result<()> {
        let head: &[u8] = self.pinned.as_ref().expect("the head is pinned");
        match &mut self.cu {
            Some(cu) if cu.rdba() == rdba => cu.refresh_marks(ctx, head)?,
            kept => {
                *kept = None;
                *kept = Some(ctx.read_cu(self.table, rdba, head)?);
                ctx.stats.add(Stat::EhccRowidCusDecompressed, 1);
            }
        }
        self.in_cu = true;
        Ok(())
    }

    /// Row `row` of the pinned CU handed to `f`; `None` when the pinned head marks it
    /// deleted. A row number past the CU's rows is corruption of the rowid's index.
    #[cold]
    #[inline(never)]
    fn fetch_cu_row<R>(
        &mut self,
        ctx: &AccessContext<'c>,
        rowid: PieceAddr,
        f: impl FnOnce(&BlockRow<'_>) -> Result<R>,
    ) -> Result<Option<R>> {
        let cu = self.cu.as_ref().expect("a pinned CU head has its CU kept");
        let row = usize::from(rowid.slot);
        if row >= cu.rows() {
            return Err(
                ctx.corrupt(rowid.rdba, format!("rowid of row {row} in a compression unit of {} rows", cu.rows()))
            );
        }
        if cu.is_deleted(row) {
            return Ok(None);
        }
        let located = cu.row(row, &self.kinds, &mut self.spans, &mut self.scratch)?;
        f(&located).map(Some)
    }

    /// How many leading columns of a row the fetcher locates.
    pub fn width(&self) -> usize {
        self.kinds.len()
    }

    /// The rows at the leading rowids that share the first one's block, each walked in
    /// place and handed to `rows` with the `totals` so far: a row of at least `W` (> 0)
    /// columns whose first `W` are short or NULL by the fast walk ([`RunRows::fast`]), any
    /// other the general way, the positions of its columns' length bytes found
    /// ([`RunRows::walked`]). Returns the totals after the rows handed over, and where the
    /// run ended. `W` is 0, or the fetcher's [`RowFetcher::width`]. One get (or none, when
    /// the block is the pinned one) for the run; every other row counts `buffer is pinned
    /// count`. While the run is walked, `upcoming` (the block of the next run) is loaded a
    /// few lines a row.
    #[inline(always)]
    pub fn walk_run<const W: usize, R: RunRows<W>>(
        &mut self,
        ctx: &AccessContext<'c>,
        rowids: &[PieceAddr],
        mut upcoming: Option<&mut NextBlockPrefetch<'_>>,
        rows: &mut R,
        mut totals: R::Totals,
    ) -> Result<(R::Totals, RunEnd)> {
        debug_assert!(W == 0 || W == self.width(), "a fast walk of the fetcher's width");
        let Some(&first) = rowids.first() else { return Ok((totals, RunEnd::Walked(0))) };
        self.visit(ctx, first)?;
        if self.in_cu {
            // A CU's rows are read whole, one by one.
            return Ok((totals, RunEnd::Undecided(0)));
        }
        let RowFetcher { pinned, positions, kinds, known, .. } = self;
        let block: &[u8] = pinned.as_ref().expect("pinned by visit");
        let directory = crate::storage::block::DataBlock(block).directory();
        let in_block = FastBlock::<W>::new(block);
        let rdba = first.rdba;
        let mut n = 0;
        let end = loop {
            let Some(rowid) = rowids.get(n) else { break Ok(RunEnd::Walked(n)) };
            if rowid.rdba != rdba {
                break Ok(RunEnd::Walked(n));
            }
            if let Some(u) = upcoming.as_deref_mut() {
                u.step();
            }
            let slot = usize::from(rowid.slot);
            let Some(entry) = directory.get(2 * slot..2 * slot + 2) else {
                n += 1;
                continue;
            };
            // Most rows: the fast walk's own test of the row's head, and its walk.
            if W > 0
                && let Some(row) = in_block.row_at(usize::from(u16::from_le_bytes([entry[0], entry[1]])), known)
            {
                match rows.fast(totals, &row) {
                    Some(next) => totals = next,
                    None => break Ok(RunEnd::Undecided(n)),
                }
                n += 1;
                continue;
            }
            // Any other slot the general way: empty, deleted, chained, a row with a long
            // value or fewer columns, or a corrupt entry.
            let (stream, column_count) = match live_row(ctx, rdba, block, slot, entry) {
                Ok(None) => {
                    n += 1;
                    continue;
                }
                Ok(Some(LiveRow::Chained { .. })) => break Ok(RunEnd::Undecided(n)),
                Ok(Some(LiveRow::Whole { stream, column_count })) => (stream, column_count),
                Err(e) => break Err(e),
            };
            if crate::storage::row::walk_lengths(stream, column_count, positions).is_none() {
                break Err(ctx.corrupt(rdba, format!("row {slot}: column lengths run past the block")));
            }
            let decided = rows.walked(totals, WalkedRow { stream, positions, kinds, rdba });
            match decided {
                Some(next) => totals = next,
                None => break Ok(RunEnd::Undecided(n)),
            }
            n += 1;
        };
        // Every row reached counts once: the first was counted by the visit, the others
        // are in the pin (a row the run stopped at, to be fetched whole, included).
        let reached = match end {
            Ok(RunEnd::Walked(n)) => n,
            Ok(RunEnd::Undecided(n)) => n + 1,
            Err(_) => n + 1,
        };
        let in_pin = (reached as u64).saturating_sub(1);
        self.fetched += in_pin;
        self.pinned_hits += in_pin;
        end.map(|end| (totals, end))
    }

    /// [`RowFetcher::walk_run`] of a run of one row, the only one in its block among the
    /// rowids around it (as a badly clustered index's mostly are): the run's walk inlined
    /// for a slice of one rowid and no next block to load, which the compiler trims to
    /// about one row's work. Ends as `Walked(1)` or `Undecided(0)`.
    #[inline(always)]
    pub fn walk_one<const W: usize, R: RunRows<W>>(
        &mut self,
        ctx: &AccessContext<'c>,
        rowid: &PieceAddr,
        rows: &mut R,
        totals: R::Totals,
    ) -> Result<(R::Totals, RunEnd)> {
        self.walk_run::<W, R>(ctx, std::slice::from_ref(rowid), None, rows, totals)
    }

    /// The row at `rowid` as the statement's snapshot sees it, handed to `f`; `None` if
    /// there is no live row there for the snapshot.
    pub fn fetch<R>(
        &mut self,
        ctx: &AccessContext<'c>,
        rowid: PieceAddr,
        f: impl FnOnce(&BlockRow<'_>) -> Result<R>,
    ) -> Result<Option<R>> {
        self.visit(ctx, rowid)?;
        self.fetch_pinned(ctx, rowid, f)
    }

    /// [`RowFetcher::fetch`] of the row [`RowFetcher::walk_run`] stopped at (it was
    /// chained, or the walk's consumer could not decide it), counted once.
    pub fn fetch_pinned<R>(
        &mut self,
        ctx: &AccessContext<'c>,
        rowid: PieceAddr,
        f: impl FnOnce(&BlockRow<'_>) -> Result<R>,
    ) -> Result<Option<R>> {
        let guard = self.pinned.as_ref().filter(|g| g.rdba() == rowid.rdba).expect("the row's block is pinned");
        if self.in_cu {
            return self.fetch_cu_row(ctx, rowid, f);
        }
        let slot = usize::from(rowid.slot);
        let row = whole_row(ctx, guard, rowid.rdba, slot, &self.kinds, &mut self.spans, &mut self.scratch)?;
        match row {
            Some(row) => f(&row).map(Some),
            None => Ok(None),
        }
    }

    /// Asks the CPU to start loading the row at `rowid` if it is in the pinned block (a
    /// hint that changes nothing else): a fetch a few rows later then finds it in cache
    /// instead of waiting for memory at each of its length bytes.
    #[inline]
    pub fn prefetch(&self, rowid: PieceAddr) {
        if let Some(guard) = self.pinned.as_ref().filter(|g| !self.in_cu && g.rdba() == rowid.rdba) {
            let block = crate::storage::block::DataBlock(guard);
            let slot = usize::from(rowid.slot);
            if slot < block.row_count() {
                let at = block.row_offset(slot);
                PrefetchTarget::of(guard).range(at, at + ROW_PREFETCH_BYTES);
            }
        }
    }

    /// Adds the fetches counted so far to the session's statistics, keeping the pinned
    /// block: a fetcher that outlives one index scan (a nested loop's probes) hands each
    /// scan's counts over at its end, so the scan's figures hold them.
    pub fn hand_counts(&mut self) {
        self.stats.add(Stat::TableFetchByRowid, std::mem::take(&mut self.fetched));
        self.stats.add(Stat::BufferIsPinned, std::mem::take(&mut self.pinned_hits));
    }

    /// Lets go of the pinned block and adds the fetches to the session's statistics.
    pub fn release(&mut self) {
        self.pinned = None;
        self.in_cu = false;
        self.hand_counts();
    }
}

impl Drop for RowFetcher<'_> {
    fn drop(&mut self) {
        self.release();
    }
}

/// Whether `block` is the head of one of `table`'s compression units (the only block of a
/// compressed table besides its row blocks a rowid can name).
#[inline]
fn is_cu_head(table: &TableDef, block: &[u8]) -> bool {
    let header = BlockHeader(block);
    table.compression.is_some()
        && header.block_type() == Some(BlockType::CuHead)
        && header.object_id() == table.object_id
}
