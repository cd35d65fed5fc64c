//! Reading the online redo logs back, in log order, from a checkpoint to the end of the
//! newest valid record: what instance recovery applies.
//!
//! The scan reads the sequence the checkpoint names from its position, then each next
//! sequence that some group's header holds, and stops at the first place that is not a
//! whole valid record of the sequence being read ([`super::record::read`]). Whatever
//! was written after a torn or lost write is never looked at: none of it was ever
//! acknowledged as durable, since every write starts on a fresh log block and commits
//! wait for the sync that follows their write.
//!
//! Padding: a write ends with zeros up to a log block boundary; four zero bytes where a
//! record's length would be mean "go on at the next boundary" mid-block, and "the end"
//! at a boundary. No record starts in the last three bytes of a log block (the writer
//! skips them), so fewer than four bytes before a boundary are always skipped.

use super::log::{FILE_HEADER, LOG_BLOCK, MIN_RECORD_ROOM};
use super::record::{self, Found, Record};
use super::{Lsn, lsn, lsn_offset, lsn_seq};
use crate::error::{Error, Result};
use std::path::PathBuf;

/// Where a scan ended and what it saw.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ScanEnd {
    /// Just past the last valid record (the start of the scan if there was none).
    pub end: Lsn,
    /// The newest sequence any group holds.
    pub newest_seq: u32,
    pub records: u64,
    pub bytes: u64,
    /// Log files read.
    pub files: u64,
}

/// Calls `each` with every record from `from` on (its start and end LSN), in order.
/// `groups`: each group's sequence and file.
pub fn scan(
    groups: &[(u32, PathBuf)],
    from: Lsn,
    mut each: impl FnMut(Lsn, Lsn, &Record<'_>) -> Result<()>,
) -> Result<ScanEnd> {
    let mut end =
        ScanEnd { end: from, newest_seq: groups.iter().map(|g| g.0).max().unwrap_or(0), ..Default::default() };
    let mut seq = lsn_seq(from);
    let mut offset = lsn_offset(from).max(FILE_HEADER);
    if seq == 0 {
        return Ok(end);
    }
    if !groups.iter().any(|g| g.0 == seq) {
        // A checkpoint taken as the log moved to a new sequence, whose header the log
        // writer had not written yet: nothing of that sequence ever reached the disk,
        // and everything before it is in the datafiles.
        if lsn_offset(from) <= FILE_HEADER && groups.iter().all(|g| g.0 < seq) {
            return Ok(end);
        }
        return Err(Error::Corrupt {
            file: groups.first().map(|g| g.1.clone()).unwrap_or_default(),
            block: None,
            reason: format!(
                "the redo of log sequence {seq}, which recovery needs from the checkpoint, is in no online log"
            ),
        });
    }
    while let Some((_, path)) = groups.iter().find(|g| g.0 == seq) {
        let mut window = Window::open(path)?;
        end.files += 1;
        let mut at = offset as usize;
        while (at as u64) < window.file_len {
            let to_boundary = (LOG_BLOCK - at as u64 % LOG_BLOCK) % LOG_BLOCK;
            if to_boundary > 0 && to_boundary < MIN_RECORD_ROOM {
                at += to_boundary as usize;
                continue;
            }
            let bytes = window.from(at as u64)?;
            match record::read(bytes, seq, (at as u64).is_multiple_of(LOG_BLOCK)) {
                Found::Record(r, len) => {
                    each(lsn(seq, at as u64), lsn(seq, (at + len) as u64), &r)?;
                    end.records += 1;
                    end.bytes += len as u64;
                    at += len;
                    end.end = lsn(seq, at as u64);
                }
                Found::Padding => at = (at as u64).next_multiple_of(LOG_BLOCK) as usize,
                Found::End => break,
            }
        }
        seq += 1;
        offset = FILE_HEADER;
    }
    Ok(end)
}

/// Bytes of a log file read ahead of the scan: more than the longest record.
const READ_AHEAD: u64 = 1 << 20;

/// A log file read in pieces as the scan moves on, so that a scan reads only as far as
/// the redo goes (a file is mostly zeros past its last record after a switch or crash).
struct Window {
    file: std::fs::File,
    path: PathBuf,
    file_len: u64,
    /// File offset of `buf[0]`.
    base: u64,
    buf: Vec<u8>,
}

impl Window {
    fn open(path: &std::path::Path) -> Result<Window> {
        let file = std::fs::File::open(path).map_err(|e| Error::io("open", path, e))?;
        let file_len = file.metadata().map_err(|e| Error::io("stat", path, e))?.len();
        Ok(Window { file, path: path.to_owned(), file_len, base: 0, buf: Vec::new() })
    }

    /// The file from offset `at` on: at least [`READ_AHEAD`] bytes of it, or to its end.
    /// `at` never moves back before an earlier call's.
    fn from(&mut self, at: u64) -> Result<&[u8]> {
        let want_end = (at + READ_AHEAD).min(self.file_len);
        if self.base + (self.buf.len() as u64) < want_end {
            use std::os::unix::fs::FileExt;
            // Drop what the scan has passed, then read what it needs next.
            let passed = ((at - self.base) as usize).min(self.buf.len());
            self.buf.drain(..passed);
            self.base += passed as u64;
            if self.base < at {
                self.buf.clear();
                self.base = at;
            }
            let have_end = self.base + self.buf.len() as u64;
            let read_end = (have_end + 4 * READ_AHEAD).min(self.file_len);
            let old = self.buf.len();
            self.buf.resize(old + (read_end - have_end) as usize, 0);
            self.file.read_exact_at(&mut self.buf[old..], have_end).map_err(|e| Error::io("read", &self.path, e))?;
        }
        Ok(&self.buf[(at - self.base) as usize..])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_checkpoint_at_the_start_of_a_sequence_never_written_needs_no_redo() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("redo01.log");
        std::fs::write(&path, vec![0u8; 4096]).unwrap();
        let groups = [(7, path)];
        let end = scan(&groups, lsn(8, FILE_HEADER), |_, _, _| panic!("no record")).unwrap();
        assert_eq!((end.records, end.newest_seq), (0, 7));
        let e = scan(&groups, lsn(8, FILE_HEADER + 100), |_, _, _| Ok(())).unwrap_err().to_string();
        assert!(e.contains("log sequence 8"), "{e}");
        assert!(scan(&groups, lsn(3, FILE_HEADER), |_, _, _| Ok(())).is_err(), "an overwritten sequence is an error");
    }
}
