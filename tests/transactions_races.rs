//! Races and corner cases of the transaction layer, each once a bug: clone reuse by a
//! transaction's own later statements, serializable ITL take-over, a failed insert's
//! undo against a concurrent insert, autocommit after a failed statement, delayed
//! cleanout beside a running writer, ITL growth before the room check, the room of a
//! shrunk row (through its own transaction's compaction too), the order in which a
//! reader rolls back several transactions, and DDL beside row lock waits.

mod common;

use common::*;
use lioscope::Session;
use lioscope::types::Value;
use std::sync::mpsc;
use std::time::Duration;

fn small_table(s: &Session) {
    exec(s, "CREATE TABLE t (id INTEGER NOT NULL, v INTEGER NOT NULL, pad VARCHAR2(400))");
    exec(s, "INSERT INTO t SELECT LEVEL, 0, 'x' FROM dual CONNECT BY LEVEL <= 10");
    exec(s, "COMMIT");
}

/// A transaction's second statement must see its own change made after an earlier
/// query built an owner clone of the block.
#[test]
fn own_changes_stay_visible_after_an_owner_clone_was_built() {
    let (_t, _d, db) = temp_db(options(8192, "4M"));
    let (a, c) = (db.session(), db.session());
    small_table(&a);
    manual(&a);
    manual(&c);
    exec(&c, "UPDATE t SET v = 1000 WHERE id = 10"); // other active txn in the block
    exec(&a, "UPDATE t SET v = 1 WHERE id = 1");
    assert_eq!(int(&a, "SELECT SUM(v) FROM t"), 1);
    exec(&a, "UPDATE t SET v = 2 WHERE id = 2");
    assert_eq!(int(&a, "SELECT SUM(v) FROM t"), 3, "A must see its own second update");
}

/// A serializable transaction's reads skip its own ITL slot, so it must not take over
/// the slot of a transaction that committed after its snapshot (it grows the ITL).
#[test]
fn serializable_never_sees_a_commit_behind_its_own_itl_slot() {
    let (_t, _d, db) = temp_db(options(8192, "4M"));
    let (t, x, y, z) = (db.session(), db.session(), db.session(), db.session());
    small_table(&t);
    exec(&x, "UPDATE t SET v = 0 WHERE id = 3"); // slot 0 (autocommit)
    manual(&y);
    exec(&y, "UPDATE t SET v = 0 WHERE id = 4"); // slot 1, keep active
    manual(&t);
    exec(&t, "SET TRANSACTION ISOLATION LEVEL SERIALIZABLE");
    assert_eq!(int(&t, "SELECT SUM(v) FROM t"), 0);
    exec(&y, "COMMIT");
    exec(&z, "UPDATE t SET v = 500 WHERE id = 5"); // takes over slot 0, commits after T's snapshot
    exec(&t, "UPDATE t SET v = 1 WHERE id = 2"); // takes over a committed slot
    assert_eq!(int(&t, "SELECT SUM(v) FROM t"), 1, "serializable T must not see Z's later commit");
}

/// A failed INSERT's undo names blocks above the old high-water mark: it is applied
/// before another session's insert may format those blocks again.
#[test]
fn failed_insert_rollback_keeps_a_concurrent_insert() {
    let (_t, _d, db) = temp_db(options_with_extent(8192, 16 << 20, "64M"));
    let a = db.session();
    exec(&a, "CREATE TABLE t (id INTEGER NOT NULL, pad VARCHAR2(100))");
    let db2 = db.clone();
    let (go_tx, go_rx) = mpsc::channel::<()>();
    let b = std::thread::spawn(move || {
        let b = db2.session();
        go_rx.recv().unwrap();
        std::thread::sleep(Duration::from_millis(50));
        // Blocks on the writer lock until A's inserter is dropped.
        b.execute("INSERT INTO t SELECT LEVEL, RPAD('b', 90, 'b') FROM dual CONNECT BY LEVEL <= 20000").unwrap();
        b
    });
    go_tx.send(()).unwrap();
    let e = a
        .execute(
            "INSERT INTO t SELECT CASE WHEN LEVEL < 200000 THEN LEVEL END, RPAD('a', 90, 'a') FROM dual CONNECT BY LEVEL <= 200000",
        )
        .unwrap_err();
    assert!(e.to_string().contains("ORA-01400"), "{e}");
    let b = b.join().unwrap();
    assert_eq!(count(&b, "t"), 20000, "B's committed rows must all be there");
}

/// With autocommit, a failed statement leaves no transaction open behind it (which would
/// keep other sessions' DDL out).
#[test]
fn failed_autocommit_statement_leaves_no_transaction() {
    let (_t, _d, db) = temp_db(options(8192, "4M"));
    let (a, b) = (db.session(), db.session());
    small_table(&a);
    let _ = a.execute("INSERT INTO t VALUES (NULL, 0, 'x')").unwrap_err();
    assert!(!a.in_transaction(), "a failed autocommit statement leaves no transaction");
    let r = b.execute("TRUNCATE TABLE t");
    assert!(r.is_ok(), "TRUNCATE refused: {:?}", r.err().map(|e| e.to_string()));
}

/// Readers of blocks whose ITL slots a writer took over from an ended transaction that
/// was never cleaned out.
#[test]
fn reader_after_takeover_of_uncleaned_slots() {
    let (_t, _d, db) = temp_db(options(8192, "4M"));
    let w1 = db.session();
    exec(&w1, "CREATE TABLE t (id INTEGER NOT NULL, v INTEGER NOT NULL, pad VARCHAR2(100))");
    exec(&w1, "INSERT INTO t SELECT LEVEL, 0, RPAD('x', 90, 'x') FROM dual CONNECT BY LEVEL <= 20000");
    exec(&w1, "UPDATE t SET v = 1");
    let w2 = db.session();
    manual(&w2);
    exec(&w2, "UPDATE t SET v = v + 1000");
    let r = db.session();
    assert_eq!(int(&r, "SELECT SUM(v) FROM t"), 20000);
    assert_eq!(int(&r, "SELECT SUM(v) FROM t"), 20000);
}

/// A reader catching up with a writer that works through blocks needing delayed
/// cleanout: a block cleaned out for the reader is looked at again before it is used.
#[test]
fn cleanout_race_natural() {
    let mut bad = 0;
    for round in 0..10 {
        let (_t, _d, db) = temp_db(options(8192, "4M"));
        let w1 = db.session();
        exec(&w1, "CREATE TABLE t (id INTEGER NOT NULL, v INTEGER NOT NULL, pad VARCHAR2(100))");
        exec(&w1, "INSERT INTO t SELECT LEVEL, 0, RPAD('x', 90, 'x') FROM dual CONNECT BY LEVEL <= 40000");
        exec(&w1, "UPDATE t SET v = 1");
        let db2 = db.clone();
        let w = std::thread::spawn(move || {
            let w2 = db2.session();
            w2.set_autocommit(false);
            exec(&w2, "UPDATE t SET v = v + 1000");
            w2
        });
        std::thread::sleep(Duration::from_millis(5 + round * 3));
        let r = db.session();
        let sum = int(&r, "SELECT SUM(v) FROM t");
        let _w2 = w.join().unwrap();
        if sum != 40000 {
            eprintln!("round {round}: reader saw {sum}");
            bad += 1;
        }
    }
    assert_eq!(bad, 0);
}

/// INSERT ... SELECT from the same table, as the second statement of a transaction: the
/// query sees the table as the statement began, not the rows the statement adds.
#[test]
fn insert_select_same_table_second_statement() {
    let (_t, _d, db) = temp_db(options(8192, "4M"));
    let s = db.session();
    exec(&s, "CREATE TABLE t (id INTEGER NOT NULL, pad VARCHAR2(100))");
    exec(&s, "INSERT INTO t SELECT LEVEL, RPAD('x', 90, 'x') FROM dual CONNECT BY LEVEL <= 500");
    manual(&s);
    exec(&s, "UPDATE t SET pad = 'y' WHERE id = 1");
    exec(&s, "INSERT INTO t SELECT * FROM t");
    assert_eq!(count(&s, "t"), 1000);
}

/// Taking an ITL slot may grow the ITL and shrink the room a growing row needs: no
/// statement may panic over it, whatever the row's new length.
#[test]
fn itl_growth_before_the_room_check_never_panics() {
    let mut panicked = Vec::new();
    for p in (200..=260).step_by(2) {
        let r = std::panic::catch_unwind(|| {
            let (_t, _d, db) = temp_db(options_with_extent(2048, 2048 * 8, "1M"));
            let (a, b, c) = (db.session(), db.session(), db.session());
            exec(&a, "CREATE TABLE t (id INTEGER NOT NULL, pad VARCHAR2(400))");
            exec(&a, "INSERT INTO t SELECT LEVEL, RPAD('x', 10, 'x') FROM dual CONNECT BY LEVEL <= 200");
            manual(&a);
            manual(&b);
            manual(&c);
            exec(&a, "UPDATE t SET pad = 'a' WHERE id = 1");
            exec(&b, "UPDATE t SET pad = 'b' WHERE id = 2");
            // The update finds room (a row that no longer fits migrates): it neither fails
            // nor panics, and every session then reads what was committed.
            exec(&c, &format!("UPDATE t SET pad = RPAD('c', {p}, 'c') WHERE id = 3"));
            let reader = db.session();
            assert_eq!(int(&c, "SELECT LENGTH(pad) FROM t WHERE id = 3"), i64::from(p), "C sees its own change");
            assert_eq!(int(&reader, "SELECT LENGTH(pad) FROM t WHERE id = 3"), 10, "uncommitted: row 3 as it was");
            exec(&c, "COMMIT");
            exec(&a, "ROLLBACK");
            exec(&b, "COMMIT");
            let lengths = "SELECT id, LENGTH(pad) FROM t WHERE id <= 3 ORDER BY id";
            let expected = [(1, 10), (2, 1), (3, i64::from(p))].map(|(id, len)| vec![Value::Int(id), Value::Int(len)]);
            assert_eq!(rows(&reader, lengths), expected, "pad {p}");
            assert_eq!(count_and_id_sum(&reader, "t"), ids_up_to(200), "pad {p}: every row once");
        });
        if r.is_err() {
            panicked.push(p);
        }
    }
    assert!(panicked.is_empty(), "panicked for pad lengths {panicked:?}");
}

/// Space an uncommitted update freed by shrinking a row stays the row's while the
/// transaction is active: its before-image fits again, for readers and for rollback.
#[test]
fn a_shrunk_row_keeps_its_room_for_readers_and_rollback() {
    let (_t, _d, db) = temp_db(options_with_extent(2048, 2048 * 8, "1M"));
    let (t, u, r) = (db.session(), db.session(), db.session());
    exec(&t, "CREATE TABLE t (id INTEGER NOT NULL, pad VARCHAR2(400))");
    exec(&t, "INSERT INTO t VALUES (1, RPAD('x', 300, 'x'))");
    exec(&t, "INSERT INTO t SELECT LEVEL + 1, RPAD('x', 10, 'x') FROM dual CONNECT BY LEVEL <= 200");
    let before = int(&r, "SELECT SUM(LENGTH(pad)) FROM t");
    manual(&t);
    manual(&u);
    exec(&t, "UPDATE t SET pad = NULL WHERE id = 1");
    exec(&u, "UPDATE t SET pad = RPAD('u', 60, 'u') WHERE id BETWEEN 2 AND 20");
    exec(&u, "COMMIT");
    assert_eq!(int(&r, "SELECT SUM(LENGTH(pad)) FROM t"), before + 19 * 50, "the reader rolls T back");
    exec(&t, "ROLLBACK");
    assert_eq!(int(&r, "SELECT SUM(LENGTH(pad)) FROM t"), before + 19 * 50);
}

/// A 2 KiB-block table whose first block holds row 1, padded to 300 characters (309
/// bytes), and rows 2..=77 of 10 characters (17 bytes): 209 bytes of it stay free (PCTFREE
/// keeps 204). Rows 78..=200 go to the next blocks.
fn one_wide_row_among_short_ones(s: &Session) {
    exec(s, "CREATE TABLE t (id INTEGER NOT NULL, pad VARCHAR2(400))");
    exec(s, "INSERT INTO t VALUES (1, RPAD('x', 300, 'x'))");
    exec(s, "INSERT INTO t SELECT LEVEL + 1, RPAD('x', 10, 'x') FROM dual CONNECT BY LEVEL <= 199");
    exec(s, "COMMIT");
}

/// Room an uncommitted update freed stays its transaction's even when that transaction's
/// own later change compacts the block: another session's growing row may not take it,
/// so the rollback puts the before-image back (and readers see it too).
#[test]
fn freed_room_stays_reserved_through_its_own_transactions_compaction() {
    let (_t, _d, db) = temp_db(options_with_extent(2048, 2048 * 8, "1M"));
    let (t, u, r) = (db.session(), db.session(), db.session());
    one_wide_row_among_short_ones(&t);
    let all = "SELECT id, pad FROM t ORDER BY id";
    let before = rows(&r, all);
    manual(&t);
    manual(&u);
    // Row 1 shrinks to 6 bytes: its 303 bytes of room stay T's.
    exec(&t, "UPDATE t SET pad = NULL WHERE id = 1");
    // Row 2 grows to 309 bytes: more than the 209 free, so the block is compacted (or the
    // row migrates); either way the room of row 1 must stay T's.
    exec(&t, "UPDATE t SET pad = RPAD('t', 300, 't') WHERE id = 2");
    // Row 3 grows by 190 bytes, into whatever free space the block has.
    exec(&u, "UPDATE t SET pad = RPAD('u', 200, 'u') WHERE id = 3");
    assert_eq!(rows(&r, all), before, "a reader rolls both transactions back");
    t.execute("ROLLBACK").unwrap_or_else(|e| panic!("T's rollback: {e}"));
    assert_eq!(
        rows(&t, "SELECT id, pad FROM t WHERE id <> 3 ORDER BY id"),
        before[..2].iter().chain(&before[3..]).cloned().collect::<Vec<_>>()
    );
    exec(&u, "COMMIT");
    assert_eq!(scalar(&r, "SELECT pad FROM t WHERE id = 3"), "u".repeat(200));
    assert_eq!(int(&r, "SELECT SUM(LENGTH(pad)) FROM t"), 300 + 190 + 199 * 10);
}

/// A reader rolls back the newest changes first: here those of an active transaction,
/// whose grown row took the room that a transaction committed after the reader's
/// snapshot had freed, before that committed one's.
#[test]
fn a_reader_rolls_back_an_active_transaction_before_one_committed_after_its_snapshot() {
    let (_t, _d, db) = temp_db(options_with_extent(2048, 2048 * 8, "1M"));
    let (w, a, b, r) = (db.session(), db.session(), db.session(), db.session());
    one_wide_row_among_short_ones(&w);
    let all = "SELECT id, pad FROM t ORDER BY id";
    let before = rows(&r, all);
    manual(&a);
    manual(&b);
    manual(&r);
    // The two inserts' ITL slots are taken over: A's first, then B's, which the reader
    // looks at second.
    exec(&a, "UPDATE t SET pad = NULL WHERE id = 1");
    exec(&b, "UPDATE t SET pad = 'b' WHERE id = 50");
    // A commit elsewhere moves the SCN on: the clone B's UPDATE built (A rolled back, B's
    // change not yet made) serves no later snapshot, so the reader builds its own.
    exec(&w, "CREATE TABLE elsewhere (x INTEGER)");
    exec(&w, "INSERT INTO elsewhere VALUES (1)");
    exec(&r, "SET TRANSACTION READ ONLY");
    assert_eq!(int(&r, "SELECT COUNT(*) FROM dual"), 1, "the reader's snapshot: A and B active");
    exec(&a, "COMMIT");
    // Row 2 grows into the room A freed (A has ended: the block may be compacted).
    exec(&b, "UPDATE t SET pad = RPAD('b', 300, 'b') WHERE id = 2");
    let seen = r.execute(all).unwrap_or_else(|e| panic!("the reader's query: {e}"));
    assert_eq!(seen.rows, before, "the reader sees the table as of its snapshot");
}

/// A row changed by a transaction that committed after a reader's snapshot, then by an
/// active one through another ITL slot: the reader undoes the later change first and
/// sees the row's value as of its snapshot.
#[test]
fn a_reader_undoes_a_rows_later_change_before_its_earlier_one() {
    let (_t, _d, db) = temp_db(options(8192, "4M"));
    let (w, a, b, r) = (db.session(), db.session(), db.session(), db.session());
    small_table(&w);
    manual(&a);
    manual(&b);
    manual(&r);
    exec(&b, "UPDATE t SET v = 1 WHERE id = 5"); // B takes the free ITL slot
    exec(&a, "UPDATE t SET v = 10 WHERE id = 1"); // A takes over the loader's slot
    // A commit elsewhere, so that the reader builds a clone of its own (see above).
    exec(&w, "CREATE TABLE elsewhere (x INTEGER)");
    exec(&w, "INSERT INTO elsewhere VALUES (1)");
    exec(&r, "SET TRANSACTION READ ONLY");
    assert_eq!(int(&r, "SELECT COUNT(*) FROM dual"), 1, "the reader's snapshot: A and B active");
    exec(&a, "COMMIT");
    exec(&b, "UPDATE t SET v = 20 WHERE id = 1"); // after A's change, through B's own slot
    assert_eq!(int(&r, "SELECT v FROM t WHERE id = 1"), 0, "row 1 as of the reader's snapshot");
    assert_eq!(int(&r, "SELECT SUM(v) FROM t"), 0);
}

/// An UPDATE waiting for a row lock, TRUNCATE, and the row lock holder's INSERT: DDL
/// gives up (resource busy) instead of holding the others up for ever.
#[test]
fn truncate_beside_a_row_lock_wait_does_not_hang() {
    let (_t, _d, db) = temp_db(options(8192, "4M"));
    let s1 = db.session();
    small_table(&s1);
    manual(&s1);
    exec(&s1, "UPDATE t SET v = 1 WHERE id = 1");
    let waiter = {
        let db = db.clone();
        std::thread::spawn(move || {
            let s2 = db.session();
            s2.set_autocommit(false);
            s2.execute("UPDATE t SET v = 2 WHERE id = 1").map(|_| ()).map_err(|e| e.to_string())
        })
    };
    std::thread::sleep(Duration::from_millis(200));
    let (tx, rx) = mpsc::channel();
    let ddl = {
        let db = db.clone();
        std::thread::spawn(move || {
            let r = db.session().execute("TRUNCATE TABLE t").map(|_| ()).map_err(|e| e.to_string());
            tx.send(r).unwrap();
        })
    };
    std::thread::sleep(Duration::from_millis(200));
    exec(&s1, "INSERT INTO t VALUES (99, 0, 'y')");
    exec(&s1, "COMMIT");
    waiter.join().unwrap().unwrap();
    let truncated = rx.recv_timeout(Duration::from_secs(30)).expect("TRUNCATE ends");
    ddl.join().unwrap();
    assert!(truncated.unwrap_err().contains("resource busy"));
}
