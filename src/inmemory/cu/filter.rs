//! Predicates on a unit: a comparison becomes a test on codes once per unit
//! ([`CodeTest`]), which the null count, the min and max or the dictionary may settle
//! without reading a code; otherwise the test runs on the codes with the vector kernels
//! of `simd` (a few ranges), a bitset or a search (many ranges), or run by run.
//!
//! Invariants: every comparison ANDs the selection with the code test and then AND-NOTs
//! the null bitmap, so the code a NULL row holds never matters; a selection covers
//! exactly its unit's rows.

use super::codes::{Codes, Lanes, Runs};
use super::domain::CodeRanges;
use super::{Body, ColumnUnit, CuPredicate};
use crate::inmemory::bitmap::{Bitmap, low_bits};
use crate::inmemory::simd::{self, Isa};

/// A predicate turned into a test on codes.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum CodeTest {
    /// No code passes.
    Nothing,
    /// Every code passes.
    Everything,
    /// Codes in one of these inclusive ranges pass: ascending, disjoint, not adjacent.
    Ranges(CodeRanges),
}

/// At most this many code ranges go to the vector kernels; more are tested row by row.
const MAX_VECTOR_RANGES: usize = 8;

/// Code sets whose largest code is below this are tested with a bitset, others by search.
const MAX_BITSET_CODES: u64 = 1 << 16;

impl ColumnUnit {
    #[cfg(test)]
    /// ANDs into `selection` (which covers exactly the unit's rows) the rows where `pred`
    /// holds: comparisons never hold for NULL, `IsNull` / `IsNotNull` test the null bitmap.
    /// `isa` chooses the kernel; every [`Isa`] selects the same rows.
    pub fn filter(&self, pred: &CuPredicate, selection: &mut Bitmap, isa: Isa) {
        self.filter_with(pred, selection, isa, true);
    }

    /// [`ColumnUnit::filter`]; with `min_max` false, a comparison that the unit's min and
    /// max show every row passes is still tested code by code (a scan with pruning off
    /// reads what it filters).
    pub fn filter_with(&self, pred: &CuPredicate, selection: &mut Bitmap, isa: Isa, min_max: bool) {
        assert_eq!(selection.len(), self.rows, "a selection covers exactly the rows of its column unit");
        match pred {
            CuPredicate::IsNull => self.keep_nulls(selection),
            CuPredicate::IsNotNull => self.drop_nulls(selection),
            _ => {
                self.filter_codes(pred, selection, isa, min_max);
                self.drop_nulls(selection);
            }
        }
    }

    /// Whether no row of the unit can satisfy `pred`, judged from its NULL count, its
    /// min/max and (for dictionaries) the dictionary alone, without reading the codes. A
    /// LIKE is judged only when it runs: matching every key of a dictionary costs what
    /// filtering by it does.
    pub fn excludes(&self, pred: &CuPredicate) -> bool {
        match pred {
            CuPredicate::IsNull => self.null_count == 0,
            CuPredicate::IsNotNull => self.null_count == self.rows,
            CuPredicate::Like { .. } => matches!(self.body, Body::AllNull),
            _ => self.code_test(pred) == CodeTest::Nothing,
        }
    }

    fn keep_nulls(&self, selection: &mut Bitmap) {
        match &self.nulls {
            Some(nulls) => selection.and_with(nulls),
            None => selection.clear_all(),
        }
    }

    fn drop_nulls(&self, selection: &mut Bitmap) {
        if let Some(nulls) = &self.nulls {
            selection.and_not_with(nulls);
        }
    }

    /// ANDs the code test for comparison `pred` into `selection`, NULL rows included.
    fn filter_codes(&self, pred: &CuPredicate, selection: &mut Bitmap, isa: Isa, min_max: bool) {
        let test = self.code_test(pred);
        match (&self.body, test) {
            (Body::AllNull, _) | (_, CodeTest::Nothing) => selection.clear_all(),
            (_, CodeTest::Everything) if min_max => {}
            (Body::Encoded { codes, domain }, CodeTest::Everything) => {
                codes.filter(&[(0, domain.max_code())], selection, isa)
            }
            (Body::Encoded { codes, .. }, CodeTest::Ranges(ranges)) => codes.filter(&ranges, selection, isa),
            (Body::Plain(plain), _) => plain.filter(pred, selection),
        }
    }

    /// Comparison `pred` as a test on this unit's codes; for plain keys, `Ranges` (empty)
    /// means the rows must be compared one by one.
    fn code_test(&self, pred: &CuPredicate) -> CodeTest {
        let domain = match &self.body {
            Body::AllNull => return CodeTest::Nothing,
            Body::Plain(plain) => return plain.test(pred),
            Body::Encoded { domain, .. } => domain,
        };
        let ranges = match domain.code_ranges(pred) {
            Some(ranges) => ranges,
            None => {
                debug_assert!(false, "predicate {pred:?} does not apply to a unit of {}", domain.kind());
                CodeRanges::new()
            }
        };
        CodeTest::new(ranges, domain.max_code())
    }
}

impl CodeTest {
    /// The test for `ranges` (ascending, disjoint, not adjacent, within `0..=max_code`).
    fn new(ranges: CodeRanges, max_code: u64) -> CodeTest {
        match ranges.as_slice() {
            [] => CodeTest::Nothing,
            [(0, hi)] if *hi == max_code => CodeTest::Everything,
            _ => CodeTest::Ranges(ranges),
        }
    }
}

impl Codes {
    /// ANDs into `selection` whether each row's code is in `ranges` (ascending, disjoint,
    /// within the codes' width, at least one).
    fn filter(&self, ranges: &[(u64, u64)], selection: &mut Bitmap, isa: Isa) {
        match self {
            Codes::Lanes(lanes) => lanes.filter(ranges, selection.words_mut(), isa),
            Codes::Runs(runs) => runs.filter(ranges, selection),
        }
    }
}

impl Lanes {
    /// ANDs into `words` whether each code is in `ranges`: with the vector kernels for a
    /// few ranges, row by row for many.
    fn filter(&self, ranges: &[(u64, u64)], words: &mut [u64], isa: Isa) {
        if ranges.len() > MAX_VECTOR_RANGES {
            let set = CodeSet::new(ranges);
            return self.filter_each(words, |code| set.contains(code));
        }
        match self {
            Lanes::U8(codes) => filter_lanes(codes, ranges, words, isa, simd::range_u8, simd::ranges_u8),
            Lanes::U16(codes) => filter_lanes(codes, ranges, words, isa, simd::range_u16, simd::ranges_u16),
            Lanes::U32(codes) => filter_lanes(codes, ranges, words, isa, simd::range_u32, simd::ranges_u32),
            Lanes::U64(codes) => filter_lanes(codes, ranges, words, isa, simd::range_u64, simd::ranges_u64),
            Lanes::Packed { width, rows, words: packed } => match narrow(ranges).as_slice() {
                [(lo, hi)] => simd::range_packed(packed, *width, *rows, *lo, *hi, words, isa),
                ranges => simd::ranges_packed(packed, *width, *rows, ranges, words, isa),
            },
        }
    }

    /// ANDs into `words` whether `keep(code)` holds for each code, one row at a time.
    fn filter_each(&self, words: &mut [u64], keep: impl Fn(u64) -> bool) {
        match self {
            Lanes::U8(codes) => and_each_row(words, codes.len(), |i| keep(u64::from(codes[i]))),
            Lanes::U16(codes) => and_each_row(words, codes.len(), |i| keep(u64::from(codes[i]))),
            Lanes::U32(codes) => and_each_row(words, codes.len(), |i| keep(u64::from(codes[i]))),
            Lanes::U64(codes) => and_each_row(words, codes.len(), |i| keep(codes[i])),
            Lanes::Packed { width, rows, words: packed } => {
                and_each_row(words, *rows, |i| keep(u64::from(simd::packed_get(packed, *width, i))))
            }
        }
    }
}

/// A lane kernel's signature: codes, `lo`, `hi`, selection words, ISA.
type RangeKernel<T> = fn(&[T], T, T, &mut [u64], Isa);
/// An OR-of-ranges kernel's signature: codes, ranges, selection words, ISA.
type RangesKernel<T> = fn(&[T], &[(T, T)], &mut [u64], Isa);

/// Runs `one` for a single range, `many` for several, on codes of lane type `T`.
fn filter_lanes<T: TryFrom<u64> + Copy>(
    codes: &[T],
    ranges: &[(u64, u64)],
    words: &mut [u64],
    isa: Isa,
    one: RangeKernel<T>,
    many: RangesKernel<T>,
) {
    match narrow(ranges).as_slice() {
        [(lo, hi)] => one(codes, *lo, *hi, words, isa),
        ranges => many(codes, ranges, words, isa),
    }
}

/// `ranges` in the lane type; they lie within the unit's codes, which fit its lanes.
fn narrow<T: TryFrom<u64>>(ranges: &[(u64, u64)]) -> Vec<(T, T)> {
    let lane = |code: u64| T::try_from(code).unwrap_or_else(|_| panic!("code range {code} fits the unit's lanes"));
    ranges.iter().map(|&(lo, hi)| (lane(lo), lane(hi))).collect()
}

/// ANDs `keep(row)` into bit `row` of `words` for rows `0..rows`, skipping words already 0.
pub(super) fn and_each_row(words: &mut [u64], rows: usize, keep: impl Fn(usize) -> bool) {
    for (w, word) in words[..rows.div_ceil(64)].iter_mut().enumerate() {
        if *word != 0 {
            let (first, n) = (w * 64, (rows - w * 64).min(64));
            let mask = (0..n).fold(0, |mask, bit| mask | u64::from(keep(first + bit)) << bit);
            *word &= mask | !low_bits(n);
        }
    }
}

/// Many code ranges, tested one code at a time.
enum CodeSet<'a> {
    /// Bit `c` set when code `c` passes; for small codes.
    Bitset(Vec<u64>),
    /// Binary search in the ranges.
    Ranges(&'a [(u64, u64)]),
}

impl<'a> CodeSet<'a> {
    fn new(ranges: &'a [(u64, u64)]) -> CodeSet<'a> {
        let top = ranges.last().map_or(0, |&(_, hi)| hi);
        if top >= MAX_BITSET_CODES {
            return CodeSet::Ranges(ranges);
        }
        let mut bitset = Bitmap::none(top as usize + 1);
        ranges.iter().for_each(|&(lo, hi)| bitset.set_range(lo as usize..hi as usize + 1));
        CodeSet::Bitset(bitset.words().to_vec())
    }

    fn contains(&self, code: u64) -> bool {
        match self {
            CodeSet::Bitset(words) => words.get(code as usize / 64).is_some_and(|w| w >> (code % 64) & 1 == 1),
            CodeSet::Ranges(ranges) => in_ranges(ranges, code),
        }
    }
}

/// Whether `code` is in one of `ranges` (ascending, disjoint).
fn in_ranges(ranges: &[(u64, u64)], code: u64) -> bool {
    let i = ranges.partition_point(|&(_, hi)| hi < code);
    ranges.get(i).is_some_and(|&(lo, _)| lo <= code)
}

impl Runs {
    /// Deselects the runs whose code is in none of `ranges`, a word at a time.
    fn filter(&self, ranges: &[(u64, u64)], selection: &mut Bitmap) {
        let mut start = 0;
        for (run, &end) in self.ends.iter().enumerate() {
            let end = end as usize;
            if !in_ranges(ranges, self.codes.get(run)) {
                selection.clear_range(start..end);
            }
            start = end;
        }
    }
}
