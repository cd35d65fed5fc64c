//! Getting a block: the consistent get (a shared pin, by the bucket's hint without a latch
//! when it still names the block, else through the chain latch), the current get (an
//! exclusive pin for a change), a new block formatted in a buffer, and the pin and
//! release of a buffer under its header's state.

use super::*;

impl BufferCache {
    /// Lets go the shared lock and pin of a read guard.
    #[inline]
    pub(super) fn release_shared(&self, index: u32) {
        self.headers[index as usize].unlock_shared_unpin();
    }

    pub(super) fn release_exclusive(&self, index: u32, rdba: u32, capture: Option<guard::Capture<'_>>) {
        if let Some(capture) = capture {
            self.log_change(index, rdba, capture);
        }
        let h = &self.headers[index as usize];
        h.state.fetch_and(!VERIFIED, Ordering::AcqRel);
        h.unlock_exclusive_unpin();
    }

    /// A consistent get: the block for reading. Counts `consistent gets` and `session
    /// logical reads`; a miss reads the block (`db file sequential read`).
    #[inline(always)]
    pub fn consistent_get(&self, stats: &SessionStats, rdba: u32) -> Result<ReadGuard<'_>> {
        Self::count_consistent_get(stats);
        match self.get_by_hint(stats, rdba) {
            Some(guard) => Ok(guard),
            None => self.consistent_get_latched(stats, rdba),
        }
    }

    /// A consistent get through the chain latch (the hint did not name the block's buffer,
    /// or the buffer was busy), reading the block if it is not cached; already counted.
    #[inline(never)]
    pub(super) fn consistent_get_latched(&self, stats: &SessionStats, rdba: u32) -> Result<ReadGuard<'_>> {
        let index = self.pin(stats, rdba)?;
        Ok(self.share_locked(stats, index, rdba))
    }

    /// The fast path of a consistent get: the buffer named by the bucket's hint, pinned
    /// and share-locked without the chain latch, if it holds the current version of
    /// `rdba` (`consistent gets pin (fastpath)`). `None` sends the get to the latch.
    #[inline(always)]
    pub(super) fn get_by_hint(&self, stats: &SessionStats, rdba: u32) -> Option<ReadGuard<'_>> {
        let index = self.hinted_buffer(rdba)?;
        let h = &self.headers[index as usize];
        if !h.try_pin_shared_as(rdba) {
            return None;
        }
        stats.add(Stat::ConsistentGetsPinFastpath, 1);
        h.touch_once();
        Some(ReadGuard { cache: self, index, rdba })
    }

    /// A consistent get of `rdba` only if the cache holds it: no read and no wait, `None`
    /// when the block is not cached or another session is still reading it in. Counted
    /// like any consistent get when it finds the block.
    pub fn consistent_get_if_cached(&self, stats: &SessionStats, rdba: u32) -> Option<ReadGuard<'_>> {
        if let Some(guard) = self.get_by_hint(stats, rdba) {
            Self::count_consistent_get(stats);
            return Some(guard);
        }
        let index = self.lookup_and_pin(stats, rdba)?;
        let h = &self.headers[index as usize];
        if h.has(READING) || !h.has(VALID) {
            h.unpin();
            return None;
        }
        Self::count_consistent_get(stats);
        Some(self.share_locked(stats, index, rdba))
    }

    /// A read guard on pinned buffer `index`. The shared lock waits while a writer holds
    /// the block, and behind one that waits for it until that writer admits the readers
    /// behind it (`header`): a session may already hold the block (a scan holds its
    /// current and next block while it follows a chained row into one of them), and a
    /// second shared lock that waited for good for a writer waiting for the first would
    /// never be granted.
    #[inline]
    pub(super) fn share_locked(&self, stats: &SessionStats, index: u32, rdba: u32) -> ReadGuard<'_> {
        self.headers[index as usize].lock_shared(stats);
        ReadGuard { cache: self, index, rdba }
    }

    /// Takes the shared content lock of buffer `index`, pinned by the caller for `rdba`,
    /// waiting first if another session is still reading it (and getting the block again
    /// if that read failed).
    pub(super) fn read_guard_for_pinned(&self, stats: &SessionStats, rdba: u32, index: u32) -> Result<ReadGuard<'_>> {
        let index = if self.wait_while_reading(stats, index) {
            index
        } else {
            self.headers[index as usize].unpin();
            self.pin(stats, rdba)?
        };
        Ok(self.share_locked(stats, index, rdba))
    }

    /// Counts one consistent get.
    #[inline]
    pub fn count_consistent_get(stats: &SessionStats) {
        stats.add(Stat::LogicalReads, 1);
        stats.add(Stat::ConsistentGets, 1);
        stats.add(Stat::ConsistentGetsFromCache, 1);
        stats.add(Stat::BufferIsNotPinned, 1);
    }

    /// A current-mode get for changing a block: `db block gets`. The buffer becomes dirty.
    pub fn current_get<'c>(&'c self, stats: &'c SessionStats, rdba: u32) -> Result<WriteGuard<'c>> {
        stats.add(Stat::LogicalReads, 1);
        stats.add(Stat::DbBlockGets, 1);
        stats.add(Stat::DbBlockGetsFromCache, 1);
        stats.add(Stat::DbBlockChanges, 1);
        self.pin_dirty(stats, rdba)
    }

    /// The current version of `rdba`, pinned, exclusively locked and dirtied.
    pub(super) fn pin_dirty<'c>(&'c self, stats: &'c SessionStats, rdba: u32) -> Result<WriteGuard<'c>> {
        let index = self.pin(stats, rdba)?;
        Ok(self.dirty_guard(stats, index, rdba))
    }

    /// Locks pinned buffer `index` (the current version of `rdba`) exclusively, dirties
    /// it, and hands it out with what its redo needs.
    pub(super) fn dirty_guard<'c>(&'c self, stats: &'c SessionStats, index: u32, rdba: u32) -> WriteGuard<'c> {
        self.headers[index as usize].lock_exclusive(stats);
        self.dirtied(stats, index, rdba)
    }

    /// Dirties exclusively locked buffer `index` and hands it out with what its redo needs.
    fn dirtied<'c>(&'c self, stats: &'c SessionStats, index: u32, rdba: u32) -> WriteGuard<'c> {
        self.headers[index as usize].state.fetch_or(DIRTY, Ordering::AcqRel);
        WriteGuard { cache: self, index, rdba, capture: self.capture(stats, index, false) }
    }

    /// Locks pinned buffer `index` (the current version of `rdba`) exclusively for a
    /// commit cleanout, which only copies into the block the commit SCN the transaction
    /// table already records; if another session holds or waits for its content lock,
    /// lets the pin go and returns `None` (`commit cleanout failures: cannot pin`): a
    /// commit never waits for a hot block, whose next visitor cleans it out instead. While the redo since the block was last read or written
    /// holds an image of it (`LOGGED`), the buffer is dirtied and the cleanout logged as
    /// any change is: a few bytes. Otherwise logging it would cost a whole block of redo
    /// (the torn-block image): then the cleanout is made in the cache alone, nothing is
    /// logged and the buffer stays clean; if the block leaves the cache before another
    /// change logs it, its next reader cleans it out (delayed block cleanout, logged).
    /// Without redo (recovery, tests of the cache) the buffer is dirtied as by any change.
    pub(super) fn commit_cleanout_guard<'c>(
        &'c self,
        stats: &'c SessionStats,
        index: u32,
        rdba: u32,
    ) -> Option<WriteGuard<'c>> {
        let h = &self.headers[index as usize];
        if !h.try_lock_exclusive() {
            h.unpin();
            stats.add(Stat::CommitCleanoutFailuresCannotPin, 1);
            return None;
        }
        if self.redo.get().is_some() && !h.has(LOGGED) {
            return Some(WriteGuard { cache: self, index, rdba, capture: None });
        }
        Some(self.dirtied(stats, index, rdba))
    }

    /// A new block that need not be read: a zeroed, dirty buffer for `rdba` (the block
    /// being formatted above a high-water mark). Counts a `db block gets`.
    pub fn new_block<'c>(&'c self, stats: &'c SessionStats, rdba: u32, object_id: u32) -> Result<WriteGuard<'c>> {
        stats.add(Stat::LogicalReads, 1);
        stats.add(Stat::DbBlockGets, 1);
        stats.add(Stat::DbBlockGetsFromCache, 1);
        stats.add(Stat::DbBlockChanges, 1);
        // A buffer never claimed before holds the zeros the arena was mapped with.
        let mut already_zero = false;
        let index = loop {
            let found = match self.lookup_and_pin(stats, rdba) {
                Some(index) => index,
                None => {
                    let (victim, zeroed) = self.claim_free_buffer(stats)?;
                    // Locked before it is reachable, so no one sees its old bytes.
                    self.headers[victim as usize].lock_exclusive(stats);
                    match self.insert_claimed(stats, rdba, victim, VALID | DIRTY) {
                        Ok(()) => {
                            already_zero = zeroed;
                            break victim;
                        }
                        Err(existing) => {
                            self.headers[victim as usize].unlock_exclusive();
                            self.unclaim(victim);
                            existing
                        }
                    }
                }
            };
            if self.wait_while_reading(stats, found) {
                self.headers[found as usize].lock_exclusive(stats);
                break found;
            }
            // Another session's read of the block failed and took it out of the cache:
            // look again.
            self.headers[found as usize].unpin();
        };
        let h = &self.headers[index as usize];
        h.object_id.store(object_id, Ordering::Relaxed);
        h.state.fetch_or(VALID | DIRTY, Ordering::AcqRel);
        let mut guard = WriteGuard { cache: self, index, rdba, capture: self.capture(stats, index, true) };
        if !already_zero {
            guard.fill(0);
        }
        Ok(guard)
    }

    /// Finds `rdba` in its chain and pins it; `None` if it is not cached.
    #[inline]
    pub(super) fn lookup_and_pin(&self, stats: &SessionStats, rdba: u32) -> Option<u32> {
        let (latch, bucket) = self.bucket_of(rdba);
        let chains = latch.get(stats);
        let index = self.find_in_chain(&chains.buckets[bucket], rdba)?;
        let h = &self.headers[index as usize];
        h.pin();
        drop(chains);
        h.touch_once();
        Some(index)
    }

    /// Pins the buffer holding `rdba`, reading the block if it is not cached.
    #[inline]
    pub(super) fn pin(&self, stats: &SessionStats, rdba: u32) -> Result<u32> {
        loop {
            let index = match self.lookup_and_pin(stats, rdba) {
                Some(index) => index,
                None => match self.read_single(stats, rdba)? {
                    Loaded::ByUs(index) => return Ok(index),
                    Loaded::ByOther(index) => index,
                },
            };
            if self.wait_while_reading(stats, index) {
                return Ok(index);
            }
            // The read by another session failed: drop our pin and try ourselves.
            self.headers[index as usize].unpin();
        }
    }

    /// Waits until buffer `index` (pinned by us) is no longer being read. Returns whether
    /// it now holds a valid block.
    #[inline]
    pub(super) fn wait_while_reading(&self, stats: &SessionStats, index: u32) -> bool {
        let h = &self.headers[index as usize];
        if h.has(READING) {
            self.wait_for_read(stats, h);
        }
        h.has(VALID)
    }

    /// Waits for another session's read of the block of `h` to end (`read by other
    /// session`).
    #[cold]
    pub(super) fn wait_for_read(&self, stats: &SessionStats, h: &BufferHeader) {
        let _wait = stats.begin_wait(WaitEvent::ReadByOtherSession);
        let mut lock = self.read_done.0.lock();
        while h.has(READING) {
            self.read_done.1.wait_for(&mut lock, std::time::Duration::from_millis(1));
        }
    }
}
