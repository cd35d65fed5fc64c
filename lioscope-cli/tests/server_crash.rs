//! kill -9 of a server under load: a child `lioscope serve` takes transfers from 8
//! clients over the network (PostgreSQL's protocol, each transfer a BEGIN ... COMMIT
//! block), and is killed at a random moment, several times. After each kill the database
//! is opened and checked as the kill -9 loop checks it: the total is unchanged, every
//! transfer a client saw committed is present, each once, and no transaction is left
//! active.
//!
//! `cargo test --release --test server_crash` runs a few rounds; more with
//! `LIOSCOPE_SERVER_CRASH_ROUNDS=100`.

mod common;

use common::{create_accounts, int, rows};
use lioscope::{Database, DatabaseOptions};
use postgres::{Client, NoTls};
use std::collections::HashSet;
use std::net::TcpListener;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const ACCOUNTS: i64 = 50;
const BALANCE: i64 = 1000;
const CLIENTS: i64 = 8;

fn options() -> DatabaseOptions {
    DatabaseOptions {
        parameters: vec![("db_cache_size".into(), "8M".into()), ("log_file_size".into(), "1M".into())],
        ..DatabaseOptions::default()
    }
}

/// A loopback port free now.
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// Connects to the server on `port`, waiting for it to listen.
fn connect(port: u16, deadline: Instant) -> Option<Client> {
    let config = format!("host=127.0.0.1 port={port} user=sys dbname=bank connect_timeout=2");
    loop {
        match Client::connect(&config, NoTls) {
            Ok(client) => return Some(client),
            Err(_) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(20)),
            Err(_) => return None,
        }
    }
}

/// One client: transfers numbered `first`, `first + 1`, ... until its connection dies;
/// the numbers whose COMMIT was acknowledged go to `acknowledged`.
fn client(port: u16, first: i64, acknowledged: Arc<Mutex<Vec<i64>>>) {
    let Some(mut c) = connect(port, Instant::now() + Duration::from_secs(20)) else { return };
    for n in first.. {
        let from = n % ACCOUNTS + 1;
        let to = (n * 7 + 3) % ACCOUNTS + 1;
        let transfer = format!(
            "BEGIN; UPDATE acct SET bal = bal - 1 WHERE id = {from}; UPDATE acct SET bal = bal + 1 WHERE id = {to}; \
             INSERT INTO ledger VALUES ({n}); COMMIT"
        );
        match c.batch_execute(&transfer) {
            Ok(()) => acknowledged.lock().unwrap().push(n),
            Err(e) if e.is_closed() || e.as_db_error().is_none() => return,
            // A deadlock between two clients' transfers: the block is aborted; end it.
            Err(_) => {
                if c.batch_execute("ROLLBACK").is_err() {
                    return;
                }
            }
        }
    }
}

/// One round: a server, 8 clients, a kill -9 after `kill_after`. Returns the transfers
/// acknowledged.
fn round(dir: &Path, kill_after: Duration) -> Vec<i64> {
    let port = free_port();
    let mut server = Command::new(env!("CARGO_BIN_EXE_lioscope"))
        .args(["serve", dir.to_str().unwrap(), "--listen", &format!("127.0.0.1:{port}"), "--auth", "trust"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let ready = connect(port, Instant::now() + Duration::from_secs(60)).is_some();
    let acknowledged = Arc::new(Mutex::new(Vec::new()));
    let start = int_now();
    let clients: Vec<_> = (0..CLIENTS)
        .map(|c| {
            let acknowledged = acknowledged.clone();
            std::thread::spawn(move || client(port, start + c * 1_000_000, acknowledged))
        })
        .collect();
    std::thread::sleep(kill_after);
    server.kill().unwrap();
    server.wait().unwrap();
    for c in clients {
        c.join().unwrap();
    }
    assert!(ready, "the server listened");

    acknowledged.lock().unwrap().clone()
}

/// Transfer numbers unique across rounds: microseconds since 2020, times 1000.
fn int_now() -> i64 {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_micros() as i64;
    (now - 1_577_836_800_000_000) / 1000 * 1000 * 100
}

fn check(dir: &Path, acknowledged: &[i64]) {
    let db = Database::open(dir, options()).unwrap_or_else(|e| panic!("reopen after kill -9: {e}"));
    let s = db.session();
    assert_eq!(int(&s, "SELECT SUM(bal) FROM acct"), ACCOUNTS * BALANCE, "the total is unchanged");
    assert_eq!(int(&s, "SELECT COUNT(*) FROM v$transaction"), 0, "no transaction is left active");
    let ledger: Vec<i64> =
        rows(&s, "SELECT id FROM ledger").iter().map(|r| r[0].to_string().parse().unwrap()).collect();
    let present: HashSet<i64> = ledger.iter().copied().collect();
    assert_eq!(present.len(), ledger.len(), "each transfer is in the ledger once");
    let lost: Vec<&i64> = acknowledged.iter().filter(|n| !present.contains(n)).collect();
    assert!(lost.is_empty(), "{} acknowledged transfers lost, e.g. {:?}", lost.len(), &lost[..lost.len().min(5)]);
    // Every transfer in the ledger moved one unit: the balances agree with the ledger.
    let moved = int(&s, "SELECT SUM(ABS(bal - 1000)) FROM acct");
    assert!(moved <= 2 * ledger.len() as i64, "balances moved {moved} units for {} transfers", ledger.len());
}

#[test]
fn kill_minus_nine_of_a_serving_server_loses_no_acknowledged_commit() {
    let rounds: u64 = std::env::var("LIOSCOPE_SERVER_CRASH_ROUNDS").ok().and_then(|v| v.parse().ok()).unwrap_or(3);
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("bank");
    {
        let db = Database::create(&dir, options()).unwrap();
        create_accounts(&db.session(), ACCOUNTS as u64, BALANCE, 100);
    }
    let mut total = 0;
    for r in 0..rounds {
        let kill_after = Duration::from_millis(400 + (r * 337 % 900));
        let acknowledged = round(&dir, kill_after);
        total += acknowledged.len();
        check(&dir, &acknowledged);
    }
    eprintln!("{rounds} rounds of kill -9 under 8 clients: {total} transfers acknowledged, none lost");
    assert!(total > 0, "the clients got commits acknowledged before the kills");
}
