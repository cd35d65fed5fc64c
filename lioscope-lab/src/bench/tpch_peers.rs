//! The peers of `lioscope bench tpch`: PostgreSQL, SQLite and DuckDB, each loading the
//! same `.tbl` files, with the same primary and foreign keys, and running the same
//! queries in its own dialect on one thread.
//!
//! - **PostgreSQL**: a throwaway server ([`super::peers::PgServer`]) with
//!   `max_parallel_workers_per_gather = 0`, `shared_buffers` as large as lioscope's buffer
//!   cache, `work_mem` 1 GB (so that its hashes and sorts stay in memory, as lioscope's
//!   do), JIT off; COPY, then the keys added, VACUUM ANALYZE and a checkpoint. A query
//!   runs through the simple query protocol (its text parsed and planned each run) and is
//!   cancelled by `statement_timeout`.
//! - **SQLite** (bundled by `rusqlite`): a file with a page cache as large as lioscope's
//!   buffer cache, the keys declared in CREATE TABLE (a primary key is a unique index;
//!   SQLite does not enforce foreign keys unless asked, and is not), rows inserted in one
//!   transaction, ANALYZE. A query is interrupted from a watchdog thread at its limit.
//! - **DuckDB**: a `python3` child through its Python package (`pip install duckdb`) with
//!   `threads = 1`, the keys declared in CREATE TABLE, COPY; a query is interrupted by a
//!   timer at its limit.
//!
//! Each query runs once to warm, then `repeat` times; the figure is the median elapsed
//! time around the statement and the fetch of all its rows. A peer that cannot run
//! (not installed) is reported with why; a query that fails or is cancelled is reported
//! as such, and the others still run.

use super::peers::PgServer;
use crate::stats::spread;
use crate::tpch::Dialect;
use crate::tpch::answers::{Answer, Cell};
use crate::tpch::queries::Item;
use crate::tpch::schema::{Kind, Table};
use lioscope::{Error, Result};
use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// What every peer runs with.
#[derive(Debug, Clone)]
pub struct PeerSettings {
    pub sf: f64,
    pub repeat: usize,
    pub timeout_s: u64,
    /// lioscope's buffer cache: each peer's cache gets as much.
    pub memory_bytes: u64,
}

/// One peer's runs of one query.
#[derive(Debug, Clone, serde::Serialize)]
pub struct PeerQuery {
    pub elapsed_ms: Vec<f64>,
    /// Cancelled at the limit (then `limit_ms` stands for its time, a lower bound).
    pub timed_out: bool,
    pub limit_ms: f64,
    pub error: Option<String>,
    #[serde(skip)]
    pub answer: Option<Answer>,
}

impl PeerQuery {
    /// The query's time: the median of its timed runs, or its limit when it was
    /// cancelled; `None` when it failed.
    pub fn time_ms(&self) -> Option<f64> {
        if self.timed_out {
            return Some(self.limit_ms);
        }
        (self.error.is_none() && !self.elapsed_ms.is_empty()).then(|| spread(self.elapsed_ms.iter().copied()).median)
    }

    /// The time as a report's cell.
    pub fn cell(&self) -> String {
        match (self.timed_out, &self.error, self.time_ms()) {
            (true, _, _) => format!("> {:.0} (cancelled)", self.limit_ms),
            (false, Some(e), _) => format!("failed: {e}"),
            (false, None, Some(ms)) => crate::report::round(ms),
            _ => "n/a".into(),
        }
    }
}

/// One peer's run: its version and settings, load time, and queries (or why it did
/// not run).
#[derive(Debug, Clone, serde::Serialize)]
pub struct PeerRun {
    pub engine: String,
    pub version: String,
    pub settings: String,
    pub load_ms: Option<f64>,
    pub queries: std::result::Result<Vec<PeerQuery>, String>,
}

/// The peers named by `--peer`, in the order given.
pub fn names(list: &[String]) -> Result<Vec<&'static str>> {
    list.iter()
        .map(|name| match name.trim().to_ascii_lowercase().as_str() {
            "postgres" | "postgresql" => Ok("PostgreSQL"),
            "sqlite" => Ok("SQLite"),
            "duckdb" => Ok("DuckDB"),
            other => Err(Error::InvalidParameter {
                name: "--peer".into(),
                message: format!("{other}: one of postgres, sqlite, duckdb"),
            }),
        })
        .collect()
}

/// Runs peer `engine` (one of [`names`]) on the files in `dir`.
pub fn run(engine: &str, dir: &Path, files: &[(&'static Table, PathBuf)], items: &[Item], s: &PeerSettings) -> PeerRun {
    let outcome = match engine {
        "PostgreSQL" => postgres(dir, files, items, s),
        "SQLite" => sqlite(dir, files, items, s),
        _ => duckdb(dir, files, items, s),
    };
    match outcome {
        Ok((version, settings, load_ms, queries)) => {
            PeerRun { engine: engine.into(), version, settings, load_ms: Some(load_ms), queries: Ok(queries) }
        }
        Err(why) => PeerRun {
            engine: engine.into(),
            version: String::new(),
            settings: String::new(),
            load_ms: None,
            queries: Err(why),
        },
    }
}

/// (version, settings, load ms, queries), or why the peer did not run.
type Outcome = std::result::Result<(String, String, f64, Vec<PeerQuery>), String>;

/// How one run of a query ended.
enum RunEnd {
    Answered(Answer),
    Cancelled,
    Failed(String),
}

/// A warm run of `run`, then `repeat` timed ones (none after a cancel or a failure).
fn timed(s: &PeerSettings, label: &str, mut run: impl FnMut() -> RunEnd) -> PeerQuery {
    let mut q = PeerQuery {
        elapsed_ms: Vec::new(),
        timed_out: false,
        limit_ms: s.timeout_s as f64 * 1000.0,
        error: None,
        answer: None,
    };
    for i in 0..=s.repeat {
        let started = Instant::now();
        let end = run();
        let ms = started.elapsed().as_secs_f64() * 1000.0;
        match end {
            RunEnd::Answered(answer) => {
                if i > 0 {
                    q.elapsed_ms.push(ms);
                }
                q.answer.get_or_insert(answer);
            }
            RunEnd::Cancelled => {
                q.timed_out = true;
                break;
            }
            RunEnd::Failed(e) => {
                q.error = Some(e);
                break;
            }
        }
    }
    println!("    {label}: {}", q.cell());
    q
}

/// The peer's text of every item, or why one cannot be made.
fn texts(items: &[Item], dialect: Dialect, sf: f64) -> std::result::Result<Vec<String>, String> {
    items.iter().map(|i| i.sql(dialect, sf).map_err(|e| e.to_string())).collect()
}

fn postgres(dir: &Path, files: &[(&'static Table, PathBuf)], items: &[Item], s: &PeerSettings) -> Outcome {
    let texts = texts(items, Dialect::Postgres, s.sf)?;
    let shared_buffers = format!("shared_buffers={}MB", (s.memory_bytes >> 20).max(128));
    let server = PgServer::start_with(
        dir,
        &[&shared_buffers, "work_mem=1GB", "max_parallel_workers_per_gather=0", "jit=off", "max_wal_size=16GB"],
    )?;
    let mut client = postgres::Client::connect(server.url(), postgres::NoTls).map_err(|e| e.to_string())?;
    let version = client.query_one("SHOW server_version", &[]).map_err(|e| e.to_string())?.get::<_, String>(0);
    let started = Instant::now();
    for (table, path) in files {
        exec(&mut client, &table.create(Dialect::Postgres, false))?;
        let mut writer = client
            .copy_in(&format!("COPY {} FROM STDIN WITH (FORMAT text, DELIMITER '|')", table.name))
            .map_err(|e| e.to_string())?;
        let mut file = std::fs::File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
        std::io::copy(&mut file, &mut writer).map_err(|e| e.to_string())?;
        writer.finish().map_err(|e| pg_error(table.name, &e))?;
    }
    for (table, _) in files {
        exec(&mut client, &table.add_primary_key())?;
    }
    for (table, _) in files {
        for fk in table.add_foreign_keys() {
            exec(&mut client, &fk)?;
        }
        exec(&mut client, &format!("VACUUM ANALYZE {}", table.name))?;
    }
    exec(&mut client, "CHECKPOINT")?;
    let load_ms = started.elapsed().as_secs_f64() * 1000.0;
    exec(&mut client, &format!("SET statement_timeout = '{}s'", s.timeout_s))?;
    let queries = items
        .iter()
        .zip(&texts)
        .map(|(item, sql)| {
            timed(s, &item.label, || match client.simple_query(sql) {
                Ok(messages) => RunEnd::Answered(
                    messages
                        .iter()
                        .filter_map(|m| match m {
                            postgres::SimpleQueryMessage::Row(row) => {
                                Some((0..row.len()).map(|i| row.get(i).map_or(Cell::Null, Cell::from_text)).collect())
                            }
                            _ => None,
                        })
                        .collect(),
                ),
                Err(e) if e.as_db_error().is_some_and(|d| d.code().code() == "57014") => RunEnd::Cancelled,
                Err(e) => RunEnd::Failed(pg_error(&item.label, &e)),
            })
        })
        .collect();
    let settings = format!(
        "max_parallel_workers_per_gather 0, {}, work_mem 1GB, jit off, locale C",
        shared_buffers.replace('=', " ")
    );
    Ok((version, settings, load_ms, queries))
}

fn exec(client: &mut postgres::Client, sql: &str) -> std::result::Result<(), String> {
    client.batch_execute(sql).map_err(|e| pg_error(sql, &e))
}

/// What PostgreSQL said about `what`.
fn pg_error(what: &str, e: &postgres::Error) -> String {
    let what: String = what.chars().take(60).collect();
    match e.as_db_error() {
        Some(db) => format!("{what}: {}: {}", db.code().code(), db.message()),
        None => format!("{what}: {e}"),
    }
}

fn sqlite(dir: &Path, files: &[(&'static Table, PathBuf)], items: &[Item], s: &PeerSettings) -> Outcome {
    let texts = texts(items, Dialect::Sqlite, s.sf)?;
    let path = dir.join("tpch.sqlite");
    let _ = std::fs::remove_file(&path);
    let mut conn = rusqlite::Connection::open(&path).map_err(|e| e.to_string())?;
    let cache_kib = (s.memory_bytes >> 10).max(1 << 16);
    conn.execute_batch(&format!(
        "PRAGMA cache_size = -{cache_kib}; PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF"
    ))
    .map_err(|e| e.to_string())?;
    let started = Instant::now();
    let tx = conn.transaction().map_err(|e| e.to_string())?;
    for (table, path) in files {
        tx.execute_batch(&table.create(Dialect::Sqlite, true)).map_err(|e| format!("{}: {e}", table.name))?;
        let marks = (1..=table.columns.len()).map(|i| format!("?{i}")).collect::<Vec<_>>().join(", ");
        let mut insert =
            tx.prepare(&format!("INSERT INTO {} VALUES ({marks})", table.name)).map_err(|e| e.to_string())?;
        let file = std::fs::File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
        for (n, line) in std::io::BufReader::with_capacity(1 << 20, file).lines().enumerate() {
            let line = line.map_err(|e| format!("{}: {e}", path.display()))?;
            let values = line
                .split('|')
                .zip(table.columns)
                .map(|(field, column)| sqlite_value(field, column.kind))
                .collect::<std::result::Result<Vec<_>, String>>()
                .map_err(|e| format!("{} line {}: {e}", path.display(), n + 1))?;
            insert.execute(rusqlite::params_from_iter(values)).map_err(|e| e.to_string())?;
        }
    }
    tx.commit().map_err(|e| e.to_string())?;
    conn.execute_batch("ANALYZE").map_err(|e| e.to_string())?;
    let load_ms = started.elapsed().as_secs_f64() * 1000.0;
    let interrupt = std::sync::Arc::new(conn.get_interrupt_handle());
    let limit = Duration::from_secs(s.timeout_s);
    let queries = items
        .iter()
        .zip(&texts)
        .map(|(item, sql)| {
            timed(s, &item.label, || {
                let (done, wait) = std::sync::mpsc::channel::<()>();
                let handle = interrupt.clone();
                let cancelled = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
                let flag = cancelled.clone();
                let watchdog = std::thread::spawn(move || {
                    if wait.recv_timeout(limit).is_err() {
                        flag.store(true, std::sync::atomic::Ordering::SeqCst);
                        handle.interrupt();
                    }
                });
                let answer = sqlite_query(&conn, sql);
                let _ = done.send(());
                let _ = watchdog.join();
                match answer {
                    Ok(answer) => RunEnd::Answered(answer),
                    Err(_) if cancelled.load(std::sync::atomic::Ordering::SeqCst) => RunEnd::Cancelled,
                    Err(e) => RunEnd::Failed(format!("{}: {e}", item.label)),
                }
            })
        })
        .collect();
    drop(conn);
    let _ = std::fs::remove_file(&path);
    let settings = format!("cache_size {} MiB, one thread, foreign keys not enforced", cache_kib >> 10);
    Ok((rusqlite::version().to_owned(), settings, load_ms, queries))
}

/// A field of a .tbl line as SQLite stores a column of `kind`.
fn sqlite_value(field: &str, kind: Kind) -> std::result::Result<rusqlite::types::Value, String> {
    use rusqlite::types::Value;
    Ok(match kind {
        Kind::Key | Kind::Int => Value::Integer(field.parse().map_err(|e| format!("{field}: {e}"))?),
        Kind::Decimal => Value::Real(field.parse().map_err(|e| format!("{field}: {e}"))?),
        Kind::Char(_) | Kind::Varchar(_) | Kind::Date => Value::Text(field.to_owned()),
    })
}

fn sqlite_query(conn: &rusqlite::Connection, sql: &str) -> rusqlite::Result<Answer> {
    let mut statement = conn.prepare(sql)?;
    let columns = statement.column_count();
    let rows = statement.query_map([], |row| {
        (0..columns)
            .map(|i| {
                Ok(match row.get::<_, rusqlite::types::Value>(i)? {
                    rusqlite::types::Value::Null => Cell::Null,
                    rusqlite::types::Value::Integer(n) => Cell::Number(n as f64),
                    rusqlite::types::Value::Real(f) => Cell::Number(f),
                    rusqlite::types::Value::Text(t) => Cell::from_text(&t),
                    rusqlite::types::Value::Blob(b) => Cell::Text(format!("{b:?}")),
                })
            })
            .collect()
    })?;
    rows.collect()
}

/// The Python program that times DuckDB's queries once it has loaded
/// ([`super::peers::duckdb_child`]): writes its version, load time and each query's runs
/// and answer as JSON; a query runs under a timer that interrupts it at its limit.
const DUCKDB_PROGRAM: &str = r#"
out = []
for sql in task["queries"]:
    q = {"elapsed_ms": [], "timed_out": False, "error": None, "answer": None}
    for run in range(task["repeat"] + 1):
        timer = threading.Timer(task["timeout_s"], con.interrupt)
        timer.start()
        started = time.perf_counter()
        try:
            rows = con.execute(sql).fetchall()
        except duckdb.InterruptException:
            q["timed_out"] = True
            break
        except Exception as e:
            q["error"] = (str(e).splitlines() or [repr(e)])[0]
            break
        finally:
            timer.cancel()
        ms = (time.perf_counter() - started) * 1000
        if run > 0:
            q["elapsed_ms"].append(ms)
        if q["answer"] is None:
            q["answer"] = [[None if v is None else str(v) for v in row] for row in rows]
    out.append(q)
print(json.dumps({"version": duckdb.__version__, "load_ms": load_ms, "queries": out}))
"#;

fn duckdb(dir: &Path, files: &[(&'static Table, PathBuf)], items: &[Item], s: &PeerSettings) -> Outcome {
    let texts = texts(items, Dialect::DuckDb, s.sf)?;
    let db = dir.join("tpch.duckdb");
    let _ = std::fs::remove_file(&db);
    let mut setup: Vec<String> = Vec::new();
    for (table, path) in files {
        setup.push(table.create(Dialect::DuckDb, true));
        setup.push(format!("COPY {} FROM '{}' (DELIMITER '|', HEADER false, QUOTE '')", table.name, path.display()));
    }
    setup.push("ANALYZE".into());
    let task = serde_json::json!({
        "db": db.display().to_string(),
        "setup": setup,
        "queries": texts,
        "repeat": s.repeat,
        "timeout_s": s.timeout_s,
    });
    let result = super::peers::duckdb_child(DUCKDB_PROGRAM, &task, &db)?;
    let version = result["version"].as_str().unwrap_or("").to_owned();
    let load_ms = result["load_ms"].as_f64().ok_or("no load_ms in DuckDB's answer")?;
    let queries: Vec<PeerQuery> = result["queries"]
        .as_array()
        .ok_or("no queries in DuckDB's answer")?
        .iter()
        .zip(items)
        .map(|(q, item)| {
            let query = PeerQuery {
                elapsed_ms: q["elapsed_ms"].as_array().into_iter().flatten().filter_map(|v| v.as_f64()).collect(),
                timed_out: q["timed_out"].as_bool().unwrap_or(false),
                limit_ms: s.timeout_s as f64 * 1000.0,
                error: q["error"].as_str().map(str::to_owned),
                answer: q["answer"].as_array().map(|rows| {
                    rows.iter()
                        .map(|row| {
                            row.as_array()
                                .into_iter()
                                .flatten()
                                .map(|v| v.as_str().map_or(Cell::Null, Cell::from_text))
                                .collect()
                        })
                        .collect()
                }),
            };
            println!("    {}: {}", item.label, query.cell());
            query
        })
        .collect();
    if queries.len() != items.len() {
        return Err(format!("DuckDB answered {} of {} queries", queries.len(), items.len()));
    }
    Ok((version, "threads 1, through its Python package".to_owned(), load_ms, queries))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn peers_are_named_as_the_option_takes_them() {
        let list = |names: &[&str]| names.iter().map(|n| n.to_string()).collect::<Vec<_>>();
        assert_eq!(names(&list(&["postgres", "SQLite", "duckdb"])).unwrap(), ["PostgreSQL", "SQLite", "DuckDB"]);
        assert!(names(&list(&["oracle"])).unwrap_err().to_string().contains("oracle"));
    }

    #[test]
    fn a_cancelled_query_counts_at_its_limit_and_a_failed_one_not_at_all() {
        let s = PeerSettings { sf: 0.01, repeat: 2, timeout_s: 5, memory_bytes: 0 };
        let mut n = 0;
        let q = timed(&s, "Q1", || {
            n += 1;
            RunEnd::Answered(vec![vec![Cell::Number(n as f64)]])
        });
        assert_eq!((q.elapsed_ms.len(), n), (2, 3), "a warm run, then two timed");
        assert_eq!(q.answer, Some(vec![vec![Cell::Number(1.0)]]));
        let q = timed(&s, "Q2", || RunEnd::Cancelled);
        assert_eq!((q.timed_out, q.time_ms()), (true, Some(5000.0)));
        assert!(q.cell().contains("cancelled"));
        let q = timed(&s, "Q3", || RunEnd::Failed("no such function".into()));
        assert_eq!(q.time_ms(), None);
        assert!(q.cell().contains("no such function"));
    }
}
