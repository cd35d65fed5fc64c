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
//! The cache's state and its construction are here; its work is split by job: `get`
//! (consistent and current gets, pins), `replace` (claiming a free buffer by the
//! touch-count sweep), `io` (single and multiblock reads, writes, checkpoints, syncs),
//! `prefetch` (hints for chains and blocks about to be read), `logging` (the redo a write
//! guard's changes make), `versions` (CR clones).
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
//! otherwise it lets go and takes the latch. The `header` module owns that word. There
//! is one hint per bucket, and a hash is masked to the bucket count less one, so a hint
//! is read without a bounds check (`BufferCache::hint_of`): the mask and the hints'
//! length are fixed together when the cache is made.
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
//! for their memory early: [`BufferCache::prefetch_hint`] touches nothing but the line of
//! the bucket's hint, [`BufferCache::prefetch_lines`] guesses the buffer from the bucket's
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
mod get;
mod guard;
mod header;
mod io;
mod latch;
mod logging;
mod pre_page;
mod prefetch;
mod replace;
mod versions;

pub use arena::{Arena, BLOCK_ALIGN, PrePageState};
pub use guard::{PinnedRun, ReadGuard, WriteGuard};
pub use latch::LatchTotals;
pub use prefetch::PrefetchTarget;
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
    /// The number of buckets (a power of two) less one: a hash's bits that name a bucket,
    /// kept as the mask rather than its log2, which every hash would turn into the mask.
    bucket_mask: u32,
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
    /// What every write in place must pass first while set (instance recovery's double
    /// write, before the redo is attached).
    write_barrier: RwLock<Option<Arc<dyn WriteBarrier>>>,
    /// Why a sync of the datafiles failed, once one has: the kernel may have dropped the
    /// written pages, so no later sync can be trusted and none is tried (see `io`).
    sync_failure: std::sync::OnceLock<String>,
}

/// A step every write of a block in place waits for while it is set: instance recovery
/// keeps a synced copy of the blocks whose recovered version was built on the datafile's
/// (see `storage::doublewrite`).
pub trait WriteBarrier: Send + Sync {
    /// Called with the sealed block about to be written over block address `rdba`; the
    /// write happens only if it returns `Ok`.
    fn before_write(&self, rdba: u32, sealed: &[u8]) -> Result<()>;
}

impl BufferCache {
    /// A cache of `size_bytes / block_size` buffers (at least [`MIN_BUFFERS`]).
    pub fn new(size_bytes: usize, block_size: usize) -> BufferCache {
        let buffers = (size_bytes / block_size).max(MIN_BUFFERS);
        let bucket_bits = (buffers * 2).next_power_of_two().trailing_zeros().max(5);
        let latch_count = (1usize << bucket_bits) / BUCKETS_PER_LATCH;
        // One hint for each bucket a masked hash names (`hint_of` reads them unchecked).
        let bucket_mask = (1u32 << bucket_bits) - 1;
        BufferCache {
            block_size,
            arena: Arena::new(buffers, block_size),
            headers: (0..buffers).map(|_| BufferHeader::new()).collect(),
            latches: (0..latch_count).map(|_| ChildLatch::new()).collect(),
            hints: (0..=bucket_mask).map(|_| AtomicU32::new(NO_HINT)).collect(),
            bucket_mask,
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
            write_barrier: RwLock::new(None),
            sync_failure: std::sync::OnceLock::new(),
        }
    }

    /// Sets (or, with `None`, lifts) the step every write in place must pass first.
    pub fn set_write_barrier(&self, barrier: Option<Arc<dyn WriteBarrier>>) {
        *self.write_barrier.write() = barrier;
    }

    /// Passes the write barrier, if one is set, for the sealed block `sealed` of `rdba`.
    fn pass_write_barrier(&self, rdba: u32, sealed: &[u8]) -> Result<()> {
        match self.write_barrier.read().as_ref() {
            Some(barrier) => barrier.before_write(rdba, sealed),
            None => Ok(()),
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
        (block::rdba_block(rdba).wrapping_add(file_offset.wrapping_mul(0x9E37_79B1)) & self.bucket_mask) as usize
    }

    /// The hint of `rdba`'s bucket, read without a bounds check: every prefetch and
    /// latch-free get reads one.
    #[inline(always)]
    fn hint_of(&self, rdba: u32) -> &AtomicU32 {
        let h = self.hash_of(rdba);
        debug_assert!(h < self.hints.len());
        // SAFETY: `hash_of` masks with `bucket_mask`, and `hints` holds `bucket_mask + 1`
        // entries; both are set in `new` and never change.
        unsafe { self.hints.get_unchecked(h) }
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

    /// Totals of the `cache buffers chains` latches.
    pub fn latch_totals(&self) -> LatchTotals {
        let mut totals = LatchTotals::default();
        for l in self.latches.iter() {
            l.add_to(&mut totals);
        }
        totals
    }

    /// The blocks each segment has in the cache right now, by data object id: buffers
    /// holding a valid current version (not a CR clone, not still being read). One pass
    /// over the buffer headers, without latches: a figure of a moment, as `v$bh` is.
    pub fn cached_blocks_by_object(&self) -> std::collections::HashMap<u32, u64> {
        let mut counts = std::collections::HashMap::new();
        for h in self.headers.iter() {
            let state = h.state.load(Ordering::Acquire);
            if state & (IN_CHAIN | VALID | CR | READING) == IN_CHAIN | VALID {
                *counts.entry(h.object_id.load(Ordering::Relaxed)).or_insert(0) += 1;
            }
        }
        counts
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

/// P1–P3 of a wait for block `rdba`, as Oracle gives them: file#, block#, and `p3` (the
/// blocks of a read, the class of a busy block).
fn block_wait_parameters(rdba: u32, p3: u64) -> crate::stats::activity::WaitParameters {
    let (file, block) = (block::rdba_file(rdba), block::rdba_block(rdba));
    crate::stats::activity::WaitParameters { p: [u64::from(file), u64::from(block), p3], blocking_session: None }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;
    use std::time::Duration;

    /// Each segment's cached blocks are counted by its data object id; a dropped
    /// object's blocks are no longer counted.
    #[test]
    fn cached_blocks_are_counted_by_object() {
        let cache = BufferCache::new(MIN_BUFFERS * 8192, 8192);
        let stats = SessionStats::default();
        for b in 0..5u32 {
            drop(cache.new_block(&stats, block::rdba(1, 100 + b), 9).unwrap());
        }
        for b in 0..3u32 {
            drop(cache.new_block(&stats, block::rdba(1, 200 + b), 10).unwrap());
        }
        let counts = cache.cached_blocks_by_object();
        assert_eq!((counts.get(&9), counts.get(&10), counts.get(&11)), (Some(&5), Some(&3), None));
        cache.invalidate_object(&stats, 9);
        assert_eq!(cache.cached_blocks_by_object().get(&9), None);
    }

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

        let waiter = replace::FreeBufferWaiter::new(&cache.free_buffer_waiters);
        let short = cache.pin_multiblock(&stats, last, 3).unwrap();
        assert_eq!(short.end(), last + 1, "holding the cached block, the read took no freed buffer");
        drop((short, waiter));

        let full = cache.pin_multiblock(&stats, last, 3).unwrap();
        assert_eq!(full.end(), last + 3, "with no one waiting, the read took both freed buffers");
        drop((full, all));
        assert_eq!(cache.summary().pinned, 0);
    }

    /// The read path's time accounting (`physical read ... ns`) moves on every read from
    /// a datafile, multiblock or single, and never on blocks found in the cache.
    #[test]
    fn the_read_path_is_timed_on_physical_reads_only() {
        let dir = tempfile::tempdir().unwrap();
        let (cache, _file) = versions::tests::cache_with_file(&dir, 4 * MIN_BUFFERS, 64);
        let timed = [
            Stat::PhysicalReadSyscallCpuNs,
            Stat::PhysicalReadBufferClaimNs,
            Stat::PhysicalReadChainInsertNs,
            Stat::PhysicalReadBlockCheckNs,
        ];
        let read = |stats: &SessionStats| {
            let mut run = cache.pin_multiblock(stats, block::rdba(1, 1), 32).unwrap();
            while let Some(guard) = run.next_block(stats) {
                drop(guard.unwrap());
            }
            drop(cache.consistent_get(stats, block::rdba(1, 40)).unwrap());
        };
        let cold = SessionStats::default();
        cache.flush(&cold).unwrap();
        read(&cold);
        assert_eq!((cold.get(Stat::PhysicalReads), cold.get(Stat::PhysicalReadIoRequests)), (33, 2));
        for stat in timed {
            assert!(cold.get(stat) > 0, "{} moves on a physical read", stat.name());
        }
        let cached = SessionStats::default();
        read(&cached);
        assert_eq!(cached.get(Stat::PhysicalReads), 0, "every block cached");
        for stat in timed {
            assert_eq!(cached.get(stat), 0, "{} stays 0 on cached gets", stat.name());
        }
        // A session that does not time its CPU (`timed_statistics = FALSE`) reads no CPU
        // clock; the monotonic clock's timings go on.
        let untimed = SessionStats::default();
        untimed.set_cpu_timed(false);
        cache.flush(&untimed).unwrap();
        read(&untimed);
        assert_eq!(untimed.get(Stat::PhysicalReads), 33);
        for stat in [Stat::PhysicalReadSyscallCpuNs, Stat::PhysicalReadBlockCheckNs] {
            assert_eq!(untimed.get(stat), 0, "{} without the CPU clock", stat.name());
        }
        for stat in [Stat::PhysicalReadBufferClaimNs, Stat::PhysicalReadChainInsertNs] {
            assert!(untimed.get(stat) > 0, "{} moves on", stat.name());
        }
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
        cache.prefetch_block(rdba, 3, Some((8000, 3)));
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
