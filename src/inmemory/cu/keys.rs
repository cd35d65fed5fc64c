//! Keys packed into one buffer with their end offsets: [`KeyList`] while a unit is
//! gathered, [`StoredKeys`] as a unit keeps them (in the In-Memory Area when large), and
//! [`KeyDict`], the dictionary of a unit's distinct keys; with the sort that orders a
//! dictionary and the inline comparisons the hot loops use instead of `memcmp`.
//!
//! Invariants: a list of `n` keys has `n + 1` ascending offsets, the first 0; offsets are
//! `u32`, so one unit's keys take under 4 GiB; a dictionary's keys are distinct and
//! ascending.

use super::search::{partition_point, positions};
use crate::inmemory::area::{InMemoryArea, Stored};
use std::ops::Bound;

/// Keys packed into one buffer.
#[derive(Clone, Debug)]
pub(super) struct KeyList {
    /// The keys concatenated in order.
    pub(super) bytes: Vec<u8>,
    /// `len + 1` ascending offsets into `bytes`: key `i` is `bytes[offsets[i]..offsets[i + 1]]`.
    pub(super) offsets: Vec<u32>,
}

/// Keys packed into one array, as a unit keeps them (in the In-Memory Area when large).
#[derive(Clone, Debug)]
pub(super) struct StoredKeys {
    /// The keys concatenated in order.
    bytes: Stored<u8>,
    /// `len + 1` ascending offsets into `bytes`: key `i` is `bytes[offsets[i]..offsets[i + 1]]`.
    offsets: Stored<u32>,
}

/// Distinct keys in ascending order: key `c` has code `c`.
#[derive(Clone, Debug)]
pub(super) struct KeyDict(pub(super) StoredKeys);

impl KeyList {
    /// An empty list with room for `keys` keys.
    pub(super) fn with_capacity(keys: usize) -> KeyList {
        let mut offsets = Vec::with_capacity(keys + 1);
        offsets.push(0);
        KeyList { bytes: Vec::new(), offsets }
    }

    pub(super) fn push(&mut self, key: &[u8]) {
        self.bytes.extend_from_slice(key);
        self.offsets.push(offset_u32(self.bytes.len()));
    }

    /// Empties the list, keeping its room.
    pub(super) fn clear(&mut self) {
        self.bytes.clear();
        self.offsets.truncate(1);
    }

    pub(super) fn len(&self) -> usize {
        self.offsets.len() - 1
    }

    pub(super) fn key(&self, i: usize) -> &[u8] {
        &self.bytes[self.offsets[i] as usize..self.offsets[i + 1] as usize]
    }
}

impl StoredKeys {
    /// A copy of `keys`, in `area` when given and it has room.
    pub(super) fn copy_of(keys: &KeyList, area: Option<&InMemoryArea>) -> StoredKeys {
        StoredKeys { bytes: Stored::copy_of(area, &keys.bytes), offsets: Stored::copy_of(area, &keys.offsets) }
    }

    pub(super) fn len(&self) -> usize {
        self.offsets.len() - 1
    }

    pub(super) fn key(&self, i: usize) -> &[u8] {
        &self.bytes[self.offsets[i] as usize..self.offsets[i + 1] as usize]
    }

    /// The keys' bytes and their offsets.
    pub(super) fn parts(&self) -> (&[u8], &[u32]) {
        (&self.bytes, &self.offsets)
    }

    /// The keys' bytes and their offsets, given up.
    pub(super) fn into_parts(self) -> (Stored<u8>, Stored<u32>) {
        (self.bytes, self.offsets)
    }

    /// Keys from their bytes and `len + 1` ascending offsets from 0 to the bytes' length
    /// (the caller has checked them).
    pub(super) fn from_parts(bytes: Stored<u8>, offsets: Stored<u32>) -> StoredKeys {
        StoredKeys { bytes, offsets }
    }

    /// Bytes of both arrays.
    pub(super) fn bytes(&self) -> usize {
        self.bytes.len() + self.offsets.len() * size_of::<u32>()
    }
}

impl KeyDict {
    /// The dictionary of the keys of `distinct` (all different) in the order `order`, which
    /// sorts them, in `area` when given and it has room.
    pub(super) fn new(distinct: &KeyList, order: &[u32], area: Option<&InMemoryArea>) -> KeyDict {
        debug_assert_eq!(order.len(), distinct.len(), "the order sorts every distinct key");
        let sorted = || order.iter().map(|&i| distinct.key(i as usize));
        // Written where they stay: no sorted copy is built first.
        let bytes = Stored::zeroed_in(area, distinct.bytes.len(), |out| {
            let mut at = 0;
            for key in sorted() {
                out[at..at + key.len()].copy_from_slice(key);
                at += key.len();
            }
        });
        let offsets = Stored::zeroed_in(area, order.len() + 1, |out| {
            let mut end = 0;
            for (offset, key) in out[1..].iter_mut().zip(sorted()) {
                end += key.len();
                *offset = offset_u32(end);
            }
        });
        KeyDict(StoredKeys { bytes, offsets })
    }

    pub(super) fn len(&self) -> usize {
        self.0.len()
    }

    pub(super) fn key(&self, code: usize) -> &[u8] {
        self.0.key(code)
    }

    /// The code of `key`, if it is in the dictionary.
    pub(super) fn find(&self, key: &[u8]) -> Option<usize> {
        let code = partition_point(self.len(), |i| self.key(i) < key);
        (code < self.len() && self.key(code) == key).then_some(code)
    }

    /// The codes of the keys within `lo` and `hi`.
    pub(super) fn code_range(&self, lo: &Bound<Vec<u8>>, hi: &Bound<Vec<u8>>) -> Option<(u64, u64)> {
        let below = |i: usize| match lo {
            Bound::Included(lo) => self.key(i) < lo.as_slice(),
            Bound::Excluded(lo) => self.key(i) <= lo.as_slice(),
            Bound::Unbounded => false,
        };
        let within = |i: usize| match hi {
            Bound::Included(hi) => self.key(i) <= hi.as_slice(),
            Bound::Excluded(hi) => self.key(i) < hi.as_slice(),
            Bound::Unbounded => true,
        };
        positions(self.len(), below, within)
    }
}

/// A byte offset within one unit's keys as `u32`; panics past 4 GiB (a unit of 64 MiB of
/// blocks holds far less).
fn offset_u32(offset: usize) -> u32 {
    u32::try_from(offset).unwrap_or_else(|_| panic!("a column unit's keys take under 4 GiB, not {offset} bytes"))
}

/// The indexes of `keys` in ascending order of key. Keys are sorted by the eight bytes
/// after the prefix they all share (read big-endian, zero-padded), and only keys that tie
/// there are compared whole: names with a common stem then sort as integers.
pub(super) fn sorted_order(keys: &KeyList) -> Vec<u32> {
    let first = if keys.len() == 0 { &[][..] } else { keys.key(0) };
    let shared = (0..keys.len()).map(|i| keys.key(i)).fold(first.len(), |shared, key| {
        shared.min(first.iter().zip(key.iter()).take(shared).take_while(|(a, b)| a == b).count())
    });
    let prefix = |key: &[u8]| {
        let mut word = [0u8; 8];
        let rest = &key[shared..];
        let n = rest.len().min(8);
        word[..n].copy_from_slice(&rest[..n]);
        u64::from_be_bytes(word)
    };
    let mut order: Vec<(u64, u32)> = (0..keys.len()).map(|id| (prefix(keys.key(id)), id as u32)).collect();
    order.sort_unstable_by(|a, b| {
        a.0.cmp(&b.0).then_with(|| compare_keys(keys.key(a.1 as usize), keys.key(b.1 as usize)))
    });
    order.into_iter().map(|(_, id)| id).collect()
}

/// Whether two keys are equal, compared inline eight bytes at a time (a probe that finds
/// its key compares once per row; a call to `memcmp` would cost more than the compare).
#[inline]
pub(super) fn same_key(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n != b.len() {
        return false;
    }
    let word = |key: &[u8], at: usize| u64::from_le_bytes(key[at..at + 8].try_into().expect("8 bytes"));
    let half = |key: &[u8], at: usize| u32::from_le_bytes(key[at..at + 4].try_into().expect("4 bytes"));
    match n {
        0..=3 => a.iter().zip(b).all(|(x, y)| x == y),
        4..=7 => half(a, 0) == half(b, 0) && half(a, n - 4) == half(b, n - 4),
        _ => {
            let mut at = 0;
            while at + 8 < n {
                if word(a, at) != word(b, at) {
                    return false;
                }
                at += 8;
            }
            word(a, n - 8) == word(b, n - 8)
        }
    }
}

/// `a` against `b` in byte order, eight bytes at a time inline (as [`same_key`], for
/// loops that compare every row).
#[inline]
pub(super) fn compare_keys(a: &[u8], b: &[u8]) -> std::cmp::Ordering {
    let word = |key: &[u8], at: usize| u64::from_be_bytes(key[at..at + 8].try_into().expect("8 bytes"));
    let common = a.len().min(b.len());
    let mut at = 0;
    while at + 8 <= common {
        let (x, y) = (word(a, at), word(b, at));
        if x != y {
            return x.cmp(&y);
        }
        at += 8;
    }
    a[at..].cmp(&b[at..])
}
