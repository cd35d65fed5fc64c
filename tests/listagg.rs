//! LISTAGG through SQL, checked against SQLite's `group_concat(... ORDER BY ...)` (an
//! independent engine) on random tables with NULLs and repeated values: the WITHIN GROUP
//! order ascending and descending with Oracle's NULL placement, DISTINCT, numbers as
//! text, GROUP BY and a join; then the limit of 4000 bytes and the errors.

mod common;

use common::*;
use proptest::prelude::*;
use proptest::test_runner::{Config, FileFailurePersistence, TestRunner};

/// Rows of `t (k, v, n)`: a group, a short string or NULL, a number or NULL.
fn rows() -> impl Strategy<Value = Vec<(i64, Option<String>, Option<i64>)>> {
    let v = proptest::option::weighted(0.8, "[abc]{1,3}");
    let n = proptest::option::weighted(0.8, -5i64..5);
    proptest::collection::vec((0i64..4, v, n), 0..40)
}

/// (lioscope's query, SQLite's): each group's values joined, in an order that leaves no
/// ties between different texts.
const QUERIES: &[(&str, &str)] = &[
    (
        "SELECT k, LISTAGG(v, ',') WITHIN GROUP (ORDER BY v, n) FROM t GROUP BY k ORDER BY k",
        "SELECT k, group_concat(v, ',' ORDER BY v NULLS LAST, n NULLS LAST) FROM t GROUP BY k ORDER BY k",
    ),
    (
        "SELECT k, LISTAGG(v || '/' || n, '; ') WITHIN GROUP (ORDER BY n DESC, v) FROM t GROUP BY k ORDER BY k",
        "SELECT k, group_concat(coalesce(v, '') || '/' || coalesce(n, ''), '; ' ORDER BY n DESC NULLS FIRST, v NULLS LAST) \
         FROM t GROUP BY k ORDER BY k",
    ),
    (
        "SELECT LISTAGG(n, '|') WITHIN GROUP (ORDER BY n NULLS FIRST) FROM t",
        "SELECT group_concat(n, '|' ORDER BY n NULLS FIRST) FROM t",
    ),
    (
        "SELECT k, LISTAGG(DISTINCT v, ',') WITHIN GROUP (ORDER BY v DESC) FROM t GROUP BY k ORDER BY k",
        "SELECT k, group_concat(DISTINCT v ORDER BY v DESC) FROM t GROUP BY k ORDER BY k",
    ),
    (
        "SELECT a.k, LISTAGG(b.v, '') WITHIN GROUP (ORDER BY b.v) FROM t a JOIN t b ON a.n = b.n \
         WHERE a.k = 0 GROUP BY a.k",
        "SELECT a.k, group_concat(b.v, '' ORDER BY b.v) FROM t a JOIN t b ON a.n = b.n WHERE a.k = 0 GROUP BY a.k",
    ),
];

#[test]
fn listagg_joins_values_in_order_as_sqlite_group_concat_does() {
    let (_dir, _path, db) = db();
    let s = db.session();
    exec(&s, "CREATE TABLE t (k NUMBER, v VARCHAR2(10), n NUMBER)");
    let conn = rusqlite::Connection::open_in_memory().unwrap();
    conn.execute_batch("CREATE TABLE t (k INTEGER, v TEXT, n INTEGER)").unwrap();
    // A failing case's seed is saved in tests/listagg.proptest-regressions and run first
    // next time; PROPTEST_CASES sets how many cases run.
    let mut runner = TestRunner::new(Config {
        cases: cases_or(60),
        source_file: Some(file!()),
        failure_persistence: Some(Box::new(FileFailurePersistence::WithSource("proptest-regressions"))),
        ..Config::default()
    });
    runner
        .run(&rows(), |rows| {
            exec(&s, "TRUNCATE TABLE t");
            conn.execute("DELETE FROM t", []).unwrap();
            for (k, v, n) in &rows {
                let text = |x: Option<String>| x.unwrap_or_else(|| "NULL".into());
                let (v, n) = (text(v.as_ref().map(|v| format!("'{v}'"))), text(n.map(|n| n.to_string())));
                exec(&s, &format!("INSERT INTO t VALUES ({k}, {v}, {n})"));
                conn.execute(&format!("INSERT INTO t VALUES ({k}, {v}, {n})"), []).unwrap();
            }
            for (ours, theirs) in QUERIES {
                let got = lines(&s, ours);
                let mut statement = conn.prepare(theirs).unwrap();
                let columns = statement.column_count();
                let expected: Vec<String> = statement
                    .query_map([], |r| {
                        Ok((0..columns)
                            .map(|i| match r.get::<_, rusqlite::types::Value>(i).unwrap() {
                                rusqlite::types::Value::Integer(i) => i.to_string(),
                                rusqlite::types::Value::Text(t) => t,
                                _ => String::new(),
                            })
                            .collect::<Vec<_>>()
                            .join("|"))
                    })
                    .unwrap()
                    .map(Result::unwrap)
                    .collect();
                prop_assert_eq!(&got, &expected, "{} on {:?}", ours, rows);
            }
            Ok(())
        })
        .unwrap();
}

#[test]
fn listagg_refuses_what_oracle_refuses() {
    let (_dir, _path, db) = db();
    let s = db.session();
    exec(&s, "CREATE TABLE t (k NUMBER, v VARCHAR2(100))");
    exec(&s, "INSERT INTO t SELECT LEVEL, RPAD('x', 100, 'x') FROM dual CONNECT BY LEVEL <= 50");
    // 40 values of 100 bytes and 39 commas: 4,039 bytes, over VARCHAR2's 4,000.
    assert_eq!(int(&s, "SELECT LENGTH(LISTAGG(v, ',')) FROM t WHERE k <= 39"), 39 * 101 - 1);
    let e = error(&s, "SELECT LISTAGG(v, ',') FROM t WHERE k <= 40");
    assert!(e.contains("result of string concatenation is too long"), "{e}");
    let e = error(&s, "SELECT LISTAGG(v, v) FROM t");
    assert!(e.contains("must be a constant"), "{e}");
    let e = error(&s, "SELECT LISTAGG(v, ',' ON OVERFLOW TRUNCATE '...' WITH COUNT) FROM t");
    assert!(e.contains("ON OVERFLOW TRUNCATE"), "{e}");
    let e = error(&s, "SELECT LISTAGG(v, ',' ON OVERFLOW ERROR) FROM t");
    assert!(e.contains("result of string concatenation is too long"), "{e}");
    let e = error(&s, "SELECT LISTAGG(COUNT(*)) FROM t");
    assert!(e.contains("cannot be nested"), "{e}");
    let e = error(&s, "SELECT COUNT(*) WITHIN GROUP (ORDER BY k) FROM t");
    assert!(e.contains("not supported"), "{e}");
    // Keys of two types under one expression are refused, whatever their count.
    let e = error(&s, "SELECT LISTAGG(k) WITHIN GROUP (ORDER BY CASE WHEN k > 25 THEN SYSDATE ELSE k END) FROM t");
    assert!(e.contains("inconsistent datatypes"), "{e}");
    // A NULL delimiter joins with nothing, as an empty one.
    assert_eq!(lines(&s, "SELECT LISTAGG(k, NULL) WITHIN GROUP (ORDER BY k) FROM t WHERE k < 4"), ["123"]);
}
