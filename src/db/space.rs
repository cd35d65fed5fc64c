//! Space management: handing out uniform extents from the datafiles and taking them back.
//!
//! Extents are aligned to their size within a file (the first extent of every file holds
//! its header), so extent boundaries are block numbers divisible by the extent size. Freed
//! extents are reused before the file grows.

use super::DbInner;
use crate::error::Result;
use crate::storage::block;

impl DbInner {
    /// Allocates one extent and returns the block address of its first block.
    pub(crate) fn allocate_extent(&self) -> Result<u32> {
        let mut control = self.control.lock();
        let extent_blocks = control.extent_blocks;
        let entry = control.datafiles.first_mut().expect("a database has at least one datafile");
        let number = entry.number;
        if let Some(first) = entry.free_extents.pop() {
            return Ok(block::rdba(number, first));
        }
        let first = entry.allocated_blocks;
        if u64::from(first) + u64::from(extent_blocks) >= 1 << 22 {
            return Err(crate::error::Error::InvalidValue {
                context: entry.name.clone(),
                message: "datafile is full (4,194,304 blocks, the most a block address can name)".into(),
            });
        }
        let file = self.datafiles.iter().find(|f| f.number() == number).expect("control file entries are open");
        file.ensure_blocks(first + extent_blocks)?;
        entry.allocated_blocks = first + extent_blocks;
        Ok(block::rdba(number, first))
    }

    /// Returns extents (by first block address) to the free list of their file.
    pub(crate) fn free_extents(&self, firsts: impl IntoIterator<Item = u32>) {
        let mut control = self.control.lock();
        for rdba in firsts {
            let number = block::rdba_file(rdba);
            if let Some(entry) = control.datafiles.iter_mut().find(|d| d.number == number) {
                entry.free_extents.push(block::rdba_block(rdba));
            }
        }
    }
}
