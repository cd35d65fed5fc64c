//! What the tests of the layers from here up work with, without a database around it:
//! the buffer cache, the space, undo, the SCN clock, the TX enqueues, the table and
//! index locks and a registry of sessions, over the files a database's transactions
//! work in (module `files`), in a temporary directory, opened by the constructors the
//! instance opens them with. There is no redo log, no dictionary and no recovery: a
//! fixture closed cleanly ([`TxnFixture::close`], every changed block written) opens
//! again ([`Closed::open`]), its files changed in between or not; a crash is the
//! instance's business, tested through the public API. Also the number of cases a unit
//! property test runs ([`proptest_cases`]).

use super::clock::ScnClock;
use super::context::{RowObserver, TxnContext};
use super::enqueue::Enqueues;
use super::files::{self, Sizes};
use super::locks::ObjectLocks;
use super::transaction::Transaction;
use super::undo::{Undo, UndoContext};
use crate::buffer::BufferCache;
use crate::error::Result;
use crate::stats::{Registry, SessionInfo, SessionStats};
use crate::storage::control::ControlFile;
use crate::storage::io::Io;
use crate::storage::space::Space;
use std::cell::RefCell;
use std::path::Path;
use std::sync::Arc;
use tempfile::TempDir;

/// How a fixture is made and opened: the sizes of its files, and what the database's
/// parameters would set (`db_cache_size`, `undo_tablespace_maxsize`, `undo_retention`).
#[derive(Debug, Clone, Copy)]
pub struct Options {
    pub sizes: Sizes,
    pub cache_size: usize,
    pub undo_retention: u64,
}

impl Default for Options {
    /// The database's defaults, with a 4 MiB cache.
    fn default() -> Self {
        Options {
            sizes: Sizes { block_size: 8192, extent_size: 1 << 20, undo_size: 64 << 20, undo_max: 32 << 30 },
            cache_size: 4 << 20,
            undo_retention: 900,
        }
    }
}

/// The open parts, shared by the fixture's sessions (and threads).
pub struct TxnFixture {
    pub cache: BufferCache,
    pub space: Space,
    pub clock: ScnClock,
    pub undo: Undo,
    pub enqueues: Enqueues,
    pub locks: ObjectLocks,
    pub sessions: Registry,
    pub io: Arc<dyn Io>,
    dir: TempDir,
}

/// A fixture closed cleanly: its directory and control file, to open again.
pub struct Closed {
    dir: TempDir,
    control: ControlFile,
}

/// Nothing above this layer watches the rows of a fixture's blocks.
struct NoObserver;

impl RowObserver for NoObserver {
    fn rows_changed(&self, _object_id: u32, _rdba: u32) {}
}

impl TxnFixture {
    /// New files in a new temporary directory, opened.
    pub fn new(options: &Options) -> TxnFixture {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let control = files::create(crate::storage::io::os().as_ref(), dir.path(), 1, &options.sizes)
            .expect("the fixture's files are created");
        Closed { dir, control }.open(options)
    }

    /// The directory of its files.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// Writes every changed block and closes the files.
    pub fn close(self) -> Closed {
        let TxnFixture { cache, space, clock, dir, .. } = self;
        cache.checkpoint(&SessionStats::default()).expect("the changed blocks are written");
        let mut control = space.control.into_inner();
        control.checkpoint_scn = clock.current();
        Closed { dir, control }
    }

    /// [`TxnFixture::close`], then [`Closed::open`].
    pub fn reopen(self, options: &Options) -> TxnFixture {
        self.close().open(options)
    }

    /// A new session, with its statistics in the registry and a transaction of its own.
    pub fn session(&self) -> FixtureSession<'_> {
        FixtureSession { fixture: self, info: self.sessions.register("USER"), txn: RefCell::default() }
    }
}

impl Closed {
    /// The directory of its files.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// Opens the files again, as the instance opens them, with `options`' cache size,
    /// maximum undo size and undo retention (its sizes at creation are not read again).
    pub fn open(self, options: &Options) -> TxnFixture {
        self.try_open(options).unwrap_or_else(|e| panic!("the fixture's files open: {e}"))
    }

    /// [`Closed::open`], or why the files do not open (a damaged file).
    pub fn try_open(self, options: &Options) -> Result<TxnFixture> {
        let Closed { dir, control } = self;
        let io = crate::storage::io::os();
        let cache = BufferCache::new(options.cache_size, control.block_size as usize);
        let datafiles = files::open_datafiles(io.as_ref(), dir.path(), &control, false, &cache)?;
        let undo = files::open_undo(&cache, &datafiles, options.sizes.undo_max)?;
        undo.set_retention(options.undo_retention);
        Ok(TxnFixture {
            clock: ScnClock::new(control.checkpoint_scn),
            space: Space::new(control, datafiles),
            cache,
            undo,
            enqueues: Enqueues::default(),
            locks: ObjectLocks::default(),
            sessions: Registry::default(),
            io,
            dir,
        })
    }
}

/// A session of a fixture: statistics and a transaction. Used by one thread at a time.
pub struct FixtureSession<'f> {
    pub fixture: &'f TxnFixture,
    pub info: Arc<SessionInfo>,
    pub txn: RefCell<Transaction>,
}

impl<'f> FixtureSession<'f> {
    /// The context of this session's next statement: changing blocks at the current SCN,
    /// reading as its transaction reads.
    pub fn context(&self) -> TxnContext<'_> {
        let f = self.fixture;
        let scn = f.clock.current();
        TxnContext {
            undo_ctx: UndoContext { cache: &f.cache, space: &f.space, clock: &f.clock, stats: &self.info.stats, scn },
            undo: &f.undo,
            enqueues: &f.enqueues,
            locks: &f.locks,
            sessions: &f.sessions,
            observer: &NoObserver,
            reader: self.txn.borrow_mut().reader(scn),
        }
    }

    pub fn stats(&self) -> &SessionStats {
        &self.info.stats
    }

    pub fn sid(&self) -> u32 {
        self.info.sid
    }
}

impl Drop for FixtureSession<'_> {
    fn drop(&mut self) {
        if self.txn.borrow().is_active() {
            let ctx = self.context();
            if let Err(e) = self.txn.borrow_mut().rollback(&ctx) {
                eprintln!("rolling back the transaction of fixture session {}: {e}", self.info.sid);
            }
        }
        self.fixture.sessions.unregister(self.info.sid);
    }
}

/// Cases of a unit property test: `PROPTEST_CASES` when it is set and not empty (a long
/// run raises it), else `default`, so that `cargo test` stays quick. (The integration
/// tests' helper `lioscope_testkit::cases_or` reads it the same way.)
pub fn proptest_cases(default: u32) -> u32 {
    match std::env::var("PROPTEST_CASES") {
        Ok(v) if !v.is_empty() => v.parse().unwrap_or_else(|_| panic!("PROPTEST_CASES={v:?} is not a number of cases")),
        _ => default,
    }
}
