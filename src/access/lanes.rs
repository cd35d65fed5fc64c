//! Eight rows at a time: the fast walk of [`super::fast_walk`], the filter and the count of
//! a row kernel done for eight rows of a block at once with AVX2 gathers, where the CPU
//! has AVX2 and the lanes are asked for ([`choice`], decided at run time: they retire
//! fewer instructions, but the rows one by one ran faster on every core timed, so that
//! is the default).
//!
//! A *group* is eight consecutive directory slots. It runs in lanes only when all eight
//! rows are clean: whole, not deleted, not locked by an unfinished insert, with at least
//! `W` columns, the first `W` short or NULL and the last of them at least 10 bytes before
//! the block's end, and the filtered column NULL or a whole number of 1..=8 mantissa
//! bytes. A group with an empty slot (or an offset no row can have) runs as the rows
//! before it and then the rest; the last rows of a block, fewer than eight, run as the
//! block's last eight slots with the rows before them left out of the totals. Any other group
//! goes row by row through the scalar walk, which also stays the reference the lanes are
//! tested against. Whole groups in a row run in one call (`avx2::groups`), which also
//! prefetches the next block a group at a time.
//!
//! The walk keeps only the first and the last column's positions and words unless the
//! filter or the count reads a column between them ([`LaneCount::reads_between`],
//! decided once a block and compiled in as `BETWEEN`): then it keeps every column's.
//!
//! Per group, with `p` the vector of eight positions (32-bit lanes):
//!
//! ```text
//! directory ──► 8 offsets ──gather──► 8 headers (flags, lock, count) ── all clean?
//!                  │
//!                  └► p = offset + 3 ──► for each column: b = gather(min(p, len - 10)) & 0xFF,
//!                                         p += max((b + 1) & 0xFF, 1)
//! filter column: gather (length, scale); values of at most 4 mantissa bytes: gather 8
//!                mantissas (32-bit lanes), else 2 × gather 4 (64-bit lanes);
//!                sign-extend by shifts, test lo <= v <= hi   ──► passed bits
//! count column:  NULL test of its length byte                ──► counted bits
//! ```
//!
//! The rows are read in the block itself, with no copy of its end: every gather reads at
//! most 10 bytes past a position, and the walk's positions are clamped to 10 bytes before
//! the block's end before they are read, so no read leaves the block. A walk only moves
//! forward, so a group whose last position lies inside that limit read every column
//! where it is; a row near the end whose walk crossed it fails the group, which then goes
//! the scalar way.

/// What a kernel tests and counts in lanes: at most one filter term and one count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LaneCount {
    /// The filter, if any: every row passes without one.
    pub filter: Option<LaneFilter>,
    /// The column whose non-NULL values are counted; rows are counted without one.
    pub not_null: Option<usize>,
}

impl LaneCount {
    /// Whether it reads a column between the first and the last of a walk of `w`
    /// columns: only then does a group keep every column's position.
    pub fn reads_between(&self, w: usize) -> bool {
        self.filter.map(|f| f.column).into_iter().chain(self.not_null).any(|c| c != 0 && c + 1 != w)
    }
}

/// `lo <= column <= lo + span` in wrapping arithmetic (`span` as unsigned): one arc of the
/// integer circle, which a complement is too, on a NUMBER column stored as a small whole
/// number. A NULL fails it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LaneFilter {
    pub column: usize,
    // Read-only once made: `narrow` is derived from them.
    lo: i64,
    span: u64,
    /// The range's values that fit in 32 bits: a group whose values all do (at most four
    /// mantissa bytes) is tested in 32-bit lanes, eight in one compare.
    narrow: NarrowRange,
}

impl LaneFilter {
    /// The filter `lo <= column <= lo + span` (wrapping).
    pub fn new(column: usize, lo: i64, span: u64) -> LaneFilter {
        LaneFilter { column, lo, span, narrow: NarrowRange::of(lo, span) }
    }

    /// The range's first value and its span: what the tests' scalar reference reads.
    #[cfg(test)]
    pub(super) fn range(&self) -> (i64, u64) {
        (self.lo, self.span)
    }
}

/// The values of a wrapping 64-bit range `lo..=lo + span` that lie in `i32::MIN..=i32::MAX`,
/// as one range of the 32-bit circle: `(v - lo) as u32 <= span` in wrapping 32-bit
/// arithmetic, or none.
///
/// The 64-bit range is one piece of the line, or two when it wraps past `i64::MAX`. Cut to
/// the 32-bit values each stays one piece; when both remain, the wrapping one ran from
/// below `i32::MIN` and the other on past `i32::MAX`, so the two touch the ends of the
/// 32-bit line and join across its seam into one range of the circle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum NarrowRange {
    Empty,
    Arc { lo: i32, span: u32 },
}

impl NarrowRange {
    fn of(lo: i64, span: u64) -> NarrowRange {
        let (min, max) = (i128::from(i32::MIN), i128::from(i32::MAX));
        let (lo, hi) = (i128::from(lo), i128::from(lo) + i128::from(span));
        let line_max = i128::from(i64::MAX);
        let (first, wrapped) = if hi <= line_max {
            ((lo, hi), None)
        } else {
            ((lo, line_max), Some((i128::from(i64::MIN), hi - (1i128 << 64))))
        };
        let cut = |(a, b): (i128, i128)| Some((a.max(min), b.min(max))).filter(|(a, b)| a <= b);
        let arc = |a: i128, b: i128| NarrowRange::Arc { lo: a as i32, span: (b - a).rem_euclid(1 << 32) as u32 };
        match (cut(first), wrapped.and_then(cut)) {
            (None, None) => NarrowRange::Empty,
            (Some((a, b)), None) | (None, Some((a, b))) => arc(a, b),
            // `first` ends at i32::MAX, `wrapped` starts at i32::MIN, below `first`'s start.
            (Some((a, _)), Some((_, b))) => arc(a, b),
        }
    }

    /// Whether `v` lies in the range: the lanes' test, one lane at a time.
    #[cfg(test)]
    fn holds(self, v: i32) -> bool {
        match self {
            NarrowRange::Empty => false,
            NarrowRange::Arc { lo, span } => v.wrapping_sub(lo) as u32 <= span,
        }
    }
}

/// Rows a group passed through the filter, and how many of those the count counted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LaneTotals {
    pub passed: u64,
    pub counted: u64,
}

impl std::ops::AddAssign for LaneTotals {
    fn add_assign(&mut self, other: LaneTotals) {
        self.passed += other.passed;
        self.counted += other.counted;
    }
}

/// Rows in a group.
pub const LANES: usize = 8;

/// Bytes read after a small integer's length byte: the scale byte, then the mantissa
/// with one unaligned 8-byte load.
pub(super) const SMALL_INT_READ: usize = 10;

/// What became of a group.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Group {
    /// Counted in lanes: the rows that passed the filter, and those the count counted.
    Counted { passed: u32, counted: u32 },
    /// Its row `n` is an empty slot, or an offset no row can have (at 4 bytes or fewer
    /// from the block's end): the `n` rows before it (at least one: the empty slot alone
    /// when it comes first) may run as a group of their own, and the rows after them as
    /// the next group.
    Split(usize),
    /// A row is not clean: the group goes row by row.
    Unclean,
}

/// Whether groups can run in lanes on this CPU: [`crate::stats::isa::Isa::Avx2`] (AVX2
/// and POPCNT).
pub fn available() -> bool {
    crate::stats::isa::Isa::Avx2.is_supported()
}

/// The variable that overrides [`choice`]: `on` or `off`.
pub const CHOICE_VARIABLE: &str = "LIOSCOPE_ROW_LANES";

/// Whether full scans count rows in lanes, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LaneChoice {
    pub on: bool,
    pub why: String,
}

impl LaneChoice {
    /// The value of [`CHOICE_VARIABLE`] that makes this choice: `on` or `off`.
    pub fn setting(&self) -> &'static str {
        if self.on { "on" } else { "off" }
    }
}

/// Whether full scans count rows in lanes on this machine: only when asked
/// ([`CHOICE_VARIABLE`]`=on`) on a CPU that can. The lanes retire fewer instructions a
/// row than the scalar walk (44.7 against 73.5 for the lab's cached full scan), but their
/// AVX2 gathers cost more time than the lookups they replace on every core timed: a Zen 5
/// counted 5 M cached rows in 40 ms one by one and 50 ms in lanes, a Zen 4 200,000 in
/// 1.72–1.75 ms against 2.56–2.62, and an Intel Xeon (family 6, model 207) 200,000 in
/// 2.12 ms against 2.55 and 5 M in 85 ms against 93 (medians of alternated runs).
/// Decided once a process.
pub fn choice() -> &'static LaneChoice {
    static CHOICE: std::sync::OnceLock<LaneChoice> = std::sync::OnceLock::new();
    CHOICE.get_or_init(|| choose(available(), std::env::var(CHOICE_VARIABLE).ok().as_deref()))
}

/// [`choice`] for a CPU that can run lanes or not and the variable's value.
fn choose(capable: bool, setting: Option<&str>) -> LaneChoice {
    let choice = |on: bool, why: String| LaneChoice { on, why };
    match setting.map(str::trim) {
        Some("on") if capable => choice(true, format!("{CHOICE_VARIABLE}=on")),
        Some("on") => choice(false, format!("{CHOICE_VARIABLE}=on, but the CPU has no AVX2")),
        Some("off") => choice(false, format!("{CHOICE_VARIABLE}=off")),
        other => {
            let ignored = match other {
                Some(odd) => format!(" ({CHOICE_VARIABLE}={odd:?} ignored: neither on nor off)"),
                None => String::new(),
            };
            choice(false, format!("the scalar walk, faster than the AVX2 gathers on every core timed{ignored}"))
        }
    }
}

#[cfg(target_arch = "x86_64")]
pub(crate) mod avx2 {
    use super::{Group, LaneCount, LaneFilter, LaneTotals, NarrowRange, SMALL_INT_READ};
    use crate::storage::row::{FLAG_DELETED, FLAGS_WHOLE, LEN_NULL, LEN_SHORT_MAX, PIECE_HEADER};
    use std::arch::x86_64::*;

    /// Where a group's rows are read: a block's bytes, and its length (at least
    /// [`SMALL_INT_READ`] bytes).
    pub struct Block {
        pub bytes: *const u8,
        pub len: usize,
    }

    /// The rows of the group of eight whose directory entries start at `entries` that
    /// `take` marks (bit i for row i; at least one), counted in lanes if they are all
    /// clean and far enough from the block's end. The lanes of the rows not taken
    /// read the first taken row again and are left out of the totals. `BETWEEN` is
    /// [`LaneCount::reads_between`] of `count`: without it the walk keeps no column's
    /// position but the first's and the last's, and a count that reads another column
    /// finds the group [`Group::Unclean`].
    ///
    /// # Safety
    /// The CPU has AVX2; `entries` points at eight directory entries of the block
    /// `block` describes; `count`'s columns are below `W`; `take` is not 0.
    #[target_feature(enable = "avx2,popcnt")]
    pub unsafe fn group<const W: usize, const BETWEEN: bool>(
        block: &Block,
        entries: *const u8,
        take: u32,
        count: &LaneCount,
    ) -> Group {
        // SAFETY: the caller's promise; this function has the target features.
        unsafe { group_in_line::<W, BETWEEN>(block, entries, take, count) }
    }

    /// The body of [`group`], for callers with its target features to take in line (a
    /// function with target features cannot be forced in line; one without them, taken
    /// into one that has them, can).
    ///
    /// # Safety
    /// As for [`group`], and the caller has its target features.
    #[inline(always)]
    #[allow(unsafe_op_in_unsafe_fn)] // The intrinsics need the caller's target features.
    unsafe fn group_in_line<const W: usize, const BETWEEN: bool>(
        block: &Block,
        entries: *const u8,
        take: u32,
        count: &LaneCount,
    ) -> Group {
        /// Whether every lane of a comparison's result is set / any is.
        macro_rules! all {
            ($v:expr) => {
                _mm256_movemask_epi8($v) == -1
            };
        }
        macro_rules! any {
            ($v:expr) => {
                _mm256_movemask_epi8($v) != 0
            };
        }
        let set = _mm256_set1_epi32;
        let zero = _mm256_setzero_si256();
        let byte = set(0xFF);
        let bits = |v: __m256i| _mm256_movemask_ps(_mm256_castsi256_ps(v)) as u32;
        // SAFETY: eight entries of two bytes, by the caller's promise.
        let offsets = _mm256_cvtepu16_epi32(unsafe { _mm_loadu_si128(entries as *const __m128i) });
        // The lanes not taken read the first taken row, so that every lane reads one.
        let offsets = if take == 0xFF {
            offsets
        } else {
            let lane_bits = _mm256_setr_epi32(1, 2, 4, 8, 16, 32, 64, 128);
            let left_out = _mm256_cmpeq_epi32(_mm256_and_si256(set(take as i32), lane_bits), zero);
            let first_taken = _mm256_permutevar8x32_epi32(offsets, set(take.trailing_zeros() as i32));
            _mm256_blendv_epi8(offsets, first_taken, left_out)
        };
        // A row's header is read as four bytes at its offset: an offset outside
        // 1..=len - 4 is no row the lanes take.
        let irregular = bits(_mm256_or_si256(
            _mm256_cmpeq_epi32(offsets, zero),
            _mm256_cmpgt_epi32(offsets, set(block.len as i32 - 4)),
        ));
        if irregular != 0 {
            // The rows before the first irregular one, or that one alone.
            return Group::Split((irregular.trailing_zeros() as usize).max(1));
        }
        let base = block.bytes;
        // Every gather reads 4 (or 8) bytes at most 10 bytes past a position, at `base +
        // position`: a position the walk reached is clamped to `limit`, so that no read
        // leaves the block. The walk only moves forward, so a group whose last position
        // is inside the limit was never clamped; one that is not is unclean (its rows go
        // the scalar way).
        let limit = set((block.len - SMALL_INT_READ) as i32);
        macro_rules! gather {
            ($at:expr) => {
                // SAFETY: each lane's position lies inside the block (above).
                unsafe { _mm256_i32gather_epi32::<1>(base as *const i32, $at) }
            };
        }
        macro_rules! gather_clamped {
            ($at:expr) => {
                gather!(_mm256_min_epu32($at, limit))
            };
        }
        let header = gather!(offsets);
        let whole = _mm256_cmpeq_epi32(
            _mm256_and_si256(header, set((FLAGS_WHOLE | FLAG_DELETED) as i32)),
            set(FLAGS_WHOLE as i32),
        );
        let locked = _mm256_cmpeq_epi32(_mm256_and_si256(header, set(0xFF00)), set(0xFF00));
        let columns = _mm256_and_si256(_mm256_srli_epi32::<16>(header), byte);
        let wide = _mm256_cmpgt_epi32(columns, set(W as i32 - 1));
        if !all!(_mm256_andnot_si256(locked, _mm256_and_si256(whole, wide))) {
            return Group::Unclean;
        }
        // The walk. A step is `(b + 1) & 0xFF`, at least 1: 1 + the length of a short
        // column, 1 for NULL, and 252..=255 over a byte no walk may step over (251..=254),
        // which the largest step of a lane therefore shows afterwards.
        let one = set(1);
        let first_pos = _mm256_add_epi32(offsets, set(PIECE_HEADER as i32));
        let mut pos = first_pos;
        let mut longest_step = zero;
        let mut at = [zero; W];
        let (mut first_word, mut word) = (zero, zero);
        for (col, at) in at.iter_mut().enumerate() {
            // Kept only where a column between the first and the last is read (the first
            // and the last column's positions are at hand without it); every one is
            // written, so the array is never zeroed first.
            if BETWEEN {
                *at = pos;
            }
            word = gather_clamped!(pos);
            let step = _mm256_max_epu32(_mm256_and_si256(_mm256_add_epi32(word, one), byte), one);
            longest_step = _mm256_max_epu32(longest_step, step);
            if col == 0 {
                first_word = word;
            }
            if col + 1 < W {
                pos = _mm256_add_epi32(pos, step);
            }
        }
        // Every read exact (no position clamped), and the last column ending inside the
        // block (a row whose lengths run past it is corrupt: the general walk says so).
        let end = _mm256_add_epi32(pos, _mm256_max_epu32(_mm256_and_si256(_mm256_add_epi32(word, one), byte), one));
        let stopped = _mm256_cmpgt_epi32(longest_step, set(LEN_SHORT_MAX as i32 + 1));
        let clamped = _mm256_cmpgt_epi32(pos, limit);
        if any!(_mm256_or_si256(_mm256_or_si256(stopped, clamped), _mm256_cmpgt_epi32(end, set(block.len as i32)))) {
            return Group::Unclean;
        }
        let null = set(LEN_NULL as i32);
        // The first four bytes of column `col`: the first and the last column's are at hand.
        macro_rules! word_of {
            ($col:expr) => {
                match $col {
                    c if c + 1 == W => word,
                    0 => first_word,
                    c if BETWEEN => gather!(at[c]),
                    // Never: `BETWEEN` says whether such a column is read.
                    _ => return Group::Unclean,
                }
            };
        }
        let passed_bits = match count.filter {
            None => 0xFF,
            Some(f) => {
                let filter_word = word_of!(f.column);
                let filter_at = match f.column {
                    c if c + 1 == W => pos,
                    0 => first_pos,
                    c if BETWEEN => at[c],
                    _ => return Group::Unclean,
                };
                let len = _mm256_and_si256(filter_word, byte);
                let nulls = _mm256_cmpeq_epi32(len, null);
                // Length 2..=9 and scale 0: (length | scale << 8) - 2 in 0..=7 (unsigned);
                // 0..=3 for at most four mantissa bytes, a value that fits in 32 bits.
                let size = _mm256_sub_epi32(_mm256_and_si256(filter_word, set(0xFFFF)), set(2));
                let at_most = |n: i32| _mm256_cmpeq_epi32(_mm256_min_epu32(size, set(n)), size);
                let holds = if all!(_mm256_or_si256(nulls, at_most(3))) {
                    match f.narrow {
                        NarrowRange::Empty => 0,
                        NarrowRange::Arc { lo, span } => {
                            // 32 - 8 × (length - 1) = 8 × (5 - length), masked to 0..=24.
                            let shifts =
                                _mm256_slli_epi32::<3>(_mm256_and_si256(_mm256_sub_epi32(set(5), len), set(3)));
                            // SAFETY: as for `gather!`: 4 bytes at position + 2 <= + 10.
                            let mantissa = unsafe { _mm256_i32gather_epi32::<1>(base.add(2) as *const i32, filter_at) };
                            let v = _mm256_srav_epi32(_mm256_sllv_epi32(mantissa, shifts), shifts);
                            // (v - lo) as u32 <= span, as a signed compare with the sign bits flipped.
                            let flip = set(i32::MIN);
                            let d = _mm256_xor_si256(_mm256_sub_epi32(v, set(lo)), flip);
                            !bits(_mm256_cmpgt_epi32(d, set(span as i32 ^ i32::MIN))) & 0xFF
                        }
                    }
                } else if all!(_mm256_or_si256(nulls, at_most(7))) {
                    // SAFETY: this function's target features; 10 bytes from each lane's
                    // position lie inside the block (the walk ended inside the limit).
                    unsafe { wide_holds(base, filter_at, len, &f) }
                } else {
                    return Group::Unclean;
                };
                holds & !bits(nulls) & 0xFF
            }
        };
        let counted_bits = match count.not_null {
            None => passed_bits,
            Some(col) => {
                let counted_byte = _mm256_and_si256(word_of!(col), byte);
                passed_bits & !bits(_mm256_cmpeq_epi32(counted_byte, null))
            }
        };
        let (passed, counted) = (passed_bits & take, counted_bits & take);
        Group::Counted { passed: passed.count_ones(), counted: counted.count_ones() }
    }

    /// The bits of the lanes whose value lies in `f`'s range: a whole number of 1..=8
    /// mantissa bytes in a column of length `len` whose length byte is at `filter_at`,
    /// read by two gathers of four 64-bit lanes.
    ///
    /// # Safety
    /// The CPU has AVX2; 10 bytes from each lane's position lie inside the block at `base`.
    #[target_feature(enable = "avx2")]
    unsafe fn wide_holds(base: *const u8, filter_at: __m256i, len: __m256i, f: &LaneFilter) -> u32 {
        let set = _mm256_set1_epi32;
        // 64 - 8 × (length - 1) = 8 × (9 - length), masked to 0..=56 so that no
        // lane shifts by 64 or more (a NULL lane's is never used).
        let shifts = _mm256_slli_epi32::<3>(_mm256_and_si256(_mm256_sub_epi32(set(9), len), set(7)));
        let flip = _mm256_set1_epi64x(i64::MIN);
        let (lo, span) = (_mm256_set1_epi64x(f.lo), _mm256_xor_si256(_mm256_set1_epi64x(f.span as i64), flip));
        // Bits of the four lanes of `half` whose value lies inside the range.
        macro_rules! inside {
            ($half:expr, $shift:expr) => {{
                // SAFETY: 8 bytes at position + 2, inside the block by the caller's promise.
                let mantissa = unsafe { _mm256_i32gather_epi64::<1>(base.add(2) as *const i64, $half) };
                let shift = _mm256_cvtepu32_epi64($shift);
                let up = _mm256_sllv_epi64(mantissa, shift);
                // Arithmetic shift right by `shift`, which AVX2 has only for 32 bits.
                let sign = _mm256_srlv_epi64(flip, shift);
                let v = _mm256_sub_epi64(_mm256_xor_si256(_mm256_srlv_epi64(up, shift), sign), sign);
                // (v - lo) as u64 <= span, as a signed compare with the sign bits flipped.
                let d = _mm256_xor_si256(_mm256_sub_epi64(v, lo), flip);
                !_mm256_movemask_pd(_mm256_castsi256_pd(_mm256_cmpgt_epi64(d, span))) & 0xF
            }};
        }
        let low = inside!(_mm256_castsi256_si128(filter_at), _mm256_castsi256_si128(shifts));
        let high = inside!(_mm256_extracti128_si256::<1>(filter_at), _mm256_extracti128_si256::<1>(shifts));
        (low | high << 4) as u32
    }

    /// Consecutive whole groups, counted in lanes: up to `groups` of them from the entries
    /// at `entries`, each followed by `after_group` (the next block's prefetch). Stops at
    /// the first group that is not counted, and says how many were and what became of
    /// that one.
    ///
    /// # Safety
    /// As for [`group`], for each of the `groups` groups.
    #[target_feature(enable = "avx2,popcnt")]
    pub unsafe fn groups<const W: usize, const BETWEEN: bool>(
        block: &Block,
        entries: *const u8,
        groups: usize,
        count: &LaneCount,
        mut after_group: impl FnMut(),
    ) -> (usize, LaneTotals, Option<Group>) {
        let mut totals = LaneTotals::default();
        for done in 0..groups {
            // SAFETY: the caller's promise, for group `done`.
            match unsafe { group_in_line::<W, BETWEEN>(block, entries.add(2 * super::LANES * done), 0xFF, count) } {
                Group::Counted { passed, counted } => {
                    totals.passed += u64::from(passed);
                    totals.counted += u64::from(counted);
                    after_group();
                }
                other => return (done, totals, Some(other)),
            }
        }
        (groups, totals, None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn lanes_run_only_when_asked_on_a_cpu_that_can() {
        let on = |capable, setting| choose(capable, setting).on;
        assert!(!on(true, None), "the scalar walk by default: it was faster on every core timed");
        assert!(on(true, Some("on")));
        assert!(on(true, Some(" on ")));
        assert!(!on(false, Some("on")), "never without AVX2");
        assert!(choose(false, Some("on")).why.contains("no AVX2"));
        assert!(!on(true, Some("off")));
        let odd = choose(true, Some("yes"));
        assert!(!odd.on && odd.why.contains("\"yes\" ignored"), "{}", odd.why);
    }

    #[test]
    fn only_columns_between_the_walks_ends_need_their_positions_kept() {
        let filter = |column| Some(LaneFilter::new(column, 0, 0));
        let between = |filter, not_null, w| LaneCount { filter, not_null }.reads_between(w);
        assert!(!between(filter(0), Some(8), 9), "first and last");
        assert!(!between(None, None, 9));
        assert!(!between(filter(0), None, 1));
        assert!(between(filter(1), Some(8), 9), "the filter between");
        assert!(between(filter(0), Some(4), 9), "the count between");
        assert!(!between(filter(2), Some(0), 3), "the last is the filter");
    }

    /// Values and range ends to draw from: near zero, near the ends of the 32-bit line
    /// (where a 64-bit range is cut), near the ends of the 64-bit line (where it wraps),
    /// and anywhere.
    fn edge() -> impl Strategy<Value = i64> {
        let near = |at: i64| (-2i64..=2).prop_map(move |d| at.saturating_add(d));
        prop_oneof![
            -300i64..300,
            near(i32::MIN.into()),
            near(i32::MAX.into()),
            near(i64::MIN),
            near(i64::MAX),
            any::<i32>().prop_map(i64::from),
            any::<i64>(),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(crate::txn::fixture::proptest_cases(2000)))]

        /// The 32-bit range holds exactly the 32-bit values the wrapping 64-bit range
        /// does: ranges cut at either end of the 32-bit line, wrapping past the 64-bit
        /// one's, holding everything or no 32-bit value.
        #[test]
        fn the_narrow_range_holds_the_32_bit_values_of_the_wide_one(
            lo in edge(),
            span in prop_oneof![edge().prop_map(|n| n as u64), Just(u64::MAX), Just(u64::MAX - 1), 0u64..1000],
            hi in proptest::option::of(edge()),
            random in proptest::collection::vec(any::<i32>(), 8),
        ) {
            // A range given by its ends as often as by its span.
            let span = hi.map_or(span, |hi| hi.wrapping_sub(lo) as u64);
            let hi = lo.wrapping_add(span as i64);
            let narrow = NarrowRange::of(lo, span);
            let around = |at: i64| (-1i64..=1).filter_map(move |d| i32::try_from(at.wrapping_add(d)).ok());
            let values = [i32::MIN, i32::MIN + 1, -1, 0, 1, i32::MAX - 1, i32::MAX]
                .into_iter()
                .chain(around(lo))
                .chain(around(hi))
                .chain(random);
            for v in values {
                let wide = (i64::from(v).wrapping_sub(lo) as u64) <= span;
                prop_assert_eq!(narrow.holds(v), wide, "{} in {}..={} (span {}): {:?}", v, lo, hi, span, narrow);
            }
        }
    }

    #[test]
    fn narrow_ranges_at_the_ends_of_the_lines() {
        let arc = |lo: i32, span: u32| NarrowRange::Arc { lo, span };
        assert_eq!(NarrowRange::of(1, i64::MAX as u64 - 1), arc(1, i32::MAX as u32 - 1), "cust_id > 0");
        assert_eq!(NarrowRange::of(i64::MIN, u64::MAX), arc(i32::MIN, u32::MAX), "everything");
        assert_eq!(NarrowRange::of(i64::from(i32::MAX) + 1, 10), NarrowRange::Empty, "above");
        let below = (i64::from(i32::MIN) - 1).wrapping_sub(i64::MIN) as u64;
        assert_eq!(NarrowRange::of(i64::MIN, below), NarrowRange::Empty, "below");
        // From 5 past i64::MAX round to -7: 32-bit values 5..=i32::MAX and i32::MIN..=-7.
        let wrapped = NarrowRange::of(5, (-7i64).wrapping_sub(5) as u64);
        assert_eq!(wrapped, arc(5, (-7i32).wrapping_sub(5) as u32));
        assert!(wrapped.holds(i32::MAX) && wrapped.holds(i32::MIN) && !wrapped.holds(0) && !wrapped.holds(-6));
    }
}
