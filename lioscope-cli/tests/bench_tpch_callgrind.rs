//! `lioscope bench tpch --callgrind`: Q1's and Q6's executions counted by callgrind in
//! child processes on the loaded database (here its column store), a lineitem row each.
//! Q1 computes eight aggregates of four groups a row where Q6 filters most rows out and
//! sums one product: Q1 costs several times Q6's instructions a row.

use lioscope_lab::bench::tpch::{TpchBenchOptions, run};
use lioscope_lab::tpch::queries::ParameterSets;

#[test]
fn q1_and_q6_are_counted_a_lineitem_row_under_callgrind() {
    if std::process::Command::new("valgrind").arg("--version").output().is_err() {
        panic!("valgrind is needed for this test (./test.sh installs it)");
    }
    let dir = tempfile::tempdir().unwrap();
    let opts = TpchBenchOptions {
        sf: 0.01,
        inmemory: true,
        hcc_level: None,
        peers: false,
        peer: vec![],
        peer_timeout: 10,
        repeat: 1,
        parameters: ParameterSets::Validation,
        queries: vec![1, 6],
        dir: Some(dir.path().join("work")),
        out: None,
        expected: None,
        save_answers: None,
        callgrind: true,
        lioscope_exe: Some(env!("CARGO_BIN_EXE_lioscope").into()),
        callgrind_child: None,
        callgrind_tbl_bytes: 0,
    };
    let report = run(&opts).expect("runs").expect("a report");
    let counts = &report.instructions;
    assert_eq!(counts.iter().map(|c| c.label.as_str()).collect::<Vec<_>>(), ["Q1", "Q6"]);
    let (q1, q6) = (&counts[0], &counts[1]);
    assert!(q1.lineitem_rows > 50_000 && q1.lineitem_rows == q6.lineitem_rows, "{counts:?}");
    assert!((10.0..100_000.0).contains(&q6.per_row), "{counts:?}");
    assert!(q1.per_row > 3.0 * q6.per_row, "{counts:?}");
    assert_eq!(q1.per_row, q1.instructions as f64 / q1.lineitem_rows as f64);
}
