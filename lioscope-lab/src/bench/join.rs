//! `lioscope bench join`: joins beside PostgreSQL, SQLite and DuckDB, on the same rows in
//! the same run. The customers table ([`crate::customers`], `--rows`, 5 M) and an orders
//! table (`--orders`, 10 M: `order_id` 1..N, `cust_id` spread evenly at random over the
//! customers, `amount` 1..10,000) are written once as CSV files and loaded from them into
//! every engine, with an index on `customers (cust_id)` and on `orders (cust_id)` in
//! each. `--scale` multiplies both sizes (0.1: 500 k customers, 1 M orders).
//!
//! | query               | what it asks                                                  | lioscope's plan (hinted)                     |
//! |---------------------|---------------------------------------------------------------|----------------------------------------------|
//! | `nl_few_customers`  | the orders of 10 customers: count and total                    | NESTED LOOPS, INDEX RANGE SCAN of each index |
//! | `nl_hard_parse`     | the same, lioscope parsing and planning it at each run         | the same                                     |
//! | `nl_prepared`       | the same, prepared once, each run binding the range            | the same                                     |
//! | `hash_all`          | every order joined to its customer: count, two totals          | HASH JOIN built on customers                 |
//! | `hash_build_filter` | the orders of customers born in the 1950s (1/8 of them)       | HASH JOIN built on the filtered customers    |
//!
//! lioscope is held to the method the query is named for by hints (the plan is checked);
//! each peer runs the same query without hints, planned its own way. Every engine runs
//! on one thread: PostgreSQL with `max_parallel_workers_per_gather = 0` (and `work_mem`
//! 1 GB and `shared_buffers` 1 GB, so that its hash tables and its tables stay in
//! memory, as lioscope's do), DuckDB with `threads = 1`, SQLite has one. Each query runs
//! once to warm the caches, then `--repeat` times; the figure is the median elapsed time
//! around the statement and the fetch of its one row, each run given the statement's
//! text (lioscope's `Session::execute`, PostgreSQL's simple query, SQLite's prepare,
//! DuckDB's `execute`). The peers parse and plan the text each time; lioscope finds it in
//! its session cursor cache after the first run (a soft parse, as Oracle's
//! `session_cached_cursors` gives), except in `nl_hard_parse`, whose session keeps no
//! cursors (`session_cached_cursors = 0`): there every engine parses and plans it at
//! each run. `nl_prepared` is prepared: each
//! engine prepares it once and each run binds its two values and executes it
//! (lioscope's `Cursor::execute`, PostgreSQL's prepared statement, SQLite's statement
//! reset and stepped; DuckDB's Python API has no statement kept open, so its `execute`
//! with parameters prepares it each time). The answers of every engine are compared
//! with lioscope's, and a difference is an error.
//!
//! DuckDB runs in a `python3` child through its Python package (`pip install duckdb`),
//! timing the queries itself; where python3 or the package is missing, as where
//! PostgreSQL is not installed, that peer is reported as not run, with the reason.

use super::BenchOptions;
use super::peers::{PeerResult, PgServer};
use crate::sample;
use crate::stats::spread;
use lioscope::stats::Stat;
use lioscope::types::Value;
use lioscope::{Database, DatabaseOptions, Error, Result};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Options of the join benchmark.
#[derive(Debug, Clone, clap::Args)]
pub struct JoinBenchOptions {
    /// `--rows`: the customers; `--repeat`: timed runs of each query.
    #[command(flatten)]
    pub bench: BenchOptions,
    /// Rows in the orders table.
    #[arg(long, default_value_t = 10_000_000)]
    pub orders: u64,
    /// Multiplies both tables' rows (0.1: a tenth of each).
    #[arg(long)]
    pub scale: Option<f64>,
    /// Run lioscope only, not PostgreSQL, SQLite and DuckDB.
    #[arg(long)]
    pub no_peers: bool,
}

impl JoinBenchOptions {
    /// (customers, orders) after `--scale`.
    fn sizes(&self) -> Result<(u64, u64)> {
        let scale = self.scale.unwrap_or(1.0);
        if !(scale.is_finite() && scale > 0.0) {
            return Err(Error::InvalidParameter { name: "--scale".into(), message: format!("{scale}: not above 0") });
        }
        let scaled = |n: u64| (n as f64 * scale).round() as u64;
        let (customers, orders) = (scaled(self.bench.rows), scaled(self.orders));
        if customers == 0 || orders == 0 {
            return Err(Error::InvalidParameter {
                name: "--scale".into(),
                message: format!("{scale} leaves {customers} customers and {orders} orders: at least one of each"),
            });
        }
        Ok((customers, orders))
    }
}

/// One query, in lioscope's form (hinted) and the peers' (the same, unhinted, its sums
/// cast to a 64-bit integer so that each engine returns a whole number).
pub struct Query {
    pub name: &'static str,
    pub what: &'static str,
    /// The join line lioscope's plan must have.
    pub method: &'static str,
    pub lioscope: &'static str,
    pub peers: &'static str,
    /// When set, the query is prepared once in each engine and each run executes it with
    /// bind values (the texts above are its literal form, for lioscope's plan check).
    pub prepared: Option<Prepared>,
    /// lioscope runs it in a session that keeps no cursors (`session_cached_cursors =
    /// 0`): its text is parsed and planned at each run, as the peers' is.
    pub hard_parse: bool,
}

/// A query's form with bind variables, and the values each run binds.
pub struct Prepared {
    /// lioscope's text, its bind variables `:1`, `:2`, ...
    pub lioscope: &'static str,
    /// The peers' text, its parameters `$1`, `$2`, ... (PostgreSQL's form, which SQLite
    /// and DuckDB read too).
    pub peers: &'static str,
    pub values: &'static [i64],
}

/// The nested-loop query, lioscope's form (hinted) or the peers', with its range of
/// customers (literals, or bind variables).
macro_rules! nl_query {
    (lioscope, $range:literal) => {
        concat!(
            "SELECT /*+ LEADING(c o) USE_NL(o) INDEX(c cust_id_ix) INDEX(o orders_cust_ix) */ COUNT(*), ",
            "SUM(o.amount) FROM customers c JOIN orders o ON o.cust_id = c.cust_id WHERE c.cust_id BETWEEN ",
            $range
        )
    };
    (peers, $range:literal) => {
        concat!(
            "SELECT COUNT(*), CAST(SUM(o.amount) AS BIGINT) FROM customers c JOIN orders o ON o.cust_id = c.cust_id ",
            "WHERE c.cust_id BETWEEN ",
            $range
        )
    };
}

pub const QUERIES: [Query; 5] = [
    Query {
        name: "nl_few_customers",
        what: "the orders of 10 customers, by index (lioscope: a soft parse from its cursor cache)",
        method: "NESTED LOOPS",
        lioscope: nl_query!(lioscope, "1001 AND 1010"),
        peers: nl_query!(peers, "1001 AND 1010"),
        prepared: None,
        hard_parse: false,
    },
    Query {
        name: "nl_hard_parse",
        what: "the same, parsed and planned at each run by every engine",
        method: "NESTED LOOPS",
        lioscope: nl_query!(lioscope, "1001 AND 1010"),
        peers: nl_query!(peers, "1001 AND 1010"),
        prepared: None,
        hard_parse: true,
    },
    Query {
        name: "nl_prepared",
        what: "the same, prepared once and run with bind values (no parse or plan a run)",
        method: "NESTED LOOPS",
        lioscope: nl_query!(lioscope, "1001 AND 1010"),
        peers: nl_query!(peers, "1001 AND 1010"),
        prepared: Some(Prepared {
            lioscope: nl_query!(lioscope, ":1 AND :2"),
            peers: nl_query!(peers, "$1 AND $2"),
            values: &[1001, 1010],
        }),
        hard_parse: false,
    },
    Query {
        name: "hash_all",
        what: "every order joined to its customer, with totals",
        method: "HASH JOIN",
        lioscope: "SELECT /*+ LEADING(c o) USE_HASH(o) FULL(c) FULL(o) */ COUNT(*), SUM(o.amount), \
                   SUM(c.cust_credit_limit) FROM customers c JOIN orders o ON o.cust_id = c.cust_id",
        peers: "SELECT COUNT(*), CAST(SUM(o.amount) AS BIGINT), CAST(SUM(c.cust_credit_limit) AS BIGINT) \
                FROM customers c JOIN orders o ON o.cust_id = c.cust_id",
        prepared: None,
        hard_parse: false,
    },
    Query {
        name: "hash_build_filter",
        what: "the orders of customers born in the 1950s (a filter on the build side)",
        method: "HASH JOIN",
        lioscope: "SELECT /*+ LEADING(c o) USE_HASH(o) FULL(c) FULL(o) */ COUNT(*), SUM(o.amount) \
                   FROM customers c JOIN orders o ON o.cust_id = c.cust_id \
                   WHERE c.cust_year_of_birth BETWEEN 1950 AND 1959",
        peers: "SELECT COUNT(*), CAST(SUM(o.amount) AS BIGINT) FROM customers c JOIN orders o ON o.cust_id = c.cust_id \
                WHERE c.cust_year_of_birth BETWEEN 1950 AND 1959",
        prepared: None,
        hard_parse: false,
    },
];

/// The orders table in lioscope, and in the peers.
const ORDERS_TABLE: &str =
    "CREATE TABLE orders (order_id NUMBER NOT NULL, cust_id NUMBER NOT NULL, amount NUMBER NOT NULL)";
const PEER_ORDERS_TABLE: &str =
    "CREATE TABLE orders (order_id BIGINT NOT NULL, cust_id BIGINT NOT NULL, amount BIGINT NOT NULL)";
/// The indexes every engine gets.
const INDEXES: [&str; 2] =
    ["CREATE INDEX cust_id_ix ON customers (cust_id)", "CREATE INDEX orders_cust_ix ON orders (cust_id)"];

/// The settings each peer ran with, as reported.
const PG_SETTINGS: &str = "max_parallel_workers_per_gather 0, work_mem 1GB, shared_buffers 1GB, jit off, locale C";
const SQLITE_SETTINGS: &str = "cache_size 2 GiB, one thread";
const DUCKDB_SETTINGS: &str = "threads 1, through its Python package";

/// Writes `orders` orders of `customers` customers as CSV: `order_id,cust_id,amount`.
pub fn write_orders_csv(path: &Path, orders: u64, customers: u64) -> Result<()> {
    let file = std::fs::File::create(path).map_err(|e| Error::io("create", path, e))?;
    let mut w = std::io::BufWriter::with_capacity(1 << 20, file);
    let write = |w: &mut std::io::BufWriter<std::fs::File>| -> std::io::Result<()> {
        for id in 1..=orders {
            let h = id.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (id >> 7);
            writeln!(w, "{id},{},{}", h % customers + 1, (h >> 24) % 10_000 + 1)?;
        }
        w.flush()
    };
    write(&mut w).map_err(|e| Error::io("write", path, e))
}

/// One engine's runs of one query: the elapsed ms of each timed run, and its answer (the
/// one row's values as text, whole numbers without a fraction).
#[derive(Debug, Clone, serde::Serialize)]
pub struct QueryRuns {
    pub elapsed_ms: Vec<f64>,
    pub answer: Vec<String>,
}

/// What lioscope adds for each query: its CPU time and logical reads (medians), and its
/// plan's join line.
#[derive(Debug, Clone, serde::Serialize)]
pub struct LioscopeQuery {
    pub runs: QueryRuns,
    pub cpu_ms: f64,
    pub logical_reads: u64,
    /// `parse count (hard)` of a timed run: 1 when the run parsed and planned the text,
    /// 0 when it ran a kept plan (a soft parse, or a prepared cursor).
    pub hard_parses: u64,
    pub plan: String,
}

/// One peer: its settings, and its runs of each query or why it did not run.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Peer {
    pub engine: &'static str,
    pub settings: &'static str,
    pub load_ms: Option<f64>,
    pub queries: std::result::Result<Vec<QueryRuns>, String>,
}

/// The benchmark's figures, as `--json` writes them.
#[derive(Debug, Clone, serde::Serialize)]
pub struct JoinBenchReport {
    pub customers: u64,
    pub orders: u64,
    pub repeat: usize,
    pub lioscope_load_ms: f64,
    pub lioscope: Vec<LioscopeQuery>,
    pub peers: Vec<Peer>,
}

/// A value as the answers compare it: a whole number without a fraction, else as printed.
fn answer_cell(text: &str) -> String {
    match text.trim().parse::<f64>() {
        Ok(v) if v.fract() == 0.0 && v.abs() < 9e15 => format!("{}", v as i64),
        _ => text.trim().to_owned(),
    }
}

/// Runs the benchmark and prints its report.
pub fn run(opts: &JoinBenchOptions) -> Result<JoinBenchReport> {
    let (customers, orders) = opts.sizes()?;
    let repeat = opts.bench.repeat.max(1);
    let (dir, _tmp) = sample::work_dir(opts.bench.dir.as_deref(), "bench-join")?;
    std::fs::create_dir_all(&dir).map_err(|e| Error::io("create", &dir, e))?;
    let (customers_csv, orders_csv) = (dir.join("customers.csv"), dir.join("orders.csv"));
    crate::customers::write_csv_file(&customers_csv, customers)?;
    write_orders_csv(&orders_csv, orders, customers)?;
    println!(
        "lioscope bench join: {customers} customers, {orders} orders, {repeat} timed runs of each query after a warm \
         one, in {}",
        dir.display()
    );
    let (lioscope_load_ms, lioscope) = run_lioscope(&dir.join("lioscope"), &customers_csv, &orders_csv, repeat)?;
    let mut peers = Vec::new();
    if !opts.no_peers {
        let csvs = (customers_csv.as_path(), orders_csv.as_path());
        peers.push(peer("PostgreSQL", PG_SETTINGS, || postgres(&dir, csvs, repeat)));
        peers.push(peer("SQLite", SQLITE_SETTINGS, || sqlite(&dir, csvs, repeat)));
        peers.push(peer("DuckDB", DUCKDB_SETTINGS, || duckdb(&dir, csvs, repeat)));
    }
    let _ = std::fs::remove_file(&customers_csv);
    let _ = std::fs::remove_file(&orders_csv);
    let report = JoinBenchReport { customers, orders, repeat, lioscope_load_ms, lioscope, peers };
    print_report(&report);
    if let Some(path) = &opts.bench.json {
        crate::report::write_json(path, &report)?;
    }
    check_answers(&report)?;
    Ok(report)
}

/// A peer's runs, with its load time, or why it did not run.
fn peer(engine: &'static str, settings: &'static str, run: impl FnOnce() -> PeerResult<(f64, Vec<QueryRuns>)>) -> Peer {
    match run() {
        Ok((load_ms, queries)) => Peer { engine, settings, load_ms: Some(load_ms), queries: Ok(queries) },
        Err(why) => Peer { engine, settings, load_ms: None, queries: Err(why) },
    }
}

/// An error naming the first engine and query whose answer differs from lioscope's.
fn check_answers(report: &JoinBenchReport) -> Result<()> {
    for p in &report.peers {
        let Ok(queries) = &p.queries else { continue };
        for ((q, ours), theirs) in QUERIES.iter().zip(&report.lioscope).zip(queries) {
            if ours.runs.answer != theirs.answer {
                return Err(Error::InvalidValue {
                    context: format!("bench join: query {}", q.name),
                    message: format!("{} answers {:?}, lioscope {:?}", p.engine, theirs.answer, ours.runs.answer),
                });
            }
        }
    }
    Ok(())
}

/// Loads both tables into a new lioscope database in `dir` (COPY, the indexes,
/// ANALYZE), then measures every query; the load's milliseconds and each query's runs.
fn run_lioscope(dir: &Path, customers: &Path, orders: &Path, repeat: usize) -> Result<(f64, Vec<LioscopeQuery>)> {
    let bytes = std::fs::metadata(customers).map(|m| m.len()).unwrap_or(0)
        + std::fs::metadata(orders).map(|m| m.len()).unwrap_or(0);
    // The tables, their indexes and the load's undo: about three times the CSV bytes.
    let cache = (bytes * 3).max(64 << 20) + (64 << 20);
    let parameters = vec![("db_cache_size".to_owned(), cache.to_string())];
    let db = Database::create(dir, DatabaseOptions { parameters, ..Default::default() })?;
    let session = db.session();
    let started = Instant::now();
    session.execute(crate::customers::CREATE_TABLE)?;
    session.execute(ORDERS_TABLE)?;
    for (table, csv) in [("customers", customers), ("orders", orders)] {
        session.execute(&format!("COPY {table} FROM '{}'", csv.display()))?;
        if !session.autocommit() {
            session.execute("COMMIT")?;
        }
    }
    for create in INDEXES {
        session.execute(create)?;
    }
    session.execute("ANALYZE TABLE customers COMPUTE STATISTICS")?;
    session.execute("ANALYZE TABLE orders COMPUTE STATISTICS")?;
    let load_ms = started.elapsed().as_secs_f64() * 1000.0;
    drop(session);
    let queries = QUERIES.iter().map(|q| lioscope_query(&db, q, repeat)).collect::<Result<Vec<_>>>()?;
    db.close()?;
    Ok((load_ms, queries))
}

/// One query in lioscope, in a session of its own: its plan checked for the method it is
/// named for, a warm run, then `repeat` timed ones.
fn lioscope_query(db: &Database, q: &Query, repeat: usize) -> Result<LioscopeQuery> {
    let session = &db.session();
    if q.hard_parse {
        session.execute("ALTER SESSION SET session_cached_cursors = 0")?;
    }
    let plan = session.execute(&format!("EXPLAIN PLAN FOR {}", q.lioscope))?;
    let plan: Vec<String> = plan.rows.iter().map(|r| r[0].to_string()).collect();
    let Some(join_line) = plan.iter().find(|l| l.contains(q.method)) else {
        return Err(Error::InvalidValue {
            context: format!("bench join: the hints of {}", q.name),
            message: format!("the plan has no {} line:\n{}", q.method, plan.join("\n")),
        });
    };
    // The operations from the join line down, with their objects: `HASH JOIN > TABLE
    // ACCESS FULL CUSTOMERS > ...`.
    let at = plan.iter().position(|l| l == join_line).unwrap_or(0);
    let operation = |line: &String| {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        cells.get(2..4).map(|c| c.join(" ").trim().to_owned())
    };
    let join_line =
        plan[at..].iter().take_while(|l| l.starts_with('|')).filter_map(operation).collect::<Vec<_>>().join(" > ");
    let runs = match &q.prepared {
        None => {
            sample::measure(session, q.lioscope)?;
            (0..repeat).map(|_| sample::measure(session, q.lioscope)).collect::<Result<Vec<_>>>()?
        }
        Some(prepared) => {
            let mut cursor = session.prepare(prepared.lioscope)?;
            let values: Vec<Value> = prepared.values.iter().map(|&v| v.into()).collect();
            let mut run = || sample::measure_with(session, || cursor.execute(&values));
            run()?;
            (0..repeat).map(|_| run()).collect::<Result<Vec<_>>>()?
        }
    };
    let answer =
        runs[0].result.rows.first().map_or_else(Vec::new, |r| r.iter().map(|v| answer_cell(&v.to_string())).collect());
    Ok(LioscopeQuery {
        cpu_ms: spread(runs.iter().map(|m| m.cpu_ms)).median,
        logical_reads: runs[0].delta(Stat::LogicalReads),
        hard_parses: runs[runs.len() - 1].delta(Stat::ParseCountHard),
        plan: join_line,
        runs: QueryRuns { elapsed_ms: runs.iter().map(|m| m.elapsed_ms).collect(), answer },
    })
}

/// Times `query` (a warm run, then `repeat` runs); its answer from the last run.
fn timed_runs(repeat: usize, mut query: impl FnMut() -> PeerResult<Vec<String>>) -> PeerResult<QueryRuns> {
    query()?;
    let mut elapsed_ms = Vec::new();
    let mut answer = Vec::new();
    for _ in 0..repeat {
        let started = Instant::now();
        answer = query()?;
        elapsed_ms.push(started.elapsed().as_secs_f64() * 1000.0);
    }
    Ok(QueryRuns { elapsed_ms, answer: answer.iter().map(|a| answer_cell(a)).collect() })
}

/// PostgreSQL: a throwaway server, both tables loaded by COPY, the indexes, VACUUM
/// ANALYZE and a CHECKPOINT, then the queries.
fn postgres(dir: &Path, (customers, orders): (&Path, &Path), repeat: usize) -> PeerResult<(f64, Vec<QueryRuns>)> {
    let server = PgServer::start_with(dir, &["shared_buffers=1GB"])?;
    let mut client = postgres::Client::connect(server.url(), postgres::NoTls).map_err(|e| e.to_string())?;
    let exec = |client: &mut postgres::Client, sql: &str| client.batch_execute(sql).map_err(|e| pg_error(sql, &e));
    exec(&mut client, "SET max_parallel_workers_per_gather = 0; SET work_mem = '1GB'; SET jit = off")?;
    let started = Instant::now();
    exec(&mut client, super::peers::PG_TABLE)?;
    exec(&mut client, PEER_ORDERS_TABLE)?;
    for (table, csv) in [("customers", customers), ("orders", orders)] {
        let mut writer =
            client.copy_in(&format!("COPY {table} FROM STDIN WITH (FORMAT csv)")).map_err(|e| e.to_string())?;
        let mut file = std::fs::File::open(csv).map_err(|e| format!("{}: {e}", csv.display()))?;
        std::io::copy(&mut file, &mut writer).map_err(|e| e.to_string())?;
        writer.finish().map_err(|e| e.to_string())?;
    }
    for create in INDEXES {
        exec(&mut client, create)?;
    }
    // One statement a call: VACUUM refuses to run inside the transaction a batch makes.
    for sql in ["VACUUM ANALYZE customers", "VACUUM ANALYZE orders", "CHECKPOINT"] {
        exec(&mut client, sql)?;
    }
    let load_ms = started.elapsed().as_secs_f64() * 1000.0;
    let queries = QUERIES
        .iter()
        .map(|q| {
            // A prepared query's statement, made once (the extended protocol's Parse).
            let statement = match &q.prepared {
                Some(p) => Some(client.prepare(p.peers).map_err(|e| pg_error(q.name, &e))?),
                None => None,
            };
            let values: Vec<&(dyn postgres::types::ToSql + Sync)> = match &q.prepared {
                Some(p) => p.values.iter().map(|v| v as &(dyn postgres::types::ToSql + Sync)).collect(),
                None => Vec::new(),
            };
            timed_runs(repeat, || {
                let row = match &statement {
                    Some(statement) => client.query_one(statement, &values),
                    None => client.query_one(q.peers, &[]),
                };
                let row = row.map_err(|e| pg_error(q.name, &e))?;
                (0..row.len())
                    .map(|i| row.try_get::<_, i64>(i).map(|v| v.to_string()).map_err(|e| e.to_string()))
                    .collect()
            })
        })
        .collect::<PeerResult<Vec<_>>>()?;
    Ok((load_ms, queries))
}

/// What PostgreSQL said about `what`: its message where the server sent one.
fn pg_error(what: &str, e: &postgres::Error) -> String {
    match e.as_db_error() {
        Some(db) => format!("{what}: {}: {}", db.code().code(), db.message()),
        None => format!("{what}: {e}"),
    }
}

/// SQLite: a file under `dir` with a 2 GiB page cache, both tables inserted from the CSV
/// files in one transaction, the indexes, ANALYZE, then the queries.
fn sqlite(dir: &Path, (customers, orders): (&Path, &Path), repeat: usize) -> PeerResult<(f64, Vec<QueryRuns>)> {
    let path = dir.join("join.sqlite");
    let _ = std::fs::remove_file(&path);
    let mut conn = rusqlite::Connection::open(&path).map_err(|e| e.to_string())?;
    let started = Instant::now();
    conn.execute_batch(&format!("PRAGMA cache_size = -2097152; {}; {PEER_ORDERS_TABLE}", super::peers::SQLITE_TABLE))
        .map_err(|e| e.to_string())?;
    let tx = conn.transaction().map_err(|e| e.to_string())?;
    // Each table's columns, and which of them hold integers (the rest are text).
    let tables: [(&str, &Path, usize, &[usize]); 2] =
        [("customers", customers, 10, &[0, 4, 8]), ("orders", orders, 3, &[0, 1, 2])];
    for (table, csv, columns, integers) in tables {
        let marks = (1..=columns).map(|i| format!("?{i}")).collect::<Vec<_>>().join(", ");
        let mut insert = tx.prepare(&format!("INSERT INTO {table} VALUES ({marks})")).map_err(|e| e.to_string())?;
        let mut reader = csv::ReaderBuilder::new().has_headers(false).from_path(csv).map_err(|e| e.to_string())?;
        for record in reader.records() {
            let record = record.map_err(|e| format!("{}: {e}", csv.display()))?;
            let value = |(i, f): (usize, &str)| -> PeerResult<rusqlite::types::Value> {
                if !integers.contains(&i) {
                    return Ok(rusqlite::types::Value::Text(f.to_owned()));
                }
                f.parse().map(rusqlite::types::Value::Integer).map_err(|e| format!("{}: {f}: {e}", csv.display()))
            };
            let values = record.iter().enumerate().map(value).collect::<PeerResult<Vec<_>>>()?;
            insert.execute(rusqlite::params_from_iter(values)).map_err(|e| e.to_string())?;
        }
    }
    tx.commit().map_err(|e| e.to_string())?;
    for create in INDEXES {
        conn.execute_batch(create).map_err(|e| e.to_string())?;
    }
    conn.execute_batch("ANALYZE").map_err(|e| e.to_string())?;
    let load_ms = started.elapsed().as_secs_f64() * 1000.0;
    let one_row = |statement: &mut rusqlite::Statement<'_>, values: &[i64]| {
        let columns = statement.column_count();
        statement.query_row(rusqlite::params_from_iter(values), |row| {
            (0..columns).map(|i| row.get::<_, i64>(i).map(|v| v.to_string())).collect()
        })
    };
    let queries = QUERIES
        .iter()
        .map(|q| match &q.prepared {
            // Prepared once; each run binds and steps it.
            Some(p) => {
                let mut statement = conn.prepare(p.peers).map_err(|e| format!("{}: {e}", q.name))?;
                timed_runs(repeat, || one_row(&mut statement, p.values).map_err(|e| format!("{}: {e}", q.name)))
            }
            None => timed_runs(repeat, || {
                let mut statement = conn.prepare(q.peers).map_err(|e| format!("{}: {e}", q.name))?;
                one_row(&mut statement, &[]).map_err(|e| format!("{}: {e}", q.name))
            }),
        })
        .collect::<PeerResult<Vec<_>>>()?;
    drop(conn);
    let _ = std::fs::remove_file(&path);
    Ok((load_ms, queries))
}

/// The Python program that times DuckDB's queries once it has loaded
/// ([`super::peers::duckdb_child`]): writes `{"load_ms": .., "queries": [{"elapsed_ms":
/// [..], "answer": [..]}]}`.
const DUCKDB_PROGRAM: &str = r#"
out = []
for sql, params in task["queries"]:
    con.execute(sql, params).fetchall()
    runs, answer = [], None
    for _ in range(task["repeat"]):
        started = time.perf_counter()
        answer = con.execute(sql, params).fetchall()[0]
        runs.append((time.perf_counter() - started) * 1000)
    out.append({"elapsed_ms": runs, "answer": [str(v) for v in answer]})
print(json.dumps({"load_ms": load_ms, "queries": out}))
"#;

/// DuckDB, in a `python3` child ([`DUCKDB_PROGRAM`]), a database file under `dir`.
fn duckdb(dir: &Path, (customers, orders): (&Path, &Path), repeat: usize) -> PeerResult<(f64, Vec<QueryRuns>)> {
    let db: PathBuf = dir.join("join.duckdb");
    let _ = std::fs::remove_file(&db);
    let copy = |table: &str, csv: &Path| format!("COPY {table} FROM '{}' (FORMAT csv, HEADER false)", csv.display());
    let mut setup = vec![super::peers::PG_TABLE.to_owned(), PEER_ORDERS_TABLE.to_owned()];
    setup.extend([copy("customers", customers), copy("orders", orders)]);
    setup.extend(INDEXES.iter().map(|s| s.to_string()));
    setup.push("ANALYZE".into());
    let task = serde_json::json!({
        "db": db.display().to_string(),
        "setup": setup,
        "queries": QUERIES
            .iter()
            .map(|q| match &q.prepared {
                Some(p) => serde_json::json!([p.peers, p.values]),
                None => serde_json::json!([q.peers, []]),
            })
            .collect::<Vec<_>>(),
        "repeat": repeat,
    });
    let result = super::peers::duckdb_child(DUCKDB_PROGRAM, &task, &db)?;
    let load_ms = result["load_ms"].as_f64().ok_or("no load_ms in DuckDB's answer")?;
    let queries = result["queries"]
        .as_array()
        .ok_or("no queries in DuckDB's answer")?
        .iter()
        .map(|q| QueryRuns {
            elapsed_ms: q["elapsed_ms"].as_array().into_iter().flatten().filter_map(|v| v.as_f64()).collect(),
            answer: q["answer"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|v| answer_cell(v.as_str().unwrap_or("")))
                .collect(),
        })
        .collect();
    Ok((load_ms, queries))
}

/// The median of a query's runs, "median [min..max]" as a cell.
fn runs_cell(runs: &QueryRuns) -> String {
    if runs.elapsed_ms.is_empty() {
        return "n/a".into();
    }
    let s = spread(runs.elapsed_ms.iter().copied());
    crate::report::spread_cell(s.median, s.min, s.max)
}

fn median(runs: &QueryRuns) -> Option<f64> {
    (!runs.elapsed_ms.is_empty()).then(|| spread(runs.elapsed_ms.iter().copied()).median)
}

/// The terminal report: each query's elapsed ms by engine, with each peer's median over
/// lioscope's; lioscope's CPU, logical reads and plan; the answers; what did not run.
fn print_report(report: &JoinBenchReport) {
    let mut header = vec!["query".to_owned(), "lioscope ms".to_owned()];
    for p in report.peers.iter().filter(|p| p.queries.is_ok()) {
        header.push(format!("{} ms", p.engine));
        header.push(format!("{} / lioscope", p.engine));
    }
    let rows = QUERIES.iter().enumerate().map(|(i, q)| {
        let ours = &report.lioscope[i].runs;
        let mut row = vec![q.name.to_owned(), runs_cell(ours)];
        for p in &report.peers {
            let Ok(queries) = &p.queries else { continue };
            row.push(runs_cell(&queries[i]));
            let ratio = median(&queries[i]).zip(median(ours)).filter(|(_, b)| *b > 0.0).map(|(a, b)| a / b);
            row.push(crate::report::ratio_cell(ratio));
        }
        row
    });
    let header: Vec<&str> = header.iter().map(String::as_str).collect();
    crate::report::print_table(&header, rows);
    let details = QUERIES.iter().zip(&report.lioscope).map(|(q, l)| {
        vec![
            q.name.to_owned(),
            q.what.to_owned(),
            l.plan.clone(),
            format!("{:.1}", l.cpu_ms),
            l.logical_reads.to_string(),
            l.hard_parses.to_string(),
            l.runs.answer.join(", "),
        ]
    });
    crate::report::print_table(
        &["query", "what", "lioscope's join line", "lioscope CPU ms", "logical reads", "hard parses", "answer"],
        details,
    );
    println!(
        "Elapsed ms: median [min..max] of {} runs after a warm one, around the statement and its one row; \
         PEER / lioscope > 1: lioscope is that many times faster. Loads (CSV, indexes, statistics): lioscope {:.0} ms",
        report.repeat, report.lioscope_load_ms
    );
    for p in &report.peers {
        match (&p.queries, p.load_ms) {
            (Ok(_), Some(ms)) => println!("  {}: {ms:.0} ms ({})", p.engine, p.settings),
            (Err(why), _) => println!("  {}: not run: {why}", p.engine),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn orders_spread_over_every_customer() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("orders.csv");
        write_orders_csv(&path, 20_000, 1_000).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        let mut per_customer = vec![0u32; 1_001];
        for (i, line) in text.lines().enumerate() {
            let f: Vec<u64> = line.split(',').map(|v| v.parse().unwrap()).collect();
            assert_eq!(f[0], i as u64 + 1);
            assert!((1..=1_000).contains(&f[1]) && (1..=10_000).contains(&f[2]), "{line}");
            per_customer[f[1] as usize] += 1;
        }
        // 20 orders a customer on average; none without, none with five times as many.
        assert!(per_customer[1..].iter().all(|&n| (1..100).contains(&n)), "{:?}", &per_customer[1..20]);
    }

    #[test]
    fn answers_compare_whole_numbers_however_printed() {
        assert_eq!(answer_cell("12"), "12");
        assert_eq!(answer_cell(" 12.0 "), "12");
        assert_eq!(answer_cell("1.5"), "1.5");
        assert_eq!(answer_cell("None"), "None");
    }

    #[test]
    fn a_peer_answering_otherwise_fails_the_run() {
        let runs = |answer: &[&str]| QueryRuns {
            elapsed_ms: vec![1.0],
            answer: answer.iter().map(|a| a.to_string()).collect(),
        };
        let ours = |answer: &[&str]| LioscopeQuery {
            runs: runs(answer),
            cpu_ms: 1.0,
            logical_reads: 1,
            hard_parses: 0,
            plan: String::new(),
        };
        let mut report = JoinBenchReport {
            customers: 1,
            orders: 1,
            repeat: 1,
            lioscope_load_ms: 1.0,
            lioscope: vec![ours(&["1", "7"]), ours(&["1", "7"]), ours(&["1", "7"]), ours(&["2"]), ours(&["3"])],
            peers: vec![
                Peer {
                    engine: "SQLite",
                    settings: "",
                    load_ms: Some(1.0),
                    queries: Ok(vec![
                        runs(&["1", "7"]),
                        runs(&["1", "7"]),
                        runs(&["1", "7"]),
                        runs(&["2"]),
                        runs(&["3"]),
                    ]),
                },
                Peer { engine: "DuckDB", settings: "", load_ms: None, queries: Err("not installed".into()) },
            ],
        };
        check_answers(&report).expect("the same answers");
        report.peers[0].queries =
            Ok(vec![runs(&["1", "7"]), runs(&["1", "7"]), runs(&["1", "7"]), runs(&["2"]), runs(&["4"])]);
        let e = check_answers(&report).unwrap_err().to_string();
        assert!(e.contains("hash_build_filter") && e.contains("SQLite") && e.contains("\"4\""), "{e}");
    }

    #[test]
    fn a_scale_leaving_no_rows_is_refused() {
        let bench = BenchOptions { rows: 10, repeat: 1, dir: None, json: None };
        let opts = JoinBenchOptions { bench, orders: 20, scale: Some(0.01), no_peers: true };
        let e = opts.sizes().unwrap_err().to_string();
        assert!(e.contains("--scale") && e.contains("0 customers"), "{e}");
        let opts = JoinBenchOptions { scale: Some(-1.0), ..opts };
        assert!(opts.sizes().unwrap_err().to_string().contains("--scale"));
        let opts = JoinBenchOptions { scale: Some(0.5), ..opts };
        assert_eq!(opts.sizes().unwrap(), (5, 10));
    }
}
