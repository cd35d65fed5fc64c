//! Changes transactions make to table blocks, and the undo that reverses them. Index
//! leaves and compression units' heads share the ITL handling: taking a slot
//! ([`take_itl`], whose [`RowLocks`] says how the block's rows name their slot: a lock
//! byte in each row or index entry, or a CU head's lock bitmap a slot), pointing it at a
//! new undo record ([`point_itl`]), row locks and cleanout. An index entry's lock byte
//! sits where a row's does, one byte after the start of the entry; the undo records of
//! index entries and CU heads are their own modules'.
//!
//! Every change to a row goes through an ITL slot of its block owned by the changing
//! transaction. The undo record of a change ([`BlockUndo`]) keeps what the change
//! destroyed: the row's before-image (or which slots an insert filled) and the ITL slot
//! as it was before. The slot then points at that record, so the undo of one block forms
//! a chain through the ITL, record by record, back across earlier transactions:
//!
//! ```text
//!  block 0x400087                         undo (records of transaction 3.7.12)
//!  ITL 1: xid 3.7.12  uba ──────────────► #2 update row 5: before-image of row 5,
//!   (active)                                  prev ITL: xid 3.7.12, uba ─┐
//!  row 5: lock 1, "B"                                                     │
//!                                         #1 update row 5: before-image   ◄┘
//!                                             of row 5, prev ITL: xid 2.1.9,
//!                                             committed at SCN 880 ──► (chain ends
//!                                             for a reader at SCN ≥ 880)
//! ```
//!
//! Applying record #2 then #1 to a copy of the block gives the block as a reader at SCN
//! 900 must see it: row 5 as transaction 2.1.9 left it. Rollback applies the same records
//! to the current block, newest first, following the transaction's own chain.
//!
//! A rollback restores a row's lock byte only where it names the rolling-back
//! transaction's own ITL slot (the row changed twice by it); any other slot's byte is
//! cleared ([`BlockUndo::roll_back`], [`restored_lock`], which index entries follow too). A before-image's lock byte names the transaction
//! that changed the row before, and that one had ended (committed, or rolled back) when
//! this one took the row's lock, or this one would have waited for it. Its slot may serve
//! another transaction by the time of the rollback (a committed slot is reused), and the
//! restored row would then look locked by a transaction that never touched it: a writer
//! would wait for it for nothing. A cleared byte is what a cleanout leaves; a consistent
//! read never trusts a lock byte alone (it compares the row too), and a clone built for
//! one keeps the bytes as they were ([`BlockUndo::apply`]).
//!
//! Invariant: a record is appended (and the ITL slot pointed at it) while the block is
//! held exclusively, before the row changes; so whoever sees a changed row sees an ITL
//! slot whose chain undoes it.
//!
//! Invariant: the undo of an active transaction always fits its block. A row it changed
//! holds its lock, and keeps its room (the bytes up to the next piece) whatever it was
//! changed to: a change that fits the room stays in it, one that does not moves to a
//! larger room; and whoever compacts the block (the transaction itself, another, or a
//! rollback) keeps the whole room of every row locked by an active transaction
//! ([`kept_rooms`]; see `storage::block`). So each of the row's before-images goes back
//! where the row is, however other transactions grew, shrank or migrated their rows
//! meanwhile. Space an active transaction freed is thus its own until it ends, as Oracle
//! keeps it for the transaction until it commits.

use super::Xid;
use crate::storage::block::{DataBlock, DataBlockMut, ITL_LEN, KeptRooms};
use crate::storage::block_write::BlockWrite;
use crate::storage::itl::{self, ITL_COMMITTED, Itl};
use crate::storage::row::{LOCK_INSERT_IN_PROGRESS, PIECE_HEADER};

/// What an undo record for a table block restores.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum UndoKind {
    /// The row piece in `slot` as it was (an update or delete).
    RowImage = 1,
    /// Slots `slot..slot_end` were filled by inserts: empty them. An empty range only
    /// restores the ITL slot (an insert taking over the slot of an ended transaction).
    InsertedSlots = 2,
}

/// Bytes of an undo record's body before the row image.
const BODY_HEADER: usize = 1 + 1 + 2 + 2 + 4 + 4 + ITL_LEN;

/// The undo of one change to one table block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlockUndo<'a> {
    pub kind: UndoKind,
    /// The ITL slot (0-based) the change went through.
    pub itl: u8,
    pub slot: u16,
    /// One past the last slot (`slot + 1` for a row image).
    pub slot_end: u16,
    pub object_id: u32,
    pub rdba: u32,
    /// The ITL slot before the change.
    pub prev_itl: Itl,
    /// The row piece before the change (empty for inserted slots).
    pub before: &'a [u8],
}

impl<'a> BlockUndo<'a> {
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.clear();
        out.push(self.kind as u8);
        out.push(self.itl);
        out.extend_from_slice(&self.slot.to_le_bytes());
        out.extend_from_slice(&self.slot_end.to_le_bytes());
        out.extend_from_slice(&self.object_id.to_le_bytes());
        out.extend_from_slice(&self.rdba.to_le_bytes());
        out.extend_from_slice(&self.prev_itl.encode());
        out.extend_from_slice(self.before);
    }

    /// Decodes a record body; the error says what is wrong with it.
    pub fn decode(body: &'a [u8]) -> Result<BlockUndo<'a>, String> {
        if body.len() < BODY_HEADER {
            return Err(format!("undo record of {} bytes is shorter than its header", body.len()));
        }
        let kind = match body[0] {
            1 => UndoKind::RowImage,
            2 => UndoKind::InsertedSlots,
            k => return Err(format!("unknown undo record kind {k}")),
        };
        let u16_at = |o: usize| u16::from_le_bytes([body[o], body[o + 1]]);
        let u32_at = |o: usize| u32::from_le_bytes([body[o], body[o + 1], body[o + 2], body[o + 3]]);
        let undo = BlockUndo {
            kind,
            itl: body[1],
            slot: u16_at(2),
            slot_end: u16_at(4),
            object_id: u32_at(6),
            rdba: u32_at(10),
            prev_itl: Itl::decode(&body[14..14 + ITL_LEN]),
            before: &body[BODY_HEADER..],
        };
        let malformed = match kind {
            UndoKind::RowImage => undo.slot_end != undo.slot + 1 || undo.before.len() < PIECE_HEADER,
            UndoKind::InsertedSlots => undo.slot_end < undo.slot,
        };
        if malformed {
            return Err(format!("undo record for slots {}..{} is malformed", undo.slot, undo.slot_end));
        }
        Ok(undo)
    }

    /// Applies this record to `block` (the current block for a rollback, a clone for a
    /// consistent read): restores the row or empties the inserted slots, then the ITL
    /// slot. `kept`: the rooms a compaction must keep ([`kept_rooms`] for a current
    /// block, none for a private clone; see [`DataBlockMut::replace_piece`]). The error
    /// says why the block cannot take it.
    pub fn apply(&self, block: &mut [u8], kept: &KeptRooms) -> Result<(), String> {
        let rows = DataBlock(block).row_count();
        if usize::from(self.itl) >= itl::itl_count(block) || usize::from(self.slot_end) > rows {
            return Err(format!(
                "undo for ITL slot {} and rows {}..{} does not fit a block with {} ITL slots and {rows} rows",
                self.itl + 1,
                self.slot,
                self.slot_end,
                itl::itl_count(block)
            ));
        }
        let mut b = DataBlockMut(block);
        match self.kind {
            UndoKind::RowImage => {
                let before = self.before;
                if !b.replace_piece(usize::from(self.slot), before.len(), Some(kept), |space| {
                    space.copy_from_slice(before)
                }) {
                    return Err(format!("the before-image of row {} no longer fits its block", self.slot));
                }
            }
            UndoKind::InsertedSlots => (self.slot..self.slot_end).for_each(|s| b.empty_slot(usize::from(s))),
        }
        itl::put(block, usize::from(self.itl), &self.prev_itl);
        Ok(())
    }
}

impl BlockUndo<'_> {
    /// Applies this record to the current block in a rollback ([`BlockUndo::apply`]), then
    /// clears the restored row's lock byte if it names another transaction's ITL slot: that
    /// transaction had ended before this one locked the row, and its slot may hold another
    /// now (see the module doc).
    pub fn roll_back(&self, block: &mut [u8], kept: &KeptRooms) -> Result<(), String> {
        self.apply(block, kept)?;
        if self.kind == UndoKind::RowImage {
            let offset = DataBlock(block).row_offset(usize::from(self.slot));
            if offset != 0
                && let Some(lock) = block.get_mut(offset + 1)
                && *lock != LOCK_INSERT_IN_PROGRESS
            {
                *lock = restored_lock(*lock, self.itl);
            }
        }
        Ok(())
    }
}

/// Points ITL slot `index` of `block` at `uba`, the undo record `xid` just wrote for a
/// change that took `new_locks` more row locks through the slot (`prev`, the slot before
/// it): the slot's lock count goes on from `prev`'s when the slot was already `xid`'s,
/// else starts at `new_locks`. The record keeps `prev`, so the chain goes back through it.
pub fn point_itl<B: BlockWrite + ?Sized>(
    block: &mut B,
    index: usize,
    prev: &Itl,
    xid: Xid,
    uba: super::Uba,
    new_locks: u8,
) {
    let held = if prev.xid == xid { prev.lock_count } else { 0 };
    let lock_count = held.saturating_add(new_locks);
    itl::put(block, index, &Itl { xid, uba, commit_scn: 0, flags: 0, lock_count });
}

/// The lock byte a rollback through ITL slot `itl` (0-based) puts back where a
/// before-image held `lock`: `lock` if it names that slot or none, else 0. Another slot's
/// transaction had ended before this one took the lock, and its slot may serve a new
/// transaction by now, whose writers would wait for it for nothing (see the module doc).
/// Rows and index entries follow this one rule.
pub fn restored_lock(lock: u8, itl: u8) -> u8 {
    if lock == itl + 1 { lock } else { 0 }
}

/// What stands in the way of a transaction taking an ITL slot or a row lock.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Obstacle {
    /// Another active transaction: wait for it to end, then look again.
    Busy(Xid),
    /// Only slots of transactions that committed after a serializable transaction's
    /// snapshot are left.
    CannotSerialize,
    /// The block's row locks cannot be read (corruption; the text says what is wrong).
    Corrupt(String),
}

/// How the rows of a block name the ITL slot they are locked through: what handing a
/// slot over to another transaction clears, and whether the ITL may grow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RowLocks {
    /// A lock byte in each row (or index entry) names its slot; the ITL grows while the
    /// block has room (row blocks and index leaves).
    LockBytes,
    /// A lock map a slot (one bit a row) in a compression unit's head, whose ITL never
    /// grows (`storage::hcc::CU_ITL_SLOTS`).
    CuLockMaps,
}

impl RowLocks {
    /// Unlocks the rows locked through slot `index`: its transaction has ended and the
    /// slot is about to serve another.
    fn release<B: BlockWrite + ?Sized>(self, block: &mut B, index: usize) -> Result<(), Obstacle> {
        match self {
            RowLocks::LockBytes => {
                unlock_rows_of(block, index);
                Ok(())
            }
            RowLocks::CuLockMaps => {
                crate::storage::hcc::clear_locks(block.whole_mut(), index).map_err(Obstacle::Corrupt)
            }
        }
    }
}

/// The ITL slot `xid` changes `block` through: its own slot if it has one, else a free
/// slot or one of an ended transaction (`is_active` tells which are still running; a
/// reused slot's rows are unlocked first, as `locks` says how), else a new slot if the
/// block's ITL may grow and the block has room. `Err(Busy)` names a transaction to wait
/// for when every slot is taken by active ones.
///
/// A transaction with a fixed snapshot (serializable, `fixed_snapshot`) takes over only
/// slots stamped committed at or before it: its own reads skip its own slot, so they must
/// not hide a commit it may not see. When that leaves no slot, it cannot go on
/// ([`Obstacle::CannotSerialize`], Oracle's ORA-08177).
///
/// It writes nothing when the transaction has a slot or a free one is there.
pub fn take_itl<B: BlockWrite + ?Sized>(
    block: &mut B,
    xid: Xid,
    is_active: impl Fn(Xid) -> bool,
    fixed_snapshot: Option<u64>,
    locks: RowLocks,
) -> Result<usize, Obstacle> {
    let count = itl::itl_count(block.bytes());
    let find = |block: &[u8], wanted: &dyn Fn(&Itl) -> bool| (0..count).find(|&i| wanted(&itl::get(block, i)));
    if let Some(i) = find(block.bytes(), &|s| s.xid == xid) {
        return Ok(i);
    }
    if let Some(i) = find(block.bytes(), &Itl::is_free) {
        return Ok(i);
    }
    let reusable = |s: &Itl| match fixed_snapshot {
        None => s.is_committed() || !is_active(s.xid),
        Some(snapshot) => s.is_committed() && s.commit_scn <= snapshot,
    };
    if let Some(i) = find(block.bytes(), &reusable) {
        locks.release(block, i)?;
        return Ok(i);
    }
    if locks == RowLocks::LockBytes && DataBlockMut(block).grow_itl() {
        return Ok(count);
    }
    match find(block.bytes(), &|s| !s.is_committed() && is_active(s.xid)) {
        Some(i) => Err(Obstacle::Busy(itl::get(block.bytes(), i).xid)),
        None => Err(Obstacle::CannotSerialize),
    }
}

/// The rows of `block` whose room a compaction must keep: those locked through the ITL
/// slot of a transaction still active, the compacting one's own included (`is_active`
/// tells which transactions not stamped committed have ended). Their undo may need that
/// room to put a longer before-image back.
pub fn kept_rooms(block: &[u8], is_active: impl Fn(Xid) -> bool) -> KeptRooms {
    let mut kept = KeptRooms::NONE;
    for i in 0..itl::itl_count(block) {
        let s = itl::get(block, i);
        if !s.is_free() && s.flags & ITL_COMMITTED == 0 && is_active(s.xid) {
            // A lock byte names slots 1..=254 (see `DataBlockMut::grow_itl`).
            kept.keep(i as u8 + 1);
        }
    }
    kept
}

/// Clears the lock bytes of rows that point at ITL slot `index` (0-based): its
/// transaction has ended and the slot is about to serve another.
fn unlock_rows_of<B: BlockWrite + ?Sized>(block: &mut B, index: usize) {
    let lock = index as u8 + 1;
    let bytes = block.bytes();
    let locked: smallvec::SmallVec<[usize; 8]> =
        DataBlock(bytes).row_offsets().filter(|&off| off != 0 && bytes.get(off + 1) == Some(&lock)).collect();
    for off in locked {
        block.range_mut(off + 1..off + 2)[0] = 0;
    }
}

/// The transaction holding the row lock of the piece at `offset`, if the lock byte names
/// an ITL slot whose transaction is not stamped committed (it may still have ended:
/// the caller asks the enqueues).
pub fn row_lock_holder(block: &[u8], offset: usize) -> Option<Xid> {
    let lock = *block.get(offset + 1)? as usize;
    if lock == 0 || lock > itl::itl_count(block) {
        return None;
    }
    let slot = itl::get(block, lock - 1);
    (!slot.is_free() && slot.flags & ITL_COMMITTED == 0).then_some(slot.xid)
}

/// The error of a serializable transaction whose change would overwrite or hide one
/// committed after its snapshot (Oracle's ORA-08177); `why` says what it met ("a block
/// of T holds only changes committed after its snapshot").
pub fn cannot_serialize(why: &str) -> crate::error::Error {
    crate::error::Error::CannotSerialize { why: why.to_string() }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::block::rdba;
    use crate::txn::Uba;
    use proptest::prelude::*;

    fn block_with_rows(rows: &[&[u8]]) -> Vec<u8> {
        let mut b = vec![0u8; 2048];
        DataBlockMut(&mut b).format(rdba(1, 5), 9, 2);
        for r in rows {
            DataBlockMut(&mut b).insert_piece(r, 0).unwrap();
        }
        b
    }

    /// A whole-row piece with one column of `n` bytes of `fill`.
    fn piece(n: usize, fill: u8) -> Vec<u8> {
        let mut p = vec![0x2c, 0, 1, n as u8];
        p.extend(std::iter::repeat_n(fill, n));
        p
    }

    proptest! {
        #[test]
        fn undo_records_round_trip(kind in 1u8..=2, itl_index: u8, slot in 0u16..500, span in 1u16..20,
                                   before in proptest::collection::vec(any::<u8>(), 3..200)) {
            // A row image covers one slot; inserted slots any range, even an empty one.
            let (kind, slot_end) =
                if kind == 1 { (UndoKind::RowImage, slot + 1) } else { (UndoKind::InsertedSlots, slot + span - 1) };
            let u = BlockUndo { kind, itl: itl_index, slot, slot_end, object_id: 7, rdba: 99,
                prev_itl: Itl { xid: Xid { usn: 2, slot: 3, wrap: 4 }, uba: Uba { rdba: 5, seq: 6, record: 7 },
                                commit_scn: 8, flags: ITL_COMMITTED, lock_count: 1 },
                before: &before };
            let mut out = Vec::new();
            u.encode(&mut out);
            prop_assert_eq!(BlockUndo::decode(&out).unwrap(), u);
        }

        /// Replacing rows with longer and shorter images, then applying the undo of each
        /// change newest first, gives back the block's rows byte for byte.
        #[test]
        fn undo_restores_every_row(changes in proptest::collection::vec((0usize..6, 1usize..120), 1..40)) {
            let originals: Vec<Vec<u8>> = (0..6).map(|i| piece(10 + i * 7, i as u8)).collect();
            let refs: Vec<&[u8]> = originals.iter().map(|p| &p[..]).collect();
            let mut b = block_with_rows(&refs);
            let mut undo: Vec<(usize, Vec<u8>)> = Vec::new();
            for (i, (slot, len)) in changes.iter().enumerate() {
                let off = DataBlock(&b).row_offset(*slot);
                let old = crate::storage::row::RowPiece::new(&b[off..]).unwrap().stored_len().unwrap();
                let before = b[off..off + old].to_vec();
                let new = piece(*len, 100 + i as u8);
                let write = |s: &mut [u8]| s.copy_from_slice(&new);
                if DataBlockMut(&mut b).replace_piece(*slot, new.len(), Some(&KeptRooms::NONE), write) {
                    undo.push((*slot, before));
                }
            }
            for (slot, before) in undo.iter().rev() {
                let u = BlockUndo { kind: UndoKind::RowImage, itl: 0, slot: *slot as u16, slot_end: *slot as u16 + 1,
                                    object_id: 9, rdba: rdba(1, 5), prev_itl: Itl::default(), before };
                u.apply(&mut b, &KeptRooms::NONE).unwrap();
            }
            prop_assert!(DataBlock(&b).check_layout().is_ok());
            for (slot, original) in originals.iter().enumerate() {
                prop_assert_eq!(&DataBlock(&b).piece_bytes(slot).unwrap()[..original.len()], &original[..]);
            }
        }

        /// Two active transactions grow and shrink their own rows of one full block, each
        /// compacting it when it must: the undo of either, applied newest first, always
        /// fits, first beside the other still active, then alone (the rooms of rows locked
        /// by an active transaction survive every compaction), and the block's rows come
        /// back byte for byte.
        #[test]
        fn the_undo_of_an_active_transaction_always_fits(
            changes in proptest::collection::vec((0usize..2, 0usize..4, 1usize..250), 1..60),
            first in 0usize..2,
        ) {
            let originals: Vec<Vec<u8>> = (0..8).map(|i| piece(20 + i * 30, i as u8)).collect();
            let refs: Vec<&[u8]> = originals.iter().map(|p| &p[..]).collect();
            let mut b = block_with_rows(&refs);
            // Fill the block to its last bytes with rows of neither transaction.
            while DataBlockMut(&mut b).insert_piece(&piece(8, 0xEE), 0).is_some() {}
            let lock = |txn: usize| txn as u8 + 1;
            let kept = |txns: &[usize]| {
                let mut kept = KeptRooms::NONE;
                txns.iter().for_each(|&t| kept.keep(lock(t)));
                kept
            };
            let mut undo: [Vec<(usize, Vec<u8>)>; 2] = [Vec::new(), Vec::new()];
            for (i, &(txn, row, len)) in changes.iter().enumerate() {
                let slot = txn * 4 + row;
                let off = DataBlock(&b).row_offset(slot);
                let old = crate::storage::row::RowPiece::new(&b[off..]).unwrap().stored_len().unwrap();
                let before = b[off..off + old].to_vec();
                let mut new = piece(len, 100 + i as u8);
                new[1] = lock(txn);
                let write = |s: &mut [u8]| s.copy_from_slice(&new);
                if DataBlockMut(&mut b).replace_piece(slot, new.len(), Some(&kept(&[0, 1])), write) {
                    undo[txn].push((slot, before));
                }
            }
            for (txn, active) in [(first, vec![0, 1]), (1 - first, vec![1 - first])] {
                for (slot, before) in undo[txn].iter().rev() {
                    let u = BlockUndo { kind: UndoKind::RowImage, itl: txn as u8, slot: *slot as u16,
                                        slot_end: *slot as u16 + 1, object_id: 9, rdba: rdba(1, 5),
                                        prev_itl: Itl::default(), before };
                    prop_assert_eq!(u.apply(&mut b, &kept(&active)), Ok(()));
                }
            }
            prop_assert!(DataBlock(&b).check_layout().is_ok());
            for (slot, original) in originals.iter().enumerate() {
                prop_assert_eq!(&DataBlock(&b).piece_bytes(slot).unwrap()[..original.len()], &original[..]);
            }
        }
    }

    /// Row 0 was last changed by a committed transaction through ITL slot 2 (lock byte 2);
    /// T changed it through slot 1; U has taken slot 2 over since. T's rollback puts the
    /// row back unlocked, not locked by U; a row T changed twice keeps T's lock until
    /// T's first change is undone too.
    #[test]
    fn a_rollback_does_not_hand_a_row_to_the_new_holder_of_its_old_slot() {
        let mut before = piece(5, 1);
        before[1] = 2;
        let mut b = block_with_rows(&[&before]);
        let x = |n| Xid { usn: 1, slot: n, wrap: 1 };
        let (t, u) = (x(1), x(2));
        let lock_of_row_0 = |b: &[u8]| b[DataBlock(b).row_offset(0) + 1];
        itl::put(&mut b, 1, &Itl { xid: u, ..Itl::default() });
        let mut changed = piece(5, 9);
        changed[1] = 1;
        let write = |s: &mut [u8]| s.copy_from_slice(&changed);
        assert!(DataBlockMut(&mut b).replace_piece(0, changed.len(), Some(&KeptRooms::NONE), write));
        itl::put(&mut b, 0, &Itl { xid: t, ..Itl::default() });
        let second = changed.clone();
        fn undo(before: &[u8]) -> BlockUndo<'_> {
            BlockUndo {
                kind: UndoKind::RowImage,
                itl: 0,
                slot: 0,
                slot_end: 1,
                object_id: 9,
                rdba: rdba(1, 5),
                prev_itl: Itl::default(),
                before,
            }
        }
        undo(&second).roll_back(&mut b, &KeptRooms::NONE).unwrap();
        assert_eq!(lock_of_row_0(&b), 1, "T's own earlier change keeps T's lock");
        undo(&before).roll_back(&mut b, &KeptRooms::NONE).unwrap();
        assert_eq!(lock_of_row_0(&b), 0, "restored unlocked, not locked by U in slot 2");
        assert_eq!(row_lock_holder(&b, DataBlock(&b).row_offset(0)), None);
        let mut clone = b.clone();
        clone[DataBlock(&b).row_offset(0) + 1] = 1;
        undo(&before).apply(&mut clone, &KeptRooms::NONE).unwrap();
        assert_eq!(lock_of_row_0(&clone), 2, "a consistent-read clone gets the before-image as it was");
    }

    #[test]
    fn inserted_slots_are_emptied() {
        let (a, c) = (piece(5, 1), piece(5, 2));
        let mut b = block_with_rows(&[&a, &c]);
        let u = BlockUndo {
            kind: UndoKind::InsertedSlots,
            itl: 0,
            slot: 1,
            slot_end: 2,
            object_id: 9,
            rdba: rdba(1, 5),
            prev_itl: Itl::default(),
            before: &[],
        };
        u.apply(&mut b, &KeptRooms::NONE).unwrap();
        assert!(DataBlock(&b).piece_bytes(0).is_some());
        assert!(DataBlock(&b).piece_bytes(1).is_none());
    }

    #[test]
    fn an_undo_record_for_another_shape_is_an_error() {
        let mut b = block_with_rows(&[&piece(5, 1)]);
        let u = BlockUndo {
            kind: UndoKind::InsertedSlots,
            itl: 0,
            slot: 3,
            slot_end: 4,
            object_id: 9,
            rdba: rdba(1, 5),
            prev_itl: Itl::default(),
            before: &[],
        };
        assert!(u.apply(&mut b, &KeptRooms::NONE).unwrap_err().contains("does not fit"));
    }

    #[test]
    fn itl_slots_are_reused_then_grown_then_busy() {
        let mut b = block_with_rows(&[&piece(5, 1)]);
        let x = |n| Xid { usn: 1, slot: n, wrap: 1 };
        for n in 1..=2u16 {
            let i = take_itl(&mut b, x(n), |_| true, None, RowLocks::LockBytes).unwrap();
            itl::put(&mut b, i, &Itl { xid: x(n), ..Itl::default() });
        }
        assert_eq!(take_itl(&mut b, x(1), |_| true, None, RowLocks::LockBytes), Ok(0), "a transaction keeps its slot");
        assert_eq!(take_itl(&mut b, x(3), |_| true, None, RowLocks::LockBytes), Ok(2), "a third slot is grown");
        assert_eq!(itl::itl_count(&b), 3);
        assert_eq!(DataBlock(&b).piece_bytes(0).unwrap()[..4], piece(5, 1)[..4], "rows survive the growth");
        let mut full = vec![0u8; 2048];
        DataBlockMut(&mut full).format(rdba(1, 6), 9, 2);
        while DataBlockMut(&mut full).insert_piece(&piece(20, 3), 0).is_some() {}
        for n in 1..=2u16 {
            itl::put(&mut full, usize::from(n - 1), &Itl { xid: x(n), ..Itl::default() });
        }
        assert_eq!(take_itl(&mut full, x(3), |_| true, None, RowLocks::LockBytes), Err(Obstacle::Busy(x(1))));
        assert_eq!(
            take_itl(&mut full, x(3), |xid| xid != x(2), None, RowLocks::LockBytes),
            Ok(1),
            "an ended transaction's slot is reused"
        );
        assert_eq!(
            take_itl(&mut full, x(3), |_| false, Some(100), RowLocks::LockBytes),
            Err(Obstacle::CannotSerialize),
            "not stamped"
        );
        let mut stamped = itl::get(&full, 1);
        stamped.flags = ITL_COMMITTED;
        stamped.commit_scn = 150;
        itl::put(&mut full, 1, &stamped);
        assert_eq!(
            take_itl(&mut full, x(3), |_| false, Some(100), RowLocks::LockBytes),
            Err(Obstacle::CannotSerialize),
            "after the snapshot"
        );
        assert_eq!(take_itl(&mut full, x(3), |_| false, Some(150), RowLocks::LockBytes), Ok(1));
    }

    #[test]
    fn a_cu_head_hands_a_slot_over_with_its_lock_map_cleared_and_never_grows() {
        use crate::storage::hcc::{CompressedCu, HccLevel, mark_deleted, row_mark};
        let ids: Vec<u8> = (0..100u32).flat_map(|i| i.to_le_bytes()).collect();
        let cu = CompressedCu::new(HccLevel::QueryLow, 100, &[(0, ids)]);
        let mut head = vec![0u8; 8192];
        crate::storage::block::format_block(&mut head, crate::storage::block::BlockType::CuHead, 1, 7);
        cu.write_piece(0, &[1], &mut head);
        let x = |n| Xid { usn: 1, slot: n, wrap: 1 };
        let take = |head: &mut Vec<u8>, xid, is_active: &dyn Fn(Xid) -> bool| {
            take_itl(head, xid, is_active, None, RowLocks::CuLockMaps)
        };
        for n in 1..=2u16 {
            let i = take(&mut head, x(n), &|_| true).unwrap();
            itl::put(&mut head, i, &Itl { xid: x(n), ..Itl::default() });
            mark_deleted(&mut head, usize::from(n), i).unwrap();
        }
        assert_eq!(take(&mut head, x(3), &|_| true), Err(Obstacle::Busy(x(1))), "two slots, no growth");
        assert_eq!(itl::itl_count(&head), 2);
        assert_eq!(take(&mut head, x(3), &|xid| xid != x(2)), Ok(1), "an ended transaction's slot is reused");
        assert_eq!(row_mark(&head, 2).unwrap().locked_through, None, "its lock map is cleared");
        assert_eq!(row_mark(&head, 1).unwrap().locked_through, Some(0), "the other slot's locks stay");
        let mut broken = head.clone();
        broken[crate::storage::block::HEADER_LEN..].fill(0xff);
        assert!(matches!(take(&mut broken, x(4), &|_| false), Err(Obstacle::Corrupt(_))), "unreadable marks");
    }
}
