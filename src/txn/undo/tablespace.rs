//! The undo tablespace's datafile, `undotbs01.dbf` (file number 2), and how its blocks are
//! divided among the undo segments.
//!
//! ```text
//!  block 0                  file header
//!  block 1                  header of segment 1 (_SYSSMU1$)
//!  blocks 2..S              ring of segment 1 (S = blocks per segment)
//!  block S+1                header of segment 2, then its ring, ...
//!  blocks past the last segment (fewer than one segment's worth) stay unused
//! ```
//!
//! The file is sized once, at creation, from `undo_tablespace_size`: up to
//! [`MAX_SEGMENTS`] segments, each at least [`MIN_SEGMENT_BLOCKS`] blocks. Segment
//! headers are formatted when the file is created; ring blocks are formatted when first
//! handed out. Each segment header records the whole layout, so an open learns it from
//! segment 1's header.

use super::header::{SegmentGeometry, UndoHeaderMut};
use crate::error::{Error, Result};
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
/// Fewest blocks of one undo segment: its header and three ring blocks.
pub const MIN_SEGMENT_BLOCKS: u32 = 4;

/// Data object id of the blocks of undo segment `usn`: far above any table's, so
/// invalidating a table's blocks never touches undo.
pub fn object_id(usn: u16) -> u32 {
    0xFFFF_0000 | u32::from(usn)
}

/// Oracle's name of undo segment `usn`.
pub fn segment_name(usn: u16) -> String {
    format!("_SYSSMU{usn}$")
}

/// How the undo datafile is divided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layout {
    pub segments: u16,
    /// Blocks of each segment, its header included.
    pub segment_blocks: u32,
}

impl Layout {
    /// The layout of a tablespace of `size_bytes` in blocks of `block_size`.
    pub fn plan(size_bytes: u64, block_size: usize) -> Result<Layout> {
        let bad = |message: String| Error::InvalidParameter { name: "undo_tablespace_size".into(), message };
        let blocks = size_bytes / block_size as u64;
        if blocks >= 1 << 22 {
            return Err(bad(format!("{size_bytes} bytes is more than 4,194,304 blocks of {block_size}")));
        }
        let usable = blocks.saturating_sub(1) as u32;
        let segments = (usable / MIN_SEGMENT_BLOCKS).min(u32::from(MAX_SEGMENTS)) as u16;
        if segments == 0 {
            let least = (1 + MIN_SEGMENT_BLOCKS) as usize * block_size;
            return Err(bad(format!("{size_bytes} bytes holds {blocks} blocks of {block_size}; at least {least}")));
        }
        Ok(Layout { segments, segment_blocks: usable / u32::from(segments) })
    }

    /// The layout recorded in a segment header.
    pub fn of(geometry: &SegmentGeometry) -> Layout {
        Layout { segments: geometry.segments, segment_blocks: geometry.segment_blocks }
    }

    /// Block address of the header of segment `usn` (1-based).
    pub fn header_rdba(&self, usn: u16) -> u32 {
        block::rdba(UNDO_FILE_NO, 1 + u32::from(usn - 1) * self.segment_blocks)
    }

    /// Where segment `usn` lies.
    pub fn geometry(&self, usn: u16) -> SegmentGeometry {
        SegmentGeometry {
            usn,
            segments: self.segments,
            segment_blocks: self.segment_blocks,
            ring_first: self.header_rdba(usn) + 1,
            ring_blocks: self.segment_blocks - 1,
        }
    }

    /// Blocks of the file in use: the file header and every segment.
    pub fn used_blocks(&self) -> u32 {
        1 + u32::from(self.segments) * self.segment_blocks
    }
}

/// Creates the undo datafile in `dir` with its segment headers formatted, and returns its
/// control-file entry. Fails if the file exists.
pub fn create(
    io: &dyn crate::storage::io::Io,
    dir: &Path,
    block_size: usize,
    db_id: u64,
    size_bytes: u64,
) -> Result<DatafileEntry> {
    let layout = Layout::plan(size_bytes, block_size)?;
    let file = DataFile::create(io, &dir.join(UNDO_FILE_NAME), UNDO_FILE_NO, block_size, db_id)?;
    let blocks = (size_bytes / block_size as u64) as u32;
    file.ensure_blocks(blocks)?;
    let mut buf = vec![0u8; block_size];
    for usn in 1..=layout.segments {
        let rdba = layout.header_rdba(usn);
        UndoHeaderMut(&mut buf).format(rdba, object_id(usn), layout.geometry(usn));
        block::seal(&mut buf);
        file.write_block(block::rdba_block(rdba), &buf)?;
    }
    file.sync()?;
    Ok(DatafileEntry {
        number: UNDO_FILE_NO,
        name: UNDO_FILE_NAME.into(),
        allocated_blocks: blocks,
        free_extents: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_size_gives_ten_segments() {
        let layout = Layout::plan(64 << 20, 8192).unwrap();
        assert_eq!(layout, Layout { segments: 10, segment_blocks: 819 });
        assert!(layout.used_blocks() <= 8192);
        assert_eq!(layout.geometry(2).ring_first, block::rdba(UNDO_FILE_NO, 821));
    }

    #[test]
    fn tiny_tablespaces_get_fewer_segments_or_are_refused() {
        assert_eq!(Layout::plan(64 << 10, 8192).unwrap(), Layout { segments: 1, segment_blocks: 7 });
        let e = Layout::plan(64 << 10, 32768).unwrap_err().to_string();
        assert!(e.contains("undo_tablespace_size") && e.contains("holds 2 blocks"), "{e}");
    }
}
