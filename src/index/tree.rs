//! The B-tree's structure: finding a key's leaf, and changing leaves for transactions
//! (insert, delete) with the splits that make room.
//!
//! Readers descend one block at a time, holding only that block's content lock, and move
//! right when a key lies at or beyond a block's high fence (a split they did not see).
//! Writers hold the index's structure lock (one per index, in the database) for one
//! insert or delete, so at most one split runs at a time; they take blocks exclusively
//! left to right (the leaf, then its new right sibling, then the old right sibling, then
//! the segment header), release those together as one redo record, then take the
//! parent; never a block to the left or below one they hold, and readers hold one block
//! at a time: no lock cycle is possible. A split is recovered whole or not at all; until
//! the parent's separator is written, a descent reaches the new block by moving right.
//!
//! A leaf change: take an ITL slot for the transaction (`take_itl`), append the undo
//! record ([`super::undo::EntryUndo`]) with the slot as it was, point the slot at the
//! record, then change the entry and lock it through the slot. A delete only flags the
//! entry `DELETED`; its space is purged when the leaf needs room, and only from entries
//! whose deleting transaction committed before the snapshot of every statement running
//! (and of every serializable or read-only transaction). The leaf then records the newest such
//! commit as its purge SCN: a reader whose snapshot is older cannot rebuild the leaf as
//! it was (the entry is gone) and gets "snapshot too old" instead of a wrong answer.
//!
//! Splits are structural: not undone by rollback, and not hidden from readers. A split
//! moves the upper half of a block's entries (half the bytes for a 50-50 split, or only
//! the last entry for a 90-10 split: an insert past the last entry of the rightmost leaf,
//! whose room pays for the left block's new high fence) into a new block to
//! its right, copying the ITL slots, then adds a separator to the parent, splitting it
//! in turn if needed. The root stays where it is: a root split moves its entries down
//! into two new blocks and becomes a branch one level higher.

use super::block::{self, IndexBlock, IndexBlockMut, RowId};
use super::undo::EntryUndo;
use crate::access::segments::SegmentSpace;
use crate::buffer::{ReadGuard, WriteGuard};
use crate::error::{Error, Result};
use crate::stats::Stat;
use crate::storage::block::{HEADER_LEN, ITL_LEN, set_scn};
use crate::storage::itl;
use crate::txn::TxnContext;
use crate::txn::Xid;
use crate::txn::change::{Obstacle, RowLocks, cannot_serialize, point_itl, row_lock_holder, take_itl};
use crate::txn::transaction::Transaction;

/// Most blocks a descent visits before it calls the tree corrupt (a cycle of links).
const MAX_STEPS: usize = 1 << 16;

/// Where a search stands relative to full keys: before every key that is at least
/// `AtLeast(bytes)`, or after every key that starts with `After(prefix)`.
#[derive(Debug, Clone, Copy)]
pub enum Target<'k> {
    AtLeast(&'k [u8]),
    After(&'k [u8]),
}

impl Target<'_> {
    /// Whether full key `k` sorts before the target.
    #[inline]
    pub fn above(&self, k: &[u8]) -> bool {
        match *self {
            Target::AtLeast(b) => k < b,
            Target::After(p) => k.starts_with(p) || k < p,
        }
    }

    /// Whether full key `k` sorts before the target or is the target.
    #[inline]
    pub fn at_or_above(&self, k: &[u8]) -> bool {
        match *self {
            Target::AtLeast(b) => k <= b,
            Target::After(p) => k.starts_with(p) || k < p,
        }
    }
}

/// What a descent looks for: the leaf holding the first key at or after the target
/// (`Forward`), or the last key before it (`Backward`).
#[derive(Debug, Clone, Copy)]
pub enum Seek<'k> {
    Forward(Target<'k>),
    Backward(Target<'k>),
}

impl Seek<'_> {
    /// Whether a block with high fence `high` holds nothing this seek wants.
    fn beyond(&self, high: &[u8]) -> bool {
        match self {
            Seek::Forward(t) => t.at_or_above(high),
            Seek::Backward(t) => t.above(high),
        }
    }

    /// The child of a branch to descend into.
    fn child(&self, branch: IndexBlock<'_>) -> usize {
        match self {
            Seek::Forward(t) => branch.position(|s| t.at_or_above(s)),
            Seek::Backward(t) => branch.position(|s| t.above(s)),
        }
        .saturating_sub(1)
    }
}

/// One index as the tree code needs it.
#[derive(Debug, Clone, Copy)]
pub struct Tree<'n> {
    pub object_id: u32,
    /// The root: the segment's first block after its header; it never moves.
    pub root: u32,
    /// Named in errors.
    pub name: &'n str,
}

impl<'n> Tree<'n> {
    pub fn of(index: &'n crate::catalog::IndexDef) -> Tree<'n> {
        Tree { object_id: index.object_id, root: index.segment_header + 1, name: &index.name }
    }

    pub fn corrupt(&self, ctx: &TxnContext<'_>, rdba: u32, reason: impl std::fmt::Display) -> Error {
        ctx.corrupt(rdba, format!("index {}: {reason}", self.name))
    }

    /// A consistent get of index block `rdba` as it is now, checked.
    pub fn read<'c>(&self, ctx: &TxnContext<'c>, rdba: u32) -> Result<ReadGuard<'c>> {
        let guard = ctx.cache.consistent_get(ctx.stats, rdba)?;
        self.check_read(ctx, &guard)?;
        Ok(guard)
    }

    /// Checks a block read for this index: its header on every get; every entry only
    /// when the buffer's bytes changed since a reader last checked them all.
    pub fn check_read(&self, ctx: &TxnContext<'_>, guard: &ReadGuard<'_>) -> Result<()> {
        if !self.check(ctx, guard, guard.rdba(), guard.structure_verified())? {
            guard.mark_structure_verified();
        }
        Ok(())
    }

    /// A current-mode get of index block `rdba`, checked as [`Tree::check_read`] checks.
    pub fn change<'c>(&self, ctx: &TxnContext<'c>, rdba: u32) -> Result<WriteGuard<'c>> {
        let guard = ctx.cache.current_get(ctx.stats, rdba)?;
        self.check(ctx, &guard, rdba, guard.structure_verified())?;
        Ok(guard)
    }

    /// Checks `block`'s header, and its entries unless `verified`; returns `verified`.
    fn check(&self, ctx: &TxnContext<'_>, block: &[u8], rdba: u32, verified: bool) -> Result<bool> {
        let view = IndexBlock(block);
        view.check_header(self.object_id).map_err(|r| self.corrupt(ctx, rdba, r))?;
        if !verified {
            view.check_entries().map_err(|r| self.corrupt(ctx, rdba, r))?;
        }
        Ok(verified)
    }

    /// Leaf `current` (read now) as the statement's snapshot sees it.
    pub fn consistent<'c>(&self, ctx: &TxnContext<'c>, current: ReadGuard<'c>) -> Result<ReadGuard<'c>> {
        let purged = IndexBlock(&current).purge_scn();
        if purged > ctx.reader.snapshot {
            return Err(Error::SnapshotTooOld {
                reason: format!(
                    "leaf block {} of index {} no longer holds entries deleted by a transaction that committed at SCN {purged}, after the snapshot at SCN {}",
                    crate::storage::block::rdba_block(current.rdba()),
                    self.name,
                    ctx.reader.snapshot
                ),
            });
        }
        let leaf = crate::txn::cr::consistent_block(ctx, current, ctx.reader)?;
        // A clone rebuilt from undo is checked like a block read from disk.
        self.check_read(ctx, &leaf)?;
        Ok(leaf)
    }

    /// The current leaf a reader's seek lands on (not yet made consistent), and the
    /// level of the root.
    pub fn descend<'c>(&self, ctx: &TxnContext<'c>, seek: Seek<'_>) -> Result<(ReadGuard<'c>, u8)> {
        let mut rdba = self.root;
        let mut root_level = None;
        for _ in 0..MAX_STEPS {
            let guard = self.read(ctx, rdba)?;
            let view = IndexBlock(&guard);
            let root_level = *root_level.get_or_insert(view.level());
            if view.right() != 0 && view.high_fence().is_some_and(|h| seek.beyond(h)) {
                rdba = view.right();
                continue;
            }
            if view.is_leaf() {
                return Ok((guard, root_level));
            }
            if view.count() == 0 {
                return Err(self.corrupt(ctx, rdba, "branch block without entries"));
            }
            rdba = view.child(seek.child(view));
        }
        Err(self.corrupt(ctx, rdba, "descent does not reach a leaf (a cycle of links)"))
    }

    /// The current leaf that holds (or would hold) `full_key`, in current mode, and the
    /// branches above it from the root down. The caller holds the structure lock.
    pub fn descend_for_change<'c>(&self, ctx: &TxnContext<'c>, full_key: &[u8]) -> Result<(WriteGuard<'c>, Vec<u32>)> {
        let seek = Seek::Forward(Target::AtLeast(full_key));
        let mut path = Vec::new();
        let mut rdba = self.root;
        for _ in 0..MAX_STEPS {
            let guard = self.read(ctx, rdba)?;
            let view = IndexBlock(&guard);
            if view.right() != 0 && view.high_fence().is_some_and(|h| seek.beyond(h)) {
                rdba = view.right();
                continue;
            }
            if view.is_leaf() {
                drop(guard);
                let leaf = self.change(ctx, rdba)?;
                if !IndexBlock(&leaf).is_leaf() {
                    return Err(self.corrupt(ctx, rdba, "leaf turned into a branch under the structure lock"));
                }
                return Ok((leaf, path));
            }
            if view.count() == 0 {
                return Err(self.corrupt(ctx, rdba, "branch block without entries"));
            }
            path.push(rdba);
            rdba = view.child(seek.child(view));
        }
        Err(self.corrupt(ctx, rdba, "descent does not reach a leaf (a cycle of links)"))
    }
}

/// Blocks of an index segment handed out above its high-water mark; the segment header
/// (high-water mark, extents) is written by [`Space::header`] or [`Space::finish`].
///
/// A split logs its blocks and the header in one redo record
/// ([`crate::buffer::BufferCache::release_together`]): after a crash, the new block is
/// linked and covered by the high-water mark, or neither. A block formatted but never
/// linked is above the mark, where the next split takes it again.
pub struct Space(SegmentSpace);

impl Space {
    pub fn open(ctx: &TxnContext<'_>, tree: &Tree<'_>, header: u32) -> Result<Space> {
        SegmentSpace::open(ctx, header, tree.object_id, tree.name).map(Space)
    }

    /// A new block, formatted empty at `level`.
    pub fn new_block<'c>(&mut self, ctx: &TxnContext<'c>, level: u8) -> Result<WriteGuard<'c>> {
        let mut guard = self.0.next_block(ctx)?;
        let rdba = guard.rdba();
        IndexBlockMut(&mut guard).format_zeroed(rdba, self.0.object_id(), level);
        set_scn(&mut guard, ctx.scn);
        Ok(guard)
    }

    /// Writes the segment header (high-water mark, extents) and keeps it held, for a
    /// change that releases it together with the blocks it covers.
    pub fn header<'c>(self, ctx: &TxnContext<'c>) -> Result<WriteGuard<'c>> {
        self.0.header(ctx)
    }

    /// Writes the segment header (high-water mark, extents).
    pub fn finish(self, ctx: &TxnContext<'_>) -> Result<()> {
        self.0.finish(ctx)
    }
}

/// What stopped a leaf change: a transaction to wait for, or a split that was made (the
/// change starts again from the root).
pub enum Retry {
    Wait(Xid),
    Split,
}

/// The ITL slot `xid` changes `leaf` through.
fn itl_for(
    ctx: &TxnContext<'_>,
    tree: &Tree<'_>,
    leaf: &mut [u8],
    xid: Xid,
    txn: &Transaction,
) -> Result<Result<usize, Retry>> {
    match take_itl(leaf, xid, |x| ctx.enqueues.is_active(x), txn.snapshot, RowLocks::LockBytes) {
        Ok(i) => Ok(Ok(i)),
        Err(Obstacle::Busy(holder)) => Ok(Err(Retry::Wait(holder))),
        Err(Obstacle::CannotSerialize) => {
            Err(cannot_serialize(&format!("a leaf of {} holds only changes committed after its snapshot", tree.name)))
        }
        Err(Obstacle::Corrupt(what)) => Err(ctx.corrupt(crate::storage::block::BlockHeader(leaf).rdba(), what)),
    }
}

/// The active transaction holding entry `pos` of `leaf` locked, if any: an entry's lock
/// byte sits where a row's does, so the row lock rule reads it.
pub fn active_holder(ctx: &TxnContext<'_>, leaf: &[u8], pos: usize) -> Option<Xid> {
    row_lock_holder(leaf, IndexBlock(leaf).offset(pos)).filter(|&x| ctx.enqueues.is_active(x))
}

/// Changes the entry `full_key` of the leaf in `leaf` for `xid`: to `new_flags` (0 for
/// an insert, `DELETED` for a delete), writing the undo first. `pos`/`found` locate it.
#[allow(clippy::too_many_arguments)]
fn change_entry(
    ctx: &TxnContext<'_>,
    tree: &Tree<'_>,
    txn: &mut Transaction,
    xid: Xid,
    leaf: &mut WriteGuard<'_>,
    itl_index: usize,
    pos: usize,
    found: bool,
    full_key: &[u8],
    new_flags: u8,
) -> Result<()> {
    let rdba = leaf.rdba();
    let view = IndexBlock(leaf);
    let prior = found.then(|| (view.flags(pos), view.lock(pos)));
    let prev_itl = itl::get(leaf, itl_index);
    let mut body = Vec::with_capacity(64 + full_key.len());
    EntryUndo {
        itl: itl_index as u8,
        prior,
        object_id: tree.object_id,
        root: tree.root,
        leaf: rdba,
        prev_itl,
        full_key,
    }
    .encode(&mut body);
    let uba = ctx.undo.append(ctx, xid, &body)?;
    point_itl(leaf, itl_index, &prev_itl, xid, uba, 1);
    let lock = itl_index as u8 + 1;
    if found {
        IndexBlockMut(leaf).set_flags(pos, new_flags, lock);
    } else {
        let mut entry = Vec::with_capacity(full_key.len() + block::LEAF_ENTRY_OVERHEAD);
        let key = &full_key[..full_key.len() - block::ROWID_LEN];
        block::leaf_entry(new_flags, lock, key, block::rowid_of(full_key), &mut entry);
        assert!(IndexBlockMut(leaf).insert_entry(pos, &entry), "room was made before the undo was written");
    }
    stamp(ctx, leaf);
    txn.touched(ctx, rdba);
    Ok(())
}

/// Inserts `full_key` for `xid` (the caller holds the structure lock and checked
/// uniqueness). `Err(Retry)` inside: wait, or start again after a split.
pub fn insert_entry(
    ctx: &TxnContext<'_>,
    tree: &Tree<'_>,
    header: u32,
    txn: &mut Transaction,
    xid: Xid,
    full_key: &[u8],
) -> Result<Result<(), Retry>> {
    let (mut leaf, path) = tree.descend_for_change(ctx, full_key)?;
    let view = IndexBlock(&leaf);
    let pos = view.position(|k| k < full_key);
    let found = pos < view.count() && view.full_key(pos) == full_key;
    if found {
        if !view.is_deleted(pos) {
            return Err(tree.corrupt(ctx, leaf.rdba(), "an entry for this key and rowid is already there"));
        }
        if let Some(holder) = active_holder(ctx, &leaf, pos).filter(|&h| h != xid) {
            return Ok(Err(Retry::Wait(holder)));
        }
    }
    let itl_index = match itl_for(ctx, tree, &mut leaf, xid, txn)? {
        Ok(i) => i,
        Err(retry) => return Ok(Err(retry)),
    };
    let need = full_key.len() + block::LEAF_ENTRY_OVERHEAD + 2;
    if !found && !make_room(ctx, &mut leaf, need)? {
        split(ctx, tree, header, txn, path, leaf, Some(full_key))?;
        return Ok(Err(Retry::Split));
    }
    let pos = IndexBlock(&leaf).position(|k| k < full_key);
    change_entry(ctx, tree, txn, xid, &mut leaf, itl_index, pos, found, full_key, 0)?;
    Ok(Ok(()))
}

/// Flags `full_key` deleted for `xid` (the caller holds the structure lock).
pub fn delete_entry(
    ctx: &TxnContext<'_>,
    tree: &Tree<'_>,
    txn: &mut Transaction,
    xid: Xid,
    full_key: &[u8],
) -> Result<Result<(), Retry>> {
    let (mut leaf, _) = tree.descend_for_change(ctx, full_key)?;
    let view = IndexBlock(&leaf);
    let pos = view.position(|k| k < full_key);
    if pos >= view.count() || view.full_key(pos) != full_key || view.is_deleted(pos) {
        let rowid = block::rowid_of(full_key);
        return Err(tree.corrupt(
            ctx,
            leaf.rdba(),
            format!("no entry to delete for the key with rowid {:#x}.{}", rowid.rdba, rowid.slot),
        ));
    }
    if let Some(holder) = active_holder(ctx, &leaf, pos).filter(|&h| h != xid) {
        return Ok(Err(Retry::Wait(holder)));
    }
    let itl_index = match itl_for(ctx, tree, &mut leaf, xid, txn)? {
        Ok(i) => i,
        Err(retry) => return Ok(Err(retry)),
    };
    change_entry(ctx, tree, txn, xid, &mut leaf, itl_index, pos, true, full_key, block::DELETED)?;
    Ok(Ok(()))
}

/// Makes `need` bytes free in `leaf`: compacting, then purging entries whose delete has
/// committed. False if the leaf must split.
fn make_room(ctx: &TxnContext<'_>, leaf: &mut WriteGuard<'_>, need: usize) -> Result<bool> {
    if IndexBlock(leaf).free_space() >= need {
        return Ok(true);
    }
    if IndexBlockMut(leaf).compacted_free_space() < need {
        purge(ctx, leaf)?;
    }
    if IndexBlockMut(leaf).compacted_free_space() < need {
        return Ok(false);
    }
    IndexBlockMut(leaf).compact();
    Ok(true)
}

/// Removes the entries whose delete committed before every running statement's snapshot,
/// raising the leaf's purge SCN to the newest of those commits.
fn purge(ctx: &TxnContext<'_>, leaf: &mut WriteGuard<'_>) -> Result<()> {
    let mut purge_scn = IndexBlock(leaf).purge_scn();
    // Entries a running statement may still see stay: only deletes committed before the
    // oldest running statement's snapshot are purged.
    let oldest_reader = ctx.sessions.oldest_reader();
    let mut removed = false;
    for pos in (0..IndexBlock(leaf).count()).rev() {
        let view = IndexBlock(leaf);
        if !view.is_deleted(pos) {
            continue;
        }
        let Some(scn) = delete_commit(ctx, leaf, view.lock(pos))? else { continue };
        if scn >= oldest_reader {
            continue;
        }
        purge_scn = purge_scn.max(scn);
        IndexBlockMut(leaf).remove_entry(pos);
        removed = true;
    }
    if removed {
        IndexBlockMut(leaf).set_purge_scn(purge_scn);
        IndexBlockMut(leaf).compact();
        ctx.cache.cap_cr_versions(leaf.rdba(), ctx.clock.current() + 1);
    }
    Ok(())
}

/// The commit SCN of the transaction that deleted an entry with lock byte `lock`, or
/// `None` while it is active. A cleared lock byte (the slot went to another transaction)
/// gives the current SCN, an upper bound.
fn delete_commit(ctx: &TxnContext<'_>, leaf: &[u8], lock: u8) -> Result<Option<u64>> {
    let lock = usize::from(lock);
    if lock == 0 || lock > itl::itl_count(leaf) {
        return Ok(Some(ctx.clock.current()));
    }
    let slot = itl::get(leaf, lock - 1);
    if slot.is_committed() {
        return Ok(Some(slot.commit_scn));
    }
    if slot.is_free() || ctx.enqueues.is_active(slot.xid) {
        return Ok(None);
    }
    match ctx.undo.status(ctx, slot.xid)? {
        crate::txn::TxnStatus::Committed { scn, .. } => Ok(Some(scn)),
        crate::txn::TxnStatus::Active => Ok(None),
    }
}

/// The entries of a block, whole.
fn entries_of(view: IndexBlock<'_>) -> Vec<Vec<u8>> {
    (0..view.count()).map(|i| if view.is_leaf() { view.leaf_entry(i) } else { view.branch_entry(i) }.to_vec()).collect()
}

/// The full key (separator) an entry image starts its range with.
fn entry_key(leaf: bool, entry: &[u8]) -> &[u8] {
    if leaf {
        let len = u16::from_le_bytes([entry[2], entry[3]]) as usize;
        &entry[4..4 + len + block::ROWID_LEN]
    } else {
        let len = u16::from_le_bytes([entry[0], entry[1]]) as usize;
        &entry[2..2 + len]
    }
}

/// Where to cut `entries` (the new right block takes `cut..`): 90-10 (only the last
/// entry moves)
/// when `inserting` goes past the last entry of the rightmost leaf, else half the bytes.
fn split_point(view: IndexBlock<'_>, entries: &[Vec<u8>], inserting: Option<&[u8]>) -> (usize, bool) {
    let last = entries.last().map(|e| entry_key(view.is_leaf(), e));
    if view.is_leaf() && view.right() == 0 && inserting.is_some_and(|k| last.is_none_or(|l| l < k)) {
        // The last entry moves too: what it frees pays for the left block's new high fence.
        return (entries.len().saturating_sub(1), true);
    }
    let total: usize = entries.iter().map(Vec::len).sum();
    let mut acc = 0;
    let mut cut = entries.len();
    for (i, e) in entries.iter().enumerate() {
        acc += e.len();
        if acc * 2 >= total {
            cut = i + 1;
            break;
        }
    }
    (cut.clamp(1, entries.len().saturating_sub(1).max(1)), false)
}

/// Splits the block in `guard` (reached through the branches `path`), then adds the
/// separator of its new right half to the parent.
fn split(
    ctx: &TxnContext<'_>,
    tree: &Tree<'_>,
    header: u32,
    txn: &mut Transaction,
    mut path: Vec<u32>,
    mut guard: WriteGuard<'_>,
    inserting: Option<&[u8]>,
) -> Result<()> {
    let view = IndexBlock(&guard);
    let leaf = view.is_leaf();
    let entries = entries_of(view);
    let (cut, ninety_ten) = split_point(view, &entries, inserting);
    let separator: Vec<u8> = match entries.get(cut) {
        Some(e) => entry_key(leaf, e).to_vec(),
        None => inserting.expect("only an insert splits an empty leaf").to_vec(),
    };
    ctx.stats.add(if leaf { Stat::LeafNodeSplits } else { Stat::BranchNodeSplits }, 1);
    if ninety_ten {
        ctx.stats.add(Stat::LeafNode9010Splits, 1);
    }
    let mut space = Space::open(ctx, tree, header)?;
    if guard.rdba() == tree.root {
        ctx.stats.add(Stat::RootNodeSplits, 1);
        return split_root(ctx, tree, space, txn, guard, &entries, cut, &separator);
    }
    let level = view.level();
    let (low, high) = (view.low_fence().map(<[u8]>::to_vec), view.high_fence().map(<[u8]>::to_vec));
    let old_right = view.right();
    let mut right = space.new_block(ctx, level)?;
    let right_rdba = right.rdba();
    copy_itl(&guard, &mut right);
    fill(&mut right, Some(&separator), high.as_deref(), &entries[cut..]);
    IndexBlockMut(&mut right).set_right(old_right);
    IndexBlockMut(&mut right).set_left(guard.rdba());
    fill(&mut guard, low.as_deref(), Some(&separator), &entries[..cut]);
    IndexBlockMut(&mut guard).set_right(right_rdba);
    stamp(ctx, &mut guard);
    stamp(ctx, &mut right);
    if leaf {
        txn.touched(ctx, right_rdba);
    }
    // The two halves, the right sibling's link back and the high-water mark: one redo
    // record (the parent's separator is a change of its own: until it is made, a
    // descent reaches the right half through the left half's link).
    let mut together = vec![guard, right];
    if old_right != 0 {
        let mut next = tree.change(ctx, old_right)?;
        IndexBlockMut(&mut next).set_left(right_rdba);
        stamp(ctx, &mut next);
        together.push(next);
    }
    together.push(space.header(ctx)?);
    ctx.cache.release_together(together);
    let parent = path.pop().expect("a block other than the root has a parent");
    add_separator(ctx, tree, header, txn, path, parent, &separator, right_rdba)
}

/// Copies the ITL slots of `from` into the new block `to`: each half of a split leaf
/// keeps the undo chains of its entries.
fn copy_itl(from: &[u8], to: &mut [u8]) {
    let n = itl::itl_count(from);
    to[24] = n as u8;
    to[HEADER_LEN..HEADER_LEN + n * ITL_LEN].copy_from_slice(&from[HEADER_LEN..HEADER_LEN + n * ITL_LEN]);
    let purge = IndexBlock(from).purge_scn();
    IndexBlockMut(to).set_purge_scn(purge);
}

/// Rewrites a block's entries and fences.
fn fill(block: &mut [u8], low: Option<&[u8]>, high: Option<&[u8]>, entries: &[Vec<u8>]) {
    let mut b = IndexBlockMut(block);
    b.clear_entries();
    b.set_fences(low, high);
    for (i, e) in entries.iter().enumerate() {
        assert!(b.insert_entry(i, e), "the entries of half a block fit in a block");
    }
}

/// Records a change of `block` at the statement's SCN, and stops its CR clones from
/// serving snapshots taken from now on.
pub(super) fn stamp(ctx: &TxnContext<'_>, block: &mut WriteGuard<'_>) {
    set_scn(block, ctx.scn);
    ctx.cache.cap_cr_versions(block.rdba(), ctx.clock.current() + 1);
}

/// Moves the root's entries into two new blocks and makes the root their parent; the
/// two blocks, the root and the segment header in one redo record.
#[allow(clippy::too_many_arguments)]
fn split_root(
    ctx: &TxnContext<'_>,
    tree: &Tree<'_>,
    mut space: Space,
    txn: &mut Transaction,
    mut root: WriteGuard<'_>,
    entries: &[Vec<u8>],
    cut: usize,
    separator: &[u8],
) -> Result<()> {
    let level = IndexBlock(&root).level();
    let mut left = space.new_block(ctx, level)?;
    let mut right = space.new_block(ctx, level)?;
    for (half, low, high, part) in
        [(&mut left, None, Some(separator), &entries[..cut]), (&mut right, Some(separator), None, &entries[cut..])]
    {
        copy_itl(&root, half);
        fill(half, low, high, part);
    }
    IndexBlockMut(&mut left).set_right(right.rdba());
    IndexBlockMut(&mut right).set_left(left.rdba());
    let (l, r) = (left.rdba(), right.rdba());
    for half in [&mut left, &mut right] {
        stamp(ctx, half);
        if level == 0 {
            txn.touched(ctx, half.rdba());
        }
    }
    let rdba = root.rdba();
    IndexBlockMut(&mut root).format(rdba, tree.object_id, level + 1);
    let mut e = Vec::new();
    block::branch_entry(&[], l, &mut e);
    assert!(IndexBlockMut(&mut root).insert_entry(0, &e));
    block::branch_entry(separator, r, &mut e);
    assert!(IndexBlockMut(&mut root).insert_entry(1, &e));
    stamp(ctx, &mut root);
    let header = space.header(ctx)?;
    ctx.cache.release_together(vec![left, right, root, header]);
    Ok(())
}

/// Adds the separator of a new block `child` to branch `parent` (moving right if the
/// parent has split meanwhile, splitting it if full).
#[allow(clippy::too_many_arguments)]
fn add_separator(
    ctx: &TxnContext<'_>,
    tree: &Tree<'_>,
    header: u32,
    txn: &mut Transaction,
    path: Vec<u32>,
    mut parent: u32,
    separator: &[u8],
    child: u32,
) -> Result<()> {
    let mut entry = Vec::new();
    block::branch_entry(separator, child, &mut entry);
    for _ in 0..MAX_STEPS {
        let mut guard = tree.change(ctx, parent)?;
        let view = IndexBlock(&guard);
        if view.is_leaf() {
            return Err(tree.corrupt(ctx, parent, "a leaf where a branch was expected"));
        }
        if view.right() != 0 && view.high_fence().is_some_and(|h| h <= separator) {
            parent = view.right();
            continue;
        }
        let pos = view.position(|s| s < separator);
        if IndexBlock(&guard).free_space() < entry.len() + 2
            && IndexBlockMut(&mut guard).compacted_free_space() >= entry.len() + 2
        {
            IndexBlockMut(&mut guard).compact();
        }
        if IndexBlockMut(&mut guard).insert_entry(pos, &entry) {
            stamp(ctx, &mut guard);
            return Ok(());
        }
        let up = path.clone();
        split(ctx, tree, header, txn, up, guard, None)?;
        // A split root moved its entries down a level, into one of its two children; a
        // split parent is left as it is (the loop moves right if the separator went on).
        if parent == tree.root {
            parent = root_child_for(ctx, tree, separator)?;
        }
    }
    Err(tree.corrupt(ctx, parent, "no room for a separator after splitting"))
}

/// The child of the root whose range holds `separator`.
fn root_child_for(ctx: &TxnContext<'_>, tree: &Tree<'_>, separator: &[u8]) -> Result<u32> {
    let root = tree.read(ctx, tree.root)?;
    let view = IndexBlock(&root);
    let seek = Seek::Forward(Target::AtLeast(separator));
    Ok(view.child(seek.child(view)))
}

/// The full key of an entry: `key`, then `rowid`.
pub fn full_key(key: &[u8], rowid: RowId) -> Vec<u8> {
    let mut full = Vec::with_capacity(key.len() + block::ROWID_LEN);
    full.extend_from_slice(key);
    block::push_rowid(rowid, &mut full);
    full
}
