//! Reading the online redo logs back, in log order, from a checkpoint to the end of the
//! newest valid record: what instance recovery applies.
//!
//! The scan reads the sequence the checkpoint names from its position, then each next
//! sequence up to the newest one any group's header holds, and stops in a sequence at the
//! first place that is not a whole valid record of it ([`super::record::read`]).
//!
//! Where a sequence ends is checked, never assumed:
//! - **An older sequence** must be read to the end its successor's header records (the
//!   log writer writes there where the sequence it left ended). One that stops short has
//!   a damaged record, and everything after it in that sequence and the later ones would
//!   be lost: the scan fails with a corruption error naming the file, the sequence and
//!   the offset, rather than apply the later sequences over a gap. A sequence missing
//!   between the checkpoint's and the newest is the same error.
//! - **The newest sequence** ends where its last write was torn or cut by the crash:
//!   nothing written after a torn or lost write was ever acknowledged as durable, since
//!   every write starts on a fresh log block and commits wait for the sync that follows
//!   it. If valid records of the sequence lie beyond the end found (damage inside an
//!   earlier write, or a torn write with sectors of it intact), the scan says so
//!   ([`ScanEnd::damage`]) so that recovery can report it.
//!
//! Padding: a write ends with zeros up to a log block boundary; four zero bytes where a
//! record's length would be mean "go on at the next boundary" mid-block (and the rest of
//! the block must be zeros, or the block is damaged), and "the end" at a boundary. No
//! record starts in the last three bytes of a log block (the writer skips them), so fewer
//! than four bytes before a boundary are always skipped.

use super::record::{self, Found, Record};
use super::{FILE_HEADER, LOG_BLOCK, MIN_RECORD_ROOM};
use super::{Lsn, lsn, lsn_offset, lsn_seq};
use crate::error::{Error, Result};
use std::path::{Path, PathBuf};

/// One online log file as the scan sees it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LogFile {
    /// The sequence its header holds (0: never used, or a header that could not be read).
    pub seq: u32,
    pub path: PathBuf,
    /// Where the records of sequence `seq - 1` ended, as its header records (0: not recorded).
    pub prev_end: u64,
    /// Why its header could not be read, if it could not.
    pub damaged: Option<String>,
}

impl LogFile {
    /// A file holding `seq` whose header records nothing about the sequence before.
    pub fn holding(seq: u32, path: PathBuf) -> LogFile {
        LogFile { seq, path, ..Default::default() }
    }
}

/// Where a scan ended and what it saw.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ScanEnd {
    /// Just past the last valid record (the start of the scan if there was none).
    pub end: Lsn,
    /// The newest sequence any group holds.
    pub newest_seq: u32,
    pub records: u64,
    pub bytes: u64,
    /// Log files read.
    pub files: u64,
    /// Valid records of the newest sequence found beyond where its records stopped.
    pub damage: Option<TailDamage>,
}

/// A stretch of the newest sequence that could not be read, with valid records after it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TailDamage {
    pub path: PathBuf,
    pub seq: u32,
    /// Where the valid records stopped.
    pub offset: u64,
    /// The first valid record found beyond it.
    pub next_valid: u64,
}

impl std::fmt::Display for TailDamage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}: log sequence {} could not be read past byte {}, but a valid record of it starts at byte {}: \
             the redo between (never acknowledged if the crash tore the last write) was not applied",
            self.path.display(),
            self.seq,
            self.offset,
            self.next_valid
        )
    }
}

/// Calls `each` with every record from `from` on (its start and end LSN), in order.
/// `groups`: each online log's file, sequence and header facts.
pub fn scan(
    groups: &[LogFile],
    from: Lsn,
    mut each: impl FnMut(Lsn, Lsn, &Record<'_>) -> Result<()>,
) -> Result<ScanEnd> {
    let newest_seq = groups.iter().map(|g| g.seq).max().unwrap_or(0);
    let mut end = ScanEnd { end: from, newest_seq, ..Default::default() };
    let mut seq = lsn_seq(from);
    let mut offset = lsn_offset(from).max(FILE_HEADER);
    if seq == 0 {
        return Ok(end);
    }
    if !groups.iter().any(|g| g.seq == seq) {
        // A checkpoint taken as the log moved to a new sequence, whose header the log
        // writer had not written yet: nothing of that sequence ever reached the disk,
        // and everything before it is in the datafiles.
        if lsn_offset(from) <= FILE_HEADER && groups.iter().all(|g| g.seq < seq) {
            return Ok(end);
        }
        return Err(missing(groups, seq, "which recovery needs from the checkpoint"));
    }
    while seq <= newest_seq {
        let Some(file) = groups.iter().find(|g| g.seq == seq) else {
            return Err(missing(groups, seq, &format!("which lies between the checkpoint and sequence {newest_seq}")));
        };
        let mut window = Window::open(&file.path)?;
        end.files += 1;
        let stopped = read_sequence(&mut window, seq, offset, &mut end, &mut each)?;
        if seq < newest_seq {
            let recorded_end = groups.iter().find(|g| g.seq == seq + 1).map_or(0, |g| g.prev_end);
            if stopped < recorded_end {
                return Err(Error::Corrupt {
                    file: file.path.clone(),
                    block: None,
                    reason: format!(
                        "log sequence {seq} has no valid record at byte {stopped}, but it ran to byte \
                         {recorded_end} (sequence {} says so): a damaged record, and the redo after it \
                         is needed",
                        seq + 1
                    ),
                });
            }
        } else {
            end.damage = valid_record_beyond(&mut window, seq, stopped)?.map(|next_valid| TailDamage {
                path: file.path.clone(),
                seq,
                offset: stopped,
                next_valid,
            });
        }
        seq += 1;
        offset = FILE_HEADER;
    }
    Ok(end)
}

/// Reads sequence `seq`'s records from `offset` on, calling `each`; returns the offset
/// where they stopped (at a log block boundary, or the end of the file).
fn read_sequence(
    window: &mut Window,
    seq: u32,
    offset: u64,
    end: &mut ScanEnd,
    each: &mut impl FnMut(Lsn, Lsn, &Record<'_>) -> Result<()>,
) -> Result<u64> {
    let mut at = offset;
    while at < window.file_len {
        let to_boundary = (LOG_BLOCK - at % LOG_BLOCK) % LOG_BLOCK;
        if to_boundary > 0 && to_boundary < MIN_RECORD_ROOM {
            at += to_boundary;
            continue;
        }
        let bytes = window.from(at)?;
        match record::read(bytes, seq, to_boundary == 0) {
            Found::Record(r, len) => {
                each(lsn(seq, at), lsn(seq, at + len as u64), &r)?;
                end.records += 1;
                end.bytes += len as u64;
                at += len as u64;
                end.end = lsn(seq, at);
            }
            // Zeros to the boundary, or a damaged block.
            Found::Padding if bytes[..(to_boundary as usize).min(bytes.len())].iter().all(|&b| b == 0) => {
                at = at.next_multiple_of(LOG_BLOCK)
            }
            Found::Padding | Found::End => break,
        }
    }
    Ok(at)
}

/// The offset of the first valid record of `seq` starting at a log block boundary after
/// `stopped` (every write starts on one), if any.
fn valid_record_beyond(window: &mut Window, seq: u32, stopped: u64) -> Result<Option<u64>> {
    let mut at = (stopped + 1).next_multiple_of(LOG_BLOCK);
    while at + record::RECORD_HEADER as u64 <= window.file_len {
        if let Found::Record(..) = record::read(window.from(at)?, seq, true) {
            return Ok(Some(at));
        }
        at += LOG_BLOCK;
    }
    Ok(None)
}

/// The error for sequence `seq`, needed, that no online log holds; it names the logs
/// whose headers could not be read, which may have held it.
fn missing(groups: &[LogFile], seq: u32, why: &str) -> Error {
    let damaged: Vec<String> =
        groups.iter().filter_map(|g| g.damaged.as_ref().map(|d| format!("{}: {d}", file_name_of(&g.path)))).collect();
    let first_damaged = groups.iter().find(|g| g.damaged.is_some());
    let mut reason = format!("the redo of log sequence {seq}, {why}, is in no online log");
    if !damaged.is_empty() {
        reason.push_str(&format!(" (headers that could not be read: {})", damaged.join("; ")));
    }
    Error::Corrupt {
        file: first_damaged.or(groups.first()).map(|g| g.path.clone()).unwrap_or_default(),
        block: None,
        reason,
    }
}

fn file_name_of(path: &Path) -> String {
    path.file_name().map_or_else(|| path.display().to_string(), |n| n.to_string_lossy().into_owned())
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
        let groups = [LogFile::holding(7, path)];
        let end = scan(&groups, lsn(8, FILE_HEADER), |_, _, _| panic!("no record")).unwrap();
        assert_eq!((end.records, end.newest_seq), (0, 7));
        let e = scan(&groups, lsn(8, FILE_HEADER + 100), |_, _, _| Ok(())).unwrap_err().to_string();
        assert!(e.contains("log sequence 8"), "{e}");
        assert!(scan(&groups, lsn(3, FILE_HEADER), |_, _, _| Ok(())).is_err(), "an overwritten sequence is an error");
    }
}
