//! `lioscope bench tpch`: TPC-H's 22 queries at a scale factor, on lioscope and, with
//! `--peers`, on PostgreSQL, SQLite and DuckDB, on the same rows in the same run.
//!
//! The rows are made in-process ([`crate::tpch::data`]) and written once as `.tbl` files
//! every engine loads. lioscope creates the tables, loads them with COPY, adds their
//! primary keys (each enforced by a unique index) and foreign keys, and gathers
//! statistics; `--hcc-level` stores each table as HCC compression units (a CREATE TABLE
//! ... COMPRESS FOR level AS SELECT from the loaded rows) before the keys are added, and
//! `--inmemory` populates every table into the column store (MEMCOMPRESS FOR QUERY LOW)
//! and waits for it. The buffer cache holds every table and index, so the queries run
//! cached after their warm run.
//!
//! Each query runs once to warm, then `--repeat` times, timed around the statement and
//! the fetch of all its rows; lioscope's figures per query are its elapsed and CPU time
//! (medians), and the logical reads, physical reads and temporary blocks (direct reads
//! and writes) of its first timed run. Then it runs once more with row-source statistics
//! (`EXPLAIN ANALYZE`), untimed, for the plan each report shows. The peers are in
//! [`super::tpch_peers`]; each query's answer in each peer is compared with lioscope's
//! ([`crate::tpch::answers`]), and so are lioscope's with stored answers
//! (`--expected`). A query that fails or differs is reported, and the command ends with
//! an error naming it after writing its report.

use super::tpch_peers::{self, PeerRun, PeerSettings};
use crate::report::{Chart, Html, Series};
use crate::sample;
use crate::stats::spread;
use crate::tpch::answers::{self, Answer, Cell, StoredAnswers};
use crate::tpch::queries::{Item, ParameterSets, QUERIES};
use crate::tpch::schema::{TABLES, Table};
use crate::tpch::{Dialect, data};
use lioscope::stats::Stat;
use lioscope::{Database, DatabaseOptions, Error, Result, Session};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Options of the TPC-H benchmark.
#[derive(Debug, Clone, clap::Args)]
pub struct TpchBenchOptions {
    /// The scale factor (1: 6 M lineitems, about 1 GB of rows).
    #[arg(long, default_value_t = 1.0)]
    pub sf: f64,
    /// Populate every table into the column store (MEMCOMPRESS FOR QUERY LOW) first.
    #[arg(long)]
    pub inmemory: bool,
    /// Store every table as HCC compression units at this level (QUERY LOW, QUERY HIGH,
    /// ARCHIVE LOW, ARCHIVE HIGH).
    #[arg(long)]
    pub hcc_level: Option<String>,
    /// Run the same queries in PostgreSQL, SQLite and DuckDB too (one thread each).
    #[arg(long)]
    pub peers: bool,
    /// With --peers: which of them (postgres, sqlite, duckdb).
    #[arg(long, value_delimiter = ',', default_values_t = vec!["postgres".to_owned(), "sqlite".into(), "duckdb".into()])]
    pub peer: Vec<String>,
    /// Seconds a peer's query may run before it is cancelled (reported as at least that).
    #[arg(long, default_value_t = 300)]
    pub peer_timeout: u64,
    /// Timed runs of each query after its warm run (the median is reported).
    #[arg(long, default_value_t = 1)]
    pub repeat: usize,
    /// Which parameter sets the queries run with.
    #[arg(long, value_enum, default_value = "validation")]
    pub parameters: ParameterSets,
    /// Only these queries (by number); all 22 when not given.
    #[arg(long, value_delimiter = ',')]
    pub queries: Vec<u32>,
    /// Directory for the databases and the .tbl files (default: a temporary one, removed
    /// after).
    #[arg(long)]
    pub dir: Option<PathBuf>,
    /// Directory for the report: tpch.json, tpch.csv and tpch.html.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Compare lioscope's answers with these stored answers (a file --save-answers wrote).
    #[arg(long)]
    pub expected: Option<PathBuf>,
    /// Store DuckDB's answers (PostgreSQL's when DuckDB did not run) in this file.
    #[arg(long)]
    pub save_answers: Option<PathBuf>,
    /// Also count with valgrind's callgrind the instructions of Q1's and Q6's execution,
    /// each in a child process on the loaded database, a lineitem row.
    #[arg(long)]
    pub callgrind: bool,
    /// The lioscope executable the callgrind children run (default: this one).
    #[arg(long)]
    pub lioscope_exe: Option<PathBuf>,
    /// Internal: run only this query once in the loaded database for callgrind.
    #[arg(long, hide = true)]
    pub callgrind_child: Option<String>,
    /// Internal: the .tbl bytes the loaded database was sized for (a callgrind child's).
    #[arg(long, hide = true, default_value_t = 0)]
    pub callgrind_tbl_bytes: u64,
}

/// The items `opts` selects, in query order.
pub fn items(opts: &TpchBenchOptions) -> Result<Vec<Item>> {
    if let Some(n) = opts.queries.iter().find(|n| !(1..=22).contains(*n)) {
        return Err(Error::InvalidParameter { name: "--queries".into(), message: format!("{n}: TPC-H has Q1 to Q22") });
    }
    Ok(QUERIES
        .iter()
        .filter(|q| opts.queries.is_empty() || opts.queries.contains(&q.number))
        .flat_map(|q| opts.parameters.indexes().iter().map(move |&set| Item { query: q, set, label: q.label(set) }))
        .collect())
}

/// lioscope's figures for one item.
#[derive(Debug, Clone, serde::Serialize)]
pub struct LioscopeQuery {
    pub label: String,
    pub elapsed_ms: Vec<f64>,
    pub cpu_ms: Vec<f64>,
    pub logical_reads: u64,
    pub physical_reads: u64,
    /// Temporary-tablespace blocks read and written directly (a spilled work area's).
    pub temp_blocks: u64,
    pub rows: usize,
    /// The plan with each row source's statistics (EXPLAIN ANALYZE of an untimed run).
    pub plan: Vec<String>,
    /// Why the query gave no figures, if it failed.
    pub error: Option<String>,
    #[serde(skip)]
    pub answer: Option<Answer>,
}

/// lioscope's part of the run.
#[derive(Debug, Clone, serde::Serialize)]
pub struct LioscopeRun {
    pub storage: String,
    pub db_cache_size: u64,
    pub load_ms: f64,
    pub queries: Vec<LioscopeQuery>,
}

/// One difference between answers (or a stored answer missing).
#[derive(Debug, Clone, serde::Serialize)]
pub struct Mismatch {
    pub label: String,
    pub against: String,
    pub difference: String,
}

/// Callgrind's count of one query's execution (a warm run done first, uncounted).
#[derive(Debug, Clone, serde::Serialize)]
pub struct InstructionCount {
    pub label: String,
    pub instructions: u64,
    pub lineitem_rows: u64,
    /// instructions / lineitem_rows: the instructions a row of the table the query scans.
    pub per_row: f64,
}

/// The benchmark's figures, as tpch.json holds them.
#[derive(Debug, Clone, serde::Serialize)]
pub struct TpchReport {
    pub environment: crate::environment::Environment,
    pub scale_factor: f64,
    pub repeat: usize,
    pub parameter_sets: ParameterSets,
    pub generate_ms: f64,
    pub tbl_bytes: u64,
    pub lioscope: LioscopeRun,
    pub peers: Vec<PeerRun>,
    pub mismatches: Vec<Mismatch>,
    /// With `--callgrind`: the instructions of Q1's and Q6's execution.
    pub instructions: Vec<InstructionCount>,
    /// Each peer's geometric mean of its time over lioscope's, over the queries both ran
    /// (a query the peer was cancelled in counts at its limit: the mean is then a lower
    /// bound).
    pub geometric_means: BTreeMap<String, f64>,
}

/// Runs the benchmark and prints its report (`None` in a callgrind child, which only
/// runs its query).
pub fn run(opts: &TpchBenchOptions) -> Result<Option<TpchReport>> {
    if !(opts.sf.is_finite() && opts.sf > 0.0) {
        return Err(Error::InvalidParameter { name: "--sf".into(), message: format!("{}: not above 0", opts.sf) });
    }
    if let Some(label) = &opts.callgrind_child {
        return callgrind_child(opts, label).map(|()| None);
    }
    let hcc_level = opts.hcc_level.as_deref().map(hcc_level).transpose()?;
    let peer_names = tpch_peers::names(&opts.peer)?;
    let items = items(opts)?;
    let (dir, _tmp) = sample::work_dir(opts.dir.as_deref(), "bench-tpch")?;
    std::fs::create_dir_all(&dir).map_err(|e| Error::io("create", &dir, e))?;
    println!(
        "lioscope bench tpch: scale factor {}, {} queries, {} timed run(s) of each after a warm one, in {}",
        opts.sf,
        items.len(),
        opts.repeat.max(1),
        dir.display()
    );
    let started = Instant::now();
    let mut tbl = Vec::new();
    let mut tbl_bytes = 0;
    for table in &TABLES {
        let path = dir.join(format!("{}.tbl", table.name));
        let rows = data::write_tbl(table.name, opts.sf, &path)?;
        tbl_bytes += std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
        tbl.push((table, path, rows));
    }
    let generate_ms = started.elapsed().as_secs_f64() * 1000.0;
    println!(
        "  generated {} rows ({}) in {:.1} s",
        tbl.iter().map(|t| t.2).sum::<u64>(),
        crate::report::human_bytes(tbl_bytes),
        generate_ms / 1000.0
    );
    let files: Vec<(&'static Table, PathBuf)> = tbl.iter().map(|(t, p, _)| (*t, p.clone())).collect();

    let lioscope = run_lioscope(opts, &dir.join("lioscope"), &files, tbl_bytes, hcc_level, &items)?;
    let lineitem_rows = tbl.iter().find(|t| t.0.name == "lineitem").map_or(0, |t| t.2);
    let instructions =
        if opts.callgrind { count_instructions(opts, &dir, tbl_bytes, lineitem_rows, &items)? } else { Vec::new() };
    let mut peers = Vec::new();
    if opts.peers {
        let settings = PeerSettings {
            sf: opts.sf,
            repeat: opts.repeat.max(1),
            timeout_s: opts.peer_timeout.max(1),
            memory_bytes: lioscope.db_cache_size,
        };
        for name in peer_names {
            println!("  running {name}");
            peers.push(tpch_peers::run(name, &dir, &files, &items, &settings));
        }
    }
    for (_, path) in &files {
        let _ = std::fs::remove_file(path);
    }
    let mut mismatches = check_peers(&lioscope, &peers, &items);
    if let Some(path) = &opts.expected {
        mismatches.extend(check_stored(&lioscope, &StoredAnswers::read(path)?, opts.sf));
    }
    let geometric_means =
        peers.iter().filter_map(|p| Some((p.engine.clone(), geometric_mean(&lioscope, p)?))).collect();
    let report = TpchReport {
        environment: crate::environment::Environment::read(),
        scale_factor: opts.sf,
        repeat: opts.repeat.max(1),
        parameter_sets: opts.parameters,
        generate_ms,
        tbl_bytes,
        lioscope,
        peers,
        mismatches,
        instructions,
        geometric_means,
    };
    print_report(&report, &items);
    if let Some(out) = &opts.out {
        write_report(out, &report, &items)?;
    }
    if let Some(path) = &opts.save_answers {
        save_answers(path, &report, &items)?;
    }
    let failed: Vec<&str> =
        report.lioscope.queries.iter().filter(|q| q.error.is_some()).map(|q| q.label.as_str()).collect();
    if !failed.is_empty() || !report.mismatches.is_empty() {
        return Err(Error::InvalidValue {
            context: "bench tpch".into(),
            message: format!(
                "{} lioscope queries failed ({}) and {} answers differ ({})",
                failed.len(),
                failed.join(", "),
                report.mismatches.len(),
                report
                    .mismatches
                    .iter()
                    .map(|m| format!("{} against {}", m.label, m.against))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        });
    }
    Ok(Some(report))
}

/// The database's options for `tbl_bytes` of rows: a buffer cache that holds every
/// table and index (the rows take about their text's bytes in blocks, the key indexes
/// and the load's undo about as much again: three times the text, and room for the
/// dictionary), and with `--inmemory` an In-Memory Area twice the text.
fn lioscope_options(tbl_bytes: u64, inmemory: bool) -> (u64, DatabaseOptions) {
    let cache = (tbl_bytes * 3).max(128 << 20) + (128 << 20);
    let mut parameters = vec![("db_cache_size".to_owned(), cache.to_string())];
    if inmemory {
        parameters.push(("inmemory_size".to_owned(), format!("{}M", (tbl_bytes * 2).max(256 << 20) >> 20)));
    }
    (cache, DatabaseOptions { parameters, ..Default::default() })
}

/// Q1's and Q6's instructions (those of them the run has, validation parameters),
/// each counted in a child process under callgrind on the database just loaded.
fn count_instructions(
    opts: &TpchBenchOptions,
    dir: &Path,
    tbl_bytes: u64,
    lineitem_rows: u64,
    items: &[Item],
) -> Result<Vec<InstructionCount>> {
    let exe = match &opts.lioscope_exe {
        Some(exe) => exe.clone(),
        None => std::env::current_exe().map_err(|e| Error::io("find", Path::new("the lioscope executable"), e))?,
    };
    let mut counts = Vec::new();
    for label in ["Q1", "Q6"] {
        if !items.iter().any(|i| i.label == label) {
            println!("  callgrind: {label} (validation parameters) is not among the queries run: not counted");
            continue;
        }
        let mut args: Vec<String> =
            ["bench", "tpch", "--sf", &opts.sf.to_string(), "--dir"].iter().map(|a| a.to_string()).collect();
        args.push(dir.display().to_string());
        args.extend(["--callgrind-child".into(), label.into(), "--callgrind-tbl-bytes".into(), tbl_bytes.to_string()]);
        if opts.inmemory {
            args.push("--inmemory".into());
        }
        println!("  callgrind: {label} in a child process");
        let profile = dir.join(format!("callgrind.{label}.out"));
        let instructions = crate::callgrind::count_instructions(&exe, &args, &profile)?;
        let per_row = instructions as f64 / lineitem_rows.max(1) as f64;
        counts.push(InstructionCount { label: label.into(), instructions, lineitem_rows, per_row });
    }
    Ok(counts)
}

/// A callgrind child: opens the loaded database, waits for the column store's population
/// with `--inmemory`, runs the query once to warm, then once inside
/// [`crate::callgrind::counted_execution`].
fn callgrind_child(opts: &TpchBenchOptions, label: &str) -> Result<()> {
    let item = items(opts)?.into_iter().find(|i| i.label == label).ok_or_else(|| Error::InvalidParameter {
        name: "--callgrind-child".into(),
        message: format!("{label}: not a query of this run"),
    })?;
    let dir = opts.dir.as_ref().ok_or_else(|| Error::InvalidParameter {
        name: "--callgrind-child".into(),
        message: "needs the --dir of the loaded database".into(),
    })?;
    let (_, options) = lioscope_options(opts.callgrind_tbl_bytes, opts.inmemory);
    let db = Database::open(dir.join("lioscope"), options)?;
    let session = db.session();
    if opts.inmemory {
        session.execute("EXEC DBMS_INMEMORY_ADMIN.POPULATE_WAIT('HIGH', 100, 7200)")?;
    }
    let sql = item.sql(Dialect::Oracle, opts.sf)?;
    session.execute(&sql)?;
    crate::callgrind::counted_execution(&session, &sql)?;
    drop(session);
    db.close()
}

/// `--hcc-level`'s level as COMPRESS FOR takes it.
fn hcc_level(level: &str) -> Result<String> {
    let level = level.trim().to_ascii_uppercase().replace(['_', '-'], " ");
    match level.as_str() {
        "QUERY LOW" | "QUERY HIGH" | "ARCHIVE LOW" | "ARCHIVE HIGH" => Ok(level),
        _ => Err(Error::InvalidParameter {
            name: "--hcc-level".into(),
            message: format!("{level}: one of QUERY LOW, QUERY HIGH, ARCHIVE LOW, ARCHIVE HIGH"),
        }),
    }
}

/// Loads lioscope in `dir` and runs every item.
fn run_lioscope(
    opts: &TpchBenchOptions,
    dir: &Path,
    files: &[(&'static Table, PathBuf)],
    tbl_bytes: u64,
    hcc_level: Option<String>,
    items: &[Item],
) -> Result<LioscopeRun> {
    let (cache, options) = lioscope_options(tbl_bytes, opts.inmemory);
    let db = Database::create(dir, options)?;
    let session = db.session();
    let started = Instant::now();
    for (table, path) in files {
        load_table(&session, table, path, hcc_level.as_deref())?;
    }
    for (table, _) in files {
        session.execute(&table.add_primary_key())?;
    }
    for (table, _) in files {
        for fk in table.add_foreign_keys() {
            session.execute(&fk)?;
        }
        session.execute(&format!("ANALYZE TABLE {} COMPUTE STATISTICS", table.name))?;
    }
    if opts.inmemory {
        for (table, _) in files {
            session.execute(&format!("ALTER TABLE {} INMEMORY MEMCOMPRESS FOR QUERY LOW PRIORITY HIGH", table.name))?;
        }
        session.execute("EXEC DBMS_INMEMORY_ADMIN.POPULATE_WAIT('HIGH', 100, 7200)")?;
    }
    let load_ms = started.elapsed().as_secs_f64() * 1000.0;
    let storage = match (&hcc_level, opts.inmemory) {
        (Some(level), true) => format!("HCC {level}, in-memory QUERY LOW"),
        (Some(level), false) => format!("HCC {level}"),
        (None, true) => "row store, in-memory QUERY LOW".to_owned(),
        (None, false) => "row store".to_owned(),
    };
    println!("  lioscope: loaded ({storage}), keys added and statistics gathered in {:.1} s", load_ms / 1000.0);
    let queries = items.iter().map(|item| lioscope_query(&session, item, opts.sf, opts.repeat.max(1))).collect();
    drop(session);
    db.close()?;
    Ok(LioscopeRun { storage, db_cache_size: cache, load_ms, queries })
}

/// CREATE TABLE and COPY from the .tbl file; with an HCC level, the rows loaded into a
/// row table first, then copied into the compressed table by CREATE TABLE AS SELECT.
fn load_table(session: &Session, table: &Table, path: &Path, hcc_level: Option<&str>) -> Result<()> {
    let copy = |name: &str| format!("COPY {name} FROM '{}' (DELIMITER '|')", path.display());
    match hcc_level {
        None => {
            session.execute(&table.create(Dialect::Oracle, false))?;
            session.execute(&copy(table.name))?;
        }
        Some(level) => {
            let staging = format!("{}_rows", table.name);
            session.execute(&table.create(Dialect::Oracle, false).replacen(table.name, &staging, 1))?;
            session.execute(&copy(&staging))?;
            commit(session)?;
            session.execute(&format!("CREATE TABLE {} COMPRESS FOR {level} AS SELECT * FROM {staging}", table.name))?;
            session.execute(&format!("DROP TABLE {staging} PURGE"))?;
        }
    }
    commit(session)
}

fn commit(session: &Session) -> Result<()> {
    if !session.autocommit() {
        session.execute("COMMIT")?;
    }
    Ok(())
}

/// One item in lioscope: a warm run, `repeat` timed ones, and one with row-source
/// statistics; a failure is recorded, not returned, so that the other queries run.
fn lioscope_query(session: &Session, item: &Item, sf: f64, repeat: usize) -> LioscopeQuery {
    let mut q = LioscopeQuery {
        label: item.label.clone(),
        elapsed_ms: Vec::new(),
        cpu_ms: Vec::new(),
        logical_reads: 0,
        physical_reads: 0,
        temp_blocks: 0,
        rows: 0,
        plan: Vec::new(),
        error: None,
        answer: None,
    };
    let result = (|| -> Result<()> {
        let sql = item.sql(Dialect::Oracle, sf)?;
        let warm = sample::measure(session, &sql)?;
        q.rows = warm.result.rows.len();
        q.answer = Some(warm.result.rows.iter().map(|r| r.iter().map(Cell::from_value).collect()).collect());
        for run in 0..repeat {
            let m = sample::measure(session, &sql)?;
            q.elapsed_ms.push(m.elapsed_ms);
            q.cpu_ms.push(m.cpu_ms);
            if run == 0 {
                q.logical_reads = m.delta(Stat::LogicalReads);
                q.physical_reads = m.delta(Stat::PhysicalReads);
                q.temp_blocks =
                    m.delta(Stat::PhysicalReadsDirectTemporary) + m.delta(Stat::PhysicalWritesDirectTemporary);
            }
        }
        let plan = session.execute(&format!("EXPLAIN ANALYZE {sql}"))?;
        q.plan = plan.rows.iter().map(|r| r.first().map(|v| v.to_string()).unwrap_or_default()).collect();
        Ok(())
    })();
    if let Err(e) = result {
        q.error = Some(e.to_string());
    }
    let shown = match &q.error {
        Some(e) => format!("failed: {e}"),
        None => format!("{:.1} ms, {} rows", median(&q.elapsed_ms).unwrap_or(0.0), q.rows),
    };
    println!("  lioscope {}: {shown}", item.label);
    q
}

fn median(values: &[f64]) -> Option<f64> {
    (!values.is_empty()).then(|| spread(values.iter().copied()).median)
}

/// Every peer's answer to every item compared with lioscope's.
fn check_peers(lioscope: &LioscopeRun, peers: &[PeerRun], items: &[Item]) -> Vec<Mismatch> {
    let mut out = Vec::new();
    for peer in peers {
        let Ok(queries) = &peer.queries else { continue };
        for ((item, ours), theirs) in items.iter().zip(&lioscope.queries).zip(queries) {
            let (Some(a), Some(b)) = (&ours.answer, &theirs.answer) else { continue };
            let tolerance = if peer.engine == "SQLite" { answers::FLOATING } else { answers::EXACT };
            if let Err(difference) = answers::compare(a, b, tolerance) {
                out.push(Mismatch { label: item.label.clone(), against: peer.engine.clone(), difference });
            }
        }
    }
    out
}

/// lioscope's answers compared with stored ones (at the same scale factor).
fn check_stored(lioscope: &LioscopeRun, stored: &StoredAnswers, sf: f64) -> Vec<Mismatch> {
    let against = format!("stored answers ({})", stored.source);
    if (stored.scale_factor - sf).abs() > 1e-12 {
        return vec![Mismatch {
            label: "all".into(),
            against,
            difference: format!("stored at scale factor {}, run at {sf}", stored.scale_factor),
        }];
    }
    lioscope
        .queries
        .iter()
        .filter_map(|q| {
            let ours = q.answer.as_ref()?;
            let difference = match stored.get(&q.label) {
                None => "no answer stored".to_owned(),
                Some(expected) => answers::compare(ours, &expected, answers::EXACT).err()?,
            };
            Some(Mismatch { label: q.label.clone(), against: against.clone(), difference })
        })
        .collect()
}

/// A peer's geometric mean of its median over lioscope's, over the items both ran (a
/// cancelled one at its limit), and none when they share none.
fn geometric_mean(lioscope: &LioscopeRun, peer: &PeerRun) -> Option<f64> {
    let queries = peer.queries.as_ref().ok()?;
    let logs: Vec<f64> = lioscope
        .queries
        .iter()
        .zip(queries)
        .filter_map(|(ours, theirs)| Some((theirs.time_ms()? / median(&ours.elapsed_ms)?).ln()))
        .collect();
    (!logs.is_empty()).then(|| (logs.iter().sum::<f64>() / logs.len() as f64).exp())
}

/// Writes DuckDB's answers (else PostgreSQL's) as stored answers.
fn save_answers(path: &Path, report: &TpchReport, items: &[Item]) -> Result<()> {
    let peer = ["DuckDB", "PostgreSQL"]
        .iter()
        .find_map(|name| report.peers.iter().find(|p| p.engine == *name && p.queries.is_ok()))
        .ok_or_else(|| Error::InvalidParameter {
            name: "--save-answers".into(),
            message: "needs --peers with DuckDB or PostgreSQL running".into(),
        })?;
    let mut stored = StoredAnswers::new(format!("{} {}", peer.engine, peer.version), report.scale_factor);
    for (item, q) in items.iter().zip(peer.queries.as_ref().into_iter().flatten()) {
        if let Some(answer) = &q.answer {
            stored.insert(&item.label, answer);
        }
    }
    stored.write(path)?;
    println!("{}'s answers stored in {}", peer.engine, path.display());
    Ok(())
}

/// The rows of the main table: per item, lioscope's figures and each peer's time and
/// ratio over lioscope's.
fn table_rows(report: &TpchReport, items: &[Item]) -> (Vec<String>, Vec<Vec<String>>) {
    let mut header: Vec<String> =
        ["query", "rows", "lioscope ms", "CPU ms", "logical reads", "physical reads", "temp blocks"]
            .map(String::from)
            .to_vec();
    let peers: Vec<(&PeerRun, &Vec<tpch_peers::PeerQuery>)> =
        report.peers.iter().filter_map(|p| Some((p, p.queries.as_ref().ok()?))).collect();
    for (p, _) in &peers {
        header.push(format!("{} ms", p.engine));
        header.push(format!("{} / lioscope", p.engine));
    }
    let rows = items
        .iter()
        .enumerate()
        .map(|(i, item)| {
            let q = &report.lioscope.queries[i];
            let ours = median(&q.elapsed_ms);
            let mut row = vec![item.label.clone()];
            match &q.error {
                Some(e) => row.extend([
                    format!("failed: {e}"),
                    String::new(),
                    String::new(),
                    String::new(),
                    String::new(),
                    String::new(),
                ]),
                None => row.extend([
                    q.rows.to_string(),
                    ms_cell(&q.elapsed_ms),
                    ms_cell(&q.cpu_ms),
                    q.logical_reads.to_string(),
                    q.physical_reads.to_string(),
                    q.temp_blocks.to_string(),
                ]),
            }
            for (_, queries) in &peers {
                let theirs = &queries[i];
                row.push(theirs.cell());
                let ratio = theirs.time_ms().zip(ours).filter(|(_, b)| *b > 0.0).map(|(a, b)| a / b);
                let bound = if theirs.timed_out { "≥ " } else { "" };
                row.push(ratio.map_or("n/a".into(), |r| format!("{bound}{}", crate::report::ratio_cell(Some(r)))));
            }
            row
        })
        .collect();
    (header, rows)
}

fn ms_cell(runs: &[f64]) -> String {
    if runs.is_empty() {
        return "n/a".into();
    }
    let s = spread(runs.iter().copied());
    if runs.len() == 1 { crate::report::round(s.median) } else { crate::report::spread_cell(s.median, s.min, s.max) }
}

fn print_report(report: &TpchReport, items: &[Item]) {
    let (header, rows) = table_rows(report, items);
    let header: Vec<&str> = header.iter().map(String::as_str).collect();
    crate::report::print_table(&header, rows);
    println!(
        "Elapsed ms: the median of {} timed run(s) after a warm one, around the statement and the fetch of its rows; \
         CPU: lioscope's thread; reads and temporary blocks: its first timed run. PEER / lioscope > 1: lioscope is \
         that many times faster; ≥: the peer was cancelled at its limit.",
        report.repeat
    );
    println!(
        "lioscope ({}): load, keys and statistics {:.1} s",
        report.lioscope.storage,
        report.lioscope.load_ms / 1000.0
    );
    for p in &report.peers {
        match (&p.queries, p.load_ms) {
            (Ok(_), Some(ms)) => {
                println!("{} {}: load, keys and statistics {:.1} s ({})", p.engine, p.version, ms / 1000.0, p.settings)
            }
            (Err(why), _) => println!("{}: not run: {why}", p.engine),
            _ => {}
        }
    }
    for (engine, mean) in &report.geometric_means {
        println!("Geometric mean of {engine}'s time over lioscope's: {mean:.2}");
    }
    for c in &report.instructions {
        println!(
            "callgrind: {} executed {} instructions, {:.0} a lineitem row ({} rows)",
            c.label, c.instructions, c.per_row, c.lineitem_rows
        );
    }
    for q in &report.lioscope.queries {
        if !q.plan.is_empty() {
            println!("\n{} (row-source statistics of an untimed run):\n{}", q.label, q.plan.join("\n"));
        }
    }
    if report.mismatches.is_empty() {
        println!("\nEvery answer compared matched.");
    }
    for m in &report.mismatches {
        println!("\n{} differs from {}: {}", m.label, m.against, m.difference);
    }
}

/// tpch.json, tpch.csv (one line per query and engine) and tpch.html.
fn write_report(out: &Path, report: &TpchReport, items: &[Item]) -> Result<()> {
    std::fs::create_dir_all(out).map_err(|e| Error::io("create", out, e))?;
    crate::report::write_json(&out.join("tpch.json"), report)?;
    let mut csv = Vec::new();
    for (i, q) in report.lioscope.queries.iter().enumerate() {
        csv.push(vec![
            q.label.clone(),
            "lioscope".into(),
            median(&q.elapsed_ms).map_or(String::new(), |v| v.to_string()),
            median(&q.cpu_ms).map_or(String::new(), |v| v.to_string()),
            q.rows.to_string(),
            q.error.clone().unwrap_or_default(),
        ]);
        for p in &report.peers {
            let Ok(queries) = &p.queries else { continue };
            let theirs = &queries[i];
            csv.push(vec![
                items[i].label.clone(),
                p.engine.clone(),
                theirs.time_ms().map_or(String::new(), |v| v.to_string()),
                String::new(),
                theirs.answer.as_ref().map_or(String::new(), |a| a.len().to_string()),
                theirs.error.clone().unwrap_or_default(),
            ]);
        }
    }
    crate::report::write_csv(
        &out.join("tpch.csv"),
        &["query", "engine", "elapsed_ms", "cpu_ms", "rows", "error"],
        &csv,
    )?;
    let mut parameters: BTreeMap<&'static str, serde_json::Value> = BTreeMap::new();
    parameters.insert("scale_factor", report.scale_factor.into());
    parameters.insert("repeat", report.repeat.into());
    parameters.insert("storage", report.lioscope.storage.clone().into());
    parameters.insert("db_cache_size", report.lioscope.db_cache_size.into());
    let mut html = Html::new("lioscope bench tpch", &report.environment, &parameters);
    let (header, rows) = table_rows(report, items);
    let header: Vec<&str> = header.iter().map(String::as_str).collect();
    html.table_from("The queries", &header, rows);
    let labels: Vec<&str> = items.iter().map(|i| i.label.as_str()).collect();
    let mut series = vec![Series::new(
        "lioscope",
        report
            .lioscope
            .queries
            .iter()
            .enumerate()
            .filter_map(|(i, q)| Some((i as f64, median(&q.elapsed_ms)?, None)))
            .collect(),
    )];
    for p in &report.peers {
        let Ok(queries) = &p.queries else { continue };
        series.push(Series::new(
            &p.engine,
            queries.iter().enumerate().filter_map(|(i, q)| Some((i as f64, q.time_ms()?, None))).collect(),
        ));
    }
    html.chart(Chart::bars(
        &format!("TPC-H at scale factor {}: elapsed time by query", report.scale_factor),
        "ms",
        &labels,
        series,
        "The median of the timed runs after a warm one, around the statement and the fetch of its rows; a peer \
         cancelled at its limit is drawn at the limit",
    ))?;
    for (engine, mean) in &report.geometric_means {
        html.paragraph(&format!("Geometric mean of {engine}'s time over lioscope's: {mean:.2}"));
    }
    for m in &report.mismatches {
        html.paragraph(&format!("{} differs from {}: {}", m.label, m.against, m.difference));
    }
    for q in &report.lioscope.queries {
        html.table_from(
            &format!("{}: lioscope's plan and row-source statistics", q.label),
            &[""],
            q.plan.iter().map(|l| vec![l.clone()]),
        );
    }
    crate::report::write_html(&out.join("tpch.html"), &html)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options() -> TpchBenchOptions {
        TpchBenchOptions {
            sf: 0.01,
            inmemory: false,
            hcc_level: None,
            peers: false,
            peer: vec![],
            peer_timeout: 10,
            repeat: 1,
            parameters: ParameterSets::Both,
            queries: vec![],
            dir: None,
            out: None,
            expected: None,
            save_answers: None,
            callgrind: false,
            lioscope_exe: None,
            callgrind_child: None,
            callgrind_tbl_bytes: 0,
        }
    }

    #[test]
    fn the_items_are_the_queries_chosen_with_each_set() {
        let all = items(&options()).unwrap();
        assert_eq!(all.len(), 44);
        assert_eq!((all[0].label.as_str(), all[1].label.as_str()), ("Q1", "Q1 #2"));
        let some = items(&TpchBenchOptions { queries: vec![6, 1], parameters: ParameterSets::Validation, ..options() })
            .unwrap();
        assert_eq!(some.iter().map(|i| i.label.as_str()).collect::<Vec<_>>(), ["Q1", "Q6"]);
        let e = items(&TpchBenchOptions { queries: vec![23], ..options() }).unwrap_err().to_string();
        assert!(e.contains("23"), "{e}");
    }

    #[test]
    fn hcc_levels_are_read_as_compress_for_takes_them() {
        assert_eq!(hcc_level("query_low").unwrap(), "QUERY LOW");
        assert_eq!(hcc_level("Archive High").unwrap(), "ARCHIVE HIGH");
        assert!(hcc_level("basic").unwrap_err().to_string().contains("BASIC"));
    }
}
