//! Appending rows to a table's segment.
//!
//! An [`Inserter`] holds the table's writer lock for one statement. Rows go into the last
//! block below the high-water mark while it keeps PCTFREE free (an empty block takes any
//! row that fits it), then into new blocks formatted above it (allocating extents as
//! needed). A row that cannot fit in an empty block is chained: its head piece goes where
//! the row would have gone, the rest into new blocks, one fragment each. A row that fits
//! is encoded straight into the space found for it in the block, or, when a load has
//! already encoded it ([`Inserter::insert_encoded`]), copied there. The current
//! block is kept across up to 64 rows (`ROWS_PER_GET`) per current-mode get. When asked
//! ([`Inserter::track_rowids`]), it keeps every row's rowid for the table's indexes.
//!
//! Visibility: the segment header (extent map, high-water mark) is written when the
//! statement ends, so blocks formatted by the statement are unreachable until then. Each
//! row carries the lock byte [`row::LOCK_INSERT_IN_PROGRESS`], which scans skip, until
//! the statement leaves its block: then the block's rows are handed to the transaction,
//! one undo record for the slots filled, the rows locked through the transaction's ITL
//! slot, so that other sessions see them only once it commits (their consistent reads
//! roll the slots back) and its rollback empties them. If the statement fails,
//! [`Inserter::rollback`] keeps the old high-water mark and removes the rows it added to
//! the old last block that were not handed over yet (the statement's undo removes the
//! others): nothing of a failed statement is ever visible.

use super::AccessContext;
use crate::buffer::WriteGuard;
use crate::catalog::TableDef;
use crate::error::{Error, Result};
use crate::stats::Stat;
use crate::storage::block::{self, DEFAULT_ITL_SLOTS, DataBlock, DataBlockMut, HEADER_LEN, ITL_LEN};
use crate::storage::itl::{self, Itl};
use crate::storage::row::{self, PieceAddr};
use crate::storage::segment::SegmentMap;
use crate::txn::Xid;
use crate::txn::change::{BlockUndo, Obstacle, RowLocks, UndoKind, point_itl, take_itl};
use crate::types::Datum;

/// Rows placed under one current-mode get of a block before it is released.
const ROWS_PER_GET: u32 = 64;

/// Appends rows to one table for one statement.
pub struct Inserter<'a> {
    ctx: &'a AccessContext<'a>,
    table: &'a TableDef,
    /// The table's writer lock, held for the whole statement.
    _writer: parking_lot::ArcMutexGuard<parking_lot::RawMutex, ()>,
    map: SegmentMap,
    /// The high-water mark and the allocated blocks as the statement found them.
    original_hwm: u32,
    original_allocated: u32,
    /// The last block below the old high-water mark and its row count before the
    /// statement, restored by rollback.
    old_last_block: Option<(u32, usize)>,
    /// The block rows go into.
    current: Option<u32>,
    /// The current block, kept (exclusively) across up to `ROWS_PER_GET` rows so that a
    /// load does not pay a current-mode get per row; readers of the block wait at most
    /// that many rows.
    held: Option<WriteGuard<'a>>,
    held_rows: u32,
    /// Bytes to keep free in each block (PCTFREE).
    reserve: usize,
    /// Where a row too long for one block is encoded before it is cut into pieces.
    row_buf: Vec<u8>,
    rows: u64,
    /// The transaction the rows belong to.
    xid: Xid,
    /// The block rows are going into, its ITL slot for the transaction and the first slot
    /// the statement filled in it; its rows are handed to the transaction (locked through
    /// the ITL slot, with one undo record) when the statement leaves the block.
    open: Option<OpenBlock>,
    /// Whether the old last block's rows have been handed to the transaction.
    old_last_handed_over: bool,
    /// The transaction's newest undo record before the statement: a failed statement's
    /// undo is applied back to here before the writer lock is let go.
    undo_mark: crate::txn::Uba,
    /// The transaction's snapshot if it is serializable.
    fixed_snapshot: Option<u64>,
    /// Blocks whose rows were handed to the transaction, for its commit cleanout (at most
    /// a tenth of the cache: commit cleans out no more).
    handed_over: Vec<u32>,
    /// The rowid of each row inserted, in order, when asked for ([`Inserter::track_rowids`]).
    rowids: Option<Vec<PieceAddr>>,
}

/// A block the statement is filling.
#[derive(Debug, Clone, Copy)]
struct OpenBlock {
    rdba: u32,
    itl: usize,
    first_slot: u16,
    prev_itl: Itl,
}

impl<'a> Inserter<'a> {
    /// An inserter for transaction `xid`; `fixed_snapshot` is its snapshot if it is
    /// serializable (see [`take_itl`]).
    pub fn new(
        ctx: &'a AccessContext<'a>,
        table: &'a TableDef,
        xid: Xid,
        fixed_snapshot: Option<u64>,
    ) -> Result<Inserter<'a>> {
        let writer = ctx.locks.table(table.object_id).insert_lock(ctx.stats);
        let map = super::segments::read_map(ctx, table)?;
        let old_last_block = if map.hwm > 1 {
            let rdba = map
                .block_address(map.hwm - 1)
                .ok_or_else(|| ctx.corrupt(table.segment_header, "high-water mark past the extent map"))?;
            let guard = ctx.cache.consistent_get(ctx.stats, rdba)?;
            // The last block of a compressed table's load is a compression unit's: rows
            // go into new blocks after it.
            let rows = block::BlockHeader(&guard).block_type() == Some(block::BlockType::TableData);
            rows.then(|| (rdba, DataBlock(&guard).row_count()))
        } else {
            None
        };
        Ok(Inserter {
            ctx,
            table,
            _writer: writer,
            original_hwm: map.hwm,
            original_allocated: map.allocated,
            map,
            old_last_block,
            current: None,
            held: None,
            held_rows: 0,
            reserve: ctx.space.block_size * usize::from(table.pctfree) / 100,
            row_buf: Vec::new(),
            rows: 0,
            xid,
            open: None,
            old_last_handed_over: false,
            handed_over: Vec::new(),
            rowids: None,
            undo_mark: ctx.undo.last_record(ctx, xid)?,
            fixed_snapshot,
        })
    }

    /// Keeps the rowid of every row inserted from now on (for the table's indexes).
    pub fn track_rowids(&mut self) {
        self.rowids.get_or_insert_with(Vec::new);
    }

    /// The rowids kept since [`Inserter::track_rowids`], in insert order.
    pub fn take_rowids(&mut self) -> Vec<PieceAddr> {
        self.rowids.take().unwrap_or_default()
    }

    /// Appends one row whose values are already coerced to the column types. A row that
    /// fits in a block is encoded straight into it; a longer one is encoded into a buffer
    /// first and chained.
    pub fn insert(&mut self, values: &[Datum<'_>]) -> Result<()> {
        let len = row::whole_row_len(values);
        let result = if DataBlockMut::space_needed(len) > self.empty_block_capacity() {
            let mut buf = std::mem::take(&mut self.row_buf);
            row::encode_whole_row(values, &mut buf);
            let result = self.place_chained(&buf);
            self.row_buf = buf;
            result
        } else {
            self.place(len, |space: &mut [u8]| row::put_whole_row(values, space))
        };
        let rowid = result?;
        self.count_row(rowid);
        Ok(())
    }

    /// Appends one row already encoded as a whole single-piece row (as
    /// [`row::encode_whole_row`] writes it): copied into its block, or chained if it does
    /// not fit in one.
    pub fn insert_encoded(&mut self, image: &[u8]) -> Result<()> {
        let rowid = if DataBlockMut::space_needed(image.len()) > self.empty_block_capacity() {
            self.place_chained(image)?
        } else {
            self.place(image.len(), |space: &mut [u8]| space.copy_from_slice(image))?
        };
        self.count_row(rowid);
        Ok(())
    }

    fn count_row(&mut self, rowid: PieceAddr) {
        self.rows += 1;
        self.ctx.stats.add(Stat::RowsInserted, 1);
        if let Some(rowids) = &mut self.rowids {
            rowids.push(rowid);
        }
    }

    /// Places a row piece of `len` bytes (it fits in an empty block), which `write` writes
    /// into the space found for it; the piece's lock byte is then set to
    /// [`row::LOCK_INSERT_IN_PROGRESS`] in the same pass (see [`Self::hide_until_finished`]).
    fn place(&mut self, len: usize, write: impl Fn(&mut [u8])) -> Result<PieceAddr> {
        debug_assert!(len >= row::PIECE_HEADER, "a row piece has its header");
        let write = |space: &mut [u8]| {
            write(space);
            space[1] = row::LOCK_INSERT_IN_PROGRESS;
        };
        let mut guard = self.take_current()?;
        // PCTFREE keeps room in blocks that hold rows; an empty block takes any row that fits.
        let reserve = if DataBlock(&guard).row_count() == 0 { 0 } else { self.reserve };
        let opened = self.open_block(&mut guard);
        let fitted = if opened { DataBlockMut(&mut guard).insert_piece_with(len, reserve, write) } else { None };
        let slot = match fitted {
            Some(slot) => slot,
            None => {
                self.hand_over(&mut guard)?;
                drop(guard);
                guard = self.format_next_block()?;
                assert!(self.open_block(&mut guard), "a new block has free ITL slots");
                DataBlockMut(&mut guard)
                    .insert_piece_with(len, 0, write)
                    .expect("a row that fits an empty block fits a freshly formatted one")
            }
        };
        block::set_scn(&mut guard, self.ctx.scn);
        let addr = PieceAddr { rdba: guard.rdba(), slot };
        self.keep(guard);
        Ok(addr)
    }

    /// Stores the rest of a row migrated out of its block by an UPDATE: one piece (it
    /// must fit in an empty block), not a row of its own. Returns where it went.
    pub fn insert_migrated_piece(&mut self, piece: &[u8]) -> Result<PieceAddr> {
        if DataBlockMut::space_needed(piece.len()) > self.empty_block_capacity() {
            return Err(Error::unsupported(format!(
                "an UPDATE that makes a row of {} longer than a block (chaining an updated row)",
                self.table.name
            )));
        }
        self.place(piece.len(), |space: &mut [u8]| space.copy_from_slice(piece))
    }

    /// Makes `guard`'s block the open one, taking an ITL slot for the transaction (marked
    /// with no undo yet: the statement's rows stay hidden by their lock byte until handed
    /// over). False if every ITL slot is held by another active transaction.
    fn open_block(&mut self, guard: &mut WriteGuard<'a>) -> bool {
        if self.open.is_some_and(|o| o.rdba == guard.rdba()) {
            return true;
        }
        let enqueues = &self.ctx.enqueues;
        let index = match take_itl(guard, self.xid, |x| enqueues.is_active(x), self.fixed_snapshot, RowLocks::LockBytes)
        {
            Ok(index) => index,
            Err(Obstacle::Busy(_) | Obstacle::CannotSerialize | Obstacle::Corrupt(_)) => return false,
        };
        let mut prev_itl = itl::get(guard, index);
        if prev_itl.xid != self.xid {
            // A slot taken over from an ended transaction gets an undo record at once, so
            // readers older than that transaction's commit can restore the slot and roll it
            // back; a free slot needs none (no undo until rows are handed over).
            let uba = if prev_itl.is_free() {
                crate::txn::Uba::NONE
            } else {
                match self.take_over_record(guard, index, &prev_itl) {
                    Ok(uba) => uba,
                    Err(_) => return false,
                }
            };
            itl::put(guard, index, &Itl { xid: self.xid, uba, ..Itl::default() });
            // What the statement's own undo for this block restores: the slot as taken.
            prev_itl = itl::get(guard, index);
        }
        let first_slot = DataBlock(guard).row_count() as u16;
        self.open = Some(OpenBlock { rdba: guard.rdba(), itl: index, first_slot, prev_itl });
        true
    }

    /// Appends the undo record of taking over ITL slot `index` (holding `prev_itl`) of the
    /// block in `guard`: an empty range of inserted slots.
    fn take_over_record(&self, guard: &WriteGuard<'a>, index: usize, prev_itl: &Itl) -> Result<crate::txn::Uba> {
        let rows = DataBlock(guard).row_count() as u16;
        self.append_inserted_slots(guard.rdba(), index, rows..rows, prev_itl)
    }

    /// Appends the undo record of inserts that filled `slots` of block `rdba` through ITL
    /// slot `index`, which held `prev_itl` before.
    fn append_inserted_slots(
        &self,
        rdba: u32,
        index: usize,
        slots: std::ops::Range<u16>,
        prev_itl: &Itl,
    ) -> Result<crate::txn::Uba> {
        let mut body = Vec::with_capacity(64);
        BlockUndo {
            kind: UndoKind::InsertedSlots,
            itl: index as u8,
            slot: slots.start,
            slot_end: slots.end,
            object_id: self.table.object_id,
            rdba,
            prev_itl: *prev_itl,
            before: &[],
        }
        .encode(&mut body);
        self.ctx.undo.append(self.ctx, self.xid, &body)
    }

    /// Hands the rows the statement put into the open block (held in `guard`) to the
    /// transaction: one undo record for the slots filled, the ITL slot pointed at it, and
    /// each row locked through the slot.
    fn hand_over(&mut self, guard: &mut WriteGuard<'a>) -> Result<()> {
        let Some(open) = self.open.take() else { return Ok(()) };
        debug_assert_eq!(open.rdba, guard.rdba(), "the open block is the one held");
        let rows = DataBlock(guard).row_count() as u16;
        if rows == open.first_slot {
            itl::put(guard, open.itl, &open.prev_itl);
            return Ok(());
        }
        if self.handed_over.len() < crate::txn::transaction::commit_cleanout_limit(self.ctx.cache) {
            self.handed_over.push(open.rdba);
        }
        let uba = self.append_inserted_slots(open.rdba, open.itl, open.first_slot..rows, &open.prev_itl)?;
        if self.old_last_block.is_some_and(|(rdba, _)| rdba == open.rdba) {
            self.old_last_handed_over = true;
        }
        let lock = open.itl as u8 + 1;
        DataBlockMut(guard).set_locks(usize::from(open.first_slot)..usize::from(rows), lock);
        let new_locks = (rows - open.first_slot).min(255) as u8;
        point_itl(guard, open.itl, &open.prev_itl, self.xid, uba, new_locks);
        self.ctx.rows_changed(open.rdba, guard);
        Ok(())
    }

    /// The current block: the one still held, or a fresh current-mode get.
    fn take_current(&mut self) -> Result<WriteGuard<'a>> {
        match self.held.take() {
            Some(guard) if Some(guard.rdba()) == self.current => Ok(guard),
            _ => {
                self.held_rows = 0;
                self.current_block()
            }
        }
    }

    /// Keeps the current block for the next row, unless it has been held long enough.
    fn keep(&mut self, guard: WriteGuard<'a>) {
        self.held_rows += 1;
        if self.held_rows < ROWS_PER_GET {
            self.held = Some(guard);
        } else {
            self.held_rows = 0;
        }
    }

    /// Rows added to a block that scans can already see (the last block below the old
    /// high-water mark) are locked until the statement ends; newer blocks are above the
    /// published high-water mark and invisible anyway.
    fn hide_until_finished(&self, guard: &mut WriteGuard<'a>, slot: u16) {
        DataBlockMut(guard).set_lock(slot as usize, row::LOCK_INSERT_IN_PROGRESS);
    }

    /// The block rows go into, got in current mode: the last block below the high-water
    /// mark, or a new one if the segment has none (or its last is not a block of rows).
    fn current_block(&mut self) -> Result<WriteGuard<'a>> {
        match self.current {
            Some(rdba) => self.ctx.cache.current_get(self.ctx.stats, rdba),
            None if self.old_last_block.is_some() => {
                let rdba = self.map.block_address(self.map.hwm - 1).expect("checked in new()");
                self.current = Some(rdba);
                self.ctx.cache.current_get(self.ctx.stats, rdba)
            }
            None => self.format_next_block(),
        }
    }

    /// Free bytes of a freshly formatted block.
    fn empty_block_capacity(&self) -> usize {
        self.ctx.space.block_size - HEADER_LEN - usize::from(DEFAULT_ITL_SLOTS) * ITL_LEN
    }

    /// Formats the block at the high-water mark and raises it, allocating an extent first
    /// when the segment has no block left.
    fn format_next_block(&mut self) -> Result<WriteGuard<'a>> {
        let guard = self.format_block_at_hwm()?;
        self.current = Some(guard.rdba());
        Ok(guard)
    }

    fn next_block_address(&mut self) -> Result<u32> {
        if self.map.hwm >= self.map.allocated {
            let first = self.ctx.space.allocate_extent()?;
            if !self.map.add_extent(first, self.ctx.space.extent_blocks, self.ctx.space.block_size) {
                self.ctx.space.free_extents([first]);
                return Err(Error::InvalidValue {
                    context: self.table.name.clone(),
                    message: "segment extent map is full; create the database with a larger extent size".into(),
                });
            }
        }
        Ok(self.map.block_address(self.map.hwm).expect("the block at the high-water mark is allocated"))
    }

    /// Stores a row too large for one block as a chain of fragments: the head in the
    /// current block (or a new one), each further fragment alone in a new block.
    /// Places a row too long for one block as a chain of pieces; returns its head's address.
    fn place_chained(&mut self, piece: &[u8]) -> Result<PieceAddr> {
        let column_count = piece[2];
        let stream = &piece[row::PIECE_HEADER..];
        let per_piece = row::fragment_overhead(true) + 2;
        let mut head = self.take_current()?;
        if DataBlock(&head).free_space() < per_piece + 1 + ITL_LEN || !self.open_block(&mut head) {
            self.hand_over(&mut head)?;
            drop(head);
            head = self.format_next_block()?;
            assert!(self.open_block(&mut head), "a new block has free ITL slots");
        }
        let head_room = DataBlock(&head).free_space() - per_piece;
        let full_room = self.empty_block_capacity() - per_piece;
        let mut cuts = vec![head_room.min(stream.len())];
        let mut done = cuts[0];
        while done < stream.len() {
            let n = full_room.min(stream.len() - done);
            cuts.push(n);
            done += n;
        }
        // Each further fragment goes alone into slot 0 of a new block.
        let mut addrs = vec![PieceAddr { rdba: head.rdba(), slot: DataBlock(&head).row_count() as u16 }];
        let mut blocks = vec![head];
        for _ in 1..cuts.len() {
            let guard = self.format_block_at_hwm()?;
            addrs.push(PieceAddr { rdba: guard.rdba(), slot: 0 });
            blocks.push(guard);
        }
        let mut offset = 0;
        let mut encoded = Vec::new();
        for (i, (&len, target)) in cuts.iter().zip(blocks.iter_mut()).enumerate() {
            encoded.clear();
            let next = addrs.get(i + 1).copied();
            row::encode_fragment(i == 0, column_count, next, &stream[offset..offset + len], &mut encoded);
            offset += len;
            let slot = DataBlockMut(target).insert_piece(&encoded, 0);
            assert_eq!(slot, Some(addrs[i].slot), "a chained piece goes into the slot reserved for it");
            if i == 0 {
                self.hide_until_finished(target, addrs[0].slot);
            }
            block::set_scn(target, self.ctx.scn);
        }
        self.hand_over(&mut blocks[0])?;
        self.current = addrs.last().map(|a| a.rdba);
        Ok(addrs[0])
    }

    /// Formats the block at the high-water mark and raises the mark; the block becomes
    /// current only through [`Self::format_next_block`].
    fn format_block_at_hwm(&mut self) -> Result<WriteGuard<'a>> {
        let rdba = self.next_block_address()?;
        let mut guard = self.ctx.cache.new_block(self.ctx.stats, rdba, self.table.object_id)?;
        // A new block's buffer comes zeroed.
        DataBlockMut(&mut guard).format_zeroed(rdba, self.table.object_id, DEFAULT_ITL_SLOTS);
        block::set_scn(&mut guard, self.ctx.scn);
        self.map.hwm += 1;
        Ok(guard)
    }

    /// Ends the statement: hands the rows of the block it was filling to the transaction
    /// and publishes the new high-water mark. Returns the rows inserted and the blocks to
    /// clean out at commit.
    pub fn finish(mut self) -> Result<(u64, Vec<u32>)> {
        let held = self.held.take();
        if let Some(open) = self.open {
            let mut guard = match held {
                Some(guard) if guard.rdba() == open.rdba => guard,
                _ => self.ctx.cache.current_get(self.ctx.stats, open.rdba)?,
            };
            self.hand_over(&mut guard)?;
        }
        self.write_header(self.map.hwm)?;
        Ok((self.rows, std::mem::take(&mut self.handed_over)))
    }

    /// Undoes the statement: removes its rows from the old last block and keeps the old
    /// high-water mark (extents it allocated stay with the segment).
    pub fn rollback(mut self) -> Result<()> {
        self.held = None;
        // First the statement's undo (rows handed over, ITL slots taken over), while the
        // writer lock still keeps others from formatting the blocks above the old
        // high-water mark that this undo names.
        crate::txn::transaction::undo_to(self.ctx, self.xid, self.undo_mark, false)?;
        if let Some((rdba, rows)) = self.old_last_block {
            let mut guard = self.ctx.cache.current_get(self.ctx.stats, rdba)?;
            if self.old_last_handed_over {
                // The rows are the transaction's now: the statement's undo removes them.
            } else {
                DataBlockMut(&mut guard).truncate_rows(rows);
                if let Some(open) = self.open.filter(|o| o.rdba == rdba) {
                    itl::put(&mut guard, open.itl, &open.prev_itl);
                }
            }
        }
        self.write_header(self.original_hwm)
    }

    /// Writes the extent map with high-water mark `hwm` into the segment header, unless
    /// it would write the map the statement found (no block formatted, no extent added):
    /// most statements fill blocks below the mark and leave the header alone.
    fn write_header(&mut self, hwm: u32) -> Result<()> {
        if hwm == self.original_hwm && self.map.allocated == self.original_allocated {
            return Ok(());
        }
        let rdba = self.table.segment_header;
        let mut header = self.ctx.cache.current_get(self.ctx.stats, rdba)?;
        let map = SegmentMap { hwm, ..self.map.clone() };
        map.write(&mut header, rdba, self.table.object_id);
        block::set_scn(&mut header, self.ctx.scn);
        Ok(())
    }
}
