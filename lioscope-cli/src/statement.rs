//! Running one SQL statement and showing its outcome as SQL*Plus does under the runner's
//! settings: the rows or the message (with or without feedback), then, with SET
//! AUTOTRACE, the plan, the row-source statistics and the session's statistic deltas,
//! then, with SET TIMING, the elapsed time.
//!
//! A statement that mentions bind variables runs through a cursor with the values of the
//! runner's variables bound by name ([`Target::execute_with`]); any other runs from its
//! text ([`Target::execute`]).

use super::autotrace::Snapshot;
use super::format::{OutputFormat, render, rows_selected};
use super::sqlplus::Autotrace;
use super::target::Target;
use super::variables::{BindVariables, mentions_bind_variable};
use lioscope::Result;
use lioscope::{QueryResult, StatementKind};
use std::time::Instant;

/// How a runner shows statements: its SET settings and the output format.
#[derive(Debug, Clone)]
pub struct Settings {
    pub format: OutputFormat,
    pub autotrace: Autotrace,
    /// Autotrace reports the performance counters too (`SET AUTOTRACE ... CPU`).
    pub counters: bool,
    /// Print the elapsed time after each statement (SET TIMING).
    pub timing: bool,
    /// Show each statement of a script before its output (SET ECHO).
    pub echo: bool,
    /// Print "n rows selected." and the messages of statements without rows (SET FEEDBACK).
    pub feedback: bool,
    /// Print CPU and elapsed figures (false where output must not vary, as in golden tests).
    pub show_times: bool,
}

impl Settings {
    /// SQL*Plus's defaults: autotrace, timing and echo off, feedback on.
    pub fn new(format: OutputFormat) -> Settings {
        Settings {
            format,
            autotrace: Autotrace::Off,
            counters: false,
            timing: false,
            echo: false,
            feedback: true,
            show_times: true,
        }
    }
}

/// Runs the SQL statement `text` and returns what to print.
pub(super) fn run(session: &dyn Target, settings: &Settings, variables: &BindVariables, text: &str) -> Result<String> {
    let explain = explain_for(session, settings, text);
    let with_plan = matches!(settings.autotrace, Autotrace::On | Autotrace::TraceOnly);
    let before = if settings.autotrace == Autotrace::Off { None } else { Some(Snapshot::take(session)?) };
    let started = Instant::now();
    if with_plan {
        session.set_plan_statistics(true);
    }
    let result = execute(session, variables, text);
    if with_plan {
        session.set_plan_statistics(false);
    }
    let result = result?;
    let elapsed = started.elapsed();
    let mut out = String::new();
    if settings.autotrace != Autotrace::TraceOnly || result.kind != StatementKind::Query {
        out.push_str(&render(&result, settings.format, settings.feedback));
    } else if settings.feedback {
        out.push_str(&rows_selected(result.rows.len()));
        out.push('\n');
    }
    if let Some(before) = before
        && matches!(result.kind, StatementKind::Query | StatementKind::Insert | StatementKind::Change)
    {
        let now = Snapshot::take(session)?;
        out.push_str(&autotrace_report(settings, &result, explain, &before, &now));
    }
    if settings.timing && settings.show_times {
        out.push_str(&format!("Elapsed: {:.3} ms\n", elapsed.as_secs_f64() * 1000.0));
    }
    Ok(out)
}

/// Runs `text` in `session`: through a cursor with the variables' values when it
/// mentions bind variables (an undeclared one is an error naming it), else from its text.
pub(super) fn execute(session: &dyn Target, variables: &BindVariables, text: &str) -> Result<QueryResult> {
    if !mentions_bind_variable(text) {
        return session.execute(text);
    }
    session.execute_with(text, variables)
}

/// What autotrace prints after a statement's rows: its plan, row-source statistics and
/// the session's statistic deltas from `before` to `now`.
fn autotrace_report(
    settings: &Settings,
    result: &QueryResult,
    explain: Option<String>,
    before: &Snapshot,
    now: &Snapshot,
) -> String {
    let mut out = String::new();
    if let Some(plan) = explain {
        out.push_str("\nExecution Plan\n----------------------------------------------------------\n");
        out.push_str(&plan);
    }
    if let Some(statistics) = &result.plan_statistics {
        out.push_str("\nRow Source Statistics\n----------------------------------------------------------\n");
        for line in statistics.format(settings.show_times) {
            out.push_str(&line);
            out.push('\n');
        }
    }
    let processed = if result.kind == StatementKind::Query { result.rows.len() as u64 } else { result.rows_affected };
    out.push_str(&before.report(now, processed, settings.show_times));
    out
}

/// The plan of a query, when autotrace shows plans.
fn explain_for(session: &dyn Target, settings: &Settings, text: &str) -> Option<String> {
    if !matches!(settings.autotrace, Autotrace::On | Autotrace::TraceOnly) {
        return None;
    }
    let first = text.split_whitespace().next()?.to_ascii_uppercase();
    if first != "SELECT" {
        return None;
    }
    let plan = session.execute(&format!("EXPLAIN PLAN FOR {text}")).ok()?;
    Some(plan.rows.iter().map(|r| format!("{}\n", r[0])).collect())
}
