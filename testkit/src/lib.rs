//! Helpers shared by the integration tests of every crate of the workspace (a
//! dev-dependency of each): small databases in temporary directories, short ways to run
//! statements and read single values, the number of property-test cases, whether a
//! directory takes O_DIRECT, and the check of an HTML report's charts in headless Chromium.
//! Each crate's `tests/common/mod.rs` re-exports them beside its own helpers.

use lioscope::io::{FaultIo, FaultPlan};
use lioscope::types::Value;
use lioscope::{Database, DatabaseOptions, Error, Session};
use std::path::{Path, PathBuf};
use tempfile::TempDir;

/// How many cases a property test runs: `PROPTEST_CASES` when it is set and not empty (a long run
/// raises it), else `default`, kept low so that `cargo test` stays quick.
pub fn cases_or(default: u32) -> u32 {
    match std::env::var("PROPTEST_CASES") {
        Ok(v) if !v.is_empty() => v.parse().unwrap_or_else(|_| panic!("PROPTEST_CASES={v:?} is not a number of cases")),
        _ => default,
    }
}

/// Why `dir`'s file system refuses to open a file with O_DIRECT, or `None` when it
/// accepts it (the probe file is removed again).
pub fn o_direct_refused(dir: &Path) -> Option<std::io::Error> {
    use std::os::unix::fs::OpenOptionsExt;
    let probe = dir.join(".o_direct_probe");
    let opened =
        std::fs::OpenOptions::new().read(true).write(true).create(true).custom_flags(libc::O_DIRECT).open(&probe);
    let _ = std::fs::remove_file(&probe);
    opened.err()
}

/// Options for a small database: `block_size` bytes per block, `cache` as db_cache_size
/// (e.g. "2M"), and the default 1 MiB extents.
pub fn options(block_size: usize, cache: &str) -> DatabaseOptions {
    DatabaseOptions {
        block_size,
        parameters: vec![("db_cache_size".into(), cache.into())],
        ..DatabaseOptions::default()
    }
}

/// Options with an explicit extent size too.
pub fn options_with_extent(block_size: usize, extent_size: usize, cache: &str) -> DatabaseOptions {
    DatabaseOptions { extent_size, ..options(block_size, cache) }
}

/// Creates a database in `dir` or fails the test.
pub fn create(dir: &Path, options: DatabaseOptions) -> Database {
    Database::create(dir, options).unwrap_or_else(|e| panic!("create database in {}: {e}", dir.display()))
}

/// Opens the database in `dir` or fails the test.
pub fn open(dir: &Path, options: DatabaseOptions) -> Database {
    Database::open(dir, options).unwrap_or_else(|e| panic!("open database in {}: {e}", dir.display()))
}

/// A new database in directory `db` of a fresh temporary directory. The database lives in
/// that directory only as long as the returned `TempDir` does: bind it to a name (not `_`).
pub fn temp_db(options: DatabaseOptions) -> (TempDir, PathBuf, Database) {
    let dir = tempfile::tempdir().expect("create a temporary directory");
    let db_dir = dir.path().join("db");
    let db = create(&db_dir, options);
    (dir, db_dir, db)
}

/// A database made in directory `db` of a fresh temporary directory: created, `setup` run
/// on one session, then shut down. Bind the `TempDir` to a name (not `_`).
pub fn made_db(options: DatabaseOptions, setup: impl FnOnce(&Session)) -> (TempDir, PathBuf) {
    let (tmp, dir, db) = temp_db(options);
    setup(&db.session());
    drop(db);
    (tmp, dir)
}

/// Runs `work` on the database in `dir` opened over a fault-injecting I/O layer, then cuts
/// the power while it is open: what it wrote and did not sync is lost as a power failure
/// loses it (`seed` picks which unsynced writes reached the disk). Returns the database
/// opened again, after its recovery.
pub fn crash_after(dir: &Path, options: DatabaseOptions, seed: u64, work: impl FnOnce(&Database)) -> Database {
    let io = FaultIo::new(FaultPlan::default());
    {
        let faulty = DatabaseOptions { io: Some(io.clone()), ..options.clone() };
        let db = Database::open(dir, faulty).unwrap_or_else(|e| panic!("open {} over FaultIo: {e}", dir.display()));
        work(&db);
        io.cut_power();
    }
    io.power_loss(seed).unwrap_or_else(|e| panic!("power loss in {}: {e}", dir.display()));
    open(dir, options)
}

/// Turns autocommit off for `s` (as the shell starts): its changes stay uncommitted until
/// COMMIT.
pub fn manual(s: &Session) -> &Session {
    s.set_autocommit(false);
    s
}

/// Runs a statement that must succeed.
pub fn exec(s: &Session, sql: &str) -> lioscope::QueryResult {
    s.execute(sql).unwrap_or_else(|e| panic!("{sql}\n  failed: {e}"))
}

/// Runs a statement that must fail, returning its error.
pub fn fail(s: &Session, sql: &str) -> Error {
    match s.execute(sql) {
        Ok(r) => panic!("{sql}\n  should have failed, but returned {:?} ({} rows)", r.message, r.rows.len()),
        Err(e) => e,
    }
}

/// All rows of a query.
pub fn rows(s: &Session, sql: &str) -> Vec<Vec<Value>> {
    exec(s, sql).rows
}

/// The single value of a one-row, one-column query, as text ("" for NULL).
pub fn scalar(s: &Session, sql: &str) -> String {
    let r = exec(s, sql);
    assert_eq!(r.rows.len(), 1, "{sql}: expected one row, got {}", r.rows.len());
    assert_eq!(r.rows[0].len(), 1, "{sql}: expected one column");
    r.rows[0][0].to_string()
}

/// The single value of a one-row, one-column query, as a whole number.
pub fn int(s: &Session, sql: &str) -> i64 {
    let v = scalar(s, sql);
    v.parse().unwrap_or_else(|_| panic!("{sql}: '{v}' is not a whole number"))
}

/// COUNT(*) of a table.
pub fn count(s: &Session, table: &str) -> i64 {
    int(s, &format!("SELECT COUNT(*) FROM {table}"))
}

/// COUNT(*) and SUM(id) of a table.
pub fn count_and_id_sum(s: &Session, table: &str) -> (i64, i64) {
    (count(s, table), int(s, &format!("SELECT SUM(id) FROM {table}")))
}

/// What `count_and_id_sum` gives for a table whose ids are 1..=n, once each.
pub fn ids_up_to(n: i64) -> (i64, i64) {
    (n, n * (n + 1) / 2)
}

/// `blocks_below_hwm` of a table's segment (the segment header included).
pub fn blocks_below_hwm(s: &Session, table: &str) -> i64 {
    int(s, &format!("SELECT blocks_below_hwm FROM user_segments WHERE segment_name = '{}'", table.to_uppercase()))
}

/// A `v$sysstat` figure by name.
pub fn sysstat(s: &Session, name: &str) -> i64 {
    int(s, &format!("SELECT value FROM v$sysstat WHERE name = '{name}'"))
}

/// A `v$parameter` value by name.
pub fn parameter(s: &Session, name: &str) -> String {
    scalar(s, &format!("SELECT value FROM v$parameter WHERE name = '{name}'"))
}

/// What headless Chromium drew of each chart of an HTML report (the report's own script
/// records it on each `<figure class="chart">`): width, height and marks drawn.
#[derive(Debug)]
pub struct DrawnChart {
    pub width: u32,
    pub height: u32,
    pub marks: u32,
}

/// Opens `page` in headless Chromium (Debian's `chromium`, or `$LIOSCOPE_CHROMIUM`) and
/// returns each chart as drawn. Panics, naming what is missing, when there is no browser:
/// `./test.sh` installs it.
pub fn charts_drawn_by_chromium(page: &Path) -> Vec<DrawnChart> {
    let browser = std::env::var("LIOSCOPE_CHROMIUM").unwrap_or_else(|_| "chromium".into());
    let profile = tempfile::tempdir().unwrap();
    let output = std::process::Command::new(&browser)
        .args(["--headless", "--no-sandbox", "--disable-gpu", "--dump-dom"])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg(format!("file://{}", page.canonicalize().unwrap().display()))
        .output()
        .unwrap_or_else(|e| panic!("{browser} is needed for this test (./test.sh installs chromium): {e}"));
    assert!(output.status.success(), "{browser}: {}", String::from_utf8_lossy(&output.stderr));
    let dom = String::from_utf8(output.stdout).unwrap();
    let attribute = |tag: &str, name: &str| -> u32 {
        let start = tag.find(&format!("{name}=\"")).unwrap_or_else(|| panic!("no {name} in {tag}")) + name.len() + 2;
        tag[start..].split('"').next().unwrap().parse().unwrap()
    };
    let body = dom.split("<body").nth(1).expect("a body");
    let checked = attribute(&body[..body.find('>').unwrap()], "data-charts-checked");
    let charts: Vec<DrawnChart> = dom
        .split("<figure ")
        .skip(1)
        .map(|rest| {
            let tag = &rest[..rest.find('>').unwrap()];
            DrawnChart {
                width: attribute(tag, "data-drawn-width"),
                height: attribute(tag, "data-drawn-height"),
                marks: attribute(tag, "data-marks"),
            }
        })
        .collect();
    assert_eq!(charts.len() as u32, checked, "the script saw every chart");
    charts
}

/// Asserts that headless Chromium drew `expected` charts of `page`, each of a readable
/// size with its axes, grid and data.
pub fn assert_charts_drawn(page: &Path, expected: usize) {
    let charts = charts_drawn_by_chromium(page);
    assert_eq!(charts.len(), expected, "{}", page.display());
    for chart in &charts {
        assert!(chart.width >= 400 && chart.height >= 200, "{}: {chart:?}", page.display());
        assert!(chart.marks >= 20, "{}: axes, grid and data drawn: {chart:?}", page.display());
    }
}

/// The accounts of the bank tests (`accounts` rows of balance `balance` and a pad of
/// `pad` bytes, indexed by id) and the ledger their transfers append to.
pub fn create_accounts(s: &Session, accounts: u64, balance: i64, pad: usize) {
    exec(s, &format!("CREATE TABLE acct (id INTEGER, bal INTEGER, pad VARCHAR2({pad}))"));
    exec(
        s,
        &format!(
            "INSERT INTO acct SELECT LEVEL, {balance}, RPAD('p', {pad}, 'p') FROM dual CONNECT BY LEVEL <= {accounts}"
        ),
    );
    exec(s, "CREATE INDEX acct_id ON acct (id)");
    exec(s, "CREATE TABLE ledger (id INTEGER)");
}

/// The rows of `sql`, each as its values' debug forms joined by `|`, sorted: for comparing
/// two queries' answers whatever their row order.
pub fn sorted_rows(s: &Session, sql: &str) -> Vec<String> {
    let mut out: Vec<String> =
        rows(s, sql).into_iter().map(|r| r.iter().map(|v| format!("{v:?}")).collect::<Vec<_>>().join("|")).collect();
    out.sort();
    out
}

/// A committed table `t` of `rows` rows shaped like the lab's customers: whole numbers,
/// strings, dates, CHAR flags and NULLs in several columns.
pub fn customers_like(s: &Session, rows: u32) {
    exec(
        s,
        "CREATE TABLE t (id NUMBER NOT NULL, name VARCHAR2(30), amount NUMBER, born DATE, flag CHAR(1), note VARCHAR2(20))",
    );
    exec(
        s,
        &format!(
            "INSERT INTO t SELECT LEVEL, 'name-' || MOD(LEVEL, 97), CASE WHEN MOD(LEVEL, 11) = 0 THEN NULL ELSE MOD(LEVEL, 1000) END, \
             TO_DATE('2020-01-01', 'YYYY-MM-DD') + MOD(LEVEL, 400), CASE WHEN MOD(LEVEL, 3) = 0 THEN 'Y' ELSE 'N' END, \
             CASE WHEN MOD(LEVEL, 5) = 0 THEN NULL ELSE 'n' || MOD(LEVEL, 13) END FROM dual CONNECT BY LEVEL <= {rows}"
        ),
    );
    exec(s, "COMMIT");
}
