//! The results history: every lab run stored, with the machine it ran on, the lioscope
//! version and commit, its parameters, its whole report and every sample of every
//! figure, in a SQLite database (through rusqlite). `lab history` lists the runs,
//! `lab compare A B` sets two runs' figures side by side with their ratios and the
//! significance of each difference, and each experiment's HTML report draws how its
//! headline figure moved across the stored runs of the same experiment on the same
//! machine.
//!
//! ```text
//!  runs     id, experiment, started_at (UTC, RFC 3339), host, cpu_model, kernel,
//!           version, git_commit, parameters (JSON), report (JSON)
//!  samples  run_id → runs.id, grp, figure, seq, value     one row a sample
//! ```
//!
//! A figure's samples belong to a group that says where they were measured (`workers=2`,
//! `path=FULL_BUFFER_CACHE`, `set=1`); a figure measured once has one sample. One
//! machine is one host name with one CPU model. The database is created on first use at
//! [`default_path`] unless `--history FILE` names another; a run is stored in one
//! transaction, so a history never holds half a run. Invariants: `PRAGMA user_version`
//! is [`SCHEMA_VERSION`]; a history of a later version is refused, not changed.

use crate::environment::Environment;
use crate::stats::{Alternative, Method, Spread, mann_whitney, spread};
use lioscope::{Error, Result};
use rusqlite::{Connection, OptionalExtension, params};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The schema this build writes and reads.
pub const SCHEMA_VERSION: i64 = 1;

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS runs (
    id          INTEGER PRIMARY KEY,
    experiment  TEXT NOT NULL,
    started_at  TEXT NOT NULL,
    host        TEXT NOT NULL,
    cpu_model   TEXT NOT NULL,
    kernel      TEXT NOT NULL,
    version     TEXT NOT NULL,
    git_commit  TEXT NOT NULL,
    parameters  TEXT NOT NULL,
    report      TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS runs_by_experiment ON runs (experiment, host, cpu_model, id);
CREATE TABLE IF NOT EXISTS samples (
    run_id  INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    grp     TEXT NOT NULL,
    figure  TEXT NOT NULL,
    seq     INTEGER NOT NULL,
    value   REAL NOT NULL,
    PRIMARY KEY (run_id, grp, figure, seq)
);
";

/// Where an experiment stores its run: the `--history` and `--no-history` options every
/// experiment takes.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct HistoryArgs {
    /// The results history to store the run in (default: $LIOSCOPE_HISTORY, else
    /// $XDG_DATA_HOME/lioscope/history.sqlite, else ~/.local/share/lioscope/history.sqlite).
    #[arg(long, value_name = "FILE")]
    pub history: Option<PathBuf>,
    /// Store nothing in the results history.
    #[arg(long, conflicts_with = "history")]
    pub no_history: bool,
}

impl HistoryArgs {
    /// Stores nothing.
    pub fn off() -> HistoryArgs {
        HistoryArgs { history: None, no_history: true }
    }

    /// Stores into the history at `path`.
    pub fn at(path: impl Into<PathBuf>) -> HistoryArgs {
        HistoryArgs { history: Some(path.into()), no_history: false }
    }

    /// The history's path, `None` when nothing is to be stored.
    pub fn path(&self) -> Option<PathBuf> {
        if self.no_history {
            return None;
        }
        Some(self.history.clone().unwrap_or_else(default_path))
    }
}

/// The default history: `$LIOSCOPE_HISTORY`, else `$XDG_DATA_HOME/lioscope/history.sqlite`,
/// else `~/.local/share/lioscope/history.sqlite`, else `lioscope-history.sqlite` here.
pub fn default_path() -> PathBuf {
    let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty()).map(PathBuf::from);
    if let Some(path) = var("LIOSCOPE_HISTORY") {
        return path;
    }
    let data = var("XDG_DATA_HOME").or_else(|| var("HOME").map(|home| home.join(".local/share")));
    match data {
        Some(dir) => dir.join("lioscope").join("history.sqlite"),
        None => PathBuf::from("lioscope-history.sqlite"),
    }
}

/// One figure's samples in a run.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct FigureSamples {
    /// Where it was measured: a level (`workers=2`), a path, a sample set.
    pub group: String,
    pub figure: String,
    pub samples: Vec<f64>,
}

impl FigureSamples {
    pub fn new(group: impl Into<String>, figure: impl Into<String>, samples: Vec<f64>) -> FigureSamples {
        FigureSamples { group: group.into(), figure: figure.into(), samples }
    }
}

/// A run to store.
pub struct NewRun<'a> {
    pub experiment: &'a str,
    pub environment: &'a Environment,
    /// The report's parameters and the whole report, as its JSON file holds them.
    pub parameters: serde_json::Value,
    pub report: serde_json::Value,
    pub figures: Vec<FigureSamples>,
}

/// What `lab history` shows of a stored run.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct RunSummary {
    pub id: i64,
    pub experiment: String,
    pub started_at: String,
    pub host: String,
    pub cpu_model: String,
    pub kernel: String,
    pub version: String,
    pub commit: String,
}

/// A results history.
pub struct History {
    conn: Connection,
    path: PathBuf,
}

impl History {
    /// Opens the history at `path`, creating it (and its directory) when missing.
    pub fn open(path: &Path) -> Result<History> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| Error::io("create", dir, e))?;
        }
        let conn = Connection::open(path).map_err(|e| failed(path, e))?;
        let history = History { conn, path: path.to_owned() };
        let version: i64 =
            history.conn.query_row("PRAGMA user_version", [], |r| r.get(0)).map_err(|e| history.err(e))?;
        if version > SCHEMA_VERSION {
            return Err(Error::InvalidValue {
                context: format!("results history {}", path.display()),
                message: format!("schema version {version} is newer than this lioscope's ({SCHEMA_VERSION})"),
            });
        }
        history.conn.busy_timeout(std::time::Duration::from_secs(10)).map_err(|e| history.err(e))?;
        history
            .conn
            .execute_batch(&format!("PRAGMA foreign_keys = ON; {SCHEMA} PRAGMA user_version = {SCHEMA_VERSION};"))
            .map_err(|e| history.err(e))?;
        Ok(history)
    }

    fn err(&self, e: rusqlite::Error) -> Error {
        failed(&self.path, e)
    }

    /// Stores `run` in one transaction; returns its id.
    pub fn record(&mut self, run: &NewRun<'_>) -> Result<i64> {
        let path = self.path.clone();
        let err = |e| failed(&path, e);
        let tx = self.conn.transaction().map_err(err)?;
        let env = run.environment;
        let started_at = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
        tx.execute(
            "INSERT INTO runs (experiment, started_at, host, cpu_model, kernel, version, git_commit, parameters, report)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
            params![
                run.experiment,
                started_at,
                env.host.as_deref().unwrap_or("unknown"),
                env.cpu_model.as_deref().unwrap_or("unknown"),
                env.kernel.as_deref().unwrap_or("unknown"),
                env.lioscope_version,
                env.lioscope_commit,
                run.parameters.to_string(),
                run.report.to_string(),
            ],
        )
        .map_err(err)?;
        let id = tx.last_insert_rowid();
        {
            let mut insert = tx
                .prepare("INSERT INTO samples (run_id, grp, figure, seq, value) VALUES (?1, ?2, ?3, ?4, ?5)")
                .map_err(err)?;
            for f in &run.figures {
                for (seq, value) in f.samples.iter().enumerate().filter(|(_, v)| v.is_finite()) {
                    insert.execute(params![id, f.group, f.figure, seq as i64, value]).map_err(err)?;
                }
            }
        }
        tx.commit().map_err(err)?;
        Ok(id)
    }

    /// The stored runs, oldest first, of `experiment` or of every experiment.
    pub fn runs(&self, experiment: Option<&str>) -> Result<Vec<RunSummary>> {
        let mut statement = self
            .conn
            .prepare(
                "SELECT id, experiment, started_at, host, cpu_model, kernel, version, git_commit FROM runs
                 WHERE ?1 IS NULL OR experiment = ?1 ORDER BY id",
            )
            .map_err(|e| self.err(e))?;
        let rows = statement.query_map(params![experiment], summary_of).map_err(|e| self.err(e))?;
        rows.collect::<rusqlite::Result<Vec<_>>>().map_err(|e| self.err(e))
    }

    /// Run `id`'s description.
    pub fn summary(&self, id: i64) -> Result<RunSummary> {
        self.conn
            .query_row(
                "SELECT id, experiment, started_at, host, cpu_model, kernel, version, git_commit FROM runs WHERE id = ?1",
                params![id],
                summary_of,
            )
            .optional()
            .map_err(|e| self.err(e))?
            .ok_or_else(|| Error::InvalidValue {
                context: format!("results history {}", self.path.display()),
                message: format!("no run {id}"),
            })
    }

    /// Every figure of run `id`, by group and figure.
    pub fn figures(&self, id: i64) -> Result<Vec<FigureSamples>> {
        let mut statement = self
            .conn
            .prepare("SELECT grp, figure, value FROM samples WHERE run_id = ?1 ORDER BY grp, figure, seq")
            .map_err(|e| self.err(e))?;
        let rows = statement
            .query_map(params![id], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?, r.get::<_, f64>(2)?)))
            .map_err(|e| self.err(e))?;
        let mut out: Vec<FigureSamples> = Vec::new();
        for row in rows {
            let (group, figure, value) = row.map_err(|e| self.err(e))?;
            match out.last_mut() {
                Some(last) if last.group == group && last.figure == figure => last.samples.push(value),
                _ => out.push(FigureSamples { group, figure, samples: vec![value] }),
            }
        }
        Ok(out)
    }

    /// The median of `group`'s `figure` in each stored run of `experiment` on the machine
    /// of `environment` (host and CPU model), oldest first: (run id, started at, median).
    pub fn trend(
        &self,
        experiment: &str,
        environment: &Environment,
        (group, figure): (&str, &str),
    ) -> Result<Vec<(i64, String, f64)>> {
        let mut statement = self
            .conn
            .prepare(
                "SELECT r.id, r.started_at, s.value FROM runs r JOIN samples s ON s.run_id = r.id
                 WHERE r.experiment = ?1 AND r.host = ?2 AND r.cpu_model = ?3 AND s.grp = ?4 AND s.figure = ?5
                 ORDER BY r.id, s.seq",
            )
            .map_err(|e| self.err(e))?;
        let host = environment.host.as_deref().unwrap_or("unknown");
        let cpu = environment.cpu_model.as_deref().unwrap_or("unknown");
        let rows = statement
            .query_map(params![experiment, host, cpu, group, figure], |r| {
                Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?, r.get::<_, f64>(2)?))
            })
            .map_err(|e| self.err(e))?;
        let mut by_run: BTreeMap<i64, (String, Vec<f64>)> = BTreeMap::new();
        for row in rows {
            let (id, at, value) = row.map_err(|e| self.err(e))?;
            by_run.entry(id).or_insert_with(|| (at, Vec::new())).1.push(value);
        }
        Ok(by_run.into_iter().map(|(id, (at, values))| (id, at, spread(values).median)).collect())
    }
}

fn summary_of(r: &rusqlite::Row<'_>) -> rusqlite::Result<RunSummary> {
    Ok(RunSummary {
        id: r.get(0)?,
        experiment: r.get(1)?,
        started_at: r.get(2)?,
        host: r.get(3)?,
        cpu_model: r.get(4)?,
        kernel: r.get(5)?,
        version: r.get(6)?,
        commit: r.get(7)?,
    })
}

fn failed(path: &Path, e: rusqlite::Error) -> Error {
    Error::InvalidValue { context: format!("results history {}", path.display()), message: e.to_string() }
}

/// What storing a run gave: its id, and its headline figure's medians across the stored
/// runs of the experiment on this machine (this run last).
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct Stored {
    pub id: i64,
    pub history: PathBuf,
    pub headline: Option<Headline>,
}

/// An experiment's headline figure across its stored runs on one machine.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Headline {
    pub group: String,
    pub figure: String,
    /// (run id, started at, median), oldest first.
    pub runs: Vec<(i64, String, f64)>,
}

/// Stores `run` in the history `args` names (nothing with `--no-history`), and reads back
/// the trend of its `headline` (group, figure). Prints where it went.
pub fn store(args: &HistoryArgs, run: &NewRun<'_>, headline: Option<(&str, &str)>) -> Result<Option<Stored>> {
    let Some(path) = args.path() else { return Ok(None) };
    let mut history = History::open(&path)?;
    let id = history.record(run)?;
    let headline = match headline {
        Some(key) => Some(Headline {
            group: key.0.to_owned(),
            figure: key.1.to_owned(),
            runs: history.trend(run.experiment, run.environment, key)?,
        }),
        None => None,
    };
    println!("Stored as run {id} in the results history {}.", path.display());
    Ok(Some(Stored { id, history: path, headline }))
}

/// Stores a report: [`store`] with the report serialised whole and its `parameters`.
pub fn store_report<T: serde::Serialize>(
    args: &HistoryArgs,
    experiment: &str,
    environment: &Environment,
    report: &T,
    figures: Vec<FigureSamples>,
    headline: Option<(&str, &str)>,
) -> Result<Option<Stored>> {
    if args.path().is_none() {
        return Ok(None);
    }
    let report = serde_json::to_value(report).map_err(|e| Error::InvalidValue {
        context: format!("lab {experiment}: the report"),
        message: e.to_string(),
    })?;
    let parameters = report.get("parameters").cloned().unwrap_or(serde_json::Value::Null);
    store(args, &NewRun { experiment, environment, parameters, report, figures }, headline)
}

/// Adds to `html` how the headline figure moved across the stored runs on this machine:
/// a chart from two runs on, a sentence for the first.
pub fn draw_trend(html: &mut crate::report::Html, stored: Option<&Stored>) -> Result<()> {
    let Some(headline) = stored.and_then(|s| s.headline.as_ref()) else { return Ok(()) };
    let what = format!("{} of {}", headline.figure, headline.group);
    if headline.runs.len() < 2 {
        html.paragraph(&format!(
            "Results history: this is the first stored run of this experiment on this machine ({what})."
        ));
        return Ok(());
    }
    let points = headline.runs.iter().map(|(id, _, median)| (*id as f64, *median, None)).collect();
    let first = headline.runs.first().map_or("", |r| r.1.as_str());
    html.chart(crate::report::Chart::lines(
        &format!("The headline across stored runs on this machine: {what}"),
        "run (results history id)",
        &headline.figure,
        vec![crate::report::Series::new(&what, points)],
        &format!(
            "the median of each stored run of this experiment with this host and CPU model, since {first}; \
             `lioscope lab compare A B` tests any two"
        ),
    ))
}

/// Options of `lab history`.
#[derive(Debug, Clone, clap::Args)]
pub struct HistoryOptions {
    /// Only the runs of this experiment (scan, lio, cpu, cr).
    pub experiment: Option<String>,
    /// The results history (default: as the experiments store into).
    #[arg(long, value_name = "FILE")]
    pub history: Option<PathBuf>,
}

/// `lab history`: the stored runs, oldest first.
pub fn list(opts: &HistoryOptions) -> Result<Vec<RunSummary>> {
    let path = opts.history.clone().unwrap_or_else(default_path);
    let runs = History::open(&path)?.runs(opts.experiment.as_deref())?;
    println!("Results history {}: {} run(s).", path.display(), runs.len());
    crate::report::print_table(
        &["run", "started (UTC)", "experiment", "host", "CPU", "kernel", "version", "commit"],
        runs.iter().map(|r| {
            vec![
                r.id.to_string(),
                r.started_at.clone(),
                r.experiment.clone(),
                r.host.clone(),
                r.cpu_model.clone(),
                r.kernel.clone(),
                r.version.clone(),
                r.commit.clone(),
            ]
        }),
    );
    Ok(runs)
}

/// Options of `lab compare`.
#[derive(Debug, Clone, clap::Args)]
pub struct CompareOptions {
    /// The run to compare against (its id in `lab history`).
    pub a: i64,
    /// The run compared.
    pub b: i64,
    /// The results history (default: as the experiments store into).
    #[arg(long, value_name = "FILE")]
    pub history: Option<PathBuf>,
    /// Only figures whose name contains this.
    #[arg(long)]
    pub figure: Option<String>,
}

/// One figure of two runs.
#[derive(Debug, Clone, serde::Serialize)]
pub struct FigureComparison {
    pub group: String,
    pub figure: String,
    pub a: Spread,
    pub b: Spread,
    pub samples: (usize, usize),
    /// b's median over a's (`None` when a's is 0).
    pub ratio: Option<f64>,
    /// Two-sided Mann-Whitney U of b's samples against a's (`None` with a single sample
    /// on either side: no spread to test).
    pub p_value: Option<f64>,
    pub method: Option<Method>,
}

/// Two runs compared.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Comparison {
    pub a: RunSummary,
    pub b: RunSummary,
    pub figures: Vec<FigureComparison>,
    /// What makes the comparison weaker (another machine, another experiment's figures).
    pub notes: Vec<String>,
}

/// `lab compare A B`: each figure both runs have, side by side.
pub fn compare(opts: &CompareOptions) -> Result<Comparison> {
    let path = opts.history.clone().unwrap_or_else(default_path);
    let history = History::open(&path)?;
    let (a, b) = (history.summary(opts.a)?, history.summary(opts.b)?);
    let mut notes = Vec::new();
    if a.experiment != b.experiment {
        notes.push(format!(
            "run {} is {} and run {} is {}: only figures of the same name compare",
            a.id, a.experiment, b.id, b.experiment
        ));
    }
    if (&a.host, &a.cpu_model) != (&b.host, &b.cpu_model) {
        notes.push(format!(
            "the runs are of two machines ({} / {} against {} / {}): differences include the machines'",
            a.host, a.cpu_model, b.host, b.cpu_model
        ));
    }
    let of_b: BTreeMap<(String, String), Vec<f64>> =
        history.figures(b.id)?.into_iter().map(|f| ((f.group, f.figure), f.samples)).collect();
    let figures: Vec<FigureComparison> = history
        .figures(a.id)?
        .into_iter()
        .filter(|f| opts.figure.as_deref().is_none_or(|name| f.figure.contains(name)))
        .filter_map(|f| {
            let b_samples = of_b.get(&(f.group.clone(), f.figure.clone()))?;
            Some(compare_figure(f.group, f.figure, &f.samples, b_samples))
        })
        .collect();
    let comparison = Comparison { a, b, figures, notes };
    print_comparison(&comparison);
    Ok(comparison)
}

/// One figure's samples in two runs compared.
fn compare_figure(group: String, figure: String, a: &[f64], b: &[f64]) -> FigureComparison {
    let (sa, sb) = (spread(a.iter().copied()), spread(b.iter().copied()));
    let test = (a.len() > 1 && b.len() > 1).then(|| mann_whitney(b, a, Alternative::TwoSided)).flatten();
    FigureComparison {
        group,
        figure,
        a: sa,
        b: sb,
        samples: (a.len(), b.len()),
        ratio: (sa.median != 0.0).then(|| sb.median / sa.median),
        p_value: test.map(|t| t.p_value),
        method: test.map(|t| t.method),
    }
}

fn print_comparison(c: &Comparison) {
    for (label, run) in [("A", &c.a), ("B", &c.b)] {
        println!(
            "{label}: run {} ({}), {} on {} / {}, lioscope {} at {}",
            run.id, run.experiment, run.started_at, run.host, run.cpu_model, run.version, run.commit
        );
    }
    crate::report::print_table(
        &[
            "group",
            "figure",
            "A median [min..max]",
            "B median [min..max]",
            "B / A",
            "p (Mann-Whitney, two-sided)",
            "samples",
        ],
        c.figures.iter().map(|f| {
            vec![
                f.group.clone(),
                f.figure.clone(),
                crate::report::cell(Some(f.a)),
                crate::report::cell(Some(f.b)),
                crate::report::ratio_cell(f.ratio),
                match (f.p_value, f.method) {
                    (Some(p), Some(Method::Exact)) => format!("{p:.4} (exact)"),
                    (Some(p), _) => format!("{p:.4}"),
                    _ => "-".to_owned(),
                },
                format!("{} / {}", f.samples.0, f.samples.1),
            ]
        }),
    );
    for note in &c.notes {
        println!("Note: {note}.");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn environment(host: &str) -> Environment {
        let mut env = Environment::read();
        env.host = Some(host.to_owned());
        env
    }

    fn run<'a>(env: &'a Environment, experiment: &'a str, figures: Vec<FigureSamples>) -> NewRun<'a> {
        NewRun {
            experiment,
            environment: env,
            parameters: serde_json::json!({"repeat": 3}),
            report: serde_json::json!({"experiment": experiment}),
            figures,
        }
    }

    #[test]
    fn a_run_comes_back_as_stored_and_runs_list_by_experiment() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("deep/history.sqlite");
        let env = environment("box");
        let figures = vec![
            FigureSamples::new("workers=1", "wall_s", vec![1.0, 1.2, 1.1]),
            FigureSamples::new("findings", "knee", vec![2.0]),
        ];
        let mut history = History::open(&path).unwrap();
        let id = history.record(&run(&env, "cpu", figures.clone())).unwrap();
        history.record(&run(&env, "lio", vec![])).unwrap();
        let mut stored = history.figures(id).unwrap();
        stored.sort_by(|a, b| a.group.cmp(&b.group));
        let mut expected = figures;
        expected.sort_by(|a, b| a.group.cmp(&b.group));
        assert_eq!(stored, expected);
        let cpu = history.runs(Some("cpu")).unwrap();
        assert_eq!(cpu.len(), 1);
        assert_eq!((cpu[0].id, cpu[0].host.as_str(), cpu[0].commit.as_str()), (id, "box", env!("LIOSCOPE_COMMIT")));
        assert_eq!(history.runs(None).unwrap().len(), 2);
        drop(history);
        // Reopened: the same runs.
        assert_eq!(History::open(&path).unwrap().runs(None).unwrap().len(), 2);
        assert!(History::open(&path).unwrap().summary(99).unwrap_err().to_string().contains("no run 99"));
    }

    #[test]
    fn the_trend_is_of_one_experiment_on_one_machine() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("history.sqlite");
        let (here, elsewhere) = (environment("here"), environment("elsewhere"));
        let liops = |v: f64| vec![FigureSamples::new("sessions=1", "liops", vec![v, v + 2.0, v + 1.0])];
        let mut history = History::open(&path).unwrap();
        history.record(&run(&here, "lio", liops(10.0))).unwrap();
        history.record(&run(&elsewhere, "lio", liops(50.0))).unwrap();
        history.record(&run(&here, "scan", liops(70.0))).unwrap();
        history.record(&run(&here, "lio", liops(20.0))).unwrap();
        let trend = history.trend("lio", &here, ("sessions=1", "liops")).unwrap();
        assert_eq!(trend.iter().map(|t| t.2).collect::<Vec<_>>(), [11.0, 21.0]);
    }

    #[test]
    fn compare_sets_figures_side_by_side_with_their_significance() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("history.sqlite");
        let env = environment("box");
        let mut history = History::open(&path).unwrap();
        let a = history
            .record(&run(&env, "lio", vec![FigureSamples::new("sessions=1", "liops", vec![1.0, 1.1, 0.9, 1.05, 0.95])]))
            .unwrap();
        let b = history
            .record(&run(&env, "lio", vec![FigureSamples::new("sessions=1", "liops", vec![2.0, 2.1, 1.9, 2.05, 1.95])]))
            .unwrap();
        drop(history);
        let c = compare(&CompareOptions { a, b, history: Some(path.clone()), figure: None }).unwrap();
        assert_eq!(c.figures.len(), 1);
        let f = &c.figures[0];
        assert_eq!(f.ratio, Some(2.0));
        // Five against five, no overlap: the exact two-sided p is 2 / C(10, 5).
        assert!((f.p_value.unwrap() - 2.0 / 252.0).abs() < 1e-12, "{f:?}");
        assert_eq!(f.method, Some(Method::Exact));
        assert!(c.notes.is_empty(), "{:?}", c.notes);
        let none = compare(&CompareOptions { a, b, history: Some(path), figure: Some("nothing".into()) }).unwrap();
        assert!(none.figures.is_empty());
    }

    #[test]
    fn a_history_from_a_later_lioscope_is_refused_untouched() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("history.sqlite");
        Connection::open(&path).unwrap().execute_batch("PRAGMA user_version = 99;").unwrap();
        let err = History::open(&path).err().unwrap().to_string();
        assert!(err.contains("newer") && err.contains("history.sqlite"), "{err}");
        let version: i64 = Connection::open(&path).unwrap().query_row("PRAGMA user_version", [], |r| r.get(0)).unwrap();
        assert_eq!(version, 99);
    }

    #[test]
    fn options_say_where_the_history_is() {
        assert_eq!(HistoryArgs::off().path(), None);
        assert_eq!(HistoryArgs::at("/x/h.sqlite").path(), Some(PathBuf::from("/x/h.sqlite")));
        assert!(default_path().to_string_lossy().ends_with(".sqlite"));
    }
}
