//! The consistent-read experiment end to end at a small size: every query returns the
//! committed sum, the first query after each pair of updates builds clones through a
//! chain of undo that grows by two records a row per set, and the samples reuse them.

use lioscope_lab::cr::{CrOptions, run};

#[test]
fn the_experiment_reproduces_the_chain_of_undo() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let json = dir.path().join("cr.json");
    let opts = CrOptions {
        rows: 20_000,
        samples: 5,
        sets: 4,
        updated_percent: 5.5,
        dir: Some(dir.path().join("db")),
        idle: false,
        json: Some(json.clone()),
        out: Some(dir.path().join("report")),
        history: lioscope_lab::history::HistoryArgs::at(dir.path().join("history.sqlite")),
    };
    run(&opts).expect("the experiment runs");
    // The report: the same document, a CSV line per set, and the HTML with its charts.
    let report = dir.path().join("report");
    let same: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(report.join("cr.json")).unwrap()).unwrap();
    assert_eq!(same["sets"].as_array().map(Vec::len), Some(4));
    let csv = std::fs::read_to_string(report.join("cr.csv")).unwrap();
    assert_eq!(csv.lines().count(), 1 + 4, "a header and a line a set:\n{csv}");
    assert!(csv.starts_with("set,updates,elapsed ms median"), "{csv}");
    let html = std::fs::read_to_string(report.join("cr.html")).unwrap();
    assert_eq!(html.matches("<svg").count(), 3, "three charts");
    assert!(html.contains("Sample sets") && html.contains("6 updates"), "the table and the sets' names");
    let mut history = lioscope_lab::history::History::open(&dir.path().join("history.sqlite")).unwrap();
    let run_id = history.runs(Some("cr")).unwrap()[0].id;
    let stored = history.figures(run_id).unwrap();
    let elapsed: Vec<&str> =
        stored.iter().filter(|f| f.figure == "elapsed_ms" && f.samples.len() == 5).map(|f| f.group.as_str()).collect();
    assert_eq!(elapsed, ["set=1", "set=2", "set=3", "set=4"]);
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let updated = v["updated_rows"].as_u64().unwrap();
    assert_eq!(updated, 1100);
    let sets = v["sets"].as_array().unwrap();
    assert_eq!(sets.len(), 4);
    let sums: Vec<u64> =
        sets.iter().flat_map(|s| s["samples"].as_array().unwrap().iter().map(|x| x["sum"].as_u64().unwrap())).collect();
    assert!(sums.windows(2).all(|w| w[0] == w[1]), "every query sees the committed sum: {sums:?}");
    assert!(sets[0]["clone_building"].is_null());
    for (k, set) in sets.iter().enumerate().skip(1) {
        let building = &set["clone_building"]["stats"];
        // Statistics in order: consistent gets, CR blocks created, undo records applied, ...
        assert!(building[1].as_u64().unwrap() > 0, "set {k} builds clones");
        assert_eq!(building[2].as_u64().unwrap(), 2 * k as u64 * updated, "set {k}: chain of undo");
        for sample in set["samples"].as_array().unwrap() {
            assert_eq!(sample["stats"][1].as_u64().unwrap(), 0, "set {k}: samples reuse the clones");
        }
    }
}
