//! Running statements the way the shell does: SQL goes to the session; SET AUTOTRACE,
//! SET TIMING and SET AUTOCOMMIT-style settings are handled here. Used by `shell`,
//! `sql -c/-f` and the golden tests, so all three print the same thing.

use super::autotrace::Snapshot;
use super::format::{OutputFormat, render, rows_selected};
use crate::db::{Session, StatementKind};
use crate::error::Result;
use std::time::Instant;

/// What SET AUTOTRACE asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Autotrace {
    Off,
    /// Rows, plan and statistics.
    On,
    /// Plan and statistics, no rows.
    TraceOnly,
    /// Rows and statistics.
    Statistics,
}

/// Per-script settings.
pub struct ScriptRunner<'s> {
    pub session: &'s Session,
    pub format: OutputFormat,
    pub autotrace: Autotrace,
    pub timing: bool,
    /// Print CPU and elapsed figures (false in golden tests).
    pub show_times: bool,
    /// Autotrace reports the performance counters too (`SET AUTOTRACE ... CPU`).
    pub counters: bool,
}

impl<'s> ScriptRunner<'s> {
    /// A runner over `session`, which it sets to autocommit off, as SQL*Plus starts.
    pub fn new(session: &'s Session, format: OutputFormat) -> ScriptRunner<'s> {
        session.set_autocommit(false);
        ScriptRunner { session, format, autotrace: Autotrace::Off, timing: false, show_times: true, counters: false }
    }

    /// Runs one statement (SQL or a SET command) and returns what to print.
    pub fn run(&mut self, statement: &str) -> Result<String> {
        if let Some(output) = self.client_command(statement) {
            return output;
        }
        let explain = self.explain_for(statement);
        let with_plan = matches!(self.autotrace, Autotrace::On | Autotrace::TraceOnly);
        let before = Snapshot::take(self.session);
        let started = Instant::now();
        if with_plan {
            self.session.set_plan_statistics(true);
        }
        let result = self.session.execute(statement);
        if with_plan {
            self.session.set_plan_statistics(false);
        }
        let result = result?;
        let elapsed = started.elapsed();
        let mut out = String::new();
        if self.autotrace != Autotrace::TraceOnly || result.kind != StatementKind::Query {
            out.push_str(&render(&result, self.format));
        } else {
            out.push_str(&rows_selected(result.rows.len()));
            out.push('\n');
        }
        if self.autotrace != Autotrace::Off
            && matches!(result.kind, StatementKind::Query | StatementKind::Insert | StatementKind::Change)
        {
            if let Some(plan) = explain {
                out.push_str("\nExecution Plan\n----------------------------------------------------------\n");
                out.push_str(&plan);
            }
            if let Some(statistics) = &result.plan_statistics {
                out.push_str("\nRow Source Statistics\n----------------------------------------------------------\n");
                for line in statistics.format(self.show_times) {
                    out.push_str(&line);
                    out.push('\n');
                }
            }
            let processed =
                if result.kind == StatementKind::Query { result.rows.len() as u64 } else { result.rows_affected };
            out.push_str(&before.report(self.session, processed, self.show_times));
        }
        if self.timing && self.show_times {
            out.push_str(&format!("Elapsed: {:.3} ms\n", elapsed.as_secs_f64() * 1000.0));
        }
        Ok(out)
    }

    /// The plan of a query, when autotrace shows plans.
    fn explain_for(&self, statement: &str) -> Option<String> {
        if !matches!(self.autotrace, Autotrace::On | Autotrace::TraceOnly) {
            return None;
        }
        let first = statement.split_whitespace().next()?.to_ascii_uppercase();
        if first != "SELECT" {
            return None;
        }
        let plan = self.session.execute(&format!("EXPLAIN PLAN FOR {statement}")).ok()?;
        Some(plan.rows.iter().map(|r| format!("{}\n", r[0])).collect())
    }

    /// Ends the script as SQL*Plus exits: an open transaction is committed.
    pub fn finish(&mut self) -> Result<()> {
        if self.session.in_transaction() {
            self.session.execute("COMMIT")?;
        }
        Ok(())
    }

    /// Handles SET AUTOTRACE / SET TIMING / SET AUTOCOMMIT; `None` for anything else.
    fn client_command(&mut self, statement: &str) -> Option<Result<String>> {
        let words: Vec<String> =
            statement.split_whitespace().map(|w| w.trim_end_matches(';').to_ascii_uppercase()).collect();
        let mut words: Vec<&str> = words.iter().map(String::as_str).collect();
        // `SET AUTOTRACE <setting> CPU`: the setting, with the performance counters.
        let counters = words.len() > 3 && words[..2] == ["SET", "AUTOTRACE"] && words.last() == Some(&"CPU");
        if counters {
            words.pop();
        }
        match words.as_slice() {
            ["SET", "AUTOTRACE", "OFF"] => self.autotrace = Autotrace::Off,
            ["SET", "AUTOTRACE", "ON", "STATISTICS" | "STAT"] | ["SET", "AUTOTRACE", "STATISTICS" | "STAT"] => {
                self.autotrace = Autotrace::Statistics
            }
            ["SET", "AUTOTRACE", "ON"] | ["SET", "AUTOTRACE", "ON", "EXPLAIN" | "EXP"] => {
                self.autotrace = Autotrace::On
            }
            ["SET", "AUTOTRACE", "TRACEONLY" | "TRACE"] | ["SET", "AUTOTRACE", "TRACEONLY" | "TRACE", _] => {
                self.autotrace = Autotrace::TraceOnly
            }
            ["SET", "TIMING", "ON"] => self.timing = true,
            ["SET", "TIMING", "OFF"] => self.timing = false,
            ["SET", "AUTOCOMMIT", "ON" | "IMMEDIATE"] => self.session.set_autocommit(true),
            ["SET", "AUTOCOMMIT", "OFF"] => self.session.set_autocommit(false),
            ["SET", "AUTOTRACE" | "TIMING" | "AUTOCOMMIT", ..] => {
                return Some(Err(crate::error::Error::Parse {
                    message: format!("unknown setting: {}", statement.trim()),
                    position: None,
                }));
            }
            _ => return None,
        }
        if words[1] == "AUTOTRACE" {
            self.counters = counters && self.autotrace != Autotrace::Off;
            self.session.set_hardware_counters(self.counters);
        }
        Some(Ok(String::new()))
    }
}

/// Whether a line is a client command (SET AUTOTRACE, SET TIMING, SHOW), which ends at
/// the end of its line as in SQL*Plus.
pub fn is_client_command(line: &str) -> bool {
    let upper = line.trim_start().to_ascii_uppercase();
    ["SET AUTOTRACE", "SET TIMING", "SET AUTOCOMMIT", "SHOW "].iter().any(|p| upper.starts_with(p))
        || upper.trim_end() == "SHOW"
}

/// Splits a script into statements: SQL ends with `;` (quotes and comments respected) or
/// a `/` alone on a line; client commands end with their line.
pub fn split_script(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut buffer = String::new();
    for line in text.lines() {
        if buffer.trim().is_empty() && is_client_command(line) {
            out.push(line.trim().trim_end_matches(';').to_owned());
            buffer.clear();
            continue;
        }
        if line.trim() == "/" {
            push_statements(&buffer, &mut out);
            buffer.clear();
            continue;
        }
        buffer.push_str(line);
        buffer.push('\n');
        if statement_complete(&buffer) {
            push_statements(&buffer, &mut out);
            buffer.clear();
        }
    }
    push_statements(&buffer, &mut out);
    out
}

/// Whether `text` ends a SQL statement: its last non-blank character is a `;` outside
/// quotes and block comments. The shell and [`split_script`] both end statements here.
pub fn statement_complete(text: &str) -> bool {
    text.trim_end().ends_with(';') && !crate::sql::front::ends_inside_quote_or_comment(text)
}

/// Splits SQL at semicolons; a client command that followed a `;` on the same line ends
/// with its line, as it would on a line of its own.
fn push_statements(text: &str, out: &mut Vec<String>) {
    for statement in crate::sql::split_statements(text) {
        match statement.split_once('\n') {
            Some((first, rest)) if is_client_command(first) => {
                out.push(first.trim().to_owned());
                push_statements(rest, out);
            }
            _ if is_client_command(&statement) => {
                out.push(statement.lines().next().unwrap_or_default().trim().to_owned())
            }
            _ => out.push(statement),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statements_end_at_a_semicolon_outside_quotes_and_comments() {
        assert!(statement_complete("SELECT 1 FROM dual;\n"));
        assert!(statement_complete("SELECT 'a;\nb' FROM dual;  \n"));
        assert!(statement_complete("SELECT /* ; */ 1\nFROM dual;\n"));
        assert!(!statement_complete("SELECT 'a;\n"));
        assert!(!statement_complete("SELECT \"a;\n"));
        assert!(!statement_complete("SELECT 1 /* a;\n"));
        assert!(!statement_complete("SELECT 1\n"));
        assert!(!statement_complete(""));
    }

    #[test]
    fn set_commands_end_at_the_line() {
        let s = split_script("SET AUTOTRACE ON\nSELECT 1\nFROM dual;\nset timing on\nselect 'a;\nb' from dual;\n");
        assert_eq!(s, vec!["SET AUTOTRACE ON", "SELECT 1\nFROM dual", "set timing on", "select 'a;\nb' from dual"]);
        let s = split_script("SELECT 1 FROM dual; SET AUTOTRACE ON\nSELECT 2 FROM dual;");
        assert_eq!(s, vec!["SELECT 1 FROM dual", "SET AUTOTRACE ON", "SELECT 2 FROM dual"]);
    }
}
