//! Changing rows in place for UPDATE and DELETE, inside a transaction.
//!
//! The rows to change are found as of the statement's snapshot (consistent gets, CR
//! clones where needed), a block at a time: every block of the segment, or the blocks of
//! the rowids an index scan found ([`RowsFrom`]), one get for each run of rowids in one
//! block; then the block is got in current mode and each of those rows is locked and
//! changed: the row's lock is checked (a row locked by another active transaction is
//! waited for, then looked at again), the statement's decision is taken again on the
//! current row (so an update computes from the latest committed value and no update is
//! lost), an ITL slot is taken, the undo record written, and only then the row changed.
//!
//! A row that grows past its block's free space migrates, as in Oracle: its column
//! stream moves, as one piece, into a block with room (placed the way inserts place
//! rows), and the row's head in its own block becomes a forwarding piece pointing at it
//! (a chained row whose head holds no columns). The forwarding piece always fits where
//! the row is: a block gives every piece at least a forwarding head's room
//! (`storage::block::MIN_PIECE_ROOM`). Rows already chained are read whole by following
//! their pieces; an update rewrites their head, leaving the old pieces unreferenced
//! (their space is not reused).
//!
//! Space: a change that fits neither the row's room nor the free space may compact the
//! block, keeping the room of every row an active transaction locked (this one's
//! included), so that every active transaction's undo still fits (see `txn::change`).

use super::AccessContext;
use super::full_scan::{LiveRow, live_row};
use super::row_view::BlockRow;
use crate::catalog::TableDef;
use crate::error::{Error, Result};
use crate::stats::Stat;
use crate::storage::block::{self, DataBlock, DataBlockMut};
use crate::storage::itl::{self, Itl};
use crate::storage::row::{self, ColumnSpan, FLAG_DELETED, PIECE_HEADER, PieceAddr, RowPiece, locate_columns};
use crate::txn::change::{BlockUndo, Obstacle, UndoKind, cannot_serialize, kept_rooms, row_lock_holder, take_itl};
use crate::txn::cr::{consistent_get, row_changed_after};
use crate::txn::transaction::Transaction;
use crate::types::encoding::PayloadKind;

/// What to do with one row.
pub enum RowEdit {
    /// Leave it (it no longer qualifies).
    Keep,
    Delete,
    /// Replace it with this whole-row piece (flag, lock, column count, columns).
    Replace(Vec<u8>),
}

/// The statement-side decisions of an UPDATE or DELETE.
pub trait RowChanges {
    /// Whether a row (as of the snapshot) qualifies.
    fn qualifies(&mut self, row: &BlockRow<'_>) -> Result<bool>;
    /// What to do with the current version of a qualifying row. May be asked more than
    /// once for one row (after a wait); the last answer is the one made.
    fn edit(&mut self, row: &BlockRow<'_>) -> Result<RowEdit>;
    /// The last edit of the row at `rowid` was made.
    fn changed(&mut self, _rowid: crate::storage::row::PieceAddr) {}
    /// The last edit of the row at `rowid` (a row of a compression unit, an update) was
    /// made by marking it deleted: its new version is inserted elsewhere, at a new rowid.
    fn moved_out(&mut self, rowid: crate::storage::row::PieceAddr) {
        self.changed(rowid)
    }
}

/// Where an UPDATE or DELETE looks for its rows.
#[derive(Clone, Copy)]
pub enum RowsFrom<'r> {
    /// Every block of the segment below its high-water mark.
    FullScan,
    /// The rows at these head addresses (an index range scan's rowids, as of the
    /// statement's snapshot), in this order; each is still checked with
    /// [`RowChanges::qualifies`].
    Rowids(&'r [PieceAddr]),
    /// Every row of these blocks, in this order (the row blocks of a compressed table).
    Blocks(&'r [u32]),
}

/// Changes the qualifying rows of `table` among those `from` names (at most `limit`);
/// returns how many changed.
#[allow(clippy::too_many_arguments)]
pub fn change_rows(
    ctx: &AccessContext<'_>,
    txn: &mut Transaction,
    sid: u32,
    table: &TableDef,
    from: RowsFrom<'_>,
    limit: Option<u64>,
    changes: &mut dyn RowChanges,
) -> Result<u64> {
    let locks = ctx.locks.table(table.object_id);
    let _no_ddl = locks.visibility.read_recursive();
    let kinds: Vec<PayloadKind> = table.columns.iter().map(|c| PayloadKind::from(c.data_type)).collect();
    let mut changer = Changer {
        ctx,
        txn,
        sid,
        table,
        changes,
        limit: limit.unwrap_or(u64::MAX),
        changed: 0,
        spans: vec![ColumnSpan::NULL; kinds.len()],
        kinds,
        candidates: Vec::new(),
        seen: Vec::new(),
        scratch: Vec::new(),
    };
    match from {
        RowsFrom::FullScan => {
            let map = super::segments::read_map(ctx, table)?;
            for run in map.scan_runs(ctx.space.extent_blocks) {
                for rdba in run.first..run.first + run.blocks {
                    if changer.changed >= changer.limit {
                        return Ok(changer.changed);
                    }
                    changer.block(rdba, None)?;
                }
            }
        }
        RowsFrom::Blocks(blocks) => {
            for &rdba in blocks {
                if changer.changed >= changer.limit {
                    return Ok(changer.changed);
                }
                changer.block(rdba, None)?;
            }
        }
        RowsFrom::Rowids(rowids) => {
            // Runs of rows in one block, in the order given: one consistent get a run.
            for run in rowids.chunk_by(|a, b| a.rdba == b.rdba) {
                if changer.changed >= changer.limit {
                    return Ok(changer.changed);
                }
                changer.block(run[0].rdba, Some(run))?;
            }
        }
    }
    Ok(changer.changed)
}

/// One statement's changing of rows, block by block.
struct Changer<'a, 'c> {
    ctx: &'a AccessContext<'c>,
    txn: &'a mut Transaction,
    sid: u32,
    table: &'a TableDef,
    changes: &'a mut dyn RowChanges,
    limit: u64,
    changed: u64,
    kinds: Vec<PayloadKind>,
    spans: Vec<ColumnSpan>,
    /// The qualifying slots of the block at hand.
    candidates: Vec<u16>,
    /// A serializable transaction's candidates as its snapshot shows them (head pieces).
    seen: Vec<Vec<u8>>,
    scratch: Vec<u8>,
}

impl Changer<'_, '_> {
    /// Finds the qualifying rows of block `rdba` as of the snapshot (among the rows of
    /// `run`, all in that block, or every row without one), then changes each in current
    /// mode.
    fn block(&mut self, rdba: u32, run: Option<&[PieceAddr]>) -> Result<()> {
        let ctx = self.ctx;
        self.candidates.clear();
        self.seen.clear();
        let serializable = self.txn.snapshot.is_some();
        {
            let guard = consistent_get(ctx, rdba, |b| ctx.check_table_block(self.table, rdba, b))?;
            let blk = DataBlock(&guard);
            // A slot past the block's directory holds no row (`whole_row` says so).
            let picked = run.map(|r| r.iter().map(|a| usize::from(a.slot)));
            let all = run.is_none().then_some(0..blk.row_count());
            for slot in picked.into_iter().flatten().chain(all.into_iter().flatten()) {
                if self.changed + self.candidates.len() as u64 >= self.limit {
                    break;
                }
                let Some(row) = whole_row(ctx, &guard, rdba, slot, &self.kinds, &mut self.spans, &mut self.scratch)?
                else {
                    continue;
                };
                if self.changes.qualifies(&row)? {
                    self.candidates.push(slot as u16);
                    if serializable {
                        self.seen.push(head_piece(&guard, slot).map(<[u8]>::to_vec).unwrap_or_default());
                    }
                }
            }
        }
        for i in 0..self.candidates.len() {
            let slot = usize::from(self.candidates[i]);
            let target = Target { rdba, slot, seen: self.seen.get(i).map(Vec::as_slice) };
            if change_one(
                ctx,
                self.txn,
                self.sid,
                self.table,
                target,
                &self.kinds,
                &mut self.spans,
                &mut self.scratch,
                self.changes,
            )? {
                self.changed += 1;
            }
        }
        Ok(())
    }
}

/// The live row whose head is in `slot`, columns located (a chained or migrated row is
/// assembled into `scratch`); `None` for an empty, deleted or continuation slot. Which
/// slots hold a live row, and which are corrupt, is the full scan's rule
/// ([`live_row`]), so every path that reads a row by its address agrees with it.
/// (Inline: it is a fetch by rowid's per-row work.)
#[inline]
pub(crate) fn whole_row<'b>(
    ctx: &AccessContext<'_>,
    bytes: &'b [u8],
    rdba: u32,
    slot: usize,
    kinds: &'b [PayloadKind],
    spans: &'b mut [ColumnSpan],
    scratch: &'b mut Vec<u8>,
) -> Result<Option<BlockRow<'b>>> {
    whole_row_keeping(ctx, bytes, rdba, slot, kinds, spans, scratch, &mut None, None)
}

/// [`whole_row`] for a caller that reads many rows of one block: a chained row's piece
/// block stays in `piece_block` for the next row's pieces (see
/// [`super::full_scan::assemble_row_keeping`]), and the time spent assembling chained
/// rows is added to `chained_time` when given (population's phase; a row stored whole
/// reads no clock).
#[allow(clippy::too_many_arguments)]
pub(crate) fn whole_row_keeping<'b, 'c>(
    ctx: &AccessContext<'c>,
    bytes: &'b [u8],
    rdba: u32,
    slot: usize,
    kinds: &'b [PayloadKind],
    spans: &'b mut [ColumnSpan],
    scratch: &'b mut Vec<u8>,
    piece_block: &mut Option<crate::buffer::ReadGuard<'c>>,
    chained_time: Option<&mut std::time::Duration>,
) -> Result<Option<BlockRow<'b>>> {
    let Some(entry) = DataBlock(bytes).directory().get(2 * slot..2 * slot + 2) else { return Ok(None) };
    let (stream, column_count): (&[u8], usize) = match live_row(ctx, rdba, bytes, slot, entry)? {
        None => return Ok(None),
        Some(LiveRow::Whole { stream, column_count }) => (stream, column_count),
        Some(LiveRow::Chained { column_count, fragment, next }) => {
            let started = chained_time.is_some().then(std::time::Instant::now);
            super::full_scan::assemble_row_keeping(ctx, rdba, bytes, fragment, next, scratch, piece_block)?;
            if let (Some(spent), Some(started)) = (chained_time, started) {
                *spent += started.elapsed();
            }
            (scratch, column_count)
        }
    };
    spans.fill(ColumnSpan::NULL);
    locate_columns(stream, column_count, spans)
        .ok_or_else(|| ctx.corrupt(rdba, format!("row {slot} runs past its block")))?;
    Ok(Some(BlockRow { stream, spans, kinds, rdba, slot: slot as u16 }))
}

/// The forwarding head of a migrated row: a chained head with no columns of its own,
/// pointing at the piece that holds the row's column stream.
fn forwarding_head(column_count: u8, to: row::PieceAddr) -> Vec<u8> {
    let mut head = Vec::with_capacity(row::fragment_overhead(true));
    row::encode_fragment(true, column_count, Some(to), &[], &mut head);
    head
}

/// Moves the column stream of `piece` (a whole row) into a block with room, for the
/// transaction `xid`; returns where it went and the blocks to clean out at commit.
fn migrate(
    ctx: &AccessContext<'_>,
    table: &TableDef,
    xid: crate::txn::Xid,
    fixed_snapshot: Option<u64>,
    piece: &[u8],
) -> Result<(row::PieceAddr, Vec<u32>)> {
    let mut rest = Vec::with_capacity(piece.len() + 4);
    row::encode_fragment(false, 0, None, &piece[PIECE_HEADER..], &mut rest);
    let mut inserter = super::heap::Inserter::new(ctx, table, xid, fixed_snapshot)?;
    match inserter.insert_migrated_piece(&rest) {
        Ok(addr) => inserter.finish().map(|(_, blocks)| (addr, blocks)),
        Err(e) => {
            inserter.rollback()?;
            Err(e)
        }
    }
}

/// The stored head piece in `slot` of `block`, if the slot holds one.
fn head_piece(block: &[u8], slot: usize) -> Option<&[u8]> {
    let bytes = DataBlock(block).piece_bytes(slot)?;
    let len = RowPiece::new(bytes)?.stored_len()?;
    bytes.get(..len)
}

/// A row to change: its head's address and, for a serializable transaction, its head
/// piece as the transaction's snapshot showed it.
struct Target<'a> {
    rdba: u32,
    slot: usize,
    seen: Option<&'a [u8]>,
}

/// Whether the row whose head piece the snapshot showed as `seen` was changed since by a
/// transaction other than `xid`: its head is not the same piece any more (every change
/// of a row rewrites its head: a migrated row gets a new forwarding address), or its
/// lock byte names a transaction committed after `snapshot` (a change that put the same
/// bytes back). The lock byte is not part of the comparison: cleanouts and slot reuse
/// clear it.
fn changed_since_snapshot(
    ctx: &AccessContext<'_>,
    block: &[u8],
    slot: usize,
    seen: &[u8],
    snapshot: u64,
    xid: crate::txn::Xid,
) -> Result<bool> {
    let Some(now) = head_piece(block, slot) else { return Ok(true) };
    let same = now.len() == seen.len() && now.len() > 1 && now[0] == seen[0] && now[2..] == seen[2..];
    if !same {
        return Ok(true);
    }
    row_changed_after(ctx, block, DataBlock(block).row_offset(slot), snapshot, xid)
}

/// Locks and changes one row in current mode; false if it no longer qualifies.
#[allow(clippy::too_many_arguments)]
fn change_one(
    ctx: &AccessContext<'_>,
    txn: &mut Transaction,
    sid: u32,
    table: &TableDef,
    target: Target<'_>,
    kinds: &[PayloadKind],
    spans: &mut [ColumnSpan],
    scratch: &mut Vec<u8>,
    changes: &mut dyn RowChanges,
) -> Result<bool> {
    let Target { rdba, slot, seen } = target;
    let xid = txn.xid(ctx, sid)?;
    txn.changes_table(ctx, table.object_id);
    // The head a migration prepared, and the piece it replaces (which must be unchanged).
    let mut migrated: Option<(Vec<u8>, Vec<u8>)> = None;
    loop {
        let mut guard = ctx.cache.current_get(ctx.stats, rdba)?;
        let offset = DataBlock(&guard).row_offset(slot);
        let wait_for = row_lock_holder(&guard, offset).filter(|&h| h != xid && ctx.enqueues.is_active(h));
        if let Some(holder) = wait_for {
            drop(guard);
            ctx.enqueues.wait_for(ctx.stats, xid, holder)?;
            continue;
        }
        // Serializable: the row must be as the snapshot showed it once its lock is free.
        if let (Some(seen), Some(snapshot)) = (seen, txn.snapshot)
            && changed_since_snapshot(ctx, &guard, slot, seen, snapshot, xid)?
        {
            return Err(cannot_serialize(&format!(
                "row {slot} of block {rdba:#x} of {} was changed by a transaction that committed after this one began",
                table.name
            )));
        }
        // The prepared forwarding head is written only over the piece it was made for: a
        // row changed meanwhile (its lock was waited for) is edited anew, and may migrate
        // again (the piece moved before is left as dead space, undone with the statement).
        let (edit, forwarding) = match migrated.take() {
            Some((head, replaced)) if head_piece(&guard, slot) == Some(&replaced[..]) => (RowEdit::Replace(head), true),
            _ => match whole_row(ctx, &guard, rdba, slot, kinds, spans, scratch)? {
                Some(row) if changes.qualifies(&row)? => (changes.edit(&row)?, false),
                _ => (RowEdit::Keep, false),
            },
        };
        let new_len = match &edit {
            RowEdit::Keep => return Ok(false),
            RowEdit::Delete => 0,
            RowEdit::Replace(piece) => piece.len(),
        };
        // The ITL slot first: taking it may grow the ITL, and with it the room a row needs.
        let index = match take_itl(&mut guard, xid, |x| ctx.enqueues.is_active(x), txn.snapshot) {
            Ok(index) => index,
            Err(Obstacle::Busy(holder)) => {
                drop(guard);
                ctx.enqueues.wait_for(ctx.stats, xid, holder)?;
                continue;
            }
            Err(Obstacle::CannotSerialize) => {
                return Err(cannot_serialize(&format!(
                    "a block of {} holds only changes committed after its snapshot",
                    table.name
                )));
            }
        };
        // Compaction is asked about (and the ITL slots looked at for the rooms it must
        // keep) only when the row fits neither its room nor the free space.
        let fits_as_is = DataBlockMut(&mut guard).can_replace(slot, new_len, None);
        let kept = (!fits_as_is).then(|| kept_rooms(&guard, |x| ctx.enqueues.is_active(x)));
        if !fits_as_is && !DataBlockMut(&mut guard).can_replace(slot, new_len, kept.as_ref()) {
            if forwarding {
                return Err(Error::unsupported(format!(
                    "migrating a row of {}: its block has no room even for the forwarding piece",
                    table.name
                )));
            }
            let RowEdit::Replace(piece) = &edit else { unreachable!("a delete needs no room") };
            let replaced = head_piece(&guard, slot)
                .map(<[u8]>::to_vec)
                .ok_or_else(|| ctx.corrupt(rdba, format!("row {slot} runs past its block")))?;
            drop(guard);
            let (to, blocks) = migrate(ctx, table, xid, txn.snapshot, piece)?;
            blocks.into_iter().for_each(|b| txn.touched(ctx, b));
            migrated = Some((forwarding_head(piece[2], to), replaced));
            continue;
        }
        let offset = DataBlock(&guard).row_offset(slot);
        let old_len = RowPiece::new(&guard[offset..])
            .and_then(|p| p.stored_len())
            .ok_or_else(|| ctx.corrupt(rdba, format!("row {slot} runs past its block")))?;
        let prev_itl = itl::get(&guard, index);
        let mut body = Vec::with_capacity(old_len + 64);
        BlockUndo {
            kind: UndoKind::RowImage,
            itl: index as u8,
            slot: slot as u16,
            slot_end: slot as u16 + 1,
            object_id: table.object_id,
            rdba,
            prev_itl,
            before: &guard[offset..offset + old_len],
        }
        .encode(&mut body);
        let uba = ctx.undo.append(ctx, xid, &body)?;
        let was_locked_by_us = prev_itl.xid == xid && guard[offset + 1] == index as u8 + 1;
        let lock_count =
            if prev_itl.xid == xid { prev_itl.lock_count.saturating_add(u8::from(!was_locked_by_us)) } else { 1 };
        itl::put(&mut guard, index, &Itl { xid, uba, commit_scn: 0, flags: 0, lock_count });
        let lock = index as u8 + 1;
        match edit {
            RowEdit::Keep => unreachable!("returned above"),
            RowEdit::Delete => {
                guard[offset] |= FLAG_DELETED;
                guard[offset + 1] = lock;
                ctx.stats.add(Stat::RowsDeleted, 1);
            }
            RowEdit::Replace(mut piece) => {
                piece[1] = lock;
                if !DataBlockMut(&mut guard)
                    .replace_piece(slot, piece.len(), kept.as_ref(), |s| s.copy_from_slice(&piece))
                {
                    // can_replace said it fits: a block whose pieces do not walk (corrupt).
                    return Err(ctx.corrupt(rdba, format!("row {slot} could not be rewritten in its block")));
                }
                ctx.stats.add(Stat::RowsUpdated, 1);
            }
        }
        block::set_scn(&mut guard, ctx.scn);
        ctx.rows_changed(rdba, &guard);
        txn.touched(ctx, rdba);
        changes.changed(crate::storage::row::PieceAddr { rdba, slot: slot as u16 });
        return Ok(true);
    }
}
