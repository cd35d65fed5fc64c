//! lioscope: an embeddable database engine whose every cost is visible.
//!
//! Modules are listed from the top layer down, the order a query flows through them: a
//! [`Session`] of a [`Database`] (`db`) hands the text to `sql`, which parses and plans
//! it, working with what the `instance` shares (the cache, undo, the dictionary, the
//! sessions); `exec` runs the plan's operators, over the column store (`inmemory`), the
//! B-tree indexes (`index`) and expressions (`expr`); `access` reaches rows in a table's
//! segment; `txn` gives each statement the version of a block it must see (undo, CR
//! clones, row locks, commit); `buffer` caches the blocks; `redo` logs every change a
//! buffer's write guard makes and replays it after a crash; `catalog` holds the
//! dictionary's definitions; `storage` holds the on-disk formats and the one I/O layer
//! every write goes through. Then what every layer uses (`stats`, `types`, `error`). The
//! `lioscope` command (crate lioscope-cli) and the lab (crate lioscope-lab) are built on
//! the public API alone.
//!
//! ```
//! use lioscope::{Database, Stat};
//!
//! let dir = std::env::temp_dir().join(format!("lioscope-doc-{}", std::process::id()));
//! let db = Database::create(&dir, Default::default())?;
//! let session = db.session();
//! session.execute("CREATE TABLE t (id INTEGER, name VARCHAR2(20))")?;
//! session.execute("INSERT INTO t SELECT LEVEL, 'row ' || LEVEL FROM dual CONNECT BY LEVEL <= 1000")?;
//!
//! let gets_before = session.stats().get(Stat::ConsistentGets);
//! let result = session.query("SELECT COUNT(*) FROM t WHERE id > 10")?;
//! assert_eq!(result.rows[0][0].to_string(), "990");
//! // The scan read the segment header and every block below the high-water mark.
//! assert!(session.stats().get(Stat::ConsistentGets) > gets_before);
//!
//! drop(session);
//! db.close()?;
//! # drop(db);
//! # std::fs::remove_dir_all(&dir).ok();
//! # Ok::<(), lioscope::Error>(())
//! ```

// The engine's layers, from the top down (the order `tests/architecture.rs` enforces).
// They are private: an embedding program sees the API below.
// Every type the public API hands out can be named by the program that receives it.
#![warn(unnameable_types)]
#![warn(clippy::undocumented_unsafe_blocks)]
mod db;
mod sql;
mod instance;
mod exec;
mod inmemory;
mod index;
mod expr;
mod access;
mod txn;
mod buffer;
mod redo;
mod catalog;
mod storage;
pub mod stats;
pub mod types;
mod error;

pub use buffer::CacheSummary;
pub use catalog::ScramVerifier;
pub use db::{
    Canceller, ClientIdentity, Cursor, DB_BLOCK_SIZE_PARAMETER, Database, DatabaseOptions, Description,
    ParameterValues, PreparedStatement, ProgressFn, QueryResult, RecoveryReport, ResultColumn, Session, StatementKind,
    VALID_BLOCK_SIZES, parse_size,
};
pub use error::{Error, Result};
pub use sql::{Estimate, PlanStatistics, RowSourceLine};
pub use stats::Stat;
/// The I/O layer every datafile, log and control file write goes through: the operating
/// system's ([`io::os`]), or one that injects faults ([`io::FaultIo`]), given as the
/// `io` field of [`DatabaseOptions`].
pub use storage::io;
/// Bind variables: the names a statement uses by slot, and how names are told apart.
pub mod binds {
    pub use crate::expr::functions::normalized_bind_name;
    pub use crate::sql::cursor::bind_names;
}
/// Reading a closed database's online redo logs: the newest log and its record ends.
pub use redo::inspect as redo_log;
/// Whether full scans count rows eight at a time in AVX2 lanes on this machine, and why
/// ([`row_lanes::choice`]); `LIOSCOPE_ROW_LANES=on` or `off` overrides it.
pub mod row_lanes {
    pub use crate::access::lanes::{CHOICE_VARIABLE, LaneChoice, choice};
}
