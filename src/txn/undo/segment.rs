//! One undo segment in memory: where its blocks are, mirrors of what its blocks say that
//! the hot paths need without a get, and handing out ring blocks (space management).
//!
//! The ring: ring blocks are handed out in order after the ring head, wrapping around.
//! A block may be reused only when the transaction that owns it has ended:
//!
//! ```text
//!   ring:  [ T7 ended 20 min ago | T9 active | T4 ended 2 s ago | free | ... ]
//!            ▲ expired: reused first           ▲ unexpired: reused only if no expired
//!                            ▲ never reused       or free block is left (a steal)
//! ```
//!
//! A transaction has ended `undo_retention` seconds ago or more ("expired"), or less
//! ("unexpired"). The scan from the head takes the first free or expired block; failing
//! that, the first unexpired one; failing that (every block belongs to an active
//! transaction) the append fails with `Error::UndoSpace`. A reused block gets the next
//! sequence number, so a later read of an address into its old contents fails with
//! `Error::SnapshotTooOld`.
//!
//! Invariants: ring entries and the ring head change only under the exclusive content
//! lock of the segment header; a ring block owned by an active transaction is never
//! handed out; the mirror of an active transaction changes only through calls made for
//! that transaction (one session at a time), begin and commit.

use super::header::{SegmentGeometry, SlotState, TXN_SLOTS, UndoHeader, UndoHeaderMut};
use super::stats::UndoCounters;
use super::tablespace;
use super::undo_block::{UndoBlock, UndoBlockMut, next_seq};
use crate::access::AccessContext;
use crate::buffer::WriteGuard;
use crate::error::{Error, Result};
use crate::txn::{Uba, Xid};
use parking_lot::Mutex;

/// What the undo layer knows of one ring block without reading it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum RingEntry {
    /// Not looked at since the database was opened.
    Unknown,
    /// Owned by `owner` (`Xid::NONE` for a block never formatted) at sequence `seq`.
    Known { owner: Xid, seq: u16 },
}

/// Whether a ring block may be reused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
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

/// One undo segment.
pub(super) struct Segment {
    pub geometry: SegmentGeometry,
    pub header_rdba: u32,
    /// Active transactions by transaction-table slot.
    pub active: Mutex<Vec<Option<ActiveTxn>>>,
    /// Owner and sequence of each ring block as last seen. Changed only under the
    /// header's exclusive content lock, which every user of it holds.
    ring: Mutex<Vec<RingEntry>>,
}

impl Segment {
    pub fn new(geometry: SegmentGeometry, header_rdba: u32) -> Segment {
        Segment {
            geometry,
            header_rdba,
            active: Mutex::new(vec![None; TXN_SLOTS]),
            ring: Mutex::new(vec![RingEntry::Unknown; geometry.ring_blocks as usize]),
        }
    }

    pub fn usn(&self) -> u16 {
        self.geometry.usn
    }

    /// Whether `rdba` is one of this segment's ring blocks.
    pub fn holds_block(&self, rdba: u32) -> bool {
        rdba >= self.geometry.ring_first && rdba < self.geometry.ring_first + self.geometry.ring_blocks
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

    /// Hands out the next reusable ring block to `xid`: formats it (a new block in the
    /// cache, not read) and records the claim in the header. Returns the block,
    /// exclusively held, and its new sequence.
    pub fn claim_block<'a>(
        &self,
        ctx: &AccessContext<'a>,
        counters: &UndoCounters,
        header: &mut [u8],
        xid: Xid,
    ) -> Result<(WriteGuard<'a>, u16)> {
        let retention = ctx.db.parameters.read().get_u64(crate::db::params::UNDO_RETENTION);
        let now = unix_now();
        let mut ring = self.ring.lock();
        let (index, reuse, old_seq) =
            self.choose(ctx, &mut ring, UndoHeader(header), now, retention)?.ok_or_else(|| {
                UndoCounters::bump(&counters.no_space);
                Error::UndoSpace {
                    reason: format!(
                        "undo segment {}: all {} undo blocks belong to active transactions",
                        tablespace::segment_name(self.usn()),
                        self.geometry.ring_blocks
                    ),
                }
            })?;
        match reuse {
            Reuse::Expired => UndoCounters::bump(&counters.expired_steals),
            Reuse::Unexpired => UndoCounters::bump(&counters.unexpired_steals),
            Reuse::Free | Reuse::Active => {}
        }
        UndoCounters::bump(&counters.undo_blocks);
        let rdba = self.geometry.ring_first + index;
        let seq = next_seq(old_seq);
        let mut block = ctx.db.cache.new_block(ctx.stats, rdba, tablespace::object_id(self.usn()))?;
        UndoBlockMut(&mut block).format_zeroed(rdba, tablespace::object_id(self.usn()), xid, seq);
        ring[index as usize] = RingEntry::Known { owner: xid, seq };
        UndoHeaderMut(header).set_ring_head(index);
        Ok((block, seq))
    }

    /// The ring block to hand out next: (index, why it may be reused, its sequence), or
    /// `None` if every block belongs to an active transaction.
    fn choose(
        &self,
        ctx: &AccessContext<'_>,
        ring: &mut [RingEntry],
        header: UndoHeader<'_>,
        now: u32,
        retention: u64,
    ) -> Result<Option<(u32, Reuse, u16)>> {
        let n = self.geometry.ring_blocks;
        let head = header.ring_head();
        let mut unexpired = None;
        for step in 1..=n {
            let index = (head + step) % n;
            let (owner, seq) = self.ring_entry(ctx, ring, header, index)?;
            let reuse = classify(owner, header, now, retention)
                .map_err(|r| ctx.corrupt(self.geometry.ring_first + index, format!("owner of undo block: {r}")))?;
            match reuse {
                Reuse::Free | Reuse::Expired => return Ok(Some((index, reuse, seq))),
                Reuse::Unexpired => {
                    unexpired.get_or_insert((index, reuse, seq));
                }
                Reuse::Active => {}
            }
        }
        Ok(unexpired)
    }

    /// The owner and sequence of ring block `index`, reading its header (a consistent
    /// get) the first time it is looked at since open. Blocks at or above the ring's
    /// high-water mark are known to be unformatted.
    fn ring_entry(
        &self,
        ctx: &AccessContext<'_>,
        ring: &mut [RingEntry],
        header: UndoHeader<'_>,
        index: u32,
    ) -> Result<(Xid, u16)> {
        if let RingEntry::Known { owner, seq } = ring[index as usize] {
            return Ok((owner, seq));
        }
        let (owner, seq) = if index >= header.ring_hwm() {
            (Xid::NONE, 0)
        } else {
            let rdba = self.geometry.ring_first + index;
            let guard = ctx.db.cache.consistent_get(ctx.stats, rdba)?;
            let block = UndoBlock(&guard);
            if !block.is_undo_block() {
                return Err(ctx.corrupt(rdba, "ring block below the ring's high-water mark is not an undo block"));
            }
            (block.owner(), block.seq())
        };
        ring[index as usize] = RingEntry::Known { owner, seq };
        Ok((owner, seq))
    }
}

/// Whether a ring block owned by `owner` may be reused, judged from the transaction table
/// of its segment (`header`). `Err` says why the owner cannot be one of its transactions.
pub(super) fn classify(owner: Xid, header: UndoHeader<'_>, now: u32, retention: u64) -> Result<Reuse, String> {
    if owner.is_none() {
        return Ok(Reuse::Free);
    }
    let usn = header.geometry().usn;
    if owner.usn != usn || owner.slot as usize >= TXN_SLOTS {
        return Err(format!("transaction {owner} is not one of undo segment {usn}'s"));
    }
    let slot = header.slot(owner.slot as usize)?;
    let ended_at = if slot.wrap == owner.wrap {
        match slot.state {
            SlotState::Active => return Ok(Reuse::Active),
            SlotState::Committed => slot.commit_time,
            SlotState::Free => return Err(format!("transaction {owner} names a slot never used")),
        }
    } else if slot.wrap > owner.wrap {
        // The slot was reused: the owner ended no later than the control time.
        header.control_time()
    } else {
        return Err(format!("transaction {owner} is newer than its slot (wrap {})", slot.wrap));
    };
    Ok(if u64::from(now.saturating_sub(ended_at)) >= retention { Reuse::Expired } else { Reuse::Unexpired })
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
        let geometry =
            SegmentGeometry { usn: 1, segments: 1, segment_blocks: 5, ring_first: rdba(2, 2), ring_blocks: 4 };
        let mut b = vec![0u8; 2048];
        UndoHeaderMut(&mut b).format(rdba(2, 1), 1, geometry);
        let active = TxnSlot { state: SlotState::Active, wrap: 2, ..TxnSlot::FREE };
        let ended = TxnSlot { state: SlotState::Committed, wrap: 1, commit_scn: 9, commit_time: 1000, ..TxnSlot::FREE };
        UndoHeaderMut(&mut b).set_slot(0, &active);
        UndoHeaderMut(&mut b).set_slot(1, &ended);
        UndoHeaderMut(&mut b).raise_control(5, 500);
        let h = UndoHeader(&b);
        let xid = |slot, wrap| Xid { usn: 1, slot, wrap };
        assert_eq!(classify(Xid::NONE, h, 2000, 900), Ok(Reuse::Free));
        assert_eq!(classify(xid(0, 2), h, 2000, 900), Ok(Reuse::Active));
        assert_eq!(classify(xid(0, 1), h, 2000, 900), Ok(Reuse::Expired), "slot reused: ended by the control time");
        assert_eq!(classify(xid(1, 1), h, 1500, 900), Ok(Reuse::Unexpired));
        assert_eq!(classify(xid(1, 1), h, 1900, 900), Ok(Reuse::Expired));
        assert_eq!(classify(xid(1, 1), h, 1000, 0), Ok(Reuse::Expired));
        assert!(classify(xid(1, 7), h, 1000, 0).is_err());
        assert!(classify(Xid { usn: 2, slot: 0, wrap: 1 }, h, 1000, 0).is_err());
    }
}
