//! Durability when writes and syncs fail, with several sessions at work: a redo write
//! that fails fails every later commit of every session; a failed datafile sync kills the
//! instance, which comes back by crash recovery from the last good checkpoint; a full
//! disk under the redo log or a datafile fails the statement or commit and damages
//! nothing; DDL acknowledged survives a power cut. Every case reopens the database and
//! checks that every acknowledged commit is there and nothing unacknowledged is.

mod common;

use common::bank::{ACCOUNTS, BALANCE, check_bank, copy_dir, options, transfer};
use common::{create_accounts, exec, int, manual};
use lioscope::Database;
use lioscope::io::{FaultIo, FaultPlan};
use std::path::Path;
use std::sync::Arc;
use std::sync::mpsc;

/// Creates the accounts (indexed), the ledger of transfers and an empty history table in
/// `dir`.
fn create_bank(dir: &Path) {
    let db = Database::create(dir, options(None)).unwrap();
    let s = db.session();
    create_accounts(&s, ACCOUNTS as u64, BALANCE, 100);
    exec(&s, "CREATE TABLE hist (id INTEGER, pad VARCHAR2(100))");
    drop(s);
    db.close().unwrap();
}

/// A new bank in `parent`/db, open through a fault-injecting I/O layer that injects
/// nothing until told to.
fn bank_behind_faults(parent: &Path) -> (std::path::PathBuf, Arc<FaultIo>, Database) {
    let dir = parent.join("db");
    create_bank(&dir);
    let io = FaultIo::new(FaultPlan::default());
    let db = Database::open(&dir, options(Some(io.clone()))).unwrap();
    (dir, io, db)
}

/// Reopens `dir` (no faults) and checks: the total unchanged, every acknowledged
/// transfer present and no other, no transaction left active, the index agrees with the
/// table. Returns the database.
fn check_reopened(dir: &Path, acknowledged: &[i64]) -> Database {
    let db = Database::open(dir, options(None)).unwrap_or_else(|e| panic!("reopen: {e}"));
    let s = db.session();
    let ledger = check_bank(&s, acknowledged);
    let mut expected = acknowledged.to_vec();
    expected.sort_unstable();
    assert_eq!(ledger, expected, "the acknowledged transfers, and no others, are in the ledger");
    drop(s);
    db
}

/// A session on a thread of its own, running the statements it is sent one at a time
/// and answering each with its outcome (the error's text when it failed).
struct SessionThread {
    orders: mpsc::Sender<String>,
    answers: mpsc::Receiver<Result<(), String>>,
    thread: std::thread::JoinHandle<()>,
}

impl SessionThread {
    fn start(db: &Database) -> SessionThread {
        let (orders, inbox) = mpsc::channel::<String>();
        let (outbox, answers) = mpsc::channel();
        let db = db.clone();
        let thread = std::thread::spawn(move || {
            let s = db.session();
            manual(&s);
            for sql in inbox {
                let _ = outbox.send(s.execute(&sql).map(drop).map_err(|e| e.to_string()));
            }
        });
        SessionThread { orders, answers, thread }
    }

    fn run(&self, sql: &str) -> Result<(), String> {
        self.orders.send(sql.to_owned()).unwrap();
        self.answers.recv().unwrap()
    }

    fn stop(self) {
        drop(self.orders);
        self.thread.join().unwrap();
    }
}

#[test]
fn a_failed_redo_write_fails_every_later_commit_of_every_session() {
    let tmp = tempfile::tempdir().unwrap();
    let (dir, io, db) = bank_behind_faults(tmp.path());
    // B changes rows before the failure and commits after it; C starts after it. A's
    // transfers (10 to 21) touch neither B's accounts nor C's.
    let b = SessionThread::start(&db);
    b.run("UPDATE acct SET bal = bal - 5 WHERE id = 49").unwrap();
    b.run("UPDATE acct SET bal = bal + 5 WHERE id = 50").unwrap();
    b.run("INSERT INTO ledger VALUES (1001)").unwrap();
    let a = db.session();
    manual(&a);
    let acknowledged: Vec<i64> = (10..20).inspect(|&n| transfer(&a, n).unwrap()).collect();
    io.fail_writes_to("redo", libc::EIO);
    let e = transfer(&a, 20).expect_err("A's commit cannot be durable").to_string();
    assert!(e.contains("redo log") && e.contains("Input/output error"), "A's error names the redo log: {e}");
    exec(&a, "ROLLBACK");
    let e = b.run("COMMIT").expect_err("B's commit after the log failed is not acknowledged");
    assert!(e.contains("redo log"), "B's error names the redo log: {e}");
    let c = SessionThread::start(&db);
    let e = c.run("UPDATE acct SET bal = bal - 7 WHERE id = 48").expect_err("no change after the failure");
    assert!(e.contains("must be restarted") && e.contains("redo log"), "C's error says why: {e}");
    let e = c.run("COMMIT").expect_err("no commit after the failure");
    assert!(e.contains("redo log"), "{e}");
    let e = transfer(&a, 21).expect_err("A's next transfer fails too").to_string();
    assert!(e.contains("must be restarted"), "{e}");
    let e = a.execute("CREATE TABLE t (x INTEGER)").expect_err("DDL fails too").to_string();
    assert!(e.contains("redo log"), "{e}");
    b.run("ROLLBACK").unwrap();
    b.stop();
    c.stop();
    drop(a);
    drop(db);
    let db = check_reopened(&dir, &acknowledged);
    assert!(db.recovery().needed, "closing a failed instance wrote no checkpoint");
}

#[test]
fn a_failed_datafile_sync_kills_the_instance_and_reopening_recovers_every_acknowledged_commit() {
    const SESSIONS: i64 = 3;
    let tmp = tempfile::tempdir().unwrap();
    let (dir, io, db) = bank_behind_faults(tmp.path());
    let start = Arc::new(std::sync::Barrier::new(SESSIONS as usize + 1));
    let workers: Vec<_> = (0..SESSIONS)
        .map(|t| {
            let (db, start) = (db.clone(), start.clone());
            std::thread::spawn(move || {
                let s = db.session();
                manual(&s);
                start.wait();
                let mut acknowledged = Vec::new();
                // Until the instance dies: row lock conflicts between the sessions
                // (deadlocks) fail a transfer, which is rolled back and not counted.
                for n in (t * 1000 + 1)..(t * 1000 + 400) {
                    match transfer(&s, n) {
                        Ok(()) => acknowledged.push(n),
                        Err(e) if e.to_string().contains("must be restarted") => break,
                        Err(_) => {
                            let _ = s.execute("ROLLBACK");
                        }
                    }
                }
                let _ = s.execute("ROLLBACK");
                acknowledged
            })
        })
        .collect();
    let s = db.session();
    start.wait();
    // Rows no one changes again: a checkpoint that trusted a retried sync after their
    // writes were dropped would leave them lost at the next open.
    exec(&s, "INSERT INTO hist SELECT LEVEL, RPAD('h', 100, 'h') FROM dual CONNECT BY LEVEL <= 300");
    while int(&s, "SELECT COUNT(*) FROM ledger") < 60 {
        std::thread::yield_now();
    }
    io.fail_next_sync_of("users01", libc::EIO);
    let e = s.execute("ALTER SYSTEM CHECKPOINT").expect_err("the checkpoint's sync fails").to_string();
    assert!(e.contains("Input/output error"), "{e}");
    // The retried sync succeeds (the kernel forgot the dropped writes): it must not be
    // trusted, and the instance stays dead.
    let e = s.execute("ALTER SYSTEM CHECKPOINT").expect_err("no checkpoint after a failed sync").to_string();
    assert!(e.contains("must be restarted") && e.contains("datafile sync failed"), "{e}");
    let e = s.execute("SELECT COUNT(*) FROM acct").expect_err("the instance is dead").to_string();
    assert!(e.contains("must be restarted"), "{e}");
    let acknowledged: Vec<i64> = workers.into_iter().flat_map(|w| w.join().unwrap()).collect();
    assert!(acknowledged.len() >= 60, "{} transfers acknowledged", acknowledged.len());
    drop(s);
    drop(db);
    let db = check_reopened(&dir, &acknowledged);
    assert!(db.recovery().needed, "closing a dead instance wrote no checkpoint");
    let s = db.session();
    assert_eq!(int(&s, "SELECT COUNT(*) FROM hist"), 300, "the rows written before the failed sync are back");
    exec(&s, "UPDATE acct SET bal = bal + 1");
    assert_eq!(int(&s, "SELECT SUM(bal) FROM acct"), ACCOUNTS * (BALANCE + 1), "every row can be updated");
}

#[test]
fn a_full_disk_under_the_redo_log_fails_the_commit_and_loses_nothing_acknowledged() {
    let tmp = tempfile::tempdir().unwrap();
    let (dir, io, db) = bank_behind_faults(tmp.path());
    let s = db.session();
    manual(&s);
    let acknowledged: Vec<i64> = (1..=15).inspect(|&n| transfer(&s, n).unwrap()).collect();
    io.fail_writes_to("redo", libc::ENOSPC);
    let e = transfer(&s, 16).expect_err("the commit cannot be durable").to_string();
    assert!(e.contains("redo log") && e.contains("No space left"), "{e}");
    drop(s);
    drop(db);
    drop(check_reopened(&dir, &acknowledged));
}

#[test]
fn the_online_logs_have_their_disk_space_when_they_are_created() {
    use std::os::unix::fs::MetadataExt;
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    Database::create(&dir, options(None)).unwrap().close().unwrap();
    for group in 1..=3 {
        let meta = std::fs::metadata(dir.join(format!("redo0{group}.log"))).unwrap();
        assert!(meta.blocks() * 512 >= meta.len(), "redo0{group}.log is not sparse: {} blocks", meta.blocks());
    }
}

#[test]
fn a_full_disk_under_a_datafile_fails_the_statement_and_damages_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let (dir, io, db) = bank_behind_faults(tmp.path());
    let s = db.session();
    manual(&s);
    let mut acknowledged: Vec<i64> = (1..=10).inspect(|&n| transfer(&s, n).unwrap()).collect();
    io.fail_writes_to("users01", libc::ENOSPC);
    // The ledger grows past its extents: the file must grow, and the disk is full.
    let e = s
        .execute("INSERT INTO ledger SELECT 100000 + LEVEL FROM dual CONNECT BY LEVEL <= 200000")
        .expect_err("no room for the rows")
        .to_string();
    assert!(e.contains("No space left") && e.contains("users01"), "{e}");
    exec(&s, "ROLLBACK");
    // Small transfers still fit in the blocks the tables have.
    for n in 11..=15 {
        if transfer(&s, n).is_ok() {
            acknowledged.push(n);
        } else {
            let _ = s.execute("ROLLBACK");
        }
    }
    drop(s);
    drop(db);
    drop(check_reopened(&dir, &acknowledged));
}

/// A table of 1,000 rows without indexes, committed and checkpointed.
fn create_thousand(dir: &Path) {
    let db = Database::create(dir, options(None)).unwrap();
    let s = db.session();
    exec(&s, "CREATE TABLE t (id INTEGER, pad VARCHAR2(100))");
    exec(&s, "INSERT INTO t SELECT LEVEL, RPAD('t', 100, 't') FROM dual CONNECT BY LEVEL <= 1000");
    drop(s);
    db.close().unwrap();
}

/// Runs `ddl` on the database in a copy of `base`, cuts the power as soon as it returns,
/// loses the unsynced writes by `seed`, and reopens the copy.
fn ddl_then_power_cut(base: &Path, dir: &Path, ddl: &str, seed: u64) -> Database {
    copy_dir(base, dir);
    let io = FaultIo::new(FaultPlan::default());
    let db = Database::open(dir, options(Some(io.clone()))).unwrap();
    exec(&db.session(), ddl);
    io.cut_power();
    drop(db);
    io.power_loss(seed).unwrap();
    Database::open(dir, options(None)).unwrap_or_else(|e| panic!("reopen after {ddl}: {e}"))
}

#[test]
fn acknowledged_ddl_survives_a_power_cut() {
    let tmp = tempfile::tempdir().unwrap();
    let base = tmp.path().join("base");
    create_thousand(&base);
    for seed in 0..3 {
        let db = ddl_then_power_cut(&base, &tmp.path().join(format!("truncate{seed}")), "TRUNCATE TABLE t", seed);
        assert_eq!(int(&db.session(), "SELECT COUNT(*) FROM t"), 0, "seed {seed}: the truncate stays");
        drop(db);
        let db = ddl_then_power_cut(&base, &tmp.path().join(format!("drop{seed}")), "DROP TABLE t", seed);
        let e = db.session().execute("SELECT COUNT(*) FROM t").expect_err("the table stays dropped").to_string();
        assert!(e.contains("T") || e.contains("t"), "seed {seed}: {e}");
        drop(db);
        let db =
            ddl_then_power_cut(&base, &tmp.path().join(format!("index{seed}")), "CREATE INDEX t_id ON t (id)", seed);
        let s = db.session();
        let by_index = int(&s, "SELECT /*+ INDEX(t t_id) */ COUNT(*) FROM t WHERE id BETWEEN 1 AND 5000");
        assert_eq!(by_index, 1000, "seed {seed}: the index is there and whole");
        assert_eq!(int(&s, "SELECT COUNT(*) FROM user_indexes WHERE index_name = 'T_ID'"), 1, "seed {seed}");
    }
}
