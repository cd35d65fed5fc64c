//! `lioscope bench index`: the index benchmark. Builds the customers table, times the
//! builds of an index on `cust_id` (in insert order: a good clustering factor) and on
//! `cust_postal_code` (random with respect to it: a bad one), analyzes, then measures the
//! fully cached `COUNT(cust_valid)` through every row by each index, as the source
//! experiment does: rows/s, ns/row, logical reads per row and `buffer is pinned count`;
//! and for comparison the same rows counted from the index alone and by a full scan.
//! Medians of `--repeat` runs with min and max; each derived figure says how it was
//! derived.

use super::{BenchOptions, print_timing};
use crate::customers;
use crate::sample;
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

/// Runs the benchmark and prints its report.
pub fn run(opts: &BenchOptions) -> lioscope::Result<()> {
    let (dir, _tmp) = sample::work_dir(opts.dir.as_deref(), "bench-index")?;
    // The table (about 160 bytes of cache a row) and both indexes (about 20 bytes an
    // entry each), with slack.
    let cache = (opts.rows * 240).max(64 << 20) + (128 << 20);
    let options =
        DatabaseOptions { parameters: vec![("db_cache_size".into(), cache.to_string())], ..Default::default() };
    let db = Database::create(&dir, options)?;
    let session = db.session();
    session.execute(customers::CREATE_TABLE)?;
    println!(
        "lioscope bench index: {} rows, db_cache_size {} MiB, {} timed runs each, in {}",
        opts.rows,
        cache >> 20,
        opts.repeat,
        dir.display()
    );
    customers::load(&session, "customers", opts.rows)?;
    let rows = opts.rows as f64;
    let mut builds = Vec::new();
    for (index, create) in customers::INDEXES {
        let m = sample::measure(&session, create)?;
        builds.push((index, m.elapsed_ms, m.cpu_ms));
    }
    session.execute("ANALYZE TABLE customers COMPUTE STATISTICS")?;
    println!("\nIndex builds (rows/s = rows / elapsed)");
    for (index, elapsed, cpu) in &builds {
        println!(
            "  {index:<15} {:>12.0} rows/s  ({elapsed:.0} ms elapsed, {cpu:.0} ms CPU)",
            rows / (elapsed / 1000.0)
        );
    }
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
        let runs = opts.cached_runs(|| measure(&session, p.sql))?;
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
    if let Some(path) = &opts.json {
        let json = serde_json::json!({
            "rows": opts.rows,
            "builds": builds.iter().map(|(i, e, c)| serde_json::json!({"index": i, "elapsed_ms": e, "cpu_ms": c})).collect::<Vec<_>>(),
            "paths": json_paths,
        });
        crate::report::write_json(path, &json)?;
    }
    drop(session);
    db.close()
}
