//! MERGE, checked against SQLite (which has no MERGE) running the same change as the
//! statements it stands for, on random tables with NULLs and repeated keys; then
//! Oracle's errors, and MERGE with what a table holds beside its rows (indexes,
//! constraints, identity columns, sequences).

mod common;

use common::sqlite::{both_tables, fill_both, runner, sqlite_lines, table_rows};
use common::*;
use proptest::prelude::*;

/// (lioscope's MERGE, the SQLite statements that make the same change: a copy `a0` of
/// `a` as the MERGE found it is made first and dropped after).
const MERGES: &[(&str, &str)] = &[
    (
        "MERGE INTO a USING b ON (a.k = b.k) \
         WHEN MATCHED THEN UPDATE SET v = b.v, n = a.n + b.n \
         WHEN NOT MATCHED THEN INSERT (k, v, n) VALUES (b.k, b.v, b.n)",
        "UPDATE a SET v = (SELECT b.v FROM b WHERE b.k = a.k), n = a.n + (SELECT b.n FROM b WHERE b.k = a.k) \
         WHERE EXISTS (SELECT 1 FROM b WHERE b.k = a.k); \
         INSERT INTO a SELECT k, v, n FROM b WHERE NOT EXISTS (SELECT 1 FROM a0 WHERE a0.k = b.k);",
    ),
    (
        "MERGE INTO a USING (SELECT k, MAX(v) v, SUM(n) n FROM b GROUP BY k) s ON (a.k = s.k) \
         WHEN MATCHED THEN UPDATE SET n = s.n WHERE a.v <> s.v DELETE WHERE a.n < 0 \
         WHEN NOT MATCHED THEN INSERT VALUES (s.k, s.v, s.n) WHERE s.n > 0",
        "CREATE TEMP TABLE s AS SELECT k, MAX(v) v, SUM(n) n FROM b GROUP BY k; \
         CREATE TEMP TABLE u AS SELECT a.rowid r FROM a JOIN s ON a.k = s.k WHERE a.v <> s.v; \
         UPDATE a SET n = (SELECT s.n FROM s WHERE s.k = a.k) WHERE rowid IN (SELECT r FROM u); \
         DELETE FROM a WHERE rowid IN (SELECT r FROM u) AND n < 0; \
         INSERT INTO a SELECT k, v, n FROM s WHERE n > 0 AND NOT EXISTS (SELECT 1 FROM a0 WHERE a0.k = s.k); \
         DROP TABLE s; DROP TABLE u;",
    ),
    // ON with a condition beside the key, and one on the source alone.
    (
        "MERGE INTO a t USING b ON (t.k = b.k AND t.n < b.n AND b.v IS NOT NULL) \
         WHEN MATCHED THEN UPDATE SET t.v = b.v",
        "UPDATE a SET v = (SELECT b.v FROM b WHERE a.k = b.k AND a.n < b.n AND b.v IS NOT NULL) \
         WHERE EXISTS (SELECT 1 FROM b WHERE a.k = b.k AND a.n < b.n AND b.v IS NOT NULL);",
    ),
    // No key: every pair is tried. INSERT only: nothing matched is changed.
    (
        "MERGE INTO a USING b ON (a.n > b.n) WHEN NOT MATCHED THEN INSERT (k, n) VALUES (b.k + 10, b.n)",
        "INSERT INTO a (k, n) SELECT b.k + 10, b.n FROM b WHERE NOT EXISTS (SELECT 1 FROM a0 WHERE a0.n > b.n);",
    ),
    // A source reading the target sees it as the MERGE found it.
    (
        "MERGE INTO a USING (SELECT k + 1 k, COUNT(*) c FROM a GROUP BY k) s ON (a.k = s.k) \
         WHEN MATCHED THEN UPDATE SET n = s.c WHEN NOT MATCHED THEN INSERT (k, n) VALUES (s.k, -s.c)",
        "CREATE TEMP TABLE s AS SELECT k + 1 k, COUNT(*) c FROM a GROUP BY k; \
         UPDATE a SET n = (SELECT s.c FROM s WHERE s.k = a.k) WHERE EXISTS (SELECT 1 FROM s WHERE s.k = a.k); \
         INSERT INTO a (k, n) SELECT s.k, -s.c FROM s WHERE NOT EXISTS (SELECT 1 FROM a0 WHERE a0.k = s.k); \
         DROP TABLE s;",
    ),
];

/// Whether a row of `a` meets more than one row of `b` by `on` (SQLite's text of ON,
/// in `a` and `b`): the MERGE must then fail with ORA-30926.
fn unstable(conn: &rusqlite::Connection, on: &str) -> bool {
    let sql =
        format!("SELECT COUNT(*) FROM (SELECT a.rowid FROM a JOIN b ON {on} GROUP BY a.rowid HAVING COUNT(*) > 1)");
    sqlite_lines(conn, &sql) != ["0"]
}

#[test]
fn merges_change_what_the_statements_they_stand_for_change_in_sqlite() {
    let (_dir, _path, db) = db();
    let s = db.session();
    let conn = both_tables(&s);
    let order = "SELECT k, v, n FROM a ORDER BY k NULLS LAST, v NULLS LAST, n NULLS LAST";
    let ons = ["a.k = b.k", "", "a.k = b.k AND a.n < b.n AND b.v IS NOT NULL", "", ""];
    runner(file!(), 32)
        .run(&(table_rows(4, true, 12), table_rows(4, true, 12)), |(a, b)| {
            for ((ours, theirs), on) in MERGES.iter().zip(ons) {
                fill_both(&s, &conn, &a, &b);
                let before = lines(&s, order);
                match s.execute(ours) {
                    Err(e) if e.to_string().contains("ORA-30926") => {
                        prop_assert!(!on.is_empty() && unstable(&conn, on), "{ours}: {e} on a={a:?} b={b:?}");
                        prop_assert_eq!(lines(&s, order), before, "a failed MERGE changed nothing");
                        continue;
                    }
                    Err(e) => return Err(TestCaseError::fail(format!("{ours}: {e} on a={a:?} b={b:?}"))),
                    Ok(_) => prop_assert!(on.is_empty() || !unstable(&conn, on), "{ours} on a={a:?} b={b:?}"),
                }
                let script = format!("CREATE TEMP TABLE a0 AS SELECT * FROM a; {theirs} DROP TABLE a0;");
                conn.execute_batch(&script).unwrap_or_else(|e| panic!("{script}\n  failed in SQLite: {e}"));
                prop_assert_eq!(lines(&s, order), sqlite_lines(&conn, order), "{} on a={:?} b={:?}", ours, a, b);
            }
            Ok(())
        })
        .unwrap();
}

#[test]
fn merge_counts_its_rows_and_refuses_as_oracle_does() {
    let (_dir, _path, db) = db();
    let s = db.session();
    exec(&s, "CREATE TABLE t (id NUMBER PRIMARY KEY, v VARCHAR2(10), n NUMBER NOT NULL)");
    exec(&s, "INSERT INTO t VALUES (1, 'a', 10), (2, 'b', 20), (3, 'c', 30)");
    exec(&s, "CREATE TABLE s (id NUMBER, v VARCHAR2(10), n NUMBER)");
    exec(&s, "INSERT INTO s VALUES (2, 'B', 200), (3, 'C', 300), (4, 'D', 400)");
    let merged = s
        .execute(
            "MERGE INTO t USING s ON (t.id = s.id) WHEN MATCHED THEN UPDATE SET v = s.v \
             WHEN NOT MATCHED THEN INSERT VALUES (s.id, s.v, s.n)",
        )
        .unwrap();
    assert_eq!((merged.rows_affected, merged.message.as_deref()), (3, Some("3 rows merged.")));
    assert_eq!(lines(&s, "SELECT id, v, n FROM t ORDER BY id"), ["1|a|10", "2|B|20", "3|C|30", "4|D|400"]);
    // The primary key's index took the inserted row: a second MERGE finds it.
    assert_eq!(lines(&s, "SELECT v FROM t WHERE id = 4"), ["D"]);
    let e = error(&s, "MERGE INTO t USING s ON (t.id = s.id) WHEN MATCHED THEN UPDATE SET id = s.id");
    assert!(e.contains("ORA-38104"), "{e}");
    let e = error(&s, "MERGE INTO t USING s ON (t.id = s.id) WHEN NOT MATCHED THEN INSERT VALUES (t.id, s.v, s.n)");
    assert!(e.contains("ORA-38101"), "{e}");
    let e = error(&s, "MERGE INTO t USING s ON (t.id = s.id) WHEN MATCHED THEN UPDATE SET v = s.v WHERE n > 0");
    assert!(e.contains("ORA-00918"), "{e}");
    let e = error(&s, "MERGE INTO t USING s ON (t.id = s.id) WHEN NOT MATCHED THEN INSERT VALUES (s.id, s.v)");
    assert!(e.contains("2 values for 3 columns"), "{e}");
    // A NOT NULL column, a unique key: the whole MERGE fails and changes nothing.
    exec(&s, "INSERT INTO s VALUES (5, 'E', NULL)");
    let e = error(
        &s,
        "MERGE INTO t USING s ON (t.id = s.id) WHEN MATCHED THEN UPDATE SET v = 'x' \
         WHEN NOT MATCHED THEN INSERT VALUES (s.id, s.v, s.n)",
    );
    assert!(e.contains("ORA-01400"), "{e}");
    let e = error(&s, "MERGE INTO t USING s ON (t.id = s.id + 1) WHEN NOT MATCHED THEN INSERT VALUES (s.id, s.v, 0)");
    assert!(e.contains("ORA-00001"), "{e}");
    assert_eq!(lines(&s, "SELECT id, v FROM t ORDER BY id"), ["1|a", "2|B", "3|C", "4|D"]);
    // Two source rows for one target row.
    exec(&s, "INSERT INTO s VALUES (1, 'A', 1), (1, 'Z', 1)");
    let e = error(&s, "MERGE INTO t USING s ON (t.id = s.id) WHEN MATCHED THEN UPDATE SET v = s.v");
    assert!(e.contains("ORA-30926"), "{e}");
    // ... unless UPDATE's WHERE leaves one of them.
    exec(&s, "MERGE INTO t USING s ON (t.id = s.id) WHEN MATCHED THEN UPDATE SET v = s.v WHERE s.v = 'Z'");
    assert_eq!(lines(&s, "SELECT v FROM t WHERE id = 1"), ["Z"]);
    let e = error(&s, "MERGE INTO t USING s ON (t.id = s.id) WHEN MATCHED THEN DELETE");
    assert!(e.contains("not supported"), "{e}");
}

#[test]
fn merge_fills_identity_columns_and_reads_sequences() {
    let (_dir, _path, db) = db();
    let s = db.session();
    exec(&s, "CREATE TABLE t (id NUMBER GENERATED ALWAYS AS IDENTITY, code VARCHAR2(5), seen NUMBER)");
    exec(&s, "CREATE SEQUENCE q START WITH 100");
    exec(&s, "INSERT INTO t (code, seen) VALUES ('a', 0)");
    exec(
        &s,
        "MERGE INTO t USING (SELECT 'a' code FROM dual UNION ALL SELECT 'b' FROM dual UNION ALL SELECT 'c' FROM dual) s \
         ON (t.code = s.code) WHEN MATCHED THEN UPDATE SET seen = seen + 1 \
         WHEN NOT MATCHED THEN INSERT (code, seen) VALUES (s.code, q.NEXTVAL)",
    );
    assert_eq!(lines(&s, "SELECT id, code, seen FROM t ORDER BY id"), ["1|a|1", "2|b|100", "3|c|101"]);
}

/// A MERGE of a few source rows into a large table finds its rows through the index on
/// ON's key, reading a few blocks rather than the table, and changes what a full scan
/// would (the same MERGE run with no index to compare).
#[test]
fn a_small_merge_probes_the_targets_index() {
    let (_dir, _path, db) = db();
    let s = db.session();
    for t in ["indexed", "plain"] {
        exec(&s, &format!("CREATE TABLE {t} (id NUMBER, grp NUMBER, pad VARCHAR2(100))"));
        exec(
            &s,
            &format!(
                "INSERT INTO {t} SELECT LEVEL, MOD(LEVEL, 7), RPAD('x', 100, 'x') FROM dual CONNECT BY LEVEL <= 20000"
            ),
        );
    }
    exec(&s, "CREATE INDEX indexed_id ON indexed (id)");
    exec(&s, "CREATE TABLE src (id NUMBER, grp NUMBER)");
    exec(&s, "INSERT INTO src VALUES (5, 100), (19999, 101), (30000, 102), (NULL, 103), (5, 104)");
    let merge = |t: &str| {
        format!(
            "MERGE INTO {t} USING src ON ({t}.id = src.id AND src.grp > 100) \
             WHEN MATCHED THEN UPDATE SET grp = src.grp \
             WHEN NOT MATCHED THEN INSERT (id, grp) VALUES (src.id, src.grp)"
        )
    };
    let blocks = int(&s, "SELECT blocks_below_hwm FROM user_segments WHERE segment_name = 'INDEXED'");
    let before = mystat(&s, "session logical reads");
    exec(&s, &merge("indexed"));
    let read = mystat(&s, "session logical reads") - before;
    assert!(read < blocks / 4, "{read} logical reads for a table of {blocks} blocks");
    exec(&s, &merge("plain"));
    let rows = "SELECT id, grp FROM {} WHERE grp >= 100 OR id IS NULL ORDER BY id, grp";
    let indexed = lines(&s, &rows.replace("{}", "indexed"));
    assert_eq!(indexed, lines(&s, &rows.replace("{}", "plain")));
    assert_eq!(indexed, ["5|100", "5|104", "19999|101", "30000|102", "|103"]);
    assert_eq!(lines(&s, "SELECT COUNT(*) FROM indexed WHERE id = 5"), ["2"], "the unmatched (5, 100) was inserted");
}

/// DELETE WHERE removes a row whole: its entries in every index (not only those on the
/// columns SET assigns) and, through foreign keys, what refers to it.
#[test]
fn delete_where_removes_index_entries_and_checks_children() {
    let (_dir, _path, db) = db();
    let s = db.session();
    exec(&s, "CREATE TABLE t (k NUMBER PRIMARY KEY, v NUMBER)");
    exec(&s, "INSERT INTO t VALUES (1, 10), (2, 20)");
    exec(&s, "CREATE TABLE s (k NUMBER, v NUMBER)");
    exec(&s, "INSERT INTO s VALUES (1, 0)");
    exec(&s, "MERGE INTO t USING s ON (t.k = s.k) WHEN MATCHED THEN UPDATE SET t.v = s.v DELETE WHERE t.v = 0");
    assert_eq!(lines(&s, "SELECT COUNT(*) FROM t WHERE k = 1"), ["0"], "by the primary key's index");
    assert_eq!(lines(&s, "SELECT /*+ FULL(t) */ COUNT(*) FROM t"), ["1"]);
    exec(&s, "INSERT INTO t VALUES (1, 11)");
    exec(&s, "CREATE TABLE p (id NUMBER PRIMARY KEY, x NUMBER)");
    exec(&s, "INSERT INTO p VALUES (1, 0)");
    exec(&s, "CREATE TABLE c (pid NUMBER REFERENCES p (id))");
    exec(&s, "INSERT INTO c VALUES (1)");
    let e = error(
        &s,
        "MERGE INTO p USING (SELECT 1 id FROM dual) d ON (p.id = d.id) \
         WHEN MATCHED THEN UPDATE SET p.x = 1 DELETE WHERE p.x = 1",
    );
    assert!(e.contains("ORA-02292"), "{e}");
    assert_eq!(lines(&s, "SELECT id, x FROM p"), ["1|0"]);
}

/// SET names a column of the target, qualified by its name or alias only.
#[test]
fn set_names_the_targets_columns() {
    let (_dir, _path, db) = db();
    let s = db.session();
    exec(&s, "CREATE TABLE t (\"A.B\" NUMBER, b NUMBER)");
    exec(&s, "INSERT INTO t VALUES (1, 2)");
    exec(&s, "UPDATE t SET \"A.B\" = 9");
    exec(&s, "UPDATE t x SET x.b = 8");
    assert_eq!(lines(&s, "SELECT \"A.B\", b FROM t"), ["9|8"]);
    let e = error(&s, "UPDATE t SET nosuch.b = 3");
    assert!(e.contains("ORA-00904"), "{e}");
    exec(&s, "CREATE TABLE s (b NUMBER)");
    exec(&s, "INSERT INTO s VALUES (8)");
    let e = error(&s, "MERGE INTO t USING s ON (t.b = s.b) WHEN MATCHED THEN UPDATE SET s.b = 7");
    assert!(e.contains("ORA-00904"), "{e}");
    let e = error(&s, "UPDATE t SET b = 1, b = 2");
    assert!(e.contains("ORA-00957"), "{e}");
}
