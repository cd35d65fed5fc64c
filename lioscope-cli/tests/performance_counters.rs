//! A session's performance counters through the public API: off until switched on; once
//! on, every counter either counts or says why the machine cannot count it (nothing is
//! estimated); task-clock, a software counter that works where hardware counters are
//! hidden, follows the session's CPU time, its helper thread's included; a session that
//! moves to another thread keeps what it counted; `SET AUTOTRACE ... CPU` prints the
//! counters with the derived figures.

mod common;

use common::*;
use lioscope::stats::TimeModel;
use lioscope::stats::hwcounters::Counter;
use lioscope_cli::format::OutputFormat;
use lioscope_cli::output::Output;
use lioscope_cli::runner::{Flow, ScriptRunner};
use lioscope_cli::sqlplus::OnError;

#[test]
fn counters_are_off_until_switched_on_and_each_counts_or_says_why_not() {
    let (_t, _d, db) = temp_db(options(8192, "16M"));
    let s = db.session();
    assert!(s.hardware_counters().is_none());
    s.set_hardware_counters(true);
    exec(&s, "CREATE TABLE t (a INTEGER)");
    exec(&s, "INSERT INTO t SELECT LEVEL FROM dual CONNECT BY LEVEL <= 20000");
    let reading = s.hardware_counters().expect("on");
    for counter in Counter::ALL {
        match reading.value(counter) {
            Some(_) => assert!(reading.why_unavailable(counter).is_none()),
            None => {
                let why = reading.why_unavailable(counter).expect("a reason");
                assert!(why.contains("not available on this machine"), "{counter:?}: {why}");
                assert!(why.contains(counter.kernel_name()), "{why}");
            }
        }
    }
    s.set_hardware_counters(false);
    assert!(s.hardware_counters().is_none());
}

#[test]
fn task_clock_follows_the_sessions_cpu_time_helper_included() {
    let (_t, _d, db) = temp_db(options(8192, "64M"));
    let s = db.session();
    exec(&s, "CREATE TABLE t (id NUMBER, name VARCHAR2(40))");
    s.set_hardware_counters(true);
    let Some(before) = s.hardware_counters().unwrap().counts.get(&Counter::TaskClock).copied() else {
        return; // no perf events at all here: the first test checks the reasons
    };
    let cpu_before = s.stats().time(TimeModel::DbCpu);
    let started = std::time::Instant::now();
    exec(&s, "INSERT INTO t SELECT LEVEL, 'name-' || LEVEL FROM dual CONNECT BY LEVEL <= 200000");
    let elapsed_us = started.elapsed().as_micros() as f64;
    let cpu_us = (s.stats().time(TimeModel::DbCpu) - cpu_before) as f64;
    let after = s.hardware_counters().unwrap();
    let clock_us = ((after.value(Counter::TaskClock).unwrap() - before.raw) / 1000) as f64;
    // DB CPU holds the session's thread CPU clock and the helper's (from before it opened
    // its counters). task-clock counts both threads from when their counters opened, by
    // the scheduler's clock, which on a virtual machine also runs while the hypervisor
    // has stolen the CPU (the thread CPU clock does not): on a busy host it reads more
    // than DB CPU, never more than the two threads' wall-clock time.
    assert!(clock_us > cpu_us * 0.75 - 2000.0, "task-clock {clock_us} µs, DB CPU {cpu_us} µs");
    assert!(clock_us < 2.0 * elapsed_us + 2000.0, "task-clock {clock_us} µs over 2 threads × {elapsed_us} µs");
    if lioscope::stats::osstat::usable_cpus() > 1 {
        let helpers = s.stats().helper_counts();
        assert!(helpers.value(Counter::TaskClock).unwrap_or(0) > 0, "the helper counted: {helpers:?}");
    }
}

#[test]
fn a_session_that_moves_to_another_thread_keeps_what_it_counted() {
    let (_t, _d, db) = temp_db(options(8192, "16M"));
    let s = db.session();
    s.set_hardware_counters(true);
    exec(&s, "CREATE TABLE t (a INTEGER)");
    exec(&s, "INSERT INTO t SELECT LEVEL FROM dual CONNECT BY LEVEL <= 50000");
    let here = s.hardware_counters().unwrap();
    let there = std::thread::spawn(move || {
        exec(&s, "SELECT COUNT(*) FROM t");
        s.hardware_counters().unwrap()
    })
    .join()
    .unwrap();
    if let (Some(a), Some(b)) = (here.value(Counter::TaskClock), there.value(Counter::TaskClock)) {
        assert!(b > a, "the new thread's count adds to the old one's: {a} then {b}");
    }
    assert_eq!(here.unavailable.keys().collect::<Vec<_>>(), there.unavailable.keys().collect::<Vec<_>>());
}

#[test]
fn autotrace_cpu_prints_every_counter_and_the_derived_figures() {
    let (_t, _d, db) = temp_db(options(8192, "16M"));
    let s = db.session();
    let (output, transcript) = Output::transcript();
    let mut runner = ScriptRunner::new(&s, OutputFormat::Table, output, OnError::EXIT_FAILURE);
    let mut run = |statement: &str| {
        let flow = runner.run_typed(statement);
        let out = transcript.take();
        assert_eq!(flow, Flow::Continue, "{statement}: {out}");
        out
    };
    run("CREATE TABLE t (a INTEGER)");
    run("INSERT INTO t SELECT LEVEL FROM dual CONNECT BY LEVEL <= 1000");
    run("SET AUTOTRACE TRACEONLY STATISTICS CPU");
    assert!(s.hardware_counters().is_some(), "SET AUTOTRACE ... CPU switches the counters on");
    let out = run("SELECT COUNT(*) FROM t");
    assert!(out.contains("Performance counters"), "{out}");
    for counter in Counter::ALL {
        let line = out.lines().find(|l| l.contains(counter.name())).unwrap_or_else(|| panic!("{counter:?}: {out}"));
        let first = line.split_whitespace().next().unwrap();
        assert!(
            first == "n/a" && line.contains("not available on this machine") || first.parse::<f64>().is_ok(),
            "{line}"
        );
    }
    for derived in ["IPC (instructions / cycles)", "instructions per row (instructions / rows processed)"] {
        assert!(out.contains(derived), "{out}");
    }
    let figure = |label: &str| -> f64 {
        let line = out.lines().find(|l| l.trim_end().ends_with(label)).unwrap_or_else(|| panic!("{label}: {out}"));
        line.split_whitespace().next().unwrap().parse().unwrap()
    };
    // One row processed: logical reads per row is the statement's logical reads.
    assert_eq!(
        figure("logical reads per row (session logical reads / rows processed)"),
        figure("session logical reads")
    );
    run("SET AUTOTRACE OFF");
    assert!(s.hardware_counters().is_none(), "AUTOTRACE OFF switches them off");
    run("SET AUTOTRACE ON STATISTICS");
    assert!(!run("SELECT COUNT(*) FROM t").contains("Performance counters"));
    assert_eq!(runner.run_typed("SET AUTOTRACE BOGUS CPU"), Flow::Exit(1), "a bad setting is an error");
    assert!(transcript.take().contains("unknown setting: SET AUTOTRACE BOGUS CPU"));
    assert!(s.hardware_counters().is_none(), "a bad setting changes nothing");
}

#[test]
fn v_sql_totals_each_statement_over_its_executions() {
    let (_t, _d, db) = temp_db(options(8192, "16M"));
    let s = db.session();
    exec(&s, "CREATE TABLE t (a INTEGER)");
    exec(&s, "INSERT INTO t SELECT LEVEL FROM dual CONNECT BY LEVEL <= 30000");
    let query = "SELECT COUNT(*) FROM t WHERE a > 10";
    exec(&s, query);
    s.set_hardware_counters(true);
    let (counters_before, cpu_before) = (s.hardware_counters().unwrap(), s.stats().time(TimeModel::DbCpu));
    let gets_before = s.stats().get(lioscope::stats::Stat::LogicalReads);
    exec(&s, query);
    exec(&s, query);
    let counted = s.hardware_counters().unwrap().since(&counters_before);
    let cpu_us = s.stats().time(TimeModel::DbCpu) - cpu_before;
    let gets = s.stats().get(lioscope::stats::Stat::LogicalReads) - gets_before;
    s.set_hardware_counters(false);
    let row = s
        .query(&format!(
            "SELECT executions, rows_processed, buffer_gets, cpu_time, counted_executions, task_clock_ns, instructions \
             FROM v$sql WHERE sql_text = '{query}'"
        ))
        .unwrap()
        .rows;
    assert_eq!(row.len(), 1, "one entry per text");
    let number = |i: usize| row[0][i].to_string().parse::<u64>().ok();
    assert_eq!(number(0), Some(3));
    assert_eq!(number(1), Some(3), "one row fetched each time");
    // Two of the three executions ran with counters on; their gets and CPU are the
    // session's over those two, and the first execution's are added beside them.
    assert!(number(2).unwrap() >= gets && number(2).unwrap() <= gets * 3 / 2, "buffer gets {:?} vs {gets}", number(2));
    assert!(number(3).unwrap() >= cpu_us, "CPU time {:?} covers {cpu_us}", number(3));
    assert_eq!(number(4), Some(2), "counted executions");
    match counted.value(Counter::TaskClock) {
        Some(total) => assert!(number(5).unwrap() > 0 && number(5).unwrap() <= total, "{:?} of {total}", number(5)),
        None => assert_eq!(number(5), None, "nothing counted: NULL"),
    }
    if counted.value(Counter::Instructions).is_none() {
        assert_eq!(number(6), None, "a counter the machine does not offer is NULL, not 0");
    }
}

#[test]
fn populate_wait_counts_what_the_population_workers_counted() {
    let (_t, _d, db) = temp_db(options(8192, "64M"));
    let s = db.session();
    exec(&s, "CREATE TABLE t (id NUMBER, name VARCHAR2(40))");
    exec(&s, "INSERT INTO t SELECT LEVEL, 'name-' || MOD(LEVEL, 977) FROM dual CONNECT BY LEVEL <= 200000");
    exec(&s, "ALTER SYSTEM SET inmemory_size = 64M");
    s.set_hardware_counters(true);
    let populate_cpu_before = s.query("SELECT value FROM v$sysstat WHERE name = 'IM populate CPU time'").unwrap().rows;
    exec(&s, "ALTER TABLE t INMEMORY PRIORITY HIGH");
    assert_eq!(rows(&s, "EXEC DBMS_INMEMORY_ADMIN.POPULATE_WAIT('HIGH', 100, 60)")[0][0].to_string(), "0");
    let helpers = s.stats().helper_counts();
    let populate_cpu_after = s.query("SELECT value FROM v$sysstat WHERE name = 'IM populate CPU time'").unwrap().rows;
    let centiseconds = |rows: &[Vec<lioscope::types::Value>]| rows[0][0].to_string().parse::<u64>().unwrap();
    let populate_cpu_ms = (centiseconds(&populate_cpu_after) - centiseconds(&populate_cpu_before)) * 10;
    for counter in Counter::ALL {
        match helpers.value(counter) {
            Some(_) => {}
            None => assert!(helpers.why_unavailable(counter).unwrap().contains("not available"), "{counter:?}"),
        }
    }
    if let Some(ns) = helpers.value(Counter::TaskClock) {
        // The workers' task-clock covers each unit they built; 'IM populate CPU time' is
        // in centiseconds (so a short population may read 0).
        let clock_ms = ns / 1_000_000;
        assert!(ns > 0, "the workers counted");
        assert!(clock_ms + 20 >= populate_cpu_ms / 2, "task-clock {clock_ms} ms, IM populate CPU {populate_cpu_ms} ms");
    }
}
