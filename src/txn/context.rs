//! What transactions and consistent reads need from the database they work in: what undo
//! needs ([`UndoContext`]: the buffer cache, the space of the datafiles, the SCN clock,
//! the statement's session statistics and SCN; reached through `Deref`), and undo itself,
//! the TX enqueues, the table and index locks, the sessions (for the oldest snapshot being
//! read), the observer of row changes and who reads ([`Reader`]: the statement's
//! snapshot).
//!
//! The layers above build on it: `access::AccessContext` adds the session's multiblock
//! read count. The database builds both (the tests of the layers from here up, module
//! `fixture`); nothing below it sees the database itself. Undo takes only its
//! [`UndoContext`], so that it does not depend on this context, which holds it.
//!
//! Invariant: every change to the rows of a table block ends with
//! [`TxnContext::rows_changed`] while the block is still held exclusively, so CR clones
//! and the observer (the column store's journal) never miss a change.

use super::Xid;
use super::enqueue::Enqueues;
use super::locks::ObjectLocks;
use super::undo::{Undo, UndoContext};
use crate::stats::Registry;
use crate::storage::block;

/// Who reads: the snapshot SCN and the reader's own transaction, if it has changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reader {
    pub snapshot: u64,
    pub own: Option<Xid>,
}

/// Told of every change to the rows of a table block (an insert, an UPDATE or DELETE, a
/// rollback of either) while the block is still held exclusively; registered by the
/// database when it builds a context.
pub trait RowObserver: Sync {
    /// The rows of block `rdba` of table `object_id` changed.
    fn rows_changed(&self, object_id: u32, rdba: u32);
}

/// What a statement's transactional work needs: shared parts of the database, and the
/// statement's own statistics, SCN and snapshot.
#[derive(Clone, Copy)]
pub struct TxnContext<'a> {
    /// The cache, the space, the SCN clock, the statement's statistics and SCN: what undo
    /// takes, reached through `Deref`.
    pub undo_ctx: UndoContext<'a>,
    pub undo: &'a Undo,
    pub enqueues: &'a Enqueues,
    pub locks: &'a ObjectLocks,
    /// The sessions, and the snapshots they read.
    pub sessions: &'a Registry,
    /// Told of every change to the rows of a table block.
    pub observer: &'a dyn RowObserver,
    /// The snapshot this statement reads as of, and its session's transaction.
    pub reader: Reader,
}

impl TxnContext<'_> {
    /// The rows of table block `rdba` (`bytes`, still held exclusively) changed: its CR
    /// clones stop serving snapshots taken from now on, and the observer is told (the
    /// column store takes the block's rows from the buffer cache from then on). Told
    /// while the block is held, so a population reads it either before the change (and
    /// gets the journal entry) or after it (and sees the change in the block's ITL).
    pub fn rows_changed(&self, rdba: u32, bytes: &[u8]) {
        self.cache.cap_cr_versions(rdba, self.clock.current() + 1);
        self.observer.rows_changed(block::BlockHeader(bytes).object_id(), rdba);
    }
}

impl<'a> std::ops::Deref for TxnContext<'a> {
    type Target = UndoContext<'a>;

    #[inline]
    fn deref(&self) -> &UndoContext<'a> {
        &self.undo_ctx
    }
}
