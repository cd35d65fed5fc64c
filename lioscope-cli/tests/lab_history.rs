//! `lioscope lab history` and `lab compare` through the command: the stored runs listed,
//! two runs' figures side by side with their ratio and p-value, and a run that is not
//! there named in a clear error.

use lioscope_lab::environment::Environment;
use lioscope_lab::history::{FigureSamples, History, NewRun};
use std::process::Command;

fn lioscope(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_lioscope")).args(args).output().expect("lioscope runs");
    (out.status.success(), String::from_utf8_lossy(&out.stdout).into(), String::from_utf8_lossy(&out.stderr).into())
}

#[test]
fn history_lists_runs_and_compare_tests_their_differences() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("history.sqlite");
    let environment = Environment::read();
    let mut history = History::open(&path).unwrap();
    for (experiment, liops) in [("lio", [10.0, 10.5, 9.5, 10.2, 9.8]), ("lio", [20.0, 21.0, 19.0, 20.4, 19.6])] {
        history
            .record(&NewRun {
                experiment,
                environment: &environment,
                parameters: serde_json::json!({"repeat": 5}),
                report: serde_json::json!({}),
                figures: vec![FigureSamples::new("sessions=1", "liops", liops.to_vec())],
            })
            .unwrap();
    }
    drop(history);
    let file = path.to_str().unwrap();
    let (ok, out, err) = lioscope(&["lab", "history", "lio", "--history", file]);
    assert!(ok, "{err}");
    assert!(out.contains("2 run(s)") && out.contains(env!("CARGO_PKG_VERSION")), "{out}");
    let (ok, out, err) = lioscope(&["lab", "compare", "1", "2", "--history", file]);
    assert!(ok, "{err}");
    let line = out.lines().find(|l| l.contains("liops")).unwrap_or_else(|| panic!("{out}"));
    // Twice the median; five against five without overlap: exact p = 2 / 252.
    assert!(line.contains("2.00") && line.contains("0.0079 (exact)"), "{line}");
    let (ok, _, err) = lioscope(&["lab", "compare", "1", "7", "--history", file]);
    assert!(!ok && err.contains("no run 7") && err.contains("history.sqlite"), "{err}");
}
