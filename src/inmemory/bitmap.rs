//! A selection bitmap: one bit per row of an In-Memory Compression Unit, bit `i` of word
//! `i / 64` (least significant bit first) standing for row `i`.
//!
//! The scan kernels in [`super::simd`] read and write the words directly, one 64-row block
//! per word, so the layout is part of the contract:
//!
//! ```text
//!   words[0]  bit 0 = row 0 ... bit 63 = row 63
//!   words[1]  bit 0 = row 64 ...
//!   words[n]  bits for rows 64n .. len; bits at and beyond `len` are always 0
//! ```
//!
//! Invariant: `words.len() == len.div_ceil(64)` and every bit at or beyond `len` is 0, so
//! [`Bitmap::count_ones`] and [`Bitmap::iter_ones`] never see rows that do not exist.
//! Callers that write through [`Bitmap::words_mut`] must keep the tail bits 0 (the kernels
//! only AND, which does).

use std::ops::Range;

/// One bit per row; see the module documentation for the layout.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Bitmap {
    /// `len.div_ceil(64)` words; bits at and beyond `len` are 0.
    words: Vec<u64>,
    /// Rows covered.
    len: usize,
}

impl Bitmap {
    /// Every one of `len` rows selected.
    pub fn all(len: usize) -> Self {
        let mut bitmap = Bitmap::default();
        bitmap.select_all(len);
        bitmap
    }

    /// Makes this every one of `len` rows selected, in the words it has (grown if short).
    pub fn select_all(&mut self, len: usize) {
        self.words.clear();
        self.words.resize(len.div_ceil(64), u64::MAX);
        self.len = len;
        self.clear_tail();
    }

    /// None of `len` rows selected.
    pub fn none(len: usize) -> Self {
        Bitmap { words: vec![0; len.div_ceil(64)], len }
    }

    /// The bitmap of `len` rows whose words are `words`; `None` unless they are
    /// `len.div_ceil(64)` words with no bit set at or beyond `len`.
    pub fn from_words(words: Vec<u64>, len: usize) -> Option<Self> {
        let tail_clear = len.is_multiple_of(64) || words.last().is_none_or(|&w| w >> (len % 64) == 0);
        (words.len() == len.div_ceil(64) && tail_clear).then_some(Bitmap { words, len })
    }

    /// The bitmap whose bit `i` is `f(i)`.
    pub fn from_fn(len: usize, mut f: impl FnMut(usize) -> bool) -> Self {
        let mut bitmap = Bitmap::none(len);
        for i in (0..len).filter(|&i| f(i)) {
            bitmap.set(i);
        }
        bitmap
    }

    /// Rows covered (set or not).
    pub fn len(&self) -> usize {
        self.len
    }

    /// Rows selected.
    pub fn count_ones(&self) -> u64 {
        self.words.iter().map(|w| u64::from(w.count_ones())).sum()
    }

    /// Whether no row is selected.
    pub fn none_set(&self) -> bool {
        self.words.iter().all(|&w| w == 0)
    }

    /// Whether row `i` is selected; panics when `i >= len`.
    pub fn get(&self, i: usize) -> bool {
        assert!(i < self.len, "row {i} is outside a bitmap of {} rows", self.len);
        self.words[i / 64] >> (i % 64) & 1 == 1
    }

    /// Selects row `i`; panics when `i >= len`.
    pub fn set(&mut self, i: usize) {
        assert!(i < self.len, "row {i} is outside a bitmap of {} rows", self.len);
        self.words[i / 64] |= 1 << (i % 64);
    }

    /// Deselects every row.
    pub fn clear_all(&mut self) {
        self.words.fill(0);
    }

    /// Deselects the rows in `rows`, a whole word at a time where it can.
    pub fn clear_range(&mut self, rows: Range<usize>) {
        assert!(rows.end <= self.len, "rows {rows:?} reach outside a bitmap of {} rows", self.len);
        for_each_word_span(rows, |word, mask| self.words[word] &= !mask);
    }

    /// Selects the rows in `rows`, a whole word at a time where it can.
    pub fn set_range(&mut self, rows: Range<usize>) {
        assert!(rows.end <= self.len, "rows {rows:?} reach outside a bitmap of {} rows", self.len);
        for_each_word_span(rows, |word, mask| self.words[word] |= mask);
    }

    /// Keeps only the rows also selected in `other` (intersection).
    pub fn and_with(&mut self, other: &Bitmap) {
        self.assert_same_len(other);
        self.words.iter_mut().zip(&other.words).for_each(|(w, o)| *w &= o);
    }

    /// Drops the rows selected in `other` (difference).
    pub fn and_not_with(&mut self, other: &Bitmap) {
        self.assert_same_len(other);
        self.words.iter_mut().zip(&other.words).for_each(|(w, o)| *w &= !o);
    }

    #[cfg(test)]
    /// Adds the rows selected in `other` (union).
    pub fn or_with(&mut self, other: &Bitmap) {
        self.assert_same_len(other);
        self.words.iter_mut().zip(&other.words).for_each(|(w, o)| *w |= o);
    }

    /// The words, row `i` at bit `i % 64` of word `i / 64`.
    pub fn words(&self) -> &[u64] {
        &self.words
    }

    /// The words, given up (for their room to be used again).
    pub fn into_words(self) -> Vec<u64> {
        self.words
    }

    /// The words for a kernel to AND into; it must leave bits at and beyond `len` 0.
    pub fn words_mut(&mut self) -> &mut [u64] {
        &mut self.words
    }

    /// The selected rows, in ascending order.
    pub fn iter_ones(&self) -> impl Iterator<Item = usize> + '_ {
        self.words.iter().enumerate().flat_map(|(i, &word)| ones_of_word(word).map(move |bit| i * 64 + bit))
    }

    /// The selected rows among words `words` (rows `64 × words.start` on), ascending.
    pub fn iter_ones_in(&self, words: Range<usize>) -> impl Iterator<Item = usize> + '_ {
        let start = words.start;
        self.words[words]
            .iter()
            .enumerate()
            .flat_map(move |(i, &word)| ones_of_word(word).map(move |bit| (start + i) * 64 + bit))
    }

    /// Rows selected among words `words`.
    pub fn count_ones_in(&self, words: Range<usize>) -> u64 {
        self.words[words].iter().map(|w| u64::from(w.count_ones())).sum()
    }

    fn assert_same_len(&self, other: &Bitmap) {
        assert_eq!(self.len, other.len, "bitmaps combined row by row must cover the same rows");
    }

    fn clear_tail(&mut self) {
        let tail_rows = self.len % 64;
        if let (Some(last), true) = (self.words.last_mut(), tail_rows > 0) {
            *last &= low_bits(tail_rows);
        }
    }
}

/// A word with its lowest `n` bits set (`n` in `0..=64`).
pub fn low_bits(n: usize) -> u64 {
    if n >= 64 { u64::MAX } else { (1 << n) - 1 }
}

/// Calls `f(word, mask)` for each word `rows` touches, `mask` holding the bits of `rows` in it.
fn for_each_word_span(rows: Range<usize>, mut f: impl FnMut(usize, u64)) {
    let mut row = rows.start;
    while row < rows.end {
        let (word, bit) = (row / 64, row % 64);
        let n = (64 - bit).min(rows.end - row);
        f(word, low_bits(n) << bit);
        row += n;
    }
}

/// The positions of the set bits of `word`, ascending.
fn ones_of_word(mut word: u64) -> impl Iterator<Item = usize> {
    std::iter::from_fn(move || {
        (word != 0).then(|| {
            let bit = word.trailing_zeros() as usize;
            word &= word - 1;
            bit
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn all_keeps_bits_beyond_len_zero() {
        for len in [0, 1, 63, 64, 65, 130] {
            let bitmap = Bitmap::all(len);
            assert_eq!(bitmap.count_ones(), len as u64);
            assert_eq!(bitmap.words().len(), len.div_ceil(64));
            assert_eq!(bitmap.iter_ones().collect::<Vec<_>>(), (0..len).collect::<Vec<_>>());
        }
    }

    proptest! {
        #[test]
        fn range_ops_match_bit_by_bit(len in 0usize..300, a in 0usize..300, b in 0usize..300) {
            let (start, end) = (a.min(b).min(len), a.max(b).min(len));
            let mut cleared = Bitmap::all(len);
            cleared.clear_range(start..end);
            let mut set = Bitmap::none(len);
            set.set_range(start..end);
            prop_assert_eq!(&cleared, &Bitmap::from_fn(len, |i| !(start..end).contains(&i)));
            prop_assert_eq!(&set, &Bitmap::from_fn(len, |i| (start..end).contains(&i)));
        }

        #[test]
        fn boolean_ops_match_bit_by_bit(bits in proptest::collection::vec(any::<(bool, bool)>(), 0..300)) {
            let len = bits.len();
            let a = Bitmap::from_fn(len, |i| bits[i].0);
            let b = Bitmap::from_fn(len, |i| bits[i].1);
            let mut and = a.clone();
            and.and_with(&b);
            let mut and_not = a.clone();
            and_not.and_not_with(&b);
            let mut or = a.clone();
            or.or_with(&b);
            prop_assert_eq!(and, Bitmap::from_fn(len, |i| bits[i].0 && bits[i].1));
            prop_assert_eq!(and_not, Bitmap::from_fn(len, |i| bits[i].0 && !bits[i].1));
            prop_assert_eq!(&or, &Bitmap::from_fn(len, |i| bits[i].0 || bits[i].1));
            let ones: Vec<usize> = (0..len).filter(|&i| bits[i].0 || bits[i].1).collect();
            prop_assert_eq!(or.iter_ones().collect::<Vec<_>>(), ones.clone());
            prop_assert_eq!(or.count_ones(), ones.len() as u64);
            prop_assert!(ones.iter().all(|&i| or.get(i)));
        }
    }
}
