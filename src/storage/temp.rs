//! Temporary files: the space a sort or a hash join spills to when its work area is
//! full, one file per spilling operation under the database directory, written at its
//! end and read back at any offset.
//!
//! ```text
//!  <purpose>_<pid>_<n>.tmp     purpose: "sort" (CREATE INDEX's sort), "hash" (HASH JOIN)
//! ```
//!
//! Invariants: writes go through the database's I/O layer (so tests can make one fail);
//! reads bypass it, as datafile reads do. A file is removed when its [`TempFile`] is
//! dropped, whatever the outcome of the operation; files a crash left behind are removed
//! when the database opens ([`remove_stale`]). What a file holds is its user's format:
//! this module only knows bytes. Waits (`direct path write temp`, `direct path read
//! temp`) are timed by the callers, which know the session.

use crate::error::{Error, Result};
use crate::storage::io::{Io, IoFile};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// What may spill, by the prefix of its files' names.
const PURPOSES: [&str; 2] = ["sort", "hash"];
const SUFFIX: &str = ".tmp";

/// Files made by this process so far, for unique names.
static FILES_MADE: AtomicU64 = AtomicU64::new(0);

/// One operation's temporary file (see the module documentation).
#[derive(Debug)]
pub struct TempFile {
    path: PathBuf,
    file: Arc<dyn IoFile>,
    /// The same file opened for reading, at the first read.
    reader: Option<std::fs::File>,
    /// Bytes written: where the next write goes.
    end: u64,
}

impl TempFile {
    /// Creates a new temporary file in `dir` for `purpose` (one of [`PURPOSES`]).
    pub fn create(io: &dyn Io, dir: &Path, purpose: &'static str) -> Result<TempFile> {
        debug_assert!(PURPOSES.contains(&purpose), "{purpose} is not a temporary file's purpose");
        let n = FILES_MADE.fetch_add(1, Ordering::Relaxed);
        let path = dir.join(format!("{purpose}_{}_{n}{SUFFIX}", std::process::id()));
        let file = io.open(&path, true, false)?;
        Ok(TempFile { path, file, reader: None, end: 0 })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Bytes written so far: where the next write goes.
    pub fn bytes_written(&self) -> u64 {
        self.end
    }

    /// Writes `bytes` at the end of the file, in one call; returns where they start.
    pub fn append(&mut self, bytes: &[u8]) -> Result<u64> {
        let at = self.end;
        self.file.write_at(bytes, at)?;
        self.end += bytes.len() as u64;
        Ok(at)
    }

    /// Reads into `buf` from `offset`, as much as the file holds up to `buf`'s length;
    /// returns how much.
    pub fn read_at(&mut self, buf: &mut [u8], offset: u64) -> Result<usize> {
        let reader = match &mut self.reader {
            Some(reader) => reader,
            empty => empty.insert(std::fs::File::open(&self.path).map_err(|e| Error::io("open", &self.path, e))?),
        };
        let mut got = 0;
        while got < buf.len() {
            match reader.read_at(&mut buf[got..], offset + got as u64) {
                Ok(0) => break,
                Ok(n) => got += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(Error::io("read", &self.path, e)),
            }
        }
        Ok(got)
    }

    /// Reads exactly `buf.len()` bytes from `offset`; a file shorter than that is damaged,
    /// and the error says so, naming `what` the bytes were.
    pub fn read_exact_at(&mut self, buf: &mut [u8], offset: u64, what: &str) -> Result<()> {
        let got = self.read_at(buf, offset)?;
        if got < buf.len() {
            return Err(Error::Corrupt {
                file: self.path.clone(),
                block: None,
                reason: format!("temporary file ends at byte {} inside {what}", offset + got as u64),
            });
        }
        Ok(())
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        if let Err(e) = std::fs::remove_file(&self.path)
            && e.kind() != std::io::ErrorKind::NotFound
        {
            eprintln!("lioscope: removing the temporary file {}: {e}", self.path.display());
        }
    }
}

/// Removes the temporary files a crash left in `dir` (called at open, when nothing of
/// this database can be spilling).
pub fn remove_stale(dir: &Path) {
    let Ok(listing) = std::fs::read_dir(dir) else { return };
    for entry in listing.flatten() {
        if is_temp_file_name(&entry.file_name().to_string_lossy()) {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// Whether `name` is the name of a temporary file.
pub fn is_temp_file_name(name: &str) -> bool {
    name.ends_with(SUFFIX) && PURPOSES.iter().any(|p| name.strip_prefix(p).is_some_and(|rest| rest.starts_with('_')))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_written_are_read_back_and_the_file_goes_with_its_owner() {
        let dir = tempfile::tempdir().unwrap();
        let io = crate::storage::io::os();
        let mut file = TempFile::create(&*io, dir.path(), "hash").unwrap();
        assert!(is_temp_file_name(&file.path().file_name().unwrap().to_string_lossy()));
        assert_eq!(file.append(b"hello ").unwrap(), 0);
        assert_eq!(file.append(b"world").unwrap(), 6);
        let mut buf = [0u8; 5];
        file.read_exact_at(&mut buf, 6, "a test record").unwrap();
        assert_eq!(&buf, b"world");
        let e = file.read_exact_at(&mut buf, 8, "a test record").unwrap_err().to_string();
        assert!(e.contains("ends at byte 11 inside a test record"), "{e}");
        let path = file.path().to_owned();
        drop(file);
        assert!(!path.exists());
    }

    #[test]
    fn stale_files_of_every_purpose_are_removed_and_nothing_else() {
        let dir = tempfile::tempdir().unwrap();
        for name in ["sort_1_2.tmp", "hash_7_0.tmp", "system01.dbf", "hashes.tmp"] {
            std::fs::write(dir.path().join(name), b"x").unwrap();
        }
        remove_stale(dir.path());
        let mut left: Vec<String> =
            std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into()).collect();
        left.sort();
        assert_eq!(left, ["hashes.tmp", "system01.dbf"]);
    }
}
