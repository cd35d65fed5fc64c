//! Datafiles: files of fixed-size blocks, read one block at a time (`pread`) or many
//! adjacent blocks in one call (`preadv` into separate buffers, as a multiblock read does).
//!
//! Block 0 is the file header: the common block header (type `FileHeader`) followed by a
//! magic string, the database id, the file number and the block size, so that a file from
//! another database, or one that is not a datafile at all, is refused at open.
//!
//! Two ways to keep the operating system's page cache out of cold-cache experiments:
//! `filesystemio_options = directio` opens the file with `O_DIRECT` (buffers must be
//! aligned, which the buffer cache guarantees; refused by file systems without it, such as
//! tmpfs), and with the default (`none`) [`DataFile::drop_os_cache`] asks the kernel to drop
//! the file's cached pages (`posix_fadvise(POSIX_FADV_DONTNEED)` after `fdatasync`), which
//! `ALTER SYSTEM FLUSH BUFFER_CACHE` calls.

use super::block::{self, BlockType};
use super::io::{Io, IoFile};
use crate::error::{Error, Result};
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::Arc;

const MAGIC: &[u8; 16] = b"LIOSCOPE DATAFIL";
const OFF_MAGIC: usize = block::HEADER_LEN;
const OFF_DB_ID: usize = OFF_MAGIC + 16;
const OFF_FILE_NO: usize = OFF_DB_ID + 8;
const OFF_BLOCK_SIZE: usize = OFF_FILE_NO + 2;

/// One open datafile: written through the I/O layer, read from its descriptor.
#[derive(Debug)]
pub struct DataFile {
    file: Arc<dyn IoFile>,
    /// The file number in block addresses (1-based, as Oracle's relative file number).
    number: u16,
    block_size: usize,
}

impl DataFile {
    /// Creates a datafile with its header block; fails if the file exists.
    pub fn create(io: &dyn Io, path: &Path, number: u16, block_size: usize, db_id: u64) -> Result<DataFile> {
        let file = io.open(path, true, false)?;
        let mut header = vec![0u8; block_size];
        block::format_block(&mut header, BlockType::FileHeader, block::rdba(number, 0), 0);
        header[OFF_MAGIC..OFF_MAGIC + 16].copy_from_slice(MAGIC);
        header[OFF_DB_ID..OFF_DB_ID + 8].copy_from_slice(&db_id.to_le_bytes());
        header[OFF_FILE_NO..OFF_FILE_NO + 2].copy_from_slice(&number.to_le_bytes());
        header[OFF_BLOCK_SIZE..OFF_BLOCK_SIZE + 4].copy_from_slice(&(block_size as u32).to_le_bytes());
        block::seal(&mut header);
        file.write_at(&header, 0)?;
        Ok(DataFile { file, number, block_size })
    }

    /// Opens a datafile and checks its header against what the control file says.
    pub fn open(
        io: &dyn Io,
        path: &Path,
        number: u16,
        block_size: usize,
        db_id: u64,
        direct_io: bool,
    ) -> Result<DataFile> {
        check_header(path, number, block_size, db_id)?;
        let file = io.open(path, false, direct_io)?;
        Ok(DataFile { file, number, block_size })
    }

    pub fn path(&self) -> &Path {
        self.file.path()
    }

    pub fn number(&self) -> u16 {
        self.number
    }

    /// Reads one block into `buf`.
    pub fn read_block(&self, block_no: u32, buf: &mut [u8]) -> Result<()> {
        debug_assert_eq!(buf.len(), self.block_size);
        let mut got = 0;
        while got < buf.len() {
            let rest = &mut buf[got..];
            // SAFETY: `rest` is a live, writable buffer of the length given.
            let n = unsafe {
                libc::pread(
                    self.file.fd(),
                    rest.as_mut_ptr().cast(),
                    rest.len(),
                    (self.offset(block_no) + got as u64) as libc::off_t,
                )
            };
            match n {
                n if n > 0 => got += n as usize,
                0 => {
                    let e = std::io::Error::new(std::io::ErrorKind::UnexpectedEof, "block past the end of the file");
                    return Err(Error::io("read", self.path(), e));
                }
                _ => {
                    let e = std::io::Error::last_os_error();
                    if e.kind() != std::io::ErrorKind::Interrupted {
                        return Err(Error::io("read", self.path(), e));
                    }
                }
            }
        }
        Ok(())
    }

    /// Reads adjacent blocks starting at `first` into `bufs` with one `preadv` call (more
    /// only if the kernel returns a short read).
    pub fn read_blocks(&self, first: u32, bufs: &mut [&mut [u8]]) -> Result<()> {
        let iov: Vec<libc::iovec> =
            bufs.iter_mut().map(|b| libc::iovec { iov_base: b.as_mut_ptr().cast(), iov_len: b.len() }).collect();
        let want = bufs.len() * self.block_size;
        // SAFETY: every iovec points at a distinct live `&mut [u8]` of its stated length,
        // borrowed mutably for the whole call, so the kernel writes only into memory we own.
        let got = unsafe {
            libc::preadv(self.file.fd(), iov.as_ptr(), iov.len() as libc::c_int, self.offset(first) as libc::off_t)
        };
        if got < 0 {
            return Err(Error::io("read", self.path(), std::io::Error::last_os_error()));
        }
        let got = got as usize;
        if got < want {
            // Short read: finish block by block (still an error if the file ends early).
            let done = got / self.block_size;
            for (i, buf) in bufs.iter_mut().enumerate().skip(done) {
                self.read_block(first + i as u32, buf)?;
            }
        }
        Ok(())
    }

    /// Writes one block.
    pub fn write_block(&self, block_no: u32, buf: &[u8]) -> Result<()> {
        self.file.write_at(buf, self.offset(block_no))
    }

    /// Grows (or keeps) the file to hold `blocks` blocks, with their disk space reserved
    /// now, so that a full disk fails the statement that needs the space rather than
    /// the database writer's later write of its blocks.
    pub fn ensure_blocks(&self, blocks: u32) -> Result<()> {
        self.file.allocate(blocks as u64 * self.block_size as u64)
    }

    /// Flushes written blocks to stable storage.
    pub fn sync(&self) -> Result<()> {
        self.file.sync()
    }

    /// Syncs, then asks the kernel to drop this file's pages from its page cache, so that
    /// the next read of any block really reads the device.
    pub fn drop_os_cache(&self) -> Result<()> {
        self.sync()?;
        // SAFETY: posix_fadvise only reads its integer arguments; the fd is open and owned.
        let rc = unsafe { libc::posix_fadvise(self.file.fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
        if rc != 0 {
            return Err(Error::io("posix_fadvise", self.path(), std::io::Error::from_raw_os_error(rc)));
        }
        Ok(())
    }

    fn offset(&self, block_no: u32) -> u64 {
        block_no as u64 * self.block_size as u64
    }
}

fn check_header(path: &Path, number: u16, block_size: usize, db_id: u64) -> Result<()> {
    let not_ours = |reason: String| Error::Corrupt { file: path.to_owned(), block: Some(0), reason };
    let file = File::open(path).map_err(|e| Error::io("open", path, e))?;
    let mut header = vec![0u8; block_size];
    file.read_exact_at(&mut header, 0)
        .map_err(|_| not_ours("not a lioscope datafile (file shorter than one block)".into()))?;
    if &header[OFF_MAGIC..OFF_MAGIC + 16] != MAGIC {
        return Err(not_ours("not a lioscope datafile (no datafile header)".into()));
    }
    block::verify(&header, block::rdba(number, 0)).map_err(|r| not_ours(format!("datafile header: {r}")))?;
    let stored_db = u64::from_le_bytes(header[OFF_DB_ID..OFF_DB_ID + 8].try_into().expect("8 bytes"));
    if stored_db != db_id {
        return Err(not_ours(format!("datafile belongs to database {stored_db:#x}, not {db_id:#x}")));
    }
    let stored_bs = u32::from_le_bytes(header[OFF_BLOCK_SIZE..OFF_BLOCK_SIZE + 4].try_into().expect("4 bytes"));
    if stored_bs as usize != block_size {
        return Err(not_ours(format!("datafile block size {stored_bs}, control file says {block_size}")));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn multiblock_read_fills_each_buffer() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.dbf");
        let f = DataFile::create(&crate::storage::io::OsIo, &path, 1, 2048, 42).unwrap();
        f.ensure_blocks(16).unwrap();
        for b in 1..16u32 {
            f.write_block(b, &vec![b as u8; 2048]).unwrap();
        }
        let mut storage = vec![vec![0u8; 2048]; 5];
        let mut bufs: Vec<&mut [u8]> = storage.iter_mut().map(|v| v.as_mut_slice()).collect();
        f.read_blocks(3, &mut bufs).unwrap();
        for (i, v) in storage.iter().enumerate() {
            assert!(v.iter().all(|&x| x == 3 + i as u8));
        }
    }

    #[test]
    fn foreign_files_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.dbf");
        std::fs::write(&path, vec![7u8; 8192]).unwrap();
        let e = DataFile::open(&crate::storage::io::OsIo, &path, 1, 8192, 1, false).unwrap_err().to_string();
        assert!(e.contains("not a lioscope datafile"), "{e}");
        let path2 = dir.path().join("g.dbf");
        DataFile::create(&crate::storage::io::OsIo, &path2, 1, 8192, 1).unwrap();
        let e = DataFile::open(&crate::storage::io::OsIo, &path2, 1, 8192, 2, false).unwrap_err().to_string();
        assert!(e.contains("belongs to database"), "{e}");
    }
}
