//! Consistent-read versions of a block: clones of the current buffer rolled back with
//! undo, kept in the block's hash chain beside the current version.
//!
//! ```text
//!  bucket of rdba 0x0040000a ──► chain: [buf 9, buf 17, buf 4, buf 30]
//!                                         │      │       │      └─ CR  as_of 1180, valid_until 1200
//!                                         │      │       └─ other block hashing here
//!                                         │      └─ CR  as_of 1100, valid_until 1150
//!                                         └─ current (xcur): what gets change, what is written
//! ```
//!
//! The transaction layer builds a clone with [`BufferCache::clone_for_cr`]: a free buffer
//! is claimed, the current bytes copied in, and the clone enters the chain exclusively
//! locked, so a reader that finds it before the undo is applied waits on its content
//! lock. Once the undo is applied the builder records the clone's true range
//! ([`BufferCache::set_cr_version`]) and [`WriteGuard::downgrade`]s to read it without
//! letting a writer in; a clone whose undo failed leaves with [`WriteGuard::discard_cr`].
//! Later readers look for a clone that serves their snapshot with
//! [`BufferCache::find_cr`]; a change to the current block lowers the clones'
//! `valid_until` ([`BufferCache::cap_cr_versions`]).
//!
//! Whether a clone serves a reader may take reads of undo (has a transaction committed?),
//! so `find_cr` asks the caller's `usable` with no latch held, on a copy of the versions,
//! then pins the chosen clone only if its version is unchanged.
//!
//! Invariants:
//! - a block has at most [`MAX_VERSIONS`] versions in its chain, current one included:
//!   registering a clone beyond that first evicts the unpinned clone with the oldest
//!   `as_of`; when every clone is pinned, the new clone stays *private*: in no chain,
//!   seen only through its guard, and free again when the guard (or the read guard it
//!   was downgraded to) is dropped;
//! - a clone's [`CrVersion`] is in the cache's side table exactly while the clone is in
//!   a chain, and changes only under that chain's latch; `valid_until` only ever goes
//!   down;
//! - a clone is never dirty: nothing ever writes it to disk.

use super::{BufferCache, CR, DIRTY, IN_CHAIN, MAX_TOUCH, ReadGuard, VALID, WriteGuard};
use crate::error::Result;
use crate::stats::SessionStats;
use crate::storage::block;
use crate::txn::Xid;
use parking_lot::lock_api::{RawRwLock as _, RawRwLockDowngrade as _};
use smallvec::SmallVec;
use std::sync::atomic::Ordering;

/// Most versions of one block in the cache: the current one and up to five clones, as
/// Oracle's `_db_block_max_cr_dba`.
pub const MAX_VERSIONS: usize = 6;

/// Highest touch count a clone keeps: a clone in use survives a turn of the clock hand,
/// but never outlives the current blocks in use.
const MAX_CR_TOUCH: u8 = 1;
const _: () = assert!(MAX_CR_TOUCH <= MAX_TOUCH);

/// Which readers a CR clone serves; set by the transaction layer when it builds the
/// clone, read back by it when a later reader considers reusing the clone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CrVersion {
    /// The snapshot SCN the clone was rolled back to.
    pub as_of: u64,
    /// The clone serves snapshots below this SCN only (lowered when the current block
    /// changes after the clone was made).
    pub valid_until: u64,
    /// Transactions whose uncommitted changes were rolled back in the clone: once one of
    /// them commits at or before a reader's snapshot, the clone is wrong for that reader.
    pub pending: SmallVec<[Xid; 2]>,
    /// A clone that keeps a transaction's own uncommitted changes serves only it.
    pub owner: Option<Xid>,
}

impl BufferCache {
    /// Copies `current` (the bytes of the current version of `rdba`, which the caller
    /// holds) into a free buffer registered as a CR version of `rdba`, replacing the
    /// oldest clone when the block already has [`MAX_VERSIONS`] versions. The clone comes
    /// back exclusively locked for undo to be applied; it is never dirty and never
    /// written to disk. Claiming the buffer counts `free buffer requested` like any other.
    ///
    /// When the block has its most versions and every clone is pinned, the clone is
    /// private: it serves the caller alone (no [`BufferCache::find_cr`] finds it) and
    /// its buffer is free again once the guard is dropped.
    pub fn clone_for_cr(
        &self,
        stats: &SessionStats,
        rdba: u32,
        current: &[u8],
        version: CrVersion,
    ) -> Result<WriteGuard<'_>> {
        assert_eq!(current.len(), self.block_size, "a CR clone copies a whole block");
        let index = self.claim_free_buffer(stats)?;
        let h = &self.headers[index as usize];
        // Locked before it is reachable: a reader that finds the clone waits for its undo.
        h.content.lock_exclusive();
        // SAFETY: the buffer is claimed by us (pinned, in no chain) and exclusively locked.
        unsafe { self.buffer_bytes_mut(index) }.copy_from_slice(current);
        h.object_id.store(block::BlockHeader(current).object_id(), Ordering::Relaxed);
        h.touch.store(0, Ordering::Relaxed);
        self.register_cr(stats, rdba, index, version);
        Ok(WriteGuard { cache: self, index, rdba })
    }

    /// Puts claimed clone `index` into the chain of `rdba`, first evicting the oldest
    /// unpinned clone if the block has [`MAX_VERSIONS`] versions. Returns false, leaving
    /// the clone private, if every clone is pinned.
    fn register_cr(&self, stats: &SessionStats, rdba: u32, index: u32, version: CrVersion) -> bool {
        let (latch, bucket) = self.bucket_of(rdba);
        let mut chains = latch.get(stats);
        let versions = chains.buckets[bucket].iter().filter(|&&i| self.is_version_of(i, rdba)).count();
        // Registering under the latch keeps every block at MAX_VERSIONS or fewer, so one
        // eviction always makes room.
        if versions >= MAX_VERSIONS {
            let Some(old) = self.oldest_idle_clone(&chains.buckets[bucket], rdba) else {
                return false;
            };
            let h = &self.headers[old as usize];
            self.forget_cr_version(old, CR);
            chains.unlink(bucket, old);
            h.state.store(0, Ordering::Release);
            h.touch.store(0, Ordering::Relaxed);
            // Pinned by `oldest_idle_clone`; out of the chain and unpinned, it is free.
            h.unpin();
        }
        let h = &self.headers[index as usize];
        *self.cr_versions[index as usize].lock() = Some(version);
        h.rdba.store(rdba, Ordering::Relaxed);
        h.state.store(VALID | CR | IN_CHAIN, Ordering::Release);
        chains.buckets[bucket].push(index);
        true
    }

    /// Whether buffer `index`, in the chain of `rdba`, holds a version of `rdba` (current
    /// or clone); the caller holds the chain's latch.
    fn is_version_of(&self, index: u32, rdba: u32) -> bool {
        self.headers[index as usize].rdba.load(Ordering::Relaxed) == rdba
    }

    /// Whether buffer `index`, in the chain of `rdba`, is a CR clone of `rdba`; the caller
    /// holds the chain's latch.
    fn is_clone_of(&self, index: u32, rdba: u32) -> bool {
        let h = &self.headers[index as usize];
        h.rdba.load(Ordering::Relaxed) == rdba && h.state.load(Ordering::Acquire) & CR != 0
    }

    /// The unpinned clone of `rdba` with the oldest `as_of` in `chain`, pinned for the
    /// caller to evict; the caller holds the chain's latch (so no one pins it meanwhile).
    fn oldest_idle_clone(&self, chain: &[u32], rdba: u32) -> Option<u32> {
        let mut idle: SmallVec<[(u64, u32); MAX_VERSIONS]> = chain
            .iter()
            .filter(|&&i| self.is_clone_of(i, rdba) && self.headers[i as usize].pins.load(Ordering::Acquire) == 0)
            .filter_map(|&i| self.cr_versions[i as usize].lock().as_ref().map(|v| (v.as_of, i)))
            .collect();
        idle.sort_unstable();
        idle.into_iter().map(|(_, i)| i).find(|&i| {
            self.headers[i as usize].pins.compare_exchange(0, 1, Ordering::Acquire, Ordering::Relaxed).is_ok()
        })
    }

    /// A CR clone of `rdba` for which `usable` holds, share-locked; `None` if there is
    /// none. Of several, the one with the newest `as_of`. Counts nothing: the caller
    /// counts its consistent get.
    ///
    /// `usable` runs without any latch held (it may read undo through the cache). A clone
    /// still being built is waited for (so the caller must not hold a clone of `rdba`
    /// exclusively), and `usable` is asked again if the builder changed its version.
    pub fn find_cr(
        &self,
        stats: &SessionStats,
        rdba: u32,
        usable: impl Fn(&CrVersion) -> bool,
    ) -> Option<ReadGuard<'_>> {
        loop {
            let clones = self.clones_newest_first(stats, rdba);
            let (index, seen) = clones.into_iter().find(|(_, v)| usable(v))?;
            if !self.pin_clone_if_unchanged(stats, rdba, index, &seen) {
                continue;
            }
            let guard = self.share_locked(index, rdba);
            // Its builder has finished with it now: the version is final (or gone, if the
            // clone was discarded).
            let version = self.cr_versions[index as usize].lock().clone();
            if version.is_some_and(|v| v == seen || usable(&v)) {
                return Some(guard);
            }
        }
    }

    /// The clones of `rdba` and their versions as they are now, newest `as_of` first.
    fn clones_newest_first(&self, stats: &SessionStats, rdba: u32) -> SmallVec<[(u32, CrVersion); MAX_VERSIONS]> {
        let (latch, bucket) = self.bucket_of(rdba);
        let chains = latch.get(stats);
        let mut clones: SmallVec<[(u32, CrVersion); MAX_VERSIONS]> = chains.buckets[bucket]
            .iter()
            .filter(|&&i| self.is_clone_of(i, rdba))
            .filter_map(|&i| self.cr_versions[i as usize].lock().clone().map(|v| (i, v)))
            .collect();
        drop(chains);
        clones.sort_unstable_by_key(|(_, v)| std::cmp::Reverse(v.as_of));
        clones
    }

    /// Pins clone `index` of `rdba` if it is still in its chain with version `seen`.
    fn pin_clone_if_unchanged(&self, stats: &SessionStats, rdba: u32, index: u32, seen: &CrVersion) -> bool {
        let (latch, _) = self.bucket_of(rdba);
        let chains = latch.get(stats);
        let h = &self.headers[index as usize];
        if !self.is_clone_of(index, rdba) || self.cr_versions[index as usize].lock().as_ref() != Some(seen) {
            return false;
        }
        h.pins.fetch_add(1, Ordering::Acquire);
        drop(chains);
        if h.touch.load(Ordering::Relaxed) < MAX_CR_TOUCH {
            h.touch.store(MAX_CR_TOUCH, Ordering::Relaxed);
        }
        true
    }

    /// Replaces the version record of the CR clone `clone` (once its undo is applied and
    /// its true range known), keeping any lower `valid_until` that
    /// [`BufferCache::cap_cr_versions`] set since the clone was registered. A private
    /// clone keeps no version.
    pub fn set_cr_version(&self, clone: &WriteGuard<'_>, version: CrVersion) {
        let (latch, _) = self.bucket_of(clone.rdba);
        let _chains = latch.get_untimed();
        let h = &self.headers[clone.index as usize];
        let state = h.state.load(Ordering::Acquire);
        assert!(state & IN_CHAIN == 0 || state & CR != 0, "only a CR clone has a version");
        if let Some(v) = self.cr_versions[clone.index as usize].lock().as_mut() {
            *v = CrVersion { valid_until: v.valid_until.min(version.valid_until), ..version };
        }
    }

    /// Lowers `valid_until` of every clone of `rdba` to `scn`: the current block changed
    /// and readers at `scn` or later must see that change.
    pub fn cap_cr_versions(&self, rdba: u32, scn: u64) {
        let (latch, bucket) = self.bucket_of(rdba);
        let chains = latch.get_untimed();
        for &i in chains.buckets[bucket].iter().filter(|&&i| self.is_clone_of(i, rdba)) {
            if let Some(v) = self.cr_versions[i as usize].lock().as_mut() {
                v.valid_until = v.valid_until.min(scn);
            }
        }
    }

    /// Versions of `rdba` in the cache, current one included (for tests and views).
    pub fn version_count(&self, rdba: u32) -> usize {
        let (latch, bucket) = self.bucket_of(rdba);
        let chains = latch.get_untimed();
        chains.buckets[bucket].iter().filter(|&&i| self.is_version_of(i, rdba)).count()
    }

    /// The current version of `rdba`, exclusively locked and dirtied, counting no get:
    /// for a block cleanout made on behalf of a consistent read, which counts its own
    /// statistics. A block not cached is read (and that read counted, as any read is).
    /// The caller must not hold the block already.
    pub fn cleanout_get(&self, stats: &SessionStats, rdba: u32) -> Result<WriteGuard<'_>> {
        self.pin_dirty(stats, rdba)
    }

    /// [`BufferCache::cleanout_get`] only if `rdba` is cached: commit cleanout never reads.
    pub fn cleanout_get_if_cached(&self, stats: &SessionStats, rdba: u32) -> Option<WriteGuard<'_>> {
        let index = self.lookup_and_pin(stats, rdba)?;
        let h = &self.headers[index as usize];
        if !self.wait_while_reading(stats, index) {
            // The read by another session failed: the block is not cached after all.
            h.unpin();
            return None;
        }
        h.content.lock_exclusive();
        h.state.fetch_or(DIRTY, Ordering::AcqRel);
        Some(WriteGuard { cache: self, index, rdba })
    }

    /// Takes CR clone `index` of `rdba` out of its chain at once, pinned or not (its
    /// pins keep it from reuse until they are released). A private clone is in no chain.
    fn unlink_clone(&self, index: u32, rdba: u32) {
        let h = &self.headers[index as usize];
        let (latch, bucket) = self.bucket_of(rdba);
        let mut chains = latch.get_untimed();
        let state = h.state.load(Ordering::Acquire);
        if state & IN_CHAIN == 0 {
            return;
        }
        assert!(state & CR != 0, "only a CR clone is discarded, never the current version of a block");
        self.forget_cr_version(index, state);
        chains.unlink(bucket, index);
        h.state.store(0, Ordering::Release);
    }
}

impl<'c> WriteGuard<'c> {
    /// Turns exclusive access into shared access without letting a writer in between.
    pub fn downgrade(self) -> ReadGuard<'c> {
        let this = std::mem::ManuallyDrop::new(self);
        let (cache, index, rdba) = (this.cache, this.index, this.rdba);
        // SAFETY: this guard holds the exclusive lock; downgrading turns it into the shared
        // lock the read guard releases, and ManuallyDrop keeps the write guard from
        // unlocking it again. The pin moves to the read guard the same way.
        unsafe { cache.headers[index as usize].content.downgrade() };
        ReadGuard { cache, index, rdba }
    }

    /// Drops a CR clone whose undo could not be applied: it leaves its chain at once, so
    /// no reader uses it (one already waiting for it looks again).
    pub fn discard_cr(self) {
        self.cache.unlink_clone(self.index, self.rdba);
    }
}

