//! `lab lio` and `lab cpu` end to end at a tiny size, checked against the engine's own
//! statistics, and their HTML reports opened in headless Chromium with every chart drawn.

mod common;

use common::*;
use serde_json::Value;

fn read_json(path: &std::path::Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
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
        probe: lioscope_lab::bandwidth::ProbeOptions { mib: 16 },
        history: lioscope_lab::history::HistoryArgs::off(),
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
        // A session's block bytes a second against the same run's bandwidth probe.
        let gb_per_s = figure("liops_per_session") * 8192.0 / 1e9;
        assert!((figure("read_gb_per_s") - gb_per_s).abs() < 1e-6 * gb_per_s, "{n} sessions");
        for run in runs {
            let probe = report["bandwidth_probe"]["gb_per_s"]["median"].as_f64().unwrap();
            let fraction = run["bandwidth_fraction"].as_f64().unwrap();
            let sessions = run["per_session"].as_array().unwrap();
            let lio: f64 = sessions.iter().map(|s| s["logical_reads"].as_f64().unwrap()).sum();
            let run_gb_per_s = lio / run["elapsed_s"].as_f64().unwrap() / n as f64 * 8192.0 / 1e9;
            assert!((fraction - run_gb_per_s / probe).abs() < 1e-9 * fraction, "{n} sessions");
        }
    }
    // One probe pass first, then one before each of the four runs.
    assert_eq!(report["bandwidth_probe"]["samples_gb_per_s"].as_array().unwrap().len(), 5);
    assert_eq!(levels[0]["factor"], 1.0);
    // Two sessions' per-session rate tested against one session's.
    let tests = report["tests"].as_array().unwrap();
    assert_eq!(tests.len(), 2);
    assert!(tests[0]["p_value"].is_null() && tests[1]["p_value"].as_f64().is_some(), "{tests:?}");
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
        probe: lioscope_lab::bandwidth::ProbeOptions { mib: 1 },
        history: lioscope_lab::history::HistoryArgs::off(),
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
fn lab_cpu_times_each_load_level_and_kind_in_shuffled_rounds_and_finds_the_knees() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    // A run stored before, on this machine: the report draws the knee across both.
    let history_path = dir.path().join("history.sqlite");
    let environment = lioscope_lab::environment::Environment::read();
    lioscope_lab::history::History::open(&history_path)
        .unwrap()
        .record(&lioscope_lab::history::NewRun {
            experiment: "cpu",
            environment: &environment,
            parameters: serde_json::json!({}),
            report: serde_json::json!({}),
            figures: vec![lioscope_lab::history::FigureSamples::new("findings", "knee", vec![2.0])],
        })
        .unwrap();
    let opts = lioscope_lab::cpu::CpuOptions {
        workers: vec![1, 2, 3],
        seconds: 0.1,
        repeat: 2,
        seed: Some(7),
        out: Some(out.clone()),
        db: Some(dir.path().join("db")),
        history: lioscope_lab::history::HistoryArgs::at(&history_path),
    };
    let report = lioscope_lab::cpu::run(&opts).expect("runs");
    let mut history = lioscope_lab::history::History::open(&history_path).unwrap();
    let runs = history.runs(Some("cpu")).unwrap();
    assert_eq!(runs.len(), 2);
    let stored = history.figures(runs[1].id).unwrap();
    for group in ["workers=3", "control workers=3", "findings"] {
        assert!(stored.iter().any(|f| f.group == group), "{group}: {stored:?}");
    }
    let json = read_json(&out.join("cpu.json"));
    assert_eq!(json["levels"].as_array().unwrap().len(), 3);
    assert_eq!(json["control_levels"].as_array().unwrap().len(), 3);
    assert_eq!(json["parameters"]["seed"], 7);
    // Every (level, kind) pair ran once a round, and the order was recorded.
    let schedule = &report.findings.schedule;
    assert_eq!(schedule.len(), 2 * 3 * 2);
    for round in schedule.chunks(6) {
        let mut pairs: Vec<String> = round.iter().map(|(n, k)| format!("{n}{k:?}")).collect();
        pairs.sort();
        assert_eq!(pairs, ["1Control", "1Engine", "2Control", "2Engine", "3Control", "3Engine"]);
    }
    for level in report.levels.iter().chain(&report.findings.control_levels) {
        assert_eq!(level.runs.len(), 2);
        for run in &level.runs {
            assert_eq!(run.worker_cpu_s.len(), level.load);
            assert!(run.worker_cpu_s.iter().all(|&c| c > 0.0), "each worker did the work: {run:?}");
            let slowest = run.worker_wall_s.iter().copied().fold(0.0, f64::max);
            assert!(run.wall_s >= slowest, "the level lasts until the last worker: {run:?}");
            assert_eq!(schedule[run.sequence].0, level.load);
            if let (Some(threads), Some(cores)) = (run.utilization_by_threads_pct, run.utilization_by_cores_pct) {
                let env = &report.environment;
                // The same busy time over fewer units: by cores is threads-per-core times by threads.
                let ratio = f64::from(env.logical_cpus) / f64::from(env.cores);
                assert!((cores - threads * ratio).abs() < 1e-6 * cores.max(1.0), "{run:?}");
            }
        }
    }
    assert_eq!(report.levels[0].ratio, Some(1.0));
    assert_eq!(report.findings.control_levels[0].ratio, Some(1.0));
    // One worker is always at full speed against itself.
    assert!(report.findings.knee.unwrap() >= 1, "{:?}", report.findings.verdict);
    assert!(report.findings.control_knee.unwrap() >= 1, "{:?}", report.findings.verdict);
    let tests = &report.findings.tests;
    assert_eq!(tests.iter().map(|t| t.workers).collect::<Vec<_>>(), [1, 2, 3]);
    assert!(tests.iter().all(|t| t.engine.is_some() && t.control.is_some() && t.engine_to_control.is_some()));
    assert!(report.findings.verdict.contains("too few"), "two samples cannot reach significance");
    assert!(json["derivations"]["knee"].as_str().unwrap().contains("Mann-Whitney"));
    assert!(json["environment"]["threads_per_core"].as_u64().unwrap() >= 1);
    // Wall times, utilization, and the knee across the two stored runs.
    assert_charts_drawn(&out.join("cpu.html"), 3);
}
