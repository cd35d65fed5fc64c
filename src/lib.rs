//! lioscope: an embeddable database engine whose every cost is visible.
//!
//! Modules are listed in the order a query flows through them: a [`Session`] of a
//! [`Database`] (`db`) hands the text to `sql`, which parses and plans it; `exec` runs the
//! plan's operators; `access` reaches rows in a table's segment and `index` through its
//! B-tree indexes; `buffer` caches their
//! blocks; `txn` gives each statement the version of a block it must see (undo, CR
//! clones, row locks, commit); `redo` logs every change a buffer's write guard makes and
//! replays it after a crash; `storage` holds their on-disk formats and the one I/O layer
//! every write goes through. Then what every layer uses (`catalog`,
//! `types`, `stats`, `error`) and what is built on the public API (`cli`, `lab`).
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

pub mod db;
pub mod sql;
pub mod exec;
pub mod access;
pub mod index;
pub mod inmemory;
pub mod buffer;
pub mod txn;
pub mod redo;
pub mod storage;
pub mod catalog;
pub mod types;
pub mod stats;
pub mod error;
pub mod cli;
pub mod lab;

pub use db::{Cursor, Database, DatabaseOptions, QueryResult, Session};
pub use error::{Error, Result};
pub use stats::Stat;
