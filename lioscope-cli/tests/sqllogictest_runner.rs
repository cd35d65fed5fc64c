//! `lioscope sqllogictest` through the built binary, on small files of the sqllogictest
//! format written here: a file whose records all hold passes (value rendering by column
//! type, sort modes, hashed results, `skipif` / `onlyif`, a `halt` for another engine,
//! expected errors), and a file
//! with a wrong expected result and an integer division is reported as two failures,
//! grouped by reason, with the exit status 1.

use std::path::Path;
use std::process::Command;
use tempfile::TempDir;

/// Every record holds on lioscope; two are for other engines and are skipped.
const PASSING: &str = "\
# whole numbers, reals and text
statement ok
CREATE TABLE t (a INTEGER, b NUMBER, c VARCHAR2(10))

# a halt for another engine stops only that engine
onlyif mssql
halt

statement ok
INSERT INTO t VALUES (1, 2.5, 'x'), (2, NULL, 'yy'), (3, 1, 'z z')

query IRT rowsort
SELECT a, b, c FROM t WHERE a > 1
----
2
NULL
yy
3
1.000
z z

query R
SELECT b FROM t WHERE c = 'x'
----
2.500

query I nosort
SELECT a FROM t WHERE a > 1 ORDER BY a DESC
----
3
2

query T valuesort
SELECT c FROM t
----
x
yy
z z

statement error
SELECT * FROM no_such_table

skipif lioscope
statement ok
THIS IS NOT SQL

onlyif mysql # DIV for integer division: 
query I
SELECT 7 DIV 2
----
3

onlyif lioscope
query R
SELECT 7 / 2 FROM dual
----
3.500

hash-threshold 2

query I rowsort
SELECT a FROM t
----
3 values hashing to c0710d6b4f15dfa88f600b0e6b624077
";

/// Three records fail: a wrong expected value, SQLite's integer division, and a whole
/// answer of a query that divides (Oracle: 14 / 4 * 2 = 7; SQLite: 6).
const FAILING: &str = "\
statement ok
CREATE TABLE t (a INTEGER)

statement ok
INSERT INTO t VALUES (7)

query I
SELECT a + 1 FROM t
----
9

query I
SELECT a / 2 FROM t
----
3

query I
SELECT a FROM t
----
7

query I
SELECT 2 * a / 4 * 2 FROM t
----
6
";

struct Run {
    status: i32,
    stdout: String,
}

fn run(args: &[&str], dir: &Path) -> Run {
    let out = Command::new(env!("CARGO_BIN_EXE_lioscope"))
        .arg("sqllogictest")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("the lioscope binary runs");
    Run { status: out.status.code().unwrap_or(-1), stdout: String::from_utf8_lossy(&out.stdout).into_owned() }
}

fn files() -> TempDir {
    let dir = tempfile::tempdir().expect("a temporary directory");
    std::fs::create_dir(dir.path().join("suite")).expect("a folder for the files");
    std::fs::write(dir.path().join("suite/passing.test"), PASSING).expect("write passing.test");
    std::fs::write(dir.path().join("suite/failing.test"), FAILING).expect("write failing.test");
    dir
}

#[test]
fn a_file_whose_records_hold_passes() {
    let dir = files();
    let r = run(&["suite/passing.test"], dir.path());
    assert!(r.stdout.contains("suite/passing.test: 9 records run, 9 passed, 0 failed, 2 skipped\n"), "{}", r.stdout);
    assert!(r.stdout.contains("total (1 files, 0 unreadable): 9 records run, 9 passed, 0 failed, 2 skipped"));
    assert!(!r.stdout.contains("failures by reason"), "{}", r.stdout);
    assert_eq!(r.status, 0, "{}", r.stdout);
}

#[test]
fn wrong_results_are_failures_grouped_by_reason() {
    let dir = files();
    let r = run(&["--verbose", "suite/failing.test"], dir.path());
    assert!(r.stdout.contains("suite/failing.test: 6 records run, 3 passed, 3 failed, 0 skipped\n"), "{}", r.stdout);
    assert!(r.stdout.contains("failures by reason:\n"), "{}", r.stdout);
    assert!(r.stdout.contains("      1  wrong result\n"), "{}", r.stdout);
    assert!(
        r.stdout.contains(
            "      1  different result of a query that divides (whole values; SQLite truncates integer division)\n"
        ),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains("      1  Oracle semantics: division gives a fraction (SQLite truncates integer division)\n"),
        "{}",
        r.stdout
    );
    // --verbose: where, the SQL, and the values that differ.
    assert!(r.stdout.contains("FAILED suite/failing.test:7"), "{}", r.stdout);
    assert!(r.stdout.contains("SELECT a + 1 FROM t"), "{}", r.stdout);
    assert!(r.stdout.contains("3.5"), "{}", r.stdout);
    assert_eq!(r.status, 1, "{}", r.stdout);
}

#[test]
fn a_directory_runs_its_test_files_each_on_a_fresh_database() {
    let dir = files();
    let r = run(&["suite"], dir.path());
    // Both files create table t: the second would fail on the first's database.
    assert!(r.stdout.contains("suite/failing.test: 6 records run, 3 passed, 3 failed"), "{}", r.stdout);
    assert!(r.stdout.contains("suite/passing.test: 9 records run, 9 passed, 0 failed, 2 skipped"), "{}", r.stdout);
    assert!(r.stdout.contains("total (2 files, 0 unreadable): 15 records run, 12 passed, 3 failed, 2 skipped"));
    assert_eq!(r.status, 1);
    let missing = run(&["no_such_dir"], dir.path());
    assert_eq!(missing.status, 1);
}
