//! Child latches of `cache buffers chains`: each guards a group of hash buckets (the
//! chains of buffer headers) and counts its gets, misses and sleeps as `v$latch` shows.
//!
//! A get that finds the latch free counts one get. A get that finds it held counts a miss,
//! spins briefly, and if the latch is still held blocks on it, counting a sleep and timing
//! the wait as `latch: cache buffers chains` for the session.

use crate::stats::{SessionStats, WaitEvent};
use parking_lot::{Mutex, MutexGuard};
use smallvec::SmallVec;

/// Tries before a missed latch get blocks.
const SPIN_TRIES: u32 = 64;

/// Hash buckets per child latch (Oracle's ratio).
pub const BUCKETS_PER_LATCH: usize = 32;

/// A hash chain: the buffers whose block address hashes to one bucket. With at least as
/// many buckets as buffers most chains hold zero or one buffer, kept inline so that a
/// lookup touches the latch's own memory and the buffer header, nothing in between.
pub type Chain = SmallVec<[u32; 2]>;

/// The buckets one child latch guards, and its statistics (protected by the latch itself).
#[derive(Debug, Default)]
pub struct Chains {
    pub buckets: [Chain; BUCKETS_PER_LATCH],
    pub gets: u64,
    pub misses: u64,
    pub sleeps: u64,
}

impl Chains {
    /// Takes buffer `index` off the chain of `bucket`.
    pub fn unlink(&mut self, bucket: usize, index: u32) {
        self.buckets[bucket].retain(|i| *i != index);
    }
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
    pub fn new() -> ChildLatch {
        ChildLatch::default()
    }

    /// Asks the CPU to start loading the latch and bucket `bucket`, for a lookup soon
    /// after. A hint: it reads nothing and changes no result.
    #[inline(always)]
    pub fn prefetch(&self, bucket: usize) {
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
            let chains = self.chains.data_ptr();
            // SAFETY: prefetch never faults and dereferences nothing; `wrapping_add` keeps
            // the address arithmetic defined, and the data pointer is never read here.
            unsafe {
                _mm_prefetch::<_MM_HINT_T0>((&raw const self.chains).cast());
                _mm_prefetch::<_MM_HINT_T0>(
                    chains
                        .cast::<u8>()
                        .wrapping_add(std::mem::offset_of!(Chains, buckets))
                        .wrapping_add(bucket * std::mem::size_of::<Chain>())
                        .cast(),
                );
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = bucket;
    }

    /// Gets the latch for `stats`' session.
    #[inline]
    pub fn get(&self, stats: &SessionStats) -> MutexGuard<'_, Chains> {
        if let Some(mut g) = self.chains.try_lock() {
            g.gets += 1;
            return g;
        }
        self.get_contended(Some(stats))
    }

    /// Gets the latch for a caller that is no session (or has none at hand): gets, misses
    /// and sleeps count as for any get, but no session is charged the wait.
    pub fn get_untimed(&self) -> MutexGuard<'_, Chains> {
        if let Some(mut g) = self.chains.try_lock() {
            g.gets += 1;
            return g;
        }
        self.get_contended(None)
    }

    #[cold]
    fn get_contended(&self, stats: Option<&SessionStats>) -> MutexGuard<'_, Chains> {
        for _ in 0..SPIN_TRIES {
            std::hint::spin_loop();
            if let Some(mut g) = self.chains.try_lock() {
                g.gets += 1;
                g.misses += 1;
                return g;
            }
        }
        let mut g = {
            let _wait = stats.map(|s| s.begin_wait(WaitEvent::LatchCacheBuffersChains));
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
