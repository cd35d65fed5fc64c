//! `lioscope sqllogictest`: runs files in SQLite's sqllogictest format (the public
//! corpus of SQL engine tests) against lioscope, each file on a fresh database in a
//! temporary directory, and counts per file the records run, passed, failed and skipped.
//!
//! The `sqllogictest` crate parses the files and checks each record (statement or query:
//! sort modes, `hash-threshold` and MD5-hashed results, `skipif` / `onlyif`);
//! [`LioscopeDb`] is its `DB`: it runs one statement on a lioscope session and renders
//! the rows as the corpus does. Records are run one at a time, so that a failure is
//! counted and the file goes on.
//!
//! Conventions of the corpus, and what lioscope does with them:
//! - `skipif NAME` / `onlyif NAME`: lioscope's name is [`ENGINE_NAME`]; records only for
//!   another engine (`onlyif mysql`) are skipped and counted as such, records skipped for
//!   another engine (`skipif mysql`) run.
//! - Values are rendered by the column type the record expects (`I`, `R`, `T`), as the
//!   reference runner renders them: an integer as `%d`, a number in an `R` column as
//!   `%.3f`, NULL as `NULL`, an empty string as `(empty)`, control and non-ASCII
//!   characters as `@`. lioscope's NUMBER covers both integers and reals, so a whole number
//!   in an `R` column is shown `1.000`; but a fraction in an `I` column is shown as the
//!   fraction (SQLite's integer division truncates, Oracle's division does not), so that
//!   the difference is seen, and counted among Oracle's semantics, not hidden.
//! - The column types lioscope reports are read from the values (`T` for text and dates,
//!   `R` for a fraction, `I` for whole numbers); they are not compared with the record's,
//!   since one NUMBER holds what SQLite types as INTEGER or REAL.
//!
//! Failures are grouped by reason for the summary: a construct lioscope does not support
//! (by construct), another error (by message, with names and numbers left out), a wrong
//! result, and the differences that come from Oracle's semantics where they can be told
//! apart (division that gives a fraction, division by zero as an error). A different
//! answer of a query that divides, all its values whole, is counted apart, under a name
//! that says so: Oracle's `-99 / 7 * 14` is -198 where SQLite's is -196, and a WHERE
//! clause that divides keeps other rows. It is listed, not taken for Oracle's
//! semantics, since the runner cannot tell that division alone made the difference.

use lioscope::types::Datum;
use lioscope::{Database, DatabaseOptions, Session, StatementKind};
use sqllogictest::{
    Condition, DBOutput, DefaultColumnType, Normalizer, QueryExpect, Record, Runner, TestError, TestErrorKind,
    parse_with_name,
};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// The name `skipif` and `onlyif` records match.
pub const ENGINE_NAME: &str = "lioscope";

/// Results of more values than this are compared by their MD5 hash, as the corpus was
/// made (its files list at most 8 values and hash the larger results; a file may say
/// otherwise with a `hash-threshold` record).
pub const HASH_THRESHOLD: usize = 8;

/// What the runner tells the database about the query it is about to run, and what the
/// database noticed while rendering its rows.
#[derive(Debug, Default)]
struct QueryShape {
    /// The column types the record expects (empty for a statement).
    expected: Vec<DefaultColumnType>,
    /// A value with a fraction was rendered in an `I` column.
    fraction_in_integer_column: bool,
}

/// A fresh lioscope database in a temporary directory, and one session on it: the
/// `DB` the `sqllogictest` crate's runner drives.
pub struct LioscopeDb {
    // Fields drop in order: the session before its database, the database before its
    // directory is removed.
    session: Session,
    _db: Database,
    _dir: tempfile::TempDir,
    shape: Arc<Mutex<QueryShape>>,
}

impl LioscopeDb {
    fn create(shape: Arc<Mutex<QueryShape>>) -> lioscope::Result<LioscopeDb> {
        let dir = tempfile::Builder::new()
            .prefix("lioscope-slt-")
            .tempdir()
            .map_err(|e| lioscope::Error::io("create", std::env::temp_dir(), e))?;
        let db = Database::create(dir.path(), DatabaseOptions::default())?;
        Ok(LioscopeDb { session: db.session(), _db: db, _dir: dir, shape })
    }
}

impl sqllogictest::DB for LioscopeDb {
    type Error = lioscope::Error;
    type ColumnType = DefaultColumnType;

    fn run(&mut self, sql: &str) -> Result<DBOutput<DefaultColumnType>, lioscope::Error> {
        let result = self.session.execute(sql)?;
        if result.kind != StatementKind::Query {
            return Ok(DBOutput::StatementComplete(result.rows_affected));
        }
        let mut shape = self.shape.lock().unwrap_or_else(|p| p.into_inner());
        let QueryShape { expected, fraction_in_integer_column } = &mut *shape;
        let width = result.columns.len();
        let rows = result
            .rows
            .iter()
            .map(|row| {
                row.iter().enumerate().map(|(i, v)| render(v, expected.get(i), fraction_in_integer_column)).collect()
            })
            .collect();
        let types = (0..width).map(|i| column_type(result.rows.iter().map(|r| &r[i]))).collect();
        Ok(DBOutput::Rows { types, rows })
    }

    fn engine_name(&self) -> &str {
        ENGINE_NAME
    }
}

/// A value as the reference runner prints it for a column of type `expected`.
fn render(value: &Datum<'_>, expected: Option<&DefaultColumnType>, fraction_in_integer: &mut bool) -> String {
    let real = expected == Some(&DefaultColumnType::FloatingPoint);
    match value {
        Datum::Null => "NULL".into(),
        Datum::Int(i) if real => format!("{:.3}", *i as f64),
        Datum::Int(i) => i.to_string(),
        Datum::Num(d) if real => format!("{:.3}", d.to_string().parse::<f64>().unwrap_or(f64::NAN)),
        Datum::Num(d) => {
            if expected == Some(&DefaultColumnType::Integer) && !d.fract().is_zero() {
                *fraction_in_integer = true;
            }
            d.normalize().to_string()
        }
        Datum::Str(s) if s.is_empty() => "(empty)".into(),
        Datum::Str(s) => s.chars().map(|c| if (' '..='~').contains(&c) { c } else { '@' }).collect(),
        Datum::Date(_) | Datum::Timestamp(_) | Datum::YearMonth(_) | Datum::DaySecond(_) => value.to_string(),
    }
}

/// The type of a result column, read from its values.
fn column_type<'a>(values: impl Iterator<Item = &'a Datum<'static>>) -> DefaultColumnType {
    let mut kind = DefaultColumnType::Integer;
    for v in values {
        match v {
            Datum::Str(_) | Datum::Date(_) | Datum::Timestamp(_) | Datum::YearMonth(_) | Datum::DaySecond(_) => {
                return DefaultColumnType::Text;
            }
            Datum::Num(d) if !d.fract().is_zero() => kind = DefaultColumnType::FloatingPoint,
            _ => {}
        }
    }
    kind
}

/// Whether a query's rows are its expected results: the corpus lists one value a line
/// (SQLite's format); a line of a row's values separated by blanks (the `sqllogictest`
/// crate's own format) is accepted too.
fn values_match(normalizer: Normalizer, actual: &[Vec<String>], expected: &[String]) -> bool {
    let expected: Vec<String> = expected.iter().map(normalizer).collect();
    let values: Vec<String> = actual.iter().flatten().map(normalizer).collect();
    let rows: Vec<String> = actual.iter().map(|r| r.iter().map(normalizer).collect::<Vec<_>>().join(" ")).collect();
    values == expected || rows == expected
}

/// Whether `conditions` leave a record out for lioscope.
fn skipped(conditions: &[Condition]) -> bool {
    conditions.iter().any(|c| match c {
        Condition::OnlyIf { label } => label != ENGINE_NAME,
        Condition::SkipIf { label } => label == ENGINE_NAME,
    })
}

/// One record that failed.
#[derive(Debug, Clone)]
pub struct Failure {
    /// `file:line` of the record.
    pub location: String,
    pub sql: String,
    /// What went wrong, as the runner reports it.
    pub why: String,
    /// The group the failure is counted in.
    pub reason: String,
}

/// The counts of one file. A file that could not be read or parsed has `error` set.
#[derive(Debug, Clone, Default)]
pub struct FileOutcome {
    pub path: PathBuf,
    pub run: usize,
    pub passed: usize,
    pub failed: usize,
    pub skipped: usize,
    pub failures: Vec<Failure>,
    pub error: Option<String>,
}

/// Runs one file on a fresh database: every statement and query record whose conditions
/// do not leave it out, each counted as passed or failed; a `halt` record ends the file.
pub fn run_file(path: &Path) -> FileOutcome {
    let mut outcome = FileOutcome { path: path.to_owned(), ..Default::default() };
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) => {
            outcome.error = Some(format!("cannot read: {e}"));
            return outcome;
        }
    };
    let text = corpus_text(&text);
    let records = match parse_with_name::<DefaultColumnType>(&text, path.display().to_string()) {
        Ok(records) => records,
        Err(e) => {
            outcome.error = Some(format!("cannot parse: {e}"));
            return outcome;
        }
    };
    let shape = Arc::new(Mutex::new(QueryShape::default()));
    // The database is made when the first record needs it: one per file.
    let for_db = shape.clone();
    let mut runner = Runner::new(move || {
        let shape = for_db.clone();
        async move { LioscopeDb::create(shape) }
    });
    runner.with_hash_threshold(HASH_THRESHOLD);
    runner.with_validator(values_match);
    for record in records {
        let (conditions, sql, expected) = match &record {
            Record::Statement { conditions, sql, .. } => (conditions, sql.clone(), Vec::new()),
            Record::Query { conditions, sql, expected, .. } => {
                let types = match expected {
                    QueryExpect::Results { types, .. } => types.clone(),
                    QueryExpect::Error(_) => Vec::new(),
                };
                (conditions, sql.clone(), types)
            }
            Record::Halt { .. } => break,
            _ => {
                // hash-threshold and other control records: they change the runner only.
                let _ = runner.run(record);
                continue;
            }
        };
        if skipped(conditions) {
            outcome.skipped += 1;
            continue;
        }
        *shape.lock().unwrap_or_else(|p| p.into_inner()) = QueryShape { expected, fraction_in_integer_column: false };
        outcome.run += 1;
        let result = catch_unwind(AssertUnwindSafe(|| runner.run(record)));
        let fraction = shape.lock().unwrap_or_else(|p| p.into_inner()).fraction_in_integer_column;
        match result {
            Ok(Ok(_)) => outcome.passed += 1,
            Ok(Err(e)) => {
                outcome.failed += 1;
                outcome.failures.push(failure(&e, sql, fraction));
            }
            Err(panic) => {
                outcome.failed += 1;
                let message = panic
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                    .unwrap_or_default();
                outcome.failures.push(Failure {
                    location: String::new(),
                    why: format!("panic: {message}\n[SQL] {sql}"),
                    sql,
                    reason: "panic (a bug)".into(),
                });
            }
        }
    }
    outcome
}

/// The corpus's text as the `sqllogictest` crate reads it: lines ended by LF (some files
/// end theirs with CR LF), and `skipif` / `onlyif` lines cut to their two words (the
/// corpus follows some with a `# reason`, which SQLite's runner ignores).
fn corpus_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    // The conditions read since the last record: a `halt` under conditions that leave
    // lioscope out (`onlyif mssql`) is dropped with them, as the corpus means it (the
    // parser would take the conditions for the next record and halt every engine).
    let mut pending: Vec<Condition> = Vec::new();
    for line in text.lines() {
        let words: Vec<&str> = line.split_whitespace().collect();
        match words.as_slice() {
            [kind @ ("skipif" | "onlyif"), label, ..] => {
                let _ = writeln!(out, "{kind} {label}");
                let label = (*label).to_owned();
                pending.push(if *kind == "onlyif" { Condition::OnlyIf { label } } else { Condition::SkipIf { label } });
            }
            ["halt"] if skipped(&pending) => {
                // Take the conditions back out with the halt.
                for _ in pending.drain(..) {
                    let cut = out[..out.len() - 1].rfind('\n').map_or(0, |i| i + 1);
                    out.truncate(cut);
                }
            }
            _ => {
                if !words.is_empty() {
                    pending.clear();
                }
                out.push_str(line);
                out.push('\n');
            }
        }
    }
    out
}

fn failure(e: &TestError, sql: String, fraction_in_integer_column: bool) -> Failure {
    let kind = e.kind();
    let reason = match &kind {
        TestErrorKind::Fail { err, .. } | TestErrorKind::ErrorMismatch { err, .. } => {
            match err.downcast_ref::<lioscope::Error>() {
                Some(lioscope::Error::Unsupported { construct, .. }) => {
                    format!("not supported: {}", construct_group(construct))
                }
                Some(lioscope::Error::InvalidValue { message, .. }) if message.contains("divisor is equal to zero") => {
                    "Oracle semantics: division by zero is an error (SQLite gives NULL)".into()
                }
                Some(other) => format!("error: {}", error_group(&other.to_string())),
                None => format!("error: {}", error_group(&err.to_string())),
            }
        }
        TestErrorKind::QueryResultMismatch { .. } if fraction_in_integer_column => {
            "Oracle semantics: division gives a fraction (SQLite truncates integer division)".into()
        }
        TestErrorKind::QueryResultMismatch { .. } if divides(&sql) => {
            "different result of a query that divides (whole values; SQLite truncates integer division)".into()
        }
        TestErrorKind::QueryResultMismatch { .. } => "wrong result".into(),
        TestErrorKind::Ok { .. } => "succeeded where an error was expected".into(),
        TestErrorKind::StatementResultMismatch { .. } => "wrong count of rows affected".into(),
        other => format!("{}", other).lines().next().unwrap_or_default().to_owned(),
    };
    Failure { location: e.location().to_string(), sql, why: kind.to_string(), reason }
}

/// Whether `sql` divides: a `/` outside string literals and comments.
fn divides(sql: &str) -> bool {
    let mut rest = sql;
    while let Some(at) = rest.find(['/', '\'']) {
        let tail = &rest[at..];
        if let Some(literal) = tail.strip_prefix('\'') {
            // Past the literal (a doubled quote inside it is two literals' worth).
            match literal.find('\'') {
                Some(end) => rest = &literal[end + 1..],
                None => return false,
            }
        } else if tail.starts_with("/*") {
            match tail.find("*/") {
                Some(end) => rest = &tail[end + 2..],
                None => return false,
            }
        } else {
            return true;
        }
    }
    false
}

/// What an unsupported construct is, so that failures group by what is missing
/// ("scalar subquery", "joins") rather than by the whole expression.
fn construct_group(construct: &str) -> String {
    let c = construct.trim();
    if let Some(e) = c.strip_prefix("expression ") {
        return match e {
            _ if e.starts_with("(SELECT") => "scalar subquery".into(),
            _ if e.starts_with("EXISTS") => "EXISTS subquery".into(),
            _ if e.contains("(SELECT") => "subquery in an expression".into(),
            _ => format!("expression {}", e.split(|ch: char| !ch.is_alphanumeric() && ch != '_').next().unwrap_or(e)),
        };
    }
    if c.starts_with("query form") {
        let compound = ["UNION", "EXCEPT", "INTERSECT"].iter().any(|k| c.contains(k));
        return if compound { "compound query (UNION, EXCEPT, INTERSECT)".into() } else { "query form".into() };
    }
    if c.starts_with("index column") && c.contains("DESC") {
        return "descending index column".into();
    }
    if c.starts_with("more than one table in FROM") {
        return "joins (more than one table in FROM)".into();
    }
    c.split_whitespace().take(4).collect::<Vec<_>>().join(" ")
}

/// An error message with its position, quoted names and numbers left out, so that like
/// errors group.
fn error_group(message: &str) -> String {
    let message = message.split(" at line ").next().unwrap_or(message);
    let mut out = String::new();
    let mut quoted = None;
    for c in message.chars() {
        match quoted {
            Some(q) if c == q => {
                quoted = None;
                out.push_str("...");
            }
            Some(_) => {}
            None if c == '"' || c == '\'' => quoted = Some(c),
            None if c.is_ascii_digit() => {
                if !out.ends_with('N') {
                    out.push('N');
                }
            }
            None => out.push(c),
        }
    }
    out.chars().take(100).collect()
}

/// The `.test` files of `paths`: files as given, directories searched recursively, in
/// name order.
pub fn test_files(paths: &[PathBuf]) -> lioscope::Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for path in paths {
        if path.is_dir() {
            collect(path, &mut files)?;
        } else if path.is_file() {
            files.push(path.clone());
        } else {
            return Err(lioscope::Error::InvalidParameter {
                name: "sqllogictest".into(),
                message: format!("{} is neither a file nor a directory", path.display()),
            });
        }
    }
    Ok(files)
}

fn collect(dir: &Path, files: &mut Vec<PathBuf>) -> lioscope::Result<()> {
    let mut entries = std::fs::read_dir(dir)
        .and_then(|d| d.map(|e| e.map(|e| e.path())).collect::<std::io::Result<Vec<_>>>())
        .map_err(|e| lioscope::Error::io("read", dir, e))?;
    entries.sort();
    for path in entries {
        if path.is_dir() {
            collect(&path, files)?;
        } else if path.extension().is_some_and(|x| x == "test") {
            files.push(path);
        }
    }
    Ok(())
}

/// The report of a run: a line per file, the total, the failures grouped by reason, and
/// with `verbose` each failure's location and why (the runner's explanation, with the
/// record's SQL).
pub fn report(outcomes: &[FileOutcome], verbose: bool) -> String {
    let mut out = String::new();
    let mut total = FileOutcome::default();
    let mut reasons: BTreeMap<&str, usize> = BTreeMap::new();
    for o in outcomes {
        let _ = writeln!(out, "{}", file_line(o));
        total.run += o.run;
        total.passed += o.passed;
        total.failed += o.failed;
        total.skipped += o.skipped;
        for f in &o.failures {
            *reasons.entry(&f.reason).or_default() += 1;
            if verbose {
                // The runner's explanation ends with the record's SQL.
                let _ = writeln!(out, "  FAILED {}\n    {}", f.location, f.why.replace('\n', "\n    "));
            }
        }
    }
    let unreadable = outcomes.iter().filter(|o| o.error.is_some()).count();
    let _ = writeln!(out, "total ({} files, {unreadable} unreadable): {}", outcomes.len(), counts(&total));
    let mut by_count: Vec<_> = reasons.into_iter().collect();
    by_count.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    if !by_count.is_empty() {
        let _ = writeln!(out, "failures by reason:");
        for (reason, n) in by_count {
            let _ = writeln!(out, "  {n:>7}  {reason}");
        }
    }
    out
}

/// The line a file's outcome is reported on.
pub fn file_line(o: &FileOutcome) -> String {
    match &o.error {
        Some(e) => format!("{}: {e}", o.path.display()),
        None => format!("{}: {}", o.path.display(), counts(o)),
    }
}

fn counts(o: &FileOutcome) -> String {
    format!("{} records run, {} passed, {} failed, {} skipped", o.run, o.passed, o.failed, o.skipped)
}

#[cfg(test)]
mod tests {
    use super::divides;

    #[test]
    fn a_slash_divides_only_outside_literals_and_comments() {
        assert!(divides("SELECT a / 2 FROM t"));
        assert!(divides("SELECT 'x/y', a/b FROM t"));
        assert!(!divides("SELECT 'x/y' FROM t"));
        assert!(!divides("SELECT /*+ FULL(t) */ a FROM t"));
        assert!(!divides("SELECT a FROM t WHERE b = 'it''s / here'"));
        assert!(!divides("SELECT a FROM t"));
    }
}
