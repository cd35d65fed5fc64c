//! Golden SQL scripts: each `tests/golden/NAME.sql` runs on a fresh database and its
//! output must equal `tests/golden/NAME.out`. Regenerate with `UPDATE_GOLDEN=1 cargo test
//! --test golden` and review the diff.
//!
//! A script may start with `-- block_size: N` or `-- db_cache_size: SIZE` lines to choose
//! how its database is created. Output shows each statement after `SQL> ` and then what
//! the shell prints, or `ERROR: ` and the message. CPU and elapsed times are left out.

mod common;

use lioscope::DatabaseOptions;
use lioscope::cli::format::OutputFormat;
use lioscope::cli::script::{ScriptRunner, split_script};
use std::path::Path;

fn options(script: &str) -> DatabaseOptions {
    let mut opts = DatabaseOptions::default();
    for line in script.lines().take_while(|l| l.starts_with("--")) {
        if let Some(v) = line.strip_prefix("-- block_size:") {
            opts.block_size = v.trim().parse().expect("block_size is a number");
        }
        if let Some(v) = line.strip_prefix("-- db_cache_size:") {
            opts.parameters.push(("db_cache_size".into(), v.trim().into()));
        }
    }
    opts
}

fn run_script(path: &Path) -> String {
    let script = std::fs::read_to_string(path).expect("script is readable");
    // Scripts refer to files next to them as 'golden/...'; run from the tests directory.
    let (_dir, _, db) = common::temp_db(options(&script));
    let session = db.session();
    let mut runner = ScriptRunner::new(&session, OutputFormat::Table);
    runner.show_times = false;
    let mut out = String::new();
    for statement in split_script(&script) {
        let shown: String =
            statement.lines().filter(|l| !l.trim_start().starts_with("--")).collect::<Vec<_>>().join("\n");
        if shown.trim().is_empty() {
            continue;
        }
        out.push_str(&format!("SQL> {shown}\n"));
        match runner.run(&statement) {
            Ok(text) => out.push_str(&text),
            Err(e) => out.push_str(&format!("ERROR: {e}\n")),
        }
        out.push('\n');
    }
    out
}

#[test]
fn golden_scripts() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    std::env::set_current_dir(&root).expect("tests directory exists");
    let update = std::env::var_os("UPDATE_GOLDEN").is_some();
    let mut scripts: Vec<_> = std::fs::read_dir(root.join("golden"))
        .expect("tests/golden exists")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "sql"))
        .collect();
    scripts.sort();
    assert!(!scripts.is_empty(), "there are golden scripts");
    let mut failures = Vec::new();
    for script in &scripts {
        let actual = run_script(script);
        let expected_path = script.with_extension("out");
        if update {
            std::fs::write(&expected_path, &actual).expect("write golden output");
            continue;
        }
        let expected = std::fs::read_to_string(&expected_path).unwrap_or_default();
        if actual != expected {
            let first_diff = actual
                .lines()
                .zip(expected.lines())
                .position(|(a, b)| a != b)
                .unwrap_or(actual.lines().count().min(expected.lines().count()));
            failures.push(format!(
                "{}: output differs from {} at line {}:\n  expected: {:?}\n  actual:   {:?}",
                script.display(),
                expected_path.display(),
                first_diff + 1,
                expected.lines().nth(first_diff).unwrap_or("<end>"),
                actual.lines().nth(first_diff).unwrap_or("<end>")
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} golden script(s) differ (UPDATE_GOLDEN=1 to regenerate):\n{}",
        failures.len(),
        failures.join("\n")
    );
}
