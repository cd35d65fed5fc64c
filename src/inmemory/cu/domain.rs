//! Domains: how a unit's codes map to its values (frame of reference, a dictionary of
//! integers, a dictionary of keys), and a comparison predicate turned into the codes whose
//! values satisfy it (a LIKE by matching each key of the dictionary once).
//!
//! Invariants: every domain preserves order, so a range of values is a range of codes
//! found by binary search in a dictionary (or by subtraction under frame of reference);
//! code ranges come out ascending, disjoint and not adjacent; no code is above
//! [`Domain::max_code`].

use super::keys::KeyDict;
use super::search::positions;
use super::{CuPredicate, CuValue};
use smallvec::SmallVec;

/// How codes map to values; every mapping preserves order.
#[derive(Clone, Debug)]
pub(super) enum Domain {
    /// Frame of reference: `value = base + code`; `max` is the largest value.
    IntOffsets { base: i64, max: i64 },
    /// `value = dictionary[code]`; sorted, distinct, not empty.
    IntDict(Vec<i64>),
    /// `value = dictionary.key(code)`; sorted, distinct, not empty.
    KeyDict(KeyDict),
}

impl Domain {
    pub(super) fn kind(&self) -> &'static str {
        match self {
            Domain::IntOffsets { .. } | Domain::IntDict(_) => "integers",
            Domain::KeyDict(_) => "keys",
        }
    }

    pub(super) fn entries(&self) -> usize {
        match self {
            Domain::IntOffsets { .. } => 0,
            Domain::IntDict(dict) => dict.len(),
            Domain::KeyDict(dict) => dict.len(),
        }
    }

    pub(super) fn max_code(&self) -> u64 {
        match self {
            Domain::IntOffsets { base, max } => offset(*base, *max),
            _ => self.entries() as u64 - 1,
        }
    }

    pub(super) fn bytes(&self) -> usize {
        match self {
            Domain::IntOffsets { .. } => 0,
            Domain::IntDict(dict) => dict.capacity() * size_of::<i64>(),
            Domain::KeyDict(KeyDict(keys)) => keys.bytes(),
        }
    }

    /// The value of `code` (which is at most `max_code`).
    pub(super) fn value(&self, code: u64) -> CuValue<'_> {
        match self {
            Domain::IntOffsets { base, .. } => CuValue::Int(base.wrapping_add(code as i64)),
            Domain::IntDict(dict) => CuValue::Int(dict[code as usize]),
            Domain::KeyDict(dict) => CuValue::Key(dict.key(code as usize)),
        }
    }

    /// The codes whose values satisfy comparison `pred`, as ascending, disjoint,
    /// non-adjacent inclusive ranges; `None` when `pred` is of the other kind.
    pub(super) fn code_ranges(&self, pred: &CuPredicate) -> Option<CodeRanges> {
        let ranges = match (self, pred) {
            (Domain::IntOffsets { base, max }, CuPredicate::IntRange { lo, hi }) => {
                let (lo, hi) = ((*lo).max(*base), (*hi).min(*max));
                (lo <= hi).then(|| (offset(*base, lo), offset(*base, hi))).into_iter().collect()
            }
            (Domain::IntOffsets { base, max }, CuPredicate::IntIn(list)) => {
                coalesce(list.iter().filter(|v| (base..=max).contains(v)).map(|&v| offset(*base, v)).collect())
            }
            (Domain::IntDict(dict), CuPredicate::IntRange { lo, hi }) => {
                positions(dict.len(), |i| dict[i] < *lo, |i| dict[i] <= *hi).into_iter().collect()
            }
            (Domain::IntDict(dict), CuPredicate::IntIn(list)) => {
                coalesce(list.iter().filter_map(|v| dict.binary_search(v).ok()).map(|c| c as u64).collect())
            }
            (Domain::KeyDict(dict), CuPredicate::KeyRange { lo, hi }) => dict.code_range(lo, hi).into_iter().collect(),
            (Domain::KeyDict(dict), CuPredicate::KeyIn(list)) => {
                coalesce(list.iter().filter_map(|k| dict.find(k)).map(|c| c as u64).collect())
            }
            (Domain::KeyDict(dict), CuPredicate::Like { pattern, negated }) => {
                // Each distinct key matched once, in code order.
                runs_of(
                    (0..dict.len()).filter(|&c| super::like_holds(pattern, *negated, dict.key(c))).map(|c| c as u64),
                )
            }
            _ => return None,
        };
        Some(ranges)
    }
}

/// Inclusive ranges of codes: ascending, disjoint, not adjacent. A predicate's are few
/// (one for a comparison), so they are held inline, with no allocation a unit.
pub(super) type CodeRanges = SmallVec<[(u64, u64); 4]>;

/// `codes` as ascending, disjoint, non-adjacent inclusive ranges.
fn coalesce(mut codes: Vec<u64>) -> CodeRanges {
    codes.sort_unstable();
    codes.dedup();
    runs_of(codes.into_iter())
}

/// Ascending, distinct `codes` as inclusive ranges, each run of consecutive codes one.
fn runs_of(codes: impl Iterator<Item = u64>) -> CodeRanges {
    let mut ranges = CodeRanges::new();
    for code in codes {
        match ranges.last_mut() {
            Some((_, hi)) if *hi + 1 == code => *hi = code,
            _ => ranges.push((code, code)),
        }
    }
    ranges
}

/// `value - base` as an unsigned offset (exact for any `base <= value`, even `MIN..=MAX`).
pub(super) fn offset(base: i64, value: i64) -> u64 {
    (value as u64).wrapping_sub(base as u64)
}
