//! Durability: power losses at every sync (unsynced writes kept, dropped or torn), I/O
//! errors, redo cut at every byte of its last records, crashes with uncommitted work
//! checkpointed, and instance recovery's report. Every case reopens the database and
//! checks the same invariants: the total of the accounts is unchanged, every
//! acknowledged transfer is present, no transaction is left active, the index agrees
//! with the table, and every row can still be updated.

mod common;

use common::bank::{ACCOUNTS, BALANCE, check_bank, copy_dir, create_bank, options, transfer};
use common::{exec, int, manual, scalar};
use lioscope::io::{Fault, FaultIo, FaultPlan};
use lioscope::{Database, DatabaseOptions, Session};
use std::path::Path;

/// Runs transfers 1..=count (a checkpoint halfway, and a big uncommitted update from
/// another session before it) until one fails; returns the acknowledged ones and the
/// session with the uncommitted update (drop it only once the power is off, so that its
/// rollback is recovery's to do).
fn workload(db: &Database, count: i64) -> (Vec<i64>, Session) {
    let s = db.session();
    manual(&s);
    let other = db.session();
    manual(&other);
    let mut acknowledged = Vec::new();
    for n in 1..=count {
        if n == count / 2
            && (other.execute("UPDATE hist SET v = v + 1000").is_err() || s.execute("ALTER SYSTEM CHECKPOINT").is_err())
        {
            break;
        }
        if transfer(&s, n).is_err() {
            break;
        }
        acknowledged.push(n);
    }
    (acknowledged, other)
}

/// Reopens `dir` and checks every invariant; returns the ledger's ids.
fn check_after_crash(dir: &Path, acknowledged: &[i64]) -> Vec<i64> {
    let db = Database::open(dir, options(None)).unwrap_or_else(|e| panic!("reopen after a crash: {e}"));
    let s = db.session();
    let ledger = check_bank(&s, acknowledged);
    assert_eq!(int(&s, "SELECT SUM(v) FROM hist"), 300, "no uncommitted update survives");
    exec(&s, "UPDATE acct SET bal = bal + 1");
    assert_eq!(int(&s, "SELECT SUM(bal) FROM acct"), ACCOUNTS * (BALANCE + 1), "every row can be updated");
    exec(&s, "UPDATE acct SET bal = bal - 1");
    ledger
}

#[test]
fn a_power_loss_at_any_sync_loses_no_acknowledged_commit() {
    let tmp = tempfile::tempdir().unwrap();
    let base = tmp.path().join("base");
    create_bank(&base, options(None));
    // How many syncs a whole run makes, then a power loss at each of them in turn.
    let total = {
        let dir = tmp.path().join("count");
        copy_dir(&base, &dir);
        let io = FaultIo::new(FaultPlan::default());
        let db = Database::open(&dir, options(Some(io.clone()))).unwrap();
        drop(workload(&db, 24));
        drop(db);
        io.syncs()
    };
    assert!(total > 20, "a run makes {total} syncs");
    let mut torn = 0;
    for at in 1..=total {
        eprintln!("power loss at sync {at} of {total}");
        let dir = tmp.path().join(format!("at{at}"));
        copy_dir(&base, &dir);
        let io = FaultIo::new(FaultPlan { at_sync: Some((at, Fault::PowerLoss)), at_write: None });
        let acknowledged = match Database::open(&dir, options(Some(io.clone()))) {
            Ok(db) => {
                let (acknowledged, other) = workload(&db, 24);
                io.cut_power();
                drop((other, db));
                acknowledged
            }
            Err(_) => Vec::new(),
        };
        let report = io.power_loss(at).unwrap();
        torn += report.torn;
        check_after_crash(&dir, &acknowledged);
        std::fs::remove_dir_all(&dir).unwrap();
    }
    assert!(torn > 0, "some power losses tore writes");
}

#[test]
fn io_errors_fail_the_statement_or_commit_and_the_database_opens_cleanly() {
    let tmp = tempfile::tempdir().unwrap();
    let base = tmp.path().join("base");
    create_bank(&base, options(None));
    let cases = [
        FaultPlan { at_write: Some((3, Fault::Errno(libc::ENOSPC))), at_sync: None },
        FaultPlan { at_write: Some((40, Fault::Errno(libc::EIO))), at_sync: None },
        FaultPlan { at_sync: Some((5, Fault::Errno(libc::EIO))), at_write: None },
        FaultPlan { at_sync: Some((30, Fault::Errno(libc::ENOSPC))), at_write: None },
    ];
    for (i, plan) in cases.into_iter().enumerate() {
        let dir = tmp.path().join(format!("case{i}"));
        copy_dir(&base, &dir);
        let io = FaultIo::new(plan.clone());
        let db = Database::open(&dir, options(Some(io.clone()))).unwrap();
        let s = db.session();
        manual(&s);
        let mut acknowledged = Vec::new();
        let mut errors = Vec::new();
        for n in 1..=30 {
            match transfer(&s, n) {
                Ok(()) => acknowledged.push(n),
                Err(e) => {
                    errors.push(e.to_string());
                    let _ = s.execute("ROLLBACK");
                }
            }
            if n % 10 == 0
                && let Err(e) = s.execute("ALTER SYSTEM CHECKPOINT")
            {
                errors.push(e.to_string());
            }
        }
        assert!(
            errors.iter().any(|e| e.contains("No space left") || e.contains("Input/output error")),
            "case {i} ({plan:?}): the error names the cause: {errors:?}"
        );
        drop(s);
        drop(db);
        check_after_crash(&dir, &acknowledged);
    }
}

#[test]
fn uncommitted_work_checkpointed_before_a_crash_is_rolled_back_at_open() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    create_bank(&dir, options(None));
    let io = FaultIo::new(FaultPlan::default());
    let db = Database::open(&dir, options(Some(io.clone()))).unwrap();
    let s = db.session();
    manual(&s);
    exec(&s, "UPDATE acct SET bal = bal + 1000");
    exec(&s, "UPDATE hist SET v = v + 1000");
    exec(&s, "ALTER SYSTEM CHECKPOINT");
    io.cut_power();
    drop((s, db));
    let db = Database::open(&dir, options(None)).unwrap();
    let report = db.recovery();
    assert_eq!(report.transactions_rolled_back, 1, "{report:?}");
    assert!(report.summary().unwrap().contains("1 transactions rolled back"));
    let s = db.session();
    assert_eq!(scalar(&s, "SELECT SOFAR FROM v$recovery_progress WHERE item = 'Transactions Rolled Back'"), "1");
    drop(s);
    drop(db);
    check_after_crash(&dir, &[]);
}

#[test]
fn recovery_replays_committed_work_that_never_reached_the_datafiles() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    create_bank(&dir, options(None));
    let io = FaultIo::new(FaultPlan::default());
    let db = Database::open(&dir, options(Some(io.clone()))).unwrap();
    let acknowledged = {
        let s = db.session();
        manual(&s);
        (1..=40).inspect(|&n| transfer(&s, n).unwrap()).collect::<Vec<_>>()
    };
    // Every datafile write since the last checkpoint is lost; only the log survives.
    io.cut_power();
    drop(db);
    io.power_loss(7).unwrap();
    let db = Database::open(&dir, options(None)).unwrap();
    let report = db.recovery();
    assert!(report.needed && report.redo_records > 0 && report.blocks > 0, "{report:?}");
    drop(db);
    assert_eq!(check_after_crash(&dir, &acknowledged), acknowledged);
}

/// The valid redo of the newest sequence: (file, first byte after the last record).
fn redo_tail(dir: &Path) -> (std::path::PathBuf, usize) {
    let newest = lioscope::redo_log::newest_log(dir).unwrap();
    let end = newest.end() as usize;
    (newest.path, end)
}

#[test]
fn redo_cut_at_every_byte_of_its_last_records_recovers_exactly_the_complete_transactions() {
    let tmp = tempfile::tempdir().unwrap();
    let base = tmp.path().join("base");
    create_bank(&base, options(None));
    let io = FaultIo::new(FaultPlan::default());
    let db = Database::open(&base, options(Some(io.clone()))).unwrap();
    let s = db.session();
    manual(&s);
    for n in 1..=5 {
        transfer(&s, n).unwrap();
    }
    // Blocks already logged whole: the last transfer's records are small changes.
    let (_, before_last) = redo_tail(&base);
    transfer(&s, 6).unwrap();
    io.cut_power();
    drop((s, db));
    let (log, end) = redo_tail(&base);
    assert!(end > before_last, "the last transfer wrote redo");
    let mut seen = Vec::new();
    for cut in before_last..=end {
        let dir = tmp.path().join("cut");
        copy_dir(&base, &dir);
        let file = std::fs::OpenOptions::new().write(true).open(dir.join(log.file_name().unwrap())).unwrap();
        use std::os::unix::fs::FileExt;
        file.write_all_at(&vec![0u8; end - cut], cut as u64).unwrap();
        drop(file);
        let ledger = check_after_crash(&dir, &[1, 2, 3, 4, 5]);
        assert!(ledger == [1, 2, 3, 4, 5] || ledger == [1, 2, 3, 4, 5, 6], "cut at {cut}: {ledger:?}");
        assert!(seen.last().is_none_or(|&l| l <= ledger.len()), "a longer log never loses a transfer (cut at {cut})");
        seen.push(ledger.len());
        std::fs::remove_dir_all(&dir).unwrap();
    }
    assert_eq!((seen[0], seen[seen.len() - 1]), (5, 6), "the last transfer is lost when cut first, kept whole");
}

#[test]
fn the_log_views_and_statistics_show_what_the_log_writer_did() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    create_bank(&dir, options(None));
    let db = Database::open(&dir, options(None)).unwrap();
    let s = db.session();
    manual(&s);
    let seq = int(&s, "SELECT sequence# FROM v$log WHERE status = 'CURRENT'");
    transfer(&s, 1).unwrap();
    exec(&s, "ALTER SYSTEM SWITCH LOGFILE");
    assert_eq!(int(&s, "SELECT sequence# FROM v$log WHERE status = 'CURRENT'"), seq + 1);
    assert_eq!(int(&s, "SELECT COUNT(*) FROM v$logfile"), 3);
    for name in ["redo size", "redo entries", "redo synch writes"] {
        assert!(int(&s, &format!("SELECT value FROM v$mystat WHERE name = '{name}'")) > 0, "{name}");
    }
    for name in ["redo writes", "redo blocks written", "redo log switches"] {
        assert!(common::sysstat(&s, name) > 0, "{name}");
    }
    assert!(int(&s, "SELECT total_waits FROM v$system_event WHERE event = 'log file sync'") > 0);
    assert!(int(&s, "SELECT total_waits FROM v$system_event WHERE event = 'log file parallel write'") > 0);
    // A commit that does not wait is counted and never waits.
    let waits = int(&s, "SELECT total_waits FROM v$system_event WHERE event = 'log file sync'");
    exec(&s, "UPDATE acct SET bal = bal WHERE id = 1");
    exec(&s, "COMMIT WRITE BATCH NOWAIT");
    assert_eq!(int(&s, "SELECT total_waits FROM v$system_event WHERE event = 'log file sync'"), waits);
    assert_eq!(int(&s, "SELECT value FROM v$mystat WHERE name = 'commit batch/nowait requested'"), 1);
    exec(&s, "ALTER SESSION SET commit_wait = 'force_wait'");
    exec(&s, "UPDATE acct SET bal = bal WHERE id = 1");
    exec(&s, "COMMIT WRITE NOWAIT");
    assert_eq!(int(&s, "SELECT total_waits FROM v$system_event WHERE event = 'log file sync'"), waits + 1);
    let e = s.execute("COMMIT WRITE SOMETIME").unwrap_err().to_string();
    assert!(e.contains("IMMEDIATE or BATCH"), "{e}");
}

/// Inserts `count` rows into `k` whose 150-byte index keys arrive in a scrambled order
/// (seven to a 2 KB leaf: nearly every few rows split a leaf, and the root splits too).
fn insert_scrambled(s: &Session, from: i64, count: i64) {
    exec(
        s,
        &format!(
            "INSERT INTO k SELECT {from} + LEVEL, RPAD('k' || MOD(({from} + LEVEL) * 7919, 100003), 150, 'k') \
             FROM dual CONNECT BY LEVEL <= {count}"
        ),
    );
}

/// Whether reading `k` through its index and by a full scan finds the same rows.
fn index_agrees(s: &Session) -> Result<(), String> {
    let by_index = common::rows(s, "SELECT /*+ INDEX(k k_ix) */ id FROM k WHERE pad >= 'a' ORDER BY pad");
    let by_scan = common::rows(s, "SELECT /*+ FULL(k) */ id FROM k ORDER BY pad");
    let ids = |rows: &[Vec<lioscope::types::Value>]| rows.iter().map(|r| r[0].to_string()).collect::<Vec<_>>();
    let (i, f) = (ids(&by_index), ids(&by_scan));
    if i != f {
        return Err(format!("the index finds {} rows, the table {}", i.len(), f.len()));
    }
    // A fast full scan reads every leaf below the high-water mark, linked or not.
    let fast = int(s, "SELECT /*+ INDEX_FFS(k k_ix) */ COUNT(*) FROM k WHERE pad IS NOT NULL");
    if fast != f.len() as i64 {
        return Err(format!("a fast full scan of the index counts {fast} rows, the table holds {}", f.len()));
    }
    Ok(())
}

#[test]
fn an_index_split_cut_at_any_redo_record_leaves_a_tree_later_splits_keep_whole() {
    let tmp = tempfile::tempdir().unwrap();
    let base = tmp.path().join("base");
    {
        let db = Database::create(&base, options(None)).unwrap();
        let s = db.session();
        exec(&s, "CREATE TABLE k (id INTEGER, pad VARCHAR2(200))");
        insert_scrambled(&s, 0, 20);
        exec(&s, "CREATE INDEX k_ix ON k (pad)");
        db.close().unwrap();
    }
    let io = FaultIo::new(FaultPlan::default());
    let db = Database::open(&base, options(Some(io.clone()))).unwrap();
    let (log, start) = redo_tail(&base);
    insert_scrambled(&db.session(), 20, 60);
    io.cut_power();
    drop(db);
    // Every record boundary of the splits' redo.
    let newest = lioscope::redo_log::newest_log(&base).unwrap();
    assert_eq!(newest.path, log, "the inserts stayed in one log");
    let ends: Vec<usize> = newest.record_ends.iter().map(|&e| e as usize).filter(|&e| e > start).collect();
    assert!(ends.len() > 20, "the inserts wrote {} records", ends.len());
    let (_, end) = redo_tail(&base);
    for &cut in &ends {
        let dir = tmp.path().join("cut");
        copy_dir(&base, &dir);
        let file = std::fs::OpenOptions::new().write(true).open(dir.join(log.file_name().unwrap())).unwrap();
        use std::os::unix::fs::FileExt;
        file.write_all_at(&vec![0u8; end - cut], cut as u64).unwrap();
        drop(file);
        let db = Database::open(&dir, options(None)).unwrap_or_else(|e| panic!("open with redo cut at {cut}: {e}"));
        let s = db.session();
        index_agrees(&s).unwrap_or_else(|e| panic!("redo cut at {cut}, after recovery: {e}"));
        // Splits after recovery take the blocks above the high-water mark again.
        insert_scrambled(&s, 1000, 60);
        index_agrees(&s).unwrap_or_else(|e| panic!("redo cut at {cut}, after more splits: {e}"));
        drop((s, db));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

#[test]
fn incremental_checkpoints_write_what_is_older_than_the_timeout_so_a_crash_after_a_pause_replays_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let mut opts = options(None);
    opts.parameters.retain(|(name, _)| name != "log_checkpoint_timeout" && name != "log_file_size");
    opts.parameters.push(("log_checkpoint_timeout".into(), "1".into()));
    {
        let db = Database::create(&dir, opts.clone()).unwrap();
        let s = db.session();
        exec(&s, "CREATE TABLE t (id INTEGER, pad VARCHAR2(100))");
        exec(&s, "INSERT INTO t SELECT LEVEL, RPAD('x', 100, 'x') FROM dual CONNECT BY LEVEL <= 300");
        drop(s);
        db.close().unwrap();
    }
    let io = FaultIo::new(FaultPlan::default());
    let db = Database::open(&dir, DatabaseOptions { io: Some(io.clone()), ..opts.clone() }).unwrap();
    let s = db.session();
    let full_checkpoints = common::sysstat(&s, "DBWR checkpoints");
    exec(&s, "UPDATE t SET pad = RPAD('y', 100, 'y')");
    assert!(int(&s, "SELECT recovery_estimated_ios FROM v$instance_recovery") > 0, "the update left dirty buffers");
    assert!(int(&s, "SELECT actual_redo_blks FROM v$instance_recovery") > 0, "and redo since the checkpoint");
    // The database writer wakes every second and writes what changed more than a second
    // before: within a few seconds of the last change, nothing is left to write.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while int(&s, "SELECT recovery_estimated_ios + actual_redo_blks FROM v$instance_recovery") > 0 {
        assert!(std::time::Instant::now() < deadline, "incremental checkpoints caught up with the log");
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    assert!(int(&s, "SELECT ckpt_block_writes FROM v$instance_recovery") > 0);
    assert_eq!(common::sysstat(&s, "DBWR checkpoints"), full_checkpoints, "no full checkpoint was needed");
    io.cut_power();
    drop((s, db));
    let db = Database::open(&dir, opts).unwrap();
    let report = db.recovery();
    assert_eq!(report.redo_records, 0, "the checkpoint position was the end of the log: {report:?}");
    let s = db.session();
    assert_eq!(int(&s, "SELECT COUNT(*) FROM t WHERE pad LIKE 'y%'"), 300, "the committed update is there");
}
