//! Transactions through the public API: read consistency between sessions, rollback,
//! savepoints, statement-level atomicity, row locks and deadlocks, serializable
//! snapshots, and the consistent-read statistics.

mod common;

use common::*;
use lioscope::{Session, Stat};
use std::sync::{Arc, Barrier};
use std::time::Duration;

fn accounts(s: &Session, n: i64) {
    exec(s, "CREATE TABLE accounts (id INTEGER NOT NULL, balance INTEGER NOT NULL, note VARCHAR2(40))");
    exec(
        s,
        &format!(
            "INSERT INTO accounts SELECT LEVEL, 100, RPAD('account ' || LEVEL, 30, '.') FROM dual CONNECT BY LEVEL <= {n}"
        ),
    );
    exec(s, "COMMIT");
}

#[test]
fn readers_see_committed_data_only() {
    let (_t, _d, db) = temp_db(options(8192, "4M"));
    let (writer, reader) = (db.session(), db.session());
    accounts(&writer, 500);
    manual(&writer);
    exec(&writer, "UPDATE accounts SET balance = balance + 1");
    exec(&writer, "UPDATE accounts SET balance = balance + 1");
    exec(&writer, "DELETE FROM accounts WHERE id <= 10");
    exec(&writer, "INSERT INTO accounts VALUES (1000, 5, 'new')");
    assert_eq!(int(&writer, "SELECT SUM(balance) FROM accounts"), 490 * 102 + 5, "a session sees its own changes");
    let before = reader.stats().get(Stat::CrBlocksCreated);
    assert_eq!(int(&reader, "SELECT SUM(balance) FROM accounts"), 500 * 100);
    assert_eq!(int(&reader, "SELECT COUNT(*) FROM accounts"), 500);
    assert!(reader.stats().get(Stat::CrBlocksCreated) > before, "the reader built CR clones");
    assert!(reader.stats().get(Stat::CrUndoRecordsApplied) > 0);
    exec(&writer, "COMMIT");
    assert_eq!(int(&reader, "SELECT SUM(balance) FROM accounts"), 490 * 102 + 5);
    assert_eq!(int(&reader, "SELECT COUNT(*) FROM accounts"), 491);
}

#[test]
fn rollback_restores_every_row() {
    let (_t, _d, db) = temp_db(options(8192, "4M"));
    let s = db.session();
    accounts(&s, 300);
    let image = rows(&s, "SELECT id, balance, note FROM accounts ORDER BY id");
    manual(&s);
    exec(
        &s,
        "UPDATE accounts SET note = 'a much longer note than before, x', balance = balance * 3 WHERE MOD(id, 3) = 0",
    );
    exec(&s, "DELETE FROM accounts WHERE MOD(id, 7) = 0");
    exec(&s, "INSERT INTO accounts SELECT LEVEL + 1000, 1, NULL FROM dual CONNECT BY LEVEL <= 50");
    exec(&s, "ROLLBACK");
    assert_eq!(rows(&s, "SELECT id, balance, note FROM accounts ORDER BY id"), image);
    assert_eq!(s.stats().get(Stat::UserRollbacks), 1);
    assert!(s.stats().get(Stat::RollbackChangesUndoRecordsApplied) > 0);
}

#[test]
fn savepoints_and_failed_statements_roll_back_alone() {
    let (_t, _d, db) = temp_db(options(8192, "4M"));
    let s = db.session();
    accounts(&s, 20);
    manual(&s);
    exec(&s, "UPDATE accounts SET balance = 0 WHERE id = 1");
    exec(&s, "SAVEPOINT a");
    exec(&s, "UPDATE accounts SET balance = 0 WHERE id = 2");
    exec(&s, "ROLLBACK TO SAVEPOINT a");
    let e = fail(&s, "UPDATE accounts SET note = CASE WHEN id = 20 THEN RPAD('x', 41, 'x') ELSE 'ok' END");
    assert!(e.to_string().contains("ACCOUNTS.NOTE"), "{e}");
    assert_eq!(int(&s, "SELECT COUNT(*) FROM accounts WHERE note = 'ok'"), 0, "the failed statement changed nothing");
    exec(&s, "COMMIT");
    assert_eq!(int(&s, "SELECT SUM(balance) FROM accounts"), 19 * 100);
    assert!(fail(&s, "ROLLBACK TO SAVEPOINT a").to_string().contains("never established"));
}

#[test]
fn writers_wait_for_row_locks_and_lose_no_update() {
    let (_t, _d, db) = temp_db(options(8192, "4M"));
    accounts(&db.session(), 10);
    let threads = 4;
    let rounds = 25;
    let start = Arc::new(Barrier::new(threads));
    let handles: Vec<_> = (0..threads)
        .map(|_| {
            let (db, start) = (db.clone(), start.clone());
            std::thread::spawn(move || {
                let s = db.session();
                manual(&s);
                start.wait();
                for _ in 0..rounds {
                    exec(&s, "UPDATE accounts SET balance = balance + 1 WHERE id = 1");
                    exec(&s, "COMMIT");
                }
                s.stats().get(Stat::EnqueueWaits)
            })
        })
        .collect();
    let _waits: u64 = handles.into_iter().map(|h| h.join().unwrap()).sum();
    let s = db.session();
    assert_eq!(int(&s, "SELECT balance FROM accounts WHERE id = 1"), 100 + (threads * rounds) as i64);
}

/// Waits until session `sid` waits for a row lock, as `v$session` shows it; fails the test
/// if it has not within 30 seconds.
fn wait_for_row_lock(probe: &lioscope::Session, sid: u32) {
    let waiting =
        format!("SELECT COUNT(*) FROM v$session WHERE sid = {sid} AND event = 'enq: TX - row lock contention'");
    let started = std::time::Instant::now();
    while int(probe, &waiting) == 0 {
        assert!(started.elapsed() < Duration::from_secs(30), "session {sid} never waited for the row lock");
        std::thread::sleep(Duration::from_millis(2));
    }
}

#[test]
fn a_deadlock_fails_one_statement() {
    let (_t, _d, db) = temp_db(options(8192, "4M"));
    accounts(&db.session(), 10);
    let a = db.session();
    manual(&a);
    exec(&a, "UPDATE accounts SET balance = 1 WHERE id = 1");
    let (sid_tx, sid_rx) = std::sync::mpsc::channel();
    let other = {
        let db = db.clone();
        std::thread::spawn(move || {
            let b = db.session();
            manual(&b);
            exec(&b, "UPDATE accounts SET balance = 2 WHERE id = 2");
            sid_tx.send(b.sid()).expect("the test waits for the sid");
            let blocked = b.execute("UPDATE accounts SET balance = 2 WHERE id = 1");
            exec(&b, "ROLLBACK");
            blocked.map(|_| ()).map_err(|e| e.to_string())
        })
    };
    // B waits for A's row lock before A asks for B's: then A's request closes the cycle.
    let b_sid = sid_rx.recv().expect("B updated row 2");
    wait_for_row_lock(&a, b_sid);
    let mine = a.execute("UPDATE accounts SET balance = 1 WHERE id = 2");
    let theirs = if mine.is_err() {
        exec(&a, "ROLLBACK");
        other.join().unwrap()
    } else {
        other.join().unwrap()
    };
    let errors: Vec<String> = [mine.err().map(|e| e.to_string()), theirs.err()].into_iter().flatten().collect();
    assert_eq!(errors.len(), 1, "exactly one statement fails: {errors:?}");
    assert!(errors[0].contains("deadlock detected"), "{errors:?}");
}

#[test]
fn serializable_sees_one_snapshot() {
    let (_t, _d, db) = temp_db(options(8192, "4M"));
    let (a, b) = (db.session(), db.session());
    accounts(&a, 50);
    manual(&a);
    exec(&a, "SET TRANSACTION ISOLATION LEVEL SERIALIZABLE");
    assert_eq!(int(&a, "SELECT SUM(balance) FROM accounts"), 5000);
    exec(&b, "UPDATE accounts SET balance = 0 WHERE id <= 10");
    assert_eq!(int(&a, "SELECT SUM(balance) FROM accounts"), 5000, "the committed change is after the snapshot");
    exec(&a, "COMMIT");
    assert_eq!(int(&a, "SELECT SUM(balance) FROM accounts"), 4000);
}

#[test]
fn closing_a_session_rolls_back() {
    let (_t, _d, db) = temp_db(options(8192, "4M"));
    let s = db.session();
    accounts(&s, 10);
    {
        let t = db.session();
        manual(&t);
        exec(&t, "DELETE FROM accounts");
    }
    assert_eq!(count(&s, "accounts"), 10);
}

#[test]
fn transfers_keep_the_total_under_concurrency() {
    // Long scans (a few hundred 2 KiB blocks) beside transfers that commit or roll back:
    // every scan must see the total of one moment.
    const ACCOUNTS: u64 = 6000;
    let (_t, _d, db) = temp_db(options(2048, "8M"));
    accounts(&db.session(), ACCOUNTS as i64);
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let writers: Vec<_> = (0..2u64)
        .map(|w| {
            let db = db.clone();
            std::thread::spawn(move || {
                let s = db.session();
                manual(&s);
                let mut x = w * 7919 + 1;
                for _ in 0..60 {
                    x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                    let (from, to) = ((x >> 33) % ACCOUNTS + 1, (x >> 13) % ACCOUNTS + 1);
                    if from == to {
                        continue;
                    }
                    let ok = s.execute(&format!("UPDATE accounts SET balance = balance - 5 WHERE id = {from}")).is_ok()
                        && s.execute(&format!("UPDATE accounts SET balance = balance + 5 WHERE id = {to}")).is_ok();
                    exec(&s, if ok && x % 5 != 0 { "COMMIT" } else { "ROLLBACK" });
                }
            })
        })
        .collect();
    let reader = {
        let (db, stop) = (db.clone(), stop.clone());
        std::thread::spawn(move || {
            let s = db.session();
            let mut checks = 0;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                assert_eq!(int(&s, "SELECT SUM(balance) FROM accounts"), ACCOUNTS as i64 * 100);
                checks += 1;
            }
            checks
        })
    };
    for w in writers {
        w.join().unwrap();
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    assert!(reader.join().unwrap() > 0);
    assert_eq!(int(&db.session(), "SELECT SUM(balance) FROM accounts"), ACCOUNTS as i64 * 100);
}

#[test]
fn transaction_control_errors_are_clear() {
    let (_t, _d, db) = temp_db(options(8192, "4M"));
    let s = db.session();
    accounts(&s, 3);
    manual(&s);
    exec(&s, "COMMIT");
    exec(&s, "ROLLBACK");
    let e = fail(&s, "UPDATE accounts SET nothing = 1");
    assert!(e.to_string().contains("ACCOUNTS.NOTHING"), "{e}");
    exec(&s, "UPDATE accounts SET balance = 1 WHERE id = 1");
    assert!(fail(&s, "SET TRANSACTION READ ONLY").to_string().contains("first statement"));
    exec(&s, "ROLLBACK");
    exec(&s, "SET TRANSACTION READ ONLY");
    assert!(fail(&s, "DELETE FROM accounts").to_string().contains("read-only"));
}

/// Runs `change` and COMMIT in a new session on a thread of its own, beside `holder`'s
/// active transaction; returns the enqueue waits the change made. The writer is given
/// a while (3 s); if it waits for `holder`, `holder`'s commit lets it go and the count
/// says it waited.
fn enqueue_waits_of_writer_beside(db: &lioscope::Database, change: &str, holder: &Session) -> u64 {
    let writer = {
        let (db, change) = (db.clone(), change.to_owned());
        std::thread::spawn(move || {
            let v = db.session();
            manual(&v);
            exec(&v, &change);
            let waits = v.stats().get(Stat::EnqueueWaits);
            exec(&v, "COMMIT");
            waits
        })
    };
    let started = std::time::Instant::now();
    while !writer.is_finished() && started.elapsed() < Duration::from_secs(3) {
        std::thread::sleep(Duration::from_millis(10));
    }
    exec(holder, "COMMIT");
    writer.join().expect("the writer's thread panicked")
}

/// A rollback puts a row's before-image back, lock byte and all. The byte named the ITL
/// slot of the transaction that changed the row before (C1, committed: this one could not
/// have locked the row otherwise); once U took that slot over, the restored row would look
/// locked by U, and a writer would wait for U for nothing.
#[test]
fn a_rolled_back_row_is_not_left_locked_by_the_new_holder_of_its_old_itl_slot() {
    let (_t, _d, db) = temp_db(options(8192, "4M"));
    let (c1, t, u) = (db.session(), db.session(), db.session());
    exec(&c1, "CREATE TABLE r (id INTEGER NOT NULL, v INTEGER)");
    exec(&c1, "INSERT INTO r SELECT LEVEL, 0 FROM dual CONNECT BY LEVEL <= 2");
    for s in [&c1, &t, &u] {
        manual(s);
    }
    // C1 changes row 1 and commits; T changes it in the other slot; U takes C1's slot
    // over for row 2; T rolls back.
    exec(&c1, "UPDATE r SET v = 1 WHERE id = 1");
    exec(&c1, "COMMIT");
    exec(&t, "UPDATE r SET v = 2 WHERE id = 1");
    exec(&u, "UPDATE r SET v = 3 WHERE id = 2");
    exec(&t, "ROLLBACK");
    let waits = enqueue_waits_of_writer_beside(&db, "UPDATE r SET v = 4 WHERE id = 1", &u);
    assert_eq!(waits, 0, "the writer of row 1 waited for a transaction that never locked it");
    assert_eq!(rows(&c1, "SELECT id, v FROM r ORDER BY id").len(), 2);
    assert_eq!(int(&c1, "SELECT v FROM r WHERE id = 1"), 4);
    assert_eq!(int(&c1, "SELECT v FROM r WHERE id = 2"), 3);
}

/// The same for an index entry: T moves row 1's key back to an entry C1 deleted (its
/// lock byte names C1's ITL slot in the leaf); U takes that slot over for another entry
/// of the leaf; T rolls back. The entry, deleted again, must not look locked by U, or a
/// writer putting the key back would wait for U for nothing.
#[test]
fn a_rolled_back_index_entry_is_not_left_locked_by_the_new_holder_of_its_old_itl_slot() {
    let (_t, _d, db) = temp_db(options(8192, "4M"));
    let (c1, t, u) = (db.session(), db.session(), db.session());
    exec(&c1, "CREATE TABLE r (id INTEGER NOT NULL, k INTEGER)");
    exec(&c1, "INSERT INTO r SELECT LEVEL, LEVEL FROM dual CONNECT BY LEVEL <= 2");
    exec(&c1, "CREATE INDEX r_k ON r (k)");
    for s in [&c1, &t, &u] {
        manual(s);
    }
    exec(&c1, "UPDATE r SET k = 100 WHERE id = 1");
    exec(&c1, "COMMIT");
    exec(&t, "UPDATE r SET k = 1 WHERE id = 1");
    exec(&u, "UPDATE r SET k = 200 WHERE id = 2");
    exec(&t, "ROLLBACK");
    let waits = enqueue_waits_of_writer_beside(&db, "UPDATE r SET k = 1 WHERE id = 1", &u);
    assert_eq!(waits, 0, "the writer of key 1 waited for a transaction that never locked it");
    let by_index = rows(&c1, "SELECT /*+ INDEX(r r_k) */ id, k FROM r WHERE k > 0 ORDER BY k");
    let by_scan = rows(&c1, "SELECT /*+ FULL(r) */ id, k FROM r WHERE k > 0 ORDER BY k");
    assert_eq!(by_index, by_scan, "the index agrees with the table");
    assert_eq!(int(&c1, "SELECT k FROM r WHERE id = 1"), 1);
    assert_eq!(int(&c1, "SELECT k FROM r WHERE id = 2"), 200);
}
