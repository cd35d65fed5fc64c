//! The buffer cache: a fixed set of block buffers shared by every session, found through
//! hash chains guarded by the child latches of `cache buffers chains`.
//!
//! ```text
//!  rdba ──hash──► bucket ──(child latch guards 32 buckets)──► chain: [buf 17, buf 4]
//!                                                                     │
//!  headers[4]: rdba, object id, touch count, zeroed,
//!              state (VALID READING DIRTY IN_CHAIN CR VERIFIED),
//!              word: pins, content lock, claim ──────────► arena[4]: 8 KiB block bytes
//! ```
//!
//! A chain holds the *current* version of a block (the one gets change and checkpoints
//! write) and, beside it, consistent-read clones of the same block marked CR
//! (the `versions` module owns them). Every lookup of the current version skips CR entries: it
//! already loads the header's address, and the CR flag sits in the same header.
//!
//! A *get* takes the chain's latch, finds the header, pins it, drops the latch and then
//! takes the content lock (shared for a consistent get, exclusive for a current get). The
//! guard returned is the only way to reach the bytes; dropping it unlocks and unpins.
//! A consistent get first tries the bucket's hint (the buffer the bucket's block last
//! went into): one atomic operation on the buffer's word pins and share-locks it without
//! the latch, and the get keeps it if the buffer holds the current version of the block,
//! valid, in its chain, and no one writes, waits to write or claims it (`consistent gets
//! pin (fastpath)`);
//! otherwise it lets go and takes the latch. The `header` module owns that word.
//!
//! A consistent get counts `consistent gets` and `session logical reads` as it pins; a
//! scan that pins blocks ahead of time (a [`PinnedRun`]) counts each get only when it
//! visits the block ([`BufferCache::count_consistent_get`]).
//!
//! A miss claims a free buffer (clock sweep over the touch counts; a dirty victim is first
//! written back; a session that finds every buffer pinned waits up to 10 s for one,
//! `free buffer waits`), inserts it into the chain marked READING, reads the block, checks it
//! (checksum, address, type) and clears READING; sessions that want the same block in the
//! meantime wait (`read by other session`). Multiblock reads
//! ([`BufferCache::pin_multiblock`]) claim one buffer per uncached block of a run, fill
//! them with one `preadv`, and hand every block of the read back pinned, in order.
//!
//! A scan visits the blocks of its run while it holds the rest pinned, and a visit may
//! need a free buffer for another block: the transaction table a delayed block cleanout
//! reads, a CR clone. Were every buffer pinned ahead by scans that each wait so, none
//! could let go (until each gave up, 10 s later). So the runs of all sessions together
//! pin at most half the buffers (`run_pins`): a read that would take more stops short,
//! past its first block, and the scan asks again once it has visited what it holds.
//!
//! ```text
//!  buffers: [ run pins of all scans ≤ n/2 | pinned only for a block visit, or free ]
//! ```
//!
//! Adjacent blocks of a file hash to adjacent buckets, and a bucket's chain is kept inline
//! in its latch, so the lookups of a multiblock read walk memory in order.
//!
//! A reader that knows which blocks it will get next (a table access by rowid) can ask
//! for their memory early: [`BufferCache::prefetch_chain`] touches nothing but the hash
//! chain's lines, [`BufferCache::prefetch_lines`] guesses the buffer from the bucket's
//! hint (the buffer the bucket's block last went into, an atomic read without the latch)
//! without reading its header, and a [`PrefetchTarget`] loads lines of it
//! ([`BufferCache::prefetch_block`] does both); none pins or reads a block, so none
//! counts a get nor changes any result, and a stale hint only loads lines nobody needs.
//!
//! Redo (module `logging`): the release of a write guard on a current block appends the
//! change's redo record and moves the buffer's page and first-dirty LSNs; a dirty block
//! is written (checkpoint or eviction) only once the redo up to its page LSN is on disk,
//! and [`BufferCache::unwritten_lsn`] gives the checkpoint position. Until a redo log is
//! attached (instance recovery, tests of the cache alone) nothing is logged.
//!
//! Two marks save work the bytes make unnecessary:
//! - `zeroed`: a buffer never claimed holds the zeros the arena was mapped with; the
//!   first claim clears the mark for good, and [`BufferCache::new_block`] zeroes only a
//!   buffer without it;
//! - VERIFIED: a reader whose structural check of a block passed marks the buffer
//!   ([`ReadGuard::mark_structure_verified`]) so later gets need not repeat it; every
//!   release or downgrade of a write guard, read from disk, clone or reuse clears it.
//!
//! Invariants:
//! - a block address has at most one current entry in its chain and up to
//!   [`MAX_VERSIONS`]` - 1` CR entries; gets, multiblock reads and new blocks only ever
//!   return the current one;
//! - a CR buffer is never dirty and never written to disk; it is evicted by the clock
//!   like any buffer (it enters with touch count 0, so before the blocks in use), and
//!   dropped by [`BufferCache::flush`] and [`BufferCache::invalidate_object`]; its
//!   [`CrVersion`] is set while it is in a chain, and only then;
//! - a buffer with pins > 0 is never evicted or reused: a buffer is claimed for a new
//!   block only from no pins at all, and keeps latch-free pins out until its new
//!   identity is set. Pins are taken under the latch of the buffer's chain, or by a
//!   latch-free get that checks the identity once its pin is in, and released without
//!   the latch; a multiblock read holds the pins of its blocks until the scan visits
//!   them, never waits for a free buffer while it holds any, and takes no more while
//!   another session waits for one; the unvisited blocks of all runs are at most half
//!   the buffers, plus one a run (its first block, which a read may always pin);
//! - block bytes are read only under the shared content lock and written only under the
//!   exclusive one (both held through a guard); a writer that waits for the readers of a
//!   block (`buffer busy waits`) keeps new readers out until it gets in, but admits those
//!   waiting behind it after a while (the `header` module), so a session that already
//!   holds a block shared never waits on it for good;
//! - a block leaves the cache dirty only by being written back first;
//! - VERIFIED is set only under a shared content lock and cleared before the exclusive
//!   lock that changed the bytes is let go, so no reader trusts a mark older than the
//!   bytes.

mod arena;
mod guard;
mod header;
mod latch;
mod logging;
mod pre_page;
mod versions;

pub use arena::{Arena, BLOCK_ALIGN, PrePageState};
pub use guard::{PinnedRun, ReadGuard, WriteGuard};
pub use latch::LatchTotals;
pub use versions::CrVersion;

use crate::error::{Error, Result};
use crate::stats::{SessionStats, Stat, WaitEvent};
use crate::storage::block;
use crate::storage::datafile::DataFile;
use header::BufferHeader;
use latch::{BUCKETS_PER_LATCH, ChildLatch};
use parking_lot::{Condvar, Mutex, RwLock};
use std::collections::VecDeque;
use std::marker::PhantomData;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, AtomicU64, AtomicUsize, Ordering};

/// Blocks ahead of a multiblock lookup whose latch and bucket are prefetched.
const LOOKUP_PREFETCH_AHEAD: u32 = 8;

/// How long a session waits (`free buffer waits`, sleeping up to 8 ms at a time) for a
/// free buffer while no session claims one before it gives up: pins are held for the
/// length of a block visit or a multiblock read, so only a cache too small for the
/// sessions' own pins waits this long. The wait starts again whenever another session
/// claims a buffer, so a busy machine where the holders are slow to let go does not fail.
const FREE_BUFFER_PATIENCE: std::time::Duration = std::time::Duration::from_secs(10);
/// A wait for a free buffer ends after this many patiences in all, even while other
/// sessions keep claiming buffers: sessions that sweep without sleeping can keep taking
/// every freed buffer from a waiter.
const MAX_PATIENCES: u32 = 6;

/// Highest touch count a buffer keeps; the clock hand takes one off per pass.
const MAX_TOUCH: u8 = 3;
/// Fewest buffers a cache may have.
pub const MIN_BUFFERS: usize = 64;

const VALID: u8 = 1;
const READING: u8 = 2;
const DIRTY: u8 = 4;
const IN_CHAIN: u8 = 8;
/// A consistent-read clone, not the current version of its block.
const CR: u8 = 16;
/// A reader's structural check of the bytes passed since they were last written (see
/// [`ReadGuard::structure_verified`]); every write guard's release takes it away.
const VERIFIED: u8 = 32;
/// The redo since the block was last read or written holds its whole image (see the
/// `logging` module).
const LOGGED: u8 = 64;

/// One session counted in [`BufferCache`]'s free-buffer waiters for as long as it lives.
struct FreeBufferWaiter<'c>(&'c AtomicU32);

impl<'c> FreeBufferWaiter<'c> {
    fn new(waiters: &'c AtomicU32) -> FreeBufferWaiter<'c> {
        waiters.fetch_add(1, Ordering::Relaxed);
        FreeBufferWaiter(waiters)
    }
}

impl Drop for FreeBufferWaiter<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Figures of the cache as a whole, for `v$` views and tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CacheSummary {
    pub buffers: usize,
    /// Buffers holding the current version of a block.
    pub cached_blocks: usize,
    /// Buffers holding a consistent-read clone (Oracle's `v$bh` status `cr`).
    pub cr_buffers: usize,
    pub dirty: usize,
    pub pinned: usize,
}

/// Who brought a missed block into the cache; the buffer is pinned either way.
enum Loaded {
    ByUs(u32),
    /// Another session inserted it first (it may still be reading it).
    ByOther(u32),
}

/// A bucket hint naming no buffer.
const NO_HINT: u32 = u32::MAX;

/// The buffer cache.
pub struct BufferCache {
    block_size: usize,
    arena: Arena,
    headers: Box<[BufferHeader]>,
    latches: Box<[ChildLatch]>,
    /// By bucket: the buffer a block of the bucket last went into (`NO_HINT` before any).
    /// Prefetches load its lines blindly; a latch-free get trusts it only once the
    /// buffer, pinned, says it holds the block.
    hints: Box<[AtomicU32]>,
    /// log2 of the number of buckets.
    bucket_bits: u32,
    /// The clock hand of replacement.
    hand: AtomicUsize,
    /// Pins multiblock reads hold for blocks their scans have not visited yet
    /// ([`PinnedRun`]), reserved before the read pins them and given back as the scan
    /// visits each block or drops the run. Kept at or below `run_pin_limit`, but for the
    /// first block of each read (see [`BufferCache::reserve_run_pins`]).
    run_pins: AtomicU32,
    /// Half the buffers: the most pins multiblock reads together hold ahead of their
    /// scans, so that the other half is pinned only for block visits and a session that
    /// waits for a free buffer while it holds a run waits for those visits, not for
    /// other scans' runs, whose sessions may be waiting for a free buffer in turn.
    run_pin_limit: u32,
    /// Sessions waiting for a first free buffer. While any wait, a multiblock read that
    /// already holds pins stops short instead of taking the buffers they wait for: the
    /// waiters sleep between sweeps, so sessions reading on without sleeping would
    /// otherwise take every buffer freed and could starve a waiter past its patience.
    free_buffer_waiters: AtomicU32,
    /// Buffers claimed by clock sweep since the cache was made: a session waiting for a
    /// free buffer gives up only after a wait in which this did not move.
    claims: AtomicU64,
    /// [`FREE_BUFFER_PATIENCE`], shorter in tests of giving up.
    patience: std::time::Duration,
    /// Open datafiles by file number.
    files: RwLock<Vec<Option<Arc<DataFile>>>>,
    /// Wakes sessions waiting for a block another session is reading.
    read_done: (Mutex<()>, Condvar),
    /// Aligned one-block buffers a write seals its copy in, reused from write to write
    /// (one per session writing at once).
    write_scratch: Mutex<Vec<Arena>>,
    /// The version of each buffer that is a CR clone in a chain (`None` for every other
    /// buffer); read and changed under the latch of the clone's chain, or by the session
    /// that claimed the buffer before it enters a chain. Touched only on the CR path.
    cr_versions: Box<[Mutex<Option<CrVersion>>]>,
    /// The redo log every change to a current block is logged in, once attached.
    redo: std::sync::OnceLock<Arc<crate::redo::RedoLog>>,
    /// Each buffer's page and first-dirty LSNs.
    lsns: Box<[logging::BufferLsns]>,
    /// The oldest first-dirty LSN of the blocks written since the datafiles were last
    /// synced (`u64::MAX`: none).
    unsynced_min: AtomicU64,
}

impl BufferCache {
    /// A cache of `size_bytes / block_size` buffers (at least [`MIN_BUFFERS`]).
    pub fn new(size_bytes: usize, block_size: usize) -> BufferCache {
        let buffers = (size_bytes / block_size).max(MIN_BUFFERS);
        let bucket_bits = (buffers * 2).next_power_of_two().trailing_zeros().max(5);
        let latch_count = (1usize << bucket_bits) / BUCKETS_PER_LATCH;
        BufferCache {
            block_size,
            arena: Arena::new(buffers, block_size),
            headers: (0..buffers).map(|_| BufferHeader::new()).collect(),
            latches: (0..latch_count).map(|_| ChildLatch::new()).collect(),
            hints: (0..1usize << bucket_bits).map(|_| AtomicU32::new(NO_HINT)).collect(),
            bucket_bits,
            hand: AtomicUsize::new(0),
            run_pins: AtomicU32::new(0),
            run_pin_limit: (buffers / 2) as u32,
            free_buffer_waiters: AtomicU32::new(0),
            claims: AtomicU64::new(0),
            patience: FREE_BUFFER_PATIENCE,
            files: RwLock::new(Vec::new()),
            read_done: (Mutex::new(()), Condvar::new()),
            write_scratch: Mutex::new(Vec::new()),
            cr_versions: (0..buffers).map(|_| Mutex::new(None)).collect(),
            redo: std::sync::OnceLock::new(),
            lsns: (0..buffers).map(|_| logging::BufferLsns::default()).collect(),
            unsynced_min: AtomicU64::new(u64::MAX),
        }
    }

    /// Has the cache's memory populated in the background from now on (PRE_PAGE_SGA), so
    /// that new blocks do not wait for the kernel to zero fresh pages. Takes no lock the
    /// cache uses; the thread ends early when the cache is dropped.
    pub fn pre_page(&mut self) {
        self.arena.pre_page();
    }

    pub fn block_size(&self) -> usize {
        self.block_size
    }

    pub fn buffer_count(&self) -> usize {
        self.headers.len()
    }

    /// Makes a datafile's blocks reachable through the cache.
    pub fn attach_file(&self, file: Arc<DataFile>) {
        let mut files = self.files.write();
        let n = file.number() as usize;
        if files.len() <= n {
            files.resize(n + 1, None);
        }
        files[n] = Some(file);
    }

    fn file(&self, rdba: u32) -> Result<Arc<DataFile>> {
        let n = block::rdba_file(rdba) as usize;
        self.files.read().get(n).cloned().flatten().ok_or_else(|| Error::Corrupt {
            file: format!("datafile #{n}").into(),
            block: Some(block::rdba_block(rdba)),
            reason: "block address names a datafile that is not open".into(),
        })
    }

    /// The child latch and bucket of a block address. Adjacent blocks of a file get
    /// adjacent buckets (the file number is scrambled in, the block number is not), so
    /// the lookups of a multiblock read walk the buckets in order, 32 blocks to a child
    /// latch, instead of jumping across the whole hash table.
    #[inline]
    fn bucket_of(&self, rdba: u32) -> (&ChildLatch, usize) {
        self.bucket_at(self.hash_of(rdba))
    }

    /// The child latch and bucket of hash `h` ([`BufferCache::hash_of`]).
    #[inline]
    fn bucket_at(&self, h: usize) -> (&ChildLatch, usize) {
        (&self.latches[h / BUCKETS_PER_LATCH], h % BUCKETS_PER_LATCH)
    }

    /// The bucket of a block address across the whole hash table.
    #[inline]
    fn hash_of(&self, rdba: u32) -> usize {
        let file_offset = block::rdba_file(rdba) as u32;
        (block::rdba_block(rdba).wrapping_add(file_offset.wrapping_mul(0x9E37_79B1)) & ((1u32 << self.bucket_bits) - 1))
            as usize
    }

    /// Starts loading the hash chain of `rdba` (its latch and bucket) and its bucket's
    /// hint: the first step of prefetching a block a caller will get soon
    /// ([`BufferCache::prefetch_block`]).
    #[inline]
    pub fn prefetch_chain(&self, rdba: u32) {
        let h = self.hash_of(rdba);
        let (latch, bucket) = self.bucket_at(h);
        latch.prefetch(bucket);
        prefetch_address((&raw const self.hints[h]).cast());
    }

    /// Starts loading the first `lines` cache lines of the buffer that probably holds
    /// `rdba`: a hint for a get that follows soon. See [`BufferCache::prefetch_lines`].
    /// `also` is a byte range of the block worth loading too (a guess at where a row
    /// lies); it is clamped to the block.
    #[inline]
    pub fn prefetch_block(&self, rdba: u32, lines: usize, also: Option<(usize, usize)>) {
        let Some(target) = self.prefetch_lines(rdba) else { return };
        target.range(0, lines * 64);
        if let Some((from, to)) = also {
            target.range(from, to);
        }
    }

    /// Where the buffer that probably holds `rdba` lies, for prefetch hints only: the
    /// buffer a block of its bucket last went into, read from the bucket's hint without
    /// the latch (no latch get) and without reading the buffer's header. The buffer may
    /// hold another block, or none, by the time of the hint: a hint loads lines of the
    /// arena, never reads them, and changes no result. `None` before any block went
    /// into the bucket.
    #[inline]
    pub fn prefetch_lines(&self, rdba: u32) -> Option<PrefetchTarget<'_>> {
        let index = self.hinted_buffer(rdba)?;
        prefetch_address((&raw const self.headers[index as usize]).cast());
        Some(PrefetchTarget { block: self.arena.block_ptr(index as usize), len: self.block_size, _memory: PhantomData })
    }

    /// The buffer the hint of `rdba`'s bucket names (one relaxed load, no latch); `None`
    /// before any block went into the bucket. It may hold another block, or none.
    #[inline(always)]
    fn hinted_buffer(&self, rdba: u32) -> Option<u32> {
        let index = self.hints[self.hash_of(rdba)].load(Ordering::Relaxed);
        (index != NO_HINT).then_some(index)
    }

    /// Starts loading the latch and bucket of `rdba`.
    #[inline]
    fn prefetch_bucket(&self, rdba: u32) {
        let (latch, bucket) = self.bucket_of(rdba);
        latch.prefetch(bucket);
    }

    /// # Safety
    /// The caller holds a pin and the content lock (shared or exclusive) of buffer `index`.
    unsafe fn buffer_bytes(&self, index: u32) -> &[u8] {
        // SAFETY: in bounds by construction; aliasing is ruled out by the content lock the
        // caller holds (shared readers only read, an exclusive holder is alone).
        unsafe { std::slice::from_raw_parts(self.arena.block_ptr(index as usize), self.block_size) }
    }

    /// # Safety
    /// The caller holds a pin and the exclusive content lock of buffer `index`.
    #[allow(clippy::mut_from_ref)]
    unsafe fn buffer_bytes_mut(&self, index: u32) -> &mut [u8] {
        // SAFETY: the exclusive content lock makes the caller the only one touching these bytes.
        unsafe { std::slice::from_raw_parts_mut(self.arena.block_ptr(index as usize), self.block_size) }
    }

    /// Lets go the shared lock and pin of a read guard.
    #[inline]
    fn release_shared(&self, index: u32) {
        self.headers[index as usize].unlock_shared_unpin();
    }

    fn release_exclusive(&self, index: u32, rdba: u32, capture: Option<logging::Capture<'_>>) {
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
    fn consistent_get_latched(&self, stats: &SessionStats, rdba: u32) -> Result<ReadGuard<'_>> {
        let index = self.pin(stats, rdba)?;
        Ok(self.share_locked(stats, index, rdba))
    }

    /// The fast path of a consistent get: the buffer named by the bucket's hint, pinned
    /// and share-locked without the chain latch, if it holds the current version of
    /// `rdba` (`consistent gets pin (fastpath)`). `None` sends the get to the latch.
    #[inline(always)]
    fn get_by_hint(&self, stats: &SessionStats, rdba: u32) -> Option<ReadGuard<'_>> {
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
    fn share_locked(&self, stats: &SessionStats, index: u32, rdba: u32) -> ReadGuard<'_> {
        self.headers[index as usize].lock_shared(stats);
        ReadGuard { cache: self, index, rdba }
    }

    /// Takes the shared content lock of buffer `index`, pinned by the caller for `rdba`,
    /// waiting first if another session is still reading it (and getting the block again
    /// if that read failed).
    fn read_guard_for_pinned(&self, stats: &SessionStats, rdba: u32, index: u32) -> Result<ReadGuard<'_>> {
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
    fn pin_dirty<'c>(&'c self, stats: &'c SessionStats, rdba: u32) -> Result<WriteGuard<'c>> {
        let index = self.pin(stats, rdba)?;
        Ok(self.dirty_guard(stats, index, rdba))
    }

    /// Locks pinned buffer `index` (the current version of `rdba`) exclusively, dirties
    /// it, and hands it out with what its redo needs.
    fn dirty_guard<'c>(&'c self, stats: &'c SessionStats, index: u32, rdba: u32) -> WriteGuard<'c> {
        let h = &self.headers[index as usize];
        h.lock_exclusive(stats);
        h.state.fetch_or(DIRTY, Ordering::AcqRel);
        WriteGuard { cache: self, index, rdba, capture: self.capture(stats, index, false) }
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
    fn lookup_and_pin(&self, stats: &SessionStats, rdba: u32) -> Option<u32> {
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
    fn pin(&self, stats: &SessionStats, rdba: u32) -> Result<u32> {
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
    fn wait_while_reading(&self, stats: &SessionStats, index: u32) -> bool {
        let h = &self.headers[index as usize];
        if h.has(READING) {
            self.wait_for_read(stats, h);
        }
        h.has(VALID)
    }

    /// Waits for another session's read of the block of `h` to end (`read by other
    /// session`).
    #[cold]
    fn wait_for_read(&self, stats: &SessionStats, h: &BufferHeader) {
        let _wait = stats.begin_wait(WaitEvent::ReadByOtherSession);
        let mut lock = self.read_done.0.lock();
        while h.has(READING) {
            self.read_done.1.wait_for(&mut lock, std::time::Duration::from_millis(1));
        }
    }

    /// Reads one block into a newly claimed buffer, unless another session put the block
    /// in the cache meanwhile; either way the buffer returned is pinned for the caller.
    fn read_single(&self, stats: &SessionStats, rdba: u32) -> Result<Loaded> {
        let (victim, _) = self.claim_free_buffer(stats)?;
        if let Err(existing) = self.insert_claimed(stats, rdba, victim, READING) {
            self.unclaim(victim);
            return Ok(Loaded::ByOther(existing));
        }
        let file = self.file(rdba);
        let result = file.and_then(|file| {
            let _wait = stats.begin_wait(WaitEvent::DbFileSequentialRead);
            // SAFETY: we hold the only pin on a READING buffer: nobody else reads or writes it.
            let bytes = unsafe { self.buffer_bytes_mut(victim) };
            file.read_block(block::rdba_block(rdba), bytes)
        });
        self.count_read(stats, 1);
        self.finish_read(stats, victim, rdba, result)?;
        Ok(Loaded::ByUs(victim))
    }

    fn count_read(&self, stats: &SessionStats, blocks: u64) {
        stats.add(Stat::PhysicalReads, blocks);
        stats.add(Stat::PhysicalReadsCache, blocks);
        stats.add(Stat::PhysicalReadIoRequests, 1);
        stats.add(Stat::PhysicalReadBytes, blocks * self.block_size as u64);
        if blocks > 1 {
            stats.add(Stat::PhysicalReadMultiBlockRequests, 1);
        }
    }

    /// Ends a read into READING buffer `index`: checks the block and makes it visible, or
    /// removes the buffer from its chain and returns the error.
    fn finish_read(&self, stats: &SessionStats, index: u32, rdba: u32, io: Result<()>) -> Result<()> {
        // SAFETY: still READING and pinned by us alone for writing.
        let bytes = unsafe { self.buffer_bytes(index) };
        let checked = io.and_then(|()| match block::verify(bytes, rdba) {
            Ok(_) => Ok(()),
            Err(reason) => Err(self.corrupt(rdba, reason)),
        });
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

    fn notify_readers(&self) {
        let _lock = self.read_done.0.lock();
        self.read_done.1.notify_all();
    }

    fn corrupt(&self, rdba: u32, reason: String) -> Error {
        let file = self.file(rdba).map(|f| f.path().to_owned()).unwrap_or_default();
        Error::Corrupt { file, block: Some(block::rdba_block(rdba)), reason }
    }

    /// Puts claimed buffer `index` into the chain of `rdba` with `state` (plus IN_CHAIN).
    /// `Err(existing)` (pinned for the caller) if the block is already cached.
    fn insert_claimed(&self, stats: &SessionStats, rdba: u32, index: u32, state: u8) -> Result<(), u32> {
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
    fn unclaim(&self, index: u32) {
        let h = &self.headers[index as usize];
        h.state.store(0, Ordering::Release);
        h.unclaim();
    }

    /// Finds a buffer to reuse by clock sweep and claims it (pins == 1, ours, in no chain).
    /// Counts `free buffer requested` and `free buffer inspected`; a dirty victim is written
    /// back first.
    fn claim_free_buffer(&self, stats: &SessionStats) -> Result<(u32, bool)> {
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
    fn sweep_for_free_buffer(&self, stats: &SessionStats) -> Result<Option<(u32, bool)>> {
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
    fn try_claim(&self, stats: &SessionStats, index: u32) -> Result<Option<(u32, bool)>> {
        let claimed = self.try_claim_buffer(stats, index)?;
        Ok(claimed.map(|index| (index, self.headers[index as usize].zeroed.swap(false, Ordering::AcqRel))))
    }

    fn try_claim_buffer(&self, stats: &SessionStats, index: u32) -> Result<Option<u32>> {
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
            if !self.write_back(stats, index, WaitEvent::DirtyBufferWriteOnEviction)? {
                return Ok(None);
            }
        }
        Ok(self.unlink_if_idle(stats, index).then_some(index))
    }

    /// Removes buffer `index` from its chain and claims it if no one holds it and it is
    /// clean. Returns whether it did.
    fn unlink_if_idle(&self, stats: &SessionStats, index: u32) -> bool {
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
    fn forget_cr_version(&self, index: u32, state: u8) {
        if state & CR != 0 {
            *self.cr_versions[index as usize].lock() = None;
        }
    }

    /// Writes a dirty buffer to its datafile (the dirty flag is cleared first, under the
    /// shared content lock, so a change made after the copy dirties it again). Returns
    /// false if the buffer could not be pinned (it left its chain meanwhile).
    fn write_back(&self, stats: &SessionStats, index: u32, event: WaitEvent) -> Result<bool> {
        let h = &self.headers[index as usize];
        let rdba = h.rdba.load(Ordering::Relaxed);
        {
            let (latch, bucket) = self.bucket_of(rdba);
            let chains = latch.get(stats);
            let state = h.state.load(Ordering::Acquire);
            if !chains.buckets[bucket].contains(&index)
                || h.rdba.load(Ordering::Relaxed) != rdba
                || state & VALID == 0
                || state & CR != 0
            {
                return Ok(false);
            }
            h.pin();
        }
        h.lock_shared(stats);
        let result = self.write_locked(stats, index, rdba, event);
        h.unlock_shared_unpin();
        result.map(|()| true)
    }

    fn write_locked(&self, stats: &SessionStats, index: u32, rdba: u32, event: WaitEvent) -> Result<()> {
        let h = &self.headers[index as usize];
        if h.state.fetch_and(!DIRTY, Ordering::AcqRel) & DIRTY == 0 {
            return Ok(());
        }
        if let Err(e) = self.write_ahead(index) {
            h.state.fetch_or(DIRTY, Ordering::AcqRel);
            return Err(e);
        }
        let mut scratch = self.write_scratch.lock().pop().unwrap_or_else(|| Arena::new(1, self.block_size));
        let copy = scratch.block_mut(0);
        // SAFETY: we hold a pin and the shared content lock.
        copy.copy_from_slice(unsafe { self.buffer_bytes(index) });
        block::seal(copy);
        let written = self.file(rdba).and_then(|file| {
            let _wait = stats.begin_wait(event);
            file.write_block(block::rdba_block(rdba), copy)
        });
        self.write_scratch.lock().push(scratch);
        if written.is_err() {
            // Still to be written: the block stays dirty.
            h.state.fetch_or(DIRTY, Ordering::AcqRel);
            return written;
        }
        self.written(index);
        stats.add(Stat::PhysicalWrites, 1);
        stats.add(Stat::PhysicalWritesFromCache, 1);
        stats.add(Stat::PhysicalWriteIoRequests, 1);
        stats.add(Stat::PhysicalWriteBytes, self.block_size as u64);
        written
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
            let claimed = if !holding {
                self.claim_free_buffer(stats).map(Some)
            } else if self.free_buffer_waiters.load(Ordering::Relaxed) > 0 {
                Ok(None)
            } else {
                self.sweep_for_free_buffer(stats)
            };
            let victim = match claimed {
                Ok(Some((victim, _))) => victim,
                Ok(None) => break,
                Err(e) => {
                    // Finish the blocks already claimed, so none stays READING.
                    let _ = self.read_run(stats, &mut run, &mut pinned.blocks);
                    return Err(e);
                }
            };
            match self.insert_claimed(stats, rdba, victim, READING) {
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
    fn reserve_run_pins(&self, count: u32) -> u32 {
        let mut granted = 0;
        let _ = self.run_pins.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |held| {
            granted = count.min(self.run_pin_limit.saturating_sub(held).max(1));
            Some(held + granted)
        });
        granted
    }

    /// Gives back room reserved by [`BufferCache::reserve_run_pins`].
    fn release_run_pins(&self, count: u32) {
        if count > 0 {
            self.run_pins.fetch_sub(count, Ordering::Relaxed);
        }
    }

    /// The buffer holding the current version of `rdba` in a chain (CR clones skipped);
    /// the caller holds the chain's latch.
    #[inline]
    fn find_in_chain(&self, chain: &[u32], rdba: u32) -> Option<u32> {
        chain.iter().copied().find(|&i| {
            let h = &self.headers[i as usize];
            h.rdba.load(Ordering::Relaxed) == rdba && h.state.load(Ordering::Relaxed) & CR == 0
        })
    }

    /// Reads a run of claimed, READING buffers for adjacent blocks with one call; our pins
    /// move to `keep` (block address, buffer). A block whose read failed is dropped from
    /// the cache, its pin released.
    fn read_run(
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
        let io = self.file(first).and_then(|file| {
            let event = if n > 1 { WaitEvent::DbFileScatteredRead } else { WaitEvent::DbFileSequentialRead };
            let _wait = stats.begin_wait(event);
            // SAFETY: each buffer is READING and pinned by us alone; they are distinct.
            let mut bufs: Vec<&mut [u8]> = run.iter().map(|&(_, i)| unsafe { self.buffer_bytes_mut(i) }).collect();
            file.read_blocks(block::rdba_block(first), &mut bufs)
        });
        self.count_read(stats, u64::from(n));
        let mut first_error = None;
        for (rdba, index) in run.drain(..) {
            let io_result = match &io {
                Ok(()) => Ok(()),
                Err(e) => Err(self.corrupt(rdba, format!("multiblock read failed: {e}"))),
            };
            match self.finish_read(stats, index, rdba, io_result) {
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
            if h.has(DIRTY) && h.has(IN_CHAIN) && self.write_back(stats, index, WaitEvent::DbFileParallelWrite)? {
                written += 1;
            }
        }
        self.sync_files()?;
        Ok(written)
    }

    /// Buffers holding changes not yet written (`v$instance_recovery`'s estimate of the
    /// blocks recovery would read).
    pub fn dirty_buffers(&self) -> usize {
        self.headers.iter().filter(|h| h.has(DIRTY)).count()
    }

    /// Syncs every datafile: the writes made so far are durable, and stop holding the
    /// checkpoint position back.
    pub fn sync_files(&self) -> Result<()> {
        let unsynced = self.take_unsynced();
        for file in self.files.read().iter().flatten() {
            if let Err(e) = file.sync() {
                self.restore_unsynced(unsynced);
                return Err(e);
            }
        }
        Ok(())
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

    /// Drops the cached blocks of a dropped or truncated object without writing them.
    pub fn invalidate_object(&self, stats: &SessionStats, object_id: u32) {
        self.drop_buffers(stats, |h| h.object_id.load(Ordering::Relaxed) == object_id);
    }

    fn drop_buffers(&self, stats: &SessionStats, mut select: impl FnMut(&BufferHeader) -> bool) {
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

    /// Totals of the `cache buffers chains` latches.
    pub fn latch_totals(&self) -> LatchTotals {
        let mut totals = LatchTotals::default();
        for l in self.latches.iter() {
            l.add_to(&mut totals);
        }
        totals
    }

    /// Buffers in use (current versions and CR clones), dirty and pinned right now.
    pub fn summary(&self) -> CacheSummary {
        let mut s = CacheSummary { buffers: self.headers.len(), cached_blocks: 0, cr_buffers: 0, dirty: 0, pinned: 0 };
        for h in self.headers.iter() {
            let state = h.state.load(Ordering::Acquire);
            let in_chain = state & IN_CHAIN != 0;
            s.cached_blocks += usize::from(in_chain && state & CR == 0);
            s.cr_buffers += usize::from(in_chain && state & CR != 0);
            s.dirty += usize::from(in_chain && state & DIRTY != 0);
            s.pinned += usize::from(h.pins() > 0);
        }
        s
    }
}

/// Starts loading the line at `address`: a hint that reads nothing.
#[inline(always)]
fn prefetch_address(address: *const u8) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        // SAFETY: prefetch never faults and dereferences nothing.
        unsafe { _mm_prefetch::<_MM_HINT_T0>(address.cast()) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = address;
}

/// The lines of one block, for prefetch hints: a cached buffer found by address
/// ([`BufferCache::prefetch_lines`], which pins nothing) or the bytes of a block a caller
/// holds ([`PrefetchTarget::of`]). A hint loads lines, never reads them.
#[derive(Clone, Copy)]
pub struct PrefetchTarget<'c> {
    block: *const u8,
    len: usize,
    _memory: PhantomData<&'c [u8]>,
}

impl<'c> PrefetchTarget<'c> {
    /// The lines of `bytes`.
    #[inline(always)]
    pub fn of(bytes: &'c [u8]) -> PrefetchTarget<'c> {
        PrefetchTarget { block: bytes.as_ptr(), len: bytes.len(), _memory: PhantomData }
    }

    /// The block's size in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Starts loading the lines of bytes `from..to` of the buffer (clamped to it).
    #[inline]
    pub fn range(&self, from: usize, to: usize) {
        let (mut line, end) = (from.min(self.len) & !63, to.min(self.len));
        while line < end {
            self.line(line);
            line += 64;
        }
    }

    /// Starts loading the line holding byte `at` of the block. An offset past the block
    /// loads another line of memory (a prefetch never faults), so callers need not check.
    #[inline(always)]
    pub fn line(&self, at: usize) {
        prefetch_address(self.block.wrapping_add(at));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;
    use std::time::Duration;

    /// A new block is all zero whether its buffer was never used (nothing written) or
    /// held another block before (cleared): every claim after the first one fills it.
    #[test]
    fn a_new_block_is_zero_in_a_fresh_buffer_and_in_a_reused_one() {
        let cache = BufferCache::new(MIN_BUFFERS * 8192, 8192);
        let stats = SessionStats::default();
        for round in 0..3u32 {
            for b in 0..MIN_BUFFERS as u32 {
                let mut g = cache.new_block(&stats, block::rdba(1, 1 + round * 1000 + b), 9).unwrap();
                assert!(g.iter().all(|&x| x == 0), "round {round}, block {b}: a new block starts zeroed");
                g.fill(0xAB);
            }
            // Clean the buffers (no file: drop them as a dropped object's) for reuse.
            cache.invalidate_object(&stats, 9);
        }
        // The same block again while cached: its old bytes are cleared too.
        let rdba = block::rdba(1, 5000);
        cache.new_block(&stats, rdba, 9).unwrap().fill(0xCD);
        assert!(cache.new_block(&stats, rdba, 9).unwrap().iter().all(|&x| x == 0));
    }

    /// While a session waits for a free buffer, a multiblock read that already holds pins
    /// stops short rather than take the buffers freed: readers that do not sleep between
    /// sweeps would otherwise take every one and starve the waiter. Once no session waits,
    /// the read takes them again.
    #[test]
    fn a_read_holding_pins_leaves_freed_buffers_to_a_waiting_session() {
        let dir = tempfile::tempdir().unwrap();
        let (cache, _file) = versions::tests::cache_with_file(&dir, MIN_BUFFERS, MIN_BUFFERS as u32 + 8);
        let stats = SessionStats::default();
        cache.flush(&stats).unwrap();
        let first = block::rdba(1, 1);
        let last = first + MIN_BUFFERS as u32 - 1;
        let mut all: VecDeque<_> = (first..=last).map(|rdba| cache.consistent_get(&stats, rdba).unwrap()).collect();
        assert_eq!(cache.summary().pinned, MIN_BUFFERS, "every buffer pinned");
        // Two buffers are freed; the last block stays pinned.
        all.drain(..2);

        let waiter = FreeBufferWaiter::new(&cache.free_buffer_waiters);
        let short = cache.pin_multiblock(&stats, last, 3).unwrap();
        assert_eq!(short.end(), last + 1, "holding the cached block, the read took no freed buffer");
        drop((short, waiter));

        let full = cache.pin_multiblock(&stats, last, 3).unwrap();
        assert_eq!(full.end(), last + 3, "with no one waiting, the read took both freed buffers");
        drop((full, all));
        assert_eq!(cache.summary().pinned, 0);
    }

    /// A scan keeps the blocks of a multiblock read pinned until it visits them, and a
    /// visit may need a buffer for another block while the rest of the run stays pinned
    /// (the transaction table of a delayed block cleanout, a CR clone). Were every buffer
    /// pinned ahead by scans that each wait for one more, none could ever let go; runs
    /// together pin at most half the cache, so each of those gets finds a free buffer.
    #[test]
    fn scans_holding_pinned_runs_still_get_free_buffers_for_other_blocks() {
        let dir = tempfile::tempdir().unwrap();
        let (mut cache, _file) = versions::tests::cache_with_file(&dir, MIN_BUFFERS, 2 * MIN_BUFFERS as u32);
        cache.patience = Duration::from_millis(200);
        let stats = SessionStats::default();
        cache.flush(&stats).unwrap();
        // Four scans, each reading a quarter of the cache ahead as a full scan may.
        let quarter = MIN_BUFFERS as u32 / 4;
        let mut runs: Vec<_> =
            (0..4).map(|s| cache.pin_multiblock(&stats, block::rdba(1, 1 + s * quarter), quarter).unwrap()).collect();
        let mut held = Vec::new();
        for (s, run) in runs.iter_mut().enumerate() {
            held.push(run.next_block(&stats).expect("every run pins its first block").unwrap());
            let other = block::rdba(1, MIN_BUFFERS as u32 + 1 + s as u32);
            match cache.consistent_get(&stats, other) {
                Ok(guard) => held.push(guard),
                Err(e) => panic!("scan {s}, holding its run, got no buffer for another block: {e}"),
            }
        }
        assert!(cache.summary().pinned <= MIN_BUFFERS / 2 + 2 * runs.len(), "{:?}", cache.summary());
        drop((held, runs));
        assert_eq!(cache.summary().pinned, 0);
    }

    /// Scans on many threads, each getting a block not cached while it visits the blocks
    /// of its multiblock read (as a delayed block cleanout reads the transaction table):
    /// no get waits for good on buffers that scans waiting in turn hold pinned.
    #[test]
    fn concurrent_scans_getting_other_blocks_while_holding_runs_never_run_out_of_free_buffers() {
        const SCANS: u32 = 6;
        const ROUNDS: u32 = 40;
        const COLD: u32 = 4 * MIN_BUFFERS as u32;
        let quarter = MIN_BUFFERS as u32 / 4;
        let dir = tempfile::tempdir().unwrap();
        let (mut cache, _file) = versions::tests::cache_with_file(&dir, MIN_BUFFERS, SCANS * quarter + COLD);
        cache.patience = Duration::from_millis(500);
        cache.flush(&SessionStats::default()).unwrap();
        let (cache, start) = (&cache, &std::sync::Barrier::new(SCANS as usize));
        let failures: Vec<String> = std::thread::scope(|scope| {
            let scans: Vec<_> = (0..SCANS)
                .map(|s| {
                    scope.spawn(move || {
                        let stats = SessionStats::default();
                        let first = block::rdba(1, 1 + s * quarter);
                        start.wait();
                        for round in 0..ROUNDS {
                            let mut run = match cache.pin_multiblock(&stats, first, quarter) {
                                Ok(run) => run,
                                Err(e) => return Some(format!("scan {s}, round {round}: {e}")),
                            };
                            let mut i = 0;
                            while let Some(visit) = run.next_block(&stats) {
                                let _visit = visit.unwrap();
                                let cold = SCANS * quarter + 1 + (s * 7 + round * quarter + i) % COLD;
                                if let Err(e) = cache.consistent_get(&stats, block::rdba(1, cold)) {
                                    return Some(format!("scan {s}, round {round}, block {i}: {e}"));
                                }
                                i += 1;
                            }
                        }
                        None
                    })
                })
                .collect();
            scans.into_iter().filter_map(|scan| scan.join().unwrap()).collect()
        });
        assert!(failures.is_empty(), "{} scans failed, first: {:?}", failures.len(), failures.first());
        assert_eq!(cache.summary().pinned, 0);
    }

    /// A read that finds every buffer pinned, and no session claiming one for the whole
    /// wait, fails with an error naming the parameter, and leaves no pin behind.
    #[test]
    fn a_cache_whose_every_buffer_stays_pinned_refuses_a_read_after_waiting() {
        let dir = tempfile::tempdir().unwrap();
        let (mut cache, _file) = versions::tests::cache_with_file(&dir, MIN_BUFFERS, MIN_BUFFERS as u32 + 1);
        cache.patience = Duration::from_millis(200);
        let stats = SessionStats::default();
        cache.flush(&stats).unwrap();
        let all: Vec<_> =
            (1..=MIN_BUFFERS as u32).map(|b| cache.consistent_get(&stats, block::rdba(1, b)).unwrap()).collect();
        let started = std::time::Instant::now();
        let refused = cache.consistent_get(&stats, block::rdba(1, MIN_BUFFERS as u32 + 1)).err().unwrap();
        assert!(started.elapsed() >= cache.patience, "gave up after {:?}", started.elapsed());
        let message = refused.to_string();
        assert!(message.contains("db_cache_size") && message.contains("stayed pinned"), "{message}");
        assert!(stats.event(WaitEvent::FreeBufferWaits).waits > 0, "the wait is counted as free buffer waits");
        drop(all);
        assert_eq!(cache.summary().pinned, 0);
        assert!(cache.consistent_get(&stats, block::rdba(1, MIN_BUFFERS as u32 + 1)).is_ok(), "freed, it reads");
    }

    /// A prefetch hint names the buffer a block of its bucket last went into: none before
    /// any, the block's own buffer once it is cached.
    #[test]
    fn a_prefetch_hint_names_the_buffer_the_block_went_into() {
        let cache = BufferCache::new(MIN_BUFFERS * 8192, 8192);
        let stats = SessionStats::default();
        let rdba = block::rdba(1, 77);
        assert!(cache.prefetch_lines(rdba).is_none(), "no block in the bucket yet");
        drop(cache.new_block(&stats, rdba, 7).unwrap());
        let target = cache.prefetch_lines(rdba).expect("a hint once cached");
        let guard = cache.consistent_get(&stats, rdba).unwrap();
        assert_eq!((target.block, target.len()), (guard.as_ptr(), 8192));
        let gets = stats.get(Stat::ConsistentGets);
        cache.prefetch_block(rdba, 3, Some((8000, 9000)));
        assert_eq!(stats.get(Stat::ConsistentGets), gets, "a hint counts no get");
    }

    /// A consistent get takes the buffer its bucket's hint names without the latch only
    /// while that buffer holds the current version of the block: a hint naming another
    /// block's buffer (of the same bucket, or one that took the buffer over) sends the
    /// get to the latch, and every get returns the block asked for.
    #[test]
    fn a_latch_free_get_takes_the_hinted_buffer_only_while_it_holds_the_block() {
        let dir = tempfile::tempdir().unwrap();
        let blocks = 4 * MIN_BUFFERS as u32;
        let (cache, _file) = versions::tests::cache_with_file(&dir, MIN_BUFFERS, blocks);
        let stats = SessionStats::default();
        cache.flush(&stats).unwrap();
        let get = |rdba: u32| {
            let guard = cache.consistent_get(&stats, rdba).unwrap();
            assert_eq!(block::BlockHeader(&guard).rdba(), rdba, "the block asked for");
        };
        let fastpath = || stats.get(Stat::ConsistentGetsPinFastpath);
        let a = block::rdba(1, 1);
        let neighbour =
            (2..=blocks).map(|b| block::rdba(1, b)).find(|&r| cache.hash_of(r) == cache.hash_of(a)).unwrap();

        get(a);
        assert_eq!((fastpath(), stats.get(Stat::PhysicalReads)), (0, 1), "a miss is read under the latch");
        let latch_gets = cache.latch_totals().gets;
        get(a);
        assert_eq!(fastpath(), 1, "cached and hinted");
        assert_eq!(cache.latch_totals().gets, latch_gets, "no latch get");

        get(neighbour);
        get(a);
        assert_eq!(fastpath(), 1, "the hint names the neighbour's buffer: the latch finds the block");
        assert_eq!(stats.get(Stat::PhysicalReads), 2, "still cached");

        for b in 2 * MIN_BUFFERS as u32 + 1..=blocks {
            get(block::rdba(1, b));
        }
        let reads = stats.get(Stat::PhysicalReads);
        get(a);
        assert_eq!(stats.get(Stat::PhysicalReads), reads + 1, "its buffer went to another block: read again");
        assert_eq!(cache.summary().pinned, 0);
    }

    /// A get only if cached finds a cached block (counted as a consistent get) and reads
    /// nothing for one that is not.
    #[test]
    fn a_get_if_cached_never_reads() {
        let dir = tempfile::tempdir().unwrap();
        let (cache, _file) = versions::tests::cache_with_file(&dir, MIN_BUFFERS, 4);
        let stats = SessionStats::default();
        cache.flush(&stats).unwrap();
        let stats = SessionStats::default();
        assert!(cache.consistent_get_if_cached(&stats, block::rdba(1, 2)).is_none());
        assert_eq!((stats.get(Stat::PhysicalReads), stats.get(Stat::ConsistentGets)), (0, 0));
        drop(cache.consistent_get(&stats, block::rdba(1, 2)).unwrap());
        let found = cache.consistent_get_if_cached(&stats, block::rdba(1, 2)).expect("cached now");
        assert_eq!(found.rdba(), block::rdba(1, 2));
        assert_eq!((stats.get(Stat::PhysicalReads), stats.get(Stat::ConsistentGets)), (1, 2));
        drop(found);
        assert_eq!(cache.summary().pinned, 0);
    }

    /// Readers that keep a hot block shared, overlapping one another so that it is never
    /// free of them, cannot keep a writer out: once the writer waits for them (timed as
    /// `buffer busy waits`), new shared gets wait behind it, and the readers that hold
    /// the block let it go.
    #[test]
    fn a_writer_gets_a_block_that_readers_keep_shared_within_a_bounded_time() {
        const READERS: usize = 4;
        const WRITES: u8 = 20;
        let cache = BufferCache::new(64 * 8192, 8192);
        let rdba = block::rdba(1, 10);
        drop(cache.new_block(&SessionStats::default(), rdba, 7).unwrap());
        let stop = std::sync::atomic::AtomicBool::new(false);
        let writer_stats = SessionStats::default();
        let (cache, stop) = (&cache, &stop);
        let wrote = std::thread::scope(|scope| {
            for _ in 0..READERS {
                scope.spawn(move || {
                    let stats = SessionStats::default();
                    while !stop.load(Ordering::Relaxed) {
                        let guard = cache.consistent_get(&stats, rdba).unwrap();
                        // A visit of the block: the readers' visits overlap.
                        let visit = std::time::Instant::now();
                        while visit.elapsed() < Duration::from_micros(20) {
                            std::hint::black_box(guard[100]);
                        }
                    }
                });
            }
            let (done, writes_done) = mpsc::channel();
            let writer_stats = &writer_stats;
            scope.spawn(move || {
                for i in 0..WRITES {
                    cache.current_get(writer_stats, rdba).unwrap()[100] = i;
                }
                let _ = done.send(());
            });
            let wrote = writes_done.recv_timeout(Duration::from_secs(10));
            // Let the writer finish either way, so that the scope can end.
            stop.store(true, Ordering::Relaxed);
            wrote
        });
        assert!(wrote.is_ok(), "the writer did not get the block {WRITES} times in 10 s of readers");
        let waited = writer_stats.event(WaitEvent::BufferBusyWaits);
        assert!(
            waited.waits > 0 && waited.time_waited_micro > 0,
            "the writer's waits are buffer busy waits: {waited:?}"
        );
        assert_eq!(cache.consistent_get(&SessionStats::default(), rdba).unwrap()[100], WRITES - 1);
        assert_eq!(cache.summary().pinned, 0);
    }

    /// A session that holds a block shared takes it shared again even while a writer waits
    /// for it: a scan holds its next block while following a chained row into it, and an
    /// INSERT may be queued on that block meanwhile. A shared lock that waited behind the
    /// writer for good would wait for the writer, which waits for the scan: a deadlock.
    /// The writer admits the readers queued behind it after a while.
    #[test]
    fn shared_get_of_a_held_block_does_not_wait_for_good_behind_a_queued_writer() {
        let cache = Arc::new(BufferCache::new(64 * 8192, 8192));
        let stats = SessionStats::default();
        let rdba = block::rdba(1, 10);
        drop(cache.new_block(&stats, rdba, 7).unwrap());
        let held = cache.consistent_get(&stats, rdba).unwrap();

        let (wrote, writer_done) = mpsc::channel();
        let writer_cache = Arc::clone(&cache);
        std::thread::spawn(move || {
            drop(writer_cache.current_get(&SessionStats::default(), rdba).unwrap());
            wrote.send(()).unwrap();
        });
        // Give the writer time to queue on the content lock.
        std::thread::sleep(Duration::from_millis(100));
        assert!(writer_done.try_recv().is_err(), "the writer cannot get past the held shared lock");

        let (got, second_done) = mpsc::channel();
        let reader_cache = Arc::clone(&cache);
        std::thread::spawn(move || {
            drop(reader_cache.consistent_get(&SessionStats::default(), rdba).unwrap());
            got.send(()).unwrap();
        });
        second_done.recv_timeout(Duration::from_secs(10)).expect("a second shared get waited behind the queued writer");
        drop(held);
        writer_done.recv_timeout(Duration::from_secs(10)).expect("the writer got the block once the reader let go");
    }
}
