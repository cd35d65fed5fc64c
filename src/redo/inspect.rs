//! Reading a database's online redo logs from outside the engine, with the database
//! closed: which sequence each log holds, and where each of its valid records ends. What
//! a tool that checks or dumps logs needs, and what crash tests use to cut or damage a
//! log exactly at (or inside) a record.
//!
//! It reads the files only; it never writes them, and it reads them the way recovery
//! does (the same record reader), so a record it reports is one recovery would apply.

pub use super::reader::TailDamage;
use super::{lsn, lsn_offset};
use crate::error::{Error, Result};
use crate::storage::control::ControlFile;
use std::path::{Path, PathBuf};

/// One online log of a closed database: its file, the sequence it holds, and where its
/// valid records end.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OnlineLog {
    pub path: PathBuf,
    pub seq: u32,
    /// The ends of its valid records, as byte offsets in the file, in log order.
    pub record_ends: Vec<u64>,
}

impl OnlineLog {
    /// The first byte after the last valid record (the header's end when there is none).
    pub fn end(&self) -> u64 {
        self.record_ends.last().copied().unwrap_or(super::FILE_HEADER)
    }
}

/// Every online log of the database in `dir` whose header can be read and that has
/// held a sequence, oldest sequence first, with where its records end.
pub fn online_logs(dir: &Path) -> Result<Vec<OnlineLog>> {
    let db_id = ControlFile::read(dir)?.db_id;
    let mut logs = Vec::new();
    let entries = std::fs::read_dir(dir).map_err(|e| Error::io("read directory", dir, e))?;
    for entry in entries {
        let path = entry.map_err(|e| Error::io("read directory", dir, e))?.path();
        if path.extension().is_some_and(|e| e == "log")
            && let Ok(header) = super::log::read_header(&path, db_id)
            && header.seq != 0
        {
            let mut record_ends = Vec::new();
            let file = super::reader::LogFile::holding(header.seq, path.clone());
            super::reader::scan(&[file], lsn(header.seq, 0), |_, end, _| {
                record_ends.push(lsn_offset(end));
                Ok(())
            })?;
            logs.push(OnlineLog { path, seq: header.seq, record_ends });
        }
    }
    logs.sort_by_key(|l| l.seq);
    Ok(logs)
}

/// The online log holding the newest sequence of the database in `dir`, with where its
/// records end.
pub fn newest_log(dir: &Path) -> Result<OnlineLog> {
    online_logs(dir)?.pop().ok_or_else(|| Error::Corrupt {
        file: dir.to_path_buf(),
        block: None,
        reason: "no online redo log in the directory".into(),
    })
}
