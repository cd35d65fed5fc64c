//! Column units: one column's values for one In-Memory Compression Unit (IMCU, up to about
//! 512K rows), encoded for scanning, and the predicates that run on the encoding.
//!
//! A unit maps every non-NULL value to an unsigned *code* through an order-preserving
//! *domain* (`a < b` exactly when `code(a) < code(b)`), stores one code per row, and keeps
//! NULLs in a separate bitmap:
//!
//! - frame of reference (integers): `code = value - min`, so the codes need
//!   `bits(max - min)` bits;
//! - dictionary (integers under [`Packing::Smallest`], keys unless stored plain): the
//!   distinct values sorted, `code = position in the dictionary`.
//!
//! Keys that are mostly distinct (an e-mail address, a name with a number in it) are
//! stored *plain* instead: the keys one after another with each row's end offset, and the
//! rows holding the smallest and largest. A unit of 4,096 keys or more whose keys a
//! linear-counting estimate finds so distinct that a dictionary would take no less room
//! is stored plain at once (no hash table, no sort); otherwise the distinct keys are
//! collected and the unit takes a dictionary when that is the smaller form (counted in
//! bytes, codes included); see [`KeyColumnBuilder`]. Predicates on plain keys compare
//! each row's bytes.
//!
//! The codes are then stored in byte-aligned lanes (8, 16, 32 or 64 bits), bit-packed at
//! their exact width (see [`super::simd`] for the layout), or run-length encoded (run ends
//! and one code per run). Because every domain preserves order, a predicate on values
//! becomes a predicate on codes once per unit (a range, or for `IN` lists a few ranges
//! of consecutive codes) and the scan never decodes a value:
//!
//! ```text
//!   ColumnUnit for keys ['RED', 'BLUE', 'BLUE', NULL, 'GREEN', 'RED'], Packing::ByteAligned
//!
//!   rows      6
//!   nulls     Bitmap  rows 0..6: 0 0 0 1 0 0          (None when the unit has no NULL)
//!   domain    KeyDict bytes   "BLUEGREENRED"          (sorted, distinct, concatenated)
//!                     offsets [0, 4, 9, 12]           (key c = bytes[offsets[c]..offsets[c + 1]])
//!   codes     U8      [2, 0, 0, 0, 1, 2]              (the NULL row repeats its predecessor's code)
//!
//!   KeyRange 'BLUE'..='C'  →  codes 0..=0  →  simd::range_u8(codes, 0, 0)  AND-NOT nulls
//!
//!   The same unit under Packing::Smallest, run-length encoded over the same dictionary:
//!   codes     Runs    ends  [1, 4, 5, 6]              (run i covers rows ends[i - 1]..ends[i])
//!                     codes [2, 0, 1, 2]              (bit-packed or byte lanes, 2 bits here)
//! ```
//!
//! Invariants: every code vector, and the row ends of plain keys, cover exactly `rows`
//! rows (a NULL plain row is empty); `nulls` is `None` rather than all clear; a unit with
//! no non-NULL row is [`Encoding::AllNull`] and holds no codes at all. A unit is immutable
//! once built, so it is `Send + Sync` and scans share it without latches. Which code a
//! NULL row holds is stated in `codes`, and why it never matters in `filter`.
//!
//! Here: the unit, its public types and reading its values; the rest by job:
//!
//! ```text
//!  domain       how codes map to values: frame of reference, integer and key dictionaries
//!  ints         encoding a unit of integers
//!  keys         keys packed in one buffer, the key dictionary, comparing and sorting keys
//!  search       binary search by position over a sorted dictionary
//!  plain        keys stored plain, and predicates on them row by row
//!  key_builder  encoding a unit of keys as rows arrive: estimate, hash table, choice
//!  codes        one code per row: byte lanes, bit-packed lanes, runs
//!  build_clock  the time building spends on dictionaries and on compressing, per thread
//!  serial       a unit as bytes, for the compression units of compressed tables
//!  filter       predicates as tests on codes, and the kernels that run them
//!  tests        round trips and filters against row-by-row evaluation
//! ```

mod domain;
mod ints;
mod keys;
mod search;
mod plain;
mod key_builder;
mod codes;
mod build_clock;
mod serial;
mod filter;
#[cfg(test)]
mod tests;

pub use build_clock::take_build_phases;
pub use key_builder::KeyColumnBuilder;
pub use serial::UnitBuffers;

use super::area::InMemoryArea;
use super::bitmap::Bitmap;
use crate::expr::LikePattern;
use codes::Codes;
use domain::Domain;
use ints::{build_ints, null_bitmap};
use plain::PlainKeys;
use std::fmt;
#[cfg(test)]
use std::ops::RangeBounds;
use std::ops::{Bound, Range};

/// How hard to compress; Oracle's `MEMCOMPRESS` levels map onto these.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Packing {
    /// `FOR DML`, `FOR QUERY LOW`: codes in 8/16/32/64-bit lanes, the fastest scans.
    ByteAligned,
    /// `FOR QUERY HIGH`: codes bit-packed at their exact width (1..=32 bits; 64-bit lanes
    /// beyond), or in byte lanes where those take no more room.
    Tight,
    /// `FOR CAPACITY LOW`/`HIGH`: the smallest of tight frame of reference, tight dictionary
    /// and run-length encoding, by bytes.
    Smallest,
}

impl Packing {
    #[cfg(test)]
    /// The packing for a `MEMCOMPRESS` level such as `"FOR QUERY HIGH"` (case and spacing
    /// ignored, `MEMCOMPRESS` and `FOR` optional); `None` for a level Oracle does not have.
    pub fn for_memcompress(level: &str) -> Option<Packing> {
        let words: Vec<String> = level.split_whitespace().map(str::to_ascii_uppercase).collect();
        let words: Vec<&str> = words.iter().map(String::as_str).skip_while(|w| *w == "MEMCOMPRESS").collect();
        let words = words.strip_prefix(&["FOR"]).unwrap_or(&words);
        match words {
            ["DML"] | ["QUERY", "LOW"] => Some(Packing::ByteAligned),
            ["QUERY"] | ["QUERY", "HIGH"] => Some(Packing::Tight),
            ["CAPACITY"] | ["CAPACITY", "LOW"] | ["CAPACITY", "HIGH"] => Some(Packing::Smallest),
            _ => None,
        }
    }
}

/// One column's values for the rows of one IMCU, in row order.
#[derive(Clone, Copy, Debug)]
pub enum ColumnInput<'a> {
    /// Whole numbers, one per row, `None` = NULL.
    Ints(&'a [Option<i64>]),
    /// Order-preserving byte keys (memcmp order is SQL order), one per row, `None` = NULL.
    /// Strings, dates and decimals arrive already encoded this way.
    #[cfg_attr(
        not(test),
        expect(
            dead_code,
            reason = "population builds key units as rows arrive (KeyColumnBuilder); tests build them whole"
        )
    )]
    Keys(&'a [Option<&'a [u8]>]),
}

impl ColumnInput<'_> {
    #[cfg(test)]
    /// Rows in the input.
    pub fn len(&self) -> usize {
        match self {
            ColumnInput::Ints(values) => values.len(),
            ColumnInput::Keys(keys) => keys.len(),
        }
    }

    #[cfg(test)]
    /// Whether the input has no rows.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// How a unit is encoded, for `v$` views; [`fmt::Display`] gives e.g. `FOR 23-bit`,
/// `DICT 620x10-bit`, `RLE 12 runs`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Encoding {
    /// `value = min + code`, codes stored at `width` bits each.
    FrameOfReference { width: u8 },
    /// `value = dictionary[code]`, `entries` distinct values, codes stored at `width` bits.
    Dictionary { entries: usize, width: u8 },
    /// `runs` runs of one code each (over a frame of reference or a dictionary).
    RunLength { runs: usize },
    /// Keys stored as they are, with each row's end offset.
    Plain,
    /// Every row is NULL; nothing is stored but the row count.
    AllNull,
}

impl fmt::Display for Encoding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Encoding::FrameOfReference { width } => write!(f, "FOR {width}-bit"),
            Encoding::Dictionary { entries, width } => write!(f, "DICT {entries}x{width}-bit"),
            Encoding::RunLength { runs: 1 } => write!(f, "RLE 1 run"),
            Encoding::RunLength { runs } => write!(f, "RLE {runs} runs"),
            Encoding::Plain => write!(f, "PLAIN"),
            Encoding::AllNull => write!(f, "ALL NULL"),
        }
    }
}

/// A non-NULL value of a unit, borrowed from it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum CuValue<'a> {
    Int(i64),
    Key(&'a [u8]),
}

/// A predicate a unit evaluates on its codes. Comparisons never hold for NULL. The caller
/// matches the kind to the unit (`Int*` on units built from [`ColumnInput::Ints`], `Key*`
/// on keys); a mismatch is a bug, debug-asserted, and in release selects nothing.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum CuPredicate {
    /// `lo <= v <= hi`; `i64::MIN` / `i64::MAX` for open ends; `lo > hi` holds for no row.
    IntRange {
        lo: i64,
        hi: i64,
    },
    /// `v` within the bounds, compared as bytes.
    KeyRange {
        lo: Bound<Vec<u8>>,
        hi: Bound<Vec<u8>>,
    },
    /// `v IN (...)`; an empty list holds for no row.
    IntIn(Vec<i64>),
    /// `v IN (...)`; an empty list holds for no row.
    KeyIn(Vec<Vec<u8>>),
    /// `v [NOT] LIKE pattern` on text keys, which are the values' UTF-8 (the NULL pattern
    /// is never given: it holds for no row and fails none).
    Like {
        pattern: LikePattern,
        negated: bool,
    },
    IsNull,
    IsNotNull,
}

impl CuPredicate {
    #[cfg(test)]
    /// Whether a non-NULL `value` satisfies a comparison predicate, evaluated directly (the
    /// reference [`ColumnUnit::filter`] must agree with); `false` for `IsNull` and for a
    /// predicate of the other kind, `true` for `IsNotNull`.
    pub fn holds_for(&self, value: CuValue<'_>) -> bool {
        match (self, value) {
            (CuPredicate::IntRange { lo, hi }, CuValue::Int(v)) => *lo <= v && v <= *hi,
            (CuPredicate::IntIn(list), CuValue::Int(v)) => list.contains(&v),
            (CuPredicate::KeyRange { lo, hi }, CuValue::Key(k)) => {
                let range = (lo.as_ref().map(Vec::as_slice), hi.as_ref().map(Vec::as_slice));
                RangeBounds::<[u8]>::contains(&range, k)
            }
            (CuPredicate::KeyIn(list), CuValue::Key(k)) => list.iter().any(|x| x == k),
            (CuPredicate::Like { pattern, negated }, CuValue::Key(k)) => like_holds(pattern, *negated, k),
            (CuPredicate::IsNotNull, _) => true,
            _ => false,
        }
    }
}

/// Whether text key `key` meets `[NOT] LIKE pattern`: the key read as the row path reads
/// it ([`key_text`]).
fn like_holds(pattern: &LikePattern, negated: bool, key: &[u8]) -> bool {
    pattern.matches(&key_text(key)) == Some(!negated)
}

/// A text key's string: its bytes as they are when they are UTF-8 (population checked
/// them, so they always are; checked again here at the speed of the ASCII fast path),
/// any invalid byte replaced otherwise.
#[inline]
pub fn key_text(key: &[u8]) -> std::borrow::Cow<'_, str> {
    match std::str::from_utf8(key) {
        Ok(text) => std::borrow::Cow::Borrowed(text),
        Err(_) => String::from_utf8_lossy(key),
    }
}

/// What [`ColumnUnit::fold`] found over the selected non-NULL values.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnitFold<'a> {
    pub count: u64,
    /// The sum, for units of integers; `None` for keys.
    pub sum: Option<i128>,
    /// The smallest and largest values; `None` when `count` is 0.
    pub min: Option<CuValue<'a>>,
    pub max: Option<CuValue<'a>>,
}

/// One column's values for one IMCU; see the module documentation.
#[derive(Clone, Debug)]
pub struct ColumnUnit {
    /// Rows covered, NULL or not; every code vector and bitmap of the unit covers exactly these.
    rows: usize,
    /// Set bit = NULL row; `None` when no row is NULL.
    nulls: Option<Bitmap>,
    /// Set bits of `nulls`, counted once at build.
    null_count: usize,
    body: Body,
}

#[derive(Clone, Debug)]
enum Body {
    /// No non-NULL value: no domain, no codes.
    AllNull,
    Encoded {
        domain: Domain,
        codes: Codes,
    },
    /// Keys without a dictionary.
    Plain(PlainKeys),
}

impl ColumnUnit {
    /// Encodes `input` at `packing`. Panics if it holds more than `u32::MAX` rows (an IMCU
    /// holds about 512K).
    pub fn build(input: ColumnInput<'_>, packing: Packing, area: Option<&InMemoryArea>) -> ColumnUnit {
        let values = match input {
            ColumnInput::Ints(values) => values,
            ColumnInput::Keys(keys) => {
                let mut builder = KeyColumnBuilder::new();
                builder.reserve(keys.len(), 0);
                keys.iter().for_each(|key| builder.push(*key));
                return builder.finish(packing, area);
            }
        };
        let rows = values.len();
        assert!(u32::try_from(rows).is_ok(), "a column unit holds at most u32::MAX rows, not {rows}");
        let nulls = null_bitmap(values);
        let null_count = nulls.as_ref().map_or(0, |n| n.count_ones() as usize);
        ColumnUnit { rows, nulls, null_count, body: build_ints(values, packing, area) }
    }

    /// Rows in the unit, NULL or not.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// The encoding, for `v$` views.
    pub fn encoding(&self) -> Encoding {
        let (domain, codes) = match &self.body {
            Body::AllNull => return Encoding::AllNull,
            Body::Plain(_) => return Encoding::Plain,
            Body::Encoded { domain, codes } => (domain, codes),
        };
        match (codes, domain) {
            (Codes::Runs(runs), _) => Encoding::RunLength { runs: runs.ends.len() },
            (Codes::Lanes(lanes), Domain::IntOffsets { .. }) => Encoding::FrameOfReference { width: lanes.width() },
            (Codes::Lanes(lanes), _) => Encoding::Dictionary { entries: domain.entries(), width: lanes.width() },
        }
    }

    /// Heap bytes the unit's buffers take (codes, dictionary, run ends, null bitmap).
    pub fn bytes(&self) -> usize {
        let nulls = self.nulls.as_ref().map_or(0, |n| size_of_val(n.words()));
        let body = match &self.body {
            Body::AllNull => 0,
            Body::Encoded { domain, codes } => domain.bytes() + codes.bytes(),
            Body::Plain(plain) => plain.bytes(),
        };
        nulls + body
    }

    /// NULL rows.
    pub fn nulls(&self) -> usize {
        self.null_count
    }

    /// The NULL rows as set bits; `None` when there are none.
    pub fn null_bitmap(&self) -> Option<&Bitmap> {
        self.nulls.as_ref()
    }

    /// Whether row `row` is NULL; panics when `row >= rows`.
    pub fn is_null(&self, row: usize) -> bool {
        assert!(row < self.rows, "row {row} is outside a column unit of {} rows", self.rows);
        self.nulls.as_ref().is_some_and(|n| n.get(row))
    }

    #[cfg(test)]
    /// The smallest and largest non-NULL values; `None` when every row is NULL.
    pub fn min_max(&self) -> Option<(CuValue<'_>, CuValue<'_>)> {
        match &self.body {
            Body::AllNull => None,
            Body::Encoded { domain, .. } => Some((domain.value(0), domain.value(domain.max_code()))),
            Body::Plain(plain) => Some(plain.min_max()),
        }
    }

    /// Row `row`'s value; `None` when it is NULL. Panics when `row >= rows`.
    pub fn value(&self, row: usize) -> Option<CuValue<'_>> {
        if self.is_null(row) {
            return None;
        }
        match &self.body {
            Body::AllNull => None,
            Body::Encoded { domain, codes } => Some(domain.value(codes.get(row))),
            Body::Plain(plain) => Some(CuValue::Key(plain.key(row))),
        }
    }

    /// The keys of the unit's dictionary, in code order, when it holds its values as a
    /// dictionary of keys; `None` otherwise.
    pub fn dictionary_keys(&self) -> Option<impl ExactSizeIterator<Item = &[u8]>> {
        match &self.body {
            Body::Encoded { domain: Domain::KeyDict(dict), .. } => Some((0..dict.len()).map(|code| dict.key(code))),
            _ => None,
        }
    }

    /// Row `row`'s code: an index into [`ColumnUnit::dictionary_keys`] when the unit
    /// holds a dictionary of keys (an offset or an index into integers otherwise);
    /// `None` when the row is NULL or the unit has no codes.
    #[inline]
    pub fn code(&self, row: usize) -> Option<u64> {
        if self.is_null(row) {
            return None;
        }
        match &self.body {
            Body::Encoded { codes, .. } => Some(codes.get(row)),
            _ => None,
        }
    }

    /// How many codes the unit's domain has (its largest code and one) when it holds its
    /// values as codes; `None` when it holds plain keys or only NULLs.
    pub fn code_space(&self) -> Option<u64> {
        match &self.body {
            Body::Encoded { domain, .. } => domain.max_code().checked_add(1),
            _ => None,
        }
    }

    /// The value of `code`, one of the unit's codes (below [`ColumnUnit::code_space`]).
    /// Panics when the unit holds no codes.
    pub fn code_value(&self, code: u64) -> CuValue<'_> {
        match &self.body {
            Body::Encoded { domain, .. } => domain.value(code),
            _ => panic!("code {code} of a column unit that holds no codes"),
        }
    }

    /// Calls `f(code)` for each row set in `selection` among its words `words`, in row
    /// order (a NULL row's code is any code: the caller reads
    /// [`ColumnUnit::null_bitmap`]); false, calling nothing, when the unit holds no
    /// codes. Where a quarter of the rows or more are set the codes are read in one pass;
    /// a row at a time where fewer are.
    pub fn for_each_selected_code(&self, selection: &Bitmap, words: Range<usize>, mut f: impl FnMut(u64)) -> bool {
        self.for_each_selected_row_code(selection, words, |_, code| f(code))
    }

    /// [`ColumnUnit::for_each_selected_code`], calling `f(row, code)`.
    pub fn for_each_selected_row_code(
        &self,
        selection: &Bitmap,
        words: Range<usize>,
        mut f: impl FnMut(usize, u64),
    ) -> bool {
        assert_eq!(selection.len(), self.rows, "a selection of another unit's rows");
        let Body::Encoded { codes, .. } = &self.body else { return false };
        let rows = words.start * 64..(words.end * 64).min(self.rows);
        if selection.count_ones_in(words.clone()) as usize * 4 >= rows.len() {
            let bits = selection.words();
            codes.for_each_code(rows, |row, code| {
                if bits[row / 64] >> (row % 64) & 1 == 1 {
                    f(row, code)
                }
            });
        } else {
            selection.iter_ones_in(words).for_each(|row| f(row, codes.get(row)));
        }
        true
    }

    #[cfg(test)]
    /// Row `row`'s integer; `None` when it is NULL or the unit holds keys.
    pub fn int(&self, row: usize) -> Option<i64> {
        match self.value(row) {
            Some(CuValue::Int(v)) => Some(v),
            _ => None,
        }
    }

    #[cfg(test)]
    /// Row `row`'s key; `None` when it is NULL or the unit holds integers.
    pub fn key(&self, row: usize) -> Option<&[u8]> {
        match self.value(row) {
            Some(CuValue::Key(k)) => Some(k),
            _ => None,
        }
    }

    /// The aggregates of the non-NULL values of the rows set in `selection`, taken from
    /// the codes without decoding a row's value: how many there are, their sum (integers
    /// only: `base × count + Σ codes` under frame of reference, a dictionary lookup a row
    /// otherwise), and the smallest and largest (the smallest and largest code's value,
    /// by order of the domain; plain keys compare their bytes). `selection` must cover
    /// the unit's rows.
    pub fn fold(&self, selection: &Bitmap) -> UnitFold<'_> {
        assert_eq!(selection.len(), self.rows, "a selection of another unit's rows");
        let mut chosen = selection.clone();
        if let Some(nulls) = &self.nulls {
            chosen.and_not_with(nulls);
        }
        let count = chosen.count_ones();
        let mut fold = UnitFold { count, sum: None, min: None, max: None };
        if count == 0 {
            return fold;
        }
        match &self.body {
            Body::AllNull => {}
            Body::Plain(plain) => {
                let mut keys = chosen.iter_ones().map(|r| plain.key(r));
                let first = keys.next().expect("count > 0");
                let (min, max) = keys.fold((first, first), |(lo, hi), k| (lo.min(k), hi.max(k)));
                (fold.min, fold.max) = (Some(CuValue::Key(min)), Some(CuValue::Key(max)));
            }
            Body::Encoded { domain, .. } => {
                let (mut lo, mut hi, mut code_sum, mut value_sum) = (u64::MAX, 0u64, 0u128, 0i128);
                let dict = match domain {
                    Domain::IntDict(dict) => Some(dict),
                    _ => None,
                };
                self.for_each_selected_code(&chosen, 0..chosen.words().len(), |code| {
                    lo = lo.min(code);
                    hi = hi.max(code);
                    code_sum += u128::from(code);
                    if let Some(dict) = dict {
                        value_sum += i128::from(dict[code as usize]);
                    }
                });
                fold.sum = match domain {
                    Domain::IntOffsets { base, .. } => Some(i128::from(*base) * count as i128 + code_sum as i128),
                    Domain::IntDict(_) => Some(value_sum),
                    Domain::KeyDict(_) => None,
                };
                (fold.min, fold.max) = (Some(domain.value(lo)), Some(domain.value(hi)));
            }
        }
        fold
    }

    #[cfg(test)]
    /// Appends the values of `rows` to `out`, `None` for NULL. Panics if `rows` reaches
    /// beyond the unit.
    pub fn decode_range<'a>(&'a self, rows: Range<usize>, out: &mut Vec<Option<CuValue<'a>>>) {
        assert!(rows.end <= self.rows, "rows {rows:?} reach outside a column unit of {} rows", self.rows);
        out.reserve(rows.len());
        let nulls = self.nulls.as_ref();
        let present = |row: usize| !nulls.is_some_and(|n| n.get(row));
        match &self.body {
            Body::AllNull => out.extend(rows.map(|_| None)),
            Body::Encoded { domain, codes } => {
                codes.for_each_code(rows, |row, code| out.push(present(row).then(|| domain.value(code))))
            }
            Body::Plain(plain) => out.extend(rows.map(|row| present(row).then(|| CuValue::Key(plain.key(row))))),
        }
    }
}
