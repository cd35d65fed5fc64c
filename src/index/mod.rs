//! B-tree indexes: keys, block formats, the tree and its changes, scans, bulk builds and
//! statistics.
//!
//! An index lives in its own segment, read and changed through the buffer cache like a
//! table: every block visited is a consistent get (or a db block get to change it), a
//! leaf carries ITL slots, its changes write undo, and a reader sees each leaf as of its
//! snapshot through the same consistent-read machinery as table blocks (CR clones,
//! delayed cleanout).
//!
//! ```text
//!  segment:  [header] [root] [block] [block] ...   (the root is always the block after
//!                       │                            the header, whatever its level)
//!  level 2   root:      ( -∞ → B1 ) ( "m"+rowid → B2 )
//!                           │                 │
//!  level 1   B1: low -∞, high "m"…  ──right──► B2: low "m"…, high +∞
//!             ( -∞ → L1 ) ( "f"… → L2 )        ( "m"… → L3 ) ( "t"… → L4 )
//!                 │           │                    │            │
//!  level 0   L1 ◄──────► L2 ◄──────► L3 ◄──────► L4      leaves, linked both ways
//!            entries: (flags, lock, key, rowid) sorted by key then rowid;
//!            ITL slots; low fence ≤ every entry < high fence
//! ```
//!
//! - [`key`]: the order-preserving encoding of a tuple of column values ([`encode_key`],
//!   [`decode_key`]). Rows whose key columns are all NULL are not indexed.
//! - [`block`]: leaf and branch block formats.
//! - `tree`: descents (readers move right past a split they did not see), inserts and
//!   deletes for a transaction, splits (50-50, 90-10, root), purging of committed deletes.
//! - `undo`: the undo record of a leaf entry change, and how it is applied to a leaf.
//! - `rollback`: how the transaction layer applies those records (`INDEX_UNDO`, which
//!   every open registers): to CR clones, and in the current leaf found through the tree
//!   by rollback.
//! - [`scan`]: range scans a leaf at a time ([`IndexScan`], [`LeafEntries`]), unique
//!   lookups, fast full scans, statistics.
//! - `build`: bulk build ([`Builder`]) from the (key, rowid) entries of a table's rows.
//! - [`sort`]: the build's sort, in memory within `sort_area_size`, else in runs spilled
//!   to temporary files and merged.
//!
//! Concurrency: readers hold one block's content lock at a time; writers of one index
//! take its structure lock (`ObjectLocks::index`) for one insert or delete, so splits
//! of one index never run at once. A unique index refuses a key that a live entry of a
//! committed or of the same transaction holds (`Error::UniqueViolation`); an entry of
//! another active transaction (inserted, or deleted: its rollback would revive it) is
//! waited for as a row lock (`enq: TX - row lock contention`), then looked at again. A
//! serializable transaction is also refused a key its snapshot still sees live ("can't
//! serialize access"): the delete that freed it committed after the snapshot.

pub mod block;
mod build;
pub mod key;
pub mod rollback;
pub mod scan;
pub mod sort;
mod tree;
pub mod undo;
#[cfg(test)]
mod tests;

pub use block::RowId;
pub use build::Builder;
pub use key::{decode_key, encode_key};
pub use scan::{IndexScan, IndexScanKind, KeyBound, LeafEntries, fast_full_scan, statistics};

use crate::access::AccessContext;
use crate::catalog::IndexDef;
use crate::error::{Error, Result};
use crate::txn::transaction::Transaction;
use tree::{Retry, Tree};

/// Creates the segment of a new index: the header and an empty root leaf after it.
/// Returns the segment header's address (the root is the next block).
pub fn create_segment(ctx: &AccessContext<'_>, object_id: u32) -> Result<u32> {
    let header = crate::access::segments::create_segment(ctx, object_id)?;
    let name = format!("index object {object_id}");
    let tree = Tree { object_id, root: header + 1, name: &name };
    let mut space = tree::Space::open(ctx, &tree, header)?;
    let root = space.new_block(ctx, 0)?;
    assert_eq!(root.rdba(), tree.root, "the root is the block after the segment header");
    drop(root);
    space.finish(ctx)?;
    Ok(header)
}

/// Adds the entry (`key`, `rowid`) for transaction `txn` of session `sid`. On a unique
/// index, a key held by another live entry is an error (after waiting for the
/// transaction that holds it, if it is active) and changes nothing.
pub fn insert(
    ctx: &AccessContext<'_>,
    txn: &mut Transaction,
    sid: u32,
    index: &IndexDef,
    key: &[u8],
    rowid: RowId,
) -> Result<()> {
    check_key_len(ctx, index, key)?;
    let (tree, xid, full) = entry_change(ctx, txn, sid, index, key, rowid)?;
    let snapshot = txn.snapshot;
    under_structure_lock(ctx, index, xid, || {
        if index.unique {
            match unique_conflict(ctx, &tree, key, xid)? {
                Some(Conflict::Violated) => {
                    return Err(Error::UniqueViolation { index: format!("{}.{}", crate::catalog::SCHEMA, index.name) });
                }
                Some(Conflict::Wait(holder)) => return Ok(Err(Retry::Wait(holder))),
                None => {}
            }
            if let Some(snapshot) = snapshot
                && live_at(ctx, index, key, crate::txn::Reader { snapshot, own: Some(xid) })?
            {
                return Err(crate::txn::change::cannot_serialize(&format!(
                    "a key of {} that its snapshot holds was deleted by a transaction that committed after this one began",
                    index.name
                )));
            }
        }
        tree::insert_entry(ctx, &tree, index.segment_header, txn, xid, &full)
    })
}

/// Deletes the entry (`key`, `rowid`) for transaction `txn` of session `sid` (it is
/// flagged deleted; its space is reused once the delete has committed).
pub fn delete(
    ctx: &AccessContext<'_>,
    txn: &mut Transaction,
    sid: u32,
    index: &IndexDef,
    key: &[u8],
    rowid: RowId,
) -> Result<()> {
    let (tree, xid, full) = entry_change(ctx, txn, sid, index, key, rowid)?;
    under_structure_lock(ctx, index, xid, || tree::delete_entry(ctx, &tree, txn, xid, &full))
}

/// What a change of the entry (`key`, `rowid`) works with: the tree, the changing
/// transaction's id (taken now if it has none) and the entry's full key.
fn entry_change<'i>(
    ctx: &AccessContext<'_>,
    txn: &mut Transaction,
    sid: u32,
    index: &'i IndexDef,
    key: &[u8],
    rowid: RowId,
) -> Result<(Tree<'i>, crate::txn::Xid, Vec<u8>)> {
    Ok((Tree::of(index), txn.xid(ctx, sid)?, tree::full_key(key, rowid)))
}

/// Runs `change` under the index's structure lock until it is done: again at once after
/// a split it made, and after waiting (the lock let go) for the transaction it met.
fn under_structure_lock(
    ctx: &AccessContext<'_>,
    index: &IndexDef,
    xid: crate::txn::Xid,
    mut change: impl FnMut() -> Result<std::result::Result<(), Retry>>,
) -> Result<()> {
    let lock = ctx.locks.index(index.object_id);
    loop {
        let structure = lock.lock();
        match change()? {
            Ok(()) => return Ok(()),
            Err(Retry::Split) => continue,
            Err(Retry::Wait(holder)) => {
                drop(structure);
                ctx.enqueues.wait_for(ctx.stats, xid, holder)?;
            }
        }
    }
}

fn check_key_len(ctx: &AccessContext<'_>, index: &IndexDef, key: &[u8]) -> Result<()> {
    let max = block::max_key_len(ctx.space.block_size);
    if key.len() > max { Err(key_too_long(index, key.len(), max)) } else { Ok(()) }
}

pub(crate) fn key_too_long(index: &IndexDef, len: usize, max: usize) -> Error {
    Error::InvalidValue {
        context: index.name.clone(),
        message: format!("maximum key length ({max}) exceeded: a key of {len} bytes"),
    }
}

/// What a unique index says of a new key.
enum Conflict {
    /// A live entry of a committed transaction (or of the inserting one) has the key.
    Violated,
    /// An entry of this active transaction has the key: wait for it to end.
    Wait(crate::txn::Xid),
}

/// Whether a live entry with key `key` is in the index as `reader` sees it. A
/// serializable transaction may not add a key its snapshot still holds: the delete that
/// freed the key committed after the snapshot, so the transaction would see the key
/// twice (Oracle's ORA-08177).
fn live_at(ctx: &AccessContext<'_>, index: &IndexDef, key: &[u8], reader: crate::txn::Reader) -> Result<bool> {
    let ctx = AccessContext { txn: crate::txn::TxnContext { reader, ..ctx.txn }, ..*ctx };
    let mut scan = IndexScan::unique(index, key.to_vec());
    Ok(scan.next_leaf(&ctx)?.is_some())
}

/// Whether a live entry whose key is `prefix` or starts with it (the encoding of the
/// index's leading columns: encodings are self-delimiting) is in the index's current
/// leaves, as transaction `xid` sees them: committed entries and its own. An entry
/// another active transaction inserted or deleted (its rollback would revive it) is
/// waited for as a row lock (`enq: TX - row lock contention`), then looked at again.
/// With `every`, the look goes on past a live entry, so that every active transaction
/// with an entry of the key has ended when it returns. This is how a foreign key looks
/// for a parent key, or for child rows.
pub fn holds_key(
    ctx: &AccessContext<'_>,
    xid: crate::txn::Xid,
    index: &IndexDef,
    prefix: &[u8],
    every: bool,
) -> Result<bool> {
    let tree = Tree::of(index);
    let lock = ctx.locks.index(index.object_id);
    loop {
        let structure = lock.lock();
        let found = key_entries(ctx, &tree, prefix, xid, every)?;
        drop(structure);
        match found {
            Some(Conflict::Violated) => return Ok(true),
            None => return Ok(false),
            Some(Conflict::Wait(holder)) => ctx.enqueues.wait_for(ctx.stats, xid, holder)?,
        }
    }
}

/// Looks at every entry with key `key` in the current leaves (the caller holds the
/// structure lock).
fn unique_conflict(
    ctx: &AccessContext<'_>,
    tree: &Tree<'_>,
    key: &[u8],
    xid: crate::txn::Xid,
) -> Result<Option<Conflict>> {
    key_entries(ctx, tree, key, xid, false)
}

/// Looks at the entries whose key is `key` or starts with it in the current leaves (the
/// caller holds the structure lock): the first of another active transaction is waited
/// for; a live one is `Violated`, at once or (`every`) once no active one is left. In a
/// unique index every key has all the columns, so a key that starts with `key` is `key`.
fn key_entries(
    ctx: &AccessContext<'_>,
    tree: &Tree<'_>,
    key: &[u8],
    xid: crate::txn::Xid,
    every: bool,
) -> Result<Option<Conflict>> {
    use tree::{Seek, Target};
    let mut live = false;
    let (mut guard, _) = tree.descend(ctx, Seek::Forward(Target::AtLeast(key)))?;
    loop {
        let view = block::IndexBlock(&guard);
        let start = view.position(|k| k < key);
        for i in start..view.count() {
            if !view.key(i).starts_with(key) {
                return Ok(live.then_some(Conflict::Violated));
            }
            let holder = tree::active_holder(ctx, &guard, i).filter(|&h| h != xid);
            match (view.is_deleted(i), holder) {
                (_, Some(h)) => return Ok(Some(Conflict::Wait(h))),
                (false, None) if !every => return Ok(Some(Conflict::Violated)),
                (false, None) => live = true,
                (true, None) => {}
            }
        }
        let right = view.right();
        if right == 0 {
            return Ok(live.then_some(Conflict::Violated));
        }
        drop(guard);
        guard = tree.read(ctx, right)?;
    }
}
