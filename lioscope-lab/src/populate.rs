//! `lioscope lab populate`: in-memory population, after the source experiment that
//! profiled Oracle's population workers (snapper's per-session time, perf's profile by
//! function) and found them moving from CPU to `db file sequential read` as chained rows
//! sent them after their pieces.
//!
//! The customers table and, unless `--no-chained`, a copy whose rows nearly all migrated
//! (built as `bench inmemory` builds it) are cached, then populated at each MEMCOMPRESS
//! level (FOR QUERY LOW, QUERY HIGH, CAPACITY HIGH) by each worker count, in `--repeat`
//! rounds of a seeded shuffled order. One population is measured exactly as `bench
//! inmemory` measures it (the same function: from `ALTER TABLE … INMEMORY` to the return
//! of POPULATE_WAIT, with the `v$sysstat` deltas of the workers' statistics), so the two
//! commands never disagree on what a population costs; `bench inmemory` adds the
//! in-memory scans.
//!
//! Where population time goes comes from lioscope's own accounting, by phase: reading
//! blocks, decoding rows, following chained rows' pieces, building dictionaries, encoding
//! and compressing (`IM populate time ...` statistics) — the source's profile by function,
//! summed by what the functions do. And over time, from Active Session History sampled
//! every `--ash-interval` ms: each worker's share of each [`BUCKET_MS`] slice ON CPU and
//! waiting on `db file sequential read` (the migrated rows' pieces read one by one, with
//! `--cold`) — the source's two scatter plots, drawn from ASH instead of snapper's
//! snapshots.
//!
//! Invariants: every population starts from a table taken out of the column store (NO
//! INMEMORY) and ends with POPULATE_WAIT's success, or the run fails naming the case.

use super::bench::inmemory::{self as bench, PHASES, Population};
use super::history::{self, FigureSamples, HistoryArgs};
use super::stats::{Alternative, Method, Spread, mann_whitney, spread};
use lioscope::{Database, DatabaseOptions, Error, Result};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// The MEMCOMPRESS levels populated by default, as the source's comparison.
pub const LEVELS: [&str; 3] = ["FOR QUERY LOW", "FOR QUERY HIGH", "FOR CAPACITY HIGH"];

/// Options of the experiment.
#[derive(Debug, Clone, clap::Args)]
pub struct PopulateOptions {
    /// Rows of customers (the source's case: 50,000,000).
    #[arg(long, default_value_t = 1_000_000)]
    pub rows: u64,
    /// Population worker counts (`inmemory_max_populate_servers`).
    #[arg(long, value_delimiter = ',', default_values_t = vec![1, 2])]
    pub workers: Vec<u32>,
    /// MEMCOMPRESS levels, e.g. `"FOR QUERY LOW"`.
    #[arg(long, value_delimiter = ',', default_values_t = LEVELS.map(String::from).to_vec())]
    pub levels: Vec<String>,
    /// Leave out the copy whose rows migrated.
    #[arg(long)]
    pub no_chained: bool,
    /// Flush the buffer cache before each population (`ALTER SYSTEM FLUSH BUFFER_CACHE`,
    /// which also drops the datafiles' pages from the OS cache), so that workers read
    /// the blocks, and the migrated rows' pieces one by one, from disk, as the source's
    /// workers did; by default every block is cached.
    #[arg(long)]
    pub cold: bool,
    /// Active Session History's sampling interval during the run, in milliseconds (10 at
    /// least; Oracle's 1000 would take few samples of a population).
    #[arg(long, default_value_t = 10)]
    pub ash_interval: u64,
    /// Rounds: populations of each case (5 by default: a two-sided Mann-Whitney test of
    /// 3 against 3 cannot reach p < 0.05).
    #[arg(long, default_value_t = 5)]
    pub repeat: usize,
    /// Seed of the rounds' shuffled order (default: from the clock; the report records it).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Directory for the report: populate.json, populate.csv and populate.html.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Directory for the database (default: a temporary directory, removed after).
    #[arg(long)]
    pub db: Option<PathBuf>,
    #[command(flatten)]
    pub history: HistoryArgs,
}

/// One case: a table, a level, a worker count.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
pub struct Case {
    pub table: String,
    pub level: &'static str,
    pub workers: u32,
}

impl Case {
    /// The case as tables and the results history name it.
    pub fn label(&self) -> String {
        let level = self.level.trim_start_matches("FOR ");
        let migrated = if self.table == bench::CHAINED { ", migrated rows" } else { "" };
        format!("{level}, {} worker{}{migrated}", self.workers, if self.workers == 1 { "" } else { "s" })
    }
}

/// One population of a case.
#[derive(Debug, Clone, serde::Serialize)]
pub struct PopulateRun {
    /// Its place in the run's order (0 first).
    pub sequence: usize,
    pub population: Population,
}

impl PopulateRun {
    fn figure(&self, key: &str) -> Option<f64> {
        let p = &self.population;
        if let Some(i) = PHASES.iter().position(|(_, phase, _)| *phase == key) {
            return Some(p.phases_us[i] as f64 / 1000.0);
        }
        match key {
            "elapsed_ms" => Some(p.elapsed_ms),
            "mb_per_s" => Some(p.rates.mb_per_s),
            "mb_per_s_per_worker" => Some(p.rates.mb_per_s_per_worker),
            "rows_per_s_per_worker" => Some(p.rates.rows_per_s_per_worker),
            "cpu_s" => Some(p.rates.cpu_s),
            "continued_rows" => Some(p.continued_rows as f64),
            "physical_reads" => Some(p.physical_reads as f64),
            "compression_ratio" => Some(p.rates.compression_ratio),
            _ => None,
        }
    }
}

/// The figures of a case, in report order, and how each is derived.
pub const FIGURES: [(&str, &str); 14] = [
    ("elapsed_ms", "wall clock from ALTER TABLE … INMEMORY to the return of POPULATE_WAIT"),
    ("mb_per_s", "v$im_segments BYTES / 10^6 / elapsed s"),
    ("mb_per_s_per_worker", "mb_per_s / workers"),
    ("rows_per_s_per_worker", "v$im_segments POPULATED_ROWS / elapsed s / workers"),
    ("cpu_s", "delta of 'IM populate CPU time' (every worker) / 100"),
    ("read_ms", "delta of 'IM populate time reading blocks (us)' / 1000: multiblock reads, consistent gets"),
    ("decode_ms", "delta of 'IM populate time decoding rows (us)' / 1000: rows into the gather buffers"),
    (
        "chained_ms",
        "delta of 'IM populate time following chained rows (us)' / 1000: finding and reading migrated or chained \
         rows' pieces",
    ),
    (
        "dictionary_ms",
        "delta of 'IM populate time building dictionaries (us)' / 1000: hashing keys, finding the distinct ones",
    ),
    ("encode_ms", "delta of 'IM populate time encoding (us)' / 1000: domains, values to codes, plain keys"),
    (
        "compress_ms",
        "delta of 'IM populate time compressing (us)' / 1000: codes into byte lanes, bit-packed or run-length",
    ),
    ("continued_rows", "delta of 'table fetch continued row': pieces of migrated or chained rows followed"),
    ("physical_reads", "delta of 'physical reads': blocks the workers read from disk (with --cold)"),
    ("compression_ratio", "v$im_segments BYTES / INMEMORY_SIZE"),
];

/// The slice of time each ASH point covers.
pub const BUCKET_MS: u64 = 100;

/// One worker over one slice of time, from its ASH samples.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct AshPoint {
    /// Seconds since the experiment's first population began (by sample ids × interval).
    pub at_s: f64,
    /// The case being populated.
    pub case: String,
    /// The worker (`W000`, ...).
    pub worker: String,
    /// Shares of the slice: ON CPU, waiting on `db file sequential read`, waiting on
    /// anything else (samples × interval / slice × 100).
    pub on_cpu_pct: f64,
    pub sequential_read_pct: f64,
    pub other_wait_pct: f64,
}

/// A case's figures over its runs.
#[derive(Debug, serde::Serialize)]
pub struct CaseReport {
    #[serde(flatten)]
    pub case: Case,
    pub label: String,
    pub figures: BTreeMap<&'static str, Option<Spread>>,
    pub runs: Vec<PopulateRun>,
}

/// A comparison the report claims, with its test.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Comparison {
    pub what: String,
    pub figure: &'static str,
    /// The second set's median over the first's.
    pub median_ratio: Option<f64>,
    /// Two-sided Mann-Whitney U of the second set against the first.
    pub p_value: Option<f64>,
    pub method: Option<Method>,
}

/// The whole report, as populate.json holds it.
#[derive(Debug, serde::Serialize)]
pub struct PopulateReport {
    pub experiment: &'static str,
    pub environment: super::environment::Environment,
    pub parameters: BTreeMap<&'static str, serde_json::Value>,
    pub derivations: BTreeMap<&'static str, &'static str>,
    /// `table fetch continued row` of one full scan of the migrated copy (rows that
    /// migrated), when it was built.
    pub migrated_rows: Option<u64>,
    pub cases: Vec<CaseReport>,
    /// Migrated rows against the plain table, and more workers against one.
    pub comparisons: Vec<Comparison>,
    /// The order the populations ran in.
    pub schedule: Vec<Case>,
    /// Each worker's time over each slice of every population, from ASH.
    pub ash: Vec<AshPoint>,
}

/// The levels asked for, as the SQL names them; an error names one that is not a level.
fn levels(opts: &PopulateOptions) -> Result<Vec<&'static str>> {
    const KNOWN: [&str; 6] =
        ["FOR DML", "FOR QUERY LOW", "FOR QUERY HIGH", "FOR CAPACITY LOW", "FOR CAPACITY HIGH", "NO MEMCOMPRESS"];
    opts.levels
        .iter()
        .map(|given| {
            let normal = given.trim().to_ascii_uppercase();
            let normal =
                if normal.starts_with("FOR ") || normal == "NO MEMCOMPRESS" { normal } else { format!("FOR {normal}") };
            KNOWN.iter().find(|k| **k == normal).copied().ok_or_else(|| Error::InvalidParameter {
                name: "--levels".into(),
                message: format!("'{given}' is not a MEMCOMPRESS level ({})", KNOWN.join(", ")),
            })
        })
        .collect()
}

/// Runs the experiment, prints its tables and writes the report files.
pub fn run(opts: &PopulateOptions) -> Result<PopulateReport> {
    let levels = levels(opts)?;
    if opts.workers.is_empty() || opts.workers.iter().any(|&w| w == 0 || w > 64) {
        return Err(Error::InvalidParameter { name: "--workers".into(), message: "worker counts are 1 to 64".into() });
    }
    if !(10..=1000).contains(&opts.ash_interval) {
        return Err(Error::InvalidParameter { name: "--ash-interval".into(), message: "10 to 1000 ms".into() });
    }
    if opts.rows == 0 {
        return Err(Error::InvalidParameter { name: "--rows".into(), message: "must be above 0".into() });
    }
    let rounds = opts.repeat.max(1);
    let seed = super::levels::seed_or_clock(opts.seed);
    let chained = !opts.no_chained;
    let (dir, _tmp) = super::sample::work_dir(opts.db.as_deref(), "lab-populate")?;
    let rows = opts.rows;
    let cache = (rows * 240).max(64 << 20) + if chained { rows * 600 } else { 0 } + (64 << 20);
    let mut parameters = vec![("db_cache_size".to_owned(), cache.to_string())];
    if chained {
        parameters.push(("undo_tablespace_size".into(), bench::CHAINED_UNDO.into()));
    }
    let db = Database::open_or_create(&dir, DatabaseOptions { parameters, ..Default::default() })?;
    let tables: Vec<&str> = if chained { vec![bench::CUSTOMERS, bench::CHAINED] } else { vec![bench::CUSTOMERS] };
    let mut cases: Vec<Case> = Vec::new();
    for table in &tables {
        for &level in &levels {
            for &workers in &opts.workers {
                cases.push(Case { table: table.to_string(), level, workers });
            }
        }
    }
    let progress = super::progress::Steps::new((2 + cases.len() * rounds) as u64, "lab populate");
    progress.step("loading customers");
    let session = db.session();
    session.execute(super::customers::CREATE_TABLE)?;
    super::customers::load(&session, "customers", rows)?;
    let migrated_rows = if chained {
        progress.step("building the copy whose rows migrated");
        Some(bench::build_chained(&session, rows)?)
    } else {
        None
    };
    // Every block cached before population reads them (the migrated copy was cached
    // when its rows were checked).
    session.execute(super::customers::count::FULL_NO_PREDICATE)?;
    let table_bytes =
        bench::segment_bytes(&session, bench::CUSTOMERS)? + bench::segment_bytes(&session, bench::CHAINED)?;
    let inmemory_size = (table_bytes * 3 / 4).max(256 << 20).div_ceil(1 << 20) << 20;
    session.execute(&format!("ALTER SYSTEM SET inmemory_size = {}M", inmemory_size >> 20))?;
    bench::pre_page_area(&session)?;
    session.execute(&format!("ALTER SYSTEM SET \"_ash_sampling_interval\" = {}", opts.ash_interval))?;
    let first_sample = last_sample_id(&session)?;
    let mut ash = Vec::new();
    let schedule = super::levels::shuffled_rounds(&cases, rounds, seed);
    let mut runs: BTreeMap<Case, Vec<PopulateRun>> = BTreeMap::new();
    for (sequence, case) in schedule.iter().enumerate() {
        progress.step(&case.label());
        if opts.cold {
            session.execute("ALTER SYSTEM FLUSH BUFFER_CACHE")?;
        }
        let sampled_from = last_sample_id(&session)?;
        let population =
            bench::populate(&session, &case.table, case.level, case.workers).map_err(|e| Error::InvalidValue {
                context: format!("lab populate: {} of {}", case.label(), case.table),
                message: e.to_string(),
            })?;
        ash.extend(ash_points(&session, case, (sampled_from, last_sample_id(&session)?), first_sample)?);
        // Out of the column store again, so that the next case starts from nothing.
        session.execute(&format!("ALTER TABLE {} NO INMEMORY", case.table))?;
        runs.entry(case.clone()).or_default().push(PopulateRun { sequence, population });
    }
    progress.finish();
    drop(session);
    db.close()?;
    let cases: Vec<CaseReport> = cases
        .into_iter()
        .map(|case| {
            let runs = runs.remove(&case).unwrap_or_default();
            let figures = super::levels::spreads(&FIGURES, &runs, PopulateRun::figure);
            CaseReport { label: case.label(), case, figures, runs }
        })
        .collect();
    let comparisons = comparisons(&cases);
    let mut report_parameters = BTreeMap::new();
    report_parameters.insert("rows", serde_json::json!(rows));
    report_parameters.insert("workers", serde_json::json!(opts.workers));
    report_parameters.insert("levels", serde_json::json!(levels));
    report_parameters.insert("repeat", serde_json::json!(rounds));
    report_parameters.insert("cold", serde_json::json!(opts.cold));
    report_parameters.insert("ash_interval_ms", serde_json::json!(opts.ash_interval));
    report_parameters.insert("seed", serde_json::json!(seed));
    report_parameters.insert("db_cache_size", serde_json::json!(cache));
    report_parameters.insert("inmemory_size", serde_json::json!(inmemory_size));
    let derivations: BTreeMap<&str, &str> = FIGURES.into_iter().collect();
    let report = PopulateReport {
        experiment: "populate",
        environment: super::environment::Environment::read(),
        parameters: report_parameters,
        derivations,
        migrated_rows,
        cases,
        comparisons,
        schedule,
        ash,
    };
    print_tables(&report);
    let figures = history_figures(&report);
    let headline = report.cases.first().map(|c| format!("case={}", c.label));
    let stored = history::store_report(
        &opts.history,
        "populate",
        &report.environment,
        &report,
        figures,
        headline.as_deref().map(|g| (g, "mb_per_s_per_worker")),
    )?;
    if let Some(out) = &opts.out {
        write_files(&report, out, stored.as_ref())?;
    }
    Ok(report)
}

/// The newest ASH sample's id (0 before any).
fn last_sample_id(session: &lioscope::Session) -> Result<u64> {
    let r = session.execute("SELECT MAX(sample_id) FROM v$active_session_history")?;
    Ok(r.rows.first().and_then(|row| row[0].to_string().parse().ok()).unwrap_or(0))
}

/// The population workers' ASH samples after sample `from` up to `to`, as each worker's
/// shares of each [`BUCKET_MS`] slice; `first` is the experiment's first sample id.
fn ash_points(session: &lioscope::Session, case: &Case, (from, to): (u64, u64), first: u64) -> Result<Vec<AshPoint>> {
    let r = session.execute(&format!(
        "SELECT sample_id, program, session_state, event, sample_interval_ms FROM v$active_session_history \
         WHERE sample_id > {from} AND sample_id <= {to} AND program LIKE 'W%'"
    ))?;
    // (slice, worker) → (on CPU, sequential read, other wait) milliseconds.
    let mut slices: BTreeMap<(u64, String), [f64; 3]> = BTreeMap::new();
    for row in &r.rows {
        let sample: u64 = row[0].to_string().parse().unwrap_or(0);
        let interval: f64 = row[4].to_string().parse().unwrap_or(0.0);
        let at_ms = (sample.saturating_sub(first)) as f64 * interval;
        let slice = (at_ms / BUCKET_MS as f64) as u64;
        let state = row[2].to_string();
        let kind = if state == "ON CPU" {
            0
        } else if row[3].to_string() == "db file sequential read" {
            1
        } else {
            2
        };
        slices.entry((slice, row[1].to_string())).or_default()[kind] += interval;
    }
    let pct = |ms: f64| ms / BUCKET_MS as f64 * 100.0;
    Ok(slices
        .into_iter()
        .map(|((slice, worker), ms)| AshPoint {
            at_s: (slice * BUCKET_MS) as f64 / 1000.0,
            case: case.label(),
            worker,
            on_cpu_pct: pct(ms[0]),
            sequential_read_pct: pct(ms[1]),
            other_wait_pct: pct(ms[2]),
        })
        .collect())
}

/// What the report claims, each with its test: at each level and worker count, the
/// migrated copy's rate against the plain table's; for each table and level, each
/// worker count's rate a worker against one worker's.
fn comparisons(cases: &[CaseReport]) -> Vec<Comparison> {
    let samples = |c: &CaseReport, key: &str| -> Vec<f64> { c.runs.iter().filter_map(|r| r.figure(key)).collect() };
    let compare = |what: String, figure: &'static str, a: &CaseReport, b: &CaseReport| {
        let (sa, sb) = (samples(a, figure), samples(b, figure));
        let test = (sa.len() > 1 && sb.len() > 1).then(|| mann_whitney(&sb, &sa, Alternative::TwoSided)).flatten();
        let median = |v: &[f64]| (!v.is_empty()).then(|| spread(v.iter().copied()).median);
        Comparison {
            what,
            figure,
            median_ratio: median(&sb).zip(median(&sa)).filter(|(_, a)| *a > 0.0).map(|(b, a)| b / a),
            p_value: test.map(|t| t.p_value),
            method: test.map(|t| t.method),
        }
    };
    let mut out = Vec::new();
    for b in cases.iter().filter(|c| c.case.table == bench::CHAINED) {
        let plain = cases.iter().find(|a| {
            a.case.table == bench::CUSTOMERS && a.case.level == b.case.level && a.case.workers == b.case.workers
        });
        if let Some(a) = plain {
            out.push(compare(format!("{} against the plain table", b.label), "rows_per_s_per_worker", a, b));
        }
    }
    for b in cases.iter().filter(|c| c.case.workers > 1) {
        let one =
            cases.iter().find(|a| a.case.table == b.case.table && a.case.level == b.case.level && a.case.workers == 1);
        if let Some(a) = one {
            out.push(compare(format!("{} against one worker", b.label), "rows_per_s_per_worker", a, b));
        }
    }
    out
}

/// Every case's figures as the results history stores them: a group a case.
fn history_figures(report: &PopulateReport) -> Vec<FigureSamples> {
    let mut out = Vec::new();
    for case in &report.cases {
        for (key, _) in FIGURES {
            let samples: Vec<f64> = case.runs.iter().filter_map(|r| r.figure(key)).collect();
            if !samples.is_empty() {
                out.push(FigureSamples::new(format!("case={}", case.label), key, samples));
            }
        }
    }
    out
}

/// The columns of the cases' table.
const CASE_COLUMNS: [&str; 11] = [
    "case",
    "elapsed ms",
    "MB/s a worker",
    "rows/s a worker",
    "reading ms",
    "decoding ms",
    "chained ms",
    "dictionaries ms",
    "encoding ms",
    "compressing ms",
    "continued rows",
];

fn case_rows(report: &PopulateReport) -> Vec<Vec<String>> {
    report
        .cases
        .iter()
        .map(|c| {
            let cell = |key: &str| super::report::cell(c.figures[key]);
            vec![
                c.label.clone(),
                cell("elapsed_ms"),
                cell("mb_per_s_per_worker"),
                cell("rows_per_s_per_worker"),
                cell("read_ms"),
                cell("decode_ms"),
                cell("chained_ms"),
                cell("dictionary_ms"),
                cell("encode_ms"),
                cell("compress_ms"),
                cell("continued_rows"),
            ]
        })
        .collect()
}

const COMPARISON_COLUMNS: [&str; 3] = ["comparison", "rows/s a worker, ratio", "p (Mann-Whitney U, two-sided)"];

fn comparison_rows(report: &PopulateReport) -> Vec<Vec<String>> {
    report
        .comparisons
        .iter()
        .map(|c| {
            vec![c.what.clone(), super::report::ratio_cell(c.median_ratio), super::levels::p_cell(c.p_value, c.method)]
        })
        .collect()
}

fn print_tables(report: &PopulateReport) {
    super::report::print_table(&CASE_COLUMNS, case_rows(report));
    super::report::print_table(&COMPARISON_COLUMNS, comparison_rows(report));
    if let Some(m) = report.migrated_rows {
        println!("The migrated copy: {m} of {} rows migrated.", report.parameters["rows"]);
    }
    super::report::print_derivations(&report.parameters["repeat"], &report.derivations);
}

/// populate.json (everything), populate.csv (one line per case and figure) and
/// populate.html.
fn write_files(report: &PopulateReport, out: &std::path::Path, stored: Option<&history::Stored>) -> Result<()> {
    std::fs::create_dir_all(out).map_err(|e| Error::io("create", out, e))?;
    super::report::write_json(&out.join("populate.json"), report)?;
    let rows: Vec<Vec<String>> = report
        .cases
        .iter()
        .flat_map(|c| {
            FIGURES.iter().map(move |&(key, how)| {
                let [median, min, max] = super::report::figure_cells(c.figures[key]);
                vec![c.label.clone(), key.to_owned(), median, min, max, how.to_owned()]
            })
        })
        .collect();
    super::report::write_csv(
        &out.join("populate.csv"),
        &["case", "figure", "median", "min", "max", "derivation"],
        &rows,
    )?;
    super::report::write_html(&out.join("populate.html"), &html(report, stored)?)
}

/// The HTML report: the tables, population speed a worker by case, and where the time
/// went by phase.
fn html(report: &PopulateReport, stored: Option<&history::Stored>) -> Result<super::report::Html> {
    use super::report::{Chart, Html, Series};
    let mut html = Html::new("lab populate: in-memory population", &report.environment, &report.parameters);
    if let Some(m) = report.migrated_rows {
        html.paragraph(&format!("The migrated copy: {m} of {} rows migrated.", report.parameters["rows"]));
    }
    html.table_from("Populations by case (median [min..max] of the runs)", &CASE_COLUMNS, case_rows(report));
    html.table_from("What the report claims, tested", &COMPARISON_COLUMNS, comparison_rows(report));
    // One group a level and worker count; the plain table and the migrated copy side by side.
    let mut groups: Vec<(&'static str, u32)> = report.cases.iter().map(|c| (c.case.level, c.case.workers)).collect();
    groups.dedup();
    groups.sort_by_key(|g| (LEVELS.iter().position(|l| *l == g.0), g.1));
    groups.dedup();
    let labels: Vec<String> =
        groups.iter().map(|(level, workers)| format!("{} ×{workers}", level.trim_start_matches("FOR "))).collect();
    let label_refs: Vec<&str> = labels.iter().map(String::as_str).collect();
    let speed = |table: &str| {
        let points = groups
            .iter()
            .enumerate()
            .filter_map(|(i, &(level, workers))| {
                let c = report
                    .cases
                    .iter()
                    .find(|c| c.case.table == table && c.case.level == level && c.case.workers == workers)?;
                let f = c.figures["mb_per_s_per_worker"]?;
                Some((i as f64, f.median, Some((f.min, f.max))))
            })
            .collect();
        let name = if table == bench::CHAINED { "migrated rows" } else { "plain rows" };
        Series::new(name, points)
    };
    let mut series = vec![speed(bench::CUSTOMERS)];
    if report.migrated_rows.is_some() {
        series.push(speed(bench::CHAINED));
    }
    html.chart(Chart::bars(
        "Population speed a worker, by level and workers",
        "MB/s a worker",
        &label_refs,
        series,
        "v$im_segments BYTES / 10^6 / elapsed s / workers, median of the runs, bars from min to max; ×n: n workers",
    ))?;
    let phase_names: Vec<&str> = PHASES.iter().map(|(_, _, name)| *name).collect();
    let series = report
        .cases
        .iter()
        .filter(|c| c.case.workers == report.cases.iter().map(|c| c.case.workers).min().unwrap_or(1))
        .map(|c| {
            let points = PHASES
                .iter()
                .enumerate()
                .filter_map(|(i, (_, key, _))| c.figures[*key].map(|f| (i as f64, f.median, Some((f.min, f.max)))))
                .collect();
            Series::new(&c.label, points)
        })
        .collect();
    html.chart(Chart::bars(
        "Where population time goes, by phase",
        "ms of the workers' time",
        &phase_names,
        series,
        "deltas of the IM populate time statistics over each population (every worker), median of the runs: \
         lioscope's own accounting by phase, the source's profile by function summed by what the functions do",
    ))?;
    let mut workers: Vec<&str> = report.ash.iter().map(|p| p.worker.as_str()).collect();
    workers.sort_unstable();
    workers.dedup();
    let scatter = |share: fn(&AshPoint) -> f64| {
        workers
            .iter()
            .map(|w| {
                let points = report.ash.iter().filter(|p| p.worker == *w).map(|p| (p.at_s, share(p), None)).collect();
                Series::new(w, points)
            })
            .collect::<Vec<_>>()
    };
    let interval = &report.parameters["ash_interval_ms"];
    html.chart(Chart::points(
        "Each worker's time ON CPU, over the run",
        "seconds since the first population",
        "% of each 100 ms ON CPU",
        scatter(|p| p.on_cpu_pct),
        &format!(
            "Active Session History sampled every {interval} ms: a worker's ON CPU samples × interval / 100 ms, one \
             point a worker and 100 ms slice (the source's first scatter plot, there from snapper's %TIME)"
        ),
    ))?;
    html.chart(Chart::points(
        "Each worker's time waiting on db file sequential read, over the run",
        "seconds since the first population",
        "% of each 100 ms waiting",
        scatter(|p| p.sequential_read_pct),
        "the samples waiting on 'db file sequential read' (the pieces of migrated rows read one by one, with --cold) \
         × interval / 100 ms (the source's second scatter plot)",
    ))?;
    history::draw_trend(&mut html, stored)?;
    html.derivations(&report.derivations);
    Ok(html)
}
