//! Recovery under faults: a crash at every write and every sync of an open that recovers
//! a crashed database (then another open, which must finish the job), and damage in the
//! online logs (a flipped byte in each sequence recovery needs, a torn header). Each case
//! ends in a complete recovery, checked against what was acknowledged, or in a clear error
//! naming the damaged file; never in silent loss.

mod common;

use common::bank::{ACCOUNTS, BALANCE, copy_dir, create_bank, transfer};
use common::{exec, int, manual};
use lioscope::io::{Fault, FaultIo, FaultPlan, Io};
use lioscope::{Database, DatabaseOptions};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Rows of the table filled after the last checkpoint.
const LATE_ROWS: i64 = 600;

/// The bank's small database, with 32-block extents (so that the rows filled after the
/// checkpoint take extents of their own).
fn options(io: Option<Arc<dyn Io>>) -> DatabaseOptions {
    DatabaseOptions { extent_size: 32 * 2048, ..common::bank::options(io) }
}

/// Makes a crashed database in `dir`: accounts and a ledger, transfers, a checkpoint and
/// none after it (the datafile's writes fail from then on: the cache holds every block),
/// two log switches (so that recovery needs every group), a table `late` filled after
/// the checkpoint (extents the control file's space map does not know), a big
/// uncommitted update, then the power cut with the unsynced writes dropped or torn.
/// Returns the acknowledged transfers.
fn crashed_bank(dir: &Path, seed: u64) -> Vec<i64> {
    create_bank(dir, options(None));
    let io = FaultIo::new(FaultPlan::default());
    let db = Database::open(dir, options(Some(io.clone()))).unwrap();
    let s = db.session();
    manual(&s);
    let other = db.session();
    manual(&other);
    let mut acknowledged = Vec::new();
    for n in 1..=40 {
        transfer(&s, n).unwrap();
        acknowledged.push(n);
        match n {
            10 => {
                // Room in the datafile for the late rows, so that their extents need no
                // write to it.
                exec(&s, "CREATE TABLE late (id INTEGER, pad VARCHAR2(150))");
                exec(&s, "CREATE TABLE spare (id INTEGER, pad VARCHAR2(150))");
                exec(&s, "INSERT INTO spare SELECT LEVEL, RPAD('s', 150, 's') FROM dual CONNECT BY LEVEL <= 1500");
                exec(&s, "DROP TABLE spare");
                let done = exec(&s, "ALTER SYSTEM CHECKPOINT");
                // No checkpoint gets further: every log group is needed at the crash.
                io.fail_writes_to("users01", libc::EIO);
                done
            }
            15 | 30 => exec(&s, "ALTER SYSTEM SWITCH LOGFILE"),
            20 => {
                exec(
                    &s,
                    &format!(
                        "INSERT INTO late SELECT LEVEL, RPAD('l', 150, 'l') FROM dual CONNECT BY LEVEL <= {LATE_ROWS}"
                    ),
                );
                exec(&s, "COMMIT")
            }
            25 => exec(&other, "UPDATE hist SET v = v + 1000"),
            _ => continue,
        };
    }
    io.cut_power();
    drop((other, s, db));
    io.power_loss(seed).unwrap();
    acknowledged
}

/// Opens `dir` and checks every invariant, then fills a new table (whose extents must be
/// none that the crashed tables hold) and checks the old rows again.
fn check_recovered(dir: &Path, acknowledged: &[i64]) {
    let db = Database::open(dir, options(None)).unwrap_or_else(|e| panic!("reopen after a crash: {e}"));
    let s = db.session();
    let check = |when: &str| {
        assert_eq!(int(&s, "SELECT SUM(bal) FROM acct"), ACCOUNTS * BALANCE, "the total is unchanged ({when})");
        assert_eq!(int(&s, "SELECT SUM(v) FROM hist"), 300, "no uncommitted update survives ({when})");
        assert_eq!(int(&s, "SELECT COUNT(*) FROM v$transaction"), 0, "no transaction is left active ({when})");
        let ledger: Vec<i64> = common::rows(&s, "SELECT id FROM ledger ORDER BY id")
            .iter()
            .map(|r| r[0].to_string().parse().unwrap())
            .collect();
        assert_eq!(ledger, acknowledged, "exactly the acknowledged transfers ({when})");
        let late = int(&s, "SELECT COUNT(*) FROM late WHERE pad = RPAD('l', 150, 'l')");
        assert_eq!(late, LATE_ROWS, "the table filled after the checkpoint is whole ({when})");
        let by_index = int(&s, "SELECT /*+ INDEX(acct acct_id) */ COUNT(*) FROM acct WHERE id BETWEEN 1 AND 1000");
        assert_eq!(by_index, ACCOUNTS, "the index agrees with the table ({when})");
    };
    check("after the reopen");
    exec(&s, "CREATE TABLE fresh (id INTEGER, pad VARCHAR2(150))");
    exec(&s, "INSERT INTO fresh SELECT LEVEL, RPAD('f', 150, 'f') FROM dual CONNECT BY LEVEL <= 3000");
    check("after a new table took extents");
}

/// A crash at the `at`th operation of one kind (`plan` makes the plan for it) of an
/// open that recovers a copy of `base`; then the next open must recover everything.
/// Returns whether that open finished without meeting the fault.
fn crash_during_open(base: &Path, dir: &Path, acknowledged: &[i64], at: u64, plan: FaultPlan) -> bool {
    copy_dir(base, dir);
    let io = FaultIo::new(plan);
    let opened = Database::open(dir, options(Some(io.clone())));
    let finished = opened.is_ok() && !io.is_off();
    io.cut_power();
    drop(opened);
    io.power_loss(at).unwrap();
    check_recovered(dir, acknowledged);
    std::fs::remove_dir_all(dir).unwrap();
    finished
}

#[test]
fn a_crash_at_any_sync_of_a_recovering_open_leaves_a_database_the_next_open_recovers() {
    let tmp = tempfile::tempdir().unwrap();
    let base = tmp.path().join("base");
    let acknowledged = crashed_bank(&base, 3);
    for at in 1.. {
        eprintln!("power loss at sync {at} of the open");
        let plan = FaultPlan { at_sync: Some((at, Fault::PowerLoss)), at_write: None };
        if crash_during_open(&base, &tmp.path().join(format!("s{at}")), &acknowledged, at, plan) {
            assert!(at > 3, "a recovering open syncs the datafiles, the control file and the log ({at} syncs)");
            break;
        }
    }
}

#[test]
fn a_crash_at_any_write_of_a_recovering_open_leaves_a_database_the_next_open_recovers() {
    let tmp = tempfile::tempdir().unwrap();
    let base = tmp.path().join("base");
    let acknowledged = crashed_bank(&base, 5);
    for at in 1.. {
        let plan = FaultPlan { at_write: Some((at, Fault::PowerLoss)), at_sync: None };
        if crash_during_open(&base, &tmp.path().join(format!("w{at}")), &acknowledged, at, plan) {
            eprintln!("a recovering open made {} writes; a crash at each was recovered", at - 1);
            assert!(at > 10, "the open wrote the blocks recovery changed");
            break;
        }
    }
}

/// Where recovery of a crashed database must start: the control file's checkpoint.
fn checkpoint_of(dir: &Path) -> (u32, u64) {
    let control: serde_json::Value = serde_json::from_slice(&std::fs::read(dir.join("control.json")).unwrap()).unwrap();
    let lsn = control["checkpoint_lsn"].as_u64().unwrap();
    ((lsn >> 32) as u32, lsn & 0xFFFF_FFFF)
}

/// Flips one bit of byte `at` of `path`.
fn flip(path: &Path, at: u64) {
    let mut bytes = std::fs::read(path).unwrap();
    bytes[at as usize] ^= 0x10;
    std::fs::write(path, bytes).unwrap();
}

/// A byte inside a record of `log` that recovery from (`cp_seq`, `cp_offset`) applies:
/// in the middle of the records it needs.
fn needed_byte(log: &lioscope::redo_log::OnlineLog, (cp_seq, cp_offset): (u32, u64)) -> u64 {
    let needed: Vec<u64> = log.record_ends.iter().copied().filter(|&e| log.seq > cp_seq || e > cp_offset).collect();
    assert!(needed.len() >= 2, "sequence {} holds needed records: {needed:?}", log.seq);
    needed[needed.len() / 2 - 1] + 30
}

#[test]
fn a_damaged_record_in_a_needed_sequence_is_an_error_naming_it_or_said_in_the_newest() {
    let tmp = tempfile::tempdir().unwrap();
    let base = tmp.path().join("base");
    let acknowledged = crashed_bank(&base, 7);
    let checkpoint = checkpoint_of(&base);
    let logs = lioscope::redo_log::online_logs(&base).unwrap();
    let newest = logs.last().unwrap().seq;
    assert!(checkpoint.0 < newest, "recovery needs more than one sequence: checkpoint {checkpoint:?}, newest {newest}");
    for log in logs.iter().filter(|l| l.seq >= checkpoint.0) {
        let dir = tmp.path().join(format!("seq{}", log.seq));
        copy_dir(&base, &dir);
        let file = dir.join(log.path.file_name().unwrap());
        flip(&file, needed_byte(log, checkpoint));
        match Database::open(&dir, options(None)) {
            Err(e) => {
                let e = e.to_string();
                assert!(log.seq < newest, "the newest sequence's damage is said, not refused: {e}");
                let name = file.file_name().unwrap().to_str().unwrap();
                assert!(
                    e.contains(&format!("log sequence {} has no valid record at byte", log.seq)) && e.contains(name),
                    "{e}"
                );
                let again = Database::open(&dir, options(None)).map(|_| ()).unwrap_err().to_string();
                assert_eq!(again, e, "a refused open changes nothing");
            }
            Ok(db) => {
                assert_eq!(log.seq, newest, "damage in an older needed sequence must refuse the open");
                let report = db.recovery();
                let damage = report.damage.clone().expect("the damage is reported");
                assert_eq!(damage.seq, newest);
                assert!(report.summary().unwrap().contains("Warning:"), "{:?}", report.summary());
                let s = db.session();
                assert_eq!(int(&s, "SELECT SUM(bal) FROM acct"), ACCOUNTS * BALANCE, "whole transactions only");
            }
        }
    }
    check_recovered(&base, &acknowledged);
}

/// The file of the log holding `seq`.
fn log_file(logs: &[lioscope::redo_log::OnlineLog], dir: &Path, seq: u32) -> Option<PathBuf> {
    logs.iter().find(|l| l.seq == seq).map(|l| dir.join(l.path.file_name().unwrap()))
}

#[test]
fn a_torn_log_header_is_an_error_naming_the_file_where_its_redo_is_needed_and_harmless_where_not() {
    let tmp = tempfile::tempdir().unwrap();
    let base = tmp.path().join("base");
    let acknowledged = crashed_bank(&base, 9);
    let checkpoint = checkpoint_of(&base);
    let logs = lioscope::redo_log::online_logs(&base).unwrap();
    let needed = log_file(&logs, &base, checkpoint.0).expect("the checkpoint's sequence is online");
    let dir = tmp.path().join("needed");
    copy_dir(&base, &dir);
    let torn = dir.join(needed.file_name().unwrap());
    flip(&torn, 29);
    let e = Database::open(&dir, options(None)).map(|_| ()).unwrap_err().to_string();
    let name = torn.file_name().unwrap().to_str().unwrap();
    assert!(e.contains(&format!("log sequence {}", checkpoint.0)) && e.contains(name) && e.contains("checksum"), "{e}");
    if let Some(unneeded) = logs.iter().find(|l| l.seq < checkpoint.0) {
        let dir = tmp.path().join("unneeded");
        copy_dir(&base, &dir);
        flip(&dir.join(unneeded.path.file_name().unwrap()), 29);
        check_recovered(&dir, &acknowledged);
    }
    check_recovered(&base, &acknowledged);
}

#[test]
fn log_groups_added_while_checkpoints_cannot_finish_are_found_by_recovery() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let mut opts = options(None);
    opts.parameters.retain(|(name, _)| name != "db_cache_size");
    opts.parameters.push(("db_cache_size".into(), "4M".into()));
    create_bank(&dir, opts.clone());
    // A file of a group number the circle will add next, left by a creation a crash
    // interrupted: reused, never a reason not to open.
    std::fs::write(dir.join("redo05.log"), b"half made").unwrap();
    let io = FaultIo::new(FaultPlan::default());
    let db = Database::open(&dir, DatabaseOptions { io: Some(io.clone()), ..opts.clone() }).unwrap();
    let s = db.session();
    manual(&s);
    // No checkpoint can write a block from now on, so the log circle must grow.
    io.fail_writes_to("users01", libc::EIO);
    let mut acknowledged = Vec::new();
    for n in 1..=400 {
        exec(&s, "UPDATE hist SET v = v + 1");
        exec(&s, "UPDATE hist SET v = v - 1");
        transfer(&s, n).unwrap();
        acknowledged.push(n);
        if common::sysstat(&s, "redo log groups added") >= 2 && n % 10 == 0 {
            break;
        }
    }
    assert!(common::sysstat(&s, "redo log groups added") >= 2, "the circle grew");
    io.cut_power();
    drop((s, db));
    io.power_loss(11).unwrap();
    let db = Database::open(&dir, opts.clone()).unwrap_or_else(|e| panic!("reopen: {e}"));
    let s = db.session();
    let ledger: Vec<i64> = common::rows(&s, "SELECT id FROM ledger ORDER BY id")
        .iter()
        .map(|r| r[0].to_string().parse().unwrap())
        .collect();
    assert_eq!(ledger, acknowledged, "every acknowledged transfer, including those in the added groups");
    assert_eq!(int(&s, "SELECT SUM(bal) FROM acct"), ACCOUNTS * BALANCE);
    assert_eq!(int(&s, "SELECT SUM(v) FROM hist"), 300);
    assert!(int(&s, "SELECT COUNT(*) FROM v$log") >= 5, "the added groups are in the circle");
    drop(s);
    db.close().unwrap();
    drop(db);
    let control: serde_json::Value = serde_json::from_slice(&std::fs::read(dir.join("control.json")).unwrap()).unwrap();
    assert!(control["log_groups"].as_array().unwrap().len() >= 5, "and in the control file: {}", control["log_groups"]);
}

#[test]
fn a_load_on_small_logs_waits_for_its_checkpoints_instead_of_growing_the_circle() {
    let tmp = tempfile::tempdir().unwrap();
    let mut opts = options(None);
    opts.parameters.retain(|(name, _)| name != "db_cache_size");
    opts.parameters.push(("db_cache_size".into(), "32M".into()));
    let db = Database::create(tmp.path().join("db"), opts).unwrap();
    let s = db.session();
    exec(&s, "CREATE TABLE t (id INTEGER, pad VARCHAR2(100))");
    exec(&s, "INSERT INTO t SELECT LEVEL, RPAD('x', 100, 'x') FROM dual CONNECT BY LEVEL <= 100000");
    let (switches, added) = (common::sysstat(&s, "redo log switches"), common::sysstat(&s, "redo log groups added"));
    eprintln!(
        "{switches} log switches, {added} groups added, {} checkpoints not complete, {} background checkpoints",
        common::sysstat(&s, "checkpoint not complete"),
        common::sysstat(&s, "background checkpoints completed")
    );
    assert!(switches >= 10, "the load went round the circle of 1 MB logs ({switches} switches)");
    // A group is added only when a checkpoint cannot free one in two seconds; a
    // session waiting for a switch while it holds a block the checkpoint must write can
    // still cause that, rarely.
    assert!(added <= 1, "checkpoints kept up: {added} groups added");
    assert!(common::sysstat(&s, "background checkpoints completed") >= switches / 2);
    assert_eq!(int(&s, "SELECT COUNT(*) FROM t"), 100000);
}
