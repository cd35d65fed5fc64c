//! A least-significant-digit radix sort of sort entries by their 8-byte prefix, a byte
//! at a time.
//!
//! One pass over the entries counts every byte position's 256 buckets; a position where
//! all entries share one byte (the type tag of a string key, the leading zeros of a
//! number) is skipped; each other position is a stable scatter from one buffer to the
//! other. Ties keep their order, so entries pushed in rowid order stay in rowid order
//! within each prefix. Short runs go to the comparison sort instead, which is cheaper
//! below a few hundred entries.

use super::entry::SortEntry;

/// Below this many entries the standard sort is used.
const RADIX_MIN: usize = 256;

/// Sorts `entries` by prefix (stable: equal prefixes keep their order).
pub(super) fn sort_by_prefix(entries: &mut Vec<SortEntry>) {
    if entries.len() < RADIX_MIN {
        entries.sort_by_key(|e| e.prefix);
        return;
    }
    let counts = byte_counts(entries);
    let n = entries.len();
    let varying: Vec<usize> = (0..8).filter(|&b| counts[b].iter().all(|&c| c as usize != n)).collect();
    if varying.is_empty() {
        return;
    }
    let mut scratch: Vec<SortEntry> = Vec::with_capacity(n);
    for &b in &varying {
        scatter(entries, &mut scratch, b, &counts[b]);
        std::mem::swap(entries, &mut scratch);
    }
}

/// For each byte position (0: the least significant), how many prefixes have each value.
fn byte_counts(entries: &[SortEntry]) -> Box<[[u32; 256]; 8]> {
    let mut counts = Box::new([[0u32; 256]; 8]);
    for e in entries {
        let p = e.prefix;
        for (b, c) in counts.iter_mut().enumerate() {
            c[(p >> (8 * b)) as usize & 0xFF] += 1;
        }
    }
    counts
}

/// Moves `src` into `dst` (emptied first) ordered by byte `b` of the prefix, stably.
fn scatter(src: &[SortEntry], dst: &mut Vec<SortEntry>, b: usize, counts: &[u32; 256]) {
    let mut at = [0usize; 256];
    let mut sum = 0;
    for (slot, &c) in at.iter_mut().zip(counts) {
        *slot = sum;
        sum += c as usize;
    }
    dst.clear();
    let out = dst.spare_capacity_mut();
    assert!(out.len() >= src.len(), "the scratch holds every entry");
    for e in src {
        let bucket = (e.prefix >> (8 * b)) as usize & 0xFF;
        out[at[bucket]].write(*e);
        at[bucket] += 1;
    }
    // SAFETY: the bucket offsets partition 0..src.len(), and each slot was written once
    // above; SortEntry is Copy, so nothing is dropped twice or left uninitialized.
    unsafe { dst.set_len(src.len()) };
}
