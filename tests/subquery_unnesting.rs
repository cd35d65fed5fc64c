//! Correlated EXISTS, NOT EXISTS and IN unnested into semi and anti joins, and scalar
//! subqueries of an aggregate into joins to their groups: every method and build side
//! (by the subquery's hints) checked against SQLite on random tables with NULLs and
//! repeated values, against the FILTER's answers on a join that spills, and the plan
//! lines with what each did.

mod common;

use common::sqlite::{answers_as_sqlite, answers_as_sqlite_with, table_rows};
use common::*;

/// Queries whose subquery takes hints `{h}` (lioscope's text) and SQLite's text; every
/// ORDER BY orders completely, NULLs last in both.
const TEMPLATES: &[(&str, &str)] = &[
    (
        "SELECT k, v, n FROM a WHERE EXISTS (SELECT {h} 1 FROM b WHERE b.k = a.k) ORDER BY k, v, n",
        "SELECT k, v, n FROM a WHERE EXISTS (SELECT 1 FROM b WHERE b.k = a.k) \
         ORDER BY k NULLS LAST, v NULLS LAST, n NULLS LAST",
    ),
    (
        "SELECT k, v, n FROM a WHERE NOT EXISTS (SELECT {h} 1 FROM b WHERE b.k = a.k AND b.n > a.n) ORDER BY k, v, n",
        "SELECT k, v, n FROM a WHERE NOT EXISTS (SELECT 1 FROM b WHERE b.k = a.k AND b.n > a.n) \
         ORDER BY k NULLS LAST, v NULLS LAST, n NULLS LAST",
    ),
    (
        "SELECT k, v, n FROM a WHERE v IN (SELECT {h} v FROM b WHERE b.k = a.k AND b.n IS NOT NULL) ORDER BY k, v, n",
        "SELECT k, v, n FROM a WHERE v IN (SELECT v FROM b WHERE b.k = a.k AND b.n IS NOT NULL) \
         ORDER BY k NULLS LAST, v NULLS LAST, n NULLS LAST",
    ),
    (
        "SELECT k, COUNT(*) FROM a WHERE n > 0 AND NOT EXISTS (SELECT {h} * FROM b WHERE b.k = a.k AND b.v <> a.v) \
         AND EXISTS (SELECT {h} * FROM b c WHERE c.n = a.n + 1) GROUP BY k ORDER BY k",
        "SELECT k, COUNT(*) FROM a WHERE n > 0 AND NOT EXISTS (SELECT * FROM b WHERE b.k = a.k AND b.v <> a.v) \
         AND EXISTS (SELECT * FROM b c WHERE c.n = a.n + 1) GROUP BY k ORDER BY k NULLS LAST",
    ),
    (
        "SELECT x.k, y.v FROM a x JOIN b y ON x.k = y.k WHERE EXISTS (SELECT {h} 1 FROM a z WHERE z.v = y.v \
         AND z.n < x.n) ORDER BY 1, 2",
        "SELECT x.k, y.v FROM a x JOIN b y ON x.k = y.k WHERE EXISTS (SELECT 1 FROM a z WHERE z.v = y.v \
         AND z.n < x.n) ORDER BY 1 NULLS LAST, 2 NULLS LAST",
    ),
    (
        "SELECT k, n FROM a WHERE NOT EXISTS (SELECT {h} 1 FROM b WHERE b.k = a.k AND b.v = 'a') \
         AND k + 0 < (SELECT COUNT(*) FROM b WHERE b.n = a.n) ORDER BY k, n",
        "SELECT k, n FROM a WHERE NOT EXISTS (SELECT 1 FROM b WHERE b.k = a.k AND b.v = 'a') \
         AND k + 0 < (SELECT COUNT(*) FROM b WHERE b.n = a.n) ORDER BY k NULLS LAST, n NULLS LAST",
    ),
    (
        "SELECT v, (SELECT MAX(n) FROM b WHERE b.v = a.v) FROM a WHERE EXISTS (SELECT {h} 1 FROM b WHERE b.k = a.k) \
         ORDER BY 1, 2",
        "SELECT v, (SELECT MAX(n) FROM b WHERE b.v = a.v) FROM a WHERE EXISTS (SELECT 1 FROM b WHERE b.k = a.k) \
         ORDER BY 1 NULLS LAST, 2 NULLS LAST",
    ),
    (
        "SELECT k, v, n FROM a WHERE EXISTS (SELECT {h} 1 FROM b, a c WHERE b.k = a.k AND c.v = b.v AND c.n < a.n) \
         ORDER BY k, v, n",
        "SELECT k, v, n FROM a WHERE EXISTS (SELECT 1 FROM b, a c WHERE b.k = a.k AND c.v = b.v AND c.n < a.n) \
         ORDER BY k NULLS LAST, v NULLS LAST, n NULLS LAST",
    ),
    // Scalar subqueries of an aggregate, joined to their groups.
    (
        "SELECT k, n FROM a x WHERE n = (SELECT {h} MAX(n) FROM a y WHERE y.k = x.k) ORDER BY k, n",
        "SELECT k, n FROM a x WHERE n = (SELECT MAX(n) FROM a y WHERE y.k = x.k) ORDER BY k NULLS LAST, n NULLS LAST",
    ),
    (
        "SELECT k, v, n FROM a WHERE (SELECT {h} 2 * AVG(n) - 1 FROM b WHERE b.v = a.v AND b.k = a.k) < a.n          ORDER BY k, v, n",
        "SELECT k, v, n FROM a WHERE (SELECT 2 * AVG(n) - 1 FROM b WHERE b.v = a.v AND b.k = a.k) < a.n          ORDER BY k NULLS LAST, v NULLS LAST, n NULLS LAST",
    ),
    // A key of an expression finds several groups; an analytic function sees the rows of
    // its run only: these stay the FILTER's.
    (
        "SELECT k, v, n FROM a WHERE n < (SELECT {h} SUM(n) FROM b WHERE b.k + b.n = a.k) ORDER BY k, v, n",
        "SELECT k, v, n FROM a WHERE n < (SELECT SUM(n) FROM b WHERE b.k + b.n = a.k) \
         ORDER BY k NULLS LAST, v NULLS LAST, n NULLS LAST",
    ),
    (
        "SELECT k, v, n FROM a WHERE n IN (SELECT {h} COUNT(*) OVER () FROM b WHERE b.k = a.k) ORDER BY k, v, n",
        "SELECT k, v, n FROM a WHERE n IN (SELECT COUNT(*) OVER () FROM b WHERE b.k = a.k) \
         ORDER BY k NULLS LAST, v NULLS LAST, n NULLS LAST",
    ),
    // Over no rows COUNT is 0 and NVL is its default, not NULL: these stay the FILTER's.
    (
        "SELECT k, v, n FROM a WHERE 1 > (SELECT {h} COUNT(*) FROM b WHERE b.k = a.k) ORDER BY k, v, n",
        "SELECT k, v, n FROM a WHERE 1 > (SELECT COUNT(*) FROM b WHERE b.k = a.k)          ORDER BY k NULLS LAST, v NULLS LAST, n NULLS LAST",
    ),
    (
        "SELECT k, v, n FROM a WHERE n < (SELECT {h} NVL(MAX(n), 9) FROM b WHERE b.k = a.k) ORDER BY k, v, n",
        "SELECT k, v, n FROM a WHERE n < (SELECT IFNULL(MAX(n), 9) FROM b WHERE b.k = a.k)          ORDER BY k NULLS LAST, v NULLS LAST, n NULLS LAST",
    ),
];

/// The hints each template runs with: the optimizer's choice, the FILTER, and each
/// method and build side.
const HINTS: &[&str] = &[
    "",
    "/*+ NO_UNNEST */",
    "/*+ HASH_SJ SWAP_JOIN_INPUTS(b) */",
    "/*+ HASH_SJ NO_SWAP_JOIN_INPUTS(b) */",
    "/*+ NL_SJ */",
    "/*+ MERGE_SJ */",
];

fn queries() -> Vec<(String, String)> {
    let mut out = Vec::new();
    for (ours, theirs) in TEMPLATES {
        for h in HINTS {
            out.push((ours.replace("{h}", h), theirs.to_string()));
        }
    }
    out
}

#[test]
fn unnested_subqueries_answer_as_sqlite_does_by_every_method() {
    let queries = queries();
    let pairs: Vec<(&str, &str)> = queries.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
    answers_as_sqlite(file!(), 24, table_rows(4, true, 20), &pairs);
}

/// The same, with indexes on the subqueries' tables: a nested loop (asked for, or
/// chosen) probes an index by the join's keys, its other keys and the subquery's filter
/// checked on each row found.
#[test]
fn semi_and_anti_joins_probing_an_index_answer_as_sqlite_does() {
    let mut queries = queries();
    queries.push((
        "SELECT k, v, n FROM a WHERE NOT EXISTS (SELECT /*+ NL_AJ */ 1 FROM b WHERE b.k = a.k AND b.n = a.n + 1 \
         AND b.v IS NOT NULL) ORDER BY k, v, n"
            .into(),
        "SELECT k, v, n FROM a WHERE NOT EXISTS (SELECT 1 FROM b WHERE b.k = a.k AND b.n = a.n + 1 \
         AND b.v IS NOT NULL) ORDER BY k NULLS LAST, v NULLS LAST, n NULLS LAST"
            .into(),
    ));
    let pairs: Vec<(&str, &str)> = queries.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
    let indexes = ["CREATE INDEX b_k_n ON b (k, n)", "CREATE INDEX a_v ON a (v)"];
    answers_as_sqlite_with(file!(), 16, table_rows(4, true, 20), &indexes, &pairs);
}

/// Two tables whose semi and anti joins spill when the hash area is small.
fn spilling_tables(s: &lioscope::Session) {
    exec(s, "CREATE TABLE o (id NUMBER, g NUMBER, pad VARCHAR2(40))");
    exec(s, "INSERT INTO o SELECT LEVEL, MOD(LEVEL, 7), RPAD('o', 40, 'x') FROM dual CONNECT BY LEVEL <= 3000");
    exec(s, "CREATE TABLE l (oid NUMBER, g NUMBER, pad VARCHAR2(40))");
    exec(
        s,
        "INSERT INTO l SELECT MOD(LEVEL * 7, 4000), MOD(LEVEL, 5), RPAD('l', 40, 'y') FROM dual CONNECT BY LEVEL <= 6000",
    );
    exec(s, "INSERT INTO l VALUES (NULL, 1, 'null key'), (5, NULL, 'null g')");
}

#[test]
fn semi_and_anti_joins_that_spill_give_the_filters_rows() {
    let (_dir, _path, db) = db();
    let s = db.session();
    spilling_tables(&s);
    let queries = [
        "SELECT COUNT(*), SUM(id) FROM o WHERE EXISTS (SELECT {h} 1 FROM l WHERE l.oid = o.id AND l.g <> o.g)",
        "SELECT COUNT(*), SUM(id) FROM o WHERE NOT EXISTS (SELECT {h} 1 FROM l WHERE l.oid = o.id AND l.g < o.g)",
        "SELECT COUNT(*), SUM(id) FROM o WHERE g IN (SELECT {h} g FROM l WHERE l.oid = o.id)",
    ];
    let filter: Vec<Vec<String>> = queries.iter().map(|q| lines(&s, &q.replace("{h}", "/*+ NO_UNNEST */"))).collect();
    exec(&s, "ALTER SESSION SET workarea_size_policy = manual");
    exec(&s, "ALTER SESSION SET hash_area_size = 16K");
    let spilled = || mystat(&s, "workarea executions - onepass") + mystat(&s, "workarea executions - multipass");
    for side in ["SWAP_JOIN_INPUTS(l)", "NO_SWAP_JOIN_INPUTS(l)"] {
        for (q, expected) in queries.iter().zip(&filter) {
            let before = spilled();
            let sql = q.replace("{h}", &format!("/*+ HASH_SJ {side} */"));
            assert_eq!(&lines(&s, &sql), expected, "{sql}");
            assert!(spilled() > before, "{sql} spilled");
        }
    }
}

#[test]
fn a_nested_loop_semi_join_probes_the_subquerys_index_once_a_row() {
    let (_dir, _path, db) = db();
    let s = db.session();
    exec(&s, "CREATE TABLE o (id NUMBER PRIMARY KEY, g NUMBER)");
    exec(&s, "INSERT INTO o SELECT LEVEL, MOD(LEVEL, 10) FROM dual CONNECT BY LEVEL <= 2000");
    exec(&s, "CREATE TABLE l (oid NUMBER, ln NUMBER, q NUMBER, CONSTRAINT l_pk PRIMARY KEY (oid, ln))");
    exec(
        &s,
        "INSERT INTO l SELECT TRUNC((LEVEL - 1) / 4) + 1, MOD(LEVEL, 4), MOD(LEVEL, 9) FROM dual CONNECT BY LEVEL <= 8000",
    );
    exec(&s, "COMMIT");
    exec(&s, "ANALYZE TABLE o COMPUTE STATISTICS");
    exec(&s, "ANALYZE TABLE l COMPUTE STATISTICS");
    let sql = "SELECT COUNT(*) FROM o WHERE id <= 5 AND EXISTS (SELECT /*+ NL_SJ */ 1 FROM l WHERE l.oid = o.id \
               AND l.q > 6 AND l.ln <> o.g)";
    let p = plan(&s, sql);
    for line in ["NESTED LOOPS SEMI", "INDEX RANGE SCAN", "L_PK", "access(\"OID\"=\"O\".\"ID\")", "filter(\"Q\">6)"] {
        assert!(p.contains(line), "{line} in\n{p}");
    }
    // Five orders, each probed once; a probe stops at its first line that joins, so
    // fewer than the five orders' 20 lines are read, and no other line of `l`.
    let hashed = lines(&s, &sql.replace("NL_SJ", "HASH_SJ"));
    assert_eq!(lines(&s, sql), hashed);
    let analyzed = analyzed_lines(&s, sql, true);
    assert!(analyzed.iter().any(|l| l.ends_with("INDEX RANGE SCAN L_PK x5")), "{analyzed:?}");
    let entries: u64 = analyzed
        .iter()
        .find(|l| l.ends_with("L_PK x5"))
        .and_then(|l| l.split(' ').next()?.parse().ok())
        .expect("the probe's line");
    assert!((5..20).contains(&entries), "{analyzed:?}");
}

#[test]
fn unnested_subqueries_show_their_joins_and_what_each_did() {
    let (_dir, _path, db) = db();
    let s = db.session();
    exec(&s, "CREATE TABLE t (id NUMBER, d VARCHAR2(10), v NUMBER)");
    exec(&s, "INSERT INTO t SELECT LEVEL, 'd' || MOD(LEVEL, 3), LEVEL FROM dual CONNECT BY LEVEL <= 300");
    exec(&s, "CREATE TABLE u (id NUMBER, w NUMBER)");
    exec(&s, "INSERT INTO u SELECT MOD(LEVEL, 50), LEVEL FROM dual CONNECT BY LEVEL <= 80");
    exec(&s, "ANALYZE TABLE t COMPUTE STATISTICS");
    exec(&s, "ANALYZE TABLE u COMPUTE STATISTICS");
    let p = plan(&s, "SELECT COUNT(*) FROM t WHERE EXISTS (SELECT 1 FROM u WHERE u.id = t.id AND u.w > t.v)");
    for line in ["HASH JOIN RIGHT SEMI", "access(\"ID\"=\"T\".\"ID\")", "filter(\"W\">\"T\".\"V\")"] {
        assert!(p.contains(line), "{line} in\n{p}");
    }
    // A subquery reading one table joins as its table's line; no FILTER is left.
    assert!(!p.contains("FILTER") && !p.contains("VW_SQ"), "{p}");
    let analyzed = |sql: &str| analyzed_lines(&s, sql, true);
    // u's ids 0..=49, 1..=30 twice: 49 of t's rows have a row of u, each given once;
    // one run of u for all.
    assert_eq!(
        analyzed("SELECT COUNT(*) FROM t WHERE EXISTS (SELECT 1 FROM u WHERE u.id = t.id)"),
        [
            "1 SELECT STATEMENT x1",
            "1 SORT AGGREGATE x1",
            "49 HASH JOIN RIGHT SEMI x1",
            "80 TABLE ACCESS FULL U x1",
            "300 TABLE ACCESS FULL T x1",
        ]
    );
    // A nested loop's inner run stops at the first row that joins: id k is u's k-th row,
    // so the runs for ids 1 to 4 read 1 + 2 + 3 + 4 rows.
    assert_eq!(
        analyzed("SELECT COUNT(*) FROM t WHERE NOT EXISTS (SELECT /*+ NL_AJ */ 1 FROM u WHERE u.id = t.id) AND v < 5"),
        [
            "1 SELECT STATEMENT x1",
            "1 SORT AGGREGATE x1",
            "0 NESTED LOOPS ANTI x1",
            "4 TABLE ACCESS FULL T x1",
            "10 TABLE ACCESS FULL U x4",
        ]
    );
    // A subquery of a join is read under a VIEW line.
    let sql = "SELECT COUNT(*) FROM t WHERE EXISTS (SELECT 1 FROM u, u w WHERE u.id = t.id AND w.id = u.w)";
    let p = plan(&s, sql);
    assert!(p.contains("VW_SQ_1") && p.contains("SEMI"), "{p}");
    assert_eq!(lines(&s, sql), lines(&s, &sql.replace("SELECT 1", "SELECT /*+ NO_UNNEST */ 1")));
    // The FILTER stays over the joins for what they cannot run, and NO_UNNEST keeps it.
    let p = plan(
        &s,
        "SELECT COUNT(*) FROM t WHERE EXISTS (SELECT 1 FROM u WHERE u.id = t.id) \
         AND v NOT IN (SELECT w FROM u WHERE u.id = t.id)",
    );
    let filter = p.find("FILTER").expect("a FILTER");
    let join = p.find("HASH JOIN").expect("a join");
    assert!(filter < join, "{p}");
    let p = plan(&s, "SELECT COUNT(*) FROM t WHERE EXISTS (SELECT /*+ NO_UNNEST */ 1 FROM u WHERE u.id = t.id)");
    assert!(p.contains("FILTER") && !p.contains("SEMI"), "{p}");
    // A subquery whose shape a join would change runs in the FILTER: a grouping, a
    // ROWNUM limit.
    for sql in [
        "SELECT COUNT(*) FROM t WHERE EXISTS (SELECT COUNT(*) FROM u WHERE u.id = t.id HAVING COUNT(*) > 0)",
        "SELECT COUNT(*) FROM t WHERE v IN (SELECT w FROM u WHERE u.id = t.id AND ROWNUM <= 1)",
    ] {
        let p = plan(&s, sql);
        assert!(p.contains("FILTER") && !p.contains("SEMI"), "{sql}\n{p}");
    }
    // A hint asking for unnesting there is noted as unused.
    let p =
        plan(&s, "SELECT COUNT(*) FROM t WHERE v IN (SELECT /*+ UNNEST */ w FROM u WHERE u.id = t.id AND ROWNUM <= 1)");
    assert!(p.contains("hint not used: UNNEST (the subquery is run by the FILTER)"), "{p}");
    assert_eq!(
        lines(&s, "SELECT COUNT(*) FROM t WHERE EXISTS (SELECT COUNT(*) FROM u WHERE u.id = t.id HAVING COUNT(*) > 0)"),
        ["49"]
    );
    // A scalar subquery of an aggregate: a join to a view of its groups, the comparison
    // checked on each pair.
    let sql = "SELECT COUNT(*) FROM t WHERE v > (SELECT 0.5 * AVG(w) FROM u WHERE u.id = t.id)";
    let p = plan(&s, sql);
    for line in ["HASH JOIN", "VW_SQ_1", "HASH GROUP BY", "access(\"ID\"=\"T\".\"ID\")", "filter(\"V\">"] {
        assert!(p.contains(line), "{line} in\n{p}");
    }
    assert!(!p.contains("FILTER "), "{p}");
    assert_eq!(lines(&s, sql), lines(&s, &sql.replace("SELECT 0.5", "SELECT /*+ NO_UNNEST */ 0.5")));
}

#[test]
fn an_order_an_index_path_gives_and_an_outer_column_outside_the_where_clause_keep_the_filter() {
    let (_dir, _path, db) = db();
    let s = db.session();
    exec(&s, "CREATE TABLE o (k NUMBER, v NUMBER, s VARCHAR2(10))");
    exec(&s, "INSERT INTO o SELECT MOD(LEVEL * 7, 20), MOD(LEVEL, 5), 'a' FROM dual CONNECT BY LEVEL <= 20");
    exec(&s, "CREATE INDEX o_k ON o (k)");
    exec(&s, "CREATE TABLE t (k NUMBER, v NUMBER, s VARCHAR2(10))");
    exec(&s, "INSERT INTO t SELECT 20 - LEVEL, MOD(LEVEL, 5), 'a' FROM dual CONNECT BY LEVEL <= 20");
    exec(&s, "ANALYZE TABLE o COMPUTE STATISTICS");
    exec(&s, "ANALYZE TABLE t COMPUTE STATISTICS");
    // The index range scan gives the ORDER BY's order, its sort dropped: a join between
    // it and the result would give the rows in another order.
    let sql = "SELECT k FROM o WHERE k > 12 AND EXISTS (SELECT 1 FROM t WHERE t.v = o.v) ORDER BY k";
    assert_eq!(lines(&s, sql), ["13", "14", "15", "16", "17", "18", "19"]);
    // An outer column read in the select list (here through TRIM, which reads its
    // argument twice) has no outer row once unnested.
    let sql = "SELECT COUNT(*) FROM o WHERE s IN (SELECT o.s FROM t WHERE t.k = o.k AND TRIM(o.s FROM t.s) IS NULL)";
    assert_eq!(lines(&s, sql), ["20"]);
    assert!(plan(&s, sql).contains("FILTER"), "{}", plan(&s, sql));
}
