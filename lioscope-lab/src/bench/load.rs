//! `lioscope bench load`: how fast lioscope loads the customers table, durably, beside
//! PostgreSQL's COPY of the same file in the same run.
//!
//! Every engine loads the same CSV file of `--rows` customers ([`customers::write_csv`])
//! into an empty table, `--repeat` times (emptied with TRUNCATE before each run after the
//! first). A run is timed from the start of the load to its durable commit:
//!
//! ```text
//!  lioscope    COPY customers FROM 'file'; COMMIT                 (manual commit)
//!  lioscope    INSERT INTO customers SELECT ... CONNECT BY ...; COMMIT
//!  PostgreSQL  COPY customers FROM 'file' (FORMAT csv)            (autocommit, fsync and
//!                                                                  synchronous_commit on)
//! ```
//!
//! For each lioscope run, the deltas of `v$sysstat`, `v$system_event` and `v$log` around
//! it give: redo bytes per loaded byte (per byte of the CSV file and per byte of the
//! table's blocks), every event waited for (the log's: `log file switch (checkpoint
//! incomplete)`, `log buffer space`, `log file sync`; the background writers' too),
//! background checkpoints, and log groups added. For PostgreSQL, the WAL bytes of
//! each COPY (`pg_current_wal_lsn` before and after). The ratio is PostgreSQL's median
//! elapsed over lioscope's: above 1, lioscope is faster.

use super::peers::{self, PeerResult};
use super::whole;
use crate::customers;
use crate::report;
use crate::sample;
use crate::stats::spread;
use lioscope::{Database, DatabaseOptions, Result, Session};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Options of the load benchmark.
#[derive(Debug, Clone, clap::Args)]
pub struct LoadBenchOptions {
    /// Rows of the customers file each engine loads.
    #[arg(long, default_value_t = 5_000_000)]
    pub rows: u64,
    /// Timed runs of each load (the table is truncated between them; the median is
    /// reported).
    #[arg(long, default_value_t = 3)]
    pub repeat: usize,
    /// lioscope's buffer cache (a large cache keeps the whole load dirty in memory, so
    /// that checkpoints must keep up with the log).
    #[arg(long, default_value = "4G")]
    pub db_cache_size: String,
    /// Size of each of lioscope's online log files (`log_file_size` at creation).
    #[arg(long, default_value = "64M")]
    pub log_file_size: String,
    /// Load in lioscope only, not in PostgreSQL.
    #[arg(long)]
    pub no_peers: bool,
    /// Directory for the benchmark's files (default: a temporary directory, removed after).
    #[arg(long)]
    pub dir: Option<PathBuf>,
    /// Write the figures as JSON to this file too.
    #[arg(long)]
    pub json: Option<PathBuf>,
}

/// One timed lioscope load, statement and commit.
#[derive(Debug, Clone, serde::Serialize)]
pub struct LioRun {
    /// Rows the statement loaded.
    pub rows: u64,
    pub elapsed_ms: f64,
    pub commit_ms: f64,
    pub cpu_ms: f64,
    pub redo_bytes: u64,
    pub table_bytes: u64,
    pub background_checkpoints: u64,
    pub groups_added: u64,
    /// (event, waits, microseconds) of every event waited for during the run, longest
    /// first, the database writer's and log writer's included.
    pub waits: Vec<(String, u64, u64)>,
}

/// What one engine's loads gave: each run, or why it could not run.
#[derive(Debug, serde::Serialize)]
pub struct Loads<R> {
    pub name: &'static str,
    pub runs: std::result::Result<Vec<R>, String>,
}

/// One timed PostgreSQL COPY.
#[derive(Debug, Clone, serde::Serialize)]
pub struct PgRun {
    pub elapsed_ms: f64,
    pub wal_bytes: u64,
    pub table_bytes: u64,
}

/// Every load's runs.
#[derive(Debug, serde::Serialize)]
pub struct LoadReport {
    pub rows: u64,
    pub csv_bytes: u64,
    pub lioscope: Vec<Loads<LioRun>>,
    pub postgresql: Loads<PgRun>,
}

/// Runs the benchmark and prints its report.
pub fn run(opts: &LoadBenchOptions) -> Result<LoadReport> {
    let (dir, _tmp) = sample::work_dir(opts.dir.as_deref(), "bench-load")?;
    std::fs::create_dir_all(&dir).map_err(|e| lioscope::Error::io("create", &dir, e))?;
    let csv = dir.join("customers.csv");
    customers::write_csv_file(&csv, opts.rows)?;
    let csv_bytes = std::fs::metadata(&csv).map_err(|e| lioscope::Error::io("stat", &csv, e))?.len();
    println!(
        "lioscope bench load: {} rows ({csv_bytes} bytes of CSV), {} timed runs of each load, lioscope with db_cache_size {} and log_file_size {}, in {}",
        opts.rows,
        opts.repeat.max(1),
        opts.db_cache_size,
        opts.log_file_size,
        dir.display()
    );
    let lio = lioscope_loads(opts, &dir, &csv)?;
    let pg = if opts.no_peers {
        Loads { name: "PostgreSQL COPY", runs: Err("--no-peers".into()) }
    } else {
        Loads { name: "PostgreSQL COPY", runs: postgres_loads(&dir, &csv, opts.repeat) }
    };
    let report = LoadReport { rows: opts.rows, csv_bytes, lioscope: lio, postgresql: pg };
    print_report(&report);
    if let Some(path) = &opts.json {
        let json = serde_json::json!({
            "db_cache_size": opts.db_cache_size, "log_file_size": opts.log_file_size, "report": report,
        });
        report::write_json(path, &json)?;
    }
    let _ = std::fs::remove_file(&csv);
    Ok(report)
}

/// lioscope's COPY and INSERT ... SELECT runs, in a database created under `dir`.
fn lioscope_loads(opts: &LoadBenchOptions, dir: &Path, csv: &Path) -> Result<Vec<Loads<LioRun>>> {
    let db_dir = dir.join("lioscope");
    let created = DatabaseOptions {
        parameters: vec![("log_file_size".into(), opts.log_file_size.clone())],
        ..Default::default()
    };
    drop(Database::create(&db_dir, created)?);
    let open = DatabaseOptions {
        parameters: vec![("db_cache_size".into(), opts.db_cache_size.clone())],
        ..Default::default()
    };
    let db = Database::open(&db_dir, open)?;
    let session = db.session();
    session.set_autocommit(false);
    session.execute(customers::CREATE_TABLE)?;
    let copy = format!("COPY customers FROM '{}'", csv.display());
    let insert = customers::insert_select("customers", opts.rows);
    let mut loads = Vec::new();
    for (name, sql) in [("lioscope COPY", copy.as_str()), ("lioscope INSERT ... SELECT", insert.as_str())] {
        let mut runs = Vec::new();
        for _ in 0..opts.repeat.max(1) {
            session.execute("TRUNCATE TABLE customers")?;
            // Each run starts with the previous one's blocks written and its log reusable.
            session.execute("ALTER SYSTEM CHECKPOINT")?;
            runs.push(lioscope_run(&session, sql)?);
        }
        loads.push(Loads { name, runs: Ok(runs) });
    }
    drop(session);
    db.close()?;
    drop(db);
    let _ = std::fs::remove_dir_all(&db_dir);
    Ok(loads)
}

/// One lioscope load: `sql`, then COMMIT, measured together.
fn lioscope_run(session: &Session, sql: &str) -> Result<LioRun> {
    let before = SystemFigures::read(session)?;
    let load = sample::measure(session, sql)?;
    let commit = sample::measure(session, "COMMIT")?;
    let after = SystemFigures::read(session)?;
    let blocks = whole(
        &session.execute("SELECT blocks_below_hwm FROM user_segments WHERE segment_name = 'CUSTOMERS'")?.rows[0][0],
    );
    let block_size = whole(&session.execute("SELECT value FROM v$parameter WHERE name = 'db_block_size'")?.rows[0][0]);
    Ok(LioRun {
        rows: load.result.rows_affected,
        elapsed_ms: load.elapsed_ms + commit.elapsed_ms,
        commit_ms: commit.elapsed_ms,
        cpu_ms: load.cpu_ms + commit.cpu_ms,
        redo_bytes: after.redo_size - before.redo_size,
        table_bytes: blocks * block_size,
        background_checkpoints: after.checkpoints - before.checkpoints,
        groups_added: after.groups - before.groups,
        waits: after.waits_since(&before),
    })
}

/// The system-wide figures a load's are the deltas of.
struct SystemFigures {
    redo_size: u64,
    checkpoints: u64,
    groups: u64,
    /// (event, waits, microseconds) of every event in `v$system_event`.
    waits: Vec<(String, u64, u64)>,
}

impl SystemFigures {
    fn read(session: &Session) -> Result<SystemFigures> {
        let stat = |name: &str| -> Result<u64> {
            let r = session.execute(&format!("SELECT value FROM v$sysstat WHERE name = '{name}'"))?;
            Ok(r.rows.first().map_or(0, |row| whole(&row[0])))
        };
        let events = session.execute("SELECT event, total_waits, time_waited_micro FROM v$system_event")?;
        let waits = events.rows.iter().map(|r| (r[0].to_string(), whole(&r[1]), whole(&r[2]))).collect();
        Ok(SystemFigures {
            redo_size: stat("redo size")?,
            checkpoints: stat("background checkpoints completed")?,
            groups: whole(&session.execute("SELECT COUNT(*) FROM v$log")?.rows[0][0]),
            waits,
        })
    }
}

impl SystemFigures {
    /// The events waited for since `before`, longest first.
    fn waits_since(&self, before: &SystemFigures) -> Vec<(String, u64, u64)> {
        let mut waits: Vec<(String, u64, u64)> = self
            .waits
            .iter()
            .filter_map(|(event, n, us)| {
                let (n0, us0) =
                    before.waits.iter().find(|(e, ..)| e == event).map_or((0, 0), |(_, n0, us0)| (*n0, *us0));
                (*n > n0).then(|| (event.clone(), n - n0, us - us0))
            })
            .collect();
        waits.sort_by_key(|(_, _, us)| std::cmp::Reverse(*us));
        waits
    }
}

/// PostgreSQL's COPY of `csv`, `repeat` times into the emptied table, in a throwaway
/// server under `dir`.
fn postgres_loads(dir: &Path, csv: &Path, repeat: usize) -> PeerResult<Vec<PgRun>> {
    let server = peers::PgServer::start(dir)?;
    let mut client = postgres::Client::connect(server.url(), postgres::NoTls).map_err(|e| e.to_string())?;
    client.batch_execute(peers::PG_TABLE).map_err(|e| e.to_string())?;
    let wal = |client: &mut postgres::Client| -> PeerResult<u64> {
        let row = client
            .query_one("SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::bigint", &[])
            .map_err(|e| e.to_string())?;
        Ok(row.get::<_, i64>(0) as u64)
    };
    let copy = format!("COPY customers FROM '{}' (FORMAT csv)", csv.display());
    (0..repeat.max(1))
        .map(|_| {
            client.batch_execute("TRUNCATE customers; CHECKPOINT").map_err(|e| e.to_string())?;
            let before = wal(&mut client)?;
            let started = Instant::now();
            client.batch_execute(&copy).map_err(|e| e.to_string())?;
            let elapsed_ms = started.elapsed().as_secs_f64() * 1000.0;
            let wal_bytes = wal(&mut client)? - before;
            let table_bytes = client
                .query_one("SELECT pg_relation_size('customers')", &[])
                .map_err(|e| e.to_string())?
                .get::<_, i64>(0) as u64;
            Ok(PgRun { elapsed_ms, wal_bytes, table_bytes })
        })
        .collect()
}

fn print_report(report: &LoadReport) {
    let (rows, csv_bytes, lio, pg) = (report.rows, report.csv_bytes, &report.lioscope, &report.postgresql);
    let median = |v: Vec<f64>| spread(v).median;
    let pg_median = pg.runs.as_ref().ok().map(|runs| median(runs.iter().map(|r| r.elapsed_ms).collect()));
    println!(
        "\nLoads, each to its durable commit (runs: median [min..max] ms; rows/s = rows / median; ratio = PostgreSQL COPY's median / this median)"
    );
    println!(
        "  {:<28} {:>11} {:>24} {:>7} {:>14} {:>14}",
        "load", "rows/s", "elapsed ms", "ratio", "log bytes/CSV", "log bytes/table"
    );
    let line = |name: &str, elapsed: Vec<f64>, log: f64, table: f64| {
        let e = spread(elapsed);
        let ratio = pg_median.map_or("n/a".to_owned(), |p| format!("{:.2}", p / e.median));
        println!(
            "  {name:<28} {:>11.0} {:>24} {ratio:>7} {:>14.2} {:>14.2}",
            rows as f64 / (e.median / 1000.0),
            format!("{:.0} [{:.0}..{:.0}]", e.median, e.min, e.max),
            log / csv_bytes as f64,
            log / table,
        );
    };
    for load in lio {
        let Ok(runs) = &load.runs else { continue };
        let redo = median(runs.iter().map(|r| r.redo_bytes as f64).collect());
        let table = median(runs.iter().map(|r| r.table_bytes as f64).collect());
        line(load.name, runs.iter().map(|r| r.elapsed_ms).collect(), redo, table);
    }
    match &pg.runs {
        Ok(runs) => {
            let wal = median(runs.iter().map(|r| r.wal_bytes as f64).collect());
            let table = median(runs.iter().map(|r| r.table_bytes as f64).collect());
            line(pg.name, runs.iter().map(|r| r.elapsed_ms).collect(), wal, table);
        }
        Err(why) => println!("  {:<28} not run: {why}", pg.name),
    }
    println!(
        "\nlioscope's waits and log figures, per run (commit ms, background checkpoints, log groups added, then the events waited for, the background writers' included: count/ms)"
    );
    for load in lio {
        let Ok(runs) = &load.runs else { continue };
        println!("  {}", load.name);
        for (i, r) in runs.iter().enumerate() {
            let waits: Vec<String> =
                r.waits.iter().map(|(e, n, us)| format!("{e} {n}/{}", report::round(*us as f64 / 1000.0))).collect();
            println!(
                "    run {}: commit {:.1} ms, CPU {:.0} ms, {} checkpoints, {} groups added; {}",
                i + 1,
                r.commit_ms,
                r.cpu_ms,
                r.background_checkpoints,
                r.groups_added,
                waits.join(", ")
            );
        }
    }
}
