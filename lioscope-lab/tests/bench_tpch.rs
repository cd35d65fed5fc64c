//! TPC-H at scale factor 0.01 through `lioscope bench tpch`: the 22 queries with both
//! parameter sets, lioscope's answers checked against DuckDB's stored answers
//! (`tests/tpch/answers-sf0.01.json`, made by `tests/tpch/make-answers.sh`) and against
//! every peer that runs in the same run (SQLite always; PostgreSQL and DuckDB where
//! installed, as `./test.sh` installs them), on the row store, the column store and HCC
//! compression units. A run whose answers differ fails; a planted difference shows it.

use lioscope_lab::bench::tpch::{TpchBenchOptions, run};
use lioscope_lab::tpch::queries::ParameterSets;
use std::path::{Path, PathBuf};

fn stored() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/tpch/answers-sf0.01.json")
}

fn options(dir: &Path) -> TpchBenchOptions {
    TpchBenchOptions {
        sf: 0.01,
        inmemory: false,
        hcc_level: None,
        peers: false,
        peer: vec!["postgres".into(), "sqlite".into(), "duckdb".into()],
        peer_timeout: 120,
        repeat: 1,
        parameters: ParameterSets::Both,
        queries: vec![],
        dir: Some(dir.join("work")),
        out: None,
        expected: Some(stored()),
        save_answers: None,
        callgrind: false,
        lioscope_exe: None,
        callgrind_child: None,
        callgrind_tbl_bytes: 0,
    }
}

fn installed(engine: &str) -> bool {
    match engine {
        "PostgreSQL" => Path::new("/usr/lib/postgresql").exists(),
        "DuckDB" => std::process::Command::new("python3")
            .args(["-c", "import duckdb"])
            .output()
            .is_ok_and(|o| o.status.success()),
        _ => true,
    }
}

#[test]
fn the_22_queries_answer_as_duckdb_did_and_as_every_peer_does() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("report");
    let opts = TpchBenchOptions { peers: true, out: Some(out.clone()), ..options(dir.path()) };
    let report = run(&opts).expect("every query runs and every answer matches").unwrap();
    assert_eq!(report.lioscope.queries.len(), 44);
    for q in &report.lioscope.queries {
        assert_eq!(q.elapsed_ms.len(), 1, "{}", q.label);
        assert!(q.plan.iter().any(|l| l.contains("SELECT STATEMENT")), "{}: {:?}", q.label, q.plan);
        assert!(q.logical_reads > 0, "{}", q.label);
    }
    assert!(report.lioscope.queries.iter().filter(|q| q.rows > 0).count() >= 40);
    for peer in &report.peers {
        if !installed(&peer.engine) {
            println!(
                "{} is not installed: its answers were not compared ({:?})",
                peer.engine,
                peer.queries.as_ref().err()
            );
            continue;
        }
        let queries = peer.queries.as_ref().unwrap_or_else(|e| panic!("{}: {e}", peer.engine));
        for (q, ours) in queries.iter().zip(&report.lioscope.queries) {
            assert!(q.answer.is_some() && q.time_ms().is_some(), "{} {}: {}", peer.engine, ours.label, q.cell());
        }
        assert!(report.geometric_means.contains_key(&peer.engine), "{}", peer.engine);
    }
    for file in ["tpch.json", "tpch.csv", "tpch.html"] {
        assert!(out.join(file).metadata().is_ok_and(|m| m.len() > 1000), "{file}");
    }
    let csv = std::fs::read_to_string(out.join("tpch.csv")).unwrap();
    assert!(csv.lines().any(|l| l.starts_with("Q22 #2,SQLite,")), "{csv}");
}

#[test]
fn the_column_store_and_compression_units_answer_the_same() {
    let dir = tempfile::tempdir().unwrap();
    let report =
        run(&TpchBenchOptions { inmemory: true, ..options(dir.path()) }).expect("in-memory answers match").unwrap();
    let q1 = &report.lioscope.queries[0];
    assert!(q1.plan.iter().any(|l| l.contains("TABLE ACCESS INMEMORY FULL LINEITEM")), "{:?}", q1.plan);
    for level in ["QUERY LOW", "ARCHIVE HIGH"] {
        let dir = tempfile::tempdir().unwrap();
        let opts = TpchBenchOptions { hcc_level: Some(level.into()), ..options(dir.path()) };
        let report = run(&opts).unwrap_or_else(|e| panic!("HCC {level}: {e}")).unwrap();
        assert_eq!(report.lioscope.storage, format!("HCC {level}"));
    }
}

#[test]
fn an_answer_that_differs_from_the_stored_one_fails_the_run() {
    let dir = tempfile::tempdir().unwrap();
    // Q6's revenue, a thousandth off (answers compare to a relative 1e-6).
    let text = std::fs::read_to_string(stored()).unwrap();
    let json: serde_json::Value = serde_json::from_str(&text).unwrap();
    let revenue = json["answers"]["Q6"][0][0].as_str().unwrap().to_owned();
    let off: f64 = revenue.parse::<f64>().unwrap() * 1.001;
    let planted = dir.path().join("planted.json");
    std::fs::write(&planted, text.replacen(&format!("\"{revenue}\""), &format!("\"{off}\""), 1)).unwrap();
    let opts = TpchBenchOptions {
        queries: vec![6],
        parameters: ParameterSets::Validation,
        expected: Some(planted),
        ..options(dir.path())
    };
    let e = run(&opts).unwrap_err().to_string();
    assert!(e.contains("Q6 against stored answers (DuckDB"), "{e}");
    // The same run against the stored answers passes.
    run(&TpchBenchOptions { expected: Some(stored()), dir: Some(dir.path().join("again")), ..opts }).unwrap();
}
