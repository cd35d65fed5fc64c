//! What each isolation level promises, tested where it once broke: a READ ONLY snapshot
//! that must not move while writers queue on row locks, and SERIALIZABLE transactions
//! that must fail ("can't serialize access for this transaction", Oracle's ORA-08177)
//! rather than change a row committed after their snapshot.

mod common;

use common::*;
use lioscope::{Database, Session};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

const HOT_ROWS: i64 = 30;

fn hot_table(s: &Session) {
    exec(s, "CREATE TABLE t (id INTEGER NOT NULL, amount INTEGER NOT NULL)");
    exec(s, &format!("INSERT INTO t SELECT LEVEL, 0 FROM dual CONNECT BY LEVEL <= {HOT_ROWS}"));
    exec(s, "CREATE INDEX t_id ON t (id)");
}

/// Two writers increment the same hot rows one at a time, queueing on each other's row
/// locks; a READ ONLY transaction sums the table four times and must get one answer.
#[test]
fn a_read_only_snapshot_stays_put_while_writers_wait_on_row_locks() {
    let (_t, _d, db) = temp_db(options(8192, "4M"));
    hot_table(&db.session());
    let db = Arc::new(db);
    let stop = Arc::new(AtomicBool::new(false));
    let writers: Vec<_> = (0..2u64)
        .map(|w| {
            let (db, stop) = (Arc::clone(&db), Arc::clone(&stop));
            std::thread::spawn(move || write_hot_rows(&db, &stop, w))
        })
        .collect();
    let reader = db.session();
    let started = Instant::now();
    let (mut rounds, mut moved) = (0, Vec::new());
    while started.elapsed() < Duration::from_secs(4) && moved.len() < 5 {
        exec(&reader, "SET TRANSACTION READ ONLY");
        let sums: Vec<i64> = (0..4).map(|_| int(&reader, "SELECT SUM(amount) FROM t")).collect();
        exec(&reader, "COMMIT");
        if sums.windows(2).any(|w| w[0] != w[1]) {
            moved.push(sums);
        }
        rounds += 1;
    }
    stop.store(true, Ordering::Relaxed);
    let updates: u64 = writers.into_iter().map(|w| w.join().unwrap()).sum();
    assert!(updates > 100, "the writers made only {updates} updates");
    assert!(moved.is_empty(), "{} of {rounds} read-only transactions saw the sum move: {moved:?}", moved.len());
    assert_eq!(int(&reader, "SELECT SUM(amount) FROM t"), updates as i64, "every committed increment counts");
}

/// One writer's loop: single-row increments of random hot rows, each committed.
fn write_hot_rows(db: &Database, stop: &AtomicBool, seed: u64) -> u64 {
    let s = db.session();
    let mut rng = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    let mut updates = 0;
    while !stop.load(Ordering::Relaxed) {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        let k = (rng % HOT_ROWS as u64) as i64 + 1;
        let r = exec(&s, &format!("UPDATE t SET amount = amount + 1 WHERE id BETWEEN {k} AND {k}"));
        updates += r.rows_affected;
    }
    updates
}

fn serializable(s: &Session) {
    manual(s);
    exec(s, "SET TRANSACTION ISOLATION LEVEL SERIALIZABLE");
}

/// Starts a serializable transaction in `s` and takes its snapshot of the hot rows, which
/// sum to 0.
fn serializable_snapshot(s: &Session) {
    serializable(s);
    assert_eq!(int(s, "SELECT SUM(amount) FROM t"), 0);
}

/// Asserts that `e` is Oracle's ORA-08177.
fn assert_cannot_serialize(e: &lioscope::Error) {
    assert!(e.to_string().contains("can't serialize access for this transaction"), "{e}");
}

/// A serializable transaction may not overwrite a change committed after its snapshot:
/// the update fails, alone, and the other's change stays.
#[test]
fn a_serializable_update_of_a_row_committed_after_its_snapshot_fails() {
    let (_t, _d, db) = temp_db(options(8192, "4M"));
    let (s, other) = (db.session(), db.session());
    hot_table(&s);
    serializable_snapshot(&s);
    exec(&other, "UPDATE t SET amount = 100 WHERE id = 7");
    let e = fail(&s, "UPDATE t SET amount = amount + 1 WHERE id = 7");
    assert_cannot_serialize(&e);
    // The transaction goes on: its snapshot still hides the other's change.
    exec(&s, "UPDATE t SET amount = amount + 1 WHERE id = 8");
    assert_eq!(int(&s, "SELECT SUM(amount) FROM t"), 1);
    exec(&s, "COMMIT");
    assert_eq!(int(&other, "SELECT SUM(amount) FROM t"), 101);
}

/// The same for a delete, and for a row changed by a transaction that was still active
/// at the snapshot and committed while the serializable one waited for its row lock.
#[test]
fn a_serializable_change_after_a_row_lock_wait_fails() {
    let (_t, _d, db) = temp_db(options(8192, "4M"));
    let (s, other) = (db.session(), db.session());
    hot_table(&s);
    manual(&other);
    exec(&other, "UPDATE t SET amount = 5 WHERE id = 3");
    serializable_snapshot(&s);
    let db2 = db.clone();
    let committer = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(100));
        exec(&other, "COMMIT");
        drop(db2);
    });
    let e = fail(&s, "DELETE FROM t WHERE id = 3");
    committer.join().unwrap();
    assert_cannot_serialize(&e);
    exec(&s, "ROLLBACK");
    assert_eq!(int(&s, "SELECT amount FROM t WHERE id = 3"), 5);
}

/// Rows the serializable transaction's snapshot saw as they are now may be changed, even
/// in a block where others committed later changes to other rows.
#[test]
fn a_serializable_update_beside_later_commits_in_the_same_block_succeeds() {
    let (_t, _d, db) = temp_db(options(8192, "4M"));
    let (s, other) = (db.session(), db.session());
    hot_table(&s);
    serializable_snapshot(&s);
    exec(&other, "UPDATE t SET amount = 100 WHERE id = 7");
    exec(&s, "UPDATE t SET amount = amount + 1 WHERE id = 8");
    exec(&s, "DELETE FROM t WHERE id = 9");
    assert_eq!(int(&s, "SELECT SUM(amount) FROM t"), 1);
    exec(&s, "COMMIT");
    assert_eq!(int(&other, "SELECT SUM(amount) FROM t"), 101);
    assert_eq!(count(&other, "t"), HOT_ROWS - 1);
}

/// A READ COMMITTED update after a row lock wait changes the row as the holder committed
/// it (no update is lost).
#[test]
fn read_committed_updates_after_a_row_lock_wait_lose_nothing() {
    let (_t, _d, db) = temp_db(options(8192, "4M"));
    let (s, other) = (db.session(), db.session());
    hot_table(&s);
    manual(&other);
    exec(&other, "UPDATE t SET amount = amount + 10 WHERE id = 3");
    let committer = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(100));
        exec(&other, "COMMIT");
    });
    exec(&s, "UPDATE t SET amount = amount + 1 WHERE id = 3");
    committer.join().unwrap();
    assert_eq!(int(&s, "SELECT amount FROM t WHERE id = 3"), 11);
}

/// A serializable transaction may not insert a key of a unique index that its snapshot
/// still holds, though a later commit deleted it: it would see the key twice.
#[test]
fn a_serializable_insert_of_a_key_deleted_after_its_snapshot_fails() {
    let (_t, _d, db) = temp_db(options(8192, "4M"));
    let (s, other) = (db.session(), db.session());
    exec(&s, "CREATE TABLE t (id INTEGER NOT NULL, amount INTEGER NOT NULL)");
    exec(&s, "INSERT INTO t SELECT LEVEL, 0 FROM dual CONNECT BY LEVEL <= 5");
    exec(&s, "CREATE UNIQUE INDEX t_id ON t (id)");
    serializable(&s);
    assert_eq!(count(&s, "t"), 5);
    exec(&other, "DELETE FROM t WHERE id = 5");
    let e = fail(&s, "INSERT INTO t VALUES (5, 1)");
    assert_cannot_serialize(&e);
    assert_eq!(int(&s, "SELECT COUNT(*) FROM t WHERE id = 5"), 1, "the snapshot still holds id 5 once");
    // A key its own transaction deleted may be inserted again.
    exec(&s, "DELETE FROM t WHERE id = 4");
    exec(&s, "INSERT INTO t VALUES (4, 1)");
    exec(&s, "COMMIT");
    assert_eq!(int(&other, "SELECT SUM(amount) FROM t"), 1);
}
