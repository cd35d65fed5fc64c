//! The server benchmark end to end at a small size: pgbench against `lioscope serve` (with
//! `timed_statistics` TRUE and FALSE) and against PostgreSQL, two rounds each, every run
//! with its transactions, latencies and the CPU its server and pgbench spent; the
//! summary's medians and ratios are those of the runs. `./test.sh` installs PostgreSQL (and its pgbench) when they are missing.

use lioscope_lab::bench::server::{RunFigures, ServerBenchOptions, run, summary};

#[test]
fn the_server_benchmark_runs_both_engines_in_rounds_and_reads_their_cpu() {
    let dir = tempfile::tempdir().unwrap();
    let opts = ServerBenchOptions {
        branches: 1,
        accounts_per_branch: 1_000,
        clients: vec![2],
        seconds: 1,
        rounds: 2,
        no_postgres: false,
        untimed: true,
        dir: Some(dir.path().join("work")),
    };
    let figures = run(&opts).expect("the benchmark runs (./test.sh installs PostgreSQL and pgbench)");
    assert_eq!(figures.len(), 2 * 3 * 2, "two scripts, three engines, two rounds");
    for f in &figures {
        assert!(f.tps > 0.0 && f.transactions > 0 && f.failed == 0, "{f:?}");
        assert!(f.latency_ms[0] > 0.0 && f.latency_ms[0] <= f.latency_ms[2], "{f:?}");
        let server = f.server_cpu_us.unwrap_or_else(|| panic!("the server's CPU is read: {f:?}"));
        // A transaction costs its server more than a microsecond (a round trip over the
        // loopback alone does), and less than a second: PostgreSQL's figure counts its
        // backends, which exit after pgbench does.
        assert!(server.total_s() > 1.0 && server.total_s() < 1e6, "{f:?}");
        assert!(f.client_cpu_us.is_some_and(|c| c.total_s() > 0.0), "{f:?}");
    }
    let runs = |engine: &str, script: &str| -> Vec<&RunFigures> {
        figures.iter().filter(|f| f.engine == engine && f.script == script).collect()
    };
    for engine in ["lioscope", "lioscope untimed", "PostgreSQL"] {
        let rounds: Vec<u32> = runs(engine, "tpcb").iter().map(|f| f.round).collect();
        assert_eq!(rounds, [1, 2], "{engine}");
    }

    // The summary's ratio is the median of the two rounds' ratios: their mean.
    let ratio = |round: usize| runs("lioscope", "select")[round].tps / runs("PostgreSQL", "select")[round].tps;
    let (r1, r2) = (ratio(0), ratio(1));
    let text = summary(&figures);
    let expected = format!("{:.2} ({:.2}–{:.2})", (r1 + r2) / 2.0, r1.min(r2), r1.max(r2));
    let select = text.lines().find(|l| l.starts_with("| select | 2 | lioscope | 2 |")).expect(&text);
    assert!(select.contains(&expected), "{expected} in {select}");
}
