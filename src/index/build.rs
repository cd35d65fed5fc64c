//! Bulk build: an index written from its sorted entries, left to right, without undo.
//!
//! A [`Builder`] takes each row's entry (key, rowid) as the table is read and hands it to
//! the build's sort ([`super::sort`]: in memory within `sort_area_size`, else spilled to
//! temporary space and merged). [`Builder::finish`] then streams the sorted entries into
//! leaves filled to `100 - pctfree` percent (leaving room for the fence keys), linked as
//! they are written; each branch level is written from the first key and address of each
//! block below, until one level fits in a block: that level is written into the root.
//! Blocks are formatted in the cache above the high-water mark (db block gets, no reads),
//! and the segment header is written last, so nothing of a build is reachable before it
//! is whole; a failed build writes the header too, so that dropping its segment gives
//! back every extent it took. The statistics of the
//! index are counted on the way, and a unique index's duplicate keys are found there too.

use super::block::{self, IndexBlock, IndexBlockMut, RowId, TAIL_LEN};
use super::scan::StatsCounter;
use super::sort::{KeySort, SortArea, Sorted};
use super::tree::{Space, Tree};
use crate::access::AccessContext;
use crate::buffer::WriteGuard;
use crate::catalog::{IndexDef, IndexStats};
use crate::error::{Error, Result};
use crate::stats::SessionStats;
use crate::storage::block::{HEADER_LEN, ITL_LEN, set_scn};

/// Bytes a leaf entry with a key of `key_len` bytes takes, without its directory slot.
fn leaf_entry_len(key_len: usize) -> usize {
    key_len + block::LEAF_ENTRY_OVERHEAD + block::ROWID_LEN
}

/// An index build in progress: its entries, sorted as they come.
pub struct Builder<'a> {
    index: &'a IndexDef,
    sort: KeySort<'a>,
    /// The longest key a block of this database holds.
    max_key_len: usize,
    /// Bytes every entry takes in a leaf, directory slots included: whether one leaf
    /// (the root) holds them all.
    leaf_bytes: usize,
}

impl<'a> Builder<'a> {
    pub fn new(index: &'a IndexDef, block_size: usize, area: SortArea<'a>) -> Builder<'a> {
        Builder { index, sort: KeySort::new(area), max_key_len: block::max_key_len(block_size), leaf_bytes: 0 }
    }

    /// Adds the entry of one row: `encode` appends its key to the vector it is given and
    /// returns false when the row has no entry (every key column NULL). A key longer than
    /// a block holds is an error.
    pub fn add(
        &mut self,
        stats: &SessionStats,
        rowid: RowId,
        encode: impl FnOnce(&mut Vec<u8>) -> Result<bool>,
    ) -> Result<()> {
        if let Some(len) = self.sort.push_with(stats, rowid, encode)? {
            if len > self.max_key_len {
                return Err(super::key_too_long(self.index, len, self.max_key_len));
            }
            self.leaf_bytes = self.leaf_bytes.saturating_add(leaf_entry_len(len) + 2);
        }
        Ok(())
    }

    /// Sorts the entries and writes the index (empty, as [`super::create_segment`] left
    /// it) from them. Returns its statistics.
    pub fn finish(self, ctx: &AccessContext<'_>) -> Result<IndexStats> {
        let index = self.index;
        let tree = Tree::of(index);
        let lock = ctx.locks.index(index.object_id);
        let _structure = lock.lock();
        {
            let root = tree.read(ctx, tree.root)?;
            if !IndexBlock(&root).is_leaf() || IndexBlock(&root).count() != 0 {
                return Err(Error::InvalidValue {
                    context: index.name.clone(),
                    message: "a bulk build needs an empty index".into(),
                });
            }
        }
        let mut sorted = self.sort.finish(ctx.stats)?;
        let fill = Fill::new(ctx.space.block_size, index.pctfree, sorted.longest_key());
        let mut space = Space::open(ctx, &tree, index.segment_header)?;
        let mut entries = Entries { index, counter: StatsCounter::default() };
        let written = if fill.fits_in_one(self.leaf_bytes) {
            write_root_leaf(ctx, &tree, &mut sorted, &mut entries).map(|()| 0)
        } else {
            write_tree(ctx, &tree, &mut space, &fill, &mut sorted, &mut entries)
        };
        let blevel = match written {
            Ok(blevel) => blevel,
            Err(e) => {
                // The header then names every extent the build took, so that dropping the
                // segment (what the caller does with a failed build) gives them all back.
                // The index is in no dictionary: nothing reaches its blocks.
                let _ = space.finish(ctx);
                return Err(e);
            }
        };
        space.finish(ctx)?;
        ctx.cache.cap_cr_versions(tree.root, ctx.clock.current() + 1);
        Ok(entries.counter.finish(blevel, index.created))
    }
}

/// What every entry passes on its way into a leaf: the statistics, and for a unique
/// index the check that its key differs from the one before.
struct Entries<'i> {
    index: &'i IndexDef,
    counter: StatsCounter,
}

impl Entries<'_> {
    #[inline]
    fn count(&mut self, key: &[u8], rowid: RowId) -> Result<()> {
        let new_key = self.counter.entry(key, rowid);
        if self.index.unique && !new_key {
            return Err(Error::InvalidValue {
                context: self.index.name.clone(),
                message: "cannot create a unique index: duplicate keys found".into(),
            });
        }
        Ok(())
    }
}

/// How full blocks are made.
struct Fill {
    /// Bytes of entries and directory a block takes (after its fences).
    budget: usize,
    /// Bytes kept for the two fence keys of a block.
    fences: usize,
}

impl Fill {
    fn new(block_size: usize, pctfree: u8, longest_key: usize) -> Fill {
        let usable = block_size - HEADER_LEN - usize::from(block::LEAF_ITL_SLOTS) * ITL_LEN - TAIL_LEN;
        let fences = 2 * (longest_key + block::ROWID_LEN + 2);
        let budget = (usable * usize::from(100 - pctfree.min(99)) / 100).min(usable - fences);
        Fill { budget, fences }
    }

    /// Whether entries taking `bytes` in all (directory slots included) fit in one block.
    fn fits_in_one(&self, bytes: usize) -> bool {
        bytes <= self.budget + self.fences
    }
}

/// Every entry into the root, which stays a leaf.
fn write_root_leaf(ctx: &AccessContext<'_>, tree: &Tree<'_>, sorted: &mut Sorted, entries: &mut Entries) -> Result<()> {
    let mut root = tree.change(ctx, tree.root)?;
    let mut e = Vec::new();
    let mut at = 0;
    sorted.for_each(ctx.stats, |key, rowid| {
        entries.count(key, rowid)?;
        block::leaf_entry(0, 0, key, rowid, &mut e);
        assert!(IndexBlockMut(&mut root).insert_entry(at, &e), "the entries were measured to fit");
        at += 1;
        Ok(())
    })?;
    set_scn(&mut root, ctx.scn);
    entries.counter.leaf_blocks = 1;
    Ok(())
}

/// The leaves from the sorted entries, then the branches above them. Returns the blevel.
fn write_tree<'c>(
    ctx: &AccessContext<'c>,
    tree: &Tree<'_>,
    space: &mut Space,
    fill: &Fill,
    sorted: &mut Sorted,
    entries: &mut Entries,
) -> Result<u32> {
    let mut leaves = LevelWriter::new(0);
    sorted.for_each(ctx.stats, |key, rowid| {
        entries.count(key, rowid)?;
        leaves.add(
            ctx,
            space,
            fill,
            leaf_entry_len(key.len()),
            || super::tree::full_key(key, rowid),
            |out| block::leaf_entry(0, 0, key, rowid, out),
        )
    })?;
    let leaves = leaves.finish();
    entries.counter.leaf_blocks = leaves.len() as u64;
    write_branches(ctx, tree, space, fill, leaves)
}

/// Writes and links the blocks of one level, left to right, each with as many entries
/// as fit, and remembers (first full key, address) of each block written.
struct LevelWriter<'c> {
    level: u8,
    /// The block being filled, and the bytes its entries take so far.
    pending: Option<WriteGuard<'c>>,
    used: usize,
    written: Vec<(Vec<u8>, u32)>,
    entry: Vec<u8>,
}

impl<'c> LevelWriter<'c> {
    fn new(level: u8) -> LevelWriter<'c> {
        LevelWriter { level, pending: None, used: 0, written: Vec::new(), entry: Vec::new() }
    }

    /// Adds an entry of `len` bytes that `put` writes, starting a new block (whose first
    /// full key `first_key` gives) when it does not fit in the current one.
    fn add(
        &mut self,
        ctx: &AccessContext<'c>,
        space: &mut Space,
        fill: &Fill,
        len: usize,
        first_key: impl FnOnce() -> Vec<u8>,
        put: impl FnOnce(&mut Vec<u8>),
    ) -> Result<()> {
        let need = len + 2;
        if self.pending.is_none() || self.used + need > fill.budget {
            let mut next = space.new_block(ctx, self.level)?;
            let first = first_key();
            if let Some(mut done) = self.pending.take() {
                let low = if self.written.len() > 1 { self.written.last().map(|(k, _)| k.as_slice()) } else { None };
                close(&mut done, low, Some(&first), next.rdba());
                IndexBlockMut(&mut next).set_left(done.rdba());
            }
            self.written.push((first, next.rdba()));
            self.pending = Some(next);
            self.used = 0;
        }
        let block = self.pending.as_mut().expect("set above");
        put(&mut self.entry);
        let pos = IndexBlock(block).count();
        assert!(IndexBlockMut(block).insert_entry(pos, &self.entry), "the budget leaves room for every entry");
        self.used += need;
        Ok(())
    }

    /// Closes the last block; returns (first full key, address) of each block, the first
    /// key of the first block empty (it stands for minus infinity).
    fn finish(mut self) -> Vec<(Vec<u8>, u32)> {
        if let Some(mut done) = self.pending.take() {
            let low = if self.written.len() > 1 { Some(self.written[self.written.len() - 1].0.clone()) } else { None };
            close(&mut done, low.as_deref(), None, 0);
        }
        if let Some(first) = self.written.first_mut() {
            first.0.clear();
        }
        self.written
    }
}

/// Finishes a block of a level: its fences (the first block of a level has no low
/// fence, the last no high fence) and right link.
fn close(block: &mut [u8], low: Option<&[u8]>, high: Option<&[u8]>, right: u32) {
    let mut b = IndexBlockMut(block);
    b.set_fences(low, high);
    b.set_right(right);
}

fn write_branches(
    ctx: &AccessContext<'_>,
    tree: &Tree<'_>,
    space: &mut Space,
    fill: &Fill,
    mut children: Vec<(Vec<u8>, u32)>,
) -> Result<u32> {
    let branch_len = |(k, _): &(Vec<u8>, u32)| k.len() + 2 + 4;
    let mut level = 1u8;
    while !fill.fits_in_one(children.iter().map(|c| branch_len(c) + 2).sum()) {
        let mut writer = LevelWriter::new(level);
        for child in &children {
            writer.add(
                ctx,
                space,
                fill,
                branch_len(child),
                || child.0.clone(),
                |out| block::branch_entry(&child.0, child.1, out),
            )?;
        }
        children = writer.finish();
        level += 1;
    }
    let mut root = tree.change(ctx, tree.root)?;
    let rdba = root.rdba();
    IndexBlockMut(&mut root).format(rdba, tree.object_id, level);
    let mut e = Vec::new();
    for (i, (k, c)) in children.iter().enumerate() {
        block::branch_entry(k, *c, &mut e);
        assert!(IndexBlockMut(&mut root).insert_entry(i, &e), "the level was measured to fit the root");
    }
    set_scn(&mut root, ctx.scn);
    Ok(u32::from(level))
}
