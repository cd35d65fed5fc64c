//! The system change number: the clock every change and every snapshot is stamped with.
//!
//! Invariants: the SCN only moves forward; a transaction's end is recorded in its
//! transaction table before its SCN is published as the current SCN, and ends are
//! published one at a time under the commit lock, so a reader that finds an end not yet
//! current need only wait for that lock ([`ScnClock::wait_published`]).

use crate::error::Result;
use parking_lot::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

/// The current SCN and the lock that serialises the end of transactions.
pub struct ScnClock {
    scn: AtomicU64,
    commit_lock: Mutex<()>,
}

impl ScnClock {
    /// A clock that reads `scn`.
    pub fn new(scn: u64) -> ScnClock {
        ScnClock { scn: AtomicU64::new(scn), commit_lock: Mutex::new(()) }
    }

    /// The SCN a statement starting now reads as of: every transaction ended at or
    /// before it is recorded as ended.
    #[inline]
    pub fn current(&self) -> u64 {
        self.scn.load(Ordering::Acquire)
    }

    /// Returns once a commit at `scn`, seen in a transaction table, is published as the
    /// current SCN: a commit under way publishes its SCN before it lets go of the commit
    /// lock, so waiting for that lock is enough (and never waits for long).
    pub fn wait_published(&self, scn: u64) {
        if self.current() < scn {
            drop(self.commit_lock.lock());
        }
    }

    /// Takes the next SCN under the commit lock, lets `record` write the end of a
    /// transaction at it, and publishes it once `record` succeeds.
    pub fn end_at_next(&self, record: impl FnOnce(u64) -> Result<()>) -> Result<u64> {
        let _serial = self.commit_lock.lock();
        let scn = self.current() + 1;
        record(scn)?;
        self.scn.store(scn, Ordering::Release);
        Ok(scn)
    }
}
