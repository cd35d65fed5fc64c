//! The undo tablespace's datafile, `undotbs01.dbf` (file number 2): how a new one is laid
//! out, how it grows, and how a file of the older fixed layout is converted.
//!
//! ```text
//!  block 0                  file header
//!  blocks 1..=N             headers of segments 1..N (_SYSSMU1$ ..)
//!  blocks N+1..N+M          the extent map (module `extent_map`)
//!  then N extents           the first extent of each segment, E blocks each
//!  then, as undo grows      one extent at a time, appended at the end of the file
//! ```
//!
//! A new tablespace is `undo_tablespace_size` large: up to [`MAX_SEGMENTS`] segments,
//! each an extent of at least [`MIN_EXTENT_BLOCKS`] blocks. When a transaction needs an
//! undo block and none can be reused or stolen, the tablespace grows by one extent of an
//! eighth of its size (at least 1 MiB, at most 64 MiB), up to `undo_tablespace_maxsize`
//! and never past the 4,194,304 blocks a block address can name (Oracle's AUTOEXTEND ON
//! MAXSIZE). Extents move between segments when one steals another's (module `space`).
//!
//! The fixed layout (before undo could grow) had no extent map:
//!
//! ```text
//!  block 0                  file header
//!  block 1 + (s-1)·S        header of segment s, then its ring of S-1 blocks
//! ```
//!
//! It is converted at open, without moving a block: the extent map goes after the last
//! ring and lists each ring as its segment's one extent; each header then gets the map's
//! address, segment 1's last, so an open interrupted halfway converts again.

use super::extent_map::{self, Extent, MapHeader};
use super::header::{FixedLayout, UndoHeader, UndoHeaderMut};
use crate::buffer::BufferCache;
use crate::error::{Error, Result};
use crate::stats::SessionStats;
use crate::storage::block;
use crate::storage::control::DatafileEntry;
use crate::storage::datafile::DataFile;
use std::path::Path;

/// File number of the undo datafile.
pub const UNDO_FILE_NO: u16 = 2;
/// Name of the undo datafile in the database directory.
pub const UNDO_FILE_NAME: &str = "undotbs01.dbf";
/// Most undo segments in the tablespace.
pub const MAX_SEGMENTS: u16 = 10;
/// Fewest blocks of a segment's first extent.
pub const MIN_EXTENT_BLOCKS: u32 = 3;

/// Data object id of the blocks of undo segment `usn` (0: the extent map): far above any
/// table's, so invalidating a table's blocks never touches undo.
pub fn object_id(usn: u16) -> u32 {
    0xFFFF_0000 | u32::from(usn)
}

/// Oracle's name of undo segment `usn`.
pub fn segment_name(usn: u16) -> String {
    format!("_SYSSMU{usn}$")
}

/// Most blocks a block address can name in one file.
pub const MAX_FILE_BLOCKS: u32 = 1 << 22;

/// How a new undo tablespace is laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Plan {
    pub segments: u16,
    pub map_blocks: u32,
    /// Blocks of each segment's first extent.
    pub extent_blocks: u32,
    /// Blocks of the file as created (the extents may leave a few unused at its end).
    pub file_blocks: u32,
    pub max_blocks: u32,
}

impl Plan {
    /// The layout of a tablespace of `size_bytes` that may grow to `max_bytes`, in blocks
    /// of `block_size`.
    pub fn new(size_bytes: u64, max_bytes: u64, block_size: usize) -> Result<Plan> {
        let bad = |message: String| Error::InvalidParameter { name: "undo_tablespace_size".into(), message };
        let blocks = size_bytes / block_size as u64;
        if blocks >= u64::from(MAX_FILE_BLOCKS) {
            return Err(bad(format!("{size_bytes} bytes is more than 4,194,304 blocks of {block_size}")));
        }
        let blocks = blocks as u32;
        let max_blocks = max_blocks(max_bytes.max(size_bytes), block_size);
        for segments in (1..=MAX_SEGMENTS).rev() {
            let map_blocks = map_blocks(u32::from(segments), max_blocks, block_size);
            let overhead = 1 + u32::from(segments) + map_blocks;
            let extent_blocks = blocks.saturating_sub(overhead) / u32::from(segments);
            if extent_blocks >= MIN_EXTENT_BLOCKS {
                return Ok(Plan { segments, map_blocks, extent_blocks, file_blocks: blocks, max_blocks });
            }
        }
        let least = (2 + map_blocks(1, max_blocks, block_size) + MIN_EXTENT_BLOCKS) as usize * block_size;
        Err(bad(format!("{size_bytes} bytes holds {blocks} blocks of {block_size}; at least {least}")))
    }

    /// Block number of the first extent-map block.
    pub fn map_first(&self) -> u32 {
        1 + u32::from(self.segments)
    }

    /// The first extent of segment `usn`.
    pub fn first_extent(&self, usn: u16) -> Extent {
        let first = self.map_first() + self.map_blocks + u32::from(usn - 1) * self.extent_blocks;
        Extent { first, blocks: self.extent_blocks, owner: usn, stolen: false }
    }

    /// What map block 0 says of the new tablespace.
    pub fn map_header(&self) -> MapHeader {
        MapHeader {
            // Blocks past the last extent (fewer than one a segment) stay unused.
            blocks: self.file_blocks,
            max_blocks: self.max_blocks,
            extents: u32::from(self.segments),
            map_blocks: self.map_blocks,
            segments: self.segments,
            first_header: 1,
            header_stride: 1,
        }
    }
}

/// The most blocks a tablespace may grow to under `max_bytes`.
pub fn max_blocks(max_bytes: u64, block_size: usize) -> u32 {
    (max_bytes / block_size as u64).min(u64::from(MAX_FILE_BLOCKS)) as u32
}

/// Blocks of the extent added to a tablespace of `blocks` (limited to `max_blocks`): an
/// eighth of it, at least 1 MiB and at most 64 MiB; 0 at the maximum.
pub fn next_extent_blocks(blocks: u32, max_blocks: u32, block_size: usize) -> u32 {
    let (least, most) = (((1 << 20) / block_size) as u32, ((64 << 20) / block_size) as u32);
    (blocks / 8).clamp(least, most).min(max_blocks.saturating_sub(blocks))
}

/// Extent-map blocks that hold `segments` first extents and every extent added while the
/// tablespace grows to `max_blocks`. Growth from an empty tablespace takes the most
/// extents (the next size only grows with the size), so this bounds any tablespace.
pub fn map_blocks(segments: u32, max_blocks: u32, block_size: usize) -> u32 {
    let mut extents = segments;
    let mut blocks = 0;
    while blocks < max_blocks {
        blocks += next_extent_blocks(blocks, max_blocks, block_size);
        extents += 1;
    }
    extents.div_ceil(extent_map::entries_per_block(block_size))
}

/// Creates the undo datafile of a new database (or of one created before undo existed)
/// in `dir`, `size_bytes` large and growing up to `max_bytes`, with its segment headers
/// and extent map formatted (written directly: the database does not exist yet), and
/// returns its control-file entry. Fails if the file exists.
pub fn create(
    io: &dyn crate::storage::io::Io,
    dir: &Path,
    block_size: usize,
    db_id: u64,
    size_bytes: u64,
    max_bytes: u64,
) -> Result<DatafileEntry> {
    let plan = Plan::new(size_bytes, max_bytes, block_size)?;
    let file = DataFile::create(io, &dir.join(UNDO_FILE_NAME), UNDO_FILE_NO, block_size, db_id)?;
    file.ensure_blocks(plan.file_blocks)?;
    let map_rdba = block::rdba(UNDO_FILE_NO, plan.map_first());
    let mut buf = vec![0u8; block_size];
    for usn in 1..=plan.segments {
        let rdba = block::rdba(UNDO_FILE_NO, u32::from(usn));
        UndoHeaderMut(&mut buf).format(rdba, object_id(usn), usn, plan.segments, map_rdba);
        let extent = plan.first_extent(usn);
        UndoHeaderMut(&mut buf).set_fresh_run(extent.first..extent.end());
        write_sealed(&file, &mut buf)?;
    }
    let extents: Vec<Extent> = (1..=plan.segments).map(|usn| plan.first_extent(usn)).collect();
    for (i, bytes) in format_map(&plan.map_header(), &extents, plan.map_first(), block_size).iter_mut().enumerate() {
        file.write_block(plan.map_first() + i as u32, seal(bytes))?;
    }
    file.sync()?;
    Ok(DatafileEntry {
        number: UNDO_FILE_NO,
        name: UNDO_FILE_NAME.into(),
        allocated_blocks: plan.file_blocks,
        free_extents: Vec::new(),
    })
}

fn write_sealed(file: &DataFile, buf: &mut [u8]) -> Result<()> {
    block::seal(buf);
    file.write_block(block::rdba_block(block::BlockHeader(buf).rdba()), buf)
}

fn seal(bytes: &mut [u8]) -> &[u8] {
    block::seal(bytes);
    bytes
}

/// The blocks of an extent map listing `extents`, the first at block `map_first`.
pub fn format_map(header: &MapHeader, extents: &[Extent], map_first: u32, block_size: usize) -> Vec<Vec<u8>> {
    let mut blocks: Vec<Vec<u8>> = (0..header.map_blocks)
        .map(|i| {
            let mut b = vec![0u8; block_size];
            extent_map::format_zeroed(&mut b, block::rdba(UNDO_FILE_NO, map_first + i), object_id(0));
            b
        })
        .collect();
    extent_map::write_header(&mut blocks[0], header);
    for (k, extent) in extents.iter().enumerate() {
        let (j, i) = extent_map::entry_position(k as u32, block_size);
        extent_map::write_extent(&mut blocks[j as usize], i, extent);
    }
    blocks
}

/// Converts a tablespace of the fixed layout (segment 1's header says `fixed`) to one
/// with an extent map, through the buffer cache: the map goes after the last ring, then
/// every segment header points at it, segment 1's last.
pub fn convert_fixed_layout(
    cache: &BufferCache,
    stats: &SessionStats,
    file: &DataFile,
    fixed: &FixedLayout,
    max_bytes: u64,
) -> Result<()> {
    let block_size = cache.block_size();
    let segments = fixed.segments;
    let map_first = 1 + u32::from(segments) * fixed.segment_blocks;
    let max_blocks = max_blocks(max_bytes, block_size).max(map_first + 1);
    let map_blocks = map_blocks(u32::from(segments), max_blocks, block_size);
    let header = MapHeader {
        blocks: map_first + map_blocks,
        // A maximum below what the file holds already only stops it from growing.
        max_blocks: max_blocks.max(map_first + map_blocks),
        extents: u32::from(segments),
        map_blocks,
        segments,
        first_header: 1,
        header_stride: fixed.segment_blocks,
    };
    let extents: Vec<Extent> = (1..=segments)
        .map(|usn| Extent { first: header.header_block(usn) + 1, blocks: fixed.ring_blocks, owner: usn, stolen: false })
        .collect();
    file.ensure_blocks(header.blocks)?;
    for (i, bytes) in format_map(&header, &extents, map_first, block_size).iter().enumerate() {
        let rdba = block::rdba(UNDO_FILE_NO, map_first + i as u32);
        cache.new_block(stats, rdba, object_id(0))?.copy_from_slice(bytes);
    }
    let map_rdba = block::rdba(UNDO_FILE_NO, map_first);
    for usn in (2..=segments).chain([1]) {
        let rdba = block::rdba(UNDO_FILE_NO, header.header_block(usn));
        let mut guard = cache.current_get(stats, rdba)?;
        if let Some(fixed) = UndoHeader(&guard).fixed_layout() {
            UndoHeaderMut(&mut guard).convert_fixed_layout(&fixed, map_rdba);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_size_gives_ten_segments_and_one_map_block() {
        let plan = Plan::new(64 << 20, 32 << 30, 8192).unwrap();
        assert_eq!((plan.segments, plan.map_blocks, plan.extent_blocks, plan.max_blocks), (10, 1, 818, 1 << 22));
        assert_eq!(plan.first_extent(2), Extent { first: 12 + 818, blocks: 818, owner: 2, stolen: false });
        assert_eq!(plan.map_header().blocks, plan.file_blocks);
    }

    #[test]
    fn tiny_tablespaces_get_fewer_segments_or_are_refused() {
        let plan = Plan::new(72 << 10, 72 << 10, 8192).unwrap();
        assert_eq!((plan.segments, plan.extent_blocks), (1, 6));
        let e = Plan::new(64 << 10, 64 << 10, 32768).unwrap_err().to_string();
        assert!(e.contains("undo_tablespace_size") && e.contains("holds 2 blocks"), "{e}");
    }

    #[test]
    fn extents_grow_with_the_tablespace_up_to_its_maximum() {
        assert_eq!(next_extent_blocks(128, 1 << 22, 8192), 128, "at least 1 MiB");
        assert_eq!(next_extent_blocks(40_000, 1 << 22, 8192), 5_000);
        assert_eq!(next_extent_blocks(1 << 21, 1 << 22, 8192), 8192, "at most 64 MiB");
        assert_eq!(next_extent_blocks(4000, 4050, 8192), 50, "the last extent stops at the maximum");
        assert_eq!(next_extent_blocks(4050, 4050, 8192), 0);
        // Every extent of a 2 KiB-block tablespace grown to the address limit fits the map.
        let blocks = map_blocks(10, MAX_FILE_BLOCKS, 2048);
        assert!((1..16).contains(&blocks), "{blocks} map blocks");
    }
}
