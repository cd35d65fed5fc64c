//! `lioscope lab scan`: the cost of a row by access path, after the source experiment
//! that counted one customers table's rows six ways under `perf stat`.
//!
//! One customers table with an index of good clustering factor (`cust_id`, in insert
//! order) and one of bad (`cust_postal_code`, random with respect to it), populated into
//! the column store `FOR QUERY LOW`. Each path visits every row to count `cust_valid`:
//!
//! | name                    | how                                                      |
//! |-------------------------|----------------------------------------------------------|
//! | `INDEX_BAD_CF`          | range scan of `cust_postal_code`, table access by rowid   |
//! | `INDEX_GOOD_CF`         | range scan of `cust_id`, table access by rowid            |
//! | `FULL_BUFFER_CACHE`     | full scan of the cached blocks (`NO_INMEMORY`)            |
//! | `INMEMORY_PREDICATE`    | `TABLE ACCESS INMEMORY FULL` with `cust_id > 0`           |
//! | `INMEMORY_NO_PREDICATE` | `TABLE ACCESS INMEMORY FULL`, no predicate                |
//! | `COMPRESSED_BLOCKS`     | full scan of `customers_hcc`, a copy compressed `FOR QUERY LOW` (`--hcc-level`), cached |
//!
//! The compressed copy is made by `CREATE TABLE customers_hcc COMPRESS FOR ... AS SELECT *
//! FROM customers`; its blocks and the row table's are in the report's parameters, and its
//! path adds the EHCC statistics (compression units and bytes decompressed).
//!
//! Every path runs once to warm the caches, then `--repeat` times; each figure is the
//! median of those runs with min and max. Figures come from the public Session API: the
//! session statistics' deltas, the thread CPU clock, and the session's performance
//! counters, which read `null` (with the kernel's reason) where the machine hides them.
//! Every derived figure's derivation travels with the report.
//!
//! A one-core memory read bandwidth probe runs in the same run (see
//! [`super::bandwidth`]), so each path's bytes a second read as a fraction of what memory
//! gives one core; `--instructions callgrind` adds callgrind's counts and its cache and
//! branch simulation; `--peers` times the full scan's query in PostgreSQL and SQLite on
//! the same rows ([`super::scan_peers`]). The report says whether the full scan counted
//! rows eight at a time in lanes on this machine, and why ([`lioscope::row_lanes`]).

use super::customers::count;
use super::sample::{self, Measurement};
use super::stats::{Spread, spread};
use lioscope::stats::Stat;
use lioscope::stats::hwcounters::{Counter, Reading};
use lioscope::{Database, DatabaseOptions, Result, Session};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// Options of the experiment.
#[derive(Debug, Clone, clap::Args)]
pub struct ScanOptions {
    /// Rows in customers (the source document's table had 5,000,000 and more).
    #[arg(long, default_value_t = 5_000_000)]
    pub rows: u64,
    /// Timed runs of each path (the median is reported, with min and max).
    #[arg(long, default_value_t = 5)]
    pub repeat: usize,
    /// Directory for the report: scan.json (every sample and the environment), scan.csv
    /// (the figures) and scan.html (the table and the charts).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// An existing database to run in (its customers table is used when it has one);
    /// default: a fresh one in a temporary directory.
    #[arg(long)]
    pub db: Option<PathBuf>,
    /// Where instruction counts come from: the performance counters (`perf`), or
    /// also valgrind's callgrind, each measured path run once more in a child process with
    /// collection on only around the statement's execution (`callgrind`).
    #[arg(long, value_enum, default_value_t = InstructionSource::Perf)]
    pub instructions: InstructionSource,
    /// Internal: run only this path once, in the existing `--db`, for callgrind (the
    /// `lioscope` command then calls [`run_callgrind_child`] instead of [`run`]).
    #[arg(long, hide = true)]
    pub callgrind_child: Option<String>,
    /// The Hybrid Columnar Compression level of the copy the `COMPRESSED_BLOCKS` path scans.
    #[arg(long, value_enum, default_value_t = HccLevelArg::QueryLow)]
    pub hcc_level: HccLevelArg,
    #[command(flatten)]
    pub probe: super::bandwidth::ProbeOptions,
    /// Also time the cached full scan's query in PostgreSQL (one process, no parallel
    /// workers) and SQLite on the same rows, in this run: lioscope's lead over each.
    #[arg(long)]
    pub peers: bool,
    /// The lioscope executable the callgrind children run (default: this one).
    #[arg(long, hide = true)]
    pub lioscope_exe: Option<PathBuf>,
    #[command(flatten)]
    pub history: super::history::HistoryArgs,
}

/// Where `lab scan` takes instruction counts from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum InstructionSource {
    /// The performance counters only (`null` where the machine hides them).
    Perf,
    /// Also valgrind's callgrind, around each statement's execution.
    Callgrind,
}

/// `--hcc-level`: `COMPRESS FOR` of the compressed copy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum HccLevelArg {
    QueryLow,
    QueryHigh,
    ArchiveLow,
    ArchiveHigh,
}

impl HccLevelArg {
    /// The words after `COMPRESS FOR`.
    pub fn sql(self) -> &'static str {
        match self {
            HccLevelArg::QueryLow => "QUERY LOW",
            HccLevelArg::QueryHigh => "QUERY HIGH",
            HccLevelArg::ArchiveLow => "ARCHIVE LOW",
            HccLevelArg::ArchiveHigh => "ARCHIVE HIGH",
        }
    }
}

/// One access path.
struct Path {
    name: &'static str,
    label: &'static str,
    /// `None` for a path lioscope does not have yet.
    sql: Option<&'static str>,
    /// The column store's columns it reads (none: it reads blocks).
    im_columns: &'static [&'static str],
    /// The table and the index whose blocks it reads (for its distinct blocks).
    segments: (&'static str, Option<&'static str>),
}

const PATHS: [Path; 6] = [
    Path {
        name: "INDEX_BAD_CF",
        label: "INDEX range scan, bad clustering factor",
        sql: Some(count::BY_BAD_INDEX),
        im_columns: &[],
        segments: ("CUSTOMERS", Some("CUST_POSTAL_IX")),
    },
    Path {
        name: "INDEX_GOOD_CF",
        label: "INDEX range scan, good clustering factor",
        sql: Some(count::BY_GOOD_INDEX),
        im_columns: &[],
        segments: ("CUSTOMERS", Some("CUST_ID_IX")),
    },
    Path {
        name: "FULL_BUFFER_CACHE",
        label: "FULL scan in the buffer cache",
        sql: Some(count::FULL),
        im_columns: &[],
        segments: ("CUSTOMERS", None),
    },
    Path {
        name: "INMEMORY_PREDICATE",
        label: "INMEMORY scan with a predicate",
        sql: Some(count::INMEMORY),
        im_columns: &["CUST_ID", "CUST_VALID"],
        segments: ("CUSTOMERS", None),
    },
    Path {
        name: "INMEMORY_NO_PREDICATE",
        label: "INMEMORY scan without a predicate",
        sql: Some(count::INMEMORY_NO_PREDICATE),
        im_columns: &["CUST_VALID"],
        segments: ("CUSTOMERS", None),
    },
    Path {
        name: "COMPRESSED_BLOCKS",
        label: "FULL scan of compressed columnar blocks (HCC) in the buffer cache",
        sql: Some(count::COMPRESSED_BLOCKS),
        im_columns: &[],
        segments: ("CUSTOMERS_HCC", None),
    },
];

/// Why a path has no figures.
const NOT_IMPLEMENTED: &str = "not yet implemented in lioscope";

/// One timed run of a path: what the session counted around it.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Sample {
    pub rows: u64,
    pub elapsed_ms: f64,
    pub cpu_ms: f64,
    pub logical_reads: u64,
    pub consistent_gets: u64,
    pub buffer_is_pinned: u64,
    pub im_scan_rows: u64,
    /// Deltas of 'EHCC CUs Decompressed', 'EHCC Columns Decompressed' and 'EHCC
    /// Decompressed Length Decompressed'.
    pub ehcc_cus: u64,
    pub ehcc_columns: u64,
    pub ehcc_decompressed_bytes: u64,
    /// The bytes the path read: its logical reads times the block size, or for the
    /// column store the in-memory size of the columns it reads.
    pub bytes_read: u64,
    /// Its bytes a second over the bandwidth probe's median (set once the probe is done).
    pub bandwidth_fraction: Option<f64>,
    /// Each performance counter that counted, scaled for multiplexing, by perf name.
    pub counters: BTreeMap<&'static str, u64>,
    /// The share of its enabled time each counter was running (1 when not multiplexed).
    pub counter_running_share: BTreeMap<&'static str, f64>,
    /// Instructions per cycle ([`Reading::ipc`]).
    pub ipc: Option<f64>,
}

/// The figures of one path, each `null` where not available, and its raw samples.
#[derive(Debug, Clone, serde::Serialize)]
pub struct PathReport {
    pub name: &'static str,
    pub label: &'static str,
    pub sql: Option<&'static str>,
    /// "measured", or why the path has no figures.
    pub status: &'static str,
    pub figures: BTreeMap<&'static str, Option<Figure>>,
    pub samples: Vec<Sample>,
    /// With `--instructions callgrind`: for each kind of simulated miss
    /// ([`super::callgrind::MISS_KINDS`]), the functions with the most of them (self
    /// cost) and their share of the path's total.
    pub simulated_functions: BTreeMap<&'static str, Vec<(String, f64)>>,
}

/// A figure over the runs: median, min, max.
pub type Figure = Spread;

/// The figures callgrind adds, and how each is derived.
const CALLGRIND_FIGURES: [(&str, &str); 8] = [
    (
        "instructions_callgrind",
        "valgrind callgrind Ir of one run in a child process, collection on only inside the statement's execution \
         (--collect-atstart=no --toggle-collect=*counted_execution*), after a warm run, with its cache and branch \
         simulation on (--cache-sim=yes --branch-sim=yes; caches shaped as the host's)",
    ),
    ("instructions_per_row_callgrind", "instructions_callgrind / rows"),
    ("l1_misses_per_row_sim", "simulated first-level misses (I1mr + D1mr + D1mw) of the same run / rows"),
    ("l1_misses_per_block_sim", "the same / logical_reads (median)"),
    ("ll_misses_per_row_sim", "simulated last-level misses (ILmr + DLmr + DLmw) of the same run / rows"),
    ("ll_misses_per_block_sim", "the same / logical_reads (median)"),
    ("mispredictions_per_row_sim", "simulated branch mispredictions (Bcm + Bim) of the same run / rows"),
    ("mispredictions_per_block_sim", "the same / logical_reads (median)"),
];

/// The figures of every path, in report order, and how each is derived.
const FIGURES: [(&str, &str); 23] = [
    ("rows", "the count the query returned"),
    ("logical_reads", "delta of 'session logical reads'"),
    ("buffer_is_pinned_count", "delta of 'buffer is pinned count'"),
    ("cpu_ms", "the session thread's CPU clock (DB CPU) around the execution"),
    ("elapsed_ms", "wall clock around Session::execute"),
    ("task_clock_ms", "perf task-clock / 10^6"),
    ("cycles", "perf cycles, scaled by enabled / running time"),
    ("instructions", "perf instructions, scaled by enabled / running time"),
    ("ipc", "instructions / cycles of the same run"),
    ("instructions_per_row", "instructions / rows of the same run"),
    ("cycles_per_row", "cycles / rows of the same run"),
    ("logical_reads_per_row", "logical_reads / rows of the same run"),
    ("branches", "perf branches, scaled"),
    ("branch_misses", "perf branch-misses, scaled"),
    ("cache_misses", "perf cache-misses, scaled"),
    ("im_scan_rows", "delta of 'IM scan rows'"),
    ("ehcc_cus_decompressed", "delta of 'EHCC CUs Decompressed'"),
    ("ehcc_columns_decompressed", "delta of 'EHCC Columns Decompressed'"),
    ("ehcc_decompressed_bytes", "delta of 'EHCC Decompressed Length Decompressed'"),
    (
        "ehcc_decompressed_gb_per_s",
        "ehcc_decompressed_bytes / 10^9 / (cpu_ms / 1000): bytes decompressed a second of the scan's CPU (its \
         decompression's own speed is higher)",
    ),
    (
        "bytes_read",
        "the distinct blocks the path reads × db_block_size: its logical reads, at most the table's blocks below the \
         high-water mark and the index's leaf blocks (user_segments, user_indexes), since a block got again is \
         most likely in a CPU cache (whole blocks: a path that reads parts of its blocks, as the compressed scan \
         reads two columns of each unit, can pass 1); for the column store, the INMEMORY_SIZE (v$im_column_level) \
         of the columns the path reads, which may fit in the CPU caches (then the fraction can pass 1)",
    ),
    ("read_gb_per_s", "bytes_read / 10^9 / (elapsed_ms / 1000)"),
    ("bandwidth_fraction", super::bandwidth::FRACTION),
];

impl Sample {
    fn of(m: &Measurement, counters: &Reading, bytes_read: u64) -> Sample {
        Sample {
            bytes_read,
            bandwidth_fraction: None,
            rows: m.rows(),
            elapsed_ms: m.elapsed_ms,
            cpu_ms: m.cpu_ms,
            logical_reads: m.delta(Stat::LogicalReads),
            consistent_gets: m.delta(Stat::ConsistentGets),
            buffer_is_pinned: m.delta(Stat::BufferIsPinned),
            im_scan_rows: m.delta(Stat::ImScanRows),
            ehcc_cus: m.delta(Stat::EhccCusDecompressed),
            ehcc_columns: m.delta(Stat::EhccColumnsDecompressed),
            ehcc_decompressed_bytes: m.delta(Stat::EhccDecompressedLengthDecompressed),
            counters: counters.values(),
            counter_running_share: counters.counts.iter().map(|(c, n)| (c.name(), n.running_share())).collect(),
            ipc: counters.ipc(),
        }
    }

    fn counter(&self, counter: Counter) -> Option<f64> {
        self.counters.get(counter.name()).map(|&v| v as f64)
    }

    /// The figure `key` of this run; `None` where not available.
    fn figure(&self, key: &str) -> Option<f64> {
        let rows = self.rows as f64;
        let per_row = |v: Option<f64>| v.filter(|_| self.rows > 0).map(|v| v / rows);
        match key {
            "rows" => Some(rows),
            "logical_reads" => Some(self.logical_reads as f64),
            "buffer_is_pinned_count" => Some(self.buffer_is_pinned as f64),
            "cpu_ms" => Some(self.cpu_ms),
            "elapsed_ms" => Some(self.elapsed_ms),
            "task_clock_ms" => self.counter(Counter::TaskClock).map(|ns| ns / 1e6),
            "cycles" => self.counter(Counter::Cycles),
            "instructions" => self.counter(Counter::Instructions),
            "ipc" => self.ipc,
            "instructions_per_row" => per_row(self.counter(Counter::Instructions)),
            "cycles_per_row" => per_row(self.counter(Counter::Cycles)),
            "logical_reads_per_row" => per_row(Some(self.logical_reads as f64)),
            "branches" => self.counter(Counter::Branches),
            "branch_misses" => self.counter(Counter::BranchMisses),
            "cache_misses" => self.counter(Counter::CacheMisses),
            "im_scan_rows" => Some(self.im_scan_rows as f64),
            "ehcc_cus_decompressed" => Some(self.ehcc_cus as f64),
            "ehcc_columns_decompressed" => Some(self.ehcc_columns as f64),
            "ehcc_decompressed_bytes" => Some(self.ehcc_decompressed_bytes as f64),
            "bytes_read" => Some(self.bytes_read as f64),
            "read_gb_per_s" => super::bandwidth::gb_per_s(self.bytes_read as f64, self.elapsed_ms),
            "bandwidth_fraction" => self.bandwidth_fraction,
            "ehcc_decompressed_gb_per_s" => {
                (self.cpu_ms > 0.0).then(|| self.ehcc_decompressed_bytes as f64 / 1e9 / (self.cpu_ms / 1000.0))
            }
            _ => None,
        }
    }
}

/// The whole report, as scan.json holds it.
#[derive(Debug, serde::Serialize)]
pub struct ScanReport {
    pub experiment: &'static str,
    /// Whether instructions were also counted by callgrind.
    pub instructions: InstructionSource,
    pub environment: super::environment::Environment,
    pub parameters: BTreeMap<&'static str, serde_json::Value>,
    pub derivations: BTreeMap<&'static str, &'static str>,
    /// Counters the machine does not offer, with the kernel's reason.
    pub counters_unavailable: BTreeMap<&'static str, String>,
    /// With `--instructions callgrind`: callgrind's count of a loop of known length, run
    /// the same way as the paths.
    pub callgrind_calibration: Option<super::callgrind::Calibration>,
    /// The one-core memory read bandwidth probe, one pass before each path's runs.
    pub bandwidth_probe: super::bandwidth::BandwidthProbe,
    pub paths: Vec<PathReport>,
    /// Each measured path's CPU time against the full scan's (`path_tests`).
    pub tests: Vec<PathTest>,
    /// With `--peers`: the full scan's query in PostgreSQL and SQLite on the same rows.
    pub peers: Vec<super::scan_peers::PeerScan>,
}

/// One path's CPU time samples against the full scan's.
#[derive(Debug, Clone, serde::Serialize)]
pub struct PathTest {
    pub path: &'static str,
    /// The path's median `cpu_ms` over the full scan's.
    pub median_ratio: Option<f64>,
    /// Two-sided Mann-Whitney U of the path's `cpu_ms` samples against the full scan's.
    pub p_value: Option<f64>,
    pub method: Option<super::stats::Method>,
}

/// The path every other is compared with: the full scan of the cached blocks.
const REFERENCE_PATH: &str = "FULL_BUFFER_CACHE";

/// Each measured path's `cpu_ms` samples against [`REFERENCE_PATH`]'s.
fn path_tests(paths: &[PathReport]) -> Vec<PathTest> {
    let cpu = |p: &PathReport| -> Vec<f64> { p.samples.iter().map(|s| s.cpu_ms).collect() };
    let Some(reference) = paths.iter().find(|p| p.name == REFERENCE_PATH && p.status == "measured") else {
        return Vec::new();
    };
    let base = cpu(reference);
    paths
        .iter()
        .filter(|p| p.status == "measured" && p.name != REFERENCE_PATH)
        .map(|p| {
            let these = cpu(p);
            let test = (these.len() > 1 && base.len() > 1)
                .then(|| super::stats::mann_whitney(&these, &base, super::stats::Alternative::TwoSided))
                .flatten();
            let median = |f: &PathReport| f.figures.get("cpu_ms").copied().flatten().map(|f| f.median);
            PathTest {
                path: p.name,
                median_ratio: median(p).zip(median(reference)).filter(|(_, b)| *b > 0.0).map(|(a, b)| a / b),
                p_value: test.map(|t| t.p_value),
                method: test.map(|t| t.method),
            }
        })
        .collect()
}

/// The heading of the table of the paths' tests.
const TESTS_HEADER: [&str; 3] =
    ["path", "cpu_ms / FULL_BUFFER_CACHE's", "p (Mann-Whitney U, two-sided, against FULL_BUFFER_CACHE)"];

fn test_rows(report: &ScanReport) -> Vec<Vec<String>> {
    report
        .tests
        .iter()
        .map(|t| {
            vec![
                t.path.to_owned(),
                super::report::ratio_cell(t.median_ratio),
                super::levels::p_cell(t.p_value, t.method),
            ]
        })
        .collect()
}

/// Runs the experiment, prints its table and writes the report files.
pub fn run(opts: &ScanOptions) -> Result<ScanReport> {
    let (dir, _tmp) = sample::work_dir(opts.db.as_deref(), "lab-scan")?;
    let memory = memory_for(opts.rows);
    let db = Database::open_or_create(&dir, database_options(memory))?;
    let session = db.session();
    let callgrind_steps = if opts.instructions == InstructionSource::Callgrind { PATHS.len() } else { 0 };
    let progress = super::progress::Steps::new((PATHS.len() + 2 + callgrind_steps) as u64, "lab scan");
    progress.step("loading customers");
    prepare(&session, opts.rows, inmemory_for(opts.rows))?;
    let (row_blocks, hcc_blocks) = compressed_copy(&session, opts.hcc_level)?;
    // An existing database's table may hold another number of rows than asked for.
    let table_rows =
        sample::measure(&session, "SELECT /*+ FULL(c) NO_INMEMORY(c) */ COUNT(*) FROM customers c")?.rows();
    progress.step("populating the column store");
    populate(&session)?;
    let block_size = sample::whole(&session, "SELECT value FROM v$parameter WHERE name = 'db_block_size'")?;
    let im_sizes = inmemory_column_sizes(&session)?;
    let probe = opts.probe.array();
    let mut probe_samples = vec![probe.pass()];
    session.set_hardware_counters(true);
    let mut unavailable = BTreeMap::new();
    let mut paths = Vec::new();
    for path in &PATHS {
        progress.step(path.name);
        let Some(sql) = path.sql else {
            let figures = FIGURES.iter().map(|(k, _)| (*k, None)).collect();
            paths.push(PathReport {
                name: path.name,
                label: path.label,
                sql: None,
                status: NOT_IMPLEMENTED,
                figures,
                samples: Vec::new(),
                simulated_functions: BTreeMap::new(),
            });
            continue;
        };
        let distinct_blocks = distinct_blocks(&session, path.segments)?;
        probe_samples.push(probe.pass());
        sample::measure(&session, sql)?;
        let mut samples = Vec::new();
        for _ in 0..opts.repeat.max(1) {
            let before = session.hardware_counters().unwrap_or_default();
            let m = sample::measure(&session, sql)?;
            let counted = session.hardware_counters().unwrap_or_default().since(&before);
            for counter in Counter::ALL {
                if let Some(why) = counted.why_unavailable(counter) {
                    unavailable.entry(counter.name()).or_insert_with(|| why.to_owned());
                }
            }
            let bytes_read = if path.im_columns.is_empty() {
                m.delta(Stat::LogicalReads).min(distinct_blocks) * block_size
            } else {
                path.im_columns.iter().map(|c| im_sizes.get(*c).copied().unwrap_or(0)).sum()
            };
            samples.push(Sample::of(&m, &counted, bytes_read));
        }
        paths.push(PathReport {
            name: path.name,
            label: path.label,
            sql: Some(sql),
            status: "measured",
            figures: BTreeMap::new(),
            samples,
            simulated_functions: BTreeMap::new(),
        });
    }
    session.set_hardware_counters(false);
    let bandwidth_probe = probe.report(probe_samples);
    drop(probe);
    for path in paths.iter_mut().filter(|p| p.status == "measured") {
        for sample in &mut path.samples {
            sample.bandwidth_fraction = bandwidth_probe.fraction(sample.figure("read_gb_per_s"));
        }
        path.figures = FIGURES
            .iter()
            .map(|(key, _)| {
                let values: Option<Vec<f64>> = path.samples.iter().map(|s| s.figure(key)).collect();
                (*key, values.map(spread))
            })
            .collect();
    }
    drop(session);
    db.close()?;
    // Dropping the database lets go of its directory for the callgrind children.
    drop(db);
    let mut calibration = None;
    if opts.instructions == InstructionSource::Callgrind {
        progress.step("callgrind on a loop of known length");
        let profile = dir.join("callgrind.calibration.out");
        let args = ["lab", "scan", "--callgrind-child", CALIBRATION].map(str::to_owned);
        calibration = Some(super::callgrind::calibrate(&lioscope_exe(opts)?, &args, &profile)?);
        let _ = std::fs::remove_file(&profile);
        for path in paths.iter_mut().filter(|p| p.status == "measured") {
            progress.step(&format!("{} under callgrind", path.name));
            let simulated = callgrind_simulate(opts, &dir, path.name)?;
            add_simulated_figures(path, &simulated);
        }
        for path in paths.iter_mut().filter(|p| p.status != "measured") {
            CALLGRIND_FIGURES.iter().for_each(|(k, _)| {
                path.figures.insert(k, None);
            });
        }
    }
    progress.finish();
    let peers = if opts.peers {
        let full = paths.iter().find(|p| p.name == REFERENCE_PATH);
        let full_ms = full.and_then(|p| p.figures.get("elapsed_ms").copied().flatten()).map(|f| f.median);
        super::scan_peers::run(table_rows, opts.repeat, full_ms)?
    } else {
        Vec::new()
    };
    let mut parameters = BTreeMap::new();
    parameters.insert("rows", serde_json::json!(table_rows));
    parameters.insert("rows_asked_for", serde_json::json!(opts.rows));
    parameters.insert("repeat", serde_json::json!(opts.repeat.max(1)));
    parameters.insert("db_cache_size", serde_json::json!(memory));
    parameters.insert("inmemory_size", serde_json::json!(inmemory_for(opts.rows)));
    parameters.insert("memcompress", serde_json::json!("FOR QUERY LOW"));
    parameters.insert("row_lanes", serde_json::json!(row_lanes_line()));
    parameters.insert("hcc_level", serde_json::json!(opts.hcc_level.sql()));
    parameters.insert("blocks_customers", serde_json::json!(row_blocks));
    parameters.insert("blocks_customers_hcc", serde_json::json!(hcc_blocks));
    parameters
        .insert("hcc_blocks_ratio", serde_json::json!(format!("{:.3}", hcc_blocks as f64 / row_blocks.max(1) as f64)));
    let mut derivations: BTreeMap<&str, &str> = FIGURES.into_iter().collect();
    if opts.instructions == InstructionSource::Callgrind {
        derivations.extend(CALLGRIND_FIGURES);
    }
    let report = ScanReport {
        experiment: "scan",
        instructions: opts.instructions,
        environment: super::environment::Environment::read(),
        parameters,
        derivations,
        counters_unavailable: unavailable,
        callgrind_calibration: calibration,
        bandwidth_probe,
        tests: path_tests(&paths),
        paths,
        peers,
    };
    print_table(&report);
    let headline = Some(("path=FULL_BUFFER_CACHE", "cpu_ms"));
    let figures = history_figures(&report);
    let stored = super::history::store_report(&opts.history, "scan", &report.environment, &report, figures, headline)?;
    if let Some(out) = &opts.out {
        write_files(&report, out, stored.as_ref())?;
    }
    Ok(report)
}

/// Every figure of every measured path as the results history stores them: a group a
/// path, each figure's samples (callgrind's, counted once, as one sample).
fn history_figures(report: &ScanReport) -> Vec<super::history::FigureSamples> {
    let mut out = Vec::new();
    for path in report.paths.iter().filter(|p| p.status == "measured") {
        let group = format!("path={}", path.name);
        for (key, _) in FIGURES {
            let samples: Vec<f64> = path.samples.iter().filter_map(|s| s.figure(key)).collect();
            if !samples.is_empty() {
                out.push(super::history::FigureSamples::new(group.clone(), key, samples));
            }
        }
        for (key, _) in CALLGRIND_FIGURES {
            if let Some(f) = path.figures.get(key).copied().flatten() {
                out.push(super::history::FigureSamples::new(group.clone(), key, vec![f.median]));
            }
        }
    }
    out
}

/// Adds to `path` the figures of its simulated run: instructions, and each kind of miss
/// a row and a block, with the functions they fall in.
fn add_simulated_figures(path: &mut PathReport, simulated: &super::callgrind::Simulated) {
    let median = |key: &str| path.figures.get(key).copied().flatten().map_or(0.0, |f| f.median);
    let (rows, blocks) = (median("rows"), median("logical_reads"));
    let figure = |v: f64| Some(Figure { median: v, min: v, max: v });
    let per = |v: f64, n: f64| (n > 0.0).then(|| v / n).and_then(figure);
    let instructions = simulated.total(&["Ir"]) as f64;
    let mut added = vec![
        ("instructions_callgrind", figure(instructions)),
        ("instructions_per_row_callgrind", per(instructions, rows)),
    ];
    for ((kind, events), keys) in super::callgrind::MISS_KINDS.iter().zip(CALLGRIND_FIGURES[2..].chunks(2)) {
        let misses = simulated.total(events) as f64;
        added.push((keys[0].0, per(misses, rows)));
        added.push((keys[1].0, per(misses, blocks)));
        path.simulated_functions.insert(kind, simulated.top_functions(events, 3));
    }
    path.figures.extend(added);
}

/// One run of path `name` in the database in `dir`, counted and simulated by callgrind
/// in a child process.
fn callgrind_simulate(opts: &ScanOptions, dir: &std::path::Path, name: &str) -> Result<super::callgrind::Simulated> {
    let exe = lioscope_exe(opts)?;
    let profile = dir.join(format!("callgrind.{name}.out"));
    let args: Vec<String> = ["lab", "scan", "--rows", &opts.rows.to_string(), "--db"]
        .into_iter()
        .map(str::to_owned)
        .chain([dir.display().to_string(), "--callgrind-child".into(), name.into()])
        .collect();
    let simulated = super::callgrind::simulate(&exe, &args, &profile);
    let _ = std::fs::remove_file(&profile);
    simulated
}

/// The blocks of `table` below its high-water mark and the leaf blocks of `index` (0
/// where it has no statistics).
fn distinct_blocks(session: &Session, (table, index): (&str, Option<&str>)) -> Result<u64> {
    let leaves = match index {
        Some(index) => sample::whole(
            session,
            &format!("SELECT NVL(leaf_blocks, 0) FROM user_indexes WHERE index_name = '{index}'"),
        )?,
        None => 0,
    };
    Ok(table_blocks(session, table)? + leaves)
}

/// The blocks of `table` below its high-water mark.
fn table_blocks(session: &Session, table: &str) -> Result<u64> {
    sample::whole(session, &format!("SELECT blocks_below_hwm FROM user_segments WHERE segment_name = '{table}'"))
}

/// The in-memory size of each of customers' columns in the column store, by name.
fn inmemory_column_sizes(session: &Session) -> Result<BTreeMap<String, u64>> {
    let result =
        session.execute("SELECT column_name, inmemory_size FROM v$im_column_level WHERE table_name = 'CUSTOMERS'")?;
    Ok(result
        .rows
        .iter()
        .filter_map(|r| match (&r[0], &r[1]) {
            (name, lioscope::types::Datum::Int(n)) => Some((name.to_string(), *n as u64)),
            _ => None,
        })
        .collect())
}

/// The `lioscope` the callgrind children run: `--lioscope-exe`, else this one.
fn lioscope_exe(opts: &ScanOptions) -> Result<PathBuf> {
    match &opts.lioscope_exe {
        Some(exe) => Ok(exe.clone()),
        None => std::env::current_exe().map_err(|e| lioscope::Error::io("find", std::path::Path::new("lioscope"), e)),
    }
}

/// The `--callgrind-child` name of the calibration loop.
const CALIBRATION: &str = "CALIBRATION";

/// In the child callgrind runs (`--callgrind-child NAME`): path `name` once to warm the
/// caches, then once inside [`super::callgrind::counted_execution`], where collection
/// is on.
pub fn run_callgrind_child(opts: &ScanOptions, name: &str) -> Result<()> {
    if name == CALIBRATION {
        super::callgrind::counted_execution_of_a_known_loop(super::callgrind::CALIBRATION_ITERATIONS);
        return Ok(());
    }
    let Some(dir) = &opts.db else {
        return Err(lioscope::Error::InvalidParameter {
            name: "--callgrind-child".into(),
            message: "needs --db, the database the parent loaded".into(),
        });
    };
    let Some(sql) = PATHS.iter().find(|p| p.name == name).and_then(|p| p.sql) else {
        return Err(lioscope::Error::InvalidParameter {
            name: "--callgrind-child".into(),
            message: format!("no measured access path is named {name}"),
        });
    };
    let memory = memory_for(opts.rows);
    let db = Database::open(dir, database_options(memory))?;
    let session = db.session();
    prepare(&session, opts.rows, inmemory_for(opts.rows))?;
    populate(&session)?;
    sample::measure(&session, sql)?;
    super::callgrind::counted_execution(&session, sql)?;
    drop(session);
    db.close()
}

/// Bytes of buffer cache for `rows` customers: about 400 a row
/// (the blocks, the indexes and undo), at least 64 MiB.
fn memory_for(rows: u64) -> u64 {
    (rows * 400).max(64 << 20)
}

/// Bytes of column store for `rows` customers: about 160 a row, twice what FOR QUERY
/// LOW takes, at least 64 MiB. The In-Memory Area is mapped (and pre-paged) at this size.
fn inmemory_for(rows: u64) -> u64 {
    (rows * 160).max(64 << 20)
}

fn database_options(cache: u64) -> DatabaseOptions {
    DatabaseOptions { parameters: vec![("db_cache_size".to_owned(), cache.to_string())], ..Default::default() }
}

/// Creates and loads customers with its two indexes unless the database has them, and
/// sizes the column store.
fn prepare(session: &Session, rows: u64, inmemory: u64) -> Result<()> {
    let exists = session
        .execute("SELECT COUNT(*) FROM user_tables WHERE table_name = 'CUSTOMERS'")?
        .rows
        .first()
        .is_some_and(|r| r[0].to_string() != "0");
    if !exists {
        session.execute(super::customers::CREATE_TABLE)?;
        super::customers::load(session, "customers", rows)?;
        for (_, create) in super::customers::INDEXES {
            session.execute(create)?;
        }
        session.execute("ANALYZE TABLE customers COMPUTE STATISTICS")?;
    }
    session.execute(&format!("ALTER SYSTEM SET inmemory_size = {}M", inmemory.div_ceil(1 << 20)))?;
    Ok(())
}

/// Makes `customers_hcc`, customers compressed `FOR level`, unless the database has it at
/// that level; returns the blocks below the high-water mark of customers and of the copy.
fn compressed_copy(session: &Session, level: HccLevelArg) -> Result<(u64, u64)> {
    let existing = sample::first(session, "SELECT compress_for FROM user_tables WHERE table_name = 'CUSTOMERS_HCC'")?;
    if existing.as_deref() != Some(level.sql()) {
        if existing.is_some() {
            session.execute("DROP TABLE customers_hcc")?;
        }
        session
            .execute(&format!("CREATE TABLE customers_hcc COMPRESS FOR {} AS SELECT * FROM customers", level.sql()))?;
    }
    Ok((table_blocks(session, "CUSTOMERS")?, table_blocks(session, "CUSTOMERS_HCC")?))
}

/// Marks customers INMEMORY and waits until it is populated.
fn populate(session: &Session) -> Result<()> {
    session.execute("ALTER TABLE customers INMEMORY MEMCOMPRESS FOR QUERY LOW PRIORITY HIGH")?;
    let wait = session.execute("EXEC DBMS_INMEMORY_ADMIN.POPULATE_WAIT('HIGH', 100, 3600)")?;
    match wait.rows.first().map(|r| r[0].to_string()) {
        Some(code) if code == "0" => Ok(()),
        code => Err(lioscope::Error::InvalidValue {
            context: "lab scan: populating customers".into(),
            message: format!("POPULATE_WAIT returned {}", code.unwrap_or_default()),
        }),
    }
}

/// The figures of the terminal table, and of the HTML one.
fn table_keys(report: &ScanReport) -> Vec<&'static str> {
    let mut keys = vec![
        "rows",
        "logical_reads",
        "buffer_is_pinned_count",
        "cpu_ms",
        "elapsed_ms",
        "instructions_per_row",
        "cycles_per_row",
        "ipc",
        "read_gb_per_s",
        "bandwidth_fraction",
    ];
    if report.instructions == InstructionSource::Callgrind {
        keys.extend(["instructions_per_row_callgrind", "ll_misses_per_row_sim", "mispredictions_per_row_sim"]);
    }
    keys
}

/// One path's cells: its name, then each figure as median [min..max], "n/a" where not
/// available, or the path's status where it has no figures.
fn table_row(path: &PathReport, keys: &[&str]) -> Vec<String> {
    let mut row = vec![path.name.to_owned()];
    if path.status != "measured" {
        row.push(path.status.to_owned());
        row.extend(keys[1..].iter().map(|_| String::new()));
        return row;
    }
    row.extend(keys.iter().map(|key| super::report::cell(path.figures.get(key).copied().flatten())));
    row
}

/// The heading of the peers' table.
const PEERS_HEADER: [&str; 5] =
    ["engine", "elapsed ms (median [min..max])", "rows/s", "its elapsed / lioscope FULL_BUFFER_CACHE's", "settings"];

/// A row a peer: its scans, or why it did not run.
fn peer_rows(report: &ScanReport) -> Vec<Vec<String>> {
    report
        .peers
        .iter()
        .map(|p| match &p.error {
            Some(why) => vec![
                p.engine.to_owned(),
                format!("did not run: {why}"),
                String::new(),
                String::new(),
                p.settings.clone(),
            ],
            None => vec![
                p.engine.to_owned(),
                super::report::cell(p.elapsed_ms),
                p.rows_per_s.map_or_else(String::new, |r| format!("{:.2} M", r / 1e6)),
                super::report::ratio_cell(p.lioscope_speedup),
                p.settings.clone(),
            ],
        })
        .collect()
}

/// Whether the full scan counted rows eight at a time in lanes, and why.
fn row_lanes_line() -> String {
    let choice = lioscope::row_lanes::choice();
    format!(
        "full scan row lanes: {} ({}; {}=on or off chooses)",
        choice.setting(),
        choice.why,
        lioscope::row_lanes::CHOICE_VARIABLE
    )
}

/// The terminal table: one row per path, the main figures as median [min..max].
fn print_table(report: &ScanReport) {
    let keys = table_keys(report);
    let header: Vec<&str> = std::iter::once("path").chain(keys.iter().copied()).collect();
    super::report::print_table(&header, report.paths.iter().map(|p| table_row(p, &keys)));
    super::report::print_table(&TESTS_HEADER, test_rows(report));
    if !report.peers.is_empty() {
        super::report::print_table(&PEERS_HEADER, peer_rows(report));
    }
    if let Some(line) = compressed_line(report) {
        println!("{line}");
    }
    println!("{}", report.bandwidth_probe.line());
    if let Some(lanes) = report.parameters.get("row_lanes").and_then(|l| l.as_str()) {
        println!("{lanes}");
    }
    for line in simulated_lines(report) {
        println!("{line}");
    }
    super::report::print_derivations(&report.parameters["repeat"], &report.derivations);
    if let Some(c) = &report.callgrind_calibration {
        println!("{}", calibration_line(c));
    }
    if !report.counters_unavailable.is_empty() {
        println!("n/a: counters this machine does not offer (their figures are null in scan.json):");
    }
    for (counter, why) in &report.counters_unavailable {
        println!("  {counter}: {why}");
    }
}

/// The compressed copy against the row table, as the source compared them: blocks, and
/// what the scan decompressed.
fn compressed_line(report: &ScanReport) -> Option<String> {
    let path = report.paths.iter().find(|p| p.name == "COMPRESSED_BLOCKS" && p.status == "measured")?;
    let figure = |key: &str| path.figures.get(key).copied().flatten().map_or(0.0, |f| f.median);
    let p = &report.parameters;
    Some(format!(
        "COMPRESSED_BLOCKS: customers_hcc (COMPRESS FOR {}) takes {} blocks against customers' {} ({} of them); a \
         scan decompressed {} compression units, {} columns, {} bytes ({:.2} GB a second of its CPU)",
        p["hcc_level"].as_str().unwrap_or("?"),
        p["blocks_customers_hcc"],
        p["blocks_customers"],
        p["hcc_blocks_ratio"].as_str().unwrap_or("?"),
        figure("ehcc_cus_decompressed"),
        figure("ehcc_columns_decompressed"),
        figure("ehcc_decompressed_bytes"),
        figure("ehcc_decompressed_gb_per_s"),
    ))
}

/// With the simulation: for each path and kind of miss, the functions they fall in.
fn simulated_lines(report: &ScanReport) -> Vec<String> {
    let mut lines = Vec::new();
    for path in &report.paths {
        for (kind, top) in &path.simulated_functions {
            let shares: Vec<String> = top.iter().map(|(f, share)| format!("{:.0}% {f}", share * 100.0)).collect();
            let shares = if shares.is_empty() { "none".to_owned() } else { shares.join(", ") };
            lines.push(format!("{} {kind} (simulated) fall in: {shares}", path.name));
        }
    }
    lines
}

/// What the calibration found, as a sentence for the table's notes and the HTML report.
pub(crate) fn calibration_line(c: &super::callgrind::Calibration) -> String {
    let verdict = if c.within_tolerance() {
        "within the tolerance"
    } else {
        "OUTSIDE the tolerance: callgrind's counts are not to be trusted here"
    };
    format!(
        "callgrind calibration: a loop of {} iterations × {} instructions executes {} instructions; callgrind \
         counted {} ({:+.5}%, {verdict} of {}%)",
        c.iterations,
        super::callgrind::CALIBRATION_INSTRUCTIONS_PER_ITERATION,
        c.expected_instructions,
        c.counted_instructions,
        c.relative_error * 100.0,
        super::callgrind::CALIBRATION_TOLERANCE * 100.0
    )
}

/// scan.json (everything), scan.csv (one line per path and figure) and scan.html.
fn write_files(report: &ScanReport, out: &std::path::Path, stored: Option<&super::history::Stored>) -> Result<()> {
    std::fs::create_dir_all(out).map_err(|e| lioscope::Error::io("create", out, e))?;
    crate::report::write_json(&out.join("scan.json"), report)?;
    let mut rows = Vec::new();
    for p in &report.paths {
        for (key, how) in &report.derivations {
            let f = p.figures.get(key).copied().flatten();
            let [median, min, max] = super::report::figure_cells(f);
            rows.push(vec![p.name.into(), p.status.into(), key.to_string(), median, min, max, how.to_string()]);
        }
    }
    let header = ["path", "status", "figure", "median", "min", "max", "derivation"];
    super::report::write_csv(&out.join("scan.csv"), &header, &rows)?;
    super::report::write_html(&out.join("scan.html"), &html(report, stored)?)
}

/// The HTML report: the table, and the source document's charts (CPU time, logical
/// reads, instructions, instructions per row, instructions and cycles, IPC), each path a
/// bar, "n/a" where the figure is not available.
fn html(report: &ScanReport, stored: Option<&super::history::Stored>) -> Result<super::report::Html> {
    use super::report::{Chart, Html, Series};
    let names: Vec<&str> = report.paths.iter().map(|p| p.name).collect();
    let series = |label: &str, key: &str| {
        let points = report.paths.iter().enumerate().filter_map(|(i, p)| {
            let f = p.figures.get(key).copied().flatten()?;
            Some((i as f64, f.median, (f.min != f.max).then_some((f.min, f.max))))
        });
        Series::new(label, points.collect())
    };
    let how = |key: &str| format!("{key}: {}", report.derivations.get(key).copied().unwrap_or("see the table"));
    let callgrind = report.instructions == InstructionSource::Callgrind;
    let mut html = Html::new("lab scan: the cost of a row by access path", &report.environment, &report.parameters);
    let keys = table_keys(report);
    html.table_from(
        "Figures by access path (median [min..max] of the runs)",
        &std::iter::once("path").chain(keys.iter().copied()).collect::<Vec<_>>(),
        report.paths.iter().map(|p| table_row(p, &keys)),
    );
    html.table_from("Each path's CPU time against the full scan's", &TESTS_HEADER, test_rows(report));
    if !report.peers.is_empty() {
        html.table_from("The full scan's query in the peers, on the same rows", &PEERS_HEADER, peer_rows(report));
    }
    if !report.counters_unavailable.is_empty() {
        html.table_from(
            "Counters this machine does not offer (null in scan.json, n/a in the charts)",
            &["counter", "why"],
            report.counters_unavailable.iter().map(|(c, why)| vec![c.to_string(), why.clone()]),
        );
    }
    if let Some(c) = &report.callgrind_calibration {
        html.paragraph(&calibration_line(c));
    }
    if let Some(line) = compressed_line(report) {
        html.paragraph(&line);
    }
    html.paragraph(&report.bandwidth_probe.line());
    for line in simulated_lines(report) {
        html.paragraph(&line);
    }
    html.chart(Chart::bars("CPU time", "ms", &names, vec![series("CPU ms", "cpu_ms")], &how("cpu_ms")))?;
    html.chart(Chart::bars(
        "Logical reads",
        "logical reads",
        &names,
        vec![series("logical reads", "logical_reads")],
        &how("logical_reads"),
    ))?;
    let mut instructions = vec![series("instructions (perf)", "instructions")];
    let mut per_row = vec![series("instructions per row (perf)", "instructions_per_row")];
    let mut notes = vec![how("instructions")];
    let mut per_row_notes = vec![how("instructions_per_row")];
    if callgrind {
        instructions.push(series("instructions (callgrind)", "instructions_callgrind"));
        per_row.push(series("instructions per row (callgrind)", "instructions_per_row_callgrind"));
        notes.push(how("instructions_callgrind"));
        per_row_notes.push(how("instructions_per_row_callgrind"));
    }
    html.chart(Chart::bars("Instructions", "instructions", &names, instructions, &notes.join("; ")))?;
    html.chart(Chart::bars("Instructions per row", "instructions / row", &names, per_row, &per_row_notes.join("; ")))?;
    html.chart(Chart::bars(
        "Instructions and cycles",
        "count",
        &names,
        vec![series("instructions", "instructions"), series("cycles", "cycles")],
        &format!("{}; {}", how("instructions"), how("cycles")),
    ))?;
    html.chart(Chart::bars("IPC", "instructions / cycle", &names, vec![series("IPC", "ipc")], &how("ipc")))?;
    html.chart(Chart::bars(
        "Bytes a second against the memory bandwidth probe",
        "fraction of one core's read bandwidth",
        &names,
        vec![series("bandwidth fraction", "bandwidth_fraction")],
        &how("bandwidth_fraction"),
    ))?;
    super::history::draw_trend(&mut html, stored)?;
    html.derivations(&report.derivations);
    Ok(html)
}
