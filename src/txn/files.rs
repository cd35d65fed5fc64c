//! The files transactions work in: a database's first datafile and its undo tablespace,
//! created together with the control file that lists them, and opened into the buffer
//! cache. The database creates and opens its files through these functions (its redo
//! logs and dictionary beside them); so does the fixture of the tests of the layers from
//! here up (`fixture`), which works on the same files without a database around them.

use super::undo::{self, Undo};
use crate::buffer::BufferCache;
use crate::error::Result;
use crate::storage::control::{ControlFile, DatafileEntry, FORMAT_NAME, FORMAT_VERSION};
use crate::storage::datafile::DataFile;
use crate::storage::io::Io;
use std::path::Path;
use std::sync::Arc;

/// Name of the first datafile.
pub const FIRST_DATAFILE: &str = "users01.dbf";

/// What the files are created with.
#[derive(Debug, Clone, Copy)]
pub struct Sizes {
    pub block_size: usize,
    /// Bytes in an extent of a segment (a multiple of the block size).
    pub extent_size: usize,
    /// Bytes of the undo tablespace at creation, and the most it grows to.
    pub undo_size: u64,
    pub undo_max: u64,
}

/// Creates in `dir` the first datafile (its first extent holds its header, so extents
/// stay aligned) and the undo tablespace of database `db_id`, and returns the control
/// file that lists them, not yet written, with no online redo log in it.
pub fn create(io: &dyn Io, dir: &Path, db_id: u64, sizes: &Sizes) -> Result<ControlFile> {
    let extent_blocks = (sizes.extent_size / sizes.block_size) as u32;
    let datafile = DataFile::create(io, &dir.join(FIRST_DATAFILE), 1, sizes.block_size, db_id)?;
    datafile.ensure_blocks(extent_blocks)?;
    datafile.sync()?;
    let undo_file = undo::create_tablespace(io, dir, sizes.block_size, db_id, sizes.undo_size, sizes.undo_max)?;
    Ok(ControlFile {
        format: FORMAT_NAME.into(),
        format_version: FORMAT_VERSION,
        db_id,
        block_size: sizes.block_size as u32,
        extent_blocks,
        checkpoint_scn: 1,
        checkpoint_lsn: 0,
        log_groups: Vec::new(),
        log_file_size: 0,
        datafiles: vec![
            DatafileEntry {
                number: 1,
                name: FIRST_DATAFILE.into(),
                allocated_blocks: extent_blocks,
                free_extents: Vec::new(),
            },
            undo_file,
        ],
        parameters: Default::default(),
    })
}

/// Opens the datafiles `control` lists (in `dir`; with O_DIRECT when `direct`) and
/// attaches them to `cache`.
pub fn open_datafiles(
    io: &dyn Io,
    dir: &Path,
    control: &ControlFile,
    direct: bool,
    cache: &BufferCache,
) -> Result<Vec<Arc<DataFile>>> {
    let block_size = control.block_size as usize;
    let mut datafiles = Vec::new();
    for entry in &control.datafiles {
        let path = dir.join(&entry.name);
        let file = Arc::new(DataFile::open(io, &path, entry.number, block_size, control.db_id, direct)?);
        cache.attach_file(file.clone());
        datafiles.push(file);
    }
    Ok(datafiles)
}

/// Opens the undo tablespace, one of `datafiles` (attached to `cache`), to grow up to
/// `max_bytes`.
pub fn open_undo(cache: &BufferCache, datafiles: &[Arc<DataFile>], max_bytes: u64) -> Result<Undo> {
    let file = datafiles.iter().find(|f| f.number() == undo::UNDO_FILE_NO).expect("the control file lists undo");
    Undo::open(cache, file.clone(), max_bytes)
}
