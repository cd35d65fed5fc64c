//! The join benchmark end to end at a small size: lioscope's plans are the methods the
//! queries are named for, its answers are the ones the orders file holds (counted here
//! from the file itself), and every peer that runs (SQLite always; PostgreSQL and DuckDB
//! where installed) gives the same answers, or the run fails.

use lioscope_lab::bench::BenchOptions;
use lioscope_lab::bench::join::{JoinBenchOptions, run, write_orders_csv};

const CUSTOMERS: u64 = 5_000;
const ORDERS: u64 = 12_000;

#[test]
fn the_join_benchmark_gives_every_engine_the_same_answers() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("join.json");
    let bench =
        BenchOptions { rows: CUSTOMERS * 2, repeat: 2, dir: Some(dir.path().join("work")), json: Some(json.clone()) };
    let opts = JoinBenchOptions { bench, orders: ORDERS * 2, scale: Some(0.5), no_peers: false };
    let report = run(&opts).expect("the benchmark runs and the answers agree");
    assert_eq!((report.customers, report.orders), (CUSTOMERS, ORDERS), "--scale halves both");

    // The answers the orders file holds: the orders of customers 1001..1010, and all.
    let orders = dir.path().join("orders.csv");
    write_orders_csv(&orders, ORDERS, CUSTOMERS).unwrap();
    let (mut few, mut few_total, mut total) = (0u64, 0u64, 0u64);
    for line in std::fs::read_to_string(&orders).unwrap().lines() {
        let f: Vec<u64> = line.split(',').map(|v| v.parse().unwrap()).collect();
        total += f[2];
        if (1001..=1010).contains(&f[1]) {
            few += 1;
            few_total += f[2];
        }
    }
    let answer = |i: usize| report.lioscope[i].runs.answer.clone();
    assert_eq!(answer(0), [few.to_string(), few_total.to_string()]);
    assert_eq!(answer(1), answer(0), "the nested loop parsed at each run");
    assert_eq!(answer(2), answer(0), "the prepared nested loop, its range bound");
    assert_eq!(answer(3)[..2], [ORDERS.to_string(), total.to_string()]);
    let filtered: u64 = answer(4)[0].parse().unwrap();
    assert!(filtered > 0 && filtered < ORDERS / 4, "about an eighth of the orders: {filtered}");

    // lioscope's plans, and what they read: a few index probes, or each table once.
    assert!(
        report.lioscope[0].plan.starts_with("NESTED LOOPS > INDEX RANGE SCAN CUST_ID_IX"),
        "{}",
        report.lioscope[0].plan
    );
    assert!(report.lioscope[0].logical_reads < 100, "{}", report.lioscope[0].logical_reads);
    for q in &report.lioscope[1..3] {
        assert_eq!(q.plan, report.lioscope[0].plan, "parsed each time or prepared, the same plan");
        assert_eq!(q.logical_reads, report.lioscope[0].logical_reads);
    }
    // A timed run of the text soft-parses it, unless the session keeps no cursors.
    let hard_parses: Vec<u64> = report.lioscope.iter().map(|q| q.hard_parses).collect();
    assert_eq!(hard_parses, [0, 1, 0, 0, 0]);
    // Every order: no join filter could help. An eighth of the customers: the optimizer
    // puts one on the orders' scan.
    assert_eq!(report.lioscope[3].plan, "HASH JOIN > TABLE ACCESS FULL CUSTOMERS > TABLE ACCESS FULL ORDERS");
    assert_eq!(
        report.lioscope[4].plan,
        "HASH JOIN > JOIN FILTER CREATE :BF0000 > TABLE ACCESS FULL CUSTOMERS > JOIN FILTER USE :BF0000 > TABLE ACCESS FULL ORDERS"
    );
    for q in &report.lioscope[1..] {
        assert_eq!(q.runs.elapsed_ms.len(), 2);
    }
    assert_eq!(report.lioscope[3].logical_reads, report.lioscope[4].logical_reads, "the same two full scans");

    // The peers ran where they are installed, each query timed twice.
    let ran = |engine: &str| report.peers.iter().find(|p| p.engine == engine).unwrap().queries.clone();
    let sqlite = ran("SQLite").expect("SQLite is built in");
    assert!(sqlite.iter().all(|q| q.elapsed_ms.len() == 2));
    if std::path::Path::new("/usr/lib/postgresql").exists() {
        ran("PostgreSQL").expect("PostgreSQL is installed");
    }
    let duckdb = std::process::Command::new("python3").args(["-c", "import duckdb"]).status();
    if duckdb.is_ok_and(|s| s.success()) {
        ran("DuckDB").expect("python3 has the duckdb package");
    }
    let written: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(written["orders"], ORDERS);
    assert_eq!(written["lioscope"].as_array().unwrap().len(), 5);
}
