//! PostgreSQL and SQLite beside lioscope in `bench index`: the same customers rows (the
//! CSV file [`crate::customers::write_csv`] writes) loaded into each, then only `CREATE
//! INDEX` timed on the same two keys.
//!
//! PostgreSQL runs as a throwaway server: `initdb` (locale C, so strings sort by bytes as
//! lioscope's keys do) into a directory of the benchmark's, `pg_ctl start` on a Unix
//! socket there, as the `postgres` user when run by root (PostgreSQL refuses root), and
//! `pg_ctl stop` when dropped. Its `maintenance_work_mem` is 1 GB so that its sorts stay
//! in memory as lioscope's default `sort_area_size` keeps them; the rest is its default
//! configuration (parallel index builds included). SQLite is a file of the benchmark's
//! with a 1 GiB page cache. Both tables are read once before the timed builds, so that
//! every engine builds from a cached table, and PostgreSQL checkpoints after its load (as
//! lioscope does), so that no build pays for writing the load.
//!
//! Shared by every benchmark with peers: the throwaway PostgreSQL server ([`PgServer`])
//! and the runner of a DuckDB child ([`duckdb_child`]: a `python3` child through DuckDB's
//! package, one thread, no progress bar, its answer the JSON object it prints last).

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

/// What a peer's failure says (a peer that cannot run is reported, not fatal).
pub type PeerResult<T> = std::result::Result<T, String>;

/// The customers table in the peers' types: integers where the values are whole.
pub(crate) const PG_TABLE: &str = "CREATE TABLE customers (
    cust_id bigint NOT NULL, cust_first_name varchar(20) NOT NULL, cust_last_name varchar(40) NOT NULL,
    cust_gender char(1), cust_year_of_birth integer, cust_postal_code varchar(10), cust_city varchar(30),
    cust_valid varchar(1), cust_credit_limit bigint, cust_email varchar(50))";
pub(crate) const SQLITE_TABLE: &str = "CREATE TABLE customers (
    cust_id INTEGER NOT NULL, cust_first_name TEXT NOT NULL, cust_last_name TEXT NOT NULL,
    cust_gender TEXT, cust_year_of_birth INTEGER, cust_postal_code TEXT, cust_city TEXT,
    cust_valid TEXT, cust_credit_limit INTEGER, cust_email TEXT)";

/// The settings each peer ran with, as reported.
pub const PG_SETTINGS: &str = "maintenance_work_mem 1GB, locale C, otherwise defaults";
pub const SQLITE_SETTINGS: &str = "cache_size 1 GiB, otherwise defaults";

/// Times `create` run `repeat` times (the index dropped between runs); milliseconds.
fn timed(repeat: usize, mut run: impl FnMut(bool) -> PeerResult<()>) -> PeerResult<Vec<f64>> {
    (0..repeat.max(1))
        .map(|i| {
            let started = Instant::now();
            run(i > 0)?;
            Ok(started.elapsed().as_secs_f64() * 1000.0)
        })
        .collect()
}

/// The elapsed milliseconds of each build of each of `indexes` (name, CREATE INDEX) in
/// PostgreSQL, `repeat` times each, loaded from `csv`.
pub fn postgres(work: &Path, csv: &Path, indexes: &[(&str, &str)], repeat: usize) -> PeerResult<Vec<Vec<f64>>> {
    let server = PgServer::start(work)?;
    let mut client = postgres::Client::connect(&server.url, postgres::NoTls).map_err(|e| e.to_string())?;
    postgres_customers(&mut client, csv)?;
    client.batch_execute("SET maintenance_work_mem = '1GB'").map_err(|e| e.to_string())?;
    let mut builds = Vec::new();
    for (name, create) in indexes {
        builds.push(timed(repeat, |again| {
            if again {
                client.batch_execute(&format!("DROP INDEX {name}")).map_err(|e| e.to_string())?;
            }
            client.batch_execute(create).map_err(|e| e.to_string())
        })?);
    }
    Ok(builds)
}

/// Creates the customers table in `client`'s PostgreSQL and copies `csv` into it, then
/// vacuums, analyses and checkpoints, so that no later statement pays for the load.
pub(crate) fn postgres_customers(client: &mut postgres::Client, csv: &Path) -> PeerResult<()> {
    client.batch_execute(PG_TABLE).map_err(|e| e.to_string())?;
    let mut writer = client.copy_in("COPY customers FROM STDIN WITH (FORMAT csv)").map_err(|e| e.to_string())?;
    let mut file = std::fs::File::open(csv).map_err(|e| format!("{}: {e}", csv.display()))?;
    std::io::copy(&mut file, &mut writer).map_err(|e| e.to_string())?;
    writer.finish().map_err(|e| e.to_string())?;
    client.batch_execute("VACUUM ANALYZE customers").map_err(|e| e.to_string())?;
    client.batch_execute("CHECKPOINT").map_err(|e| e.to_string())
}

/// The same for SQLite, in a file under `work`.
pub fn sqlite(work: &Path, csv: &Path, indexes: &[(&str, &str)], repeat: usize) -> PeerResult<Vec<Vec<f64>>> {
    let path = work.join("customers.sqlite");
    let conn = sqlite_customers(&path, csv)?;
    let mut builds = Vec::new();
    for (name, create) in indexes {
        builds.push(timed(repeat, |again| {
            if again {
                conn.execute_batch(&format!("DROP INDEX {name}")).map_err(|e| e.to_string())?;
            }
            conn.execute_batch(create).map_err(|e| e.to_string())
        })?);
    }
    drop(conn);
    let _ = std::fs::remove_file(&path);
    Ok(builds)
}

/// A new SQLite database at `path` (replacing one there) with a 1 GiB page cache, and
/// `csv` loaded into its customers table in one transaction, then read once whole.
pub(crate) fn sqlite_customers(path: &Path, csv: &Path) -> PeerResult<rusqlite::Connection> {
    let _ = std::fs::remove_file(path);
    let mut conn = rusqlite::Connection::open(path).map_err(|e| e.to_string())?;
    conn.execute_batch(&format!("PRAGMA cache_size = -1048576; {SQLITE_TABLE}")).map_err(|e| e.to_string())?;
    let text = std::fs::read_to_string(csv).map_err(|e| format!("{}: {e}", csv.display()))?;
    let tx = conn.transaction().map_err(|e| e.to_string())?;
    {
        let mut insert = tx
            .prepare("INSERT INTO customers VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)")
            .map_err(|e| e.to_string())?;
        for line in text.lines() {
            let f: Vec<&str> = line.split(',').collect();
            if f.len() != 10 {
                return Err(format!("{}: a line of {} fields: {line}", csv.display(), f.len()));
            }
            let int = |s: &str| s.parse::<i64>().map_err(|e| format!("{s}: {e}"));
            insert
                .execute(rusqlite::params![
                    int(f[0])?,
                    f[1],
                    f[2],
                    f[3],
                    int(f[4])?,
                    f[5],
                    f[6],
                    f[7],
                    int(f[8])?,
                    f[9]
                ])
                .map_err(|e| e.to_string())?;
        }
    }
    tx.commit().map_err(|e| e.to_string())?;
    drop(text);
    conn.query_row("SELECT SUM(cust_credit_limit) FROM customers", [], |r| r.get::<_, i64>(0))
        .map_err(|e| e.to_string())?;
    Ok(conn)
}

/// What every DuckDB child runs first: reads its task as JSON on standard input,
/// connects to `task["db"]` with one thread and no progress bar, runs `task["setup"]`
/// (the load) and leaves its time in `load_ms`.
const DUCKDB_SETUP: &str = r#"
import json, sys, threading, time
import duckdb
task = json.load(sys.stdin)
con = duckdb.connect(task["db"])
con.execute("SET threads = 1")
con.execute("SET enable_progress_bar = false")
started = time.perf_counter()
for sql in task["setup"]:
    con.execute(sql)
load_ms = (time.perf_counter() - started) * 1000
"#;

/// Runs `DUCKDB_SETUP` then `queries` (Python using DuckDB's package, which prints its
/// answer as a JSON object) in a `python3` child, its `task` as JSON on standard input;
/// the JSON object it prints last. The database file `db` (and its WAL) is removed
/// after. A missing package is said as such.
pub fn duckdb_child(queries: &str, task: &serde_json::Value, db: &Path) -> PeerResult<serde_json::Value> {
    use std::io::Write;
    let mut child = Command::new("python3")
        .args(["-c", &format!("{DUCKDB_SETUP}{queries}")])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .map_err(|e| format!("python3: {e}"))?;
    child
        .stdin
        .take()
        .ok_or("python3's standard input")?
        .write_all(task.to_string().as_bytes())
        .map_err(|e| e.to_string())?;
    let output = child.wait_with_output().map_err(|e| e.to_string())?;
    let _ = std::fs::remove_file(db);
    let _ = std::fs::remove_file(db.with_extension("duckdb.wal"));
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        let why = stderr.lines().last().unwrap_or("").to_owned();
        return Err(if why.contains("No module named 'duckdb'") {
            "python3 has no duckdb package (pip install duckdb)".to_owned()
        } else {
            format!("python3 with duckdb exited with {}: {why}", output.status)
        });
    }
    // The program's answer is its last line (anything DuckDB prints comes before).
    let stdout = String::from_utf8_lossy(&output.stdout);
    let last = stdout.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("");
    serde_json::from_str(last)
        .map_err(|e| format!("DuckDB's answer {:?}: {e}", last.chars().take(80).collect::<String>()))
}

/// A throwaway PostgreSQL server (initdb in a directory of its own, listening only on a
/// Unix socket there), stopped when dropped: the benchmark's peer, and the server the
/// results history's PostgreSQL test stores into.
pub struct PgServer {
    bin: PathBuf,
    data: PathBuf,
    url: String,
}

/// The newest installed PostgreSQL's programs.
fn pg_bin() -> PeerResult<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path().join("bin"))
        .filter(|bin| bin.join("initdb").exists())
        .collect();
    dirs.sort_by_key(|d| d.parent().and_then(|v| v.file_name()?.to_str()?.parse::<u32>().ok()).unwrap_or(0));
    dirs.pop().ok_or_else(|| "PostgreSQL is not installed (no /usr/lib/postgresql/*/bin/initdb)".to_owned())
}

fn is_root() -> bool {
    Command::new("id").arg("-u").output().is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

/// `program args` as the cluster's owner: the postgres user when running as root.
fn as_owner(program: &Path, args: &[&str]) -> PeerResult<()> {
    let mut command = if is_root() { Command::new("runuser") } else { Command::new(program) };
    if is_root() {
        command.args(["-u", "postgres", "--"]).arg(program);
    }
    let out = command.args(args).output().map_err(|e| format!("{}: {e}", program.display()))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!("{} {args:?}: {}", program.display(), String::from_utf8_lossy(&out.stderr).trim()))
    }
}

impl PgServer {
    /// Starts a server under `work` (as the postgres user when running as root).
    pub fn start(work: &Path) -> PeerResult<PgServer> {
        PgServer::start_with(work, &[])
    }

    /// Starts a server under `work` with server settings (`name=value`, as `postgres -c`
    /// takes them) beside the defaults.
    pub fn start_with(work: &Path, settings: &[&str]) -> PeerResult<PgServer> {
        let bin = pg_bin()?;
        let dir = work.join("postgresql");
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        for d in [work, dir.as_path()] {
            std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o777)).map_err(|e| e.to_string())?;
        }
        let data = dir.join("data");
        std::fs::create_dir(&data).map_err(|e| format!("{}: {e}", data.display()))?;
        if is_root() {
            let owned = Command::new("chown").arg("postgres:").arg(&data).status().map_err(|e| e.to_string())?;
            if !owned.success() {
                return Err(format!("chown postgres {}", data.display()));
            }
        }
        let data_s = data.to_str().ok_or("a data directory named in UTF-8")?;
        as_owner(
            &bin.join("initdb"),
            &["-D", data_s, "-U", "postgres", "-A", "trust", "--locale=C", "--no-instructions"],
        )?;
        let port = 20_000 + std::process::id() % 20_000;
        let mut options = format!("-k {} -p {port} -c listen_addresses=''", dir.display());
        for setting in settings {
            options.push_str(&format!(" -c {setting}"));
        }
        let log = format!("{data_s}/server.log");
        let server = PgServer {
            bin: bin.clone(),
            data: data.clone(),
            url: format!("postgresql://postgres@{}:{port}/postgres", dir.display().to_string().replace('/', "%2F")),
        };
        as_owner(&bin.join("pg_ctl"), &["-D", data_s, "-l", &log, "-w", "-o", &options, "start"])?;
        Ok(server)
    }

    /// The postmaster's process id (the first line of its `postmaster.pid`).
    pub fn postmaster_pid(&self) -> Option<u32> {
        std::fs::read_to_string(self.data.join("postmaster.pid")).ok()?.lines().next()?.trim().parse().ok()
    }

    /// The connection URL (`postgresql://postgres@<socket dir>:<port>/postgres`).
    pub fn url(&self) -> &str {
        &self.url
    }
}

impl Drop for PgServer {
    fn drop(&mut self) {
        if let Some(data) = self.data.to_str() {
            let _ = as_owner(&self.bin.join("pg_ctl"), &["-D", data, "-m", "fast", "stop"]);
        }
    }
}
