//! The kill -9 loop: a child `lioscope shell` runs transfers between accounts (with an
//! index), big uncommitted updates and checkpoints; the parent kills it at a random
//! moment, reopens the database, and checks after every crash that the total is
//! unchanged, every acknowledged transfer is present, no transaction is left active, the
//! index agrees with the table, and every row can be updated.
//!
//! `cargo test --release --test crash_loop` runs a few rounds; the long run is
//! `LIOSCOPE_CRASH_ROUNDS=1000 cargo test --release --test crash_loop -- --nocapture`.

#[path = "../../tests/common/mod.rs"]
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
            ("log_file_size".into(), "2M".into()),
            ("log_checkpoint_timeout".into(), "1".into()),
        ],
        ..DatabaseOptions::default()
    }
}

/// The statements of transfer `n`.
fn transfer(n: i64) -> String {
    let from = n % ACCOUNTS + 1;
    let to = (n * 7 + 3) % ACCOUNTS + 1;
    format!(
        "UPDATE acct SET bal = bal - 1 WHERE id = {from};\nUPDATE acct SET bal = bal + 1 WHERE id = {to};\nINSERT INTO ledger VALUES ({n});\nCOMMIT;\n"
    )
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

/// One round: transfers from `first` on in a child shell, killed after `kill_after`;
/// returns the last acknowledged transfer.
fn round(dir: &Path, first: i64, kill_after: Duration, rng: &mut Rng) -> i64 {
    let mut child = Command::new(env!("CARGO_BIN_EXE_lioscope"))
        .args(["shell", dir.to_str().unwrap()])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start lioscope shell");
    let acknowledged = Arc::new(AtomicI64::new(first - 1));
    let stdout = child.stdout.take().unwrap();
    let seen = acknowledged.clone();
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
    for n in first..first + 5000 {
        script.push_str(&transfer(n));
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
    acknowledged.load(Ordering::SeqCst)
}

/// Checks every invariant after a crash; every transfer up to `acknowledged` must be there.
fn check(dir: &Path, acknowledged: i64) -> i64 {
    let db = Database::open(dir, options()).unwrap_or_else(|e| panic!("reopen after kill -9: {e}"));
    let s = db.session();
    assert_eq!(int(&s, "SELECT SUM(bal) FROM acct"), ACCOUNTS * BALANCE, "the total is unchanged");
    assert_eq!(int(&s, "SELECT COUNT(*) FROM v$transaction"), 0, "no transaction is left active");
    let (count, max) = (int(&s, "SELECT COUNT(*) FROM ledger"), int(&s, "SELECT NVL(MAX(id), 0) FROM ledger"));
    assert!(max >= acknowledged, "acknowledged transfer {acknowledged} is present (newest {max})");
    assert_eq!(count, max, "the ledger holds each transfer once, with no gap");
    let by_index = int(&s, "SELECT /*+ INDEX(acct acct_id) */ COUNT(*) FROM acct WHERE id BETWEEN 1 AND 100000");
    let by_scan = int(&s, "SELECT /*+ FULL(acct) */ COUNT(*) FROM acct WHERE id BETWEEN 1 AND 100000");
    assert_eq!((by_index, by_scan), (ACCOUNTS, ACCOUNTS), "the index agrees with the table");
    exec(&s, "UPDATE acct SET bal = bal + 1");
    assert_eq!(int(&s, "SELECT SUM(bal) FROM acct"), ACCOUNTS * (BALANCE + 1), "every row can be updated");
    exec(&s, "UPDATE acct SET bal = bal - 1");
    max
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
    }
    let mut rng = Rng(seed | 1);
    let mut newest = 0;
    let mut acknowledged_total = 0;
    for r in 0..rounds {
        let kill_after = Duration::from_millis(150 + rng.below(600));
        let acknowledged = round(&dir, newest + 1, kill_after, &mut rng);
        acknowledged_total += acknowledged - newest;
        newest = check(&dir, acknowledged);
        if rounds > 20 && r % 50 == 0 {
            eprintln!("round {r}: {newest} transfers so far, {acknowledged_total} acknowledged");
        }
    }
    eprintln!("{rounds} rounds of kill -9: {newest} transfers committed, {acknowledged_total} acknowledged, none lost");
    assert!(acknowledged_total > 0, "the child acknowledged commits before it was killed");
}
