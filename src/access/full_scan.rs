//! Full table scan: every block below the high-water mark, in extent order (or only the
//! runs of blocks a caller names: [`FullScan::only`], for an in-memory scan's rest). It is
//! the one walk of a segment in either format: a compressed table's compression units
//! are gathered as the walk meets their blocks ([`super::cu::scan`]) and each goes to the
//! consumer whole ([`ScanConsumer::cu`]: a columnar consumer decompresses the columns it
//! reads, any other takes the unit's rows one by one), in segment order with the row
//! blocks.
//!
//! For each run of adjacent blocks (cut at extent boundaries) the scan issues multiblock
//! reads of up to `db_file_multiblock_read_count` blocks (the buffer cache skips blocks
//! already cached, and hands every block of the read back pinned), then takes a
//! consistent get of each block in turn and, while the block stays share-locked, hands
//! its live rows to a [`ScanConsumer`]: whole rows a block at a time as a [`BlockBatch`]
//! (columns located), or to a row kernel through the fast walk of
//! [`super::fast_walk`] (its [`FastRows`], counted eight at a time in AVX2 lanes where
//! the kernel can) for scans of up to 16 columns, and one by one as a [`WalkedRow`]
//! (only the positions of the length bytes recorded) for the rows the fast walk leaves
//! and for wider scans; chained rows one by one. The segment header
//! is read first with a consistent get, as Oracle's scans do, and the table's visibility
//! lock is held shared for the whole scan.
//!
//! One walk of a block's row directory ([`FullScan::walk_block`]) serves every consumer:
//! what differs, how the rows are taken ([`BlockRows`]: gathered into batches, walked the
//! general way one by one, or by the fast walk), is a type the walk is monomorphised
//! for, so no call per block or row is dynamic. A chained row is handed over on its own
//! by every walk, after the rows gathered before it.
//!
//! The next block is share-locked one step ahead, so a scan holds two blocks at a time
//! (following a chained row into one of them takes its shared lock again, which the
//! buffer cache allows). Its lines are prefetched while the current block is walked: a
//! few per row (or per group of eight rows) by the row-kernel walk, or its first rows at
//! once and then each row a few rows ahead by the batch walk. The look-ahead block's
//! consistent get is counted only when the scan reaches it, so a scan that stops early
//! counts exactly the blocks it visited; `table scan rows gotten` counts the rows handed
//! to the consumer.
//!
//! Per block the cost is one consistent get (a content lock; the latch get and pin were
//! paid by the multiblock read); per row it is the directory entry, the flag checks and
//! the walk of column lengths up to the last column the query reads.

use super::cu::scan::{CuGathering, ScannedCu};
use super::fast_walk::FastRows;
use super::prefetch::HEAD_BYTES;
pub use super::prefetch::NextBlockPrefetch;
use super::{AccessContext, BlockBatch, BlockRow, WalkedRow};
use crate::access::Flow;
use crate::buffer::{PinnedRun, PrefetchTarget};
use crate::catalog::TableDef;
use crate::error::Result;
use crate::stats::Stat;
use crate::storage::block::{BlockHeader, BlockType, DataBlock, HEADER_LEN};
use crate::storage::row::{
    ColumnSpan, FLAGS_WHOLE, PIECE_HEADER, PieceAddr, PieceBody, RowPiece, is_visible_head, locate_columns,
    walk_lengths,
};
use crate::storage::segment::ExtentRun;
use crate::types::encoding::PayloadKind;

/// What a scan hands its rows to: whole rows a block at a time, chained rows one by one
/// (in block order: a batch is handed over before a chained row that follows it).
pub trait ScanConsumer {
    fn batch(&mut self, batch: &BlockBatch<'_>) -> Result<Flow>;
    fn row(&mut self, row: &BlockRow<'_>) -> Result<Flow>;

    /// Whether whole rows should go to [`ScanConsumer::row_in_place`] as each is walked,
    /// rather than a block at a time.
    fn rows_in_place(&self) -> bool {
        false
    }

    /// Takes a whole row while the scan walks the block.
    fn row_in_place(&mut self, row: WalkedRow<'_>) -> Result<Flow>;

    /// Takes the rows of a block the fast walk takes, as many as `rows` yields, each
    /// [`super::fast_walk::FastRow`]'s `W` columns decoding as `kinds`. The default hands
    /// each to [`ScanConsumer::row_in_place`] ([`fast_rows_one_by_one`]).
    #[inline(always)]
    fn fast_rows<const W: usize>(
        &mut self,
        rows: &mut FastRows<'_, W>,
        kinds: &[PayloadKind],
        rdba: u32,
    ) -> Result<Flow> {
        fast_rows_one_by_one(self, rows, kinds, rdba)
    }

    /// The columns of a compression unit the scan gathers for [`ScanConsumer::cu`]: a
    /// columnar consumer names those it decompresses; `None` (the default) gathers every
    /// column the scan locates, for the unit's rows one by one.
    fn cu_columns(&self) -> Option<&[bool]> {
        None
    }

    /// Takes a compression unit the scan met, whole. The default hands its live rows to
    /// [`ScanConsumer::row`] one by one ([`cu_rows_one_by_one`]), each located with the
    /// columns `kinds` describes.
    fn cu(
        &mut self,
        ctx: &AccessContext<'_>,
        table: &TableDef,
        cu: &ScannedCu<'_>,
        kinds: &[PayloadKind],
    ) -> Result<Flow> {
        cu_rows_one_by_one(self, ctx, table, cu, kinds)
    }
}

/// Hands the live rows of `cu`, a compression unit of `table`, to `visit`'s
/// [`ScanConsumer::row`] one by one, decompressed through `AccessContext::decode_cu`, each
/// a whole row of the columns `kinds` describes whose rowid is (head, row number); counts
/// them as `table scan rows gotten`.
pub fn cu_rows_one_by_one<C: ScanConsumer + ?Sized>(
    visit: &mut C,
    ctx: &AccessContext<'_>,
    table: &TableDef,
    cu: &ScannedCu<'_>,
    kinds: &[PayloadKind],
) -> Result<Flow> {
    let decoded = ctx.decode_cu(table, cu)?;
    let mut spans = vec![ColumnSpan::NULL; kinds.len()];
    let mut piece = Vec::new();
    let mut handed = 0u64;
    let mut flow = Flow::Continue;
    for r in (0..decoded.rows()).filter(|&r| !decoded.is_deleted(r)) {
        handed += 1;
        let row = decoded.row(r, kinds, &mut spans, &mut piece)?;
        if visit.row(&row)? == Flow::Stop {
            flow = Flow::Stop;
            break;
        }
    }
    ctx.stats.add(Stat::TableScanRowsGotten, handed);
    Ok(flow)
}

/// Hands the rows `rows` yields to `visit`'s [`ScanConsumer::row_in_place`] one by one,
/// as [`WalkedRow`]s whose columns decode as `kinds`, until it says stop.
#[inline(always)]
pub fn fast_rows_one_by_one<C: ScanConsumer + ?Sized, const W: usize>(
    visit: &mut C,
    rows: &mut FastRows<'_, W>,
    kinds: &[PayloadKind],
    rdba: u32,
) -> Result<Flow> {
    let mut outcome = Ok(Flow::Continue);
    rows.visit(|row| {
        outcome = visit.row_in_place(row.walked(&row.positions(), kinds, rdba));
        matches!(outcome, Ok(Flow::Continue))
    });
    outcome
}

/// A scan of one table, locating the first `columns_needed` columns of each row.
pub struct FullScan<'t> {
    table: &'t TableDef,
    kinds: Vec<PayloadKind>,
    /// Per block: where each whole row's column stream starts, and its spans.
    starts: Vec<u32>,
    /// Per block: each whole row's slot in the row directory (its rowid's second half).
    slots: Vec<u16>,
    spans: Vec<ColumnSpan>,
    /// Per row of an in-place walk: where each column's length byte is.
    positions: Vec<u16>,
    /// Scratch for a chained row: its assembled column stream and spans.
    chained: Vec<u8>,
    chained_spans: Vec<ColumnSpan>,
    /// The blocks to read, when not every block below the high-water mark: runs of
    /// adjacent addresses in scan order (an in-memory scan reads only what its units do
    /// not hold).
    only: Option<Vec<ExtentRun>>,
    /// The compression units met (a compressed table's), gathered piece by piece, and
    /// the columns gathered of each.
    cus: CuGathering,
    cu_columns: Vec<bool>,
}

impl<'t> FullScan<'t> {
    /// A scan that locates the columns marked in `needed` (one flag per table column).
    pub fn new(table: &'t TableDef, needed: &[bool]) -> FullScan<'t> {
        let n = needed.iter().rposition(|&x| x).map_or(0, |last| last + 1).min(table.columns.len());
        FullScan {
            table,
            kinds: table.columns[..n].iter().map(|c| PayloadKind::from(c.data_type)).collect(),
            starts: Vec::new(),
            slots: Vec::new(),
            spans: Vec::new(),
            positions: vec![0; n],
            chained: Vec::new(),
            chained_spans: vec![ColumnSpan::NULL; n],
            only: None,
            cus: CuGathering::default(),
            cu_columns: Vec::new(),
        }
    }

    /// This scan, reading only the blocks of `runs` (adjacent addresses below the
    /// high-water mark, in scan order) instead of every block.
    pub fn only(mut self, runs: Vec<ExtentRun>) -> FullScan<'t> {
        self.only = Some(runs);
        self
    }

    /// How each located column decodes.
    pub fn kinds(&self) -> &[PayloadKind] {
        &self.kinds
    }

    /// Columns located per row: up to the last one the plan reads.
    fn width(&self) -> usize {
        self.kinds.len()
    }

    /// Visits every live row. Stops early when the visitor says so.
    pub fn run<C: ScanConsumer>(&mut self, ctx: &AccessContext<'_>, visit: &mut C) -> Result<()> {
        let locks = ctx.locks.table(self.table.object_id);
        let _visible = locks.visibility.read_recursive();
        self.run_locked(ctx, visit)
    }

    /// [`FullScan::run`] for a caller that already holds the table's visibility lock (a
    /// DDL statement holding it exclusively, such as CREATE INDEX).
    pub fn run_locked<C: ScanConsumer>(&mut self, ctx: &AccessContext<'_>, visit: &mut C) -> Result<()> {
        let map = super::segments::read_map(ctx, self.table)?;
        let long_table = (map.hwm as usize) > ctx.cache.buffer_count() / 50;
        ctx.stats.add(if long_table { Stat::TableScansLong } else { Stat::TableScansShort }, 1);
        let max_read = ctx.multiblock_read_count.clamp(1, (ctx.cache.buffer_count() / 4) as u32);
        // Blocks in scan order, each run first brought in with multiblock reads. The next
        // block is got one step ahead so its rows load while this block is evaluated.
        let runs = match self.only.take() {
            Some(runs) => runs,
            None => map.scan_runs(ctx.space.extent_blocks),
        };
        let mut chunks = runs.iter().flat_map(|run| {
            (0..run.blocks.div_ceil(max_read))
                .map(move |i| (run.first + i * max_read, max_read.min(run.blocks - i * max_read)))
        });
        let in_place = visit.rows_in_place();
        self.cu_columns = match visit.cu_columns() {
            Some(columns) => columns.to_vec(),
            None => (0..self.table.columns.len()).map(|c| c < self.width()).collect(),
        };
        let mut pending: Option<PinnedRun<'_>> = None;
        // The blocks of a chunk a multiblock read stopped short of.
        let mut rest: Option<(u32, u32)> = None;
        let mut ahead: Option<crate::buffer::ReadGuard<'_>> = None;
        loop {
            let mut next = pending.as_mut().and_then(|run| run.next_block(ctx.stats));
            if next.is_none()
                && let Some((first, n)) = rest.take().or_else(|| chunks.next())
            {
                ctx.stats.check_interrupt()?;
                let run = pending.insert(ctx.cache.pin_multiblock(ctx.stats, first, n)?);
                if run.end() < first + n {
                    rest = Some((run.end(), first + n - run.end()));
                }
                next = run.next_block(ctx.stats);
            }
            let next = match next.transpose()? {
                Some(guard) => {
                    if !in_place {
                        // The first rows of the next block; later ones are prefetched row
                        // by row. (An in-place walk prefetches the next block as it goes.)
                        let end = guard.len();
                        PrefetchTarget::of(&guard).range(HEADER_LEN, HEAD_BYTES.min(end));
                        PrefetchTarget::of(&guard)
                            .range(end.saturating_sub(PREFETCH_ROWS_AHEAD * ROW_PREFETCH_BYTES), end);
                    }
                    Some(guard)
                }
                None => None,
            };
            let current = std::mem::replace(&mut ahead, next);
            let flow = match current {
                Some(guard) => self.visit_block(ctx, guard, ahead.as_deref(), in_place, visit)?,
                None if ahead.is_none() => return self.cus.finish(ctx),
                None => Flow::Continue,
            };
            if flow == Flow::Stop {
                return Ok(());
            }
        }
    }

    /// Visits the rows of one pinned block: a block at a time, or one by one when the
    /// consumer takes rows `in_place`; `next` is the block after it, if already pinned,
    /// whose lines an in-place walk prefetches as it goes.
    fn visit_block<C: ScanConsumer>(
        &mut self,
        ctx: &AccessContext<'_>,
        guard: crate::buffer::ReadGuard<'_>,
        next: Option<&[u8]>,
        in_place: bool,
        visit: &mut C,
    ) -> Result<Flow> {
        let rdba = guard.rdba();
        ctx.stats.add(Stat::TableScanBlocksGotten, 1);
        let guard =
            crate::txn::cr::consistent_get_pinned(ctx, guard, |b| ctx.check_segment_block(self.table, rdba, b))?;
        if BlockHeader(&guard).block_type() != Some(BlockType::TableData) {
            return self.visit_cu_block(ctx, rdba, &guard, visit);
        }
        if in_place {
            self.walk_in_place(ctx, &guard, rdba, next, visit)
        } else {
            self.start_batches(&guard);
            self.walk_block(ctx, &guard, rdba, &mut Gathered::new(&guard), visit)
        }
    }

    /// Takes block `rdba`, a block of one of the table's compression units (the segment
    /// check let only those through): a CU its last piece completes goes to the consumer.
    /// Kept out of line, so that the row blocks' loop stays small.
    #[inline(never)]
    fn visit_cu_block<C: ScanConsumer>(
        &mut self,
        ctx: &AccessContext<'_>,
        rdba: u32,
        block: &[u8],
        visit: &mut C,
    ) -> Result<Flow> {
        let (table, kinds) = (self.table, &self.kinds);
        let flow = self.cus.block(ctx, rdba, block, &self.cu_columns, |cu| visit.cu(ctx, table, cu, kinds))?;
        Ok(flow.unwrap_or(Flow::Continue))
    }

    /// [`FullScan::walk_block`] for a consumer that takes rows in place: with the fast
    /// walk for the width of this scan, up to 16 columns, else every row the general way.
    fn walk_in_place<C: ScanConsumer>(
        &mut self,
        ctx: &AccessContext<'_>,
        bytes: &[u8],
        rdba: u32,
        next: Option<&[u8]>,
        visit: &mut C,
    ) -> Result<Flow> {
        macro_rules! by_width {
            ($($w:literal)*) => {
                match self.width() {
                    $($w => self.walk_fast::<$w, C>(ctx, bytes, rdba, next, visit),)*
                    _ => self.walk_block(ctx, bytes, rdba, &mut OneByOne::new(bytes, next), visit),
                }
            };
        }
        by_width!(1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16)
    }

    /// [`FullScan::walk_block`] with the fast walk of `W` columns: the rows it takes go to
    /// [`ScanConsumer::fast_rows`], every other row the general way.
    fn walk_fast<const W: usize, C: ScanConsumer>(
        &mut self,
        ctx: &AccessContext<'_>,
        bytes: &[u8],
        rdba: u32,
        next: Option<&[u8]>,
        visit: &mut C,
    ) -> Result<Flow> {
        let directory = DataBlock(bytes).directory();
        let mut rows = FastRows::<W>::new(bytes, directory, next.map(PrefetchTarget::of));
        self.walk_block(ctx, bytes, rdba, &mut rows, visit)
    }

    /// The walk of one block's row directory, the same for every consumer: `rows` hands
    /// over the rows it takes by itself (the fast walk's), then names the next slot it
    /// leaves to the general way. A whole row there is gathered into the batch when `rows`
    /// [`BlockRows::GATHERS`], else walked and handed over in place; a chained row is
    /// handed over on its own, after the batch gathered before it. Stops when the consumer
    /// says so; counts the rows handed over as gotten.
    #[inline(always)]
    fn walk_block<'b, R: BlockRows<'b>, C: ScanConsumer>(
        &mut self,
        ctx: &AccessContext<'_>,
        bytes: &'b [u8],
        rdba: u32,
        rows: &mut R,
        visit: &mut C,
    ) -> Result<Flow> {
        // Rows handed over one by one (a batch counts its own).
        let mut one_by_one = 0u64;
        let flow = loop {
            if rows.take_run(&self.kinds, rdba, visit)? == Flow::Stop {
                break Flow::Stop;
            }
            let Some((slot, entry)) = rows.next_slot() else {
                break if R::GATHERS { self.hand_over(bytes, rdba, ctx, visit)? } else { Flow::Continue };
            };
            let flow = match live_row(ctx, rdba, bytes, slot, entry)? {
                None => continue,
                Some(LiveRow::Whole { stream, column_count }) if R::GATHERS => {
                    self.gather(ctx, rdba, bytes.len(), slot, stream, column_count)?;
                    continue;
                }
                Some(LiveRow::Whole { stream, column_count }) => {
                    self.walk_one(ctx, rdba, slot, stream, column_count, visit)?
                }
                Some(LiveRow::Chained { column_count, fragment, next }) => {
                    // Rows stay in slot order: the batch gathered so far goes first.
                    if R::GATHERS && self.hand_over(bytes, rdba, ctx, visit)? == Flow::Stop {
                        break Flow::Stop;
                    }
                    self.visit_chained(ctx, rdba, slot, bytes, column_count, fragment, next, visit)?
                }
            };
            one_by_one += 1;
            if flow == Flow::Stop {
                break Flow::Stop;
            }
        };
        ctx.stats.add(Stat::TableScanRowsGotten, one_by_one + rows.taken_in_runs());
        Ok(flow)
    }

    /// Empties the batch and gives it room for every row of `block`, sized once per block.
    fn start_batches(&mut self, block: &[u8]) {
        let rows = DataBlock(block).row_count();
        self.starts.clear();
        self.slots.clear();
        self.starts.reserve(rows);
        let needed = rows * self.width();
        if self.spans.len() < needed {
            self.spans.resize(needed, ColumnSpan::NULL);
        }
    }

    /// Locates the first columns of one whole row (slot `slot` of block `rdba`, `stream`
    /// running to the block's end at `block_len`) and adds it to the batch.
    #[inline(always)]
    fn gather(
        &mut self,
        ctx: &AccessContext<'_>,
        rdba: u32,
        block_len: usize,
        slot: usize,
        stream: &[u8],
        column_count: usize,
    ) -> Result<()> {
        let width = self.width();
        let at = self.starts.len() * width;
        locate_columns(stream, column_count, &mut self.spans[at..at + width])
            .ok_or_else(|| ctx.corrupt(rdba, format!("row {slot}: column lengths run past the block")))?;
        self.starts.push((block_len - stream.len()) as u32);
        self.slots.push(slot as u16);
        Ok(())
    }

    /// Walks one whole row (its column stream and count) and hands it to the consumer.
    #[inline(always)]
    fn walk_one<C: ScanConsumer>(
        &mut self,
        ctx: &AccessContext<'_>,
        rdba: u32,
        slot: usize,
        stream: &[u8],
        column_count: usize,
        visit: &mut C,
    ) -> Result<Flow> {
        walk_lengths(stream, column_count, &mut self.positions)
            .ok_or_else(|| ctx.corrupt(rdba, format!("row {slot}: column lengths run past the block")))?;
        visit.row_in_place(WalkedRow { stream, positions: &self.positions, kinds: &self.kinds, rdba })
    }

    /// Hands the whole rows gathered so far to the consumer as one batch, counting them
    /// as gotten.
    fn hand_over<C: ScanConsumer>(
        &mut self,
        block: &[u8],
        rdba: u32,
        ctx: &AccessContext<'_>,
        visit: &mut C,
    ) -> Result<Flow> {
        if self.starts.is_empty() {
            return Ok(Flow::Continue);
        }
        ctx.stats.add(Stat::TableScanRowsGotten, self.starts.len() as u64);
        let used = self.starts.len() * self.width();
        let batch = BlockBatch {
            block,
            starts: &self.starts,
            slots: &self.slots,
            spans: &self.spans[..used],
            width: self.width(),
            kinds: &self.kinds,
            rdba,
        };
        let flow = visit.batch(&batch)?;
        self.starts.clear();
        self.slots.clear();
        Ok(flow)
    }

    #[allow(clippy::too_many_arguments)]
    fn visit_chained<C: ScanConsumer>(
        &mut self,
        ctx: &AccessContext<'_>,
        rdba: u32,
        slot: usize,
        block: &[u8],
        column_count: usize,
        fragment: &[u8],
        next: Option<PieceAddr>,
        visit: &mut C,
    ) -> Result<Flow> {
        let slot = slot as u16;
        // Follow the chain only if the columns the query needs are not all in the head
        // piece (Oracle fetches a continued row only when it must).
        if locate_columns(fragment, column_count, &mut self.chained_spans).is_some() {
            return visit.row(&BlockRow {
                stream: fragment,
                spans: &self.chained_spans,
                kinds: &self.kinds,
                rdba,
                slot,
            });
        }
        let mut chained = std::mem::take(&mut self.chained);
        assemble_row(ctx, rdba, block, fragment, next, &mut chained)?;
        let located = locate_columns(&chained, column_count, &mut self.chained_spans);
        let flow = match located {
            Some(_) => {
                visit.row(&BlockRow { stream: &chained, spans: &self.chained_spans, kinds: &self.kinds, rdba, slot })
            }
            None => Err(ctx.corrupt(rdba, "chained row: column lengths run past the assembled row")),
        };
        self.chained = chained;
        flow
    }
}

/// How a walk goes through one block's rows, the part of [`FullScan::walk_block`] that
/// differs by consumer: [`Gathered`] into batches, [`OneByOne`] in place the general way,
/// [`FastRows`] in place by the fast walk. The walk is monomorphised for each, so the
/// choice costs no dynamic dispatch per block or row.
trait BlockRows<'b> {
    /// Whether whole rows are gathered into [`BlockBatch`]es, rather than handed over in
    /// place one by one.
    const GATHERS: bool = false;

    /// Hands `visit` the rows this walk takes by itself (columns decoding as `kinds`, in
    /// block `rdba`), up to the next slot it leaves to the general way. None by default.
    #[inline(always)]
    fn take_run<C: ScanConsumer>(&mut self, _kinds: &[PayloadKind], _rdba: u32, _visit: &mut C) -> Result<Flow> {
        Ok(Flow::Continue)
    }

    /// The next slot to visit the general way, with its directory entry; `None` at the
    /// block's end.
    fn next_slot(&mut self) -> Option<(usize, &'b [u8])>;

    /// Rows [`BlockRows::take_run`] has handed over.
    #[inline(always)]
    fn taken_in_runs(&self) -> u64 {
        0
    }
}

/// Every slot of a block, for whole rows gathered into batches; the rows a few slots
/// ahead are prefetched as the walk goes.
struct Gathered<'b> {
    block: &'b [u8],
    directory: &'b [u8],
    entries: std::iter::Enumerate<std::slice::ChunksExact<'b, u8>>,
}

impl<'b> Gathered<'b> {
    #[inline(always)]
    fn new(block: &'b [u8]) -> Gathered<'b> {
        let directory = DataBlock(block).directory();
        Gathered { block, directory, entries: directory.chunks_exact(2).enumerate() }
    }
}

impl<'b> BlockRows<'b> for Gathered<'b> {
    const GATHERS: bool = true;

    #[inline(always)]
    fn next_slot(&mut self) -> Option<(usize, &'b [u8])> {
        let (slot, entry) = self.entries.next()?;
        // Rolling prefetch: start loading the row a few slots ahead while this one is
        // evaluated (a burst of prefetches for the whole block would overflow the CPU's
        // line-fill buffers and mostly be dropped).
        let ahead = 2 * (slot + PREFETCH_ROWS_AHEAD);
        if let Some(ahead) = self.directory.get(ahead..ahead + 2) {
            let at = u16::from_le_bytes([ahead[0], ahead[1]]) as usize;
            PrefetchTarget::of(self.block).range(at, at + ROW_PREFETCH_BYTES);
        }
        Some((slot, entry))
    }
}

/// Every slot of a block, for whole rows walked the general way and handed over in place;
/// the next block is prefetched a few lines per row.
struct OneByOne<'b> {
    entries: std::iter::Enumerate<std::slice::ChunksExact<'b, u8>>,
    upcoming: NextBlockPrefetch<'b>,
}

impl<'b> OneByOne<'b> {
    /// The slots of `block`, prefetching `next` on the way.
    #[inline(always)]
    fn new(block: &'b [u8], next: Option<&'b [u8]>) -> OneByOne<'b> {
        OneByOne {
            entries: DataBlock(block).directory().chunks_exact(2).enumerate(),
            upcoming: NextBlockPrefetch::new(next.map(PrefetchTarget::of)),
        }
    }
}

impl<'b> BlockRows<'b> for OneByOne<'b> {
    #[inline(always)]
    fn next_slot(&mut self) -> Option<(usize, &'b [u8])> {
        let slot = self.entries.next()?;
        self.upcoming.step();
        Some(slot)
    }
}

/// The fast walk's rows go to [`ScanConsumer::fast_rows`]; the slots it leaves, to the
/// general way.
impl<'b, const W: usize> BlockRows<'b> for FastRows<'b, W> {
    #[inline(always)]
    fn take_run<C: ScanConsumer>(&mut self, kinds: &[PayloadKind], rdba: u32, visit: &mut C) -> Result<Flow> {
        visit.fast_rows(self, kinds, rdba)
    }

    #[inline(always)]
    fn next_slot(&mut self) -> Option<(usize, &'b [u8])> {
        self.pending()
    }

    #[inline(always)]
    fn taken_in_runs(&self) -> u64 {
        self.taken()
    }
}

/// A live row head found through the row directory.
pub(crate) enum LiveRow<'b> {
    /// A row stored whole: its column stream (running on to the end of the block).
    Whole { stream: &'b [u8], column_count: usize },
    /// The head piece of a chained row.
    Chained { column_count: usize, fragment: &'b [u8], next: Option<PieceAddr> },
}

/// The row of directory entry `entry` (slot `slot`) of `block`, if it is a live head
/// piece: not an empty slot, not deleted, not a continuation piece, not a row whose
/// inserting statement has not ended. A slot pointing outside the block, or a chained
/// head cut short, is corruption. (The fault comes back small, so the per-row result
/// stays in registers; the error is built only when there is one.)
#[inline(always)]
pub(crate) fn live_row<'b>(
    ctx: &AccessContext<'_>,
    rdba: u32,
    block: &'b [u8],
    slot: usize,
    entry: &[u8],
) -> Result<Option<LiveRow<'b>>> {
    live_row_in(block, entry).map_err(|fault| {
        ctx.corrupt(
            rdba,
            match fault {
                RowFault::OutsideBlock => format!("row {slot} starts outside the block"),
                RowFault::ChainedHeaderCut => format!("row {slot}: chained row header runs past the block"),
            },
        )
    })
}

/// What is wrong with a directory entry.
#[derive(Debug, Clone, Copy)]
enum RowFault {
    OutsideBlock,
    ChainedHeaderCut,
}

#[inline(always)]
fn live_row_in<'b>(block: &'b [u8], entry: &[u8]) -> std::result::Result<Option<LiveRow<'b>>, RowFault> {
    let offset = u16::from_le_bytes([entry[0], entry[1]]) as usize;
    if offset == 0 {
        return Ok(None);
    }
    let piece = match block.get(offset..) {
        Some(p) if p.len() >= PIECE_HEADER => p,
        _ => return Err(RowFault::OutsideBlock),
    };
    if !is_visible_head(piece[0], piece[1]) {
        return Ok(None);
    }
    if piece[0] & FLAGS_WHOLE == FLAGS_WHOLE {
        return Ok(Some(LiveRow::Whole { stream: &piece[PIECE_HEADER..], column_count: piece[2] as usize }));
    }
    match RowPiece::new(piece).and_then(|p| p.body()) {
        Some(PieceBody::Fragment { column_count, fragment, next }) => {
            Ok(Some(LiveRow::Chained { column_count, fragment, next }))
        }
        _ => Err(RowFault::ChainedHeaderCut),
    }
}

/// Bytes of a row prefetched at a time: covers a row of the usual width.
const ROW_PREFETCH_BYTES: usize = 192;

/// Rows ahead of the current one whose bytes are prefetched.
const PREFETCH_ROWS_AHEAD: usize = 6;

/// The column stream of a chained row in `out` (replacing what it held): the head
/// piece's `fragment`, then the fragments that follow it, reached through next-piece
/// addresses with a consistent get each (`table fetch continued row`). `head_block` is
/// the head piece's block, read directly when a piece lives there too.
pub fn assemble_row(
    ctx: &AccessContext<'_>,
    head_rdba: u32,
    head_block: &[u8],
    fragment: &[u8],
    next: Option<PieceAddr>,
    out: &mut Vec<u8>,
) -> Result<()> {
    assemble_row_keeping(ctx, head_rdba, head_block, fragment, next, out, &mut None)
}

/// [`assemble_row`] for a caller that assembles many rows of one head block: the last
/// piece block read stays pinned and share-locked in `kept`, and a piece found there
/// again counts `buffer is pinned count` instead of a consistent get (the pieces of
/// rows migrated together lie together). The caller drops `kept` before it leaves the
/// head block, so it never holds more than the head block and one piece block, as
/// [`assemble_row`] does.
pub fn assemble_row_keeping<'c>(
    ctx: &AccessContext<'c>,
    head_rdba: u32,
    head_block: &[u8],
    fragment: &[u8],
    mut next: Option<PieceAddr>,
    out: &mut Vec<u8>,
    kept: &mut Option<crate::buffer::ReadGuard<'c>>,
) -> Result<()> {
    out.clear();
    out.extend_from_slice(fragment);
    let mut hops = 0u32;
    while let Some(addr) = next {
        hops += 1;
        if hops > 1 << 16 {
            return Err(ctx.corrupt(head_rdba, "chained row has a cycle of pieces"));
        }
        ctx.stats.add(Stat::TableFetchContinuedRow, 1);
        let bytes: &[u8] = if addr.rdba == head_rdba {
            head_block
        } else {
            match kept {
                Some(guard) if guard.rdba() == addr.rdba => ctx.stats.add(Stat::BufferIsPinned, 1),
                _ => {
                    // The block let go before the next is got: one piece block at a time.
                    *kept = None;
                    *kept = Some(ctx.cache.consistent_get(ctx.stats, addr.rdba)?);
                }
            }
            kept.as_deref().expect("kept just above")
        };
        let piece = DataBlock(bytes).piece_bytes(addr.slot as usize).and_then(RowPiece::new);
        match piece.and_then(|p| p.body()) {
            Some(PieceBody::Fragment { fragment, next: n, .. }) => {
                out.extend_from_slice(fragment);
                next = n;
            }
            _ => return Err(ctx.corrupt(addr.rdba, format!("chained row piece in slot {} is missing", addr.slot))),
        }
    }
    Ok(())
}
