//! What the load-level experiments (`lab lio`, `lab cpu`) share, and with `lab mbrc` and
//! `lab populate` the order their steps run in (seeded shuffled rounds): the levels
//! themselves (how many sessions run at once), starting a level's sessions together while the
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

/// `given`, or a seed from the clock when none was given (reports record which).
pub fn seed_or_clock(given: Option<u64>) -> u64 {
    given.unwrap_or_else(|| {
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64)
    })
}

/// The order an experiment's steps run in: `rounds` rounds of every one of `items`, each
/// round in an order shuffled anew by a generator seeded with `seed` (the same seed gives
/// the same order), so that drift over a run falls on every item alike.
pub fn shuffled_rounds<T: Clone>(items: &[T], rounds: usize, seed: u64) -> Vec<T> {
    use rand::SeedableRng;
    use rand::seq::SliceRandom;
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let mut schedule = Vec::with_capacity(items.len() * rounds);
    for _ in 0..rounds {
        let mut round = items.to_vec();
        round.shuffle(&mut rng);
        schedule.extend(round);
    }
    schedule
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

/// What a load-level experiment's levels count and what their ratio to the level of one
/// is called: `lab lio`'s sessions and scaling factor, `lab cpu`'s workers and throughput.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Scale {
    /// What a level counts ("sessions", "workers"): the first column of every table.
    pub unit: &'static str,
    /// The ratio's name ("factor", "throughput").
    pub ratio: &'static str,
    /// How the ratio is derived, for the reports.
    pub derivation: &'static str,
}

/// One load level: `load` sessions or workers at once, its figures over its runs, and
/// its ratio to the level of one. Serialised with the scale's names:
/// `{"sessions": 2, "figures": {...}, "factor": 1.9, "runs": [...]}`.
#[derive(Debug, Clone)]
pub struct Level<R> {
    pub load: usize,
    pub figures: BTreeMap<&'static str, Option<Spread>>,
    /// `None` when no level of one ran.
    pub ratio: Option<f64>,
    pub runs: Vec<R>,
    pub scale: Scale,
}

impl<R: serde::Serialize> serde::Serialize for Level<R> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = serializer.serialize_map(Some(4))?;
        map.serialize_entry(self.scale.unit, &self.load)?;
        map.serialize_entry("figures", &self.figures)?;
        map.serialize_entry(self.scale.ratio, &self.ratio)?;
        map.serialize_entry("runs", &self.runs)?;
        map.end()
    }
}

/// A load-level experiment's whole report, as its JSON file holds it: what every such
/// experiment records, then its own `findings` (none for `lab lio`, the knee and its
/// verdict for `lab cpu`) at the same level.
#[derive(Debug, serde::Serialize)]
pub struct Report<R, F> {
    pub experiment: &'static str,
    pub environment: super::environment::Environment,
    pub parameters: BTreeMap<&'static str, serde_json::Value>,
    pub derivations: BTreeMap<&'static str, &'static str>,
    pub levels: Vec<Level<R>>,
    #[serde(flatten)]
    pub findings: F,
}

/// Measures each of `levels` `repeat` times (at least once), a run by `run(level,
/// repeat)`, a progress step each, and summarises each level's runs by the spread of
/// each of `figures` (`figure(run, key)`). Ratios are left to [`set_ratios`].
pub fn measure_levels<R>(
    levels: &[usize],
    repeat: usize,
    scale: Scale,
    progress: &super::progress::Steps,
    (figures, figure): (&[(&'static str, &str)], impl Fn(&R, &str) -> Option<f64>),
    mut run: impl FnMut(usize, usize) -> Result<R>,
) -> Result<Vec<Level<R>>> {
    let mut out = Vec::with_capacity(levels.len());
    for &load in levels {
        let mut runs = Vec::new();
        for r in 0..repeat.max(1) {
            let unit = if load == 1 { scale.unit.trim_end_matches('s') } else { scale.unit };
            progress.step(&format!("{load} {unit} (run {})", r + 1));
            runs.push(run(load, r)?);
        }
        let figures = spreads(figures, &runs, &figure);
        out.push(Level { load, figures, ratio: None, runs, scale });
    }
    Ok(out)
}

/// Every figure of `levels` as the results history stores them: one group a level
/// (`{prefix}{unit}={load}`), each of `figures` with its runs' samples.
pub fn history_figures<R>(
    levels: &[Level<R>],
    prefix: &str,
    figures: &[(&'static str, &str)],
    figure: impl Fn(&R, &str) -> Option<f64>,
) -> Vec<super::history::FigureSamples> {
    levels
        .iter()
        .flat_map(|l| {
            let group = format!("{prefix}{}={}", l.scale.unit, l.load);
            let mut out: Vec<_> = figures
                .iter()
                .map(|&(key, _)| {
                    let samples = l.runs.iter().filter_map(|r| figure(r, key)).collect();
                    super::history::FigureSamples::new(group.clone(), key, samples)
                })
                .collect();
            out.extend(l.ratio.map(|r| super::history::FigureSamples::new(group.clone(), l.scale.ratio, vec![r])));
            out.retain(|f| !f.samples.is_empty());
            out
        })
        .collect()
}

/// One level's samples of a figure tested against the level of one's.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct LevelTest {
    pub load: usize,
    pub figure: &'static str,
    /// The level's median over the level of one's.
    pub median_ratio: Option<f64>,
    /// Two-sided Mann-Whitney U of the level's runs against the level of one's (`None`
    /// with a single run on either side, and for the level of one itself).
    pub p_value: Option<f64>,
    pub method: Option<super::stats::Method>,
}

/// Each level's runs of figure `key` against the level of one's (none without it).
pub fn tests_against_one<R>(
    levels: &[Level<R>],
    key: &'static str,
    figure: impl Fn(&R, &str) -> Option<f64>,
) -> Vec<LevelTest> {
    let samples = |l: &Level<R>| -> Vec<f64> { l.runs.iter().filter_map(|r| figure(r, key)).collect() };
    let Some(one) = levels.iter().find(|l| l.load == 1) else { return Vec::new() };
    let base = samples(one);
    levels
        .iter()
        .map(|l| {
            let these = samples(l);
            let test = (l.load != 1 && these.len() > 1 && base.len() > 1)
                .then(|| super::stats::mann_whitney(&these, &base, super::stats::Alternative::TwoSided))
                .flatten();
            let median = |v: &[f64]| (!v.is_empty()).then(|| spread(v.iter().copied()).median);
            LevelTest {
                load: l.load,
                figure: key,
                median_ratio: median(&these).zip(median(&base)).filter(|(_, b)| *b != 0.0).map(|(a, b)| a / b),
                p_value: test.map(|t| t.p_value),
                method: test.map(|t| t.method),
            }
        })
        .collect()
}

/// The p-value cell of a test: four decimals, "(exact)" when from the exact
/// distribution, "-" without a test.
pub fn p_cell(p_value: Option<f64>, method: Option<super::stats::Method>) -> String {
    match (p_value, method) {
        (Some(p), Some(super::stats::Method::Exact)) => format!("{p:.4} (exact)"),
        (Some(p), _) => format!("{p:.4}"),
        _ => "-".to_owned(),
    }
}

/// Sets each level's ratio to `ratio(level, one)`, where `one` is the level of one
/// (every ratio `None` without it).
pub fn set_ratios<R>(levels: &mut [Level<R>], ratio: impl Fn(&Level<R>, &Level<R>) -> Option<f64>) {
    let Some(at) = levels.iter().position(|l| l.load == 1) else { return };
    let ratios: Vec<Option<f64>> = levels.iter().map(|l| ratio(l, &levels[at])).collect();
    for (level, r) in levels.iter_mut().zip(ratios) {
        level.ratio = r;
    }
}

/// The median of figure `key` of `level`, if it has one.
pub fn median<R>(level: &Level<R>, key: &str) -> Option<f64> {
    level.figures.get(key).copied().flatten().map(|f| f.median)
}

/// Prints the terminal table of a load-level experiment: one row a level, the figures
/// `keys`, then the ratio.
pub fn print_table<R>(keys: &[&str], levels: &[Level<R>]) {
    let Some(scale) = levels.first().map(|l| l.scale) else { return };
    let header: Vec<&str> = [scale.unit].into_iter().chain(keys.iter().copied()).chain([scale.ratio]).collect();
    super::report::print_table(
        &header,
        levels.iter().map(|l| {
            let mut row = vec![l.load.to_string()];
            row.extend(keys.iter().map(|key| super::report::cell(l.figures[key])));
            row.push(super::report::ratio_cell(l.ratio));
            row
        }),
    );
}

/// Writes a load-level experiment's report to `out`: `{name}.json` (everything, from
/// `report`), `{name}.csv` (one line per level and figure of `figures`, then the ratio),
/// and `{name}.html`.
pub fn write_report<R: serde::Serialize, F: serde::Serialize>(
    out: &std::path::Path,
    name: &str,
    report: &Report<R, F>,
    figures: &[(&'static str, &'static str)],
    html: &super::report::Html,
) -> Result<()> {
    std::fs::create_dir_all(out).map_err(|e| Error::io("create", out, e))?;
    crate::report::write_json(&out.join(format!("{name}.json")), report)?;
    let rows: Vec<Vec<String>> = report
        .levels
        .iter()
        .flat_map(|l| {
            let derived = l.ratio.map(|v| Spread { median: v, min: v, max: v });
            let figures = figures.iter().map(|&(key, how)| (key, l.figures[key], how));
            csv_rows(l.load, figures.chain([(l.scale.ratio, derived, l.scale.derivation)]))
        })
        .collect();
    let unit = report.levels.first().map_or("level", |l| l.scale.unit);
    super::report::write_csv(&out.join(format!("{name}.csv")), &csv_header(unit), &rows)?;
    super::report::write_html(&out.join(format!("{name}.html")), html)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SCALE: Scale = Scale { unit: "sessions", ratio: "factor", derivation: "against one" };

    fn level(load: usize, median: f64) -> Level<()> {
        let figures = [("liops", Some(Spread { median, min: median, max: median }))].into_iter().collect();
        Level { load, figures, ratio: None, runs: vec![()], scale: SCALE }
    }

    #[test]
    fn a_level_serialises_with_its_scale_names() {
        let json = serde_json::to_value(Level { ratio: Some(1.5), ..level(2, 3.0) }).unwrap();
        assert_eq!(json["sessions"], 2);
        assert_eq!(json["factor"], 1.5);
        assert_eq!(json["figures"]["liops"]["median"], 3.0);
        assert!(json.get("load").is_none() && json.get("ratio").is_none(), "{json}");
    }

    #[test]
    fn ratios_are_to_the_level_of_one_or_none_without_it() {
        let mut levels = vec![level(1, 10.0), level(2, 19.0)];
        set_ratios(&mut levels, |l, one| Some(median(l, "liops")? / median(one, "liops")?));
        assert_eq!(levels.iter().map(|l| l.ratio).collect::<Vec<_>>(), [Some(1.0), Some(1.9)]);
        let mut without_one = vec![level(2, 19.0)];
        set_ratios(&mut without_one, |_, _| Some(1.0));
        assert_eq!(without_one[0].ratio, None);
    }

    #[test]
    fn shuffled_rounds_hold_every_item_once_a_round_in_a_seeded_order() {
        let schedule = shuffled_rounds(&[1, 2, 3, 4], 3, 7);
        assert_eq!(schedule.len(), 12);
        for round in schedule.chunks(4) {
            let mut sorted = round.to_vec();
            sorted.sort_unstable();
            assert_eq!(sorted, [1, 2, 3, 4]);
        }
        assert_eq!(schedule, shuffled_rounds(&[1, 2, 3, 4], 3, 7), "the same seed, the same order");
    }

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
