//! Reading an index: range scans (ascending or descending) a leaf at a time, unique
//! lookups, fast full scans, and the statistics of the leaves.
//!
//! An [`IndexScan`] hands out one leaf at a time as [`LeafEntries`]: the leaf as the
//! statement's snapshot sees it (a consistent get, a CR clone where needed), pinned and
//! share-locked while the caller works through its qualifying entries in scan order. The
//! scan holds no other block meanwhile and lets the leaf go before it gets the next one,
//! so a scan never waits on a writer while holding a block that writer needs.
//!
//! Ascending scans follow right links. Descending scans follow left links; a leaf that
//! split after the scan chose it (the left neighbour after its link was read, or any leaf
//! while a cleanout let go of it) may no longer reach up to where the scan stands: its
//! high fence is below the low fence of the leaf the scan came from, or below the range's
//! upper end where the scan starts. The scan then descends again from the root for the
//! last key below that point. Entries at or beyond the low fence of the leaf a descending
//! scan came from are never returned twice.

use super::block::{IndexBlock, RowId};
use super::tree::{Seek, Target, Tree};
use crate::access::AccessContext;
use crate::access::Flow;
use crate::buffer::{BufferCache, ReadGuard};
use crate::catalog::{IndexDef, IndexStats};
use crate::error::Result;
use crate::stats::Stat;

/// How an index is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IndexScanKind {
    /// Equality on every column of a unique index: at most one entry.
    Unique,
    /// Entries between two key bounds, in key order (or reversed).
    Range,
    /// Every entry, in key order, through the leaf chain.
    Full,
    /// Every leaf block in segment order with multiblock reads; no order.
    FastFull,
}

impl IndexScanKind {
    /// The operation's name in a plan.
    pub fn operation(self, descending: bool) -> &'static str {
        match (self, descending) {
            (IndexScanKind::Unique, _) => "INDEX UNIQUE SCAN",
            (IndexScanKind::Range, false) => "INDEX RANGE SCAN",
            (IndexScanKind::Range, true) => "INDEX RANGE SCAN DESCENDING",
            (IndexScanKind::Full, false) => "INDEX FULL SCAN",
            (IndexScanKind::Full, true) => "INDEX FULL SCAN DESCENDING",
            (IndexScanKind::FastFull, _) => "INDEX FAST FULL SCAN",
        }
    }
}

/// One end of a range: bytes are the encoding of a leading subset of the key columns
/// (see [`super::encode_key`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeyBound {
    Unbounded,
    Included(Vec<u8>),
    Excluded(Vec<u8>),
}

impl KeyBound {
    /// The bound's key bytes, given up (empty when unbounded), for their room to be used
    /// again.
    pub fn into_bytes(self) -> Vec<u8> {
        match self {
            KeyBound::Unbounded => Vec::new(),
            KeyBound::Included(bytes) | KeyBound::Excluded(bytes) => bytes,
        }
    }

    /// As a lower limit: the first key that qualifies is at or after this target.
    fn lower(&self) -> Option<Target<'_>> {
        match self {
            KeyBound::Unbounded => None,
            KeyBound::Included(p) => Some(Target::AtLeast(p)),
            KeyBound::Excluded(p) => Some(Target::After(p)),
        }
    }

    /// As an upper limit: keys qualify while they are before this target.
    fn upper(&self) -> Option<Target<'_>> {
        match self {
            KeyBound::Unbounded => None,
            KeyBound::Included(p) => Some(Target::After(p)),
            KeyBound::Excluded(p) => Some(Target::AtLeast(p)),
        }
    }
}

/// The qualifying entries of one leaf, in scan order.
pub struct LeafEntries<'s> {
    block: &'s [u8],
    positions: &'s [u16],
}

impl LeafEntries<'_> {
    pub fn len(&self) -> usize {
        self.positions.len()
    }
    /// The key (encoded column values) of entry `i`.
    #[inline]
    pub fn key(&self, i: usize) -> &[u8] {
        IndexBlock(self.block).key(usize::from(self.positions[i]))
    }
    #[cfg(test)]
    /// The row entry `i` points at.
    #[inline]
    pub fn rowid(&self, i: usize) -> RowId {
        IndexBlock(self.block).rowid(usize::from(self.positions[i]))
    }
    /// The leaf a scan in key order (descending or not) reads after this one, if any:
    /// worth a prefetch hint, nothing more (it may split or go before the scan gets there).
    pub fn sibling(&self, descending: bool) -> Option<u32> {
        let view = IndexBlock(self.block);
        Some(if descending { view.left() } else { view.right() }).filter(|&rdba| rdba != 0)
    }
}

/// Where a scan stands.
enum Next {
    /// Not started: descend from the root.
    Start,
    /// The leaf to visit next (reached through a link); for a descending scan, the low
    /// fence of the leaf it came from.
    Leaf {
        rdba: u32,
        boundary: Option<Vec<u8>>,
    },
    /// Descend again from the root for the last key below `boundary`, or for the last
    /// key in range without one (descending).
    Redescend {
        boundary: Option<Vec<u8>>,
    },
    Done,
}

/// A range scan of an index: [`IndexScan::range`], then [`IndexScan::next_leaf`] until
/// it returns `None`.
pub struct IndexScan<'c> {
    object_id: u32,
    root: u32,
    name: String,
    lower: KeyBound,
    upper: KeyBound,
    descending: bool,
    /// Counts `index fetch by key` rather than `index scans kdiixs1`.
    by_key: bool,
    next: Next,
    current: Option<ReadGuard<'c>>,
    positions: Vec<u16>,
}

impl<'c> IndexScan<'c> {
    /// The entries with keys between `lower` and `upper`, ascending or descending.
    pub fn range(index: &IndexDef, lower: KeyBound, upper: KeyBound, descending: bool) -> IndexScan<'c> {
        let tree = Tree::of(index);
        IndexScan {
            object_id: tree.object_id,
            root: tree.root,
            name: index.name.clone(),
            lower,
            upper,
            descending,
            by_key: false,
            next: Next::Start,
            current: None,
            positions: Vec::new(),
        }
    }

    /// The entries whose key is `key` (all the columns of the index): a unique lookup.
    pub fn unique(index: &IndexDef, key: Vec<u8>) -> IndexScan<'c> {
        let mut scan = IndexScan::range(index, KeyBound::Included(key.clone()), KeyBound::Included(key), false);
        scan.by_key = true;
        scan
    }

    /// The scan's bounds, given back when it is done with them.
    pub fn into_bounds(self) -> (KeyBound, KeyBound) {
        (self.lower, self.upper)
    }

    fn tree(&self) -> Tree<'_> {
        Tree { object_id: self.object_id, root: self.root, name: &self.name }
    }

    /// The next leaf with qualifying entries (a leaf with none is skipped), or `None`
    /// when the range is exhausted.
    pub fn next_leaf(&mut self, ctx: &AccessContext<'c>) -> Result<Option<LeafEntries<'_>>> {
        self.next_leaf_with(ctx, None)
    }

    /// [`IndexScan::next_leaf`], with the leaf's qualifying rowids (in scan order) put in
    /// `rowids` in the same pass that finds the entries.
    pub fn next_leaf_with(
        &mut self,
        ctx: &AccessContext<'c>,
        mut rowids: Option<&mut Vec<RowId>>,
    ) -> Result<Option<LeafEntries<'_>>> {
        self.current = None;
        loop {
            let (guard, boundary) = match std::mem::replace(&mut self.next, Next::Done) {
                Next::Done => return Ok(None),
                Next::Start => {
                    ctx.stats.add(if self.by_key { Stat::IndexFetchByKey } else { Stat::IndexScansKdiixs1 }, 1);
                    (self.descend(ctx, None)?, None)
                }
                Next::Redescend { boundary } => (self.descend(ctx, boundary.as_deref())?, boundary),
                Next::Leaf { rdba, boundary } => (self.tree().read(ctx, rdba)?, boundary),
            };
            if !IndexBlock(&guard).is_leaf() {
                return Err(self.tree().corrupt(ctx, guard.rdba(), "a sibling link of a leaf leads to a branch"));
            }
            let leaf = self.tree().consistent(ctx, guard)?;
            if self.descending && !self.reaches_up(&leaf, boundary.as_deref()) {
                self.next = Next::Redescend { boundary };
                continue;
            }
            if let Some(rowids) = rowids.as_deref_mut() {
                rowids.clear();
            }
            self.qualify(&leaf, boundary.as_deref(), rowids.as_deref_mut());
            self.current = Some(leaf);
            if !self.positions.is_empty() {
                let block = self.current.as_deref().expect("just set");
                return Ok(Some(LeafEntries { block, positions: &self.positions }));
            }
        }
    }

    /// The current leaf where the scan starts (or starts again below `boundary`).
    fn descend(&self, ctx: &AccessContext<'c>, boundary: Option<&[u8]>) -> Result<ReadGuard<'c>> {
        let seek = match (self.descending, boundary) {
            (false, _) => Seek::Forward(self.lower.lower().unwrap_or(Target::AtLeast(&[]))),
            (true, Some(b)) => Seek::Backward(Target::AtLeast(b)),
            (true, None) => Seek::Backward(self.upper.upper().unwrap_or(Target::After(&[]))),
        };
        Ok(self.tree().descend(ctx, seek)?.0)
    }

    /// Whether `leaf` (as the snapshot sees it) holds every key a descending scan wants
    /// next: those below `boundary`, or without one every key up to the range's upper end.
    /// A leaf that split after the scan chose it (the left neighbour it was linked to, or
    /// the leaf it descended to, split while a cleanout let go of it) no longer does: the
    /// keys above its new high fence went to a leaf the scan would never come back to.
    fn reaches_up(&self, leaf: &[u8], boundary: Option<&[u8]>) -> bool {
        let Some(high) = IndexBlock(leaf).high_fence() else { return true };
        match boundary {
            Some(b) => high >= b,
            None => self.upper.upper().is_some_and(|t| !t.above(high)),
        }
    }

    /// Fills `positions` with the qualifying entries of `leaf` in scan order and sets
    /// where the scan goes next.
    fn qualify(&mut self, leaf: &[u8], boundary: Option<&[u8]>, rowids: Option<&mut Vec<RowId>>) {
        let view = IndexBlock(leaf);
        let start = self.lower.lower().map_or(0, |t| view.position(|k| t.above(k)));
        let mut end = self.upper.upper().map_or(view.count(), |t| view.position(|k| t.above(k)));
        if let Some(b) = boundary {
            end = end.min(view.position(|k| k < b));
        }
        self.positions.clear();
        view.live_entries(start..end.max(start), self.descending, &mut self.positions, rowids);
        self.next = if self.descending {
            match view.low_fence() {
                Some(low)
                    if start == 0 && view.left() != 0 && !self.lower.lower().is_some_and(|t| t.at_or_above(low)) =>
                {
                    Next::Leaf { rdba: view.left(), boundary: Some(low.to_vec()) }
                }
                _ => Next::Done,
            }
        } else {
            match view.high_fence() {
                Some(high)
                    if end == view.count() && view.right() != 0 && self.upper.upper().is_none_or(|t| t.above(high)) =>
                {
                    Next::Leaf { rdba: view.right(), boundary: None }
                }
                _ => Next::Done,
            }
        };
    }
}

/// Reads every leaf of the index in segment order with multiblock reads (`db file
/// scattered read`), handing each leaf's live entries (as the snapshot sees it, in key
/// order within the leaf, in no order across leaves) to `f` until it says stop.
///
/// The blocks read are those below the high-water mark when the scan starts. A split
/// during the scan moves the upper half of a leaf into a new block above that mark, to
/// the leaf's right, and is not undone for the snapshot. So after each leaf the scan
/// follows its right links through the blocks created since it started (up to the next
/// block it was going to read anyway): entries moved out of a leaf before the scan got
/// there are found there, and the new block of a leaf split after the scan read it is
/// never reached (its entries were read in the leaf). A root that was a leaf when the
/// scan started and split since leads to its new leaves the same way.
pub fn fast_full_scan(
    ctx: &AccessContext<'_>,
    index: &IndexDef,
    mut f: impl FnMut(&LeafEntries<'_>) -> Result<Flow>,
) -> Result<()> {
    ctx.stats.add(Stat::IndexFastFullScansFull, 1);
    let tree = Tree::of(index);
    let map = crate::access::segments::read_segment_map(ctx, index.segment_header, &index.name)?;
    let runs = map.scan_runs(ctx.space.extent_blocks);
    let read_at_start = |rdba: u32| runs.iter().any(|r| (r.first..r.first + r.blocks).contains(&rdba));
    let mut positions = Vec::new();
    let mut emit = |leaf: ReadGuard<'_>, positions: &mut Vec<u16>| -> Result<(Flow, u32)> {
        let leaf = tree.consistent(ctx, leaf)?;
        let view = IndexBlock(&leaf);
        positions.clear();
        view.live_entries(0..view.count(), false, positions, None);
        Ok((f(&LeafEntries { block: &leaf, positions })?, view.right()))
    };
    for run in &runs {
        let (mut at, end) = (run.first, run.first + run.blocks);
        while at < end {
            let n = (end - at).min(ctx.multiblock_read_count.max(1));
            let mut pinned = ctx.cache.pin_multiblock(ctx.stats, at, n)?;
            while let Some(guard) = pinned.next_block(ctx.stats) {
                let guard = guard?;
                BufferCache::count_consistent_get(ctx.stats);
                let rdba = guard.rdba();
                tree.check_read(ctx, &guard)?;
                let mut right = if IndexBlock(&guard).is_leaf() {
                    let (flow, right) = emit(guard, &mut positions)?;
                    if flow == Flow::Stop {
                        return Ok(());
                    }
                    right
                } else if rdba == tree.root
                    && IndexBlock(&guard).count() > 0
                    && !read_at_start(IndexBlock(&guard).child(0))
                {
                    // The root is a branch whose first child is new: it split since the
                    // scan started. If its leftmost leaf is new too, the root was a leaf
                    // then and its entries have moved down since.
                    drop(guard);
                    let (leftmost, _) = tree.descend(ctx, Seek::Forward(Target::AtLeast(&[])))?;
                    let leftmost_rdba = leftmost.rdba();
                    if read_at_start(leftmost_rdba) {
                        0
                    } else {
                        let (flow, right) = emit(leftmost, &mut positions)?;
                        if flow == Flow::Stop {
                            return Ok(());
                        }
                        right
                    }
                } else {
                    0
                };
                // Leaves split off since the scan started, to the right of this one.
                while right != 0 && !read_at_start(right) {
                    let guard = tree.read(ctx, right)?;
                    if !IndexBlock(&guard).is_leaf() {
                        return Err(tree.corrupt(ctx, right, "a sibling link of a leaf leads to a branch"));
                    }
                    let (flow, next) = emit(guard, &mut positions)?;
                    if flow == Flow::Stop {
                        return Ok(());
                    }
                    right = next;
                }
            }
            at = pinned.end();
        }
    }
    Ok(())
}

/// The index's statistics as the snapshot sees it, walking the leaves in key order,
/// stamped as gathered at `analyzed`.
pub fn statistics(ctx: &AccessContext<'_>, index: &IndexDef, analyzed: i64) -> Result<IndexStats> {
    let tree = Tree::of(index);
    let (first, blevel) = tree.descend(ctx, Seek::Forward(Target::AtLeast(&[])))?;
    let mut counter = StatsCounter::default();
    let mut next = Some(first);
    while let Some(guard) = next.take() {
        let leaf = tree.consistent(ctx, guard)?;
        let view = IndexBlock(&leaf);
        counter.leaf_blocks += 1;
        for i in (0..view.count()).filter(|&i| !view.is_deleted(i)) {
            counter.entry(view.key(i), view.rowid(i));
        }
        let right = view.right();
        drop(leaf);
        if right != 0 {
            next = Some(tree.read(ctx, right)?);
        }
    }
    Ok(counter.finish(u32::from(blevel), analyzed))
}

/// Counts the statistics of entries met in key order.
#[derive(Default)]
pub(super) struct StatsCounter {
    pub leaf_blocks: u64,
    num_rows: u64,
    distinct_keys: u64,
    clustering_factor: u64,
    last_key: Vec<u8>,
    last_block: Option<u32>,
}

impl StatsCounter {
    /// Counts the next entry in key order; returns whether its key differs from the
    /// entry before it.
    #[inline]
    pub fn entry(&mut self, key: &[u8], rowid: RowId) -> bool {
        let new_key = self.num_rows == 0 || key != self.last_key.as_slice();
        if new_key {
            self.distinct_keys += 1;
            self.last_key.clear();
            self.last_key.extend_from_slice(key);
        }
        if self.last_block != Some(rowid.rdba) {
            self.clustering_factor += 1;
            self.last_block = Some(rowid.rdba);
        }
        self.num_rows += 1;
        new_key
    }

    pub fn finish(self, blevel: u32, analyzed: i64) -> IndexStats {
        IndexStats {
            blevel,
            leaf_blocks: self.leaf_blocks,
            num_rows: self.num_rows,
            distinct_keys: self.distinct_keys,
            clustering_factor: self.clustering_factor,
            analyzed,
        }
    }
}
