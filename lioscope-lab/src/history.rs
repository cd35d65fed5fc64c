//! The results history: every lab run stored, with the machine it ran on, the lioscope
//! version and commit, its parameters, its whole report and every sample of every
//! figure, in a SQLite database (through rusqlite), or in a PostgreSQL database where a
//! fleet of machines shares one history (`--history postgresql://...`). `lab history`
//! lists the runs, `lab compare A B` sets two runs' figures side by side with their
//! ratios and the significance of each difference, and each experiment's HTML report
//! draws how its headline figure moved across the stored runs of the same experiment on
//! the same machine.
//!
//! ```text
//!  history_schema  version                                   the schema's version
//!  runs            id, experiment, started_at (UTC, RFC 3339), host, cpu_model, kernel,
//!                  version, git_commit, parameters (JSON), report (JSON)
//!  samples         run_id → runs.id, grp, figure, seq, value     one row a sample
//! ```
//!
//! Both stores hold the same rows and run the same statements (parameters written
//! `$1`, `$2`, which SQLite also reads by position); only the tables' types differ. A
//! figure's samples belong to a group that says where they were measured (`workers=2`,
//! `path=FULL_BUFFER_CACHE`, `set=1`); a figure measured once has one sample. One machine
//! is one host name with one CPU model. A run is stored in one transaction, so a history
//! never holds half a run. Invariants: `history_schema` holds [`SCHEMA_VERSION`]; a
//! history of a later version is refused, not changed.

use crate::environment::Environment;
use crate::stats::{Alternative, Method, Spread, mann_whitney, spread};
use lioscope::{Error, Result};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The schema this build writes and reads.
pub const SCHEMA_VERSION: i64 = 1;

/// The tables, with each engine's types in braces: `{id}` (the run's key, assigned on
/// insert), `{int}` and `{real}` ([`schema`] fills them in).
const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS history_schema (version {int} NOT NULL);
CREATE TABLE IF NOT EXISTS runs (
    id          {id} PRIMARY KEY,
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
    run_id  {int} NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    grp     TEXT NOT NULL,
    figure  TEXT NOT NULL,
    seq     {int} NOT NULL,
    value   {real} NOT NULL,
    PRIMARY KEY (run_id, grp, figure, seq)
);
";

/// [`SCHEMA`] in SQLite's types (`postgres` false) or PostgreSQL's.
fn schema(postgres: bool) -> String {
    let (id, int, real) =
        if postgres { ("BIGSERIAL", "BIGINT", "DOUBLE PRECISION") } else { ("INTEGER", "INTEGER", "REAL") };
    SCHEMA.replace("{id}", id).replace("{int}", int).replace("{real}", real)
}

/// Where a history is kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Location {
    /// A SQLite database file.
    File(PathBuf),
    /// A PostgreSQL connection string (`postgresql://user@host/db`, or `host=... dbname=...`
    /// after the `postgresql:` prefix).
    Postgres(String),
}

impl Location {
    /// `text` as a location: a PostgreSQL URL (`postgres://` or `postgresql://`), else a file.
    pub fn parse(text: &str) -> Location {
        if text.starts_with("postgresql://") || text.starts_with("postgres://") {
            Location::Postgres(text.to_owned())
        } else {
            Location::File(PathBuf::from(text))
        }
    }

    /// The location as errors and messages name it (a URL without its password).
    pub fn describe(&self) -> String {
        match self {
            Location::File(path) => path.display().to_string(),
            Location::Postgres(url) => match url.split_once("://").and_then(|(scheme, rest)| {
                let (auth, host) = rest.split_once('@')?;
                let user = auth.split_once(':').map_or(auth, |(user, _)| user);
                Some(format!("{scheme}://{user}@{host}"))
            }) {
                Some(redacted) => redacted,
                None => url.clone(),
            },
        }
    }
}

/// Where an experiment stores its run: the `--history` and `--no-history` options every
/// experiment takes.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct HistoryArgs {
    /// The results history to store the run in: a SQLite file, or a PostgreSQL URL
    /// (`postgresql://user@host/db`). Default: $LIOSCOPE_HISTORY, else
    /// $XDG_DATA_HOME/lioscope/history.sqlite, else ~/.local/share/lioscope/history.sqlite.
    #[arg(long, value_name = "FILE|URL")]
    pub history: Option<String>,
    /// Store nothing in the results history.
    #[arg(long, conflicts_with = "history")]
    pub no_history: bool,
}

impl HistoryArgs {
    /// Stores nothing.
    pub fn off() -> HistoryArgs {
        HistoryArgs { history: None, no_history: true }
    }

    /// Stores into the history file at `path`.
    pub fn at(path: impl AsRef<Path>) -> HistoryArgs {
        HistoryArgs { history: Some(path.as_ref().display().to_string()), no_history: false }
    }

    /// The history's location, `None` when nothing is to be stored.
    pub fn location(&self) -> Option<Location> {
        if self.no_history {
            return None;
        }
        Some(location_or_default(self.history.as_deref()))
    }
}

/// `given`, or [`default_path`].
fn location_or_default(given: Option<&str>) -> Location {
    given.map_or_else(|| Location::File(default_path()), Location::parse)
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

/// A value bound to a statement or read from a row.
#[derive(Debug, Clone, PartialEq)]
enum Value {
    Int(i64),
    Real(f64),
    Text(String),
    Null,
}

impl Value {
    fn int(&self) -> i64 {
        match self {
            Value::Int(v) => *v,
            Value::Real(v) => *v as i64,
            _ => 0,
        }
    }

    fn real(&self) -> f64 {
        match self {
            Value::Real(v) => *v,
            Value::Int(v) => *v as f64,
            _ => f64::NAN,
        }
    }

    fn text(&self) -> String {
        match self {
            Value::Text(v) => v.clone(),
            Value::Int(v) => v.to_string(),
            Value::Real(v) => v.to_string(),
            Value::Null => String::new(),
        }
    }
}

/// The database a history lives in.
enum Store {
    Sqlite(rusqlite::Connection),
    Postgres(Box<postgres::Client>),
}

impl Store {
    /// Runs `sql` (statements without parameters, `;`-separated).
    fn batch(&mut self, sql: &str) -> std::result::Result<(), String> {
        match self {
            Store::Sqlite(c) => c.execute_batch(sql).map_err(|e| e.to_string()),
            Store::Postgres(c) => c.batch_execute(sql).map_err(|e| e.to_string()),
        }
    }

    /// The rows of `sql` with `params` bound to `$1`, `$2`, ...
    fn query(&mut self, sql: &str, params: &[Value]) -> std::result::Result<Vec<Vec<Value>>, String> {
        match self {
            Store::Sqlite(c) => {
                let mut statement = c.prepare_cached(sql).map_err(|e| e.to_string())?;
                let bound = params.iter().map(|v| match v {
                    Value::Int(i) => rusqlite::types::Value::Integer(*i),
                    Value::Real(r) => rusqlite::types::Value::Real(*r),
                    Value::Text(t) => rusqlite::types::Value::Text(t.clone()),
                    Value::Null => rusqlite::types::Value::Null,
                });
                let width = statement.column_count();
                let rows = statement
                    .query_map(rusqlite::params_from_iter(bound), |row| {
                        (0..width)
                            .map(|i| {
                                Ok(match row.get::<_, rusqlite::types::Value>(i)? {
                                    rusqlite::types::Value::Integer(v) => Value::Int(v),
                                    rusqlite::types::Value::Real(v) => Value::Real(v),
                                    rusqlite::types::Value::Text(v) => Value::Text(v),
                                    rusqlite::types::Value::Null | rusqlite::types::Value::Blob(_) => Value::Null,
                                })
                            })
                            .collect::<rusqlite::Result<Vec<Value>>>()
                    })
                    .map_err(|e| e.to_string())?;
                rows.collect::<rusqlite::Result<Vec<_>>>().map_err(|e| e.to_string())
            }
            Store::Postgres(c) => {
                let boxed: Vec<Box<dyn postgres::types::ToSql + Sync>> = params
                    .iter()
                    .map(|v| -> Box<dyn postgres::types::ToSql + Sync> {
                        match v {
                            Value::Int(i) => Box::new(*i),
                            Value::Real(r) => Box::new(*r),
                            Value::Text(t) => Box::new(t.clone()),
                            Value::Null => Box::new(None::<String>),
                        }
                    })
                    .collect();
                let refs: Vec<&(dyn postgres::types::ToSql + Sync)> = boxed.iter().map(|b| b.as_ref()).collect();
                let rows = c.query(sql, &refs).map_err(|e| e.to_string())?;
                rows.iter()
                    .map(|row| {
                        (0..row.len())
                            .map(|i| {
                                use postgres::types::Type;
                                let ty = row.columns()[i].type_().clone();
                                let v = if ty == Type::INT8 {
                                    row.try_get::<_, Option<i64>>(i).map(|v| v.map_or(Value::Null, Value::Int))
                                } else if ty == Type::INT4 {
                                    row.try_get::<_, Option<i32>>(i)
                                        .map(|v| v.map_or(Value::Null, |v| Value::Int(v.into())))
                                } else if ty == Type::FLOAT8 {
                                    row.try_get::<_, Option<f64>>(i).map(|v| v.map_or(Value::Null, Value::Real))
                                } else {
                                    row.try_get::<_, Option<String>>(i).map(|v| v.map_or(Value::Null, Value::Text))
                                };
                                v.map_err(|e| e.to_string())
                            })
                            .collect()
                    })
                    .collect()
            }
        }
    }
}

/// A results history.
pub struct History {
    store: Store,
    location: Location,
}

impl History {
    /// Opens the history file at `path`, creating it (and its directory) when missing.
    pub fn open(path: &Path) -> Result<History> {
        History::open_at(&Location::File(path.to_owned()))
    }

    /// Opens the history at `location`, creating its tables when missing.
    pub fn open_at(location: &Location) -> Result<History> {
        let failed = |message: String| Error::InvalidValue {
            context: format!("results history {}", location.describe()),
            message,
        };
        let (store, tables) = match location {
            Location::File(path) => {
                if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
                    std::fs::create_dir_all(dir).map_err(|e| Error::io("create", dir, e))?;
                }
                let conn = rusqlite::Connection::open(path).map_err(|e| failed(e.to_string()))?;
                conn.busy_timeout(std::time::Duration::from_secs(10)).map_err(|e| failed(e.to_string()))?;
                (Store::Sqlite(conn), schema(false))
            }
            Location::Postgres(url) => {
                let client = postgres::Client::connect(url, postgres::NoTls).map_err(|e| failed(e.to_string()))?;
                (Store::Postgres(Box::new(client)), schema(true))
            }
        };
        let mut history = History { store, location: location.clone() };
        if let Store::Sqlite(_) = history.store {
            history.store.batch("PRAGMA foreign_keys = ON;").map_err(failed)?;
        }
        history.store.batch(&tables).map_err(failed)?;
        let found = history.store.query("SELECT MAX(version) FROM history_schema", &[]).map_err(failed)?;
        match found.first().and_then(|row| row.first()) {
            Some(Value::Null) | None => {
                history
                    .store
                    .query("INSERT INTO history_schema (version) VALUES ($1)", &[Value::Int(SCHEMA_VERSION)])
                    .map_err(failed)?;
            }
            Some(v) if v.int() > SCHEMA_VERSION => {
                return Err(failed(format!(
                    "schema version {} is newer than this lioscope's ({SCHEMA_VERSION})",
                    v.int()
                )));
            }
            Some(_) => {}
        }
        Ok(history)
    }

    fn err(&self, message: String) -> Error {
        Error::InvalidValue { context: format!("results history {}", self.location.describe()), message }
    }

    fn query(&mut self, sql: &str, params: &[Value]) -> Result<Vec<Vec<Value>>> {
        self.store.query(sql, params).map_err(|m| self.err(m))
    }

    /// Stores `run` in one transaction; returns its id.
    pub fn record(&mut self, run: &NewRun<'_>) -> Result<i64> {
        self.store.batch("BEGIN").map_err(|m| self.err(m))?;
        let stored = self.insert(run);
        let end = if stored.is_ok() { "COMMIT" } else { "ROLLBACK" };
        let ended = self.store.batch(end).map_err(|m| self.err(m));
        let id = stored?;
        ended?;
        Ok(id)
    }

    fn insert(&mut self, run: &NewRun<'_>) -> Result<i64> {
        let env = run.environment;
        let text = |v: &str| Value::Text(v.to_owned());
        let started_at = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
        let inserted = self.query(
            "INSERT INTO runs (experiment, started_at, host, cpu_model, kernel, version, git_commit, parameters, report)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING id",
            &[
                text(run.experiment),
                Value::Text(started_at),
                text(env.host.as_deref().unwrap_or("unknown")),
                text(env.cpu_model.as_deref().unwrap_or("unknown")),
                text(env.kernel.as_deref().unwrap_or("unknown")),
                text(env.lioscope_version),
                text(env.lioscope_commit),
                Value::Text(run.parameters.to_string()),
                Value::Text(run.report.to_string()),
            ],
        )?;
        let id = inserted.first().and_then(|r| r.first()).map(Value::int).ok_or_else(|| self.err("no id".into()))?;
        for f in &run.figures {
            for (seq, value) in f.samples.iter().enumerate().filter(|(_, v)| v.is_finite()) {
                self.query(
                    "INSERT INTO samples (run_id, grp, figure, seq, value) VALUES ($1, $2, $3, $4, $5)",
                    &[Value::Int(id), text(&f.group), text(&f.figure), Value::Int(seq as i64), Value::Real(*value)],
                )?;
            }
        }
        Ok(id)
    }

    /// The stored runs, oldest first, of `experiment` or of every experiment.
    pub fn runs(&mut self, experiment: Option<&str>) -> Result<Vec<RunSummary>> {
        let filter = experiment.map_or(Value::Null, |e| Value::Text(e.to_owned()));
        let rows = self.query(
            "SELECT id, experiment, started_at, host, cpu_model, kernel, version, git_commit FROM runs
             WHERE CAST($1 AS TEXT) IS NULL OR experiment = CAST($1 AS TEXT) ORDER BY id",
            &[filter],
        )?;
        Ok(rows.iter().map(|r| summary_of(r)).collect())
    }

    /// Run `id`'s description.
    pub fn summary(&mut self, id: i64) -> Result<RunSummary> {
        let rows = self.query(
            "SELECT id, experiment, started_at, host, cpu_model, kernel, version, git_commit FROM runs WHERE id = $1",
            &[Value::Int(id)],
        )?;
        rows.first().map(|r| summary_of(r)).ok_or_else(|| self.err(format!("no run {id}")))
    }

    /// Every figure of run `id`, by group and figure.
    pub fn figures(&mut self, id: i64) -> Result<Vec<FigureSamples>> {
        let rows = self.query(
            "SELECT grp, figure, value FROM samples WHERE run_id = $1 ORDER BY grp, figure, seq",
            &[Value::Int(id)],
        )?;
        let mut out: Vec<FigureSamples> = Vec::new();
        for row in rows {
            let (group, figure, value) = (row[0].text(), row[1].text(), row[2].real());
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
        &mut self,
        experiment: &str,
        environment: &Environment,
        (group, figure): (&str, &str),
    ) -> Result<Vec<(i64, String, f64)>> {
        let host = environment.host.as_deref().unwrap_or("unknown");
        let cpu = environment.cpu_model.as_deref().unwrap_or("unknown");
        let text = |v: &str| Value::Text(v.to_owned());
        let rows = self.query(
            "SELECT r.id, r.started_at, s.value FROM runs r JOIN samples s ON s.run_id = r.id
             WHERE r.experiment = $1 AND r.host = $2 AND r.cpu_model = $3 AND s.grp = $4 AND s.figure = $5
             ORDER BY r.id, s.seq",
            &[text(experiment), text(host), text(cpu), text(group), text(figure)],
        )?;
        let mut by_run: BTreeMap<i64, (String, Vec<f64>)> = BTreeMap::new();
        for row in rows {
            by_run.entry(row[0].int()).or_insert_with(|| (row[1].text(), Vec::new())).1.push(row[2].real());
        }
        Ok(by_run.into_iter().map(|(id, (at, values))| (id, at, spread(values).median)).collect())
    }
}

fn summary_of(r: &[Value]) -> RunSummary {
    RunSummary {
        id: r[0].int(),
        experiment: r[1].text(),
        started_at: r[2].text(),
        host: r[3].text(),
        cpu_model: r[4].text(),
        kernel: r[5].text(),
        version: r[6].text(),
        commit: r[7].text(),
    }
}

/// What storing a run gave: its id, and its headline figure's medians across the stored
/// runs of the experiment on this machine (this run last).
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct Stored {
    pub id: i64,
    /// Where it was stored (a URL without its password).
    pub history: String,
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
    let Some(location) = args.location() else { return Ok(None) };
    let mut history = History::open_at(&location)?;
    let id = history.record(run)?;
    let headline = match headline {
        Some(key) => Some(Headline {
            group: key.0.to_owned(),
            figure: key.1.to_owned(),
            runs: history.trend(run.experiment, run.environment, key)?,
        }),
        None => None,
    };
    let place = location.describe();
    println!("Stored as run {id} in the results history {place}.");
    Ok(Some(Stored { id, history: place, headline }))
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
    if args.location().is_none() {
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
    /// Only the runs of this experiment (scan, lio, cpu, cr, mbrc).
    pub experiment: Option<String>,
    /// The results history, a SQLite file or a PostgreSQL URL (default: as the
    /// experiments store into).
    #[arg(long, value_name = "FILE|URL")]
    pub history: Option<String>,
}

/// `lab history`: the stored runs, oldest first.
pub fn list(opts: &HistoryOptions) -> Result<Vec<RunSummary>> {
    let location = location_or_default(opts.history.as_deref());
    let runs = History::open_at(&location)?.runs(opts.experiment.as_deref())?;
    println!("Results history {}: {} run(s).", location.describe(), runs.len());
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
    /// The results history, a SQLite file or a PostgreSQL URL (default: as the
    /// experiments store into).
    #[arg(long, value_name = "FILE|URL")]
    pub history: Option<String>,
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
    let mut history = History::open_at(&location_or_default(opts.history.as_deref()))?;
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
        let file = Some(path.display().to_string());
        let c = compare(&CompareOptions { a, b, history: file.clone(), figure: None }).unwrap();
        assert_eq!(c.figures.len(), 1);
        let f = &c.figures[0];
        assert_eq!(f.ratio, Some(2.0));
        // Five against five, no overlap: the exact two-sided p is 2 / C(10, 5).
        assert!((f.p_value.unwrap() - 2.0 / 252.0).abs() < 1e-12, "{f:?}");
        assert_eq!(f.method, Some(Method::Exact));
        assert!(c.notes.is_empty(), "{:?}", c.notes);
        let none = compare(&CompareOptions { a, b, history: file, figure: Some("nothing".into()) }).unwrap();
        assert!(none.figures.is_empty());
    }

    #[test]
    fn a_history_from_a_later_lioscope_is_refused_untouched() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("history.sqlite");
        drop(History::open(&path).unwrap());
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.execute_batch("UPDATE history_schema SET version = 99;").unwrap();
        let err = History::open(&path).err().unwrap().to_string();
        assert!(err.contains("newer") && err.contains("history.sqlite"), "{err}");
        let version: i64 = conn.query_row("SELECT MAX(version) FROM history_schema", [], |r| r.get(0)).unwrap();
        assert_eq!(version, 99);
    }

    #[test]
    fn options_say_where_the_history_is() {
        assert_eq!(HistoryArgs::off().location(), None);
        assert_eq!(HistoryArgs::at("/x/h.sqlite").location(), Some(Location::File(PathBuf::from("/x/h.sqlite"))));
        assert!(default_path().to_string_lossy().ends_with(".sqlite"));
        let url = Location::parse("postgresql://lab:secret@db.example/history");
        assert_eq!(url, Location::Postgres("postgresql://lab:secret@db.example/history".into()));
        assert_eq!(url.describe(), "postgresql://lab@db.example/history", "no password in messages");
    }
}
