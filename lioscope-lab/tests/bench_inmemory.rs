//! The in-memory benchmark end to end at a small size: every population it times (each
//! worker count, each MEMCOMPRESS level, the migrated copy) populates every row from the
//! cache, the tighter levels take no more memory, the migrated copy's population follows
//! one piece per migrated row, and the in-memory scans count every row from the units
//! alone, as the row-store scans do from the blocks.

use lioscope_lab::bench::BenchOptions;
use lioscope_lab::bench::inmemory::{InMemoryBenchOptions, run};
use serde_json::Value;

const ROWS: u64 = 20_000;

fn int(v: &Value, what: &str) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("{what} is a whole number: {v}"))
}

/// A population populated every row, from the cache, and its statistics agree.
fn check_population(p: &Value) {
    let what = format!("{} {} by {} workers", p["table"], p["compression"], p["workers"]);
    let s = &p["segment"];
    assert_eq!(s["status"], "COMPLETED", "{what}");
    assert_eq!(int(&s["populated_rows"], "POPULATED_ROWS"), ROWS, "{what}: POPULATED_ROWS");
    assert_eq!(int(&p["populate_rows"], "IM populate rows"), ROWS, "{what}: IM populate rows");
    assert_eq!(int(&p["populate_cus"], "IM populate CUs"), int(&s["cus"], "CUS"), "{what}: CUs");
    assert_eq!(int(&p["physical_reads"], "physical reads"), 0, "{what}: the blocks were cached");
    let (bytes, size) = (int(&s["bytes"], "BYTES"), int(&s["inmemory_size"], "INMEMORY_SIZE"));
    assert!(size > 0 && size < bytes, "{what}: INMEMORY_SIZE {size} against BYTES {bytes}");
    let ratio = p["rates"]["compression_ratio"].as_f64().unwrap();
    assert!((ratio - bytes as f64 / size as f64).abs() < 1e-9, "{what}: ratio {ratio} is BYTES / INMEMORY_SIZE");
    assert!(p["rates"]["rows_per_s"].as_f64().unwrap() > 0.0, "{what}: rows/s");
    let runs = p["elapsed_ms_runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2, "{what}: every run is kept");
    assert!(runs.contains(&p["elapsed_ms"]), "{what}: the reported run is one of them");
    let by_worker: u64 = p["cus_by_worker"].as_array().unwrap().iter().map(|w| int(&w[1], "CUs")).sum();
    assert_eq!(by_worker, int(&s["cus"], "CUS"), "{what}: the workers' CUs add up");
}

#[test]
fn the_inmemory_benchmark_populates_every_row_and_scans_count_them() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("inmemory.json");
    let bench = BenchOptions { rows: ROWS, repeat: 1, dir: Some(dir.path().join("db")), json: Some(json.clone()) };
    run(&InMemoryBenchOptions { bench, chained: true, workers: vec![1, 2], populate_repeat: 2 })
        .expect("the benchmark runs");
    let report: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();

    let population = report["population"].as_array().unwrap();
    assert_eq!(population.iter().map(|p| int(&p["workers"], "workers")).collect::<Vec<_>>(), [1, 2]);
    population.iter().for_each(check_population);
    for p in population {
        assert_eq!(int(&p["continued_rows"], "table fetch continued row"), 0, "customers has no migrated row");
    }
    // Tighter levels take no more memory than FOR QUERY LOW.
    let levels = report["levels"].as_array().unwrap();
    levels.iter().for_each(check_population);
    let size = |p: &Value| int(&p["segment"]["inmemory_size"], "INMEMORY_SIZE");
    let (low, high, capacity) = (size(&population[0]), size(&levels[0]), size(&levels[1]));
    assert!(capacity <= high && high <= low, "FOR QUERY LOW {low}, QUERY HIGH {high}, CAPACITY HIGH {capacity}");

    // Most rows of the copy migrated; population follows each once.
    let chained = &report["chained"];
    let migrated = int(&chained["migrated_rows"], "migrated rows");
    assert!(migrated > ROWS * 3 / 4 && migrated <= ROWS, "migrated rows {migrated}");
    for p in chained["population"].as_array().unwrap() {
        check_population(p);
        assert_eq!(int(&p["continued_rows"], "table fetch continued row"), migrated, "one piece per migrated row");
    }

    let cus = int(&population[1]["segment"]["cus"], "CUS");
    for scan in report["scans"].as_array().unwrap() {
        let (im, rs) = (&scan["in_memory_runs"][0], &scan["row_store_runs"][0]);
        let name = &scan["name"];
        assert_eq!(int(&im["rows_counted"], "rows counted"), ROWS, "{name}");
        assert_eq!(int(&im["im_scan_cus"], "IM scan CUs"), cus, "{name}: every unit");
        assert_eq!(int(&im["im_scan_cus_pruned"], "IM scan CUs pruned"), 0, "{name}: NO_INMEMORY_PRUNING");
        assert_eq!(int(&im["im_scan_rows"], "IM scan rows"), ROWS, "{name}");
        assert_eq!(int(&im["im_scan_rows_valid"], "IM scan rows valid"), ROWS, "{name}: nothing journaled");
        assert_eq!(int(&im["im_scan_blocks_from_cache"], "IM scan blocks from cache"), 0, "{name}");
        assert!(int(&im["consistent_gets"], "consistent gets") <= 1, "{name}: the segment header at most");
        assert_eq!(int(&rs["rows_counted"], "rows counted"), ROWS, "{name}: row store");
        assert_eq!(int(&rs["im_scan_cus"], "IM scan CUs"), 0, "{name}: NO_INMEMORY reads no unit");
        assert!(int(&rs["consistent_gets"], "consistent gets") > 300, "{name}: the row store reads every block");
    }
    let cust_id = int(&report["columns"]["CUST_ID"]["inmemory_size"], "CUST_ID INMEMORY_SIZE");
    assert_eq!(int(&report["scans"][0]["bytes_scanned"], "bytes scanned"), cust_id, "the predicate's column");
    assert_eq!(int(&report["scans"][1]["bytes_scanned"], "bytes scanned"), 0, "a count of a column without NULLs");
}
