//! Reads and writes: a single-block read, multiblock reads of pinned runs, the write of a
//! dirty buffer (its redo first), checkpoints, flushes and the datafiles' syncs; each
//! counted into the session's statistics and wait events.
//!
//! Where the CPU of a physical read goes, in nanoseconds, counted on the read path only
//! (a block found in the cache passes none of these clocks):
//!
//! ```text
//!  claim a free buffer (sweep)   physical read buffer claim ns        monotonic clock, per block
//!  insert it into its chain      physical read hash chain insert ns   monotonic clock, per block
//!  pread / preadv, its wait      physical read syscall CPU ns         thread CPU clock, per call
//!  check the blocks (checksum)   physical read block check ns         thread CPU clock, per call
//! ```
//!
//! The read call's time is the thread's CPU clock around it, because the call blocks on
//! the device: only what the kernel spent on the CPU for it counts, with the bookkeeping
//! of its wait event. The checks of the blocks a call read are timed together by the
//! same clock, from its reading as the call returned to one after the last check: they
//! are most of a block's CPU, so time the thread spent descheduled (which the monotonic
//! clock would count) must not land in them. Reading that clock is itself a system call:
//! three readings a read call. Claims and inserts do not block (unless a claim must wait
//! for a free buffer or write a dirty victim back, which have wait events of their own)
//! and cost well under a microsecond, so their wall time by the monotonic clock, read
//! without a system call, stands for their CPU time (it overstates it only by time the
//! thread was descheduled inside them).
//! A session whose `timed_statistics` is FALSE reads no CPU clock: its two CPU figures
//! stay where they are.

use super::*;

/// Why a buffer is written, which decides what its write may wait for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum WriteFor {
    /// A checkpoint (the database writer, `ALTER SYSTEM CHECKPOINT`, close): it does not
    /// wait for redo that a log switch waiting for a checkpoint holds back.
    Checkpoint,
    /// A session that needs the buffer for another block: it waits for the redo.
    Eviction,
}

impl WriteFor {
    /// The wait event the write is timed as.
    fn event(self) -> WaitEvent {
        match self {
            WriteFor::Checkpoint => WaitEvent::DbFileParallelWrite,
            WriteFor::Eviction => WaitEvent::DirtyBufferWriteOnEviction,
        }
    }
}

impl BufferCache {
    /// Reads one block into a newly claimed buffer, unless another session put the block
    /// in the cache meanwhile; either way the buffer returned is pinned for the caller.
    pub(super) fn read_single(&self, stats: &SessionStats, rdba: u32) -> Result<Loaded> {
        let (victim, _) = timed(stats, Stat::PhysicalReadBufferClaimNs, || self.claim_free_buffer(stats))?;
        let inserted =
            timed(stats, Stat::PhysicalReadChainInsertNs, || self.insert_claimed(stats, rdba, victim, READING));
        if let Err(existing) = inserted {
            self.unclaim(victim);
            return Ok(Loaded::ByOther(existing));
        }
        let file = self.file(rdba);
        let mut call_ended = None;
        let result = file.and_then(|file| {
            let wait = stats.begin_wait_with(WaitEvent::DbFileSequentialRead, block_wait_parameters(rdba, 1));
            // SAFETY: we hold the only pin on a READING buffer: nobody else reads or writes it.
            let bytes = unsafe { self.buffer_bytes_mut(victim) };
            let (read, ended) = syscall_cpu(stats, wait, || file.read_block(block::rdba_block(rdba), bytes));
            call_ended = ended;
            read
        });
        let checked = result
            .and_then(|()| self.check_read(stats, call_ended, &[(rdba, victim)]).pop().map_or(Ok(()), |(_, e)| Err(e)));
        self.count_read(stats, 1);
        self.finish_read(stats, victim, rdba, checked)?;
        Ok(Loaded::ByUs(victim))
    }

    pub(super) fn count_read(&self, stats: &SessionStats, blocks: u64) {
        stats.add(Stat::PhysicalReads, blocks);
        stats.add(Stat::PhysicalReadsCache, blocks);
        stats.add(Stat::PhysicalReadIoRequests, 1);
        stats.add(Stat::PhysicalReadBytes, blocks * self.block_size as u64);
        if blocks > 1 {
            stats.add(Stat::PhysicalReadMultiBlockRequests, 1);
        }
    }

    /// Checks the blocks a read call put in `run`'s READING buffers (block address, buffer):
    /// returns the failures, by position in `run`. The
    /// checks' CPU, by the thread's CPU clock from `call_ended` (the clock's reading as
    /// the call returned, so no extra reading is taken) to after the last check, goes to
    /// `physical read block check ns`, where the session times its CPU
    /// ([`SessionStats::cpu_timed`]).
    fn check_read(&self, stats: &SessionStats, call_ended: Option<u64>, run: &[(u32, u32)]) -> Vec<(usize, Error)> {
        let started = call_ended.or_else(|| stats.thread_cpu_ns());
        let mut failed = Vec::new();
        for (at, &(rdba, index)) in run.iter().enumerate() {
            // SAFETY: still READING and pinned by us alone for writing.
            if let Err(reason) = block::verify(unsafe { self.buffer_bytes(index) }, rdba) {
                failed.push((at, self.corrupt(rdba, reason)));
            }
        }
        if let Some(started) = started {
            let ended = crate::stats::osstat::thread_cpu_time_ns();
            stats.add(Stat::PhysicalReadBlockCheckNs, ended.saturating_sub(started));
        }
        failed
    }

    /// Ends a read into READING buffer `index` whose block [`BufferCache::check_read`]
    /// checked: makes it visible, or removes the buffer from its chain and returns the
    /// error.
    pub(super) fn finish_read(&self, stats: &SessionStats, index: u32, rdba: u32, checked: Result<()>) -> Result<()> {
        // SAFETY: still READING and pinned by us alone for writing.
        let bytes = unsafe { self.buffer_bytes(index) };
        let h = &self.headers[index as usize];
        h.object_id.store(block::BlockHeader(bytes).object_id(), Ordering::Relaxed);
        match checked {
            Ok(()) => {
                h.state.store(VALID | IN_CHAIN, Ordering::Release);
            }
            Err(e) => {
                let (latch, bucket) = self.bucket_of(rdba);
                let mut chains = latch.get(stats);
                chains.unlink(bucket, index);
                h.state.store(0, Ordering::Release);
                drop(chains);
                h.unpin();
                self.notify_readers();
                return Err(e);
            }
        }
        self.notify_readers();
        Ok(())
    }

    pub(super) fn notify_readers(&self) {
        let _lock = self.read_done.0.lock();
        self.read_done.1.notify_all();
    }

    pub(super) fn corrupt(&self, rdba: u32, reason: String) -> Error {
        let file = self.file(rdba).map(|f| f.path().to_owned()).unwrap_or_default();
        Error::Corrupt { file, block: Some(block::rdba_block(rdba)), reason }
    }

    /// Writes a dirty buffer to its datafile (the dirty flag is cleared first, under the
    /// shared content lock, so a change made after the copy dirties it again). Returns
    /// false if the buffer could not be pinned (it left its chain meanwhile), or if it is
    /// a checkpoint's write of a block whose redo a waiting log switch holds back (it
    /// stays dirty: see [`BufferCache::write_ahead`]).
    pub(super) fn write_back(&self, stats: &SessionStats, index: u32, why: WriteFor) -> Result<bool> {
        let h = &self.headers[index as usize];
        let Some(rdba) = self.pin_current(stats, index) else { return Ok(false) };
        h.lock_shared(stats);
        let result = self.write_locked(stats, index, rdba, why);
        h.unlock_shared_unpin();
        result
    }

    /// Pins buffer `index` if it holds a current block in its chain; returns its address.
    fn pin_current(&self, stats: &SessionStats, index: u32) -> Option<u32> {
        let h = &self.headers[index as usize];
        let rdba = h.rdba.load(Ordering::Relaxed);
        let (latch, bucket) = self.bucket_of(rdba);
        let chains = latch.get(stats);
        let state = h.state.load(Ordering::Acquire);
        if !chains.buckets[bucket].contains(&index)
            || h.rdba.load(Ordering::Relaxed) != rdba
            || state & VALID == 0
            || state & CR != 0
        {
            return None;
        }
        h.pin();
        Some(rdba)
    }

    /// Writes buffer `index` (pinned and shared-locked) if it is dirty; returns false if
    /// it was left dirty instead (see [`BufferCache::write_back`]).
    pub(super) fn write_locked(&self, stats: &SessionStats, index: u32, rdba: u32, why: WriteFor) -> Result<bool> {
        let h = &self.headers[index as usize];
        if h.state.fetch_and(!DIRTY, Ordering::AcqRel) & DIRTY == 0 {
            return Ok(true);
        }
        match self.write_ahead(index, why) {
            Ok(true) => {}
            unwritable => {
                h.state.fetch_or(DIRTY, Ordering::AcqRel);
                return unwritable;
            }
        }
        let mut scratch = self.write_scratch.lock().pop().unwrap_or_else(|| Arena::new(1, self.block_size));
        let copy = scratch.block_mut(0);
        // SAFETY: we hold a pin and the shared content lock.
        copy.copy_from_slice(unsafe { self.buffer_bytes(index) });
        block::seal(copy);
        let written = self.pass_write_barrier(rdba, copy).and_then(|()| self.file(rdba)).and_then(|file| {
            let _wait = stats.begin_wait(why.event());
            file.write_block(block::rdba_block(rdba), copy)
        });
        self.write_scratch.lock().push(scratch);
        if let Err(e) = written {
            // Still to be written: the block stays dirty.
            h.state.fetch_or(DIRTY, Ordering::AcqRel);
            return Err(e);
        }
        self.written(index);
        stats.add(Stat::PhysicalWrites, 1);
        stats.add(Stat::PhysicalWritesFromCache, 1);
        stats.add(Stat::PhysicalWriteIoRequests, 1);
        stats.add(Stat::PhysicalWriteBytes, self.block_size as u64);
        Ok(true)
    }

    /// Multiblock read for a scan: brings `count` adjacent blocks starting at `first` into
    /// the cache, skipping blocks already cached; each run of uncached blocks is one read
    /// call (`db file scattered read`, or `db file sequential read` for a run of one).
    /// Every block comes back pinned, in order, for the scan to visit: a cached block
    /// costs one latch get here and none when visited. The caller keeps runs inside one
    /// extent.
    ///
    /// Only the first block may wait for a free buffer. Once the read holds pins it does
    /// not wait while holding them (sessions scanning a small cache at once would each
    /// hold the buffers the others wait for): when no buffer is free, or another session
    /// is waiting for one, it stops short, and [`PinnedRun::end`] tells the caller where
    /// to ask again.
    pub fn pin_multiblock(&self, stats: &SessionStats, first: u32, count: u32) -> Result<PinnedRun<'_>> {
        let count = self.reserve_run_pins(count);
        let mut pinned =
            PinnedRun { cache: self, blocks: VecDeque::with_capacity(count as usize), end: first, reserved: count };
        let mut run: Vec<(u32, u32)> = Vec::with_capacity(count as usize);
        // The latch and bucket of each block are prefetched a few blocks ahead of its
        // lookup, so the lookups do not wait on memory one after another.
        for rdba in first..first + count.min(LOOKUP_PREFETCH_AHEAD) {
            self.prefetch_bucket(rdba);
        }
        for rdba in first..first + count {
            if rdba + LOOKUP_PREFETCH_AHEAD < first + count {
                self.prefetch_bucket(rdba + LOOKUP_PREFETCH_AHEAD);
            }
            // Blocks are pushed even when the read before them failed, so that dropping
            // the run releases their pins.
            if let Some(index) = self.lookup_and_pin(stats, rdba) {
                let read = self.read_run(stats, &mut run, &mut pinned.blocks);
                pinned.blocks.push_back((rdba, index));
                read?;
                continue;
            }
            let holding = !(run.is_empty() && pinned.blocks.is_empty());
            let claimed = timed(stats, Stat::PhysicalReadBufferClaimNs, || {
                if !holding {
                    self.claim_free_buffer(stats).map(Some)
                } else if self.free_buffer_waiters.load(Ordering::Relaxed) > 0 {
                    Ok(None)
                } else {
                    self.sweep_for_free_buffer(stats)
                }
            });
            let victim = match claimed {
                Ok(Some((victim, _))) => victim,
                Ok(None) => break,
                Err(e) => {
                    // Finish the blocks already claimed, so none stays READING.
                    let _ = self.read_run(stats, &mut run, &mut pinned.blocks);
                    return Err(e);
                }
            };
            match timed(stats, Stat::PhysicalReadChainInsertNs, || self.insert_claimed(stats, rdba, victim, READING)) {
                Ok(()) => run.push((rdba, victim)),
                Err(existing) => {
                    self.unclaim(victim);
                    let read = self.read_run(stats, &mut run, &mut pinned.blocks);
                    pinned.blocks.push_back((rdba, existing));
                    read?;
                }
            }
        }
        self.read_run(stats, &mut run, &mut pinned.blocks)?;
        pinned.end = first + pinned.blocks.len() as u32;
        self.release_run_pins(pinned.reserved - pinned.blocks.len() as u32);
        pinned.reserved = pinned.blocks.len() as u32;
        Ok(pinned)
    }

    /// Reserves room for a multiblock read to pin up to `count` blocks ahead of its scan:
    /// as many as keep the pins of all reads within `run_pin_limit`, and always at least
    /// one, so that every scan moves on (a single-block get is never refused either).
    /// Returns how many blocks the read may pin.
    pub(super) fn reserve_run_pins(&self, count: u32) -> u32 {
        let mut granted = 0;
        let _ = self.run_pins.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |held| {
            granted = count.min(self.run_pin_limit.saturating_sub(held).max(1));
            Some(held + granted)
        });
        granted
    }

    /// Gives back room reserved by [`BufferCache::reserve_run_pins`].
    pub(super) fn release_run_pins(&self, count: u32) {
        if count > 0 {
            self.run_pins.fetch_sub(count, Ordering::Relaxed);
        }
    }

    /// The buffer holding the current version of `rdba` in a chain (CR clones skipped);
    /// the caller holds the chain's latch.
    #[inline]
    pub(super) fn find_in_chain(&self, chain: &[u32], rdba: u32) -> Option<u32> {
        chain.iter().copied().find(|&i| {
            let h = &self.headers[i as usize];
            h.rdba.load(Ordering::Relaxed) == rdba && h.state.load(Ordering::Relaxed) & CR == 0
        })
    }

    /// Reads a run of claimed, READING buffers for adjacent blocks with one call; our pins
    /// move to `keep` (block address, buffer). A block whose read failed is dropped from
    /// the cache, its pin released.
    pub(super) fn read_run(
        &self,
        stats: &SessionStats,
        run: &mut Vec<(u32, u32)>,
        keep: &mut VecDeque<(u32, u32)>,
    ) -> Result<u32> {
        if run.is_empty() {
            return Ok(0);
        }
        let first = run[0].0;
        let n = run.len() as u32;
        let mut call_ended = None;
        let io = self.file(first).and_then(|file| {
            let event = if n > 1 { WaitEvent::DbFileScatteredRead } else { WaitEvent::DbFileSequentialRead };
            let wait = stats.begin_wait_with(event, block_wait_parameters(first, u64::from(n)));
            // SAFETY: each buffer is READING and pinned by us alone; they are distinct.
            let mut bufs: Vec<&mut [u8]> = run.iter().map(|&(_, i)| unsafe { self.buffer_bytes_mut(i) }).collect();
            let (read, ended) = syscall_cpu(stats, wait, || file.read_blocks(block::rdba_block(first), &mut bufs));
            call_ended = ended;
            read
        });
        let failed = match io {
            Ok(()) => self.check_read(stats, call_ended, run),
            Err(e) => (run.iter().enumerate())
                .map(|(at, &(rdba, _))| (at, self.corrupt(rdba, format!("multiblock read failed: {e}"))))
                .collect(),
        };
        let mut failed = failed.into_iter().peekable();
        self.count_read(stats, u64::from(n));
        let mut first_error = None;
        for (at, (rdba, index)) in run.drain(..).enumerate() {
            let checked = failed.next_if(|(failed_at, _)| *failed_at == at).map_or(Ok(()), |(_, e)| Err(e));
            match self.finish_read(stats, index, rdba, checked) {
                Ok(()) => keep.push_back((rdba, index)),
                Err(e) => {
                    first_error.get_or_insert(e);
                }
            }
        }
        first_error.map_or(Ok(n), Err)
    }

    /// Writes every dirty buffer (a checkpoint). Returns how many were written.
    pub fn checkpoint(&self, stats: &SessionStats) -> Result<usize> {
        let mut written = 0;
        for index in 0..self.headers.len() as u32 {
            let h = &self.headers[index as usize];
            if h.has(DIRTY) && h.has(IN_CHAIN) && self.write_back(stats, index, WriteFor::Checkpoint)? {
                written += 1;
            }
        }
        self.sync_files()?;
        Ok(written)
    }

    /// Calls `each` with a sealed copy of every dirty block (its address and bytes), as a
    /// checkpoint would write it, without writing it: instance recovery stages them all
    /// in its double-write file before its checkpoint writes them.
    pub fn each_dirty_block(&self, stats: &SessionStats, mut each: impl FnMut(u32, &[u8]) -> Result<()>) -> Result<()> {
        let mut scratch = Arena::new(1, self.block_size);
        for index in 0..self.headers.len() as u32 {
            let h = &self.headers[index as usize];
            if !(h.has(DIRTY) && h.has(IN_CHAIN) && self.pin_current(stats, index).is_some()) {
                continue;
            }
            h.lock_shared(stats);
            let rdba = h.rdba.load(Ordering::Relaxed);
            let copy = scratch.block_mut(0);
            // SAFETY: we hold a pin and the shared content lock.
            copy.copy_from_slice(unsafe { self.buffer_bytes(index) });
            h.unlock_shared_unpin();
            block::seal(copy);
            each(rdba, copy)?;
        }
        Ok(())
    }

    /// Buffers holding changes not yet written (`v$instance_recovery`'s estimate of the
    /// blocks recovery would read).
    pub fn dirty_buffers(&self) -> usize {
        self.headers.iter().filter(|h| h.has(DIRTY)).count()
    }

    /// Writes the sealed block `block` over block address `rdba` in its datafile, past the
    /// cache, which must hold no version of it (instance recovery, before it reads any).
    pub fn write_in_place(&self, rdba: u32, block: &[u8]) -> Result<()> {
        self.file(rdba)?.write_block(block::rdba_block(rdba), block)
    }

    /// Syncs every datafile: the writes made so far are durable, and stop holding the
    /// checkpoint position back.
    ///
    /// A failed sync is never retried. Linux drops the pages of a failed writeback and
    /// marks them clean, so a second sync returns 0 with the writes lost (PostgreSQL's
    /// "fsyncgate"): from the first failure on, this fails at once, the unsynced writes
    /// keep holding the checkpoint position back, and only crash recovery from the last
    /// good checkpoint (a reopen) can make the datafiles whole again.
    pub fn sync_files(&self) -> Result<()> {
        if let Some(failure) = self.sync_failure() {
            return Err(Self::sync_failed_error(failure));
        }
        let unsynced = self.take_unsynced();
        for file in self.files.read().iter().flatten() {
            if let Err(e) = file.sync() {
                self.restore_unsynced(unsynced);
                let _ = self.sync_failure.set(e.to_string());
                return Err(e);
            }
        }
        Ok(())
    }

    /// Why a sync of the datafiles failed, if one has (the instance must be restarted).
    pub fn sync_failure(&self) -> Option<&str> {
        self.sync_failure.get().map(String::as_str)
    }

    fn sync_failed_error(failure: &str) -> Error {
        Error::InstanceFailed {
            reason: format!(
                "a datafile sync failed ({failure}); writes since the last checkpoint may be lost from the datafiles, \
                 and crash recovery at the next open restores them from the redo"
            ),
        }
    }

    /// `ALTER SYSTEM FLUSH BUFFER_CACHE`: checkpoint, then drop every unpinned buffer and
    /// ask the kernel to drop the datafiles' pages too.
    pub fn flush(&self, stats: &SessionStats) -> Result<()> {
        self.checkpoint(stats)?;
        self.drop_buffers(stats, |_| true);
        for file in self.files.read().iter().flatten() {
            file.drop_os_cache()?;
        }
        Ok(())
    }
}

/// Runs `step` of the read path and adds the nanoseconds it took, by the monotonic clock,
/// to `stat` (for the steps that do not block: see the module's comment).
#[inline]
fn timed<T>(stats: &SessionStats, stat: Stat, step: impl FnOnce() -> T) -> T {
    let started = std::time::Instant::now();
    let out = step();
    stats.add(stat, started.elapsed().as_nanos() as u64);
    out
}

/// Runs a read system call and ends its `wait`, and adds the CPU time the thread spent
/// (its CPU clock before and after) to `physical read syscall CPU ns`; returns the
/// call's result and the clock's reading after it, where the block checks start. A
/// session that does not time its CPU ([`SessionStats::cpu_timed`]) reads no clock.
#[inline]
fn syscall_cpu<T>(stats: &SessionStats, wait: impl Sized, call: impl FnOnce() -> T) -> (T, Option<u64>) {
    let started = stats.thread_cpu_ns();
    let out = call();
    drop(wait);
    let ended = started.map(|started| {
        let ended = crate::stats::osstat::thread_cpu_time_ns();
        stats.add(Stat::PhysicalReadSyscallCpuNs, ended.saturating_sub(started));
        ended
    });
    (out, ended)
}
