//! The kill -9 loop: a child `lioscope shell` runs transfers between accounts (with an
//! index), bulk inserts of tagged batches, big uncommitted updates, checkpoints and log
//! switches, on a database with 1 MB logs, so that the log circle switches and grows
//! under load; the parent kills it at a random moment, sometimes kills the next open too
//! (during its recovery), then reopens the database and checks after every crash that the
//! total is unchanged, every acknowledged transfer and batch is present, each batch is
//! whole, no transaction is left active, the index agrees with the table, and every row
//! can be updated.
//!
//! `cargo test --release --test crash_loop` runs a few rounds; the long run is
//! `LIOSCOPE_CRASH_ROUNDS=1000 cargo test --release --test crash_loop -- --nocapture`.

mod common;

use common::{create_accounts, exec, int};
use lioscope::{Database, DatabaseOptions};
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;

const ACCOUNTS: i64 = 100;
const BALANCE: i64 = 1000;

fn options() -> DatabaseOptions {
    DatabaseOptions {
        parameters: vec![
            ("db_cache_size".into(), "4M".into()),
            ("log_file_size".into(), "1M".into()),
            ("log_checkpoint_timeout".into(), "1".into()),
        ],
        ..DatabaseOptions::default()
    }
}

/// Rows of each bulk-inserted batch.
const BATCH_ROWS: i64 = 1500;

/// A unit of work the child commits: a transfer or a batch, by number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Unit {
    Transfer(i64),
    Batch(i64),
}

/// The statements of transfer `n`.
fn transfer(n: i64) -> String {
    let from = n % ACCOUNTS + 1;
    let to = (n * 7 + 3) % ACCOUNTS + 1;
    format!(
        "UPDATE acct SET bal = bal - 1 WHERE id = {from};\nUPDATE acct SET bal = bal + 1 WHERE id = {to};\nINSERT INTO ledger VALUES ({n});\nCOMMIT;\n"
    )
}

/// The statements of batch `b`: `BATCH_ROWS` rows tagged with it, in one commit.
fn batch(b: i64) -> String {
    format!(
        "INSERT INTO bulk SELECT {b}, LEVEL, RPAD('b', 60, 'b') FROM dual CONNECT BY LEVEL <= {BATCH_ROWS};\nCOMMIT;\n"
    )
}

/// Where the work stands: the newest transfer and batch committed.
#[derive(Debug, Clone, Copy, Default)]
struct Progress {
    transfer: i64,
    batch: i64,
}

/// A small deterministic generator.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

/// Starts `lioscope shell` on `dir`, its output piped.
fn shell(dir: &Path) -> std::process::Child {
    Command::new(env!("CARGO_BIN_EXE_lioscope"))
        .args(["shell", dir.to_str().unwrap()])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start lioscope shell")
}

/// One round: transfers and batches after `done` in a child shell, killed after
/// `kill_after`; returns what was acknowledged.
fn round(dir: &Path, done: Progress, kill_after: Duration, rng: &mut Rng) -> Progress {
    let mut child = shell(dir);
    let commits = Arc::new(AtomicI64::new(0));
    let stdout = child.stdout.take().unwrap();
    let seen = commits.clone();
    let reader = std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if line.contains("Commit complete.") {
                seen.fetch_add(1, Ordering::SeqCst);
            }
        }
    });
    let mut stdin = child.stdin.take().unwrap();
    let mut script = String::from("SET AUTOCOMMIT OFF\n");
    let mut units = Vec::new();
    let mut next = Progress { transfer: done.transfer + 1, batch: done.batch + 1 };
    for _ in 0..5000 {
        if rng.below(12) == 0 {
            script.push_str(&batch(next.batch));
            units.push(Unit::Batch(next.batch));
            next.batch += 1;
        } else {
            script.push_str(&transfer(next.transfer));
            units.push(Unit::Transfer(next.transfer));
            next.transfer += 1;
        }
        match rng.below(40) {
            0 => script
                .push_str("UPDATE acct SET bal = bal + 1000 WHERE id > 30;\nALTER SYSTEM CHECKPOINT;\nROLLBACK;\n"),
            1 => script.push_str("ALTER SYSTEM CHECKPOINT;\n"),
            2 => script.push_str("UPDATE acct SET bal = bal + 7;\nSELECT COUNT(*) FROM acct;\nROLLBACK;\n"),
            3 => script.push_str("ALTER SYSTEM SWITCH LOGFILE;\n"),
            _ => {}
        }
    }
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(script.as_bytes());
    });
    std::thread::sleep(kill_after);
    child.kill().expect("kill -9 the shell");
    child.wait().unwrap();
    let _ = writer.join();
    let _ = reader.join();
    let acknowledged = commits.load(Ordering::SeqCst) as usize;
    let mut progress = done;
    for unit in &units[..acknowledged] {
        match *unit {
            Unit::Transfer(n) => progress.transfer = n,
            Unit::Batch(b) => progress.batch = b,
        }
    }
    progress
}

/// Opens the database in a child shell and kills it after `kill_after`: often during
/// the recovery of the crash before.
fn kill_an_open(dir: &Path, kill_after: Duration) {
    let mut child = shell(dir);
    let mut stdin = child.stdin.take().unwrap();
    let _ = stdin.write_all(b"SELECT COUNT(*) FROM acct;\n");
    std::thread::sleep(kill_after);
    let _ = child.kill();
    child.wait().unwrap();
}

/// Checks every invariant after a crash; everything up to `acknowledged` must be there.
/// Returns what is committed, and keeps the batch table small (batches checked whole are
/// deleted, all but the last few).
fn check(dir: &Path, acknowledged: Progress) -> Progress {
    let db = Database::open(dir, options()).unwrap_or_else(|e| panic!("reopen after kill -9: {e}"));
    let s = db.session();
    assert_eq!(int(&s, "SELECT SUM(bal) FROM acct"), ACCOUNTS * BALANCE, "the total is unchanged");
    assert_eq!(int(&s, "SELECT COUNT(*) FROM v$transaction"), 0, "no transaction is left active");
    let (count, max) = (int(&s, "SELECT COUNT(*) FROM ledger"), int(&s, "SELECT NVL(MAX(id), 0) FROM ledger"));
    assert!(max >= acknowledged.transfer, "acknowledged transfer {} is present (newest {max})", acknowledged.transfer);
    assert_eq!(count, max, "the ledger holds each transfer once, with no gap");
    let batches = common::rows(&s, "SELECT batch, COUNT(*) FROM bulk GROUP BY batch ORDER BY batch");
    for (i, row) in batches.iter().enumerate() {
        let (b, rows): (i64, i64) = (row[0].to_string().parse().unwrap(), row[1].to_string().parse().unwrap());
        assert_eq!(rows, BATCH_ROWS, "batch {b} is whole (batches: {batches:?})");
        let first: i64 = batches[0][0].to_string().parse().unwrap();
        assert_eq!(b, first + i as i64, "the batches kept follow each other with no gap: {batches:?}");
    }
    let newest_batch = int(&s, "SELECT NVL(MAX(batch), 0) FROM bulk");
    assert!(
        newest_batch >= acknowledged.batch,
        "acknowledged batch {} is present (newest {newest_batch})",
        acknowledged.batch
    );
    let by_index = int(&s, "SELECT /*+ INDEX(acct acct_id) */ COUNT(*) FROM acct WHERE id BETWEEN 1 AND 100000");
    let by_scan = int(&s, "SELECT /*+ FULL(acct) */ COUNT(*) FROM acct WHERE id BETWEEN 1 AND 100000");
    assert_eq!((by_index, by_scan), (ACCOUNTS, ACCOUNTS), "the index agrees with the table");
    exec(&s, "UPDATE acct SET bal = bal + 1");
    assert_eq!(int(&s, "SELECT SUM(bal) FROM acct"), ACCOUNTS * (BALANCE + 1), "every row can be updated");
    exec(&s, "UPDATE acct SET bal = bal - 1");
    exec(&s, &format!("DELETE FROM bulk WHERE batch < {}", newest_batch - 3));
    Progress { transfer: max, batch: newest_batch }
}

#[test]
fn kill_minus_nine_at_random_moments_loses_nothing_acknowledged() {
    let rounds: u64 = std::env::var("LIOSCOPE_CRASH_ROUNDS").ok().and_then(|v| v.parse().ok()).unwrap_or(6);
    let seed: u64 = std::env::var("LIOSCOPE_CRASH_SEED").ok().and_then(|v| v.parse().ok()).unwrap_or(0x5eed);
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("bank");
    eprintln!("database in {} (kept if LIOSCOPE_CRASH_KEEP is set)", dir.display());
    let _tmp = if std::env::var_os("LIOSCOPE_CRASH_KEEP").is_some() { Err(tmp.keep()) } else { Ok(tmp) };
    {
        let db = Database::create(&dir, options()).unwrap();
        let s = db.session();
        create_accounts(&s, ACCOUNTS as u64, BALANCE, 200);
        exec(&s, "CREATE TABLE bulk (batch INTEGER, n INTEGER, pad VARCHAR2(60))");
    }
    let mut rng = Rng(seed | 1);
    let mut newest = Progress::default();
    let (mut transfers, mut batches, mut opens_killed) = (0, 0, 0);
    for r in 0..rounds {
        let kill_after = Duration::from_millis(150 + rng.below(600));
        let acknowledged = round(&dir, newest, kill_after, &mut rng);
        transfers += acknowledged.transfer - newest.transfer;
        batches += acknowledged.batch - newest.batch;
        for _ in 0..rng.below(3) {
            kill_an_open(&dir, Duration::from_millis(rng.below(250)));
            opens_killed += 1;
        }
        newest = check(&dir, acknowledged);
        if rounds > 20 && r % 50 == 0 {
            eprintln!("round {r}: {newest:?} so far; {transfers} transfers and {batches} batches acknowledged");
        }
    }
    eprintln!(
        "{rounds} rounds of kill -9 ({opens_killed} opens killed too): {newest:?} committed, \
         {transfers} transfers and {batches} batches acknowledged, none lost"
    );
    assert!(transfers > 0, "the child acknowledged commits before it was killed");
}
