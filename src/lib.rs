//! lioscope: an embeddable database engine whose every cost is visible.
//!
//! Modules are listed in the order a query flows through them.
//!
//! ```no_run
//! use lioscope::Database;
//!
//! let db = Database::create("demo", Default::default())?;
//! let session = db.session();
//! session.execute("CREATE TABLE t (id INTEGER, name VARCHAR2(20))")?;
//! session.execute("INSERT INTO t SELECT LEVEL, 'row ' || LEVEL FROM dual CONNECT BY LEVEL <= 1000")?;
//! let result = session.query("SELECT COUNT(*) FROM t WHERE id > 10")?;
//! assert_eq!(result.rows[0][0].to_string(), "990");
//! # Ok::<(), lioscope::Error>(())
//! ```

pub mod access;
pub mod buffer;
pub mod catalog;
pub mod cli;
pub mod db;
pub mod error;
pub mod exec;
pub mod lab;
pub mod sql;
pub mod stats;
pub mod storage;
pub mod types;

pub use db::{Database, DatabaseOptions, QueryResult, Session};
pub use error::{Error, Result};
