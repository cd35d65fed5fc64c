//! Active Session History through SQL: `v$active_session_history` sampled every 10 ms
//! shows a long query on CPU with its SQL_ID, a writer waiting for a row lock with the
//! session that holds it, population workers populating; the ring keeps no more than
//! `_ash_size` samples; closing a database is prompt whatever the interval.

mod common;

use common::*;
use lioscope::types::Value;
use lioscope::{Database, DatabaseOptions, Session};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// A database sampled every 10 ms.
fn sampled_db() -> (tempfile::TempDir, std::path::PathBuf, Database) {
    let mut opts = options(8192, "64M");
    opts.parameters.push(("_ash_sampling_interval".into(), "10".into()));
    temp_db(opts)
}

/// Polls `sql` (up to 60 s) until `found` accepts one of its rows; returns that row.
fn wait_for_row(s: &Session, sql: &str, found: impl Fn(&[Value]) -> bool) -> Vec<Value> {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if let Some(row) = rows(s, sql).into_iter().find(|r| found(r)) {
            return row;
        }
        assert!(Instant::now() < deadline, "no row of\n  {sql}\nwas found");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn text(v: &Value) -> String {
    v.to_string()
}

/// Runs `sql` in a new session on its own thread, again and again until `stop`; returns
/// the session's sid and the thread.
fn keep_running(db: &Database, sql: &'static str, stop: Arc<AtomicBool>) -> (u32, std::thread::JoinHandle<()>) {
    let (tx, rx) = std::sync::mpsc::channel();
    let db = db.clone();
    let thread = std::thread::spawn(move || {
        let s = db.session();
        tx.send(s.sid()).unwrap();
        while !stop.load(Ordering::Relaxed) {
            exec(&s, sql);
        }
    });
    (rx.recv().unwrap(), thread)
}

const LONG_QUERY: &str = "SELECT COUNT(*) FROM dual CONNECT BY LEVEL <= 3000000";

#[test]
fn a_long_query_is_sampled_on_cpu_with_its_sql_id() {
    let (_t, _d, db) = sampled_db();
    let s = db.session();
    let stop = Arc::new(AtomicBool::new(false));
    let (sid, runner) = keep_running(&db, LONG_QUERY, stop.clone());
    let sql_id = lioscope::stats::sqlarea::sql_id(LONG_QUERY);
    let row = wait_for_row(
        &s,
        &format!(
            "SELECT session_state, sql_id, in_sql_execution, session_type, program, sql_exec_id, sample_interval_ms, \
             sql_plan_line_id, sql_plan_operation, event, in_parse FROM v$active_session_history WHERE session_id = {sid}"
        ),
        |r| text(&r[0]) == "ON CPU" && text(&r[1]) == sql_id && text(&r[2]) == "Y",
    );
    stop.store(true, Ordering::Relaxed);
    runner.join().unwrap();
    assert_eq!((text(&row[3]), text(&row[4])), ("FOREGROUND".into(), "USER".into()));
    assert!(text(&row[5]).parse::<u64>().is_ok_and(|id| id >= 1 << 24), "SQL_EXEC_ID {:?}", row[5]);
    assert_eq!(text(&row[6]), "10");
    assert_eq!(text(&row[8]), "CONNECT BY WITHOUT FILTERING", "the line that reads the rows");
    assert!(text(&row[7]).parse::<u64>().is_ok(), "{:?}", row[7]);
    assert_eq!((&row[9], text(&row[10])), (&Value::Null, "N".into()));
    // The SQL_ID is v$sql's.
    assert_eq!(scalar(&s, &format!("SELECT COUNT(*) FROM v$sql WHERE sql_id = '{sql_id}'")), "1");
}

#[test]
fn a_writer_blocked_on_a_row_lock_is_sampled_waiting_with_its_blocker() {
    let (_t, _d, db) = sampled_db();
    let holder = db.session();
    manual(&holder);
    exec(&holder, "CREATE TABLE accounts (id NUMBER NOT NULL, balance NUMBER)");
    exec(&holder, "INSERT INTO accounts SELECT LEVEL, 100 FROM dual CONNECT BY LEVEL <= 3");
    exec(&holder, "COMMIT");
    exec(&holder, "UPDATE accounts SET balance = 0 WHERE id = 2");
    let (tx, rx) = std::sync::mpsc::channel();
    let waiter = {
        let db = db.clone();
        std::thread::spawn(move || {
            let s = db.session();
            tx.send(s.sid()).unwrap();
            exec(&s, "UPDATE accounts SET balance = balance + 1 WHERE id = 2");
        })
    };
    let sid = rx.recv().unwrap();
    let row = wait_for_row(
        &holder,
        &format!(
            "SELECT session_state, event, wait_class, blocking_session, p1, p2, p3, time_waited, sql_id, \
             in_sql_execution FROM v$active_session_history WHERE session_id = {sid} AND session_state = 'WAITING'"
        ),
        |r| text(&r[1]) == "enq: TX - row lock contention",
    );
    exec(&holder, "COMMIT");
    waiter.join().unwrap();
    assert_eq!(text(&row[2]), "Application");
    assert_eq!(text(&row[3]), holder.sid().to_string(), "BLOCKING_SESSION is the holder");
    assert_eq!(text(&row[4]), "1415053318", "P1: TX in mode 6");
    assert!(row[5] != Value::Null && row[6] != Value::Null);
    assert!(text(&row[7]).parse::<u64>().is_ok(), "TIME_WAITED {:?}", row[7]);
    assert_eq!(
        text(&row[8]),
        lioscope::stats::sqlarea::sql_id("UPDATE accounts SET balance = balance + 1 WHERE id = 2")
    );
    assert_eq!(text(&row[9]), "Y");
}

#[test]
fn population_workers_are_sampled_populating() {
    let (_t, _d, db) = sampled_db();
    let s = db.session();
    exec(&s, "ALTER SYSTEM SET inmemory_size = 256M");
    exec(&s, "ALTER SYSTEM SET \"_inmemory_imcu_target_rows\" = 20000");
    exec(&s, "CREATE TABLE t (id NUMBER NOT NULL, name VARCHAR2(40), amount NUMBER)");
    exec(
        &s,
        "INSERT INTO t SELECT LEVEL, 'name-' || MOD(LEVEL, 97), MOD(LEVEL, 1000) FROM dual CONNECT BY LEVEL <= 400000",
    );
    let query = "SELECT program, session_type, in_inmemory_populate, in_inmemory_repopulate, sql_id \
                 FROM v$active_session_history WHERE program LIKE 'W0%' AND in_inmemory_populate = 'Y'";
    let deadline = Instant::now() + Duration::from_secs(120);
    // Population of a few hundred thousand rows takes tens of milliseconds: populate again
    // until a sample catches a worker at it.
    let row = loop {
        exec(&s, "ALTER TABLE t INMEMORY PRIORITY HIGH");
        exec(&s, "EXEC DBMS_INMEMORY_ADMIN.POPULATE_WAIT('HIGH', 100, 120)");
        if let Some(row) = rows(&s, query).into_iter().next() {
            break row;
        }
        assert!(Instant::now() < deadline, "no sample of a population worker");
        exec(&s, "ALTER TABLE t NO INMEMORY");
    };
    assert_eq!(text(&row[1]), "BACKGROUND");
    assert_eq!(text(&row[3]), "N");
    assert_eq!(row[4], Value::Null, "a worker runs no statement");
}

#[test]
fn the_history_never_holds_more_than_its_size() {
    let (_t, _d, db) = sampled_db();
    let s = db.session();
    exec(&s, "ALTER SYSTEM SET \"_ash_size\" = 5");
    let stop = Arc::new(AtomicBool::new(false));
    let (_sid, runner) = keep_running(&db, LONG_QUERY, stop.clone());
    let deadline = Instant::now() + Duration::from_secs(2);
    let mut most = 0;
    while Instant::now() < deadline {
        let n = int(&s, "SELECT COUNT(*) FROM v$active_session_history");
        assert!(n <= 5, "{n} samples kept with _ash_size = 5");
        most = most.max(n);
        std::thread::sleep(Duration::from_millis(15));
    }
    stop.store(true, Ordering::Relaxed);
    runner.join().unwrap();
    assert_eq!(most, 5, "the ring fills up to its size");
    // Newest kept: the sample ids are the last ones.
    let ids: Vec<i64> = rows(&s, "SELECT sample_id FROM v$active_session_history")
        .iter()
        .map(|r| text(&r[0]).parse().unwrap())
        .collect();
    assert!(ids.windows(2).all(|w| w[0] <= w[1]), "oldest first: {ids:?}");
    assert!(ids[0] > 5, "older samples were dropped: {ids:?}");
}

#[test]
fn closing_a_database_sampled_every_10_ms_or_every_hour_is_prompt() {
    for interval in ["10", "3600000"] {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("db");
        let mut opts = DatabaseOptions::default();
        opts.parameters.push(("_ash_sampling_interval".into(), interval.into()));
        let db = create(&path, opts);
        let s = db.session();
        exec(&s, "SELECT COUNT(*) FROM dual CONNECT BY LEVEL <= 1000");
        std::thread::sleep(Duration::from_millis(50));
        drop(s);
        let started = Instant::now();
        drop(db);
        let took = started.elapsed();
        assert!(took < Duration::from_secs(3), "closing with a {interval} ms interval took {took:?}");
        // The directory is free again.
        drop(open(&path, DatabaseOptions::default()));
    }
}

#[test]
fn the_interval_is_a_hidden_parameter_settable_down_to_10_ms() {
    let (_t, _d, db) = temp_db(options(8192, "16M"));
    let s = db.session();
    assert_eq!(scalar(&s, "SELECT value FROM v$parameter WHERE name = '_ash_sampling_interval'"), "1000");
    let e = fail(&s, "ALTER SYSTEM SET \"_ash_sampling_interval\" = 5").to_string();
    assert!(e.contains("_ash_sampling_interval"), "{e}");
    let e = fail(&s, "ALTER SESSION SET \"_ash_sampling_interval\" = 10").to_string();
    assert!(e.contains("_ash_sampling_interval"), "{e}");
    exec(&s, "ALTER SYSTEM SET \"_ash_sampling_interval\" = 10");
    // A change applies at once: samples taken with the new interval appear.
    let stop = Arc::new(AtomicBool::new(false));
    let (_sid, runner) = keep_running(&db, LONG_QUERY, stop.clone());
    wait_for_row(&s, "SELECT sample_interval_ms FROM v$active_session_history", |r| text(&r[0]) == "10");
    stop.store(true, Ordering::Relaxed);
    runner.join().unwrap();
}
