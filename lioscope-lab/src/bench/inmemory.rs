//! `lioscope bench inmemory`: the column store's benchmark. Builds the customers table
//! (and with `--chained` a copy whose rows nearly all migrated), caches its blocks with a full
//! scan, then measures:
//!
//! - population: from `ALTER TABLE … INMEMORY` to the return of `POPULATE_WAIT`, for each
//!   `--workers` count (`inmemory_max_populate_servers`) under `MEMCOMPRESS FOR QUERY LOW`,
//!   and with one worker under `FOR QUERY HIGH` and `FOR CAPACITY HIGH`; the figures come
//!   from `v$im_segments` and the `v$sysstat` deltas over the population (workers are
//!   sessions of their own, so their statistics are not the benchmark session's);
//! - the fully populated `TABLE ACCESS INMEMORY FULL` of two counts, with min/max pruning
//!   off, timed as medians of `--repeat` runs after a warm one, beside the same counts
//!   from the row store (`NO_INMEMORY`).
//!
//! Every derived figure says how it was derived; `--json` writes them all.

use super::{BenchOptions, print_timing};
use crate::customers;
use crate::sample;
use crate::stats::{Spread, spread};
use lioscope::stats::Stat;
use lioscope::types::{Datum, Value};
use lioscope::{Database, DatabaseOptions, Session};
use std::collections::HashMap;
use std::time::Instant;

/// Options of the in-memory benchmark.
#[derive(Debug, Clone, clap::Args)]
pub struct InMemoryBenchOptions {
    #[command(flatten)]
    pub bench: BenchOptions,
    /// Also measure the population of a copy of customers whose rows nearly all migrated
    /// (short rows packed with PCTFREE 0, then an UPDATE that gives them their values).
    #[arg(long)]
    pub chained: bool,
    /// Population worker counts (`inmemory_max_populate_servers`) to measure.
    #[arg(long, value_delimiter = ',', default_values_t = vec![1, 2])]
    pub workers: Vec<u32>,
    /// Populations timed for each worker count and level (the median one is reported).
    #[arg(long, default_value_t = 3)]
    pub populate_repeat: usize,
}

/// The table measured.
pub(crate) const CUSTOMERS: &str = "CUSTOMERS";
/// Its copy whose rows migrated.
pub(crate) const CHAINED: &str = "CUSTOMERS_CHAINED";
/// The level the worker counts and the scans are measured at.
const QUERY_LOW: &str = "FOR QUERY LOW";
/// The other levels, populated by one worker each.
const OTHER_LEVELS: [&str; 2] = ["FOR QUERY HIGH", "FOR CAPACITY HIGH"];
/// Rows each UPDATE of the chained copy grows: its undo (about 70 bytes a row) stays
/// within [`CHAINED_UNDO`], so the undo tablespace need not grow during the build.
const UPDATE_CHUNK: u64 = 250_000;
/// `undo_tablespace_size` with `--chained` (undo grows past it if it must).
pub(crate) const CHAINED_UNDO: &str = "640M";
/// Seconds POPULATE_WAIT waits before it gives up.
const POPULATE_TIMEOUT_S: u32 = 3600;

/// One population, from `ALTER TABLE … INMEMORY` to the return of POPULATE_WAIT: the
/// run of median elapsed time among `--populate-repeat` runs.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Population {
    pub table: String,
    pub compression: &'static str,
    /// `inmemory_max_populate_servers`.
    pub workers: u32,
    pub elapsed_ms: f64,
    /// Every run's elapsed time, in the order they ran (this run's among them).
    pub elapsed_ms_runs: Vec<f64>,
    /// `v$im_segments` after it.
    pub segment: ImSegment,
    /// `v$sysstat` deltas over it: every session's, and only the workers did anything.
    pub cpu_cs: u64,
    pub populate_cus: u64,
    pub populate_rows: u64,
    pub bytes_from_storage: u64,
    pub continued_rows: u64,
    pub physical_reads: u64,
    /// Where the workers' time went (`IM populate time ...` deltas, microseconds), in
    /// [`PHASES`]' order.
    pub phases_us: [u64; 6],
    /// `IM populate CUs` of each worker session (`v$sesstat` delta), by program.
    pub cus_by_worker: Vec<(String, u64)>,
    pub rates: Rates,
}

/// The population phases' statistics, in [`Population::phases_us`]'s order: the
/// statistic, the lab's figure for it (milliseconds), and the phase's name.
pub const PHASES: [(Stat, &str, &str); 6] = [
    (Stat::ImPopulateReadTime, "read_ms", "reading blocks"),
    (Stat::ImPopulateDecodeTime, "decode_ms", "decoding rows"),
    (Stat::ImPopulateChainedTime, "chained_ms", "following chained rows"),
    (Stat::ImPopulateDictionaryTime, "dictionary_ms", "building dictionaries"),
    (Stat::ImPopulateEncodeTime, "encode_ms", "encoding"),
    (Stat::ImPopulateCompressTime, "compress_ms", "compressing"),
];

/// What a population's figures give, each derived as its field says.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Rates {
    /// `v$im_segments` BYTES / 10^6 / elapsed s.
    pub mb_per_s: f64,
    /// `mb_per_s` / workers.
    pub mb_per_s_per_worker: f64,
    /// POPULATED_ROWS / elapsed s.
    pub rows_per_s: f64,
    /// `rows_per_s` / workers.
    pub rows_per_s_per_worker: f64,
    /// `IM populate CPU time` delta / 100.
    pub cpu_s: f64,
    /// BYTES / INMEMORY_SIZE.
    pub compression_ratio: f64,
}

impl Rates {
    fn of(segment: &ImSegment, elapsed_ms: f64, workers: u32, cpu_cs: u64) -> Rates {
        let (seconds, n) = (elapsed_ms / 1000.0, f64::from(workers.max(1)));
        let mb_per_s = mb(segment.bytes) / seconds;
        let rows_per_s = segment.populated_rows as f64 / seconds;
        Rates {
            mb_per_s,
            mb_per_s_per_worker: mb_per_s / n,
            rows_per_s,
            rows_per_s_per_worker: rows_per_s / n,
            cpu_s: cpu_cs as f64 / 100.0,
            compression_ratio: segment.bytes as f64 / segment.inmemory_size.max(1) as f64,
        }
    }
}

/// A row of `v$im_segments`.
#[derive(Debug, Clone, serde::Serialize)]
pub struct ImSegment {
    pub status: String,
    /// The table's blocks below the high-water mark × block size.
    pub bytes: u64,
    pub inmemory_size: u64,
    pub cus: u64,
    pub populated_rows: u64,
    pub journaled_blocks: u64,
}

/// One measured run of a scan; the statistics are the benchmark session's deltas.
#[derive(Debug, Clone, Copy, serde::Serialize)]
struct ScanRun {
    elapsed_ms: f64,
    cpu_ms: f64,
    rows_counted: u64,
    consistent_gets: u64,
    physical_reads: u64,
    im_scan_cus: u64,
    im_scan_cus_pruned: u64,
    im_scan_rows: u64,
    im_scan_rows_valid: u64,
    im_scan_blocks_from_cache: u64,
}

/// A column of `v$im_column_level`.
#[derive(Debug, Clone, serde::Serialize)]
struct ImColumn {
    encodings: String,
    inmemory_size: u64,
    nulls: u64,
}

/// One scan query: its in-memory form, the row-store form, and which column units its
/// in-memory form reads.
struct ScanQuery {
    name: &'static str,
    sql: &'static str,
    row_store_sql: &'static str,
    /// A column whose whole unit the predicate reads, if the query has a predicate.
    predicate_column: Option<&'static str>,
}

const SCANS: [ScanQuery; 2] = [
    ScanQuery {
        name: "count with predicate",
        sql: customers::count::INMEMORY,
        row_store_sql: customers::count::FULL,
        predicate_column: Some("CUST_ID"),
    },
    ScanQuery {
        name: "count without predicate",
        sql: customers::count::INMEMORY_NO_PREDICATE,
        row_store_sql: customers::count::FULL_NO_PREDICATE,
        predicate_column: None,
    },
];

/// The column COUNT counts: only its NULL bitmap is read (a unit without NULLs has none).
const COUNTED_COLUMN: &str = "CUST_VALID";

/// Every population the benchmark times.
#[derive(Debug)]
struct Populations {
    /// FOR QUERY LOW, one per worker count; the last leaves the table populated.
    by_workers: Vec<Population>,
    /// The other levels, one worker each.
    levels: Vec<Population>,
    /// The migrated copy, one per worker count (with `--chained`).
    chained: Vec<Population>,
}

/// In-memory runs and row-store runs of one scan query.
type ScanRuns = (Vec<ScanRun>, Vec<ScanRun>);

/// Runs the benchmark and prints its report.
pub fn run(opts: &InMemoryBenchOptions) -> lioscope::Result<()> {
    let bench = &opts.bench;
    let (dir, _tmp) = sample::work_dir(bench.dir.as_deref(), "bench-inmemory")?;
    let cache = cache_bytes(opts);
    let mut parameters = vec![("db_cache_size".to_owned(), cache.to_string())];
    if opts.chained {
        parameters.push(("undo_tablespace_size".into(), CHAINED_UNDO.into()));
    }
    let db = Database::create(&dir, DatabaseOptions { parameters, ..Default::default() })?;
    let session = db.session();
    session.execute(customers::CREATE_TABLE)?;
    customers::load(&session, "customers", bench.rows)?;
    let migrated = if opts.chained { Some(build_chained(&session, bench.rows)?) } else { None };
    // Every block in the cache before population reads them.
    session.execute(SCANS[1].row_store_sql)?;
    let table_bytes = segment_bytes(&session, CUSTOMERS)? + segment_bytes(&session, CHAINED)?;
    let inmemory_size = (table_bytes * 3 / 4).max(256 << 20).div_ceil(1 << 20) << 20;
    session.execute(&format!("ALTER SYSTEM SET inmemory_size = {}M", inmemory_size >> 20))?;
    let pre_paged = pre_page_area(&session)?;
    println!(
        "lioscope bench inmemory: {} rows, db_cache_size {} MiB, inmemory_size {} MiB (3/4 of the tables' segment bytes, at least 256 MiB; its In-Memory Area pre-paged in {:.1} s before any timing), workers {:?}, {} timed runs of each scan, in {}",
        bench.rows,
        cache >> 20,
        inmemory_size >> 20,
        pre_paged.as_secs_f64(),
        opts.workers,
        bench.repeat.max(1),
        dir.display()
    );
    let populations = populations(&session, opts, migrated.is_some())?;
    let columns = im_columns(&session)?;
    let scans = SCANS
        .iter()
        .map(|q| {
            Ok((
                bench.cached_runs(|| measure(&session, q.sql))?,
                bench.cached_runs(|| measure(&session, q.row_store_sql))?,
            ))
        })
        .collect::<lioscope::Result<Vec<ScanRuns>>>()?;

    let rows = bench.rows as f64;
    report_population(&populations.by_workers, CUSTOMERS, rows);
    report_levels(&populations.by_workers, &populations.levels, rows);
    if let Some(migrated) = migrated {
        report_chained(&populations.chained, migrated, rows);
    }
    for (q, (in_memory, row_store)) in SCANS.iter().zip(&scans) {
        report_scan(q, in_memory, row_store, &columns, rows);
    }
    if let Some(path) = &bench.json {
        let json = serde_json::json!({
            "rows": bench.rows, "db_cache_size": cache, "inmemory_size": inmemory_size,
            "population": populations.by_workers, "levels": populations.levels,
            "chained": migrated.map(|m| serde_json::json!({"migrated_rows": m, "population": populations.chained})),
            "columns": columns,
            "scans": SCANS.iter().zip(&scans).map(|(q, (im, rs))| scan_json(q, im, rs, &columns, rows)).collect::<Vec<_>>(),
        });
        crate::report::write_json(path, &json)?;
    }
    drop(session);
    db.close()
}

/// Times every population: the other levels first, then FOR QUERY LOW by each worker
/// count (leaving customers populated FOR QUERY LOW for the scans), then the migrated
/// copy by each worker count (taken out of the column store after).
fn populations(session: &Session, opts: &InMemoryBenchOptions, chained: bool) -> lioscope::Result<Populations> {
    let repeat = opts.populate_repeat.max(1);
    let levels = OTHER_LEVELS
        .iter()
        .map(|level| populate_median(session, CUSTOMERS, level, 1, repeat))
        .collect::<lioscope::Result<_>>()?;
    let workers = if opts.workers.is_empty() { vec![1] } else { opts.workers.clone() };
    let by_workers = workers
        .iter()
        .map(|&n| populate_median(session, CUSTOMERS, QUERY_LOW, n, repeat))
        .collect::<lioscope::Result<_>>()?;
    let mut on_chained = Vec::new();
    if chained {
        on_chained = workers
            .iter()
            .map(|&n| populate_median(session, CHAINED, QUERY_LOW, n, repeat))
            .collect::<lioscope::Result<_>>()?;
        session.execute(&format!("ALTER TABLE {CHAINED} NO INMEMORY"))?;
    }
    Ok(Populations { by_workers, levels, chained: on_chained })
}

/// Enough cache for every block and undo block the benchmark makes, as `bench scan`
/// sizes it: about 160 bytes of cache a customers row (blocks 90 % full), with slack.
/// The migrated copy takes about three times that: its rows' heads, the rows moved
/// into new blocks, and the undo of the UPDATE that moved them.
fn cache_bytes(opts: &InMemoryBenchOptions) -> u64 {
    let rows = opts.bench.rows;
    let chained = if opts.chained { rows * 600 } else { 0 };
    (rows * 240).max(64 << 20) + chained + (64 << 20)
}

/// The customers values of every column but `cust_id`, as functions of `cust_id`: the
/// expressions of [`customers::insert_select`] with `LEVEL` read as `cust_id`.
const CUSTOMERS_VALUES: &str = "cust_first_name = 'Firstname-' || MOD(cust_id, 1000),
    cust_last_name = 'Lastname-of-the-customer-' || ORA_HASH(cust_id, 99999, 1),
    cust_gender = CASE WHEN MOD(cust_id, 2) = 0 THEN 'M' ELSE 'F' END,
    cust_year_of_birth = 1920 + MOD(cust_id, 80),
    cust_postal_code = LPAD(ORA_HASH(cust_id, 99999, 2), 5, '0'),
    cust_city = 'Customer City of ' || ORA_HASH(cust_id, 619, 3),
    cust_valid = CASE WHEN MOD(cust_id, 10) = 0 THEN 'I' ELSE 'A' END,
    cust_credit_limit = 1000 * (1 + MOD(cust_id, 15)),
    cust_email = 'firstname.lastname' || cust_id || '@company' || MOD(cust_id, 100) || '.example.com'";

/// A row-store query whose one row sums what every column holds: equal for two tables
/// holding the same customers (and it reads every piece of every row).
const FINGERPRINT: &str = "SELECT /*+ NO_INMEMORY(c) */ COUNT(cust_email), SUM(cust_id), \
    SUM(LENGTH(cust_first_name) + LENGTH(cust_last_name) + LENGTH(cust_postal_code) + LENGTH(cust_city) + LENGTH(cust_email)), \
    SUM(cust_year_of_birth + cust_credit_limit), SUM(CASE WHEN cust_valid = 'I' THEN 1 ELSE 0 END), \
    SUM(CASE WHEN cust_gender = 'M' THEN 1 ELSE 0 END) FROM";

/// Creates the migrated copy of customers: skeleton rows first (`cust_id`, the names'
/// prefixes, the rest NULL: about 30 bytes, more than the 11-byte forwarding piece a
/// migration leaves behind, which a full block must find room for), packed into blocks
/// with PCTFREE 0; then an UPDATE per [`UPDATE_CHUNK`] rows gives every row its customers
/// values, so each row grows by about 120 bytes. A row that no longer fits migrates; the
/// room its skeleton leaves stays its transaction's until it ends (`txn::change`), so
/// the rows after it in the block migrate too: nearly every row migrates (all but those
/// of a last block with room to spare).
/// The copy is checked to hold exactly the rows of customers ([`FINGERPRINT`]); the
/// check follows every piece, so the copy ends up cached, and its `table fetch continued
/// row` is the number of rows that migrated, which is returned.
pub(crate) fn build_chained(session: &Session, rows: u64) -> lioscope::Result<u64> {
    let create = customers::CREATE_TABLE.replacen("customers", CHAINED, 1);
    session.execute(&format!("{create} PCTFREE 0"))?;
    session.execute(&format!(
        "INSERT INTO {CHAINED} (cust_id, cust_first_name, cust_last_name) SELECT LEVEL, 'Firstname-', 'Lastname-' FROM dual CONNECT BY LEVEL <= {rows}"
    ))?;
    for low in (0..rows).step_by(UPDATE_CHUNK as usize) {
        session.execute(&format!(
            "UPDATE {CHAINED} SET {CUSTOMERS_VALUES} WHERE cust_id > {low} AND cust_id <= {}",
            low + UPDATE_CHUNK
        ))?;
    }
    let copy = sample::measure(session, &format!("{FINGERPRINT} {CHAINED} c"))?;
    let original = session.execute(&format!("{FINGERPRINT} customers c"))?;
    if copy.result.rows != original.rows {
        return Err(lioscope::Error::InvalidValue {
            context: "bench inmemory".into(),
            message: format!(
                "{CHAINED} does not hold the rows of customers: {:?} against {:?}",
                copy.result.rows, original.rows
            ),
        });
    }
    Ok(copy.delta(Stat::TableFetchContinuedRow))
}

/// Waits until the In-Memory Area's pages are populated (`pre_page_sga`), so that the
/// pre-pager does not share the CPUs with a timed population; returns how long it took.
pub(crate) fn pre_page_area(session: &Session) -> lioscope::Result<std::time::Duration> {
    let started = std::time::Instant::now();
    loop {
        let r = session.execute("SELECT pre_page_status FROM v$inmemory_area")?;
        if r.rows.first().is_none_or(|row| row[0].to_string() != "RUNNING") {
            return Ok(started.elapsed());
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// Bytes of `table`'s segment (`user_segments`), 0 if it has none.
pub(crate) fn segment_bytes(session: &Session, table: &str) -> lioscope::Result<u64> {
    let r = session.execute(&format!("SELECT bytes FROM user_segments WHERE segment_name = '{table}'"))?;
    r.rows.first().map_or(Ok(0), |row| whole(&row[0], "user_segments BYTES"))
}

/// A whole number from a result, or an error naming what it was meant to be.
fn whole(value: &Value, what: &str) -> lioscope::Result<u64> {
    match value {
        Datum::Int(n) if *n >= 0 => Ok(*n as u64),
        other => Err(lioscope::Error::InvalidValue {
            context: "bench inmemory".into(),
            message: format!("{what} is {other}, not a whole number"),
        }),
    }
}

/// Marks `table` NO INMEMORY (dropping its units), sets the worker count, then times
/// `ALTER TABLE … INMEMORY MEMCOMPRESS compression PRIORITY HIGH` through the return of
/// POPULATE_WAIT; an error unless POPULATE_WAIT reports success.
/// `repeat` populations of `table`; the one of median elapsed time (the later of the two
/// middle ones for an even count), with every run's elapsed time.
fn populate_median(
    session: &Session,
    table: &str,
    compression: &'static str,
    workers: u32,
    repeat: usize,
) -> lioscope::Result<Population> {
    let mut runs =
        (0..repeat).map(|_| populate(session, table, compression, workers)).collect::<lioscope::Result<Vec<_>>>()?;
    let elapsed: Vec<f64> = runs.iter().map(|p| p.elapsed_ms).collect();
    runs.sort_by(|a, b| a.elapsed_ms.total_cmp(&b.elapsed_ms));
    let mut median = runs.swap_remove(runs.len() / 2);
    median.elapsed_ms_runs = elapsed;
    Ok(median)
}

pub(crate) fn populate(
    session: &Session,
    table: &str,
    compression: &'static str,
    workers: u32,
) -> lioscope::Result<Population> {
    session.execute(&format!("ALTER SYSTEM SET inmemory_max_populate_servers = {workers}"))?;
    session.execute(&format!("ALTER TABLE {table} NO INMEMORY"))?;
    let (system, by_worker) = (sysstat(session)?, worker_stat(session, Stat::ImPopulateCus)?);
    let started = Instant::now();
    session.execute(&format!("ALTER TABLE {table} INMEMORY MEMCOMPRESS {compression} PRIORITY HIGH"))?;
    let wait =
        session.execute(&format!("EXEC DBMS_INMEMORY_ADMIN.POPULATE_WAIT('HIGH', 100, {POPULATE_TIMEOUT_S})"))?;
    let elapsed_ms = started.elapsed().as_secs_f64() * 1000.0;
    let code = wait.rows.first().map(|r| r[0].to_string());
    if code.as_deref() != Some("0") {
        let meaning = wait.rows.first().map_or(String::new(), |r| r[1].to_string());
        return Err(lioscope::Error::InvalidValue {
            context: format!("bench inmemory: population of {table} {compression} by {workers} workers"),
            message: format!("POPULATE_WAIT returned {} {meaning}", code.unwrap_or_default()),
        });
    }
    let delta = |stat: Stat, after: &HashMap<String, u64>| after[stat.name()] - system[stat.name()];
    let after = sysstat(session)?;
    let after_by_worker = worker_stat(session, Stat::ImPopulateCus)?;
    let cus_by_worker = after_by_worker
        .iter()
        .map(|(sid, (program, cus))| (program.clone(), cus - by_worker.get(sid).map_or(0, |(_, before)| *before)))
        .collect();
    let segment = im_segment(session, table)?;
    let cpu_cs = delta(Stat::ImPopulateCpuTime, &after);
    Ok(Population {
        table: table.to_owned(),
        compression,
        workers,
        elapsed_ms,
        elapsed_ms_runs: vec![elapsed_ms],
        rates: Rates::of(&segment, elapsed_ms, workers, cpu_cs),
        segment,
        cpu_cs,
        populate_cus: delta(Stat::ImPopulateCus, &after),
        populate_rows: delta(Stat::ImPopulateRows, &after),
        bytes_from_storage: delta(Stat::ImPopulateBytesFromStorage, &after),
        continued_rows: delta(Stat::TableFetchContinuedRow, &after),
        physical_reads: delta(Stat::PhysicalReads, &after),
        phases_us: PHASES.map(|(stat, _, _)| delta(stat, &after)),
        cus_by_worker,
    })
}

/// Every statistic of `v$sysstat` by name.
fn sysstat(session: &Session) -> lioscope::Result<HashMap<String, u64>> {
    let r = session.execute("SELECT name, value FROM v$sysstat")?;
    r.rows.iter().map(|row| Ok((row[0].to_string(), whole(&row[1], "v$sysstat VALUE")?))).collect()
}

/// `stat` of each population worker session (`v$session` PROGRAM W000, W001, …), by
/// sid, with its program, sorted by sid.
fn worker_stat(session: &Session, stat: Stat) -> lioscope::Result<std::collections::BTreeMap<u64, (String, u64)>> {
    let sessions = session.execute("SELECT sid, program FROM v$session")?;
    let mut workers = std::collections::BTreeMap::new();
    for row in &sessions.rows {
        let program = row[1].to_string();
        if program.starts_with('W') {
            workers.insert(whole(&row[0], "v$session SID")?, (program, 0));
        }
    }
    let values = session.execute(&format!("SELECT sid, value FROM v$sesstat WHERE name = '{}'", stat.name()))?;
    for row in &values.rows {
        if let Some((_, value)) = workers.get_mut(&whole(&row[0], "v$sesstat SID")?) {
            *value = whole(&row[1], "v$sesstat VALUE")?;
        }
    }
    Ok(workers)
}

/// `table`'s row of `v$im_segments`.
fn im_segment(session: &Session, table: &str) -> lioscope::Result<ImSegment> {
    let r = session.execute(&format!(
        "SELECT populate_status, bytes, inmemory_size, cus, populated_rows, journaled_blocks FROM v$im_segments WHERE segment_name = '{table}'"
    ))?;
    let Some(row) = r.rows.first() else {
        return Err(lioscope::Error::InvalidValue {
            context: "bench inmemory".into(),
            message: format!("{table} has no row in v$im_segments after POPULATE_WAIT succeeded"),
        });
    };
    Ok(ImSegment {
        status: row[0].to_string(),
        bytes: whole(&row[1], "v$im_segments BYTES")?,
        inmemory_size: whole(&row[2], "v$im_segments INMEMORY_SIZE")?,
        cus: whole(&row[3], "v$im_segments CUS")?,
        populated_rows: whole(&row[4], "v$im_segments POPULATED_ROWS")?,
        journaled_blocks: whole(&row[5], "v$im_segments JOURNALED_BLOCKS")?,
    })
}

/// The customers columns of `v$im_column_level`, by column name.
fn im_columns(session: &Session) -> lioscope::Result<std::collections::BTreeMap<String, ImColumn>> {
    let r = session.execute(&format!(
        "SELECT column_name, encodings, inmemory_size, nulls FROM v$im_column_level WHERE table_name = '{CUSTOMERS}'"
    ))?;
    r.rows
        .iter()
        .map(|row| {
            let column = ImColumn {
                encodings: row[1].to_string(),
                inmemory_size: whole(&row[2], "v$im_column_level INMEMORY_SIZE")?,
                nulls: whole(&row[3], "v$im_column_level NULLS")?,
            };
            Ok((row[0].to_string(), column))
        })
        .collect()
}

fn measure(session: &Session, sql: &str) -> lioscope::Result<ScanRun> {
    let m = sample::measure(session, sql)?;
    Ok(ScanRun {
        elapsed_ms: m.elapsed_ms,
        cpu_ms: m.cpu_ms,
        rows_counted: m.rows(),
        consistent_gets: m.delta(Stat::ConsistentGets),
        physical_reads: m.delta(Stat::PhysicalReads),
        im_scan_cus: m.delta(Stat::ImScanCus),
        im_scan_cus_pruned: m.delta(Stat::ImScanCusPruned),
        im_scan_rows: m.delta(Stat::ImScanRows),
        im_scan_rows_valid: m.delta(Stat::ImScanRowsValid),
        im_scan_blocks_from_cache: m.delta(Stat::ImScanBlocksCache),
    })
}

/// Megabytes (10^6 bytes) of `bytes`.
fn mb(bytes: u64) -> f64 {
    bytes as f64 / 1e6
}

fn report_population(runs: &[Population], table: &str, rows: f64) {
    println!(
        "\nPopulation of {table} MEMCOMPRESS {QUERY_LOW} PRIORITY HIGH, the median of {} runs per worker count (each from NO \
         INMEMORY). The table's blocks are in the buffer cache (a full scan read them first). elapsed: from ALTER TABLE … \
         INMEMORY to the return of POPULATE_WAIT.",
        runs.first().map_or(0, |p| p.elapsed_ms_runs.len())
    );
    println!(
        "  {:>7} {:>11} {:>17} {:>9} {:>11} {:>11} {:>13} {:>12} {:>11} {:>11} {:>6}",
        "workers",
        "elapsed ms",
        "[min..max] ms",
        "MB/s",
        "MB/s/wkr",
        "rows/s",
        "rows/s/wkr",
        "CPU s (all)",
        "table MB",
        "IM MB",
        "ratio"
    );
    for p in runs {
        let r = &p.rates;
        let runs = spread(p.elapsed_ms_runs.iter().copied());
        println!(
            "  {:>7} {:>11.0} {:>17} {:>9.1} {:>11.1} {:>11.0} {:>13.0} {:>12.2} {:>11.1} {:>11.1} {:>5.2}×",
            p.workers,
            p.elapsed_ms,
            format!("[{:.0}..{:.0}]", runs.min, runs.max),
            r.mb_per_s,
            r.mb_per_s_per_worker,
            r.rows_per_s,
            r.rows_per_s_per_worker,
            r.cpu_s,
            mb(p.segment.bytes),
            mb(p.segment.inmemory_size),
            r.compression_ratio
        );
    }
    println!(
        "  MB/s = v$im_segments BYTES (blocks below the HWM × block size) / 10^6 / elapsed s; rows/s = POPULATED_ROWS / \
         elapsed s (of the median run); /wkr = divided by the worker count; CPU = v$sysstat 'IM populate CPU time' delta \
         (centiseconds, all workers); IM MB = v$im_segments INMEMORY_SIZE; ratio = BYTES / INMEMORY_SIZE"
    );
    for p in runs {
        check_line(p, rows);
    }
}

/// What the statistics say about one population: whether it did what it should.
fn check_line(p: &Population, rows: f64) {
    let by_worker: Vec<String> = p.cus_by_worker.iter().map(|(w, c)| format!("{w} {c}")).collect();
    println!(
        "  {} worker(s): {} {}, POPULATED_ROWS {} of {rows}, CUs {}, v$sysstat deltas: IM populate CUs {}, rows {}, bytes \
         from storage {}, physical reads {}, table fetch continued row {}; IM populate CUs by worker (v$sesstat): {}",
        p.workers,
        p.table,
        p.segment.status,
        p.segment.populated_rows,
        p.segment.cus,
        p.populate_cus,
        p.populate_rows,
        p.bytes_from_storage,
        p.physical_reads,
        p.continued_rows,
        if by_worker.is_empty() { "none".to_owned() } else { by_worker.join(", ") }
    );
}

fn report_levels(by_workers: &[Population], levels: &[Population], rows: f64) {
    println!(
        "\nMEMCOMPRESS levels, one worker, the median run of each (the {QUERY_LOW} line is the 1-worker one above, if one \
         was asked for)"
    );
    println!(
        "  {:<18} {:>11} {:>11} {:>7} {:>11} {:>17} {:>9} {:>11} {:>12}",
        "level", "table MB", "IM MB", "ratio", "elapsed ms", "[min..max] ms", "MB/s", "rows/s", "CPU s"
    );
    let low = by_workers.iter().find(|p| p.workers == 1);
    for p in low.into_iter().chain(levels) {
        let runs = spread(p.elapsed_ms_runs.iter().copied());
        println!(
            "  {:<18} {:>11.1} {:>11.1} {:>6.2}× {:>11.0} {:>17} {:>9.1} {:>11.0} {:>12.2}",
            p.compression,
            mb(p.segment.bytes),
            mb(p.segment.inmemory_size),
            p.rates.compression_ratio,
            p.elapsed_ms,
            format!("[{:.0}..{:.0}]", runs.min, runs.max),
            p.rates.mb_per_s,
            p.rates.rows_per_s,
            p.rates.cpu_s
        );
    }
    println!(
        "  (ratio = BYTES / INMEMORY_SIZE; MB/s = BYTES / 10^6 / elapsed s; rows/s = POPULATED_ROWS / elapsed s; CPU = \
         'IM populate CPU time' delta)"
    );
    for p in levels {
        check_line(p, rows);
    }
}

fn report_chained(runs: &[Population], migrated: u64, rows: f64) {
    println!(
        "\nMigrated rows: {CHAINED}, the customers rows stored as short skeletons in PCTFREE 0 blocks, then given their \
         values by UPDATE: {migrated} of {rows} rows migrated ('table fetch continued row' of a row-store scan of every \
         column, which also checked that the copy holds the customers rows)"
    );
    report_population(runs, CHAINED, rows);
    for p in runs {
        println!(
            "  {} worker(s): table fetch continued row by the workers (v$sysstat delta) {} = {:.3} per row",
            p.workers,
            p.continued_rows,
            p.continued_rows as f64 / rows
        );
    }
}

/// Bytes of column units a scan reads, and how that was counted.
fn bytes_scanned(q: &ScanQuery, columns: &std::collections::BTreeMap<String, ImColumn>, rows: f64) -> (u64, String) {
    let mut parts = Vec::new();
    let mut bytes = 0;
    if let Some(c) = q.predicate_column.and_then(|name| columns.get(name).map(|c| (name, c))) {
        bytes += c.1.inmemory_size;
        parts.push(format!(
            "{} units {} B (v$im_column_level INMEMORY_SIZE: codes, domain, NULL bitmap; {})",
            c.0, c.1.inmemory_size, c.1.encodings
        ));
    }
    match columns.get(COUNTED_COLUMN) {
        Some(c) if c.nulls > 0 => {
            // One bit a row (in whole 64-bit words per unit): about rows / 8.
            let bitmap = (rows / 8.0).ceil() as u64;
            bytes += bitmap;
            parts.push(format!("{COUNTED_COLUMN} NULL bitmap ~{bitmap} B"));
        }
        _ => parts.push(format!(
            "{COUNTED_COLUMN} NULL bitmap 0 B (NULLS = 0: no bitmap; COUNT is a popcount of the kept rows)"
        )),
    }
    (bytes, parts.join(" + "))
}

fn report_scan(
    q: &ScanQuery,
    in_memory: &[ScanRun],
    row_store: &[ScanRun],
    columns: &std::collections::BTreeMap<String, ImColumn>,
    rows: f64,
) {
    let first = in_memory[0];
    println!(
        "\nIn-memory scan, {QUERY_LOW}, fully populated, {}: {}  ({} runs after a warm one, median [min..max])",
        q.name,
        q.sql,
        in_memory.len()
    );
    println!("  rows counted         {:>12}", first.rows_counted);
    print_timing(rows, in_memory.iter().map(|r| r.elapsed_ms), in_memory.iter().map(|r| r.cpu_ms));
    let (bytes, how) = bytes_scanned(q, columns, rows);
    let elapsed = spread(in_memory.iter().map(|r| r.elapsed_ms));
    println!(
        "  bytes scanned/row    {:>12.3}      (bytes of the column units the query covers / rows; counted: {how})",
        bytes as f64 / rows
    );
    println!(
        "  GB/s                 {:>12.3}      (bytes scanned / 10^9 / median elapsed s)",
        bytes as f64 / 1e9 / (elapsed.median / 1000.0)
    );
    println!(
        "  one run's deltas: IM scan CUs {}, IM scan CUs pruned {}, IM scan rows {}, IM scan rows valid {}, IM scan blocks from cache {}, consistent gets {}, physical reads {}",
        first.im_scan_cus,
        first.im_scan_cus_pruned,
        first.im_scan_rows,
        first.im_scan_rows_valid,
        first.im_scan_blocks_from_cache,
        first.consistent_gets,
        first.physical_reads
    );
    let rs: Spread = spread(row_store.iter().map(|r| r.elapsed_ms));
    println!(
        "  row store, /*+ NO_INMEMORY(c) */: {:.1} ms [{:.1} .. {:.1}], {:.2} M rows/s, {:.2} ns/row, {} consistent gets, {} rows counted ({} runs, median [min..max])",
        rs.median,
        rs.min,
        rs.max,
        rows / rs.median / 1000.0,
        rs.median * 1e6 / rows,
        row_store[0].consistent_gets,
        row_store[0].rows_counted,
        row_store.len()
    );
}

fn scan_json(
    q: &ScanQuery,
    in_memory: &[ScanRun],
    row_store: &[ScanRun],
    columns: &std::collections::BTreeMap<String, ImColumn>,
    rows: f64,
) -> serde_json::Value {
    let (bytes, how) = bytes_scanned(q, columns, rows);
    let elapsed = spread(in_memory.iter().map(|r| r.elapsed_ms));
    serde_json::json!({
        "name": q.name, "sql": q.sql, "row_store_sql": q.row_store_sql,
        "in_memory_runs": in_memory, "row_store_runs": row_store,
        "elapsed_ms": elapsed, "rows_per_s": rows / (elapsed.median / 1000.0), "ns_per_row": elapsed.median * 1e6 / rows,
        "bytes_scanned": bytes, "bytes_scanned_counted": how, "bytes_per_row": bytes as f64 / rows,
        "gb_per_s": bytes as f64 / 1e9 / (elapsed.median / 1000.0),
    })
}
