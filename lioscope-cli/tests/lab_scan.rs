//! `lab scan` end to end at a small size: the six paths in the source's order under their
//! plain names, every row visited by each measured path, the figures checked against the
//! engine's own statistics (the full scan's logical reads are the table's blocks below
//! the high-water mark; the in-memory scans read no block but the segment header; the
//! compressed copy's scan reads its own, fewer blocks and decompresses two columns a
//! compression unit), and a hardware figure either measured or `null` with the kernel's
//! reason beside it.

mod common;

use common::*;
use lioscope_lab::scan::{ScanOptions, run};
use serde_json::Value;

const ROWS: u64 = 20_000;

#[test]
fn lab_scan_measures_every_path_and_reports_what_it_cannot() {
    let dir = tempfile::tempdir().unwrap();
    let (db_dir, out) = (dir.path().join("db"), dir.path().join("out"));
    let opts = ScanOptions {
        rows: ROWS,
        repeat: 2,
        out: Some(out.clone()),
        db: Some(db_dir.clone()),
        instructions: lioscope_lab::scan::InstructionSource::Perf,
        callgrind_child: None,
        lioscope_exe: None,
        hcc_level: lioscope_lab::scan::HccLevelArg::QueryLow,
        probe: lioscope_lab::bandwidth::ProbeOptions { mib: 64 },
        peers: true,
        history: lioscope_lab::history::HistoryArgs::at(dir.path().join("history.sqlite")),
    };
    run(&opts).expect("runs");
    // The run is in the results history, every sample of every measured path.
    let mut history = lioscope_lab::history::History::open(&dir.path().join("history.sqlite")).unwrap();
    let runs = history.runs(Some("scan")).unwrap();
    assert_eq!(runs.len(), 1);
    let stored = history.figures(runs[0].id).unwrap();
    let cpu = stored.iter().find(|f| f.group == "path=FULL_BUFFER_CACHE" && f.figure == "cpu_ms").unwrap();
    assert_eq!(cpu.samples.len(), 2);
    assert!(stored.iter().any(|f| f.group == "path=COMPRESSED_BLOCKS" && f.figure == "cpu_ms"));
    let report: Value = serde_json::from_str(&std::fs::read_to_string(out.join("scan.json")).unwrap()).unwrap();
    let csv = std::fs::read_to_string(out.join("scan.csv")).unwrap();
    assert!(csv.starts_with("path,status,figure,median,min,max,derivation"));

    // The peers ran the full scan's query on the same rows (each checks its count is
    // the rows'), and lioscope's lead over each is their median over its own.
    let peers = report["peers"].as_array().unwrap();
    assert_eq!(peers.iter().map(|p| p["engine"].as_str().unwrap()).collect::<Vec<_>>(), ["PostgreSQL", "SQLite"]);
    let full_ms = report["paths"][2]["figures"]["elapsed_ms"]["median"].as_f64().unwrap();
    for peer in peers {
        if let Some(why) = peer["error"].as_str() {
            assert!(
                peer["engine"] == "PostgreSQL" && why.contains("not installed"),
                "{} did not run: {why}",
                peer["engine"]
            );
            eprintln!("skipped: PostgreSQL as a peer of lab scan: {why}");
            continue;
        }
        assert_eq!(peer["samples_ms"].as_array().unwrap().len(), 2, "{peer}");
        let median = peer["elapsed_ms"]["median"].as_f64().unwrap();
        let speedup = peer["lioscope_speedup"].as_f64().unwrap();
        assert!((speedup - median / full_ms).abs() < 1e-9 * speedup, "{peer}");
        let rows_per_s = peer["rows_per_s"].as_f64().unwrap();
        assert!((rows_per_s - ROWS as f64 / (median / 1000.0)).abs() < 1e-6 * rows_per_s, "{peer}");
    }
    assert!(std::fs::read_to_string(out.join("scan.html")).unwrap().contains("The full scan's query in the peers"));

    // Each measured path's CPU time is tested against the full scan's.
    let tests = report["tests"].as_array().unwrap();
    let tested: Vec<&str> = tests.iter().map(|t| t["path"].as_str().unwrap()).collect();
    assert_eq!(
        tested,
        ["INDEX_BAD_CF", "INDEX_GOOD_CF", "INMEMORY_PREDICATE", "INMEMORY_NO_PREDICATE", "COMPRESSED_BLOCKS"]
    );
    assert!(tests.iter().all(|t| t["p_value"].as_f64().is_some_and(|p| (0.0..=1.0).contains(&p))), "{tests:?}");

    let paths = report["paths"].as_array().unwrap();
    let names: Vec<&str> = paths.iter().map(|p| p["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "INDEX_BAD_CF",
            "INDEX_GOOD_CF",
            "FULL_BUFFER_CACHE",
            "INMEMORY_PREDICATE",
            "INMEMORY_NO_PREDICATE",
            "COMPRESSED_BLOCKS"
        ]
    );
    let figure = |p: &Value, key: &str| p["figures"][key]["median"].as_f64();
    for p in paths {
        assert_eq!(p["status"], "measured", "{}", p["name"]);
        assert_eq!(figure(p, "rows"), Some(ROWS as f64), "{}: every row", p["name"]);
        assert_eq!(p["samples"].as_array().unwrap().len(), 2);
        for key in ["cpu_ms", "elapsed_ms", "logical_reads", "logical_reads_per_row"] {
            assert!(figure(p, key).is_some(), "{}: {key}", p["name"]);
        }
        // Hardware figures: measured, or null with the reason listed.
        for (key, counter) in
            [("instructions", "instructions"), ("cycles", "cycles"), ("branch_misses", "branch-misses")]
        {
            if p["figures"][key].is_null() {
                let why = report["counters_unavailable"][counter].as_str().unwrap_or_default();
                assert!(why.contains("not available on this machine"), "{}: {key} null without a reason", p["name"]);
            }
        }
    }
    // The compressed copy: fewer blocks, each read once, two columns a unit decompressed.
    let compressed = &paths[5];
    let (row_blocks, hcc_blocks) = (
        report["parameters"]["blocks_customers"].as_f64().unwrap(),
        report["parameters"]["blocks_customers_hcc"].as_f64().unwrap(),
    );
    assert!(hcc_blocks < row_blocks, "{hcc_blocks} blocks against {row_blocks}");
    assert_eq!(figure(compressed, "logical_reads"), Some(hcc_blocks), "every block of the copy once");
    let cus = figure(compressed, "ehcc_cus_decompressed").unwrap();
    assert!(cus >= 1.0);
    assert_eq!(figure(compressed, "ehcc_columns_decompressed"), Some(2.0 * cus), "cust_id and cust_valid");
    assert_eq!(report["parameters"]["hcc_level"], "QUERY LOW");

    // The engine's own statistics: the full scan reads every block below the HWM once.
    let db = open(&db_dir, options(8192, "64M"));
    let s = db.session();
    let below_hwm: f64 =
        scalar(&s, "SELECT blocks_below_hwm FROM user_segments WHERE segment_name = 'CUSTOMERS'").parse().unwrap();
    assert_eq!(figure(&paths[2], "logical_reads"), Some(below_hwm), "FULL scan logical reads = blocks below the HWM");
    for p in &paths[3..5] {
        assert_eq!(figure(p, "logical_reads"), Some(1.0), "{}: the segment header only", p["name"]);
        assert_eq!(figure(p, "im_scan_rows"), Some(ROWS as f64), "{}", p["name"]);
    }
    // Bytes a second against the bandwidth probe: a pass before each path and one first.
    let probe = &report["bandwidth_probe"];
    assert_eq!(probe["samples_gb_per_s"].as_array().unwrap().len(), 7);
    assert_eq!(probe["bytes"], 64 << 20);
    let probe_median = probe["gb_per_s"]["median"].as_f64().unwrap();
    assert!(probe_median > 0.0);
    let full_sample = &paths[2]["samples"][0];
    assert_eq!(full_sample["bytes_read"].as_f64(), Some(full_sample["logical_reads"].as_f64().unwrap() * 8192.0));
    for p in paths {
        let s = &p["samples"][0];
        let gb = s["bytes_read"].as_f64().unwrap() / 1e9 / (s["elapsed_ms"].as_f64().unwrap() / 1000.0);
        let fraction = s["bandwidth_fraction"].as_f64().unwrap();
        assert!(s["bytes_read"].as_f64().unwrap() > 0.0, "{}", p["name"]);
        assert!((fraction - gb / probe_median).abs() <= 1e-9 * fraction.max(1.0), "{}", p["name"]);
    }
    // An index path's bytes are its distinct blocks, however often it got them again.
    let bad = &paths[0]["samples"][0];
    assert!(bad["bytes_read"].as_f64().unwrap() < bad["logical_reads"].as_f64().unwrap() * 8192.0);
    assert!(bad["bytes_read"].as_f64().unwrap() >= full_sample["bytes_read"].as_f64().unwrap());
    // The column store's paths read the in-memory size of their columns: two against one.
    let im_bytes = |p: &Value| p["samples"][0]["bytes_read"].as_f64().unwrap();
    assert!(im_bytes(&paths[3]) > im_bytes(&paths[4]), "cust_id and cust_valid against cust_valid alone");
    // The bad clustering factor visits a block a row; the good one pins it across rows.
    assert!(figure(&paths[0], "logical_reads").unwrap() > ROWS as f64);
    assert!(figure(&paths[1], "buffer_is_pinned_count").unwrap() > ROWS as f64 / 2.0);
    assert!(report["environment"]["logical_cpus"].as_u64().unwrap() >= 1);
    assert_eq!(report["parameters"]["rows"], ROWS, "the table's rows");
    assert!(report["callgrind_calibration"].is_null(), "callgrind did not run");
    assert!(report["derivations"]["instructions_per_row"].as_str().unwrap().contains("rows"));
    // The HTML report: the source document's six charts, each drawn by a browser.
    let charts = charts_drawn_by_chromium(&out.join("scan.html"));
    assert_eq!(charts.len(), 7);
    assert!(charts.iter().all(|c| c.width >= 400 && c.marks >= 20), "{charts:?}");
}

/// With `--instructions callgrind`, each measured path is counted again in a child under
/// callgrind with collection only around the statement's execution: twice the rows take
/// about twice the instructions (the load and the population, outside, are not counted),
/// and the report says where its instructions came from.
#[test]
fn callgrind_counts_only_the_statements_execution() {
    if std::process::Command::new("valgrind").arg("--version").output().is_err() {
        panic!("valgrind is needed for this test (./test.sh installs it)");
    }
    let count = |rows: u64| {
        let dir = tempfile::tempdir().unwrap();
        let opts = ScanOptions {
            rows,
            repeat: 1,
            out: None,
            db: Some(dir.path().join("db")),
            instructions: lioscope_lab::scan::InstructionSource::Callgrind,
            callgrind_child: None,
            lioscope_exe: Some(env!("CARGO_BIN_EXE_lioscope").into()),
            hcc_level: lioscope_lab::scan::HccLevelArg::QueryLow,
            probe: lioscope_lab::bandwidth::ProbeOptions { mib: 64 },
            peers: false,
            history: lioscope_lab::history::HistoryArgs::off(),
        };
        let report = serde_json::to_value(run(&opts).expect("runs")).unwrap();
        assert_eq!(report["instructions"], "callgrind");
        assert!(report["derivations"]["instructions_callgrind"].as_str().unwrap().contains("toggle-collect"));
        let full = &report["paths"][2];
        assert_eq!(full["name"], "FULL_BUFFER_CACHE");
        assert_eq!(report["paths"][5]["name"], "COMPRESSED_BLOCKS");
        assert!(report["paths"][5]["figures"]["instructions_callgrind"]["median"].as_f64().is_some_and(|n| n > 0.0));
        // The simulation: misses and mispredictions a row and a block, and where they fall.
        for key in ["l1_misses_per_row_sim", "ll_misses_per_block_sim", "mispredictions_per_row_sim"] {
            assert!(full["figures"][key]["median"].as_f64().is_some_and(|n| n > 0.0), "{key}");
        }
        let top = full["simulated_functions"]["mispredictions"].as_array().unwrap();
        assert!(!top.is_empty() && top.len() <= 3, "{top:?}");
        let shares: f64 = top.iter().map(|f| f[1].as_f64().unwrap()).sum();
        assert!(shares > 0.0 && shares <= 1.0 + 1e-9, "{top:?}");
        // The method itself: a loop of known length counts what it executes.
        let calibration = &report["callgrind_calibration"];
        let (expected, counted) = (
            calibration["expected_instructions"].as_f64().unwrap(),
            calibration["counted_instructions"].as_f64().unwrap(),
        );
        assert_eq!(expected, 2_000_000.0);
        let tolerance = lioscope_lab::callgrind::CALIBRATION_TOLERANCE;
        assert!((counted - expected).abs() <= expected * tolerance, "counted {counted} of {expected}");
        full["figures"]["instructions_callgrind"]["median"].as_f64().unwrap()
    };
    let (small, large) = (count(10_000), count(20_000));
    let ratio = large / small;
    assert!((1.6..2.2).contains(&ratio), "instructions {small} for 10,000 rows, {large} for 20,000: ratio {ratio}");
}
