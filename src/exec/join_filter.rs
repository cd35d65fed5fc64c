//! Join filters: a Bloom filter of a hash join's build keys, applied in the probe side's
//! scan so that probe rows which cannot join are dropped before they reach the join, as
//! Oracle's `JOIN FILTER CREATE` / `JOIN FILTER USE` lines do (`:BF0000`, and
//! `SYS_OP_BLOOM_FILTER(:BF0000, key)` in the probe scan's predicate).
//!
//! ```text
//!  build input ─► the join's build sink: each row's key hashed once, the hash kept
//!                  in JoinFilterFill as in the join's table
//!                     │ (all build rows read)
//!                     ▼
//!               BloomFilter (sized from the build keys' count)
//!                     │ borrowed by
//!                     ▼
//!  probe scan ─► [Filter] ─► JoinFilterStage: key hashed, bits tested ─► the join's probe sink
//!                    row blocks: a block batch's selection narrowed
//!                    columnar units: the unit's keep bitmap narrowed over the key
//!                    columns before any other column is decoded (check_unit); a
//!                    key of one whole-number column with few codes checks each code
//!                    once a unit
//! ```
//!
//! Invariants:
//! - a Bloom filter never drops a row whose key was inserted (no false negatives), so a
//!   probe row that joins a build row always passes; a row may pass without joining
//!   (a false positive, about 1% at the filter's design size);
//! - build and probe keys are hashed by [`key_hash`], the hash join's own hash of a
//!   key, so a key equal on both sides has one hash;
//! - a key with a NULL never joins: it is never inserted, and a probe row with one is
//!   dropped. The filter is therefore only for a join that keeps no unmatched probe row
//!   (an inner join, an outer join that keeps the build side only, a semi join, an anti
//!   join that gives its build rows): the planner puts it nowhere else, and the hash
//!   join refuses it there;
//! - the filter is complete before the first probe row is checked: the hash join reads
//!   its whole build input first;
//! - however large the build side, the filter stays within [`MAX_BITS`]: past that it
//!   passes more rows that do not join, never fewer that do.
//!
//! The filter's bits are not counted in the join's work area (they are at most
//! [`MAX_BITS`] / 8 bytes, a few hundred KB for a build side of a hundred thousand keys).

use super::downstream::{Downstream, Push};
use super::join_key::{int_key_hash, key_hash};
use crate::access::{BlockBatch, Flow, RowAccess};
use crate::error::Result;
use crate::expr::functions::FunctionContext;
use crate::inmemory::bitmap::Bitmap;
use crate::inmemory::cu::{ColumnUnit, CuValue, Encoding};
use crate::inmemory::imcu::{Imcu, ValueKind};
use crate::stats::{SessionStats, Stat};
use crate::types::Datum;
use smallvec::SmallVec;

/// Bits a key the filter is sized for (at least; the bit count is rounded up to a power
/// of two): with the matching number of hashes, about a 1% false-positive rate.
const BITS_PER_KEY: usize = 12;
/// The smallest filter.
const MIN_BITS: usize = 512;
/// The largest filter: 2^26 bits (8 MiB), twelve bits a key for 5.6 million keys.
pub const MAX_BITS: usize = 1 << 26;
/// Key hashes kept while the build input is read, so that the filter can be sized from
/// their count; past this many the filter is made at [`MAX_BITS`] and filled as rows come.
const HASHES_KEPT: usize = MAX_BITS / BITS_PER_KEY;
/// The most bits a key sets: each takes six bits of the hash's low 42.
const MAX_HASHES: u32 = 7;

/// A Bloom filter over key hashes, blocked by register: a key's bits all lie in one
/// 64-bit word, chosen by the hash's high bits, at `hashes` positions taken six bits at
/// a time from its low bits, so that a check reads one word and compares it with a
/// mask. (Against bits spread over the whole filter this passes somewhat more keys at
/// the same size, which the twelve bits a key pay for, and touches one cache line
/// instead of one for each bit.)
#[derive(Debug, Clone)]
pub struct BloomFilter {
    words: Vec<u64>,
    /// How far a hash is shifted right to give its word: 64 − log2(words).
    word_shift: u32,
    hashes: u32,
}

impl BloomFilter {
    /// An empty filter sized for `keys` keys.
    pub fn for_keys(keys: usize) -> BloomFilter {
        let bits = keys.saturating_mul(BITS_PER_KEY).clamp(MIN_BITS, MAX_BITS).next_power_of_two();
        // Fewer hashes than a filter of spread bits: a word's bits fill faster. About
        // 0.4 a bit a key keeps the false positives near their least for 12 to 24 bits.
        let per_key = bits as f64 / keys.max(1) as f64;
        let hashes = (per_key * 0.4).round().clamp(3.0, f64::from(MAX_HASHES)) as u32;
        let words = bits / 64;
        BloomFilter { words: vec![0; words], word_shift: 64 - words.trailing_zeros(), hashes }
    }

    /// Bits of the filter.
    #[cfg(test)]
    pub fn bits(&self) -> usize {
        self.words.len() * 64
    }

    /// Bits set per key.
    #[cfg(test)]
    pub fn hashes(&self) -> u32 {
        self.hashes
    }

    /// The false-positive rate the filter is designed for when it holds `keys` keys: the
    /// keys falling in one word are Poisson with mean `64·n/m`; with `j` of them a word's
    /// bit is set with probability `1 − (1 − 1/64)^(k·j)`, and a key not held passes
    /// when its `k` bits are.
    #[cfg(test)]
    pub fn design_false_positive_rate(&self, keys: usize) -> f64 {
        let (k, mean) = (f64::from(self.hashes), 64.0 * keys as f64 / self.bits() as f64);
        let (mut p_j, mut rate) = ((-mean).exp(), 0.0);
        for j in 0..200 {
            if j > 0 {
                p_j *= mean / f64::from(j);
            }
            rate += p_j * (1.0 - (1.0 - 1.0 / 64.0f64).powf(k * f64::from(j))).powf(k);
        }
        rate
    }

    /// The word of the key of hash `hash`, and the bits it sets there.
    #[inline(always)]
    fn word_and_mask(&self, hash: u64) -> (usize, u64) {
        let word = (hash >> self.word_shift) as usize;
        let mut mask = 0u64;
        let mut bits = hash;
        for _ in 0..self.hashes {
            mask |= 1 << (bits & 63);
            bits >>= 6;
        }
        (word, mask)
    }

    /// Adds the key of hash `hash`.
    pub fn insert(&mut self, hash: u64) {
        let (word, mask) = self.word_and_mask(hash);
        self.words[word] |= mask;
    }

    /// Whether the key of hash `hash` may have been added: true for every key that was.
    #[inline]
    pub fn may_contain(&self, hash: u64) -> bool {
        let (word, mask) = self.word_and_mask(hash);
        self.words[word] & mask == mask
    }
}

/// The keys of a hash join's build rows, gathered into a join filter as the rows come:
/// the join hands over each kept row's key hash (none for a NULL key).
#[derive(Default)]
pub struct JoinFilterFill {
    /// The key hashes so far, while fewer than [`HASHES_KEPT`].
    hashes: Vec<u64>,
    /// The filter, once the hashes passed [`HASHES_KEPT`].
    filter: Option<BloomFilter>,
}

impl JoinFilterFill {
    /// Adds the key of hash `hash`.
    #[inline]
    pub fn add(&mut self, hash: u64) {
        match &mut self.filter {
            Some(filter) => filter.insert(hash),
            None if self.hashes.len() < HASHES_KEPT => self.hashes.push(hash),
            None => {
                let mut filter = BloomFilter::for_keys(HASHES_KEPT);
                std::mem::take(&mut self.hashes).into_iter().chain([hash]).for_each(|h| filter.insert(h));
                self.filter = Some(filter);
            }
        }
    }

    /// The filter of every key added, sized from their count.
    pub fn finish(self) -> BloomFilter {
        let mut filter = self.filter.unwrap_or_else(|| BloomFilter::for_keys(self.hashes.len()));
        for &h in &self.hashes {
            filter.insert(h);
        }
        filter
    }
}

/// JOIN FILTER USE: passes on the probe rows whose key may be in the filter; drops the
/// others, and rows with a NULL key.
pub struct JoinFilterStage<'a> {
    filter: &'a BloomFilter,
    /// The key's columns in the probe input's rows, in the build keys' order.
    columns: &'a [usize],
    /// Rows checked, and dropped.
    checked: u64,
    removed: u64,
    /// Set while a columnar unit pushes rows it checked already ([`check_unit`]): they
    /// pass unchecked and uncounted.
    checked_upstream: bool,
}

impl<'a> JoinFilterStage<'a> {
    pub fn new(filter: &'a BloomFilter, columns: &'a [usize]) -> JoinFilterStage<'a> {
        JoinFilterStage { filter, columns, checked: 0, removed: 0, checked_upstream: false }
    }

    /// Adds what the stage checked and removed to `stats`, and forgets it.
    pub fn hand_counts(&mut self, stats: &SessionStats) {
        stats.add(Stat::JoinFilterRowsChecked, std::mem::take(&mut self.checked));
        stats.add(Stat::JoinFilterRowsRemoved, std::mem::take(&mut self.removed));
    }

    /// Whether `row`'s key may be in the filter.
    #[inline]
    fn passes<R: RowAccess + ?Sized>(&self, row: &R) -> Result<bool> {
        let mut key: SmallVec<[Datum<'_>; 4]> = SmallVec::new();
        for &c in self.columns {
            let v = row.column(c)?;
            if v.is_null() {
                return Ok(false);
            }
            key.push(v);
        }
        Ok(self.filter.may_contain(key_hash(&key)))
    }

    /// Whether row `i` of `batch` passes: a one-column whole-number key read in place.
    #[inline]
    fn batch_row_passes(&self, batch: &BlockBatch<'_>, i: usize) -> Result<bool> {
        if let [c] = *self.columns
            && batch.is_number_column(c)
            && let Ok(v) = batch.int_or_null(i, c)
        {
            return Ok(v.is_some_and(|v| self.filter.may_contain(int_key_hash(v))));
        }
        self.passes(&batch.row(i))
    }

    /// Keeps in `keep` the rows of columnar unit `imcu` whose key may be in the filter,
    /// reading the key columns only; the rows it then pushes pass this stage unchecked
    /// (see [`JoinFilterStage::set_checked_upstream`]). False, and `keep` untouched, when
    /// a key column is not in the unit.
    pub fn check_unit(&mut self, imcu: &Imcu, keep: &mut Bitmap) -> Result<bool> {
        let Some(columns) = self.columns.iter().map(|&c| imcu.columns.get(c)?.as_ref()).collect::<Option<Vec<_>>>()
        else {
            return Ok(false);
        };
        if let [col] = columns[..]
            && col.kind == ValueKind::Int
        {
            self.check_int_unit(&col.unit, keep);
            return Ok(true);
        }
        let mut dropped = Vec::new();
        let mut key: SmallVec<[Datum<'_>; 4]> = SmallVec::new();
        for r in keep.iter_ones() {
            self.checked += 1;
            key.clear();
            for col in &columns {
                key.push(if col.kind == ValueKind::Int {
                    // Whole numbers: the value as the row scan gives it, read from the codes.
                    match col.unit.value(r) {
                        Some(CuValue::Int(v)) => Datum::Int(v),
                        None => Datum::Null,
                        Some(other) => col.to_datum(Some(other))?,
                    }
                } else {
                    col.datum_ref(r)?
                });
            }
            if key.iter().any(Datum::is_null) || !self.filter.may_contain(key_hash(&key)) {
                dropped.push(r);
            }
        }
        self.removed += dropped.len() as u64;
        for r in dropped {
            keep.clear_range(r..r + 1);
        }
        Ok(true)
    }

    /// [`JoinFilterStage::check_unit`] of a key of one whole-number column, `unit`: each
    /// row's value hashed as the join hashes a whole number, the codes read in one pass.
    /// When the unit's codes are few beside its kept rows (a dictionary, or a frame of
    /// reference narrower than them), each code is checked once, the first time a row
    /// has it.
    fn check_int_unit(&mut self, unit: &ColumnUnit, keep: &mut Bitmap) {
        let kept = keep.count_ones() as usize;
        // NULL joins nothing.
        if let Some(nulls) = unit.null_bitmap() {
            keep.and_not_with(nulls);
        }
        let codes = match unit.encoding() {
            Encoding::Dictionary { entries, .. } => Some(entries),
            Encoding::FrameOfReference { width } if width < 32 => Some(1usize << width),
            _ => None,
        };
        // Each code's answer: 0 not yet known, 1 passes, 2 is dropped.
        let mut known = match codes {
            Some(n) if n <= kept.max(1024) => vec![0u8; n],
            _ => Vec::new(),
        };
        let filter = &self.filter;
        let passes = |code: u64| match unit.code_value(code) {
            CuValue::Int(v) => filter.may_contain(int_key_hash(v)),
            // A unit of whole numbers holds no key.
            CuValue::Key(_) => false,
        };
        let mut passed = Bitmap::none(keep.len());
        let read = unit.for_each_selected_row_code(keep, 0..keep.words().len(), |row, code| {
            let pass = match known.get_mut(code as usize) {
                Some(state) if *state != 0 => *state == 1,
                Some(state) => {
                    let pass = passes(code);
                    *state = if pass { 1 } else { 2 };
                    pass
                }
                None => passes(code),
            };
            if pass {
                passed.set(row);
            }
        });
        // Whole numbers are held as codes, unless every row is NULL: then none passes.
        if !read {
            passed.clear_all();
        }
        keep.and_with(&passed);
        self.checked += kept as u64;
        self.removed += kept as u64 - keep.count_ones();
    }

    /// Whether the rows pushed now were checked by [`JoinFilterStage::check_unit`].
    pub fn set_checked_upstream(&mut self, checked: bool) {
        self.checked_upstream = checked;
    }
}

impl Push for JoinFilterStage<'_> {
    #[inline]
    fn push<R: RowAccess + ?Sized, D: Downstream + ?Sized>(
        &mut self,
        row: &R,
        rest: &mut D,
        f: &mut FunctionContext,
    ) -> Result<Flow> {
        if self.checked_upstream {
            return rest.push(row, f);
        }
        self.checked += 1;
        if self.passes(row)? {
            rest.push(row, f)
        } else {
            self.removed += 1;
            Ok(Flow::Continue)
        }
    }

    /// Narrows the selection, then pushes what is left on.
    #[inline]
    fn push_batch<D: Downstream + ?Sized>(
        &mut self,
        batch: &BlockBatch<'_>,
        selection: &mut Vec<u16>,
        rest: &mut D,
        f: &mut FunctionContext,
    ) -> Result<Flow> {
        let mut kept = 0;
        for k in 0..selection.len() {
            let i = selection[k];
            selection[kept] = i;
            kept += usize::from(self.batch_row_passes(batch, i as usize)?);
        }
        self.checked += selection.len() as u64;
        self.removed += (selection.len() - kept) as u64;
        selection.truncate(kept);
        if selection.is_empty() {
            return Ok(Flow::Continue);
        }
        rest.push_batch(batch, selection, f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Keys `from..to` as a join key of one whole number.
    fn hashes(keys: std::ops::Range<i64>) -> impl Iterator<Item = u64> {
        keys.map(int_key_hash)
    }

    #[test]
    fn a_key_inserted_is_always_found() {
        for n in [0usize, 1, 7, 1000, 50_000] {
            let mut filter = BloomFilter::for_keys(n);
            hashes(0..n as i64).for_each(|h| filter.insert(h));
            assert!(hashes(0..n as i64).all(|h| filter.may_contain(h)), "{n} keys: a key inserted was not found");
        }
    }

    #[test]
    fn false_positives_are_near_the_design_rate() {
        for (n, stride) in [(1000usize, 1i64), (20_000, 7), (100_000, 3)] {
            let mut filter = BloomFilter::for_keys(n);
            hashes(0..n as i64).for_each(|h| filter.insert(h));
            // Keys never inserted, spread as a table's often are: multiples of a stride.
            let probes = 200_000i64;
            let others = (0..probes).map(|k| int_key_hash(-1 - k * stride));
            let positives = others.filter(|&h| filter.may_contain(h)).count();
            let rate = positives as f64 / probes as f64;
            let design = filter.design_false_positive_rate(n);
            assert!(design < 0.012, "{n} keys: designed for {design}");
            assert!(rate < design * 1.5 + 0.001, "{n} keys: {rate} false positives against {design} by design");
        }
    }

    #[test]
    fn the_largest_filter_stays_within_its_bound() {
        let filter = BloomFilter::for_keys(usize::MAX);
        assert_eq!(filter.bits(), MAX_BITS);
        assert!(filter.hashes() >= 1);
    }
}
