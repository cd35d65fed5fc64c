//! Segments: the blocks of one table, as extents listed in the segment header block, and
//! the high-water mark below which blocks are formatted.
//!
//! ```text
//!  segment header block (type 0x10), after the 36-byte common header:
//!  offset  size  field
//!  36      4     high-water mark: segment blocks below it, the header included
//!  40      4     blocks allocated in all extents
//!  44      2     extent map entries
//!  46      2     (reserved)
//!  48      8×n   extent map: first block address u32, block count u32; adjacent extents
//!                share one entry
//! ```
//!
//! Segment block *n* (0 is the header itself) is found by walking the extent map. Blocks
//! below the high-water mark are formatted data blocks; a full scan reads exactly those.
//! Extents are uniform and aligned to their size within the datafile, so an extent
//! boundary is where `block number % extent blocks == 0`; multiblock reads never cross it.

use super::block::{self, BlockType, HEADER_LEN};
use super::block_write::BlockWrite;

const OFF_HWM: usize = HEADER_LEN;
const OFF_ALLOCATED: usize = HEADER_LEN + 4;
const OFF_RUNS: usize = HEADER_LEN + 8;
const OFF_MAP: usize = HEADER_LEN + 12;

/// An extent-map entry: `blocks` adjacent blocks starting at `first` (a block address).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExtentRun {
    pub first: u32,
    pub blocks: u32,
}

impl ExtentRun {
    /// `blocks` (addresses, in the order they are read) as runs of adjacent addresses.
    pub fn adjacent(blocks: &[u32]) -> Vec<ExtentRun> {
        let mut runs: Vec<ExtentRun> = Vec::new();
        for &rdba in blocks {
            match runs.last_mut() {
                Some(r) if r.first + r.blocks == rdba => r.blocks += 1,
                _ => runs.push(ExtentRun { first: rdba, blocks: 1 }),
            }
        }
        runs
    }
}

/// The decoded segment header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SegmentMap {
    pub hwm: u32,
    pub allocated: u32,
    pub runs: Vec<ExtentRun>,
}

impl SegmentMap {
    /// Decodes a segment header block; `Err` says what is inconsistent.
    pub fn read(header: &[u8]) -> Result<SegmentMap, String> {
        if block::BlockHeader(header).block_type() != Some(BlockType::SegmentHeader) {
            return Err("not a segment header block".into());
        }
        let u32_at = |off: usize| u32::from_le_bytes([header[off], header[off + 1], header[off + 2], header[off + 3]]);
        let n = u16::from_le_bytes([header[OFF_RUNS], header[OFF_RUNS + 1]]) as usize;
        if OFF_MAP + 8 * n > header.len() {
            return Err(format!("extent map of {n} entries does not fit in the block"));
        }
        let runs: Vec<ExtentRun> =
            (0..n).map(|i| ExtentRun { first: u32_at(OFF_MAP + 8 * i), blocks: u32_at(OFF_MAP + 8 * i + 4) }).collect();
        let map = SegmentMap { hwm: u32_at(OFF_HWM), allocated: u32_at(OFF_ALLOCATED), runs };
        if map.runs.iter().map(|r| r.blocks).sum::<u32>() != map.allocated || map.hwm > map.allocated {
            return Err(format!("extent map ({} blocks) disagrees with its totals", map.allocated));
        }
        Ok(map)
    }

    /// Most extent-map entries a header of `block_size` bytes holds.
    pub fn capacity(block_size: usize) -> usize {
        (block_size - OFF_MAP) / 8
    }

    /// Writes this map into a segment header block (formatted or not).
    pub fn write<B: BlockWrite + ?Sized>(&self, header: &mut B, rdba: u32, object_id: u32) {
        assert!(
            self.runs.len() <= Self::capacity(header.bytes().len()),
            "extent map fits in its header (checked on allocation)"
        );
        if block::BlockHeader(header.bytes()).block_type() != Some(BlockType::SegmentHeader) {
            block::format_block(header.whole_mut(), BlockType::SegmentHeader, rdba, object_id);
        }
        header.put(OFF_HWM, &self.hwm.to_le_bytes());
        header.put(OFF_ALLOCATED, &self.allocated.to_le_bytes());
        header.put(OFF_RUNS, &(self.runs.len() as u16).to_le_bytes());
        let runs = header.range_mut(OFF_MAP..OFF_MAP + 8 * self.runs.len());
        for (r, bytes) in self.runs.iter().zip(runs.chunks_exact_mut(8)) {
            bytes[..4].copy_from_slice(&r.first.to_le_bytes());
            bytes[4..].copy_from_slice(&r.blocks.to_le_bytes());
        }
    }

    /// Adds an extent, merging it into the last entry when adjacent. `false` if the map is
    /// full (the caller reports it).
    pub fn add_extent(&mut self, first: u32, blocks: u32, block_size: usize) -> bool {
        let capacity = Self::capacity(block_size);
        let len = self.runs.len();
        match self.runs.last_mut() {
            Some(last) if last.first + last.blocks == first => last.blocks += blocks,
            _ if len >= capacity => return false,
            _ => self.runs.push(ExtentRun { first, blocks }),
        }
        self.allocated += blocks;
        true
    }

    /// The block address of segment block `n`, if allocated.
    pub fn block_address(&self, mut n: u32) -> Option<u32> {
        for r in &self.runs {
            if n < r.blocks {
                return Some(r.first + n);
            }
            n -= r.blocks;
        }
        None
    }

    /// The blocks below the high-water mark, excluding the header, as runs of adjacent
    /// block addresses cut at extent boundaries: what a full scan reads, in order.
    pub fn scan_runs(&self, extent_blocks: u32) -> Vec<ExtentRun> {
        let mut out = Vec::new();
        let mut remaining = self.hwm;
        for r in &self.runs {
            let take = r.blocks.min(remaining);
            remaining -= take;
            let mut addr = r.first;
            let end = r.first + take;
            while addr < end {
                let to_boundary = extent_blocks - block::rdba_block(addr) % extent_blocks;
                let n = to_boundary.min(end - addr);
                out.push(ExtentRun { first: addr, blocks: n });
                addr += n;
            }
        }
        // The header is segment block 0: skip it.
        if let Some(first) = out.first_mut() {
            first.first += 1;
            first.blocks -= 1;
            if first.blocks == 0 {
                out.remove(0);
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::block::rdba;

    #[test]
    fn map_round_trips_and_scans_skip_header() {
        let mut m = SegmentMap { hwm: 0, allocated: 0, runs: vec![] };
        assert!(m.add_extent(rdba(1, 128), 128, 8192));
        assert!(m.add_extent(rdba(1, 256), 128, 8192));
        assert!(m.add_extent(rdba(1, 1024), 128, 8192));
        assert_eq!(m.runs.len(), 2);
        m.hwm = 300;
        let mut b = vec![0u8; 8192];
        m.write(&mut b, rdba(1, 128), 9);
        assert_eq!(SegmentMap::read(&b).unwrap(), m);
        let runs = m.scan_runs(128);
        assert_eq!(runs[0], ExtentRun { first: rdba(1, 129), blocks: 127 });
        assert_eq!(runs[1], ExtentRun { first: rdba(1, 256), blocks: 128 });
        assert_eq!(runs[2], ExtentRun { first: rdba(1, 1024), blocks: 44 });
        assert_eq!(m.block_address(256), Some(rdba(1, 1024)));
    }

    #[test]
    fn inconsistent_headers_are_reported() {
        let mut b = vec![0u8; 8192];
        let m = SegmentMap { hwm: 10, allocated: 8, runs: vec![ExtentRun { first: 1, blocks: 8 }] };
        m.write(&mut b, 1, 1);
        assert!(SegmentMap::read(&b).is_err());
    }
}
