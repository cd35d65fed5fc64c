//! [`KeyColumnBuilder`]: a unit of keys gathered row by row as population reads them, and
//! encoded at `finish`: the estimate of the distinct keys, the hash table that collects
//! them, and the choice between plain keys and a dictionary (the passes are described on
//! the builder).
//!
//! Invariants: between `finish`es the builder holds every row pushed, in order (a NULL
//! row as an empty key, and listed in `null_rows`); a slot of the table is 0 when empty,
//! else the high half of its key's hash above the key's index + 1.

use super::codes::{Codes, Lanes, Runs, bits_for, count_runs, fill_nulls};
use super::domain::Domain;
use super::keys::{KeyDict, KeyList, same_key, sorted_order};
use super::plain::PlainKeys;
use super::{Body, ColumnUnit, Packing};
use crate::inmemory::area::InMemoryArea;
use crate::inmemory::bitmap::Bitmap;

/// Units with at least this many non-NULL keys are stored plain, without collecting a
/// dictionary, when an estimate finds more than half of them distinct.
const ESTIMATED_PLAIN_MIN_KEYS: usize = 4096;

/// Builds a column unit of keys: rows are appended to one buffer as they arrive, and
/// [`KeyColumnBuilder::finish`] encodes them in passes over that buffer (tight loops whose
/// table probes overlap in the memory system):
///
/// 1. every non-NULL key is hashed, and a linear-counting estimate of the distinct keys
///    is taken from the hashes (each sets one bit of a bitmap at least as large as the
///    rows; `m · ln(m / zero bits)` estimates how many distinct values set them);
/// 2. a unit of 4,096 keys or more that is more than half distinct, and whose dictionary
///    would by the estimate take no less room than the keys themselves, keeps the buffer
///    as its plain keys (no table, no sort); not under `Packing::Smallest`, which
///    always weighs the exact sizes;
/// 3. otherwise the distinct keys are collected through an open-addressing table of
///    `hash high half << 32 | index + 1`, sized from the estimate (a probe reads one slot
///    and compares bytes only when the halves match), and the dictionary is kept when it
///    is the smaller form, codes included.
///
/// `finish` leaves the builder empty with its buffers' room kept, so that a population
/// worker gathers unit after unit into memory it has already touched (a fresh buffer
/// costs a page fault every 4 KiB as it fills).
#[derive(Debug)]
pub struct KeyColumnBuilder {
    /// Every row's key in row order, empty for NULL.
    rows: KeyList,
    /// The NULL rows, ascending.
    null_rows: Vec<u32>,
    /// Bytes of the non-NULL keys.
    key_bytes: usize,
    /// The non-NULL keys' hashes, built by `finish` (kept for its room).
    hashes: Vec<u64>,
}

impl Default for KeyColumnBuilder {
    fn default() -> Self {
        KeyColumnBuilder::new()
    }
}

impl KeyColumnBuilder {
    pub fn new() -> KeyColumnBuilder {
        KeyColumnBuilder { rows: KeyList::with_capacity(0), null_rows: Vec::new(), key_bytes: 0, hashes: Vec::new() }
    }

    /// Forgets the rows pushed, keeping the buffers' room.
    pub fn clear(&mut self) {
        self.rows.clear();
        self.null_rows.clear();
        self.key_bytes = 0;
    }

    #[cfg(test)]
    /// Rows pushed, NULL or not.
    pub fn rows(&self) -> usize {
        self.rows.len()
    }

    /// Bytes of the non-NULL keys pushed.
    pub fn key_bytes(&self) -> usize {
        self.key_bytes
    }

    /// The first row whose key is not valid UTF-8. The buffer is checked in one pass, and
    /// every key must start on a character boundary: together they mean every key is
    /// valid on its own. Only when that fails are the keys checked one by one.
    pub fn first_invalid_utf8(&self) -> Option<usize> {
        let bytes = &self.rows.bytes;
        let boundary = |at: u32| bytes.get(at as usize).is_none_or(|&b| (b as i8) >= -0x40);
        if std::str::from_utf8(bytes).is_ok() && self.rows.offsets.iter().all(|&at| boundary(at)) {
            return None;
        }
        (0..self.rows.len()).find(|&row| std::str::from_utf8(self.rows.key(row)).is_err())
    }

    /// Makes room for `rows` more rows of `bytes` more key bytes.
    pub fn reserve(&mut self, rows: usize, bytes: usize) {
        self.rows.offsets.reserve(rows);
        self.rows.bytes.reserve(bytes);
    }

    /// Appends one row's key, `None` for NULL.
    #[inline]
    pub fn push(&mut self, key: Option<&[u8]>) {
        match key {
            Some(key) => {
                self.key_bytes += key.len();
                self.rows.push(key);
            }
            None => {
                self.null_rows.push(self.rows.len() as u32);
                self.rows.push(&[]);
            }
        }
    }

    /// The column unit of the rows pushed, at `packing`; the builder is left empty (see
    /// [`KeyColumnBuilder::clear`]). Panics past `u32::MAX` rows.
    pub fn finish(&mut self, packing: Packing, area: Option<&InMemoryArea>) -> ColumnUnit {
        let unit = self.encode(packing, area);
        self.clear();
        unit
    }

    fn encode(&mut self, packing: Packing, area: Option<&InMemoryArea>) -> ColumnUnit {
        let started = std::time::Instant::now();
        let mut dictionary_done = None;
        let unit = self.encode_timed(packing, area, &mut dictionary_done);
        if let Some(done) = dictionary_done {
            super::build_clock::add_dictionary(done - started);
        }
        unit
    }

    /// [`KeyColumnBuilder::encode`], noting in `dictionary_done` when the dictionary's
    /// work (hashing, estimating, finding the distinct keys) ended, if it was done.
    fn encode_timed(
        &mut self,
        packing: Packing,
        area: Option<&InMemoryArea>,
        dictionary_done: &mut Option<std::time::Instant>,
    ) -> ColumnUnit {
        let rows = self.rows.len();
        assert!(u32::try_from(rows).is_ok(), "a column unit holds at most u32::MAX rows, not {rows}");
        let nulls = (!self.null_rows.is_empty()).then(|| {
            let mut nulls = Bitmap::none(rows);
            self.null_rows.iter().for_each(|&row| nulls.set(row as usize));
            nulls
        });
        let null_count = self.null_rows.len();
        let keys = rows - null_count;
        let body = if keys == 0 {
            Body::AllNull
        } else {
            let is_null = |row: usize| nulls.as_ref().is_some_and(|n| n.get(row));
            let hashes = &mut self.hashes;
            hashes.clear();
            hashes.extend((0..rows).filter(|&row| !is_null(row)).map(|row| hash_key(self.rows.key(row))));
            let estimate = estimate_distinct(hashes);
            let plain_bytes = self.key_bytes + (rows + 1) * size_of::<u32>();
            if packing != Packing::Smallest
                && keys >= ESTIMATED_PLAIN_MIN_KEYS
                && estimate * 2 > keys
                && plain_bytes <= estimated_dictionary_bytes(self.key_bytes, keys, rows, estimate)
            {
                Body::Plain(PlainKeys::new(&self.rows, nulls.as_ref(), area))
            } else {
                let (distinct, ids) = distinct_keys(&self.rows, nulls.as_ref(), hashes, estimate);
                *dictionary_done = Some(std::time::Instant::now());
                // The dictionary's size before sorting it: its keys, offsets and codes
                // (run-length encoding under Packing::Smallest only ever makes the codes
                // smaller).
                let bits = bits_for(distinct.len() as u64 - 1);
                let lanes = if packing == Packing::ByteAligned { Packing::ByteAligned } else { Packing::Tight };
                let dictionary_bytes = distinct.bytes.len()
                    + (distinct.len() + 1) * size_of::<u32>()
                    + Lanes::bytes_for(rows, bits, lanes);
                if self.key_bytes + (rows + 1) * size_of::<u32>() < dictionary_bytes {
                    Body::Plain(PlainKeys::new(&self.rows, nulls.as_ref(), area))
                } else {
                    dictionary_body(&distinct, &ids, bits, packing, area)
                }
            }
        };
        ColumnUnit { rows, nulls, null_count, body }
    }
}

/// The bytes a dictionary of `distinct` of `keys` keys (of `key_bytes` in all) over `rows`
/// rows would take, its codes bit-packed: the same for every packing that asks, so
/// they all make the same choice.
fn estimated_dictionary_bytes(key_bytes: usize, keys: usize, rows: usize, distinct: usize) -> usize {
    let distinct = distinct.clamp(1, keys);
    key_bytes * distinct / keys
        + (distinct + 1) * size_of::<u32>()
        + Lanes::bytes_for(rows, bits_for(distinct as u64 - 1), Packing::Tight)
}

/// How many distinct values `hashes` hold, estimated by linear counting (see
/// [`KeyColumnBuilder`]); it only steers the choice between plain keys and a dictionary.
fn estimate_distinct(hashes: &[u64]) -> usize {
    let m = hashes.len().next_power_of_two().max(64);
    let mut bits = vec![0u64; m / 64];
    for &h in hashes {
        let at = (h >> 32) as usize & (m - 1);
        bits[at / 64] |= 1 << (at % 64);
    }
    let zeros = m - bits.iter().map(|w| w.count_ones() as usize).sum::<usize>();
    let estimate = m as f64 * (m as f64 / zeros.max(1) as f64).ln();
    estimate.round() as usize
}

/// The distinct keys of `rows` in order of first appearance (copied together, so that
/// probes compare against a compact buffer), and each row's index among them (`None`
/// for NULL); `hashes` are those of the non-NULL rows, `expected` sizes the table.
fn distinct_keys(
    rows: &KeyList,
    nulls: Option<&Bitmap>,
    hashes: &[u64],
    expected: usize,
) -> (KeyList, Vec<Option<u32>>) {
    let mut slots = vec![0u64; (expected * 2).next_power_of_two().max(16)];
    let mut distinct = KeyList::with_capacity(expected);
    distinct.bytes.reserve(expected * rows.bytes.len() / hashes.len().max(1));
    let mut distinct_hashes: Vec<u64> = Vec::with_capacity(expected);
    let mut next = 0;
    let ids = (0..rows.len())
        .map(|row| {
            if nulls.is_some_and(|n| n.get(row)) {
                return None;
            }
            let key = rows.key(row);
            let hash = hashes[next];
            if let Some(&ahead) = hashes.get(next + PROBE_AHEAD) {
                prefetch(&slots[ahead as usize & (slots.len() - 1)]);
            }
            next += 1;
            let mask = slots.len() - 1;
            let tag = hash & !u64::from(u32::MAX);
            let mut at = hash as usize & mask;
            loop {
                let slot = slots[at];
                if slot == 0 {
                    distinct.push(key);
                    distinct_hashes.push(hash);
                    slots[at] = tag | distinct.len() as u64;
                    if distinct.len() * 10 > slots.len() * 7 {
                        slots = rehash(&distinct_hashes, slots.len() * 2);
                    }
                    return Some(distinct.len() as u32 - 1);
                }
                let id = (slot as u32 - 1) as usize;
                if slot & !u64::from(u32::MAX) == tag && same_key(distinct.key(id), key) {
                    return Some(id as u32);
                }
                at = (at + 1) & mask;
            }
        })
        .collect();
    (distinct, ids)
}

/// The dictionary encoding of rows `ids` (indexes in `distinct`, not empty) with codes of
/// `bits` bits: only the distinct keys are sorted, a key's code is its place among them.
fn dictionary_body(
    distinct: &KeyList,
    ids: &[Option<u32>],
    bits: u8,
    packing: Packing,
    area: Option<&InMemoryArea>,
) -> Body {
    let order = sorted_order(distinct);
    let mut code_of = vec![0u32; distinct.len()];
    for (code, &id) in order.iter().enumerate() {
        code_of[id as usize] = code as u32;
    }
    let codes = fill_nulls(ids, |id| u64::from(code_of[id as usize]));
    let runs = count_runs(&codes);
    let rle_bytes = runs * size_of::<u32>() + Lanes::bytes_for(runs, bits, Packing::Tight);
    let codes = if packing == Packing::Smallest && rle_bytes < Lanes::bytes_for(codes.len(), bits, Packing::Tight) {
        Codes::Runs(Runs::new(&codes, bits, area))
    } else {
        Codes::Lanes(Lanes::new(&codes, bits, packing, area))
    };
    Body::Encoded { domain: Domain::KeyDict(KeyDict::new(distinct, &order, area)), codes }
}

/// How many keys ahead [`distinct_keys`] fetches the table slot a key will probe, so that
/// the cache misses of a large table overlap.
const PROBE_AHEAD: usize = 16;

/// Asks the CPU to bring `value`'s cache line in (a no-op where there is no such hint).
#[inline(always)]
fn prefetch<T>(value: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch only hints the cache; any address may be named, this one is valid.
    unsafe {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        _mm_prefetch::<_MM_HINT_T0>((value as *const T).cast::<i8>());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = value;
}

/// A table of `size` slots (a power of two) holding the keys of `hashes`.
fn rehash(hashes: &[u64], size: usize) -> Vec<u64> {
    let mut slots = vec![0u64; size];
    for (id, &hash) in hashes.iter().enumerate() {
        let mut at = hash as usize & (size - 1);
        while slots[at] != 0 {
            at = (at + 1) & (size - 1);
        }
        slots[at] = hash & !u64::from(u32::MAX) | (id as u64 + 1);
    }
    slots
}

/// A fast hash of a byte key for building dictionaries (not for untrusted input: its only
/// job is spreading keys, and a collision costs a comparison). Keys of up to 16 bytes
/// are read with two loads at most; longer ones eight bytes at a time, the last eight
/// overlapping. Every word is folded in with a full 64×64→128-bit multiply.
fn hash_key(key: &[u8]) -> u64 {
    const K0: u64 = 0x9E37_79B9_7F4A_7C15;
    const K1: u64 = 0xD6E8_FEB8_6659_FD93;
    let fold = |a: u64, b: u64| {
        let product = u128::from(a) * u128::from(b);
        (product as u64) ^ (product >> 64) as u64
    };
    let n = key.len();
    let word = |at: usize| u64::from_le_bytes(key[at..at + 8].try_into().expect("8 bytes"));
    let half = |at: usize| u64::from(u32::from_le_bytes(key[at..at + 4].try_into().expect("4 bytes")));
    let (a, b) = match n {
        0 => (0, 0),
        1..=3 => (u64::from(key[0]) << 16 | u64::from(key[n / 2]) << 8 | u64::from(key[n - 1]), 0),
        4..=8 => (half(0) << 32 | half(n - 4), 0),
        9..=16 => (word(0), word(n - 8)),
        _ => {
            let mut h = K1;
            let mut at = 0;
            while at + 16 < n {
                h = fold(h ^ word(at), K0 ^ word(at + 8));
                at += 16;
            }
            (h ^ word(n - 16), word(n - 8))
        }
    };
    fold(a ^ K0 ^ n as u64, b ^ K1)
}
