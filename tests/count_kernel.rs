//! The count kernel (filter and count inside the scan loop) must give exactly what the
//! general pipeline gives, whatever the rows hold: NULLs in the middle, trailing NULL
//! columns the row format omits, long values with two-byte lengths, numbers that are not
//! small whole numbers (which the kernel hands back to the pipeline), and comparisons at
//! the ends of the integer range. Each count says, by the session's `count kernel rows
//! passed`, that the kernel made it (the rows it decided itself) and that the general
//! form did not run it.

mod common;

use common::{cases_or, exec, options, temp_db};
use lioscope::stats::Stat;
use proptest::prelude::*;

/// A value for column `n` of table `k`: an integer, a decimal, a NULL, or a long string.
#[derive(Debug, Clone)]
enum Cell {
    Null,
    Int(i64),
    Decimal(i64),
    Text(usize),
}

fn cell() -> impl Strategy<Value = Cell> {
    prop_oneof![
        2 => Just(Cell::Null),
        4 => prop_oneof![-5i64..5, Just(i64::MAX), Just(i64::MIN + 1), any::<i64>()].prop_map(Cell::Int),
        1 => (-500i64..500).prop_map(Cell::Decimal),
        1 => (0usize..400).prop_map(Cell::Text),
    ]
}

/// The whole number `c` stores in a NUMBER column, if it is one (`Text(n)` stores `n`).
fn whole(c: &Cell) -> Option<i64> {
    match *c {
        Cell::Int(v) => Some(v),
        Cell::Text(n) => Some(n as i64),
        Cell::Null | Cell::Decimal(_) => None,
    }
}

/// Whether `v op k` holds, for the operators of the test.
fn holds(op: &str, v: i64, k: i64) -> bool {
    match op {
        "=" => v == k,
        "<>" => v != k,
        "<" => v < k,
        "<=" => v <= k,
        ">" => v > k,
        ">=" => v >= k,
        _ => unreachable!("an operator of the test: {op}"),
    }
}

/// What `sql` returned in session `s`, as text, and the rows a count kernel passed and
/// counted while it ran (`count kernel rows passed`).
fn counted(s: &lioscope::Session, sql: &str) -> (Vec<String>, u64) {
    let before = s.stats().get(Stat::CountKernelRowsPassed);
    let r = exec(s, sql);
    let text = r.rows[0].iter().map(|v| v.to_string()).collect();
    (text, s.stats().get(Stat::CountKernelRowsPassed) - before)
}

/// The counts of the kernel tests' query (`COUNT(*), COUNT(b), COUNT(d), COUNT(c)` of the
/// rows of `t` meeting `filter`) through expressions the kernel does not take.
fn general_counts(filter: &str) -> String {
    format!(
        "SELECT SUM(CASE WHEN {filter} THEN 1 ELSE 0 END), \
         SUM(CASE WHEN ({filter}) AND b IS NOT NULL THEN 1 ELSE 0 END), \
         SUM(CASE WHEN ({filter}) AND d IS NOT NULL THEN 1 ELSE 0 END), \
         SUM(CASE WHEN ({filter}) AND c IS NOT NULL THEN 1 ELSE 0 END) FROM t"
    )
}

/// The rows the kernel passes under `a op k` (and `c >= 0` where `with_c`): those whose
/// compared values are whole numbers meeting the filter; it hands the others (decimals)
/// back. A value of i64::MIN (its literal is past i64 before the minus) may be stored,
/// and the filter's literal read, as a decimal: those rows, and a filter on i64::MIN, are
/// counted apart (`maybe`), bounding the figure from below only. Returns (sure, maybe).
fn kernel_passes(rows: &[(Cell, Cell, Cell, Cell)], op: &str, k: i64, with_c: bool) -> (u64, u64) {
    let (mut sure, mut maybe) = (0u64, 0u64);
    for (a, _, c, _) in rows {
        let a = whole(a).filter(|&a| holds(op, a, k));
        let c = if with_c { whole(c).filter(|&c| c >= 0) } else { Some(0) };
        if let (Some(a), Some(c)) = (a, c) {
            if a == i64::MIN || c == i64::MIN || k == i64::MIN { maybe += 1 } else { sure += 1 }
        }
    }
    (sure, maybe)
}

fn literal(c: &Cell, numeric: bool) -> String {
    match (c, numeric) {
        (Cell::Null, _) => "NULL".into(),
        (Cell::Int(v), true) => v.to_string(),
        (Cell::Decimal(v), true) => format!("{}.5", v),
        (Cell::Text(n), true) => n.to_string(),
        (Cell::Int(v), false) => format!("'{v}'"),
        (Cell::Decimal(v), false) => format!("'d{v}'"),
        (Cell::Text(n), false) => format!("'{}'", "x".repeat(*n)),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases_or(24), ..ProptestConfig::default() })]

    #[test]
    fn kernel_counts_match_the_general_pipeline(
        rows in proptest::collection::vec((cell(), cell(), cell(), cell()), 1..120),
        k in prop_oneof![-3i64..3, Just(i64::MAX), Just(i64::MIN)],
    ) {
        let (_dir, _, db) = temp_db(options(8192, "4M"));
        let s = db.session();
        exec(&s, "CREATE TABLE t (a NUMBER, b VARCHAR2(400), c NUMBER, d VARCHAR2(400))");
        for (a, b, c, d) in &rows {
            exec(&s, &format!(
                "INSERT INTO t VALUES ({}, {}, {}, {})",
                literal(a, true), literal(b, false), literal(c, true), literal(d, false)
            ));
        }
        for op in ["=", "<>", "<", "<=", ">", ">="] {
            for (filter, with_c) in [(format!("a {op} {k}"), false), (format!("a {op} {k} AND c >= 0"), true)] {
                // The kernel's plan shape: a filter of integer comparisons under COUNTs.
                let (kernel, by_kernel) =
                    counted(&s, &format!("SELECT COUNT(*), COUNT(b), COUNT(d), COUNT(c) FROM t WHERE {filter}"));
                let (general, by_kernel_in_general) = counted(&s, &general_counts(&filter));
                prop_assert_eq!(&kernel, &general, "filter {}", filter);
                prop_assert_eq!(by_kernel_in_general, 0, "the general form ran the kernel: filter {}", filter);
                let (sure, maybe) = kernel_passes(&rows, op, k, with_c);
                prop_assert!(
                    (sure..=sure + maybe).contains(&by_kernel),
                    "filter {}: the kernel passed {} rows, expected {} (and up to {} more)", filter, by_kernel, sure, maybe
                );
            }
        }
        let (all, by_kernel) = counted(&s, "SELECT COUNT(*) FROM t");
        prop_assert_eq!(all, vec![rows.len().to_string()]);
        prop_assert_eq!(by_kernel, rows.len() as u64, "COUNT(*) counts every row in the kernel");
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases_or(16), ..ProptestConfig::default() })]

    /// The same counts through an index range scan (TABLE ACCESS BY INDEX ROWID), whose
    /// kernel takes the rows of each run in one block, by the fast walk where it can
    /// (rows whose counted columns are short, with their trailing columns present) and
    /// the general way otherwise (a long value, a trailing NULL the row format omits).
    /// The rowids come in an order unlike the rows' (runs of one row, and longer runs).
    #[test]
    fn an_index_path_kernel_counts_what_the_general_pipeline_counts(
        rows in proptest::collection::vec((cell(), cell(), cell(), cell()), 1..120),
        k in prop_oneof![-3i64..3, Just(i64::MAX)],
        scatter in prop_oneof![Just(1u64), Just(7919)],
    ) {
        let (_dir, _, db) = temp_db(options(8192, "4M"));
        let s = db.session();
        exec(&s, "CREATE TABLE t (id NUMBER, a NUMBER, b VARCHAR2(400), c NUMBER, d VARCHAR2(400))");
        for (i, (a, b, c, d)) in rows.iter().enumerate() {
            exec(&s, &format!(
                "INSERT INTO t VALUES ({}, {}, {}, {}, {})",
                i as u64 * scatter % 10007, literal(a, true), literal(b, false), literal(c, true), literal(d, false)
            ));
        }
        exec(&s, "CREATE INDEX t_id ON t (id)");
        let fetched = || s.stats().get(Stat::TableFetchByRowid);
        for op in ["=", "<>", "<", ">="] {
            for (filter, with_c) in [(format!("a {op} {k}"), false), (format!("a {op} {k} AND c >= 0"), true)] {
                let before = fetched();
                let (kernel, by_kernel) = counted(&s, &format!(
                    "SELECT /*+ INDEX(t t_id) */ COUNT(*), COUNT(b), COUNT(d), COUNT(c) FROM t WHERE id >= 0 AND {filter}"
                ));
                prop_assert_eq!(fetched() - before, rows.len() as u64, "the index path fetched every row: {}", filter);
                let (general, _) = counted(&s, &general_counts(&filter));
                prop_assert_eq!(&kernel, &general, "filter {}", filter);
                let (sure, maybe) = kernel_passes(&rows, op, k, with_c);
                prop_assert!(
                    (sure..=sure + maybe).contains(&by_kernel),
                    "filter {}: the kernel passed {} rows, expected {} (and up to {} more)", filter, by_kernel, sure, maybe
                );
                if with_c {
                    continue;
                }
                // One term and one count: the loops made for that shape, one a count.
                for (i, count) in SINGLE_COUNTS.iter().enumerate() {
                    let (one, by_kernel) = counted(&s, &format!(
                        "SELECT /*+ INDEX(t t_id) */ {count} FROM t WHERE id >= 0 AND {filter}"
                    ));
                    prop_assert_eq!(&one[0], &general[i], "{} with filter {}", count, filter);
                    prop_assert!(
                        (sure..=sure + maybe).contains(&by_kernel),
                        "{} with filter {}: the kernel passed {} rows, expected {} (and up to {} more)",
                        count, filter, by_kernel, sure, maybe
                    );
                }
            }
        }
        // No term and one count: the loops made for that shape.
        let (general, _) = counted(&s, &general_counts("id >= 0"));
        for (i, count) in SINGLE_COUNTS.iter().enumerate() {
            let (one, by_kernel) =
                counted(&s, &format!("SELECT /*+ INDEX(t t_id) */ {count} FROM t WHERE id >= 0"));
            prop_assert_eq!(&one[0], &general[i], "{} without a filter", count);
            // (COUNT(*) alone reads no column of the table: the index answers it alone.)
            if i > 0 {
                prop_assert_eq!(by_kernel, rows.len() as u64, "{} without a filter passes every row", count);
            }
        }
    }
}

/// The counts of the kernel tests' query one at a time, in its order: `COUNT(*)`, and one
/// of a column that is the first of the walk, one between, and the last (the counted
/// columns of a walk that reaches `c` or `d`).
const SINGLE_COUNTS: [&str; 4] = ["COUNT(*)", "COUNT(b)", "COUNT(d)", "COUNT(c)"];

/// A kernel reading past the 16th column, which the fast walk does not reach, walks
/// every row the general way: it still counts what the pipeline counts, and the scan gets
/// each row once.
#[test]
fn a_kernel_reading_past_the_sixteenth_column_counts_the_same() {
    let (_dir, _, db) = temp_db(options(8192, "4M"));
    let s = db.session();
    let columns: Vec<String> = (1..=20).map(|c| format!("c{c} NUMBER")).collect();
    exec(&s, &format!("CREATE TABLE wide ({})", columns.join(", ")));
    let values: Vec<String> =
        (1..=20).map(|c| format!("CASE WHEN MOD(LEVEL + {c}, 7) = 0 THEN NULL ELSE LEVEL * {c} END")).collect();
    exec(&s, &format!("INSERT INTO wide SELECT {} FROM dual CONNECT BY LEVEL <= 2000", values.join(", ")));
    let gotten = || s.stats().get(Stat::TableScanRowsGotten);
    let before = gotten();
    let (kernel, by_kernel) = counted(&s, "SELECT COUNT(*), COUNT(c20) FROM wide WHERE c18 > 9000");
    assert_eq!(gotten() - before, 2000, "table scan rows gotten");
    let (general, by_kernel_in_general) = counted(
        &s,
        "SELECT SUM(CASE WHEN c18 > 9000 THEN 1 ELSE 0 END), \
         SUM(CASE WHEN c18 > 9000 AND c20 IS NOT NULL THEN 1 ELSE 0 END) FROM wide",
    );
    assert_eq!(kernel, general);
    // Every value is a whole number: the kernel passed each row the count counts.
    assert_eq!(by_kernel.to_string(), kernel[0], "count kernel rows passed");
    assert_eq!(by_kernel_in_general, 0, "the general form ran the kernel");
}

/// A count with one filter term or none, the shapes the full scan counts eight rows at a
/// time in lanes where this machine chooses them ([`lioscope::row_lanes`]) and folds one
/// by one elsewhere: the same as the general form's, with lanes on and off. The choice
/// is made once a process, so the test runs itself again with the other one.
#[test]
fn a_count_in_lanes_or_one_by_one_counts_the_same() {
    let (_dir, _, db) = temp_db(options(8192, "4M"));
    let s = db.session();
    exec(&s, "CREATE TABLE t (a NUMBER, c NUMBER, b VARCHAR2(300))");
    // Small and large whole numbers (one to eight mantissa bytes), now and then a decimal
    // the kernel hands back or a NULL (which fail a group of eight in lanes, and keep the
    // others clean), NULLs in the counted column, and a long value after it.
    exec(
        &s,
        "INSERT INTO t SELECT \
           CASE WHEN MOD(LEVEL, 53) = 0 THEN NULL WHEN MOD(LEVEL, 59) = 0 THEN LEVEL + 0.5 \
                WHEN MOD(LEVEL, 3) = 0 THEN LEVEL * 1000000007 ELSE MOD(LEVEL * 37, 2001) - 1000 END, \
           CASE WHEN MOD(LEVEL, 7) = 0 THEN NULL ELSE LEVEL END, \
           CASE WHEN MOD(LEVEL, 97) = 0 THEN RPAD('x', 280, 'y') ELSE 'row ' || LEVEL END \
         FROM dual CONNECT BY LEVEL <= 3000",
    );
    let lanes = lioscope::row_lanes::choice();
    for filter in ["a > 0", "a <= -500", "a >= 3", "a <> 7", "a = -2", "a > 4000000000", "a < -3000000000000"] {
        let (kernel, by_kernel) = counted(&s, &format!("SELECT COUNT(c) FROM t WHERE {filter}"));
        let (general, _) =
            counted(&s, &format!("SELECT SUM(CASE WHEN {filter} AND c IS NOT NULL THEN 1 ELSE 0 END) FROM t"));
        assert_eq!(kernel, general, "filter {filter}, lanes {}", lanes.setting());
        assert!(by_kernel > 0 || general == ["0"], "filter {filter}: the kernel passed no row");
        // The same term under COUNT(*): the rows are counted, not a column.
        let (kernel, _) = counted(&s, &format!("SELECT COUNT(*) FROM t WHERE {filter}"));
        let (general, _) = counted(&s, &format!("SELECT SUM(CASE WHEN {filter} THEN 1 ELSE 0 END) FROM t"));
        assert_eq!(kernel, general, "COUNT(*) where {filter}, lanes {}", lanes.setting());
    }
    // A count without a filter.
    let (kernel, by_kernel) = counted(&s, "SELECT COUNT(c) FROM t");
    let (general, _) = counted(&s, "SELECT SUM(CASE WHEN c IS NOT NULL THEN 1 ELSE 0 END) FROM t");
    assert_eq!(kernel, general, "COUNT(c) of every row, lanes {}", lanes.setting());
    assert!(by_kernel > 0, "COUNT(c) of every row: the kernel passed no row");
    if std::env::var_os(lioscope::row_lanes::CHOICE_VARIABLE).is_some() {
        eprintln!("the other lanes choice is not run: {} is set", lioscope::row_lanes::CHOICE_VARIABLE);
        return;
    }
    let other = if lanes.on { "off" } else { "on" };
    let test = "a_count_in_lanes_or_one_by_one_counts_the_same";
    let run = std::process::Command::new(std::env::current_exe().expect("the test binary"))
        .args(["--exact", test, "--test-threads=1"])
        .env(lioscope::row_lanes::CHOICE_VARIABLE, other)
        .output()
        .expect("run the test binary again");
    let output = String::from_utf8_lossy(&run.stdout);
    assert!(run.status.success() && output.contains("1 passed"), "with lanes {other}: {output}");
}
