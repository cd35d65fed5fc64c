//! The control file: what a database is made of. A JSON document (`control.json` in the
//! database directory) holding the database id, format version, block size, extent size,
//! the datafiles with their allocated size and free extents (the space map, as of the last
//! checkpoint: recovery rebuilds it after a crash), the last checkpoint's SCN and redo
//! position, the online redo log groups, and parameters set with `ALTER SYSTEM SET`.
//!
//! It is written whole to a temporary file and renamed over the old one, so a crash while
//! writing leaves the previous version. A directory without it is not a lioscope database.
//!
//! Reading it checks every field before anything uses it (a file damaged or edited by
//! hand is refused with an error naming `control.json` and the field, never a panic):
//! datafile numbers fit a block address (1 to 1023) and are unique, the first datafile
//! (where segments get their extents) is file 1, names are plain file names of the
//! directory, allocated sizes and free extents fit a file of 2^22 blocks, log groups are
//! unique and numbered from 1, `log_file_size` lies between [`MIN_LOG_FILE_SIZE`] and
//! [`MAX_LOG_FILE_SIZE`] (a redo offset has 32 bits), and the checkpoint's redo position
//! lies within a log file. Parameters are checked by the instance, which knows them.

use crate::error::{Error, Result};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The name of the control file inside a database directory.
pub const CONTROL_FILE: &str = "control.json";
/// What the `format` field must say.
pub const FORMAT_NAME: &str = "lioscope control file";
/// The current on-disk format version: 2 since each undo record names the transaction
/// that wrote it (an undo block is shared by a segment's successive transactions).
pub const FORMAT_VERSION: u32 = 2;

/// The smallest online redo log file.
pub const MIN_LOG_FILE_SIZE: u64 = 1 << 20;
/// The largest online redo log file: a redo position (LSN) is `sequence << 32 | offset`,
/// so every offset in a file, its end included, must fit in 32 bits.
pub const MAX_LOG_FILE_SIZE: u64 = u32::MAX as u64;
/// Datafile numbers a block address can hold (10 bits; 0 is no file).
pub const MAX_DATAFILE_NUMBER: u16 = 1023;
/// Blocks a datafile can hold (a block address has 22 bits for the block).
pub const MAX_FILE_BLOCKS: u32 = 1 << 22;

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
        if !super::block::VALID_BLOCK_SIZES.contains(&(control.block_size as usize))
            || control.extent_blocks == 0
            || control.extent_blocks >= MAX_FILE_BLOCKS
        {
            return Err(not_db(format!(
                "{CONTROL_FILE} has block size {} and extent size {}",
                control.block_size, control.extent_blocks
            )));
        }
        control.check_datafiles().map_err(not_db)?;
        control.check_redo().map_err(not_db)?;
        Ok(control)
    }

    /// Checks the datafile entries; the error names the field.
    fn check_datafiles(&self) -> std::result::Result<(), String> {
        let bad = |field: String, why: String| format!("{CONTROL_FILE}: {field} {why}");
        match self.datafiles.first() {
            None => return Err(bad("datafiles".into(), "is empty".into())),
            Some(first) if first.number != 1 => {
                return Err(bad(
                    "datafiles[0].number".into(),
                    format!("is {}: the first datafile, where segments get their extents, is file 1", first.number),
                ));
            }
            Some(_) => {}
        }
        for (i, entry) in self.datafiles.iter().enumerate() {
            let field = |name: &str| format!("datafiles[{i}].{name}");
            if entry.number == 0 || entry.number > MAX_DATAFILE_NUMBER {
                return Err(bad(field("number"), format!("{} is outside 1..={MAX_DATAFILE_NUMBER}", entry.number)));
            }
            if self.datafiles[..i].iter().any(|d| d.number == entry.number) {
                return Err(bad(field("number"), format!("{} names a datafile listed before", entry.number)));
            }
            if !is_plain_file_name(&entry.name) {
                return Err(bad(
                    field("name"),
                    format!("'{}' is not a file name in the database directory", entry.name),
                ));
            }
            if self.datafiles[..i].iter().any(|d| d.name == entry.name) {
                return Err(bad(field("name"), format!("'{}' names a datafile listed before", entry.name)));
            }
            if entry.allocated_blocks == 0 || entry.allocated_blocks > MAX_FILE_BLOCKS {
                return Err(bad(
                    field("allocated_blocks"),
                    format!("{} is outside 1..={MAX_FILE_BLOCKS}", entry.allocated_blocks),
                ));
            }
            for (j, &first) in entry.free_extents.iter().enumerate() {
                if first == 0
                    || !first.is_multiple_of(self.extent_blocks)
                    || u64::from(first) + u64::from(self.extent_blocks) > u64::from(entry.allocated_blocks)
                {
                    return Err(bad(
                        format!("{}[{j}]", field("free_extents")),
                        format!("{first} is not an extent below the {} blocks allocated", entry.allocated_blocks),
                    ));
                }
                if entry.free_extents[..j].contains(&first) {
                    return Err(bad(format!("{}[{j}]", field("free_extents")), format!("{first} is listed twice")));
                }
            }
        }
        Ok(())
    }

    /// Checks the online log groups, their size and the checkpoint's redo position.
    fn check_redo(&self) -> std::result::Result<(), String> {
        let bad = |field: String, why: String| format!("{CONTROL_FILE}: {field} {why}");
        for (i, &group) in self.log_groups.iter().enumerate() {
            if group == 0 {
                return Err(bad(format!("log_groups[{i}]"), "is 0: groups are numbered from 1".into()));
            }
            if self.log_groups[..i].contains(&group) {
                return Err(bad(format!("log_groups[{i}]"), format!("{group} is listed twice")));
            }
        }
        if self.log_groups.is_empty() {
            // A database made before redo existed: its logs are made at the next open.
            if self.checkpoint_lsn != 0 {
                return Err(bad("checkpoint_lsn".into(), "is set, but there are no log_groups".into()));
            }
            return Ok(());
        }
        if !(MIN_LOG_FILE_SIZE..=MAX_LOG_FILE_SIZE).contains(&self.log_file_size) {
            return Err(bad(
                "log_file_size".into(),
                format!(
                    "{} is outside {MIN_LOG_FILE_SIZE}..={MAX_LOG_FILE_SIZE} (a redo offset has 32 bits)",
                    self.log_file_size
                ),
            ));
        }
        let (seq, offset) = (self.checkpoint_lsn >> 32, self.checkpoint_lsn & u64::from(u32::MAX));
        if self.checkpoint_lsn != 0 && (seq == 0 || offset > self.log_file_size) {
            return Err(bad(
                "checkpoint_lsn".into(),
                format!(
                    "{} (sequence {seq}, offset {offset}) is not a position in a log file of {} bytes",
                    self.checkpoint_lsn, self.log_file_size
                ),
            ));
        }
        Ok(())
    }

    /// Writes the control file atomically (temporary file, fsync, rename) through `io`.
    pub fn write(&self, io: &dyn super::io::Io, dir: &Path) -> Result<()> {
        super::write_json_with(io, &Self::path(dir), self)
    }
}

/// Whether `name` names a file directly in the database directory: not empty, no
/// directory part, not `.` or `..`, not one of the database's own documents.
fn is_plain_file_name(name: &str) -> bool {
    !name.is_empty() && !name.contains(['/', '\\', '\0']) && name != "." && name != ".." && name != CONTROL_FILE
}
