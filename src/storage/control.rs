//! The control file: what a database is made of. A JSON document (`control.json` in the
//! database directory) holding the database id, format version, block size, extent size,
//! the datafiles with their allocated size and free extents (the space map, as of the last
//! checkpoint: recovery rebuilds it after a crash), the last checkpoint's SCN and redo
//! position, the online redo log groups, and parameters set with `ALTER SYSTEM SET`.
//!
//! It is written whole to a temporary file and renamed over the old one, so a crash while
//! writing leaves the previous version. A directory without it is not a lioscope database.

use crate::error::{Error, Result};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The name of the control file inside a database directory.
pub const CONTROL_FILE: &str = "control.json";
/// What the `format` field must say.
pub const FORMAT_NAME: &str = "lioscope control file";
/// The current on-disk format version.
pub const FORMAT_VERSION: u32 = 1;

#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ControlFile {
    pub format: String,
    pub format_version: u32,
    pub db_id: u64,
    pub block_size: u32,
    /// Blocks in each (uniform) extent.
    pub extent_blocks: u32,
    /// The SCN of the last checkpoint.
    pub checkpoint_scn: u64,
    /// The redo position of the last checkpoint (an LSN): every change logged before it
    /// is in the datafiles; recovery applies the redo from here. 0: no redo yet.
    #[serde(default)]
    pub checkpoint_lsn: u64,
    /// The online redo log groups, in the order the log writer uses them.
    #[serde(default)]
    pub log_groups: Vec<u32>,
    /// Bytes of each online redo log file.
    #[serde(default)]
    pub log_file_size: u64,
    pub datafiles: Vec<DatafileEntry>,
    /// Parameters changed with ALTER SYSTEM SET, applied at open.
    pub parameters: BTreeMap<String, String>,
}

#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct DatafileEntry {
    pub number: u16,
    /// File name relative to the database directory.
    pub name: String,
    /// Blocks in use from the start of the file (extents are handed out below this).
    pub allocated_blocks: u32,
    /// First blocks of extents that were freed by DROP or TRUNCATE, reused first.
    pub free_extents: Vec<u32>,
}

impl ControlFile {
    pub fn path(dir: &Path) -> PathBuf {
        dir.join(CONTROL_FILE)
    }

    /// Reads and checks the control file of the database in `dir`.
    pub fn read(dir: &Path) -> Result<ControlFile> {
        let not_db = |reason: String| Error::NotADatabase { path: dir.to_owned(), reason };
        let control: ControlFile = super::read_json(dir, CONTROL_FILE, "a valid control file")?;
        if control.format != FORMAT_NAME {
            return Err(not_db(format!("{CONTROL_FILE} has format '{}'", control.format)));
        }
        if control.format_version != FORMAT_VERSION {
            return Err(not_db(format!(
                "format version {} (this lioscope reads {FORMAT_VERSION})",
                control.format_version
            )));
        }
        if !super::block::VALID_BLOCK_SIZES.contains(&(control.block_size as usize)) || control.extent_blocks == 0 {
            return Err(not_db(format!(
                "{CONTROL_FILE} has block size {} and extent size {}",
                control.block_size, control.extent_blocks
            )));
        }
        Ok(control)
    }

    /// Writes the control file atomically (temporary file, fsync, rename) through `io`.
    pub fn write(&self, io: &dyn super::io::Io, dir: &Path) -> Result<()> {
        super::write_json_with(io, &Self::path(dir), self)
    }
}
