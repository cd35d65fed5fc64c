//! `lab lio` and `lab cpu` end to end at a tiny size, checked against the engine's own
//! statistics, and their HTML reports opened in headless Chromium with every chart drawn.

#[path = "../../tests/common/mod.rs"]
mod common;

use common::*;
use serde_json::Value;

fn read_json(path: &std::path::Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn assert_charts_drawn(page: &std::path::Path, expected: usize) {
    let charts = charts_drawn_by_chromium(page);
    assert_eq!(charts.len(), expected, "{}", page.display());
    for chart in &charts {
        assert!(chart.width >= 400 && chart.height >= 200, "{}: {chart:?}", page.display());
        assert!(chart.marks >= 20, "{}: axes, grid and data drawn: {chart:?}", page.display());
    }
}

#[test]
fn lab_lio_counts_each_sessions_logical_reads_as_the_engine_does() {
    const ROWS: u64 = 400;
    const WORK_UNIT: u64 = 16;
    let dir = tempfile::tempdir().unwrap();
    let (db_dir, out) = (dir.path().join("db"), dir.path().join("out"));
    let opts = lioscope_lab::lio::LioOptions {
        rows: ROWS,
        work_unit: WORK_UNIT,
        sessions: vec![1, 2],
        seconds: 0.3,
        repeat: 2,
        out: Some(out.clone()),
        db: Some(db_dir.clone()),
        ash_intervals: Vec::new(),
    };
    lioscope_lab::lio::run(&opts).expect("runs");
    let report = read_json(&out.join("lio.json"));
    assert!(std::fs::read_to_string(out.join("lio.csv")).unwrap().starts_with("sessions,figure,median"));
    let levels = report["levels"].as_array().unwrap();
    assert_eq!(levels.iter().map(|l| l["sessions"].as_u64().unwrap()).collect::<Vec<_>>(), [1, 2]);

    // One operation of session 1, measured by the engine on its own.
    let db = open(&db_dir, options(8192, "64M"));
    let s = db.session();
    assert_eq!(
        scalar(&s, "SELECT blocks FROM user_tables WHERE table_name = 'CF2'"),
        ROWS.to_string(),
        "a row a block"
    );
    let before = s.stats().get(lioscope::stats::Stat::LogicalReads);
    let sql = "SELECT /*+ INDEX(cf cf1_ix) */ COUNT(c2) FROM cf1 cf WHERE custid > 100 AND custid <= 116";
    assert_eq!(scalar(&s, sql), WORK_UNIT.to_string());
    let one_operation = (s.stats().get(lioscope::stats::Stat::LogicalReads) - before) as f64;
    assert!(one_operation > WORK_UNIT as f64, "a block a row, and the index");

    for level in levels {
        let n = level["sessions"].as_u64().unwrap() as usize;
        let runs = level["runs"].as_array().unwrap();
        assert_eq!(runs.len(), 2);
        for run in runs {
            let sessions = run["per_session"].as_array().unwrap();
            assert_eq!(sessions.len(), n);
            let total: f64 = sessions.iter().map(|s| s["logical_reads"].as_f64().unwrap()).sum();
            let executions: f64 = sessions.iter().map(|s| s["executions"].as_f64().unwrap()).sum();
            assert!(sessions.iter().all(|s| s["executions"].as_u64().unwrap() > 0 && s["physical_reads"] == 0));
            // Every operation reads what the engine reads for one (each range lies in one leaf).
            assert_eq!(total, executions * one_operation, "{n} sessions");
        }
        let figure = |key: &str| level["figures"][key]["median"].as_f64().unwrap();
        assert_eq!(figure("logical_reads_per_execution"), one_operation);
        assert!(figure("liops") > 0.0 && (figure("liops_per_session") * n as f64 - figure("liops")).abs() < 1e-6);
        assert!(figure("db_cpu_per_s") > 0.0);
    }
    assert_eq!(levels[0]["factor"], 1.0);
    assert!(levels[1]["factor"].as_f64().unwrap() > 0.0);
    assert!(report["derivations"]["factor"].as_str().unwrap().contains("one session"));
    assert_charts_drawn(&out.join("lio.html"), 2);
}

#[test]
fn lab_lio_refuses_bad_options() {
    let base = lioscope_lab::lio::LioOptions {
        rows: 100,
        work_unit: 16,
        sessions: vec![1],
        seconds: 0.1,
        repeat: 1,
        out: None,
        db: None,
        ash_intervals: Vec::new(),
    };
    for (opts, name) in [
        (lioscope_lab::lio::LioOptions { sessions: vec![0], ..base.clone() }, "--sessions"),
        (lioscope_lab::lio::LioOptions { work_unit: 101, ..base.clone() }, "--work-unit"),
        (lioscope_lab::lio::LioOptions { seconds: 0.0, ..base.clone() }, "--seconds"),
        (lioscope_lab::lio::LioOptions { seconds: 1e20, ..base.clone() }, "--seconds"),
        (lioscope_lab::lio::LioOptions { sessions: vec![1, 100_000], ..base.clone() }, "--sessions"),
        (lioscope_lab::lio::LioOptions { rows: u64::MAX / 2, work_unit: 1, ..base.clone() }, "--rows"),
    ] {
        let err = lioscope_lab::lio::run(&opts).unwrap_err().to_string();
        assert!(err.contains(name), "{err}");
    }
}

#[test]
fn lab_cpu_times_each_load_level_and_finds_the_knee() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let opts = lioscope_lab::cpu::CpuOptions {
        workers: vec![1, 2, 3],
        seconds: 0.15,
        repeat: 1,
        out: Some(out.clone()),
        db: Some(dir.path().join("db")),
    };
    let report = lioscope_lab::cpu::run(&opts).expect("runs");
    let json = read_json(&out.join("cpu.json"));
    assert_eq!(json["levels"].as_array().unwrap().len(), 3);
    for level in &report.levels {
        let run = &level.runs[0];
        assert_eq!(run.worker_cpu_s.len(), level.load);
        assert!(run.worker_cpu_s.iter().all(|&c| c > 0.0), "each worker did the work: {run:?}");
        let slowest = run.worker_wall_s.iter().copied().fold(0.0, f64::max);
        assert!(run.wall_s >= slowest, "the level lasts until the last worker: {run:?}");
        if let (Some(threads), Some(cores)) = (run.utilization_by_threads_pct, run.utilization_by_cores_pct) {
            let env = &report.environment;
            // The same busy time over fewer units: by cores is threads-per-core times by threads.
            let ratio = f64::from(env.logical_cpus) / f64::from(env.cores);
            assert!((cores - threads * ratio).abs() < 1e-6 * cores.max(1.0), "{run:?}");
        }
    }
    assert_eq!(report.levels[0].ratio, Some(1.0));
    // One worker is always within the tolerance of itself.
    assert!(report.findings.knee.unwrap() >= 1, "{:?}", report.findings.verdict);
    assert!(json["derivations"]["knee"].as_str().unwrap().contains("25%"));
    assert!(json["environment"]["threads_per_core"].as_u64().unwrap() >= 1);
    assert_charts_drawn(&out.join("cpu.html"), 2);
}
