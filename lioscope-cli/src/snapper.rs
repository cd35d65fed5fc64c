//! The snapper, after Tanel Poder's `snapper.sql`: over N snapshots of S seconds, what
//! chosen sessions did, from the deltas of `v$sesstat` (statistics), `v$sess_time_model`
//! (time) and `v$session_event` (waits), each with its rate a second, and for time and
//! waits the share of the interval (`%TIME`) drawn as a bar; filtered by name patterns.
//! With `ash`, each snapshot also groups the `v$active_session_history` samples taken in
//! it by chosen columns (`ash=sql_id+event`; SESSION_STATE, EVENT and SQL_ID by default):
//! the share of the interval the sessions were active in each group (samples × their
//! interval / the snapshot's length), as snapper's ASH section shows it.
//! Read from the views with SQL in the runner's own session, so that the shell and
//! scripts run it alike, and printed in the runner's format (a table, CSV or JSON).
//!
//! ```text
//!  SNAPPER stats 5 1 all                       every session, one snapshot of 5 s
//!  SNAPPER ash,stats 5 1 all                   and the ASH samples of each snapshot
//!  SNAPPER ash=program+event 1 10 program=W00% what the population workers did
//!  SNAPPER stats 2 3 42 sinclude=%logical%     session 42, three of 2 s, names LIKE
//!  SNAPPER stats 2 1 all sinclude='%logical%|db cpu'   several patterns, with blanks
//!  SNAPPER stats 1 1 program=W00%              the population workers
//! ```
//!
//! Sessions: `all` (every session but the snapper's own), a list of session ids
//! (`42,43`), or `program=PATTERN` (a LIKE pattern on `v$session.program`: `USER`,
//! `W000`, `LGWR`, ...). A session that ends within a snapshot leaves it; one that
//! begins is counted from the snapshot it first appears in. Statistic and event names
//! match `sinclude=` patterns (LIKE, case-insensitive, several separated by `|`).
//!
//! Invariant: a delta is never computed across two different sessions (rows are keyed
//! by session id, and a session id is never reused while the database is open).

use super::target::Target;
use lioscope::stats::ash;
use lioscope::types::{Datum, Value};
use lioscope::{Error, QueryResult, Result, StatementKind};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// Width of the `%TIME` bar: one mark a tenth of the interval.
const BAR: usize = 10;

/// The longest snapshot and the most snapshots one command takes.
const MOST_SECONDS: f64 = 3600.0;
const MOST_SNAPSHOTS: u32 = 1000;

/// Which sessions a snapper looks at.
#[derive(Debug, Clone, PartialEq)]
pub enum Sessions {
    /// Every session but the snapper's.
    All,
    /// These session ids.
    Ids(Vec<u64>),
    /// Sessions whose program is LIKE this pattern.
    Program(String),
}

/// A snapper command, read.
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    /// Show the statistics, time and wait deltas.
    pub stats: bool,
    /// Group each snapshot's ASH samples by these `v$active_session_history` columns.
    pub ash: Option<Vec<String>>,
    pub seconds: f64,
    pub snapshots: u32,
    pub sessions: Sessions,
    /// LIKE patterns (upper case) a statistic or event name must match one of; empty
    /// for all.
    pub include: Vec<String>,
}

fn syntax(message: impl Into<String>) -> Error {
    Error::Parse { message: format!("SNAPPER: {}", message.into()), position: None }
}

/// Reads `SNAPPER what seconds snapshots sessions [sinclude=...]` (`text` after the
/// command word).
pub fn parse(text: &str) -> Result<Request> {
    let words: Vec<&str> = text.split_whitespace().collect();
    let [what, seconds, snapshots, sessions, rest @ ..] = words.as_slice() else {
        return Err(syntax(
            "expected: SNAPPER stats|ash[=COL+COL]|ash,stats SECONDS SNAPSHOTS all | SID[,SID...] | program=PATTERN",
        ));
    };
    let (mut stats, mut ash) = (false, None);
    for item in what.split(',') {
        let upper = item.to_ascii_uppercase();
        if upper == "STATS" {
            stats = true;
        } else if upper == "ASH" {
            ash = Some(DEFAULT_ASH_COLUMNS.iter().map(|c| c.to_string()).collect());
        } else if let Some(columns) = upper.strip_prefix("ASH=") {
            let columns: Vec<String> = columns.split('+').map(str::to_owned).collect();
            if let Some(bad) = columns.iter().find(|c| !ash::is_grouping_column(c)) {
                let grouping: Vec<&str> =
                    ash::VIEW_COLUMNS.into_iter().filter(|c| ash::is_grouping_column(c)).collect();
                return Err(syntax(format!(
                    "'{bad}' is not a column to group ASH samples by ({})",
                    grouping.join(", ")
                )));
            }
            ash = Some(columns);
        } else {
            return Err(syntax(format!("'{item}': what to snap is stats, ash or ash=COL+COL")));
        }
    }
    let seconds: f64 = seconds.parse().map_err(|_| syntax(format!("'{seconds}' is not a number of seconds")))?;
    if !(seconds > 0.0 && seconds <= MOST_SECONDS) {
        return Err(syntax(format!("a snapshot lasts more than 0 and at most {MOST_SECONDS} seconds, not {seconds}")));
    }
    let snapshots: u32 =
        snapshots.parse().map_err(|_| syntax(format!("'{snapshots}' is not a number of snapshots")))?;
    if !(1..=MOST_SNAPSHOTS).contains(&snapshots) {
        return Err(syntax(format!("snapshots are 1 to {MOST_SNAPSHOTS}, not {snapshots}")));
    }
    let sessions = if sessions.eq_ignore_ascii_case("all") {
        Sessions::All
    } else if let Some(pattern) = sessions.strip_prefix("program=").or_else(|| sessions.strip_prefix("PROGRAM=")) {
        Sessions::Program(pattern.to_ascii_uppercase())
    } else {
        let ids = sessions.split(',').map(|s| s.trim().parse::<u64>()).collect::<std::result::Result<Vec<_>, _>>();
        Sessions::Ids(
            ids.map_err(|_| syntax(format!("'{sessions}': sessions are all, SID[,SID...] or program=PATTERN")))?,
        )
    };
    let mut include = Vec::new();
    let mut options = rest.join(" ");
    while !options.is_empty() {
        let Some(value) = options.strip_prefix("sinclude=").or_else(|| options.strip_prefix("SINCLUDE=")) else {
            let option = options.split_whitespace().next().unwrap_or_default();
            return Err(syntax(format!("unknown option '{option}'")));
        };
        // A quoted value may hold blanks: sinclude='%logical%|db cpu'.
        let (patterns, after) = match value.strip_prefix('\'') {
            Some(quoted) => quoted.split_once('\'').ok_or_else(|| syntax("a quote of sinclude= is not closed"))?,
            None => value.split_once(' ').unwrap_or((value, "")),
        };
        include.extend(patterns.split('|').filter(|p| !p.is_empty()).map(str::to_ascii_uppercase));
        options = after.trim().to_owned();
    }
    Ok(Request { stats, ash, seconds, snapshots, sessions, include })
}

/// The columns ASH samples are grouped by unless `ash=` names others.
const DEFAULT_ASH_COLUMNS: [&str; 3] = ["SESSION_STATE", "EVENT", "SQL_ID"];

/// The newest ASH sample's id (0 before any).
fn last_sample_id(session: &dyn Target) -> Result<i64> {
    let r = session.execute("SELECT MAX(sample_id) FROM v$active_session_history")?;
    Ok(r.rows.first().and_then(|row| row.first()).map_or(0.0, number) as i64)
}

/// The ASH samples after sample `from` up to `to`, of the chosen sessions, grouped by
/// `columns`: each group's share of the `seconds` the snapshot lasted (ACTIVE_PCT, and
/// as average active sessions, AAS), most active first.
fn ash_table(
    session: &dyn Target,
    request: &Request,
    columns: &[String],
    (from, to): (i64, i64),
    seconds: f64,
) -> Result<QueryResult> {
    let me = session.sid()?;
    let filter = match &request.sessions {
        Sessions::All => format!("session_id <> {me}"),
        Sessions::Ids(ids) => {
            format!("session_id IN ({})", ids.iter().map(u64::to_string).collect::<Vec<_>>().join(","))
        }
        Sessions::Program(p) => format!("session_id <> {me} AND UPPER(program) LIKE '{}'", p.replace('\'', "''")),
    };
    let grouped = columns.join(", ");
    let sql = format!(
        "SELECT COUNT(*), SUM(sample_interval_ms), {grouped} FROM v$active_session_history \
         WHERE sample_id > {from} AND sample_id <= {to} AND {filter} GROUP BY {grouped} ORDER BY 2 DESC"
    );
    let result = session.execute(&sql)?;
    let mut out_columns = vec!["ACTIVE_PCT".to_owned(), "AAS".to_owned(), "SAMPLES".to_owned()];
    out_columns.extend(columns.iter().cloned());
    let rows = result
        .rows
        .iter()
        .map(|row| {
            let (samples, ms) = (number(&row[0]), number(&row[1]));
            let active = ms / (seconds * 1000.0);
            let mut out = vec![
                Datum::Str(format!("{:.1}%", active * 100.0).into()),
                Datum::Str(format!("{active:.2}").into()),
                Datum::Int(samples as i64),
            ];
            out.extend(row[2..].iter().cloned());
            out
        })
        .collect();
    Ok(QueryResult {
        kind: StatementKind::Query,
        columns: out_columns,
        rows,
        rows_affected: 0,
        message: None,
        plan_statistics: None,
    })
}

/// Whether `text` matches the LIKE `pattern` (`%` any run, `_` any one character);
/// both already upper case.
pub fn like(text: &str, pattern: &str) -> bool {
    let (t, p): (Vec<char>, Vec<char>) = (text.chars().collect(), pattern.chars().collect());
    // Classic two-pointer match with backtracking to the last `%`.
    let (mut i, mut j, mut star, mut mark) = (0, 0, None, 0);
    while i < t.len() {
        if j < p.len() && (p[j] == '_' || p[j] == t[i]) {
            i += 1;
            j += 1;
        } else if j < p.len() && p[j] == '%' {
            star = Some(j);
            mark = i;
            j += 1;
        } else if let Some(s) = star {
            j = s + 1;
            mark += 1;
            i = mark;
        } else {
            return false;
        }
    }
    p[j..].iter().all(|&c| c == '%')
}

/// What kind of figure a row is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    Stat,
    Time,
    Wait,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Stat => "STAT",
            Kind::Time => "TIME",
            Kind::Wait => "WAIT",
        }
    }
}

/// One reading of every chosen session: (session, kind, name) to (value, waits), with
/// time in microseconds; and each session's program.
#[derive(Debug, Default)]
struct Snapshot {
    values: BTreeMap<(u64, Kind, String), (f64, f64)>,
    programs: BTreeMap<u64, String>,
}

fn number(v: &Value) -> f64 {
    match v {
        Datum::Int(i) => *i as f64,
        other => other.to_string().parse().unwrap_or(0.0),
    }
}

fn column(result: &QueryResult, name: &str) -> Result<usize> {
    result.columns.iter().position(|c| c.eq_ignore_ascii_case(name)).ok_or_else(|| Error::InvalidValue {
        context: "SNAPPER".into(),
        message: format!("the view has no column {name}"),
    })
}

/// Reads the views once.
fn snapshot(session: &dyn Target, request: &Request) -> Result<Snapshot> {
    let mut snap = Snapshot::default();
    let me = u64::from(session.sid()?);
    let sessions = session.execute("SELECT sid, program FROM v$session")?;
    for row in &sessions.rows {
        let (sid, program) = (number(&row[0]) as u64, row[1].to_string());
        let chosen = match &request.sessions {
            Sessions::All => sid != me,
            Sessions::Ids(ids) => ids.contains(&sid),
            Sessions::Program(pattern) => sid != me && like(&program.to_ascii_uppercase(), pattern),
        };
        if chosen {
            snap.programs.insert(sid, program);
        }
    }
    let included =
        |name: &str| request.include.is_empty() || request.include.iter().any(|p| like(&name.to_ascii_uppercase(), p));
    let add = |snap: &mut Snapshot, sid: u64, kind: Kind, name: String, value: f64, waits: f64| {
        if snap.programs.contains_key(&sid) && included(&name) {
            snap.values.insert((sid, kind, name), (value, waits));
        }
    };
    let stats = session.execute("SELECT sid, name, value FROM v$sesstat")?;
    for row in &stats.rows {
        add(&mut snap, number(&row[0]) as u64, Kind::Stat, row[1].to_string(), number(&row[2]), 0.0);
    }
    let time = session.execute("SELECT sid, stat_name, value FROM v$sess_time_model")?;
    for row in &time.rows {
        add(&mut snap, number(&row[0]) as u64, Kind::Time, row[1].to_string(), number(&row[2]), 0.0);
    }
    let events = session.execute("SELECT * FROM v$session_event")?;
    let (sid, event, waits, micro) = (
        column(&events, "SID")?,
        column(&events, "EVENT")?,
        column(&events, "TOTAL_WAITS")?,
        column(&events, "TIME_WAITED_MICRO")?,
    );
    for row in &events.rows {
        let (s, name) = (number(&row[sid]) as u64, row[event].to_string());
        add(&mut snap, s, Kind::Wait, name, number(&row[micro]), number(&row[waits]));
    }
    Ok(snap)
}

/// The columns of a snapper table.
const COLUMNS: [&str; 10] =
    ["SID", "PROGRAM", "TYPE", "NAME", "DELTA", "DELTA_PER_SEC", "PCT_TIME", "GRAPH", "WAITS", "AVG_WAIT_US"];

/// The figures that changed between `before` and `after`, `seconds` apart, as a table:
/// by session, then statistics, time and waits, each largest change first.
fn deltas(before: &Snapshot, after: &Snapshot, seconds: f64) -> QueryResult {
    let mut rows: Vec<(u64, Kind, f64, Vec<Value>)> = Vec::new();
    for ((sid, kind, name), &(value, waits)) in &after.values {
        let Some(&(was, waits_before)) = before.values.get(&(*sid, *kind, name.clone())).or_else(|| {
            // Counted from the snapshot a session first appears in; a figure new in a
            // known session started at zero.
            before.programs.contains_key(sid).then_some(&(0.0, 0.0))
        }) else {
            continue;
        };
        let delta = value - was;
        if delta == 0.0 {
            continue;
        }
        let timed = matches!(kind, Kind::Time | Kind::Wait);
        let pct = timed.then(|| delta / (seconds * 1e6) * 100.0);
        let graph = pct.map(|p| "@".repeat(((p / 100.0 * BAR as f64).round() as usize).min(BAR)));
        let wait_delta = waits - waits_before;
        let mut row = vec![
            Datum::Int(*sid as i64),
            Datum::Str(after.programs.get(sid).cloned().unwrap_or_default().into()),
            Datum::Str(kind.name().into()),
            Datum::Str(name.clone().into()),
            Datum::Int(delta as i64),
            Datum::Str(rate(delta / seconds).into()),
            pct.map_or(Datum::Null, |p| Datum::Str(format!("{p:.1}%").into())),
            graph.map_or(Datum::Null, |g| Datum::Str(format!("|{g:<BAR$}|").into())),
        ];
        let is_wait = *kind == Kind::Wait;
        row.push(if is_wait { Datum::Int(wait_delta as i64) } else { Datum::Null });
        row.push(if is_wait && wait_delta > 0.0 { Datum::Int((delta / wait_delta) as i64) } else { Datum::Null });
        rows.push((*sid, *kind, delta.abs(), row));
    }
    rows.sort_by(|a, b| (a.0, a.1).cmp(&(b.0, b.1)).then(b.2.total_cmp(&a.2)));
    QueryResult {
        kind: StatementKind::Query,
        columns: COLUMNS.iter().map(|c| c.to_string()).collect(),
        rows: rows.into_iter().map(|r| r.3).collect(),
        rows_affected: 0,
        message: None,
        plan_statistics: None,
    }
}

/// A rate with a unit suffix as snapper prints them (`12.3k`, `4.56M`).
fn rate(v: f64) -> String {
    let a = v.abs();
    if a >= 1e9 {
        format!("{:.2}G", v / 1e9)
    } else if a >= 1e6 {
        format!("{:.2}M", v / 1e6)
    } else if a >= 1e3 {
        format!("{:.2}k", v / 1e3)
    } else {
        format!("{v:.2}")
    }
}

/// Runs the snapper: `request.snapshots` intervals of `request.seconds`, handing each
/// one's table to `show` with a heading line.
pub fn run(session: &dyn Target, request: &Request, show: &mut dyn FnMut(&str, &QueryResult)) -> Result<()> {
    let mut before = snapshot(session, request)?;
    let mut sample = if request.ash.is_some() { last_sample_id(session)? } else { 0 };
    if before.programs.is_empty() {
        return Err(Error::InvalidValue {
            context: "SNAPPER".into(),
            message: format!("no session is {}", describe(&request.sessions)),
        });
    }
    let mut taken = Instant::now();
    for n in 1..=request.snapshots {
        std::thread::sleep(Duration::from_secs_f64(request.seconds));
        let after = snapshot(session, request)?;
        let seconds = taken.elapsed().as_secs_f64();
        taken = Instant::now();
        let heading = format!(
            "-- Snapper: snapshot {n} of {}, {seconds:.2} s, {} session(s): {}",
            request.snapshots,
            after.programs.len(),
            describe(&request.sessions)
        );
        if request.stats {
            show(&heading, &deltas(&before, &after, seconds));
        }
        if let Some(columns) = &request.ash {
            let newest = last_sample_id(session)?;
            let table = ash_table(session, request, columns, (sample, newest), seconds)?;
            show(&format!("{heading}: ASH samples by {}", columns.join("+")), &table);
            sample = newest;
        }
        before = after;
    }
    Ok(())
}

fn describe(sessions: &Sessions) -> String {
    match sessions {
        Sessions::All => "all but this one".into(),
        Sessions::Ids(ids) => format!("sid {}", ids.iter().map(u64::to_string).collect::<Vec<_>>().join(",")),
        Sessions::Program(p) => format!("program LIKE '{p}'"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_read_as_snapper_takes_them() {
        let r = parse("stats 5 1 all").unwrap();
        assert_eq!((r.seconds, r.snapshots, r.sessions, r.include.len()), (5.0, 1, Sessions::All, 0));
        assert!(r.stats && r.ash.is_none());
        let r = parse("ash,stats 1 1 all").unwrap();
        assert_eq!(r.ash.as_deref(), Some(&["SESSION_STATE".to_owned(), "EVENT".into(), "SQL_ID".into()][..]));
        assert!(r.stats);
        let r = parse("ash=program+event 1 1 all").unwrap();
        assert_eq!((r.stats, r.ash), (false, Some(vec!["PROGRAM".to_owned(), "EVENT".into()])));
        let r = parse("STATS 0.5 3 42,43 sinclude='%logical%|db cpu'").unwrap();
        assert_eq!(r.sessions, Sessions::Ids(vec![42, 43]));
        assert_eq!(r.include, ["%LOGICAL%", "DB CPU"]);
        assert_eq!(parse("stats 1 1 program=w00%").unwrap().sessions, Sessions::Program("W00%".into()));
        for (bad, says) in [
            ("stats 1", "expected"),
            ("cpu 1 1 all", "'cpu'"),
            ("ash=sample_time 1 1 all", "'SAMPLE_TIME' is not a column"),
            ("stats 0 1 all", "more than 0"),
            ("stats x 1 all", "'x'"),
            ("stats 1 0 all", "snapshots are 1"),
            ("stats 1 1 nobody", "'nobody'"),
            ("stats 1 1 all whatever=1", "unknown option"),
        ] {
            let err = parse(bad).unwrap_err().to_string();
            assert!(err.contains("SNAPPER") && err.contains(says), "{bad}: {err}");
        }
    }

    #[test]
    fn like_patterns_match_as_sql_does() {
        assert!(like("W000", "W00%") && like("W000", "W0_0") && like("SESSION LOGICAL READS", "%LOGICAL%"));
        assert!(like("", "%") && !like("", "_") && !like("W100", "W00%") && like("ABC", "A%C%"));
        assert!(!like("ABCD", "A%C") && like("AXXC", "A%C"));
    }

    #[test]
    fn deltas_rate_time_and_waits_and_skip_what_did_not_move() {
        let mut before = Snapshot::default();
        let mut after = Snapshot::default();
        for s in [&mut before, &mut after] {
            s.programs.insert(7, "USER".into());
        }
        before.values.insert((7, Kind::Stat, "session logical reads".into()), (100.0, 0.0));
        after.values.insert((7, Kind::Stat, "session logical reads".into()), (2100.0, 0.0));
        before.values.insert((7, Kind::Stat, "user calls".into()), (5.0, 0.0));
        after.values.insert((7, Kind::Stat, "user calls".into()), (5.0, 0.0));
        after.values.insert((7, Kind::Time, "DB CPU".into()), (1_500_000.0, 0.0));
        after.values.insert((7, Kind::Wait, "db file sequential read".into()), (500_000.0, 50.0));
        let table = deltas(&before, &after, 2.0);
        let cells: Vec<Vec<String>> = table.rows.iter().map(|r| r.iter().map(|v| v.to_string()).collect()).collect();
        assert_eq!(cells.len(), 3, "user calls did not move: {cells:?}");
        assert_eq!(cells[0][3..6], ["session logical reads", "2000", "1.00k"]);
        assert_eq!(cells[1][3..8], ["DB CPU", "1500000", "750.00k", "75.0%", "|@@@@@@@@  |"]);
        assert_eq!(cells[2][8..10], ["50", "10000"]);
        assert_eq!(rate(2_500_000.0), "2.50M");
    }
}
