//! The bank the durability tests run on a small database: accounts (with an index), a
//! ledger of transfers, a history table, and the ways to create it, copy a crashed
//! database and move money.

use lioscope::io::Io;
use lioscope::{Database, DatabaseOptions, Session};
use std::path::Path;
use std::sync::Arc;

pub const ACCOUNTS: i64 = 50;
pub const BALANCE: i64 = 1000;

/// A small database: 2 KB blocks, 64 KB extents, 1 MB logs, a 1 MB cache, checkpoints
/// only at log switches and when asked; every write through `io` (the system's if `None`).
pub fn options(io: Option<Arc<dyn Io>>) -> DatabaseOptions {
    DatabaseOptions {
        block_size: 2048,
        extent_size: 64 * 2048,
        parameters: vec![
            ("db_cache_size".into(), "1M".into()),
            ("log_file_size".into(), "1M".into()),
            ("undo_tablespace_size".into(), "2M".into()),
            ("log_checkpoint_timeout".into(), "0".into()),
        ],
        io,
    }
}

/// Transfer `n`: moves 1 between two accounts and records `n` in the ledger; `Ok` only
/// once its COMMIT is acknowledged.
pub fn transfer(s: &Session, n: i64) -> lioscope::Result<()> {
    let from = n % ACCOUNTS + 1;
    let to = (n * 7 + 3) % ACCOUNTS + 1;
    s.execute(&format!("UPDATE acct SET bal = bal - 1 WHERE id = {from}"))?;
    s.execute(&format!("UPDATE acct SET bal = bal + 1 WHERE id = {to}"))?;
    s.execute(&format!("INSERT INTO ledger VALUES ({n})"))?;
    s.execute("COMMIT")?;
    Ok(())
}

/// Creates the bank in `dir`: the accounts (with an index), the ledger of transfers, and
/// a history table `hist` of 300 rows whose `v` sums to 300 (for an update left
/// uncommitted at a crash, which must not survive it).
pub fn create_bank(dir: &Path, options: DatabaseOptions) {
    let db = Database::create(dir, options).unwrap();
    let s = db.session();
    super::create_accounts(&s, ACCOUNTS as u64, BALANCE, 100);
    super::exec(&s, "CREATE TABLE hist (id INTEGER, v INTEGER, pad VARCHAR2(100))");
    super::exec(&s, "INSERT INTO hist SELECT LEVEL, 1, RPAD('h', 100, 'h') FROM dual CONNECT BY LEVEL <= 300");
    db.close().unwrap();
}

/// Copies a closed (or crashed) database's files from `from` to a new directory `to`.
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        if entry.file_type().unwrap().is_file() {
            std::fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
        }
    }
}

/// What every reopen after a crash or a fault must find, checked in `s`: the accounts'
/// total unchanged, no transaction left active, every acknowledged transfer in the
/// ledger, and the index agreeing with the table. Returns the ledger's ids, sorted.
pub fn check_bank(s: &Session, acknowledged: &[i64]) -> Vec<i64> {
    assert_eq!(super::int(s, "SELECT SUM(bal) FROM acct"), ACCOUNTS * BALANCE, "the total is unchanged");
    assert_eq!(super::int(s, "SELECT COUNT(*) FROM v$transaction"), 0, "no transaction is left active");
    let ledger: Vec<i64> = super::rows(s, "SELECT id FROM ledger ORDER BY id")
        .iter()
        .map(|r| r[0].to_string().parse().expect("a ledger id"))
        .collect();
    for n in acknowledged {
        assert!(ledger.binary_search(n).is_ok(), "acknowledged transfer {n} is present (ledger {ledger:?})");
    }
    let by_index = super::int(s, "SELECT /*+ INDEX(acct acct_id) */ COUNT(*) FROM acct WHERE id BETWEEN 1 AND 1000");
    let by_scan = super::int(s, "SELECT /*+ FULL(acct) */ COUNT(*) FROM acct WHERE id BETWEEN 1 AND 1000");
    assert_eq!((by_index, by_scan), (ACCOUNTS, ACCOUNTS), "the index agrees with the table");
    ledger
}
