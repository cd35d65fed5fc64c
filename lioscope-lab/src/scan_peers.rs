//! `lab scan --peers`: the cached full scan's query timed in PostgreSQL and SQLite on the
//! same customers rows, in the same run as lioscope's paths, so that the ratio holds on
//! whatever machine runs it.
//!
//! Each peer loads the rows the lab loaded (the CSV [`crate::customers::write_csv`]
//! writes), then runs `SELECT COUNT(cust_valid) FROM customers WHERE cust_id > 0` once to
//! warm and `repeat` times timed; the count must be the rows' number. PostgreSQL runs as
//! a throwaway server with shared buffers large enough for the table, the table read into
//! them with `pg_prewarm` (where the extension is installed), and no parallel workers:
//! one process scans, as lioscope's one session does. SQLite has a 1 GiB page cache,
//! warmed by the load's last read. A peer that cannot run is reported with its reason.

use super::bench::peers::{self, PeerResult, PgServer};
use super::stats::{Spread, spread};
use std::path::Path;
use std::time::Instant;

/// The peers' query: the `FULL_BUFFER_CACHE` path's, without lioscope's hints.
pub const QUERY: &str = "SELECT COUNT(cust_valid) FROM customers WHERE cust_id > 0";

/// One peer's scans.
#[derive(Debug, Clone, serde::Serialize)]
pub struct PeerScan {
    pub engine: &'static str,
    /// How it ran.
    pub settings: String,
    /// Each timed run's wall clock around the query, in milliseconds (empty when it did
    /// not run), and their spread.
    pub samples_ms: Vec<f64>,
    pub elapsed_ms: Option<Spread>,
    /// Rows a second at the median.
    pub rows_per_s: Option<f64>,
    /// Its median elapsed over lioscope's cached full scan's median: how many times
    /// faster lioscope scanned.
    pub lioscope_speedup: Option<f64>,
    /// Why it did not run.
    pub error: Option<String>,
}

/// Both peers' scans of `rows` customers, `repeat` timed runs each, in a directory of
/// their own (removed after); `lioscope_ms` is the median of lioscope's cached full scan
/// in the same run.
pub fn run(rows: u64, repeat: usize, lioscope_ms: Option<f64>) -> lioscope::Result<Vec<PeerScan>> {
    let work = super::sample::TempDir::new("lab-scan-peers")?;
    std::fs::create_dir_all(&work.0).map_err(|e| lioscope::Error::io("create", &work.0, e))?;
    let csv = work.0.join("customers.csv");
    crate::customers::write_csv_file(&csv, rows)?;
    let shared_buffers_mb = ((rows * 250) >> 20) + 256;
    let pg_settings = format!(
        "shared_buffers {shared_buffers_mb} MB, the table read into them (pg_prewarm), \
         max_parallel_workers_per_gather 0, jit off, locale C, otherwise defaults"
    );
    let outcomes = [
        ("PostgreSQL", pg_settings, postgres(&work.0, &csv, repeat, shared_buffers_mb)),
        ("SQLite", peers::SQLITE_SETTINGS.to_owned(), sqlite(&work.0, &csv, repeat)),
    ];
    Ok(outcomes
        .into_iter()
        .map(|(engine, settings, outcome)| {
            let checked = outcome.and_then(|(samples, count)| {
                if count == rows as i64 { Ok(samples) } else { Err(format!("counted {count} rows, not {rows}")) }
            });
            match checked {
                Ok(samples) => {
                    let elapsed = spread(samples.clone());
                    PeerScan {
                        engine,
                        settings,
                        samples_ms: samples,
                        rows_per_s: (elapsed.median > 0.0).then(|| rows as f64 / (elapsed.median / 1000.0)),
                        lioscope_speedup: lioscope_ms.filter(|&ms| ms > 0.0).map(|ms| elapsed.median / ms),
                        elapsed_ms: Some(elapsed),
                        error: None,
                    }
                }
                Err(why) => PeerScan {
                    engine,
                    settings,
                    samples_ms: Vec::new(),
                    elapsed_ms: None,
                    rows_per_s: None,
                    lioscope_speedup: None,
                    error: Some(why),
                },
            }
        })
        .collect())
}

/// `repeat` timed runs of `query` after one that warms: each one's milliseconds, and
/// the count the last returned.
fn timed(repeat: usize, mut query: impl FnMut() -> PeerResult<i64>) -> PeerResult<(Vec<f64>, i64)> {
    let mut count = query()?;
    let mut samples = Vec::with_capacity(repeat.max(1));
    for _ in 0..repeat.max(1) {
        let started = Instant::now();
        count = query()?;
        samples.push(started.elapsed().as_secs_f64() * 1000.0);
    }
    Ok((samples, count))
}

/// PostgreSQL's scans, in a throwaway server under `work`.
fn postgres(work: &Path, csv: &Path, repeat: usize, shared_buffers_mb: u64) -> PeerResult<(Vec<f64>, i64)> {
    let server = PgServer::start_with(work, &[&format!("shared_buffers={shared_buffers_mb}MB")])?;
    let mut client = postgres::Client::connect(server.url(), postgres::NoTls).map_err(|e| e.to_string())?;
    peers::postgres_customers(&mut client, csv)?;
    client.batch_execute("SET max_parallel_workers_per_gather = 0; SET jit = off").map_err(|e| e.to_string())?;
    client
        .batch_execute("CREATE EXTENSION IF NOT EXISTS pg_prewarm; SELECT pg_prewarm('customers')")
        .map_err(|e| format!("pg_prewarm: {e}"))?;
    timed(repeat, || client.query_one(QUERY, &[]).map(|row| row.get::<_, i64>(0)).map_err(|e| e.to_string()))
}

/// SQLite's scans, in a file under `work`.
fn sqlite(work: &Path, csv: &Path, repeat: usize) -> PeerResult<(Vec<f64>, i64)> {
    let path = work.join("customers.sqlite");
    let conn = peers::sqlite_customers(&path, csv)?;
    let mut statement = conn.prepare(QUERY).map_err(|e| e.to_string())?;
    let outcome = timed(repeat, || statement.query_row([], |r| r.get::<_, i64>(0)).map_err(|e| e.to_string()));
    drop(statement);
    drop(conn);
    let _ = std::fs::remove_file(&path);
    outcome
}
