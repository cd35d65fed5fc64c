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

use super::{BufferCache, CR, IN_CHAIN, MAX_TOUCH, ReadGuard, VALID, WriteGuard};
use crate::error::Result;
use crate::stats::SessionStats;
use crate::storage::block;
use crate::storage::ids::Xid;
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
        let (index, _) = self.claim_free_buffer(stats)?;
        let h = &self.headers[index as usize];
        // Locked before it is reachable: a reader that finds the clone waits for its undo.
        h.lock_exclusive(stats);
        // SAFETY: the buffer is claimed by us (pinned, in no chain) and exclusively locked.
        unsafe { self.buffer_bytes_mut(index) }.copy_from_slice(current);
        h.object_id.store(block::BlockHeader(current).object_id(), Ordering::Relaxed);
        h.touch.store(0, Ordering::Relaxed);
        self.register_cr(stats, rdba, index, version);
        // Registered or private, the clone's identity is set: other sessions may pin it.
        h.end_claim();
        Ok(WriteGuard { cache: self, index, rdba, capture: None })
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
            // Claimed by `oldest_idle_clone`; out of the chain and let go, it is free.
            h.unclaim();
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
            .filter(|&&i| self.is_clone_of(i, rdba) && self.headers[i as usize].pins() == 0)
            .filter_map(|&i| self.cr_versions[i as usize].lock().as_ref().map(|v| (v.as_of, i)))
            .collect();
        idle.sort_unstable();
        idle.into_iter().map(|(_, i)| i).find(|&i| self.headers[i as usize].try_claim())
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
            let guard = self.share_locked(stats, index, rdba);
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
        h.pin();
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
    /// and readers at `scn` or later must see that change. Clones that keep a
    /// transaction's own changes are retired outright.
    pub fn cap_cr_versions(&self, rdba: u32, scn: u64) {
        let (latch, bucket) = self.bucket_of(rdba);
        let chains = latch.get_untimed();
        for &i in chains.buckets[bucket].iter().filter(|&&i| self.is_clone_of(i, rdba)) {
            if let Some(v) = self.cr_versions[i as usize].lock().as_mut() {
                // A clone keeping a transaction's own changes serves one snapshot of one
                // transaction; any change to the block (that transaction's next change,
                // or a rollback of it) leaves it behind.
                let until = if v.owner.is_some() { 0 } else { scn };
                v.valid_until = v.valid_until.min(until);
            }
        }
    }

    #[cfg(test)]
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
    pub fn cleanout_get<'c>(&'c self, stats: &'c SessionStats, rdba: u32) -> Result<WriteGuard<'c>> {
        self.pin_dirty(stats, rdba)
    }

    /// For a commit cleanout: the current version of `rdba`, exclusively locked, only if
    /// it is cached (commit cleanout never reads) and no one holds or waits for its
    /// content lock (commit cleanout never waits: `commit cleanout failures: cannot pin`;
    /// the next visitor cleans the block out instead). Dirtied and logged only when that costs
    /// no block image (see [`BufferCache::commit_cleanout_guard`]).
    pub fn commit_cleanout_get<'c>(&'c self, stats: &'c SessionStats, rdba: u32) -> Option<WriteGuard<'c>> {
        let index = self.lookup_and_pin(stats, rdba)?;
        let h = &self.headers[index as usize];
        if !self.wait_while_reading(stats, index) {
            // The read by another session failed: the block is not cached after all.
            h.unpin();
            return None;
        }
        self.commit_cleanout_guard(stats, index, rdba)
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
        let mut this = std::mem::ManuallyDrop::new(self);
        let (cache, index, rdba) = (this.cache, this.index, this.rdba);
        if let Some(capture) = this.capture.take() {
            cache.log_change(index, rdba, capture);
        }
        cache.headers[index as usize].state.fetch_and(!super::VERIFIED, Ordering::AcqRel);
        // The exclusive lock becomes the shared lock the read guard releases, and
        // ManuallyDrop keeps the write guard from unlocking it again. The pin moves to the
        // read guard the same way.
        cache.headers[index as usize].downgrade();
        ReadGuard { cache, index, rdba }
    }

    /// Drops a CR clone whose undo could not be applied: it leaves its chain at once, so
    /// no reader uses it (one already waiting for it looks again).
    pub fn discard_cr(self) {
        self.cache.unlink_clone(self.index, self.rdba);
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::storage::block::BlockType;
    use crate::storage::datafile::DataFile;
    use std::sync::atomic::AtomicU64;
    use std::sync::{Arc, mpsc};
    use std::time::Duration;

    const BS: usize = 2048;
    const OBJECT: u32 = 7;
    /// Where the tests stamp a block's change number: twice, so a torn read shows.
    const STAMP_AT: [usize; 2] = [100, BS - 8];
    /// The byte "undo" sets in a clone, so a clone is told from the current version.
    const ROLLED_BACK_AT: usize = 200;

    fn version(as_of: u64) -> CrVersion {
        CrVersion { as_of, valid_until: u64::MAX, pending: SmallVec::new(), owner: None }
    }

    fn stamp(bytes: &mut [u8], n: u64) {
        for at in STAMP_AT {
            bytes[at..at + 8].copy_from_slice(&n.to_le_bytes());
        }
    }

    /// The stamp of a block, checked to be whole.
    fn stamp_of(bytes: &[u8]) -> u64 {
        let [a, b] = STAMP_AT.map(|at| u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap()));
        assert_eq!(a, b, "a block is read whole: both stamps agree");
        a
    }

    /// A reader's verified mark lasts while the bytes stay as they were: a write guard's
    /// release, a downgrade and a block read back from disk all clear it.
    #[test]
    fn a_structure_verified_mark_lasts_until_the_bytes_change() {
        let dir = tempfile::tempdir().unwrap();
        let (cache, _file) = cache_with_file(&dir, 16, 4);
        let stats = SessionStats::default();
        let rdba = block::rdba(1, 2);
        let verified = |cache: &BufferCache| cache.consistent_get(&stats, rdba).unwrap().structure_verified();
        assert!(!verified(&cache), "a block just read in is not verified");
        cache.consistent_get(&stats, rdba).unwrap().mark_structure_verified();
        assert!(verified(&cache), "the mark stays across gets");
        drop(cache.current_get(&stats, rdba).unwrap());
        assert!(!verified(&cache), "a write guard's release clears it");
        cache.consistent_get(&stats, rdba).unwrap().mark_structure_verified();
        drop(cache.current_get(&stats, rdba).unwrap().downgrade());
        assert!(!verified(&cache), "a downgraded write guard clears it");
        cache.consistent_get(&stats, rdba).unwrap().mark_structure_verified();
        cache.flush(&stats).unwrap();
        assert!(!verified(&cache), "a block read back from disk is not verified");
    }

    /// A cache of `buffers` buffers over one datafile of `blocks` blocks (block 0 is the
    /// file header), each formatted, stamped 0 and written.
    pub(in crate::buffer) fn cache_with_file(
        dir: &tempfile::TempDir,
        buffers: usize,
        blocks: u32,
    ) -> (BufferCache, Arc<DataFile>) {
        let file =
            Arc::new(DataFile::create(&crate::storage::io::OsIo, &dir.path().join("data.dbf"), 1, BS, 42).unwrap());
        file.ensure_blocks(blocks + 1).unwrap();
        let cache = BufferCache::new(buffers * BS, BS);
        cache.attach_file(Arc::clone(&file));
        let stats = SessionStats::default();
        for b in 1..=blocks {
            let rdba = block::rdba(1, b);
            let mut g = cache.new_block(&stats, rdba, OBJECT).unwrap();
            block::format_block(&mut g, BlockType::TableData, rdba, OBJECT);
            stamp(&mut g, 0);
        }
        cache.checkpoint(&stats).unwrap();
        (cache, file)
    }

    /// A block in a cache without files (it never leaves the cache: nothing is evicted).
    fn cached_block(cache: &BufferCache, rdba: u32, object_id: u32, n: u64) {
        let stats = SessionStats::default();
        let mut g = cache.new_block(&stats, rdba, object_id).unwrap();
        block::format_block(&mut g, BlockType::TableData, rdba, object_id);
        stamp(&mut g, n);
    }

    /// A clone of `rdba` as of `as_of`, its "undo" applied: stamped `as_of`.
    fn add_clone(cache: &BufferCache, rdba: u32, as_of: u64) {
        let stats = SessionStats::default();
        let current = cache.consistent_get(&stats, rdba).unwrap().to_vec();
        let mut clone = cache.clone_for_cr(&stats, rdba, &current, version(as_of)).unwrap();
        clone[ROLLED_BACK_AT] = 0xCC;
        stamp(&mut clone, as_of);
    }

    fn clone_as_of(cache: &BufferCache, rdba: u32, as_of: u64) -> Option<ReadGuard<'_>> {
        cache.find_cr(&SessionStats::default(), rdba, |v| v.as_of == as_of)
    }

    #[test]
    fn clones_coexist_with_the_current_version_and_gets_never_return_them() {
        let cache = BufferCache::new(64 * BS, BS);
        let stats = SessionStats::default();
        let rdba = block::rdba(1, 5);
        cached_block(&cache, rdba, OBJECT, 50);
        add_clone(&cache, rdba, 10);
        add_clone(&cache, rdba, 20);
        assert_eq!(cache.version_count(rdba), 3);
        let s = cache.summary();
        assert_eq!((s.cached_blocks, s.cr_buffers, s.dirty), (1, 2, 1), "clones are never dirty");

        assert_eq!(stamp_of(&cache.consistent_get(&stats, rdba).unwrap()), 50);
        let mut current = cache.current_get(&stats, rdba).unwrap();
        assert_eq!(stamp_of(&current), 50);
        stamp(&mut current, 51);
        drop(current);
        let mut run = cache.pin_multiblock(&stats, rdba, 1).unwrap();
        let visited = run.next_block(&stats).unwrap().unwrap();
        assert_eq!((stamp_of(&visited), visited[ROLLED_BACK_AT]), (51, 0));
        drop((visited, run));
        assert_eq!(stamp_of(&cache.new_block(&stats, rdba, OBJECT).unwrap()), 0, "new_block reformats the current");
        assert_eq!(stamp_of(&clone_as_of(&cache, rdba, 10).unwrap()), 10, "the clone kept its own bytes");
        assert_eq!(cache.summary().pinned, 0);
    }

    #[test]
    fn a_block_keeps_at_most_max_versions_replacing_the_oldest_unpinned_clone() {
        let cache = BufferCache::new(64 * BS, BS);
        let rdba = block::rdba(1, 5);
        cached_block(&cache, rdba, OBJECT, 99);
        for as_of in 1..MAX_VERSIONS as u64 {
            add_clone(&cache, rdba, as_of);
        }
        assert_eq!(cache.version_count(rdba), MAX_VERSIONS);

        add_clone(&cache, rdba, 6);
        assert_eq!(cache.version_count(rdba), MAX_VERSIONS);
        assert!(clone_as_of(&cache, rdba, 1).is_none(), "the oldest clone was replaced");
        assert!(clone_as_of(&cache, rdba, 6).is_some());

        // A pinned clone is not replaced, even when it is the oldest.
        let oldest = clone_as_of(&cache, rdba, 2).unwrap();
        add_clone(&cache, rdba, 7);
        assert!(clone_as_of(&cache, rdba, 3).is_none(), "the oldest unpinned clone went instead");
        assert_eq!(stamp_of(&oldest), 2);

        // Every clone pinned: the new one stays private, and is freed with its guard.
        let pinned: Vec<_> = [2, 4, 5, 6, 7].iter().map(|&as_of| clone_as_of(&cache, rdba, as_of).unwrap()).collect();
        let current = cache.consistent_get(&SessionStats::default(), rdba).unwrap().to_vec();
        let private = cache.clone_for_cr(&SessionStats::default(), rdba, &current, version(8)).unwrap();
        assert_eq!(stamp_of(&private), 99);
        assert_eq!(cache.version_count(rdba), MAX_VERSIONS);
        let private = private.downgrade();
        assert!(clone_as_of(&cache, rdba, 8).is_none(), "a private clone is in no chain");
        assert_eq!(cache.summary().pinned, MAX_VERSIONS);
        drop((oldest, pinned, private));
        let s = cache.summary();
        assert_eq!((s.pinned, s.cached_blocks, s.cr_buffers), (0, 1, MAX_VERSIONS - 1));
    }

    #[test]
    fn find_cr_takes_the_newest_usable_clone_and_honours_cap_cr_versions() {
        let cache = BufferCache::new(64 * BS, BS);
        let rdba = block::rdba(1, 5);
        let other = block::rdba(2, 5);
        cached_block(&cache, rdba, OBJECT, 99);
        cached_block(&cache, other, OBJECT, 99);
        add_clone(&cache, rdba, 10);
        add_clone(&cache, rdba, 20);
        add_clone(&cache, other, 30);
        let stats = SessionStats::default();
        let for_snapshot = |snapshot: u64| {
            let found = cache.find_cr(&stats, rdba, |v| v.as_of <= snapshot && snapshot < v.valid_until);
            found.map(|g| stamp_of(&g))
        };
        assert_eq!(for_snapshot(5), None);
        assert_eq!(for_snapshot(15), Some(10));
        assert_eq!(for_snapshot(40), Some(20), "the newest usable clone; never another block's");
        assert_eq!(cache.find_cr(&stats, rdba, |_| true).map(|g| stamp_of(&g)), Some(20));

        cache.cap_cr_versions(rdba, 18);
        assert_eq!(for_snapshot(15), Some(10));
        assert_eq!(for_snapshot(18), None, "a change at 18 is seen by snapshots from 18 on");
        assert_eq!(for_snapshot(40), None);
        assert!(cache.find_cr(&stats, rdba, |v| v.as_of == 20 && v.valid_until == 18).is_some());
        assert!(cache.find_cr(&stats, other, |v| v.valid_until == u64::MAX).is_some(), "other blocks keep theirs");
        assert_eq!(cache.summary().pinned, 0);
    }

    #[test]
    fn flush_and_invalidate_object_drop_clones() {
        let dir = tempfile::tempdir().unwrap();
        let (cache, _file) = cache_with_file(&dir, 64, 4);
        let stats = SessionStats::default();
        let (ours, theirs) = (block::rdba(1, 1), block::rdba(1, 2));
        cached_block(&cache, theirs, OBJECT + 1, 0);
        for rdba in [ours, theirs] {
            add_clone(&cache, rdba, 1);
            add_clone(&cache, rdba, 2);
        }
        cache.invalidate_object(&stats, OBJECT + 1);
        assert_eq!((cache.version_count(ours), cache.version_count(theirs)), (3, 0));

        cache.flush(&stats).unwrap();
        assert_eq!(cache.version_count(ours), 0);
        let s = cache.summary();
        assert_eq!((s.cached_blocks, s.cr_buffers, s.pinned), (0, 0, 0));
        assert_eq!(stamp_of(&cache.consistent_get(&stats, ours).unwrap()), 0);
        assert!(clone_as_of(&cache, ours, 2).is_none());
    }

    #[test]
    fn checkpoint_writes_the_current_version_only() {
        let dir = tempfile::tempdir().unwrap();
        let (cache, file) = cache_with_file(&dir, 64, 2);
        let stats = SessionStats::default();
        let rdba = block::rdba(1, 1);
        add_clone(&cache, rdba, 1);
        stamp(&mut cache.current_get(&stats, rdba).unwrap(), 5);
        add_clone(&cache, rdba, 2);
        assert_eq!(cache.checkpoint(&stats).unwrap(), 1, "one dirty buffer: the current version");
        assert_eq!(cache.checkpoint(&stats).unwrap(), 0);

        let mut on_disk = vec![0; BS];
        file.read_block(1, &mut on_disk).unwrap();
        block::verify(&on_disk, rdba).unwrap();
        assert_eq!((stamp_of(&on_disk), on_disk[ROLLED_BACK_AT]), (5, 0));
        assert_eq!(cache.version_count(rdba), 3);
    }

    /// A writer queued on a block while its holder downgrades gets in only after the
    /// holder's read is done; a reader that finds a clone under construction waits for it
    /// and sees it with its undo applied.
    #[test]
    fn downgrade_lets_no_writer_in_and_readers_see_the_finished_clone() {
        let cache = Arc::new(BufferCache::new(64 * BS, BS));
        let rdba = block::rdba(1, 5);
        cached_block(&cache, rdba, OBJECT, 1);
        let stats = SessionStats::default();

        let mut cleaned = cache.cleanout_get(&stats, rdba).unwrap();
        assert_eq!(stats.get(crate::stats::Stat::DbBlockGets), 0, "a cleanout counts no get");
        stamp(&mut cleaned, 2);
        let (done, writer_done) = mpsc::channel();
        let writer_cache = Arc::clone(&cache);
        let writer = std::thread::spawn(move || {
            stamp(&mut writer_cache.current_get(&SessionStats::default(), rdba).unwrap(), 3);
            done.send(()).unwrap();
        });
        std::thread::sleep(Duration::from_millis(50));
        let read = cleaned.downgrade();
        std::thread::sleep(Duration::from_millis(50));
        assert!(writer_done.try_recv().is_err(), "no writer gets in while the downgraded guard lives");
        assert_eq!(stamp_of(&read), 2);
        drop(read);
        writer.join().unwrap();
        assert_eq!(stamp_of(&cache.consistent_get(&stats, rdba).unwrap()), 3);

        let current = cache.consistent_get(&stats, rdba).unwrap().to_vec();
        let mut clone = cache.clone_for_cr(&stats, rdba, &current, version(1)).unwrap();
        let (found, reader_done) = mpsc::channel();
        let reader_cache = Arc::clone(&cache);
        let reader = std::thread::spawn(move || {
            let g = reader_cache.find_cr(&SessionStats::default(), rdba, |_| true).unwrap();
            found.send((stamp_of(&g), g[ROLLED_BACK_AT])).unwrap();
        });
        std::thread::sleep(Duration::from_millis(50));
        assert!(reader_done.try_recv().is_err(), "a reader waits for the clone's undo");
        clone[ROLLED_BACK_AT] = 0xCC;
        stamp(&mut clone, 1);
        let clone = clone.downgrade();
        assert_eq!(reader_done.recv_timeout(Duration::from_secs(10)).unwrap(), (1, 0xCC));
        reader.join().unwrap();
        drop(clone);
        assert_eq!(cache.summary().pinned, 0);
    }

    #[test]
    fn a_discarded_clone_is_never_found() {
        let cache = Arc::new(BufferCache::new(64 * BS, BS));
        let rdba = block::rdba(1, 5);
        cached_block(&cache, rdba, OBJECT, 1);
        add_clone(&cache, rdba, 1);
        let current = cache.consistent_get(&SessionStats::default(), rdba).unwrap().to_vec();
        let half_built = cache.clone_for_cr(&SessionStats::default(), rdba, &current, version(2)).unwrap();
        let reader_cache = Arc::clone(&cache);
        let reader = std::thread::spawn(move || {
            let g = reader_cache.find_cr(&SessionStats::default(), rdba, |_| true).unwrap();
            stamp_of(&g)
        });
        std::thread::sleep(Duration::from_millis(50));
        half_built.discard_cr();
        assert_eq!(reader.join().unwrap(), 1, "the waiting reader fell back to the finished clone");
        assert_eq!(cache.version_count(rdba), 2);
        assert_eq!(cache.summary().pinned, 0);
    }

    #[test]
    fn set_cr_version_keeps_a_cap_made_while_the_clone_was_built() {
        let cache = BufferCache::new(64 * BS, BS);
        let rdba = block::rdba(1, 5);
        cached_block(&cache, rdba, OBJECT, 1);
        let stats = SessionStats::default();
        let current = cache.consistent_get(&stats, rdba).unwrap().to_vec();
        let clone = cache.clone_for_cr(&stats, rdba, &current, version(10)).unwrap();
        cache.cap_cr_versions(rdba, 30);
        let xid = Xid { usn: 1, slot: 2, wrap: 3 };
        let built = CrVersion { valid_until: 40, pending: SmallVec::from_slice(&[xid]), ..version(10) };
        cache.set_cr_version(&clone, built);
        drop(clone);
        let expected = CrVersion { valid_until: 30, pending: SmallVec::from_slice(&[xid]), ..version(10) };
        assert!(cache.find_cr(&stats, rdba, |v| *v == expected).is_some());
    }

    /// A reader that chose a clone by the version it had while being built asks again
    /// once the builder recorded the clone's true version.
    #[test]
    fn find_cr_asks_again_when_the_builder_changes_the_version() {
        let cache = Arc::new(BufferCache::new(64 * BS, BS));
        let rdba = block::rdba(1, 5);
        cached_block(&cache, rdba, OBJECT, 1);
        add_clone(&cache, rdba, 5);
        let current = cache.consistent_get(&SessionStats::default(), rdba).unwrap().to_vec();
        let mut clone = cache.clone_for_cr(&SessionStats::default(), rdba, &current, version(8)).unwrap();
        let reader_cache = Arc::clone(&cache);
        let reader = std::thread::spawn(move || {
            let g = reader_cache.find_cr(&SessionStats::default(), rdba, |v| v.valid_until > 20).unwrap();
            stamp_of(&g)
        });
        std::thread::sleep(Duration::from_millis(50));
        stamp(&mut clone, 8);
        cache.set_cr_version(&clone, CrVersion { valid_until: 20, ..version(8) });
        drop(clone);
        assert_eq!(reader.join().unwrap(), 5, "the clone built meanwhile turned out not to serve the reader");
        assert_eq!(cache.summary().pinned, 0);
    }

    #[test]
    fn commit_cleanout_get_never_reads() {
        let dir = tempfile::tempdir().unwrap();
        let (cache, _file) = cache_with_file(&dir, 64, 2);
        let stats = SessionStats::default();
        let rdba = block::rdba(1, 1);
        cache.flush(&stats).unwrap();
        assert!(cache.commit_cleanout_get(&stats, rdba).is_none());
        assert_eq!(stats.get(crate::stats::Stat::PhysicalReads), 0);
        drop(cache.consistent_get(&stats, rdba).unwrap());
        add_clone(&cache, rdba, 1);
        let mut g = cache.commit_cleanout_get(&stats, rdba).unwrap();
        assert_eq!(g[ROLLED_BACK_AT], 0, "the current version, never a clone");
        stamp(&mut g, 4);
        drop(g);
        assert_eq!(cache.summary().dirty, 1);
        assert_eq!(stamp_of(&cache.consistent_get(&stats, rdba).unwrap()), 4);
    }

    /// A commit cleanout never waits: a block another session holds is left for its
    /// next visitor, with the failure counted and no pin left behind.
    #[test]
    fn commit_cleanout_get_leaves_a_held_block_alone() {
        let dir = tempfile::tempdir().unwrap();
        let (cache, _file) = cache_with_file(&dir, 64, 2);
        let stats = SessionStats::default();
        let rdba = block::rdba(1, 1);
        let failures = || stats.get(crate::stats::Stat::CommitCleanoutFailuresCannotPin);
        let reader = cache.consistent_get(&stats, rdba).unwrap();
        assert!(cache.commit_cleanout_get(&stats, rdba).is_none(), "a block read by another session");
        assert_eq!(failures(), 1);
        drop(reader);
        let writer = cache.current_get(&stats, rdba).unwrap();
        assert!(cache.commit_cleanout_get(&stats, rdba).is_none(), "a block changed by another session");
        assert_eq!(failures(), 2);
        drop(writer);
        assert_eq!(cache.summary().pinned, 0, "no pin left by the cleanouts that failed");
        let mut g = cache.commit_cleanout_get(&stats, rdba).expect("a block no one holds");
        stamp(&mut g, 4);
        drop(g);
        assert_eq!((failures(), stamp_of(&cache.consistent_get(&stats, rdba).unwrap())), (2, 4));
    }

    /// A tiny xorshift generator: the test is random but repeatable per seed.
    struct Rng(u64);

    impl Rng {
        fn below(&mut self, n: u64) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0 % n
        }
    }

    /// One session's random mix of gets and clones on a cache too small for them all;
    /// returns the blocks it read from disk.
    fn random_session(cache: &BufferCache, changes: &[AtomicU64], seed: u64) -> u64 {
        let stats = SessionStats::default();
        let mut rng = Rng(seed);
        for _ in 0..3000 {
            let b = rng.below(changes.len() as u64);
            let rdba = block::rdba(1, b as u32 + 1);
            match rng.below(10) {
                0..=2 => {
                    let g = cache.consistent_get(&stats, rdba).unwrap();
                    assert_eq!(g[ROLLED_BACK_AT], 0, "a consistent get never returns a clone");
                    stamp_of(&g);
                }
                3..=4 => {
                    let mut g = cache.current_get(&stats, rdba).unwrap();
                    let n = stamp_of(&g) + 1;
                    assert_eq!(g[ROLLED_BACK_AT], 0, "a current get never returns a clone");
                    stamp(&mut g, n);
                    changes[b as usize].store(n, Ordering::Relaxed);
                    cache.cap_cr_versions(rdba, n);
                }
                5..=6 => {
                    let current = cache.consistent_get(&stats, rdba).unwrap();
                    let n = stamp_of(&current);
                    let mut clone = cache.clone_for_cr(&stats, rdba, &current, version(n)).unwrap();
                    drop(current);
                    clone[ROLLED_BACK_AT] = 0xCC;
                    cache.set_cr_version(&clone, CrVersion { valid_until: n + 1, ..version(n) });
                    let clone = clone.downgrade();
                    assert_eq!(stamp_of(&clone), n);
                }
                7..=8 => {
                    let snapshot = rng.below(changes[b as usize].load(Ordering::Relaxed) + 1);
                    if let Some(g) = cache.find_cr(&stats, rdba, |v| v.as_of <= snapshot) {
                        assert_eq!(g[ROLLED_BACK_AT], 0xCC, "find_cr returns clones only");
                        assert!(stamp_of(&g) <= snapshot);
                    }
                }
                _ => {
                    let mut run = cache.pin_multiblock(&stats, rdba, 1).unwrap();
                    if let Some(g) = run.next_block(&stats) {
                        assert_eq!(g.unwrap()[ROLLED_BACK_AT], 0);
                    }
                    assert!(cache.version_count(rdba) <= MAX_VERSIONS);
                }
            }
        }
        stats.get(crate::stats::Stat::PhysicalReads)
    }

    #[test]
    fn concurrent_gets_and_clones_leak_no_pins_and_keep_the_current_bytes() {
        const BLOCKS: u32 = 56;
        let dir = tempfile::tempdir().unwrap();
        let (cache, file) = cache_with_file(&dir, 64, BLOCKS);
        let changes: Vec<AtomicU64> = (0..BLOCKS).map(|_| AtomicU64::new(0)).collect();
        let reads: u64 = std::thread::scope(|s| {
            let sessions: Vec<_> = (1..=4u64)
                .map(|seed| {
                    let (cache, changes) = (&cache, &changes);
                    s.spawn(move || random_session(cache, changes, seed.wrapping_mul(0x9E37_79B9_7F4A_7C15)))
                })
                .collect();
            sessions.into_iter().map(|session| session.join().unwrap()).sum()
        });
        assert!(reads > 0, "the cache is small enough that blocks were evicted and read again");
        let stats = SessionStats::default();
        let s = cache.summary();
        assert_eq!(s.pinned, 0, "no pin outlives its guard");
        assert!(s.cached_blocks + s.cr_buffers <= s.buffers);
        for (b, n) in changes.iter().enumerate() {
            let rdba = block::rdba(1, b as u32 + 1);
            assert_eq!(stamp_of(&cache.consistent_get(&stats, rdba).unwrap()), n.load(Ordering::Relaxed));
        }
        cache.flush(&stats).unwrap();
        let mut on_disk = vec![0; BS];
        for (b, n) in changes.iter().enumerate() {
            file.read_block(b as u32 + 1, &mut on_disk).unwrap();
            assert_eq!(on_disk[ROLLED_BACK_AT], 0, "no clone ever reaches the disk");
            assert_eq!(stamp_of(&on_disk), n.load(Ordering::Relaxed));
        }
    }
}
