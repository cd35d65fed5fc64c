//! The instance: what every session of an open database shares (the buffer cache, the
//! space of the datafiles, undo, the SCN clock, the locks, the dictionary, the column
//! store, the parameters, the redo log, the sequences' caches of values, module
//! `sequences`), its background work (the log writer and the
//! database writer, module `writer`; the sampler of Active Session History, module
//! `sampler`), instance recovery at start (module `recovery`:
//! roll forward through the redo since the checkpoint, then roll back the transactions a
//! crash left active), and the sessions and their parameters (`session`, `params`).
//! Every write goes through one I/O layer (the `io` of [`DatabaseOptions`]).
//!
//! Statements are run by the layer above (`db` hands a session's text to `sql`); the
//! instance only holds what they work with, and builds the narrow contexts the layers
//! below work in ([`DbInner::access_context`]).
//!
//! An instance whose redo log cannot be written, or whose datafile sync failed, is dead
//! ([`DbInner::check_alive`]): every later statement and commit fails (ROLLBACK alone
//! runs), no checkpoint moves the position on, and closing writes nothing, so the next
//! open recovers from the last good checkpoint, as PostgreSQL's `data_sync_retry = off`.
//!
//! Invariants: a directory is open in one instance at a time (an exclusive `flock` on
//! the directory itself, which no one can delete while it holds the database's files);
//! each table has one inserter at a time, and DDL excludes the statements reading or
//! changing it (`txn::locks::TableLocks`); extents are handed out under the
//! control-file lock, so no extent belongs to two segments.

pub(crate) mod params;
mod population;
mod recovery;
mod sampler;
mod sequences;
mod session;
mod writer;

pub use params::{
    DB_BLOCK_SIZE as DB_BLOCK_SIZE_PARAMETER, Kind as ParameterKind, Modifiable, PARAMETERS, ParameterValues,
    parse_size,
};
pub(crate) use params::{lookup as lookup_parameter, validate as validate_parameter};
pub use recovery::RecoveryReport;
pub use session::{Canceller, ProgressFn, Session};

use crate::access::AccessContext;
use crate::buffer::BufferCache;
use crate::catalog::Catalog;
use crate::error::{Error, Result};
use crate::redo::RedoLog;
use crate::stats::{Registry, Stat};
use crate::storage::control::ControlFile;
use crate::storage::io::Io;
use crate::storage::space::Space;
use crate::txn::clock::ScnClock;
use crate::txn::locks::ObjectLocks;
use crate::txn::undo;
use parking_lot::{Mutex, RwLock};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// Groups of online redo log files a new database gets.
pub(crate) const LOG_GROUPS: u32 = 3;

/// How to create or open a database.
#[derive(Debug, Clone)]
pub struct DatabaseOptions {
    /// Block size at creation (ignored when opening).
    pub block_size: usize,
    /// Extent size in bytes at creation (uniform extents; ignored when opening).
    pub extent_size: usize,
    /// Parameters for this open (e.g. `db_cache_size`), over those stored with the database.
    pub parameters: Vec<(String, String)>,
    /// The I/O layer every write goes through (`None`: the operating system's); tests
    /// put a [`crate::storage::io::FaultIo`] here.
    pub io: Option<Arc<dyn Io>>,
}

impl Default for DatabaseOptions {
    fn default() -> Self {
        DatabaseOptions { block_size: 8192, extent_size: 1 << 20, parameters: Vec::new(), io: None }
    }
}

impl DatabaseOptions {
    pub(crate) fn io(&self) -> Arc<dyn Io> {
        self.io.clone().unwrap_or_else(crate::storage::io::os)
    }
}

/// What every session of one open database shares.
pub struct DbInner {
    /// The database itself, weakly: what background workers hold.
    pub(crate) this: std::sync::Weak<DbInner>,
    pub(crate) dir: PathBuf,
    /// The datafiles, and the control file whose datafile entries are the space map.
    pub(crate) space: Space,
    pub(crate) cache: BufferCache,
    pub(crate) catalog: Catalog,
    pub(crate) registry: Registry,
    /// System-wide parameter values (ALTER SYSTEM, and those fixed at creation such as
    /// the block size), the base of each session's values.
    pub(crate) parameters: RwLock<ParameterValues>,
    /// The locks of each table and index that are not row locks.
    pub(crate) locks: ObjectLocks,
    /// The system change number, and the lock that publishes the ends of transactions.
    pub(crate) clock: ScnClock,
    /// The undo tablespace.
    pub(crate) undo: crate::txn::undo::Undo,
    /// Active transactions, for row lock waits.
    pub(crate) enqueues: crate::txn::enqueue::Enqueues,
    /// The in-memory column store.
    pub(crate) inmemory: crate::inmemory::InMemoryStore,
    /// Per-statement totals for `v$sql`.
    pub(crate) sql_area: crate::stats::sqlarea::SqlArea,
    /// The sequences' caches of values for NEXTVAL.
    pub(crate) sequences: sequences::SequenceCache,
    /// ALTER SESSION and ALTER SYSTEM statements run since the database opened: a plan
    /// kept by a cursor is made again once this moves on.
    pub(crate) parameter_changes: std::sync::atomic::AtomicU64,
    /// The I/O layer every write goes through.
    pub(crate) io: Arc<dyn Io>,
    /// The redo log (attached to the cache once recovery is done).
    pub(crate) redo: Arc<RedoLog>,
    /// What instance recovery did at this open.
    pub(crate) recovery: std::sync::OnceLock<RecoveryReport>,
    /// Active Session History: the samples `v$active_session_history` shows.
    pub(crate) ash: crate::stats::ash::History,
    /// The thread that takes them (module `sampler`).
    sampler: sampler::Sampler,
    /// One checkpoint at a time.
    checkpoint_lock: Mutex<()>,
    /// Set once the database is closing: the database writer stops.
    closing: AtomicBool,
    log_writer: Mutex<Option<std::thread::JoinHandle<()>>>,
    database_writer: Mutex<Option<std::thread::JoinHandle<()>>>,
    /// Holds an exclusive `flock` on the database directory while the database is open.
    _lock: std::fs::File,
}

impl DbInner {
    /// Starts the instance of the database in `dir`, recovering it first if it was not
    /// shut down cleanly (see the `recovery` module), then starting the log writer, the
    /// database writer and the population of the column store.
    pub(crate) fn start(dir: &Path, options: &DatabaseOptions) -> Result<Arc<DbInner>> {
        let started = std::time::Instant::now();
        // Before recovery may roll back a dead transaction's index entries.
        crate::txn::foreign::register(&crate::index::rollback::INDEX_UNDO);
        crate::txn::foreign::register(&crate::access::cu::undo::CU_HEAD_UNDO);
        if !dir.is_dir() {
            return Err(Error::NotADatabase { path: dir.to_owned(), reason: "no such directory".into() });
        }
        let io = options.io();
        // The lock first: while another instance runs, its files are its own to write.
        let lock = lock_directory(dir)?;
        let mut control = ControlFile::read(dir)?;
        // Temporary files of sorts and hash joins a crash interrupted: none of this
        // database runs now.
        crate::storage::temp::remove_stale(dir);
        let block_size = control.block_size as usize;
        if !control.datafiles.iter().any(|d| d.number == undo::UNDO_FILE_NO) {
            // A database created before undo existed gets its undo tablespace now.
            let size = creation_size(options, params::UNDO_TABLESPACE_SIZE)?;
            let max = creation_size(options, params::UNDO_TABLESPACE_MAXSIZE)?;
            control.datafiles.push(undo::create_tablespace(io.as_ref(), dir, block_size, control.db_id, size, max)?);
            control.write(io.as_ref(), dir)?;
        }
        if control.log_groups.is_empty() {
            // A database created before redo existed gets its online logs now.
            control.log_file_size = creation_size(options, params::LOG_FILE_SIZE)?;
            RedoLog::create_files(io.as_ref(), dir, control.db_id, LOG_GROUPS, control.log_file_size)?;
            control.log_groups = (1..=LOG_GROUPS).collect();
            control.write(io.as_ref(), dir)?;
        }
        let mut parameters = ParameterValues::stored(dir, &control.parameters)?
            .created_with(params::DB_BLOCK_SIZE, block_size.to_string());
        for (k, v) in &options.parameters {
            parameters.set(k, v)?;
        }
        let direct = parameters.get(params::FILESYSTEMIO_OPTIONS) == "directio";
        let mut cache = BufferCache::new(parameters.get_u64(params::DB_CACHE_SIZE) as usize, block_size);
        if parameters.get_bool(params::PRE_PAGE_SGA) {
            cache.pre_page();
        }
        let datafiles = crate::txn::files::open_datafiles(io.as_ref(), dir, &control, direct, &cache)?;
        let redo = Arc::new(RedoLog::open(io.clone(), dir, control.db_id, control.log_file_size, &control.log_groups)?);
        let recovery_stats = crate::stats::SessionStats::default();
        let writes =
            Arc::new(recovery::RecoveryWrites::start(io.clone(), dir, control.db_id, control.checkpoint_lsn, &cache)?);
        cache.set_write_barrier(Some(writes.clone()));
        let (mut report, redo_scn, scanned) =
            recovery::roll_forward(&cache, &redo, control.checkpoint_lsn, &writes, &recovery_stats)?;
        writes.protect_dirty(&cache, &recovery_stats)?;
        cache.checkpoint(&recovery_stats)?;
        cache.set_write_barrier(None);
        let scn = control.checkpoint_scn.max(redo_scn);
        // Every block is up to date and synced: the checkpoint moves past the newest
        // sequence before its successor's group is reused (see the `recovery` module).
        let next_seq = scanned.newest_seq + 1;
        control.checkpoint_lsn = crate::redo::lsn(next_seq, crate::redo::FILE_HEADER);
        control.checkpoint_scn = scn;
        control.log_groups = redo.group_numbers();
        control.write(io.as_ref(), dir)?;
        Arc::into_inner(writes).expect("the cache let the barrier go").finish()?;
        let prev_end = match scanned.end {
            end if crate::redo::lsn_seq(end) == scanned.newest_seq => crate::redo::lsn_offset(end),
            _ => 0,
        };
        let start = redo.start(next_seq, scn, prev_end)?;
        debug_assert_eq!(start, control.checkpoint_lsn, "the log starts where the checkpoint was recorded");
        cache.attach_redo(redo.clone());
        let undo_max = params::number(params::UNDO_TABLESPACE_MAXSIZE, parameters.get(params::UNDO_TABLESPACE_MAXSIZE));
        let undo = crate::txn::files::open_undo(&cache, &datafiles, undo_max)?;
        let parameters = parameters
            .created_with(params::UNDO_TABLESPACE_SIZE, params::format_size(undo.size_bytes()))
            .created_with(params::UNDO_TABLESPACE_MAXSIZE, params::format_size(undo.max_size_bytes()))
            .created_with(params::LOG_FILE_SIZE, params::format_size(control.log_file_size));
        let catalog = Catalog::open(io.clone(), dir, &[control.datafiles[0].number])?;
        let inner = Arc::new_cyclic(|this| DbInner {
            this: this.clone(),
            dir: dir.to_owned(),
            space: Space::new(control, datafiles),
            clock: ScnClock::new(scn),
            cache,
            catalog,
            registry: Registry::default(),
            parameters: RwLock::new(parameters),
            locks: ObjectLocks::default(),
            undo,
            enqueues: Default::default(),
            inmemory: Default::default(),
            sql_area: Default::default(),
            sequences: Default::default(),
            parameter_changes: Default::default(),
            io,
            redo: redo.clone(),
            recovery: std::sync::OnceLock::new(),
            ash: crate::stats::ash::History::new(0),
            sampler: Default::default(),
            checkpoint_lock: Mutex::new(()),
            closing: AtomicBool::new(false),
            log_writer: Mutex::new(None),
            database_writer: Mutex::new(None),
            _lock: lock,
        });
        inner.apply_parameters();
        let weak = Arc::downgrade(&inner);
        inner.inmemory.register_worker_starter(move || {
            if let Some(db) = weak.upgrade() {
                crate::inmemory::populate::ensure_workers(&*db);
            }
        });
        *inner.log_writer.lock() = Some(writer::start_log_writer(&inner, redo.clone()));
        let flush_redo = redo.clone();
        inner.catalog.set_before_write(Box::new(move || flush_redo.flush_all()));
        let smon = inner.registry.register("SMON");
        inner.rebuild_space_map(&smon.stats)?;
        report.transactions_rolled_back = inner.recover_transactions(&smon.stats)?;
        report.needed |= report.transactions_rolled_back > 0;
        for stat in [Stat::RedoRecordsApplied, Stat::RecoveryBlocksApplied] {
            smon.stats.add(stat, recovery_stats.get(stat));
        }
        inner.registry.unregister(smon.sid);
        if report.needed {
            inner.checkpoint()?;
        }
        report.elapsed_ms = started.elapsed().as_millis() as u64;
        let _ = inner.recovery.set(report);
        *inner.database_writer.lock() = Some(writer::start_database_writer(&inner, redo));
        inner.sampler.start(Arc::downgrade(&inner));
        crate::inmemory::populate::on_open(&*inner);
        Ok(inner)
    }
}

impl DbInner {
    /// The context of a statement of a session with statistics `stats`, changing blocks
    /// at `scn`, reading as `reader`, and asking for `multiblock_read_count` blocks a
    /// multiblock read.
    pub(crate) fn access_context<'a>(
        &'a self,
        stats: &'a crate::stats::SessionStats,
        multiblock_read_count: u32,
        scn: u64,
        reader: crate::txn::Reader,
    ) -> AccessContext<'a> {
        AccessContext {
            txn: crate::txn::TxnContext {
                undo_ctx: crate::txn::undo::UndoContext {
                    cache: &self.cache,
                    space: &self.space,
                    clock: &self.clock,
                    stats,
                    scn,
                },
                undo: &self.undo,
                enqueues: &self.enqueues,
                locks: &self.locks,
                sessions: &self.registry,
                observer: &self.inmemory,
                reader,
            },
            multiblock_read_count,
            cus: Some(crate::inmemory::hcc::rows::CODEC),
        }
    }

    /// Fails once the instance is dead: its redo log cannot be written (a commit would
    /// not be durable, and a changed block could never be written), or a datafile sync
    /// failed (the kernel may have dropped written blocks). Two atomic loads.
    pub(crate) fn check_alive(&self) -> Result<()> {
        if let Some(failure) = self.cache.sync_failure() {
            return Err(Error::InstanceFailed {
                reason: format!(
                    "a datafile sync failed ({failure}); reopen the database to recover from the last good checkpoint"
                ),
            });
        }
        if self.redo.has_failed() {
            let failure = self.redo.failure().unwrap_or_default();
            return Err(Error::InstanceFailed {
                reason: format!("the redo log cannot be written ({failure}); reopen the database to recover it"),
            });
        }
        Ok(())
    }

    /// The last user handle is gone: the population workers and the sampler of Active
    /// Session History stop, and the database writer stops after a last checkpoint. The
    /// database writer and the sampler hold the database while they work: stopped here,
    /// the database closes on this thread, and its directory is free on return.
    pub(crate) fn users_gone(&self) {
        crate::inmemory::populate::stop_workers(&self.inmemory);
        self.sampler.stop();
        self.closing.store(true, Ordering::Release);
        self.redo.wake_database_writer();
        let writer = self.database_writer.lock().take();
        if let Some(writer) = writer {
            let _ = writer.join();
        }
    }

    /// Hands the system parameters that the layers below keep themselves (they do not
    /// read the parameter table) to those layers: done at open and after ALTER SYSTEM.
    pub(crate) fn apply_parameters(&self) {
        let parameters = self.parameters.read();
        self.undo.set_retention(parameters.get_u64(params::UNDO_RETENTION));
        self.ash.set_capacity(parameters.get_u64(params::ASH_SIZE) as usize);
        self.sampler.set_interval_ms(parameters.get_u64(params::ASH_SAMPLING_INTERVAL));
    }
}

impl Drop for DbInner {
    fn drop(&mut self) {
        crate::inmemory::populate::stop_workers(&self.inmemory);
        self.sampler.stop();
        self.closing.store(true, Ordering::Release);
        // A dead instance (failed log or datafile sync): what is on disk is for
        // recovery to mend, from the last good checkpoint.
        if self.check_alive().is_ok()
            && let Err(e) = self.sequences.write_back(&self.catalog)
        {
            // The caches' values are skipped, as after a crash; the checkpoint goes on.
            eprintln!("lioscope: closing {}: the sequences' unused values: {e}", self.dir.display());
        }
        let closed = self.check_alive().and_then(|()| self.checkpoint());
        if let Err(e) = closed {
            eprintln!("lioscope: closing {}: {e}", self.dir.display());
        }
        self.redo.close();
        if let Some(writer) = self.log_writer.lock().take() {
            let _ = writer.join();
        }
    }
}

/// A size fixed at creation (`undo_tablespace_size`, `undo_tablespace_maxsize`,
/// `log_file_size`) asked for in `options` (or its default), in bytes.
pub(crate) fn creation_size(options: &DatabaseOptions, name: &str) -> Result<u64> {
    let given = options.parameters.iter().find(|(k, _)| k.eq_ignore_ascii_case(name));
    let def = lookup_parameter(name)?;
    let value = validate_parameter(def, given.map_or(def.default_value(), |(_, v)| v.as_str()))?;
    Ok(params::number(def.name, &value))
}

/// Takes the exclusive lock of a database directory, or says it is already open.
///
/// The lock is an exclusive `flock` on the directory itself (a read-only descriptor of
/// it): a directory that holds a database's files cannot be removed or replaced while the
/// instance runs, so no one can take the lock away by deleting a file. (Versions that
/// locked a `lioscope.lock` file inside it left that file behind; it is not used.)
fn lock_directory(dir: &Path) -> Result<std::fs::File> {
    use std::os::fd::AsRawFd;
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECTORY)
        .open(dir)
        .map_err(|e| Error::io("open", dir, e))?;
    // SAFETY: flock only reads its integer arguments; the descriptor is open and owned.
    let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
    if rc != 0 {
        let e = std::io::Error::last_os_error();
        return Err(if e.kind() == std::io::ErrorKind::WouldBlock {
            Error::DatabaseInUse { path: dir.to_owned() }
        } else {
            Error::io("lock", dir, e)
        });
    }
    Ok(file)
}
