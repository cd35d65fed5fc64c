//! `lioscope bench index`: the index benchmark. Loads the customers table from a CSV file,
//! times the builds of an index on `cust_id` (in insert order: a good clustering factor)
//! and on `cust_postal_code` (random with respect to it: a bad one), in lioscope and, on
//! the same rows loaded from the same file, in PostgreSQL and SQLite ([`super::peers`]),
//! with lioscope's sort statistics; analyzes, then measures the
//! fully cached `COUNT(cust_valid)` through every row by each index, as the source
//! experiment does: rows/s, ns/row, logical reads per row and `buffer is pinned count`;
//! and for comparison the same rows counted from the index alone and by a full scan.
//! Medians of `--repeat` runs with min and max; each derived figure says how it was
//! derived.

use super::{BenchOptions, peers, print_timing};
use crate::customers;
use crate::sample;
use crate::stats::spread;
use lioscope::stats::Stat;
use lioscope::{Database, DatabaseOptions, Session};

/// One query measured: the two paths of the source experiment, then for comparison the
/// index alone and the full scan over the same rows.
struct Query {
    name: &'static str,
    sql: &'static str,
}

const QUERIES: [Query; 4] = [
    Query { name: "good clustering (cust_id)", sql: customers::count::BY_GOOD_INDEX },
    Query { name: "bad clustering (cust_postal_code)", sql: customers::count::BY_BAD_INDEX },
    Query {
        name: "index only (cust_id, no table access)",
        sql: "SELECT /*+ INDEX(c cust_id_ix) */ COUNT(*) FROM customers c WHERE cust_id > 0",
    },
    Query { name: "full scan, for comparison", sql: customers::count::FULL },
];

#[derive(Debug, Clone, Copy, serde::Serialize)]
struct Run {
    elapsed_ms: f64,
    cpu_ms: f64,
    logical_reads: u64,
    buffer_is_pinned: u64,
    physical_reads: u64,
    rows_counted: i64,
}

fn measure(session: &Session, sql: &str) -> lioscope::Result<Run> {
    let m = sample::measure(session, sql)?;
    let counted = match m.result.rows.first().and_then(|r| r.first()) {
        Some(lioscope::types::Datum::Int(n)) => *n,
        _ => -1,
    };
    Ok(Run {
        elapsed_ms: m.elapsed_ms,
        cpu_ms: m.cpu_ms,
        logical_reads: m.delta(Stat::LogicalReads),
        buffer_is_pinned: m.delta(Stat::BufferIsPinned),
        physical_reads: m.delta(Stat::PhysicalReads),
        rows_counted: counted,
    })
}

/// Options of the index benchmark.
#[derive(Debug, Clone, clap::Args)]
pub struct IndexBenchOptions {
    #[command(flatten)]
    pub bench: BenchOptions,
    /// Timed builds of each index in each engine (dropped between them; the median is
    /// reported).
    #[arg(long, default_value_t = 1)]
    pub build_repeat: usize,
    /// lioscope's `sort_area_size` for the builds (e.g. 4M to make them spill); default:
    /// the parameter's default.
    #[arg(long)]
    pub sort_area_size: Option<String>,
    /// Build in lioscope only, not in PostgreSQL and SQLite.
    #[arg(long)]
    pub no_peers: bool,
}

/// The builds of one engine: elapsed milliseconds of each run, per index.
#[derive(Debug, Clone, serde::Serialize)]
struct EngineBuilds {
    engine: &'static str,
    settings: String,
    /// Per index (in [`customers::INDEXES`] order), or why the engine could not run.
    elapsed_ms: Result<Vec<Vec<f64>>, String>,
}

/// lioscope's builds of one index: elapsed and CPU of each run, and its sort's figures.
#[derive(Debug, Clone, serde::Serialize)]
struct LioscopeBuild {
    elapsed_ms: f64,
    cpu_ms: f64,
    sorts_memory: u64,
    sorts_disk: u64,
    sorts_rows: u64,
    direct_path_write_temp: u64,
    direct_path_read_temp: u64,
    /// Time waited in each event the build waited on: (event, waits, milliseconds).
    waits: Vec<(&'static str, u64, f64)>,
}

/// Waits and microseconds waited of every wait event of the session.
fn wait_totals(session: &Session) -> Vec<(u64, u64)> {
    lioscope::stats::WaitEvent::ALL
        .iter()
        .map(|&e| {
            let t = session.stats().event(e);
            (t.waits, t.time_waited_micro)
        })
        .collect()
}

/// Builds each index `repeat` times in lioscope (dropped between runs).
fn lioscope_builds(session: &Session, repeat: usize) -> lioscope::Result<Vec<Vec<LioscopeBuild>>> {
    let mut all = Vec::new();
    for (index, create) in customers::INDEXES {
        let mut runs = Vec::new();
        for i in 0..repeat.max(1) {
            if i > 0 {
                session.execute(&format!("DROP INDEX {index}"))?;
            }
            let waits = |e| session.stats().event(e).waits;
            let (writes, reads) = (
                waits(lioscope::stats::WaitEvent::DirectPathWriteTemp),
                waits(lioscope::stats::WaitEvent::DirectPathReadTemp),
            );
            let waited_before = wait_totals(session);
            let m = sample::measure(session, create)?;
            let waited = (lioscope::stats::WaitEvent::ALL.iter().zip(wait_totals(session)).zip(waited_before))
                .filter(|((_, after), before)| after.1 > before.1)
                .map(|((e, after), before)| (e.name(), after.0 - before.0, (after.1 - before.1) as f64 / 1000.0))
                .collect();
            runs.push(LioscopeBuild {
                elapsed_ms: m.elapsed_ms,
                cpu_ms: m.cpu_ms,
                sorts_memory: m.delta(Stat::SortsMemory),
                sorts_disk: m.delta(Stat::SortsDisk),
                sorts_rows: m.delta(Stat::SortsRows),
                direct_path_write_temp: waits(lioscope::stats::WaitEvent::DirectPathWriteTemp) - writes,
                direct_path_read_temp: waits(lioscope::stats::WaitEvent::DirectPathReadTemp) - reads,
                waits: waited,
            });
        }
        all.push(runs);
    }
    Ok(all)
}

/// Prints rows/s of each engine's builds (median of the runs) and lioscope's ratios.
fn print_builds(rows: f64, engines: &[EngineBuilds]) {
    println!("\nIndex builds, rows/s = rows / median elapsed (runs: median [min..max] ms)");
    let median = |runs: &[f64]| spread(runs.iter().copied()).median;
    for e in engines {
        match &e.elapsed_ms {
            Err(why) => println!("  {:<11} not run: {why}", e.engine),
            Ok(builds) => {
                for ((index, _), runs) in customers::INDEXES.iter().zip(builds) {
                    let s = spread(runs.iter().copied());
                    println!(
                        "  {:<11} {index:<15} {:>6.2} M rows/s  ({:.0} ms [{:.0}..{:.0}], {} runs)",
                        e.engine,
                        rows / s.median / 1000.0,
                        s.median,
                        s.min,
                        s.max,
                        runs.len()
                    );
                }
                println!("  {:<11} ({})", "", e.settings);
            }
        }
    }
    let Some(Ok(ours)) = engines.first().map(|e| &e.elapsed_ms) else { return };
    for e in &engines[1..] {
        let Ok(theirs) = &e.elapsed_ms else { continue };
        for (((index, _), a), b) in customers::INDEXES.iter().zip(ours).zip(theirs) {
            println!(
                "  lioscope / {:<10} {index:<15} {:>5.2}x  (rows/s ratio: their median elapsed / ours)",
                e.engine,
                median(b) / median(a)
            );
        }
    }
}

/// Runs the benchmark and prints its report.
pub fn run(opts: &IndexBenchOptions) -> lioscope::Result<()> {
    let bench = &opts.bench;
    let (dir, _tmp) = sample::work_dir(bench.dir.as_deref(), "bench-index")?;
    std::fs::create_dir_all(&dir).map_err(|e| lioscope::Error::io("create", &dir, e))?;
    let db_dir = dir.join("lioscope");
    // The table (about 160 bytes of cache a row) and both indexes (about 20 bytes an
    // entry each), with slack.
    let cache = (bench.rows * 240).max(64 << 20) + (128 << 20);
    let options =
        DatabaseOptions { parameters: vec![("db_cache_size".into(), cache.to_string())], ..Default::default() };
    let db = Database::create(&db_dir, options)?;
    let session = db.session();
    session.execute(customers::CREATE_TABLE)?;
    println!(
        "lioscope bench index: {} rows, db_cache_size {} MiB, {} timed runs each, {} timed builds each, in {}",
        bench.rows,
        cache >> 20,
        bench.repeat,
        opts.build_repeat.max(1),
        dir.display()
    );
    let csv = dir.join("customers.csv");
    customers::write_csv_file(&csv, bench.rows)?;
    session.execute(&format!("COPY customers FROM '{}'", csv.display()))?;
    // Cached, as the peers' tables are when they build; and the load's redo and dirty
    // blocks written, so that no build waits for the log writer to catch up with the load
    // (`log buffer space`).
    session.execute(customers::count::FULL)?;
    session.execute("ALTER SYSTEM CHECKPOINT")?;
    if let Some(size) = &opts.sort_area_size {
        session.execute(&format!("ALTER SESSION SET sort_area_size = {size}"))?;
    }
    let sort_area = session
        .execute("SELECT value FROM v$parameter WHERE name = 'sort_area_size'")?
        .rows
        .first()
        .and_then(|r| r.first())
        .map(ToString::to_string)
        .unwrap_or_default();
    let rows = bench.rows as f64;
    let ours = lioscope_builds(&session, opts.build_repeat)?;
    let mut engines = vec![EngineBuilds {
        engine: "lioscope",
        settings: format!("sort_area_size {sort_area}"),
        elapsed_ms: Ok(ours.iter().map(|runs| runs.iter().map(|r| r.elapsed_ms).collect()).collect()),
    }];
    if !opts.no_peers {
        let indexes: Vec<(&str, &str)> = customers::INDEXES.to_vec();
        engines.push(EngineBuilds {
            engine: "PostgreSQL",
            settings: peers::PG_SETTINGS.into(),
            elapsed_ms: peers::postgres(&dir, &csv, &indexes, opts.build_repeat),
        });
        engines.push(EngineBuilds {
            engine: "SQLite",
            settings: peers::SQLITE_SETTINGS.into(),
            elapsed_ms: peers::sqlite(&dir, &csv, &indexes, opts.build_repeat),
        });
    }
    let _ = std::fs::remove_file(&csv);
    print_builds(rows, &engines);
    println!(
        "\n  lioscope's sorts, per build (first run): sorts (memory), sorts (disk), sorts (rows); temp write/read waits"
    );
    for ((index, _), runs) in customers::INDEXES.iter().zip(&ours) {
        let r = &runs[0];
        println!(
            "  {index:<15} {:>3} {:>3} {:>10}   {:>6} {:>6}   (CPU {:.0} ms of {:.0} ms elapsed)",
            r.sorts_memory,
            r.sorts_disk,
            r.sorts_rows,
            r.direct_path_write_temp,
            r.direct_path_read_temp,
            r.cpu_ms,
            r.elapsed_ms
        );
        for run in runs {
            let waits: Vec<String> = run.waits.iter().map(|(e, n, ms)| format!("{e} {n} waits {ms:.1} ms")).collect();
            println!("  {:<15} waited: {}", "", if waits.is_empty() { "nothing".into() } else { waits.join(", ") });
        }
    }
    session.execute("ANALYZE TABLE customers COMPUTE STATISTICS")?;
    let r = session.execute(
        "SELECT index_name, blevel, leaf_blocks, distinct_keys, clustering_factor FROM user_indexes ORDER BY index_name",
    )?;
    println!(
        "\n  {:<15} {:>6} {:>11} {:>13} {:>17}",
        "index", "blevel", "leaf blocks", "distinct keys", "clustering factor"
    );
    for row in &r.rows {
        let c: Vec<String> = row.iter().map(ToString::to_string).collect();
        println!("  {:<15} {:>6} {:>11} {:>13} {:>17}", c[0], c[1], c[2], c[3], c[4]);
    }
    let mut json_paths = Vec::new();
    for p in &QUERIES {
        let runs = bench.cached_runs(|| measure(&session, p.sql))?;
        let first = runs[0];
        println!("\nCached {}: {}  ({} runs, median [min..max])", p.name, p.sql, runs.len());
        println!("  rows counted         {:>12}", first.rows_counted);
        print_timing(rows, runs.iter().map(|r| r.elapsed_ms), runs.iter().map(|r| r.cpu_ms));
        println!(
            "  session logical reads{:>12}      ({:.4} per row)",
            first.logical_reads,
            first.logical_reads as f64 / rows
        );
        println!("  buffer is pinned count{:>11}", first.buffer_is_pinned);
        println!("  physical reads       {:>12}", first.physical_reads);
        json_paths.push(serde_json::json!({ "name": p.name, "sql": p.sql, "runs": runs }));
    }
    if let Some(path) = &bench.json {
        let json = serde_json::json!({
            "rows": bench.rows,
            "indexes": customers::INDEXES.iter().map(|(i, _)| *i).collect::<Vec<_>>(),
            "builds": ours,
            "engines": engines,
            "paths": json_paths,
        });
        crate::report::write_json(path, &json)?;
    }
    drop(session);
    db.close()
}
