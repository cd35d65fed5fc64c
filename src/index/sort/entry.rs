//! One key of a sort's run: a fixed-width entry that holds what most comparisons need,
//! and where the key's bytes are in the run's arena (module memory).
//!
//! ```text
//!  SortEntry { prefix, tie, offset, len }  24 bytes
//!  prefix = the key's first 8 bytes, big-endian, zero-padded
//!  tie    = min(len, 9) << 48 | rdba << 16 | slot
//! ```
//!
//! Two entries compare by `prefix`; on a tie, keys of at most 8 bytes are equal or one is
//! a prefix of the other, so the length class and then the rowid (both in `tie`) decide;
//! only two keys longer than 8 bytes with equal prefixes look at the arena (their bytes
//! from the 9th on). That order is (key bytes, rowid), the order of an index's full keys.

use crate::index::block::RowId;
use std::cmp::Ordering;

/// The length class of a key longer than the prefix.
const LONG: u64 = 9;

/// One key of the run: its normalized prefix, the tie-breakers, and where its bytes are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct SortEntry {
    pub prefix: u64,
    pub tie: u64,
    offset: u32,
    len: u32,
}

/// Bytes an entry takes in the run: itself and its slot in the radix sort's scratch.
pub(super) const ENTRY_BYTES: usize = 2 * std::mem::size_of::<SortEntry>();

impl SortEntry {
    pub fn new(key: &[u8], offset: usize, rowid: RowId) -> SortEntry {
        let mut head = [0u8; 8];
        let n = key.len().min(8);
        head[..n].copy_from_slice(&key[..n]);
        let class = (key.len() as u64).min(LONG);
        SortEntry {
            prefix: u64::from_be_bytes(head),
            tie: class << 48 | u64::from(rowid.rdba) << 16 | u64::from(rowid.slot),
            offset: u32::try_from(offset).expect("the sort area keeps the arena below 4 GiB"),
            len: key.len() as u32,
        }
    }

    pub fn rowid(&self) -> RowId {
        RowId { rdba: (self.tie >> 16) as u32, slot: self.tie as u16 }
    }

    /// The length of its key in bytes.
    pub fn key_len(&self) -> usize {
        self.len as usize
    }

    pub fn key<'a>(&self, arena: &'a [u8]) -> &'a [u8] {
        &arena[self.offset as usize..(self.offset + self.len) as usize]
    }

    /// The (key, rowid) order of two entries of `arena`.
    #[inline]
    pub fn cmp_in(&self, other: &SortEntry, arena: &[u8]) -> Ordering {
        match self.prefix.cmp(&other.prefix) {
            Ordering::Equal => {}
            unequal => return unequal,
        }
        if self.tie >> 48 == LONG && other.tie >> 48 == LONG {
            match self.key(arena)[8..].cmp(&other.key(arena)[8..]) {
                Ordering::Equal => {}
                unequal => return unequal,
            }
        }
        self.tie.cmp(&other.tie)
    }
}
