//! Redo records as they lie in an online log file, and the change vectors inside them.
//!
//! ```text
//!  redo record (little-endian):
//!  offset  size  field
//!  0       4     length of the record, this header included (0: the rest of this
//!                512-byte log block is padding)
//!  4       4     CRC-32 of bytes 8..length
//!  8       4     log sequence number the record was written in
//!  12      8     SCN: the highest block SCN among its changes
//!  20      2     change vectors
//!  22      2     (reserved)
//!  24      ..    change vectors:
//!                0  block address u32
//!                4  op u8: 1 change (ranges over the block as it was), 2 image (the
//!                   whole block), 3 new (a zeroed block, then ranges)
//!                5  (reserved) u8
//!                6  ranges u16
//!                8  ranges: offset u16, length u16, bytes
//! ```
//!
//! The change vectors are physical: the bytes of a block that one change wrote, found
//! by comparing the block before and after ([`diff`]). Applied in log order from a
//! checkpoint to any version of a block at least as new as that checkpoint, they give
//! the block as the last change left it: a byte a vector names ends as the newest
//! vector set it, and a byte none names has not changed since the checkpoint.
//!
//! Invariant: a record is valid only whole: its length fits the file, its CRC matches
//! and its sequence is the file's, so a torn or stale record ends the log.

use crate::stats::isa::Isa;

/// Bytes of a record's header.
pub const RECORD_HEADER: usize = 24;
/// Bytes of a change vector's header.
const VECTOR_HEADER: usize = 8;
/// Bytes of a range's header.
const RANGE_HEADER: usize = 4;
/// Changed stretches closer than this are logged as one range (a range header costs 4).
const MERGE_GAP: usize = 8;

/// What a change vector does to its block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Op {
    /// Writes the ranges over the block as it was.
    Change = 1,
    /// The whole block (one range from 0): the first change after the block was last
    /// read or written, so that a block torn by a crash is rebuilt whole.
    Image = 2,
    /// A block formatted without being read: zeroes, then the ranges.
    New = 3,
}

/// One decoded change vector: ranges (offset, bytes) to write into block `rdba`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Vector<'a> {
    pub rdba: u32,
    pub op: Op,
    pub ranges: Vec<(usize, &'a [u8])>,
}

impl Vector<'_> {
    /// Applies the vector to `block` (for `Op::New`, zeroes it first).
    pub fn apply(&self, block: &mut [u8]) -> Result<(), String> {
        if self.op == Op::New {
            block.fill(0);
        }
        for &(offset, bytes) in &self.ranges {
            let end = offset + bytes.len();
            if end > block.len() {
                return Err(format!(
                    "a change to block {:#x} ends at byte {end}, past its {} bytes",
                    self.rdba,
                    block.len()
                ));
            }
            block[offset..end].copy_from_slice(bytes);
        }
        Ok(())
    }
}

/// Bytes [`diff`] checks for any difference at once: a change touches a few hundred
/// bytes of a block, so most groups are equal and cost one test; only a group that
/// differs is looked at 64 bytes at a time.
const GROUP: usize = 256;

/// Bytes whose differences one mask holds (a bit a byte); also the bytes that
/// [`diff_stretch`] wants after the last stretch's copy to compare its tail at once.
pub const CHUNK: usize = 64;

/// The stretches where `after` differs from `before` (equal lengths), as (offset,
/// length), stretches closer than `MERGE_GAP` merged.
///
/// Each group of 256 bytes is tested for any difference; in one that differs, each 64
/// bytes give a mask of their differing bytes (bit `k` for byte `k`), and a stretch is a
/// run of set bits, which may go on into the next mask. A tail shorter than a group goes
/// 64 bytes at a time.
///
/// AVX-512 (BW) compares 64 bytes straight into a mask register, AVX2 32 bytes into a
/// vector whose `movemask` is the mask; without either, words and a multiplication
/// ([`differing_bytes_by_words`]). The CPU's best [`Isa`] is used.
pub fn diff(before: &[u8], after: &[u8], out: &mut Vec<(usize, usize)>) {
    diff_with(Isa::best(), before, after, out);
}

/// [`diff`] on `isa`, or the best instruction set below it this CPU has.
fn diff_with(isa: Isa, before: &[u8], after: &[u8], out: &mut Vec<(usize, usize)>) {
    debug_assert_eq!(before.len(), after.len());
    out.clear();
    let len = before.len().min(after.len());
    let whole = len - len % GROUP;
    let (before_groups, after_groups) = (&before[..whole], &after[..whole]);
    match isa.effective() {
        // SAFETY: `effective` returns Avx512 only when the CPU has avx512f and avx512bw.
        #[cfg(target_arch = "x86_64")]
        Isa::Avx512 => unsafe { avx512::group_stretches(before_groups, after_groups, out) },
        // SAFETY: `effective` returns Avx2 only when the CPU has avx2.
        #[cfg(target_arch = "x86_64")]
        Isa::Avx2 => unsafe { avx2::group_stretches(before_groups, after_groups, out) },
        _ => {
            for (g, (b, a)) in before_groups.chunks(GROUP).zip(after_groups.chunks(GROUP)).enumerate() {
                if b != a {
                    chunk_stretches(g * GROUP, b, a, out);
                }
            }
        }
    }
    chunk_stretches(whole, &before[whole..len], &after[whole..len], out);
}

/// Adds to `out`, without clearing it, the stretches where bytes `offset..offset + len`
/// of `block` differ from `before`, which starts with their copy from before a change
/// (what follows it, if anything, is read but masked off: the copies of other
/// stretches). A few bytes a change named; the stretches may come before those already
/// in `out` (see [`sort_and_merge`]).
///
/// Each chunk of 64 bytes is compared at once as [`diff`] compares them, the bytes past
/// the stretch masked off; a chunk that would run past the end of `before` (which a
/// caller avoids by [`CHUNK`] bytes of slack after the last copy) or of the block is
/// compared by words.
pub fn diff_stretch(block: &[u8], offset: usize, len: usize, before: &[u8], out: &mut Vec<(usize, usize)>) {
    // `best` is this CPU's best instruction set, effective as it is.
    stretch_masks(Isa::best(), block, offset, len, before, out);
}

#[cfg(test)]
/// [`diff_stretch`] on `isa`, or the best instruction set below it this CPU has.
fn diff_stretch_with(isa: Isa, block: &[u8], offset: usize, len: usize, before: &[u8], out: &mut Vec<(usize, usize)>) {
    stretch_masks(isa.effective(), block, offset, len, before, out);
}

/// [`diff_stretch`] on `isa`, which [`Isa::effective`] returned (or [`Isa::best`]).
#[inline]
fn stretch_masks(isa: Isa, block: &[u8], offset: usize, len: usize, before: &[u8], out: &mut Vec<(usize, usize)>) {
    assert!(before.len() >= len && offset + len <= block.len(), "a stretch of the block, and its copy");
    for k in (0..len).step_by(CHUNK) {
        let valid = (len - k).min(CHUNK);
        let whole = k + CHUNK <= before.len() && offset + k + CHUNK <= block.len();
        let (before, after) = (&before[k..], &block[offset + k..]);
        let mask = match isa {
            // SAFETY: `effective` and `best` return Avx512 only when the CPU has avx512f
            // and avx512bw; both slices hold the whole chunk (`whole`).
            #[cfg(target_arch = "x86_64")]
            Isa::Avx512 if whole => unsafe { avx512::chunk_mask(before, after) },
            // SAFETY: `effective` and `best` return Avx2 only when the CPU has avx2; as above.
            #[cfg(target_arch = "x86_64")]
            Isa::Avx2 if whole => unsafe { avx2::chunk_mask(before, after) },
            _ => differing_bytes_by_words(&before[..valid], &after[..valid]),
        };
        let mask = if valid == CHUNK { mask } else { mask & ((1 << valid) - 1) };
        if mask != 0 {
            add_stretches(offset + k, mask, out);
        }
    }
}

/// Sorts `ranges` by offset and merges those that overlap or lie closer than
/// `MERGE_GAP`, as [`diff`] gives them.
pub fn sort_and_merge(ranges: &mut Vec<(usize, usize)>) {
    ranges.sort_unstable();
    let mut merged = 0;
    for i in 0..ranges.len() {
        let (start, len) = ranges[i];
        if merged > 0 {
            let (s, l) = &mut ranges[merged - 1];
            if start < *s + *l + MERGE_GAP {
                *l = (*l).max(start + len - *s);
                continue;
            }
        }
        ranges[merged] = (start, len);
        merged += 1;
    }
    ranges.truncate(merged);
}

/// The stretches of `before` and `after` from offset `base`, 64 bytes at a time by words.
fn chunk_stretches(base: usize, before: &[u8], after: &[u8], out: &mut Vec<(usize, usize)>) {
    for (k, (b, a)) in before.chunks(CHUNK).zip(after.chunks(CHUNK)).enumerate() {
        let mask = differing_bytes_by_words(b, a);
        if mask != 0 {
            add_stretches(base + k * CHUNK, mask, out);
        }
    }
}

/// Adds to `out` the runs of set bits of `mask`, the differing bytes of the 64 from
/// offset `base`, merging a run with the stretch before when fewer than `MERGE_GAP`
/// equal bytes part them (never with one that ends past the run's start: a stretch of
/// another part of the block).
#[inline]
fn add_stretches(base: usize, mask: u64, out: &mut Vec<(usize, usize)>) {
    let mut mask = with_short_gaps_filled(mask);
    let mut passed = 0;
    while mask != 0 {
        let first = mask.trailing_zeros() as usize;
        let run = (!(mask >> first)).trailing_zeros() as usize;
        let (start, end) = (base + passed + first, base + passed + first + run);
        match out.last_mut() {
            Some((s, len)) if start >= *s + *len && start - (*s + *len) < MERGE_GAP => *len = end - *s,
            _ => out.push((start, end - start)),
        }
        let consumed = first + run;
        if consumed >= 64 {
            break;
        }
        mask >>= consumed;
        passed += consumed;
    }
}

/// `mask` with its gaps shorter than `MERGE_GAP` filled: the runs of clear bits that lie
/// between two set bits and are too short to part two stretches. A run at either end
/// stays: whether it parts this mask's first stretch from the one before, or its last
/// from the next mask's, is for the caller to tell. One pass of shifts and masks instead
/// of a merge for each run of set bits.
#[inline]
fn with_short_gaps_filled(mask: u64) -> u64 {
    const _: () = assert!(MERGE_GAP == 8, "three doublings measure a gap of 8");
    if mask == 0 {
        return 0;
    }
    let equal = !mask;
    // Bit k: bytes k..k + 8 are all equal (a gap of 8 or more starts at k) ...
    let mut long = equal & (equal >> 1);
    long &= long >> 2;
    long &= long >> 4;
    // ... spread over the 8 bytes from k: every byte of a long gap.
    long |= long << 1;
    long |= long << 2;
    long |= long << 4;
    let (low, high) = (mask.trailing_zeros(), 63 - mask.leading_zeros());
    let between = (u64::MAX >> (63 - high)) & (u64::MAX << low);
    mask | (equal & !long & between)
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use super::{CHUNK, GROUP, add_stretches};
    use std::arch::x86_64::{
        __m256i, _mm256_cmpeq_epi8, _mm256_loadu_si256, _mm256_movemask_epi8, _mm256_or_si256, _mm256_setzero_si256,
        _mm256_testz_si256, _mm256_xor_si256,
    };

    /// The stretches of whole groups (`before.len()` a multiple of [`GROUP`], equal to
    /// `after.len()`): the XORs of a group's eight 32-byte vectors OR'ed and tested, then
    /// a differing group's masks by compare and `movemask`.
    ///
    /// # Safety
    /// The CPU must have AVX2.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn group_stretches(before: &[u8], after: &[u8], out: &mut Vec<(usize, usize)>) {
        assert!(before.len() == after.len() && before.len().is_multiple_of(GROUP));
        for base in (0..before.len()).step_by(GROUP) {
            let mut any = _mm256_setzero_si256();
            for k in 0..GROUP / 32 {
                let at = base + 32 * k;
                // SAFETY: `at + 32` is within the whole groups of both (asserted).
                any = _mm256_or_si256(any, _mm256_xor_si256(unsafe { load(before, at) }, unsafe { load(after, at) }));
            }
            if _mm256_testz_si256(any, any) == 0 {
                // SAFETY: the group at `base` is whole in both (asserted); AVX2 as ours.
                unsafe { differing_group(before, after, base, out) };
            }
        }
    }

    /// The stretches of the group at `base`, mask by mask: out of the loop over equal
    /// groups, so that its loads are not kept in registers (or spilled) for it.
    ///
    /// # Safety
    /// The CPU must have AVX2, and `base + GROUP` be within both slices.
    #[target_feature(enable = "avx2")]
    #[inline(never)]
    unsafe fn differing_group(before: &[u8], after: &[u8], base: usize, out: &mut Vec<(usize, usize)>) {
        for chunk in (base..base + GROUP).step_by(CHUNK) {
            // SAFETY: `chunk + 64` is within the group, within both (the caller's word).
            let equal =
                |at: usize| unsafe { _mm256_movemask_epi8(_mm256_cmpeq_epi8(load(before, at), load(after, at))) };
            let mask = !(u64::from(equal(chunk) as u32) | u64::from(equal(chunk + 32) as u32) << 32);
            if mask != 0 {
                add_stretches(chunk, mask, out);
            }
        }
    }

    /// The differing bytes of a whole chunk (bit `k` for byte `k`).
    ///
    /// # Safety
    /// The CPU must have AVX2, and both slices hold at least 64 bytes.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn chunk_mask(before: &[u8], after: &[u8]) -> u64 {
        // SAFETY: `at + 32` is within both (the caller's word); AVX2 as ours.
        let equal = |at: usize| unsafe { _mm256_movemask_epi8(_mm256_cmpeq_epi8(load(before, at), load(after, at))) };
        !(u64::from(equal(0) as u32) | u64::from(equal(32) as u32) << 32)
    }

    /// The 32 bytes of `bytes` from `at`, unaligned.
    ///
    /// # Safety
    /// The CPU must have AVX2, and `at + 32` be within `bytes`.
    #[target_feature(enable = "avx2")]
    #[inline]
    unsafe fn load(bytes: &[u8], at: usize) -> __m256i {
        debug_assert!(at + 32 <= bytes.len());
        // SAFETY: the caller's word.
        unsafe { _mm256_loadu_si256(bytes.as_ptr().add(at).cast()) }
    }
}

#[cfg(target_arch = "x86_64")]
mod avx512 {
    use super::{CHUNK, GROUP, add_stretches};
    use std::arch::x86_64::{_mm512_cmpneq_epi8_mask, _mm512_loadu_si512};

    /// The differing bytes of a whole chunk (bit `k` for byte `k`).
    ///
    /// # Safety
    /// The CPU must have AVX-512 F and BW, and both slices hold at least 64 bytes.
    #[target_feature(enable = "avx512f,avx512bw")]
    pub(super) unsafe fn chunk_mask(before: &[u8], after: &[u8]) -> u64 {
        debug_assert!(before.len() >= CHUNK && after.len() >= CHUNK);
        // SAFETY: 64 bytes of each (the caller's word), unaligned loads.
        unsafe {
            _mm512_cmpneq_epi8_mask(
                _mm512_loadu_si512(before.as_ptr().cast()),
                _mm512_loadu_si512(after.as_ptr().cast()),
            )
        }
    }

    /// The stretches of whole groups (as [`super::avx2::group_stretches`]): each 64
    /// bytes compared straight into a mask of its differing bytes, a group's four masks
    /// OR'ed and tested.
    ///
    /// # Safety
    /// The CPU must have AVX-512 F and BW.
    #[target_feature(enable = "avx512f,avx512bw")]
    pub(super) unsafe fn group_stretches(before: &[u8], after: &[u8], out: &mut Vec<(usize, usize)>) {
        assert!(before.len() == after.len() && before.len().is_multiple_of(GROUP));
        let differing = |at: usize| {
            // SAFETY: every caller's `at + 64` is within a group of both slices, whose
            // groups are whole (asserted above); unaligned loads.
            unsafe {
                _mm512_cmpneq_epi8_mask(
                    _mm512_loadu_si512(before.as_ptr().add(at).cast()),
                    _mm512_loadu_si512(after.as_ptr().add(at).cast()),
                )
            }
        };
        for base in (0..before.len()).step_by(GROUP) {
            let masks: [u64; GROUP / CHUNK] = std::array::from_fn(|k| differing(base + k * CHUNK));
            if masks.iter().fold(0, |any, m| any | m) == 0 {
                continue;
            }
            for (k, &mask) in masks.iter().enumerate() {
                if mask != 0 {
                    add_stretches(base + k * CHUNK, mask, out);
                }
            }
        }
    }
}

/// The differing bytes of up to 64 (bit `k` set when byte `k` differs) without vector
/// instructions, for CPUs without AVX2 and for a tail shorter than a group: for each
/// word's XOR, bit 7 of each nonzero byte, gathered into a byte by one multiplication; a
/// tail shorter than a word byte by byte. Bytes past 64 are not looked at.
#[inline(never)]
fn differing_bytes_by_words(before: &[u8], after: &[u8]) -> u64 {
    const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    let len = before.len().min(after.len()).min(CHUNK);
    let mut mask = 0u64;
    let words = len / 8;
    for k in 0..words {
        let word = |b: &[u8]| u64::from_le_bytes(b[k * 8..k * 8 + 8].try_into().expect("8 bytes"));
        let x = word(before) ^ word(after);
        let nonzero = (((x & LOW7).wrapping_add(LOW7)) | x) & !LOW7;
        // Byte j's flag (bit 8j) lands on bit 56 + j of the product, and nothing else there.
        let bits = (nonzero >> 7).wrapping_mul(0x0102_0408_1020_4080) >> 56;
        mask |= bits << (8 * k);
    }
    for k in words * 8..len {
        if before[k] != after[k] {
            mask |= 1 << k;
        }
    }
    mask
}

/// Appends to `out` a record of one change vector: `op` on `rdba`, with the given
/// `ranges` of `block` (the block after the change).
pub fn encode_one(out: &mut Vec<u8>, seq: u32, scn: u64, rdba: u32, op: Op, block: &[u8], ranges: &[(usize, usize)]) {
    encode_many(out, seq, scn, &[(rdba, op, block, ranges)]);
}

/// One change vector to encode: the block's address, the kind of change, the block after
/// the change, and its changed byte ranges (offset, length).
pub type VectorToEncode<'a> = (u32, Op, &'a [u8], &'a [(usize, usize)]);

/// Appends to `out` one record of several change vectors, applied all together or not
/// at all.
pub fn encode_many(out: &mut Vec<u8>, seq: u32, scn: u64, vectors: &[VectorToEncode<'_>]) {
    let start = out.len();
    out.extend_from_slice(&[0u8; RECORD_HEADER]);
    for &(rdba, op, block, ranges) in vectors {
        out.extend_from_slice(&rdba.to_le_bytes());
        out.push(op as u8);
        out.push(0);
        out.extend_from_slice(&(ranges.len() as u16).to_le_bytes());
        for &(offset, len) in ranges {
            out.extend_from_slice(&(offset as u16).to_le_bytes());
            out.extend_from_slice(&(len as u16).to_le_bytes());
            out.extend_from_slice(&block[offset..offset + len]);
        }
    }
    let len = (out.len() - start) as u32;
    let header = &mut out[start..start + RECORD_HEADER];
    header[0..4].copy_from_slice(&len.to_le_bytes());
    header[8..12].copy_from_slice(&seq.to_le_bytes());
    header[12..20].copy_from_slice(&scn.to_le_bytes());
    header[20..22].copy_from_slice(&(vectors.len() as u16).to_le_bytes());
    let crc = crc32fast::hash(&out[start + 8..]);
    out[start + 4..start + 8].copy_from_slice(&crc.to_le_bytes());
}

/// Bytes a record of one vector with these ranges takes.
pub fn encoded_len(ranges: &[(usize, usize)]) -> usize {
    RECORD_HEADER + vector_len(ranges)
}

/// Bytes one vector with these ranges takes in a record.
pub fn vector_len(ranges: &[(usize, usize)]) -> usize {
    VECTOR_HEADER + ranges.iter().map(|&(_, len)| RANGE_HEADER + len).sum::<usize>()
}

/// A record read back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record<'a> {
    pub scn: u64,
    pub vectors: Vec<Vector<'a>>,
}

/// What lies at a position of a log file.
#[derive(Debug, PartialEq, Eq)]
pub enum Found<'a> {
    /// A valid record of `len` bytes.
    Record(Record<'a>, usize),
    /// Padding: go on at the next 512-byte boundary.
    Padding,
    /// The end of the sequence's records (zeros at a block boundary, a torn or stale
    /// record, or the end of the file).
    End,
}

/// Reads the record at the start of `bytes` (the rest of a file of sequence `seq`);
/// `at_boundary`: whether it starts at a 512-byte boundary.
pub fn read(bytes: &[u8], seq: u32, at_boundary: bool) -> Found<'_> {
    if bytes.len() < 4 {
        return if at_boundary || bytes.iter().any(|&b| b != 0) { Found::End } else { Found::Padding };
    }
    let len = u32::from_le_bytes(bytes[0..4].try_into().expect("4 bytes")) as usize;
    if len == 0 {
        return if at_boundary { Found::End } else { Found::Padding };
    }
    if len < RECORD_HEADER || len > bytes.len() {
        return Found::End;
    }
    let record = &bytes[..len];
    // The sequence first: a record left from the log's previous use (another sequence)
    // is refused without checksumming it, which matters when a scan looks past the end
    // of the redo through a log full of old records.
    let crc = u32::from_le_bytes(record[4..8].try_into().expect("4 bytes"));
    if u32::from_le_bytes(record[8..12].try_into().expect("4")) != seq || crc32fast::hash(&record[8..]) != crc {
        return Found::End;
    }
    match decode(record) {
        Some(r) => Found::Record(r, len),
        None => Found::End,
    }
}

fn decode(record: &[u8]) -> Option<Record<'_>> {
    let u16_at = |o: usize| record.get(o..o + 2).map(|b| u16::from_le_bytes([b[0], b[1]]) as usize);
    let scn = u64::from_le_bytes(record[12..20].try_into().ok()?);
    let count = u16_at(20)?;
    let mut at = RECORD_HEADER;
    let mut vectors = Vec::with_capacity(count);
    for _ in 0..count {
        let rdba = u32::from_le_bytes(record.get(at..at + 4)?.try_into().ok()?);
        let op = match record.get(at + 4)? {
            1 => Op::Change,
            2 => Op::Image,
            3 => Op::New,
            _ => return None,
        };
        let n = u16_at(at + 6)?;
        at += VECTOR_HEADER;
        let mut ranges = Vec::with_capacity(n);
        for _ in 0..n {
            let offset = u16_at(at)?;
            let len = u16_at(at + 2)?;
            ranges.push((offset, record.get(at + RANGE_HEADER..at + RANGE_HEADER + len)?));
            at += RANGE_HEADER + len;
        }
        vectors.push(Vector { rdba, op, ranges });
    }
    (at == record.len()).then_some(Record { scn, vectors })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn applying_the_diff_turns_before_into_after(
            before in proptest::collection::vec(any::<u8>(), 512),
            changes in proptest::collection::vec((0usize..512, any::<u8>()), 0..40),
        ) {
            let mut after = before.clone();
            for (at, b) in changes {
                after[at] = b;
            }
            let mut ranges = Vec::new();
            diff(&before, &after, &mut ranges);
            let mut log = Vec::new();
            encode_one(&mut log, 7, 99, 0x400001, Op::Change, &after, &ranges);
            prop_assert_eq!(log.len(), encoded_len(&ranges));
            let Found::Record(record, len) = read(&log, 7, true) else { panic!("a record") };
            prop_assert_eq!(len, log.len());
            prop_assert_eq!(record.scn, 99);
            let mut block = before.clone();
            record.vectors[0].apply(&mut block).unwrap();
            prop_assert_eq!(block, after);
        }
    }

    /// The stretches [`diff`] must find, byte by byte: runs of differing bytes, merged
    /// where fewer than `MERGE_GAP` equal bytes part them.
    fn differing_stretches(before: &[u8], after: &[u8]) -> Vec<(usize, usize)> {
        let mut out: Vec<(usize, usize)> = Vec::new();
        for at in (0..before.len()).filter(|&at| before[at] != after[at]) {
            match out.last_mut() {
                Some((s, len)) if at - (*s + *len) < MERGE_GAP => *len = at + 1 - *s,
                _ => out.push((at, 1)),
            }
        }
        out
    }

    proptest! {
        #[test]
        fn diff_finds_every_changed_stretch_of_a_block(
            clusters in proptest::collection::vec((0usize..8192, 1usize..300), 0..6),
            seed in any::<u64>(),
        ) {
            let before: Vec<u8> = (0..8192u64).map(|i| (i.wrapping_mul(seed | 1) >> 7) as u8).collect();
            let mut after = before.clone();
            for (at, len) in clusters {
                for (k, b) in after.iter_mut().skip(at).take(len).enumerate() {
                    if !(k as u64 ^ seed).is_multiple_of(3) {
                        *b = b.wrapping_add(1 + (k as u8 % 5));
                    }
                }
            }
            let expected = differing_stretches(&before, &after);
            for isa in comparisons() {
                let mut ranges = Vec::new();
                diff_with(isa, &before, &after, &mut ranges);
                prop_assert_eq!(&ranges, &expected, "{}", isa);
            }
        }
    }

    /// Every instruction set this CPU can run, the missing ones reported (said, not passed
    /// over in silence).
    fn comparisons() -> Vec<Isa> {
        let available = Isa::available();
        for missing in [Isa::Scalar, Isa::Avx2, Isa::Avx512].iter().filter(|isa| !available.contains(isa)) {
            eprintln!("skipped: this CPU cannot run the {missing} redo diff");
        }
        available
    }

    proptest! {
        #[test]
        fn the_word_mask_of_differing_bytes_is_the_byte_wise_one(
            before in proptest::collection::vec(0u8..4, 64),
            after in proptest::collection::vec(0u8..4, 64),
            len in 0usize..=64,
        ) {
            let expected = (0..len).filter(|&k| before[k] != after[k]).fold(0u64, |m, k| m | 1 << k);
            prop_assert_eq!(differing_bytes_by_words(&before[..len], &after[..len]), expected);
        }

        #[test]
        fn diff_of_any_length_finds_the_byte_wise_stretches(
            before in proptest::collection::vec(0u8..3, 0..2200),
            flips in proptest::collection::vec(any::<prop::sample::Index>(), 0..40),
        ) {
            let mut after = before.clone();
            if !after.is_empty() {
                for f in flips {
                    let at = f.index(after.len());
                    after[at] = after[at].wrapping_add(1);
                }
            }
            let expected = differing_stretches(&before, &after);
            for isa in comparisons() {
                let mut ranges = Vec::new();
                diff_with(isa, &before, &after, &mut ranges);
                prop_assert_eq!(&ranges, &expected, "{}", isa);
            }
        }
    }

    proptest! {
        /// Stretches a change named, anywhere in a block (near its end too, where the last
        /// chunk is compared by words), their copies end to end as a guard keeps them (the
        /// last one's tail compared by words too), compared on every instruction set, then sorted
        /// and merged: the byte-wise stretches of the whole block, when the stretches
        /// named cover every byte that changed.
        #[test]
        fn named_stretches_sorted_and_merged_find_what_a_whole_diff_finds(
            named in proptest::collection::vec((0usize..2048, 1usize..200), 1..6),
            flips in proptest::collection::vec((any::<prop::sample::Index>(), any::<prop::sample::Index>()), 0..30),
            seed in any::<u8>(),
        ) {
            let before: Vec<u8> = (0..2048u32).map(|i| (i as u8).wrapping_mul(seed | 1)).collect();
            let named: Vec<(usize, usize)> = named.into_iter().map(|(at, len)| (at, len.min(2048 - at))).collect();
            let mut after = before.clone();
            for (stretch, at) in flips {
                let (offset, len) = named[stretch.index(named.len())];
                after[offset + at.index(len)] ^= 1;
            }
            let expected = differing_stretches(&before, &after);
            for isa in comparisons() {
                let mut ranges = Vec::new();
                let copies: Vec<u8> = named.iter().flat_map(|&(offset, len)| &before[offset..offset + len]).copied().collect();
                let mut kept = 0;
                for &(offset, len) in &named {
                    diff_stretch_with(isa, &after, offset, len, &copies[kept..], &mut ranges);
                    kept += len;
                }
                sort_and_merge(&mut ranges);
                prop_assert_eq!(&ranges, &expected, "{}", isa);
            }
        }
    }

    #[test]
    fn a_stretch_that_fills_whole_masks_goes_on_across_them() {
        let before = vec![0u8; 2048];
        let mut after = before.clone();
        after[60..200].fill(1);
        after[250..270].fill(1); // across two groups
        after[1020..1030].fill(1);
        after[2040..2047].fill(1); // in the last group's last mask
        for isa in comparisons() {
            let mut ranges = Vec::new();
            diff_with(isa, &before, &after, &mut ranges);
            assert_eq!(ranges, [(60, 140), (250, 20), (1020, 10), (2040, 7)], "{isa}");
        }
    }

    #[test]
    fn an_equal_gap_where_two_differing_words_meet_parts_the_stretches() {
        let before = vec![0u8; 64];
        let mut after = before.clone();
        after[17] = 1; // word 2 ends with 6 equal bytes ...
        after[26] = 1; // ... and word 3 begins with 2: a gap of 8
        after[40] = 1; // word 5 ends with 7 equal bytes ...
        after[48] = 1; // ... and word 6 begins with none: a gap of 7, merged
        let mut ranges = Vec::new();
        diff(&before, &after, &mut ranges);
        assert_eq!(ranges, [(17, 1), (26, 1), (40, 9)]);
    }

    #[test]
    fn a_record_torn_stale_or_cut_ends_the_log() {
        let block = vec![5u8; 64];
        let mut log = Vec::new();
        encode_one(&mut log, 3, 1, 1, Op::Image, &block, &[(0, 64)]);
        assert!(matches!(read(&log, 3, true), Found::Record(..)));
        assert_eq!(read(&log, 4, true), Found::End, "a record of another sequence is stale");
        for cut in 0..log.len() {
            assert_eq!(read(&log[..cut], 3, true), Found::End, "cut at {cut}");
        }
        let mut torn = log.clone();
        torn[40] ^= 1;
        assert_eq!(read(&torn, 3, true), Found::End);
        assert_eq!(read(&[0u8; 100], 3, false), Found::Padding);
        assert_eq!(read(&[0u8; 100], 3, true), Found::End);
    }
}
