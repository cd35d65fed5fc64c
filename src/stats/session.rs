//! Per-session statistics: counters, wait events and the time model of one session.
//!
//! Invariant: only the session's own thread writes its [`SessionStats`] (a
//! [`Session`](crate::instance::Session) is `Send` but not `Sync`); it does so with a
//! relaxed load and store (no locked read-modify-write), so counting a consistent get costs
//! about a nanosecond. Other threads (v$sesstat, v$sysstat) read with relaxed loads and may
//! see a figure a few increments old, never a torn one. The one exception is what helper
//! threads' performance counters counted, which the session's thread adds (after joining
//! the helper) under a mutex, since a counter reading is not one word.
//!
//! Whether the session's CPU is timed ([`SessionStats::cpu_timed`]) is set from its
//! `timed_statistics` at the start of each call, so the layers below that see only the
//! statistics (physical reads, helper threads) read the thread's CPU clock, a system
//! call, only when the call does.

use super::names::{Stat, TimeModel, WaitEvent};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::Instant;

/// Buckets of the wait-time histogram: bucket *k* counts waits shorter than 2^*k* µs
/// (the last bucket also takes everything longer).
pub const HISTOGRAM_BUCKETS: usize = 32;

/// A counter written by one thread only.
#[derive(Debug, Default)]
pub struct OwnedCounter(AtomicU64);

impl OwnedCounter {
    #[inline]
    pub fn add(&self, n: u64) {
        // Single writer: load + store is exact and needs no lock prefix.
        self.0.store(self.0.load(Relaxed).wrapping_add(n), Relaxed);
    }

    #[inline]
    pub fn max(&self, n: u64) {
        if n > self.0.load(Relaxed) {
            self.0.store(n, Relaxed);
        }
    }

    #[inline]
    pub fn get(&self) -> u64 {
        self.0.load(Relaxed)
    }
}

/// Totals of one wait event for one session.
#[derive(Debug, Default)]
pub struct EventTotals {
    pub waits: OwnedCounter,
    pub time_waited_micro: OwnedCounter,
    pub max_wait_micro: OwnedCounter,
    pub histogram: [OwnedCounter; HISTOGRAM_BUCKETS],
}

/// A plain copy of one event's totals.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct EventSnapshot {
    pub waits: u64,
    pub time_waited_micro: u64,
    pub max_wait_micro: u64,
    pub histogram: [u64; HISTOGRAM_BUCKETS],
}

impl EventSnapshot {
    pub fn accumulate(&mut self, other: &EventSnapshot) {
        self.waits += other.waits;
        self.time_waited_micro += other.time_waited_micro;
        self.max_wait_micro = self.max_wait_micro.max(other.max_wait_micro);
        for (a, b) in self.histogram.iter_mut().zip(other.histogram.iter()) {
            *a += b;
        }
    }
}

/// The histogram bucket of a wait of `micros` microseconds.
pub fn histogram_bucket(micros: u64) -> usize {
    // Smallest k with micros < 2^k.
    ((64 - micros.leading_zeros()) as usize).min(HISTOGRAM_BUCKETS - 1)
}

/// Everything one session counts.
#[derive(Debug)]
pub struct SessionStats {
    /// Indexed by `Stat as usize`: a fixed array inside the struct, so counting a statistic
    /// is one add at a constant offset (no length check, no pointer to follow).
    counters: [OwnedCounter; Stat::COUNT],
    events: Box<[EventTotals]>,
    time_model: [OwnedCounter; TimeModel::COUNT],
    /// What the session is doing now (its wait among it): for `v$session` and Active
    /// Session History.
    activity: super::activity::Activity,
    /// Whether helper threads working for the session's statements count their
    /// performance counters (the session's own are on), and what they counted.
    count_helpers: std::sync::atomic::AtomicBool,
    helper_counts: parking_lot::Mutex<super::hwcounters::Reading>,
    /// The number of the session's current (or last) call, counted from 1.
    call: std::sync::atomic::AtomicU64,
    /// The call asked to stop from another thread (a client's cancel request, a statement
    /// timeout); a later call has another number, so a request that comes too late to
    /// stop its call stops no other.
    interrupted_call: std::sync::atomic::AtomicU64,
    /// How long a row lock wait may last, in milliseconds (0: as long as it takes).
    lock_wait_limit_ms: std::sync::atomic::AtomicU64,
    /// `timed_statistics = FALSE` for the current call: its thread's CPU clock is not read.
    cpu_untimed: std::sync::atomic::AtomicBool,
}

impl Default for SessionStats {
    fn default() -> Self {
        SessionStats {
            counters: std::array::from_fn(|_| OwnedCounter::default()),
            events: (0..WaitEvent::COUNT).map(|_| EventTotals::default()).collect(),
            time_model: Default::default(),
            activity: Default::default(),
            count_helpers: Default::default(),
            helper_counts: Default::default(),
            call: Default::default(),
            interrupted_call: std::sync::atomic::AtomicU64::new(u64::MAX),
            lock_wait_limit_ms: Default::default(),
            cpu_untimed: Default::default(),
        }
    }
}

impl SessionStats {
    /// Limits how long each row lock wait of the session's statements may last (`None`:
    /// no limit); a wait past it fails its statement (ORA-30006).
    pub fn set_lock_wait_limit(&self, limit: Option<std::time::Duration>) {
        let ms = limit.map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX).max(1));
        self.lock_wait_limit_ms.store(ms, std::sync::atomic::Ordering::Relaxed);
    }

    /// The limit on a row lock wait, if one is set.
    pub fn lock_wait_limit(&self) -> Option<std::time::Duration> {
        let ms = self.lock_wait_limit_ms.load(std::sync::atomic::Ordering::Relaxed);
        (ms > 0).then(|| std::time::Duration::from_millis(ms))
    }

    /// Numbers the call that starts now (by the session's own thread).
    pub fn begin_interruptible_call(&self) {
        self.call.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }

    /// Asks the session's current call to stop: it fails with ORA-01013 at its next
    /// check (a scan's next multiblock read or compression unit, a row lock wait's next
    /// look, ...). A request made between calls stops nothing.
    pub fn interrupt(&self) {
        let call = self.call.load(std::sync::atomic::Ordering::Relaxed);
        self.interrupted_call.store(call, std::sync::atomic::Ordering::Relaxed);
    }

    /// Fails with [`Error::Cancelled`](crate::error::Error::Cancelled) when the running
    /// call was asked to stop.
    #[inline]
    pub fn check_interrupt(&self) -> crate::error::Result<()> {
        use std::sync::atomic::Ordering::Relaxed;
        if self.interrupted_call.load(Relaxed) == self.call.load(Relaxed) {
            return Err(crate::error::Error::Cancelled);
        }
        Ok(())
    }

    #[inline]
    pub fn add(&self, stat: Stat, n: u64) {
        self.counters[stat as usize].add(n);
    }

    #[inline]
    pub fn get(&self, stat: Stat) -> u64 {
        self.counters[stat as usize].get()
    }

    /// All counters, indexed by `Stat as usize`.
    pub fn snapshot(&self) -> Vec<u64> {
        self.counters.iter().map(OwnedCounter::get).collect()
    }

    /// The event the session is waiting on now, if any.
    pub fn current_wait(&self) -> Option<WaitEvent> {
        self.activity.current_wait()
    }

    /// What the session publishes of what it is doing now.
    pub fn activity(&self) -> &super::activity::Activity {
        &self.activity
    }

    /// Records one completed wait.
    pub fn record_wait(&self, event: WaitEvent, micros: u64) {
        let e = &self.events[event as usize];
        e.waits.add(1);
        e.time_waited_micro.add(micros);
        e.max_wait_micro.max(micros);
        e.histogram[histogram_bucket(micros)].add(1);
    }

    /// Starts timing a wait; the wait is recorded when the returned guard drops.
    pub fn begin_wait(&self, event: WaitEvent) -> WaitTimer<'_> {
        let start = Instant::now();
        self.activity.begin_wait(event, start, None);
        WaitTimer { stats: self, event, start }
    }

    /// What `now` gets at once, or else what `waiting` gets, that wait timed as `event`: a
    /// lock found free is not waited for, and costs no clock read.
    pub fn get_or_wait<T>(&self, event: WaitEvent, now: impl FnOnce() -> Option<T>, waiting: impl FnOnce() -> T) -> T {
        now().unwrap_or_else(|| {
            let _wait = self.begin_wait(event);
            waiting()
        })
    }

    /// Starts timing a wait that knows its P1–P3 (and perhaps the session it waits for),
    /// which Active Session History shows.
    pub fn begin_wait_with(&self, event: WaitEvent, parameters: super::activity::WaitParameters) -> WaitTimer<'_> {
        let start = Instant::now();
        self.activity.begin_wait(event, start, Some(parameters));
        WaitTimer { stats: self, event, start }
    }

    pub fn event(&self, event: WaitEvent) -> EventSnapshot {
        let e = &self.events[event as usize];
        let mut histogram = [0; HISTOGRAM_BUCKETS];
        for (h, c) in histogram.iter_mut().zip(e.histogram.iter()) {
            *h = c.get();
        }
        EventSnapshot {
            waits: e.waits.get(),
            time_waited_micro: e.time_waited_micro.get(),
            max_wait_micro: e.max_wait_micro.get(),
            histogram,
        }
    }

    pub fn add_time(&self, model: TimeModel, micros: u64) {
        self.time_model[model as usize].add(micros);
    }

    /// Adds `micros` to time model statistic `model` and, in whole centiseconds as the
    /// running total crosses them, to `centiseconds` (Oracle's `DB time`, `CPU used by
    /// this session`).
    pub fn add_time_and_centiseconds(&self, model: TimeModel, centiseconds: Stat, micros: u64) {
        let before = self.time(model);
        self.add_time(model, micros);
        self.add(centiseconds, (before + micros) / 10_000 - before / 10_000);
    }

    /// Whether helper threads should open performance counters for the session.
    pub fn counting_helpers(&self) -> bool {
        self.count_helpers.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Switches helpers' counting on (from zero) or off.
    pub(crate) fn set_counting_helpers(&self, on: bool) {
        if on && !self.counting_helpers() {
            *self.helper_counts.lock() = Default::default();
        }
        self.count_helpers.store(on, std::sync::atomic::Ordering::Relaxed);
    }

    /// Adds what a helper thread's performance counters counted for the session.
    pub fn add_helper_counts(&self, counts: &super::hwcounters::Reading) {
        self.helper_counts.lock().add(counts);
    }

    /// What helper threads counted for the session, in all.
    pub fn helper_counts(&self) -> super::hwcounters::Reading {
        self.helper_counts.lock().clone()
    }

    /// Whether the session's calls read their thread's CPU clock (`timed_statistics`), as
    /// its current call found the parameter.
    pub fn cpu_timed(&self) -> bool {
        !self.cpu_untimed.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Sets [`SessionStats::cpu_timed`], at the start of a call.
    pub(crate) fn set_cpu_timed(&self, on: bool) {
        self.cpu_untimed.store(!on, std::sync::atomic::Ordering::Relaxed);
    }

    /// The calling thread's CPU clock, in nanoseconds, where the session's CPU is timed
    /// ([`SessionStats::cpu_timed`]); `None` otherwise, without asking the operating system.
    pub fn thread_cpu_ns(&self) -> Option<u64> {
        self.cpu_timed().then(super::osstat::thread_cpu_time_ns)
    }

    /// Adds CPU time the session's statement spent on a helper thread: to `DB CPU` and
    /// `CPU used by this session`, as the session's own.
    pub fn add_helper_cpu(&self, micros: u64) {
        self.add_time_and_centiseconds(TimeModel::DbCpu, Stat::CpuUsedBySession, micros);
    }

    pub fn time(&self, model: TimeModel) -> u64 {
        self.time_model[model as usize].get()
    }
}

/// Times one wait; records it on drop.
pub struct WaitTimer<'a> {
    stats: &'a SessionStats,
    event: WaitEvent,
    start: Instant,
}

impl Drop for WaitTimer<'_> {
    fn drop(&mut self) {
        let micros = self.start.elapsed().as_micros() as u64;
        self.stats.activity.end_wait();
        self.stats.record_wait(self.event, micros);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histogram_buckets_are_powers_of_two() {
        assert_eq!(histogram_bucket(0), 0);
        assert_eq!(histogram_bucket(1), 1);
        assert_eq!(histogram_bucket(3), 2);
        assert_eq!(histogram_bucket(4), 3);
        assert_eq!(histogram_bucket(u64::MAX), HISTOGRAM_BUCKETS - 1);
    }

    #[test]
    fn waits_accumulate() {
        let s = SessionStats::default();
        s.record_wait(WaitEvent::DbFileScatteredRead, 100);
        s.record_wait(WaitEvent::DbFileScatteredRead, 300);
        let e = s.event(WaitEvent::DbFileScatteredRead);
        assert_eq!((e.waits, e.time_waited_micro, e.max_wait_micro), (2, 400, 300));
        assert_eq!(e.histogram.iter().sum::<u64>(), 2);
    }
}
