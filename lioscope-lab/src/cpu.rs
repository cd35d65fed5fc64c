//! `lioscope lab cpu`: cores against threads, after the source experiment that launched
//! 1..N identical CPU-bound processes at once and watched when their wall time stepped.
//!
//! Two kinds of worker run at each load level. lioscope's own: a session running one
//! fixed CPU-bound statement (a sum over the CONNECT BY row generator). And a control
//! outside the engine, as the source used `bc`: a thread running a fixed integer loop
//! (see [`control_loop`]). Each is sized so that alone it takes `--seconds` of CPU. For
//! a level, that many workers of one kind start at once; the level's wall time is when
//! the last one finishes. Where the machine has C units of CPU power, up to C workers
//! finish in about the time of one, and more take longer.
//!
//! What makes the answer hold on a machine whose speed moves (a core boosts its clock
//! when it runs alone; the first work after a pause meets cold caches):
//! - a warm-up step of each kind at the most workers, untimed, before any timed level;
//! - `--repeat` rounds (5 by default); in each, every (level, kind) pair runs once, in
//!   an order shuffled anew each round (seeded, `--seed`, and recorded), so drift over
//!   the run falls on every level alike;
//! - the knee is decided by a test, not by single samples ([`knee_by_test`]): a level
//!   runs at full speed unless its wall times are both significantly above the
//!   reference's (Mann-Whitney U, one-sided, p below [`ALPHA`]) and more than
//!   [`KNEE_TOLERANCE`] above in median. The reference is one worker, or the plateau of
//!   the next level when one worker alone runs faster than it by a frequency boost
//!   (more than the tolerance, at most [`BOOST_AT_MOST`] slower, within the cores);
//! - the control's knee says what the machine gives; the engine's scalability at each
//!   level is its throughput over the control's.
//!
//! Over each step the machine's CPU is read from /proc/stat. Linux counts busy time per
//! logical CPU (per thread), so utilization comes two ways, as the source document
//! discusses: busy / (interval × logical CPUs), thread-based, and busy / (interval ×
//! cores), core-based (above 100% when threads of one core were both busy); with steal.
//! The topology (sockets, cores, threads per core) comes from sysfs.

use super::history::{self, FigureSamples, HistoryArgs};
use super::levels::{self, Scale};
use super::sample;
use super::stats::{Alternative, Method, mann_whitney, spread};
use lioscope::stats::osstat::{self, CpuTimes};
use lioscope::{Database, DatabaseOptions, Result, Session};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// A level is at full speed while its median wall time is at most this much above the
/// reference's (the source document's steps are 100% jumps; scheduling noise is far
/// less), or while the difference is not significant.
pub const KNEE_TOLERANCE: f64 = 0.25;

/// The significance level of the knee's test.
pub const ALPHA: f64 = 0.05;

/// A level within the cores that is slower than one worker by more than the tolerance
/// but by at most this much is the frequency effect (one busy core boosts its clock),
/// not a step: a missing unit of CPU power would double the wall time.
pub const BOOST_AT_MOST: f64 = 0.5;

/// Options of the experiment.
#[derive(Debug, Clone, clap::Args)]
pub struct CpuOptions {
    /// Load levels: how many workers start at once, e.g. `1,2,4` (default 1 to 2 × the
    /// logical CPUs).
    #[arg(long, value_delimiter = ',')]
    pub workers: Vec<usize>,
    /// CPU seconds of one worker's work when it runs alone (the source document's took 30).
    #[arg(long, default_value_t = 1.0)]
    pub seconds: f64,
    /// Rounds: samples of each load level and kind of worker (the knee's test needs 4
    /// or more to reach significance; the median is reported, with min and max).
    #[arg(long, default_value_t = 5)]
    pub repeat: usize,
    /// Seed of the rounds' shuffled order (default: from the clock; the report records it).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Directory for the report: cpu.json, cpu.csv and cpu.html.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// An existing database to run in; default: a fresh one in a temporary directory.
    #[arg(long)]
    pub db: Option<PathBuf>,
    #[command(flatten)]
    pub history: HistoryArgs,
}

/// One run of a load level.
#[derive(Debug, Clone, serde::Serialize)]
pub struct CpuRun {
    pub workers: usize,
    /// Its place in the run's order (0 first), which the shuffle decided.
    pub sequence: usize,
    /// Until the last worker finished.
    pub wall_s: f64,
    /// Each worker's own wall time and CPU time (DB CPU; the thread's CPU clock for the
    /// control).
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
    ("worker_cpu_s", "sum of the workers' CPU (DB CPU; the thread CPU clock for the control)"),
    ("busy_s", "/proc/stat: (user + nice + system + irq + softirq) ticks over the step, every CPU, in seconds"),
    ("utilization_by_threads_pct", "busy_s / (wall_s × logical CPUs) × 100"),
    ("utilization_by_cores_pct", "busy_s / (wall_s × cores) × 100 (above 100 when threads of a core both ran)"),
    ("steal_pct", "/proc/stat: steal ticks / all ticks over the step"),
];

/// Derivations of the figures that compare levels.
pub const THROUGHPUT: &str = "workers × median wall_s of one worker / median wall_s of the level: how many \
                          workers' worth of work the machine did at once";
pub const KNEE: &str = "counting up from the reference level, the last level before the first whose wall_s samples \
                    are both significantly above the reference's (Mann-Whitney U, one-sided, p < 0.05) and more \
                    than 25% above in median (KNEE_TOLERANCE); the reference is one worker, or the next level \
                    when one worker alone ran 25% to 50% faster than it within the cores (the frequency effect)";
pub const CONTROL: &str = "the same levels and rounds with threads of a fixed integer loop outside the engine, as the \
                       source used bc: what the machine gives";
pub const ENGINE_TO_CONTROL: &str = "lioscope's throughput at the level / the control's: 1 where lioscope's workers \
                                 scale as the machine does";

/// Levels count workers; their ratio is the [`THROUGHPUT`].
pub const SCALE: Scale = Scale { unit: "workers", ratio: "throughput", derivation: THROUGHPUT };

/// One load level's figures and runs.
pub type Level = levels::Level<CpuRun>;

/// The whole report, as cpu.json holds it.
pub type CpuReport = levels::Report<CpuRun, CpuFindings>;

/// The two kinds of worker.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// lioscope's sessions running the statement.
    Engine,
    /// Threads running [`control_loop`].
    Control,
}

/// What `lab cpu` finds beyond each level's figures.
#[derive(Debug, serde::Serialize)]
pub struct CpuFindings {
    /// [`KNEE`] of lioscope's workers: how many run at full speed at once; `None`
    /// without a one-worker level.
    pub knee: Option<usize>,
    /// [`KNEE`] of the control: what the machine gives.
    pub control_knee: Option<usize>,
    /// What the knees say against the topology.
    pub verdict: String,
    /// The control's levels, as `levels` holds lioscope's.
    pub control_levels: Vec<Level>,
    /// Each level's test against the reference, both kinds, and the engine's
    /// throughput over the control's.
    pub tests: Vec<LevelTests>,
    /// The order the steps ran in: (workers, kind), warm-up excluded.
    pub schedule: Vec<(usize, Kind)>,
}

/// One level's knee tests.
#[derive(Debug, Clone, serde::Serialize)]
pub struct LevelTests {
    pub workers: usize,
    pub engine: Option<KneeTest>,
    pub control: Option<KneeTest>,
    /// [`ENGINE_TO_CONTROL`].
    pub engine_to_control: Option<f64>,
}

/// A level's wall times against the reference level's.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct KneeTest {
    /// The level tested against (1, or the plateau's first level after a frequency boost).
    pub reference: usize,
    /// Median wall time over the reference's.
    pub median_ratio: f64,
    /// One-sided Mann-Whitney U: the level's wall times above the reference's.
    pub p_value: f64,
    pub method: Method,
    /// Not both significantly and more than the tolerance slower.
    pub full_speed: bool,
}

/// A kind's knee: the level, each level's test, and whether one worker's boost moved
/// the reference.
#[derive(Debug, Clone, PartialEq)]
pub struct KneeFinding {
    pub knee: Option<usize>,
    pub tests: Vec<(usize, KneeTest)>,
    pub frequency_effect: bool,
    /// The samples are too few for the test to reach [`ALPHA`]: the medians decided.
    pub too_few_samples: bool,
}

/// Runs the experiment, prints its table and writes the report files.
pub fn run(opts: &CpuOptions) -> Result<CpuReport> {
    let levels = load_levels(opts)?;
    let most = levels.iter().copied().max().unwrap_or(1);
    let rounds = opts.repeat.max(1);
    let seed = levels::seed_or_clock(opts.seed);
    let (dir, _tmp) = sample::work_dir(opts.db.as_deref(), "lab-cpu")?;
    let parameters = vec![("db_cache_size".to_owned(), (32u64 << 20).to_string())];
    let db = Database::open_or_create(&dir, DatabaseOptions { parameters, ..Default::default() })?;
    let progress = super::progress::Steps::new((3 + 2 * levels.len() * rounds) as u64, "lab cpu");
    progress.step("sizing the work");
    let mut sessions: Vec<Session> = (0..most).map(|_| db.session()).collect();
    let rows = calibrate(&sessions[0], opts.seconds)?;
    let iterations = calibrate_control(opts.seconds);
    progress.step(&format!("warming up: {most} workers of each kind"));
    run_level(&mut sessions, most, Kind::Engine, rows, iterations, 0)?;
    run_level(&mut sessions, most, Kind::Control, rows, iterations, 0)?;
    let steps: Vec<(usize, Kind)> = levels.iter().flat_map(|&n| [(n, Kind::Engine), (n, Kind::Control)]).collect();
    let schedule = levels::shuffled_rounds(&steps, rounds, seed);
    let mut runs: BTreeMap<(usize, u8), Vec<CpuRun>> = BTreeMap::new();
    for (sequence, &(n, kind)) in schedule.iter().enumerate() {
        let unit = if n == 1 { "worker" } else { "workers" };
        progress.step(&format!("{n} {unit} ({kind:?})"));
        let run = run_level(&mut sessions, n, kind, rows, iterations, sequence)?;
        runs.entry((n, kind as u8)).or_default().push(run);
    }
    progress.finish();
    drop(sessions);
    db.close()?;
    let mut by_kind = |kind: Kind| -> Vec<Level> {
        let figures = &FIGURES[..];
        levels
            .iter()
            .map(|&load| {
                let runs = runs.remove(&(load, kind as u8)).unwrap_or_default();
                let figures = levels::spreads(figures, &runs, CpuRun::figure);
                levels::Level { load, figures, ratio: None, runs, scale: SCALE }
            })
            .collect()
    };
    let (mut engine, mut control) = (by_kind(Kind::Engine), by_kind(Kind::Control));
    let wall = |l: &Level| levels::median(l, "wall_s");
    for result in [&mut engine, &mut control] {
        levels::set_ratios(result, |l, one| Some(l.load as f64 * wall(one).filter(|&w| w > 0.0)? / wall(l)?));
    }
    let samples = |levels: &[Level]| -> Vec<(usize, Vec<f64>)> {
        levels.iter().map(|l| (l.load, l.runs.iter().map(|r| r.wall_s).collect())).collect()
    };
    let environment = super::environment::Environment::read();
    let cores = environment.cores as usize;
    let (engine_knee, control_knee) = (knee_by_test(&samples(&engine), cores), knee_by_test(&samples(&control), cores));
    let tests = levels
        .iter()
        .zip(engine.iter().zip(&control))
        .map(|(&workers, (e, c))| LevelTests {
            workers,
            engine: engine_knee.as_ref().and_then(|k| k.test_of(workers)),
            control: control_knee.as_ref().and_then(|k| k.test_of(workers)),
            engine_to_control: e.ratio.zip(c.ratio).filter(|(_, c)| *c > 0.0).map(|(e, c)| e / c),
        })
        .collect();
    let verdict = verdict(engine_knee.as_ref(), control_knee.as_ref(), &environment);
    let mut parameters = BTreeMap::new();
    parameters.insert("seconds", serde_json::json!(opts.seconds));
    parameters.insert("repeat", serde_json::json!(rounds));
    parameters.insert("seed", serde_json::json!(seed));
    parameters.insert("work", serde_json::json!(work(rows)));
    parameters.insert("control_iterations", serde_json::json!(iterations));
    parameters.insert("knee_tolerance", serde_json::json!(KNEE_TOLERANCE));
    parameters.insert("alpha", serde_json::json!(ALPHA));
    let mut derivations: BTreeMap<&str, &str> = FIGURES.into_iter().collect();
    derivations.insert(SCALE.ratio, SCALE.derivation);
    derivations.insert("knee", KNEE);
    derivations.insert("control", CONTROL);
    derivations.insert("engine_to_control", ENGINE_TO_CONTROL);
    let report = CpuReport {
        experiment: "cpu",
        environment,
        parameters,
        derivations,
        levels: engine,
        findings: CpuFindings {
            knee: engine_knee.as_ref().and_then(|k| k.knee),
            control_knee: control_knee.as_ref().and_then(|k| k.knee),
            verdict,
            control_levels: control,
            tests,
            schedule,
        },
    };
    print_table(&report);
    let mut figures = levels::history_figures(&report.levels, "", &FIGURES, CpuRun::figure);
    figures.extend(levels::history_figures(&report.findings.control_levels, "control ", &FIGURES, CpuRun::figure));
    for (name, knee) in [("knee", report.findings.knee), ("control_knee", report.findings.control_knee)] {
        figures.extend(knee.map(|k| FigureSamples::new("findings", name, vec![k as f64])));
    }
    let stored =
        history::store_report(&opts.history, "cpu", &report.environment, &report, figures, Some(("findings", "knee")))?;
    if let Some(out) = &opts.out {
        write_files(&report, out, stored.as_ref())?;
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

/// The control's work: `iterations` steps of a 64-bit xorshift, each depending on the
/// last, so that no compiler shortens it and no two steps overlap; it touches no memory.
/// Returns the final state (which the caller keeps, so the loop is not dropped).
pub fn control_loop(iterations: u64) -> u64 {
    let mut x = std::hint::black_box(0x9E37_79B9_7F4A_7C15u64);
    for _ in 0..iterations {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
    }
    std::hint::black_box(x)
}

/// The control iterations that take one thread about `seconds` of CPU alone: the median
/// of three timed runs of 50 million, scaled.
fn calibrate_control(seconds: f64) -> u64 {
    const PROBE: u64 = 50_000_000;
    let cpu_ns = (0..3).map(|_| {
        let started = osstat::thread_cpu_time_ns();
        control_loop(PROBE);
        osstat::thread_cpu_time_ns().saturating_sub(started) as f64
    });
    let per_iteration = (spread(cpu_ns).median / 1e9).max(1e-12) / PROBE as f64;
    ((seconds / per_iteration) as u64).max(1000)
}

/// Starts `n` workers of `kind` at once, each doing its work once.
fn run_level(
    sessions: &mut Vec<Session>,
    n: usize,
    kind: Kind,
    rows: u64,
    iterations: u64,
    sequence: usize,
) -> Result<CpuRun> {
    let statement = work(rows);
    let step = levels::at_once(sessions, n, |_, session| match kind {
        Kind::Engine => sample::measure(session, &statement).map(|m| (m.elapsed_ms / 1000.0, m.cpu_ms / 1000.0)),
        Kind::Control => {
            let (started, cpu_started) = (std::time::Instant::now(), osstat::thread_cpu_time_ns());
            control_loop(iterations);
            let cpu_s = osstat::thread_cpu_time_ns().saturating_sub(cpu_started) as f64 / 1e9;
            Ok((started.elapsed().as_secs_f64(), cpu_s))
        }
    })?;
    let topology = osstat::read_topology();
    // /proc/stat counts in centiseconds (CpuTimes' unit).
    let busy_s = step.cpu.as_ref().map(|c| c.busy() as f64 / 100.0);
    let utilization = |units: u32| busy_s.map(|b| b * 100.0 / (step.elapsed_s * f64::from(units.max(1))));
    Ok(CpuRun {
        workers: n,
        sequence,
        wall_s: step.elapsed_s,
        worker_wall_s: step.outcomes.iter().map(|o| o.0).collect(),
        worker_cpu_s: step.outcomes.iter().map(|o| o.1).collect(),
        busy_s,
        steal_pct: step.cpu.as_ref().and_then(CpuTimes::steal_pct),
        utilization_by_threads_pct: utilization(topology.logical_cpus),
        utilization_by_cores_pct: utilization(topology.cores),
    })
}

impl KneeFinding {
    fn test_of(&self, workers: usize) -> Option<KneeTest> {
        self.tests.iter().find(|(w, _)| *w == workers).map(|(_, t)| *t)
    }
}

/// [`KNEE`] of levels given as (workers, wall time samples), on a machine of `cores`
/// cores. `None` without a one-worker level.
pub fn knee_by_test(levels: &[(usize, Vec<f64>)], cores: usize) -> Option<KneeFinding> {
    let mut sorted: Vec<&(usize, Vec<f64>)> = levels.iter().filter(|(_, s)| !s.is_empty()).collect();
    sorted.sort_by_key(|l| l.0);
    let one = sorted.iter().position(|l| l.0 == 1)?;
    let median = |samples: &[f64]| spread(samples.iter().copied()).median;
    let test = |level: &(usize, Vec<f64>), reference: &(usize, Vec<f64>)| {
        let ratio = median(&level.1) / median(&reference.1).max(f64::MIN_POSITIVE);
        let mw = mann_whitney(&level.1, &reference.1, Alternative::Greater)?;
        let slower = ratio > 1.0 + KNEE_TOLERANCE;
        let significant = mw.p_value < ALPHA;
        Some(KneeTest {
            reference: reference.0,
            median_ratio: ratio,
            p_value: mw.p_value,
            method: mw.method,
            full_speed: !(slower && (significant || too_few(level.1.len(), reference.1.len()))),
        })
    };
    let mut reference = one;
    let mut frequency_effect = false;
    if let Some(next) = sorted.get(one + 1)
        && next.0 <= cores.max(1)
        && let Some(t) = test(next, sorted[one])
        && !t.full_speed
        && t.median_ratio <= 1.0 + BOOST_AT_MOST
    {
        reference = one + 1;
        frequency_effect = true;
    }
    let mut tests = Vec::new();
    let mut knee = None;
    let mut stepped = false;
    for (i, level) in sorted.iter().enumerate().skip(one) {
        let Some(t) = test(level, sorted[reference]) else { continue };
        if i >= reference && !stepped {
            if t.full_speed {
                knee = Some(level.0);
            } else {
                stepped = true;
            }
        }
        tests.push((level.0, t));
    }
    let too_few_samples = too_few(sorted[one].1.len(), sorted[reference].1.len());
    Some(KneeFinding { knee, tests, frequency_effect, too_few_samples })
}

/// Whether samples of `n1` and `n2` values are too few for a one-sided Mann-Whitney test
/// to reach [`ALPHA`] even when they do not overlap at all (1 / C(n1 + n2, n1) ≥ α):
/// then the medians alone decide.
fn too_few(n1: usize, n2: usize) -> bool {
    let (m, n) = (n1.min(n2) as f64, n1.max(n2) as f64);
    let arrangements = (1..=m as u64).fold(1.0, |c, i| c * (n + i as f64) / i as f64);
    1.0 / arrangements >= ALPHA
}

/// What the knees say: core-powered, thread-powered, or something else, against the
/// topology, and lioscope's knee against the control's.
fn verdict(
    engine: Option<&KneeFinding>,
    control: Option<&KneeFinding>,
    env: &super::environment::Environment,
) -> String {
    let (cores, threads) = (env.cores as usize, env.logical_cpus as usize);
    let Some(engine) = engine else { return "no one-worker level ran: no knee".into() };
    let mut parts = vec![match engine.knee {
        None => "even the smallest level ran slower than one worker alone: no knee".into(),
        Some(k) if cores == threads && k == cores => {
            format!("knee at {k} workers = {cores} cores (one thread each): as many units of CPU power as cores")
        }
        Some(k) if k == cores => format!(
            "knee at {k} workers = {cores} cores, below {threads} threads: core-powered (a core's second thread \
             adds little to this work)"
        ),
        Some(k) if k == threads => format!("knee at {k} workers = {threads} threads on {cores} cores: thread-powered"),
        Some(k) => format!(
            "knee at {k} workers, against {cores} cores and {threads} threads: neither (other load, a CPU quota, \
             or a hypervisor giving less than the topology says)"
        ),
    }];
    if let Some(control) = control {
        parts.push(match (control.knee, engine.knee) {
            (Some(c), Some(e)) if c == e => format!("the control loop's knee is the same ({c}): the machine's"),
            (Some(c), Some(e)) if e < c => format!(
                "the control loop's knee is at {c}: the machine gives {c} units, lioscope's workers use {e} at full \
                 speed"
            ),
            (Some(c), _) => format!("the control loop's knee is at {c}"),
            (None, _) => "the control loop had no knee".into(),
        });
    }
    for (name, finding) in [("lioscope's", Some(engine)), ("the control's", control)] {
        let Some(finding) = finding else { continue };
        if finding.frequency_effect {
            // The first test is one worker's, against the plateau.
            let ratio = finding.tests.first().map_or(0.0, |(_, t)| t.median_ratio);
            parts.push(format!(
                "{name} one worker ran faster than the next level by more than {:.0}% (a core boosting its clock \
                 when it runs alone): the knee is counted from that level's plateau (one worker took {ratio:.2} \
                 of its time)",
                KNEE_TOLERANCE * 100.0
            ));
        }
        if finding.too_few_samples {
            parts.push(format!(
                "{name} samples are too few for the test to reach p < {ALPHA}: the medians alone decided (use \
                 --repeat 4 or more)"
            ));
        }
    }
    parts.join("; ")
}

/// The columns of the comparison table, terminal and HTML.
const COMPARISON: [&str; 9] = [
    "workers",
    "lioscope wall s",
    "p vs ref",
    "control wall s",
    "p vs ref",
    "lioscope throughput",
    "control throughput",
    "lioscope / control",
    "full speed (lioscope, control)",
];

/// One row a level: each kind's wall time (median [min..max]), its test's p-value
/// against the reference (marked `ref` at the reference), the throughputs and their
/// ratio, and whether each kind ran at full speed.
fn comparison_rows(report: &CpuReport) -> Vec<Vec<String>> {
    let wall = |levels: &[Level], n: usize| {
        super::report::cell(levels.iter().find(|l| l.load == n).and_then(|l| l.figures["wall_s"]))
    };
    let ratio = |levels: &[Level], n: usize| {
        super::report::ratio_cell(levels.iter().find(|l| l.load == n).and_then(|l| l.ratio))
    };
    let p = |t: Option<KneeTest>, n: usize| match t {
        Some(t) if t.reference == n => "ref".to_owned(),
        Some(t) => format!("{:.3}", t.p_value),
        None => "-".to_owned(),
    };
    let speed = |t: Option<KneeTest>| t.map_or("-", |t| if t.full_speed { "yes" } else { "no" });
    let f = &report.findings;
    f.tests
        .iter()
        .map(|t| {
            let n = t.workers;
            vec![
                n.to_string(),
                wall(&report.levels, n),
                p(t.engine, n),
                wall(&f.control_levels, n),
                p(t.control, n),
                ratio(&report.levels, n),
                ratio(&f.control_levels, n),
                super::report::ratio_cell(t.engine_to_control),
                format!("{}, {}", speed(t.engine), speed(t.control)),
            ]
        })
        .collect()
}

/// The terminal tables: lioscope's figures by level, then the comparison with the
/// control and the tests.
fn print_table(report: &CpuReport) {
    let keys = ["wall_s", "worker_cpu_s", "utilization_by_threads_pct", "utilization_by_cores_pct", "steal_pct"];
    levels::print_table(&keys, &report.levels);
    super::report::print_table(&COMPARISON, comparison_rows(report));
    let env = &report.environment;
    println!(
        "Topology: {} socket(s), {} cores, {} threads per core, {} logical CPUs.",
        env.sockets, env.cores, env.threads_per_core, env.logical_cpus
    );
    println!("{}", report.findings.verdict);
    super::report::print_derivations(&report.parameters["repeat"], &report.derivations);
}

/// cpu.json (everything), cpu.csv (one line per level and figure of lioscope's workers)
/// and cpu.html.
fn write_files(report: &CpuReport, out: &std::path::Path, stored: Option<&history::Stored>) -> Result<()> {
    levels::write_report(out, "cpu", report, &FIGURES, &html(report, stored)?)
}

/// The HTML report: the tables, the verdict, wall time against workers for both kinds
/// (with what cores alone and threads alone would give), and utilization both ways.
fn html(report: &CpuReport, stored: Option<&history::Stored>) -> Result<super::report::Html> {
    use super::report::{Chart, Html, Series};
    let series = |name: &str, levels: &[Level], key: &str| {
        let points = levels.iter().filter_map(|l| {
            let f = l.figures[key]?;
            Some((l.load as f64, f.median, Some((f.min, f.max))))
        });
        Series::new(name, points.collect())
    };
    let mut html = Html::new("lab cpu: cores against threads", &report.environment, &report.parameters);
    let env = &report.environment;
    html.paragraph(&format!(
        "Topology (sysfs): {} socket(s), {} cores, {} threads per core, {} logical CPUs. {}.",
        env.sockets, env.cores, env.threads_per_core, env.logical_cpus, report.findings.verdict
    ));
    html.table_from(
        "lioscope's workers by load level (median [min..max] of the runs)",
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
    html.table_from(
        "Against the control loop, with each level's test against the reference (one-sided Mann-Whitney U)",
        &COMPARISON,
        comparison_rows(report),
    );
    let mut walls = vec![
        series("lioscope", &report.levels, "wall_s"),
        series("control loop", &report.findings.control_levels, "wall_s"),
    ];
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
        "lioscope and the control loop: median wall_s of the runs, bars from min to max; the step lines are \
         lioscope's one-worker median × ceil(workers / units), the source document's ideal sequencing",
    ))?;
    html.chart(Chart::lines(
        "CPU utilization of lioscope's workers, by threads and by cores",
        "workers",
        "%",
        vec![
            series("by threads", &report.levels, "utilization_by_threads_pct"),
            series("by cores", &report.levels, "utilization_by_cores_pct"),
        ],
        "busy time from /proc/stat over each step, divided by (wall time × logical CPUs) and by (wall time × cores)",
    ))?;
    history::draw_trend(&mut html, stored)?;
    html.derivations(&report.derivations);
    Ok(html)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn level(workers: usize, samples: &[f64]) -> (usize, Vec<f64>) {
        (workers, samples.to_vec())
    }

    #[test]
    fn the_knee_is_the_last_level_not_both_significantly_and_much_slower() {
        // Two units of power: 1 and 2 take one worker's time, then it steps.
        let levels = [
            level(1, &[2.0, 2.1, 1.9, 2.05, 1.95]),
            level(2, &[2.1, 2.0, 2.2, 2.05, 2.15]),
            level(3, &[3.1, 3.0, 2.9, 3.2, 3.05]),
            level(4, &[4.1, 4.0, 4.2, 3.9, 4.05]),
        ];
        let found = knee_by_test(&levels, 2).unwrap();
        assert_eq!(found.knee, Some(2));
        assert!(!found.frequency_effect && !found.too_few_samples);
        let three = found.tests.iter().find(|(w, _)| *w == 3).unwrap().1;
        assert!(three.p_value < ALPHA && !three.full_speed && three.method == Method::Exact, "{three:?}");
        // A later level back under the tolerance does not move the knee.
        let back = [level(1, &[2.0; 5]), level(2, &[3.0, 3.1, 3.2, 2.9, 3.05]), level(3, &[2.0, 2.1, 2.0, 1.9, 2.0])];
        assert_eq!(knee_by_test(&back, 4).unwrap().knee, Some(1));
        assert_eq!(knee_by_test(&[level(2, &[5.0])], 2), None, "no one-worker level");
    }

    #[test]
    fn one_sample_far_off_does_not_end_the_plateau() {
        // One slow run at 2 workers (a hiccup) is not a significant difference.
        let levels = [level(1, &[2.0, 2.1, 1.9, 2.0, 2.05]), level(2, &[2.0, 2.1, 5.0, 1.95, 2.05])];
        let found = knee_by_test(&levels, 2).unwrap();
        assert_eq!(found.knee, Some(2));
    }

    #[test]
    fn a_boosted_single_worker_moves_the_reference_to_the_plateau() {
        // One worker alone 1.0 s; 2 to 16 take 1.3 s (boost lost); 24 take 1.95 s.
        let mut levels = vec![level(1, &[1.0, 1.02, 0.98, 1.01, 0.99])];
        for n in [2, 4, 8, 16] {
            levels.push(level(n, &[1.3, 1.31, 1.29, 1.32, 1.28]));
        }
        levels.push(level(24, &[1.95, 1.97, 1.93, 1.96, 1.94]));
        let found = knee_by_test(&levels, 16).unwrap();
        assert!(found.frequency_effect);
        assert_eq!(found.knee, Some(16));
        assert!(found.tests.iter().all(|(w, t)| t.reference == 2 || *w == 1), "{:?}", found.tests);
        // Without the cores to explain it, a 30% slower second level is a step.
        assert_eq!(knee_by_test(&levels, 1).unwrap().knee, Some(1));
    }

    #[test]
    fn too_few_samples_are_named_and_the_medians_decide() {
        let levels = [level(1, &[2.0, 2.1, 1.9]), level(2, &[2.05, 2.0, 2.1]), level(3, &[3.0, 3.1, 2.9])];
        let found = knee_by_test(&levels, 2).unwrap();
        assert!(found.too_few_samples);
        assert_eq!(found.knee, Some(2));
        assert!(!too_few(4, 4) && too_few(3, 3) && too_few(1, 10));
    }

    #[test]
    fn the_control_loop_takes_time_in_proportion_to_its_iterations() {
        let time = |n: u64| {
            let started = osstat::thread_cpu_time_ns();
            control_loop(n);
            osstat::thread_cpu_time_ns().saturating_sub(started)
        };
        assert_ne!(control_loop(10), control_loop(11), "each step changes the state");
        // Ten times the iterations take several times the CPU: the loop is not skipped.
        let (short, long) = (time(2_000_000), time(20_000_000));
        assert!(long > 3 * short, "{short} ns against {long} ns");
    }
}
