//! The direct-path loads of compressed tables besides CREATE TABLE AS SELECT:
//! `INSERT /*+ APPEND */ ... SELECT` writes new compression units inside the session's
//! transaction (invisible to others until it commits, gone if it rolls back or the
//! session dies in a crash), and `ALTER TABLE ... MOVE [COMPRESS FOR ... | NOCOMPRESS]`
//! rewrites a table's live rows into new segments, at a new level or as rows.

mod common;

use common::*;

const ALL: &str = "SELECT id, name, amount, born, flag, note FROM";

#[test]
fn insert_append_loads_units_that_only_its_commit_shows() {
    let (_t, _d, db) = temp_db(options(8192, "32M"));
    let (s, other) = (db.session(), db.session());
    customers_like(&s, 4000);
    exec(&s, "CREATE TABLE h COMPRESS FOR QUERY HIGH AS SELECT * FROM t WHERE id <= 1000");
    manual(&s);
    let (cus, rows) = (sysstat(&s, "HCC load direct CUs"), sysstat(&s, "HCC load direct rows"));
    let blocks = blocks_below_hwm(&s, "H");
    assert_eq!(exec(&s, "INSERT /*+ APPEND */ INTO h SELECT * FROM t WHERE id > 1000").rows_affected, 3000);
    assert!(sysstat(&s, "HCC load direct CUs") > cus, "into new compression units");
    assert_eq!(sysstat(&s, "HCC load direct rows") - rows, 3000);
    assert!(blocks_below_hwm(&s, "H") > blocks);
    assert_eq!(int(&s, "SELECT COUNT(*) FROM h"), 4000, "the loading transaction sees its rows");
    assert_eq!(int(&other, "SELECT COUNT(*) FROM h"), 1000, "others do not, until it commits");
    assert_eq!(int(&other, "SELECT COUNT(name) FROM h WHERE id > 1000"), 0);
    exec(&s, "ROLLBACK");
    assert_eq!(int(&s, "SELECT COUNT(*) FROM h"), 1000, "rolled back: the units' rows are deleted");
    exec(&s, "INSERT /*+ APPEND */ INTO h SELECT * FROM t WHERE id > 1000");
    // The loading transaction changes its own rows like any others.
    exec(&s, "DELETE FROM h WHERE id BETWEEN 2001 AND 2100");
    exec(&s, "COMMIT");
    assert_eq!(
        sorted_rows(&other, &format!("{ALL} h")),
        sorted_rows(&other, &format!("{ALL} t WHERE id NOT BETWEEN 2001 AND 2100"))
    );
    // Without the hint, or into a table that is not compressed, an INSERT is conventional.
    let cus = sysstat(&s, "HCC load direct CUs");
    exec(&s, "INSERT INTO h SELECT * FROM t WHERE id <= 10");
    exec(&s, "CREATE TABLE plain AS SELECT * FROM t WHERE id < 0");
    exec(&s, "INSERT /*+ APPEND */ INTO plain SELECT * FROM t");
    exec(&s, "COMMIT");
    assert_eq!(sysstat(&s, "HCC load direct CUs"), cus);
    assert_eq!(int(&s, "SELECT COUNT(*) FROM plain"), 4000);
    assert_eq!(int(&s, "SELECT COUNT(*) FROM h"), 3910);
}

#[test]
fn an_append_the_crash_interrupted_is_rolled_back_and_a_committed_one_kept() {
    let (_tmp, dir) = made_db(options(8192, "32M"), |s| {
        customers_like(s, 6000);
        exec(s, "CREATE TABLE h COMPRESS FOR QUERY LOW AS SELECT * FROM t WHERE id <= 2000");
    });
    let db = crash_after(&dir, options(8192, "32M"), 3, |db| {
        let (s, w) = (db.session(), db.session());
        manual(&s);
        manual(&w);
        exec(&s, "INSERT /*+ APPEND */ INTO h SELECT * FROM t WHERE id BETWEEN 2001 AND 4000");
        exec(&s, "COMMIT");
        exec(&w, "INSERT /*+ APPEND */ INTO h SELECT * FROM t WHERE id > 4000");
        // The uncommitted units' heads reach the datafiles, so that recovery must mark
        // their rows deleted with their undo.
        exec(&s, "ALTER SYSTEM CHECKPOINT");
    });
    let s = db.session();
    assert_eq!(sorted_rows(&s, &format!("{ALL} h")), sorted_rows(&s, &format!("{ALL} t WHERE id <= 4000")));
}

#[test]
fn move_rewrites_the_live_rows_at_another_level_or_as_rows() {
    let (_t, _d, db) = temp_db(options(8192, "64M"));
    let s = db.session();
    customers_like(&s, 20_000);
    let want = |s: &lioscope::Session| sorted_rows(s, &format!("{ALL} t WHERE MOD(id, 10) <> 0"));
    exec(&s, "CREATE TABLE h AS SELECT * FROM t");
    exec(&s, "DELETE FROM h WHERE MOD(id, 10) = 0");
    exec(&s, "CREATE INDEX h_id ON h (id)");
    let row_blocks = blocks_below_hwm(&s, "H");
    let compress_for =
        |s: &lioscope::Session| scalar(s, "SELECT NVL(compress_for, 'none') FROM user_tables WHERE table_name = 'H'");
    exec(&s, "ALTER TABLE h MOVE COMPRESS FOR QUERY LOW");
    assert_eq!(compress_for(&s), "QUERY LOW");
    assert!(blocks_below_hwm(&s, "H") * 2 < row_blocks, "compressed into fewer blocks");
    assert_eq!(sorted_rows(&s, &format!("{ALL} h")), want(&s));
    exec(&s, "UPDATE h SET name = 'x' WHERE id = 11");
    exec(&s, "DELETE FROM h WHERE id BETWEEN 100 AND 199");
    exec(&s, "ALTER TABLE h MOVE COMPRESS FOR ARCHIVE HIGH");
    assert_eq!(compress_for(&s), "ARCHIVE HIGH");
    exec(&s, "ALTER TABLE h MOVE");
    assert_eq!(compress_for(&s), "ARCHIVE HIGH", "MOVE alone keeps the level");
    assert_eq!(int(&s, "SELECT COUNT(*) FROM h WHERE name = 'x'"), 1);
    exec(&s, "ALTER TABLE h MOVE NOCOMPRESS");
    assert_eq!(compress_for(&s), "none");
    let expected = sorted_rows(
        &s,
        "SELECT id, CASE WHEN id = 11 THEN 'x' ELSE name END, amount, born, flag, note FROM t WHERE MOD(id, 10) <> 0 AND id NOT BETWEEN 100 AND 199",
    );
    assert_eq!(sorted_rows(&s, &format!("{ALL} h")), expected);
    // The index was rebuilt on the new rowids each time: it finds every row.
    assert_eq!(
        int(&s, "SELECT /*+ INDEX(h h_id) */ COUNT(name) FROM h WHERE id BETWEEN 1 AND 20000"),
        expected.len() as i64
    );
    // The moved table takes DML as any other.
    exec(&s, "UPDATE h SET amount = 0 WHERE id < 50");
    exec(&s, "COMMIT");
    // What MOVE does not take, and a table another transaction is changing, fail clearly.
    let e = fail(&s, "ALTER TABLE h MOVE TABLESPACE users").to_string();
    assert!(e.contains("TABLESPACE"), "{e}");
    let e = fail(&s, "ALTER TABLE h MOVE COMPRESS FOR QUERY MEDIUM").to_string();
    assert!(e.contains("QUERY MEDIUM"), "{e}");
    let w = db.session();
    manual(&w);
    exec(&w, "DELETE FROM h WHERE id = 1");
    let e = fail(&s, "ALTER TABLE h MOVE COMPRESS FOR QUERY LOW").to_string();
    assert!(e.contains("resource busy"), "{e}");
    exec(&w, "ROLLBACK");
    assert_eq!(compress_for(&s), "none");
}

#[test]
fn a_moved_table_survives_a_crash() {
    let (_tmp, dir) = made_db(options(8192, "32M"), |s| {
        customers_like(s, 5000);
        exec(s, "CREATE TABLE h AS SELECT * FROM t");
    });
    let db = crash_after(&dir, options(8192, "32M"), 5, |db| {
        let s = db.session();
        exec(&s, "DELETE FROM h WHERE id > 4000");
        exec(&s, "ALTER TABLE h MOVE COMPRESS FOR QUERY HIGH");
    });
    let s = db.session();
    assert_eq!(scalar(&s, "SELECT compress_for FROM user_tables WHERE table_name = 'H'"), "QUERY HIGH");
    assert_eq!(sorted_rows(&s, &format!("{ALL} h")), sorted_rows(&s, &format!("{ALL} t WHERE id <= 4000")));
}
