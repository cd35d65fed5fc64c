//! The row-block format of the change protocol (see [`super`]): rows changed in place.
//!
//! A row's lock is the ITL slot its lock byte names, held while that slot's transaction
//! is active. A serializable transaction keeps the head piece its snapshot showed of each
//! candidate and refuses a row whose head has changed since (or whose lock byte names a
//! transaction committed after the snapshot).
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

use super::{Candidate, Changed, Current, RowChanges, RowEdit, RowFormat, Verdict};
use crate::access::AccessContext;
use crate::access::row_at::whole_row;
use crate::buffer::WriteGuard;
use crate::catalog::TableDef;
use crate::error::{Error, Result};
use crate::stats::Stat;
use crate::storage::block::{DataBlock, DataBlockMut};
use crate::storage::block_write::BlockWrite;
use crate::storage::itl;
use crate::storage::row::{self, ColumnSpan, FLAG_DELETED, PIECE_HEADER, PieceAddr, RowPiece};
use crate::txn::Xid;
use crate::txn::change::{BlockUndo, RowLocks, UndoKind, kept_rooms, point_itl, row_lock_holder};
use crate::txn::cr::row_changed_after;
use crate::txn::transaction::Transaction;
use crate::types::encoding::PayloadKind;

/// The row blocks of one statement's table, and the buffers their rows are read into.
pub(super) struct RowBlocks<'t> {
    table: &'t TableDef,
    kinds: Vec<PayloadKind>,
    spans: Vec<ColumnSpan>,
    scratch: Vec<u8>,
    /// The forwarding head a migration prepared for the row at hand, and the piece it
    /// replaces (which must be unchanged when the head is written).
    migrated: Option<(Vec<u8>, Vec<u8>)>,
    /// Whether the edit at hand writes that forwarding head.
    forwarding: bool,
    /// The row that must migrate once its block is let go (its new whole-row piece),
    /// and the head piece it replaces.
    to_migrate: Option<(Vec<u8>, Vec<u8>)>,
}

impl<'t> RowBlocks<'t> {
    pub(super) fn new(table: &'t TableDef) -> RowBlocks<'t> {
        let kinds: Vec<PayloadKind> = table.columns.iter().map(|c| PayloadKind::from(c.data_type)).collect();
        RowBlocks {
            table,
            spans: vec![ColumnSpan::NULL; kinds.len()],
            kinds,
            scratch: Vec::new(),
            migrated: None,
            forwarding: false,
            to_migrate: None,
        }
    }

    /// Adds to `candidates` the qualifying rows of `block` (the snapshot's version of
    /// block `rdba`): among the slots of `run`, or every slot, from the `from`th on; at
    /// most `room` in all. A serializable transaction keeps each one's head piece as it
    /// saw it. Stops at a row not decided yet and gives its place among them, to go on
    /// from once [`RowChanges::prepare`] ran.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn candidates(
        &mut self,
        ctx: &AccessContext<'_>,
        block: &[u8],
        rdba: u32,
        run: Option<&[PieceAddr]>,
        from: usize,
        room: u64,
        serializable: bool,
        changes: &mut dyn RowChanges,
        candidates: &mut Vec<Candidate>,
    ) -> Result<Option<usize>> {
        // A slot past the block's directory holds no row (`whole_row` says so).
        let picked = run.map(|r| r.iter().map(|a| usize::from(a.slot)));
        let all = run.is_none().then_some(0..DataBlock(block).row_count());
        for (at, slot) in picked.into_iter().flatten().chain(all.into_iter().flatten()).enumerate().skip(from) {
            if candidates.len() as u64 >= room {
                break;
            }
            let Some(row) = whole_row(ctx, block, rdba, slot, &self.kinds, &mut self.spans, &mut self.scratch)? else {
                continue;
            };
            match changes.qualifies(&row)? {
                Verdict::Yes => {
                    let seen = serializable.then(|| head_piece(block, slot).map(<[u8]>::to_vec).unwrap_or_default());
                    candidates.push(Candidate { r: slot, seen });
                }
                Verdict::No => {}
                Verdict::NotReady => return Ok(Some(at)),
            }
        }
        Ok(None)
    }
}

impl RowFormat for RowBlocks<'_> {
    const LOCKS: RowLocks = RowLocks::LockBytes;
    const UNIT: &'static str = "a block";

    fn row_name(&self, rdba: u32, slot: usize) -> String {
        format!("row {slot} of block {rdba:#x}")
    }

    fn begin_row(&mut self) {
        self.migrated = None;
        self.forwarding = false;
        self.to_migrate = None;
    }

    fn current(
        &mut self,
        ctx: &AccessContext<'_>,
        block: &[u8],
        _rdba: u32,
        slot: usize,
        xid: Xid,
        seen: Option<&[u8]>,
        snapshot: Option<u64>,
    ) -> Result<Current> {
        let offset = DataBlock(block).row_offset(slot);
        if let Some(holder) = row_lock_holder(block, offset).filter(|&h| h != xid && ctx.enqueues.is_active(h)) {
            return Ok(Current::LockedBy(holder));
        }
        // Serializable: the row must be as the snapshot showed it once its lock is free.
        if let (Some(seen), Some(snapshot)) = (seen, snapshot)
            && changed_since_snapshot(ctx, block, slot, seen, snapshot, xid)?
        {
            return Ok(Current::ChangedSinceSnapshot("changed"));
        }
        Ok(Current::Free)
    }

    fn edit(
        &mut self,
        ctx: &AccessContext<'_>,
        block: &[u8],
        rdba: u32,
        slot: usize,
        changes: &mut dyn RowChanges,
    ) -> Result<RowEdit> {
        // The prepared forwarding head is written only over the piece it was made for: a
        // row changed meanwhile (its lock was waited for) is edited anew, and may migrate
        // again (the piece moved before is left as dead space, undone with the statement).
        self.forwarding = false;
        if let Some((head, replaced)) = self.migrated.take()
            && head_piece(block, slot) == Some(&replaced[..])
        {
            self.forwarding = true;
            return Ok(RowEdit::Replace(head));
        }
        match whole_row(ctx, block, rdba, slot, &self.kinds, &mut self.spans, &mut self.scratch)? {
            Some(row) => match changes.qualifies(&row)? {
                Verdict::Yes => changes.edit(&row),
                Verdict::No => Ok(RowEdit::Keep),
                Verdict::NotReady => Ok(RowEdit::NotReady),
            },
            None => Ok(RowEdit::Keep),
        }
    }

    fn apply(
        &mut self,
        ctx: &AccessContext<'_>,
        xid: Xid,
        guard: &mut WriteGuard<'_>,
        slot: usize,
        index: usize,
        edit: RowEdit,
        changes: &mut dyn RowChanges,
        _done: &mut Changed,
    ) -> Result<bool> {
        let rdba = guard.rdba();
        let new_len = match &edit {
            RowEdit::Keep | RowEdit::NotReady => unreachable!("only a decided change is applied"),
            RowEdit::Delete => 0,
            RowEdit::Replace(piece) => piece.len(),
        };
        // Compaction is asked about (and the ITL slots looked at for the rooms it must
        // keep) only when the row fits neither its room nor the free space.
        let fits_as_is = DataBlockMut(guard).can_replace(slot, new_len, None);
        let kept = (!fits_as_is).then(|| kept_rooms(guard, |x| ctx.enqueues.is_active(x)));
        if !fits_as_is && !DataBlockMut(guard).can_replace(slot, new_len, kept.as_ref()) {
            if self.forwarding {
                return Err(Error::unsupported(format!(
                    "migrating a row of {}: its block has no room even for the forwarding piece",
                    self.table.name
                )));
            }
            let RowEdit::Replace(piece) = edit else { unreachable!("a delete needs no room") };
            let replaced = head_piece(guard, slot)
                .map(<[u8]>::to_vec)
                .ok_or_else(|| ctx.corrupt(rdba, format!("row {slot} runs past its block")))?;
            self.to_migrate = Some((piece, replaced));
            return Ok(false);
        }
        let offset = DataBlock(guard).row_offset(slot);
        let old_len = RowPiece::new(&guard[offset..])
            .and_then(|p| p.stored_len())
            .ok_or_else(|| ctx.corrupt(rdba, format!("row {slot} runs past its block")))?;
        let prev_itl = itl::get(guard, index);
        let mut body = Vec::with_capacity(old_len + 64);
        BlockUndo {
            kind: UndoKind::RowImage,
            itl: index as u8,
            slot: slot as u16,
            slot_end: slot as u16 + 1,
            object_id: self.table.object_id,
            rdba,
            prev_itl,
            before: &guard[offset..offset + old_len],
        }
        .encode(&mut body);
        let uba = ctx.undo.append(ctx, xid, &body)?;
        let was_locked_by_us = prev_itl.xid == xid && guard[offset + 1] == index as u8 + 1;
        point_itl(guard, index, &prev_itl, xid, uba, u8::from(!was_locked_by_us));
        let lock = index as u8 + 1;
        match edit {
            RowEdit::Keep | RowEdit::NotReady => unreachable!("only a decided change is applied"),
            RowEdit::Delete => {
                let head = guard.range_mut(offset..offset + 2);
                head[0] |= FLAG_DELETED;
                head[1] = lock;
                ctx.stats.add(Stat::RowsDeleted, 1);
            }
            RowEdit::Replace(mut piece) => {
                piece[1] = lock;
                if !DataBlockMut(guard).replace_piece(slot, piece.len(), kept.as_ref(), |s| s.copy_from_slice(&piece)) {
                    // can_replace said it fits: a block whose pieces do not walk (corrupt).
                    return Err(ctx.corrupt(rdba, format!("row {slot} could not be rewritten in its block")));
                }
                ctx.stats.add(Stat::RowsUpdated, 1);
            }
        }
        changes.changed(PieceAddr { rdba, slot: slot as u16 });
        Ok(true)
    }

    /// Moves the row's column stream into a block with room, and prepares the forwarding
    /// head that [`RowFormat::edit`] then writes over the piece it replaces.
    fn after_release(&mut self, ctx: &AccessContext<'_>, txn: &mut Transaction, xid: Xid) -> Result<()> {
        let Some((piece, replaced)) = self.to_migrate.take() else { return Ok(()) };
        let (to, blocks) = migrate(ctx, self.table, xid, txn.snapshot, &piece)?;
        blocks.into_iter().for_each(|b| txn.touched(ctx, b));
        self.migrated = Some((forwarding_head(piece[2], to), replaced));
        Ok(())
    }
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
    let mut inserter = crate::access::heap::Inserter::new(ctx, table, xid, fixed_snapshot)?;
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
