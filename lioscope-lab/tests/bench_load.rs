//! The load benchmark end to end at a small size: each run loads every row of the file
//! and commits durably, the redo is about the table's size (each loaded block logged once,
//! its commit cleanout adding no block images), and the JSON holds what was printed.

use lioscope_lab::bench::load::{LoadBenchOptions, run};

#[test]
fn the_load_benchmark_loads_every_row_durably_logging_each_block_once() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("load.json");
    let opts = LoadBenchOptions {
        rows: 20_000,
        repeat: 2,
        db_cache_size: "64M".into(),
        log_file_size: "1M".into(),
        no_peers: true,
        dir: Some(dir.path().join("work")),
        json: Some(json.clone()),
    };
    let report = run(&opts).expect("the benchmark runs");
    let names: Vec<&str> = report.lioscope.iter().map(|l| l.name).collect();
    assert_eq!(names, ["lioscope COPY", "lioscope INSERT ... SELECT"]);
    for load in &report.lioscope {
        let runs = load.runs.as_ref().expect("lioscope's loads run");
        assert_eq!(runs.len(), 2);
        for r in runs {
            assert_eq!(r.rows, 20_000, "{}: {r:?}", load.name);
            let synced = r.waits.iter().find(|(e, ..)| e == "log file sync").map_or(0, |w| w.1);
            assert!(synced >= 1, "the commit waits for its redo: {r:?}");
            let per_byte = r.redo_bytes as f64 / r.table_bytes as f64;
            assert!(
                (0.5..1.5).contains(&per_byte),
                "{}: {per_byte:.2} bytes of redo a byte of table: {r:?}",
                load.name
            );
            // 1 MB logs: the load switches logs many times; checkpoints keep up.
            assert_eq!(r.groups_added, 0, "{r:?}");
        }
    }
    assert!(report.postgresql.runs.is_err(), "--no-peers runs no PostgreSQL");
    let written: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(written["report"]["lioscope"][0]["runs"]["Ok"][0]["rows"].as_u64(), Some(20_000));
}
