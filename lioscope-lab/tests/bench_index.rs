//! The index benchmark end to end at a small size: it builds both indexes (spilling, with
//! a tiny sort area) in lioscope and in the peers, counts every row through each, and its
//! JSON shows the clustering factor at work (a logical read per
//! table block for the well-clustered index, about one per row for the other), and the
//! comparison queries count the same rows.

use lioscope_lab::bench::BenchOptions;
use lioscope_lab::bench::index::{IndexBenchOptions, run};

#[test]
fn the_index_benchmark_runs_and_shows_the_clustering_factor() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("index.json");
    let bench = BenchOptions { rows: 20_000, repeat: 1, dir: Some(dir.path().join("db")), json: Some(json.clone()) };
    let opts = IndexBenchOptions { bench, build_repeat: 2, sort_area_size: Some("64K".into()), no_peers: false };
    run(&opts).expect("the benchmark runs");
    let report: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let paths = report["paths"].as_array().unwrap();
    let reads = |i: usize| paths[i]["runs"][0]["logical_reads"].as_u64().unwrap();
    let pinned = |i: usize| paths[i]["runs"][0]["buffer_is_pinned"].as_u64().unwrap();
    let (good, bad) = (reads(0), reads(1));
    assert!(good < 1_000, "well clustered: about one get per table block and leaf, got {good}");
    assert!(bad > 19_000, "badly clustered: about one get per row, got {bad}");
    assert!(pinned(0) > 19_000, "consecutive rows in one block count as pinned: {}", pinned(0));
    // Two builds of each index, each sort spilled (64K of sort area) and counted once.
    let builds = report["builds"].as_array().unwrap();
    assert_eq!(builds.len(), 2);
    for runs in builds {
        assert_eq!(runs.as_array().unwrap().len(), 2);
        assert_eq!((runs[0]["sorts_disk"].as_u64(), runs[0]["sorts_memory"].as_u64()), (Some(1), Some(0)));
        assert_eq!(runs[0]["sorts_rows"].as_u64(), Some(20_000));
        assert!(runs[0]["direct_path_write_temp"].as_u64().unwrap() > 0);
    }
    // SQLite always builds on the same rows; PostgreSQL wherever it is installed.
    let engines = report["engines"].as_array().unwrap();
    let engine = |name: &str| engines.iter().find(|e| e["engine"] == name).unwrap()["elapsed_ms"].clone();
    assert_eq!(engine("SQLite")["Ok"].as_array().map(Vec::len), Some(2), "{}", engine("SQLite"));
    if std::path::Path::new("/usr/lib/postgresql").exists() {
        assert_eq!(engine("PostgreSQL")["Ok"].as_array().map(Vec::len), Some(2), "{}", engine("PostgreSQL"));
    }
    // Every query counts every row; the index alone reads no table block.
    let counted = |i: usize| paths[i]["runs"][0]["rows_counted"].as_i64().unwrap();
    assert_eq!((0..paths.len()).map(counted).collect::<Vec<_>>(), vec![20_000; 4]);
    assert!(reads(2) < 100, "index only: its leaves alone, got {}", reads(2));
}
