//! The count kernel (filter and count inside the scan loop) must give exactly what the
//! general pipeline gives, whatever the rows hold: NULLs in the middle, trailing NULL
//! columns the row format omits, long values with two-byte lengths, numbers that are not
//! small whole numbers (which the kernel hands back to the pipeline), and comparisons at
//! the ends of the integer range.

mod common;

use common::{exec, int, options, temp_db};
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
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

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
            for (filter, general) in [
                (format!("a {op} {k}"), format!("CASE WHEN a {op} {k} THEN 1 ELSE 0 END")),
                (format!("a {op} {k} AND c >= 0"), format!("CASE WHEN a {op} {k} AND c >= 0 THEN 1 ELSE 0 END")),
            ] {
                // The kernel's plan shape: a filter of integer comparisons under COUNTs.
                let kernel = exec(&s, &format!("SELECT COUNT(*), COUNT(b), COUNT(d), COUNT(c) FROM t WHERE {filter}"));
                // The same counts through expressions the kernel does not take.
                let general = exec(&s, &format!(
                    "SELECT SUM({general}), SUM(CASE WHEN ({filter}) AND b IS NOT NULL THEN 1 ELSE 0 END), \
                     SUM(CASE WHEN ({filter}) AND d IS NOT NULL THEN 1 ELSE 0 END), \
                     SUM(CASE WHEN ({filter}) AND c IS NOT NULL THEN 1 ELSE 0 END) FROM t"
                ));
                let kernel: Vec<String> = kernel.rows[0].iter().map(|v| v.to_string()).collect();
                let general: Vec<String> = general.rows[0].iter().map(|v| v.to_string()).collect();
                prop_assert_eq!(&kernel, &general, "filter {}", filter);
            }
        }
        prop_assert_eq!(int(&s, "SELECT COUNT(*) FROM t"), rows.len() as i64);
    }
}

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
    let kernel = exec(&s, "SELECT COUNT(*), COUNT(c20) FROM wide WHERE c18 > 9000");
    assert_eq!(gotten() - before, 2000, "table scan rows gotten");
    let general = exec(
        &s,
        "SELECT SUM(CASE WHEN c18 > 9000 THEN 1 ELSE 0 END), \
         SUM(CASE WHEN c18 > 9000 AND c20 IS NOT NULL THEN 1 ELSE 0 END) FROM wide",
    );
    let text = |r: &lioscope::QueryResult| r.rows[0].iter().map(|v| v.to_string()).collect::<Vec<_>>();
    assert_eq!(text(&kernel), text(&general));
}
