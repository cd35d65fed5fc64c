//! The differential tests' other engine: SQLite through rusqlite, its rows printed as
//! `lines` prints lioscope's, and statements run on both engines alike.

use lioscope::Session;
use proptest::prelude::*;
use proptest::test_runner::{Config, FileFailurePersistence, TestCaseError, TestRunner};

/// A row of the differential tests' tables `a` and `b` `(k, v, n)`: a small key, a
/// short string, a number, each NULL at times.
pub type Row = (Option<i64>, Option<String>, Option<i64>);

/// Rows of a table `(k, v, n)`, at most `most` of them: a key below `keys` (NULL at times
/// when `null_keys`), a short string or NULL, a number or NULL, values repeating.
pub fn table_rows(keys: i64, null_keys: bool, most: usize) -> impl Strategy<Value = Vec<Row>> + Clone {
    let null = proptest::bool::weighted(if null_keys { 0.1 } else { 0.0 });
    let k = (0..keys, null).prop_map(|(k, null)| (!null).then_some(k));
    let v = proptest::option::weighted(0.8, "[ab]{1,2}");
    let n = proptest::option::weighted(0.8, -3i64..3);
    proptest::collection::vec((k, v, n), 0..most)
}

/// Checks each of `queries` (lioscope's text, SQLite's) against SQLite: the tables `a`
/// and `b` `(k, v, n)` are filled alike in both engines with `rows`, a case at a time,
/// and every query must give the same rows in the same order. A failing case's seed is
/// saved in `source_file`'s `.proptest-regressions` and run first next time;
/// PROPTEST_CASES sets how many cases run (`cases` when unset).
pub fn answers_as_sqlite(
    source_file: &'static str,
    cases: u32,
    rows: impl Strategy<Value = Vec<Row>> + Clone,
    queries: &[(&str, &str)],
) {
    answers_as_sqlite_with(source_file, cases, rows, &[], queries);
}

/// [`answers_as_sqlite`], with `setup` (lioscope's statements: indexes on the tables)
/// run once the tables are made.
pub fn answers_as_sqlite_with(
    source_file: &'static str,
    cases: u32,
    rows: impl Strategy<Value = Vec<Row>> + Clone,
    setup: &[&str],
    queries: &[(&str, &str)],
) {
    let (_dir, _path, db) = super::db();
    let s = db.session();
    let conn = both_tables(&s);
    for statement in setup {
        lioscope_testkit::exec(&s, statement);
    }
    runner(source_file, cases)
        .run(&(rows.clone(), rows), |(a, b)| {
            fill_both(&s, &conn, &a, &b);
            for (ours, theirs) in queries {
                let got = super::lines(&s, ours);
                let expected = sqlite_lines(&conn, theirs);
                prop_assert_eq!(&got, &expected, "{} on a={:?} b={:?}", ours, a, b);
            }
            Ok(())
        })
        .unwrap();
}

/// Checks each of `statements` (lioscope's text, SQLite's: an UPDATE or DELETE of `a`,
/// which SQLite's may reach through statements before it) against SQLite as
/// [`answers_as_sqlite`] checks queries: each runs on the tables filled anew with a
/// case's rows, and must leave the same rows in `a` and report as many changed as
/// SQLite's last change.
pub fn changes_as_sqlite(
    source_file: &'static str,
    cases: u32,
    rows: impl Strategy<Value = Vec<Row>> + Clone,
    statements: &[(&str, &str)],
) {
    let (_dir, _path, db) = super::db();
    let s = db.session();
    let conn = both_tables(&s);
    // Each statement runs in a transaction that has changed a row before it, so that its
    // reads see the transaction's own changes (those of earlier statements only).
    lioscope_testkit::exec(&s, "CREATE TABLE earlier (x NUMBER)");
    s.set_autocommit(false);
    let order = "SELECT k, v, n FROM a ORDER BY k NULLS LAST, v NULLS LAST, n NULLS LAST";
    runner(source_file, cases)
        .run(&(rows.clone(), rows), |(a, b)| {
            for (ours, theirs) in statements {
                fill_both(&s, &conn, &a, &b);
                lioscope_testkit::exec(&s, "INSERT INTO earlier VALUES (1)");
                let changed = s.execute(ours).map_err(|e| TestCaseError::fail(format!("{ours}: {e}")))?.rows_affected;
                conn.execute_batch(theirs).unwrap_or_else(|e| panic!("{theirs}\n  failed in SQLite: {e}"));
                let expected = conn.changes();
                prop_assert_eq!(changed, expected, "rows changed by {} on a={:?} b={:?}", ours, a, b);
                prop_assert_eq!(super::lines(&s, order), sqlite_lines(&conn, order), "{} on a={:?} b={:?}", ours, a, b);
                lioscope_testkit::exec(&s, "COMMIT");
            }
            Ok(())
        })
        .unwrap();
}

/// The tables `a` and `b` `(k, v, n)`, made in lioscope's session and in a new SQLite
/// database in memory, whose connection it gives.
pub fn both_tables(s: &Session) -> rusqlite::Connection {
    let conn = rusqlite::Connection::open_in_memory().unwrap();
    for t in ["a", "b"] {
        lioscope_testkit::exec(s, &format!("CREATE TABLE {t} (k NUMBER, v VARCHAR2(10), n NUMBER)"));
        conn.execute_batch(&format!("CREATE TABLE {t} (k INTEGER, v TEXT, n INTEGER)")).unwrap();
    }
    conn
}

/// The runner of a differential test: PROPTEST_CASES cases (`cases` when unset), a
/// failing one's seed saved beside `source_file`.
pub fn runner(source_file: &'static str, cases: u32) -> TestRunner {
    TestRunner::new(Config {
        cases: lioscope_testkit::cases_or(cases),
        source_file: Some(source_file),
        failure_persistence: Some(Box::new(FileFailurePersistence::WithSource("proptest-regressions"))),
        ..Config::default()
    })
}

/// Fills tables `a` and `b` with rows `a` and `b` in both engines, emptying them first.
pub fn fill_both(s: &Session, conn: &rusqlite::Connection, a: &[Row], b: &[Row]) {
    for (t, rows) in [("a", a), ("b", b)] {
        lioscope_testkit::exec(s, &format!("TRUNCATE TABLE {t}"));
        conn.execute(&format!("DELETE FROM {t}"), []).unwrap();
        for (k, v, n) in rows {
            let (k, v, n) = (literal(k.as_ref(), false), literal(v.as_ref(), true), literal(n.as_ref(), false));
            exec_both(s, conn, &format!("INSERT INTO {t} VALUES ({k}, {v}, {n})"));
        }
    }
}

/// Runs `sql` in lioscope's session and on SQLite's connection.
pub fn exec_both(s: &Session, conn: &rusqlite::Connection, sql: &str) {
    lioscope_testkit::exec(s, sql);
    conn.execute(sql, []).unwrap_or_else(|e| panic!("{sql}\n  failed in SQLite: {e}"));
}

/// SQLite's rows of `sql`, each as its values' text joined by `|`, NULL as nothing.
pub fn sqlite_lines(conn: &rusqlite::Connection, sql: &str) -> Vec<String> {
    let mut statement = conn.prepare(sql).unwrap_or_else(|e| panic!("{sql}\n  failed in SQLite: {e}"));
    let columns = statement.column_count();
    statement
        .query_map([], |r| Ok((0..columns).map(|i| text(r.get(i).unwrap())).collect::<Vec<_>>().join("|")))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

/// A value as `lines` prints it: NULL as nothing.
fn text(v: rusqlite::types::Value) -> String {
    match v {
        rusqlite::types::Value::Integer(i) => i.to_string(),
        rusqlite::types::Value::Text(t) => t,
        rusqlite::types::Value::Real(r) => r.to_string(),
        _ => String::new(),
    }
}

/// `x` as an SQL literal: quoted when `quoted`, NULL when absent.
pub fn literal<T: std::fmt::Display>(x: Option<T>, quoted: bool) -> String {
    match x {
        None => "NULL".into(),
        Some(x) if quoted => format!("'{x}'"),
        Some(x) => x.to_string(),
    }
}
