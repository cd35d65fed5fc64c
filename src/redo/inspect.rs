//! Reading a database's online redo logs from outside the engine, with the database
//! closed: which log holds the newest sequence, and where each of its valid records
//! ends. What a tool that checks or dumps logs needs, and what crash tests use to cut a
//! log exactly at (or inside) a record.
//!
//! It reads the files only; it never writes them, and it reads them the way recovery
//! does (the same record reader), so a record it reports is one recovery would apply.

use super::{lsn, lsn_offset};
use crate::error::{Error, Result};
use crate::storage::control::ControlFile;
use std::path::{Path, PathBuf};

/// The online log holding the newest sequence of the database in `dir`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewestLog {
    pub path: PathBuf,
    pub seq: u32,
    /// The ends of its valid records, as byte offsets in the file, in log order.
    pub record_ends: Vec<u64>,
}

impl NewestLog {
    /// The first byte after the last valid record (the header's end when there is none).
    pub fn end(&self) -> u64 {
        self.record_ends.last().copied().unwrap_or(super::log::FILE_HEADER)
    }
}

/// The newest online log of the database in `dir`, with where its records end.
pub fn newest_log(dir: &Path) -> Result<NewestLog> {
    let db_id = ControlFile::read(dir)?.db_id;
    let mut newest: Option<(u32, PathBuf)> = None;
    let entries = std::fs::read_dir(dir).map_err(|e| Error::io("read directory", dir, e))?;
    for entry in entries {
        let path = entry.map_err(|e| Error::io("read directory", dir, e))?.path();
        if path.extension().is_some_and(|e| e == "log") {
            let header = super::log::read_header(&path, db_id)?;
            if newest.as_ref().is_none_or(|(seq, _)| header.seq > *seq) {
                newest = Some((header.seq, path));
            }
        }
    }
    let Some((seq, path)) = newest else {
        return Err(Error::Corrupt {
            file: dir.to_path_buf(),
            block: None,
            reason: "no online redo log in the directory".into(),
        });
    };
    let mut record_ends = Vec::new();
    super::reader::scan(&[(seq, path.clone())], lsn(seq, 0), |_, end, _| {
        record_ends.push(lsn_offset(end));
        Ok(())
    })?;
    Ok(NewestLog { path, seq, record_ends })
}
