//! Queries inside queries: inline views, WITH queries, stored views and set operations,
//! checked against SQLite (an independent engine) on random tables with NULLs and
//! repeated rows; then stored views through their life (CREATE, OR REPLACE, DROP,
//! reopening the database, a kept plan after a change), the refusals Oracle makes, and
//! the plan lines and row-source statistics of a view and a set operation.

mod common;

use common::sqlite::{answers_as_sqlite, table_rows};
use common::*;

/// (lioscope's query, SQLite's): every ORDER BY orders the rows completely, NULLs placed
/// alike in both (Oracle's NULLs sort last ascending, SQLite's first).
const QUERIES: &[(&str, &str)] = &[
    (
        "SELECT * FROM (SELECT k, COUNT(*) c, SUM(n) s FROM a GROUP BY k) x WHERE c > 1 ORDER BY k",
        "SELECT * FROM (SELECT k, COUNT(*) c, SUM(n) s FROM a GROUP BY k) x WHERE c > 1 ORDER BY k",
    ),
    (
        "WITH g AS (SELECT k, MAX(n) m FROM b GROUP BY k) SELECT a.k, a.v, g.m FROM a JOIN g ON a.k = g.k \
         ORDER BY a.k, a.v NULLS LAST, g.m",
        "WITH g AS (SELECT k, MAX(n) m FROM b GROUP BY k) SELECT a.k, a.v, g.m FROM a JOIN g ON a.k = g.k \
         ORDER BY a.k, a.v NULLS LAST, g.m",
    ),
    (
        "WITH g AS (SELECT k, COUNT(v) c FROM b GROUP BY k) SELECT a.k, COUNT(*), MAX(g.c) FROM a LEFT JOIN g \
         ON a.k = g.k AND g.c > 1 GROUP BY a.k ORDER BY a.k",
        "WITH g AS (SELECT k, COUNT(v) c FROM b GROUP BY k) SELECT a.k, COUNT(*), MAX(g.c) FROM a LEFT JOIN g \
         ON a.k = g.k AND g.c > 1 GROUP BY a.k ORDER BY a.k",
    ),
    (
        "WITH x AS (SELECT k, n FROM a WHERE n IS NOT NULL), y AS (SELECT k, SUM(n) s FROM x GROUP BY k) \
         SELECT y.k, y.s, 1 one FROM y ORDER BY y.k",
        "WITH x AS (SELECT k, n FROM a WHERE n IS NOT NULL), y AS (SELECT k, SUM(n) s FROM x GROUP BY k) \
         SELECT y.k, y.s, 1 one FROM y ORDER BY y.k",
    ),
    (
        "SELECT k, v FROM a UNION SELECT k, v FROM b ORDER BY 1, 2",
        "SELECT k, v FROM a UNION SELECT k, v FROM b ORDER BY 1, 2 NULLS LAST",
    ),
    (
        "SELECT k, n FROM a WHERE n > 0 UNION ALL SELECT k, n FROM b WHERE v = 'a' ORDER BY k, n",
        "SELECT k, n FROM a WHERE n > 0 UNION ALL SELECT k, n FROM b WHERE v = 'a' ORDER BY k, n NULLS LAST",
    ),
    (
        "SELECT v, n FROM a INTERSECT SELECT v, n FROM b ORDER BY v, n",
        "SELECT v, n FROM a INTERSECT SELECT v, n FROM b ORDER BY v NULLS LAST, n NULLS LAST",
    ),
    (
        "SELECT k, v FROM a MINUS SELECT k, v FROM b ORDER BY k, v",
        "SELECT k, v FROM a EXCEPT SELECT k, v FROM b ORDER BY k, v NULLS LAST",
    ),
    (
        "SELECT k FROM a EXCEPT SELECT k FROM b WHERE n > 0 ORDER BY k",
        "SELECT k FROM a EXCEPT SELECT k FROM b WHERE n > 0 ORDER BY k",
    ),
    (
        "SELECT COUNT(*), SUM(n) FROM (SELECT n FROM a UNION ALL SELECT n FROM b UNION ALL SELECT k FROM a)",
        "SELECT COUNT(*), SUM(n) FROM (SELECT n FROM a UNION ALL SELECT n FROM b UNION ALL SELECT k FROM a)",
    ),
    (
        "SELECT k FROM a UNION ALL SELECT k FROM b UNION SELECT n FROM a ORDER BY 1",
        "SELECT k FROM a UNION ALL SELECT k FROM b UNION SELECT n FROM a ORDER BY 1 NULLS LAST",
    ),
    (
        "SELECT u.k, COUNT(*) FROM (SELECT k FROM a UNION SELECT k FROM b) u GROUP BY u.k ORDER BY u.k",
        "SELECT u.k, COUNT(*) FROM (SELECT k FROM a UNION SELECT k FROM b) u GROUP BY u.k ORDER BY u.k",
    ),
    (
        "SELECT x.k, x.c, y.c FROM (SELECT k, COUNT(*) c FROM a GROUP BY k) x \
         FULL JOIN (SELECT k, COUNT(*) c FROM b GROUP BY k) y ON x.k = y.k ORDER BY x.k, y.k",
        "SELECT x.k, x.c, y.c FROM (SELECT k, COUNT(*) c FROM a GROUP BY k) x \
         FULL JOIN (SELECT k, COUNT(*) c FROM b GROUP BY k) y ON x.k = y.k ORDER BY x.k NULLS LAST, y.k NULLS LAST",
    ),
    (
        "SELECT * FROM (SELECT k, v FROM a ORDER BY k DESC, v) WHERE ROWNUM <= 3",
        "SELECT * FROM (SELECT k, v FROM a ORDER BY k DESC, v NULLS LAST) LIMIT 3",
    ),
    (
        "SELECT DISTINCT s FROM (SELECT k + n s FROM a) WHERE s IS NOT NULL ORDER BY s",
        "SELECT DISTINCT s FROM (SELECT k + n s FROM a) WHERE s IS NOT NULL ORDER BY s",
    ),
    // WITH queries read twice or more, materialized (and once with INLINE, planned at
    // each reference): a self-join, a set operation, IN and EXISTS subqueries, a
    // correlated scalar subquery, and a chain of WITH queries reading the one before.
    (
        "WITH g AS (SELECT k, SUM(n) s FROM a GROUP BY k) SELECT x.k, y.k FROM g x JOIN g y ON x.s < y.s \
         ORDER BY x.k NULLS LAST, y.k NULLS LAST",
        "WITH g AS (SELECT k, SUM(n) s FROM a GROUP BY k) SELECT x.k, y.k FROM g x JOIN g y ON x.s < y.s \
         ORDER BY x.k NULLS LAST, y.k NULLS LAST",
    ),
    (
        "WITH g AS (SELECT /*+ INLINE */ k, SUM(n) s FROM a GROUP BY k) SELECT x.k, y.k FROM g x JOIN g y \
         ON x.s < y.s ORDER BY x.k NULLS LAST, y.k NULLS LAST",
        "WITH g AS (SELECT k, SUM(n) s FROM a GROUP BY k) SELECT x.k, y.k FROM g x JOIN g y ON x.s < y.s \
         ORDER BY x.k NULLS LAST, y.k NULLS LAST",
    ),
    (
        "WITH w AS (SELECT k, v FROM b WHERE n > -2) SELECT k, v FROM w WHERE k > 0 UNION ALL \
         SELECT k + 10, v FROM w ORDER BY 1, 2",
        "WITH w AS (SELECT k, v FROM b WHERE n > -2) SELECT k, v FROM w WHERE k > 0 UNION ALL \
         SELECT k + 10, v FROM w ORDER BY 1, 2 NULLS LAST",
    ),
    (
        "WITH w AS (SELECT k, n FROM b WHERE v = 'a') SELECT k, v, n FROM a WHERE k IN (SELECT k FROM w) \
         AND NOT EXISTS (SELECT 1 FROM w WHERE w.n = a.n) ORDER BY k, v, n",
        "WITH w AS (SELECT k, n FROM b WHERE v = 'a') SELECT k, v, n FROM a WHERE k IN (SELECT k FROM w) \
         AND NOT EXISTS (SELECT 1 FROM w WHERE w.n = a.n) ORDER BY k, v NULLS LAST, n NULLS LAST",
    ),
    (
        "WITH g AS (SELECT k, COUNT(*) c FROM b GROUP BY k) SELECT a.k, a.n, (SELECT MAX(c) FROM g WHERE g.k <> a.k) m \
         FROM a WHERE a.k IN (SELECT k FROM g) ORDER BY a.k, a.n, m",
        "WITH g AS (SELECT k, COUNT(*) c FROM b GROUP BY k) SELECT a.k, a.n, (SELECT MAX(c) FROM g WHERE g.k <> a.k) m \
         FROM a WHERE a.k IN (SELECT k FROM g) ORDER BY a.k, a.n NULLS LAST, m NULLS LAST",
    ),
    (
        "WITH x AS (SELECT k, n FROM a), y AS (SELECT p.k, p.n FROM x p, x q WHERE p.n = q.k), \
         z AS (SELECT k, COUNT(*) c FROM y GROUP BY k) SELECT z.k, z.c, (SELECT COUNT(*) FROM y) t FROM z, z w \
         WHERE z.k = w.k ORDER BY z.k",
        "WITH x AS (SELECT k, n FROM a), y AS (SELECT p.k, p.n FROM x p, x q WHERE p.n = q.k), \
         z AS (SELECT k, COUNT(*) c FROM y GROUP BY k) SELECT z.k, z.c, (SELECT COUNT(*) FROM y) t FROM z, z w \
         WHERE z.k = w.k ORDER BY z.k",
    ),
];

#[test]
fn views_with_queries_and_set_operations_answer_as_sqlite_does() {
    answers_as_sqlite(file!(), 40, table_rows(4, false, 25), QUERIES);
}

/// WHERE conjuncts on a view's columns, pushed into the view where that is the same
/// rows and kept above it where it is not (an outer join, an analytic function, an
/// aggregate without GROUP BY, a column that is an aggregate, a subquery, two views).
const PUSHED: &[(&str, &str)] = &[
    (
        "SELECT * FROM (SELECT k, v, n * 2 d FROM a WHERE n > -3) x WHERE x.k = 1 AND d > 0 ORDER BY k, v, d",
        "SELECT * FROM (SELECT k, v, n * 2 d FROM a WHERE n > -3) x WHERE x.k = 1 AND d > 0 \
         ORDER BY k, v NULLS LAST, d",
    ),
    (
        "SELECT * FROM (SELECT k, COUNT(*) c, SUM(n) s FROM a GROUP BY k) x WHERE k > 0 AND c > 1 ORDER BY k",
        "SELECT * FROM (SELECT k, COUNT(*) c, SUM(n) s FROM a GROUP BY k) x WHERE k > 0 AND c > 1 ORDER BY k",
    ),
    (
        "SELECT * FROM (SELECT 1 one, COUNT(*) c FROM a WHERE n > 1) WHERE one = 2",
        "SELECT * FROM (SELECT 1 one, COUNT(*) c FROM a WHERE n > 1) WHERE one = 2",
    ),
    (
        "SELECT a.k, x.c FROM a LEFT JOIN (SELECT k, COUNT(*) c FROM b GROUP BY k) x ON a.k = x.k \
         WHERE x.k IS NULL ORDER BY a.k, x.c",
        "SELECT a.k, x.c FROM a LEFT JOIN (SELECT k, COUNT(*) c FROM b GROUP BY k) x ON a.k = x.k \
         WHERE x.k IS NULL ORDER BY a.k NULLS LAST, x.c NULLS LAST",
    ),
    (
        "SELECT x.k, x.s, y.c FROM (SELECT k, SUM(n) s FROM a GROUP BY k) x, (SELECT k, COUNT(*) c FROM b GROUP BY k) y \
         WHERE x.k = y.k AND x.k > 0 AND y.c > 1 AND x.s + y.c > 0 ORDER BY x.k",
        "SELECT x.k, x.s, y.c FROM (SELECT k, SUM(n) s FROM a GROUP BY k) x, (SELECT k, COUNT(*) c FROM b GROUP BY k) y \
         WHERE x.k = y.k AND x.k > 0 AND y.c > 1 AND x.s + y.c > 0 ORDER BY x.k",
    ),
    (
        "WITH w AS (SELECT k, v, n FROM b WHERE v IS NOT NULL) SELECT k, v FROM w WHERE n > 0 AND k < 3 ORDER BY k, v",
        "WITH w AS (SELECT k, v, n FROM b WHERE v IS NOT NULL) SELECT k, v FROM w WHERE n > 0 AND k < 3 ORDER BY k, v",
    ),
    (
        "SELECT * FROM (SELECT DISTINCT k, v FROM a) WHERE v = 'a' ORDER BY k",
        "SELECT * FROM (SELECT DISTINCT k, v FROM a) WHERE v = 'a' ORDER BY k",
    ),
    (
        "SELECT * FROM (SELECT k, n, COUNT(*) OVER (PARTITION BY k) c FROM a) WHERE n > 0 ORDER BY k, n, c",
        "SELECT * FROM (SELECT k, n, COUNT(*) OVER (PARTITION BY k) c FROM a) WHERE n > 0 ORDER BY k, n, c",
    ),
    (
        "SELECT x.k, b.n, m FROM (SELECT k, n m FROM a) x, b WHERE m > 0 AND x.k = b.k AND b.n < 2 \
         ORDER BY x.k, b.n, m",
        "SELECT x.k, b.n, m FROM (SELECT k, n m FROM a) x, b WHERE m > 0 AND x.k = b.k AND b.n < 2 \
         ORDER BY x.k, b.n, m",
    ),
    (
        "SELECT * FROM (SELECT k, n FROM a) x WHERE x.k IN (SELECT k FROM b WHERE n > 0) AND n IS NOT NULL \
         ORDER BY k, n",
        "SELECT * FROM (SELECT k, n FROM a) x WHERE x.k IN (SELECT k FROM b WHERE n > 0) AND n IS NOT NULL \
         ORDER BY k, n",
    ),
    (
        "SELECT k, t FROM (SELECT k, SUM(n) t FROM (SELECT k, n FROM a WHERE v IS NOT NULL) GROUP BY k) \
         WHERE k BETWEEN 1 AND 2 AND t IS NOT NULL ORDER BY k",
        "SELECT k, t FROM (SELECT k, SUM(n) t FROM (SELECT k, n FROM a WHERE v IS NOT NULL) GROUP BY k) \
         WHERE k BETWEEN 1 AND 2 AND t IS NOT NULL ORDER BY k",
    ),
];

/// The same into each branch of a set operation (where every branch takes the
/// conjunct).
const PUSHED_INTO_BRANCHES: &[(&str, &str)] = &[
    (
        "SELECT * FROM (SELECT k, n FROM a UNION ALL SELECT k, n + 1 FROM b) u WHERE k = 1 AND n > 0 ORDER BY k, n",
        "SELECT * FROM (SELECT k, n FROM a UNION ALL SELECT k, n + 1 FROM b) u WHERE k = 1 AND n > 0 ORDER BY k, n",
    ),
    (
        "SELECT * FROM (SELECT k, v FROM a MINUS SELECT k, v FROM b) WHERE v = 'a' ORDER BY k, v",
        "SELECT * FROM (SELECT k, v FROM a EXCEPT SELECT k, v FROM b) WHERE v = 'a' ORDER BY k, v",
    ),
    (
        "SELECT * FROM (SELECT k, v FROM a INTERSECT SELECT k, v FROM b) WHERE k < 2 ORDER BY k, v",
        "SELECT * FROM (SELECT k, v FROM a INTERSECT SELECT k, v FROM b) WHERE k < 2 ORDER BY k, v NULLS LAST",
    ),
    (
        "SELECT * FROM (SELECT k, COUNT(*) c FROM a GROUP BY k UNION SELECT k, n FROM b) WHERE k > 0 AND c > 1 \
         ORDER BY k, c",
        "SELECT * FROM (SELECT k, COUNT(*) c FROM a GROUP BY k UNION SELECT k, n FROM b) WHERE k > 0 AND c > 1 \
         ORDER BY k, c",
    ),
];

#[test]
fn predicates_pushed_into_set_operations_answer_as_sqlite_does() {
    answers_as_sqlite(file!(), 40, table_rows(4, false, 25), PUSHED_INTO_BRANCHES);
}

#[test]
fn predicates_pushed_into_views_answer_as_sqlite_does() {
    answers_as_sqlite(file!(), 40, table_rows(4, false, 25), PUSHED);
}

#[test]
fn a_conjunct_on_a_views_columns_is_checked_inside_the_view_where_that_is_the_same_rows() {
    let (_dir, _path, db) = db();
    let s = db.session();
    exec(&s, "CREATE TABLE t (id NUMBER PRIMARY KEY, d VARCHAR2(10), n NUMBER)");
    exec(&s, "INSERT INTO t SELECT LEVEL, 'd' || MOD(LEVEL, 3), MOD(LEVEL, 7) FROM dual CONNECT BY LEVEL <= 300");
    exec(&s, "CREATE VIEW tv AS SELECT id, d, n * 2 dbl FROM t WHERE n > 0");
    exec(&s, "CREATE VIEW tg AS SELECT d, COUNT(*) c FROM t GROUP BY d");
    exec(&s, "COMMIT");
    exec(&s, "ANALYZE TABLE t COMPUTE STATISTICS");
    let analyzed = |sql: &str| analyzed_lines(&s, sql, false);
    // The key reaches the view's table as an index probe; the other conjunct, on an
    // expression of the view, is checked on the table's rows.
    assert_eq!(
        analyzed("SELECT * FROM tv WHERE id = 42 AND dbl > 0"),
        ["0 SELECT STATEMENT", "0 VIEW TV", "0 TABLE ACCESS BY INDEX ROWID T", "1 INDEX UNIQUE SCAN SYS_C0001001",]
    );
    let p = plan(&s, "SELECT * FROM tv WHERE id = 43 AND dbl > 0");
    assert!(p.contains("access(\"ID\"=43)") && p.contains("\"N\">0") && p.contains("\"N\"*2>0"), "{p}");
    assert!(!p.contains("filter(\"ID\""), "nothing is left above the view:\n{p}");
    // A GROUP BY view takes the conjunct on its key; the one on its count stays above.
    let p = plan(&s, "SELECT * FROM tg WHERE d = 'd1' AND c > 5");
    assert!(p.contains("filter(\"D\"='d1')") && p.contains("filter(\"C\">5)"), "{p}");
    let grouped = analyzed("SELECT * FROM tg WHERE d = 'd1' AND c > 5");
    assert_eq!(grouped[..3], ["1 SELECT STATEMENT", "1 VIEW TG", "1 HASH GROUP BY"]);
    assert!(grouped[3].starts_with("100 TABLE ACCESS"), "the table's line gives the key's rows alone: {grouped:?}");
    // Into each branch of a UNION ALL view, over that branch's column: the first
    // branch's index probe, the second's scan filter.
    let p = plan(&s, "SELECT * FROM (SELECT id, d FROM t UNION ALL SELECT id + 1000, d FROM t) u WHERE id = 7");
    assert!(p.contains("access(\"ID\"=7)") && p.contains("filter(\"ID\"+1000=7)"), "{p}");
    assert!(!p.contains("filter(\"ID\"=7)"), "nothing left above the view:\n{p}");
    // Not into a set operation a branch of which may hold CHAR values: its columns
    // compare unpadded, a CHAR branch's padded, so pushing would change the rows.
    exec(&s, "CREATE TABLE fixed (id NUMBER, c CHAR(3))");
    exec(&s, "CREATE TABLE varying (id NUMBER, c VARCHAR2(3))");
    exec(&s, "INSERT INTO fixed VALUES (1, 'x')");
    exec(&s, "INSERT INTO varying VALUES (3, 'x')");
    exec(&s, "COMMIT");
    for (pushed, kept) in [
        (
            "SELECT id FROM (SELECT id, c FROM fixed UNION ALL SELECT id, c FROM varying) WHERE c = 'x' ORDER BY id",
            "SELECT id FROM (SELECT id, c FROM fixed UNION ALL SELECT id, c FROM varying WHERE ROWNUM <= 10) \
             WHERE c = 'x' ORDER BY id",
        ),
        (
            "SELECT COUNT(*) FROM (SELECT c FROM fixed MINUS SELECT c FROM varying) WHERE c = 'x'",
            "SELECT COUNT(*) FROM (SELECT c FROM fixed WHERE ROWNUM <= 10 MINUS SELECT c FROM varying) WHERE c = 'x'",
        ),
    ] {
        assert_eq!(lines(&s, pushed), lines(&s, kept), "{pushed}");
    }
    // Not under an outer join: `x.c IS NULL` there is the padded rows' test.
    let p = plan(&s, "SELECT t.id FROM t LEFT JOIN tg x ON t.d = x.d WHERE x.c IS NULL");
    assert!(p.contains("filter(\"X\".\"C\" IS NULL)") || p.contains("\"C\" IS NULL"), "{p}");
    // The answers are those of the query with the conjunct kept above the view.
    for (pushed, kept) in [
        (
            "SELECT COUNT(*), SUM(dbl) FROM tv WHERE id < 100 AND d = 'd1'",
            "SELECT COUNT(*), SUM(dbl) FROM (SELECT * FROM tv WHERE ROWNUM <= 1000) WHERE id < 100 AND d = 'd1'",
        ),
        (
            "SELECT * FROM tg WHERE d <> 'd0' ORDER BY d",
            "SELECT * FROM (SELECT * FROM tg WHERE ROWNUM <= 1000) WHERE d <> 'd0' ORDER BY d",
        ),
    ] {
        assert_eq!(lines(&s, pushed), lines(&s, kept), "{pushed}");
    }
}

#[test]
fn a_stored_view_lives_through_replace_drop_and_reopening() {
    let (_dir, path, db) = db();
    let s = db.session();
    exec(&s, "CREATE TABLE t (id NUMBER PRIMARY KEY, d VARCHAR2(10), v NUMBER)");
    exec(&s, "INSERT INTO t SELECT LEVEL, 'd' || MOD(LEVEL, 3), LEVEL * 10 FROM dual CONNECT BY LEVEL <= 10");
    exec(&s, "COMMIT");
    exec(&s, "CREATE VIEW per_d AS SELECT d, COUNT(*) c, SUM(v) s FROM t GROUP BY d");
    exec(&s, "CREATE VIEW big (name, how_many) AS SELECT d, c FROM per_d WHERE c > 3");
    assert_eq!(lines(&s, "SELECT * FROM per_d ORDER BY d"), ["d0|3|180", "d1|4|220", "d2|3|150"]);
    assert_eq!(lines(&s, "SELECT name, how_many FROM big"), ["d1|4"]);
    assert_eq!(
        lines(&s, "SELECT view_name, text FROM user_views ORDER BY 1"),
        ["BIG|SELECT d, c FROM per_d WHERE c > 3", "PER_D|SELECT d, COUNT(*) AS c, SUM(v) AS s FROM t GROUP BY d"]
    );
    // A session keeps the plan of a query it ran; replacing the view plans it again.
    assert_eq!(lines(&s, "SELECT COUNT(*) FROM per_d"), ["3"]);
    exec(&s, "CREATE OR REPLACE VIEW per_d AS SELECT d, COUNT(*) c, SUM(v) s FROM t WHERE id > 1 GROUP BY d");
    assert_eq!(lines(&s, "SELECT COUNT(*) FROM per_d"), ["3"]);
    assert_eq!(lines(&s, "SELECT c FROM per_d WHERE d = 'd1'"), ["3"]);
    // Rows committed after the view was made are what a query of the view sees.
    exec(&s, "INSERT INTO t VALUES (11, 'd9', 1)");
    exec(&s, "COMMIT");
    assert_eq!(lines(&s, "SELECT d, c FROM per_d WHERE d = 'd9'"), ["d9|1"]);
    drop(s);
    drop(db);
    let db = open(&path, options(8192, "4M"));
    let s = db.session();
    assert_eq!(lines(&s, "SELECT name FROM big"), Vec::<String>::new(), "the replaced view counts 3 in d1");
    assert_eq!(lines(&s, "SELECT COUNT(*) FROM user_views"), ["2"]);
    exec(&s, "DROP VIEW big");
    let e = error(&s, "SELECT * FROM big");
    assert!(e.contains("BIG does not exist"), "{e}");
    // A view whose table went away names what no longer plans.
    exec(&s, "CREATE VIEW ids AS SELECT id FROM t");
    exec(&s, "DROP TABLE t");
    let e = error(&s, "SELECT * FROM ids");
    assert!(e.contains("ORA-04063") && e.contains("T does not exist"), "{e}");
}

#[test]
fn views_and_set_operations_refuse_what_oracle_refuses() {
    let (_dir, _path, db) = db();
    let s = db.session();
    exec(&s, "CREATE TABLE t (id NUMBER, d VARCHAR2(10))");
    exec(&s, "CREATE VIEW v AS SELECT id FROM t");
    let e = error(&s, "CREATE VIEW v AS SELECT d FROM t");
    assert!(e.contains("view V already exists"), "{e}");
    let e = error(&s, "CREATE VIEW t AS SELECT 1 x FROM dual");
    assert!(e.contains("T already exists"), "{e}");
    let e = error(&s, "CREATE TABLE v (x NUMBER)");
    assert!(e.contains("view V already exists"), "{e}");
    let e = error(&s, "CREATE VIEW w AS SELECT nope FROM t");
    assert!(e.contains("NOPE does not exist"), "{e}");
    let e = error(&s, "CREATE VIEW w AS SELECT id, id FROM t");
    assert!(e.contains("ORA-00957"), "{e}");
    let e = error(&s, "CREATE VIEW w (a, b) AS SELECT id FROM t");
    assert!(e.contains("ORA-01730"), "{e}");
    exec(&s, "CREATE VIEW w AS SELECT id FROM v");
    let e = error(&s, "CREATE OR REPLACE VIEW v AS SELECT id FROM w");
    assert!(e.contains("ORA-01731"), "{e}");
    assert_eq!(lines(&s, "SELECT COUNT(*) FROM w"), ["0"], "the refused replacement changed nothing");
    let e = error(&s, "DROP VIEW nope");
    assert!(e.contains("view NOPE does not exist"), "{e}");
    exec(&s, "DROP VIEW IF EXISTS nope");
    let e = error(&s, "SELECT id FROM t UNION SELECT id, d FROM t");
    assert!(e.contains("ORA-01789"), "{e}");
    let e = error(&s, "SELECT id FROM t UNION SELECT d FROM t");
    assert!(e.contains("ORA-01790"), "{e}");
    // Set operators are taken left to right, all of one precedence, as in Oracle.
    assert_eq!(lines(&s, "SELECT 1 x FROM dual UNION SELECT 2 FROM dual INTERSECT SELECT 2 FROM dual"), ["2"]);
    assert_eq!(
        lines(&s, "SELECT 1 x FROM dual UNION (SELECT 2 FROM dual INTERSECT SELECT 3 FROM dual)"),
        ["1"],
        "a parenthesised operand stays one"
    );
    // An index may not take a view's name (the dictionary would refuse to open).
    let e = error(&s, "CREATE INDEX v ON t (id)");
    assert!(e.contains("view V already exists"), "{e}");
    // CREATE TABLE ... AS types its columns from tables only.
    let e = error(&s, "CREATE TABLE c AS WITH q AS (SELECT id FROM t) SELECT * FROM q");
    assert!(e.contains("a view, an inline view or a WITH query"), "{e}");
    let e = error(&s, "CREATE TABLE c AS SELECT * FROM (SELECT id FROM t)");
    assert!(e.contains("a view, an inline view or a WITH query"), "{e}");
    // WITH queries nested too deep, or doubling at each link, are refused, not overflowed.
    let chain: Vec<String> = (1..=40).map(|i| format!("q{i} AS (SELECT x FROM q{})", i - 1)).collect();
    let e = error(&s, &format!("WITH q0 AS (SELECT 1 x FROM dual), {} SELECT x FROM q40", chain.join(", ")));
    assert!(e.contains("nested more than"), "{e}");
    let doubling: Vec<String> = (1..=10)
        .map(|i| format!("q{i} AS (SELECT /*+ INLINE */ a.x FROM q{p} a, q{p} b WHERE a.x = b.x)", p = i - 1))
        .collect();
    let e = error(&s, &format!("WITH q0 AS (SELECT 1 x FROM dual), {} SELECT x FROM q10", doubling.join(", ")));
    assert!(e.contains("query blocks"), "{e}");
    // Materialized, each link is planned and run once.
    let doubling = doubling.join(", ").replace("/*+ INLINE */ ", "");
    assert_eq!(lines(&s, &format!("WITH q0 AS (SELECT 1 x FROM dual), {doubling} SELECT x FROM q10")), ["1"]);
    let e = error(&s, "SELECT id FROM t INTERSECT ALL SELECT id FROM t");
    assert!(e.contains("not supported"), "{e}");
    let e = error(&s, "WITH RECURSIVE r AS (SELECT 1 x FROM dual) SELECT * FROM r");
    assert!(e.contains("WITH RECURSIVE"), "{e}");
    let e = error(&s, "WITH q AS (SELECT 1 x FROM dual), q AS (SELECT 2 x FROM dual) SELECT * FROM q");
    assert!(e.contains("WITH names Q twice"), "{e}");
    let e = error(&s, "WITH q (a, b) AS (SELECT 1 x FROM dual) SELECT * FROM q");
    assert!(e.contains("names 2 columns"), "{e}");
    // A WITH query sees the ones before it, and the inner WITH hides the outer.
    assert_eq!(lines(&s, "WITH a AS (SELECT 1 x FROM dual), b AS (SELECT x + 1 y FROM a) SELECT y FROM b"), ["2"]);
    assert_eq!(
        lines(&s, "WITH a AS (SELECT 1 x FROM dual) SELECT * FROM (WITH a AS (SELECT 2 x FROM dual) SELECT x FROM a)"),
        ["2"]
    );
    let e = error(&s, "WITH a AS (SELECT x FROM b), b AS (SELECT 1 x FROM dual) SELECT * FROM a");
    assert!(e.contains("B does not exist"), "{e}");
}

#[test]
fn char_columns_keep_their_blank_padding_through_views_and_subqueries() {
    let (_dir, _path, db) = db();
    let s = db.session();
    exec(&s, "CREATE TABLE c1 (x CHAR(5), y NUMBER)");
    exec(&s, "INSERT INTO c1 VALUES ('ab', 1)");
    for sql in [
        "SELECT COUNT(*) FROM c1 WHERE x = 'ab'",
        "SELECT COUNT(*) FROM (SELECT x FROM c1) WHERE x = 'ab'",
        "WITH w AS (SELECT x FROM c1) SELECT COUNT(*) FROM w WHERE x IN ('ab')",
        "SELECT COUNT(*) FROM c1 WHERE EXISTS (SELECT 1 FROM dual WHERE c1.x = 'ab')",
        "SELECT COUNT(*) FROM c1 a, (SELECT x FROM c1) b WHERE a.y = 1 AND b.x = 'ab'",
        "SELECT COUNT(*) FROM (SELECT x, COUNT(*) n FROM c1 GROUP BY x) WHERE x = 'ab'",
        "SELECT COUNT(*) FROM c1 WHERE x IN (SELECT 'ab' FROM dual)",
    ] {
        assert_eq!(lines(&s, sql), ["1"], "{sql}");
    }
    // Two CHAR columns of different lengths, and two string literals (CHAR values in
    // Oracle), compare with the shorter blank-padded to the longer.
    exec(&s, "CREATE TABLE c2 (z CHAR(3))");
    exec(&s, "INSERT INTO c2 VALUES ('ab')");
    for sql in [
        "SELECT COUNT(*) FROM c1, c2 WHERE c1.x = c2.z",
        "SELECT COUNT(*) FROM c1, c2 WHERE c2.z = c1.x",
        "SELECT COUNT(*) FROM c1 JOIN c2 ON c1.x >= c2.z AND c1.x <= c2.z",
        "SELECT COUNT(*) FROM dual WHERE 'x' = 'x  '",
        "SELECT COUNT(*) FROM dual WHERE 'x ' <> 'x' OR 1 = 1",
    ] {
        assert_eq!(lines(&s, sql), ["1"], "{sql}");
    }
    assert_eq!(lines(&s, "SELECT COUNT(*) FROM dual WHERE 'x ' <> 'x'"), ["0"]);
}

#[test]
fn a_view_and_a_set_operation_show_their_lines_and_what_each_did() {
    let (_dir, _path, db) = db();
    let s = db.session();
    exec(&s, "CREATE TABLE t (id NUMBER PRIMARY KEY, d VARCHAR2(10))");
    exec(&s, "INSERT INTO t SELECT LEVEL, 'd' || MOD(LEVEL, 3) FROM dual CONNECT BY LEVEL <= 300");
    exec(&s, "CREATE TABLE u (d VARCHAR2(10), label VARCHAR2(10))");
    exec(&s, "INSERT INTO u VALUES ('d0', 'zero')");
    exec(&s, "INSERT INTO u VALUES ('d1', 'one')");
    let p = plan(&s, "SELECT * FROM (SELECT d, COUNT(*) c FROM t GROUP BY d) WHERE c > 3");
    for line in ["VIEW", "HASH GROUP BY", "TABLE ACCESS FULL", "filter(\"C\">3)"] {
        assert!(p.contains(line), "{line} in\n{p}");
    }
    let p = plan(&s, "SELECT d FROM t UNION SELECT d FROM u");
    assert!(p.contains("HASH UNIQUE") && p.contains("UNION-ALL"), "{p}");
    let p = plan(&s, "SELECT d FROM t MINUS SELECT d FROM u");
    assert!(p.contains("MINUS HASH"), "{p}");
    let p = plan(&s, "SELECT d FROM t INTERSECT SELECT d FROM u");
    assert!(p.contains("INTERSECTION HASH"), "{p}");
    let analyzed = |sql: &str| analyzed_lines(&s, sql, false);
    assert_eq!(
        analyzed(
            "WITH q AS (SELECT d, COUNT(*) c FROM t WHERE id <= 150 GROUP BY d) SELECT u.label, q.c FROM u JOIN q ON u.d = q.d"
        ),
        [
            "2 SELECT STATEMENT",
            "2 HASH JOIN",
            "3 VIEW Q",
            "3 HASH GROUP BY",
            "150 TABLE ACCESS BY INDEX ROWID T",
            "150 INDEX RANGE SCAN SYS_C0001001",
            "2 TABLE ACCESS FULL U",
        ]
    );
    assert_eq!(
        analyzed("SELECT d FROM t MINUS SELECT d FROM u"),
        ["1 SELECT STATEMENT", "1 MINUS HASH", "300 TABLE ACCESS FULL T", "2 TABLE ACCESS FULL U"]
    );
    assert_eq!(
        analyzed("SELECT COUNT(*) FROM (SELECT id FROM t WHERE id < 3 UNION ALL SELECT id FROM t WHERE id > 297)"),
        [
            "1 SELECT STATEMENT",
            "1 SORT AGGREGATE",
            "5 VIEW",
            "5 UNION-ALL",
            "2 INDEX RANGE SCAN SYS_C0001001",
            "3 INDEX RANGE SCAN SYS_C0001001",
        ]
    );
    // A limit above a view stops the view's source.
    assert_eq!(
        analyzed("SELECT * FROM (SELECT id FROM t) WHERE ROWNUM <= 2"),
        ["2 SELECT STATEMENT", "2 COUNT STOPKEY", "2 VIEW", "2 INDEX FULL SCAN SYS_C0001001"]
    );
}

#[test]
fn a_with_query_read_twice_is_loaded_once_into_a_temporary_table() {
    let (_dir, _path, db) = db();
    let s = db.session();
    exec(&s, "CREATE TABLE t (id NUMBER PRIMARY KEY, d VARCHAR2(10))");
    exec(&s, "INSERT INTO t SELECT LEVEL, 'd' || MOD(LEVEL, 3) FROM dual CONNECT BY LEVEL <= 300");
    let query = "WITH q AS (SELECT d, COUNT(*) c FROM t GROUP BY d) \
                 SELECT COUNT(*) FROM q x, q y WHERE x.c = y.c AND x.d < y.d";
    assert_eq!(lines(&s, query), ["3"]);
    let p = plan(&s, query);
    for line in ["TEMP TABLE TRANSFORMATION", "LOAD AS SELECT (CURSOR DURATION MEMORY)"] {
        assert_eq!(p.matches(line).count(), 1, "{line} in\n{p}");
    }
    assert_eq!(p.matches("SYS_TEMP_0FD9D6600").count(), 3, "the load and two readers in\n{p}");
    // The table is read once, by the load; each reference reads the load's rows.
    assert_eq!(
        analyzed_lines(&s, query, true),
        [
            "1 SELECT STATEMENT x1",
            "1 TEMP TABLE TRANSFORMATION x1",
            // (the helper keeps an operation's text up to its first parenthesis)
            "3 LOAD AS SELECT x1",
            "3 HASH GROUP BY x1",
            "300 TABLE ACCESS FULL T x1",
            "1 SORT AGGREGATE x1",
            "3 HASH JOIN x1",
            "3 VIEW Q x1",
            "3 TABLE ACCESS FULL SYS_TEMP_0FD9D6600 x1",
            "3 VIEW Q x1",
            "3 TABLE ACCESS FULL SYS_TEMP_0FD9D6600 x1",
        ]
    );
    // INLINE plans it at each reference; MATERIALIZE loads it even for one reference.
    let inline = query.replace("SELECT d,", "SELECT /*+ INLINE */ d,");
    assert_eq!(lines(&s, &inline), ["3"]);
    let p = plan(&s, &inline);
    assert!(!p.contains("TEMP TABLE") && p.matches("TABLE ACCESS FULL").count() == 2, "{p}");
    let once = "WITH q AS (SELECT /*+ MATERIALIZE */ d, COUNT(*) c FROM t GROUP BY d) SELECT MAX(c) FROM q";
    assert_eq!(lines(&s, once), ["100"]);
    assert!(plan(&s, once).contains("TEMP TABLE TRANSFORMATION"));
    let unread = "WITH q AS (SELECT /*+ MATERIALIZE */ d FROM t) SELECT 1 FROM dual";
    let p = plan(&s, unread);
    assert!(!p.contains("TEMP TABLE") && p.contains("hint not used: MATERIALIZE (no reference reads Q)"), "{p}");
    // A kept plan loads the table anew at each execution: it sees the rows committed since.
    exec(&s, "INSERT INTO t VALUES (301, 'd9')");
    assert_eq!(lines(&s, query), ["3"]);
    exec(&s, "INSERT INTO t SELECT 400 + LEVEL, 'd8' FROM dual CONNECT BY LEVEL <= 100");
    assert_eq!(lines(&s, query), ["6"]);
    // INSERT ... SELECT through a materialized WITH query that reads the table filled.
    exec(
        &s,
        "INSERT INTO t WITH m AS (SELECT MAX(id) hi FROM t) SELECT hi + 1, 'n' FROM m UNION ALL SELECT hi + 2, 'n' FROM m",
    );
    assert_eq!(lines(&s, "SELECT id FROM t WHERE d = 'n' ORDER BY id"), ["501", "502"]);
    // A WITH query inside a correlated subquery is loaded at each run of it.
    assert_eq!(
        lines(
            &s,
            "SELECT d FROM (SELECT DISTINCT d FROM t) o WHERE 1 < (WITH q AS (SELECT d FROM t WHERE id < 10) \
             SELECT COUNT(*) FROM q x, q y WHERE x.d = y.d AND x.d = o.d) ORDER BY d"
        ),
        ["d0", "d1", "d2"]
    );
}
