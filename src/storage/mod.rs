//! On-disk structures: the control file, datafiles of fixed-size blocks, the block and
//! row formats, and segments (extent map and high-water mark).
//!
//! Nothing here counts statistics or knows about sessions; the buffer cache above reads
//! and writes blocks through [`datafile::DataFile`] and interprets them with [`block`],
//! [`row`] and [`segment`].

pub mod block;
pub mod control;
pub mod datafile;
pub mod row;
pub mod segment;

use crate::error::{Error, Result};
use std::path::Path;

/// Replaces `path` with `contents` so that a crash leaves either the old or the new file:
/// writes a temporary file beside it, syncs it, then renames it over `path`.
pub fn write_atomically(path: &Path, contents: &[u8]) -> Result<()> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    let tmp = Path::new(&tmp);
    std::fs::write(tmp, contents).map_err(|e| Error::io("write", tmp, e))?;
    std::fs::File::open(tmp).and_then(|f| f.sync_all()).map_err(|e| Error::io("sync", tmp, e))?;
    std::fs::rename(tmp, path).map_err(|e| Error::io("rename", path, e))
}
