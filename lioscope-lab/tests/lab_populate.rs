//! `lab populate` end to end at a tiny size: every case populated in shuffled rounds, the
//! migrated copy's rows followed piece by piece, where the time went by phase, the
//! comparisons tested, the run stored in the results history, and the HTML charts drawn.

mod common;

use common::*;
use lioscope_lab::populate::{PopulateOptions, run};

/// Rows of each table: enough that the eight populations take long enough for Active
/// Session History, sampling every 10 ms, to see the workers (at 4,000 rows they took
/// about 25 ms in all, and a run could end with no sample of them).
const ROWS: u64 = 40_000;

#[test]
fn lab_populate_measures_each_case_and_where_its_time_goes() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let history = dir.path().join("history.sqlite");
    let opts = PopulateOptions {
        rows: ROWS,
        workers: vec![1, 2],
        levels: vec!["query low".into()],
        no_chained: false,
        cold: false,
        ash_interval: 10,
        repeat: 2,
        seed: Some(3),
        out: Some(out.clone()),
        db: Some(dir.path().join("db")),
        history: lioscope_lab::history::HistoryArgs::at(&history),
    };
    let report = run(&opts).expect("runs");
    assert_eq!(report.cases.len(), 4, "two tables, one level, two worker counts");
    assert_eq!(report.schedule.len(), 8);
    assert_eq!(report.migrated_rows, Some(ROWS), "every row of the copy migrated");
    for case in &report.cases {
        assert_eq!(case.case.level, "FOR QUERY LOW");
        assert_eq!(case.runs.len(), 2);
        for run in &case.runs {
            let p = &run.population;
            assert_eq!(p.segment.populated_rows, ROWS, "{}", case.label);
            let migrated = case.case.table == "CUSTOMERS_CHAINED";
            for ((_, _, phase), &us) in lioscope_lab::bench::inmemory::PHASES.iter().zip(&p.phases_us) {
                // Following chained rows is work only where rows migrated; every other
                // phase does some in every population.
                let expected = *phase != "following chained rows" || migrated;
                assert_eq!(us > 0, expected, "{}: {phase}: {:?}", case.label, p.phases_us);
            }
            assert_eq!(p.continued_rows > 0, migrated, "{}: pieces followed only of migrated rows", case.label);
        }
    }
    // Migrated against plain at each worker count, two workers against one per table.
    assert_eq!(report.comparisons.len(), 4);
    assert!(report.comparisons.iter().all(|c| c.p_value.is_some() && c.median_ratio.is_some()));
    let bad = PopulateOptions { levels: vec!["FOR QUERY MEDIUM".into()], ..opts.clone() };
    let err = run(&bad).unwrap_err().to_string();
    assert!(err.contains("--levels") && err.contains("QUERY MEDIUM"), "{err}");
    let mut stored = lioscope_lab::history::History::open(&history).unwrap();
    assert_eq!(stored.runs(Some("populate")).unwrap().len(), 1);
    // Active Session History saw the workers populate, ON CPU most of the time.
    assert!(!report.ash.is_empty(), "ASH samples of the workers");
    assert!(report.ash.iter().all(|p| p.worker.starts_with('W') && p.on_cpu_pct <= 100.0 + 1e-9));
    assert!(report.ash.iter().any(|p| p.on_cpu_pct > 0.0));
    assert_charts_drawn(&out.join("populate.html"), 4);
}
