//! The hash of a join key's values: one 64-bit hash a row, from which a hash join takes
//! its table's slot and, when it spills, the row's partition, and a join filter its
//! bits ([`crate::exec::join_filter`]). A row's key is hashed once on the build side
//! (and once in the join, once more in the probe scan's join filter, on the probe side).
//!
//! Invariants:
//! - equal keys hash alike, whoever owns their strings: the values are hashed as the
//!   join compares them (the planner gives each key pair one type family, whose `Hash`
//!   agrees with `=`);
//! - a key of one whole number, the common case, hashes by a 64-bit finalizer (two
//!   multiplies, three shifts: every bit of the key moves every bit of the hash, so
//!   consecutive keys spread over a table's low bits too), and so does a key of two
//!   whole numbers that each fit 32 bits unsigned, as the one number of their bits side
//!   by side ([`pair_as_int`]; TPC-H's partsupp key); every other key through
//!   `foldhash` over its values in order. Which way a key goes depends only on its
//!   values, so both sides of a join agree;
//! - the partition of a key takes other bits of the hash than a table's slot and tag
//!   ([`partition_of_hash`]), so the rows of one partition still spread over its table.

use crate::types::Datum;
use std::hash::{BuildHasher, Hash, Hasher};

/// The seed of every key hash: fixed, so a key hashes alike in each run and each side.
const SEED: u64 = 0x9e37_79b9_7f4a_7c15;
/// The hash of a key of one whole number `i`: the same as [`key_hash`] of `[Int(i)]`
/// (MurmurHash3's 64-bit finalizer of the key and the seed). It is one to one, each
/// step invertible: a hash join compares two such keys by their hashes alone.
#[inline(always)]
pub fn int_key_hash(i: i64) -> u64 {
    let mut h = (i as u64) ^ SEED;
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^= h >> 33;
    h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    h ^ (h >> 33)
}

/// The whole number whose [`int_key_hash`] is `h`: each step of the finalizer undone
/// (a hash join's table of whole-number keys holds their hashes alone).
#[inline]
pub fn int_of_key_hash(mut h: u64) -> i64 {
    // x ^ (x >> 33) is its own inverse for a 64-bit x (the shifted half is untouched).
    h ^= h >> 33;
    h = h.wrapping_mul(const { inverse(0xc4ce_b9fe_1a85_ec53) });
    h ^= h >> 33;
    h = h.wrapping_mul(const { inverse(0xff51_afd7_ed55_8ccd) });
    h ^= h >> 33;
    (h ^ SEED) as i64
}

/// The inverse of odd `a` modulo 2^64 (Newton's iteration, each step doubling the bits
/// that are right: 3 to start with, 96 after five).
const fn inverse(a: u64) -> u64 {
    let mut x = a;
    let mut step = 0;
    while step < 5 {
        x = x.wrapping_mul(2u64.wrapping_sub(a.wrapping_mul(x)));
        step += 1;
    }
    assert!(a.wrapping_mul(x) == 1, "an odd number's inverse");
    x
}

/// A key of two whole numbers `a` and `b`, each from 0 to 2^32 - 1, as one whole
/// number: `a`'s bits above `b`'s (one to one over such pairs). `None` for other pairs.
#[inline(always)]
pub fn pair_as_int(a: i64, b: i64) -> Option<i64> {
    let (a, b) = (u32::try_from(a).ok()?, u32::try_from(b).ok()?);
    Some(((u64::from(a) << 32) | u64::from(b)) as i64)
}

/// The hash of a key's values (none NULL), in order.
#[inline]
pub fn key_hash<'a, 'd: 'a>(values: impl IntoIterator<Item = &'a Datum<'d>>) -> u64 {
    let mut values = values.into_iter();
    let Some(first) = values.next() else { return hash_general(std::iter::empty()) };
    let Some(second) = values.next() else {
        return match first {
            Datum::Int(i) => int_key_hash(*i),
            other => hash_general([other]),
        };
    };
    match values.next() {
        None => match (first, second) {
            (Datum::Int(a), Datum::Int(b)) if let Some(pair) = pair_as_int(*a, *b) => int_key_hash(pair),
            _ => hash_general([first, second]),
        },
        Some(third) => hash_general([first, second, third].into_iter().chain(values)),
    }
}

/// The hash of a key other than one whole number.
fn hash_general<'a, 'd: 'a>(values: impl IntoIterator<Item = &'a Datum<'d>>) -> u64 {
    let mut h = foldhash::fast::FixedState::with_seed(SEED).build_hasher();
    values.into_iter().for_each(|v| v.hash(&mut h));
    h.finish()
}

/// The partition, of `partitions`, of the rows whose key hashes to `hash`: from the
/// hash's bits 26 to 31 and on down (a table's slot takes the low bits of the hash, its
/// tag the top seven, a join filter both halves).
#[inline]
pub fn partition_of_hash(hash: u64, partitions: usize) -> usize {
    ((u128::from(hash.rotate_left(32)) * partitions as u128) >> 64) as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_keys_hash_alike_whatever_their_string_s_owner() {
        let owned = key_hash(&[Datum::Str("ab".to_string().into()), Datum::Int(3)]);
        let borrowed = key_hash(&[Datum::Str("ab".into()), Datum::Int(3)]);
        assert_eq!(owned, borrowed);
        assert_ne!(key_hash(&[Datum::Int(3), Datum::Str("ab".into())]), owned, "the order of the key's values counts");
        assert_eq!(key_hash(&[Datum::Int(-7)]), int_key_hash(-7));
        assert_ne!(key_hash(&[Datum::Int(7)]), key_hash(&[Datum::Date(7)]), "a date is not a number");
        // Two small whole numbers hash as the one number of their bits side by side.
        assert_eq!(key_hash(&[Datum::Int(3), Datum::Int(9)]), int_key_hash((3 << 32) | 9));
        assert_ne!(key_hash(&[Datum::Int(3), Datum::Int(9)]), key_hash(&[Datum::Int(9), Datum::Int(3)]));
        assert_eq!(pair_as_int(u32::MAX.into(), 0), Some((u64::from(u32::MAX) << 32) as i64));
        assert_eq!(pair_as_int(-1, 0), None);
        assert_eq!(pair_as_int(0, 1 << 32), None);
    }

    #[test]
    fn a_whole_number_s_hash_is_one_to_one() {
        // A hash join finds a whole number's chain by its hash alone: two numbers must
        // never share one. The finalizer is invertible; each number comes back.
        let mut rng = 0x2545_f491_4f6c_dd1du64;
        let edges = [0, 1, -1, i64::MIN, i64::MAX, SEED as i64];
        let random = (0..100_000).map(|_| {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            rng as i64
        });
        for i in edges.into_iter().chain(-1000..1000).chain(random) {
            assert_eq!(int_of_key_hash(int_key_hash(i)), i);
        }
    }

    /// Whether `counts` (of `n` hashes over equally likely cells) look uniform: their
    /// chi-square statistic within six standard deviations of its mean.
    fn uniform(counts: &[u32]) -> Result<(), String> {
        let n: u32 = counts.iter().sum();
        let mean = f64::from(n) / counts.len() as f64;
        let chi2: f64 = counts.iter().map(|&c| (f64::from(c) - mean).powi(2) / mean).sum();
        let df = (counts.len() - 1) as f64;
        let bound = df + 6.0 * (2.0 * df).sqrt();
        if chi2 < bound { Ok(()) } else { Err(format!("chi-square {chi2:.0} over {bound:.0}")) }
    }

    #[test]
    fn whole_number_keys_spread_over_slots_tags_and_partitions() {
        // Consecutive keys, and keys that are multiples of a power of two, as a table's
        // often are: each of the bits a consumer takes is spread evenly.
        for stride in [1i64, 8, 1024] {
            let hashes: Vec<u64> = (0..65_536).map(|k| int_key_hash(k * stride)).collect();
            let mut slots = vec![0u32; 1024];
            let mut tags = vec![0u32; 128];
            let mut parts = vec![0u32; 64];
            for &h in &hashes {
                slots[(h & 1023) as usize] += 1;
                tags[(h >> 57) as usize] += 1;
                parts[partition_of_hash(h, 64)] += 1;
            }
            for (name, counts) in [("slots", &slots), ("tags", &tags), ("partitions", &parts)] {
                uniform(counts).unwrap_or_else(|e| panic!("stride {stride}: {name}: {e}"));
            }
        }
    }

    #[test]
    fn one_partition_s_keys_still_spread_over_a_table() {
        let of_one: Vec<u64> = (0..400_000).map(int_key_hash).filter(|&h| partition_of_hash(h, 64) == 5).collect();
        let mut slots = vec![0u32; 256];
        of_one.iter().for_each(|&h| slots[(h & 255) as usize] += 1);
        uniform(&slots).unwrap();
    }
}
