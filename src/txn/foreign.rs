//! Undo records that a layer above the transaction layer writes: an index's entry
//! changes. The transaction layer reads them in its two places that walk undo, a CR
//! clone's construction and a rollback, and hands each to the layer that wrote it
//! through [`ForeignUndo`], a trait defined here and implemented there, so that `txn`
//! never imports that layer.
//!
//! ```text
//!  undo record body ─► first byte ─► a registered ForeignUndo owns it? ─► its apply / roll_back
//!                                                    └─ no ─► a table block's BlockUndo
//! ```
//!
//! Invariant: every kind of foreign record is registered ([`register`]) before a
//! database opens, since an open may roll back a dead transaction's records.

use super::Uba;
use crate::error::Result;
use crate::txn::TxnContext;
use parking_lot::RwLock;

/// A kind of undo record that a higher layer writes and knows how to apply.
pub trait ForeignUndo: Send + Sync {
    /// The first byte of this kind's records (its kind, distinct from every other's).
    fn kind(&self) -> u8;
    /// Whether `body` (an undo record's body) is one of this kind's records.
    fn owns(&self, body: &[u8]) -> bool {
        body.first() == Some(&self.kind())
    }
    /// Applies the record to `clone`, a CR clone of the block it was made for (or of a
    /// block split off from it).
    fn apply_to_clone(&self, body: &[u8], clone: &mut [u8]) -> std::result::Result<(), String>;
    /// Rolls the record at `at` back in the current version of its block. At recovery a
    /// dead transaction's records may have been applied already, by a rollback the crash
    /// interrupted: applying them again, newest first, must leave the block as one
    /// rollback would.
    fn roll_back(&self, ctx: &TxnContext<'_>, body: &[u8], at: Uba) -> Result<()>;
}

static REGISTERED: RwLock<Vec<&'static dyn ForeignUndo>> = RwLock::new(Vec::new());

/// Registers a kind of foreign undo record (once; registering it again does nothing).
/// Kinds are told apart by their first byte: the implementations are unit structs,
/// whose statics may share an address.
pub fn register(kind: &'static dyn ForeignUndo) {
    let mut registered = REGISTERED.write();
    if !registered.iter().any(|k| k.kind() == kind.kind()) {
        registered.push(kind);
    }
}

/// The registered kind that owns `body`, if any.
pub fn owner(body: &[u8]) -> Option<&'static dyn ForeignUndo> {
    REGISTERED.read().iter().copied().find(|k| k.owns(body))
}
