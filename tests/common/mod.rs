//! Helpers shared by the engine's integration tests: the workspace's test helpers
//! (`lioscope-testkit`), the bank of the durability and fault tests, and the short ways
//! the SQL tests read plans, statistics, work areas, temporary files and errors.
#![allow(dead_code, reason = "every test file compiles this module and uses only part of it")]

pub mod bank;
pub mod sqlite;

pub use lioscope_testkit::*;

use lioscope::{Database, Session};
use std::path::{Path, PathBuf};
use tempfile::TempDir;

/// A database of 8K blocks and a 4M cache in a temporary directory.
pub fn db() -> (TempDir, PathBuf, Database) {
    temp_db(options(8192, "4M"))
}

/// The message of a statement that must fail.
pub fn error(s: &Session, sql: &str) -> String {
    fail(s, sql).to_string()
}

/// The rows of a query, each as its values' text joined by `|`, in the order they came.
pub fn lines(s: &Session, sql: &str) -> Vec<String> {
    rows(s, sql).iter().map(|r| r.iter().map(|v| v.to_string()).collect::<Vec<_>>().join("|")).collect()
}

/// The session's value of statistic `name` (`v$mystat`).
pub fn mystat(s: &Session, name: &str) -> i64 {
    int(s, &format!("SELECT value FROM v$mystat WHERE name = '{name}'"))
}

/// The plan of `sql` as EXPLAIN PLAN prints it, one line per row.
pub fn plan(s: &Session, sql: &str) -> String {
    rows(s, &format!("EXPLAIN PLAN FOR {sql}")).iter().map(|r| r[0].to_string()).collect::<Vec<_>>().join("\n")
}

/// The lines of EXPLAIN ANALYZE of `sql`, each as its rows and its operation and object
/// (`"3 VIEW Q"`), and with `starts` how often it ran (`"3 SORT AGGREGATE x3"`).
pub fn analyzed_lines(s: &Session, sql: &str, starts: bool) -> Vec<String> {
    rows(s, &format!("EXPLAIN ANALYZE {sql}"))
        .iter()
        .map(|r| r[0].to_string())
        .filter(|l| l.contains("cr="))
        .map(|l| {
            let (rows, rest) = l.trim_start().split_once(' ').expect("a line starts with its rows");
            let line = format!("{rows} {}", rest.split(" (").next().unwrap_or_default().trim());
            if !starts {
                return line;
            }
            let ran = rest.split_once("starts=").map_or("1", |(_, n)| n.split(' ').next().unwrap_or_default());
            format!("{line} x{ran}")
        })
        .collect()
}

/// The temporary files (`*.tmp`: a hash join's spilled partitions, a sort's runs) in
/// database directory `dir`.
pub fn temp_files(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tmp"))
        .collect()
}

/// A query of `columns` of `v$sql_workarea` for the statement whose text holds `text`.
pub fn workarea_of(columns: &str, text: &str) -> String {
    format!(
        "SELECT {columns} FROM v$sql_workarea w JOIN v$sql q ON q.sql_id = w.sql_id \
         WHERE q.sql_text LIKE '%{text}%' AND q.sql_text NOT LIKE '%v$sql%'"
    )
}
