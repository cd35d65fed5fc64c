//! Subqueries in expressions, checked against SQLite (an independent engine) on random
//! tables with NULLs and repeated values: scalar subqueries, EXISTS and NOT EXISTS,
//! IN and NOT IN (with Oracle's NULL rules, which SQLite shares), ANY, SOME and ALL
//! (against the EXISTS forms that mean the same in SQLite), uncorrelated (run once)
//! and correlated (run for each row's values in a FILTER); then the refusals and errors
//! Oracle gives, and the plan lines with what each did.

mod common;

use common::sqlite::{answers_as_sqlite, changes_as_sqlite, table_rows};
use common::*;

/// (lioscope's query, SQLite's): every ORDER BY orders the rows completely, NULLs placed
/// alike in both (Oracle's NULLs sort last ascending, SQLite's first).
const QUERIES: &[(&str, &str)] = &[
    (
        "SELECT k, n FROM a WHERE n > (SELECT AVG(n) FROM b) ORDER BY k, n",
        "SELECT k, n FROM a WHERE n > (SELECT AVG(n) FROM b) ORDER BY k NULLS LAST, n NULLS LAST",
    ),
    (
        "SELECT k, v FROM a WHERE k IN (SELECT k FROM b WHERE n > 0) ORDER BY k, v",
        "SELECT k, v FROM a WHERE k IN (SELECT k FROM b WHERE n > 0) ORDER BY k NULLS LAST, v NULLS LAST",
    ),
    (
        "SELECT k, v FROM a WHERE k NOT IN (SELECT k FROM b WHERE v = 'a') ORDER BY k, v",
        "SELECT k, v FROM a WHERE k NOT IN (SELECT k FROM b WHERE v = 'a') ORDER BY k NULLS LAST, v NULLS LAST",
    ),
    (
        "SELECT COUNT(*) FROM a WHERE EXISTS (SELECT 1 FROM b WHERE n = 2)",
        "SELECT COUNT(*) FROM a WHERE EXISTS (SELECT 1 FROM b WHERE n = 2)",
    ),
    (
        "SELECT k, v, n FROM a WHERE EXISTS (SELECT 1 FROM b WHERE b.k = a.k AND b.v = a.v) ORDER BY k, v, n",
        "SELECT k, v, n FROM a WHERE EXISTS (SELECT 1 FROM b WHERE b.k = a.k AND b.v = a.v) \
         ORDER BY k NULLS LAST, v NULLS LAST, n NULLS LAST",
    ),
    (
        "SELECT k, v, n FROM a WHERE NOT EXISTS (SELECT 1 FROM b WHERE b.k = a.k AND b.n > a.n) ORDER BY k, v, n",
        "SELECT k, v, n FROM a WHERE NOT EXISTS (SELECT 1 FROM b WHERE b.k = a.k AND b.n > a.n) \
         ORDER BY k NULLS LAST, v NULLS LAST, n NULLS LAST",
    ),
    (
        "SELECT k, n FROM a x WHERE n = (SELECT MAX(n) FROM a y WHERE y.k = x.k) ORDER BY k, n",
        "SELECT k, n FROM a x WHERE n = (SELECT MAX(n) FROM a y WHERE y.k = x.k) ORDER BY k NULLS LAST, n NULLS LAST",
    ),
    (
        "SELECT k, v FROM a WHERE v NOT IN (SELECT v FROM b WHERE b.k = a.k) ORDER BY k, v",
        "SELECT k, v FROM a WHERE v NOT IN (SELECT v FROM b WHERE b.k = a.k) ORDER BY k NULLS LAST, v NULLS LAST",
    ),
    (
        "SELECT k, v FROM a WHERE n IN (SELECT n FROM b WHERE b.v = a.v) OR k = 0 ORDER BY k, v",
        "SELECT k, v FROM a WHERE n IN (SELECT n FROM b WHERE b.v = a.v) OR k = 0 ORDER BY k NULLS LAST, v NULLS LAST",
    ),
    (
        "SELECT a.k, COUNT(*) FROM a JOIN b ON a.k = b.k WHERE a.n < (SELECT COUNT(*) FROM b c WHERE c.k = a.k) \
         GROUP BY a.k ORDER BY a.k",
        "SELECT a.k, COUNT(*) FROM a JOIN b ON a.k = b.k WHERE a.n < (SELECT COUNT(*) FROM b c WHERE c.k = a.k) \
         GROUP BY a.k ORDER BY a.k",
    ),
    (
        "SELECT k, SUM(n) FROM a GROUP BY k HAVING SUM(n) > (SELECT MIN(n) FROM b) ORDER BY k",
        "SELECT k, SUM(n) FROM a GROUP BY k HAVING SUM(n) > (SELECT MIN(n) FROM b) ORDER BY k NULLS LAST",
    ),
    (
        "SELECT k, (SELECT COUNT(*) FROM b) - n FROM a WHERE k = (SELECT MIN(k) FROM b) ORDER BY 1, 2",
        "SELECT k, (SELECT COUNT(*) FROM b) - n FROM a WHERE k = (SELECT MIN(k) FROM b) ORDER BY 1, 2 NULLS LAST",
    ),
    (
        "SELECT * FROM (SELECT k, n FROM a WHERE EXISTS (SELECT 1 FROM b WHERE b.n = a.n)) WHERE k > 0 ORDER BY 1, 2",
        "SELECT * FROM (SELECT k, n FROM a WHERE EXISTS (SELECT 1 FROM b WHERE b.n = a.n)) WHERE k > 0 \
         ORDER BY 1, 2 NULLS LAST",
    ),
    // ANY and ALL against their meaning in EXISTS (SQLite has neither): in a WHERE
    // clause a row passes when the comparison is true, and NOT tells false from unknown.
    (
        "SELECT k, n FROM a WHERE n > ANY (SELECT n FROM b WHERE k = 1) ORDER BY k, n",
        "SELECT k, n FROM a WHERE EXISTS (SELECT 1 FROM b WHERE b.k = 1 AND a.n > b.n) \
         ORDER BY k NULLS LAST, n NULLS LAST",
    ),
    (
        "SELECT k, n FROM a WHERE n <= ALL (SELECT n FROM b WHERE b.k = 2) ORDER BY k, n",
        "SELECT k, n FROM a WHERE NOT EXISTS (SELECT 1 FROM b WHERE b.k = 2 \
         AND (b.n IS NULL OR a.n IS NULL OR NOT (a.n <= b.n))) ORDER BY k NULLS LAST, n NULLS LAST",
    ),
    (
        "SELECT k, n FROM a WHERE NOT (n = ANY (SELECT n FROM b WHERE b.v = 'a')) ORDER BY k, n",
        "SELECT k, n FROM a WHERE NOT EXISTS (SELECT 1 FROM b WHERE b.v = 'a') OR (a.n IS NOT NULL \
         AND NOT EXISTS (SELECT 1 FROM b WHERE b.v = 'a' AND (b.n IS NULL OR a.n = b.n))) \
         ORDER BY k NULLS LAST, n NULLS LAST",
    ),
    (
        "SELECT k, n FROM a WHERE n < SOME (SELECT n FROM b WHERE b.k = a.k) ORDER BY k, n",
        "SELECT k, n FROM a WHERE EXISTS (SELECT 1 FROM b WHERE b.k = a.k AND a.n < b.n) \
         ORDER BY k NULLS LAST, n NULLS LAST",
    ),
    (
        "SELECT k, n, (SELECT COUNT(*) FROM b WHERE b.k = a.k AND b.n < a.n) FROM a ORDER BY 1, 2, 3",
        "SELECT k, n, (SELECT COUNT(*) FROM b WHERE b.k = a.k AND b.n < a.n) FROM a \
         ORDER BY 1 NULLS LAST, 2 NULLS LAST, 3",
    ),
    (
        "SELECT DISTINCT (SELECT MAX(v) FROM b WHERE b.k = a.k) FROM a WHERE n > 0 ORDER BY 1",
        "SELECT DISTINCT (SELECT MAX(v) FROM b WHERE b.k = a.k) FROM a WHERE n > 0 ORDER BY 1 NULLS LAST",
    ),
    (
        "SELECT k FROM a WHERE k IN (SELECT k FROM b WHERE n > (SELECT MIN(n) FROM a c WHERE c.k = b.k)) \
         ORDER BY k",
        "SELECT k FROM a WHERE k IN (SELECT k FROM b WHERE n > (SELECT MIN(n) FROM a c WHERE c.k = b.k)) \
         ORDER BY k",
    ),
    // Multi-column IN, with IN's NULL rules column by column.
    (
        "SELECT k, v, n FROM a WHERE (k, v) IN (SELECT k, v FROM b) ORDER BY k, v, n",
        "SELECT k, v, n FROM a WHERE (k, v) IN (SELECT k, v FROM b) ORDER BY k NULLS LAST, v NULLS LAST, n NULLS LAST",
    ),
    (
        "SELECT k, v, n FROM a WHERE (k, n) NOT IN (SELECT k, n FROM b WHERE v <> 'b') ORDER BY k, v, n",
        "SELECT k, v, n FROM a WHERE (k, n) NOT IN (SELECT k, n FROM b WHERE v <> 'b') \
         ORDER BY k NULLS LAST, v NULLS LAST, n NULLS LAST",
    ),
    (
        "SELECT k, v, n FROM a WHERE (n, k) IN (SELECT n, k FROM b WHERE b.v = a.v) ORDER BY k, v, n",
        "SELECT k, v, n FROM a WHERE (n, k) IN (SELECT n, k FROM b WHERE b.v = a.v) \
         ORDER BY k NULLS LAST, v NULLS LAST, n NULLS LAST",
    ),
    (
        "SELECT k, v, n FROM a WHERE (k, v) NOT IN ((1, 'a'), (2, NULL), (NULL, 'b')) ORDER BY k, v, n",
        "SELECT k, v, n FROM a WHERE (k, v) NOT IN (VALUES (1, 'a'), (2, NULL), (NULL, 'b')) \
         ORDER BY k NULLS LAST, v NULLS LAST, n NULLS LAST",
    ),
    (
        "SELECT k, COUNT(*) FROM a WHERE (k, n) IN ((0, 1), (1, -1), (3, 2)) GROUP BY k ORDER BY k",
        "SELECT k, COUNT(*) FROM a WHERE (k, n) IN (VALUES (0, 1), (1, -1), (3, 2)) GROUP BY k ORDER BY k",
    ),
    // A subquery reading a column two or three queries out, through the ones between:
    // in the select list (the shape of SQLAlchemy's column query), in EXISTS and IN.
    (
        "SELECT k, n, (SELECT (SELECT a.n * 2 FROM dual) FROM dual) x FROM a ORDER BY k, n",
        "SELECT k, n, (SELECT (SELECT a.n * 2)) x FROM a ORDER BY k NULLS LAST, n NULLS LAST",
    ),
    (
        "SELECT k, v, n, (SELECT COUNT(*) FROM b WHERE b.k = a.k AND EXISTS (SELECT 1 FROM b c WHERE c.n = a.n \
         AND c.v = b.v)) x FROM a ORDER BY k, v, n",
        "SELECT k, v, n, (SELECT COUNT(*) FROM b WHERE b.k = a.k AND EXISTS (SELECT 1 FROM b c WHERE c.n = a.n \
         AND c.v = b.v)) x FROM a ORDER BY k NULLS LAST, v NULLS LAST, n NULLS LAST",
    ),
    (
        "SELECT k, v, n FROM a WHERE EXISTS (SELECT 1 FROM b WHERE b.k = a.k AND b.n IN (SELECT c.n FROM b c \
         WHERE c.v = a.v)) ORDER BY k, v, n",
        "SELECT k, v, n FROM a WHERE EXISTS (SELECT 1 FROM b WHERE b.k = a.k AND b.n IN (SELECT c.n FROM b c \
         WHERE c.v = a.v)) ORDER BY k NULLS LAST, v NULLS LAST, n NULLS LAST",
    ),
    (
        "SELECT k, n FROM a WHERE n = (SELECT MAX(b.n) FROM b WHERE EXISTS (SELECT 1 FROM b c WHERE c.k = b.k \
         AND EXISTS (SELECT 1 FROM b d WHERE d.v = c.v AND d.k = a.k))) ORDER BY k, n",
        "SELECT k, n FROM a WHERE n = (SELECT MAX(b.n) FROM b WHERE EXISTS (SELECT 1 FROM b c WHERE c.k = b.k \
         AND EXISTS (SELECT 1 FROM b d WHERE d.v = c.v AND d.k = a.k))) ORDER BY k NULLS LAST, n NULLS LAST",
    ),
    // Correlated subqueries above an aggregation (reading GROUP BY keys), in HAVING, in
    // ORDER BY, and beside analytic functions, with one in the WHERE clause too.
    (
        "SELECT k, v, COUNT(*), (SELECT COUNT(*) FROM b WHERE b.k = a.k) c, \
         (SELECT MAX(n) FROM b WHERE b.k = a.k AND b.v = a.v) m FROM a GROUP BY k, v ORDER BY k, v, c, m",
        "SELECT k, v, COUNT(*), (SELECT COUNT(*) FROM b WHERE b.k = a.k) c, \
         (SELECT MAX(n) FROM b WHERE b.k = a.k AND b.v = a.v) m FROM a GROUP BY k, v \
         ORDER BY k NULLS LAST, v NULLS LAST, c, m NULLS LAST",
    ),
    (
        "SELECT k, SUM(n) FROM a GROUP BY k HAVING COUNT(*) > (SELECT COUNT(*) FROM b WHERE b.k = a.k) ORDER BY k",
        "SELECT k, SUM(n) FROM a GROUP BY k HAVING COUNT(*) > (SELECT COUNT(*) FROM b WHERE b.k = a.k) \
         ORDER BY k NULLS LAST",
    ),
    (
        "SELECT k, COUNT(*) FROM a WHERE EXISTS (SELECT /*+ NO_UNNEST */ 1 FROM b WHERE b.n = a.n) GROUP BY k \
         HAVING NOT EXISTS (SELECT 1 FROM b WHERE b.k = a.k AND b.v = 'a') ORDER BY k",
        "SELECT k, COUNT(*) FROM a WHERE EXISTS (SELECT 1 FROM b WHERE b.n = a.n) GROUP BY k \
         HAVING NOT EXISTS (SELECT 1 FROM b WHERE b.k = a.k AND b.v = 'a') ORDER BY k NULLS LAST",
    ),
    (
        "SELECT k, v, n FROM a ORDER BY (SELECT COUNT(*) FROM b WHERE b.n < a.n), k, v, n",
        "SELECT k, v, n FROM a ORDER BY (SELECT COUNT(*) FROM b WHERE b.n < a.n), k NULLS LAST, v NULLS LAST, \
         n NULLS LAST",
    ),
    (
        "SELECT k FROM a GROUP BY k ORDER BY (SELECT SUM(n) FROM b WHERE b.k = a.k), k",
        "SELECT k FROM a GROUP BY k ORDER BY (SELECT SUM(n) FROM b WHERE b.k = a.k) NULLS LAST, k NULLS LAST",
    ),
    (
        "SELECT k, v, n, ROW_NUMBER() OVER (ORDER BY k, v, n) r, (SELECT COUNT(*) FROM b WHERE b.k = a.k) c \
         FROM a WHERE n >= (SELECT /*+ NO_UNNEST */ MIN(n) FROM b WHERE b.v = a.v) ORDER BY r",
        "SELECT k, v, n, ROW_NUMBER() OVER (ORDER BY k NULLS LAST, v NULLS LAST, n NULLS LAST) r, \
         (SELECT COUNT(*) FROM b WHERE b.k = a.k) c FROM a WHERE n >= (SELECT MIN(n) FROM b WHERE b.v = a.v) ORDER BY r",
    ),
    (
        "SELECT k, RANK() OVER (ORDER BY COUNT(*), k) r, (SELECT MIN(v) FROM b WHERE b.k = a.k) m FROM a \
         GROUP BY k ORDER BY r",
        "SELECT k, RANK() OVER (ORDER BY COUNT(*), k NULLS LAST) r, (SELECT MIN(v) FROM b WHERE b.k = a.k) m FROM a \
         GROUP BY k ORDER BY r",
    ),
];

#[test]
fn subqueries_answer_as_sqlite_does() {
    answers_as_sqlite(file!(), 40, table_rows(4, true, 20), QUERIES);
}

#[test]
fn subqueries_refuse_and_fail_as_oracle_does() {
    let (_dir, _path, db) = db();
    let s = db.session();
    exec(&s, "CREATE TABLE t (id NUMBER, d VARCHAR2(10))");
    exec(&s, "INSERT INTO t SELECT LEVEL, 'd' || MOD(LEVEL, 2) FROM dual CONNECT BY LEVEL <= 4");
    let e = error(&s, "SELECT id FROM t WHERE id = (SELECT id FROM t)");
    assert!(e.contains("ORA-01427"), "{e}");
    let e = error(&s, "SELECT id FROM t WHERE id IN (SELECT id, d FROM t)");
    assert!(e.contains("ORA-00913"), "{e}");
    let e = error(&s, "SELECT id FROM t WHERE (id, d) IN (SELECT id FROM t)");
    assert!(e.contains("ORA-00947"), "{e}");
    let e = error(&s, "SELECT id FROM t WHERE (id, d) IN ((1, 'd1', 2))");
    assert!(e.contains("ORA-00913"), "{e}");
    assert_eq!(
        lines(&s, "SELECT id FROM t WHERE (id, d) IN (SELECT id, d FROM t WHERE id > 2) ORDER BY id"),
        ["3", "4"]
    );
    // A CHAR column compares without its trailing blanks.
    exec(&s, "CREATE TABLE ch (a CHAR(3), b NUMBER)");
    exec(&s, "INSERT INTO ch VALUES ('x', 1)");
    assert_eq!(lines(&s, "SELECT b FROM ch WHERE (a, b) IN (SELECT 'x', 1 FROM dual)"), ["1"]);
    assert_eq!(lines(&s, "SELECT COUNT(*) FROM ch WHERE (a, b) NOT IN (SELECT 'x', 1 FROM dual)"), ["0"]);
    // A text compared with a number converts, as `=` does.
    assert_eq!(lines(&s, "SELECT id FROM t WHERE (id, d) IN (SELECT '2', 'd0' FROM dual)"), ["2"]);
    // In HAVING and the select list of a query that aggregates, one runs for each group,
    // reading its GROUP BY keys; any other column of the row around it is ORA-00979.
    assert_eq!(
        lines(&s, "SELECT d FROM t GROUP BY d HAVING COUNT(*) >= (SELECT COUNT(*) FROM t u WHERE u.d = t.d)"),
        ["d1", "d0"]
    );
    let e = error(&s, "SELECT d, (SELECT COUNT(*) FROM t u WHERE u.id = t.id) FROM t GROUP BY d");
    assert!(e.contains("ORA-00979") && e.contains("ID"), "{e}");
    // In the select list of a query that does not aggregate, one runs for each row.
    assert_eq!(
        lines(&s, "SELECT id, (SELECT COUNT(*) FROM t u WHERE u.id < t.id) FROM t ORDER BY id"),
        ["1|0", "2|1", "3|2", "4|3"]
    );
    // A subquery's second row is an error only where its value is read.
    assert_eq!(lines(&s, "SELECT CASE WHEN 1 = 1 THEN 1 ELSE (SELECT id FROM t) END FROM dual"), ["1"]);
    // IN compares text with numbers as `=` does.
    assert_eq!(lines(&s, "SELECT id FROM t WHERE id IN (SELECT '2' FROM dual)"), ["2"]);
    assert_eq!(lines(&s, "SELECT COUNT(*) FROM t WHERE id NOT IN (SELECT '2' FROM dual)"), ["3"]);
    // A qualifier naming the subquery's own table never reaches the outer query.
    let e = error(&s, "SELECT id FROM t WHERE EXISTS (SELECT 1 FROM dual t WHERE t.id = 1)");
    assert!(e.contains("T.ID does not exist"), "{e}");
    // A correlated subquery in ON is refused, whatever the WHERE clause holds.
    let e = error(&s, "SELECT a.id FROM t a JOIN t b ON b.id = a.id AND EXISTS (SELECT 1 FROM t c WHERE c.id = a.id)");
    assert!(e.contains("correlated subquery outside"), "{e}");
    // One FILTER below the aggregation for the WHERE clause, one above it for HAVING.
    let both = "SELECT d, COUNT(*) FROM t WHERE EXISTS (SELECT /*+ NO_UNNEST */ 1 FROM t u WHERE u.id = t.id) \
                GROUP BY d HAVING EXISTS (SELECT 1 FROM t u WHERE u.d = t.d AND u.id > 3) ORDER BY d";
    assert_eq!(lines(&s, both), ["d0|2"]);
    let p = plan(&s, both);
    assert_eq!(p.matches("FILTER").count(), 2, "{p}");
    // Analytic functions hold rows back: a HAVING and a select list both correlated
    // would need a FILTER on each side of them.
    let e = error(
        &s,
        "SELECT d, RANK() OVER (ORDER BY d), (SELECT COUNT(*) FROM t u WHERE u.d = t.d) FROM t GROUP BY d \
         HAVING EXISTS (SELECT 1 FROM t u WHERE u.d = t.d)",
    );
    assert!(e.contains("HAVING clause and the select list"), "{e}");
    // An ORDER BY item written as a select item holding a subquery sorts on that column:
    // the subquery runs once, and DISTINCT finds the item in the select list.
    let q = "SELECT DISTINCT (SELECT COUNT(*) FROM t u WHERE u.id < t.id) n FROM t \
             ORDER BY (SELECT COUNT(*) FROM t u WHERE u.id < t.id) DESC";
    assert_eq!(lines(&s, q), ["3", "2", "1", "0"]);
    let p = plan(&s, "SELECT id, (SELECT MAX(id) FROM t) m FROM t ORDER BY (SELECT MAX(id) FROM t), id");
    assert_eq!(p.matches("TABLE ACCESS FULL").count(), 2, "{p}");
    // An aggregate's or an analytic function's argument is computed below the FILTER.
    for sql in [
        "SELECT d, SUM((SELECT COUNT(*) FROM t u WHERE u.d = t.d)) FROM t GROUP BY d",
        "SELECT d FROM t GROUP BY d ORDER BY MAX((SELECT COUNT(*) FROM t u WHERE u.d = t.d))",
        "SELECT d, RANK() OVER (ORDER BY (SELECT COUNT(*) FROM t u WHERE u.id < t.id)) FROM t",
    ] {
        let e = error(&s, sql);
        assert!(e.contains("inside an aggregate or analytic function call"), "{sql}: {e}");
    }
    // A name two queries out resolves through the query between; one found nowhere is
    // still the innermost query's error. A subquery reading two levels out stays the
    // FILTER's: neither level becomes a join.
    assert_eq!(lines(&s, "SELECT (SELECT (SELECT t.id FROM dual) FROM dual) FROM t ORDER BY 1"), ["1", "2", "3", "4"]);
    let e = error(&s, "SELECT (SELECT (SELECT t.nope FROM dual) FROM dual) FROM t");
    assert!(e.contains("T.NOPE does not exist"), "{e}");
    let two_out = "SELECT id FROM t WHERE EXISTS (SELECT 1 FROM t u WHERE u.d = t.d \
                   AND EXISTS (SELECT 1 FROM t w WHERE w.id = t.id + 1 AND w.d <> u.d)) ORDER BY id";
    assert_eq!(lines(&s, two_out), ["1", "2", "3"]);
    let p = plan(&s, two_out);
    assert_eq!(p.matches("FILTER").count(), 2, "{p}");
    let e = error(&s, "SELECT id FROM t WHERE id IN (SELECT nope FROM t)");
    assert!(e.contains("NOPE does not exist"), "{e}");
    let e = error(&s, "ALTER TABLE t ADD CONSTRAINT c CHECK (id IN (SELECT id FROM t))");
    assert!(e.contains("ORA-02251") || e.contains("subquery"), "{e}");
    // No row: a scalar subquery is NULL; NOT IN of no row is true, of a NULL never.
    assert_eq!(lines(&s, "SELECT COUNT(*) FROM t WHERE (SELECT id FROM t WHERE id > 9) IS NULL"), ["4"]);
    assert_eq!(lines(&s, "SELECT COUNT(*) FROM t WHERE id NOT IN (SELECT id FROM t WHERE id > 9)"), ["4"]);
    assert_eq!(lines(&s, "SELECT COUNT(*) FROM t WHERE id NOT IN (SELECT NULL FROM dual)"), ["0"]);
    // A session keeps the plan; each execution runs the subquery again.
    assert_eq!(lines(&s, "SELECT COUNT(*) FROM t WHERE id > (SELECT AVG(id) FROM t)"), ["2"]);
    exec(&s, "INSERT INTO t VALUES (100, 'x')");
    assert_eq!(lines(&s, "SELECT COUNT(*) FROM t WHERE id > (SELECT AVG(id) FROM t)"), ["1"]);
    // INSERT ... SELECT reads the table as it was before the statement.
    exec(&s, "INSERT INTO t SELECT id + 1000, d FROM t WHERE id = (SELECT MAX(id) FROM t)");
    assert_eq!(lines(&s, "SELECT id FROM t WHERE id > 99 ORDER BY id"), ["100", "1100"]);
}

#[test]
fn update_and_delete_run_their_subqueries_once_on_the_table_as_it_was() {
    let (_dir, _path, db) = db();
    let s = db.session();
    exec(&s, "CREATE TABLE t (id NUMBER PRIMARY KEY, d VARCHAR2(10), v NUMBER)");
    exec(&s, "INSERT INTO t SELECT LEVEL, 'd' || MOD(LEVEL, 3), LEVEL * 10 FROM dual CONNECT BY LEVEL <= 10");
    exec(&s, "CREATE TABLE u (d VARCHAR2(10), w NUMBER)");
    exec(&s, "INSERT INTO u VALUES ('d0', 30), ('d1', 70)");
    // SET from a subquery, rows chosen by an IN subquery.
    exec(&s, "UPDATE t SET v = (SELECT MAX(w) FROM u) WHERE d IN (SELECT d FROM u WHERE w > 50)");
    assert_eq!(lines(&s, "SELECT id FROM t WHERE v = 70 ORDER BY id"), ["1", "4", "7", "10"]);
    // The average is the table's before the DELETE (61), not a moving one.
    exec(&s, "DELETE FROM t WHERE v < (SELECT AVG(v) FROM t)");
    assert_eq!(lines(&s, "SELECT id FROM t ORDER BY id"), ["1", "4", "7", "8", "9", "10"]);
    exec(&s, "DELETE FROM t WHERE NOT EXISTS (SELECT 1 FROM u WHERE w > 1000)");
    assert_eq!(lines(&s, "SELECT COUNT(*) FROM t"), ["0"]);
    exec(&s, "INSERT INTO t VALUES (1, 'a', 1), (2, 'b', 2)");
    // A correlated subquery reading the table changed, in a transaction that changed it
    // before (so that its reads see the transaction's own changes): over blocks, each row
    // reads the table as the statement found it, none of the rows it changed.
    exec(&s, "CREATE TABLE big (id NUMBER, n NUMBER, pad VARCHAR2(400))");
    exec(&s, "INSERT INTO big SELECT LEVEL, LEVEL * 10, RPAD('x', 400, 'x') FROM dual CONNECT BY LEVEL <= 600");
    manual(&s);
    exec(&s, "UPDATE big SET n = n + 1");
    assert!(int(&s, "SELECT blocks_below_hwm FROM user_segments WHERE segment_name = 'BIG'") > 10);
    exec(&s, "UPDATE big SET n = (SELECT COUNT(*) FROM big x WHERE x.n < big.n)");
    assert_eq!(lines(&s, "SELECT COUNT(*) FROM big WHERE n <> id - 1"), ["0"]);
    exec(&s, "DELETE FROM big WHERE n < (SELECT MIN(n) + 100 FROM big x WHERE x.id >= big.id - 1000)");
    assert_eq!(lines(&s, "SELECT COUNT(*), MIN(id) FROM big"), ["500|101"]);
    exec(&s, "COMMIT");
    s.set_autocommit(true);
    // WHERE's other conditions come first: a row they leave out runs no subquery (which
    // would divide by zero here).
    exec(&s, "CREATE TABLE g (k NUMBER, g NUMBER, v NUMBER)");
    exec(&s, "INSERT INTO g VALUES (1, 1, 5), (2, 0, 5)");
    exec(&s, "CREATE TABLE w (g NUMBER, w NUMBER)");
    exec(&s, "INSERT INTO w VALUES (1, 5), (0, 5)");
    exec(&s, "DELETE FROM g WHERE k = 1 AND v = (SELECT w / g.g FROM w WHERE w.g = g.g)");
    assert_eq!(lines(&s, "SELECT k FROM g"), ["2"]);
    let e = error(&s, "UPDATE u SET w = (SELECT v FROM t)");
    assert!(e.contains("ORA-01427"), "{e}");
    assert_eq!(lines(&s, "SELECT w FROM u ORDER BY w"), ["30", "70"], "the failed UPDATE changed nothing");
}

/// UPDATE and DELETE with correlated subqueries: (lioscope's statement, SQLite's).
const CHANGES: &[(&str, &str)] = &[
    (
        "UPDATE a SET n = (SELECT MAX(n) FROM b WHERE b.k = a.k)",
        "UPDATE a SET n = (SELECT MAX(n) FROM b WHERE b.k = a.k)",
    ),
    (
        "DELETE FROM a WHERE EXISTS (SELECT 1 FROM b WHERE b.k = a.k AND b.v = a.v)",
        "DELETE FROM a WHERE EXISTS (SELECT 1 FROM b WHERE b.k = a.k AND b.v = a.v)",
    ),
    (
        "DELETE FROM a WHERE n NOT IN (SELECT n FROM b WHERE b.k = a.k)",
        "DELETE FROM a WHERE n NOT IN (SELECT n FROM b WHERE b.k = a.k)",
    ),
    (
        "UPDATE a SET v = (SELECT MIN(v) FROM b WHERE b.n = a.n), n = n + 1 WHERE k IN (SELECT k FROM b WHERE b.v = a.v)",
        "UPDATE a SET v = (SELECT MIN(v) FROM b WHERE b.n = a.n), n = n + 1 WHERE k IN (SELECT k FROM b WHERE b.v = a.v)",
    ),
    // A subquery reading the changed row two levels out, in SET and in WHERE.
    (
        "UPDATE a SET n = (SELECT COUNT(*) FROM b WHERE b.k = a.k AND EXISTS (SELECT 1 FROM b c WHERE c.v = b.v \
         AND c.n = a.n))",
        "UPDATE a SET n = (SELECT COUNT(*) FROM b WHERE b.k = a.k AND EXISTS (SELECT 1 FROM b c WHERE c.v = b.v \
         AND c.n = a.n))",
    ),
    (
        "DELETE FROM a WHERE EXISTS (SELECT 1 FROM b WHERE b.k = a.k AND b.n IN (SELECT c.n FROM b c WHERE c.v = a.v))",
        "DELETE FROM a WHERE EXISTS (SELECT 1 FROM b WHERE b.k = a.k AND b.n IN (SELECT c.n FROM b c WHERE c.v = a.v))",
    ),
    // Reading the table changed: every row's subquery sees the table as it was. SQLite's
    // subqueries see the rows its statement changed already, so they read a copy.
    (
        "UPDATE a SET n = (SELECT COUNT(*) FROM a x WHERE x.n < a.n)",
        "CREATE TEMP TABLE a0 AS SELECT * FROM a; UPDATE a SET n = (SELECT COUNT(*) FROM a0 x WHERE x.n < a.n); \
         DROP TABLE a0",
    ),
    (
        "DELETE FROM a WHERE n > (SELECT AVG(n) FROM a x WHERE x.k = a.k)",
        "CREATE TEMP TABLE a0 AS SELECT * FROM a; DELETE FROM a WHERE n > (SELECT AVG(n) FROM a0 x WHERE x.k = a.k); \
         DROP TABLE a0",
    ),
    (
        "UPDATE a SET k = k + 10 WHERE NOT EXISTS (SELECT 1 FROM a x WHERE x.k = a.k AND x.n > a.n) AND ROWNUM <= 3",
        "CREATE TEMP TABLE a0 AS SELECT * FROM a; UPDATE a SET k = k + 10 WHERE rowid IN (SELECT rowid FROM a \
         WHERE NOT EXISTS (SELECT 1 FROM a0 x WHERE x.k = a.k AND x.n > a.n) ORDER BY rowid LIMIT 3); DROP TABLE a0",
    ),
];

#[test]
fn correlated_updates_and_deletes_change_what_sqlite_changes() {
    changes_as_sqlite(file!(), 24, table_rows(4, true, 16), CHANGES);
}

/// A row whose correlated values another transaction changed while the statement waited
/// for its lock is decided on with the subquery run again for its new values.
#[test]
fn a_correlated_update_after_a_row_lock_wait_reads_the_rows_new_values() {
    let (_dir, _path, db) = db();
    let (s, other) = (db.session(), db.session());
    exec(&s, "CREATE TABLE d (id NUMBER PRIMARY KEY, bonus NUMBER)");
    exec(&s, "INSERT INTO d VALUES (1, 10), (2, 20)");
    exec(&s, "CREATE TABLE e (id NUMBER PRIMARY KEY, d NUMBER, pay NUMBER)");
    exec(&s, "INSERT INTO e VALUES (1, 1, 0), (2, 1, 0)");
    exec(&s, "COMMIT");
    exec(manual(&other), "UPDATE e SET d = 2 WHERE id = 2");
    let committer = std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_millis(150));
        exec(&other, "COMMIT");
    });
    exec(
        &s,
        "UPDATE e SET pay = (SELECT bonus FROM d WHERE d.id = e.d) WHERE EXISTS (SELECT 1 FROM d WHERE d.id = e.d)",
    );
    committer.join().unwrap();
    assert_eq!(lines(&s, "SELECT id, d, pay FROM e ORDER BY id"), ["1|1|10", "2|2|20"]);
}

#[test]
fn subqueries_show_their_lines_and_what_each_did() {
    let (_dir, _path, db) = db();
    let s = db.session();
    exec(&s, "CREATE TABLE t (id NUMBER, d VARCHAR2(10), v NUMBER)");
    exec(&s, "INSERT INTO t SELECT LEVEL, 'd' || MOD(LEVEL, 3), LEVEL FROM dual CONNECT BY LEVEL <= 30");
    // Run in the FILTER (NO_UNNEST: unnested, it would be a join to its groups).
    let p = plan(&s, "SELECT id FROM t x WHERE v = (SELECT /*+ NO_UNNEST */ MAX(v) FROM t y WHERE y.d = x.d)");
    for line in ["FILTER", "SORT AGGREGATE", "filter(\"V\"=(SELECT", "filter(\"D\"=\"X\".\"D\")"] {
        assert!(p.contains(line), "{line} in\n{p}");
    }
    let analyzed = |sql: &str| analyzed_lines(&s, sql, true);
    // Three distinct values of D: the subquery runs three times for 30 rows (Oracle's
    // scalar subquery caching).
    assert_eq!(
        analyzed("SELECT id FROM t x WHERE v = (SELECT /*+ NO_UNNEST */ MAX(v) FROM t y WHERE y.d = x.d)"),
        [
            "3 SELECT STATEMENT x1",
            "3 FILTER x1",
            "30 TABLE ACCESS FULL T x1",
            "3 SORT AGGREGATE x3",
            "30 TABLE ACCESS FULL T x3",
        ]
    );
    // An uncorrelated subquery runs once, its lines under the query's top line.
    assert_eq!(
        analyzed("SELECT COUNT(*) FROM t WHERE v > (SELECT AVG(v) FROM t)"),
        [
            "1 SELECT STATEMENT x1",
            "1 SORT AGGREGATE x1",
            "15 TABLE ACCESS FULL T x1",
            "1 SORT AGGREGATE x1",
            "30 TABLE ACCESS FULL T x1",
        ]
    );
}
