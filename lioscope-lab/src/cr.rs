//! `lioscope lab cr`: the cost of consistent reads, after the source experiment
//! ("Impact of Consistent Reads").
//!
//! A table `rc_test` is loaded, committed and cached; the baseline is `samples` runs of
//! `SELECT SUM(update_seq) FROM rc_test`. Then, before each further sample set, another
//! session updates the same `updated_percent` of the rows twice without committing (as
//! the source did with `WHERE ROWNUM < 1000000`), so each set meets a longer chain of
//! undo. Unless `--idle`, a third session commits an unrelated row before each set, as
//! the rest of a system moves the SCN on. The first query after each update builds the
//! CR clones (reported on its own);
//! the set's samples then reuse them from the cache. Reported per set: elapsed and CPU
//! medians, the elapsed ratio to the baseline, the consistent-read statistics per
//! sample, and the Kruskal-Wallis p-value of the set's elapsed times against the
//! baseline's and against the set before. `--out DIR` writes `cr.json` (every sample),
//! `cr.csv` (a line per set) and `cr.html` (the sets' elapsed times as the source charted
//! them, each sample over the run, and the CR work per set).

use super::sample::{self, Measurement, measure};
use super::stats::{Spread, kruskal_wallis, spread};
use lioscope::stats::Stat;
use lioscope::{Database, DatabaseOptions, Result};

/// Options of the experiment.
#[derive(Debug, Clone, clap::Args)]
pub struct CrOptions {
    /// Rows in rc_test (the source used 18,000,000).
    #[arg(long, default_value_t = 2_000_000)]
    pub rows: u64,
    /// Timed queries per sample set.
    #[arg(long, default_value_t = 60)]
    pub samples: usize,
    /// Sample sets: the baseline, then one per pair of uncommitted updates.
    #[arg(long, default_value_t = 4)]
    pub sets: usize,
    /// Percent of the rows each update changes (the source: 1M of 18M, 5.5%).
    #[arg(long, default_value_t = 5.5)]
    pub updated_percent: f64,
    /// Directory for the database (default: a temporary directory, removed after).
    #[arg(long)]
    pub dir: Option<std::path::PathBuf>,
    /// Commit nothing else between the sets. By default a third session commits a one-row
    /// change before each set, as the rest of a system moves the SCN on: the clones of the
    /// previous set then no longer serve new snapshots, and the first query of each set
    /// rebuilds them through the whole, longer chain of undo.
    #[arg(long)]
    pub idle: bool,
    /// Write every sample as JSON to this file too.
    #[arg(long)]
    pub json: Option<std::path::PathBuf>,
    /// Directory for the report: cr.json, cr.csv and cr.html.
    #[arg(long)]
    pub out: Option<std::path::PathBuf>,
    #[command(flatten)]
    pub history: super::history::HistoryArgs,
}

const QUERY: &str = "SELECT SUM(update_seq) FROM rc_test";

/// The statistics shown per sample.
const CR_STATS: [Stat; 5] = [
    Stat::ConsistentGets,
    Stat::CrBlocksCreated,
    Stat::CrUndoRecordsApplied,
    Stat::ConsistentChanges,
    Stat::ConsistentGetsExamination,
];

/// One sample set.
#[derive(Debug, serde::Serialize)]
struct SampleSet {
    /// Uncommitted updates of the updated rows before this set.
    updates_before: usize,
    /// The first query after the updates, which built the CR clones (none for the baseline).
    clone_building: Option<Sample>,
    samples: Vec<Sample>,
}

#[derive(Debug, Clone, serde::Serialize)]
struct Sample {
    elapsed_ms: f64,
    cpu_ms: f64,
    sum: u64,
    /// Deltas of [`CR_STATS`], in that order.
    stats: [u64; 5],
}

impl From<&Measurement> for Sample {
    fn from(m: &Measurement) -> Sample {
        Sample { elapsed_ms: m.elapsed_ms, cpu_ms: m.cpu_ms, sum: m.rows(), stats: CR_STATS.map(|s| m.delta(s)) }
    }
}

pub fn run(opts: &CrOptions) -> Result<()> {
    let (dir, _tmp) = sample::work_dir(opts.dir.as_deref(), "lab-cr")?;
    // The updater's undo (about 160 bytes a row changed) grows the undo tablespace as it
    // needs. Rows are about 100 bytes; the cache holds the table, its clones and the undo.
    let updater_undo =
        opts.rows as f64 * opts.updated_percent / 100.0 * 2.0 * opts.sets.saturating_sub(1) as f64 * 160.0;
    let cache = opts.rows * 200 + (256 << 20) + updater_undo as u64;
    let options =
        DatabaseOptions { parameters: vec![("db_cache_size".into(), cache.to_string())], ..Default::default() };
    let db = Database::create(&dir, options)?;
    let reader = db.session();
    let updated = ((opts.rows as f64) * opts.updated_percent / 100.0).round() as u64;
    println!(
        "lioscope lab cr: {} rows, {} updated per update ({}%), {} sets of {} samples, db_cache_size {} MiB, in {}",
        opts.rows,
        updated,
        opts.updated_percent,
        opts.sets,
        opts.samples,
        cache >> 20,
        dir.display()
    );
    reader.execute(
        "CREATE TABLE rc_test (id NUMBER NOT NULL, update_seq NUMBER NOT NULL, update_stamp DATE NOT NULL, padding VARCHAR2(60))",
    )?;
    let load = measure(
        &reader,
        &format!(
            "INSERT INTO rc_test SELECT LEVEL, MOD(LEVEL, 1000), SYSDATE, RPAD('x', 60, 'x') FROM dual CONNECT BY LEVEL <= {}",
            opts.rows
        ),
    )?;
    println!("Loaded in {:.0} ms; caching with 5 scans.", load.elapsed_ms);
    for _ in 0..5 {
        reader.execute(QUERY)?;
    }
    let updater = db.session();
    updater.set_autocommit(false);
    let elsewhere = db.session();
    elsewhere.execute("CREATE TABLE rc_elsewhere (n NUMBER)")?;
    let update = format!("UPDATE rc_test SET update_stamp = SYSDATE WHERE ROWNUM < {}", updated + 1);
    let mut sets = Vec::new();
    for set in 0..opts.sets.max(1) {
        let mut clone_building = None;
        if set > 0 {
            for _ in 0..2 {
                updater.execute(&update)?;
            }
            if !opts.idle {
                elsewhere.execute(&format!("INSERT INTO rc_elsewhere VALUES ({set})"))?;
            }
            clone_building = Some(Sample::from(&measure(&reader, QUERY)?));
        }
        let samples = (0..opts.samples.max(1))
            .map(|_| measure(&reader, QUERY).map(|m| Sample::from(&m)))
            .collect::<Result<Vec<_>>>()?;
        sets.push(SampleSet { updates_before: 2 * set, clone_building, samples });
    }
    let rollback = measure(&updater, "ROLLBACK")?;
    print_report(&sets, &rollback);
    let environment = super::environment::Environment::read();
    let json = serde_json::json!({ "experiment": "cr", "environment": &environment,
        "parameters": { "rows": opts.rows, "updated_percent": opts.updated_percent, "samples": opts.samples,
            "sets": opts.sets, "idle": opts.idle },
        "rows": opts.rows, "updated_rows": updated, "query": QUERY, "statistics": CR_STATS.map(|s| s.name()), "sets": sets });
    let headline = Some(("set=1", "elapsed_ms"));
    let stored =
        super::history::store_report(&opts.history, "cr", &environment, &json, history_figures(&sets), headline)?;
    if let Some(path) = &opts.json {
        crate::report::write_json(path, &json)?;
    }
    if let Some(out) = &opts.out {
        std::fs::create_dir_all(out).map_err(|e| lioscope::Error::io("create", out, e))?;
        crate::report::write_json(&out.join("cr.json"), &json)?;
        crate::report::write_csv(&out.join("cr.csv"), &SET_COLUMNS, &set_rows(&sets))?;
        let parameters = [
            ("rows", serde_json::json!(opts.rows)),
            ("updated_percent", serde_json::json!(opts.updated_percent)),
            ("updated_rows", serde_json::json!(updated)),
            ("samples", serde_json::json!(opts.samples)),
            ("sets", serde_json::json!(opts.sets)),
            ("idle", serde_json::json!(opts.idle)),
        ]
        .into_iter()
        .collect();
        let html = html(&sets, &rollback, &environment, &parameters, stored.as_ref())?;
        crate::report::write_html(&out.join("cr.html"), &html)?;
        println!("Report written to {}/cr.{{json,csv,html}}.", out.display());
    }
    drop((reader, updater, elsewhere));
    db.close()
}

/// Every set's figures as the results history stores them: a group a set (`set=1` is
/// the baseline), elapsed and CPU time and each of [`CR_STATS`] per sample.
fn history_figures(sets: &[SampleSet]) -> Vec<super::history::FigureSamples> {
    let mut out = Vec::new();
    for (i, set) in sets.iter().enumerate() {
        let group = format!("set={}", i + 1);
        let figure = |name: &str, of: &dyn Fn(&Sample) -> f64| {
            super::history::FigureSamples::new(group.clone(), name, set.samples.iter().map(of).collect())
        };
        out.push(figure("elapsed_ms", &|s| s.elapsed_ms));
        out.push(figure("cpu_ms", &|s| s.cpu_ms));
        for (k, stat) in CR_STATS.iter().enumerate() {
            out.push(figure(stat.name(), &|s| s.stats[k] as f64));
        }
    }
    out
}

fn elapsed(set: &SampleSet) -> Vec<f64> {
    set.samples.iter().map(|s| s.elapsed_ms).collect()
}

fn median_stat(set: &SampleSet, i: usize) -> f64 {
    spread(set.samples.iter().map(|s| s.stats[i] as f64)).median
}

fn p_value(a: &SampleSet, b: &SampleSet) -> String {
    match kruskal_wallis(&[&elapsed(a), &elapsed(b)]) {
        Some((_, p)) => format!("{p:.4}"),
        None => "n/a".into(),
    }
}

/// The columns of the sets' table (terminal, CSV and HTML alike).
const SET_COLUMNS: [&str; 11] = [
    "set",
    "updates",
    "elapsed ms median [min..max]",
    "ratio",
    "CPU ms",
    "consistent gets",
    "CR blocks created",
    "undo records applied",
    "consistent changes",
    "p vs set 1",
    "p vs previous",
];

/// A row a set: medians per sample, the ratio of its median elapsed time to the
/// baseline's, and the Kruskal-Wallis p-values against the baseline and the set before.
fn set_rows(sets: &[SampleSet]) -> Vec<Vec<String>> {
    let base = spread(elapsed(&sets[0]));
    sets.iter()
        .enumerate()
        .map(|(i, set)| {
            let e: Spread = spread(elapsed(set));
            let cpu = spread(set.samples.iter().map(|s| s.cpu_ms)).median;
            vec![
                (i + 1).to_string(),
                set.updates_before.to_string(),
                format!("{:.1} [{:.1}..{:.1}]", e.median, e.min, e.max),
                format!("{:.3}", e.median / base.median),
                format!("{cpu:.1}"),
                format!("{:.0}", median_stat(set, 0)),
                format!("{:.0}", median_stat(set, 1)),
                format!("{:.0}", median_stat(set, 2)),
                format!("{:.0}", median_stat(set, 3)),
                if i == 0 { "-".into() } else { p_value(&sets[0], set) },
                if i == 0 { "-".into() } else { p_value(&sets[i - 1], set) },
            ]
        })
        .collect()
}

/// What the first query after each pair of updates did, a line a set.
fn clone_building_lines(sets: &[SampleSet]) -> Vec<String> {
    let base = spread(elapsed(&sets[0]));
    sets.iter()
        .enumerate()
        .filter_map(|(i, set)| {
            let c = set.clone_building.as_ref()?;
            Some(format!(
                "set {}: {:.1} ms elapsed ({:.2}x the baseline median), {:.1} ms CPU, {} CR blocks created, {} undo \
                 records applied, {} consistent gets",
                i + 1,
                c.elapsed_ms,
                c.elapsed_ms / base.median,
                c.cpu_ms,
                c.stats[1],
                c.stats[2],
                c.stats[0]
            ))
        })
        .collect()
}

/// Whether every query returned the same committed sum, and that sum.
fn same_sum(sets: &[SampleSet]) -> (bool, u64) {
    let sums: Vec<u64> = sets.iter().flat_map(|s| s.samples.iter().map(|x| x.sum)).collect();
    (sums.windows(2).all(|w| w[0] == w[1]), sums[0])
}

const TABLE_NOTE: &str = "medians per sample; ratio = set median / baseline median elapsed; p = Kruskal-Wallis \
                          test of the elapsed times, below 0.05 means the sets differ";

fn print_report(sets: &[SampleSet], rollback: &Measurement) {
    println!("\nSample sets of `{QUERY}` ({TABLE_NOTE})");
    crate::report::print_table(&SET_COLUMNS, set_rows(sets));
    println!("\nFirst query after each pair of updates (builds the CR clones the set then reuses; with");
    println!("none created, it reused the previous set's clones: nothing committed in between):");
    for line in clone_building_lines(sets) {
        println!("  {line}");
    }
    let (same, sum) = same_sum(sets);
    println!("\nEvery query returned the committed sum {sum}: {}", if same { "yes" } else { "NO" });
    println!(
        "Rolling the updates back took {:.0} ms ({} undo records applied).",
        rollback.elapsed_ms,
        rollback.delta(Stat::RollbackChangesUndoRecordsApplied)
    );
}

/// The HTML report: the sets' table, their elapsed times (median, bars from min to max,
/// the source's chart), every sample's elapsed time over the run, and the CR work of
/// the query that built each set's clones.
fn html(
    sets: &[SampleSet],
    rollback: &Measurement,
    environment: &super::environment::Environment,
    parameters: &std::collections::BTreeMap<&'static str, serde_json::Value>,
    stored: Option<&super::history::Stored>,
) -> Result<crate::report::Html> {
    use crate::report::{Chart, Html, Series};
    let mut html = Html::new("lab cr: the cost of consistent reads", environment, parameters);
    html.paragraph(&format!(
        "`{QUERY}` timed in sample sets: the baseline, then after each pair of uncommitted updates by another \
         session. {TABLE_NOTE}."
    ));
    html.table_from("Sample sets", &SET_COLUMNS, set_rows(sets));
    for line in clone_building_lines(sets) {
        html.paragraph(&format!("First query after the updates, {line}."));
    }
    let (same, sum) = same_sum(sets);
    html.paragraph(&format!(
        "Every query returned the committed sum {sum}: {}. Rolling the updates back took {:.0} ms.",
        if same { "yes" } else { "NO" },
        rollback.elapsed_ms
    ));
    let names: Vec<String> = sets.iter().map(|s| format!("{} updates", s.updates_before)).collect();
    let categories: Vec<&str> = names.iter().map(String::as_str).collect();
    let per_set = |name: &str, of: &dyn Fn(&Sample) -> f64| {
        let points = sets.iter().enumerate().map(|(i, set)| {
            let s = spread(set.samples.iter().map(of));
            (i as f64, s.median, Some((s.min, s.max)))
        });
        Series::new(name, points.collect())
    };
    html.chart(Chart::bars(
        "Elapsed time of the query, by uncommitted updates before the set",
        "ms",
        &categories,
        vec![per_set("elapsed", &|s| s.elapsed_ms), per_set("CPU", &|s| s.cpu_ms)],
        "median of the set's samples, bars from min to max",
    ))?;
    let mut at = 0.0;
    let over_run: Vec<Series> = sets
        .iter()
        .zip(&names)
        .map(|(set, name)| {
            let points = set.samples.iter().map(|s| {
                at += 1.0;
                (at, s.elapsed_ms, None)
            });
            Series::new(name, points.collect())
        })
        .collect();
    html.chart(Chart::points(
        "Each sample's elapsed time, in the order they ran",
        "sample",
        "elapsed ms",
        over_run,
        "one point a query; the first query after each pair of updates (which builds the clones) is not among them",
    ))?;
    // The clones are built by the first query after each pair of updates; the samples
    // reuse them, so its work is what grows with the chain of undo.
    let building = |name: &str, stat: usize| {
        let points = sets.iter().enumerate().map(|(i, set)| {
            let v = set.clone_building.as_ref().map_or(0.0, |c| c.stats[stat] as f64);
            (i as f64, v, None)
        });
        Series::new(name, points.collect())
    };
    html.chart(Chart::bars(
        "Consistent-read work of the first query after the updates, by set",
        "per query",
        &categories,
        vec![building("undo records applied", 2), building("CR blocks created", 1)],
        "deltas of 'data blocks consistent reads - undo records applied' and 'CR blocks created' of the query that \
         built the set's clones (none for the baseline); the set's other queries reused them",
    ))?;
    super::history::draw_trend(&mut html, stored)?;
    Ok(html)
}
