//! Codes: one per row, stored in byte-aligned lanes (8, 16, 32 or 64 bits), bit-packed at
//! their exact width, or run-length encoded; how a packing lays them out, and reading
//! them back.
//!
//! Invariants: a code is below `2^width` of the lanes that hold it; a NULL row holds the
//! code of the row before it (of the first non-NULL row when it leads) so it never breaks
//! a run.

use super::Packing;
use crate::inmemory::area::{InMemoryArea, Stored};
use crate::inmemory::simd;
use std::ops::Range;

/// One code per row.
#[derive(Clone, Debug)]
pub(super) enum Codes {
    Lanes(Lanes),
    Runs(Runs),
}

/// Codes stored one after another at a fixed width, each below `2^width`.
#[derive(Clone, Debug)]
pub(super) enum Lanes {
    U8(Stored<u8>),
    U16(Stored<u16>),
    U32(Stored<u32>),
    U64(Stored<u64>),
    /// `rows` codes of `width` (1..=32) bits in [`simd::pack_bits_into`]'s layout.
    Packed {
        width: u8,
        rows: usize,
        words: Stored<u64>,
    },
}

/// Run-length encoded codes.
#[derive(Clone, Debug)]
pub(super) struct Runs {
    /// Exclusive end row of each run: strictly ascending, the last one is the unit's `rows`.
    pub(super) ends: Vec<u32>,
    /// The code of each run (as many as `ends`).
    pub(super) codes: Lanes,
}

/// The code of each row; a NULL row takes the code of the row before it, or of the first
/// non-NULL row when it leads (so NULLs never break a run).
pub(super) fn fill_nulls<T: Copy>(values: &[Option<T>], code: impl Fn(T) -> u64) -> Vec<u64> {
    let mut previous = values.iter().flatten().next().map_or(0, |&v| code(v));
    let mut codes = Vec::with_capacity(values.len());
    for value in values {
        if let Some(v) = value {
            previous = code(*v);
        }
        codes.push(previous);
    }
    codes
}

/// Bits needed to hold codes up to `max_code`; at least 1.
pub(super) fn bits_for(max_code: u64) -> u8 {
    (64 - max_code.leading_zeros()).max(1) as u8
}

pub(super) fn count_runs(codes: &[u64]) -> usize {
    codes.windows(2).filter(|pair| pair[0] != pair[1]).count() + usize::from(!codes.is_empty())
}

impl Lanes {
    /// Stores `codes` (each below `2^bits`) at `packing`, in `area` when given and it has
    /// room.
    pub(super) fn new(codes: &[u64], bits: u8, packing: Packing, area: Option<&InMemoryArea>) -> Lanes {
        super::build_clock::compressing(|| Lanes::store(codes, bits, packing, area))
    }

    /// [`Lanes::new`] untimed.
    fn store(codes: &[u64], bits: u8, packing: Packing, area: Option<&InMemoryArea>) -> Lanes {
        match Lanes::layout(codes.len(), bits, packing) {
            LaneLayout::Packed(width) => {
                let words = Stored::zeroed_in(area, simd::packed_words(codes.len(), width), |words| {
                    simd::pack_bits_into(codes, width, words);
                });
                Lanes::Packed { width, rows: codes.len(), words }
            }
            LaneLayout::Bytes(8) => Lanes::U8(Stored::collect_in(area, codes.iter().map(|&c| c as u8))),
            LaneLayout::Bytes(16) => Lanes::U16(Stored::collect_in(area, codes.iter().map(|&c| c as u16))),
            LaneLayout::Bytes(32) => Lanes::U32(Stored::collect_in(area, codes.iter().map(|&c| c as u32))),
            LaneLayout::Bytes(_) => Lanes::U64(Stored::copy_of(area, codes)),
        }
    }

    /// Bytes [`Lanes::new`] would take for `rows` codes of `bits` bits.
    pub(super) fn bytes_for(rows: usize, bits: u8, packing: Packing) -> usize {
        match Lanes::layout(rows, bits, packing) {
            LaneLayout::Packed(width) => simd::packed_words(rows, width) * size_of::<u64>(),
            LaneLayout::Bytes(lane) => rows * usize::from(lane / 8),
        }
    }

    /// Byte-aligned packing rounds the width up to a lane; tight packing bit-packs widths up
    /// to 32 unless byte lanes are as small (small units, widths 8, 16, 32).
    fn layout(rows: usize, bits: u8, packing: Packing) -> LaneLayout {
        let lane = bits.next_power_of_two().max(8);
        if packing == Packing::ByteAligned || bits > 32 {
            return LaneLayout::Bytes(lane);
        }
        let packed_bytes = simd::packed_words(rows, bits) * size_of::<u64>();
        if packed_bytes < rows * usize::from(lane / 8) { LaneLayout::Packed(bits) } else { LaneLayout::Bytes(lane) }
    }
}

/// Where [`Lanes::new`] puts codes: bit-packed at a width, or in lanes of 8/16/32/64 bits.
enum LaneLayout {
    Packed(u8),
    Bytes(u8),
}

impl Runs {
    /// Run-length encodes `codes` (each below `2^bits`; not empty).
    pub(super) fn new(codes: &[u64], bits: u8, area: Option<&InMemoryArea>) -> Runs {
        let (ends, run_codes) = super::build_clock::compressing(|| Runs::find(codes));
        Runs { ends, codes: Lanes::new(&run_codes, bits, Packing::Tight, area) }
    }

    /// Each run's end row and code.
    fn find(codes: &[u64]) -> (Vec<u32>, Vec<u64>) {
        let mut ends = Vec::new();
        let mut run_codes = Vec::new();
        for (row, &code) in codes.iter().enumerate() {
            if run_codes.last() != Some(&code) {
                if row > 0 {
                    ends.push(row as u32);
                }
                run_codes.push(code);
            }
        }
        ends.push(codes.len() as u32);
        ends.shrink_to_fit();
        (ends, run_codes)
    }
}

impl Codes {
    pub(super) fn bytes(&self) -> usize {
        match self {
            Codes::Lanes(lanes) => lanes.bytes(),
            Codes::Runs(runs) => runs.ends.capacity() * size_of::<u32>() + runs.codes.bytes(),
        }
    }

    pub(super) fn get(&self, row: usize) -> u64 {
        match self {
            Codes::Lanes(lanes) => lanes.get(row),
            Codes::Runs(runs) => runs.codes.get(runs.ends.partition_point(|&end| end as usize <= row)),
        }
    }

    /// Calls `f(row, code)` for each row of `rows`, in order.
    pub(super) fn for_each_code(&self, rows: Range<usize>, mut f: impl FnMut(usize, u64)) {
        let runs = match self {
            Codes::Lanes(lanes) => return lanes.for_each_code(rows, f),
            Codes::Runs(runs) => runs,
        };
        if rows.is_empty() {
            return;
        }
        let mut run = runs.ends.partition_point(|&end| end as usize <= rows.start);
        let mut code = runs.codes.get(run);
        for row in rows {
            while runs.ends[run] as usize <= row {
                run += 1;
                code = runs.codes.get(run);
            }
            f(row, code);
        }
    }
}

impl Lanes {
    /// Bits each code takes.
    pub(super) fn width(&self) -> u8 {
        match self {
            Lanes::U8(_) => 8,
            Lanes::U16(_) => 16,
            Lanes::U32(_) => 32,
            Lanes::U64(_) => 64,
            Lanes::Packed { width, .. } => *width,
        }
    }

    fn bytes(&self) -> usize {
        match self {
            Lanes::U8(codes) => codes.len(),
            Lanes::U16(codes) => codes.len() * 2,
            Lanes::U32(codes) => codes.len() * 4,
            Lanes::U64(codes) => codes.len() * 8,
            Lanes::Packed { words, .. } => words.len() * 8,
        }
    }

    pub(super) fn get(&self, i: usize) -> u64 {
        match self {
            Lanes::U8(codes) => u64::from(codes[i]),
            Lanes::U16(codes) => u64::from(codes[i]),
            Lanes::U32(codes) => u64::from(codes[i]),
            Lanes::U64(codes) => codes[i],
            Lanes::Packed { width, words, .. } => u64::from(simd::packed_get(words, *width, i)),
        }
    }

    /// Calls `f(row, code)` for each row of `rows`, in order.
    fn for_each_code(&self, rows: Range<usize>, mut f: impl FnMut(usize, u64)) {
        fn each<T: Copy + Into<u64>>(codes: &[T], rows: Range<usize>, mut f: impl FnMut(usize, u64)) {
            codes[rows.clone()].iter().zip(rows).for_each(|(&code, row)| f(row, code.into()));
        }
        match self {
            Lanes::U8(codes) => each(codes, rows, f),
            Lanes::U16(codes) => each(codes, rows, f),
            Lanes::U32(codes) => each(codes, rows, f),
            Lanes::U64(codes) => each(codes, rows, f),
            Lanes::Packed { width, words, .. } => {
                rows.for_each(|row| f(row, u64::from(simd::packed_get(words, *width, row))))
            }
        }
    }
}
