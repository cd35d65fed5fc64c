//! TIMESTAMP and INTERVAL values through SQL, checked against SQLite (an independent
//! engine) on random values: TIMESTAMP ± INTERVAL DAY TO SECOND against SQLite's
//! `strftime` with a seconds modifier, the difference of two timestamps against
//! `unixepoch(..., 'subsec')`, and range queries over a TIMESTAMP column (by full scan,
//! by index and from the column store) against the same rows in SQLite, kept there as
//! text that sorts as the timestamps do. Values are whole milliseconds, which SQLite
//! computes exactly. Also: values survive a reopen, columns refuse what does not fit, and
//! what is not supported is a clear error.

mod common;

use common::*;
use lioscope::Session;
use proptest::prelude::*;
use proptest::test_runner::TestRunner;

/// A timestamp from 1900 to 2099 to the millisecond, as 'YYYY-MM-DD HH24:MI:SS.FFF'.
fn timestamp() -> impl Strategy<Value = String> {
    (1900i32..2100, 1u32..=12, 1u32..=28, 0u32..24, 0u32..60, 0u32..60, 0u32..1000)
        .prop_map(|(y, m, d, h, mi, s, ms)| format!("{y:04}-{m:02}-{d:02} {h:02}:{mi:02}:{s:02}.{ms:03}"))
}

/// This file's runner: a failing case's seed is saved in its .proptest-regressions file
/// and run first next time; PROPTEST_CASES sets how many cases run.
fn runner(cases: u32) -> TestRunner {
    common::sqlite::runner(file!(), cases)
}

fn sqlite_text(conn: &rusqlite::Connection, sql: &str) -> String {
    conn.query_row(sql, [], |r| r.get::<_, String>(0)).unwrap_or_else(|e| panic!("{sql}: {e}"))
}

/// One value of lioscope's as text.
fn value(s: &Session, sql: &str) -> Result<String, String> {
    s.execute(sql).map(|r| r.rows[0][0].to_string()).map_err(|e| e.to_string())
}

#[test]
fn timestamps_move_by_day_to_second_intervals_as_sqlite_computes() {
    let (_dir, _path, db) = db();
    let s = db.session();
    let conn = rusqlite::Connection::open_in_memory().unwrap();
    let interval = (any::<bool>(), 0i64..3000, 0i64..24, 0i64..60, 0i64..60, 0i64..1000);
    runner(300)
        .run(&(timestamp(), interval, any::<bool>()), |(t, (negative, days, h, m, sec, ms), subtract)| {
            let sign = if negative { "-" } else { "" };
            let literal = format!("INTERVAL '{sign}{days} {h:02}:{m:02}:{sec:02}.{ms:03}' DAY(4) TO SECOND(3)");
            let op = if subtract { "-" } else { "+" };
            let got = value(
                &s,
                &format!("SELECT TO_CHAR(TIMESTAMP '{t}' {op} {literal}, 'YYYY-MM-DD HH24:MI:SS.FF3') FROM dual"),
            );
            let seconds = days * 86_400 + h * 3600 + m * 60 + sec;
            let flip = if negative != subtract { "-" } else { "+" };
            let expected = sqlite_text(
                &conn,
                &format!("SELECT strftime('%Y-%m-%d %H:%M:%f', '{t}', '{flip}{seconds}.{ms:03} seconds')"),
            );
            prop_assert_eq!(got, Ok(expected), "TIMESTAMP '{}' {} {}", t, op, literal);
            Ok(())
        })
        .unwrap();
}

#[test]
fn the_difference_of_two_timestamps_is_the_interval_sqlite_measures() {
    let (_dir, _path, db) = db();
    let s = db.session();
    let conn = rusqlite::Connection::open_in_memory().unwrap();
    runner(300)
        .run(&(timestamp(), timestamp()), |(a, b)| {
            // The interval's parts back to milliseconds: days, hours, minutes, seconds.
            let got = value(
                &s,
                &format!(
                    "SELECT ROUND(((EXTRACT(DAY FROM d) * 24 + EXTRACT(HOUR FROM d)) * 60 + EXTRACT(MINUTE FROM d)) * 60 \
                     + EXTRACT(SECOND FROM d), 3) FROM (SELECT TIMESTAMP '{a}' - TIMESTAMP '{b}' d FROM dual)"
                ),
            );
            let expected = sqlite_text(
                &conn,
                &format!(
                    "SELECT printf('%.3f', (strftime('%s', '{a}') - strftime('%s', '{b}')) \
                     + (CAST(substr('{a}', 21) AS INTEGER) - CAST(substr('{b}', 21) AS INTEGER)) / 1000.0)"
                ),
            );
            let expected = expected.trim_end_matches('0').trim_end_matches('.').replace("-0.", "-.");
            let expected = expected.strip_prefix("0.").map_or(expected.clone(), |f| format!(".{f}"));
            let expected = if expected.is_empty() { "0".to_owned() } else { expected };
            prop_assert_eq!(got, Ok(expected), "TIMESTAMP '{}' - TIMESTAMP '{}'", a, b);
            Ok(())
        })
        .unwrap();
}

#[test]
fn range_queries_on_a_timestamp_column_agree_with_sqlite_by_scan_index_and_column_store() {
    let (_dir, _path, db) = db();
    let s = db.session();
    let conn = rusqlite::Connection::open_in_memory().unwrap();
    exec(&s, "CREATE TABLE ev (id INTEGER PRIMARY KEY, at TIMESTAMP(3), took INTERVAL DAY(4) TO SECOND(3))");
    conn.execute_batch("CREATE TABLE ev (id INTEGER PRIMARY KEY, at TEXT, took_ms INTEGER)").unwrap();
    // The rows: a fixed pseudo-random stream (xorshift), so every run loads the same.
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = |n: u64| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state % n
    };
    for id in 1..=2000 {
        let at = format!(
            "'{:04}-{:02}-{:02} {:02}:{:02}:{:02}.{:03}'",
            1900 + next(200),
            1 + next(12),
            1 + next(28),
            next(24),
            next(60),
            next(60),
            next(1000)
        );
        let took_ms = next(200_000_000) as i64 - 100_000_000;
        let (at, took_ms) = if id % 97 == 0 { ("NULL".to_owned(), None) } else { (at, Some(took_ms)) };
        let took = took_ms.map_or("NULL".to_owned(), |ms| format!("NUMTODSINTERVAL({ms} / 1000, 'SECOND')"));
        exec(&s, &format!("INSERT INTO ev VALUES ({id}, {at}, {took})"));
        let took = took_ms.map_or("NULL".to_owned(), |ms| ms.to_string());
        conn.execute_batch(&format!("INSERT INTO ev VALUES ({id}, {at}, {took})")).unwrap();
    }
    exec(&s, "COMMIT");
    exec(&s, "CREATE INDEX ev_at ON ev (at)");
    exec(&s, "ANALYZE TABLE ev COMPUTE STATISTICS");
    let ids = |sql: &str| lines(&s, sql).join(",");
    let sqlite_ids = |sql: &str| {
        let mut st = conn.prepare(sql).unwrap();
        st.query_map([], |r| r.get::<_, i64>(0)).unwrap().map(|r| r.unwrap().to_string()).collect::<Vec<_>>().join(",")
    };
    runner(40)
        .run(&(timestamp(), timestamp(), -100_000_000i64..100_000_000), |(a, b, ms)| {
            let (lo, hi) = if a <= b { (a, b) } else { (b, a) };
            let range = format!("at BETWEEN TIMESTAMP '{lo}' AND TIMESTAMP '{hi}'");
            let expected = sqlite_ids(&format!("SELECT id FROM ev WHERE at BETWEEN '{lo}' AND '{hi}' ORDER BY id"));
            for hint in ["FULL(ev)", "INDEX(ev ev_at)"] {
                let got = ids(&format!("SELECT /*+ {hint} */ id FROM ev WHERE {range} ORDER BY id"));
                prop_assert_eq!(&got, &expected, "{} with {}", range, hint);
            }
            let longer = format!("took > NUMTODSINTERVAL({ms} / 1000, 'SECOND')");
            let expected = sqlite_ids(&format!("SELECT id FROM ev WHERE took_ms > {ms} ORDER BY id"));
            prop_assert_eq!(ids(&format!("SELECT id FROM ev WHERE {longer} ORDER BY id")), expected, "{}", longer);
            Ok(())
        })
        .unwrap();
    let index_plan = plan(&s, "SELECT id FROM ev WHERE at < TIMESTAMP '1901-01-01 00:00:00'");
    assert!(index_plan.contains("INDEX RANGE SCAN"), "{index_plan}");
    // The column store holds the same values: the same answers from it.
    let before = lines(&s, "SELECT id, at, took FROM ev WHERE at >= TIMESTAMP '2000-01-01 00:00:00' ORDER BY id");
    let sum_before = lines(&s, "SELECT SUM(took), MIN(at), MAX(took) FROM ev");
    exec(&s, "ALTER SYSTEM SET inmemory_size = 16M");
    exec(&s, "ALTER TABLE ev INMEMORY PRIORITY HIGH");
    let populated = rows(&s, "EXEC DBMS_INMEMORY_ADMIN.POPULATE_WAIT('HIGH', 100, 120)");
    assert_eq!(populated[0][0].to_string(), "0", "population finished");
    let inmemory = plan(&s, "SELECT /*+ FULL(ev) */ id FROM ev WHERE at >= TIMESTAMP '2000-01-01 00:00:00'");
    assert!(inmemory.contains("TABLE ACCESS INMEMORY FULL"), "{inmemory}");
    let from_store = lines(
        &s,
        "SELECT /*+ FULL(ev) */ id, at, took FROM ev WHERE at >= TIMESTAMP '2000-01-01 00:00:00' ORDER BY id",
    );
    assert_eq!(from_store, before);
    assert_eq!(lines(&s, "SELECT /*+ FULL(ev) */ SUM(took), MIN(at), MAX(took) FROM ev"), sum_before);
    let total_ms = sqlite_ids("SELECT SUM(took_ms) FROM ev");
    let sum = value(
        &s,
        "SELECT EXTRACT(DAY FROM SUM(took)) * 86400 + EXTRACT(HOUR FROM SUM(took)) * 3600 \
        + EXTRACT(MINUTE FROM SUM(took)) * 60 + EXTRACT(SECOND FROM SUM(took)) FROM ev",
    )
    .unwrap();
    assert_eq!(sum.parse::<f64>().unwrap() * 1000.0, total_ms.parse::<f64>().unwrap(), "SUM of intervals");
}

#[test]
fn timestamps_and_intervals_survive_a_reopen() {
    let (_dir, path, db) = db();
    let s = db.session();
    exec(&s, "CREATE TABLE t (at TIMESTAMP, ym INTERVAL YEAR(3) TO MONTH, ds INTERVAL DAY(5) TO SECOND(6))");
    exec(
        &s,
        "INSERT INTO t VALUES (TIMESTAMP '0001-01-01 00:00:00.000001', INTERVAL '-999-11' YEAR(3) TO MONTH, \
         INTERVAL '-99999 23:59:59.999999' DAY(5) TO SECOND)",
    );
    exec(&s, "INSERT INTO t VALUES (TIMESTAMP '9999-12-31 23:59:59.999999', INTERVAL '0-0' YEAR TO MONTH, NULL)");
    exec(&s, "COMMIT");
    let before = lines(&s, "SELECT * FROM t ORDER BY at");
    assert_eq!(
        before,
        ["0001-01-01 00:00:00.000001|-999-11|-99999 23:59:59.999999", "9999-12-31 23:59:59.999999|+00-00|"]
    );
    drop(s);
    drop(db);
    let db = lioscope::Database::open(&path, options(8192, "4M")).unwrap();
    assert_eq!(lines(&db.session(), "SELECT * FROM t ORDER BY at"), before);
}

#[test]
fn columns_round_and_refuse_values_as_oracle_does() {
    let (_dir, _path, db) = db();
    let s = db.session();
    exec(&s, "CREATE TABLE t (at TIMESTAMP(2), ym INTERVAL YEAR(1) TO MONTH, ds INTERVAL DAY(1) TO SECOND(0))");
    exec(
        &s,
        "INSERT INTO t VALUES ('2024-12-31 23:59:59.995', INTERVAL '9-11' YEAR TO MONTH, \
         INTERVAL '8 23:59:59.5' DAY TO SECOND)",
    );
    // Rounded to the columns' fractions: into the next year, and the next day.
    assert_eq!(lines(&s, "SELECT * FROM t"), ["2025-01-01 00:00:00.000000|+09-11|+09 00:00:00.000000"]);
    // Rounding that carries the days past their precision is refused too.
    let carried = error(&s, "INSERT INTO t (ds) VALUES (INTERVAL '9 23:59:59.5' DAY TO SECOND)");
    assert!(carried.contains("ORA-01873"), "{carried}");
    let too_long = error(&s, "INSERT INTO t (ym) VALUES (INTERVAL '10' YEAR(2))");
    assert!(too_long.contains("ORA-01873"), "{too_long}");
    let too_long = error(&s, "INSERT INTO t (ds) VALUES (INTERVAL '10' DAY(2))");
    assert!(too_long.contains("ORA-01873"), "{too_long}");
    assert!(error(&s, "INSERT INTO t (at) VALUES (5)").contains("cannot store NUMBER in a TIMESTAMP column"));
    assert!(error(&s, "INSERT INTO t (ym) VALUES (INTERVAL '1' DAY)").contains("INTERVAL YEAR TO MONTH column"));
    assert!(error(&s, "INSERT INTO t (at) VALUES ('yesterday')").contains("not a timestamp"));
}

#[test]
fn what_is_not_supported_is_a_clear_error() {
    let (_dir, _path, db) = db();
    let s = db.session();
    let fails = |sql: &str, wanted: &str| {
        let e = error(&s, sql);
        assert!(e.contains(wanted), "{sql}: {e}");
    };
    fails("CREATE TABLE t (a TIMESTAMP(9))", "to the microsecond");
    fails("CREATE TABLE t (a TIMESTAMP WITH TIME ZONE)", "time zones are not supported");
    fails("CREATE TABLE t (a INTERVAL DAY TO SECOND(9))", "to the microsecond");
    fails("CREATE TABLE t (a INTERVAL YEAR(10) TO MONTH)", "between 0 and 9");
    fails("SELECT INTERVAL '1' DAY + INTERVAL '1' MONTH FROM dual", "ORA-30081");
    fails("SELECT SYSTIMESTAMP * 2 FROM dual", "ORA-30081");
    fails("SELECT CAST(SYSTIMESTAMP AS NUMBER) FROM dual", "ORA-00932");
    fails("SELECT CAST(INTERVAL '1' DAY AS INTERVAL YEAR TO MONTH) FROM dual", "ORA-00932");
    fails("SELECT EXTRACT(HOUR FROM INTERVAL '1' YEAR) FROM dual", "ORA-30076");
    fails(
        "SELECT SUM(x) FROM (SELECT INTERVAL '1' DAY x FROM dual UNION ALL SELECT INTERVAL '1' MONTH FROM dual)",
        "ORA-01790",
    );
}
