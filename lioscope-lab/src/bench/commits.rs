//! `lioscope bench commits`: how fast sessions commit, and how the log writer's group
//! commit shares its writes among them.
//!
//! A table of `--accounts` rows `acct (id, bal)` with an index on `id`, all of it cached.
//! For each load level of `--sessions`, every session runs for `--seconds`, all started
//! at once, the OLTP commit loop
//!
//! ```text
//!   UPDATE acct SET bal = bal + 1 WHERE id = :id     one row, by the index
//!   COMMIT                                           commit record, then log file sync
//! ```
//!
//! Session k of n draws its ids at random from its own slice of the accounts
//! (`(k-1)·accounts/n + 1 ..= k·accounts/n`), so no session ever waits for another's row
//! lock: what the sessions share is the log writer, nothing else.
//!
//! ```text
//!  session 1: UPDATE ─ COMMIT ──wait──────┐      ┌─ UPDATE ─ COMMIT ─ ...
//!  session 2:   UPDATE ─ COMMIT ──wait────┤      ├─ ...
//!  LGWR:                 [ write + fdatasync ]──┘   one redo write covers both commits
//! ```
//!
//! Each level reports, from the deltas of `v$sysstat` and `v$system_event` around it:
//! commits/s in all and per session, the `log file sync` waits and their average, the
//! `log file parallel write` waits (the log writer's write + sync) and their average,
//! `redo writes` and the commits each one covered (the group-commit factor), and redo
//! bytes per commit. A last measurement commits with `COMMIT WRITE BATCH NOWAIT` in one
//! session: no wait for the disk, so the commit is not durable when acknowledged.

use super::whole;
use crate::{levels, report, sample};
use lioscope::types::Datum;
use lioscope::{Database, DatabaseOptions, Error, Result, Session};
use rand::{Rng, SeedableRng, rngs::SmallRng};
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// Options of the commit benchmark.
#[derive(Debug, Clone, clap::Args)]
pub struct CommitBenchOptions {
    /// Rows of the accounts table (each session updates its own slice of them).
    #[arg(long, default_value_t = 10_000)]
    pub accounts: u64,
    /// Load levels: how many sessions commit at once.
    #[arg(long, value_delimiter = ',', default_values_t = vec![1, 2, 4, 8])]
    pub sessions: Vec<usize>,
    /// Seconds each measurement runs.
    #[arg(long, default_value_t = 5.0)]
    pub seconds: f64,
    /// Skip the one-session `COMMIT WRITE BATCH NOWAIT` measurement.
    #[arg(long)]
    pub skip_nowait: bool,
    /// Directory for the benchmark database (default: a temporary directory, removed after).
    #[arg(long)]
    pub dir: Option<PathBuf>,
    /// Write the figures as JSON to this file too.
    #[arg(long)]
    pub json: Option<PathBuf>,
}

/// The statement each loop iteration changes one row with.
pub const UPDATE: &str = "UPDATE acct SET bal = bal + 1 WHERE id = :id";
/// The durable commit: IMMEDIATE WAIT, the defaults of `commit_logging` and `commit_wait`.
pub const COMMIT_WAIT: &str = "COMMIT";
/// The fast, not durable commit.
pub const COMMIT_NOWAIT: &str = "COMMIT WRITE BATCH NOWAIT";

/// One measurement: a load level with one way of committing.
#[derive(Debug, Clone, serde::Serialize)]
pub struct CommitRun {
    pub sessions: usize,
    /// The COMMIT statement the sessions ran.
    pub commit: &'static str,
    /// From the common start until the last session finished.
    pub elapsed_s: f64,
    /// COMMITs the loops ran, all sessions together.
    pub commits: u64,
    pub commits_per_s: f64,
    pub commits_per_s_per_session: f64,
    pub log_file_sync_waits: u64,
    pub log_file_sync_avg_us: Option<f64>,
    pub log_file_parallel_write_waits: u64,
    pub log_file_parallel_write_avg_us: Option<f64>,
    pub redo_writes: u64,
    /// Commits per redo write: how many commits one write of the log writer covered.
    pub commits_per_redo_write: Option<f64>,
    pub redo_size_per_commit: f64,
    pub redo_wastage_per_commit: f64,
    pub logical_reads_per_commit: f64,
}

/// The whole report, as `--json` writes it.
#[derive(Debug, Clone, serde::Serialize)]
pub struct CommitReport {
    pub benchmark: &'static str,
    pub environment: crate::environment::Environment,
    pub accounts: u64,
    pub seconds: f64,
    pub statements: [&'static str; 3],
    pub id_choice: &'static str,
    pub runs: Vec<CommitRun>,
}

/// How each session picks the row it updates.
const ID_CHOICE: &str = "session k of n: uniformly random ids in its own slice (k-1)*accounts/n+1 ..= k*accounts/n, \
                         so no row-lock waits";

/// Runs the benchmark, prints its table and writes the JSON if asked.
pub fn run(opts: &CommitBenchOptions) -> Result<CommitReport> {
    let load_levels = check(opts)?;
    let most = load_levels.iter().copied().max().unwrap_or(1);
    let (dir, _tmp) = sample::work_dir(opts.dir.as_deref(), "bench-commits")?;
    let db = Database::create(&dir, DatabaseOptions::default())?;
    let control = db.session();
    create_accounts(&control, opts.accounts)?;
    println!(
        "lioscope bench commits: {} accounts, {} s per measurement, sessions {:?}, in {}",
        opts.accounts,
        opts.seconds,
        load_levels,
        dir.display()
    );
    let mut sessions: Vec<Session> = (0..most).map(|_| db.session()).collect();
    sessions.iter().for_each(|s| s.set_autocommit(false));
    let mut runs = Vec::new();
    for &n in &load_levels {
        runs.push(measure(&control, &mut sessions, n, COMMIT_WAIT, opts)?);
    }
    if !opts.skip_nowait {
        runs.push(measure(&control, &mut sessions, 1, COMMIT_NOWAIT, opts)?);
    }
    drop(sessions);
    drop(control);
    db.close()?;
    let report = CommitReport {
        benchmark: "commits",
        environment: crate::environment::Environment::read(),
        accounts: opts.accounts,
        seconds: opts.seconds,
        statements: [UPDATE, COMMIT_WAIT, COMMIT_NOWAIT],
        id_choice: ID_CHOICE,
        runs,
    };
    print_report(&report);
    if let Some(path) = &opts.json {
        crate::report::write_json(path, &report)?;
    }
    Ok(report)
}

/// The load levels, once the options are known to make sense.
fn check(opts: &CommitBenchOptions) -> Result<Vec<usize>> {
    levels::check_seconds(opts.seconds, "--seconds")?;
    let load_levels = levels::levels(&opts.sessions, "--sessions", 1)?;
    let most = load_levels.iter().copied().max().unwrap_or(1) as u64;
    if opts.accounts < most {
        return Err(Error::InvalidParameter {
            name: "--accounts".into(),
            message: format!("each of {most} sessions needs an account of its own"),
        });
    }
    Ok(load_levels)
}

/// Creates and loads the accounts table and its index, and reads it once through the
/// index so that every block is cached.
fn create_accounts(session: &Session, accounts: u64) -> Result<()> {
    session.execute("CREATE TABLE acct (id INTEGER NOT NULL, bal INTEGER NOT NULL)")?;
    session.execute(&format!("INSERT INTO acct SELECT LEVEL, 0 FROM dual CONNECT BY LEVEL <= {accounts}"))?;
    session.execute("CREATE INDEX acct_id_ix ON acct (id)")?;
    session.execute("ANALYZE TABLE acct COMPUTE STATISTICS")?;
    session.execute("SELECT /*+ INDEX(a acct_id_ix) */ SUM(bal) FROM acct a WHERE id > 0")?;
    Ok(())
}

/// One measurement: `n` sessions run the loop with `commit` for the options' time.
fn measure(
    control: &Session,
    sessions: &mut Vec<Session>,
    n: usize,
    commit: &'static str,
    opts: &CommitBenchOptions,
) -> Result<CommitRun> {
    let duration = Duration::from_secs_f64(opts.seconds);
    let before = SystemTotals::read(control)?;
    let step = levels::at_once(sessions, n, |k, session| {
        let slice = opts.accounts / n as u64;
        commit_loop(session, commit, (k as u64 - 1) * slice + 1, slice, duration)
    })?;
    let delta = SystemTotals::read(control)?.since(&before);
    Ok(figures(n, commit, step.elapsed_s, step.outcomes.iter().sum(), &delta))
}

/// UPDATE then `commit`, over random ids of `first ..first + count`, until `duration`
/// has passed; returns how many commits ran.
fn commit_loop(session: &Session, commit: &str, first: u64, count: u64, duration: Duration) -> Result<u64> {
    let mut ids = SmallRng::seed_from_u64(first);
    let mut update = session.prepare(UPDATE)?;
    let mut commit = session.prepare(commit)?;
    let started = Instant::now();
    let mut commits = 0;
    while started.elapsed() < duration {
        let id = first + ids.random_range(0..count.max(1));
        update.execute(&[Datum::Int(id as i64)])?;
        commit.execute(&[])?;
        commits += 1;
    }
    Ok(commits)
}

fn figures(n: usize, commit: &'static str, elapsed_s: f64, commits: u64, d: &SystemTotals) -> CommitRun {
    let per_commit = |v: u64| v as f64 / commits.max(1) as f64;
    let average = |micro: u64, waits: u64| (waits > 0).then(|| micro as f64 / waits as f64);
    let commits_per_s = commits as f64 / elapsed_s;
    CommitRun {
        sessions: n,
        commit,
        elapsed_s,
        commits,
        commits_per_s,
        commits_per_s_per_session: commits_per_s / n as f64,
        log_file_sync_waits: d.sync_waits,
        log_file_sync_avg_us: average(d.sync_micro, d.sync_waits),
        log_file_parallel_write_waits: d.write_waits,
        log_file_parallel_write_avg_us: average(d.write_micro, d.write_waits),
        redo_writes: d.redo_writes,
        commits_per_redo_write: (d.redo_writes > 0).then(|| commits as f64 / d.redo_writes as f64),
        redo_size_per_commit: per_commit(d.redo_size),
        redo_wastage_per_commit: per_commit(d.redo_wastage),
        logical_reads_per_commit: per_commit(d.logical_reads),
    }
}

/// The system-wide statistics and wait events the figures are derived from, as
/// `v$sysstat` and `v$system_event` show them.
#[derive(Debug, Clone, Copy, Default)]
struct SystemTotals {
    redo_size: u64,
    redo_writes: u64,
    redo_wastage: u64,
    logical_reads: u64,
    sync_waits: u64,
    sync_micro: u64,
    write_waits: u64,
    write_micro: u64,
}

impl SystemTotals {
    fn read(session: &Session) -> Result<SystemTotals> {
        let mut t = SystemTotals::default();
        let stats = session.execute(
            "SELECT name, value FROM v$sysstat \
             WHERE name IN ('redo size', 'redo writes', 'redo wastage', 'session logical reads')",
        )?;
        for row in &stats.rows {
            let value = whole(&row[1]);
            match row[0].to_string().as_str() {
                "redo size" => t.redo_size = value,
                "redo writes" => t.redo_writes = value,
                "redo wastage" => t.redo_wastage = value,
                _ => t.logical_reads = value,
            }
        }
        let events = session.execute(
            "SELECT event, total_waits, time_waited_micro FROM v$system_event \
             WHERE event IN ('log file sync', 'log file parallel write')",
        )?;
        for row in &events.rows {
            let (waits, micro) = (whole(&row[1]), whole(&row[2]));
            match row[0].to_string().as_str() {
                "log file sync" => (t.sync_waits, t.sync_micro) = (waits, micro),
                _ => (t.write_waits, t.write_micro) = (waits, micro),
            }
        }
        Ok(t)
    }

    fn since(&self, before: &SystemTotals) -> SystemTotals {
        SystemTotals {
            redo_size: self.redo_size - before.redo_size,
            redo_writes: self.redo_writes - before.redo_writes,
            redo_wastage: self.redo_wastage - before.redo_wastage,
            logical_reads: self.logical_reads - before.logical_reads,
            sync_waits: self.sync_waits - before.sync_waits,
            sync_micro: self.sync_micro - before.sync_micro,
            write_waits: self.write_waits - before.write_waits,
            write_micro: self.write_micro - before.write_micro,
        }
    }
}

fn print_report(r: &CommitReport) {
    let optional = |v: Option<f64>| v.map_or("n/a".to_owned(), report::round);
    let header = [
        "sessions",
        "commit",
        "commits/s",
        "per session",
        "log file sync waits",
        "avg µs",
        "log file parallel write waits",
        "avg µs",
        "redo writes",
        "commits/redo write",
        "redo bytes/commit",
        "LIO/commit",
    ];
    let rows = r.runs.iter().map(|run| {
        vec![
            run.sessions.to_string(),
            run.commit.to_owned(),
            report::round(run.commits_per_s),
            report::round(run.commits_per_s_per_session),
            run.log_file_sync_waits.to_string(),
            optional(run.log_file_sync_avg_us),
            run.log_file_parallel_write_waits.to_string(),
            optional(run.log_file_parallel_write_avg_us),
            run.redo_writes.to_string(),
            format!("{:.2}", run.commits_per_redo_write.unwrap_or(0.0)),
            report::round(run.redo_size_per_commit),
            report::round(run.logical_reads_per_commit),
        ]
    });
    report::print_table(&header, rows);
    println!("Ids: {ID_CHOICE}. Figures are deltas of v$sysstat and v$system_event over each measurement.");
}
