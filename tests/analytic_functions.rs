//! Analytic functions (`... OVER (PARTITION BY ... ORDER BY ...)`), checked against
//! SQLite's window functions (an independent engine with the same default window) on
//! random tables with NULLs and repeated rows: ROW_NUMBER, RANK, DENSE_RANK, NTILE, LAG,
//! LEAD, FIRST_VALUE, LAST_VALUE and the aggregates over a running or whole-partition
//! window and over ROWS and RANGE frames, over rows and over groups, in an inline view
//! (top-N); then the refusals.

mod common;

use common::sqlite::{answers_as_sqlite, table_rows};
use common::*;

/// (lioscope's query, SQLite's): the windows' ORDER BYs say where NULLs go (Oracle puts
/// them last ascending, SQLite first), and where rows tie in a window's order they are
/// equal in every column, so either engine's choice among them shows the same.
const QUERIES: &[(&str, &str)] = &[
    // Top-N by a ranking function (WINDOW SORT PUSHED RANK): one partition, whose sort
    // keeps only the rows that can rank within N, and several.
    (
        "SELECT * FROM (SELECT k, v, n, ROW_NUMBER() OVER (ORDER BY n DESC, k, v) rn FROM a) WHERE rn <= 3 \
         ORDER BY rn",
        "SELECT * FROM (SELECT k, v, n, ROW_NUMBER() OVER (ORDER BY n DESC NULLS FIRST, k NULLS LAST, v NULLS LAST) rn \
         FROM a) WHERE rn <= 3 ORDER BY rn",
    ),
    (
        "SELECT * FROM (SELECT k, v, n, RANK() OVER (ORDER BY n) r FROM a) WHERE r < 3 ORDER BY 1, 2, 3",
        "SELECT * FROM (SELECT k, v, n, RANK() OVER (ORDER BY n NULLS LAST) r FROM a) WHERE r < 3 \
         ORDER BY 1 NULLS LAST, 2 NULLS LAST, 3 NULLS LAST",
    ),
    (
        "SELECT * FROM (SELECT k, v, n, DENSE_RANK() OVER (ORDER BY k) r FROM a) WHERE r <= 2 ORDER BY 1, 2, 3",
        "SELECT * FROM (SELECT k, v, n, DENSE_RANK() OVER (ORDER BY k NULLS LAST) r FROM a) WHERE r <= 2 \
         ORDER BY 1 NULLS LAST, 2 NULLS LAST, 3 NULLS LAST",
    ),
    (
        "SELECT * FROM (SELECT k, v, n, ROW_NUMBER() OVER (PARTITION BY k ORDER BY n, v) rn FROM a) WHERE rn = 1 \
         ORDER BY 1, 2, 3",
        "SELECT * FROM (SELECT k, v, n, ROW_NUMBER() OVER (PARTITION BY k ORDER BY n NULLS LAST, v NULLS LAST) rn \
         FROM a) WHERE rn = 1 ORDER BY 1 NULLS LAST, 2 NULLS LAST, 3 NULLS LAST",
    ),
    (
        "SELECT k, v, n, RANK() OVER (PARTITION BY k ORDER BY n) FROM a ORDER BY 1, 2, 3, 4",
        "SELECT k, v, n, RANK() OVER (PARTITION BY k ORDER BY n NULLS LAST) FROM a \
         ORDER BY 1 NULLS LAST, 2 NULLS LAST, 3 NULLS LAST, 4",
    ),
    (
        "SELECT k, v, DENSE_RANK() OVER (ORDER BY v DESC) FROM a ORDER BY 1, 2, 3",
        "SELECT k, v, DENSE_RANK() OVER (ORDER BY v DESC NULLS FIRST) FROM a ORDER BY 1 NULLS LAST, 2 NULLS LAST, 3",
    ),
    (
        "SELECT k, v, n, ROW_NUMBER() OVER (PARTITION BY v ORDER BY k, n) FROM a ORDER BY 1, 2, 3, 4",
        "SELECT k, v, n, ROW_NUMBER() OVER (PARTITION BY v ORDER BY k NULLS LAST, n NULLS LAST) FROM a \
         ORDER BY 1 NULLS LAST, 2 NULLS LAST, 3 NULLS LAST, 4",
    ),
    (
        "SELECT k, v, n, SUM(n) OVER (PARTITION BY k ORDER BY v), COUNT(*) OVER (PARTITION BY k), \
         COUNT(n) OVER () FROM a ORDER BY 1, 2, 3, 4",
        "SELECT k, v, n, SUM(n) OVER (PARTITION BY k ORDER BY v NULLS LAST), COUNT(*) OVER (PARTITION BY k), \
         COUNT(n) OVER () FROM a ORDER BY 1 NULLS LAST, 2 NULLS LAST, 3 NULLS LAST, 4 NULLS LAST",
    ),
    (
        "SELECT k, v, n, MIN(v) OVER (PARTITION BY k), MAX(n) OVER (ORDER BY k) FROM a ORDER BY 1, 2, 3",
        "SELECT k, v, n, MIN(v) OVER (PARTITION BY k), MAX(n) OVER (ORDER BY k NULLS LAST) FROM a \
         ORDER BY 1 NULLS LAST, 2 NULLS LAST, 3 NULLS LAST",
    ),
    (
        "SELECT k, v, n, LAG(n) OVER (ORDER BY k, v, n), LEAD(n, 2, 9) OVER (ORDER BY k, v, n) FROM a \
         ORDER BY 1, 2, 3, 4, 5",
        "SELECT k, v, n, LAG(n) OVER (ORDER BY k NULLS LAST, v NULLS LAST, n NULLS LAST), \
         LEAD(n, 2, 9) OVER (ORDER BY k NULLS LAST, v NULLS LAST, n NULLS LAST) FROM a \
         ORDER BY 1 NULLS LAST, 2 NULLS LAST, 3 NULLS LAST, 4 NULLS LAST, 5 NULLS LAST",
    ),
    (
        "SELECT k, v, n, FIRST_VALUE(v) OVER (PARTITION BY k ORDER BY n, v), \
         LAST_VALUE(v) OVER (PARTITION BY k ORDER BY n, v) FROM a ORDER BY 1, 2, 3, 4, 5",
        "SELECT k, v, n, FIRST_VALUE(v) OVER (PARTITION BY k ORDER BY n NULLS LAST, v NULLS LAST), \
         LAST_VALUE(v) OVER (PARTITION BY k ORDER BY n NULLS LAST, v NULLS LAST) FROM a \
         ORDER BY 1 NULLS LAST, 2 NULLS LAST, 3 NULLS LAST, 4 NULLS LAST, 5 NULLS LAST",
    ),
    (
        "SELECT k, v, n, NTILE(3) OVER (ORDER BY k, v, n) FROM a ORDER BY 1, 2, 3, 4",
        "SELECT k, v, n, NTILE(3) OVER (ORDER BY k NULLS LAST, v NULLS LAST, n NULLS LAST) FROM a \
         ORDER BY 1 NULLS LAST, 2 NULLS LAST, 3 NULLS LAST, 4",
    ),
    (
        "SELECT k, SUM(n), RANK() OVER (ORDER BY SUM(n)) FROM a GROUP BY k ORDER BY 1",
        "SELECT k, SUM(n), RANK() OVER (ORDER BY SUM(n) NULLS LAST) FROM a GROUP BY k ORDER BY 1 NULLS LAST",
    ),
    (
        "SELECT * FROM (SELECT k, n, DENSE_RANK() OVER (PARTITION BY k ORDER BY n DESC) r FROM a) \
         WHERE r <= 2 ORDER BY 1, 3, 2",
        "SELECT * FROM (SELECT k, n, DENSE_RANK() OVER (PARTITION BY k ORDER BY n DESC NULLS FIRST) r FROM a) \
         WHERE r <= 2 ORDER BY 1 NULLS LAST, 3, 2 NULLS LAST",
    ),
    (
        "SELECT DISTINCT k, COUNT(*) OVER (PARTITION BY k) FROM a ORDER BY 1",
        "SELECT DISTINCT k, COUNT(*) OVER (PARTITION BY k) FROM a ORDER BY 1 NULLS LAST",
    ),
    // Window frames: rows tied in a ROWS window's order are equal in every column.
    (
        "SELECT k, v, n, SUM(n) OVER (PARTITION BY k ORDER BY n, v ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING), \
         COUNT(n) OVER (PARTITION BY k ORDER BY n, v ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING), \
         MIN(n) OVER (PARTITION BY k ORDER BY n, v ROWS 2 PRECEDING), \
         MAX(v) OVER (PARTITION BY k ORDER BY n, v ROWS BETWEEN 2 PRECEDING AND CURRENT ROW) \
         FROM a ORDER BY 1, 2, 3, 4, 5, 6, 7",
        "SELECT k, v, n, \
         SUM(n) OVER (PARTITION BY k ORDER BY n NULLS LAST, v NULLS LAST ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING), \
         COUNT(n) OVER (PARTITION BY k ORDER BY n NULLS LAST, v NULLS LAST ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING), \
         MIN(n) OVER (PARTITION BY k ORDER BY n NULLS LAST, v NULLS LAST ROWS 2 PRECEDING), \
         MAX(v) OVER (PARTITION BY k ORDER BY n NULLS LAST, v NULLS LAST ROWS BETWEEN 2 PRECEDING AND CURRENT ROW) \
         FROM a ORDER BY 1 NULLS LAST, 2 NULLS LAST, 3 NULLS LAST, 4 NULLS LAST, 5, 6 NULLS LAST, 7 NULLS LAST",
    ),
    (
        "SELECT k, v, n, SUM(n) OVER (ORDER BY k, v, n ROWS BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING), \
         COUNT(*) OVER (ORDER BY k, v, n ROWS BETWEEN 2 FOLLOWING AND 3 FOLLOWING), \
         FIRST_VALUE(n) OVER (ORDER BY k, v, n ROWS BETWEEN 1 FOLLOWING AND UNBOUNDED FOLLOWING), \
         LAST_VALUE(v) OVER (ORDER BY k, v, n ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) \
         FROM a ORDER BY 1, 2, 3, 4, 5, 6, 7",
        "SELECT k, v, n, \
         SUM(n) OVER (ORDER BY k NULLS LAST, v NULLS LAST, n NULLS LAST ROWS BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING), \
         COUNT(*) OVER (ORDER BY k NULLS LAST, v NULLS LAST, n NULLS LAST ROWS BETWEEN 2 FOLLOWING AND 3 FOLLOWING), \
         FIRST_VALUE(n) OVER (ORDER BY k NULLS LAST, v NULLS LAST, n NULLS LAST \
         ROWS BETWEEN 1 FOLLOWING AND UNBOUNDED FOLLOWING), \
         LAST_VALUE(v) OVER (ORDER BY k NULLS LAST, v NULLS LAST, n NULLS LAST \
         ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) \
         FROM a ORDER BY 1 NULLS LAST, 2 NULLS LAST, 3 NULLS LAST, 4 NULLS LAST, 5, 6 NULLS LAST, 7 NULLS LAST",
    ),
    (
        "SELECT k, n, SUM(n) OVER (PARTITION BY k ORDER BY n RANGE BETWEEN 1 PRECEDING AND 1 FOLLOWING), \
         COUNT(*) OVER (ORDER BY n DESC RANGE BETWEEN 2 PRECEDING AND CURRENT ROW), \
         MAX(k) OVER (ORDER BY n RANGE BETWEEN CURRENT ROW AND 1 FOLLOWING), \
         COUNT(*) OVER (ORDER BY n RANGE BETWEEN 1 FOLLOWING AND 2 FOLLOWING) \
         FROM a ORDER BY 1, 2, 3, 4, 5, 6",
        "SELECT k, n, SUM(n) OVER (PARTITION BY k ORDER BY n NULLS LAST RANGE BETWEEN 1 PRECEDING AND 1 FOLLOWING), \
         COUNT(*) OVER (ORDER BY n DESC NULLS FIRST RANGE BETWEEN 2 PRECEDING AND CURRENT ROW), \
         MAX(k) OVER (ORDER BY n NULLS LAST RANGE BETWEEN CURRENT ROW AND 1 FOLLOWING), \
         COUNT(*) OVER (ORDER BY n NULLS LAST RANGE BETWEEN 1 FOLLOWING AND 2 FOLLOWING) \
         FROM a ORDER BY 1 NULLS LAST, 2 NULLS LAST, 3 NULLS LAST, 4, 5 NULLS LAST, 6",
    ),
];

#[test]
fn analytic_functions_answer_as_sqlite_window_functions_do() {
    answers_as_sqlite(file!(), 40, table_rows(3, true, 16), QUERIES);
}

#[test]
fn analytic_functions_refuse_what_they_cannot_run() {
    let (_dir, _path, db) = db();
    let s = db.session();
    exec(&s, "CREATE TABLE t (id NUMBER, v NUMBER)");
    exec(&s, "INSERT INTO t VALUES (1, 10), (2, 20)");
    for (sql, expected) in [
        ("SELECT SUM(v) OVER (ORDER BY id GROUPS BETWEEN 1 PRECEDING AND CURRENT ROW) FROM t", "GROUPS"),
        ("SELECT SUM(v) OVER (ORDER BY id, v RANGE 1 PRECEDING) FROM t", "ORA-30486"),
        ("SELECT SUM(v) OVER (PARTITION BY id ROWS 1 PRECEDING) FROM t", "ORA-30485"),
        ("SELECT ROW_NUMBER() OVER (ORDER BY id ROWS 1 PRECEDING) FROM t", "takes no window frame"),
        ("SELECT SUM(v) OVER (ORDER BY id ROWS -1 PRECEDING) FROM t", "ORA-01428"),
        ("SELECT SUM(v) OVER (ORDER BY id ROWS 1.5 PRECEDING) FROM t", "ORA-01428"),
        ("SELECT SUM(v) OVER (ORDER BY id ROWS v PRECEDING) FROM t", "constant number"),
        ("SELECT SUM(v) OVER (ORDER BY id ROWS BETWEEN UNBOUNDED FOLLOWING AND CURRENT ROW) FROM t", "UNBOUNDED"),
        ("SELECT SUM(v) OVER (ORDER BY id ROWS BETWEEN CURRENT ROW AND 1 PRECEDING) FROM t", "ORA-00905"),
        ("SELECT SUM(v) OVER (ORDER BY id RANGE 1 FOLLOWING) FROM t", "ORA-00905"),
    ] {
        let e = error(&s, sql);
        assert!(e.contains(expected), "{sql}: {e}");
    }
    // An offset as large as a number goes: the window reaches the partition's end.
    assert_eq!(
        lines(&s, "SELECT MAX(v) OVER (ORDER BY id ROWS BETWEEN 9223372036854775807 PRECEDING AND CURRENT ROW) FROM t"),
        ["10", "20"]
    );
    // A RANGE offset on a DATE key counts days.
    assert_eq!(
        lines(
            &s,
            "SELECT id, COUNT(*) OVER (ORDER BY DATE '2024-01-01' + id * 2 RANGE BETWEEN 2 PRECEDING AND CURRENT ROW) \
             FROM t ORDER BY id"
        ),
        ["1|1", "2|2"]
    );
    let e = error(&s, "SELECT ROW_NUMBER() OVER (PARTITION BY v) FROM t");
    assert!(e.contains("ORA-30485"), "{e}");
    let e = error(&s, "SELECT id FROM t WHERE ROW_NUMBER() OVER (ORDER BY id) = 1");
    assert!(e.contains("outside the select list"), "{e}");
    let e = error(&s, "SELECT NTILE(0) OVER (ORDER BY id) FROM t");
    assert!(e.contains("NTILE"), "{e}");
    let e = error(&s, "SELECT LAG(v, 1, 0, 9) OVER (ORDER BY id) FROM t");
    assert!(e.contains("ORA-00909"), "{e}");
    assert!(plan(&s, "SELECT id, RANK() OVER (ORDER BY v) FROM t").contains("WINDOW SORT"));
    // A kept plan runs its window again from no rows.
    for _ in 0..2 {
        assert_eq!(lines(&s, "SELECT id, ROW_NUMBER() OVER (ORDER BY v DESC) FROM t ORDER BY id"), ["1|2", "2|1"]);
    }
}

/// A top-N whose bound reaches the window keeps the rows a full sort would put first,
/// ties in the order keys broken alike (the rows' order), and a bound that cannot be a
/// rank (below the smallest integer) is not pushed.
#[test]
fn a_pushed_rank_keeps_the_rows_a_full_sort_keeps() {
    let (_dir, _path, db) = db();
    let s = db.session();
    exec(&s, "CREATE TABLE tie (id NUMBER, x NUMBER)");
    exec(&s, "INSERT INTO tie SELECT LEVEL, MOD(LEVEL, 2) FROM dual CONNECT BY LEVEL <= 40");
    let top = |bound: &str| {
        lines(&s, &format!("SELECT * FROM (SELECT id, ROW_NUMBER() OVER (ORDER BY x) rn FROM tie) WHERE {bound}"))
    };
    assert_eq!(top("rn <= 3"), top("rn + 0 <= 3"));
    assert_eq!(top("rn <= 3"), ["2|1", "4|2", "6|3"]);
    assert!(top("rn < -9223372036854775808").is_empty());
}
