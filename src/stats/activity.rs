//! What a session is doing now, published for Active Session History
//! (`v$active_session_history`, [`super::ash`]): on CPU or waiting, on which event since
//! when and with which parameters, the statement running (SQL_ID, SQL_EXEC_ID, the plan
//! line), and the time-model phase it is in (parse, hard parse, execution, in-memory
//! query, population, repopulation).
//!
//! The session's own thread writes it, with relaxed stores (no locked instruction), only
//! where a call, a parse, a scan of the column store, a population or a wait begins or
//! ends: never per row. A sampler on another thread reads it. Most of it is one word:
//!
//! ```text
//!  bit 63        48 47          32 31        24 23      16 15              0
//!     ┌────────────┬──────────────┬────────────┬──────────┬────────────────┐
//!     │ generation │ plan line id │ operation  │  flags   │  wait event+1  │
//!     │            │              │ code+1 (0: │ (IN_*,   │  (0: on CPU)   │
//!     │            │              │  none)     │ HAS_*)   │                │
//!     └────────────┴──────────────┴────────────┴──────────┴────────────────┘
//! ```
//!
//! Beside the word lie what does not fit in it: the statement's SQL_ID hash and
//! SQL_EXEC_ID, when the current wait began, its P1–P3 and the session blocking it.
//!
//! Invariant (a sequence lock): the writer makes the generation odd before it rewrites
//! those fields and even again, with the new word, after; a reader takes the word, the
//! fields, then the word again, and keeps what it read only when both words are equal and
//! even. A sample therefore never mixes the parameters of one wait with the event of
//! another, nor one statement's SQL_ID with another's execution id.

use super::names::WaitEvent;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering, fence};
use std::time::Instant;

/// The flags of the state word (an 8-bit set).
pub mod flags {
    /// Parsing (Oracle's IN_PARSE): the text, or a plan being made.
    pub const IN_PARSE: u8 = 1;
    /// A hard parse: planning (IN_HARD_PARSE).
    pub const IN_HARD_PARSE: u8 = 1 << 1;
    /// Executing a statement (IN_SQL_EXECUTION).
    pub const IN_SQL_EXECUTION: u8 = 1 << 2;
    /// Scanning the in-memory column store (IN_INMEMORY_QUERY).
    pub const IN_INMEMORY_QUERY: u8 = 1 << 3;
    /// Populating a column-store unit for the first time (IN_INMEMORY_POPULATE).
    pub const IN_INMEMORY_POPULATE: u8 = 1 << 4;
    /// Repopulating a unit (IN_INMEMORY_REPOPULATE).
    pub const IN_INMEMORY_REPOPULATE: u8 = 1 << 5;
    /// The current wait has P1–P3 (and perhaps a blocking session) beside the word.
    pub const HAS_WAIT_PARAMETERS: u8 = 1 << 6;
    /// A statement runs: its SQL_ID and SQL_EXEC_ID lie beside the word.
    pub const HAS_SQL: u8 = 1 << 7;
}

/// The state word, unpacked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct State {
    /// The wait event's index in [`WaitEvent::ALL`] plus one; 0 when on CPU.
    pub event: u16,
    /// A set of [`flags`].
    pub flags: u8,
    /// The plan operation's code plus one (the code is the `sql` layer's); 0: none.
    pub operation: u8,
    /// The plan line id of that operation (meaningful when `operation` is not 0).
    pub line: u16,
    /// Odd while the fields beside the word are being rewritten.
    pub generation: u16,
}

impl State {
    pub fn encode(self) -> u64 {
        u64::from(self.event)
            | u64::from(self.flags) << 16
            | u64::from(self.operation) << 24
            | u64::from(self.line) << 32
            | u64::from(self.generation) << 48
    }

    pub fn decode(word: u64) -> State {
        State {
            event: word as u16,
            flags: (word >> 16) as u8,
            operation: (word >> 24) as u8,
            line: (word >> 32) as u16,
            generation: (word >> 48) as u16,
        }
    }

    /// The event waited on, if any.
    pub fn wait_event(self) -> Option<WaitEvent> {
        self.event.checked_sub(1).and_then(|i| WaitEvent::ALL.get(usize::from(i)).copied())
    }

    pub fn has(self, flag: u8) -> bool {
        self.flags & flag != 0
    }

    /// The plan line and operation code, if published.
    pub fn plan_line(self) -> Option<(u16, u8)> {
        self.operation.checked_sub(1).map(|code| (self.line, code))
    }
}

/// What a wait knows of what it waits for: Oracle's P1, P2, P3 for its event, and the
/// session holding what it waits for (a row lock's holder).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct WaitParameters {
    pub p: [u64; 3],
    pub blocking_session: Option<u32>,
}

/// One coherent reading of a session's activity.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Reading {
    pub state: State,
    /// The running statement's SQL_ID hash and SQL_EXEC_ID (when `HAS_SQL`).
    pub sql: Option<(u64, u64)>,
    /// When the current wait began, in nanoseconds of [`monotonic_ns`].
    pub wait_started_ns: u64,
    /// The current wait's parameters (when `HAS_WAIT_PARAMETERS`).
    pub wait: Option<WaitParameters>,
}

/// What one session publishes (see the module doc); written by its thread only.
#[derive(Debug, Default)]
pub struct Activity {
    word: AtomicU64,
    sql_hash: AtomicU64,
    sql_exec_id: AtomicU64,
    wait_started_ns: AtomicU64,
    p: [AtomicU64; 3],
    /// The blocking session's sid, 0 for none (sids start at 1).
    blocking_session: AtomicU32,
}

/// Nanoseconds from a fixed instant of this process to `at` (0 for instants before it).
pub fn monotonic_ns(at: Instant) -> u64 {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    at.saturating_duration_since(*EPOCH.get_or_init(Instant::now)).as_nanos() as u64
}

impl Activity {
    fn state(&self) -> State {
        State::decode(self.word.load(Ordering::Relaxed))
    }

    /// Changes the word alone (nothing beside it).
    #[inline]
    fn set(&self, change: impl FnOnce(&mut State)) {
        let mut state = self.state();
        change(&mut state);
        self.word.store(state.encode(), Ordering::Release);
    }

    /// Rewrites fields beside the word with `write`, then the word by `change`, under the
    /// sequence lock.
    #[inline]
    fn rewrite(&self, write: impl FnOnce(), change: impl FnOnce(&mut State)) {
        let mut state = self.state();
        state.generation = state.generation.wrapping_add(1) | 1;
        self.word.store(state.encode(), Ordering::Relaxed);
        fence(Ordering::Release);
        write();
        change(&mut state);
        state.generation = state.generation.wrapping_add(1);
        self.word.store(state.encode(), Ordering::Release);
    }

    /// The event waited on now, if any.
    pub fn current_wait(&self) -> Option<WaitEvent> {
        self.state().wait_event()
    }

    /// A wait on `event` began at `started`, with `parameters` when it knows them.
    #[inline]
    pub fn begin_wait(&self, event: WaitEvent, started: Instant, parameters: Option<WaitParameters>) {
        let started_ns = monotonic_ns(started);
        self.rewrite(
            || {
                self.wait_started_ns.store(started_ns, Ordering::Relaxed);
                if let Some(w) = parameters {
                    for (slot, v) in self.p.iter().zip(w.p) {
                        slot.store(v, Ordering::Relaxed);
                    }
                    self.blocking_session.store(w.blocking_session.unwrap_or(0), Ordering::Relaxed);
                }
            },
            |s| {
                s.event = event as u16 + 1;
                s.flags = (s.flags & !flags::HAS_WAIT_PARAMETERS)
                    | if parameters.is_some() { flags::HAS_WAIT_PARAMETERS } else { 0 };
            },
        );
    }

    /// The current wait ended: the session is on CPU again.
    #[inline]
    pub fn end_wait(&self) {
        self.set(|s| {
            s.event = 0;
            s.flags &= !flags::HAS_WAIT_PARAMETERS;
        });
    }

    /// A statement with SQL_ID hash `sql_hash` begins its execution `sql_exec_id`.
    pub fn begin_call(&self, sql_hash: u64, sql_exec_id: u64) {
        self.rewrite(
            || {
                self.sql_hash.store(sql_hash, Ordering::Relaxed);
                self.sql_exec_id.store(sql_exec_id, Ordering::Relaxed);
            },
            |s| {
                s.flags = (s.flags & flags::HAS_WAIT_PARAMETERS) | flags::HAS_SQL | flags::IN_SQL_EXECUTION;
                (s.operation, s.line) = (0, 0);
            },
        );
    }

    /// The statement has ended: no statement, phase or plan line is published.
    pub fn end_call(&self) {
        self.set(|s| {
            s.flags &= flags::HAS_WAIT_PARAMETERS;
            (s.operation, s.line) = (0, 0);
        });
    }

    /// Publishes the plan line the statement works in: line `line`, operation `code`.
    pub fn set_plan_line(&self, line: u16, code: u8) {
        self.set(|s| (s.operation, s.line) = (code.saturating_add(1), line));
    }

    /// Sets the flags `on` and clears `off` until the returned guard drops, which puts
    /// back what they were.
    pub fn enter(&self, on: u8, off: u8) -> Phase<'_> {
        let before = self.state().flags & (on | off);
        self.set(|s| s.flags = (s.flags & !off) | on);
        Phase { activity: self, mask: on | off, before }
    }

    /// A coherent reading (see the module doc); `None` if the session kept rewriting
    /// while it was read (it is then sampled at the next tick).
    pub fn read(&self) -> Option<Reading> {
        for _ in 0..64 {
            let word = self.word.load(Ordering::Acquire);
            let state = State::decode(word);
            if state.generation & 1 == 1 {
                std::hint::spin_loop();
                continue;
            }
            let sql = (self.sql_hash.load(Ordering::Relaxed), self.sql_exec_id.load(Ordering::Relaxed));
            let wait_started_ns = self.wait_started_ns.load(Ordering::Relaxed);
            let p = [0, 1, 2].map(|i| self.p[i].load(Ordering::Relaxed));
            let blocker = self.blocking_session.load(Ordering::Relaxed);
            fence(Ordering::Acquire);
            if self.word.load(Ordering::Relaxed) != word {
                continue;
            }
            return Some(Reading {
                state,
                sql: state.has(flags::HAS_SQL).then_some(sql),
                wait_started_ns,
                wait: state
                    .has(flags::HAS_WAIT_PARAMETERS)
                    .then_some(WaitParameters { p, blocking_session: (blocker != 0).then_some(blocker) }),
            });
        }
        None
    }
}

/// Flags set for a phase of the session's work; put back when it drops.
#[must_use = "the phase ends when this guard drops"]
pub struct Phase<'a> {
    activity: &'a Activity,
    mask: u8,
    before: u8,
}

impl Drop for Phase<'_> {
    fn drop(&mut self) {
        let (mask, before) = (self.mask, self.before);
        self.activity.set(|s| s.flags = (s.flags & !mask) | before);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_state_word_round_trips() {
        let states = [
            State::default(),
            State { event: 1, flags: 0xff, operation: 255, line: u16::MAX, generation: u16::MAX },
            State { event: 12, flags: flags::IN_SQL_EXECUTION | flags::HAS_SQL, operation: 3, line: 2, generation: 8 },
        ];
        for s in states {
            assert_eq!(State::decode(s.encode()), s);
        }
        assert_eq!(State { event: 0xabcd, ..Default::default() }.encode(), 0xabcd, "the event is the low 16 bits");
        assert_eq!(State { generation: 1, ..Default::default() }.encode(), 1 << 48, "the generation the top 16");
    }

    #[test]
    fn a_wait_publishes_its_event_and_parameters_until_it_ends() {
        let a = Activity::default();
        assert_eq!(a.read().map(|r| r.state.wait_event()), Some(None), "on CPU");
        let w = WaitParameters { p: [1415053318, 0x10002, 7], blocking_session: Some(5) };
        a.begin_wait(WaitEvent::EnqTxRowLockContention, Instant::now(), Some(w));
        let r = a.read().expect("nobody writes");
        assert_eq!(r.state.wait_event(), Some(WaitEvent::EnqTxRowLockContention));
        assert_eq!(r.wait, Some(w));
        assert_eq!(r.state.generation % 2, 0, "even once written");
        a.end_wait();
        let r = a.read().expect("nobody writes");
        assert_eq!((r.state.wait_event(), r.wait), (None, None));
        a.begin_wait(WaitEvent::LogFileSync, Instant::now(), None);
        assert_eq!(a.read().and_then(|r| r.wait), None, "a wait without parameters shows none");
    }

    #[test]
    fn a_call_publishes_its_statement_and_a_phase_is_put_back() {
        let a = Activity::default();
        a.begin_call(42, 16_777_216);
        a.set_plan_line(2, 1);
        {
            let _parse = a.enter(flags::IN_PARSE | flags::IN_HARD_PARSE, flags::IN_SQL_EXECUTION);
            let s = a.read().unwrap().state;
            assert!(s.has(flags::IN_PARSE) && s.has(flags::IN_HARD_PARSE) && !s.has(flags::IN_SQL_EXECUTION));
        }
        let r = a.read().unwrap();
        assert_eq!(r.sql, Some((42, 16_777_216)));
        assert_eq!(r.state.plan_line(), Some((2, 1)));
        assert!(r.state.has(flags::IN_SQL_EXECUTION) && !r.state.has(flags::IN_PARSE));
        a.end_call();
        let r = a.read().unwrap();
        assert_eq!((r.sql, r.state.plan_line(), r.state.flags), (None, None, 0));
    }

    #[test]
    fn a_reader_never_sees_one_waits_parameters_with_anothers_event() {
        let a = std::sync::Arc::new(Activity::default());
        let writer = {
            let a = a.clone();
            std::thread::spawn(move || {
                for i in 0..200_000u64 {
                    let (event, p) = if i % 2 == 0 {
                        (WaitEvent::DbFileSequentialRead, [1, i, 1])
                    } else {
                        (WaitEvent::DbFileScatteredRead, [1, i, 8])
                    };
                    a.begin_wait(event, Instant::now(), Some(WaitParameters { p, blocking_session: None }));
                    a.end_wait();
                }
            })
        };
        while !writer.is_finished() {
            if let Some(r) = a.read()
                && let (Some(event), Some(w)) = (r.state.wait_event(), r.wait)
            {
                let expected =
                    if w.p[1] % 2 == 0 { WaitEvent::DbFileSequentialRead } else { WaitEvent::DbFileScatteredRead };
                assert_eq!(event, expected, "{w:?}");
                assert_eq!(w.p[2], if expected == WaitEvent::DbFileSequentialRead { 1 } else { 8 });
            }
        }
        writer.join().unwrap();
    }
}
