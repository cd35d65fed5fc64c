//! UPDATE and DELETE of compressed tables: a deleted row is marked in its compression
//! unit, an updated one moves out into a row block; after random DML, committed or rolled
//! back, at every level, a compressed copy answers as the row table it was copied from,
//! also to a reader whose snapshot is older than the DML (CR clones of CU heads), and
//! after a crash (recovery rolls back what was not committed), and through the indexes
//! of the copies, kept as rows move out of their units. Writers of one CU lock
//! rows, not the CU; a third writer of a CU waits for one of its two ITL slots.

mod common;

use common::*;
use lioscope::Session;
use proptest::prelude::*;
use std::sync::mpsc;
use std::time::Duration;

const LEVELS: [&str; 4] = ["QUERY LOW", "QUERY HIGH", "ARCHIVE LOW", "ARCHIVE HIGH"];
const ALL: &str = "SELECT id, name, amount, born, flag, note FROM";

/// A change made to the row table and to every compressed copy alike.
fn statement() -> impl Strategy<Value = String> {
    prop_oneof![
        (0i64..3000, 0i64..300).prop_map(|(a, b)| format!("DELETE FROM {{}} WHERE id BETWEEN {a} AND {}", a + b)),
        (0i64..97).prop_map(|k| format!("DELETE FROM {{}} WHERE name = 'name-{k}'")),
        (0i64..3000, 0i64..200, 1i64..9)
            .prop_map(|(a, b, k)| format!("UPDATE {{}} SET amount = amount + {k} WHERE id BETWEEN {a} AND {}", a + b)),
        (0i64..13).prop_map(|k| format!("UPDATE {{}} SET note = 'moved', flag = 'N' WHERE note = 'n{k}'")),
        (0i64..3000).prop_map(|k| format!("UPDATE {{}} SET id = id + 10000 WHERE id = {k}")),
    ]
}

fn on(statement: &str, table: &str) -> String {
    statement.replace("{}", table)
}

fn tables() -> Vec<String> {
    std::iter::once("t".to_owned()).chain((0..LEVELS.len()).map(|i| format!("h{i}"))).collect()
}

/// Every copy holds the row table's rows (`reader`: as its snapshot sees them).
fn assert_same(reader: &Session, what: &str) {
    let want = sorted_rows(reader, &format!("{ALL} t"));
    for (i, level) in LEVELS.iter().enumerate() {
        let got = sorted_rows(reader, &format!("{ALL} h{i}"));
        assert_eq!(got.len(), want.len(), "{level} {what}: row count");
        assert_eq!(got, want, "{level} {what}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases_or(6), ..ProptestConfig::default() })]

    /// Random DELETEs and UPDATEs, each committed or rolled back, on the row table and the
    /// compressed copies: the same rows, the same counts of rows changed, for the writer,
    /// for a reader whose snapshot predates the round, and for one after it.
    #[test]
    fn compressed_copies_take_the_same_dml_as_the_row_table(
        rounds in prop::collection::vec((prop::collection::vec(statement(), 1..4), any::<bool>()), 1..5),
    ) {
        let (_t, _d, db) = temp_db(options(4096, "32M"));
        let s = db.session();
        customers_like(&s, 3000);
        for (i, level) in LEVELS.iter().enumerate() {
            exec(&s, &format!("CREATE TABLE h{i} COMPRESS FOR {level} AS SELECT * FROM t"));
        }
        // Indexes on the row table and on half the copies: DML finds rows through them,
        // and keeps them (a row moved out of its unit changes its rowid).
        for table in ["t", "h0", "h2"] {
            exec(&s, &format!("CREATE INDEX {table}_id ON {table} (id)"));
            exec(&s, &format!("CREATE INDEX {table}_name ON {table} (name, id)"));
        }
        manual(&s);
        let old = db.session();
        manual(&old);
        exec(&old, "SET TRANSACTION ISOLATION LEVEL SERIALIZABLE");
        let before = sorted_rows(&old, &format!("{ALL} t"));
        for (statements, commit) in &rounds {
            for st in statements {
                let counts: Vec<u64> = tables().iter().map(|t| exec(&s, &on(st, t)).rows_affected).collect();
                prop_assert!(counts.iter().all(|&c| c == counts[0]), "{}: {:?}", st, counts);
            }
            assert_same(&s, "for the writer");
            exec(&s, if *commit { "COMMIT" } else { "ROLLBACK" });
            assert_same(&s, "after the round");
            for table in ["h0", "h2"] {
                for q in [
                    format!("SELECT /*+ INDEX({table} {table}_id) */ id, name, amount FROM {table} WHERE id BETWEEN 100 AND 2500"),
                    format!("SELECT /*+ INDEX({table} {table}_name) */ id, note FROM {table} WHERE name = 'name-7'"),
                ] {
                    prop_assert_eq!(sorted_rows(&s, &q), sorted_rows(&s, &q.replace(table, "t")), "{}", q);
                }
            }
            // The serializable reader still sees the tables as they were.
            for i in 0..LEVELS.len() {
                prop_assert_eq!(&sorted_rows(&old, &format!("{ALL} h{i}")), &before);
            }
        }
    }
}

/// The customers-like table and its QUERY LOW copy.
fn one_copy(s: &Session, rows: u32) {
    customers_like(s, rows);
    exec(s, "CREATE TABLE h COMPRESS FOR QUERY LOW AS SELECT * FROM t");
}

#[test]
fn a_delete_marks_and_an_update_moves_the_row_out() {
    let (_t, _d, db) = temp_db(options(8192, "16M"));
    let s = db.session();
    one_copy(&s, 2000);
    let blocks = blocks_below_hwm(&s, "H");
    let moved = sysstat(&s, "HCC rows moved out by update");
    assert_eq!(exec(&s, "DELETE FROM h WHERE id <= 100").rows_affected, 100);
    assert_eq!(blocks_below_hwm(&s, "H"), blocks, "a delete only marks");
    assert_eq!(exec(&s, "UPDATE h SET name = 'renamed' WHERE id BETWEEN 101 AND 110").rows_affected, 10);
    assert_eq!(sysstat(&s, "HCC rows moved out by update") - moved, 10);
    assert!(blocks_below_hwm(&s, "H") > blocks, "the moved rows went to a row block");
    // A moved row is updated again in its row block, in place.
    assert_eq!(exec(&s, "UPDATE h SET name = 'again' WHERE id = 101").rows_affected, 1);
    assert_eq!(sysstat(&s, "HCC rows moved out by update") - moved, 10);
    exec(&s, "COMMIT");
    assert_eq!(int(&s, "SELECT COUNT(*) FROM h"), 1900);
    assert_eq!(int(&s, "SELECT COUNT(*) FROM h WHERE name = 'renamed'"), 9);
    assert_eq!(scalar(&s, "SELECT name FROM h WHERE id = 101"), "again");
    assert_eq!(int(&s, "SELECT COUNT(*) FROM h WHERE id <= 100"), 0);
    assert_eq!(int(&s, "SELECT SUM(id) FROM h"), int(&s, "SELECT SUM(id) FROM t WHERE id > 100"));
}

#[test]
fn writers_of_one_compression_unit_lock_rows_not_the_unit() {
    let (_t, _d, db) = temp_db(options(8192, "16M"));
    let a = db.session();
    one_copy(&a, 1000);
    manual(&a);
    exec(&a, "DELETE FROM h WHERE id = 5");
    // Another row of the same CU: no wait.
    let b = db.session();
    manual(&b);
    assert_eq!(exec(&b, "DELETE FROM h WHERE id = 6").rows_affected, 1);
    // The row a holds: b waits for a, and then finds it gone.
    let (done, finished) = mpsc::channel();
    let waiter = {
        let db = db.clone();
        std::thread::spawn(move || {
            let c = db.session();
            manual(&c);
            let n = exec(&c, "DELETE FROM h WHERE id IN (5, 7)").rows_affected;
            done.send(()).unwrap();
            exec(&c, "COMMIT");
            n
        })
    };
    assert!(finished.recv_timeout(Duration::from_millis(400)).is_err(), "c waits for a's row lock (or an ITL slot)");
    exec(&a, "COMMIT");
    exec(&b, "COMMIT");
    let deleted = waiter.join().unwrap();
    assert_eq!(deleted, 1, "row 5 went with a's commit; c deleted row 7 only");
    assert_eq!(int(&a, "SELECT COUNT(*) FROM h"), 997);
    assert_eq!(int(&a, "SELECT COUNT(*) FROM h WHERE id IN (5, 6, 7)"), 0);
}

#[test]
fn a_third_writer_of_a_unit_waits_for_an_itl_slot_and_rollback_unmarks() {
    let (_t, _d, db) = temp_db(options(8192, "16M"));
    let a = db.session();
    one_copy(&a, 1000);
    let (b, reader) = (db.session(), db.session());
    manual(&a);
    manual(&b);
    exec(&a, "UPDATE h SET amount = -1 WHERE id = 1");
    exec(&b, "DELETE FROM h WHERE id = 2");
    let (done, finished) = mpsc::channel();
    let third = {
        let db = db.clone();
        std::thread::spawn(move || {
            let c = db.session();
            manual(&c);
            let n = exec(&c, "DELETE FROM h WHERE id = 3").rows_affected;
            done.send(()).unwrap();
            exec(&c, "COMMIT");
            n
        })
    };
    assert!(finished.recv_timeout(Duration::from_millis(400)).is_err(), "both ITL slots of the CU are taken");
    // Uncommitted marks are invisible to others.
    assert_eq!(int(&reader, "SELECT COUNT(*) FROM h"), 1000);
    assert_eq!(int(&reader, "SELECT COUNT(*) FROM h WHERE amount = -1"), 0);
    // The waiter waits for one of the two (whichever it met first); both end.
    exec(&b, "ROLLBACK");
    exec(&a, "ROLLBACK");
    assert_eq!(third.join().unwrap(), 1);
    assert_eq!(int(&reader, "SELECT COUNT(*) FROM h"), 999, "only the third writer's delete stands");
    assert_eq!(int(&reader, "SELECT COUNT(*) FROM h WHERE id IN (1, 2)"), 2);
    assert_eq!(int(&reader, "SELECT COUNT(*) FROM h WHERE amount = -1"), 0);
}

#[test]
fn recovery_keeps_committed_marks_and_rolls_back_the_others() {
    let (_tmp, dir) = made_db(options(8192, "32M"), |s| one_copy(s, 5000));
    let db = crash_after(&dir, options(8192, "32M"), 7, |db| {
        let (s, w) = (db.session(), db.session());
        manual(&s);
        manual(&w);
        exec(&s, "DELETE FROM h WHERE MOD(id, 3) = 0");
        exec(&s, "UPDATE h SET name = 'moved' WHERE MOD(id, 5) = 0");
        exec(&s, "COMMIT");
        exec(&w, "DELETE FROM h WHERE MOD(id, 7) = 0");
        exec(&w, "UPDATE h SET name = 'lost' WHERE MOD(id, 11) = 0");
        // The uncommitted marks reach the datafiles (and their redo the log), so that
        // recovery must take them off with their undo.
        exec(&s, "ALTER SYSTEM CHECKPOINT");
    });
    let s = db.session();
    let want = "SELECT id, CASE WHEN MOD(id, 5) = 0 THEN 'moved' ELSE name END, amount, born, flag, note FROM t WHERE MOD(id, 3) <> 0";
    assert_eq!(sorted_rows(&s, &format!("{ALL} h")), sorted_rows(&s, want));
    assert_eq!(int(&s, "SELECT COUNT(*) FROM h WHERE name = 'lost'"), 0);
}

#[test]
fn a_unique_index_follows_rows_moved_out_of_their_units() {
    let (_t, _d, db) = temp_db(options(8192, "16M"));
    let s = db.session();
    one_copy(&s, 3000);
    exec(&s, "CREATE UNIQUE INDEX h_id ON h (id)");
    // Found through the index, moved out (a new rowid), the key kept: no duplicate key.
    assert_eq!(
        exec(&s, "UPDATE /*+ INDEX(h h_id) */ h SET name = 'moved' WHERE id BETWEEN 10 AND 30").rows_affected,
        21
    );
    assert_eq!(exec(&s, "UPDATE h SET id = id + 5000 WHERE id = 40").rows_affected, 1);
    assert_eq!(exec(&s, "DELETE /*+ INDEX(h h_id) */ FROM h WHERE id BETWEEN 50 AND 59").rows_affected, 10);
    let e = fail(&s, "INSERT INTO h SELECT * FROM t WHERE id = 11").to_string();
    assert!(e.contains("unique constraint"), "{e}");
    exec(&s, "INSERT INTO h SELECT * FROM t WHERE id = 40");
    let by_index = "SELECT /*+ INDEX(h h_id) */ id, name FROM h WHERE id BETWEEN 1 AND 6000";
    let by_scan = "SELECT /*+ FULL(h) */ id, name FROM h WHERE id BETWEEN 1 AND 6000";
    assert_eq!(sorted_rows(&s, by_index), sorted_rows(&s, by_scan));
    assert_eq!(
        int(&s, "SELECT /*+ INDEX(h h_id) */ COUNT(*) FROM h WHERE name = 'moved' AND id BETWEEN 1 AND 100"),
        21
    );
    assert_eq!(int(&s, "SELECT COUNT(*) FROM h"), 2991);
}
