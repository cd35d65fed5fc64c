//! `lioscope lab cpu`: cores against threads, after the source experiment that launched
//! 1..N identical CPU-bound processes at once and watched when their wall time stepped.
//!
//! Each worker is a session running one fixed CPU-bound statement (a sum over the
//! CONNECT BY row generator, sized so that alone it takes `--seconds` of CPU). For each
//! load level, that many workers start at once; the level's wall time is when the last
//! one finishes. Where the machine has C units of CPU power, up to C workers finish in
//! about the time of one, and more take longer: the knee is found from the data as the
//! last level whose wall time stays within [`KNEE_TOLERANCE`] of one worker's.
//!
//! Over each step the machine's CPU is read from /proc/stat. Linux counts busy time per
//! logical CPU (per thread), so utilization comes two ways, as the source document
//! discusses: busy / (interval × logical CPUs), thread-based, and busy / (interval ×
//! cores), core-based (above 100% when threads of one core were both busy); with steal.
//! The topology (sockets, cores, threads per core) comes from sysfs.

use super::levels::{self, Scale};
use super::sample;
use super::stats::spread;
use lioscope::stats::osstat::{self, CpuTimes};
use lioscope::{Database, DatabaseOptions, Result, Session};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// A level is before the knee while its wall time is at most this much above one
/// worker's (the source document's steps are 100% jumps; scheduling noise is far less).
pub const KNEE_TOLERANCE: f64 = 0.25;

/// Options of the experiment.
#[derive(Debug, Clone, clap::Args)]
pub struct CpuOptions {
    /// Load levels: how many workers start at once, e.g. `1,2,4` (default 1 to 2 × the
    /// logical CPUs).
    #[arg(long, value_delimiter = ',')]
    pub workers: Vec<usize>,
    /// CPU seconds of one worker's work when it runs alone (the source document's took 30).
    #[arg(long, default_value_t = 2.0)]
    pub seconds: f64,
    /// Runs of each load level (the median is reported, with min and max).
    #[arg(long, default_value_t = 3)]
    pub repeat: usize,
    /// Directory for the report: cpu.json, cpu.csv and cpu.html.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// An existing database to run in; default: a fresh one in a temporary directory.
    #[arg(long)]
    pub db: Option<PathBuf>,
}

/// One run of a load level.
#[derive(Debug, Clone, serde::Serialize)]
pub struct CpuRun {
    pub workers: usize,
    /// Until the last worker finished.
    pub wall_s: f64,
    /// Each worker's own wall time and CPU time (DB CPU).
    pub worker_wall_s: Vec<f64>,
    pub worker_cpu_s: Vec<f64>,
    /// The machine's CPU over the step, from /proc/stat (`None` where unreadable).
    pub busy_s: Option<f64>,
    pub steal_pct: Option<f64>,
    pub utilization_by_threads_pct: Option<f64>,
    pub utilization_by_cores_pct: Option<f64>,
}

impl CpuRun {
    fn figure(&self, key: &str) -> Option<f64> {
        match key {
            "wall_s" => Some(self.wall_s),
            "worker_wall_s_mean" => mean(&self.worker_wall_s),
            "worker_cpu_s" => Some(self.worker_cpu_s.iter().sum()),
            "busy_s" => self.busy_s,
            "utilization_by_threads_pct" => self.utilization_by_threads_pct,
            "utilization_by_cores_pct" => self.utilization_by_cores_pct,
            "steal_pct" => self.steal_pct,
            _ => None,
        }
    }
}

fn mean(values: &[f64]) -> Option<f64> {
    (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64)
}

/// The figures of a level, in report order, and how each is derived.
pub const FIGURES: [(&str, &str); 7] = [
    ("wall_s", "wall clock from the common start until the last worker finished"),
    ("worker_wall_s_mean", "mean of the workers' own wall clocks"),
    ("worker_cpu_s", "sum of the workers' DB CPU (thread CPU clocks)"),
    ("busy_s", "/proc/stat: (user + nice + system + irq + softirq) ticks over the step, every CPU, in seconds"),
    ("utilization_by_threads_pct", "busy_s / (wall_s × logical CPUs) × 100"),
    ("utilization_by_cores_pct", "busy_s / (wall_s × cores) × 100 (above 100 when threads of a core both ran)"),
    ("steal_pct", "/proc/stat: steal ticks / all ticks over the step"),
];

/// Derivations of the figures that compare levels.
pub const THROUGHPUT: &str = "workers × median wall_s of one worker / median wall_s of the level: how many \
                          workers' worth of work the machine did at once";
pub const KNEE: &str = "the last level, counting up from one worker, whose median wall_s is within 25% of one \
                    worker's (KNEE_TOLERANCE)";

/// Levels count workers; their ratio is the [`THROUGHPUT`].
pub const SCALE: Scale = Scale { unit: "workers", ratio: "throughput", derivation: THROUGHPUT };

/// One load level's figures and runs.
pub type Level = levels::Level<CpuRun>;

/// The whole report, as cpu.json holds it.
pub type CpuReport = levels::Report<CpuRun, CpuFindings>;

/// What `lab cpu` finds beyond each level's figures.
#[derive(Debug, serde::Serialize)]
pub struct CpuFindings {
    /// [`KNEE`]: workers the machine runs at full speed at once; `None` without a
    /// one-worker level.
    pub knee: Option<usize>,
    /// What the knee says against the topology.
    pub verdict: String,
}

/// Runs the experiment, prints its table and writes the report files.
pub fn run(opts: &CpuOptions) -> Result<CpuReport> {
    let levels = load_levels(opts)?;
    let most = levels.iter().copied().max().unwrap_or(1);
    let (dir, _tmp) = sample::work_dir(opts.db.as_deref(), "lab-cpu")?;
    let parameters = vec![("db_cache_size".to_owned(), (32u64 << 20).to_string())];
    let db = Database::open_or_create(&dir, DatabaseOptions { parameters, ..Default::default() })?;
    let progress = super::progress::Steps::new((1 + levels.len() * opts.repeat.max(1)) as u64, "lab cpu");
    progress.step("sizing the work");
    let mut sessions: Vec<Session> = (0..most).map(|_| db.session()).collect();
    let rows = calibrate(&sessions[0], opts.seconds)?;
    let figures = (&FIGURES[..], CpuRun::figure);
    let mut result = levels::measure_levels(&levels, opts.repeat, SCALE, &progress, figures, |n, _| {
        run_level(&mut sessions, n, rows)
    })?;
    progress.finish();
    drop(sessions);
    db.close()?;
    let wall = |l: &Level| levels::median(l, "wall_s");
    levels::set_ratios(&mut result, |l, one| Some(l.load as f64 * wall(one).filter(|&w| w > 0.0)? / wall(l)?));
    let one = result.iter().find(|l| l.load == 1).and_then(wall).filter(|&w| w > 0.0);
    let knee = one.map(|one| knee(&result.iter().filter_map(|l| Some((l.load, wall(l)?))).collect::<Vec<_>>(), one));
    let environment = super::environment::Environment::read();
    let verdict = verdict(knee, &environment);
    let mut parameters = BTreeMap::new();
    parameters.insert("seconds", serde_json::json!(opts.seconds));
    parameters.insert("repeat", serde_json::json!(opts.repeat.max(1)));
    parameters.insert("work", serde_json::json!(work(rows)));
    parameters.insert("knee_tolerance", serde_json::json!(KNEE_TOLERANCE));
    let mut derivations: BTreeMap<&str, &str> = FIGURES.into_iter().collect();
    derivations.insert(SCALE.ratio, SCALE.derivation);
    derivations.insert("knee", KNEE);
    let report = CpuReport {
        experiment: "cpu",
        environment,
        parameters,
        derivations,
        levels: result,
        findings: CpuFindings { knee: knee.flatten(), verdict },
    };
    print_table(&report);
    if let Some(out) = &opts.out {
        write_files(&report, out)?;
    }
    Ok(report)
}

/// The load levels asked for, or 1..=2×logical CPUs.
fn load_levels(opts: &CpuOptions) -> Result<Vec<usize>> {
    levels::check_seconds(opts.seconds, "--seconds")?;
    let cpus = osstat::read_topology().logical_cpus as usize;
    levels::levels(&opts.workers, "--workers", 2 * cpus.max(1))
}

/// One worker's statement: `rows` rows of the generator, summed.
fn work(rows: u64) -> String {
    format!("SELECT SUM(MOD(LEVEL, 7)) FROM dual CONNECT BY LEVEL <= {rows}")
}

/// The generator rows that take one worker about `seconds` of CPU alone: the median of
/// three timed runs of a million rows, scaled.
fn calibrate(session: &Session, seconds: f64) -> Result<u64> {
    const PROBE: u64 = 1_000_000;
    let cpu_ms = (0..3).map(|_| Ok(sample::measure(session, &work(PROBE))?.cpu_ms)).collect::<Result<Vec<f64>>>()?;
    let per_row = (spread(cpu_ms).median / 1000.0).max(1e-9) / PROBE as f64;
    Ok(((seconds / per_row) as u64).max(1000))
}

/// Starts `n` workers at once, each running the work once.
fn run_level(sessions: &mut Vec<Session>, n: usize, rows: u64) -> Result<CpuRun> {
    let statement = work(rows);
    let step = levels::at_once(sessions, n, |_, session| sample::measure(session, &statement))?;
    let worker_wall_s = step.outcomes.iter().map(|m| m.elapsed_ms / 1000.0).collect();
    let worker_cpu_s = step.outcomes.iter().map(|m| m.cpu_ms / 1000.0).collect();
    let topology = osstat::read_topology();
    // /proc/stat counts in centiseconds (CpuTimes' unit).
    let busy_s = step.cpu.as_ref().map(|c| c.busy() as f64 / 100.0);
    let utilization = |units: u32| busy_s.map(|b| b * 100.0 / (step.elapsed_s * f64::from(units.max(1))));
    Ok(CpuRun {
        workers: n,
        wall_s: step.elapsed_s,
        worker_wall_s,
        worker_cpu_s,
        busy_s,
        steal_pct: step.cpu.as_ref().and_then(CpuTimes::steal_pct),
        utilization_by_threads_pct: utilization(topology.logical_cpus),
        utilization_by_cores_pct: utilization(topology.cores),
    })
}

/// [`KNEE`] of `(workers, median wall)` levels, `one` being one worker's wall time.
/// `None` when no level with one worker or more stays within the tolerance.
pub fn knee(levels: &[(usize, f64)], one: f64) -> Option<usize> {
    let mut sorted = levels.to_vec();
    sorted.sort_by_key(|l| l.0);
    sorted.iter().take_while(|(_, wall)| *wall <= one * (1.0 + KNEE_TOLERANCE)).map(|l| l.0).last()
}

/// What the knee says: core-powered, thread-powered, or something else, against the
/// topology.
fn verdict(knee: Option<Option<usize>>, env: &super::environment::Environment) -> String {
    let (cores, threads) = (env.cores as usize, env.logical_cpus as usize);
    match knee {
        None => "no one-worker level ran: no knee".into(),
        Some(None) => "even the smallest level ran slower than one worker alone: no knee".into(),
        Some(Some(k)) if cores == threads && k == cores => {
            format!("knee at {k} workers = {cores} cores (one thread each): as many units of CPU power as cores")
        }
        Some(Some(k)) if k == cores => format!(
            "knee at {k} workers = {cores} cores, below {threads} threads: core-powered (a core's second thread \
             adds little to this work)"
        ),
        Some(Some(k)) if k == threads => {
            format!("knee at {k} workers = {threads} threads on {cores} cores: thread-powered")
        }
        Some(Some(k)) => format!(
            "knee at {k} workers, against {cores} cores and {threads} threads: neither (other load, a CPU quota, \
             or a hypervisor giving less than the topology says)"
        ),
    }
}

/// The terminal table: one row per level.
fn print_table(report: &CpuReport) {
    let keys = ["wall_s", "worker_cpu_s", "utilization_by_threads_pct", "utilization_by_cores_pct", "steal_pct"];
    levels::print_table(&keys, &report.levels);
    let env = &report.environment;
    println!(
        "Topology: {} socket(s), {} cores, {} threads per core, {} logical CPUs.",
        env.sockets, env.cores, env.threads_per_core, env.logical_cpus
    );
    println!("{}", report.findings.verdict);
    super::report::print_derivations(&report.parameters["repeat"], &report.derivations);
}

/// cpu.json (everything), cpu.csv (one line per level and figure) and cpu.html.
fn write_files(report: &CpuReport, out: &std::path::Path) -> Result<()> {
    levels::write_report(out, "cpu", report, &FIGURES, &html(report)?)
}

/// The HTML report: the table, the verdict, wall time against workers (with what cores
/// alone and threads alone would give), and utilization both ways.
fn html(report: &CpuReport) -> Result<super::report::Html> {
    use super::report::{Chart, Html, Series};
    let series = |name: &str, key: &str| {
        let points = report.levels.iter().filter_map(|l| {
            let f = l.figures[key]?;
            Some((l.load as f64, f.median, Some((f.min, f.max))))
        });
        Series::new(name, points.collect())
    };
    let mut html = Html::new("lab cpu: cores against threads", &report.environment, &report.parameters);
    let env = &report.environment;
    html.paragraph(&format!(
        "Topology (sysfs): {} socket(s), {} cores, {} threads per core, {} logical CPUs. {}",
        env.sockets, env.cores, env.threads_per_core, env.logical_cpus, report.findings.verdict
    ));
    html.table_from(
        "Wall time and utilization by load level (median [min..max] of the runs)",
        &["workers", "wall s", "workers' CPU s", "util. by threads %", "util. by cores %", "%steal", "throughput"],
        report.levels.iter().map(|l| {
            vec![
                l.load.to_string(),
                super::report::cell(l.figures["wall_s"]),
                super::report::cell(l.figures["worker_cpu_s"]),
                super::report::cell(l.figures["utilization_by_threads_pct"]),
                super::report::cell(l.figures["utilization_by_cores_pct"]),
                super::report::cell(l.figures["steal_pct"]),
                super::report::ratio_cell(l.ratio),
            ]
        }),
    );
    let mut walls = vec![series("measured", "wall_s")];
    let one = report.levels.iter().find(|l| l.load == 1).and_then(|l| l.figures["wall_s"]).map(|f| f.median);
    if let Some(one) = one {
        // The source document's ideal steps: with U units of power, n workers take
        // ceil(n / U) times one worker's time.
        let ideal = |units: usize| {
            report.levels.iter().map(|l| (l.load as f64, one * l.load.div_ceil(units.max(1)) as f64, None)).collect()
        };
        walls.push(Series::new(&format!("if {} cores were the power", env.cores), ideal(env.cores as usize)));
        if env.logical_cpus != env.cores {
            walls.push(Series::new(&format!("if {} threads were", env.logical_cpus), ideal(env.logical_cpus as usize)));
        }
    }
    html.chart(Chart::lines(
        "Wall time against workers launched at once",
        "workers",
        "seconds until the last finished",
        walls,
        "measured: median wall_s of the runs, bars from min to max; the step lines are one worker's median wall \
         time × ceil(workers / units), the source document's ideal sequencing",
    ))?;
    html.chart(Chart::lines(
        "CPU utilization, by threads and by cores",
        "workers",
        "%",
        vec![series("by threads", "utilization_by_threads_pct"), series("by cores", "utilization_by_cores_pct")],
        "busy time from /proc/stat over each step, divided by (wall time × logical CPUs) and by (wall time × cores)",
    ))?;
    html.derivations(&report.derivations);
    Ok(html)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_knee_is_the_last_level_near_one_workers_time() {
        // Two cores: 1 and 2 take one worker's time, then it steps.
        assert_eq!(knee(&[(1, 2.0), (2, 2.1), (3, 3.0), (4, 4.1)], 2.0), Some(2));
        // A later level back under the tolerance does not move the knee.
        assert_eq!(knee(&[(1, 2.0), (2, 3.0), (3, 2.2)], 2.0), Some(1));
        assert_eq!(knee(&[(2, 5.0)], 2.0), None);
    }
}
