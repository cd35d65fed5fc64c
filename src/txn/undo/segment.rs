//! One undo segment in memory: its header's address, and mirrors of its transaction
//! table that the hot paths need without a get: each active transaction's use of undo,
//! and when each ended transaction ended, which says whether a block it owns may be
//! reused.
//!
//! A block owned by an ended transaction may be reused: it is "expired" once the
//! transaction ended `undo_retention` seconds ago or more, "unexpired" before that.
//!
//! ```text
//!   blocks:  [ T7 ended 20 min ago | T9 active | T4 ended 2 s ago | free | ... ]
//!              ▲ expired              ▲ never    ▲ unexpired          ▲ free
//! ```
//!
//! Any segment judges any block by its owner's xid (`Undo::reuse_of`, module `space`),
//! so a segment that steals another's extent judges the blocks it took by the
//! transactions of the segment they came from.
//!
//! Invariants: the mirrors change only under the exclusive content lock of the segment
//! header, together with the slot they mirror, and the ended-slot mirror only while the
//! active mirror's lock is held, so a reader holding that lock sees both agree. The
//! mirror of an active transaction changes only through calls made for that transaction
//! (one session at a time), begin and commit.

use super::header::{SlotState, TXN_SLOTS, UndoHeader};
use crate::txn::{Uba, Xid};
use parking_lot::Mutex;
use std::sync::atomic::AtomicU64;

/// Whether an undo block may be reused, from most to least willingly.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Reuse {
    /// Never used.
    Free,
    /// Its transaction ended `undo_retention` seconds ago or more.
    Expired,
    /// Its transaction ended less than `undo_retention` seconds ago.
    Unexpired,
    /// Its transaction is still active.
    Active,
}

/// An active transaction's use of undo, as it is now (the header's slot may lag).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct ActiveTxn {
    pub wrap: u32,
    pub start_scn: u64,
    /// The undo block it writes into and that block's sequence.
    pub current: Option<(u32, u16)>,
    pub first: Uba,
    pub last: Uba,
    pub used_ublk: u32,
    pub used_urec: u32,
}

impl ActiveTxn {
    pub fn new(wrap: u32, start_scn: u64) -> ActiveTxn {
        ActiveTxn { wrap, start_scn, current: None, first: Uba::NONE, last: Uba::NONE, used_ublk: 0, used_urec: 0 }
    }

    /// Notes a record written at `uba`, in a newly claimed block if `new_block`.
    pub fn record_written(&mut self, uba: Uba, new_block: bool) {
        if self.first.is_none() {
            self.first = uba;
        }
        self.last = uba;
        self.used_urec += 1;
        if new_block {
            self.current = Some((uba.rdba, uba.seq));
            self.used_ublk += 1;
        }
    }
}

/// When the transactions of a segment's slots ended, as its transaction table says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct EndedSlots {
    /// Per slot: the wrap of its last ended transaction and its commit time (unix seconds).
    pub slots: Vec<(u32, u32)>,
    /// The header's control time: every transaction whose slot was claimed again ended
    /// by then.
    pub control_time: u32,
}

/// One undo segment.
pub(super) struct Segment {
    pub usn: u16,
    pub header_rdba: u32,
    /// Active transactions by transaction-table slot. Its lock is held while
    /// [`Segment::ended`] changes.
    pub active: Mutex<Vec<Option<ActiveTxn>>>,
    /// When the transactions that held each slot ended.
    pub ended: Mutex<EndedSlots>,
    /// Extents added to this segment by growing the tablespace since open (`EXTENDS`).
    pub extends: AtomicU64,
}

impl Segment {
    /// The segment whose header (at `header_rdba`) is `header`: its mirrors are filled
    /// from the transaction table. Also returns how many transactions are active in it.
    pub fn open(header_rdba: u32, header: UndoHeader<'_>) -> Result<(Segment, u64), String> {
        let mut active = vec![None; TXN_SLOTS];
        let mut ended = EndedSlots { slots: vec![(0, 0); TXN_SLOTS], control_time: header.control_time() };
        let mut n = 0;
        for (i, (entry, ended_slot)) in active.iter_mut().zip(&mut ended.slots).enumerate() {
            let slot = header.slot(i)?;
            match slot.state {
                SlotState::Active => {
                    // Its next record (if any) starts a new block: the slot does not keep
                    // the current block's sequence.
                    *entry = Some(ActiveTxn {
                        wrap: slot.wrap,
                        start_scn: slot.start_scn,
                        current: None,
                        first: slot.first,
                        last: slot.last,
                        used_ublk: slot.used_ublk,
                        used_urec: slot.used_urec,
                    });
                    n += 1;
                }
                SlotState::Committed => *ended_slot = (slot.wrap, slot.commit_time),
                SlotState::Free => {}
            }
        }
        let segment = Segment {
            usn: header.usn(),
            header_rdba,
            active: Mutex::new(active),
            ended: Mutex::new(ended),
            extends: AtomicU64::new(0),
        };
        Ok((segment, n))
    }

    /// The mirror of active transaction `xid`, if it is one of this segment's.
    pub fn active_txn(&self, xid: Xid) -> Option<ActiveTxn> {
        self.active.lock().get(xid.slot as usize).copied().flatten().filter(|t| t.wrap == xid.wrap)
    }

    /// Changes the mirror of active transaction `xid` (which must be active).
    pub fn update_txn(&self, xid: Xid, change: impl FnOnce(&mut ActiveTxn)) -> ActiveTxn {
        let mut active = self.active.lock();
        let txn = active[xid.slot as usize].as_mut().filter(|t| t.wrap == xid.wrap);
        let txn = txn.unwrap_or_else(|| panic!("transaction {xid} is active while it appends or commits"));
        change(txn);
        *txn
    }

    /// Notes that `xid` (one of this segment's) ended at unix time `at`.
    pub fn note_ended(&self, xid: Xid, at: u32) {
        let mut active = self.active.lock();
        self.ended.lock().slots[xid.slot as usize] = (xid.wrap, at);
        active[xid.slot as usize] = None;
    }

    /// Notes that slot `slot` was claimed by a new transaction, its previous holder having
    /// ended at `ended_at` (0 if it was never claimed).
    pub fn note_claimed(&self, slot: usize, txn: ActiveTxn, ended_at: u32) {
        let mut active = self.active.lock();
        let mut ended = self.ended.lock();
        ended.control_time = ended.control_time.max(ended_at);
        active[slot] = Some(txn);
    }

    /// Whether a block owned by `owner`, one of this segment's transactions, may be
    /// reused at unix time `now`. `Err` says why the owner cannot be one of them.
    pub fn reuse_of(&self, owner: Xid, now: u32, retention: u64) -> Result<Reuse, String> {
        let active = self.active.lock();
        let ended = self.ended.lock();
        let slot = owner.slot as usize;
        if slot >= TXN_SLOTS {
            return Err(format!("transaction {owner} names no slot of undo segment {}", self.usn));
        }
        let (ended_wrap, commit_time) = ended.slots[slot];
        let holder_wrap = active[slot].map_or(ended_wrap, |t| t.wrap);
        let ended_at = if holder_wrap == owner.wrap {
            if active[slot].is_some() {
                return Ok(Reuse::Active);
            }
            commit_time
        } else if holder_wrap > owner.wrap {
            // The slot was claimed again since: the owner ended by the control time.
            ended.control_time
        } else {
            return Err(format!("transaction {owner} is newer than its slot (wrap {holder_wrap})"));
        };
        Ok(if u64::from(now.saturating_sub(ended_at)) >= retention { Reuse::Expired } else { Reuse::Unexpired })
    }
}

/// Seconds since the Unix epoch (commit times and undo retention).
pub(super) fn unix_now() -> u32 {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    u32::try_from(now.as_secs()).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::block::rdba;
    use crate::txn::undo::header::{TxnSlot, UndoHeaderMut};

    #[test]
    fn reuse_follows_the_owner_slot_and_retention() {
        let mut b = vec![0u8; 2048];
        UndoHeaderMut(&mut b).format(rdba(2, 1), 1, 1, 1, rdba(2, 2));
        let active = TxnSlot { state: SlotState::Active, wrap: 2, ..TxnSlot::FREE };
        let ended = TxnSlot { state: SlotState::Committed, wrap: 1, commit_scn: 9, commit_time: 1000, ..TxnSlot::FREE };
        UndoHeaderMut(&mut b).set_slot(0, &active);
        UndoHeaderMut(&mut b).set_slot(1, &ended);
        UndoHeaderMut(&mut b).raise_control(5, 500);
        let (segment, active_count) = Segment::open(rdba(2, 1), UndoHeader(&b)).unwrap();
        assert_eq!(active_count, 1);
        let xid = |slot, wrap| Xid { usn: 1, slot, wrap };
        assert_eq!(segment.reuse_of(xid(0, 2), 2000, 900), Ok(Reuse::Active));
        assert_eq!(
            segment.reuse_of(xid(0, 1), 2000, 900),
            Ok(Reuse::Expired),
            "slot reused: ended by the control time"
        );
        assert_eq!(segment.reuse_of(xid(1, 1), 1500, 900), Ok(Reuse::Unexpired));
        assert_eq!(segment.reuse_of(xid(1, 1), 1900, 900), Ok(Reuse::Expired));
        assert_eq!(segment.reuse_of(xid(1, 1), 1000, 0), Ok(Reuse::Expired));
        assert!(segment.reuse_of(xid(1, 7), 1000, 0).is_err());
        assert!(segment.reuse_of(xid(34, 1), 1000, 0).is_err());
        segment.note_ended(xid(0, 2), 1990);
        assert_eq!(segment.reuse_of(xid(0, 2), 2000, 900), Ok(Reuse::Unexpired));
        segment.note_claimed(0, ActiveTxn::new(3, 50), 1990);
        assert_eq!(segment.reuse_of(xid(0, 2), 2000, 5), Ok(Reuse::Expired));
        assert_eq!(segment.reuse_of(xid(0, 3), 2000, 5), Ok(Reuse::Active));
    }
}
