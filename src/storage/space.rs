//! Space management: the datafiles and the control file's space map, handing out uniform
//! extents and taking them back.
//!
//! Extents are aligned to their size within a file (the first extent of every file holds
//! its header), so extent boundaries are block numbers divisible by the extent size. Freed
//! extents are reused before the file grows.
//!
//! Invariants: extents are handed out and freed under the control-file lock, so no extent
//! belongs to two segments; every datafile the control file lists is open in `datafiles`.

use super::block;
use super::control::ControlFile;
use super::datafile::DataFile;
use crate::error::{Error, Result};
use parking_lot::Mutex;
use std::sync::Arc;

/// The database's datafiles and the control file that maps their space.
pub struct Space {
    /// Bytes in a block, fixed at creation.
    pub block_size: usize,
    /// Blocks in an extent, fixed at creation.
    pub extent_blocks: u32,
    /// The control file as it will next be written; its datafile entries are the space map.
    pub control: Mutex<ControlFile>,
    /// Every datafile, open.
    pub datafiles: Vec<Arc<DataFile>>,
}

impl Space {
    /// The space of `control`'s datafiles, open as `datafiles`.
    pub fn new(control: ControlFile, datafiles: Vec<Arc<DataFile>>) -> Space {
        Space {
            block_size: control.block_size as usize,
            extent_blocks: control.extent_blocks,
            control: Mutex::new(control),
            datafiles,
        }
    }

    /// The open datafile numbered `number`.
    pub fn datafile(&self, number: u16) -> Option<&Arc<DataFile>> {
        self.datafiles.iter().find(|f| f.number() == number)
    }

    /// A corruption error for block `rdba`, naming its datafile.
    pub fn corrupt(&self, rdba: u32, reason: impl Into<String>) -> Error {
        let file = self.datafile(block::rdba_file(rdba)).map(|f| f.path().to_owned()).unwrap_or_default();
        Error::Corrupt { file, block: Some(block::rdba_block(rdba)), reason: reason.into() }
    }

    /// Allocates one extent and returns the block address of its first block.
    pub fn allocate_extent(&self) -> Result<u32> {
        let mut control = self.control.lock();
        let extent_blocks = control.extent_blocks;
        let entry = control.datafiles.first_mut().expect("a database has at least one datafile");
        let number = entry.number;
        if let Some(first) = entry.free_extents.pop() {
            return Ok(block::rdba(number, first));
        }
        let first = entry.allocated_blocks;
        if u64::from(first) + u64::from(extent_blocks) >= 1 << 22 {
            return Err(Error::InvalidValue {
                context: entry.name.clone(),
                message: "datafile is full (4,194,304 blocks, the most a block address can name)".into(),
            });
        }
        let file = self.datafile(number).expect("control file entries are open");
        file.ensure_blocks(first + extent_blocks)?;
        entry.allocated_blocks = first + extent_blocks;
        Ok(block::rdba(number, first))
    }

    /// Returns extents (by first block address) to the free list of their file.
    pub fn free_extents(&self, firsts: impl IntoIterator<Item = u32>) {
        let mut control = self.control.lock();
        for rdba in firsts {
            let number = block::rdba_file(rdba);
            if let Some(entry) = control.datafiles.iter_mut().find(|d| d.number == number) {
                entry.free_extents.push(block::rdba_block(rdba));
            }
        }
    }
}
