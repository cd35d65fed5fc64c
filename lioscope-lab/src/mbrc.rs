//! `lioscope lab mbrc`: CPU during multiblock reads, after the source experiment that
//! counted the rows of a 1.1 GB table (a numeric `id` and a 1,000-byte `padding`) with a
//! cold buffer cache at each `db_file_multiblock_read_count` (MBRC) and found the CPU
//! time high at small MBRC (7.4 s of a 19.4 s scan at MBRC 2) and falling as MBRC grew,
//! with one question left open: is there a fixed CPU cost per read call, and how big?
//!
//! Each run is one cold full scan, `SELECT COUNT(*) FROM t`, in a fresh session at one
//! MBRC: the buffer cache flushed first (`ALTER SYSTEM FLUSH BUFFER_CACHE`), the
//! operating system's page cache kept out by `filesystemio_options = directio` (the
//! datafiles opened with `O_DIRECT`; where the file system refuses it, the flush's
//! `posix_fadvise(POSIX_FADV_DONTNEED)` instead, and the report says which). A warm-up
//! scan comes first, untimed; then `--repeat` rounds, each running every MBRC once in an
//! order shuffled anew (seeded, `--seed`, recorded), so drift over the run falls on every
//! MBRC alike.
//!
//! Per run, from the session's own statistics: elapsed time, DB CPU (the thread's CPU
//! clock), read calls (`physical read total IO requests`), blocks read (`physical
//! reads`), the waits `db file scattered read` and `db file sequential read` (count,
//! average, maximum), CPU per read call and per block, and where the CPU went by
//! lioscope's own accounting of the read path: the read system calls' CPU, claiming
//! buffers, hash-chain inserts and block checks (`physical read ... ns`); the row walk
//! and the rest of the statement is DB CPU minus those, by difference.
//!
//! The answer to the open question is a least-squares fit over every run, CPU = a × read
//! calls + b × blocks read, without an intercept ([`fit`]): `a` is the fixed CPU cost of
//! a read call, `b` the cost of a block (the blocks are the same at every MBRC, so `b ×
//! blocks` is the fixed part); both with standard errors and 95% intervals. Each MBRC's
//! CPU is also tested against MBRC 1's (Mann-Whitney U, two-sided).

use super::history::{self, FigureSamples, HistoryArgs};
use super::levels::{self, Scale};
use super::sample;
use super::stats::{ThroughOriginFit, fit_through_origin};
use lioscope::stats::{EventSnapshot, Stat, WaitEvent};
use lioscope::{Database, DatabaseOptions, Error, Result, Session};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The MBRC values the source swept.
pub const DEFAULT_MBRC: [usize; 8] = [1, 2, 4, 8, 16, 32, 64, 128];

/// The largest MBRC the engine takes (`db_file_multiblock_read_count`).
pub const MAX_MBRC: usize = 1024;

/// The rows of the default table: a minute for the whole run on a 2-CPU VM. The
/// source's 1,000,000 rows are 142,858 blocks of 8 KiB, about 1.1 GB.
pub const DEFAULT_ROWS: u64 = 400_000;

/// The scan every run times.
pub const SCAN: &str = "SELECT COUNT(*) FROM t";

/// The confidence of the fit's intervals.
pub const CONFIDENCE: f64 = 0.95;

/// Options of the experiment.
#[derive(Debug, Clone, clap::Args)]
pub struct MbrcOptions {
    /// `db_file_multiblock_read_count` values, e.g. `1,8,128` (default 1,2,4,...,128).
    #[arg(long, value_delimiter = ',')]
    pub mbrc: Vec<usize>,
    /// Rows of the table (id and a 1,000-byte padding, 7 rows a block); 1000000 gives the
    /// source's table of about 1.1 GB.
    #[arg(long, default_value_t = DEFAULT_ROWS)]
    pub rows: u64,
    /// Rounds: cold scans at each MBRC, in an order shuffled anew each round (the median
    /// is reported, with min and max).
    #[arg(long, default_value_t = 3)]
    pub repeat: usize,
    /// Seed of the rounds' shuffled order (default: from the clock; the report records it).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Directory for the report: mbrc.json, mbrc.csv and mbrc.html.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// An existing database to run in (its table T is used when it holds --rows rows);
    /// default: a fresh one in a temporary directory.
    #[arg(long)]
    pub db: Option<PathBuf>,
    #[command(flatten)]
    pub probe: super::bandwidth::ProbeOptions,
    #[command(flatten)]
    pub history: HistoryArgs,
}

/// One wait event's part of a run.
#[derive(Debug, Clone, Copy, Default, serde::Serialize)]
pub struct Waits {
    pub waits: u64,
    pub time_us: u64,
    /// The longest wait of the run's session (a fresh one each run).
    pub max_us: u64,
}

impl Waits {
    fn between(before: &EventSnapshot, after: &EventSnapshot) -> Waits {
        let waits = after.waits - before.waits;
        let max_us = if waits > 0 { after.max_wait_micro } else { 0 };
        Waits { waits, time_us: after.time_waited_micro - before.time_waited_micro, max_us }
    }

    fn average_us(&self) -> Option<f64> {
        (self.waits > 0).then(|| self.time_us as f64 / self.waits as f64)
    }
}

/// One cold scan.
#[derive(Debug, Clone, serde::Serialize)]
pub struct MbrcRun {
    pub mbrc: usize,
    /// Its place in the run's order (0 first), which the shuffle decided.
    pub sequence: usize,
    pub elapsed_ms: f64,
    pub db_cpu_ms: f64,
    /// The rows the scan counted.
    pub rows: u64,
    /// `physical read total IO requests`.
    pub read_calls: u64,
    /// `physical reads`.
    pub blocks_read: u64,
    pub scattered: Waits,
    pub sequential: Waits,
    /// The engine's read-path accounting, in milliseconds: `physical read syscall CPU
    /// ns`, `... buffer claim ns`, `... hash chain insert ns`, `... block check ns`.
    pub syscall_cpu_ms: f64,
    pub buffer_claim_ms: f64,
    pub chain_insert_ms: f64,
    pub block_check_ms: f64,
    /// `blocks_read` × the block size.
    pub bytes_read: u64,
    /// Its bytes a second over the bandwidth probe's median (set once the probe is done).
    pub bandwidth_fraction: Option<f64>,
}

impl MbrcRun {
    /// The figure `key` of this run (see [`FIGURES`]); `None` where not available.
    pub fn figure(&self, key: &str) -> Option<f64> {
        let per = |v: f64, n: u64| (n > 0).then(|| v / n as f64);
        match key {
            "elapsed_ms" => Some(self.elapsed_ms),
            "db_cpu_ms" => Some(self.db_cpu_ms),
            "read_calls" => Some(self.read_calls as f64),
            "blocks_read" => Some(self.blocks_read as f64),
            "blocks_per_read_call" => per(self.blocks_read as f64, self.read_calls),
            "cpu_us_per_read_call" => per(self.db_cpu_ms * 1000.0, self.read_calls),
            "cpu_us_per_block" => per(self.db_cpu_ms * 1000.0, self.blocks_read),
            "scattered_waits" => Some(self.scattered.waits as f64),
            "scattered_avg_us" => self.scattered.average_us(),
            "scattered_max_us" => Some(self.scattered.max_us as f64),
            "sequential_waits" => Some(self.sequential.waits as f64),
            "sequential_avg_us" => self.sequential.average_us(),
            "sequential_max_us" => Some(self.sequential.max_us as f64),
            "syscall_cpu_ms" => Some(self.syscall_cpu_ms),
            "buffer_claim_ms" => Some(self.buffer_claim_ms),
            "chain_insert_ms" => Some(self.chain_insert_ms),
            "block_check_ms" => Some(self.block_check_ms),
            "rest_cpu_ms" => Some(self.rest_cpu_ms()),
            "syscall_cpu_us_per_read_call" => per(self.syscall_cpu_ms * 1000.0, self.read_calls),
            "read_gb_per_s" => super::bandwidth::gb_per_s(self.bytes_read as f64, self.elapsed_ms),
            "bandwidth_fraction" => self.bandwidth_fraction,
            _ => None,
        }
    }

    /// DB CPU not in the read path's accounted steps: the row walk and the rest, by
    /// difference.
    pub fn rest_cpu_ms(&self) -> f64 {
        self.db_cpu_ms - self.syscall_cpu_ms - self.buffer_claim_ms - self.chain_insert_ms - self.block_check_ms
    }
}

/// The figures of an MBRC, in report order, and how each is derived.
pub const FIGURES: [(&str, &str); 21] = [
    ("elapsed_ms", "wall clock around the scan's execute call"),
    ("db_cpu_ms", "delta of the session's DB CPU (its thread's CPU clock over the call)"),
    ("read_calls", "delta of 'physical read total IO requests': read system calls (pread, preadv)"),
    ("blocks_read", "delta of 'physical reads'"),
    ("blocks_per_read_call", "blocks_read / read_calls"),
    ("cpu_us_per_read_call", "db_cpu_ms × 1000 / read_calls"),
    ("cpu_us_per_block", "db_cpu_ms × 1000 / blocks_read"),
    ("scattered_waits", "delta of the waits on 'db file scattered read' (a read of more than one block)"),
    ("scattered_avg_us", "delta of its time waited / delta of its waits"),
    ("scattered_max_us", "its longest wait in the run's session (a fresh session each run)"),
    ("sequential_waits", "delta of the waits on 'db file sequential read' (a read of one block)"),
    ("sequential_avg_us", "delta of its time waited / delta of its waits"),
    ("sequential_max_us", "its longest wait in the run's session"),
    ("syscall_cpu_ms", "delta of 'physical read syscall CPU ns': the thread CPU clock around each pread/preadv"),
    (
        "buffer_claim_ms",
        "delta of 'physical read buffer claim ns': claiming a free buffer (the sweep) for each block read",
    ),
    ("chain_insert_ms", "delta of 'physical read hash chain insert ns': putting each block read into its hash chain"),
    ("block_check_ms", "delta of 'physical read block check ns': checking each block read (checksum, address, type)"),
    (
        "rest_cpu_ms",
        "db_cpu_ms minus the four above, by difference: the row walk, the consistent gets, parsing and the rest \
         (including reading the clocks)",
    ),
    ("syscall_cpu_us_per_read_call", "syscall_cpu_ms × 1000 / read_calls"),
    ("read_gb_per_s", "blocks_read × db_block_size / 10^9 / (elapsed_ms / 1000): the bytes the scan read from disk"),
    ("bandwidth_fraction", super::bandwidth::FRACTION),
];

/// The ratio of an MBRC to MBRC 1.
pub const CPU_RATIO: &str = "median db_cpu_ms at this MBRC / median db_cpu_ms at MBRC 1";

/// MBRC values are the levels; their ratio is [`CPU_RATIO`].
pub const SCALE: Scale = Scale { unit: "mbrc", ratio: "cpu_ratio", derivation: CPU_RATIO };

/// How the fit is made.
pub const FIT: &str = "ordinary least squares over every run (warm-up excluded) of db_cpu_ms × 1000 = a × read_calls \
                       + b × blocks_read, no intercept; standard errors from σ²(X'X)⁻¹ with σ² = SSE / (n - 2); \
                       95% intervals from Student's t with n - 2 degrees of freedom";

/// One MBRC's figures and runs.
pub type Level = levels::Level<MbrcRun>;

/// The whole report, as mbrc.json holds it.
pub type MbrcReport = levels::Report<MbrcRun, MbrcFindings>;

/// What `lab mbrc` finds beyond each MBRC's figures.
#[derive(Debug, serde::Serialize)]
pub struct MbrcFindings {
    /// How the operating system's page cache was kept out of the reads.
    pub page_cache_bypass: String,
    /// The table's blocks below the high-water mark (`user_segments`).
    pub table_blocks: u64,
    /// CPU = a × read calls + b × blocks, in microseconds ([`FIT`]); `None` with fewer
    /// than three runs or a single MBRC.
    pub fit: Option<ThroughOriginFit>,
    /// The answer to the source's question, from the fit.
    pub answer: String,
    /// Each MBRC's DB CPU against MBRC 1's (Mann-Whitney U, two-sided).
    pub tests: Vec<levels::LevelTest>,
    /// What the tests can show with this many runs.
    pub significance: String,
    /// The order the runs went in, warm-up excluded.
    pub schedule: Vec<usize>,
    /// The one-core memory read bandwidth probe, one pass before each cold scan: how the
    /// scans' bytes a second compare with what memory gives one core.
    pub bandwidth_probe: super::bandwidth::BandwidthProbe,
}

/// Runs the experiment, prints its tables and writes the report files.
pub fn run(opts: &MbrcOptions) -> Result<MbrcReport> {
    let values = mbrc_values(&opts.mbrc)?;
    if opts.rows == 0 || opts.rows > 1_000_000_000 {
        return Err(Error::InvalidParameter { name: "--rows".into(), message: "must be 1 to 1,000,000,000".into() });
    }
    let rounds = opts.repeat.max(1);
    let seed = super::levels::seed_or_clock(opts.seed);
    let (dir, _tmp) = sample::work_dir(opts.db.as_deref(), "lab-mbrc")?;
    let progress = super::progress::Steps::new((2 + values.len() * rounds) as u64, "lab mbrc");
    progress.step(&format!("loading {} rows", opts.rows));
    let cache = cache_size(opts.rows);
    load(&dir, opts.rows, cache)?;
    let (db, page_cache_bypass) = open_cold(&dir, cache)?;
    let table_blocks = table_blocks(&db.session())?;
    let block_size = sample::whole(&db.session(), "SELECT value FROM v$parameter WHERE name = 'db_block_size'")?;
    progress.step("warm-up scan");
    cold_scan(&db, *values.last().unwrap_or(&128), 0, block_size)?;
    let probe = opts.probe.array();
    let mut probe_samples = vec![probe.pass()];
    let schedule = super::levels::shuffled_rounds(&values, rounds, seed);
    let mut runs: BTreeMap<usize, Vec<MbrcRun>> = BTreeMap::new();
    for (sequence, &mbrc) in schedule.iter().enumerate() {
        progress.step(&format!("MBRC {mbrc}"));
        probe_samples.push(probe.pass());
        let run = cold_scan(&db, mbrc, sequence, block_size)?;
        if run.rows != opts.rows {
            return Err(Error::InvalidValue {
                context: "lab mbrc: table T".into(),
                message: format!("counted {} rows, not {}", run.rows, opts.rows),
            });
        }
        runs.entry(mbrc).or_default().push(run);
    }
    progress.finish();
    db.close()?;
    let bandwidth_probe = probe.report(probe_samples);
    drop(probe);
    let mut result: Vec<Level> = values
        .iter()
        .map(|&mbrc| {
            let mut runs = runs.remove(&mbrc).unwrap_or_default();
            for run in &mut runs {
                run.bandwidth_fraction = bandwidth_probe.fraction(run.figure("read_gb_per_s"));
            }
            let figures = levels::spreads(&FIGURES, &runs, MbrcRun::figure);
            levels::Level { load: mbrc, figures, ratio: None, runs, scale: SCALE }
        })
        .collect();
    let cpu = |l: &Level| levels::median(l, "db_cpu_ms");
    levels::set_ratios(&mut result, |l, one| Some(cpu(l)? / cpu(one).filter(|&c| c > 0.0)?));
    let all: Vec<&MbrcRun> = result.iter().flat_map(|l| &l.runs).collect();
    let fit = fit(&all);
    let tests = levels::tests_against_one(&result, "db_cpu_ms", MbrcRun::figure);
    let answer = answer(fit.as_ref(), &result);
    let mut parameters = BTreeMap::new();
    parameters.insert("rows", serde_json::json!(opts.rows));
    parameters.insert("mbrc", serde_json::json!(values));
    parameters.insert("repeat", serde_json::json!(rounds));
    parameters.insert("seed", serde_json::json!(seed));
    parameters.insert("db_cache_size", serde_json::json!(cache));
    parameters.insert("scan", serde_json::json!(SCAN));
    parameters.insert("table", serde_json::json!(CREATE_TABLE));
    parameters.insert("page_cache_bypass", serde_json::json!(page_cache_bypass));
    let mut derivations: BTreeMap<&str, &str> = FIGURES.into_iter().collect();
    derivations.insert(SCALE.ratio, SCALE.derivation);
    derivations.insert("fit", FIT);
    derivations.insert(
        "r_squared",
        "centered: 1 - SSE / Σ(y - ȳ)², the share of the CPU's variation around its mean that the fit explains; \
         uncentered: 1 - SSE / Σy², what a fit through the origin conventionally reports (R, NumPy), which \
         flatters it",
    );
    derivations.insert("p vs MBRC 1", "two-sided Mann-Whitney U of the runs' db_cpu_ms against MBRC 1's");
    let report = MbrcReport {
        experiment: "mbrc",
        environment: super::environment::Environment::read(),
        parameters,
        derivations,
        levels: result,
        findings: MbrcFindings {
            page_cache_bypass,
            table_blocks,
            fit,
            answer,
            tests,
            significance: significance(rounds),
            schedule,
            bandwidth_probe,
        },
    };
    print_tables(&report);
    let stored = history::store_report(
        &opts.history,
        "mbrc",
        &report.environment,
        &report,
        history_figures(&report),
        Some((&headline_group(&report), "db_cpu_ms")),
    )?;
    if let Some(out) = &opts.out {
        write_files(&report, out, stored.as_ref())?;
    }
    Ok(report)
}

/// The MBRC values asked for, sorted and without repeats, or [`DEFAULT_MBRC`]; each
/// from 1 to [`MAX_MBRC`].
pub fn mbrc_values(given: &[usize]) -> Result<Vec<usize>> {
    if let Some(bad) = given.iter().find(|&&m| m == 0 || m > MAX_MBRC) {
        return Err(Error::InvalidParameter {
            name: "--mbrc".into(),
            message: format!("db_file_multiblock_read_count is 1 to {MAX_MBRC}, not {bad}"),
        });
    }
    let mut values = if given.is_empty() { DEFAULT_MBRC.to_vec() } else { given.to_vec() };
    values.sort_unstable();
    values.dedup();
    Ok(values)
}

/// The table, as the source's: a numeric id and a 1,000-byte padding.
pub const CREATE_TABLE: &str = "CREATE TABLE t (id NUMBER, padding VARCHAR2(1000))";

/// A buffer cache that holds the whole table (about 1,060 bytes of cache a row) and room
/// for the rest, as the source's did (its scan without a flush took less CPU than with).
fn cache_size(rows: u64) -> u64 {
    rows.saturating_mul(1_060).saturating_add(32 << 20).max(64 << 20)
}

/// Creates and loads the table unless the database has it with `rows` rows.
fn load(dir: &Path, rows: u64, cache: u64) -> Result<()> {
    let parameters = vec![("db_cache_size".to_owned(), cache.to_string())];
    let db = Database::open_or_create(dir, DatabaseOptions { parameters, ..Default::default() })?;
    let session = db.session();
    let exists = session
        .execute("SELECT COUNT(*) FROM user_tables WHERE table_name = 'T'")?
        .rows
        .first()
        .is_some_and(|r| r[0].to_string() != "0");
    if exists {
        let counted = session.execute(SCAN)?.rows.first().map(|r| r[0].to_string());
        if counted != Some(rows.to_string()) {
            return Err(Error::InvalidValue {
                context: format!("lab mbrc: table T in {}", dir.display()),
                message: format!("holds {counted:?} rows, not the {rows} asked for (use another --db)"),
            });
        }
    } else {
        session.execute(CREATE_TABLE)?;
        session.execute(&format!(
            "INSERT INTO t SELECT LEVEL, RPAD('x', 1000, 'x') FROM dual CONNECT BY LEVEL <= {rows}"
        ))?;
        session.execute("COMMIT")?;
    }
    drop(session);
    db.close()
}

/// Opens the database for the scans with `filesystemio_options = directio` (`O_DIRECT`),
/// or, where the file system refuses it, without; with how the page cache is kept out.
fn open_cold(dir: &Path, cache: u64) -> Result<(Database, String)> {
    let parameters = |io: &str| {
        vec![("db_cache_size".to_owned(), cache.to_string()), ("filesystemio_options".to_owned(), io.to_owned())]
    };
    match Database::open(dir, DatabaseOptions { parameters: parameters("directio"), ..Default::default() }) {
        Ok(db) => Ok((
            db,
            "filesystemio_options = directio: the datafiles opened with O_DIRECT, so no read is served by the \
             operating system's page cache"
                .to_owned(),
        )),
        Err(refused) => {
            let db = Database::open(dir, DatabaseOptions { parameters: parameters("none"), ..Default::default() })?;
            Ok((
                db,
                format!(
                    "filesystemio_options = none (O_DIRECT refused: {refused}): each ALTER SYSTEM FLUSH \
                     BUFFER_CACHE also asked the kernel to drop the datafiles' pages (posix_fadvise \
                     POSIX_FADV_DONTNEED)"
                ),
            ))
        }
    }
}

/// The table's blocks below its high-water mark.
fn table_blocks(session: &Session) -> Result<u64> {
    let r = session.execute("SELECT blocks_below_hwm FROM user_segments WHERE segment_name = 'T'")?;
    Ok(r.rows.first().and_then(|row| row.first()).map_or(0, |d| d.to_string().parse().unwrap_or(0)))
}

/// One cold scan at `mbrc` in a fresh session: the cache flushed, then the scan timed;
/// its blocks are `block_size` bytes.
fn cold_scan(db: &Database, mbrc: usize, sequence: usize, block_size: u64) -> Result<MbrcRun> {
    let session = db.session();
    session.execute(&format!("ALTER SESSION SET db_file_multiblock_read_count = {mbrc}"))?;
    session.execute("ALTER SYSTEM FLUSH BUFFER_CACHE")?;
    let stats = session.stats();
    let events = || [WaitEvent::DbFileScatteredRead, WaitEvent::DbFileSequentialRead].map(|e| stats.event(e));
    let before = events();
    let m = sample::measure(&session, SCAN)?;
    let after = events();
    let ms = |stat: Stat| m.delta(stat) as f64 / 1e6;
    Ok(MbrcRun {
        mbrc,
        sequence,
        elapsed_ms: m.elapsed_ms,
        db_cpu_ms: m.cpu_ms,
        rows: m.rows(),
        read_calls: m.delta(Stat::PhysicalReadIoRequests),
        blocks_read: m.delta(Stat::PhysicalReads),
        scattered: Waits::between(&before[0], &after[0]),
        sequential: Waits::between(&before[1], &after[1]),
        syscall_cpu_ms: ms(Stat::PhysicalReadSyscallCpuNs),
        buffer_claim_ms: ms(Stat::PhysicalReadBufferClaimNs),
        chain_insert_ms: ms(Stat::PhysicalReadChainInsertNs),
        block_check_ms: ms(Stat::PhysicalReadBlockCheckNs),
        bytes_read: m.delta(Stat::PhysicalReads) * block_size,
        bandwidth_fraction: None,
    })
}

/// [`FIT`] over `runs`: CPU in microseconds against read calls and blocks read.
pub fn fit(runs: &[&MbrcRun]) -> Option<ThroughOriginFit> {
    let calls: Vec<f64> = runs.iter().map(|r| r.read_calls as f64).collect();
    let blocks: Vec<f64> = runs.iter().map(|r| r.blocks_read as f64).collect();
    let cpu_us: Vec<f64> = runs.iter().map(|r| r.db_cpu_ms * 1000.0).collect();
    fit_through_origin(&calls, &blocks, &cpu_us, CONFIDENCE)
}

/// What the fit says about a fixed CPU cost per read call, against the cost of a block,
/// and what lioscope's accounting says the read call's CPU is made of.
fn answer(fit: Option<&ThroughOriginFit>, levels: &[Level]) -> String {
    let Some(fit) = fit else {
        return "no fit: it needs two MBRC values or more and three runs or more".into();
    };
    let (a, b) = (fit.a, fit.b);
    let interval = |c: super::stats::Coefficient| format!("95% interval {:.3} to {:.3}", c.low, c.high);
    let mut parts = vec![if a.excludes_zero() && a.estimate > 0.0 {
        format!(
            "Yes, there is a fixed CPU cost per read call: a = {:.3} µs a call ({}, standard error {:.3}), which \
             excludes 0",
            a.estimate,
            interval(a),
            a.standard_error
        )
    } else {
        format!(
            "No fixed CPU cost per read call is shown: a = {:.3} µs a call ({}, standard error {:.3}) includes 0",
            a.estimate,
            interval(a),
            a.standard_error
        )
    }];
    parts.push(format!(
        "a block costs b = {:.3} µs ({}), so a read call costs as much CPU as {:.1} blocks; R² {:.4} (centered), {:.6} \
         (uncentered), over {} runs",
        b.estimate,
        interval(b),
        a.estimate / b.estimate,
        fit.r_squared_centered,
        fit.r_squared_uncentered,
        fit.n
    ));
    let (low, high) = (levels.first(), levels.last());
    if let (Some(low), Some(high)) = (low, high)
        && low.load != high.load
    {
        let share = |l: &Level| {
            let calls = levels::median(l, "read_calls")?;
            let cpu = levels::median(l, "db_cpu_ms")? * 1000.0;
            (cpu > 0.0).then(|| a.estimate * calls / cpu * 100.0)
        };
        if let (Some(s_low), Some(s_high)) = (share(low), share(high)) {
            parts.push(format!(
                "by the fit, read calls are {s_low:.0}% of the CPU at MBRC {} and {s_high:.1}% at MBRC {}",
                low.load, high.load
            ));
        }
        if let Some(syscall) = levels::median(low, "syscall_cpu_us_per_read_call") {
            parts.push(format!(
                "lioscope's own accounting puts {syscall:.3} µs a call in the read system call itself at MBRC {} \
                 ({:.0}% of a)",
                low.load,
                syscall / a.estimate * 100.0
            ));
        }
    }
    parts.join("; ") + "."
}

/// The smallest two-sided p-value the exact Mann-Whitney test gives `runs` runs against
/// as many (every run of one side above every run of the other): 2 / C(2 runs, runs).
pub fn smallest_p(runs: usize) -> f64 {
    let arrangements = (1..=runs).fold(1.0, |c, i| c * (runs + i) as f64 / i as f64);
    (2.0 / arrangements).min(1.0)
}

/// What the tests against MBRC 1 can show with `runs` runs at each MBRC.
fn significance(runs: usize) -> String {
    let p = smallest_p(runs);
    let reach = if p < 0.05 {
        "so a clear difference reaches p < 0.05".to_owned()
    } else {
        "so no difference can reach p < 0.05: use --repeat 4 or more for that".to_owned()
    };
    format!(
        "With {runs} runs at each MBRC, the smallest two-sided p-value the exact test gives is {p:.4} (every run of \
         one MBRC above every run of MBRC 1), {reach}"
    )
}

/// The group whose DB CPU heads the history: MBRC 128 (the parameter's default) if it
/// ran, else the largest.
fn headline_group(report: &MbrcReport) -> String {
    let mbrc = report.levels.iter().map(|l| l.load).find(|&m| m == 128).or(report.levels.last().map(|l| l.load));
    format!("mbrc={}", mbrc.unwrap_or(128))
}

/// Every MBRC's figures, and the fit's coefficients (group `fit`).
fn history_figures(report: &MbrcReport) -> Vec<FigureSamples> {
    let mut figures = levels::history_figures(&report.levels, "", &FIGURES, MbrcRun::figure);
    if let Some(fit) = &report.findings.fit {
        for (name, value) in [
            ("a_us_per_read_call", fit.a.estimate),
            ("b_us_per_block", fit.b.estimate),
            ("r_squared_centered", fit.r_squared_centered),
        ] {
            figures.push(FigureSamples::new("fit", name, vec![value]));
        }
    }
    figures
}

/// The columns of the main table, terminal and HTML.
const MAIN: [&str; 11] = [
    "mbrc",
    "elapsed ms",
    "DB CPU ms",
    "p vs MBRC 1",
    "read calls",
    "blocks read",
    "scattered reads: waits, avg µs, max µs",
    "sequential reads: waits, avg µs, max µs",
    "CPU µs / read call",
    "CPU µs / block",
    "CPU / MBRC 1",
];

fn main_rows(report: &MbrcReport) -> Vec<Vec<String>> {
    use super::report::{cell, ratio_cell, round};
    report
        .levels
        .iter()
        .map(|l| {
            let f = |key: &str| cell(l.figures[key]);
            let median = |key: &str| levels::median(l, key).map_or("n/a".to_owned(), round);
            let waits = |kind: &str| {
                format!(
                    "{}, {}, {}",
                    median(&format!("{kind}_waits")),
                    median(&format!("{kind}_avg_us")),
                    median(&format!("{kind}_max_us"))
                )
            };
            let test = report.findings.tests.iter().find(|t| t.load == l.load);
            let p = match test {
                Some(_) if l.load == 1 => "ref".to_owned(),
                Some(t) => levels::p_cell(t.p_value, t.method),
                None => "-".to_owned(),
            };
            vec![
                l.load.to_string(),
                f("elapsed_ms"),
                f("db_cpu_ms"),
                p,
                f("read_calls"),
                f("blocks_read"),
                waits("scattered"),
                waits("sequential"),
                f("cpu_us_per_read_call"),
                f("cpu_us_per_block"),
                ratio_cell(l.ratio),
            ]
        })
        .collect()
}

/// The parts of the CPU, by lioscope's accounting.
const PARTS: [(&str, &str); 5] = [
    ("syscall_cpu_ms", "read syscalls"),
    ("buffer_claim_ms", "buffer claims"),
    ("chain_insert_ms", "chain inserts"),
    ("block_check_ms", "block checks"),
    ("rest_cpu_ms", "row walk and the rest"),
];

fn breakdown_rows(report: &MbrcReport) -> Vec<Vec<String>> {
    report
        .levels
        .iter()
        .map(|l| {
            let mut row = vec![l.load.to_string(), super::report::cell(l.figures["db_cpu_ms"])];
            row.extend(PARTS.iter().map(|(key, _)| super::report::cell(l.figures[key])));
            row.push(super::report::cell(l.figures["syscall_cpu_us_per_read_call"]));
            row
        })
        .collect()
}

const BREAKDOWN: [&str; 8] = [
    "mbrc",
    "DB CPU ms",
    "read syscalls ms",
    "buffer claims ms",
    "chain inserts ms",
    "block checks ms",
    "row walk and the rest ms (by difference)",
    "syscall CPU µs / call",
];

fn fit_rows(fit: &ThroughOriginFit) -> Vec<Vec<String>> {
    let row = |name: &str, c: super::stats::Coefficient| {
        vec![
            name.to_owned(),
            format!("{:.4}", c.estimate),
            format!("{:.4}", c.standard_error),
            format!("{:.4} to {:.4}", c.low, c.high),
        ]
    };
    vec![row("a: µs per read call", fit.a), row("b: µs per block", fit.b)]
}

const FIT_HEADER: [&str; 4] = ["coefficient", "estimate", "standard error", "95% interval"];

fn print_tables(report: &MbrcReport) {
    let f = &report.findings;
    println!("Cold full scans of {} blocks ({SCAN}); {}.", f.table_blocks, f.page_cache_bypass);
    super::report::print_table(&MAIN, main_rows(report));
    println!("{}.", f.significance);
    super::report::print_table(&BREAKDOWN, breakdown_rows(report));
    if let Some(fit) = &f.fit {
        println!("CPU (µs) = a × read calls + b × blocks read, least squares over {} runs, no intercept:", fit.n);
        super::report::print_table(&FIT_HEADER, fit_rows(fit));
    }
    println!("{}", f.answer);
    println!("{}", f.bandwidth_probe.line());
    super::report::print_derivations(&report.parameters["repeat"], &report.derivations);
}

/// mbrc.json (everything), mbrc.csv (one line per MBRC and figure) and mbrc.html.
fn write_files(report: &MbrcReport, out: &Path, stored: Option<&history::Stored>) -> Result<()> {
    levels::write_report(out, "mbrc", report, &FIGURES, &html(report, stored)?)
}

/// The HTML report: the tables, the fit and its answer, CPU and elapsed time against
/// MBRC, and the CPU's parts at the smallest and largest MBRC.
fn html(report: &MbrcReport, stored: Option<&history::Stored>) -> Result<super::report::Html> {
    use super::report::{Chart, Html, Series};
    let f = &report.findings;
    let categories: Vec<String> = report.levels.iter().map(|l| l.load.to_string()).collect();
    let categories: Vec<&str> = categories.iter().map(String::as_str).collect();
    let bars = |name: &str, key: &str| {
        let points = report.levels.iter().enumerate().filter_map(|(i, l)| {
            let s = l.figures[key]?;
            Some((i as f64, s.median, (s.min != s.max).then_some((s.min, s.max))))
        });
        Series::new(name, points.collect())
    };
    let mut html = Html::new("lab mbrc: CPU during multiblock reads", &report.environment, &report.parameters);
    html.paragraph(&format!(
        "Cold full scans ({SCAN}) of a table of {} blocks, the buffer cache flushed before each; {}.",
        f.table_blocks, f.page_cache_bypass
    ));
    html.paragraph(&f.answer);
    html.table_from("Each MBRC (median [min..max] of the runs)", &MAIN, main_rows(report));
    html.paragraph(&format!("{}.", f.significance));
    html.table_from(
        "Where the CPU goes, by lioscope's accounting of the read path (median [min..max], ms)",
        &BREAKDOWN,
        breakdown_rows(report),
    );
    let mut cpu = vec![bars("DB CPU (measured)", "db_cpu_ms")];
    if let Some(fit) = &f.fit {
        html.table_from(
            &format!("The fit: CPU (µs) = a × read calls + b × blocks read, over {} runs", fit.n),
            &FIT_HEADER,
            fit_rows(fit),
        );
        html.table_from(
            "Quality of the fit",
            &["", ""],
            [
                vec!["R² centered: 1 - SSE / Σ(y - ȳ)²".into(), format!("{:.4}", fit.r_squared_centered)],
                vec!["R² uncentered: 1 - SSE / Σy²".into(), format!("{:.6}", fit.r_squared_uncentered)],
                vec!["residual standard error (µs)".into(), format!("{:.0}", fit.residual_standard_error)],
                vec!["degrees of freedom".into(), fit.degrees_of_freedom.to_string()],
            ],
        );
        let fitted = report.levels.iter().enumerate().filter_map(|(i, l)| {
            let (calls, blocks) = (levels::median(l, "read_calls")?, levels::median(l, "blocks_read")?);
            Some((i as f64, (fit.a.estimate * calls + fit.b.estimate * blocks) / 1000.0, None))
        });
        cpu.push(Series::new("fit: a × read calls + b × blocks", fitted.collect()));
    }
    html.chart(Chart::bars(
        "DB CPU of a cold full scan against db_file_multiblock_read_count",
        "DB CPU ms",
        &categories,
        cpu,
        "median DB CPU of the runs at each MBRC, bars from min to max; the fit's value at the median read calls \
         and blocks of each MBRC beside it",
    ))?;
    html.chart(Chart::bars(
        "Elapsed time of a cold full scan against db_file_multiblock_read_count",
        "elapsed ms",
        &categories,
        vec![bars("elapsed", "elapsed_ms"), bars("DB CPU", "db_cpu_ms")],
        "median elapsed time and DB CPU of the runs at each MBRC, bars from min to max",
    ))?;
    if let (Some(low), Some(high)) = (report.levels.first(), report.levels.last()) {
        let part_names: Vec<&str> = PARTS.iter().map(|(_, name)| *name).collect();
        let parts = |l: &Level| {
            let points = PARTS.iter().enumerate().filter_map(|(i, (key, _))| {
                let s = l.figures[key]?;
                Some((i as f64, s.median, (s.min != s.max).then_some((s.min, s.max))))
            });
            Series::new(&format!("MBRC {}", l.load), points.collect())
        };
        let mut series = vec![parts(low)];
        if high.load != low.load {
            series.push(parts(high));
        }
        html.chart(Chart::bars(
            &format!("Where the CPU goes at MBRC {} and at MBRC {}", low.load, high.load),
            "ms",
            &part_names,
            series,
            "median of the runs, bars from min to max: lioscope's physical read ... ns statistics; the row walk \
             and the rest is DB CPU minus them, by difference",
        ))?;
    }
    history::draw_trend(&mut html, stored)?;
    html.derivations(&report.derivations);
    Ok(html)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mbrc_values_default_to_the_sources_and_are_bounded() {
        assert_eq!(mbrc_values(&[]).unwrap(), DEFAULT_MBRC);
        assert_eq!(mbrc_values(&[8, 1, 8]).unwrap(), [1, 8]);
        for bad in [0, MAX_MBRC + 1] {
            let err = mbrc_values(&[1, bad]).unwrap_err().to_string();
            assert!(err.contains("--mbrc") && err.contains(&bad.to_string()), "{err}");
        }
    }

    fn run(mbrc: usize, calls: u64, blocks: u64, cpu_ms: f64) -> MbrcRun {
        MbrcRun {
            mbrc,
            sequence: 0,
            elapsed_ms: 2.0 * cpu_ms,
            db_cpu_ms: cpu_ms,
            rows: 7 * blocks,
            read_calls: calls,
            blocks_read: blocks,
            scattered: Waits::default(),
            sequential: Waits::default(),
            syscall_cpu_ms: 0.25 * cpu_ms,
            buffer_claim_ms: 0.1 * cpu_ms,
            chain_insert_ms: 0.05 * cpu_ms,
            block_check_ms: 0.1 * cpu_ms,
            bytes_read: blocks * 8192,
            bandwidth_fraction: None,
        }
    }

    #[test]
    fn the_fit_recovers_a_per_call_and_a_per_block_cost() {
        // 5 µs a call, 2 µs a block, exactly.
        let exact = |m: usize, blocks: u64| {
            let calls = blocks.div_ceil(m as u64);
            run(m, calls, blocks, (5.0 * calls as f64 + 2.0 * blocks as f64) / 1000.0)
        };
        let runs: Vec<MbrcRun> = [1, 2, 4, 8, 16].iter().flat_map(|&m| [exact(m, 1000), exact(m, 1001)]).collect();
        let fit = fit(&runs.iter().collect::<Vec<_>>()).unwrap();
        assert!((fit.a.estimate - 5.0).abs() < 1e-9 && (fit.b.estimate - 2.0).abs() < 1e-9, "{fit:?}");
        assert!(fit.a.excludes_zero());
        let levels: Vec<Level> = [1, 16]
            .iter()
            .map(|&m| {
                let runs: Vec<MbrcRun> = runs.iter().filter(|r| r.mbrc == m).cloned().collect();
                let figures = levels::spreads(&FIGURES, &runs, MbrcRun::figure);
                levels::Level { load: m, figures, ratio: None, runs, scale: SCALE }
            })
            .collect();
        let text = answer(Some(&fit), &levels);
        assert!(text.starts_with("Yes, there is a fixed CPU cost per read call: a = 5.000 µs"), "{text}");
        assert!(text.contains("b = 2.000 µs") && text.contains("2.5 blocks"), "{text}");
    }

    #[test]
    fn three_runs_cannot_reach_significance_and_four_can() {
        assert!((smallest_p(3) - 0.1).abs() < 1e-12);
        assert!((smallest_p(4) - 2.0 / 70.0).abs() < 1e-12);
        assert_eq!(smallest_p(1), 1.0);
        assert!(significance(3).contains("--repeat 4") && !significance(4).contains("--repeat"));
    }

    #[test]
    fn the_rest_of_the_cpu_is_by_difference() {
        let r = run(8, 125, 1000, 100.0);
        assert!((r.rest_cpu_ms() - 50.0).abs() < 1e-9);
        assert_eq!(r.figure("cpu_us_per_block"), Some(100.0));
        assert_eq!(r.figure("blocks_per_read_call"), Some(8.0));
        assert_eq!(r.figure("scattered_avg_us"), None, "no waits: no average");
        assert_eq!(run(1, 0, 0, 1.0).figure("cpu_us_per_read_call"), None);
    }
}
