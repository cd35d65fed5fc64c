//! Active Session History: samples of what every active session was doing, taken at a
//! fixed interval by the instance's sampler, kept in a bounded ring for
//! `v$active_session_history`.
//!
//! ```text
//!  every _ash_sampling_interval ms:  registry ─► each session's Activity (one coherent
//!                                    reading) ─► a Sample if it is active ─► ring
//!  ring: oldest ◄─ at most _ash_size samples ─► newest (the oldest dropped first)
//! ```
//!
//! A session is *active* when it runs a call (a foreground statement, a population
//! worker's task, the database writer's checkpoint) or waits on an event whose class is
//! not Idle (the log writer's writes); a wait of the Idle class is never sampled, as in
//! Oracle. Each sample records the interval it was taken with, so the samples of an
//! activity times their interval estimate its time, even across a change of interval.
//!
//! Invariants: the ring never holds more than its capacity; sample ids grow by one a
//! tick (a tick with no active session still uses its id); all samples of one tick share
//! its id, time and interval.

use super::activity::{Reading, flags};
use super::{Registry, SessionInfo, WaitEvent};
use parking_lot::Mutex;
use std::collections::VecDeque;
use std::sync::atomic::Ordering;
use std::time::Instant;

/// The columns of `v$active_session_history`, in the view's order: one a field of
/// [`Sample`] (the flags one column each), and the interval last.
pub const VIEW_COLUMNS: [&str; 27] = [
    "SAMPLE_ID",
    "SAMPLE_TIME",
    "SESSION_ID",
    "SESSION_TYPE",
    "PROGRAM",
    "SQL_ID",
    "SQL_EXEC_ID",
    "SQL_PLAN_LINE_ID",
    "SQL_PLAN_OPERATION",
    "SESSION_STATE",
    "EVENT",
    "WAIT_CLASS",
    "P1",
    "P2",
    "P3",
    "TIME_WAITED",
    "BLOCKING_SESSION",
    "CURRENT_OBJ#",
    "CURRENT_FILE#",
    "CURRENT_BLOCK#",
    "IN_PARSE",
    "IN_HARD_PARSE",
    "IN_SQL_EXECUTION",
    "IN_INMEMORY_QUERY",
    "IN_INMEMORY_POPULATE",
    "IN_INMEMORY_REPOPULATE",
    "SAMPLE_INTERVAL_MS",
];

/// Whether samples can be grouped by `column` of [`VIEW_COLUMNS`]: every column but the
/// sample's own identity and measures (its id, time, interval and TIME_WAITED).
pub fn is_grouping_column(column: &str) -> bool {
    VIEW_COLUMNS.contains(&column)
        && !matches!(column, "SAMPLE_ID" | "SAMPLE_TIME" | "SAMPLE_INTERVAL_MS" | "TIME_WAITED")
}

/// One session at one tick: a row of `v$active_session_history`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sample {
    pub sample_id: u64,
    /// Local time of the tick, in seconds (a DATE).
    pub sample_time: i64,
    /// The sampling interval the tick was taken with, in milliseconds.
    pub interval_ms: u32,
    pub sid: u32,
    /// The session's program (`v$session.PROGRAM`: USER, LGWR, DBW0, W000, …, or the
    /// program a client connected with).
    pub program: std::sync::Arc<str>,
    /// A foreground session (one of the API or of a client), as opposed to a background one.
    pub foreground: bool,
    /// The statement running, as its SQL_ID hash and SQL_EXEC_ID.
    pub sql: Option<(u64, u64)>,
    /// The plan line the statement works in: its id and the operation's code (the
    /// `sql` layer's numbering).
    pub plan_line: Option<(u16, u8)>,
    /// The event waited on (`None`: on CPU).
    pub event: Option<WaitEvent>,
    /// P1–P3 of the wait, when it has them.
    pub p: Option<[u64; 3]>,
    /// Microseconds the wait had lasted when sampled (0 on CPU).
    pub time_waited_us: u64,
    pub blocking_session: Option<u32>,
    /// The time-model [`flags`] (IN_PARSE …) set at the tick.
    pub flags: u8,
}

impl Sample {
    /// A foreground session (one of the API), as opposed to a background one.
    pub fn is_foreground(&self) -> bool {
        self.foreground
    }

    /// The file and block the wait is for, when it is a wait for a block (its P1 and P2).
    pub fn current_block(&self) -> Option<(u64, u64)> {
        let block_wait = matches!(
            self.event?,
            WaitEvent::DbFileSequentialRead
                | WaitEvent::DbFileScatteredRead
                | WaitEvent::ReadByOtherSession
                | WaitEvent::BufferBusyWaits
        );
        let p = self.p?;
        block_wait.then_some((p[0], p[1]))
    }

    /// Whether time-model flag `flag` was set.
    pub fn has(&self, flag: u8) -> bool {
        self.flags & flag != 0
    }

    /// The sample of `session` read as `reading` at `now`, if it is active.
    fn of(session: &SessionInfo, reading: Reading, now: Instant) -> Option<Sample> {
        let event = reading.state.wait_event();
        let in_call = session.active.load(Ordering::Relaxed);
        match event {
            Some(e) if e.class() == "Idle" => return None,
            None if !in_call => return None,
            _ => {}
        }
        let waited_ns = super::activity::monotonic_ns(now).saturating_sub(reading.wait_started_ns);
        Some(Sample {
            sample_id: 0,
            sample_time: 0,
            interval_ms: 0,
            sid: session.sid,
            program: session.program(),
            foreground: session.kind == "USER",
            sql: reading.sql,
            plan_line: reading.state.plan_line(),
            event,
            p: reading.wait.map(|w| w.p),
            time_waited_us: if event.is_some() { waited_ns / 1000 } else { 0 },
            blocking_session: reading.wait.and_then(|w| w.blocking_session),
            flags: reading.state.flags & !(flags::HAS_SQL | flags::HAS_WAIT_PARAMETERS),
        })
    }
}

/// The ring of samples of one instance.
#[derive(Debug)]
pub struct History {
    ring: Mutex<Ring>,
}

#[derive(Debug)]
struct Ring {
    samples: VecDeque<Sample>,
    /// Samples kept at most (`_ash_size`).
    capacity: usize,
    next_sample_id: u64,
}

impl History {
    /// An empty history keeping at most `capacity` samples.
    pub fn new(capacity: usize) -> History {
        History { ring: Mutex::new(Ring { samples: VecDeque::new(), capacity, next_sample_id: 1 }) }
    }

    /// Keeps at most `capacity` samples from now on (the oldest go at once if there are
    /// more).
    pub fn set_capacity(&self, capacity: usize) {
        let mut ring = self.ring.lock();
        ring.capacity = capacity;
        ring.trim();
    }

    /// Takes one tick's samples of the active sessions of `registry`, taken with interval
    /// `interval_ms`, at local time `sample_time` (seconds).
    pub fn take_sample(&self, registry: &Registry, interval_ms: u32, sample_time: i64) {
        let now = Instant::now();
        let samples: Vec<Sample> =
            registry.sessions().iter().filter_map(|s| Sample::of(s, s.stats.activity().read()?, now)).collect();
        self.push_tick(samples, interval_ms, sample_time);
    }

    /// Adds one tick's samples, under its id, time and interval.
    fn push_tick(&self, samples: Vec<Sample>, interval_ms: u32, sample_time: i64) {
        let mut ring = self.ring.lock();
        let sample_id = ring.next_sample_id;
        ring.next_sample_id += 1;
        for mut sample in samples {
            (sample.sample_id, sample.sample_time, sample.interval_ms) = (sample_id, sample_time, interval_ms);
            ring.samples.push_back(sample);
        }
        ring.trim();
    }

    /// Every sample kept, oldest first.
    pub fn samples(&self) -> Vec<Sample> {
        self.ring.lock().samples.iter().cloned().collect()
    }

    /// How many samples are kept.
    pub fn len(&self) -> usize {
        self.ring.lock().samples.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl Ring {
    fn trim(&mut self) {
        let over = self.samples.len().saturating_sub(self.capacity);
        self.samples.drain(..over);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(sid: u32) -> Sample {
        Sample {
            sample_id: 0,
            sample_time: 0,
            interval_ms: 0,
            sid,
            program: "USER".into(),
            foreground: true,
            sql: None,
            plan_line: None,
            event: None,
            p: None,
            time_waited_us: 0,
            blocking_session: None,
            flags: 0,
        }
    }

    #[test]
    fn the_ring_keeps_the_newest_samples_up_to_its_capacity() {
        let history = History::new(5);
        for tick in 0..4 {
            history.push_tick(vec![sample(1), sample(2)], 10, tick);
            assert!(history.len() <= 5);
        }
        let kept = history.samples();
        assert_eq!(kept.len(), 5);
        assert_eq!(kept.iter().map(|s| s.sample_id).collect::<Vec<_>>(), [2, 3, 3, 4, 4], "the oldest went first");
        assert!(kept.iter().all(|s| s.interval_ms == 10));
        history.set_capacity(2);
        assert_eq!(history.samples().iter().map(|s| (s.sample_id, s.sid)).collect::<Vec<_>>(), [(4, 1), (4, 2)]);
        history.set_capacity(0);
        history.push_tick(vec![sample(1)], 10, 9);
        assert!(history.is_empty());
    }

    #[test]
    fn an_idle_tick_still_uses_its_sample_id() {
        let history = History::new(10);
        history.push_tick(vec![], 1000, 0);
        history.push_tick(vec![sample(3)], 1000, 1);
        assert_eq!(history.samples()[0].sample_id, 2);
    }

    #[test]
    fn only_active_sessions_and_waits_that_are_not_idle_are_sampled() {
        let registry = Registry::default();
        let user = registry.register("USER");
        let lgwr = registry.register("LGWR");
        let history = History::new(100);
        history.take_sample(&registry, 10, 0);
        assert!(history.is_empty(), "nobody is active");
        user.active.store(true, Ordering::Relaxed);
        let _write = lgwr.stats.begin_wait(WaitEvent::LogFileParallelWrite);
        history.take_sample(&registry, 10, 0);
        let got: Vec<_> = history.samples().iter().map(|s| (s.sid, s.event)).collect();
        assert_eq!(got, [(user.sid, None), (lgwr.sid, Some(WaitEvent::LogFileParallelWrite))]);
        let _idle = user.stats.begin_wait(WaitEvent::PxDeqTableQNormal);
        history.take_sample(&registry, 10, 0);
        assert_eq!(history.samples().iter().filter(|s| s.sample_id == 3).count(), 1, "an idle wait is not sampled");
    }
}
