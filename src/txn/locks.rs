//! The locks of tables and indexes that are not row locks: who may insert into a table,
//! which statements keep DDL away from it, which transactions have changes in it, and
//! the structure lock of each index.
//!
//! Invariants: one [`TableLocks`] and one structure lock per object id for as long as the
//! database is open (created on first use, never replaced), so every session that locks
//! an object locks the same one.

use super::Xid;
use foldhash::HashMap;
use parking_lot::{Mutex, ReentrantMutex, RwLock};
use std::sync::Arc;

/// The locks of one table (row locks live in its blocks).
///
/// - `writer`: one INSERT, COPY, TRUNCATE or DROP at a time (inserts extend the segment).
/// - `visibility`: held shared by every full scan and every UPDATE or DELETE for its
///   whole length, and exclusively by TRUNCATE and DROP, so DDL never pulls blocks from
///   under a statement. (Rows an insert adds are hidden by their lock bytes and ITL
///   until the transaction commits.)
/// - `changers`: the active transactions with changes in the table; TRUNCATE and DROP
///   refuse to run while there are any (their undo names the table's blocks).
#[derive(Debug, Default)]
pub struct TableLocks {
    pub writer: Arc<Mutex<()>>,
    pub visibility: RwLock<()>,
    pub changers: Mutex<Vec<Xid>>,
}

/// The table and index locks of one database, by object id.
#[derive(Default)]
pub struct ObjectLocks {
    tables: Mutex<HashMap<u32, Arc<TableLocks>>>,
    /// Held by one insert, delete, rollback of an entry or bulk build at a time, so one
    /// split at a time runs in an index (readers never take it).
    indexes: Mutex<HashMap<u32, Arc<ReentrantMutex<()>>>>,
}

impl ObjectLocks {
    /// The locks of table `object_id`.
    pub fn table(&self, object_id: u32) -> Arc<TableLocks> {
        self.tables.lock().entry(object_id).or_default().clone()
    }

    /// The structure lock of index `object_id`.
    pub fn index(&self, object_id: u32) -> Arc<ReentrantMutex<()>> {
        self.indexes.lock().entry(object_id).or_default().clone()
    }
}
