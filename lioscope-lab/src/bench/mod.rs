//! `lioscope bench scan`: the engine core's benchmark. Builds the customers table, then
//! measures load speed (INSERT ... SELECT and COPY from CSV, each `--load-repeat` times into
//! the emptied table), the fully cached full scan of
//! `SELECT COUNT(cust_valid) FROM customers WHERE cust_id > 0`, and cold scans with the
//! cache flushed for several multiblock read counts; first it times `Database::open` with
//! the benchmark's cache. Reports medians of `--repeat` runs
//! with min and max; every derived figure says how it was derived.
//!
//! The other benchmarks are its submodules: [`index`], [`inmemory`], [`commits`],
//! [`load`], [`join`], [`tpch`] (its peers in [`tpch_peers`]) and [`server`] (the CPU of
//! its servers and clients read by [`process_cpu`]); what the benchmarks with peers
//! share, the PostgreSQL server and the DuckDB child, is in [`peers`].

pub mod commits;
pub mod index;
pub mod join;
pub mod inmemory;
pub mod load;
pub mod peers;
pub mod process_cpu;
pub mod server;
pub mod tpch;
pub mod tpch_peers;

use crate::customers;
use crate::sample;
use crate::stats::spread;
use lioscope::stats::Stat;
use lioscope::{Database, DatabaseOptions, Session};

/// What every benchmark over the customers table takes.
#[derive(Debug, Clone, clap::Args)]
pub struct BenchOptions {
    /// Rows in the customers table.
    #[arg(long, default_value_t = 5_000_000)]
    pub rows: u64,
    /// Timed runs of each cached measurement (the median is reported).
    #[arg(long, default_value_t = 5)]
    pub repeat: usize,
    /// Directory for the benchmark database (default: a temporary directory, removed after).
    #[arg(long)]
    pub dir: Option<std::path::PathBuf>,
    /// Write the figures as JSON to this file too.
    #[arg(long)]
    pub json: Option<std::path::PathBuf>,
}

impl BenchOptions {
    /// One warming run of `measure` (every block it reads in the cache), then `repeat`
    /// timed runs.
    pub(crate) fn cached_runs<R>(&self, mut measure: impl FnMut() -> lioscope::Result<R>) -> lioscope::Result<Vec<R>> {
        measure()?;
        (0..self.repeat.max(1)).map(|_| measure()).collect()
    }
}

/// Prints the timing of cached runs over `rows` rows: elapsed and CPU time as median
/// [min..max], and rows/s and ns/row from the median elapsed.
pub(crate) fn print_timing(rows: f64, elapsed: impl Iterator<Item = f64>, cpu: impl Iterator<Item = f64>) {
    let (e, c) = (spread(elapsed), spread(cpu));
    println!("  elapsed              {:>12.1} ms  [{:.1} .. {:.1}]", e.median, e.min, e.max);
    println!("  CPU (thread clock)   {:>12.1} ms  [{:.1} .. {:.1}]", c.median, c.min, c.max);
    println!("  rows/s               {:>12.2} M    (rows / median elapsed)", rows / e.median / 1000.0);
    println!("  ns/row               {:>12.2}      (median elapsed / rows)", e.median * 1e6 / rows);
}

/// A whole number a v$ view gives: an integer, or a number as text (`v$parameter`'s
/// values); 0 for anything else.
pub(crate) fn whole(d: &lioscope::types::Datum) -> u64 {
    match d {
        lioscope::types::Datum::Int(n) => *n as u64,
        other => other.to_string().parse().unwrap_or(0),
    }
}

/// Options of the scan benchmark.
#[derive(Debug, Clone, clap::Args)]
pub struct ScanBenchOptions {
    #[command(flatten)]
    pub bench: BenchOptions,
    /// Multiblock read counts of the cold scans.
    #[arg(long, value_delimiter = ',', default_values_t = vec![1, 8, 32, 128])]
    pub mbrc: Vec<u32>,
    /// Skip the COPY load measurement (saves writing and loading a CSV file).
    #[arg(long)]
    pub skip_copy: bool,
    /// The `pre_page_sga` parameter of the benchmark's open (TRUE or FALSE).
    #[arg(long, default_value = "TRUE")]
    pub pre_page_sga: String,
    /// Timed runs of each load (the table is truncated between them; the median is
    /// reported).
    #[arg(long, default_value_t = 5)]
    pub load_repeat: usize,
    /// The session's `parallel_max_servers` (0 or 1): whether INSERT ... SELECT may
    /// evaluate its expressions on a helper thread.
    #[arg(long, default_value_t = 1)]
    pub parallel_max_servers: u32,
}

/// One measured run of a statement.
#[derive(Debug, Clone, Copy, serde::Serialize)]
struct Run {
    elapsed_ms: f64,
    cpu_ms: f64,
    consistent_gets: u64,
    physical_reads: u64,
    read_calls: u64,
    rows: u64,
}

fn measure(session: &Session, sql: &str) -> lioscope::Result<Run> {
    let m = sample::measure(session, sql)?;
    Ok(Run {
        elapsed_ms: m.elapsed_ms,
        cpu_ms: m.cpu_ms,
        consistent_gets: m.delta(Stat::ConsistentGets),
        physical_reads: m.delta(Stat::PhysicalReads),
        read_calls: m.delta(Stat::PhysicalReadIoRequests),
        rows: m.rows(),
    })
}

const SCAN: &str = "SELECT COUNT(cust_valid) FROM customers WHERE cust_id > 0";

/// Runs the benchmark and prints its report.
pub fn run(opts: &ScanBenchOptions) -> lioscope::Result<()> {
    let bench = &opts.bench;
    let (dir, _tmp) = sample::work_dir(bench.dir.as_deref(), "bench")?;
    // Enough cache for the whole table plus slack: rows are about 150 bytes and blocks 90%
    // full, so a row takes about 160 bytes of cache (5M rows fill 97,958 blocks of 8 KiB).
    let cache = (bench.rows * 240).max(64 << 20) + (64 << 20);
    let parameters =
        vec![("db_cache_size".into(), cache.to_string()), ("pre_page_sga".into(), opts.pre_page_sga.clone())];
    let options = DatabaseOptions { parameters, ..Default::default() };
    drop(Database::create(&dir, options.clone())?);
    // Timed on its own: what opening costs with this cache and pre-paging setting.
    let started = std::time::Instant::now();
    let db = Database::open(&dir, options)?;
    let open_ms = started.elapsed().as_secs_f64() * 1000.0;
    let session = db.session();
    session.execute(&format!("ALTER SESSION SET parallel_max_servers = {}", opts.parallel_max_servers))?;
    session.execute(customers::CREATE_TABLE)?;
    println!(
        "lioscope bench scan: {} rows, db_cache_size {} MiB, pre_page_sga {}, parallel_max_servers {}, {} timed runs of each load, {} of each cached scan, in {}",
        bench.rows,
        cache >> 20,
        opts.pre_page_sga.to_ascii_uppercase(),
        opts.parallel_max_servers,
        opts.load_repeat.max(1),
        bench.repeat,
        dir.display()
    );
    println!("Database::open took {open_ms:.1} ms");

    let load = load_runs(opts, &session, "customers", &customers::insert_select("customers", bench.rows))?;
    let copy = if opts.skip_copy { None } else { Some(copy_load(opts, &session, &dir)?) };
    let blocks = table_blocks(&session)?;

    let cached = bench.cached_runs(|| measure(&session, SCAN))?;
    let mut cold = Vec::new();
    for &m in &opts.mbrc {
        session.execute(&format!("ALTER SESSION SET db_file_multiblock_read_count = {m}"))?;
        session.execute("ALTER SYSTEM FLUSH BUFFER_CACHE")?;
        cold.push((m, measure(&session, SCAN)?));
    }
    report(opts, &load, copy.as_deref(), blocks, &cached, &cold);
    if let Some(path) = &bench.json {
        let json = serde_json::json!({
            "rows": bench.rows, "table_blocks": blocks, "open_ms": open_ms,
            "parallel_max_servers": opts.parallel_max_servers,
            "insert_select_runs": load, "copy_runs": copy,
            "cached_scan_runs": cached, "cold_scans": cold.iter().map(|(m, r)| serde_json::json!({"mbrc": m, "run": r})).collect::<Vec<_>>(),
        });
        crate::report::write_json(path, &json)?;
    }
    drop(session);
    db.close()
}

/// `--load-repeat` runs of the load statement `sql` into the empty `table`, truncated
/// before each run after the first; the table ends up loaded.
fn load_runs(opts: &ScanBenchOptions, session: &Session, table: &str, sql: &str) -> lioscope::Result<Vec<Run>> {
    (0..opts.load_repeat.max(1))
        .map(|run| {
            if run > 0 {
                session.execute(&format!("TRUNCATE TABLE {table}"))?;
            }
            measure(session, sql)
        })
        .collect()
}

fn copy_load(opts: &ScanBenchOptions, session: &Session, dir: &std::path::Path) -> lioscope::Result<Vec<Run>> {
    let path = dir.join("customers.csv");
    customers::write_csv_file(&path, opts.bench.rows)?;
    session.execute(&customers::CREATE_TABLE.replacen("customers", "customers_csv", 1))?;
    let runs = load_runs(opts, session, "customers_csv", &format!("COPY customers_csv FROM '{}'", path.display()))?;
    session.execute("DROP TABLE customers_csv")?;
    let _ = std::fs::remove_file(&path);
    Ok(runs)
}

fn table_blocks(session: &Session) -> lioscope::Result<u64> {
    let r = session.execute("SELECT blocks_below_hwm FROM user_segments WHERE segment_name = 'CUSTOMERS'")?;
    Ok(r.rows.first().and_then(|row| row.first()).map_or(0, whole))
}

fn report(
    opts: &ScanBenchOptions,
    load: &[Run],
    copy: Option<&[Run]>,
    blocks: u64,
    cached: &[Run],
    cold: &[(u32, Run)],
) {
    let rows = opts.bench.rows as f64;
    println!(
        "\nTable: {} rows in {blocks} blocks below the high-water mark ({:.1} rows/block)",
        opts.bench.rows,
        rows / blocks.max(1) as f64
    );
    println!(
        "\nLoads into the empty table ({} runs each, median [min..max]; rows/s = rows / median elapsed; CPU includes a helper thread's)",
        load.len()
    );
    println!("  {:<18} {:>12} {:>22} {:>22}", "", "rows/s", "elapsed ms", "CPU ms");
    for (name, runs) in [("INSERT ... SELECT", Some(load)), ("COPY FROM csv", copy)] {
        let Some(runs) = runs else { continue };
        let (e, c) = (spread(runs.iter().map(|r| r.elapsed_ms)), spread(runs.iter().map(|r| r.cpu_ms)));
        println!(
            "  {name:<18} {:>12.0} {:>22} {:>22}",
            rows / (e.median / 1000.0),
            format!("{:.0} [{:.0}..{:.0}]", e.median, e.min, e.max),
            format!("{:.0} [{:.0}..{:.0}]", c.median, c.min, c.max)
        );
    }
    let gets = cached[0].consistent_gets;
    println!("\nCached full scan: {SCAN}  ({} runs, median [min..max])", cached.len());
    print_timing(rows, cached.iter().map(|r| r.elapsed_ms), cached.iter().map(|r| r.cpu_ms));
    println!(
        "  consistent gets      {:>12}      ({:.4} per row; blocks below HWM + segment header = {})",
        gets,
        gets as f64 / rows,
        blocks
    );
    println!("  physical reads       {:>12}", cached[0].physical_reads);
    println!("\nCold full scan after ALTER SYSTEM FLUSH BUFFER_CACHE (one run each)");
    println!("  {:>5} {:>12} {:>12} {:>11} {:>14}", "MBRC", "elapsed ms", "CPU ms", "read calls", "blocks read");
    for (m, r) in cold {
        println!("  {m:>5} {:>12.1} {:>12.1} {:>11} {:>14}", r.elapsed_ms, r.cpu_ms, r.read_calls, r.physical_reads);
    }
}
