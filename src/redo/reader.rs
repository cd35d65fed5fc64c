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
        return Err(Error::Corrupt {
            file: groups.first().map(|g| g.1.clone()).unwrap_or_default(),
            block: None,
            reason: format!(
                "the redo of log sequence {seq}, which recovery needs from the checkpoint, is in no online log"
            ),
        });
    }
    while let Some((_, path)) = groups.iter().find(|g| g.0 == seq) {
        let bytes = std::fs::read(path).map_err(|e| Error::io("read", path, e))?;
        end.files += 1;
        let mut at = offset as usize;
        while at < bytes.len() {
            let to_boundary = (LOG_BLOCK - at as u64 % LOG_BLOCK) % LOG_BLOCK;
            if to_boundary > 0 && to_boundary < MIN_RECORD_ROOM {
                at += to_boundary as usize;
                continue;
            }
            match record::read(&bytes[at..], seq, (at as u64).is_multiple_of(LOG_BLOCK)) {
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
