//! Predicate kernels over a column unit's codes, in AVX-512, AVX2 and a scalar reference,
//! and the run-time choice between them; also the bit-packed code layout they scan.
//!
//! Every kernel tests codes against an inclusive range `lo..=hi` (or a few ranges, OR'ed)
//! and ANDs the outcome into a selection: bit `i` of `out_words` (see
//! [`super::bitmap::Bitmap`] for the word layout) stays set only if code `i` is in range.
//! Bits for rows at and beyond the number of codes are left as they are; words past them are
//! not touched. A block whose selection word is already 0 is skipped, so a second predicate
//! costs little where the first one selected nothing.
//!
//! The test is one subtraction and one unsigned compare per lane: `lo <= x <= hi` holds
//! exactly when `x - lo <= hi - lo` in wrapping arithmetic. AVX-512 compares unsigned lanes
//! into a mask register directly; AVX2 only has signed compares, so it subtracts
//! `lo ^ SIGN` (which also flips the difference's sign bit) and compares the result signed
//! against `(hi - lo) ^ SIGN`.
//!
//! Bit-packed codes (`width` 1..=32 bits each) are laid out so that one vector load and a
//! shift unpack 16 consecutive codes. A block of 512 codes is 16 lanes of 32 codes: code
//! `16 * j + l` of the block is code `j` of lane `l`, and each lane is a little-endian bit
//! stream of `width` 32-bit words (code `j` at bits `j * width .. (j + 1) * width`). Word
//! `k` of all 16 lanes is stored together, 64 bytes:
//!
//! ```text
//!   u32 index in the block:   16 * k + l            (block = 16 * width u32 = 8 * width u64)
//!
//!              lane 0               lane 1               ...  lane 15
//!   word 0:    c0  |c16 |c32~       c1  |c17 |c33~       ...  c15 |c31 |c47~
//!   word 1:    ~c32|c48 |c64 |c80~  ~c33|c49 |c65 |c81~  ...  ~c47|c63 |c79 |c95~
//!   ...
//!   word 10:   ~c464|c480|c496      ~c465|c481|c497      ...  ~c479|c495|c511
//!
//!   (width = 11: a lane's code j sits at bits 11j .. 11j + 11 of its stream, least
//!    significant first; `~` marks a code split between two words)
//! ```
//!
//! Codes `16 * j .. 16 * j + 16` (rows in order) are then `(word[k] >> s | word[k + 1] <<
//! (32 - s)) & mask` in all 16 lanes at once, with `k, s = (j * width) / 32, (j * width) % 32`:
//! one 64-byte vector for AVX-512, two 32-byte halves for AVX2, a selection word from four
//! such steps. [`pack_bits_into`] pads the last block with zero codes and appends 64 bytes, so
//! `word[k + 1]` can always be read. AVX2 and AVX-512 scan the same buffer.
//!
//! Invariants the callers keep (asserted): `out_words` covers the codes; packed buffers are
//! at least [`packed_words`] long; range kernels' `lo..=hi` may be empty (`lo > hi` selects
//! nothing). Asking for an [`Isa`] the CPU lacks falls back to the best one it has, so no
//! argument leads to an illegal instruction.

use super::bitmap::low_bits;
pub use crate::stats::isa::Isa;
use std::borrow::Cow;

/// An unsigned code lane the kernels compare.
trait Lane: Copy + Ord {
    fn wrapping_sub(self, other: Self) -> Self;
}

macro_rules! impl_lane {
    ($($t:ty),*) => {$(
        impl Lane for $t {
            fn wrapping_sub(self, other: Self) -> Self {
                <$t>::wrapping_sub(self, other)
            }
        }
    )*};
}
impl_lane!(u8, u16, u32, u64);

/// The public kernels for one lane type: a single range and an OR of ranges.
macro_rules! lane_kernels {
    ($t:ty, $range:ident, $ranges:ident) => {
        #[doc = concat!("ANDs into `out_words` whether each `", stringify!($t), "` code is in `lo..=hi`.")]
        pub fn $range(codes: &[$t], lo: $t, hi: $t, out_words: &mut [u64], isa: Isa) {
            assert_covers(out_words, codes.len());
            if lo > hi {
                return clear_rows(out_words, codes.len());
            }
            match isa.effective() {
                // SAFETY: `effective` returns Avx512 only when the CPU has avx512f and avx512bw.
                #[cfg(target_arch = "x86_64")]
                Isa::Avx512 => unsafe { avx512::$range(codes, lo, hi, out_words) },
                // SAFETY: `effective` returns Avx2 only when the CPU has avx2.
                #[cfg(target_arch = "x86_64")]
                Isa::Avx2 => unsafe { avx2::$range(codes, lo, hi, out_words) },
                _ => scalar::range(codes, lo, hi, out_words),
            }
        }

        #[doc = concat!("ANDs into `out_words` whether each `", stringify!($t), "` code is in any of `ranges` (inclusive; empty ones ignored).")]
        pub fn $ranges(codes: &[$t], ranges: &[($t, $t)], out_words: &mut [u64], isa: Isa) {
            assert_covers(out_words, codes.len());
            let ranges = non_empty(ranges);
            if ranges.is_empty() {
                return clear_rows(out_words, codes.len());
            }
            match isa.effective() {
                // SAFETY: `effective` returns Avx512 only when the CPU has avx512f and avx512bw.
                #[cfg(target_arch = "x86_64")]
                Isa::Avx512 => unsafe { avx512::$ranges(codes, &ranges, out_words) },
                // SAFETY: `effective` returns Avx2 only when the CPU has avx2.
                #[cfg(target_arch = "x86_64")]
                Isa::Avx2 => unsafe { avx2::$ranges(codes, &ranges, out_words) },
                _ => scalar::ranges(codes, &ranges, out_words),
            }
        }
    };
}
lane_kernels!(u8, range_u8, ranges_u8);
lane_kernels!(u16, range_u16, ranges_u16);
lane_kernels!(u32, range_u32, ranges_u32);
lane_kernels!(u64, range_u64, ranges_u64);

/// ANDs into `out_words` whether each of the `rows` bit-packed codes of `width` bits is in
/// `lo..=hi`.
pub fn range_packed(packed: &[u64], width: u8, rows: usize, lo: u32, hi: u32, out_words: &mut [u64], isa: Isa) {
    assert_packed(packed, width, rows, out_words);
    if lo > hi {
        return clear_rows(out_words, rows);
    }
    match isa.effective() {
        // SAFETY: `effective` returns Avx512 only when the CPU has avx512f and avx512bw.
        #[cfg(target_arch = "x86_64")]
        Isa::Avx512 => unsafe { avx512::range_packed(packed, width, rows, lo, hi, out_words) },
        // SAFETY: `effective` returns Avx2 only when the CPU has avx2.
        #[cfg(target_arch = "x86_64")]
        Isa::Avx2 => unsafe { avx2::range_packed(packed, width, rows, lo, hi, out_words) },
        _ => scalar::ranges_packed(packed, width, rows, &[(lo, hi)], out_words),
    }
}

/// ANDs into `out_words` whether each of the `rows` bit-packed codes of `width` bits is in
/// any of `ranges` (inclusive; empty ones ignored).
pub fn ranges_packed(packed: &[u64], width: u8, rows: usize, ranges: &[(u32, u32)], out_words: &mut [u64], isa: Isa) {
    assert_packed(packed, width, rows, out_words);
    let ranges = non_empty(ranges);
    if ranges.is_empty() {
        return clear_rows(out_words, rows);
    }
    match isa.effective() {
        // SAFETY: `effective` returns Avx512 only when the CPU has avx512f and avx512bw.
        #[cfg(target_arch = "x86_64")]
        Isa::Avx512 => unsafe { avx512::ranges_packed(packed, width, rows, &ranges, out_words) },
        // SAFETY: `effective` returns Avx2 only when the CPU has avx2.
        #[cfg(target_arch = "x86_64")]
        Isa::Avx2 => unsafe { avx2::ranges_packed(packed, width, rows, &ranges, out_words) },
        _ => scalar::ranges_packed(packed, width, rows, &ranges, out_words),
    }
}

/// Codes in a packed block (16 lanes of 32).
pub const PACKED_BLOCK_CODES: usize = 512;

/// `u64` words [`pack_bits_into`] fills for `rows` codes of `width` bits: `8 * width` per
/// 512-code block (the last one padded with zero codes), plus 8 pad words.
pub fn packed_words(rows: usize, width: u8) -> usize {
    rows.div_ceil(PACKED_BLOCK_CODES) * 8 * usize::from(width) + 8
}

/// Packs `codes` at `width` (1..=32) bits each, in the layout the module documentation
/// draws, into `words`, which must be zero and [`packed_words`] long. Panics if a code
/// does not fit in `width` bits (the encoder chose the width from them).
pub fn pack_bits_into(codes: &[u64], width: u8, words: &mut [u64]) {
    assert_width(width);
    assert_eq!(words.len(), packed_words(codes.len(), width), "room for {} codes of {width} bits", codes.len());
    for (row, &code) in codes.iter().enumerate() {
        assert!(code < 1 << width, "code {code} does not fit the {width}-bit width chosen for its unit");
        let (index, shift) = u32_position(width, row);
        let pair = code << shift;
        or_u32(words, index, pair as u32);
        or_u32(words, index + 16, (pair >> 32) as u32);
    }
}

/// Code `row` of a buffer [`pack_bits_into`] filled.
pub fn packed_get(packed: &[u64], width: u8, row: usize) -> u32 {
    assert_width(width);
    let (index, shift) = u32_position(width, row);
    let pair = u64::from(u32_at(packed, index)) | u64::from(u32_at(packed, index + 16)) << 32;
    (pair >> shift & low_bits(usize::from(width))) as u32
}

/// Where code `row` starts: the index of its first `u32` word and the bit within it.
fn u32_position(width: u8, row: usize) -> (usize, usize) {
    let (block, code) = (row / PACKED_BLOCK_CODES, row % PACKED_BLOCK_CODES);
    let (lane, j) = (code % 16, code / 16);
    let bit = j * usize::from(width);
    (block * 16 * usize::from(width) + bit / 32 * 16 + lane, bit % 32)
}

/// The `index`th `u32` of `words` (little-endian halves).
fn u32_at(words: &[u64], index: usize) -> u32 {
    (words[index / 2] >> (index % 2 * 32)) as u32
}

fn or_u32(words: &mut [u64], index: usize, bits: u32) {
    words[index / 2] |= u64::from(bits) << (index % 2 * 32);
}

/// ANDs `word_mask(block, m)` into each selection word, where `block` is the packed 512-code
/// block (and the 8 words after it) holding the word's rows and `m` the word's place in it;
/// leaves bits beyond `rows` alone and skips words already 0. Inlined into each kernel, so
/// the closure compiles with the kernel's target features.
#[inline(always)]
fn and_packed(
    packed: &[u64],
    width: u8,
    rows: usize,
    out_words: &mut [u64],
    mut word_mask: impl FnMut(&[u64], usize) -> u64,
) {
    let block_words = 8 * usize::from(width);
    for (i, word) in out_words[..rows.div_ceil(64)].iter_mut().enumerate() {
        if *word != 0 {
            let first = i / 8 * block_words;
            let block = &packed[first..first + block_words + 8];
            *word &= word_mask(block, i % 8) | !low_bits(rows - i * 64);
        }
    }
}

/// Where the `t`th group of 16 codes of selection word `m` starts in each lane: the word
/// index `k` and the shift `s` (see the module documentation).
#[inline(always)]
fn lane_position(width: u8, m: usize, t: usize) -> (usize, u32) {
    let bit = (4 * m + t) * usize::from(width);
    (bit / 32, (bit % 32) as u32)
}

fn assert_packed(packed: &[u64], width: u8, rows: usize, out_words: &[u64]) {
    assert_width(width);
    assert_covers(out_words, rows);
    assert!(packed.len() >= packed_words(rows, width), "a packed buffer holds whole blocks and 8 pad words");
}

fn assert_width(width: u8) {
    assert!((1..=32).contains(&width), "bit-packed codes are 1 to 32 bits wide, not {width}");
}

fn assert_covers(out_words: &[u64], rows: usize) {
    assert!(out_words.len() >= rows.div_ceil(64), "a selection of {} words cannot hold {rows} rows", out_words.len());
}

/// Deselects rows `0..rows`.
fn clear_rows(out_words: &mut [u64], rows: usize) {
    let (full, rest) = (rows / 64, rows % 64);
    out_words[..full].fill(0);
    if rest > 0 {
        out_words[full] &= !low_bits(rest);
    }
}

/// `ranges` without the empty ones (borrowed when there are none).
fn non_empty<T: Lane>(ranges: &[(T, T)]) -> Cow<'_, [(T, T)]> {
    if ranges.iter().all(|(lo, hi)| lo <= hi) {
        Cow::Borrowed(ranges)
    } else {
        Cow::Owned(ranges.iter().copied().filter(|(lo, hi)| lo <= hi).collect())
    }
}

/// ANDs `block(codes)` into each word for the whole 64-code blocks and `tail(codes)` for the
/// rest, leaving bits beyond the codes alone. Inlined into each kernel, so the closures
/// compile with the kernel's target features.
#[inline(always)]
fn and_blocks<T>(
    codes: &[T],
    out_words: &mut [u64],
    mut block: impl FnMut(&[T; 64]) -> u64,
    tail: impl FnOnce(&[T]) -> u64,
) {
    let (blocks, rest) = codes.as_chunks::<64>();
    for (word, codes) in out_words.iter_mut().zip(blocks) {
        if *word != 0 {
            *word &= block(codes);
        }
    }
    if !rest.is_empty() {
        out_words[blocks.len()] &= tail(rest) | !low_bits(rest.len());
    }
}

/// The reference kernels, and the tails of the vector ones.
mod scalar {
    use super::{Lane, and_blocks, and_packed, lane_position, low_bits, u32_at};

    pub fn range<T: Lane>(codes: &[T], lo: T, hi: T, out_words: &mut [u64]) {
        let span = hi.wrapping_sub(lo);
        and_blocks(codes, out_words, |block| range_mask(block, lo, span), |tail| range_mask(tail, lo, span));
    }

    pub fn ranges<T: Lane>(codes: &[T], ranges: &[(T, T)], out_words: &mut [u64]) {
        and_blocks(codes, out_words, |block| ranges_mask(block, ranges), |tail| ranges_mask(tail, ranges));
    }

    pub fn ranges_packed(packed: &[u64], width: u8, rows: usize, ranges: &[(u32, u32)], out_words: &mut [u64]) {
        let code_mask = low_bits(usize::from(width));
        and_packed(packed, width, rows, out_words, |block, m| {
            let mut codes = [0u32; 64];
            for (t, sixteen) in codes.as_chunks_mut::<16>().0.iter_mut().enumerate() {
                let (k, s) = lane_position(width, m, t);
                for (lane, code) in sixteen.iter_mut().enumerate() {
                    let pair =
                        u64::from(u32_at(block, 16 * k + lane)) | u64::from(u32_at(block, 16 * k + 16 + lane)) << 32;
                    *code = (pair >> s & code_mask) as u32;
                }
            }
            ranges_mask(&codes, ranges)
        });
    }

    /// Bit `i` set when `codes[i] - lo <= span` (wrapping); at most 64 codes.
    #[inline(always)]
    pub fn range_mask<T: Lane>(codes: &[T], lo: T, span: T) -> u64 {
        codes.iter().enumerate().fold(0, |mask, (i, &code)| mask | u64::from(code.wrapping_sub(lo) <= span) << i)
    }

    /// Bit `i` set when `codes[i]` is in one of the non-empty `ranges`; at most 64 codes.
    #[inline(always)]
    pub fn ranges_mask<T: Lane>(codes: &[T], ranges: &[(T, T)]) -> u64 {
        ranges.iter().fold(0, |mask, &(lo, hi)| mask | range_mask(codes, lo, hi.wrapping_sub(lo)))
    }
}

/// The single-range and OR-of-ranges kernels of one lane type for a vector ISA, around its
/// `block` function (64 codes to a 64-bit mask); the tails go to the scalar code.
#[cfg(target_arch = "x86_64")]
macro_rules! vector_kernels {
    ($features:literal, $t:ty, $range:ident, $ranges:ident, $block:ident) => {
        #[target_feature(enable = $features)]
        pub fn $range(codes: &[$t], lo: $t, hi: $t, out_words: &mut [u64]) {
            let span = hi.wrapping_sub(lo);
            let tail = |codes: &[$t]| scalar::range_mask(codes, lo, span);
            and_blocks(codes, out_words, |block| $block(block, lo, span), tail);
        }

        #[target_feature(enable = $features)]
        pub fn $ranges(codes: &[$t], ranges: &[($t, $t)], out_words: &mut [u64]) {
            let any = |block: &[$t; 64]| {
                ranges.iter().fold(0, |mask, &(lo, hi)| mask | $block(block, lo, hi.wrapping_sub(lo)))
            };
            and_blocks(codes, out_words, any, |codes| scalar::ranges_mask(codes, ranges));
        }
    };
}

/// AVX2 kernels. With only signed compares, each lane computes `x - (lo ^ SIGN)`, which is
/// `(x - lo) ^ SIGN`, and tests it signed-greater than `span ^ SIGN`: the rows *outside*
/// the range, inverted at the end.
#[cfg(target_arch = "x86_64")]
mod avx2 {
    use super::{and_blocks, and_packed, lane_position, low_bits, scalar};
    use std::arch::x86_64::*;

    vector_kernels!("avx2", u8, range_u8, ranges_u8, block_u8);
    vector_kernels!("avx2", u16, range_u16, ranges_u16, block_u16);
    vector_kernels!("avx2", u32, range_u32, ranges_u32, block_u32);
    vector_kernels!("avx2", u64, range_u64, ranges_u64, block_u64);

    #[target_feature(enable = "avx2")]
    pub fn range_packed(packed: &[u64], width: u8, rows: usize, lo: u32, hi: u32, out_words: &mut [u64]) {
        let bias = _mm256_set1_epi32((lo ^ 0x8000_0000) as i32);
        let limit = _mm256_set1_epi32((hi.wrapping_sub(lo) ^ 0x8000_0000) as i32);
        let outside = |codes| _mm256_cmpgt_epi32(_mm256_sub_epi32(codes, bias), limit);
        and_packed(packed, width, rows, out_words, |block, m| !packed_word(block, width, m, outside));
    }

    #[target_feature(enable = "avx2")]
    pub fn ranges_packed(packed: &[u64], width: u8, rows: usize, ranges: &[(u32, u32)], out_words: &mut [u64]) {
        let bounds: Vec<(__m256i, __m256i)> = ranges
            .iter()
            .map(|&(lo, hi)| {
                let bias = _mm256_set1_epi32((lo ^ 0x8000_0000) as i32);
                (bias, _mm256_set1_epi32((hi.wrapping_sub(lo) ^ 0x8000_0000) as i32))
            })
            .collect();
        let outside = |codes| {
            bounds.iter().fold(_mm256_set1_epi32(-1), |outside, &(bias, limit)| {
                _mm256_and_si256(outside, _mm256_cmpgt_epi32(_mm256_sub_epi32(codes, bias), limit))
            })
        };
        and_packed(packed, width, rows, out_words, |block, m| !packed_word(block, width, m, outside));
    }

    /// Unpacks the 64 codes of selection word `m` of a packed block, 8 at a time, and
    /// gathers the sign bits of `test` on each 8 into a mask.
    #[target_feature(enable = "avx2")]
    #[inline]
    fn packed_word(block: &[u64], width: u8, m: usize, mut test: impl FnMut(__m256i) -> __m256i) -> u64 {
        let code_mask = _mm256_set1_epi32(low_bits(usize::from(width)) as i32);
        let mut mask = 0;
        for t in 0..4 {
            let (k, s) = lane_position(width, m, t);
            let (right, left) = (_mm256_set1_epi32(s as i32), _mm256_set1_epi32(32 - s as i32));
            for half in 0..2 {
                let (low, high) = (load(&block[8 * k + 4 * half..]), load(&block[8 * k + 8 + 4 * half..]));
                let codes = _mm256_or_si256(_mm256_srlv_epi32(low, right), _mm256_sllv_epi32(high, left));
                let lanes = test(_mm256_and_si256(codes, code_mask));
                let bits = _mm256_movemask_ps(_mm256_castsi256_ps(lanes)) as u32;
                mask |= u64::from(bits) << (16 * t + 8 * half);
            }
        }
        mask
    }

    /// Loads 32 bytes from `lanes` (at least 32 bytes long).
    #[target_feature(enable = "avx2")]
    #[inline]
    fn load<T>(lanes: &[T]) -> __m256i {
        assert!(size_of_val(lanes) >= 32);
        // SAFETY: `lanes` holds at least 32 readable bytes (asserted, and constant-folded
        // away at every call site); `loadu` needs no alignment.
        unsafe { _mm256_loadu_si256(lanes.as_ptr().cast()) }
    }

    #[target_feature(enable = "avx2")]
    #[inline]
    fn block_u8(block: &[u8; 64], lo: u8, span: u8) -> u64 {
        let bias = _mm256_set1_epi8((lo ^ 0x80) as i8);
        let limit = _mm256_set1_epi8((span ^ 0x80) as i8);
        let outside = |half: &[u8]| {
            let beyond = _mm256_cmpgt_epi8(_mm256_sub_epi8(load(half), bias), limit);
            u64::from(_mm256_movemask_epi8(beyond) as u32)
        };
        !(outside(&block[..32]) | outside(&block[32..]) << 32)
    }

    #[target_feature(enable = "avx2")]
    #[inline]
    fn block_u16(block: &[u16; 64], lo: u16, span: u16) -> u64 {
        let bias = _mm256_set1_epi16((lo ^ 0x8000) as i16);
        let limit = _mm256_set1_epi16((span ^ 0x8000) as i16);
        let beyond = |lanes: &[u16]| _mm256_cmpgt_epi16(_mm256_sub_epi16(load(lanes), bias), limit);
        // Packing two 16-lane masks into bytes interleaves their 128-bit halves; the
        // permute puts rows back in order before `movemask` takes one bit per byte.
        let outside = |quarter: &[u16]| {
            let bytes = _mm256_packs_epi16(beyond(&quarter[..16]), beyond(&quarter[16..]));
            u64::from(_mm256_movemask_epi8(_mm256_permute4x64_epi64::<0b11_01_10_00>(bytes)) as u32)
        };
        !(outside(&block[..32]) | outside(&block[32..]) << 32)
    }

    #[target_feature(enable = "avx2")]
    #[inline]
    fn block_u32(block: &[u32; 64], lo: u32, span: u32) -> u64 {
        let bias = _mm256_set1_epi32((lo ^ 0x8000_0000) as i32);
        let limit = _mm256_set1_epi32((span ^ 0x8000_0000) as i32);
        let mut outside = 0;
        for (i, lanes) in block.as_chunks::<8>().0.iter().enumerate() {
            let beyond = _mm256_cmpgt_epi32(_mm256_sub_epi32(load(lanes), bias), limit);
            outside |= u64::from(_mm256_movemask_ps(_mm256_castsi256_ps(beyond)) as u32) << (8 * i);
        }
        !outside
    }

    #[target_feature(enable = "avx2")]
    #[inline]
    fn block_u64(block: &[u64; 64], lo: u64, span: u64) -> u64 {
        let bias = _mm256_set1_epi64x((lo ^ 1 << 63) as i64);
        let limit = _mm256_set1_epi64x((span ^ 1 << 63) as i64);
        let mut outside = 0;
        for (i, lanes) in block.as_chunks::<4>().0.iter().enumerate() {
            let beyond = _mm256_cmpgt_epi64(_mm256_sub_epi64(load(lanes), bias), limit);
            outside |= u64::from(_mm256_movemask_pd(_mm256_castsi256_pd(beyond)) as u32) << (4 * i);
        }
        !outside
    }
}

/// AVX-512 kernels: unsigned compares straight into mask registers, 64 bytes per vector.
#[cfg(target_arch = "x86_64")]
mod avx512 {
    use super::{and_blocks, and_packed, lane_position, low_bits, scalar};
    use std::arch::x86_64::*;

    vector_kernels!("avx512f,avx512bw", u8, range_u8, ranges_u8, block_u8);
    vector_kernels!("avx512f,avx512bw", u16, range_u16, ranges_u16, block_u16);
    vector_kernels!("avx512f,avx512bw", u32, range_u32, ranges_u32, block_u32);
    vector_kernels!("avx512f,avx512bw", u64, range_u64, ranges_u64, block_u64);

    #[target_feature(enable = "avx512f,avx512bw")]
    pub fn range_packed(packed: &[u64], width: u8, rows: usize, lo: u32, hi: u32, out_words: &mut [u64]) {
        let (lo, span) = (_mm512_set1_epi32(lo as i32), _mm512_set1_epi32(hi.wrapping_sub(lo) as i32));
        let inside = |codes| _mm512_cmple_epu32_mask(_mm512_sub_epi32(codes, lo), span);
        and_packed(packed, width, rows, out_words, |block, m| packed_word(block, width, m, inside));
    }

    #[target_feature(enable = "avx512f,avx512bw")]
    pub fn ranges_packed(packed: &[u64], width: u8, rows: usize, ranges: &[(u32, u32)], out_words: &mut [u64]) {
        let bounds: Vec<(__m512i, __m512i)> = ranges
            .iter()
            .map(|&(lo, hi)| (_mm512_set1_epi32(lo as i32), _mm512_set1_epi32(hi.wrapping_sub(lo) as i32)))
            .collect();
        let inside = |codes| {
            bounds
                .iter()
                .fold(0, |inside, &(lo, span)| inside | _mm512_cmple_epu32_mask(_mm512_sub_epi32(codes, lo), span))
        };
        and_packed(packed, width, rows, out_words, |block, m| packed_word(block, width, m, inside));
    }

    /// Unpacks the 64 codes of selection word `m` of a packed block, 16 at a time, and
    /// gathers `test`'s 16-bit masks.
    #[target_feature(enable = "avx512f,avx512bw")]
    #[inline]
    fn packed_word(block: &[u64], width: u8, m: usize, mut test: impl FnMut(__m512i) -> u16) -> u64 {
        let code_mask = _mm512_set1_epi32(low_bits(usize::from(width)) as i32);
        let mut mask = 0;
        for t in 0..4 {
            let (k, s) = lane_position(width, m, t);
            let (right, left) = (_mm512_set1_epi32(s as i32), _mm512_set1_epi32(32 - s as i32));
            let (low, high) = (load(&block[8 * k..]), load(&block[8 * k + 8..]));
            let codes = _mm512_or_si512(_mm512_srlv_epi32(low, right), _mm512_sllv_epi32(high, left));
            mask |= u64::from(test(_mm512_and_si512(codes, code_mask))) << (16 * t);
        }
        mask
    }

    /// Loads 64 bytes from `lanes` (at least 64 bytes long).
    #[target_feature(enable = "avx512f,avx512bw")]
    #[inline]
    fn load<T>(lanes: &[T]) -> __m512i {
        assert!(size_of_val(lanes) >= 64);
        // SAFETY: `lanes` holds at least 64 readable bytes (asserted, and constant-folded
        // away at every call site); `loadu` needs no alignment.
        unsafe { _mm512_loadu_si512(lanes.as_ptr().cast()) }
    }

    #[target_feature(enable = "avx512f,avx512bw")]
    #[inline]
    fn block_u8(block: &[u8; 64], lo: u8, span: u8) -> u64 {
        let (lo, span) = (_mm512_set1_epi8(lo as i8), _mm512_set1_epi8(span as i8));
        _mm512_cmple_epu8_mask(_mm512_sub_epi8(load(block), lo), span)
    }

    #[target_feature(enable = "avx512f,avx512bw")]
    #[inline]
    fn block_u16(block: &[u16; 64], lo: u16, span: u16) -> u64 {
        let (lo, span) = (_mm512_set1_epi16(lo as i16), _mm512_set1_epi16(span as i16));
        let inside = |lanes: &[u16]| u64::from(_mm512_cmple_epu16_mask(_mm512_sub_epi16(load(lanes), lo), span));
        inside(&block[..32]) | inside(&block[32..]) << 32
    }

    #[target_feature(enable = "avx512f,avx512bw")]
    #[inline]
    fn block_u32(block: &[u32; 64], lo: u32, span: u32) -> u64 {
        let (lo, span) = (_mm512_set1_epi32(lo as i32), _mm512_set1_epi32(span as i32));
        let mut inside = 0;
        for (i, lanes) in block.as_chunks::<16>().0.iter().enumerate() {
            inside |= u64::from(_mm512_cmple_epu32_mask(_mm512_sub_epi32(load(lanes), lo), span)) << (16 * i);
        }
        inside
    }

    #[target_feature(enable = "avx512f,avx512bw")]
    #[inline]
    fn block_u64(block: &[u64; 64], lo: u64, span: u64) -> u64 {
        let (lo, span) = (_mm512_set1_epi64(lo as i64), _mm512_set1_epi64(span as i64));
        let mut inside = 0;
        for (i, lanes) in block.as_chunks::<8>().0.iter().enumerate() {
            inside |= u64::from(_mm512_cmple_epu64_mask(_mm512_sub_epi64(load(lanes), lo), span)) << (8 * i);
        }
        inside
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use proptest::prelude::*;

    /// `codes` packed by [`pack_bits_into`] into a buffer of their own.
    fn pack_bits(codes: &[u64], width: u8) -> Vec<u64> {
        let mut words = vec![0; packed_words(codes.len(), width)];
        pack_bits_into(codes, width, &mut words);
        words
    }

    /// What every kernel must produce: `initial` with bit `i < codes.len()` cleared unless
    /// code `i` is in one of `ranges`; bits beyond the codes untouched.
    fn expected(codes: &[u64], ranges: &[(u64, u64)], initial: &[u64]) -> Vec<u64> {
        let mut words = initial.to_vec();
        for (i, &code) in codes.iter().enumerate() {
            if !ranges.iter().any(|&(lo, hi)| lo <= code && code <= hi) {
                words[i / 64] &= !(1 << (i % 64));
            }
        }
        words
    }

    /// A small xorshift generator, so the exhaustive width tests (here and in `cu`) need
    /// no strategy.
    pub(crate) struct Rng(pub(crate) u64);

    impl Rng {
        pub(crate) fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }

        /// A value below `n` (0 when `n` is 0).
        pub(crate) fn below(&mut self, n: u64) -> u64 {
            self.next() % n.max(1)
        }

        /// A value below `2^bits` that is often 0, the maximum or near an earlier one.
        fn code(&mut self, bits: u32) -> u64 {
            let max = low_bits(bits as usize);
            match self.next() % 8 {
                0 => 0,
                1 => max,
                _ => self.next() & max,
            }
        }
    }

    fn selection(rng: &mut Rng, rows: usize) -> Vec<u64> {
        (0..rows.div_ceil(64) + 1).map(|_| if rng.next().is_multiple_of(4) { rng.next() } else { u64::MAX }).collect()
    }

    fn random_ranges(rng: &mut Rng, bits: u32) -> Vec<(u64, u64)> {
        let count = 1 + rng.next() % 5;
        (0..count).map(|_| (rng.code(bits), rng.code(bits))).collect()
    }

    /// Runs `kernel` with every available ISA on a copy of `initial` and checks each
    /// against `want`.
    fn check_every_isa(want: &[u64], initial: &[u64], mut kernel: impl FnMut(&mut [u64], Isa)) {
        say_which_isas_are_compared();
        for isa in Isa::available() {
            let mut words = initial.to_vec();
            kernel(&mut words, isa);
            assert_eq!(words, want, "{isa} disagrees with the reference");
        }
    }

    /// Says once in the test output which ISAs' kernels are compared with the scalar one,
    /// and that the AVX-512 kernels are not where the CPU lacks AVX-512.
    fn say_which_isas_are_compared() {
        static SAID: std::sync::Once = std::sync::Once::new();
        SAID.call_once(|| {
            let isas: Vec<String> = Isa::available().iter().map(|i| i.to_string()).collect();
            eprintln!("SIMD kernels compared with the scalar one: {}", isas.join(", "));
            if !Isa::available().contains(&Isa::Avx512) {
                eprintln!(
                    "skipped: no AVX-512 on this CPU (avx512f and avx512bw): the AVX-512 kernels were not compared"
                );
            }
        });
    }

    macro_rules! check_lanes {
        ($t:ty, $range:ident, $ranges:ident, $codes:expr, $ranges_list:expr, $initial:expr) => {{
            let codes: Vec<$t> = $codes.iter().map(|&c| c as $t).collect();
            let wide: Vec<u64> = codes.iter().map(|&c| u64::from(c)).collect();
            let ranges: Vec<($t, $t)> = $ranges_list.iter().map(|&(lo, hi)| (lo as $t, hi as $t)).collect();
            let wide_ranges: Vec<(u64, u64)> = ranges.iter().map(|&(lo, hi)| (u64::from(lo), u64::from(hi))).collect();
            let (lo, hi) = ranges[0];
            let want = expected(&wide, &wide_ranges[..1], $initial);
            check_every_isa(&want, $initial, |words, isa| $range(&codes, lo, hi, words, isa));
            let want = expected(&wide, &wide_ranges, $initial);
            check_every_isa(&want, $initial, |words, isa| $ranges(&codes, &ranges, words, isa));
        }};
    }

    #[test]
    fn best_isa_is_available() {
        assert!(Isa::available().contains(&Isa::best()));
        assert_eq!(Isa::available()[0], Isa::Scalar);
    }

    #[test]
    fn every_lane_width_agrees_with_the_reference() {
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
        for rows in [0, 1, 63, 64, 65, 127, 128, 200, 640, 1000] {
            for _ in 0..20 {
                let bits = [3, 8, 16, 32, 64][(rng.next() % 5) as usize];
                let codes: Vec<u64> = (0..rows).map(|_| rng.code(bits)).collect();
                let ranges = random_ranges(&mut rng, bits);
                let initial = selection(&mut rng, rows);
                match bits {
                    3 | 8 => check_lanes!(u8, range_u8, ranges_u8, codes, ranges, &initial),
                    16 => check_lanes!(u16, range_u16, ranges_u16, codes, ranges, &initial),
                    32 => check_lanes!(u32, range_u32, ranges_u32, codes, ranges, &initial),
                    _ => check_lanes!(u64, range_u64, ranges_u64, codes, ranges, &initial),
                }
            }
        }
    }

    #[test]
    fn every_packed_width_agrees_with_the_reference() {
        let mut rng = Rng(0x2545_F491_4F6C_DD1D);
        for width in 1..=32u8 {
            for rows in [0, 1, 63, 64, 100, 511, 512, 513, 1100] {
                let codes: Vec<u64> = (0..rows).map(|_| rng.code(u32::from(width))).collect();
                let packed = pack_bits(&codes, width);
                assert_eq!(packed.len(), packed_words(rows, width));
                assert!((0..rows).all(|row| u64::from(packed_get(&packed, width, row)) == codes[row]));
                for _ in 0..4 {
                    let wide_ranges = random_ranges(&mut rng, u32::from(width));
                    let ranges: Vec<(u32, u32)> = wide_ranges.iter().map(|&(lo, hi)| (lo as u32, hi as u32)).collect();
                    let initial = selection(&mut rng, rows);
                    let (lo, hi) = ranges[0];
                    let want = expected(&codes, &wide_ranges[..1], &initial);
                    check_every_isa(&want, &initial, |words, isa| {
                        range_packed(&packed, width, rows, lo, hi, words, isa)
                    });
                    let want = expected(&codes, &wide_ranges, &initial);
                    check_every_isa(&want, &initial, |words, isa| {
                        ranges_packed(&packed, width, rows, &ranges, words, isa)
                    });
                }
            }
        }
    }

    #[test]
    fn an_isa_the_cpu_lacks_falls_back() {
        let codes: Vec<u32> = (0..300).collect();
        let want = expected(&codes.iter().map(|&c| u64::from(c)).collect::<Vec<_>>(), &[(10, 200)], &[u64::MAX; 5]);
        check_every_isa(&want, &[u64::MAX; 5], |words, _| range_u32(&codes, 10, 200, words, Isa::Avx512));
    }

    proptest! {
        #[test]
        fn u32_kernels_agree_on_random_input(
            codes in proptest::collection::vec(0u32..1000, 0..700),
            ranges in proptest::collection::vec((0u32..1100, 0u32..1100), 1..6),
            seed in 1u64..,
        ) {
            let initial = selection(&mut Rng(seed), codes.len());
            check_lanes!(u32, range_u32, ranges_u32, codes, ranges, &initial);
        }

        #[test]
        fn u64_kernels_agree_at_the_extremes(
            codes in proptest::collection::vec(prop_oneof![Just(0), Just(u64::MAX), Just(1 << 63), any::<u64>()], 0..300),
            ranges in proptest::collection::vec(
                (prop_oneof![Just(0), Just(u64::MAX), any::<u64>()], prop_oneof![Just(0), Just(u64::MAX), any::<u64>()]),
                1..4,
            ),
        ) {
            let initial = vec![u64::MAX; codes.len().div_ceil(64) + 1];
            check_lanes!(u64, range_u64, ranges_u64, codes, ranges, &initial);
        }

        #[test]
        fn packed_kernels_agree_on_random_input(
            width in 1u8..=32,
            raw in proptest::collection::vec(any::<u64>(), 0..1200),
            ranges in proptest::collection::vec((any::<u64>(), any::<u64>()), 1..5),
        ) {
            let mask = low_bits(usize::from(width));
            let codes: Vec<u64> = raw.iter().map(|c| c & mask).collect();
            let ranges: Vec<(u32, u32)> = ranges.iter().map(|&(lo, hi)| ((lo & mask) as u32, (hi & mask) as u32)).collect();
            let wide: Vec<(u64, u64)> = ranges.iter().map(|&(lo, hi)| (u64::from(lo), u64::from(hi))).collect();
            let packed = pack_bits(&codes, width);
            let rows = codes.len();
            let initial = vec![u64::MAX; rows.div_ceil(64)];
            let want = expected(&codes, &wide, &initial);
            check_every_isa(&want, &initial, |words, isa| ranges_packed(&packed, width, rows, &ranges, words, isa));
        }
    }
}
