//! Sessions: the unit of work and of accounting. Every statement runs in a session and
//! counts into its statistics, wait events and time model.
//!
//! Invariant: a session is used by one thread at a time (`Session` is `Send` but not
//! `Sync`), which is what lets its statistics count with plain loads and stores. While a
//! statement runs, its session publishes an SCN no later than the statement's snapshot
//! (`SessionInfo::reading_since`), set before the snapshot is taken and cleared after (kept
//! between statements while a serializable or read-only transaction holds its snapshot).

use super::{DbInner, ParameterValues, params};
use crate::access::AccessContext;
use crate::stats::{ClientIdentity, SessionInfo, SessionStats};
use crate::types::Value;
use parking_lot::Mutex;
use std::cell::Cell;
use std::marker::PhantomData;
use std::sync::Arc;
use std::sync::atomic::Ordering;

/// Stops a session's running call from another thread (see [`Session::canceller`]).
#[derive(Clone)]
pub struct Canceller {
    info: Arc<SessionInfo>,
}

impl Canceller {
    /// Asks the session's current call to stop: it fails with ORA-01013 (user requested
    /// cancel of current operation) within a scan's next multiblock read or compression
    /// unit, or a row lock wait's next look; what it changed is rolled back, and its
    /// transaction stays open. A cancel between calls stops nothing.
    pub fn cancel(&self) {
        self.info.stats.interrupt();
    }

    /// The session's id.
    pub fn sid(&self) -> u32 {
        self.info.sid
    }
}

/// Called during long loads with (bytes done, bytes in all).
pub type ProgressFn = Box<dyn FnMut(u64, u64) + Send>;

/// Session-private state.
pub(crate) struct SessionState {
    /// Values set with ALTER SESSION, over the system's.
    pub overrides: Vec<(String, String)>,
    pub progress: Option<ProgressFn>,
    /// Seed of DBMS_RANDOM for the next statement (advanced by each statement).
    pub random_seed: u64,
}

/// A session of a database; one statement runs at a time in it.
///
/// A session may be sent to another thread, but not shared between threads: it is not
/// `Sync`, because its statistics count with one writer (see [`SessionStats`]). Open a
/// session per thread instead.
///
/// ```compile_fail
/// fn shared_between_threads<T: Sync>() {}
/// shared_between_threads::<lioscope::Session>();
/// ```
pub struct Session {
    pub(crate) db: Arc<DbInner>,
    /// Shared with the registry, which reads the statistics for `v$sesstat` and `v$sysstat`.
    pub(crate) info: Arc<SessionInfo>,
    pub(crate) state: Mutex<SessionState>,
    /// The session's transaction (one statement at a time uses it).
    pub(crate) txn: std::cell::RefCell<crate::txn::transaction::Transaction>,
    /// The bind variables of the statement a cursor is running now (none otherwise).
    pub(crate) binds: std::cell::RefCell<StatementBinds>,
    /// Whether each successful statement that changes data commits at once.
    autocommit: Cell<bool>,
    /// Queries gather row-source statistics (set by autotrace).
    plan_statistics: Cell<bool>,
    /// The performance counters of the thread running the session, when switched on
    /// ([`Session::set_hardware_counters`]).
    counters: std::cell::RefCell<Option<SessionCounters>>,
    /// The parameters every execution reads, parsed once per change of any parameter.
    hot: Cell<Option<HotParameters>>,
    /// What the work areas of the statement running now did, by plan line id (for
    /// `v$sql_workarea`, taken when the call ends).
    pub(crate) call_workareas: std::cell::RefCell<Vec<(u32, crate::stats::workarea::WorkareaRun)>>,
    /// The session cursor cache: the statements `sql::cursor_cache` keeps parsed, with
    /// their plans, between executions of the same text. Typed by `sql`, a layer above,
    /// so held here as `Any`; empty until the session's first cached statement.
    pub(crate) cursor_cache: std::cell::RefCell<Option<Box<dyn std::any::Any + Send>>>,
    /// NEXTVAL and CURRVAL as this session reads them.
    sequences: Arc<super::sequences::SessionSequences>,
    /// The rows a `COPY ... FROM STDIN` of the running call reads, given by the caller
    /// (`Session::copy_from_reader`).
    pub(crate) copy_input: std::cell::RefCell<Option<Box<dyn std::io::Read + Send>>>,
    /// Makes `Session` `!Sync` (while still `Send`): only one thread writes its statistics.
    _one_thread_at_a_time: PhantomData<Cell<()>>,
}

/// The parameters a statement reads on every execution, as this session sees them, and
/// the count of parameter changes (`DbInner::parameter_changes`) they were read at.
#[derive(Debug, Clone, Copy)]
struct HotParameters {
    changes: u64,
    multiblock_read_count: u32,
    parallel_max_servers: u64,
    statistics_all: bool,
    /// `timed_statistics = TRUE`: calls read their thread's CPU clock.
    timed_cpu: bool,
    /// `commit_logging = batch`, `commit_wait = nowait`, `commit_wait = force_wait`.
    commit_batch: bool,
    commit_nowait: bool,
    commit_force_wait: bool,
    /// `workarea_size_policy = manual`, `pga_aggregate_target`, `hash_area_size`.
    workarea_manual: bool,
    pga_aggregate_target: u64,
    hash_area_size: u64,
    /// `session_cached_cursors`.
    session_cached_cursors: u64,
    /// `optimizer_index_caching`, `optimizer_index_cost_adj`, `optimizer_cache_awareness`.
    optimizer: OptimizerSettings,
}

/// The parameters the optimizer's cost model reads, as this session sees them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct OptimizerSettings {
    /// `optimizer_index_caching`, 0 to 100.
    pub index_caching: u64,
    /// `optimizer_index_cost_adj`, 1 to 10000.
    pub index_cost_adj: u64,
    /// `optimizer_cache_awareness`.
    pub cache_awareness: bool,
}

/// A session's performance counters: those of the thread it runs on now, and what the
/// threads it ran on before counted (a session can move between threads; counters
/// count the thread that opened them).
struct SessionCounters {
    thread: crate::stats::hwcounters::ThreadCounters,
    earlier: crate::stats::hwcounters::Reading,
}

/// The bind variables of a running statement: names by slot, and this execution's values.
#[derive(Debug, Clone)]
pub(crate) struct StatementBinds {
    pub names: Arc<[String]>,
    pub values: Vec<Value>,
}

impl Default for StatementBinds {
    fn default() -> Self {
        StatementBinds { names: Arc::from([]), values: Vec::new() }
    }
}

/// A session moves between threads.
const _: fn() = || {
    fn send<T: Send>() {}
    send::<Session>();
};

impl Session {
    /// A new session running as `user` (empty: none yet, see `log_in_as`).
    pub(crate) fn new(db: Arc<DbInner>, user: &str) -> Session {
        let info = db.registry.register("USER");
        *info.user.lock() = Arc::from(user);
        let seed = u64::from(info.sid).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        Session {
            sequences: Arc::new(super::sequences::SessionSequences::new(&db, info.clone())),
            db,
            info,
            state: Mutex::new(SessionState { overrides: Vec::new(), progress: None, random_seed: seed }),
            txn: Default::default(),
            binds: Default::default(),
            autocommit: Cell::new(true),
            plan_statistics: Cell::new(false),
            counters: Default::default(),
            hot: Cell::new(None),
            call_workareas: Default::default(),
            cursor_cache: Default::default(),
            copy_input: Default::default(),
            _one_thread_at_a_time: PhantomData,
        }
    }

    /// Where this session's statements read NEXTVAL and CURRVAL.
    pub(crate) fn sequence_source(&self) -> Arc<dyn crate::expr::functions::SequenceSource> {
        self.sequences.clone()
    }

    /// Switches the session's performance counters on (opened for the calling thread,
    /// counting from now) or off. While on, helper threads working for its statements
    /// count too, and [`Session::hardware_counters`] reads the totals.
    pub fn set_hardware_counters(&self, on: bool) {
        let mut counters = self.counters.borrow_mut();
        match (on, counters.is_some()) {
            (true, false) => {
                let thread = crate::stats::hwcounters::ThreadCounters::open();
                *counters = Some(SessionCounters { thread, earlier: Default::default() });
            }
            (false, true) => *counters = None,
            _ => {}
        }
        self.stats().set_counting_helpers(on);
    }

    /// The performance counters' totals since they were switched on: the session's
    /// threads' and its helpers'. Counters the machine does not offer are listed as
    /// unavailable with the kernel's reason. `None` while they are off.
    pub fn hardware_counters(&self) -> Option<crate::stats::hwcounters::Reading> {
        let mut counters = self.counters.borrow_mut();
        let session = counters.as_mut()?;
        if !session.thread.is_current_thread() {
            // The session moved: keep what the old thread counted, count this one.
            session.earlier.add(&session.thread.read());
            session.thread = crate::stats::hwcounters::ThreadCounters::open();
        }
        let mut reading = session.thread.read();
        reading.add(&session.earlier);
        reading.add(&self.stats().helper_counts());
        Some(reading)
    }

    /// Whether each statement that changes data commits when it succeeds. On by default
    /// for the library (as JDBC connections); the shell turns it off (as SQL*Plus).
    pub fn autocommit(&self) -> bool {
        self.autocommit.get()
    }

    pub fn set_autocommit(&self, on: bool) {
        self.autocommit.set(on);
    }

    /// Whether the session has a transaction with uncommitted changes.
    pub fn in_transaction(&self) -> bool {
        self.txn.borrow().is_active()
    }

    /// Whether the session's next transaction reads committed data statement by
    /// statement with nothing set for it: none under way, no snapshot kept, no `SET
    /// TRANSACTION` made. Every transaction starts so, so setting READ COMMITTED then
    /// changes nothing.
    pub fn next_transaction_reads_committed(&self) -> bool {
        let txn = self.txn.borrow();
        !txn.is_active() && txn.snapshot.is_none() && txn.isolation == crate::txn::transaction::Isolation::ReadCommitted
    }

    /// This session's id (`SID` in `v$session`).
    pub fn sid(&self) -> u32 {
        self.info.sid
    }

    /// The database user this session runs as: its privileges are checked on every
    /// statement (SYS holds them all).
    pub fn user(&self) -> Arc<str> {
        self.info.user.lock().clone()
    }

    /// Makes this session run as `user`, which must exist (ORA-01017), not be locked
    /// (ORA-28000) and hold CREATE SESSION (ORA-01045): a log-in, as a server makes one
    /// for a client that authenticated as `user`.
    pub fn log_in_as(&self, user: &str) -> crate::error::Result<()> {
        let def = self.db.catalog.user(user).ok_or(crate::error::Error::LogonDenied { user: user.to_owned() })?;
        if def.locked {
            return Err(crate::error::Error::InvalidValue {
                context: user.to_owned(),
                message: "ORA-28000: the account is locked".into(),
            });
        }
        if !def.has(crate::catalog::SystemPrivilege::CreateSession) {
            return Err(crate::error::Error::InsufficientPrivileges {
                what: format!("user {user} lacks CREATE SESSION privilege; logon denied (ORA-01045)"),
            });
        }
        *self.info.user.lock() = Arc::from(def.name.as_str());
        Ok(())
    }

    /// Names the client this session works for (`v$session` PROGRAM and MACHINE, and
    /// PROGRAM in Active Session History): what a server learns when a client connects.
    pub fn set_client(&self, client: ClientIdentity) {
        *self.info.client.lock() = Some(Arc::new(client));
    }

    /// Limits how long a row lock wait of this session's statements may last (`None`,
    /// the default: until the holder ends): a wait past it fails its statement with
    /// ORA-30006, as `SELECT ... FOR UPDATE WAIT n` does, leaving the transaction open.
    /// A server sets it from a client's `lock_timeout`.
    pub fn set_lock_timeout(&self, limit: Option<std::time::Duration>) {
        self.stats().set_lock_wait_limit(limit);
    }

    /// A handle another thread uses to stop this session's running call
    /// ([`Canceller::cancel`]): a client's cancel request, a statement timeout.
    pub fn canceller(&self) -> Canceller {
        Canceller { info: self.info.clone() }
    }

    /// This session's statistics, for reading deltas around a statement.
    pub fn stats(&self) -> &SessionStats {
        &self.info.stats
    }

    /// Sets (or clears) the callback long loads report progress to.
    pub fn set_progress(&self, progress: Option<ProgressFn>) {
        self.state.lock().progress = progress;
    }

    /// The parameter values this session sees: the system's, then its own ALTER SESSIONs.
    pub fn parameters(&self) -> ParameterValues {
        let mut values = self.db.parameters.read().clone();
        for (k, v) in &self.state.lock().overrides {
            // Validated when set.
            let _ = values.set(k, v);
        }
        values
    }

    /// The value of one numeric parameter (one of the names in [`params`]) for this
    /// session, without copying the others: its ALTER SESSION value, else the system's.
    /// (The ones every execution reads have accessors that cache them.)
    pub(crate) fn parameter_u64(&self, name: &'static str) -> u64 {
        self.read_parameter(name, params::number)
    }

    /// This session's `db_file_multiblock_read_count`.
    pub(crate) fn multiblock_read_count(&self) -> u32 {
        self.hot_parameters().multiblock_read_count
    }

    /// This session's settings of the optimizer's cost model.
    pub(crate) fn optimizer_settings(&self) -> OptimizerSettings {
        self.hot_parameters().optimizer
    }

    /// This session's `parallel_max_servers`.
    pub(crate) fn parallel_max_servers(&self) -> u64 {
        self.hot_parameters().parallel_max_servers
    }

    /// `read(name, value)` of this session's value of `name`: its ALTER SESSION value, else
    /// the system's.
    fn read_parameter<T>(&self, name: &'static str, read: impl FnOnce(&str, &str) -> T) -> T {
        match self.state.lock().overrides.iter().find(|(k, _)| k == name) {
            Some((_, value)) => read(name, value),
            None => read(name, self.db.parameters.read().get(name)),
        }
    }

    /// The parameters every execution reads, read again only after a parameter changed.
    fn hot_parameters(&self) -> HotParameters {
        let changes = self.db.parameter_changes.load(Ordering::Acquire);
        if let Some(hot) = self.hot.get().filter(|h| h.changes == changes) {
            return hot;
        }
        let hot = HotParameters {
            changes,
            multiblock_read_count: self.read_parameter(params::MBRC, params::number) as u32,
            parallel_max_servers: self.read_parameter(params::PARALLEL_MAX_SERVERS, params::number),
            statistics_all: self.read_parameter(params::STATISTICS_LEVEL, |_, value| value.eq_ignore_ascii_case("all")),
            // Through the merged values, whose `get` derives an unset value from the
            // session's statistics_level.
            timed_cpu: self.parameters().get_bool(params::TIMED_STATISTICS),
            commit_batch: self.read_parameter(params::COMMIT_LOGGING, |_, value| value == "batch"),
            commit_nowait: self.read_parameter(params::COMMIT_WAIT, |_, value| value == "nowait"),
            commit_force_wait: self.read_parameter(params::COMMIT_WAIT, |_, value| value == "force_wait"),
            workarea_manual: self.read_parameter(params::WORKAREA_SIZE_POLICY, |_, value| value == "manual"),
            pga_aggregate_target: self.read_parameter(params::PGA_AGGREGATE_TARGET, params::number),
            hash_area_size: self.read_parameter(params::HASH_AREA_SIZE, params::number),
            session_cached_cursors: self.read_parameter(params::SESSION_CACHED_CURSORS, params::number),
            optimizer: OptimizerSettings {
                index_caching: self.read_parameter(params::OPTIMIZER_INDEX_CACHING, params::number),
                index_cost_adj: self.read_parameter(params::OPTIMIZER_INDEX_COST_ADJ, params::number),
                cache_awareness: self.read_parameter(params::OPTIMIZER_CACHE_AWARENESS, |_, value| value == "TRUE"),
            },
        };
        self.hot.set(Some(hot));
        hot
    }

    /// This session's `commit_logging = batch`, `commit_wait = nowait` and `commit_wait =
    /// force_wait`, read without copying its parameters (every commit asks).
    pub(crate) fn commit_settings(&self) -> (bool, bool, bool) {
        let hot = self.hot_parameters();
        (hot.commit_batch, hot.commit_nowait, hot.commit_force_wait)
    }

    /// How many statements this session keeps parsed in its cursor cache
    /// (`session_cached_cursors`; 0: none).
    pub(crate) fn session_cached_cursors(&self) -> usize {
        self.hot_parameters().session_cached_cursors as usize
    }

    /// The work area this session's statements' hash joins get (see
    /// [`crate::exec::workarea`]), spilling to the database directory.
    pub(crate) fn workarea(&self) -> crate::exec::workarea::WorkArea<'_> {
        let hot = self.hot_parameters();
        let temp = crate::exec::workarea::TempSpace {
            dir: &self.db.dir,
            io: &*self.db.io,
            block_size: self.db.cache.block_size(),
        };
        crate::exec::workarea::WorkArea::sized(hot.workarea_manual, hot.pga_aggregate_target, hot.hash_area_size, temp)
    }

    /// Whether this session's calls read their thread's CPU clock (`timed_statistics`).
    pub(crate) fn times_cpu(&self) -> bool {
        self.hot_parameters().timed_cpu
    }

    /// Whether this session's queries gather row-source statistics: `statistics_level =
    /// all`, or [`Session::set_plan_statistics`].
    pub fn gathers_plan_statistics(&self) -> bool {
        self.plan_statistics.get() || self.hot_parameters().statistics_all
    }

    /// Makes this session's queries gather row-source statistics (in
    /// [`QueryResult::plan_statistics`](crate::QueryResult::plan_statistics)) whatever `statistics_level` says, as SET
    /// AUTOTRACE does.
    pub fn set_plan_statistics(&self, on: bool) {
        self.plan_statistics.set(on);
    }

    /// The access context for this session's next statement.
    pub(crate) fn access_context(&self) -> AccessContext<'_> {
        self.access_context_at(self.db.clock.current())
    }

    /// [`Session::access_context`] as of SCN `now`: a statement whose parts each take a
    /// context reads one snapshot so (read committed; a serializable transaction's is
    /// its own whatever `now` is).
    pub(crate) fn access_context_at(&self, now: u64) -> AccessContext<'_> {
        let mbrc = self.multiblock_read_count();
        let reader = self.txn.borrow_mut().reader(now);
        self.db.access_context(&self.info.stats, mbrc, now, reader)
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        if self.in_transaction() {
            let ctx = self.access_context();
            if let Err(e) = self.txn.borrow_mut().rollback(&ctx) {
                eprintln!("lioscope: rolling back the transaction of session {}: {e}", self.info.sid);
            }
        }
        self.db.registry.unregister(self.info.sid);
    }
}
