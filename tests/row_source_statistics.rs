//! Row-source statistics through the public API: what each plan line did (rows, cr=,
//! pr=, pw=, time=), gathered on request, by the hint, by `statistics_level = ALL`, and
//! by EXPLAIN ANALYZE; and that gathering them changes no result.

mod common;

use common::*;
use lioscope::Stat;

fn loaded() -> (tempfile::TempDir, lioscope::Database) {
    let (dir, _, db) = temp_db(options(8192, "8M"));
    let s = db.session();
    exec(&s, "CREATE TABLE t (id INTEGER, grp VARCHAR2(10))");
    exec(&s, "INSERT INTO t SELECT LEVEL, 'g' || MOD(LEVEL, 5) FROM dual CONNECT BY LEVEL <= 20000");
    (dir, db)
}

#[test]
fn each_line_counts_the_rows_it_passed_on_and_the_gets_beneath_it() {
    let (_dir, db) = loaded();
    let s = db.session();
    let plain = rows(&s, "SELECT grp, COUNT(*) FROM t WHERE id > 5000 GROUP BY grp ORDER BY grp");
    s.set_plan_statistics(true);
    let gets_before = s.stats().get(Stat::ConsistentGets);
    let result = exec(&s, "SELECT grp, COUNT(*) FROM t WHERE id > 5000 GROUP BY grp ORDER BY grp");
    let gets = s.stats().get(Stat::ConsistentGets) - gets_before;
    assert_eq!(result.rows, plain, "gathering statistics changes no result");
    let stats = result.plan_statistics.expect("statistics were asked for");
    let ops: Vec<(&str, u64)> = stats.lines.iter().map(|l| (l.operation.as_str(), l.rows)).collect();
    assert_eq!(
        ops,
        vec![("SELECT STATEMENT", 5), ("SORT ORDER BY", 5), ("HASH GROUP BY", 5), ("TABLE ACCESS FULL", 15000)]
    );
    for l in &stats.lines {
        assert_eq!(l.consistent_gets, gets, "{}: the scan does every get, counted cumulatively", l.operation);
    }
    // Inclusive times: a parent's time is at least its child's.
    for pair in stats.lines.windows(2) {
        assert!(pair[0].time_us >= pair[1].time_us, "{:?}", stats.lines);
    }
    s.set_plan_statistics(false);
    assert!(exec(&s, "SELECT COUNT(*) FROM t").plan_statistics.is_none());
}

#[test]
fn the_count_kernel_reports_the_rows_it_filtered() {
    let (_dir, db) = loaded();
    let s = db.session();
    let result = exec(&s, "SELECT /*+ GATHER_PLAN_STATISTICS */ COUNT(id) FROM t WHERE id > 100");
    assert_eq!(result.rows[0][0].to_string(), "19900");
    let stats = result.plan_statistics.expect("the hint asks for them");
    let scan = stats.lines.iter().find(|l| l.operation == "TABLE ACCESS FULL").unwrap();
    assert_eq!(scan.rows, 19900);
}

#[test]
fn the_select_list_distinct_and_row_generator_lines_count_their_own_rows() {
    let (_dir, db) = loaded();
    let s = db.session();
    let result = exec(&s, "SELECT /*+ GATHER_PLAN_STATISTICS */ LEVEL FROM dual CONNECT BY LEVEL <= 10");
    let stats = result.plan_statistics.expect("the hint asks for them");
    let ops: Vec<(&str, u64)> = stats.lines.iter().map(|l| (l.operation.as_str(), l.rows)).collect();
    assert_eq!(ops, vec![("SELECT STATEMENT", 10), ("CONNECT BY WITHOUT FILTERING", 10), ("FAST DUAL", 1)]);

    let sql = "SELECT /*+ GATHER_PLAN_STATISTICS */ DISTINCT grp FROM t WHERE id <= 100 ORDER BY grp";
    let result = exec(&s, sql);
    assert_eq!(result.rows.len(), 5);
    let stats = result.plan_statistics.expect("the hint asks for them");
    let ops: Vec<(&str, u64)> = stats.lines.iter().map(|l| (l.operation.as_str(), l.rows)).collect();
    assert_eq!(
        ops,
        vec![("SELECT STATEMENT", 5), ("SORT ORDER BY", 5), ("HASH UNIQUE", 5), ("TABLE ACCESS FULL", 100)],
        "the scan projects the select list itself"
    );
}

#[test]
fn statistics_level_all_gathers_for_every_query_and_limits_stop_early() {
    let (_dir, db) = loaded();
    let s = db.session();
    exec(&s, "ALTER SESSION SET statistics_level = ALL");
    let result = exec(&s, "SELECT id FROM t WHERE ROWNUM <= 7");
    let stats = result.plan_statistics.expect("statistics_level = ALL");
    let rows: Vec<u64> = stats.lines.iter().map(|l| l.rows).collect();
    assert_eq!(rows[..2], [7, 7]);
    // The scan hands rows on a block at a time: it counts the rows of the one block it
    // read before COUNT STOPKEY stopped it, not the whole table.
    assert!((7..1000).contains(&rows[2]), "{rows:?}");
    exec(&s, "ALTER SESSION SET statistics_level = TYPICAL");
    assert!(exec(&s, "SELECT id FROM t WHERE ROWNUM <= 7").plan_statistics.is_none());
}

#[test]
fn explain_analyze_prints_the_lines_as_tkprof_does() {
    let (_dir, db) = loaded();
    let s = db.session();
    let lines: Vec<String> =
        rows(&s, "EXPLAIN ANALYZE SELECT COUNT(*) FROM t WHERE grp = 'g1'").iter().map(|r| r[0].to_string()).collect();
    assert!(lines[0].contains("Rows  Row Source Operation"), "{lines:?}");
    let scan = lines.iter().find(|l| l.contains("TABLE ACCESS FULL T")).expect("the scan's line");
    assert!(scan.trim_start().starts_with("4000 "), "{scan}");
    assert!(scan.contains("cr=") && scan.contains("pr=") && scan.contains("pw=0") && scan.contains(" us"), "{scan}");
    assert!(lines.iter().any(|l| l.contains("no statistics on T")), "the note travels with it: {lines:?}");
    let err = fail(&s, "EXPLAIN ANALYZE DELETE FROM t");
    assert!(err.to_string().contains("EXPLAIN ANALYZE of a statement other than a query"), "{err}");
}

/// The consistent gets of the line naming `what` in EXPLAIN ANALYZE's `lines`.
fn gets_of(lines: &[String], what: &str) -> u64 {
    let line = lines.iter().find(|l| l.contains(what)).unwrap_or_else(|| panic!("no line {what} in {lines:#?}"));
    let at = line.find("cr=").expect("cr=") + 3;
    line[at..].split(' ').next().and_then(|n| n.parse().ok()).unwrap_or_else(|| panic!("{line}"))
}

#[test]
fn a_join_input_line_leaves_out_what_its_rows_did_above_the_join() {
    let (_dir, _, db) = temp_db(options(8192, "8M"));
    let s = db.session();
    for t in ["t1", "t2", "t3"] {
        exec(&s, &format!("CREATE TABLE {t} (id INTEGER PRIMARY KEY, v INTEGER)"));
        exec(&s, &format!("INSERT INTO {t} SELECT level, level FROM dual CONNECT BY level <= 500"));
    }
    let explain = |q: &str| -> Vec<String> {
        rows(&s, &format!("EXPLAIN ANALYZE {q}")).iter().map(|r| r[0].to_string()).collect()
    };
    // Two nested loops: t3's probes run while the loop over t2's rows pushes its rows
    // up; t2's line counts its own probes (root, leaf, table block: three gets a row),
    // as t3's does.
    let nl = explain(
        "SELECT /*+ LEADING(t1 t2 t3) USE_NL(t2) USE_NL(t3) */ COUNT(t3.v) FROM t1 \
         JOIN t2 ON t2.id = t1.v JOIN t3 ON t3.id = t2.v",
    );
    assert_eq!(gets_of(&nl, "ROWID T2"), gets_of(&nl, "ROWID T3"), "{nl:#?}");
    assert!(gets_of(&nl, "ROWID T2") < 1600, "{nl:#?}");
    // A hash join below a nested loop: its probe input, t2's scan, reads its own blocks
    // only, not t3's probes made as the joined rows went up.
    let hash = explain(
        "SELECT /*+ LEADING(t1 t2 t3) USE_HASH(t2) FULL(t2) USE_NL(t3) */ COUNT(t3.v) FROM t1 \
         JOIN t2 ON t2.id = t1.v JOIN t3 ON t3.id = t2.v",
    );
    assert!(gets_of(&hash, "TABLE ACCESS FULL T2") < 10, "{hash:#?}");
    // A view on a nested loop's outer side: the lines inside it show what the view did,
    // as its VIEW line does, not the inner side's probes run for each row it gave.
    let view = explain(
        "SELECT /*+ LEADING(v t3) USE_NL(t3) */ COUNT(t3.v) FROM (SELECT t1.v FROM t1 WHERE EXISTS \
         (SELECT /*+ HASH_SJ */ 1 FROM t2 WHERE t2.id = t1.v)) v JOIN t3 ON t3.id = v.v",
    );
    assert_eq!(gets_of(&view, "HASH JOIN"), gets_of(&view, "VIEW"), "{view:#?}");
    assert!(gets_of(&view, "VIEW") < gets_of(&view, "NESTED LOOPS"), "{view:#?}");
}

#[test]
fn a_join_run_again_and_again_counts_every_run() {
    let (_dir, _, db) = temp_db(options(8192, "8M"));
    let s = db.session();
    exec(&s, "CREATE TABLE o (id INTEGER)");
    exec(&s, "INSERT INTO o SELECT level FROM dual CONNECT BY level <= 10");
    exec(&s, "CREATE TABLE i (k INTEGER, v INTEGER)");
    exec(&s, "INSERT INTO i SELECT MOD(level, 5), level FROM dual CONNECT BY level <= 20");
    // The subquery, with its join, runs once for each of o's ten rows: each line inside
    // it shows what all ten runs did, as its `starts=` says.
    let lines = analyzed_lines(
        &s,
        "SELECT id FROM o WHERE id > (SELECT /*+ LEADING(a b) USE_NL(b) */ COUNT(*) FROM i a, i b \
         WHERE a.k = b.k AND a.v < o.id)",
        true,
    );
    let line = |what: &str| lines.iter().find(|l| l.contains(what)).cloned().unwrap_or_default();
    assert_eq!(line("SORT AGGREGATE"), "10 SORT AGGREGATE x10", "{lines:#?}");
    assert_eq!(line("NESTED LOOPS"), format!("{} NESTED LOOPS x10", 4 * 45), "{lines:#?}");
    // a's rows: those with v below each id, 0 + 1 + ... + 9; b is scanned whole for each.
    let inner: Vec<&String> = lines.iter().filter(|l| l.contains("TABLE ACCESS FULL I")).collect();
    assert_eq!(inner, ["45 TABLE ACCESS FULL I x10", &format!("{} TABLE ACCESS FULL I x45", 20 * 45)], "{lines:#?}");
    // An index range scan inside a view a nested loop runs for each of o's rows.
    exec(&s, "CREATE INDEX i_k ON i (k)");
    let lines = analyzed_lines(
        &s,
        "SELECT /*+ LEADING(o v) USE_NL(v) */ COUNT(*) FROM o, \
         (SELECT /*+ INDEX(i i_k) */ DISTINCT v FROM i WHERE k = 3) v WHERE v.v > o.id",
        true,
    );
    let line = |what: &str| lines.iter().find(|l| l.contains(what)).cloned().unwrap_or_default();
    assert_eq!(line("INDEX RANGE SCAN"), "40 INDEX RANGE SCAN I_K x10", "{lines:#?}");
    assert_eq!(line("BY INDEX ROWID"), "40 TABLE ACCESS BY INDEX ROWID I x10", "{lines:#?}");
}
