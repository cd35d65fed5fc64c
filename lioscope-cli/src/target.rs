//! What the runner runs statements in: an embedded session ([`Session`]), or a session of
//! a `lioscope serve` reached over PostgreSQL's protocol ([`Remote`], `lioscope shell
//! --connect postgres://...`), so that two terminals can watch each other's sessions.
//!
//! Over a connection:
//! - statements go as PostgreSQL's simple query (each its own message); a query is
//!   described first, so numbers arrive as numbers;
//! - SQL*Plus's transactions are kept: with AUTOCOMMIT off (the default) the first
//!   statement after COMMIT or ROLLBACK opens a transaction block (`BEGIN`), which
//!   COMMIT, ROLLBACK or the end of the run closes;
//! - AUTOTRACE's statistics are read from `v$mystat` and `v$sess_time_model` before and
//!   after each statement (the user needs SELECT ANY DICTIONARY, as Oracle's PLUSTRACE
//!   role gives), so they include the reading query itself; the plan is `EXPLAIN PLAN`'s;
//!   the row-source statistics and the performance counters are the embedded session's
//!   only, and refused by name;
//! - bind variables (VARIABLE, EXEC, PRINT) are the embedded session's only, refused by
//!   name.
//!
//! Invariant: a server's error reaches the user with its text (`ORA-nnnnn: ...`) and the
//! server's address; nothing of a failed statement is retried.

use super::variables::BindVariables;
use lioscope::stats::Stat;
use lioscope::stats::TimeModel;
use lioscope::stats::hwcounters::Reading;
use lioscope::types::{Datum, Value};
use lioscope::{Error, QueryResult, Result, Session, StatementKind};
use std::cell::{Cell, RefCell};

/// A session's counters at one moment: its statistics by `Stat` index, its CPU and
/// elapsed time (µs), and its performance counters when they are on.
pub struct Counters {
    pub stats: Vec<u64>,
    pub cpu_us: u64,
    pub elapsed_us: u64,
    pub hardware: Option<Reading>,
}

/// A session statements run in.
pub trait Target {
    /// Runs one statement from its text.
    fn execute(&self, sql: &str) -> Result<QueryResult>;
    /// Runs one statement with the values of the bind variables it names.
    fn execute_with(&self, sql: &str, variables: &BindVariables) -> Result<QueryResult>;
    /// The session's id (`v$session.SID`).
    fn sid(&self) -> Result<u32>;
    fn in_transaction(&self) -> bool;
    fn set_autocommit(&self, on: bool);
    /// The session's counters now.
    fn counters(&self) -> Result<Counters>;
    fn set_hardware_counters(&self, on: bool) -> Result<()>;
    /// Whether queries keep their row-source statistics (AUTOTRACE's plan statistics).
    fn set_plan_statistics(&self, on: bool);
}

impl Target for Session {
    fn execute(&self, sql: &str) -> Result<QueryResult> {
        Session::execute(self, sql)
    }

    fn execute_with(&self, sql: &str, variables: &BindVariables) -> Result<QueryResult> {
        let mut cursor = self.prepare(sql)?;
        let values = variables.values_for(cursor.bind_names())?;
        cursor.execute(&values)
    }

    fn sid(&self) -> Result<u32> {
        Ok(Session::sid(self))
    }

    fn in_transaction(&self) -> bool {
        Session::in_transaction(self)
    }

    fn set_autocommit(&self, on: bool) {
        Session::set_autocommit(self, on)
    }

    fn counters(&self) -> Result<Counters> {
        let stats = self.stats();
        Ok(Counters {
            stats: stats.snapshot(),
            cpu_us: stats.time(TimeModel::DbCpu),
            elapsed_us: stats.time(TimeModel::DbTime),
            hardware: self.hardware_counters(),
        })
    }

    fn set_hardware_counters(&self, on: bool) -> Result<()> {
        Session::set_hardware_counters(self, on);
        Ok(())
    }

    fn set_plan_statistics(&self, on: bool) {
        Session::set_plan_statistics(self, on)
    }
}

/// A session of a `lioscope serve`, over PostgreSQL's protocol.
pub struct Remote {
    client: RefCell<postgres::Client>,
    /// Where the server is, as errors name it.
    address: String,
    autocommit: Cell<bool>,
    /// Whether a transaction block is open.
    in_block: Cell<bool>,
    sid: Cell<Option<u32>>,
}

impl Remote {
    /// Connects to the server `url` names (`postgres://user:password@host:port/db`, or
    /// PostgreSQL's `key=value` form; the password from PGPASSWORD when the URL has
    /// none), in plain text.
    pub fn connect(url: &str) -> Result<Remote> {
        let config: postgres::Config = url
            .parse()
            .map_err(|e| Error::InvalidParameter { name: "connect".into(), message: format!("{url}: {e}") })?;
        let address = config
            .get_hosts()
            .iter()
            .zip(config.get_ports().iter().chain(std::iter::repeat(&5432)))
            .map(|(host, port)| match host {
                postgres::config::Host::Tcp(name) => format!("{name}:{port}"),
                postgres::config::Host::Unix(path) => path.display().to_string(),
            })
            .next()
            .unwrap_or_else(|| "localhost:5432".into());
        let mut config = config;
        if config.get_password().is_none()
            && let Some(password) = std::env::var_os("PGPASSWORD")
        {
            config.password(password.to_string_lossy().as_bytes());
        }
        if config.get_application_name().is_none() {
            config.application_name("lioscope shell");
        }
        let client = config.connect(postgres::NoTls).map_err(|e| server_error(&address, &e))?;
        Ok(Remote {
            client: RefCell::new(client),
            address,
            autocommit: Cell::new(false),
            in_block: Cell::new(false),
            sid: Cell::new(None),
        })
    }

    /// Where the server is.
    pub fn address(&self) -> &str {
        &self.address
    }

    /// A query's column types, numeric or not, as the server describes them.
    fn numeric_columns(&self, sql: &str) -> Result<Vec<bool>> {
        let statement = self.client.borrow_mut().prepare(sql).map_err(|e| server_error(&self.address, &e))?;
        Ok(statement
            .columns()
            .iter()
            .map(|c| {
                use postgres::types::Type;
                matches!(*c.type_(), Type::INT2 | Type::INT4 | Type::INT8 | Type::NUMERIC | Type::FLOAT4 | Type::FLOAT8)
            })
            .collect())
    }
}

/// A server's error with the server named: its message is lioscope's (`ORA-nnnnn: ...`).
fn server_error(address: &str, error: &postgres::Error) -> Error {
    let message = match error.as_db_error() {
        Some(db) => db.message().to_string(),
        None => error.to_string(),
    };
    Error::InvalidValue { context: address.to_string(), message }
}

/// The statement's first word, upper case.
fn first_word(sql: &str) -> String {
    sql.split_whitespace().next().unwrap_or("").trim_end_matches(';').to_ascii_uppercase()
}

/// What SQL*Plus prints after a statement without rows, from its words and row count.
fn message(sql: &str, rows: u64) -> (StatementKind, String) {
    let mut words = sql.split_whitespace().map(|w| w.trim_end_matches(';').to_ascii_uppercase());
    let first = words.next().unwrap_or_default();
    // The object's kind as SQL*Plus writes it: `Table`, `Index`.
    let object: String = words
        .next()
        .unwrap_or_default()
        .chars()
        .enumerate()
        .map(|(i, c)| if i == 0 { c } else { c.to_ascii_lowercase() })
        .collect();
    let counted = |verb: &str| if rows == 1 { format!("1 row {verb}.") } else { format!("{rows} rows {verb}.") };
    match first.as_str() {
        "INSERT" | "COPY" => (StatementKind::Insert, counted("created")),
        "UPDATE" => (StatementKind::Change, counted("updated")),
        "DELETE" => (StatementKind::Change, counted("deleted")),
        "MERGE" => (StatementKind::Change, counted("merged")),
        "COMMIT" | "END" => (StatementKind::Transaction, "Commit complete.".into()),
        "ROLLBACK" | "ABORT" => (StatementKind::Transaction, "Rollback complete.".into()),
        "SAVEPOINT" => (StatementKind::Transaction, "Savepoint created.".into()),
        "BEGIN" | "START" | "SET" => (StatementKind::Transaction, String::new()),
        "CREATE" => (StatementKind::Ddl, format!("{object} created.")),
        "DROP" => (StatementKind::Ddl, format!("{object} dropped.")),
        "TRUNCATE" => (StatementKind::Ddl, "Table truncated.".into()),
        "GRANT" => (StatementKind::Ddl, "Grant succeeded.".into()),
        "REVOKE" => (StatementKind::Ddl, "Revoke succeeded.".into()),
        "ALTER" => (StatementKind::Alter, format!("{object} altered.")),
        _ => (StatementKind::Ddl, "Statement processed.".into()),
    }
}

/// A value as the server sent it in text, a number where the column is numeric.
fn value(text: Option<&str>, numeric: bool) -> Value {
    match text {
        None | Some("") => Datum::Null,
        Some(text) if numeric => match text.parse::<i64>() {
            Ok(i) => Datum::Int(i),
            Err(_) => match text.parse::<rust_decimal::Decimal>() {
                Ok(d) => Datum::from_decimal(d),
                Err(_) => Datum::string(text.to_string()),
            },
        },
        Some(text) => Datum::string(text.to_string()),
    }
}

impl Target for Remote {
    fn execute(&self, sql: &str) -> Result<QueryResult> {
        let first = first_word(sql);
        let ends_block = matches!(first.as_str(), "COMMIT" | "END" | "ABORT")
            || (first == "ROLLBACK" && !sql.to_ascii_uppercase().contains(" TO "));
        let opens_block = matches!(first.as_str(), "BEGIN" | "START");
        if !self.autocommit.get() && !self.in_block.get() && !ends_block && !opens_block {
            self.client.borrow_mut().batch_execute("BEGIN").map_err(|e| server_error(&self.address, &e))?;
            self.in_block.set(true);
        }
        let numeric = match first.as_str() {
            "SELECT" | "WITH" => self.numeric_columns(sql)?,
            _ => Vec::new(),
        };
        let messages = self.client.borrow_mut().simple_query(sql).map_err(|e| server_error(&self.address, &e));
        if ends_block {
            self.in_block.set(false);
        } else if opens_block && messages.is_ok() {
            self.in_block.set(true);
        }
        let mut columns = None;
        let mut rows = Vec::new();
        let mut count = 0;
        for message in messages? {
            match message {
                postgres::SimpleQueryMessage::RowDescription(described) => {
                    columns = Some(described.iter().map(|c| c.name().to_ascii_uppercase()).collect::<Vec<_>>());
                }
                postgres::SimpleQueryMessage::Row(row) => {
                    let values = (0..row.len())
                        .map(|i| value(row.get(i), numeric.get(i).copied().unwrap_or(false)))
                        .collect::<Vec<_>>();
                    rows.push(values);
                }
                postgres::SimpleQueryMessage::CommandComplete(n) => count = n,
                _ => {}
            }
        }
        if let Some(columns) = columns {
            let kind = if first == "EXPLAIN" { StatementKind::Describe } else { StatementKind::Query };
            return Ok(QueryResult { kind, columns, rows, rows_affected: 0, message: None, plan_statistics: None });
        }
        let (kind, text) = message(sql, count);
        Ok(QueryResult {
            kind,
            columns: Vec::new(),
            rows: Vec::new(),
            rows_affected: count,
            message: (!text.is_empty()).then_some(text),
            plan_statistics: None,
        })
    }

    fn execute_with(&self, _sql: &str, _variables: &BindVariables) -> Result<QueryResult> {
        Err(Error::Unsupported {
            construct:
                "bind variables over a connection (VARIABLE, EXEC, PRINT need an embedded session: lioscope shell DIR)"
                    .into(),
            position: None,
        })
    }

    fn sid(&self) -> Result<u32> {
        if let Some(sid) = self.sid.get() {
            return Ok(sid);
        }
        let result = self.execute("SELECT sid FROM v$mystat WHERE ROWNUM <= 1")?;
        let sid = match result.rows.first().and_then(|r| r.first()) {
            Some(Datum::Int(sid)) => u32::try_from(*sid).ok(),
            _ => None,
        }
        .ok_or_else(|| Error::InvalidValue { context: self.address.clone(), message: "v$mystat gave no SID".into() })?;
        self.sid.set(Some(sid));
        Ok(sid)
    }

    fn in_transaction(&self) -> bool {
        self.in_block.get()
    }

    fn set_autocommit(&self, on: bool) {
        self.autocommit.set(on);
    }

    fn counters(&self) -> Result<Counters> {
        let mut stats = vec![0; Stat::ALL.len()];
        for row in self.execute("SELECT statistic#, value FROM v$mystat")?.rows {
            if let [Datum::Int(number), Datum::Int(value)] = row.as_slice()
                && let Some(slot) = usize::try_from(*number).ok().and_then(|n| stats.get_mut(n))
            {
                *slot = u64::try_from(*value).unwrap_or(0);
            }
        }
        let sid = self.sid()?;
        let times = self.execute(&format!("SELECT stat_name, value FROM v$sess_time_model WHERE sid = {sid}"))?;
        let time = |model: TimeModel| {
            times.rows.iter().find_map(|r| match r.as_slice() {
                [Datum::Str(name), Datum::Int(value)] if name == model.name() => u64::try_from(*value).ok(),
                _ => None,
            })
        };
        Ok(Counters {
            stats,
            cpu_us: time(TimeModel::DbCpu).unwrap_or(0),
            elapsed_us: time(TimeModel::DbTime).unwrap_or(0),
            hardware: None,
        })
    }

    fn set_hardware_counters(&self, on: bool) -> Result<()> {
        if !on {
            return Ok(());
        }
        Err(Error::Unsupported {
            construct: "performance counters over a connection (SET AUTOTRACE ... CPU needs an embedded session)"
                .into(),
            position: None,
        })
    }

    fn set_plan_statistics(&self, _on: bool) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_as_sql_plus_prints_them() {
        assert_eq!(message("insert into t values (1)", 1).1, "1 row created.");
        assert_eq!(message("UPDATE t SET a = 1", 3), (StatementKind::Change, "3 rows updated.".into()));
        assert_eq!(message("create table t (a number)", 0).1, "Table created.");
        assert_eq!(message("DROP INDEX i", 0).1, "Index dropped.");
        assert_eq!(message("commit", 0).1, "Commit complete.");
        assert_eq!(value(Some("12.50"), true), Datum::from_decimal(rust_decimal::Decimal::new(125, 1)));
        assert_eq!(value(Some("7"), true), Datum::Int(7));
        assert_eq!(value(Some("7"), false), Datum::string("7".to_string()));
        assert_eq!(value(None, true), Datum::Null);
    }
}
