//! On-disk structures: the control file, datafiles of fixed-size blocks, the block and
//! row formats and a data block's ITL slots (written through [`block_write::BlockWrite`],
//! which names the bytes a change writes), the compression units of compressed
//! tables ([`hcc`]), segments (extent map and high-water
//! mark), the space of the datafiles ([`space`]: extents handed out and taken back); how
//! the database's JSON documents (the control file, the dictionary) are read and
//! replaced atomically; the recovery double-write file ([`doublewrite`]); the temporary
//! files sorts and hash joins spill to ([`temp`]); and the I/O layer ([`io`]) every write
//! of a database file goes through.
//!
//! Nothing here counts statistics or knows about sessions; the buffer cache above reads
//! and writes blocks through [`datafile::DataFile`] and interprets them with [`block`],
//! [`itl`], [`row`] and [`segment`].

pub mod block;
pub mod block_write;
pub mod control;
pub mod datafile;
pub mod doublewrite;
pub mod hcc;
pub mod ids;
pub mod io;
pub mod itl;
pub mod row;
pub mod segment;
pub mod space;
pub mod temp;

use crate::error::{Error, Result};
use std::path::Path;

/// Reads the JSON document `name` in the database directory `dir`. A missing document, or
/// one that does not parse, means `dir` is not a usable database: the error's reason is
/// "no `name` in it" or "`name` is not `what`: why" (`what` is e.g. "a valid control file").
pub fn read_json<T: serde::de::DeserializeOwned>(dir: &Path, name: &str, what: &str) -> Result<T> {
    let not_db = |reason: String| Error::NotADatabase { path: dir.to_owned(), reason };
    let path = dir.join(name);
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(not_db(format!("no {name} in it"))),
        Err(e) => return Err(Error::io("read", path, e)),
    };
    serde_json::from_str(&text).map_err(|e| not_db(format!("{name} is not {what}: {e}")))
}

/// Replaces the JSON document at `path` with `value` through the I/O layer `io`,
/// atomically ([`io::Io::replace`]).
pub fn write_json_with<T: serde::Serialize>(io: &dyn io::Io, path: &Path, value: &T) -> Result<()> {
    let text = serde_json::to_string_pretty(value).unwrap_or_else(|e| panic!("{} serialises: {e}", path.display()));
    io.replace(path, text.as_bytes())
}
