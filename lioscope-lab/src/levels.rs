//! What the load-level experiments (`lab lio`, `lab cpu`) share: the levels themselves
//! (how many sessions run at once), starting a level's sessions together while the
//! machine's CPU is read from /proc/stat around them, a level's figures as spreads over
//! its runs, and the report around them: the terminal table and the JSON, CSV and HTML
//! files, each level with its ratio derived from medians (scaling factor, throughput).
//!
//! Invariants: levels are sorted, distinct, from 1 to [`MAX_LEVEL`]; a level's sessions
//! are all released at once by one barrier, after the step's clock and /proc/stat reading
//! are taken, so the step covers every session's work; a session is used by one thread
//! at a time and goes back to the pool in its place.

use super::stats::{Spread, spread};
use lioscope::stats::osstat::{self, CpuTimes};
use lioscope::{Error, Result, Session};
use std::collections::BTreeMap;
use std::time::Instant;

/// Most threads a load level starts (each waits for the others at a barrier, so a level
/// must be able to start them all).
pub const MAX_LEVEL: usize = 256;

/// The load levels of option `name`, sorted and without repeats, or `1..=default_most`
/// when none are given; each from 1 to [`MAX_LEVEL`].
pub fn levels(given: &[usize], name: &str, default_most: usize) -> Result<Vec<usize>> {
    if let Some(bad) = given.iter().find(|&&n| n == 0 || n > MAX_LEVEL) {
        return Err(Error::InvalidParameter {
            name: name.into(),
            message: format!("a load level is 1 to {MAX_LEVEL}, not {bad}"),
        });
    }
    let mut levels = if given.is_empty() { (1..=default_most.clamp(1, MAX_LEVEL)).collect() } else { given.to_vec() };
    levels.sort_unstable();
    levels.dedup();
    Ok(levels)
}

/// `seconds` as given for option `name`: above 0, at most a day.
pub fn check_seconds(seconds: f64, name: &str) -> Result<()> {
    if seconds > 0.0 && seconds <= 86_400.0 {
        return Ok(());
    }
    Err(Error::InvalidParameter { name: name.into(), message: "must be above 0, at most a day".into() })
}

/// One step: what each session's work returned, in session order, the wall clock from
/// the common start until the last one finished, and the machine's CPU over it (`None`
/// where /proc/stat is unreadable).
pub struct Step<T> {
    pub outcomes: Vec<T>,
    pub elapsed_s: f64,
    pub cpu: Option<CpuTimes>,
}

/// Runs `work(k, session)` on the first `n` sessions of `sessions` (`k` = 1..=n), each on
/// its own thread, all released at once.
pub fn at_once<T: Send>(
    sessions: &mut Vec<Session>,
    n: usize,
    work: impl Fn(usize, &Session) -> Result<T> + Sync,
) -> Result<Step<T>> {
    let barrier = std::sync::Barrier::new(n + 1);
    let group: Vec<Session> = sessions.drain(..n).collect();
    let (finished, elapsed_s, cpu) = std::thread::scope(|scope| {
        let handles: Vec<_> = group
            .into_iter()
            .enumerate()
            .map(|(i, session)| {
                let (barrier, work) = (&barrier, &work);
                scope.spawn(move || {
                    barrier.wait();
                    let outcome = work(i + 1, &session);
                    (session, outcome)
                })
            })
            .collect();
        let before = osstat::read_cpu_times().ok();
        let started = Instant::now();
        barrier.wait();
        let finished: Vec<_> = handles.into_iter().map(|h| h.join().expect("a lab session panicked")).collect();
        let elapsed_s = started.elapsed().as_secs_f64();
        let cpu = before.and_then(|b| Some(osstat::read_cpu_times().ok()?.since(&b)));
        (finished, elapsed_s, cpu)
    });
    let (group, outcomes): (Vec<Session>, Vec<Result<T>>) = finished.into_iter().unzip();
    sessions.splice(0..0, group);
    Ok(Step { outcomes: outcomes.into_iter().collect::<Result<_>>()?, elapsed_s, cpu })
}

/// Each of `figures`' keys over `runs`: the spread of `figure(run, key)`, `None` when a
/// run does not have it.
pub fn spreads<R>(
    figures: &[(&'static str, &str)],
    runs: &[R],
    figure: impl Fn(&R, &str) -> Option<f64>,
) -> BTreeMap<&'static str, Option<Spread>> {
    figures
        .iter()
        .map(|&(key, _)| {
            let values: Option<Vec<f64>> = runs.iter().map(|run| figure(run, key)).collect();
            (key, values.map(spread))
        })
        .collect()
}

/// The CSV lines of one level: `level`, then each figure with its spread and derivation.
pub fn csv_rows<'a>(
    level: usize,
    figures: impl IntoIterator<Item = (&'a str, Option<Spread>, &'a str)>,
) -> impl Iterator<Item = Vec<String>> {
    figures.into_iter().map(move |(key, f, how)| {
        let [median, min, max] = super::report::figure_cells(f);
        vec![level.to_string(), key.to_owned(), median, min, max, how.to_owned()]
    })
}

/// The CSV header of a load-level report whose levels are counted in `unit`.
fn csv_header(unit: &str) -> [&str; 6] {
    [unit, "figure", "median", "min", "max", "derivation"]
}

/// One load level as its report files show it: the level, its figures over the runs, and
/// its ratio derived from medians (the scaling factor or the throughput).
pub struct LevelFigures<'r> {
    pub level: usize,
    pub figures: &'r BTreeMap<&'static str, Option<Spread>>,
    pub ratio: Option<f64>,
}

/// Prints the terminal table of a load-level experiment: one row a level (counted in
/// `unit`), the figures `keys`, then the ratio called `ratio`.
pub fn print_table<'r>(unit: &str, keys: &[&str], ratio: &str, levels: impl IntoIterator<Item = LevelFigures<'r>>) {
    let header: Vec<&str> = [unit].into_iter().chain(keys.iter().copied()).chain([ratio]).collect();
    super::report::print_table(
        &header,
        levels.into_iter().map(|l| {
            let mut row = vec![l.level.to_string()];
            row.extend(keys.iter().map(|key| super::report::cell(l.figures[key])));
            row.push(super::report::ratio_cell(l.ratio));
            row
        }),
    );
}

/// Writes a load-level experiment's report to `out`: `{name}.json` (everything, from
/// `report`), `{name}.csv` (one line per level and figure of `figures`, then the ratio
/// `ratio` = (key, derivation)), and `{name}.html`. Levels are counted in `unit`.
pub fn write_report<'r>(
    out: &std::path::Path,
    (name, unit): (&str, &str),
    report: &impl serde::Serialize,
    levels: impl IntoIterator<Item = LevelFigures<'r>>,
    (figures, ratio): (&[(&'static str, &'static str)], (&str, &str)),
    html: &super::report::Html,
) -> Result<()> {
    std::fs::create_dir_all(out).map_err(|e| Error::io("create", out, e))?;
    crate::report::write_json(&out.join(format!("{name}.json")), report)?;
    let rows: Vec<Vec<String>> = levels
        .into_iter()
        .flat_map(|l| {
            let derived = l.ratio.map(|v| Spread { median: v, min: v, max: v });
            let figures = figures.iter().map(|&(key, how)| (key, l.figures[key], how));
            csv_rows(l.level, figures.chain([(ratio.0, derived, ratio.1)]))
        })
        .collect();
    super::report::write_csv(&out.join(format!("{name}.csv")), &csv_header(unit), &rows)?;
    super::report::write_html(&out.join(format!("{name}.html")), html)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_are_sorted_without_repeats_and_bounded() {
        assert_eq!(levels(&[4, 1, 2, 2], "--workers", 8).unwrap(), [1, 2, 4]);
        assert_eq!(levels(&[], "--workers", 3).unwrap(), [1, 2, 3]);
        for bad in [0, MAX_LEVEL + 1] {
            let err = levels(&[1, bad], "--workers", 4).unwrap_err().to_string();
            assert!(err.contains("--workers") && err.contains(&bad.to_string()), "{err}");
        }
    }
}
