//! Measuring one statement the way every lab experiment does: wall-clock elapsed time,
//! the thread's CPU time (the time model's `DB CPU`), and the delta of every session
//! statistic, all around one `Session::execute`. Also what every experiment and benchmark
//! needs around its measurements: a database directory ([`work_dir`]), a value read
//! back from the dictionary ([`first`], [`whole`]); their figures go to JSON through
//! [`crate::report::write_json`].

use lioscope::stats::{Stat, TimeModel};
use lioscope::{QueryResult, Result, Session};
use std::time::Instant;

/// One measured statement.
#[derive(Debug, Clone)]
pub struct Measurement {
    pub elapsed_ms: f64,
    pub cpu_ms: f64,
    /// How much each statistic grew, indexed by `Stat as usize`.
    deltas: Vec<u64>,
    pub result: QueryResult,
}

impl Measurement {
    /// How much `stat` grew during the statement.
    pub fn delta(&self, stat: Stat) -> u64 {
        self.deltas[stat as usize]
    }

    /// The statement's single value as a whole number (a `COUNT(*)` or `SUM`), else the
    /// rows it changed.
    pub fn rows(&self) -> u64 {
        match self.result.rows.first().and_then(|r| r.first()) {
            Some(lioscope::types::Datum::Int(n)) if self.result.rows.len() == 1 => *n as u64,
            _ => self.result.rows_affected,
        }
    }
}

/// Runs `sql` in `session` and measures it.
pub fn measure(session: &Session, sql: &str) -> Result<Measurement> {
    measure_with(session, || session.execute(sql))
}

/// [`measure`] around `run`, a call into `session` (a prepared cursor's execution).
pub fn measure_with(session: &Session, run: impl FnOnce() -> Result<QueryResult>) -> Result<Measurement> {
    let stats = session.stats();
    let before = stats.snapshot();
    let cpu_before = stats.time(TimeModel::DbCpu);
    let started = Instant::now();
    let result = run()?;
    let elapsed_ms = started.elapsed().as_secs_f64() * 1000.0;
    let cpu_ms = (stats.time(TimeModel::DbCpu) - cpu_before) as f64 / 1000.0;
    let deltas = stats.snapshot().iter().zip(&before).map(|(after, before)| after - before).collect();
    Ok(Measurement { elapsed_ms, cpu_ms, deltas, result })
}

/// A temporary directory for an experiment's database (under `LIOSCOPE_BENCH_DIR` if
/// set, else the system's temporary directory), removed on drop.
pub struct TempDir(pub std::path::PathBuf);

impl TempDir {
    pub fn new(name: &str) -> Result<TempDir> {
        let base =
            std::env::var_os("LIOSCOPE_BENCH_DIR").map(std::path::PathBuf::from).unwrap_or_else(std::env::temp_dir);
        let dir = base.join(format!("lioscope-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&base).map_err(|e| lioscope::Error::io("create", &base, e))?;
        Ok(TempDir(dir))
    }
}

/// The directory for an experiment's database: `dir` if given, else a new temporary one
/// named after `name`, which lives (and is removed) with the returned guard.
pub fn work_dir(dir: Option<&std::path::Path>, name: &str) -> Result<(std::path::PathBuf, Option<TempDir>)> {
    match dir {
        Some(d) => Ok((d.to_owned(), None)),
        None => {
            let tmp = TempDir::new(name)?;
            Ok((tmp.0.clone(), Some(tmp)))
        }
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The first value of the first row of `sql`'s result, as text.
pub fn first(session: &Session, sql: &str) -> Result<Option<String>> {
    Ok(session.execute(sql)?.rows.first().and_then(|r| r.first()).map(|v| v.to_string()))
}

/// A whole number `sql` returns (0 when it returns no row).
pub fn whole(session: &Session, sql: &str) -> Result<u64> {
    let text = first(session, sql)?.unwrap_or_else(|| "0".into());
    text.parse().map_err(|_| lioscope::Error::InvalidValue {
        context: format!("lab: {sql}"),
        message: format!("{text} is not a whole number"),
    })
}
