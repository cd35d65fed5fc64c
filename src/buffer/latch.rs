//! Child latches of `cache buffers chains`: each guards a group of hash buckets (the
//! chains of buffer headers) and counts its gets, misses and sleeps as `v$latch` shows.
//!
//! A get that finds the latch free counts one get. A get that finds it held counts a miss,
//! spins briefly, and if the latch is still held blocks on it, counting a sleep and timing
//! the wait as `latch: cache buffers chains` for the session.

use crate::stats::{SessionStats, WaitEvent};
use parking_lot::{Mutex, MutexGuard};

/// Tries before a missed latch get blocks.
const SPIN_TRIES: u32 = 64;

/// The buckets one child latch guards, and its statistics (protected by the latch itself).
#[derive(Debug, Default)]
pub struct Chains {
    /// Each bucket lists the buffers whose block address hashes to it.
    pub buckets: Vec<Vec<u32>>,
    pub gets: u64,
    pub misses: u64,
    pub sleeps: u64,
}

/// One child latch.
#[derive(Debug, Default)]
pub struct ChildLatch {
    chains: Mutex<Chains>,
}

/// Totals of a latch family for `v$latch`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LatchTotals {
    pub children: u64,
    pub gets: u64,
    pub misses: u64,
    pub sleeps: u64,
}

impl ChildLatch {
    pub fn new(buckets: usize) -> ChildLatch {
        ChildLatch { chains: Mutex::new(Chains { buckets: vec![Vec::new(); buckets], ..Default::default() }) }
    }

    /// Gets the latch for `stats`' session.
    #[inline]
    pub fn get(&self, stats: &SessionStats) -> MutexGuard<'_, Chains> {
        if let Some(mut g) = self.chains.try_lock() {
            g.gets += 1;
            return g;
        }
        self.get_contended(stats)
    }

    #[cold]
    fn get_contended(&self, stats: &SessionStats) -> MutexGuard<'_, Chains> {
        for _ in 0..SPIN_TRIES {
            std::hint::spin_loop();
            if let Some(mut g) = self.chains.try_lock() {
                g.gets += 1;
                g.misses += 1;
                return g;
            }
        }
        let mut g = {
            let _wait = stats.begin_wait(WaitEvent::LatchCacheBuffersChains);
            self.chains.lock()
        };
        g.gets += 1;
        g.misses += 1;
        g.sleeps += 1;
        g
    }

    /// Adds this child's figures to `totals` (takes the latch without counting a get).
    pub fn add_to(&self, totals: &mut LatchTotals) {
        let g = self.chains.lock();
        totals.children += 1;
        totals.gets += g.gets;
        totals.misses += g.misses;
        totals.sleeps += g.sleeps;
    }
}
