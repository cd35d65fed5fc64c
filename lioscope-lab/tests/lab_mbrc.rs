//! `lab mbrc` end to end at a tiny size: every cold scan's figures checked against the
//! engine's own statistics (each reads the whole table, in fewer calls as MBRC grows,
//! with the read path's CPU accounted), the fit made, and the HTML report opened in
//! headless Chromium with every chart drawn.

mod common;

use common::*;
use lioscope_lab::mbrc::{MbrcOptions, run};
use serde_json::Value;

const ROWS: u64 = 3_000;

#[test]
fn lab_mbrc_scans_cold_at_each_mbrc_and_fits_cpu_to_read_calls_and_blocks() {
    let dir = tempfile::tempdir().unwrap();
    let (db_dir, out) = (dir.path().join("db"), dir.path().join("out"));
    let opts = MbrcOptions {
        mbrc: vec![8, 1, 32],
        rows: ROWS,
        repeat: 2,
        seed: Some(11),
        out: Some(out.clone()),
        db: Some(db_dir.clone()),
        probe: lioscope_lab::bandwidth::ProbeOptions { mib: 16 },
        history: lioscope_lab::history::HistoryArgs::off(),
    };
    let report = run(&opts).expect("runs");

    // The table as the engine sees it: what a full scan must read.
    let db = open(&db_dir, options(8192, "64M"));
    let s = db.session();
    let blocks: u64 =
        scalar(&s, "SELECT blocks_below_hwm FROM user_segments WHERE segment_name = 'T'").parse().unwrap();
    assert!(blocks >= ROWS / 8, "about 7 rows of 1,000 bytes a block: {blocks} blocks");
    exec(&s, "ALTER SYSTEM FLUSH BUFFER_CACHE");
    let before = s.stats().get(lioscope::stats::Stat::PhysicalReads);
    assert_eq!(scalar(&s, "SELECT COUNT(*) FROM t"), ROWS.to_string());
    let cold_reads = s.stats().get(lioscope::stats::Stat::PhysicalReads) - before;
    drop(s);
    db.close().unwrap();

    let f = &report.findings;
    assert_eq!(f.table_blocks, blocks);
    // The lab opens the datafiles with O_DIRECT where the file system takes it, and says
    // so; elsewhere it says that O_DIRECT was refused and how it drops the page cache.
    match o_direct_refused(&db_dir) {
        None => assert!(
            f.page_cache_bypass.starts_with("filesystemio_options = directio:"),
            "O_DIRECT works in {}, yet: {}",
            db_dir.display(),
            f.page_cache_bypass
        ),
        Some(why) => {
            let expected = "filesystemio_options = none (O_DIRECT refused";
            assert!(f.page_cache_bypass.starts_with(expected), "{why}, yet: {}", f.page_cache_bypass);
            eprintln!("skipped: O_DIRECT refused in {} ({why}): the cold scans were not direct", db_dir.display());
        }
    }
    assert_eq!(report.levels.iter().map(|l| l.load).collect::<Vec<_>>(), [1, 8, 32]);
    assert_eq!(f.schedule.len(), 6);
    // One probe pass first, then one before each cold scan.
    assert_eq!(f.bandwidth_probe.samples_gb_per_s.len(), 7);
    assert_eq!(f.bandwidth_probe.bytes, 16 << 20);
    for round in f.schedule.chunks(3) {
        let mut sorted = round.to_vec();
        sorted.sort();
        assert_eq!(sorted, [1, 8, 32], "each MBRC once a round");
    }
    let mut calls_by_mbrc = Vec::new();
    for level in &report.levels {
        assert_eq!(level.runs.len(), 2);
        for r in &level.runs {
            assert_eq!(f.schedule[r.sequence], level.load);
            assert_eq!(r.rows, ROWS);
            assert_eq!(r.blocks_read, cold_reads, "every run reads what a cold scan reads: {r:?}");
            assert!(r.blocks_read >= blocks, "the whole table: {r:?}");
            assert_eq!(r.read_calls, r.scattered.waits + r.sequential.waits, "a wait a read call: {r:?}");
            assert!(r.db_cpu_ms > 0.0 && r.elapsed_ms >= r.db_cpu_ms * 0.5, "{r:?}");
            // The read path's accounting moved, and it is part of the CPU.
            assert!(r.syscall_cpu_ms > 0.0 && r.buffer_claim_ms > 0.0, "{r:?}");
            assert!(r.chain_insert_ms > 0.0 && r.block_check_ms > 0.0, "{r:?}");
            let accounted = r.syscall_cpu_ms + r.buffer_claim_ms + r.chain_insert_ms + r.block_check_ms;
            assert!(accounted < r.db_cpu_ms * 1.5, "{r:?}");
            // The bytes read against the bandwidth probe of the same run.
            assert_eq!(r.bytes_read, r.blocks_read * 8192, "{r:?}");
            let gb_per_s = r.bytes_read as f64 / 1e9 / (r.elapsed_ms / 1000.0);
            let fraction = r.bandwidth_fraction.expect("a fraction");
            assert!((fraction - gb_per_s / f.bandwidth_probe.gb_per_s.median).abs() < 1e-9 * fraction, "{r:?}");
        }
        calls_by_mbrc.push(level.runs[0].read_calls);
    }
    let one = &report.levels[0].runs[0];
    assert_eq!(one.read_calls, one.blocks_read, "MBRC 1 reads a block a call");
    assert_eq!(one.scattered.waits, 0, "and no read is scattered");
    assert!(calls_by_mbrc.windows(2).all(|w| w[1] < w[0]), "read calls fall as MBRC grows: {calls_by_mbrc:?}");
    let at_32 = &report.levels[2].runs[0];
    assert!(at_32.read_calls * 8 < at_32.blocks_read, "{at_32:?}");

    let fit = f.fit.expect("six runs at three MBRC values are fitted");
    assert_eq!((fit.n, fit.degrees_of_freedom), (6, 4));
    assert!(fit.a.low <= fit.a.estimate && fit.a.estimate <= fit.a.high);
    assert!(fit.b.estimate > 0.0, "a block costs CPU: {fit:?}");
    assert!(f.answer.contains("µs a call"), "{}", f.answer);
    let tests = &f.tests;
    assert_eq!(tests.iter().map(|t| t.load).collect::<Vec<_>>(), [1, 8, 32]);
    assert!(tests[0].p_value.is_none() && tests[1].p_value.is_some(), "{tests:?}");
    assert!(f.significance.contains("--repeat 4"), "two runs cannot reach p < 0.05: {}", f.significance);
    assert_eq!(report.levels[0].ratio, Some(1.0));

    let json: Value = serde_json::from_str(&std::fs::read_to_string(out.join("mbrc.json")).unwrap()).unwrap();
    assert_eq!(json["levels"][1]["mbrc"], 8);
    assert_eq!(json["parameters"]["seed"], 11);
    assert!(json["fit"]["a"]["standard_error"].as_f64().is_some());
    let csv = std::fs::read_to_string(out.join("mbrc.csv")).unwrap();
    assert!(csv.starts_with("mbrc,figure,median") && csv.contains("\n32,rest_cpu_ms,"), "{csv}");
    // CPU against MBRC, elapsed against MBRC, the CPU's parts at MBRC 1 and 32.
    let page = std::fs::read_to_string(out.join("mbrc.html")).unwrap();
    assert!(page.contains("Where the CPU goes at MBRC 1 and at MBRC 32"));
    assert_charts_drawn(&out.join("mbrc.html"), 3);
}

#[test]
fn lab_mbrc_refuses_bad_options() {
    let base = MbrcOptions {
        mbrc: vec![1],
        rows: 100,
        repeat: 1,
        seed: None,
        out: None,
        db: None,
        probe: lioscope_lab::bandwidth::ProbeOptions { mib: 1 },
        history: lioscope_lab::history::HistoryArgs::off(),
    };
    for (opts, name) in [
        (MbrcOptions { mbrc: vec![0], ..base.clone() }, "--mbrc"),
        (MbrcOptions { mbrc: vec![1, 2000], ..base.clone() }, "--mbrc"),
        (MbrcOptions { rows: 0, ..base.clone() }, "--rows"),
    ] {
        let err = run(&opts).unwrap_err().to_string();
        assert!(err.contains(name), "{err}");
    }
}
