//! Temporary space of a sort: one file under the database directory that holds every
//! run a sort spilled, one after another, written and read in large sequential calls.
//!
//! ```text
//!  sort_<pid>_<n>.tmp:  [run 0 records][run 1 records] ...
//!  record:              len u16 LE | rowid: rdba u32 BE, slot u16 BE | key (len bytes)
//! ```
//!
//! Invariants: writes go through the database's I/O layer (so tests can make one fail)
//! and are timed as `direct path write temp`; reads as `direct path read temp`. The file
//! is removed when its [`TempFile`] is dropped, whatever the outcome of the sort; files a
//! crash left behind are removed when the database opens ([`remove_stale`]).

use crate::error::{Error, Result};
use crate::index::block::RowId;
use crate::stats::{SessionStats, WaitEvent};
use crate::storage::io::{Io, IoFile};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// Bytes of a record before its key.
pub(super) const RECORD_HEADER: usize = 8;
/// Bytes gathered before one write call.
const WRITE_CALL_BYTES: usize = 1 << 20;
const PREFIX: &str = "sort_";
const SUFFIX: &str = ".tmp";

/// Files made by this process so far, for unique names.
static FILES_MADE: AtomicU64 = AtomicU64::new(0);

/// A sort's temporary file (see the module documentation).
#[derive(Debug)]
pub(super) struct TempFile {
    path: PathBuf,
    file: Arc<dyn IoFile>,
    /// The same file opened for reading, at the first read (reads bypass the I/O layer,
    /// as datafile reads do).
    reader: Option<std::fs::File>,
    /// Bytes written: where the next write goes.
    end: u64,
    /// Records gathered for the next write call.
    pending: Vec<u8>,
}

impl TempFile {
    /// Creates a new temporary file in `dir`.
    pub fn create(io: &dyn Io, dir: &Path) -> Result<TempFile> {
        let n = FILES_MADE.fetch_add(1, Ordering::Relaxed);
        let path = dir.join(format!("{PREFIX}{}_{n}{SUFFIX}", std::process::id()));
        let file = io.open(&path, true, false)?;
        Ok(TempFile { path, file, reader: None, end: 0, pending: Vec::new() })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Where the next record will be once everything gathered is written.
    pub fn position(&self) -> u64 {
        self.end + self.pending.len() as u64
    }

    /// Gathers one record, writing a full call's worth when there is one.
    pub fn append(&mut self, stats: &SessionStats, key: &[u8], rowid: RowId) -> Result<()> {
        let len = u16::try_from(key.len()).expect("a sort's keys are checked against the block's maximum first");
        self.pending.extend_from_slice(&len.to_le_bytes());
        self.pending.extend_from_slice(&rowid.rdba.to_be_bytes());
        self.pending.extend_from_slice(&rowid.slot.to_be_bytes());
        self.pending.extend_from_slice(key);
        if self.pending.len() >= WRITE_CALL_BYTES { self.flush(stats) } else { Ok(()) }
    }

    /// Writes what is gathered.
    pub fn flush(&mut self, stats: &SessionStats) -> Result<()> {
        if self.pending.is_empty() {
            return Ok(());
        }
        let _wait = stats.begin_wait(WaitEvent::DirectPathWriteTemp);
        self.file.write_at(&self.pending, self.end)?;
        self.end += self.pending.len() as u64;
        self.pending.clear();
        Ok(())
    }

    /// Reads into `buf` from `offset`, as much as the file holds up to `buf`'s length;
    /// returns how much.
    pub fn read_at(&mut self, stats: &SessionStats, buf: &mut [u8], offset: u64) -> Result<usize> {
        let _wait = stats.begin_wait(WaitEvent::DirectPathReadTemp);
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
}

impl Drop for TempFile {
    fn drop(&mut self) {
        if let Err(e) = std::fs::remove_file(&self.path)
            && e.kind() != std::io::ErrorKind::NotFound
        {
            eprintln!("lioscope: removing the sort's temporary file {}: {e}", self.path.display());
        }
    }
}

/// Removes the temporary files of sorts a crash left in `dir` (called at open, when no
/// sort of this database can be running).
pub fn remove_stale(dir: &Path) {
    let Ok(listing) = std::fs::read_dir(dir) else { return };
    for entry in listing.flatten() {
        let name = entry.file_name();
        if is_temp_file_name(&name.to_string_lossy()) {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// Whether `name` is the name of a sort's temporary file.
pub fn is_temp_file_name(name: &str) -> bool {
    name.starts_with(PREFIX) && name.ends_with(SUFFIX)
}
