//! The extent map of the undo tablespace: how many blocks the tablespace has and may grow
//! to, where its undo segment headers are, and every extent with the segment that owns it.
//! It is the authoritative record of undo space: what is in memory is rebuilt from it at
//! open.
//!
//! ```text
//!  extent-map block (type 0x1e), after the 36-byte common header:
//!  offset  size  field                      (map block 0 only; zero in the others)
//!  36      4     blocks of the tablespace: the next extent starts at this block
//!  40      4     most blocks the tablespace may grow to (undo_tablespace_maxsize)
//!  44      4     extents in the map
//!  48      4     map blocks: this one and those right after it
//!  52      2     undo segments
//!  54      2     (reserved)
//!  56      4     block of segment 1's header
//!  60      4     blocks from one segment header to the next
//!  64      12×n  extents, numbered across the map blocks in order:
//!                0  first block u32
//!                4  blocks u32
//!                8  owner: undo segment number u16
//!                10 flags u16: 1 = stolen once (its blocks may hold any segment's undo)
//! ```
//!
//! Extent `k` is entry `k % per_block` of map block `k / per_block`. Extents never overlap
//! and lie below the tablespace's block count; the map has room for every extent the
//! tablespace can have once grown to its maximum (see `tablespace::map_capacity`), so it
//! never moves. An entry at or past the extent count means nothing: growth writes the
//! entry first and raises the count after, so a crash between the two leaves the map as
//! it was.

use super::codec::{get_u16, get_u32, put_u16, put_u32};
use crate::storage::block::{self, BlockHeader, BlockType, HEADER_LEN};

const OFF_BLOCKS: usize = HEADER_LEN;
const OFF_MAX_BLOCKS: usize = HEADER_LEN + 4;
const OFF_EXTENTS: usize = HEADER_LEN + 8;
const OFF_MAP_BLOCKS: usize = HEADER_LEN + 12;
const OFF_SEGMENTS: usize = HEADER_LEN + 16;
const OFF_FIRST_HEADER: usize = HEADER_LEN + 20;
const OFF_HEADER_STRIDE: usize = HEADER_LEN + 24;
const OFF_ENTRIES: usize = 64;
const ENTRY_LEN: usize = 12;

/// What map block 0 says of the tablespace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MapHeader {
    /// Blocks of the tablespace, the file header included; the next extent starts here.
    pub blocks: u32,
    /// Most blocks the tablespace may grow to.
    pub max_blocks: u32,
    /// Extents in the map.
    pub extents: u32,
    /// Map blocks, this one included.
    pub map_blocks: u32,
    pub segments: u16,
    /// Block number of segment 1's header.
    pub first_header: u32,
    /// Blocks from one segment header to the next.
    pub header_stride: u32,
}

impl MapHeader {
    /// Block number of the header of segment `usn` (1-based).
    pub fn header_block(&self, usn: u16) -> u32 {
        self.first_header + u32::from(usn - 1) * self.header_stride
    }
}

/// One extent: a run of undo blocks owned by one segment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Extent {
    /// Block number of its first block.
    pub first: u32,
    pub blocks: u32,
    /// Undo segment number of its owner.
    pub owner: u16,
    /// Whether it has ever been stolen: then no segment header's never-formatted run
    /// applies to it (see `header`).
    pub stolen: bool,
}

impl Extent {
    /// One past its last block.
    pub fn end(&self) -> u32 {
        self.first + self.blocks
    }

    pub fn contains(&self, block_no: u32) -> bool {
        (self.first..self.end()).contains(&block_no)
    }
}

/// Extent entries one map block holds.
pub fn entries_per_block(block_size: usize) -> u32 {
    ((block_size - OFF_ENTRIES) / ENTRY_LEN) as u32
}

/// Where extent `k` is: (map block index, entry index in that block).
pub fn entry_position(k: u32, block_size: usize) -> (u32, usize) {
    let per = entries_per_block(block_size);
    (k / per, (k % per) as usize)
}

/// Whether `bytes` is an extent-map block.
pub fn is_map_block(bytes: &[u8]) -> bool {
    BlockHeader(bytes).block_type() == Some(BlockType::UndoExtentMap)
}

/// Formats an empty map block in a block that is all zero.
pub fn format_zeroed(bytes: &mut [u8], rdba: u32, object_id: u32) {
    block::format_zeroed_block(bytes, BlockType::UndoExtentMap, rdba, object_id);
}

pub fn read_header(bytes: &[u8]) -> MapHeader {
    MapHeader {
        blocks: get_u32(bytes, OFF_BLOCKS),
        max_blocks: get_u32(bytes, OFF_MAX_BLOCKS),
        extents: get_u32(bytes, OFF_EXTENTS),
        map_blocks: get_u32(bytes, OFF_MAP_BLOCKS),
        segments: get_u16(bytes, OFF_SEGMENTS),
        first_header: get_u32(bytes, OFF_FIRST_HEADER),
        header_stride: get_u32(bytes, OFF_HEADER_STRIDE),
    }
}

pub fn write_header(bytes: &mut [u8], header: &MapHeader) {
    put_u32(bytes, OFF_BLOCKS, header.blocks);
    put_u32(bytes, OFF_MAX_BLOCKS, header.max_blocks);
    put_u32(bytes, OFF_EXTENTS, header.extents);
    put_u32(bytes, OFF_MAP_BLOCKS, header.map_blocks);
    put_u16(bytes, OFF_SEGMENTS, header.segments);
    put_u32(bytes, OFF_FIRST_HEADER, header.first_header);
    put_u32(bytes, OFF_HEADER_STRIDE, header.header_stride);
}

/// Entry `i` of a map block.
pub fn read_extent(bytes: &[u8], i: usize) -> Extent {
    let off = OFF_ENTRIES + i * ENTRY_LEN;
    Extent {
        first: get_u32(bytes, off),
        blocks: get_u32(bytes, off + 4),
        owner: get_u16(bytes, off + 8),
        stolen: get_u16(bytes, off + 10) & 1 != 0,
    }
}

pub fn write_extent(bytes: &mut [u8], i: usize, extent: &Extent) {
    let off = OFF_ENTRIES + i * ENTRY_LEN;
    assert!(off + ENTRY_LEN <= bytes.len(), "extent entry {i} lies inside its map block");
    put_u32(bytes, off, extent.first);
    put_u32(bytes, off + 4, extent.blocks);
    put_u16(bytes, off + 8, extent.owner);
    put_u16(bytes, off + 10, u16::from(extent.stolen));
}

/// Checks the fields of map block 0 against each other and the block size.
pub fn check_header(header: &MapHeader, block_size: usize) -> Result<(), String> {
    let capacity = u64::from(header.map_blocks) * u64::from(entries_per_block(block_size));
    let fits = u64::from(header.extents) <= capacity && header.blocks <= header.max_blocks;
    let headers_fit =
        header.segments >= 1 && header.first_header >= 1 && header.header_block(header.segments) < header.blocks;
    if !fits || !headers_fit || header.max_blocks > 1 << 22 {
        return Err(format!("undo extent map header is inconsistent: {header:?}"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::block::rdba;

    #[test]
    fn header_and_entries_round_trip_in_the_smallest_block() {
        let mut b = vec![0u8; 2048];
        format_zeroed(&mut b, rdba(2, 11), 7);
        let header = MapHeader {
            blocks: 300,
            max_blocks: 4096,
            extents: 3,
            map_blocks: 1,
            segments: 10,
            first_header: 1,
            header_stride: 1,
        };
        write_header(&mut b, &header);
        let last = entries_per_block(2048) as usize - 1;
        let extent = Extent { first: 280, blocks: 20, owner: 4, stolen: true };
        write_extent(&mut b, last, &extent);
        assert!(is_map_block(&b));
        assert_eq!(read_header(&b), header);
        assert_eq!(read_extent(&b, last), extent);
        assert_eq!(check_header(&header, 2048), Ok(()));
        assert_eq!(header.header_block(10), 10);
        assert!(check_header(&MapHeader { extents: 999, ..header }, 2048).is_err());
    }

    #[test]
    fn extents_number_across_map_blocks() {
        let per = entries_per_block(8192);
        assert_eq!(per, 677);
        assert_eq!(entry_position(676, 8192), (0, 676));
        assert_eq!(entry_position(677, 8192), (1, 0));
    }
}
