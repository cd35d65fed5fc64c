//! Instrumentation: statistics, wait events and the time model, per session and for the
//! system, with Oracle's names; plus operating-system figures for `v$osstat`, and the
//! performance counters of a thread ([`hwcounters`]), and per-statement totals for
//! `v$sql` ([`sqlarea`]), with their work areas' for `v$sql_workarea` ([`workarea`]).
//! Which vector instruction sets the CPU has, for the kernels that choose by it, is
//! here too ([`isa`]).
//!
//! Every layer counts into the [`SessionStats`] of the session it works for. The system
//! view (`v$sysstat`, `v$system_event`, `v$sys_time_model`) is the sum over live sessions
//! plus what sessions that have ended counted; [`Registry`] keeps both.
//!
//! Each session also publishes what it is doing now ([`activity`]), which the sampler of
//! Active Session History reads into its ring ([`ash`]).
//!
//! The registry also shows which snapshots are being read: a session publishes, before
//! each statement takes its snapshot, an SCN no later than it
//! ([`SessionInfo::reading_since`]), so [`Registry::oldest_reader`] is never newer than
//! any running statement's snapshot, nor than that of a serializable or read-only
//! transaction between its statements (index leaves keep deleted entries until then).

pub mod activity;
pub mod ash;
pub mod hwcounters;
pub mod isa;
mod names;
pub mod osstat;
mod session;
pub mod sqlarea;
pub mod workarea;

pub use names::{Stat, TimeModel, WaitEvent};
pub use session::{EventSnapshot, HISTOGRAM_BUCKETS, OwnedCounter, SessionStats, WaitTimer, histogram_bucket};

use parking_lot::Mutex;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};

/// What `v$session` shows about one session, and its statistics.
#[derive(Debug)]
pub struct SessionInfo {
    pub sid: u32,
    /// Who opened it: "USER" for sessions of the API, or a background role.
    pub kind: &'static str,
    /// The database user it runs as (`v$session` USERNAME): SYS for a session of the
    /// API unless it logged in as another; empty for a background session.
    pub user: Mutex<Arc<str>>,
    /// Who the client says it is (`v$session` PROGRAM, MACHINE), set by a server for
    /// each connection; a session of the API shows its kind as its program.
    pub client: Mutex<Option<Arc<ClientIdentity>>>,
    pub logon_time: i64,
    /// True while the session executes a statement (`STATUS = 'ACTIVE'`).
    pub active: AtomicBool,
    /// The statement being executed, or the last one (`v$session.sql_text`).
    pub sql_text: Mutex<String>,
    pub stats: SessionStats,
    /// While a statement runs: an SCN no later than the snapshot it reads as of (0 when
    /// none runs). Index leaves keep deleted entries that such a snapshot may need.
    pub reading_since: std::sync::atomic::AtomicU64,
}

/// A session's client as it named itself when it connected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientIdentity {
    /// The client program (a PostgreSQL client's `application_name`), empty if unnamed.
    pub program: String,
    /// Where it connected from (the client's address).
    pub machine: String,
}

impl SessionInfo {
    /// `v$session.PROGRAM`: the client's program when it named one, else the kind.
    pub fn program(&self) -> Arc<str> {
        match &*self.client.lock() {
            Some(client) if !client.program.is_empty() => Arc::from(client.program.as_str()),
            _ => Arc::from(self.kind),
        }
    }
}

/// Totals of ended sessions.
#[derive(Debug)]
struct EndedTotals {
    counters: Vec<u64>,
    events: Vec<EventSnapshot>,
    time_model: [u64; TimeModel::COUNT],
}

/// The live sessions and the totals of ended ones.
#[derive(Debug)]
pub struct Registry {
    sessions: Mutex<Vec<Arc<SessionInfo>>>,
    ended: Mutex<EndedTotals>,
    next_sid: AtomicU32,
    /// The next statement execution's SQL_EXEC_ID (Oracle's start at 16,777,216).
    next_sql_exec_id: std::sync::atomic::AtomicU64,
}

impl Default for Registry {
    fn default() -> Self {
        Registry {
            sessions: Mutex::new(Vec::new()),
            ended: Mutex::new(EndedTotals {
                counters: vec![0; Stat::COUNT],
                events: vec![EventSnapshot::default(); WaitEvent::COUNT],
                time_model: [0; TimeModel::COUNT],
            }),
            next_sid: AtomicU32::new(1),
            next_sql_exec_id: std::sync::atomic::AtomicU64::new(FIRST_SQL_EXEC_ID),
        }
    }
}

/// The first SQL_EXEC_ID an instance hands out, as Oracle's.
pub const FIRST_SQL_EXEC_ID: u64 = 1 << 24;

impl Registry {
    /// A new SQL_EXEC_ID for a statement execution beginning now (unique in the instance).
    pub fn next_sql_exec_id(&self) -> u64 {
        self.next_sql_exec_id.fetch_add(1, Ordering::Relaxed)
    }

    /// Registers a new session.
    pub fn register(&self, kind: &'static str) -> Arc<SessionInfo> {
        let info = Arc::new(SessionInfo {
            sid: self.next_sid.fetch_add(1, Ordering::Relaxed),
            kind,
            // Local time, like SYSDATE.
            logon_time: crate::types::local_now(),
            active: AtomicBool::new(false),
            user: Mutex::new(Arc::from("")),
            client: Mutex::new(None),
            sql_text: Mutex::new(String::new()),
            stats: SessionStats::default(),
            reading_since: std::sync::atomic::AtomicU64::new(0),
        });
        self.sessions.lock().push(info.clone());
        info
    }

    /// The oldest SCN a running statement may read as of (`u64::MAX` when none runs).
    pub fn oldest_reader(&self) -> u64 {
        self.sessions
            .lock()
            .iter()
            .map(|s| s.reading_since.load(Ordering::Acquire))
            .filter(|&scn| scn != 0)
            .min()
            .unwrap_or(u64::MAX)
    }

    /// Removes an ending session, folding its figures into the system totals.
    pub fn unregister(&self, sid: u32) {
        let mut sessions = self.sessions.lock();
        let Some(pos) = sessions.iter().position(|s| s.sid == sid) else { return };
        let info = sessions.swap_remove(pos);
        let mut ended = self.ended.lock();
        for (total, v) in ended.counters.iter_mut().zip(info.stats.snapshot()) {
            *total += v;
        }
        for (i, e) in WaitEvent::ALL.iter().enumerate() {
            ended.events[i].accumulate(&info.stats.event(*e));
        }
        for (i, m) in TimeModel::ALL.iter().enumerate() {
            ended.time_model[i] += info.stats.time(*m);
        }
    }

    /// The live sessions, by sid.
    pub fn sessions(&self) -> Vec<Arc<SessionInfo>> {
        let mut v = self.sessions.lock().clone();
        v.sort_by_key(|s| s.sid);
        v
    }

    /// `v$sysstat`: each statistic summed over all sessions, live and ended.
    pub fn system_counters(&self) -> Vec<u64> {
        let mut totals = self.ended.lock().counters.clone();
        for s in self.sessions() {
            for (t, v) in totals.iter_mut().zip(s.stats.snapshot()) {
                *t += v;
            }
        }
        totals
    }

    /// `v$system_event`: one event summed over all sessions.
    pub fn system_event(&self, event: WaitEvent) -> EventSnapshot {
        let mut total = self.ended.lock().events[event as usize];
        for s in self.sessions() {
            total.accumulate(&s.stats.event(event));
        }
        total
    }

    /// `v$sys_time_model`: one figure summed over all sessions.
    pub fn system_time(&self, model: TimeModel) -> u64 {
        self.ended.lock().time_model[model as usize] + self.sessions().iter().map(|s| s.stats.time(model)).sum::<u64>()
    }
}
