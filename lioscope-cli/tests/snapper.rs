//! SNAPPER through the runner, as the shell and scripts run it: a busy session's
//! statistics, time and waits over snapshots, with rates, %TIME and a bar; name patterns;
//! its ASH samples grouped by columns; CSV output; a session that is not there named in a
//! clear error.

use lioscope::{Database, DatabaseOptions};
use lioscope_cli::format::OutputFormat;
use lioscope_cli::output::Output;
use lioscope_cli::runner::{Flow, ScriptRunner};
use lioscope_cli::sqlplus::OnError;
use std::sync::atomic::{AtomicBool, Ordering};

#[test]
fn snapper_shows_what_a_busy_session_did() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::create(dir.path().join("db"), DatabaseOptions::default()).unwrap();
    let busy = db.session();
    busy.execute("CREATE TABLE t (n NUMBER)").unwrap();
    busy.execute("INSERT INTO t SELECT LEVEL FROM dual CONNECT BY LEVEL <= 20000").unwrap();
    let sid = busy.sid();
    let stop = AtomicBool::new(false);
    std::thread::scope(|scope| {
        let stop = &stop;
        scope.spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                busy.execute("SELECT COUNT(*) FROM t WHERE n > 0").unwrap();
            }
        });
        // The busy session stops however this thread leaves the scope, a failed check included.
        struct StopOnDrop<'a>(&'a AtomicBool);
        impl Drop for StopOnDrop<'_> {
            fn drop(&mut self) {
                self.0.store(true, Ordering::Relaxed);
            }
        }
        let _stop = StopOnDrop(stop);
        let watcher = db.session();
        let (output, transcript) = Output::transcript();
        let mut runner = ScriptRunner::new(&watcher, OutputFormat::Table, output, OnError::Continue);
        let command = format!("SNAPPER stats 0.3 2 {sid} sinclude='session logical reads|DB CPU|user calls'");
        assert_eq!(runner.run_typed(&command), Flow::Continue);
        let text = transcript.take();
        assert_eq!(text.matches("-- Snapper: snapshot").count(), 2, "{text}");
        let reads = text.lines().filter(|l| l.contains("| STAT") && l.contains("session logical reads")).count();
        assert_eq!(reads, 2, "the scans' logical reads in each snapshot:\n{text}");
        let cpu =
            text.lines().find(|l| l.contains("| TIME") && l.contains("DB CPU")).unwrap_or_else(|| panic!("{text}"));
        assert!(cpu.contains('%') && cpu.contains("|@"), "DB CPU as a share of the interval, with a bar: {cpu}");
        assert!(!text.contains("consistent gets"), "only the names asked for:\n{text}");

        // CSV: the same columns, one line a figure.
        let (output, transcript) = Output::transcript();
        let mut csv = ScriptRunner::new(&watcher, OutputFormat::Csv, output, OnError::Continue);
        csv.run_typed(&format!("SNAPPER stats 0.2 1 {sid} sinclude=%logical%"));
        let text = transcript.take();
        assert!(
            text.starts_with("SID,PROGRAM,TYPE,NAME,DELTA,DELTA_PER_SEC,PCT_TIME,GRAPH,WAITS,AVG_WAIT_US"),
            "{text}"
        );
        assert!(text.lines().skip(1).any(|l| l.starts_with(&format!("{sid},USER,STAT,"))), "{text}");

        // The ASH section: the busy session's samples of the snapshot, by state, event and
        // SQL_ID; sampled every 10 ms here, so a 0.4 s snapshot holds dozens.
        watcher.execute("ALTER SYSTEM SET \"_ash_sampling_interval\" = 10").unwrap();
        let (output, transcript) = Output::transcript();
        let mut ash = ScriptRunner::new(&watcher, OutputFormat::Table, output, OnError::Continue);
        ash.run_typed(&format!("SNAPPER ash 0.4 1 {sid}"));
        let text = transcript.take();
        assert!(text.contains("ASH samples by SESSION_STATE+EVENT+SQL_ID"), "{text}");
        assert!(!text.contains("| STAT"), "ash alone shows no statistics:\n{text}");
        let on_cpu = text.lines().find(|l| l.contains("ON CPU")).unwrap_or_else(|| panic!("{text}"));
        let active: f64 = on_cpu.split('|').nth(1).unwrap().trim().trim_end_matches('%').parse().unwrap();
        assert!(active > 20.0 && active <= 110.0, "a busy session is active most of the snapshot: {on_cpu}");
        let (output, transcript) = Output::transcript();
        let mut grouped = ScriptRunner::new(&watcher, OutputFormat::Csv, output, OnError::Continue);
        grouped.run_typed(&format!("SNAPPER ash=session_id+in_sql_execution 0.3 1 {sid}"));
        let text = transcript.take();
        assert!(text.starts_with("ACTIVE_PCT,AAS,SAMPLES,SESSION_ID,IN_SQL_EXECUTION"), "{text}");
        assert!(text.lines().any(|l| l.ends_with(&format!(",{sid},Y"))), "{text}");

        // A session that is not there.
        let (output, transcript) = Output::transcript();
        let mut missing = ScriptRunner::new(&watcher, OutputFormat::Table, output, OnError::Continue);
        missing.run_typed("SNAPPER stats 0.1 1 99999");
        let text = transcript.take();
        assert!(text.contains("SNAPPER") && text.contains("no session is sid 99999"), "{text}");
    });
}
