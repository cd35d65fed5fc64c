//! Bulk build: an index written from sorted entries, left to right, without undo.
//!
//! Entries are sorted by (key, rowid); leaves are filled to `100 - pctfree` percent
//! (leaving room for the fence keys) and linked as they are written; then each branch
//! level is written from the first key and address of each block below, until one
//! level fits in a block: that level is written into the root. Blocks are formatted in
//! the cache above the high-water mark (db block gets, no reads), and the segment header
//! is written last, so nothing of a failed build is ever reachable. The statistics of
//! the index are counted on the way.

use super::block::{self, IndexBlock, IndexBlockMut, RowId, TAIL_LEN};
use super::scan::StatsCounter;
use super::tree::{Space, Tree};
use crate::access::AccessContext;
use crate::buffer::WriteGuard;
use crate::catalog::{IndexDef, IndexStats};
use crate::error::{Error, Result};
use crate::storage::block::{HEADER_LEN, ITL_LEN, set_scn};

/// Builds `index` (empty, as [`super::create_segment`] left it) from `entries`.
pub fn build(ctx: &AccessContext<'_>, index: &IndexDef, mut entries: Vec<(Vec<u8>, RowId)>) -> Result<IndexStats> {
    let tree = Tree::of(index);
    let lock = ctx.locks.index(index.object_id);
    let _structure = lock.lock();
    entries.sort_unstable();
    check_entries(index, ctx.space.block_size, &entries)?;
    {
        let root = tree.read(ctx, tree.root)?;
        if !IndexBlock(&root).is_leaf() || IndexBlock(&root).count() != 0 {
            return Err(Error::InvalidValue {
                context: index.name.clone(),
                message: "a bulk build needs an empty index".into(),
            });
        }
    }
    let fill = Fill::new(ctx.space.block_size, index.pctfree, &entries);
    let mut counter = StatsCounter::default();
    for (key, rowid) in &entries {
        counter.entry(key, *rowid);
    }
    let mut space = Space::open(ctx, &tree, index.segment_header)?;
    let blevel =
        if fill.fits_in_one(entries.iter().map(|(k, _)| k.len() + block::LEAF_ENTRY_OVERHEAD + block::ROWID_LEN)) {
            let mut root = tree.change(ctx, tree.root)?;
            write_leaf_entries(&mut root, &entries);
            set_scn(&mut root, ctx.scn);
            counter.leaf_blocks = 1;
            0
        } else {
            let leaves = write_leaves(ctx, &mut space, &fill, &entries)?;
            counter.leaf_blocks = leaves.len() as u64;
            write_branches(ctx, &tree, &mut space, &fill, leaves)?
        };
    space.finish(ctx)?;
    ctx.cache.cap_cr_versions(tree.root, ctx.clock.current() + 1);
    Ok(counter.finish(blevel, index.created))
}

/// Key lengths and (for a unique index) duplicates.
fn check_entries(index: &IndexDef, block_size: usize, entries: &[(Vec<u8>, RowId)]) -> Result<()> {
    let max = block::max_key_len(block_size);
    if let Some((k, _)) = entries.iter().find(|(k, _)| k.len() > max) {
        return Err(super::key_too_long(index, k.len(), max));
    }
    if index.unique && entries.windows(2).any(|w| w[0].0 == w[1].0) {
        return Err(Error::InvalidValue {
            context: index.name.clone(),
            message: "cannot create a unique index: duplicate keys found".into(),
        });
    }
    Ok(())
}

/// How full blocks are made.
struct Fill {
    /// Bytes of entries and directory a block takes (after its fences).
    budget: usize,
    /// Bytes kept for the two fence keys of a block.
    fences: usize,
}

impl Fill {
    fn new(block_size: usize, pctfree: u8, entries: &[(Vec<u8>, RowId)]) -> Fill {
        let usable = block_size - HEADER_LEN - usize::from(block::LEAF_ITL_SLOTS) * ITL_LEN - TAIL_LEN;
        let longest = entries.iter().map(|(k, _)| k.len()).max().unwrap_or(0) + block::ROWID_LEN;
        let fences = 2 * (longest + 2);
        let budget = (usable * usize::from(100 - pctfree.min(99)) / 100).min(usable - fences);
        Fill { budget, fences }
    }

    fn fits_in_one(&self, lens: impl Iterator<Item = usize>) -> bool {
        let mut total = 0;
        for len in lens {
            total += len + 2;
            if total > self.budget + self.fences {
                return false;
            }
        }
        true
    }
}

fn write_leaf_entries(leaf: &mut [u8], entries: &[(Vec<u8>, RowId)]) {
    let mut e = Vec::new();
    let mut b = IndexBlockMut(leaf);
    for (i, (key, rowid)) in entries.iter().enumerate() {
        block::leaf_entry(0, 0, key, *rowid, &mut e);
        assert!(b.insert_entry(i, &e), "the entries were measured to fit");
    }
}

/// Writes and links blocks of one level, each with as many `items` as fit, and returns
/// (first full key, address) of each block written.
#[allow(clippy::too_many_arguments)]
fn write_level<'c, T>(
    ctx: &AccessContext<'c>,
    space: &mut Space,
    fill: &Fill,
    level: u8,
    items: &[T],
    len: impl Fn(&T) -> usize,
    key: impl Fn(&T) -> Vec<u8>,
    put: impl Fn(&T, &mut Vec<u8>),
) -> Result<Vec<(Vec<u8>, u32)>> {
    let mut out: Vec<(Vec<u8>, u32)> = Vec::new();
    let mut pending: Option<WriteGuard<'c>> = None;
    let mut used = 0;
    let mut e = Vec::new();
    for item in items {
        let need = len(item) + 2;
        if pending.is_none() || used + need > fill.budget {
            let mut next = space.new_block(ctx, level)?;
            let first = key(item);
            if let Some(mut done) = pending.take() {
                let low = if out.len() > 1 { out.last().map(|(k, _)| k.as_slice()) } else { None };
                close(&mut done, low, Some(&first), next.rdba());
                IndexBlockMut(&mut next).set_left(done.rdba());
            }
            out.push((first, next.rdba()));
            pending = Some(next);
            used = 0;
        }
        let block = pending.as_mut().expect("set above");
        put(item, &mut e);
        let pos = IndexBlock(block).count();
        assert!(IndexBlockMut(block).insert_entry(pos, &e), "the budget leaves room for every entry");
        used += need;
    }
    if let Some(mut done) = pending {
        let low = if out.len() > 1 { Some(out[out.len() - 1].0.clone()) } else { None };
        close(&mut done, low.as_deref(), None, 0);
    }
    if let Some(first) = out.first_mut() {
        first.0.clear();
    }
    Ok(out)
}

/// Finishes a block of a level: its fences (the first block of a level has no low
/// fence, the last no high fence) and right link.
fn close(block: &mut [u8], low: Option<&[u8]>, high: Option<&[u8]>, right: u32) {
    let mut b = IndexBlockMut(block);
    b.set_fences(low, high);
    b.set_right(right);
}

fn write_leaves(
    ctx: &AccessContext<'_>,
    space: &mut Space,
    fill: &Fill,
    entries: &[(Vec<u8>, RowId)],
) -> Result<Vec<(Vec<u8>, u32)>> {
    write_level(
        ctx,
        space,
        fill,
        0,
        entries,
        |(k, _)| k.len() + block::LEAF_ENTRY_OVERHEAD + block::ROWID_LEN,
        |(k, r)| super::tree::full_key(k, *r),
        |(k, r), out| block::leaf_entry(0, 0, k, *r, out),
    )
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
    while !fill.fits_in_one(children.iter().map(branch_len)) {
        children = write_level(
            ctx,
            space,
            fill,
            level,
            &children,
            branch_len,
            |(k, _)| k.clone(),
            |(k, c), out| block::branch_entry(k, *c, out),
        )?;
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
