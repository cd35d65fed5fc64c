//! INSERT ... SELECT over the row generator with a helper thread evaluating the batches
//! (`parallel_max_servers = 1`) stores what the session alone stores, in the same order;
//! a row's error stops it as it stops the session alone, leaving nothing behind; the
//! parameter takes 0 and 1 only; the helper's CPU time counts as the session's. The
//! batches the session received from the helper (`PX local messages recv'd`) say that
//! the helper did evaluate them, and that none ran with the parameter at 0.

mod common;

use common::*;
use lioscope::Session;
use lioscope::stats::osstat::{thread_cpu_time_ns, usable_cpus};
use lioscope::stats::{Stat, TimeModel};

/// Enough rows for the helper to start (it does from 16 batches of 1024).
const ROWS: i64 = 50_000;

const CREATE: &str =
    "CREATE TABLE t (id NUMBER NOT NULL, name VARCHAR2(40), big NUMBER, kind CHAR(1), code VARCHAR2(8))";

/// Expressions over LEVEL the batches compile, one overflowing for some rows (those rows
/// are evaluated the general way, in their place).
fn insert(rows: i64) -> String {
    format!(
        "INSERT INTO t SELECT LEVEL, 'name-' || MOD(LEVEL, 977) || '-' || LEVEL, \
         1000000000000000000 * MOD(LEVEL, 12), CASE WHEN MOD(LEVEL, 3) = 0 THEN 'x' ELSE 'y' END, \
         LPAD(ORA_HASH(LEVEL, 99999, 7), 6, '0') FROM dual CONNECT BY LEVEL <= {rows}"
    )
}

/// The table's rows in storage order, as text.
fn stored(s: &Session) -> Vec<String> {
    rows(s, "SELECT id, name, big, kind, code FROM t")
        .into_iter()
        .map(|r| r.iter().map(|v| format!("{v:?}")).collect::<Vec<_>>().join("|"))
        .collect()
}

/// What a load left: the table's rows, the statement's outcome, and the batches the
/// session received from a helper thread.
fn load_with(helpers: u32, sql: &str) -> (Vec<String>, Result<(), String>, u64) {
    let (_t, _d, db) = temp_db(options(8192, "16M"));
    let s = db.session();
    exec(&s, &format!("ALTER SESSION SET parallel_max_servers = {helpers}"));
    exec(&s, CREATE);
    let before = s.stats().get(Stat::PxLocalMessagesRecvd);
    let outcome = s.execute(sql).map(|_| ()).map_err(|e| e.to_string());
    let from_helper = s.stats().get(Stat::PxLocalMessagesRecvd) - before;
    (stored(&s), outcome, from_helper)
}

/// The batches a helped load hands over for its first `rows` rows: one per 1,024 rows;
/// none on a machine with one CPU, where no helper thread runs (said in the output).
fn helper_batches(rows: i64) -> u64 {
    if usable_cpus() > 1 {
        (rows as u64).div_ceil(1024)
    } else {
        eprintln!("one CPU: no helper thread runs here; the helped load is the session's own");
        0
    }
}

#[test]
fn a_helped_load_stores_the_rows_the_session_alone_stores_in_order() {
    let (alone, a, alone_batches) = load_with(0, &insert(ROWS));
    let (helped, h, helped_batches) = load_with(1, &insert(ROWS));
    assert_eq!((a, h), (Ok(()), Ok(())));
    assert_eq!(alone_batches, 0, "a helper ran with parallel_max_servers = 0");
    assert_eq!(helped_batches, helper_batches(ROWS), "batches received from the helper");
    assert_eq!(alone.len(), ROWS as usize);
    assert!(alone == helped, "the helped load differs from the session's own");
    // Storage order is generator order.
    let ids: Vec<i64> = helped
        .iter()
        .map(|r| r.split('|').next().unwrap().trim_start_matches("Int(").trim_end_matches(')').parse().unwrap())
        .collect();
    assert!(ids.iter().copied().eq(1..=ROWS));
}

#[test]
fn a_row_error_stops_a_helped_load_as_it_stops_the_session_alone() {
    // Row 40,000 gives a name too long for VARCHAR2(40): the statement fails there.
    let bad = insert(ROWS).replace("'name-' ||", "CASE WHEN LEVEL = 40000 THEN RPAD('n', 41, 'n') ELSE 'name-' END ||");
    let (alone, a, alone_batches) = load_with(0, &bad);
    let (helped, h, helped_batches) = load_with(1, &bad);
    let error = a.expect_err("row 40,000 is too long");
    assert_eq!(h, Err(error.clone()));
    assert_eq!(alone_batches, 0, "a helper ran with parallel_max_servers = 0");
    // The session stops at the batch that holds row 40,000.
    assert_eq!(helped_batches, helper_batches(40_000), "batches received from the helper");
    assert!(error.contains("NAME"), "the error names the column: {error}");
    assert!(alone.is_empty() && helped.is_empty(), "a failed statement leaves no rows");
}

#[test]
fn the_helper_parameter_takes_zero_or_one() {
    let (_t, _d, db) = temp_db(options(8192, "4M"));
    let s = db.session();
    assert_eq!(parameter(&s, "parallel_max_servers"), "1");
    exec(&s, "ALTER SESSION SET parallel_max_servers = 0");
    assert_eq!(parameter(&s, "parallel_max_servers"), "0");
    let e = fail(&s, "ALTER SESSION SET parallel_max_servers = 2").to_string();
    assert!(e.contains("parallel_max_servers") && e.contains("between 0 and 1"), "{e}");
}

#[test]
fn a_helped_load_counts_the_helpers_cpu_as_the_sessions() {
    let (_t, _d, db) = temp_db(options(8192, "64M"));
    let s = db.session();
    exec(&s, CREATE);
    let db_cpu_before = s.stats().time(TimeModel::DbCpu);
    let own_before = thread_cpu_time_ns();
    exec(&s, &insert(200_000));
    let own_us = (thread_cpu_time_ns() - own_before) / 1000;
    let db_cpu_us = s.stats().time(TimeModel::DbCpu) - db_cpu_before;
    if std::thread::available_parallelism().map_or(1, usize::from) > 1 {
        // The helper evaluated 200,000 rows' expressions: milliseconds of CPU.
        assert!(db_cpu_us > own_us + 1000, "DB CPU {db_cpu_us} µs, this thread's {own_us} µs");
    } else {
        assert!(db_cpu_us <= own_us, "no helper on one CPU: DB CPU {db_cpu_us} µs, this thread's {own_us} µs");
    }
}
