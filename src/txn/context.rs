//! What transactions, undo and consistent reads need from the database they work in:
//! the buffer cache, the space of the datafiles, the SCN clock, undo, the TX enqueues,
//! the table and index locks, the sessions (for the oldest snapshot being read) and the
//! observer of row changes, with the statement's session statistics, SCN and snapshot.
//!
//! The layers above build on it: `access::AccessContext` adds the session's multiblock
//! read count. The database builds both (the tests of the layers from here up, module
//! `fixture`); nothing below it sees the database itself.
//!
//! Invariant: every change to the rows of a table block ends with
//! [`TxnContext::rows_changed`] while the block is still held exclusively, so CR clones
//! and the observer (the column store's journal) never miss a change.

use super::clock::ScnClock;
use super::cr::Reader;
use super::enqueue::Enqueues;
use super::locks::ObjectLocks;
use super::undo::Undo;
use crate::buffer::BufferCache;
use crate::error::Error;
use crate::stats::{Registry, SessionStats};
use crate::storage::block;
use crate::storage::space::Space;

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
    pub cache: &'a BufferCache,
    pub space: &'a Space,
    pub clock: &'a ScnClock,
    pub undo: &'a Undo,
    pub enqueues: &'a Enqueues,
    pub locks: &'a ObjectLocks,
    /// The sessions, and the snapshots they read.
    pub sessions: &'a Registry,
    /// Told of every change to the rows of a table block.
    pub observer: &'a dyn RowObserver,
    pub stats: &'a SessionStats,
    /// SCN stamped into blocks this statement changes.
    pub scn: u64,
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

    /// A corruption error for block `rdba` of the database's datafiles.
    pub fn corrupt(&self, rdba: u32, reason: impl Into<String>) -> Error {
        self.space.corrupt(rdba, reason)
    }
}
