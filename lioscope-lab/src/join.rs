//! `lioscope lab join`: where the join methods cross, measured and by the optimizer's
//! costs. Does the optimizer switch from NESTED LOOPS to HASH JOIN where the CPU says it
//! should?
//!
//! Two tables, cached:
//!
//! | table        | rows                          | columns                                              |
//! |--------------|-------------------------------|------------------------------------------------------|
//! | `join_inner` | `--inner-rows` (1,000,000)    | `id`, `good_key` = `id` (insert order), `bad_key` (a permutation of 1..rows, random with respect to `id`), an 80-byte `pad` |
//! | `join_outer` | `--outer-rows` (as the inner) | `n` 1..rows, `k` = the inner key it matches (`n` again, wrapped at the inner's rows) |
//!
//! with an index on each inner key: `join_inner_good` (a good clustering factor: the
//! keys 1..N sit in N / rows-a-block consecutive blocks) and `join_inner_bad` (a bad one:
//! every key in another block). For each outer row count N over a log series from 1 to
//! the whole outer table, and each index, the query
//!
//! ```sql
//! SELECT /*+ LEADING(o i) FULL(o) <method> */ COUNT(i.pad)
//! FROM join_outer o JOIN join_inner i ON i.<key> = o.k WHERE o.n <= N
//! ```
//!
//! joins N outer rows to one inner row each, forced to each method: `USE_NL(i) INDEX(i
//! <index>)` (NESTED LOOPS, an index probe and a table access by rowid an outer row),
//! `USE_HASH(i) FULL(i)` (HASH JOIN built on the N outer rows, probed by every inner
//! row) and `USE_MERGE(i) FULL(i)` (MERGE JOIN over two SORT JOINs). The plan each hint
//! gives is checked to be the one asked for. Each point runs once to warm the caches,
//! then `--repeat` times: CPU and elapsed ms, `session logical reads`, `buffer is pinned
//! count`, the memory and temporary I/O statistics the engine counts (every name of
//! [`WORKAREA_STATISTICS`] it has), the performance counters' instructions where the
//! machine offers them, and with `--instructions callgrind` the instructions of one run
//! counted by callgrind in a child process (points of at most `--callgrind-max-outer`
//! outer rows). Beside each measurement: the forced plan's cost in EXPLAIN PLAN, and the
//! plan the optimizer picks unhinted at that N, each under three settings of the cost
//! model ([`CostSetting`]): the defaults (every read a disk read), Oracle's
//! `optimizer_index_caching = 90` with `optimizer_index_cost_adj = 25` (the classic
//! advice for cached OLTP systems), and `optimizer_cache_awareness = TRUE` (cached blocks
//! costed as logical reads' CPU).
//!
//! The report says, for each index and each pair of methods, between which N the
//! measured CPU lines cross and between which the cost lines of each setting cross (each
//! crossing interpolated on log N), where the optimizer's unhinted choice switches under
//! each setting, and tests the CPU samples of the two methods against each other
//! (Mann-Whitney U, two-sided) at the points around each measured crossing. Its chart of the crossing draws, for both
//! measures, each method's figure over the hash join's at the same N: a line crosses 1
//! where that method and the hash join cross.
//!
//! EXPLAIN PLAN prints costs as whole single-block reads (12 ms each, rounded up), as
//! Oracle does. Cached, every cost is CPU, a few units at the most: the cache-aware cost
//! lines are resolved only to where their rounded values change or tie (a tie counts as
//! a crossing), and below some 12 ms of CPU (small tables) every plan costs 1 and they
//! do not cross at all. The optimizer's unhinted choice compares unrounded costs: its
//! switch is where the model really crosses.

use super::sample::{self, Measurement};
use super::scan::InstructionSource;
use super::stats::{Alternative, Method, Spread, mann_whitney, spread};
use lioscope::stats::Stat;
use lioscope::stats::hwcounters::Counter;
use lioscope::{Database, DatabaseOptions, Error, Result, Session};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Options of the experiment.
#[derive(Debug, Clone, clap::Args)]
pub struct JoinOptions {
    /// Rows in the inner table, `join_inner`.
    #[arg(long, default_value_t = 1_000_000)]
    pub inner_rows: u64,
    /// Rows in the outer table, `join_outer` (default: as many as the inner table's); the
    /// series of outer rows joined ends with all of them.
    #[arg(long)]
    pub outer_rows: Option<u64>,
    /// Outer row counts a decade of the log series (1, 3, 10, 32, ... with 2).
    #[arg(long, default_value_t = 2)]
    pub points_per_decade: u32,
    /// Timed runs of each point (the median is reported, with min and max).
    #[arg(long, default_value_t = 5)]
    pub repeat: usize,
    /// A small run, in seconds: 4,000 inner and outer rows, one point a decade, 3 runs of
    /// each (overrides --inner-rows, --outer-rows, --points-per-decade and --repeat).
    #[arg(long)]
    pub quick: bool,
    /// Directory for the report: join.json (every sample and the environment), join.csv
    /// (the figures) and join.html (the tables and the charts).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// An existing database to run in (its join tables are used when it has them and
    /// they hold the rows asked for); default: a fresh one in a temporary directory.
    #[arg(long)]
    pub db: Option<PathBuf>,
    /// Where instruction counts come from: the performance counters (`perf`), or also
    /// valgrind's callgrind, each point of at most --callgrind-max-outer outer rows run
    /// once more in a child process with collection on only around the statement
    /// (`callgrind`).
    #[arg(long, value_enum, default_value_t = InstructionSource::Perf)]
    pub instructions: InstructionSource,
    /// The largest outer row count counted under callgrind (every method runs 20 to 50
    /// times slower there, and a hash or merge join reads the whole inner table).
    #[arg(long, default_value_t = 10_000)]
    pub callgrind_max_outer: u64,
    /// Internal: run only this point (`INDEX,METHOD,N`) once, in the existing `--db`,
    /// for callgrind.
    #[arg(long, hide = true)]
    pub callgrind_child: Option<String>,
    /// The lioscope executable the callgrind children run (default: this one).
    #[arg(long, hide = true)]
    pub lioscope_exe: Option<PathBuf>,
    #[command(flatten)]
    pub history: super::history::HistoryArgs,
}

/// What `--quick` runs.
const QUICK_ROWS: u64 = 4_000;
const QUICK_REPEAT: usize = 3;

/// The sizes a run uses, after `--quick`.
#[derive(Debug, Clone, Copy)]
struct Sizes {
    inner: u64,
    outer: u64,
    points_per_decade: u32,
    repeat: usize,
}

impl JoinOptions {
    fn sizes(&self) -> Result<Sizes> {
        let sizes = if self.quick {
            Sizes { inner: QUICK_ROWS, outer: QUICK_ROWS, points_per_decade: 1, repeat: QUICK_REPEAT }
        } else {
            Sizes {
                inner: self.inner_rows,
                outer: self.outer_rows.unwrap_or(self.inner_rows),
                points_per_decade: self.points_per_decade,
                repeat: self.repeat.max(1),
            }
        };
        let bad = |name: &str, message: &str| Error::InvalidParameter { name: name.into(), message: message.into() };
        if sizes.inner < 2 {
            return Err(bad("--inner-rows", "at least 2 rows"));
        }
        if sizes.outer == 0 {
            return Err(bad("--outer-rows", "at least 1 row"));
        }
        if sizes.points_per_decade == 0 || sizes.points_per_decade > 20 {
            return Err(bad("--points-per-decade", "from 1 to 20"));
        }
        Ok(sizes)
    }
}

/// The outer row counts measured: 10^(i / per_decade) rounded, from 1, each once, then
/// `outer` itself.
pub fn outer_series(outer: u64, per_decade: u32) -> Vec<u64> {
    let mut series: Vec<u64> = Vec::new();
    for i in 0.. {
        let n = 10f64.powf(f64::from(i) / f64::from(per_decade.max(1))).round() as u64;
        if n >= outer {
            break;
        }
        if series.last() != Some(&n) {
            series.push(n);
        }
    }
    series.push(outer);
    series
}

/// The inner table's two join indexes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum Clustering {
    /// `join_inner_good` on `good_key`, in insert order.
    #[serde(rename = "GOOD")]
    Good,
    /// `join_inner_bad` on `bad_key`, random with respect to the rows' order.
    #[serde(rename = "BAD")]
    Bad,
}

impl Clustering {
    const ALL: [Clustering; 2] = [Clustering::Good, Clustering::Bad];

    pub fn name(self) -> &'static str {
        match self {
            Clustering::Good => "GOOD",
            Clustering::Bad => "BAD",
        }
    }

    fn key(self) -> &'static str {
        match self {
            Clustering::Good => "good_key",
            Clustering::Bad => "bad_key",
        }
    }

    fn index(self) -> &'static str {
        match self {
            Clustering::Good => "JOIN_INNER_GOOD",
            Clustering::Bad => "JOIN_INNER_BAD",
        }
    }
}

/// A join method, as its plan line names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum JoinMethod {
    #[serde(rename = "NESTED LOOPS")]
    NestedLoops,
    #[serde(rename = "HASH JOIN")]
    Hash,
    #[serde(rename = "MERGE JOIN")]
    Merge,
}

impl JoinMethod {
    const ALL: [JoinMethod; 3] = [JoinMethod::NestedLoops, JoinMethod::Hash, JoinMethod::Merge];

    /// The plan line's operation.
    pub fn name(self) -> &'static str {
        match self {
            JoinMethod::NestedLoops => "NESTED LOOPS",
            JoinMethod::Hash => "HASH JOIN",
            JoinMethod::Merge => "MERGE JOIN",
        }
    }

    /// A name without blanks, for the command line and the history's groups.
    fn short(self) -> &'static str {
        match self {
            JoinMethod::NestedLoops => "NL",
            JoinMethod::Hash => "HASH",
            JoinMethod::Merge => "MERGE",
        }
    }

    /// The hints that force it for the inner table `i` joined through `clustering`'s
    /// index (a nested loop) or fully scanned (the others).
    fn hints(self, clustering: Clustering) -> String {
        match self {
            JoinMethod::NestedLoops => format!("USE_NL(i) INDEX(i {})", clustering.index()),
            JoinMethod::Hash => "USE_HASH(i) FULL(i)".to_owned(),
            JoinMethod::Merge => "USE_MERGE(i) FULL(i)".to_owned(),
        }
    }
}

/// The measured query at `outer_rows`, forced to `method` (or unhinted).
pub fn join_sql(clustering: Clustering, method: Option<JoinMethod>, outer_rows: u64) -> String {
    let hints = method.map_or(String::new(), |m| format!("/*+ LEADING(o i) FULL(o) {} */ ", m.hints(clustering)));
    format!(
        "SELECT {hints}COUNT(i.pad) FROM join_outer o JOIN join_inner i ON i.{} = o.k WHERE o.n <= {outer_rows}",
        clustering.key()
    )
}

/// The memory and temporary I/O statistics reported for each point when the engine
/// counts them (looked up by name in `v$statname`'s list: a name the engine does not
/// have is left out of the report).
pub const WORKAREA_STATISTICS: [&str; 9] = [
    "sorts (memory)",
    "sorts (disk)",
    "sorts (rows)",
    "workarea executions - optimal",
    "workarea executions - onepass",
    "workarea executions - multipass",
    "workarea memory allocated",
    "physical writes direct temporary tablespace",
    "physical reads direct temporary tablespace",
];

/// The statistics of [`WORKAREA_STATISTICS`] this engine counts.
fn workarea_statistics() -> Vec<Stat> {
    WORKAREA_STATISTICS.iter().filter_map(|name| Stat::from_name(name)).collect()
}

/// One timed run of a point.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Sample {
    /// The count the query returned: the joined rows.
    pub rows: u64,
    pub elapsed_ms: f64,
    pub cpu_ms: f64,
    pub logical_reads: u64,
    pub buffer_is_pinned: u64,
    /// The performance counters' instructions, scaled for multiplexing; `None` where the
    /// machine hides them.
    pub instructions: Option<u64>,
    /// Each counted statistic of [`WORKAREA_STATISTICS`], by name.
    pub workarea: BTreeMap<&'static str, u64>,
}

impl Sample {
    fn of(m: &Measurement, instructions: Option<u64>, workarea: &[Stat]) -> Sample {
        Sample {
            rows: m.rows(),
            elapsed_ms: m.elapsed_ms,
            cpu_ms: m.cpu_ms,
            logical_reads: m.delta(Stat::LogicalReads),
            buffer_is_pinned: m.delta(Stat::BufferIsPinned),
            instructions,
            workarea: workarea.iter().map(|&s| (s.name(), m.delta(s))).collect(),
        }
    }

    /// The figure `key` of this run at `outer_rows`, given the outer scan's logical reads;
    /// `None` where not available.
    fn figure(&self, key: &str, outer_rows: u64, outer_scan_reads: u64) -> Option<f64> {
        let n = outer_rows.max(1) as f64;
        match key {
            "rows" => Some(self.rows as f64),
            "cpu_ms" => Some(self.cpu_ms),
            "elapsed_ms" => Some(self.elapsed_ms),
            "cpu_us_per_outer_row" => Some(self.cpu_ms * 1000.0 / n),
            "logical_reads" => Some(self.logical_reads as f64),
            "logical_reads_per_outer_row" => Some(self.logical_reads as f64 / n),
            "join_logical_reads_per_outer_row" => Some((self.logical_reads as f64 - outer_scan_reads as f64) / n),
            "buffer_is_pinned_count" => Some(self.buffer_is_pinned as f64),
            "instructions" => self.instructions.map(|v| v as f64),
            "instructions_per_outer_row" => self.instructions.map(|v| v as f64 / n),
            other => self.workarea.get(other).map(|&v| v as f64),
        }
    }
}

/// The figures of every point, in report order, and how each is derived.
const FIGURES: [(&str, &str); 10] = [
    ("rows", "the count the query returned: the joined rows (N, an inner row each)"),
    ("cpu_ms", "the session thread's CPU clock (DB CPU) around the execution"),
    ("elapsed_ms", "wall clock around Session::execute"),
    ("cpu_us_per_outer_row", "cpu_ms × 1000 / N"),
    ("logical_reads", "delta of 'session logical reads'"),
    ("logical_reads_per_outer_row", "logical_reads / N"),
    (
        "join_logical_reads_per_outer_row",
        "(logical_reads - the outer table's full scan's logical reads) / N: what the join adds an outer row",
    ),
    ("buffer_is_pinned_count", "delta of 'buffer is pinned count'"),
    ("instructions", "perf instructions, scaled by enabled / running time (null where the machine hides them)"),
    ("instructions_per_outer_row", "instructions / N"),
];

/// The figures callgrind adds, and how each is derived.
const CALLGRIND_FIGURES: [(&str, &str); 2] = [
    (
        "instructions_callgrind",
        "valgrind callgrind Ir of one run in a child process, collection on only inside the statement's execution \
         (--collect-atstart=no --toggle-collect=*counted_execution*), after a warm run",
    ),
    ("instructions_per_outer_row_callgrind", "instructions_callgrind / N"),
];

/// How the optimizer's figures are derived.
const COST_DERIVATION: &str = "the Cost of line 0 (SELECT STATEMENT) of EXPLAIN PLAN FOR the forced query";

/// A setting of the optimizer's cost model the costs and choices are read under.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum CostSetting {
    /// The defaults: every read costed as a disk read.
    #[serde(rename = "default")]
    Default,
    /// `optimizer_index_caching = 90`, `optimizer_index_cost_adj = 25`.
    #[serde(rename = "index_caching_90_cost_adj_25")]
    IndexCaching,
    /// `optimizer_cache_awareness = TRUE`.
    #[serde(rename = "cache_aware")]
    CacheAware,
}

impl CostSetting {
    pub const ALL: [CostSetting; 3] = [CostSetting::Default, CostSetting::IndexCaching, CostSetting::CacheAware];

    pub fn name(self) -> &'static str {
        match self {
            CostSetting::Default => "default",
            CostSetting::IndexCaching => "index_caching_90_cost_adj_25",
            CostSetting::CacheAware => "cache_aware",
        }
    }

    /// The figure of a point holding the forced plan's cost under this setting.
    fn figure(self) -> &'static str {
        match self {
            CostSetting::Default => "optimizer_cost",
            CostSetting::IndexCaching => "optimizer_cost_index_caching",
            CostSetting::CacheAware => "optimizer_cost_cache_aware",
        }
    }

    /// How the figure is derived.
    fn derivation(self) -> &'static str {
        match self {
            CostSetting::Default => COST_DERIVATION,
            CostSetting::IndexCaching => {
                "the Cost of line 0 of EXPLAIN PLAN FOR the forced query, under optimizer_index_caching = 90 and \
                 optimizer_index_cost_adj = 25"
            }
            CostSetting::CacheAware => {
                "the Cost of line 0 of EXPLAIN PLAN FOR the forced query, under optimizer_cache_awareness = TRUE \
                 (every block cached)"
            }
        }
    }

    /// Puts `session` under this setting (each of the three parameters set).
    fn apply(self, session: &Session) -> Result<()> {
        let (caching, adj, aware) = match self {
            CostSetting::Default => (0, 100, "FALSE"),
            CostSetting::IndexCaching => (90, 25, "FALSE"),
            CostSetting::CacheAware => (0, 100, "TRUE"),
        };
        session.execute(&format!("ALTER SESSION SET optimizer_index_caching = {caching}"))?;
        session.execute(&format!("ALTER SESSION SET optimizer_index_cost_adj = {adj}"))?;
        session.execute(&format!("ALTER SESSION SET optimizer_cache_awareness = {aware}"))?;
        Ok(())
    }
}

/// One method at one outer row count through one index.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Point {
    pub clustering: Clustering,
    pub method: JoinMethod,
    pub outer_rows: u64,
    pub sql: String,
    /// The optimizer's estimated cost of the forced plan, under the default setting.
    pub cost: f64,
    /// The same under each setting, by [`CostSetting::name`].
    pub costs: BTreeMap<&'static str, f64>,
    pub figures: BTreeMap<&'static str, Option<Spread>>,
    pub samples: Vec<Sample>,
}

impl Point {
    fn median(&self, key: &str) -> Option<f64> {
        self.figures.get(key).copied().flatten().map(|f| f.median)
    }

    fn cpu_samples(&self) -> Vec<f64> {
        self.samples.iter().map(|s| s.cpu_ms).collect()
    }
}

/// The optimizer's own choice at one outer row count, under one setting.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Choice {
    pub setting: CostSetting,
    pub clustering: Clustering,
    pub outer_rows: u64,
    /// The join line of the unhinted plan.
    pub method: JoinMethod,
    pub cost: f64,
}

/// Where two lines cross: between two measured outer row counts, and where on log N a
/// straight line between them crosses.
#[derive(Debug, Clone, Copy, serde::Serialize)]
pub struct CrossAt {
    pub from: u64,
    pub to: u64,
    pub at: f64,
}

/// Where two methods cross through one index: measured (median CPU) and by cost.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Crossing {
    pub clustering: Clustering,
    pub first: JoinMethod,
    pub second: JoinMethod,
    /// Every crossing of the median CPU lines, in N order.
    pub measured: Vec<CrossAt>,
    /// Every crossing of the cost lines under the default setting.
    pub cost: Vec<CrossAt>,
    /// Every crossing of the cost lines under each setting, by [`CostSetting::name`].
    pub costs: BTreeMap<&'static str, Vec<CrossAt>>,
}

/// Where the optimizer's unhinted choice changes method under one setting.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Switch {
    pub setting: CostSetting,
    pub clustering: Clustering,
    pub from_rows: u64,
    pub to_rows: u64,
    pub from: JoinMethod,
    pub to: JoinMethod,
}

/// Two methods' CPU samples against each other at one point.
#[derive(Debug, Clone, serde::Serialize)]
pub struct PairTest {
    pub clustering: Clustering,
    pub first: JoinMethod,
    pub second: JoinMethod,
    pub outer_rows: u64,
    /// The first method's median `cpu_ms` over the second's.
    pub median_ratio: Option<f64>,
    /// Two-sided Mann-Whitney U of the first's `cpu_ms` samples against the second's.
    pub p_value: Option<f64>,
    pub method: Option<Method>,
}

/// The whole report, as join.json holds it.
#[derive(Debug, serde::Serialize)]
pub struct JoinReport {
    pub experiment: &'static str,
    pub instructions: InstructionSource,
    pub environment: super::environment::Environment,
    pub parameters: BTreeMap<&'static str, serde_json::Value>,
    pub derivations: BTreeMap<&'static str, &'static str>,
    /// The names of [`WORKAREA_STATISTICS`] the engine counts (each a figure).
    pub workarea_statistics: Vec<&'static str>,
    pub callgrind_calibration: Option<super::callgrind::Calibration>,
    pub points: Vec<Point>,
    pub choices: Vec<Choice>,
    pub crossings: Vec<Crossing>,
    pub switches: Vec<Switch>,
    pub tests: Vec<PairTest>,
}

impl JoinReport {
    fn point(&self, clustering: Clustering, method: JoinMethod, n: u64) -> Option<&Point> {
        self.points.iter().find(|p| p.clustering == clustering && p.method == method && p.outer_rows == n)
    }

    fn series(&self) -> Vec<u64> {
        let mut ns: Vec<u64> = self.points.iter().map(|p| p.outer_rows).collect();
        ns.sort_unstable();
        ns.dedup();
        ns
    }
}

/// Bytes of buffer cache for the tables: 300 an inner row (the row, its two index
/// entries, the load's undo) and 100 an outer row, at least 64 MiB.
fn cache_for(sizes: Sizes) -> u64 {
    (sizes.inner * 300 + sizes.outer * 100).max(64 << 20)
}

fn database_options(sizes: Sizes) -> DatabaseOptions {
    DatabaseOptions {
        parameters: vec![("db_cache_size".to_owned(), cache_for(sizes).to_string())],
        ..Default::default()
    }
}

/// A prime that does not divide `rows`: `bad_key` = (`id` × it mod rows) + 1 is then a
/// permutation of 1..=rows.
fn permutation_factor(rows: u64) -> u64 {
    [999_983, 1_000_003, 1_000_033]
        .into_iter()
        .find(|p| !rows.is_multiple_of(*p))
        .expect("a row count divisible by all three primes is at least their product, about 10^18")
}

/// Creates and loads both tables with their indexes, unless the database has them with
/// the rows asked for (then they are used as they are).
fn prepare(session: &Session, sizes: Sizes) -> Result<()> {
    let count = |table: &str| -> Result<Option<u64>> {
        let exists = sample::whole(session, &format!("SELECT COUNT(*) FROM user_tables WHERE table_name = '{table}'"))?;
        if exists == 0 {
            return Ok(None);
        }
        sample::whole(session, &format!("SELECT /*+ FULL(t) */ COUNT(*) FROM {table} t")).map(Some)
    };
    let (inner, outer) = (count("JOIN_INNER")?, count("JOIN_OUTER")?);
    if inner == Some(sizes.inner) && outer == Some(sizes.outer) {
        return Ok(());
    }
    for (table, rows) in [("join_inner", inner), ("join_outer", outer)] {
        if rows.is_some() {
            session.execute(&format!("DROP TABLE {table}"))?;
        }
    }
    let (r, p) = (sizes.inner, permutation_factor(sizes.inner));
    let statements = [
        "CREATE TABLE join_inner (id INTEGER NOT NULL, good_key INTEGER NOT NULL, bad_key INTEGER NOT NULL, \
         pad VARCHAR2(100) NOT NULL)"
            .to_owned(),
        format!(
            "INSERT INTO join_inner SELECT LEVEL, LEVEL, MOD(LEVEL * {p}, {r}) + 1, RPAD('inner row ' || LEVEL, 80, '.') \
             FROM dual CONNECT BY LEVEL <= {r}"
        ),
        "CREATE INDEX join_inner_good ON join_inner (good_key)".to_owned(),
        "CREATE INDEX join_inner_bad ON join_inner (bad_key)".to_owned(),
        "CREATE TABLE join_outer (n INTEGER NOT NULL, k INTEGER NOT NULL)".to_owned(),
        format!(
            "INSERT INTO join_outer SELECT LEVEL, MOD(LEVEL - 1, {r}) + 1 FROM dual CONNECT BY LEVEL <= {}",
            sizes.outer
        ),
        "ANALYZE TABLE join_inner COMPUTE STATISTICS".to_owned(),
        "ANALYZE TABLE join_outer COMPUTE STATISTICS".to_owned(),
    ];
    for sql in &statements {
        session.execute(sql)?;
        if !session.autocommit() {
            session.execute("COMMIT")?;
        }
    }
    Ok(())
}

/// What EXPLAIN PLAN says of a query: the cost of its line 0 and the join method of its
/// top join line, with the whole text.
#[derive(Debug, Clone)]
struct Explained {
    cost: f64,
    method: Option<JoinMethod>,
    text: String,
}

/// A plan's figure as EXPLAIN PLAN prints it: digits with an optional K, M or G.
fn plan_number(cell: &str) -> Option<f64> {
    let cell = cell.trim();
    let (digits, scale) = match cell.chars().last()? {
        'K' => (&cell[..cell.len() - 1], 1e3),
        'M' => (&cell[..cell.len() - 1], 1e6),
        'G' => (&cell[..cell.len() - 1], 1e9),
        _ => (cell, 1.0),
    };
    digits.parse::<f64>().ok().map(|v| v * scale)
}

/// The cost of line 0 and the top join method of a plan's text.
fn read_plan(text: &str) -> Option<(f64, Option<JoinMethod>)> {
    let header = text.lines().find(|l| l.contains("Operation") && l.contains("Cost"))?;
    let at = header.split('|').map(str::trim).position(|c| c == "Cost")?;
    let line0 = text.lines().find(|l| {
        let cells: Vec<&str> = l.split('|').map(str::trim).collect();
        cells.get(1).is_some_and(|id| id.trim_start_matches('*').trim() == "0")
    })?;
    let cost = plan_number(line0.split('|').nth(at)?)?;
    let method = text
        .lines()
        .filter(|l| l.contains('|'))
        .find_map(|l| JoinMethod::ALL.into_iter().find(|m| l.contains(m.name())));
    Some((cost, method))
}

fn explain(session: &Session, sql: &str) -> Result<Explained> {
    let result = session.execute(&format!("EXPLAIN PLAN FOR {sql}"))?;
    let text = result.rows.iter().map(|r| r[0].to_string()).collect::<Vec<_>>().join("\n");
    let (cost, method) = read_plan(&text).ok_or_else(|| Error::InvalidValue {
        context: format!("lab join: EXPLAIN PLAN FOR {sql}"),
        message: format!("no cost on line 0 of the plan:\n{text}"),
    })?;
    Ok(Explained { cost, method, text })
}

/// The forced plan of a point, checked to be the method (and for a nested loop, the
/// index) its hints ask for.
fn forced_plan(session: &Session, clustering: Clustering, method: JoinMethod, sql: &str) -> Result<Explained> {
    let plan = explain(session, sql)?;
    let index_ok = method != JoinMethod::NestedLoops || plan.text.contains(clustering.index());
    if plan.method != Some(method) || !index_ok {
        return Err(Error::InvalidValue {
            context: format!("lab join: the hints of {sql}"),
            message: format!("the plan is not {} through {}:\n{}", method.name(), clustering.index(), plan.text),
        });
    }
    Ok(plan)
}

/// The instructions the performance counters counted around `run`, `None` where the
/// machine hides them.
fn counted<T>(session: &Session, run: impl FnOnce() -> Result<T>) -> Result<(T, Option<u64>)> {
    let before = session.hardware_counters().unwrap_or_default();
    let value = run()?;
    let reading = session.hardware_counters().unwrap_or_default().since(&before);
    Ok((value, reading.values().get(Counter::Instructions.name()).copied()))
}

/// Measures one point: a warm run, then `repeat` timed ones, each checked to join N rows.
fn measure_point(
    session: &Session,
    clustering: Clustering,
    method: JoinMethod,
    n: u64,
    sizes: Sizes,
    outer_scan_reads: u64,
    workarea: &[Stat],
) -> Result<Point> {
    let sql = join_sql(clustering, Some(method), n);
    let plan = forced_plan(session, clustering, method, &sql)?;
    sample::measure(session, &sql)?;
    let mut samples = Vec::new();
    for _ in 0..sizes.repeat {
        let (m, instructions) = counted(session, || sample::measure(session, &sql))?;
        if m.rows() != n {
            return Err(Error::InvalidValue {
                context: format!("lab join: {sql}"),
                message: format!("joined {} rows, not {n}", m.rows()),
            });
        }
        samples.push(Sample::of(&m, instructions, workarea));
    }
    let mut figures: BTreeMap<&'static str, Option<Spread>> = BTreeMap::new();
    let keys = FIGURES.iter().map(|(k, _)| *k).chain(workarea.iter().map(|s| s.name()));
    for key in keys {
        let values: Option<Vec<f64>> = samples.iter().map(|s| s.figure(key, n, outer_scan_reads)).collect();
        figures.insert(key, values.map(spread));
    }
    let costs = setting_costs(session, clustering, method, &sql)?;
    for setting in CostSetting::ALL {
        let cost = costs[setting.name()];
        figures.insert(setting.figure(), Some(Spread { median: cost, min: cost, max: cost }));
    }
    Ok(Point { clustering, method, outer_rows: n, sql, cost: plan.cost, costs, figures, samples })
}

/// The cost of a point's forced plan under each setting (the session left under the
/// default one).
fn setting_costs(
    session: &Session,
    clustering: Clustering,
    method: JoinMethod,
    sql: &str,
) -> Result<BTreeMap<&'static str, f64>> {
    let mut costs = BTreeMap::new();
    for setting in CostSetting::ALL {
        setting.apply(session)?;
        costs.insert(setting.name(), forced_plan(session, clustering, method, sql)?.cost);
    }
    CostSetting::Default.apply(session)?;
    Ok(costs)
}

/// Every crossing of two lines given at the same xs: between consecutive xs where their
/// difference changes sign (or reaches zero from a nonzero one), the N where a straight
/// line on log N between the two differences is zero.
pub fn crossings(ns: &[u64], a: &[f64], b: &[f64]) -> Vec<CrossAt> {
    let d: Vec<f64> = a.iter().zip(b).map(|(a, b)| a - b).collect();
    let mut out = Vec::new();
    for i in 1..d.len().min(ns.len()) {
        let (d0, d1) = (d[i - 1], d[i]);
        if d0 == 0.0 || d0.signum() == d1.signum() && d1 != 0.0 {
            continue;
        }
        let (x0, x1) = ((ns[i - 1].max(1) as f64).log10(), (ns[i].max(1) as f64).log10());
        let x = x0 + (x1 - x0) * d0 / (d0 - d1);
        out.push(CrossAt { from: ns[i - 1], to: ns[i], at: 10f64.powf(x) });
    }
    out
}

/// The crossings of every pair of methods through each index.
fn all_crossings(points: &[Point], ns: &[u64]) -> Vec<Crossing> {
    let line = |c: Clustering, m: JoinMethod, f: &dyn Fn(&Point) -> Option<f64>| -> Option<Vec<f64>> {
        ns.iter()
            .map(|&n| points.iter().find(|p| p.clustering == c && p.method == m && p.outer_rows == n).and_then(f))
            .collect()
    };
    let mut out = Vec::new();
    for c in Clustering::ALL {
        for (first, second) in PAIRS {
            let cpu = |p: &Point| p.median("cpu_ms");
            let cost = |p: &Point| Some(p.cost);
            let cross = |f: &dyn Fn(&Point) -> Option<f64>| match (line(c, first, f), line(c, second, f)) {
                (Some(a), Some(b)) => crossings(ns, &a, &b),
                _ => Vec::new(),
            };
            let costs = CostSetting::ALL
                .into_iter()
                .map(|s| (s.name(), cross(&|p: &Point| p.costs.get(s.name()).copied())))
                .collect();
            out.push(Crossing { clustering: c, first, second, measured: cross(&cpu), cost: cross(&cost), costs });
        }
    }
    out
}

/// The pairs of methods compared.
const PAIRS: [(JoinMethod, JoinMethod); 3] = [
    (JoinMethod::NestedLoops, JoinMethod::Hash),
    (JoinMethod::NestedLoops, JoinMethod::Merge),
    (JoinMethod::Hash, JoinMethod::Merge),
];

/// Where the optimizer's unhinted choice changes method, through each index, under each
/// setting.
fn switches(choices: &[Choice]) -> Vec<Switch> {
    let mut out = Vec::new();
    for (setting, c) in CostSetting::ALL.into_iter().flat_map(|s| Clustering::ALL.map(|c| (s, c))) {
        let these: Vec<&Choice> = choices.iter().filter(|x| x.clustering == c && x.setting == setting).collect();
        for w in these.windows(2) {
            if w[0].method != w[1].method {
                out.push(Switch {
                    setting,
                    clustering: c,
                    from_rows: w[0].outer_rows,
                    to_rows: w[1].outer_rows,
                    from: w[0].method,
                    to: w[1].method,
                });
            }
        }
    }
    out
}

/// The outer row counts at which two methods are tested: the two around each measured
/// crossing and one more on each side; without a crossing, the point where their median
/// CPU times are closest in ratio.
fn tested_ns(ns: &[u64], crossing: &Crossing, ratio_at: impl Fn(u64) -> Option<f64>) -> Vec<u64> {
    let mut at: Vec<u64> = Vec::new();
    for x in &crossing.measured {
        let i = ns.iter().position(|&n| n == x.from).unwrap_or(0);
        at.extend(ns[i.saturating_sub(1)..(i + 3).min(ns.len())].iter().copied());
    }
    if at.is_empty() {
        let closest = ns
            .iter()
            .filter_map(|&n| Some((n, ratio_at(n)?.ln().abs())))
            .min_by(|a, b| a.1.total_cmp(&b.1))
            .map(|(n, _)| n);
        at.extend(closest);
    }
    at.sort_unstable();
    at.dedup();
    at
}

/// The Mann-Whitney tests of each pair's CPU samples around its crossings.
fn pair_tests(points: &[Point], ns: &[u64], crossings: &[Crossing]) -> Vec<PairTest> {
    let find = |c: Clustering, m: JoinMethod, n: u64| {
        points.iter().find(|p| p.clustering == c && p.method == m && p.outer_rows == n)
    };
    let mut out = Vec::new();
    for x in crossings {
        let ratio_at = |n: u64| {
            let (a, b) = (find(x.clustering, x.first, n)?, find(x.clustering, x.second, n)?);
            let (a, b) = (a.median("cpu_ms")?, b.median("cpu_ms")?);
            (a > 0.0 && b > 0.0).then(|| a / b)
        };
        for n in tested_ns(ns, x, ratio_at) {
            let (Some(a), Some(b)) = (find(x.clustering, x.first, n), find(x.clustering, x.second, n)) else {
                continue;
            };
            let (sa, sb) = (a.cpu_samples(), b.cpu_samples());
            let test = (sa.len() > 1 && sb.len() > 1).then(|| mann_whitney(&sa, &sb, Alternative::TwoSided)).flatten();
            out.push(PairTest {
                clustering: x.clustering,
                first: x.first,
                second: x.second,
                outer_rows: n,
                median_ratio: ratio_at(n),
                p_value: test.map(|t| t.p_value),
                method: test.map(|t| t.method),
            });
        }
    }
    out
}

/// Runs the experiment, prints its tables and writes the report files.
pub fn run(opts: &JoinOptions) -> Result<JoinReport> {
    let sizes = opts.sizes()?;
    let (dir, _tmp) = sample::work_dir(opts.db.as_deref(), "lab-join")?;
    let db = Database::open_or_create(&dir, database_options(sizes))?;
    let session = db.session();
    let ns = outer_series(sizes.outer, sizes.points_per_decade);
    let measured = Clustering::ALL.len() * JoinMethod::ALL.len() * ns.len();
    let callgrind = opts.instructions == InstructionSource::Callgrind;
    let callgrind_points = if callgrind {
        Clustering::ALL.len() * JoinMethod::ALL.len() * ns.iter().filter(|&&n| n <= opts.callgrind_max_outer).count()
    } else {
        0
    };
    let progress = super::progress::Steps::new((measured + 2 + callgrind_points) as u64, "lab join");
    progress.step("loading join_inner and join_outer");
    prepare(&session, sizes)?;
    let workarea = workarea_statistics();
    progress.step("warming the caches");
    // Every block of both tables and both indexes in the cache, and the outer scan's own
    // logical reads (the same for every N: a full scan with a filter).
    session.execute("SELECT /*+ FULL(i) */ COUNT(i.pad) FROM join_inner i")?;
    for c in Clustering::ALL {
        session.execute(&format!(
            "SELECT /*+ INDEX(i {}) */ COUNT(i.pad) FROM join_inner i WHERE i.{} > 0",
            c.index(),
            c.key()
        ))?;
    }
    let outer_scan = "SELECT /*+ FULL(o) */ COUNT(*) FROM join_outer o WHERE o.n <= 1";
    sample::measure(&session, outer_scan)?;
    let outer_scan_reads = sample::measure(&session, outer_scan)?.delta(Stat::LogicalReads);
    session.set_hardware_counters(true);
    let mut points = Vec::new();
    let mut choices = Vec::new();
    for c in Clustering::ALL {
        for &n in &ns {
            for setting in CostSetting::ALL {
                setting.apply(&session)?;
                let chosen = explain(&session, &join_sql(c, None, n))?;
                let method = chosen.method.ok_or_else(|| Error::InvalidValue {
                    context: format!("lab join: EXPLAIN PLAN FOR {} ({})", join_sql(c, None, n), setting.name()),
                    message: format!("no join line in the plan:\n{}", chosen.text),
                })?;
                choices.push(Choice { setting, clustering: c, outer_rows: n, method, cost: chosen.cost });
            }
            CostSetting::Default.apply(&session)?;
            for m in JoinMethod::ALL {
                progress.step(&format!("{} {} N={n}", c.name(), m.name()));
                points.push(measure_point(&session, c, m, n, sizes, outer_scan_reads, &workarea)?);
            }
        }
    }
    session.set_hardware_counters(false);
    let parameters = parameters(&session, sizes, &ns, outer_scan_reads, opts)?;
    drop(session);
    db.close()?;
    // Dropping the database lets go of its directory for the callgrind children.
    drop(db);
    let calibration =
        if callgrind { Some(count_by_callgrind(opts, sizes, &dir, &mut points, &progress)?) } else { None };
    progress.finish();
    let mut derivations: BTreeMap<&str, &str> = FIGURES.into_iter().collect();
    for setting in CostSetting::ALL {
        derivations.insert(setting.figure(), setting.derivation());
    }
    for s in &workarea {
        derivations.insert(s.name(), "delta of the session statistic of this name");
    }
    if callgrind {
        derivations.extend(CALLGRIND_FIGURES);
    }
    let crossings = all_crossings(&points, &ns);
    let report = JoinReport {
        experiment: "join",
        instructions: opts.instructions,
        environment: super::environment::Environment::read(),
        parameters,
        derivations,
        workarea_statistics: workarea.iter().map(|s| s.name()).collect(),
        callgrind_calibration: calibration,
        tests: pair_tests(&points, &ns, &crossings),
        switches: switches(&choices),
        crossings,
        choices,
        points,
    };
    print_tables(&report);
    let headline = headline(&report);
    let figures = history_figures(&report);
    let stored = super::history::store_report(
        &opts.history,
        "join",
        &report.environment,
        &report,
        figures,
        headline.as_ref().map(|(g, f)| (g.as_str(), *f)),
    )?;
    if let Some(out) = &opts.out {
        write_files(&report, out, stored.as_ref())?;
    }
    Ok(report)
}

/// The report's parameters: the sizes, the tables' and indexes' statistics.
fn parameters(
    session: &Session,
    sizes: Sizes,
    ns: &[u64],
    outer_scan_reads: u64,
    opts: &JoinOptions,
) -> Result<BTreeMap<&'static str, serde_json::Value>> {
    let mut p = BTreeMap::new();
    let blocks = |t: &str| {
        sample::whole(session, &format!("SELECT blocks_below_hwm FROM user_segments WHERE segment_name = '{t}'"))
    };
    let index = |i: &str, col: &str| {
        sample::whole(session, &format!("SELECT {col} FROM user_indexes WHERE index_name = '{i}'"))
    };
    p.insert("inner_rows", serde_json::json!(sizes.inner));
    p.insert("outer_rows", serde_json::json!(sizes.outer));
    p.insert("outer_rows_series", serde_json::json!(ns));
    p.insert("repeat", serde_json::json!(sizes.repeat));
    p.insert("quick", serde_json::json!(opts.quick));
    p.insert("db_cache_size", serde_json::json!(cache_for(sizes)));
    p.insert("blocks_join_inner", serde_json::json!(blocks("JOIN_INNER")?));
    p.insert("blocks_join_outer", serde_json::json!(blocks("JOIN_OUTER")?));
    p.insert("outer_scan_logical_reads", serde_json::json!(outer_scan_reads));
    p.insert("blevel_good", serde_json::json!(index("JOIN_INNER_GOOD", "blevel")?));
    p.insert("blevel_bad", serde_json::json!(index("JOIN_INNER_BAD", "blevel")?));
    p.insert("clustering_factor_good", serde_json::json!(index("JOIN_INNER_GOOD", "clustering_factor")?));
    p.insert("clustering_factor_bad", serde_json::json!(index("JOIN_INNER_BAD", "clustering_factor")?));
    if opts.instructions == InstructionSource::Callgrind {
        p.insert("callgrind_max_outer", serde_json::json!(opts.callgrind_max_outer));
    }
    Ok(p)
}

/// The headline the results history follows: the hash join's CPU time through the good
/// index at the whole outer table.
fn headline(report: &JoinReport) -> Option<(String, &'static str)> {
    let n = report.series().last().copied()?;
    Some((group(Clustering::Good, JoinMethod::Hash, n), "cpu_ms"))
}

fn group(c: Clustering, m: JoinMethod, n: u64) -> String {
    format!("index={},method={},outer_rows={n}", c.name(), m.short())
}

/// Every figure of every point as the results history stores them: a group a point,
/// each figure's samples (callgrind's and the cost, counted once, as one sample).
fn history_figures(report: &JoinReport) -> Vec<super::history::FigureSamples> {
    let outer_scan = report.parameters["outer_scan_logical_reads"].as_u64().unwrap_or(0);
    let mut out = Vec::new();
    for p in &report.points {
        let g = group(p.clustering, p.method, p.outer_rows);
        let keys = FIGURES.iter().map(|(k, _)| *k).chain(report.workarea_statistics.iter().copied());
        for key in keys {
            let samples: Vec<f64> = p.samples.iter().filter_map(|s| s.figure(key, p.outer_rows, outer_scan)).collect();
            if !samples.is_empty() {
                out.push(super::history::FigureSamples::new(g.clone(), key, samples));
            }
        }
        let costs = CostSetting::ALL.map(CostSetting::figure);
        for key in costs.into_iter().chain(CALLGRIND_FIGURES.iter().map(|(k, _)| *k)) {
            if let Some(f) = p.figures.get(key).copied().flatten() {
                out.push(super::history::FigureSamples::new(g.clone(), key, vec![f.median]));
            }
        }
    }
    out
}

/// The `--callgrind-child` name of the calibration loop.
const CALIBRATION: &str = "CALIBRATION";

/// Counts the instructions of every point of at most `--callgrind-max-outer` outer rows
/// in a child process under callgrind, after calibrating the method.
fn count_by_callgrind(
    opts: &JoinOptions,
    sizes: Sizes,
    dir: &Path,
    points: &mut [Point],
    progress: &super::progress::Steps,
) -> Result<super::callgrind::Calibration> {
    let exe = lioscope_exe(opts)?;
    let profile = dir.join("callgrind.calibration.out");
    let args = ["lab", "join", "--callgrind-child", CALIBRATION].map(str::to_owned);
    let calibration = super::callgrind::calibrate(&exe, &args, &profile)?;
    let _ = std::fs::remove_file(&profile);
    for p in points.iter_mut() {
        let figure = |v: f64| Some(Spread { median: v, min: v, max: v });
        if p.outer_rows > opts.callgrind_max_outer {
            CALLGRIND_FIGURES.iter().for_each(|(k, _)| {
                p.figures.insert(k, None);
            });
            continue;
        }
        progress.step(&format!("{} {} N={} under callgrind", p.clustering.name(), p.method.name(), p.outer_rows));
        let name = format!("{},{},{}", p.clustering.name(), p.method.short(), p.outer_rows);
        let profile = dir.join(format!("callgrind.{}.out", name.replace(',', "-")));
        let args: Vec<String> =
            ["lab", "join", "--inner-rows", &sizes.inner.to_string(), "--outer-rows", &sizes.outer.to_string(), "--db"]
                .into_iter()
                .map(str::to_owned)
                .chain([dir.display().to_string(), "--callgrind-child".into(), name])
                .collect();
        let counted = super::callgrind::count_instructions(&exe, &args, &profile);
        let _ = std::fs::remove_file(&profile);
        let instructions = counted? as f64;
        p.figures.insert("instructions_callgrind", figure(instructions));
        p.figures.insert("instructions_per_outer_row_callgrind", figure(instructions / p.outer_rows.max(1) as f64));
    }
    Ok(calibration)
}

/// The `lioscope` the callgrind children run: `--lioscope-exe`, else this one.
fn lioscope_exe(opts: &JoinOptions) -> Result<PathBuf> {
    match &opts.lioscope_exe {
        Some(exe) => Ok(exe.clone()),
        None => std::env::current_exe().map_err(|e| Error::io("find", Path::new("lioscope"), e)),
    }
}

/// A `--callgrind-child` point: `INDEX,METHOD,N` (`GOOD,HASH,1000`).
fn parse_child(text: &str) -> Result<(Clustering, JoinMethod, u64)> {
    let bad = |why: &str| Error::InvalidParameter {
        name: "--callgrind-child".into(),
        message: format!("{text:?}: {why} (INDEX,METHOD,N as in GOOD,HASH,1000)"),
    };
    let parts: Vec<&str> = text.split(',').collect();
    let [c, m, n] = parts[..] else { return Err(bad("three parts")) };
    let c = Clustering::ALL.into_iter().find(|x| x.name() == c).ok_or_else(|| bad("no such index: GOOD or BAD"))?;
    let m =
        JoinMethod::ALL.into_iter().find(|x| x.short() == m).ok_or_else(|| bad("no such method: NL, HASH or MERGE"))?;
    let n = n.parse().map_err(|_| bad("N is not a whole number"))?;
    Ok((c, m, n))
}

/// In the child callgrind runs (`--callgrind-child INDEX,METHOD,N`): the point once to
/// warm the caches, then once inside [`super::callgrind::counted_execution`], where
/// collection is on.
pub fn run_callgrind_child(opts: &JoinOptions, name: &str) -> Result<()> {
    if name == CALIBRATION {
        super::callgrind::counted_execution_of_a_known_loop(super::callgrind::CALIBRATION_ITERATIONS);
        return Ok(());
    }
    let (c, m, n) = parse_child(name)?;
    let Some(dir) = &opts.db else {
        return Err(Error::InvalidParameter {
            name: "--callgrind-child".into(),
            message: "needs --db, the database the parent loaded".into(),
        });
    };
    let sizes = opts.sizes()?;
    let db = Database::open(dir, database_options(sizes))?;
    let session = db.session();
    let sql = join_sql(c, Some(m), n);
    forced_plan(&session, c, m, &sql)?;
    sample::measure(&session, &sql)?;
    super::callgrind::counted_execution(&session, &sql)?;
    drop(session);
    db.close()
}

/// A crossing as text: `N ≈ 52 (between 32 and 100)`, or `none` when the lines do not
/// cross within the series.
fn crossing_cell(at: &[CrossAt]) -> String {
    if at.is_empty() {
        return "none in 1..N".to_owned();
    }
    at.iter()
        .map(|x| format!("N ≈ {} (between {} and {})", super::report::short_value(x.at), x.from, x.to))
        .collect::<Vec<_>>()
        .join("; ")
}

/// The figures of the points' table.
fn table_keys(report: &JoinReport) -> Vec<&'static str> {
    let mut keys = vec![
        "optimizer_cost",
        "optimizer_cost_index_caching",
        "optimizer_cost_cache_aware",
        "cpu_ms",
        "cpu_us_per_outer_row",
        "logical_reads",
        "join_logical_reads_per_outer_row",
        "buffer_is_pinned_count",
        "instructions_per_outer_row",
    ];
    if report.instructions == InstructionSource::Callgrind {
        keys.push("instructions_per_outer_row_callgrind");
    }
    keys.extend(report.workarea_statistics.iter().copied());
    keys
}

fn point_rows(report: &JoinReport, keys: &[&str]) -> Vec<Vec<String>> {
    report
        .points
        .iter()
        .map(|p| {
            let mut row = vec![p.clustering.name().to_owned(), p.method.name().to_owned(), p.outer_rows.to_string()];
            row.extend(keys.iter().map(|k| super::report::cell(p.figures.get(k).copied().flatten())));
            row
        })
        .collect()
}

const CROSSING_HEADER: [&str; 6] = [
    "index",
    "methods",
    "measured CPU lines cross at",
    "cost lines cross at (default)",
    "cost lines cross at (index caching 90, cost adj 25)",
    "cost lines cross at (cache aware)",
];

fn crossing_rows(report: &JoinReport) -> Vec<Vec<String>> {
    report
        .crossings
        .iter()
        .map(|x| {
            let mut row = vec![
                x.clustering.name().to_owned(),
                format!("{} / {}", x.first.name(), x.second.name()),
                crossing_cell(&x.measured),
            ];
            row.extend(CostSetting::ALL.iter().map(|s| crossing_cell(x.costs.get(s.name()).map_or(&[], |v| v))));
            row
        })
        .collect()
}

const CHOICE_HEADER: [&str; 5] = ["setting", "index", "N", "the optimizer's choice (unhinted)", "its cost"];

fn choice_rows(report: &JoinReport) -> Vec<Vec<String>> {
    report
        .choices
        .iter()
        .map(|c| {
            vec![
                c.setting.name().into(),
                c.clustering.name().into(),
                c.outer_rows.to_string(),
                c.method.name().into(),
                super::report::round(c.cost),
            ]
        })
        .collect()
}

/// One sentence a switch of the optimizer's choice, or that it never switches, for each
/// setting and index.
fn switch_lines(report: &JoinReport) -> Vec<String> {
    CostSetting::ALL
        .into_iter()
        .flat_map(|s| Clustering::ALL.map(|c| (s, c)))
        .map(|(setting, c)| {
            let these: Vec<String> = report
                .switches
                .iter()
                .filter(|s| s.clustering == c && s.setting == setting)
                .map(|s| {
                    format!("from {} to {} between N = {} and {}", s.from.name(), s.to.name(), s.from_rows, s.to_rows)
                })
                .collect();
            if these.is_empty() {
                let only = report
                    .choices
                    .iter()
                    .find(|x| x.clustering == c && x.setting == setting)
                    .map_or("-", |x| x.method.name());
                format!("{} ({}): the optimizer chooses {only} at every N", c.name(), setting.name())
            } else {
                format!("{} ({}): the optimizer switches {}", c.name(), setting.name(), these.join("; "))
            }
        })
        .collect()
}

const TESTS_HEADER: [&str; 5] =
    ["index", "methods", "N", "cpu_ms first / second", "p (Mann-Whitney U, two-sided, of the cpu_ms samples)"];

fn test_rows(report: &JoinReport) -> Vec<Vec<String>> {
    report
        .tests
        .iter()
        .map(|t| {
            vec![
                t.clustering.name().into(),
                format!("{} / {}", t.first.name(), t.second.name()),
                t.outer_rows.to_string(),
                super::report::ratio_cell(t.median_ratio),
                super::levels::p_cell(t.p_value, t.method),
            ]
        })
        .collect()
}

fn points_header(keys: &[&'static str]) -> Vec<&'static str> {
    ["index", "method", "N"].into_iter().chain(keys.iter().copied()).collect()
}

/// The terminal tables: the points, the crossings, the optimizer's choices and the tests.
fn print_tables(report: &JoinReport) {
    let keys = table_keys(report);
    super::report::print_table(&points_header(&keys), point_rows(report, &keys));
    super::report::print_table(&CHOICE_HEADER, choice_rows(report));
    super::report::print_table(&CROSSING_HEADER, crossing_rows(report));
    for line in switch_lines(report) {
        println!("{line}");
    }
    super::report::print_table(&TESTS_HEADER, test_rows(report));
    if let Some(c) = &report.callgrind_calibration {
        println!("{}", super::scan::calibration_line(c));
    }
    super::report::print_derivations(&report.parameters["repeat"], &report.derivations);
}

/// join.json (everything), join.csv (one line per point and figure) and join.html.
fn write_files(report: &JoinReport, out: &Path, stored: Option<&super::history::Stored>) -> Result<()> {
    std::fs::create_dir_all(out).map_err(|e| Error::io("create", out, e))?;
    crate::report::write_json(&out.join("join.json"), report)?;
    let mut rows = Vec::new();
    for p in &report.points {
        for (key, how) in &report.derivations {
            let [median, min, max] = super::report::figure_cells(p.figures.get(key).copied().flatten());
            rows.push(vec![
                p.clustering.name().into(),
                p.method.name().into(),
                p.outer_rows.to_string(),
                key.to_string(),
                median,
                min,
                max,
                how.to_string(),
            ]);
        }
    }
    let header = ["index", "method", "outer_rows", "figure", "median", "min", "max", "derivation"];
    super::report::write_csv(&out.join("join.csv"), &header, &rows)?;
    super::report::write_html(&out.join("join.html"), &html(report, stored)?)
}

/// The series of one method through one index: x = log10 N, y = `value` of the point.
fn method_series(
    report: &JoinReport,
    c: Clustering,
    m: JoinMethod,
    label: &str,
    value: impl Fn(&Point) -> Option<(f64, Option<(f64, f64)>)>,
) -> super::report::Series {
    let points = report
        .points
        .iter()
        .filter(|p| p.clustering == c && p.method == m)
        .filter_map(|p| value(p).map(|(y, r)| ((p.outer_rows.max(1) as f64).log10(), y, r)))
        .collect();
    super::report::Series::new(label, points)
}

/// A figure's median with its min..max when the runs differ.
fn spread_of(p: &Point, key: &str) -> Option<(f64, Option<(f64, f64)>)> {
    let f = p.figures.get(key).copied().flatten()?;
    Some((f.median, (f.min != f.max).then_some((f.min, f.max))))
}

/// The chart of the crossings through one index: each method's median CPU time and its
/// cost over the hash join's at the same N, on one chart.
fn crossing_chart(report: &JoinReport, c: Clustering) -> super::report::Chart {
    let ratio = |f: fn(&Point) -> Option<f64>| {
        move |p: &Point| {
            let hash = report.point(c, JoinMethod::Hash, p.outer_rows)?;
            let (a, b) = (f(p)?, f(hash)?);
            (a > 0.0 && b > 0.0).then_some((a / b, None))
        }
    };
    let cpu: fn(&Point) -> Option<f64> = |p| p.median("cpu_ms");
    let cost: fn(&Point) -> Option<f64> = |p| Some(p.cost);
    let cache_aware: fn(&Point) -> Option<f64> = |p| p.costs.get(CostSetting::CacheAware.name()).copied();
    let mut series = Vec::new();
    for m in [JoinMethod::NestedLoops, JoinMethod::Merge] {
        series.push(method_series(report, c, m, &format!("{} / HASH JOIN, measured CPU", m.name()), ratio(cpu)));
        series.push(method_series(report, c, m, &format!("{} / HASH JOIN, optimizer cost", m.name()), ratio(cost)));
        series.push(method_series(
            report,
            c,
            m,
            &format!("{} / HASH JOIN, optimizer cost, cache aware", m.name()),
            ratio(cache_aware),
        ));
    }
    let at = |a: JoinMethod| {
        let x = report.crossings.iter().find(|x| x.clustering == c && x.first == a && x.second == JoinMethod::Hash);
        let aware = |x: &Crossing| crossing_cell(x.costs.get(CostSetting::CacheAware.name()).map_or(&[], |v| v));
        x.map_or(("none".to_owned(), "none".to_owned(), "none".to_owned()), |x| {
            (crossing_cell(&x.measured), crossing_cell(&x.cost), aware(x))
        })
    };
    let (measured, costed, aware) = at(JoinMethod::NestedLoops);
    super::report::Chart::lines(
        &format!("Where the methods cross, index {}: each method over the hash join", c.name()),
        "log10 of N, the outer rows joined",
        "method / HASH JOIN at the same N",
        series,
        &format!(
            "a line crosses 1 where its method and the hash join cross. Measured: the median cpu_ms over the hash \
             join's; cost: {COST_DERIVATION}, over the hash join's (by default, and with optimizer_cache_awareness \
             = TRUE). NESTED LOOPS / HASH JOIN: measured {measured}, by cost {costed}, by the cache-aware cost {aware}"
        ),
    )
}

/// The HTML report: the tables, the crossing chart and the figures by N through each index.
fn html(report: &JoinReport, stored: Option<&super::history::Stored>) -> Result<super::report::Html> {
    use super::report::{Chart, Html};
    let mut html = Html::new("lab join: where the join methods cross", &report.environment, &report.parameters);
    html.table_from("Where the methods cross", &CROSSING_HEADER, crossing_rows(report));
    for line in switch_lines(report) {
        html.paragraph(&line);
    }
    html.table_from("The methods' CPU time against each other around each crossing", &TESTS_HEADER, test_rows(report));
    if let Some(c) = &report.callgrind_calibration {
        html.paragraph(&super::scan::calibration_line(c));
    }
    let how = |key: &str| format!("{key}: {}", report.derivations.get(key).copied().unwrap_or("see the table"));
    for c in Clustering::ALL {
        html.chart(crossing_chart(report, c))?;
        let by_method = |key: &'static str| -> Vec<super::report::Series> {
            JoinMethod::ALL.iter().map(|&m| method_series(report, c, m, m.name(), |p| spread_of(p, key))).collect()
        };
        let x = "log10 of N, the outer rows joined";
        let title = |what: &str| format!("{what} by outer rows, index {}", c.name());
        html.chart(Chart::lines(&title("CPU time"), x, "ms", by_method("cpu_ms"), &how("cpu_ms")))?;
        html.chart(Chart::lines(
            &title("Logical reads"),
            x,
            "logical reads",
            by_method("logical_reads"),
            &how("logical_reads"),
        ))?;
        html.chart(Chart::lines(&title("Optimizer cost"), x, "cost", by_method("optimizer_cost"), COST_DERIVATION))?;
        if report.instructions == InstructionSource::Callgrind {
            let key = "instructions_per_outer_row_callgrind";
            html.chart(Chart::lines(
                &title("Instructions per outer row (callgrind)"),
                x,
                "instructions / N",
                by_method(key),
                &how(key),
            ))?;
        }
    }
    html.table_from("The optimizer's choice at each N", &CHOICE_HEADER, choice_rows(report));
    let keys = table_keys(report);
    html.table_from(
        "Figures by point (median [min..max] of the runs)",
        &points_header(&keys),
        point_rows(report, &keys),
    );
    super::history::draw_trend(&mut html, stored)?;
    html.derivations(&report.derivations);
    Ok(html)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_outer_series_is_logarithmic_and_ends_with_the_whole_table() {
        assert_eq!(outer_series(1000, 1), [1, 10, 100, 1000]);
        assert_eq!(outer_series(1000, 2), [1, 3, 10, 32, 100, 316, 1000]);
        assert_eq!(outer_series(4000, 1), [1, 10, 100, 1000, 4000]);
        assert_eq!(outer_series(1, 2), [1]);
        assert_eq!(outer_series(2, 4), [1, 2]);
    }

    #[test]
    fn crossings_are_found_between_points_and_placed_on_log_n() {
        let ns = [1, 10, 100, 1000];
        // a - b: -9, -1, 1, 9: crosses halfway between 10 and 100 on log N.
        let x = crossings(&ns, &[1.0, 9.0, 11.0, 19.0], &[10.0, 10.0, 10.0, 10.0]);
        assert_eq!(x.len(), 1);
        assert_eq!((x[0].from, x[0].to), (10, 100));
        assert!((x[0].at - 10f64.powf(1.5)).abs() < 1e-6, "{}", x[0].at);
        assert!(crossings(&ns, &[1.0, 2.0, 3.0, 4.0], &[5.0; 4]).is_empty(), "never crosses");
        // Touching at a point counts once, not twice.
        for a in [[1.0, 5.0, 9.0, 9.0], [9.0, 5.0, 1.0, 1.0]] {
            let touch = crossings(&ns, &a, &[5.0; 4]);
            assert_eq!(touch.len(), 1, "{a:?}: {touch:?}");
            assert_eq!(touch[0].at.round(), 10.0, "{a:?}");
        }
    }

    #[test]
    fn a_plan_gives_its_cost_and_its_join_method() {
        let plan = "\
-------------------------------------------------------------------
| Id  | Operation                      | Name       | Rows | Cost |
-------------------------------------------------------------------
|   0 | SELECT STATEMENT               |            |    1 |  1.2K |
|   1 |  SORT AGGREGATE                |            |    1 |  324 |
|   2 |   NESTED LOOPS                 |            |  100 |  324 |
|*  3 |    TABLE ACCESS FULL           | OUTER_T    |  100 |   24 |";
        assert_eq!(read_plan(plan), Some((1200.0, Some(JoinMethod::NestedLoops))));
        assert_eq!(read_plan(&plan.replace("NESTED LOOPS", "HASH JOIN   ")).map(|p| p.1), Some(Some(JoinMethod::Hash)));
        assert_eq!(read_plan("no plan"), None);
        assert_eq!(plan_number("100K"), Some(100_000.0));
        assert_eq!(plan_number("x"), None);
    }

    #[test]
    fn a_callgrind_child_names_its_point() {
        assert_eq!(parse_child("GOOD,HASH,1000").unwrap(), (Clustering::Good, JoinMethod::Hash, 1000));
        assert_eq!(parse_child("BAD,NL,1").unwrap(), (Clustering::Bad, JoinMethod::NestedLoops, 1));
        let e = parse_child("GOOD,HASH").unwrap_err().to_string();
        assert!(e.contains("--callgrind-child") && e.contains("three parts"), "{e}");
        assert!(parse_child("UGLY,HASH,1").unwrap_err().to_string().contains("no such index"));
        assert!(parse_child("GOOD,LOOP,1").unwrap_err().to_string().contains("no such method"));
    }

    #[test]
    fn the_permutation_factor_makes_a_permutation() {
        for rows in [2, 7, 999_983, 4000] {
            let p = permutation_factor(rows);
            let mut keys: Vec<u64> = (1..=rows.min(5000)).map(|l| (l * p) % rows + 1).collect();
            if rows <= 5000 {
                keys.sort_unstable();
                assert_eq!(keys, (1..=rows).collect::<Vec<_>>(), "rows {rows}");
            } else {
                assert!(!rows.is_multiple_of(p));
            }
        }
    }
}
