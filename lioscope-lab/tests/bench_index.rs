//! The index benchmark end to end at a small size: it builds both indexes, counts every
//! row through each, and its JSON shows the clustering factor at work (a logical read per
//! table block for the well-clustered index, about one per row for the other), and the
//! comparison queries count the same rows.

use lioscope_lab::bench::BenchOptions;
use lioscope_lab::bench::index::run;

#[test]
fn the_index_benchmark_runs_and_shows_the_clustering_factor() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("index.json");
    let opts = BenchOptions { rows: 20_000, repeat: 1, dir: Some(dir.path().join("db")), json: Some(json.clone()) };
    run(&opts).expect("the benchmark runs");
    let report: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let paths = report["paths"].as_array().unwrap();
    let reads = |i: usize| paths[i]["runs"][0]["logical_reads"].as_u64().unwrap();
    let pinned = |i: usize| paths[i]["runs"][0]["buffer_is_pinned"].as_u64().unwrap();
    let (good, bad) = (reads(0), reads(1));
    assert!(good < 1_000, "well clustered: about one get per table block and leaf, got {good}");
    assert!(bad > 19_000, "badly clustered: about one get per row, got {bad}");
    assert!(pinned(0) > 19_000, "consecutive rows in one block count as pinned: {}", pinned(0));
    assert_eq!(report["builds"].as_array().unwrap().len(), 2);
    // Every query counts every row; the index alone reads no table block.
    let counted = |i: usize| paths[i]["runs"][0]["rows_counted"].as_i64().unwrap();
    assert_eq!((0..paths.len()).map(counted).collect::<Vec<_>>(), vec![20_000; 4]);
    assert!(reads(2) < 100, "index only: its leaves alone, got {}", reads(2));
}
