//! The locks of tables and indexes that are not row locks: who may insert into a table,
//! which statements keep DDL away from it, which transactions have changes in it, and
//! the structure lock of each index. An insert that finds its table's insert lock held
//! waits in `enq: HW - contention` ([`TableLocks::insert_lock`]).
//!
//! Invariants: one [`TableLocks`] and one structure lock per object id for as long as the
//! database is open (created on first use, never replaced), so every session that locks
//! an object locks the same one.

use super::Xid;
use crate::stats::{SessionStats, WaitEvent};
use foldhash::HashMap;
use parking_lot::{ArcMutexGuard, Mutex, RawMutex, ReentrantMutex, RwLock};
use std::sync::Arc;

/// The locks of one table (row locks live in its blocks).
///
/// - `writer`: one INSERT, COPY, TRUNCATE or DROP at a time (inserts extend the segment);
///   an insert waits for it in `enq: HW - contention` ([`TableLocks::insert_lock`]).
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

impl TableLocks {
    /// Takes the table's `writer` lock for an inserting statement, waiting for it in
    /// `enq: HW - contention` when another statement holds it (the lock guards the
    /// segment's high-water mark and the block rows are appended to).
    pub fn insert_lock(&self, stats: &SessionStats) -> ArcMutexGuard<RawMutex, ()> {
        stats.get_or_wait(WaitEvent::EnqHwContention, || self.writer.try_lock_arc(), || self.writer.lock_arc())
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn an_insert_waits_for_the_table_s_insert_lock_in_enq_hw_contention() {
        let locks = TableLocks::default();
        let stats = SessionStats::default();
        drop(locks.insert_lock(&stats));
        assert_eq!(stats.event(WaitEvent::EnqHwContention).waits, 0, "a free lock is not waited for");

        let held = locks.writer.lock();
        std::thread::scope(|s| {
            let waiter = s.spawn(|| {
                let waiter_stats = SessionStats::default();
                drop(locks.insert_lock(&waiter_stats));
                waiter_stats.event(WaitEvent::EnqHwContention)
            });
            std::thread::sleep(Duration::from_millis(50));
            drop(held);
            let waited = waiter.join().unwrap();
            assert_eq!(waited.waits, 1);
            assert!(waited.time_waited_micro >= 40_000, "waited {} µs", waited.time_waited_micro);
        });
    }
}
