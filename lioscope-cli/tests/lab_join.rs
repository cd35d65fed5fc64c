//! `lab join` end to end in its quick mode: every method at every outer row count through
//! both indexes, joining exactly N rows, with figures checked against what each method
//! must read (a nested loop the index's height and a table block an outer row; a hash or
//! merge join one full scan of each table whatever N; a merge join's two sorts of N and
//! all inner rows), the optimizer's unhinted choice never costlier than a forced plan,
//! crossings placed between the points they lie between, tests around them, the run in
//! the results history and the report drawn by a browser.

mod common;

use common::*;
use lioscope_lab::history::HistoryArgs;
use lioscope_lab::join::{JoinOptions, run};
use lioscope_lab::scan::InstructionSource;
use serde_json::Value;

const QUICK_ROWS: f64 = 4_000.0;

fn quick(dir: &std::path::Path, out: Option<std::path::PathBuf>, history: HistoryArgs) -> JoinOptions {
    JoinOptions {
        inner_rows: 1_000_000,
        outer_rows: None,
        points_per_decade: 2,
        repeat: 5,
        quick: true,
        out,
        db: Some(dir.join("db")),
        instructions: InstructionSource::Perf,
        callgrind_max_outer: 10_000,
        callgrind_child: None,
        lioscope_exe: None,
        history,
    }
}

#[test]
fn lab_join_measures_each_method_at_each_outer_row_count_and_reports_the_crossings() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let history = dir.path().join("history.sqlite");
    run(&quick(dir.path(), Some(out.clone()), HistoryArgs::at(&history))).expect("runs");
    let report: Value = serde_json::from_str(&std::fs::read_to_string(out.join("join.json")).unwrap()).unwrap();
    let p = &report["parameters"];
    let series: Vec<u64> = p["outer_rows_series"].as_array().unwrap().iter().map(|n| n.as_u64().unwrap()).collect();
    assert_eq!(series, [1, 10, 100, 1000, 4000], "one point a decade, then the whole outer table");
    assert_eq!((p["inner_rows"].as_f64(), p["repeat"].as_u64()), (Some(QUICK_ROWS), Some(3)));

    let points = report["points"].as_array().unwrap();
    assert_eq!(points.len(), 2 * 3 * series.len(), "two indexes, three methods, every N");
    let median = |pt: &Value, key: &str| pt["figures"][key]["median"].as_f64().unwrap_or_else(|| panic!("{key}: {pt}"));
    let at = |index: &str, method: &str, n: u64| {
        points
            .iter()
            .find(|pt| pt["clustering"] == index && pt["method"] == method && pt["outer_rows"] == n)
            .unwrap_or_else(|| panic!("{index} {method} {n}"))
    };
    let outer_scan = p["outer_scan_logical_reads"].as_f64().unwrap();
    let inner_blocks = p["blocks_join_inner"].as_f64().unwrap();
    assert_eq!(outer_scan, p["blocks_join_outer"].as_f64().unwrap(), "the outer scan reads each block once");
    for pt in points {
        let n = pt["outer_rows"].as_f64().unwrap();
        assert_eq!(median(pt, "rows"), n, "every outer row joined to one inner row: {}", pt["sql"]);
        assert_eq!(pt["samples"].as_array().unwrap().len(), 3);
        assert!(pt["cost"].as_f64().unwrap() > 0.0);
        assert!(median(pt, "cpu_ms") > 0.0);
    }
    for index in ["GOOD", "BAD"] {
        let blevel = p[format!("blevel_{}", index.to_lowercase())].as_f64().unwrap();
        for &n in &series {
            // A nested loop: the index's root to leaf, then the table block, an outer row
            // (fewer when a block stays pinned from one probe to the next; a probe whose key
            // ends a leaf reads the next leaf too, a few in a thousand).
            let nl = at(index, "NESTED LOOPS", n);
            let per_row = median(nl, "join_logical_reads_per_outer_row");
            assert!(
                (1.0..=(blevel + 2.0) * 1.005).contains(&per_row),
                "{index} NL at N={n}: {per_row} logical reads an outer row, the index's height is {}",
                blevel + 1.0
            );
            // A hash join and a merge join read each table once, whatever N.
            for method in ["HASH JOIN", "MERGE JOIN"] {
                let reads = median(at(index, method, n), "logical_reads");
                assert_eq!(reads, inner_blocks + outer_scan, "{index} {method} at N={n}");
            }
            // The merge join sorts both inputs: N outer rows and every inner row.
            let merge = at(index, "MERGE JOIN", n);
            assert_eq!(median(merge, "sorts (memory)"), 2.0, "{index} MERGE JOIN at N={n}");
            assert_eq!(median(merge, "sorts (rows)"), n as f64 + QUICK_ROWS, "{index} MERGE JOIN at N={n}");
            assert_eq!(median(at(index, "HASH JOIN", n), "sorts (rows)"), 0.0);
        }
        // The nested loop's cost grows with N; the others' does not fall.
        let cost = |method: &str, n: u64| at(index, method, n)["cost"].as_f64().unwrap();
        assert!(cost("NESTED LOOPS", 4000) > 100.0 * cost("NESTED LOOPS", 1));
        assert!(cost("HASH JOIN", 4000) >= cost("HASH JOIN", 1));
        // The bad index visits at least as many blocks an outer row as the good one.
        let reads = |i: &str| median(at(i, "NESTED LOOPS", 4000), "logical_reads");
        assert!(reads("BAD") >= reads("GOOD"));
    }

    // The unhinted plan at each N under each cost setting: one of the methods, never
    // costlier than a forced one under the same setting.
    let choices = report["choices"].as_array().unwrap();
    let settings = ["default", "index_caching_90_cost_adj_25", "cache_aware"];
    assert_eq!(choices.len(), settings.len() * 2 * series.len());
    for c in choices {
        let (index, n) = (c["clustering"].as_str().unwrap(), c["outer_rows"].as_u64().unwrap());
        let setting = c["setting"].as_str().unwrap();
        assert!(settings.contains(&setting), "{c}");
        let cheapest = ["NESTED LOOPS", "HASH JOIN", "MERGE JOIN"]
            .iter()
            .map(|m| at(index, m, n)["costs"][setting].as_f64().unwrap())
            .fold(f64::INFINITY, f64::min);
        assert!(c["cost"].as_f64().unwrap() <= cheapest, "{c}: the cheapest forced plan costs {cheapest}");
    }
    let first_choice = choices
        .iter()
        .find(|c| c["setting"] == "default" && c["clustering"] == "GOOD" && c["outer_rows"] == 1)
        .unwrap();
    assert_eq!(first_choice["method"], "NESTED LOOPS", "one outer row: a probe of the index");

    // Every crossing lies between the two points it names, consecutive in the series.
    let crossings = report["crossings"].as_array().unwrap();
    assert_eq!(crossings.len(), 2 * 3);
    for x in crossings {
        for cross in x["measured"].as_array().unwrap().iter().chain(x["cost"].as_array().unwrap()) {
            let (from, to, n) =
                (cross["from"].as_u64().unwrap(), cross["to"].as_u64().unwrap(), cross["at"].as_f64().unwrap());
            let i = series.iter().position(|&s| s == from).unwrap();
            assert_eq!(series[i + 1], to, "{x}");
            assert!((from as f64..=to as f64).contains(&n), "{x}");
        }
    }
    // The nested loop's cost line crosses the hash join's: one probe is cheaper than a
    // full scan, thousands are not.
    let nl_hash = crossings.iter().find(|x| x["first"] == "NESTED LOOPS" && x["second"] == "HASH JOIN").unwrap();
    assert_eq!(nl_hash["cost"].as_array().unwrap().len(), 1, "{nl_hash}");
    // Each pair of methods is tested through each index, each test's p a probability.
    let tests = report["tests"].as_array().unwrap();
    for x in crossings {
        assert!(
            tests
                .iter()
                .any(|t| t["clustering"] == x["clustering"] && t["first"] == x["first"] && t["second"] == x["second"]),
            "{x}"
        );
    }
    assert!(tests.iter().all(|t| t["p_value"].as_f64().is_some_and(|p| (0.0..=1.0).contains(&p))), "{tests:?}");

    // The run is in the results history, every sample of every point.
    let mut stored = lioscope_lab::history::History::open(&history).unwrap();
    let runs = stored.runs(Some("join")).unwrap();
    assert_eq!(runs.len(), 1);
    let figures = stored.figures(runs[0].id).unwrap();
    let cpu = figures.iter().find(|f| f.group == "index=GOOD,method=HASH,outer_rows=4000" && f.figure == "cpu_ms");
    assert_eq!(cpu.map(|f| f.samples.len()), Some(3));
    assert!(figures.iter().any(|f| f.group == "index=BAD,method=NL,outer_rows=1" && f.figure == "optimizer_cost"));

    let csv = std::fs::read_to_string(out.join("join.csv")).unwrap();
    assert!(csv.starts_with("index,method,outer_rows,figure,median,min,max,derivation"));
    assert!(csv.contains("BAD,MERGE JOIN,4000,sorts (rows),8000,8000,8000"), "{csv}");
    // The report: through each index the crossing chart, CPU, logical reads and cost by N.
    let charts = charts_drawn_by_chromium(&out.join("join.html"));
    assert_eq!(charts.len(), 2 * 4);
    assert!(charts.iter().all(|c| c.width >= 400 && c.marks >= 20), "{charts:?}");
}

/// Bad sizes are refused with the option named.
#[test]
fn lab_join_refuses_sizes_it_cannot_measure() {
    let dir = tempfile::tempdir().unwrap();
    let mut opts = quick(dir.path(), None, HistoryArgs::off());
    opts.quick = false;
    opts.points_per_decade = 0;
    let e = run(&opts).unwrap_err().to_string();
    assert!(e.contains("--points-per-decade"), "{e}");
    opts.points_per_decade = 2;
    opts.inner_rows = 1;
    let e = run(&opts).unwrap_err().to_string();
    assert!(e.contains("--inner-rows"), "{e}");
}

/// Under callgrind, each point of at most --callgrind-max-outer outer rows is counted in a
/// child: nine probes of the index more add thousands of instructions each to the outer
/// table's scan, while the hash join's count hardly moves (its work is the inner table's
/// scan).
#[test]
fn lab_join_counts_instructions_per_outer_row_under_callgrind() {
    if std::process::Command::new("valgrind").arg("--version").output().is_err() {
        panic!("valgrind is needed for this test (./test.sh installs it)");
    }
    let dir = tempfile::tempdir().unwrap();
    let mut opts = quick(dir.path(), None, HistoryArgs::off());
    opts.instructions = InstructionSource::Callgrind;
    opts.callgrind_max_outer = 10;
    opts.lioscope_exe = Some(env!("CARGO_BIN_EXE_lioscope").into());
    let report = serde_json::to_value(run(&opts).expect("runs")).unwrap();
    let calibration = &report["callgrind_calibration"];
    let counted = calibration["counted_instructions"].as_f64().unwrap();
    assert!((counted - 2e6).abs() <= 2e6 * lioscope_lab::callgrind::CALIBRATION_TOLERANCE, "{calibration}");
    let points = report["points"].as_array().unwrap();
    let count = |method: &str, n: u64| {
        let pt =
            points.iter().find(|p| p["clustering"] == "GOOD" && p["method"] == method && p["outer_rows"] == n).unwrap();
        pt["figures"]["instructions_callgrind"]["median"].as_f64()
    };
    let (nl1, nl10) = (count("NESTED LOOPS", 1).unwrap(), count("NESTED LOOPS", 10).unwrap());
    let (hash1, hash10) = (count("HASH JOIN", 1).unwrap(), count("HASH JOIN", 10).unwrap());
    let per_probe = (nl10 - nl1) / 9.0;
    assert!((1_000.0..100_000.0).contains(&per_probe), "ten probes {nl10}, one {nl1}: {per_probe} a probe");
    assert!((hash10 / hash1 - 1.0).abs() < 0.2, "hash join: {hash1} at N=1, {hash10} at N=10");
    assert!(count("HASH JOIN", 100).is_none(), "over --callgrind-max-outer: not counted");
}
