//! The sampler of Active Session History (Oracle's MMNL does it): a background thread,
//! started with the instance, that every `_ash_sampling_interval` milliseconds takes one
//! sample of every active session into the ring ([`crate::stats::ash::History`]) that
//! `v$active_session_history` reads.
//!
//! ```text
//!  tick ─► upgrade the database (weakly held) ─► History::take_sample ─► let it go ─► wait
//!              │ gone                                                         │ stop / new interval
//!              ▼                                                              ▼
//!            exit                                                    re-plan the next tick
//! ```
//!
//! The thread holds the database weakly and only while it samples (microseconds), so it
//! never keeps it open. Ticks follow a fixed schedule (one interval after the last);
//! after a stall the next tick is one interval from now, not a burst. ALTER SYSTEM
//! wakes it to plan the next tick with the new interval.
//!
//! Invariant: stopping is prompt at any interval: [`Sampler::stop`] sets the flag under
//! the lock the thread waits on and wakes it, then joins it (unless called on the
//! sampler's own thread, when the database goes while it samples: it exits at its next
//! look at the flag).

use super::DbInner;
use parking_lot::{Condvar, Mutex};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

/// The sampler of one instance: its settings, and its thread once started.
#[derive(Debug, Default)]
pub(crate) struct Sampler {
    control: Arc<Control>,
    thread: Mutex<Option<std::thread::JoinHandle<()>>>,
}

/// What the sampler's thread shares with the instance.
#[derive(Debug, Default)]
struct Control {
    /// `_ash_sampling_interval`, in milliseconds.
    interval_ms: AtomicU64,
    /// Set once the sampler must stop; the thread waits on `wake` under this lock.
    stopped: Mutex<bool>,
    wake: Condvar,
}

impl Sampler {
    /// Starts the thread, sampling `db`'s sessions.
    pub(crate) fn start(&self, db: Weak<DbInner>) {
        let control = self.control.clone();
        let spawned = std::thread::Builder::new().name("lioscope MMNL".into()).spawn(move || run(&db, &control));
        match spawned {
            Ok(handle) => *self.thread.lock() = Some(handle),
            // The database works without its history: say so, once.
            Err(e) => eprintln!("lioscope: the Active Session History sampler did not start: {e}"),
        }
    }

    /// Sets the interval (`_ash_sampling_interval`); the next tick follows it.
    pub(crate) fn set_interval_ms(&self, ms: u64) {
        if self.control.interval_ms.swap(ms, Ordering::Relaxed) != ms {
            let _lock = self.control.stopped.lock();
            self.control.wake.notify_all();
        }
    }

    /// Stops the thread and waits for it (see the module doc).
    pub(crate) fn stop(&self) {
        *self.control.stopped.lock() = true;
        self.control.wake.notify_all();
        let handle = self.thread.lock().take();
        if let Some(handle) = handle
            && handle.thread().id() != std::thread::current().id()
        {
            let _ = handle.join();
        }
    }
}

/// The sampler's life: a tick every interval until stopped or the database is gone.
fn run(db: &Weak<DbInner>, control: &Control) {
    let mut last = Instant::now();
    loop {
        let interval_ms = control.interval_ms.load(Ordering::Relaxed).max(1);
        {
            let mut stopped = control.stopped.lock();
            if *stopped {
                return;
            }
            let due = last + Duration::from_millis(interval_ms);
            if Instant::now() < due {
                control.wake.wait_until(&mut stopped, due);
                // Stopped, a new interval or time: look again.
                continue;
            }
        }
        let Some(db) = db.upgrade() else { return };
        let sample_time = crate::types::local_now();
        db.ash.take_sample(&db.registry, u32::try_from(interval_ms).unwrap_or(u32::MAX), sample_time);
        drop(db);
        let now = Instant::now();
        // One interval after this tick's schedule, or from now after a stall.
        last = if now.duration_since(last) > Duration::from_millis(2 * interval_ms) {
            now
        } else {
            last + Duration::from_millis(interval_ms)
        };
    }
}
