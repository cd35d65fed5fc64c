//! Interested transaction list (ITL) slots of a data block: which transactions changed
//! the block, where their undo for it starts, and whether they are known to be committed.
//!
//! ```text
//!  offset  size  field
//!  0       2     xid: undo segment number
//!  2       2     xid: slot in that segment's transaction table
//!  4       4     xid: wrap (incarnation of the slot)
//!  8       4     uba: undo block address of the newest undo record for this block
//!  12      2     uba: sequence of that undo block
//!  14      1     uba: record index in the undo block
//!  15      1     (pad)
//!  16      6     commit SCN (48 bits), valid when flags has COMMITTED
//!  22      1     flags: COMMITTED 0x80, UPPER_BOUND 0x40
//!  23      1     lock count: rows of the block locked through this slot
//! ```
//!
//! A slot with a zero xid is free. A row's lock byte holds the 1-based number of the slot
//! of the transaction that last changed it; the lock is held while that transaction is
//! active. Invariants: a slot whose transaction is active has no COMMITTED flag; a slot
//! with COMMITTED has `commit_scn` set (an upper bound only when UPPER_BOUND is set too).

use super::block::{DEFAULT_ITL_SLOTS, DataBlockMut, HEADER_LEN, ITL_LEN, OFF_ITL_COUNT};
use super::block_write::BlockWrite;
use super::ids::{Uba, Xid};

/// The transaction's commit is known and stamped: the slot is cleaned out.
pub const ITL_COMMITTED: u8 = 0x80;

/// One decoded ITL slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Itl {
    pub xid: Xid,
    pub uba: Uba,
    pub commit_scn: u64,
    pub flags: u8,
    pub lock_count: u8,
}

impl Itl {
    /// Whether no transaction uses this slot.
    pub fn is_free(&self) -> bool {
        self.xid.is_none()
    }

    /// Whether the slot is stamped with its transaction's commit.
    pub fn is_committed(&self) -> bool {
        self.flags & ITL_COMMITTED != 0
    }

    pub fn encode(&self) -> [u8; ITL_LEN] {
        let mut b = [0u8; ITL_LEN];
        b[0..2].copy_from_slice(&self.xid.usn.to_le_bytes());
        b[2..4].copy_from_slice(&self.xid.slot.to_le_bytes());
        b[4..8].copy_from_slice(&self.xid.wrap.to_le_bytes());
        b[8..12].copy_from_slice(&self.uba.rdba.to_le_bytes());
        b[12..14].copy_from_slice(&self.uba.seq.to_le_bytes());
        b[14] = self.uba.record;
        b[16..22].copy_from_slice(&self.commit_scn.to_le_bytes()[..6]);
        b[22] = self.flags;
        b[23] = self.lock_count;
        b
    }

    pub fn decode(b: &[u8]) -> Itl {
        let u16_at = |o: usize| u16::from_le_bytes([b[o], b[o + 1]]);
        let u32_at = |o: usize| u32::from_le_bytes([b[o], b[o + 1], b[o + 2], b[o + 3]]);
        let mut scn = [0u8; 8];
        scn[..6].copy_from_slice(&b[16..22]);
        Itl {
            xid: Xid { usn: u16_at(0), slot: u16_at(2), wrap: u32_at(4) },
            uba: Uba { rdba: u32_at(8), seq: u16_at(12), record: b[14] },
            commit_scn: u64::from_le_bytes(scn),
            flags: b[22],
            lock_count: b[23],
        }
    }
}

/// ITL slots of a data block.
pub fn itl_count(block: &[u8]) -> usize {
    block[OFF_ITL_COUNT] as usize
}

fn itl_offset(index: usize) -> usize {
    HEADER_LEN + index * ITL_LEN
}

/// ITL slot `index` (0-based) of a data block.
#[inline]
pub fn get(block: &[u8], index: usize) -> Itl {
    assert!(index < itl_count(block), "ITL slot {index} of a block with {} slots", itl_count(block));
    let off = itl_offset(index);
    Itl::decode(&block[off..off + ITL_LEN])
}

/// Writes ITL slot `index` (0-based) of a data block.
pub fn put<B: BlockWrite + ?Sized>(block: &mut B, index: usize, itl: &Itl) {
    let count = itl_count(block.bytes());
    assert!(index < count, "ITL slot {index} of a block with {count} slots");
    block.put(itl_offset(index), &itl.encode());
}

/// Whether every ITL slot of the block is free or stamped committed at or before `scn`:
/// the block as it is shows exactly what a reader as of `scn` may see, with no
/// transaction table to consult. The check a consistent get makes on every block, so it
/// reads each slot as two words: the xid, and the commit SCN with the flags above it.
#[inline(always)]
pub fn all_committed_by(block: &[u8], scn: u64) -> bool {
    let count = itl_count(block);
    let Some(slots) = block.get(HEADER_LEN..HEADER_LEN + count * ITL_LEN) else { return false };
    slots.chunks_exact(ITL_LEN).all(|slot| {
        let word = |at: usize| u64::from_le_bytes(slot[at..at + 8].try_into().expect("8 bytes"));
        let (xid, stamp) = (word(0), word(16));
        let committed = (stamp >> 48) as u8 & ITL_COMMITTED != 0;
        xid == 0 || (committed && stamp & ((1 << 48) - 1) <= scn)
    })
}

/// For a private copy of a data block (a CR clone) whose undo needs more room: drops the
/// ITL slots at the end that no transaction holds (beyond the [`DEFAULT_ITL_SLOTS`]
/// every block is formatted with) and the empty row-directory entries at the end
/// ([`DataBlockMut::shed_tail`]). Slots grown, and rows inserted, after the moment the
/// copy's undo has reached took that space from free space; the copy has no use for
/// them. Returns whether anything was dropped.
pub fn shed_unused_tail(block: &mut [u8]) -> bool {
    let mut slots = itl_count(block);
    while slots > usize::from(DEFAULT_ITL_SLOTS) && get(block, slots - 1).is_free() {
        slots -= 1;
    }
    DataBlockMut(block).shed_tail(slots)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::block::{DataBlockMut, rdba};
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn itl_round_trips(usn in 1u16.., slot: u16, wrap: u32, ublk: u32, seq: u16, rec: u8,
                           scn in 0u64..(1 << 48), flags in 0u8..=0xC0, locks: u8) {
            let itl = Itl { xid: Xid { usn, slot, wrap }, uba: Uba { rdba: ublk, seq, record: rec },
                            commit_scn: scn, flags, lock_count: locks };
            prop_assert_eq!(Itl::decode(&itl.encode()), itl);
        }
    }

    #[test]
    fn committed_by_checks_every_slot() {
        let mut b = vec![0u8; 8192];
        DataBlockMut(&mut b).format(rdba(1, 9), 3, 2);
        assert!(all_committed_by(&b, 0), "free slots need nothing");
        let mut itl = Itl { xid: Xid { usn: 1, slot: 2, wrap: 3 }, ..Itl::default() };
        put(&mut b, 1, &itl);
        assert!(!all_committed_by(&b, 100), "an active transaction");
        itl.flags = ITL_COMMITTED;
        itl.commit_scn = 50;
        put(&mut b, 1, &itl);
        assert!(all_committed_by(&b, 50));
        assert!(!all_committed_by(&b, 49), "committed after the snapshot");
    }
}
