//! `lioscope lab lio`: logical reads per second, SLOB-style, after the source experiment
//! that ran SLOB's cached reader with 1 to 8 sessions on 2 cores of 2 threads each.
//!
//! Each session owns a table `cfK` of one row per block (PCTFREE 99) with an index on
//! `custid` 1..rows, all of it cached. One operation reads a random range of WORK_UNIT
//! rows through the index:
//!
//! ```text
//! SELECT /*+ INDEX(cf cfK_ix) */ COUNT(c2) FROM cfK cf WHERE custid > :lo AND custid <= :hi
//! ```
//!
//! with `:hi = :lo + WORK_UNIT`. As SLOB's PL/SQL does, each session prepares the
//! statement once and runs it with new bind values: the plan is made once, and each
//! operation's cost is its logical reads.
//!
//! For each load level (1..2×CPUs sessions by default) every session runs operations
//! for a fixed time, all started at once. A level's figures, as the source document's
//! table: logical reads per second in all and per session, the scaling factor against
//! one session, DB CPU and DB time per second, and the machine's %user, %sys, %idle and
//! %steal from /proc/stat over the step. Each figure is the median of `--repeat` runs,
//! with min and max; every derivation travels with the report. Only the public Session
//! API is used: logical reads are each session's `session logical reads`.
//!
//! `--ash-intervals 1000,10` measures what Active Session History's sampling costs: the
//! whole experiment runs once under each sampling interval, one after the other.

use super::levels::{self, Scale};
use super::sample;
use lioscope::stats::osstat::{self, CpuTimes};
use lioscope::stats::{Stat, TimeModel};
use lioscope::types::Datum;
use lioscope::{Database, DatabaseOptions, Error, Result, Session};
use rand::{Rng, SeedableRng, rngs::SmallRng};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// Options of the experiment.
#[derive(Debug, Clone, clap::Args)]
pub struct LioOptions {
    /// Rows (and blocks) of each session's table (the source document's SLOB scale was
    /// 64,000 blocks a schema).
    #[arg(long, default_value_t = 10_000)]
    pub rows: u64,
    /// Rows each operation reads through the index (SLOB's WORK_UNIT).
    #[arg(long, default_value_t = 64)]
    pub work_unit: u64,
    /// Load levels: how many sessions run at once, e.g. `1,2,4` (default 1 to 2 × the
    /// usable CPUs).
    #[arg(long, value_delimiter = ',')]
    pub sessions: Vec<usize>,
    /// Seconds each load level runs (the source document ran 600).
    #[arg(long, default_value_t = 4.0)]
    pub seconds: f64,
    /// Runs of each load level (the median is reported, with min and max; 5 by default,
    /// as a two-sided Mann-Whitney test of 3 runs against 3 cannot reach p < 0.05).
    #[arg(long, default_value_t = 5)]
    pub repeat: usize,
    /// Directory for the report: lio.json, lio.csv and lio.html.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// An existing database to run in (its cf tables are used when they are there);
    /// default: a fresh one in a temporary directory.
    #[arg(long)]
    pub db: Option<PathBuf>,
    #[command(flatten)]
    pub probe: super::bandwidth::ProbeOptions,
    #[command(flatten)]
    pub history: super::history::HistoryArgs,
    /// Active Session History sampling intervals to run under, in milliseconds, e.g.
    /// `1000,10` (repeat them, `1000,10,1000,10`, to see the machine's drift): the
    /// experiment runs once under each (`_ash_sampling_interval` at open), with its table
    /// and its report in `--out`/ash-N-ms/, then each level's LIOPS against the first's.
    /// Default: the database's interval, one run.
    #[arg(long, value_delimiter = ',')]
    pub ash_intervals: Vec<u64>,
}

/// One session's part of a run.
#[derive(Debug, Clone, serde::Serialize)]
pub struct SessionRun {
    pub executions: u64,
    pub logical_reads: u64,
    pub physical_reads: u64,
    pub db_cpu_s: f64,
    pub db_time_s: f64,
}

/// One run of a load level.
#[derive(Debug, Clone, serde::Serialize)]
pub struct LioRun {
    pub sessions: usize,
    pub elapsed_s: f64,
    pub per_session: Vec<SessionRun>,
    /// The machine's CPU over the run, from /proc/stat (`None` where it is unreadable).
    pub user_pct: Option<f64>,
    pub sys_pct: Option<f64>,
    pub idle_pct: Option<f64>,
    pub steal_pct: Option<f64>,
    /// The database's block size.
    pub block_size: u64,
    /// Its bytes a second over the bandwidth probe's median (set once the probe is done).
    pub bandwidth_fraction: Option<f64>,
}

impl LioRun {
    fn total(&self, f: impl Fn(&SessionRun) -> f64) -> f64 {
        self.per_session.iter().map(f).sum()
    }

    /// The figure `key` of this run (see [`FIGURES`]); `None` where not available.
    fn figure(&self, key: &str) -> Option<f64> {
        let per_second = |v: f64| v / self.elapsed_s;
        let lio = self.total(|s| s.logical_reads as f64);
        let executions = self.total(|s| s.executions as f64);
        match key {
            "liops" => Some(per_second(lio)),
            "liops_per_session" => Some(per_second(lio) / self.sessions as f64),
            "executions_per_s" => Some(per_second(executions)),
            "logical_reads_per_execution" => (executions > 0.0).then(|| lio / executions),
            "db_cpu_per_s" => Some(per_second(self.total(|s| s.db_cpu_s))),
            "db_time_per_s" => Some(per_second(self.total(|s| s.db_time_s))),
            "physical_reads" => Some(self.total(|s| s.physical_reads as f64)),
            "user_pct" => self.user_pct,
            "sys_pct" => self.sys_pct,
            "idle_pct" => self.idle_pct,
            "steal_pct" => self.steal_pct,
            "read_gb_per_s" => Some(per_second(lio) / self.sessions as f64 * self.block_size as f64 / 1e9),
            "bandwidth_fraction" => self.bandwidth_fraction,
            _ => None,
        }
    }
}

/// The figures of a load level, in report order, and how each is derived.
pub const FIGURES: [(&str, &str); 13] = [
    ("liops", "sum over the sessions of the delta of 'session logical reads' / elapsed seconds"),
    ("liops_per_session", "liops / sessions"),
    ("executions_per_s", "operations (statements) run by all sessions / elapsed seconds"),
    ("logical_reads_per_execution", "sum of logical reads / sum of operations"),
    ("db_cpu_per_s", "sum of the sessions' DB CPU (thread CPU clock) / elapsed seconds"),
    ("db_time_per_s", "sum of the sessions' DB time (wall clock inside their calls) / elapsed seconds"),
    ("physical_reads", "sum of the delta of 'physical reads' (0 when every block was cached)"),
    ("user_pct", "/proc/stat: (user + nice) ticks / all ticks over the run, every CPU"),
    ("sys_pct", "/proc/stat: (system + irq + softirq) ticks / all ticks"),
    ("idle_pct", "/proc/stat: (idle + iowait) ticks / all ticks"),
    ("steal_pct", "/proc/stat: steal ticks / all ticks (time the hypervisor ran something else)"),
    (
        "read_gb_per_s",
        "liops_per_session × db_block_size / 10^9: the bytes of the blocks one session visits a second, at most what \
         it reads (a logical read of an index range touches some lines of its block, not all of them)",
    ),
    ("bandwidth_fraction", super::bandwidth::FRACTION),
];

/// The scaling factor's derivation (it compares medians, so it is not a per-run figure).
pub const FACTOR: &str = "median liops at this level / median liops with one session";

/// Levels count sessions; their ratio is the scaling [`FACTOR`].
pub const SCALE: Scale = Scale { unit: "sessions", ratio: "factor", derivation: FACTOR };

/// One load level's figures and runs.
pub type Level = levels::Level<LioRun>;

/// The whole report, as lio.json holds it (`lab lio` finds nothing beyond its levels).
pub type LioReport = levels::Report<LioRun, LioFindings>;

/// What `lab lio` finds beyond each level's figures.
#[derive(Debug, serde::Serialize)]
pub struct LioFindings {
    /// Each level's logical reads a second per session against one session's: whether a
    /// session reads slower beside others ([`levels::tests_against_one`]).
    pub tests: Vec<levels::LevelTest>,
    /// The one-core memory read bandwidth probe, one pass before each run: how a
    /// session's block bytes a second compare with what memory gives one core.
    pub bandwidth_probe: super::bandwidth::BandwidthProbe,
}

/// Runs the experiment, prints its table and writes the report files; under each of
/// `--ash-intervals` in turn when given (the first interval's report is returned).
pub fn run(opts: &LioOptions) -> Result<LioReport> {
    if opts.ash_intervals.is_empty() {
        return run_sampled(opts, None);
    }
    let mut reports = Vec::with_capacity(opts.ash_intervals.len());
    for &ms in &opts.ash_intervals {
        println!("Active Session History sampling every {ms} ms:");
        let out = opts.out.as_ref().map(|out| out.join(format!("ash-{ms}-ms")));
        reports.push(run_sampled(&LioOptions { ash_intervals: Vec::new(), out, ..opts.clone() }, Some(ms))?);
    }
    print_interval_comparison(&reports);
    Ok(reports.swap_remove(0))
}

/// Each level's median LIOPS under each interval, against the first run's.
fn print_interval_comparison(reports: &[LioReport]) {
    let Some(first) = reports.first() else { return };
    for report in reports {
        let ms = &report.parameters["ash_sampling_interval_ms"];
        for (level, base) in report.levels.iter().zip(&first.levels) {
            if let (Some(liops), Some(base_liops)) = (levels::median(level, "liops"), levels::median(base, "liops")) {
                let share = 100.0 * liops / base_liops;
                println!(
                    "ASH every {ms} ms, {} sessions: {liops:.0} logical reads/s, {share:.2} % of the first",
                    level.load
                );
            }
        }
    }
}

/// The experiment with ASH sampling every `ash_interval_ms` when given (set at open).
fn run_sampled(opts: &LioOptions, ash_interval_ms: Option<u64>) -> Result<LioReport> {
    let levels = load_levels(opts)?;
    let most = levels.iter().copied().max().unwrap_or(1);
    let (dir, _tmp) = sample::work_dir(opts.db.as_deref(), "lab-lio")?;
    // Every block of every table cached, with room for the indexes and the undo.
    let cache = (most as u64)
        .checked_mul(opts.rows)
        .and_then(|blocks| blocks.checked_mul(9000))
        .and_then(|bytes| bytes.checked_add(64 << 20))
        .ok_or_else(|| Error::InvalidParameter {
            name: "--rows".into(),
            message: format!("{} rows for each of {most} sessions need more memory than can be addressed", opts.rows),
        })?
        .max(128 << 20);
    let mut parameters = vec![("db_cache_size".to_owned(), cache.to_string())];
    parameters.extend(ash_interval_ms.map(|ms| ("_ash_sampling_interval".to_owned(), ms.to_string())));
    let db = Database::open_or_create(&dir, DatabaseOptions { parameters, ..Default::default() })?;
    let progress = super::progress::Steps::new((1 + levels.len() * opts.repeat.max(1)) as u64, "lab lio");
    progress.step("loading the tables");
    let mut sessions = Vec::with_capacity(most);
    for k in 1..=most {
        let session = db.session();
        prepare(&session, k, opts.rows)?;
        sessions.push(session);
    }
    let block_size = sample::whole(&sessions[0], "SELECT value FROM v$parameter WHERE name = 'db_block_size'")?;
    let probe = opts.probe.array();
    let mut probe_samples = vec![probe.pass()];
    let figures = (&FIGURES[..], LioRun::figure);
    let mut result = levels::measure_levels(&levels, opts.repeat, SCALE, &progress, figures, |n, r| {
        probe_samples.push(probe.pass());
        run_level(&mut sessions, n, opts, r as u64, block_size)
    })?;
    progress.finish();
    let bandwidth_probe = probe.report(probe_samples);
    drop(probe);
    for level in &mut result {
        for run in &mut level.runs {
            run.bandwidth_fraction = bandwidth_probe.fraction(run.figure("read_gb_per_s"));
        }
        level.figures = levels::spreads(&FIGURES, &level.runs, LioRun::figure);
    }
    let liops = |l: &Level| levels::median(l, "liops");
    levels::set_ratios(&mut result, |l, one| Some(liops(l)? / liops(one).filter(|&one| one > 0.0)?));
    drop(sessions);
    db.close()?;
    let mut parameters = BTreeMap::new();
    parameters.insert("rows_per_session", serde_json::json!(opts.rows));
    parameters.insert("work_unit", serde_json::json!(opts.work_unit));
    parameters.insert("seconds", serde_json::json!(opts.seconds));
    parameters.insert("repeat", serde_json::json!(opts.repeat.max(1)));
    parameters.insert("db_cache_size", serde_json::json!(cache));
    parameters.insert("operation", serde_json::json!(operation("cf1")));
    if let Some(ms) = ash_interval_ms {
        parameters.insert("ash_sampling_interval_ms", serde_json::json!(ms));
    }
    let mut derivations: BTreeMap<&str, &str> = FIGURES.into_iter().collect();
    derivations.insert(SCALE.ratio, SCALE.derivation);
    let report = LioReport {
        experiment: "lio",
        environment: super::environment::Environment::read(),
        parameters,
        derivations,
        levels: result,
        findings: LioFindings { tests: Vec::new(), bandwidth_probe },
    };
    let mut report = report;
    report.findings.tests = levels::tests_against_one(&report.levels, "liops_per_session", LioRun::figure);
    print_table(&report);
    let figures = levels::history_figures(&report.levels, "", &FIGURES, LioRun::figure);
    let headline = Some(("sessions=1", "liops"));
    let stored = super::history::store_report(&opts.history, "lio", &report.environment, &report, figures, headline)?;
    if let Some(out) = &opts.out {
        write_files(&report, out, stored.as_ref())?;
    }
    Ok(report)
}

/// The load levels asked for, or 1..=2×CPUs.
fn load_levels(opts: &LioOptions) -> Result<Vec<usize>> {
    if opts.work_unit == 0 || opts.work_unit > opts.rows {
        return Err(Error::InvalidParameter {
            name: "--work-unit".into(),
            message: format!("must be 1..={} (the rows of a table)", opts.rows),
        });
    }
    levels::check_seconds(opts.seconds, "--seconds")?;
    levels::levels(&opts.sessions, "--sessions", 2 * osstat::usable_cpus())
}

/// The operation's statement on table `cf{k}`: the rows `:lo+1 ..= :hi`.
fn operation(table: &str) -> String {
    format!("SELECT /*+ INDEX(cf {table}_ix) */ COUNT(c2) FROM {table} cf WHERE custid > :lo AND custid <= :hi")
}

/// Creates and loads session `k`'s table unless the database has it, then reads it once
/// so that every block is cached.
fn prepare(session: &Session, k: usize, rows: u64) -> Result<()> {
    let table = format!("CF{k}");
    let exists = session
        .execute(&format!("SELECT COUNT(*) FROM user_tables WHERE table_name = '{table}'"))?
        .rows
        .first()
        .is_some_and(|r| r[0].to_string() != "0");
    if !exists {
        session.execute(&format!(
            "CREATE TABLE {table} (custid NUMBER NOT NULL, c2 VARCHAR2(128), c3 VARCHAR2(128)) PCTFREE 99"
        ))?;
        session.execute(&format!(
            "INSERT INTO {table} SELECT LEVEL, RPAD('c2-' || LEVEL, 128, 'x'), RPAD('c3-' || LEVEL, 128, 'y') \
             FROM dual CONNECT BY LEVEL <= {rows}"
        ))?;
        session.execute(&format!("CREATE INDEX {table}_ix ON {table} (custid)"))?;
        session.execute(&format!("ANALYZE TABLE {table} COMPUTE STATISTICS"))?;
    }
    let cached =
        session.execute(&format!("SELECT /*+ INDEX(cf {table}_ix) */ COUNT(c2) FROM {table} cf WHERE custid > 0"))?;
    if cached.rows.first().map(|r| r[0].to_string()) != Some(rows.to_string()) {
        return Err(Error::InvalidValue {
            context: format!("lab lio: table {table}"),
            message: format!("holds {:?} rows, not the {rows} asked for (use another --db)", cached.rows),
        });
    }
    Ok(())
}

/// Runs every session of `sessions` at once for the level's time (in a database of
/// `block_size` blocks).
fn run_level(sessions: &mut Vec<Session>, n: usize, opts: &LioOptions, run: u64, block_size: u64) -> Result<LioRun> {
    let duration = Duration::from_secs_f64(opts.seconds);
    let step = levels::at_once(sessions, n, |k, session| session_run(session, k, opts, run, duration))?;
    let cpu = step.cpu.as_ref();
    let pct = |part: fn(&CpuTimes) -> u64| cpu.and_then(|c| c.share_pct(part(c)));
    Ok(LioRun {
        sessions: n,
        elapsed_s: step.elapsed_s,
        per_session: step.outcomes,
        user_pct: pct(|c| c.user + c.nice),
        sys_pct: pct(|c| c.sys + c.irq + c.softirq),
        idle_pct: pct(|c| c.idle + c.iowait),
        steal_pct: cpu.and_then(CpuTimes::steal_pct),
        block_size,
        bandwidth_fraction: None,
    })
}

/// Session `k`'s operations on its table, from now until `duration` has passed; the
/// ranges are the same for the same session and run.
fn session_run(session: &Session, k: usize, opts: &LioOptions, run: u64, duration: Duration) -> Result<SessionRun> {
    let table = format!("cf{k}");
    let stats = session.stats();
    let mut ranges = SmallRng::seed_from_u64((k as u64) << 32 | run);
    let (lio, pio) = (stats.get(Stat::LogicalReads), stats.get(Stat::PhysicalReads));
    let (cpu, time) = (stats.time(TimeModel::DbCpu), stats.time(TimeModel::DbTime));
    let mut cursor = session.prepare(&operation(&table))?;
    let started = Instant::now();
    let mut executions = 0;
    while started.elapsed() < duration {
        let lo = ranges.random_range(0..=opts.rows - opts.work_unit);
        let hi = lo + opts.work_unit;
        cursor.execute(&[Datum::Int(lo as i64), Datum::Int(hi as i64)])?;
        executions += 1;
    }
    Ok(SessionRun {
        executions,
        logical_reads: stats.get(Stat::LogicalReads) - lio,
        physical_reads: stats.get(Stat::PhysicalReads) - pio,
        db_cpu_s: (stats.time(TimeModel::DbCpu) - cpu) as f64 / 1e6,
        db_time_s: (stats.time(TimeModel::DbTime) - time) as f64 / 1e6,
    })
}

/// The terminal table, as the source document's: one row per load level.
fn print_table(report: &LioReport) {
    let keys = ["db_time_per_s", "db_cpu_per_s", "liops", "liops_per_session", "steal_pct", "physical_reads"];
    levels::print_table(&keys, &report.levels);
    println!("{}", report.findings.bandwidth_probe.line());
    levels::print_table(&["read_gb_per_s", "bandwidth_fraction"], &report.levels);
    super::report::print_table(&TESTS_HEADER, test_rows(report));
    super::report::print_derivations(&report.parameters["repeat"], &report.derivations);
}

/// lio.json (everything), lio.csv (one line per level and figure) and lio.html.
/// The heading of the table of each level's test against one session.
const TESTS_HEADER: [&str; 3] =
    ["sessions", "liops_per_session / one session's", "p (Mann-Whitney U, two-sided, against one session)"];

/// One row a level: the per-session rate over one session's, and the test's p-value.
fn test_rows(report: &LioReport) -> Vec<Vec<String>> {
    report
        .findings
        .tests
        .iter()
        .map(|t| {
            vec![t.load.to_string(), super::report::ratio_cell(t.median_ratio), levels::p_cell(t.p_value, t.method)]
        })
        .collect()
}

fn write_files(report: &LioReport, out: &std::path::Path, stored: Option<&super::history::Stored>) -> Result<()> {
    levels::write_report(out, "lio", report, &FIGURES, &html(report, stored)?)
}

/// The HTML report: the table of the source document, and LIOPS and the factor against
/// sessions.
fn html(report: &LioReport, stored: Option<&super::history::Stored>) -> Result<super::report::Html> {
    use super::report::{Chart, Html, Series};
    let x: Vec<f64> = report.levels.iter().map(|l| l.load as f64).collect();
    let series = |name: &str, key: &str, scale: f64| {
        Series::new(
            name,
            report
                .levels
                .iter()
                .zip(&x)
                .filter_map(|(l, &x)| {
                    l.figures[key].map(|f| (x, f.median / scale, Some((f.min / scale, f.max / scale))))
                })
                .collect(),
        )
    };
    let factor =
        Series::new("factor", report.levels.iter().zip(&x).filter_map(|(l, &x)| Some((x, l.ratio?, None))).collect());
    let mut html = Html::new("lab lio: logical reads per second by sessions", &report.environment, &report.parameters);
    html.table_from(
        "Load profile per level",
        &["sessions", "DB time/s", "DB CPU/s", "LIOPS", "LIOPS per session", "factor", "%steal"],
        report.levels.iter().map(|l| {
            let cell = |key: &str| super::report::cell(l.figures[key]);
            vec![
                l.load.to_string(),
                cell("db_time_per_s"),
                cell("db_cpu_per_s"),
                cell("liops"),
                cell("liops_per_session"),
                super::report::ratio_cell(l.ratio),
                cell("steal_pct"),
            ]
        }),
    );
    html.table_from("Each level's sessions against one session alone", &TESTS_HEADER, test_rows(report));
    html.chart(Chart::lines(
        "Logical reads per second",
        "sessions",
        "million logical reads / s",
        vec![series("all sessions", "liops", 1e6), series("per session", "liops_per_session", 1e6)],
        "median of the runs, bars from min to max; liops: sum of 'session logical reads' deltas / elapsed",
    ))?;
    html.chart(Chart::lines("Scaling factor against one session", "sessions", "factor", vec![factor], FACTOR))?;
    super::history::draw_trend(&mut html, stored)?;
    html.derivations(&report.derivations);
    Ok(html)
}
