//! The session cursor cache through the public API: a query run again from the same text
//! runs its kept plan (a soft parse: `session cursor cache hits`, no `parse count
//! (hard)`), and answers what the text parsed and planned anew answers, whatever happened
//! between the executions (rows inserted, updated and deleted by this session or another,
//! indexes made and dropped, statistics gathered, parameters changed): a model-based test
//! runs random histories through a session with the cache and one without. The cache
//! keeps `session_cached_cursors` queries, the least recently run going first; COMMIT,
//! ROLLBACK, SAVEPOINT and SET TRANSACTION are kept too and do their work; DML and
//! text with bind variables are parsed anew each time; a plan holding a `v$` view's rows,
//! even joined, is made at each execution; a session carries its cache to another thread.

mod common;

use common::*;
use lioscope::types::Datum;
use lioscope::{Session, Stat};
use proptest::prelude::*;
use proptest::test_runner::{Config, FileFailurePersistence, TestRunner};

/// Table `t`: ids 1..=200, `a` = id mod 7, `s` a string; an index on id.
fn table(s: &Session) {
    exec(s, "CREATE TABLE t (id NUMBER, a NUMBER, s VARCHAR2(20))");
    exec(s, "INSERT INTO t SELECT LEVEL, MOD(LEVEL, 7), 'row ' || LEVEL FROM dual CONNECT BY LEVEL <= 200");
    exec(s, "COMMIT");
    exec(s, "CREATE INDEX t_id ON t (id)");
}

/// What `run` adds to statistic `stat` of session `s`.
fn counted(s: &Session, stat: Stat, run: impl FnOnce()) -> u64 {
    let before = s.stats().get(stat);
    run();
    s.stats().get(stat) - before
}

/// (hard parses, cursor cache hits) of session `s` while `run` runs.
fn parses(s: &Session, run: impl FnOnce()) -> (u64, u64) {
    let hits_before = s.stats().get(Stat::SessionCursorCacheHits);
    let hard = counted(s, Stat::ParseCountHard, run);
    (hard, s.stats().get(Stat::SessionCursorCacheHits) - hits_before)
}

const COUNT: &str = "SELECT /*+ INDEX(t t_id) */ COUNT(*), SUM(a) FROM t WHERE id > 100";

#[test]
fn a_query_run_again_from_its_text_is_a_soft_parse() {
    let (_dir, _path, db) = temp_db(options(8192, "8M"));
    let s = db.session();
    table(&s);
    let first = parses(&s, || assert_eq!(lines(&s, COUNT), ["100|301"]));
    assert_eq!(first, (1, 0), "the first execution parses and plans");
    let total = counted(&s, Stat::ParseCountTotal, || {
        let again = parses(&s, || {
            for _ in 0..10 {
                // A trailing `;` and blanks around are not part of the text.
                assert_eq!(lines(&s, &format!("  {COUNT};")), ["100|301"]);
            }
        });
        assert_eq!(again, (0, 10), "ten soft parses");
    });
    assert_eq!(total, 10, "a soft parse is a parse call");
    assert_eq!(int(&s, &format!("SELECT executions FROM v$sql WHERE sql_text = '{COUNT}'")), 11);
    // Another text (one more blank) is another statement.
    let other = COUNT.replace("WHERE", "WHERE ");
    assert_eq!(parses(&s, || assert_eq!(lines(&s, &other), ["100|301"])), (1, 0));
}

#[test]
fn transaction_control_run_again_from_its_text_is_a_soft_parse_that_does_its_work() {
    let (_dir, _path, db) = temp_db(options(8192, "8M"));
    let s = db.session();
    let other = db.session();
    table(&s);
    s.set_autocommit(false);
    for round in 0..3 {
        exec(&s, "SET TRANSACTION ISOLATION LEVEL SERIALIZABLE");
        assert_eq!(int(&s, "SELECT COUNT(*) FROM t"), 200 + round);
        exec(&other, &format!("INSERT INTO t VALUES ({}, 0, 'other')", 1000 + round));
        exec(&other, "COMMIT");
        assert_eq!(int(&s, "SELECT COUNT(*) FROM t"), 200 + round, "serializable: the snapshot holds");
        exec(&s, "SAVEPOINT a");
        exec(&s, "INSERT INTO t VALUES (-1, 0, 'mine')");
        exec(&s, "ROLLBACK TO SAVEPOINT a");
        let commit = parses(&s, || drop(exec(&s, "COMMIT")));
        assert_eq!(commit, (0, 1), "round {round}: COMMIT kept since `table` ran it");
        assert_eq!(int(&s, "SELECT COUNT(*) FROM t"), 201 + round, "a new snapshot after COMMIT");
        exec(&s, "INSERT INTO t VALUES (-2, 0, 'mine')");
        assert_eq!(parses(&s, || drop(exec(&s, "ROLLBACK"))).0, u64::from(round == 0));
        assert_eq!(int(&s, "SELECT COUNT(*) FROM t WHERE id < 0"), 0, "round {round}: rolled back");
    }
    // A kept SET TRANSACTION still refuses to run inside a transaction.
    exec(&s, "INSERT INTO t VALUES (-3, 0, 'mine')");
    assert!(
        error(&s, "SET TRANSACTION ISOLATION LEVEL SERIALIZABLE").contains("first statement"),
        "{}",
        error(&s, "SET TRANSACTION ISOLATION LEVEL SERIALIZABLE")
    );
    exec(&s, "ROLLBACK");
}

#[test]
fn a_kept_query_sees_every_change_and_is_planned_again_when_its_sources_change() {
    let (_dir, _path, db) = temp_db(options(8192, "8M"));
    let s = db.session();
    table(&s);
    let other = db.session();
    let run = |expected: &str| parses(&s, || assert_eq!(lines(&s, COUNT), [expected]));
    assert_eq!(run("100|301"), (1, 0));
    // Rows inserted by another session, and deleted by this one.
    exec(&other, "INSERT INTO t VALUES (300, 1, 'x')");
    exec(&other, "COMMIT");
    assert_eq!(run("101|302"), (0, 1), "DML keeps the plan");
    exec(&s, "DELETE FROM t WHERE id > 190");
    assert_eq!(run("90|271"), (0, 1));
    // The index the plan reads dropped, then made again; statistics; a parameter.
    exec(&other, "DROP INDEX t_id");
    assert_eq!(run("90|271"), (1, 1));
    assert!(plan(&s, COUNT).contains("TABLE ACCESS FULL"), "{}", plan(&s, COUNT));
    exec(&other, "CREATE INDEX t_id ON t (id)");
    assert_eq!(run("90|271"), (1, 1));
    exec(&other, "ANALYZE TABLE t COMPUTE STATISTICS");
    assert_eq!(run("90|271"), (1, 1));
    exec(&s, "ALTER SESSION SET db_file_multiblock_read_count = 4");
    assert_eq!(run("90|271"), (1, 1));
    exec(&other, "TRUNCATE TABLE t");
    assert_eq!(parses(&s, || assert_eq!(rows(&s, COUNT), [vec![Datum::Int(0), Datum::Null]])), (1, 1));
    exec(&other, "DROP TABLE t");
    assert!(error(&s, COUNT).contains("T does not exist"), "{}", error(&s, COUNT));
}

#[test]
fn the_least_recently_run_query_leaves_the_cache_first() {
    let (_dir, _path, db) = temp_db(options(8192, "8M"));
    let s = db.session();
    table(&s);
    exec(&s, "ALTER SESSION SET session_cached_cursors = 2");
    let query = |n: i64| format!("SELECT COUNT(*) FROM t WHERE id <= {n}");
    let run = |n: i64| parses(&s, || assert_eq!(int(&s, &query(n)), n));
    assert_eq!(run(1), (1, 0));
    assert_eq!(run(2), (1, 0));
    assert_eq!(run(1), (0, 1));
    assert_eq!(run(3), (1, 0), "2 leaves: 1 ran after it");
    assert_eq!(run(1), (0, 1));
    assert_eq!(run(2), (1, 0), "2 was dropped");
    assert_eq!(run(3), (1, 0), "3 was dropped for 2");
    // None kept: every execution is parsed and planned.
    exec(&s, "ALTER SESSION SET session_cached_cursors = 0");
    assert_eq!(run(3), (1, 0));
    assert_eq!(run(3), (1, 0));
    let e = error(&s, "ALTER SESSION SET session_cached_cursors = 65536");
    assert!(e.contains("session_cached_cursors") && e.contains("65536"), "{e}");
}

#[test]
fn only_queries_without_bind_variables_are_kept() {
    let (_dir, _path, db) = temp_db(options(8192, "8M"));
    let s = db.session();
    table(&s);
    let update = "UPDATE t SET a = a + 1 WHERE id = 1";
    for round in 0..3 {
        assert_eq!(parses(&s, || drop(exec(&s, update))), (1, 0), "DML is parsed each time (round {round})");
        let e = error(&s, "SELECT COUNT(*) FROM t WHERE id < :n");
        assert_eq!(e, error(&s, "SELECT COUNT(*) FROM t WHERE id < :n"), "the same error each time");
        assert_eq!(parses(&s, || drop(error(&s, "SELECT COUNT(*) FROM t WHERE id < :n"))).1, 0);
        assert_eq!(parses(&s, || drop(error(&s, "SELEC 1 FROM dual"))).1, 0, "a syntax error is not kept");
    }
    assert_eq!(int(&s, "SELECT a FROM t WHERE id = 1"), 4);
    // A colon inside a string is no bind variable: kept.
    let text = "SELECT COUNT(*) FROM t WHERE s <> 'a:b'";
    assert_eq!(parses(&s, || assert_eq!(int(&s, text), 200)), (1, 0));
    assert_eq!(parses(&s, || assert_eq!(int(&s, text), 200)), (0, 1));
}

#[test]
fn views_joined_to_anything_are_read_at_each_execution() {
    let (_dir, _path, db) = temp_db(options(8192, "8M"));
    let s = db.session();
    table(&s);
    // The rows of a v$ view are read when the statement is planned: a plan holding them,
    // alone or as a join's input, is made again at each execution.
    let joined = "SELECT s.value FROM v$mystat s, v$statname n WHERE s.statistic# = n.statistic# \
                  AND n.name = 'execute count'";
    let first = int(&s, joined);
    let second = int(&s, joined);
    assert!(second > first, "execute count {first} then {second}");
    let with_table = "SELECT COUNT(*) FROM t, v$session v WHERE t.id = 1 AND v.sid >= 0";
    let before = int(&s, with_table);
    let _other = db.session();
    assert_eq!(int(&s, with_table), before + 1, "a new session seen by the same text");
}

#[test]
fn a_query_that_failed_runs_again_when_its_data_allows() {
    let (_dir, _path, db) = temp_db(options(8192, "8M"));
    let s = db.session();
    table(&s);
    let text = "SELECT SUM(60 / a) FROM t WHERE id BETWEEN 1 AND 6";
    assert_eq!(parses(&s, || assert_eq!(int(&s, text), 147)), (1, 0));
    exec(&s, "UPDATE t SET a = 0 WHERE id = 3");
    assert!(error(&s, text).contains("divisor is equal to zero"), "{}", error(&s, text));
    exec(&s, "UPDATE t SET a = 3 WHERE id = 3");
    assert_eq!(parses(&s, || assert_eq!(int(&s, text), 147)), (0, 1), "kept through its failure");
}

#[test]
fn a_session_carries_its_cache_to_another_thread() {
    let (_dir, _path, db) = temp_db(options(8192, "8M"));
    let s = db.session();
    table(&s);
    assert_eq!(lines(&s, COUNT), ["100|301"]);
    let s = std::thread::spawn(move || {
        assert_eq!(parses(&s, || assert_eq!(lines(&s, COUNT), ["100|301"])), (0, 1));
        s
    })
    .join()
    .unwrap();
    assert_eq!(parses(&s, || assert_eq!(lines(&s, COUNT), ["100|301"])), (0, 1));
}

/// A step of a history: a query run in both sessions, or a change made by the cached
/// session (committed at once, so the uncached one sees it too).
#[derive(Debug, Clone)]
enum Step {
    Query(usize),
    Change(usize),
}

/// Queries over several plan shapes: index paths, full scans, joins, aggregates, sorts,
/// ROWNUM, a view of the dictionary.
const QUERIES: &[&str] = &[
    "SELECT COUNT(*), SUM(a) FROM t WHERE id > 150",
    "SELECT id, s FROM t WHERE id BETWEEN 20 AND 25 ORDER BY id",
    "SELECT a, COUNT(*) FROM t GROUP BY a ORDER BY a",
    "SELECT /*+ FULL(t) */ MAX(id), MIN(s) FROM t WHERE a = 3",
    "SELECT id FROM t WHERE a = 5 AND ROWNUM <= 3 ORDER BY id",
    "SELECT COUNT(*) FROM t x JOIN t y ON x.id = y.a WHERE y.id < 120",
    "SELECT /*+ USE_NL(y) */ x.id, y.s FROM t x, t y WHERE x.a = y.id AND x.id < 10 ORDER BY 1, 2",
    "SELECT COUNT(*) FROM user_indexes WHERE table_name = 'T'",
];

/// Changes between the queries: DML, DDL, statistics, parameters.
const CHANGES: &[&str] = &[
    "INSERT INTO t SELECT id + 1000, a, s FROM t WHERE id <= 30",
    "DELETE FROM t WHERE MOD(id, 11) = 0",
    "UPDATE t SET a = MOD(a + 2, 7) WHERE id < 60",
    "CREATE INDEX t_a ON t (a)",
    "DROP INDEX t_a",
    "DROP INDEX t_id",
    "CREATE INDEX t_id ON t (id)",
    "ANALYZE TABLE t COMPUTE STATISTICS",
    "ALTER SESSION SET optimizer_index_cost_adj = 10",
    "ALTER SESSION SET optimizer_index_cost_adj = 100",
    "TRUNCATE TABLE t",
    "INSERT INTO t SELECT LEVEL, MOD(LEVEL, 7), 'new ' || LEVEL FROM dual CONNECT BY LEVEL <= 50",
];

#[test]
fn cached_queries_answer_as_queries_parsed_anew() {
    let (_dir, _path, db) = temp_db(options(8192, "8M"));
    let cached = db.session();
    let anew = db.session();
    exec(&anew, "ALTER SESSION SET session_cached_cursors = 0");
    table(&cached);
    let step =
        prop_oneof![3 => (0..QUERIES.len()).prop_map(Step::Query), 1 => (0..CHANGES.len()).prop_map(Step::Change)];
    // A failing case's seed is saved in tests/cursor_cache.proptest-regressions and run
    // first next time; PROPTEST_CASES sets how many cases run.
    let mut runner = TestRunner::new(Config {
        cases: cases_or(100),
        source_file: Some(file!()),
        failure_persistence: Some(Box::new(FileFailurePersistence::WithSource("proptest-regressions"))),
        ..Config::default()
    });
    let hits_before = cached.stats().get(Stat::SessionCursorCacheHits);
    runner
        .run(&proptest::collection::vec(step, 1..30), |history| {
            for step in &history {
                match *step {
                    Step::Query(q) => {
                        let got = cached.execute(QUERIES[q]).map(|r| r.rows).map_err(|e| e.to_string());
                        let expected = anew.execute(QUERIES[q]).map(|r| r.rows).map_err(|e| e.to_string());
                        prop_assert_eq!(got, expected, "{} after {:?}", QUERIES[q], history);
                    }
                    // Some changes fail (an index made twice, dropped when missing): as
                    // they would for a user, and the same in both sessions' eyes.
                    Step::Change(c) => {
                        let _ = cached.execute(CHANGES[c]);
                        let _ = cached.execute("COMMIT");
                        // Parameters are the session's own: the other session follows.
                        if CHANGES[c].starts_with("ALTER SESSION") {
                            exec(&anew, CHANGES[c]);
                        }
                    }
                }
            }
            Ok(())
        })
        .unwrap();
    let hits = cached.stats().get(Stat::SessionCursorCacheHits) - hits_before;
    assert!(hits > 0, "the histories ran kept queries");
    assert_eq!(anew.stats().get(Stat::SessionCursorCacheHits), 0);
}
