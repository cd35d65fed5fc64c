//! How the transaction layer applies the undo of index entries: [`IndexUndo`], registered
//! at every open (`txn::foreign`), hands a record to a CR clone of a leaf
//! ([`EntryUndo::apply`]) or rolls it back in the current leaf holding its entry
//! ([`roll_back`]), which it finds by descending the tree from the root (the root never
//! moves) under the index's structure lock. The record's format, and how it is applied
//! to a leaf, are the `undo` module's; the tree, which writes the records, finds the leaf
//! here.

use super::tree::{self, Tree};
use super::undo::{EntryUndo, INDEX_UNDO_KIND};
use crate::error::Result;
use crate::stats::Stat;
use crate::txn::foreign::ForeignUndo;
use crate::txn::{TxnContext, Uba};

/// Index entry records as the transaction layer sees them: registered at every open
/// (`txn::foreign`), so that CR clones and rollbacks apply them without `txn` knowing
/// the index layer.
pub struct IndexUndo;

/// The one [`IndexUndo`] to register.
pub static INDEX_UNDO: IndexUndo = IndexUndo;

impl ForeignUndo for IndexUndo {
    fn kind(&self) -> u8 {
        INDEX_UNDO_KIND
    }

    fn apply_to_clone(&self, body: &[u8], clone: &mut [u8]) -> std::result::Result<(), String> {
        EntryUndo::decode(body)?.apply(clone)
    }

    fn roll_back(&self, ctx: &TxnContext<'_>, body: &[u8], at: Uba) -> Result<()> {
        roll_back(ctx, body, at)
    }
}

/// Rolls back one index record of a transaction in the current leaf holding its entry.
///
/// A dead transaction's records (at recovery) may have been applied already, by a
/// rollback the crash interrupted. A table block's record is then skipped unless the
/// block's ITL slot still points at it; an index record cannot be judged that way (a
/// split copies the ITL slots into both halves, so the half that does not hold the entry
/// keeps pointing at records it never gets), and needs not be: applying it sets the
/// entry to its state before the change, whatever it is now ([`EntryUndo::apply`]), so
/// the records applied again, newest first, leave every entry as one rollback would.
pub fn roll_back(ctx: &TxnContext<'_>, body: &[u8], at: Uba) -> Result<()> {
    let undo = EntryUndo::decode(body).map_err(|r| ctx.corrupt(at.rdba, r))?;
    let name = format!("index object {}", undo.object_id);
    let tree = Tree { object_id: undo.object_id, root: undo.root, name: &name };
    let lock = ctx.locks.index(undo.object_id);
    let _structure = lock.lock();
    let (mut leaf, _) = tree.descend_for_change(ctx, undo.full_key)?;
    let rdba = leaf.rdba();
    undo.roll_back_leaf(&mut leaf).map_err(|r| ctx.corrupt(rdba, format!("{name}: {r}")))?;
    tree::stamp(ctx, &mut leaf);
    ctx.stats.add(Stat::RollbackChangesUndoRecordsApplied, 1);
    Ok(())
}
