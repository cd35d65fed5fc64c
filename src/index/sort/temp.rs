//! A sort's runs in its temporary file ([`crate::storage::temp`]): every run the sort
//! spilled, one after another, written and read in large sequential calls.
//!
//! ```text
//!  sort_<pid>_<n>.tmp:  [run 0 records][run 1 records] ...
//!  record:              len u16 LE | rowid: rdba u32 BE, slot u16 BE | key (len bytes)
//! ```
//!
//! Invariants: writes are timed as `direct path write temp`, reads as `direct path read
//! temp`; the file goes when the sort's [`TempFile`] is dropped.

use crate::error::Result;
use crate::index::block::RowId;
use crate::stats::{SessionStats, WaitEvent};
use crate::storage::io::Io;
use std::path::Path;

/// Bytes of a record before its key.
pub(super) const RECORD_HEADER: usize = 8;
/// Bytes gathered before one write call.
const WRITE_CALL_BYTES: usize = 1 << 20;

/// A sort's temporary file (see the module documentation).
#[derive(Debug)]
pub(super) struct TempFile {
    file: crate::storage::temp::TempFile,
    /// Records gathered for the next write call.
    pending: Vec<u8>,
}

impl TempFile {
    /// Creates a new temporary file in `dir`.
    pub fn create(io: &dyn Io, dir: &Path) -> Result<TempFile> {
        Ok(TempFile { file: crate::storage::temp::TempFile::create(io, dir, "sort")?, pending: Vec::new() })
    }

    pub fn path(&self) -> &Path {
        self.file.path()
    }

    /// Where the next record will be once everything gathered is written.
    pub fn position(&self) -> u64 {
        self.file.bytes_written() + self.pending.len() as u64
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
        self.file.append(&self.pending)?;
        self.pending.clear();
        Ok(())
    }

    /// Reads into `buf` from `offset`, as much as the file holds up to `buf`'s length;
    /// returns how much.
    pub fn read_at(&mut self, stats: &SessionStats, buf: &mut [u8], offset: u64) -> Result<usize> {
        let _wait = stats.begin_wait(WaitEvent::DirectPathReadTemp);
        self.file.read_at(buf, offset)
    }
}
