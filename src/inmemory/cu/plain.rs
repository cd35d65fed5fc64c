//! Plain keys: a unit whose keys are mostly distinct stores them as they are, in row
//! order, with a row holding the smallest key and one holding the largest. A comparison
//! is judged from those two first (no key can pass, or every one does), and otherwise
//! compares each row's bytes; a LIKE matches each row's bytes at once.
//!
//! Invariants: the rows of the smallest and the largest key are not NULL.

use super::domain::CodeRanges;
use super::filter::{CodeTest, and_each_row};
use super::keys::{KeyList, StoredKeys, compare_keys};
use super::{CuPredicate, CuValue};
use crate::inmemory::area::InMemoryArea;
use crate::inmemory::bitmap::Bitmap;
use std::ops::{Bound, RangeBounds};

/// Keys one after another, for units whose keys are mostly distinct.
#[derive(Clone, Debug)]
pub(super) struct PlainKeys {
    /// Every row's key in row order (a NULL row's is empty).
    keys: StoredKeys,
    /// A row holding the smallest key, and one holding the largest (neither NULL).
    min_row: u32,
    max_row: u32,
}

impl PlainKeys {
    /// Rows `keys` stored plain (copied into `area` when given and it has room); `nulls`
    /// marks the NULL rows (not all of them).
    pub(super) fn new(keys: &KeyList, nulls: Option<&Bitmap>, area: Option<&InMemoryArea>) -> PlainKeys {
        let keys = StoredKeys::copy_of(keys, area);
        let mut present = (0..keys.len()).filter(|&row| !nulls.is_some_and(|n| n.get(row)));
        let first = present.next().expect("plain keys hold a key that is not NULL");
        let (mut min_row, mut max_row) = (first, first);
        for row in present {
            let key = keys.key(row);
            if compare_keys(key, keys.key(min_row)).is_lt() {
                min_row = row;
            } else if compare_keys(key, keys.key(max_row)).is_gt() {
                max_row = row;
            }
        }
        PlainKeys { keys, min_row: min_row as u32, max_row: max_row as u32 }
    }

    pub(super) fn bytes(&self) -> usize {
        self.keys.bytes()
    }

    /// The keys, and the rows of the smallest and the largest.
    pub(super) fn parts(&self) -> (&StoredKeys, u32, u32) {
        (&self.keys, self.min_row, self.max_row)
    }

    /// The keys, given up.
    pub(super) fn into_keys(self) -> StoredKeys {
        self.keys
    }

    /// Plain keys from their parts: a key a row, and the rows (not NULL) of the smallest
    /// and the largest key (the caller has checked them).
    pub(super) fn from_parts(keys: StoredKeys, min_row: u32, max_row: u32) -> PlainKeys {
        PlainKeys { keys, min_row, max_row }
    }

    /// Row `row`'s key (empty for a NULL row).
    pub(super) fn key(&self, row: usize) -> &[u8] {
        self.keys.key(row)
    }

    pub(super) fn min_max(&self) -> (CuValue<'_>, CuValue<'_>) {
        (CuValue::Key(self.key(self.min_row as usize)), CuValue::Key(self.key(self.max_row as usize)))
    }

    /// What the smallest and largest key tell of comparison `pred`: `Nothing` when no
    /// key between them can pass, `Everything` when every one does, and otherwise
    /// `Ranges` of none (each row must be compared).
    pub(super) fn test(&self, pred: &CuPredicate) -> CodeTest {
        let (CuValue::Key(min), CuValue::Key(max)) = self.min_max() else { unreachable!("plain units hold keys") };
        match pred {
            CuPredicate::KeyRange { lo, hi } => {
                let range: (Bound<&[u8]>, Bound<&[u8]>) =
                    (lo.as_ref().map(Vec::as_slice), hi.as_ref().map(Vec::as_slice));
                let below_max = match lo {
                    Bound::Included(lo) => lo.as_slice() <= max,
                    Bound::Excluded(lo) => lo.as_slice() < max,
                    Bound::Unbounded => true,
                };
                let above_min = match hi {
                    Bound::Included(hi) => min <= hi.as_slice(),
                    Bound::Excluded(hi) => min < hi.as_slice(),
                    Bound::Unbounded => true,
                };
                if RangeBounds::<[u8]>::contains(&range, min) && RangeBounds::<[u8]>::contains(&range, max) {
                    CodeTest::Everything
                } else if below_max && above_min {
                    CodeTest::Ranges(CodeRanges::new())
                } else {
                    CodeTest::Nothing
                }
            }
            CuPredicate::KeyIn(list) => match list.iter().any(|k| (min..=max).contains(&k.as_slice())) {
                false => CodeTest::Nothing,
                true if min == max => CodeTest::Everything,
                true => CodeTest::Ranges(CodeRanges::new()),
            },
            CuPredicate::Like { .. } => CodeTest::Ranges(CodeRanges::new()),
            _ => {
                debug_assert!(false, "predicate {pred:?} does not apply to a unit of keys");
                CodeTest::Nothing
            }
        }
    }

    /// ANDs into `selection` whether each row's key satisfies comparison `pred`, one row
    /// at a time (a NULL row's empty key is tested too; the caller drops NULLs).
    pub(super) fn filter(&self, pred: &CuPredicate, selection: &mut Bitmap) {
        let rows = self.keys.len();
        let words = selection.words_mut();
        match pred {
            CuPredicate::KeyRange { lo, hi } => {
                let range: (Bound<&[u8]>, Bound<&[u8]>) =
                    (lo.as_ref().map(Vec::as_slice), hi.as_ref().map(Vec::as_slice));
                and_each_row(words, rows, |row| RangeBounds::<[u8]>::contains(&range, self.key(row)));
            }
            CuPredicate::KeyIn(list) => {
                let mut list: Vec<&[u8]> = list.iter().map(Vec::as_slice).collect();
                list.sort_unstable();
                and_each_row(words, rows, |row| list.binary_search(&self.key(row)).is_ok());
            }
            CuPredicate::Like { pattern, negated } => {
                and_each_row(words, rows, |row| super::like_holds(pattern, *negated, self.key(row)));
            }
            _ => and_each_row(words, rows, |_| false),
        }
    }
}
