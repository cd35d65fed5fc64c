//! The database: a directory holding a control file, a dictionary, datafiles and online
//! redo logs, opened into an instance (module `instance`: the shared buffer cache, the
//! background writers, recovery), and the sessions that run statements on it.
//!
//! `Database` is a cheap handle (clone it freely); the database is checkpointed and the
//! log writer stopped when the last handle and session are gone, or checkpointed by
//! [`Database::close`]. The column store's population workers and the database writer
//! hold the database only while they work; they stop when the last `Database` handle goes.
//! A session's statements go from here to `sql` (module `session`).

mod session;

pub use crate::instance::{
    Canceller, DB_BLOCK_SIZE_PARAMETER, DatabaseOptions, ParameterValues, ProgressFn, RecoveryReport, Session,
    parse_size,
};
pub use crate::sql::cursor::{Cursor, PreparedStatement};
pub use crate::sql::describe::{Description, ResultColumn};
pub use crate::sql::{QueryResult, StatementKind};
pub use crate::stats::ClientIdentity;
pub use crate::storage::block::VALID_BLOCK_SIZES;

use crate::buffer::CacheSummary;
use crate::catalog::{Catalog, ScramVerifier};
use crate::error::{Error, Result};
use crate::instance::{DbInner, LOG_GROUPS, creation_size, params};
use crate::redo::RedoLog;
use crate::storage::control::ControlFile;
use std::path::Path;
use std::sync::Arc;

/// An open database.
#[derive(Clone)]
pub struct Database {
    inner: Arc<DbInner>,
    /// Shared by the clones of this handle: when the last one goes, the background
    /// population workers stop (they would otherwise keep the database open until their
    /// current unit is done).
    _user: Arc<UserHandle>,
}

/// The users' hold on a database, as opposed to its background workers'.
struct UserHandle(std::sync::Weak<DbInner>);

impl Drop for UserHandle {
    fn drop(&mut self) {
        if let Some(db) = self.0.upgrade() {
            db.users_gone();
        }
    }
}

impl Database {
    /// Creates a new database in `dir` (created if missing; must not hold a database).
    pub fn create(dir: impl AsRef<Path>, options: DatabaseOptions) -> Result<Database> {
        let dir = dir.as_ref();
        if !VALID_BLOCK_SIZES.contains(&options.block_size) {
            return Err(Error::InvalidParameter {
                name: "db_block_size".into(),
                message: format!("{} is not one of 2048, 4096, 8192, 16384, 32768", options.block_size),
            });
        }
        if options.extent_size < options.block_size * 8 || !options.extent_size.is_multiple_of(options.block_size) {
            return Err(Error::InvalidParameter {
                name: "extent size".into(),
                message: format!("{} bytes is not a multiple of at least 8 blocks", options.extent_size),
            });
        }
        if ControlFile::path(dir).exists() {
            return Err(Error::ObjectExists { kind: "database", name: dir.display().to_string() });
        }
        std::fs::create_dir_all(dir).map_err(|e| Error::io("create directory", dir, e))?;
        let io = options.io();
        let db_id = new_db_id();
        let sizes = crate::txn::files::Sizes {
            block_size: options.block_size,
            extent_size: options.extent_size,
            undo_size: creation_size(&options, params::UNDO_TABLESPACE_SIZE)?,
            undo_max: creation_size(&options, params::UNDO_TABLESPACE_MAXSIZE)?,
        };
        let log_file_size = creation_size(&options, params::LOG_FILE_SIZE)?;
        let mut control = crate::txn::files::create(io.as_ref(), dir, db_id, &sizes)?;
        RedoLog::create_files(io.as_ref(), dir, db_id, LOG_GROUPS, log_file_size)?;
        control.log_groups = (1..=LOG_GROUPS).collect();
        control.log_file_size = log_file_size;
        Catalog::create(io.clone(), dir)?;
        control.write(io.as_ref(), dir)?;
        Database::open(dir, options)
    }

    /// Opens the database in `dir`, recovering it first if it was not shut down
    /// cleanly (see the `instance` module).
    pub fn open(dir: impl AsRef<Path>, options: DatabaseOptions) -> Result<Database> {
        let inner = DbInner::start(dir.as_ref(), &options)?;
        let user = Arc::new(UserHandle(Arc::downgrade(&inner)));
        Ok(Database { inner, _user: user })
    }

    /// Opens `dir` if it holds a database, or creates one there.
    pub fn open_or_create(dir: impl AsRef<Path>, options: DatabaseOptions) -> Result<Database> {
        let dir = dir.as_ref();
        if ControlFile::path(dir).exists() { Database::open(dir, options) } else { Database::create(dir, options) }
    }

    /// A new session, running as SYS.
    pub fn session(&self) -> Session {
        Session::new(self.inner.clone(), crate::catalog::users::SYS)
    }

    /// A new session that runs as no user until it logs in ([`Session::log_in_as`]):
    /// what a server opens for a client that has not authenticated yet. Until then it
    /// holds no privilege, and `v$session` shows no USERNAME for it.
    pub fn session_without_user(&self) -> Session {
        Session::new(self.inner.clone(), "")
    }

    /// The user a client's log-in name stands for: the user of that name, else of that
    /// name in upper case (`scott` is SCOTT, as an unquoted name is); `None` if neither
    /// exists.
    pub fn find_user(&self, name: &str) -> Option<String> {
        let catalog = &self.inner.catalog;
        [name.to_owned(), name.to_uppercase()].into_iter().find(|n| catalog.user(n).is_some())
    }

    /// What a client logging in as `user` must prove it knows: the user's password
    /// verifier; `None` for a user that does not exist or has no password.
    pub fn password_verifier(&self, user: &str) -> Option<ScramVerifier> {
        self.inner.catalog.user(user)?.password
    }

    /// The database directory.
    pub fn dir(&self) -> &Path {
        &self.inner.dir
    }

    /// The buffer cache's buffers now: how many, dirty, pinned (what `v$bh` shows row
    /// by row).
    pub fn cache_summary(&self) -> CacheSummary {
        self.inner.cache.summary()
    }

    /// Writes the sequences' first unused values back (their caches start again from
    /// them), checkpoints and writes the control file. Later use of this database is still
    /// possible; dropping the last handle closes it again. A dead instance (its redo log
    /// or a datafile sync failed) writes nothing and says so: the next open recovers it.
    pub fn close(&self) -> Result<()> {
        self.inner.check_alive()?;
        self.inner.sequences.write_back(&self.inner.catalog)?;
        self.inner.checkpoint()
    }

    /// How many sessions of users (not background ones) are running a call now.
    pub fn active_user_calls(&self) -> usize {
        let sessions = self.inner.registry.sessions();
        sessions.iter().filter(|s| s.kind == "USER" && s.active.load(std::sync::atomic::Ordering::Relaxed)).count()
    }

    /// What instance recovery did when this database was opened.
    pub fn recovery(&self) -> RecoveryReport {
        self.inner.recovery.get().cloned().unwrap_or_default()
    }
}

fn new_db_id() -> u64 {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    (now.as_nanos() as u64) ^ (u64::from(std::process::id()) << 32)
}
