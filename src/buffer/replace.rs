//! Replacement: claiming a free buffer for a block by a sweep of touch counts (writing a
//! dirty victim back first), unlinking idle buffers from their hash chains, and dropping
//! an object's buffers.

use super::*;

/// One session counted in [`BufferCache`]'s free-buffer waiters for as long as it lives.
pub(super) struct FreeBufferWaiter<'c>(&'c AtomicU32);

impl<'c> FreeBufferWaiter<'c> {
    pub(super) fn new(waiters: &'c AtomicU32) -> FreeBufferWaiter<'c> {
        waiters.fetch_add(1, Ordering::Relaxed);
        FreeBufferWaiter(waiters)
    }
}

impl Drop for FreeBufferWaiter<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

impl BufferCache {
    /// Puts claimed buffer `index` into the chain of `rdba` with `state` (plus IN_CHAIN).
    /// `Err(existing)` (pinned for the caller) if the block is already cached.
    pub(super) fn insert_claimed(&self, stats: &SessionStats, rdba: u32, index: u32, state: u8) -> Result<(), u32> {
        let hash = self.hash_of(rdba);
        let (latch, bucket) = self.bucket_at(hash);
        let mut chains = latch.get(stats);
        if let Some(existing) = self.find_in_chain(&chains.buckets[bucket], rdba) {
            self.headers[existing as usize].pin();
            return Err(existing);
        }
        let h = &self.headers[index as usize];
        h.rdba.store(rdba, Ordering::Relaxed);
        h.touch.store(1, Ordering::Relaxed);
        h.state.store(state | IN_CHAIN, Ordering::Release);
        h.end_claim();
        chains.buckets[bucket].push(index);
        self.hints[hash].store(index, Ordering::Relaxed);
        Ok(())
    }

    /// Returns a claimed buffer that was not used.
    pub(super) fn unclaim(&self, index: u32) {
        let h = &self.headers[index as usize];
        h.state.store(0, Ordering::Release);
        h.unclaim();
    }

    /// Finds a buffer to reuse by clock sweep and claims it (pins == 1, ours, in no chain).
    /// Counts `free buffer requested` and `free buffer inspected`; a dirty victim is written
    /// back first.
    pub(super) fn claim_free_buffer(&self, stats: &SessionStats) -> Result<(u32, bool)> {
        stats.add(Stat::FreeBufferRequested, 1);
        let n = self.headers.len();
        let mut claims_seen = self.claims.load(Ordering::Relaxed);
        let started = std::time::Instant::now();
        let mut since = started;
        let mut waiting: Option<FreeBufferWaiter<'_>> = None;
        for attempt in 0.. {
            if let Some(claimed) = self.sweep_for_free_buffer(stats)? {
                return Ok(claimed);
            }
            let claims = self.claims.load(Ordering::Relaxed);
            if claims != claims_seen {
                (claims_seen, since) = (claims, std::time::Instant::now());
            } else if since.elapsed() >= self.patience {
                break;
            }
            if started.elapsed() >= self.patience * MAX_PATIENCES {
                // Others claim buffers, yet never one this session could take.
                break;
            }
            waiting.get_or_insert_with(|| FreeBufferWaiter::new(&self.free_buffer_waiters));
            let _wait = stats.begin_wait(WaitEvent::FreeBufferWaits);
            std::thread::sleep(std::time::Duration::from_millis(1 << attempt.min(3)));
        }
        let waited = if since.elapsed() >= self.patience {
            format!("all {n} buffers stayed pinned for {:?} while no session could claim one", self.patience)
        } else {
            format!("for {:?} other sessions took every buffer of {n} freed", started.elapsed())
        };
        Err(Error::InvalidParameter {
            name: "db_cache_size".into(),
            message: format!("no free buffer: {waited}; the cache is too small for this workload"),
        })
    }

    /// One clock sweep for a free buffer (three turns of the hand, so touch counts can
    /// wear down), without waiting: `None` if every buffer stayed pinned or touched.
    pub(super) fn sweep_for_free_buffer(&self, stats: &SessionStats) -> Result<Option<(u32, bool)>> {
        let n = self.headers.len();
        for _ in 0..3 * n {
            let index = (self.hand.fetch_add(1, Ordering::Relaxed) % n) as u32;
            stats.add(Stat::FreeBufferInspected, 1);
            if let Some(claimed) = self.try_claim(stats, index)? {
                self.claims.fetch_add(1, Ordering::Relaxed);
                return Ok(Some(claimed));
            }
        }
        Ok(None)
    }

    /// Claims buffer `index` if it is unpinned and not recently touched; with whether it
    /// had never been claimed before (its bytes all zero).
    pub(super) fn try_claim(&self, stats: &SessionStats, index: u32) -> Result<Option<(u32, bool)>> {
        let claimed = self.try_claim_buffer(stats, index)?;
        Ok(claimed.map(|index| (index, self.headers[index as usize].zeroed.swap(false, Ordering::AcqRel))))
    }

    pub(super) fn try_claim_buffer(&self, stats: &SessionStats, index: u32) -> Result<Option<u32>> {
        let h = &self.headers[index as usize];
        if h.pins() != 0 {
            return Ok(None);
        }
        let touch = h.touch.load(Ordering::Relaxed);
        if touch > 0 {
            h.touch.store(touch - 1, Ordering::Relaxed);
            return Ok(None);
        }
        if !h.has(IN_CHAIN) {
            // Free buffers are claimed by compare-and-swap: only sweepers reach them.
            let won = h.try_claim();
            if won && h.has(IN_CHAIN) {
                h.unclaim();
                return Ok(None);
            }
            return Ok(won.then_some(index));
        }
        if h.has(DIRTY) {
            stats.add(Stat::DirtyBuffersInspected, 1);
            if !self.write_back(stats, index, super::io::WriteFor::Eviction)? {
                return Ok(None);
            }
        }
        Ok(self.unlink_if_idle(stats, index).then_some(index))
    }

    /// Removes buffer `index` from its chain and claims it if no one holds it and it is
    /// clean. Returns whether it did.
    pub(super) fn unlink_if_idle(&self, stats: &SessionStats, index: u32) -> bool {
        let h = &self.headers[index as usize];
        let rdba = h.rdba.load(Ordering::Relaxed);
        let (latch, bucket) = self.bucket_of(rdba);
        let mut chains = latch.get(stats);
        let state = h.state.load(Ordering::Acquire);
        if h.rdba.load(Ordering::Relaxed) != rdba || state & IN_CHAIN == 0 || state & (DIRTY | READING) != 0 {
            return false;
        }
        if !h.try_claim() {
            return false;
        }
        self.forget_cr_version(index, state);
        chains.unlink(bucket, index);
        h.state.store(0, Ordering::Release);
        self.forget_lsns(index);
        true
    }

    /// Clears the version of buffer `index` if it was a CR clone (`state`), as it leaves
    /// its chain: called under the chain latch, before IN_CHAIN is cleared, so that no
    /// session has claimed the buffer for a new clone yet.
    pub(super) fn forget_cr_version(&self, index: u32, state: u8) {
        if state & CR != 0 {
            *self.cr_versions[index as usize].lock() = None;
        }
    }

    /// Drops the cached blocks of a dropped or truncated object without writing them.
    pub fn invalidate_object(&self, stats: &SessionStats, object_id: u32) {
        self.drop_buffers(stats, |h| h.object_id.load(Ordering::Relaxed) == object_id);
    }

    pub(super) fn drop_buffers(&self, stats: &SessionStats, mut select: impl FnMut(&BufferHeader) -> bool) {
        for index in 0..self.headers.len() as u32 {
            let h = &self.headers[index as usize];
            if !h.has(IN_CHAIN) || !select(h) {
                continue;
            }
            let rdba = h.rdba.load(Ordering::Relaxed);
            let (latch, bucket) = self.bucket_of(rdba);
            let mut chains = latch.get(stats);
            let state = h.state.load(Ordering::Acquire);
            if h.rdba.load(Ordering::Relaxed) == rdba && state & IN_CHAIN != 0 && state & READING == 0 && h.try_claim()
            {
                self.forget_cr_version(index, state);
                chains.unlink(bucket, index);
                h.state.store(0, Ordering::Release);
                h.touch.store(0, Ordering::Relaxed);
                self.forget_lsns(index);
                h.unclaim();
            }
        }
    }
}
