//! The recovery double-write file (`recovery.dwb`): where instance recovery keeps a
//! synced copy of each block it is about to write over in place when that block's
//! recovered version was built on the version the datafile held.
//!
//! Why: recovery applies the redo from the checkpoint to the blocks. A block whose first
//! change after the checkpoint logged its whole image is rebuilt from that image however
//! its datafile copy looks; a block whose first change there is a partial one is built
//! on the datafile's copy. If recovery writes such a block back and the power goes
//! during that write, the copy is torn, and the next recovery, which replays the same
//! redo from the same checkpoint, could not build on it. So before recovery writes such
//! a block in place, its recovered version goes here, synced; the next open first puts
//! every copy here back in place, then replays the redo over it (the redo applied in
//! order over any version at least as new as the checkpoint gives the same block).
//!
//! ```text
//!  block 0   header: magic "LIOSCOPE RECOVERY DWB" (21 bytes), db id u64 at 24,
//!            checkpoint LSN u64 at 32 (the copies are valid for recovery from it),
//!            CRC-32 of bytes 0..40 at 40
//!  block 1.. the copies: sealed blocks (checksummed, naming their own address)
//! ```
//!
//! Invariants: a copy is only ever of a version at least as new as the header's
//! checkpoint; the file is valid only for that checkpoint (the control file's), and is
//! removed once the control file records a checkpoint past the redo recovery applied. A
//! copy torn by a crash fails its block checksum and is skipped: the block it was of had
//! not been written in place yet.

use super::block;
use super::io::{Io, IoFile};
use crate::error::{Error, Result};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The file's name in the database directory.
pub const FILE_NAME: &str = "recovery.dwb";
const MAGIC: &[u8] = b"LIOSCOPE RECOVERY DWB";

/// An open double-write file being filled by a recovery.
#[derive(Debug)]
pub struct DoubleWrite {
    file: Arc<dyn IoFile>,
    block_size: usize,
    /// Where the next copy goes, in blocks.
    next: u32,
}

fn path(dir: &Path) -> PathBuf {
    dir.join(FILE_NAME)
}

fn header(db_id: u64, checkpoint: u64, block_size: usize) -> Vec<u8> {
    let mut b = vec![0u8; block_size];
    b[..MAGIC.len()].copy_from_slice(MAGIC);
    b[24..32].copy_from_slice(&db_id.to_le_bytes());
    b[32..40].copy_from_slice(&checkpoint.to_le_bytes());
    let crc = crc32fast::hash(&b[..40]);
    b[40..44].copy_from_slice(&crc.to_le_bytes());
    b
}

impl DoubleWrite {
    /// Starts an empty double-write file for recovery from `checkpoint` (removing any
    /// other first: the caller has put its copies back in place), header synced.
    pub fn create(io: &dyn Io, dir: &Path, db_id: u64, checkpoint: u64, block_size: usize) -> Result<DoubleWrite> {
        remove(io, dir)?;
        let file = io.open(&path(dir), true, false)?;
        file.write_at(&header(db_id, checkpoint, block_size), 0)?;
        file.sync()?;
        io.sync_dir(dir)?;
        Ok(DoubleWrite { file, block_size, next: 1 })
    }

    /// Adds the sealed block `sealed` (not yet synced).
    pub fn stage(&mut self, sealed: &[u8]) -> Result<()> {
        debug_assert_eq!(sealed.len(), self.block_size);
        self.file.write_at(sealed, u64::from(self.next) * self.block_size as u64)?;
        self.next += 1;
        Ok(())
    }

    /// Makes the copies staged so far durable.
    pub fn sync(&self) -> Result<()> {
        self.file.sync()
    }
}

/// The copies in `dir`'s double-write file that are valid for recovery from
/// `checkpoint` of database `db_id` (none if there is no file, or it is for another
/// checkpoint), each with its block address, in the order they were staged.
pub fn copies(dir: &Path, db_id: u64, checkpoint: u64, block_size: usize) -> Result<Vec<(u32, Vec<u8>)>> {
    let path = path(dir);
    let bytes = match std::fs::read(&path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(Error::io("read", &path, e)),
    };
    if bytes.len() < block_size || bytes[..block_size] != header(db_id, checkpoint, block_size)[..] {
        return Ok(Vec::new());
    }
    Ok(bytes[block_size..]
        .chunks_exact(block_size)
        .filter_map(|b| {
            let rdba = block::BlockHeader(b).rdba();
            // A sealed copy is never all zeros (which `verify` passes as unformatted).
            let whole = matches!(block::verify(b, rdba), Ok(t) if t != block::BlockType::Unformatted);
            whole.then(|| (rdba, b.to_vec()))
        })
        .collect())
}

/// Removes `dir`'s double-write file, if any (its copies are no longer needed).
pub fn remove(io: &dyn Io, dir: &Path) -> Result<()> {
    let path = path(dir);
    match std::fs::remove_file(&path) {
        Ok(()) => io.sync_dir(dir),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(Error::io("remove", &path, e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sealed(rdba: u32, fill: u8) -> Vec<u8> {
        let mut b = vec![0u8; 2048];
        block::format_block(&mut b, block::BlockType::TableData, rdba, 1);
        b[200..300].fill(fill);
        block::seal(&mut b);
        b
    }

    #[test]
    fn copies_come_back_only_for_their_checkpoint_and_torn_ones_are_skipped() {
        let dir = tempfile::tempdir().unwrap();
        let io = super::super::io::os();
        let mut dw = DoubleWrite::create(io.as_ref(), dir.path(), 9, 77, 2048).unwrap();
        for (rdba, fill) in [(0x400010, 1u8), (0x400011, 2), (0x400012, 3)] {
            dw.stage(&sealed(rdba, fill)).unwrap();
        }
        dw.sync().unwrap();
        let mut bytes = std::fs::read(path(dir.path())).unwrap();
        bytes[2 * 2048 + 100] ^= 1;
        std::fs::write(path(dir.path()), &bytes).unwrap();
        let got: Vec<u32> = copies(dir.path(), 9, 77, 2048).unwrap().into_iter().map(|(r, _)| r).collect();
        assert_eq!(got, vec![0x400010, 0x400012], "the torn copy is skipped");
        assert!(copies(dir.path(), 9, 78, 2048).unwrap().is_empty(), "another checkpoint's file is not used");
        assert!(copies(dir.path(), 8, 77, 2048).unwrap().is_empty(), "another database's file is not used");
        remove(io.as_ref(), dir.path()).unwrap();
        assert!(copies(dir.path(), 9, 77, 2048).unwrap().is_empty());
    }
}
