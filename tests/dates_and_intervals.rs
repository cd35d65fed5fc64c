//! Date arithmetic with INTERVAL literals, EXTRACT, NEXT_DAY and MONTHS_BETWEEN through
//! SQL, checked against SQLite's date functions (an independent engine) on random dates
//! and intervals: DATE ± INTERVAL ... DAY TO SECOND against `datetime(d, '±n days', ...)`,
//! DATE + INTERVAL ... MONTH against `datetime(d, '+n months')` (which moves a day the
//! month lacks into the next month, where Oracle's interval is an error: lioscope must
//! fail exactly there), EXTRACT against `strftime`, NEXT_DAY against `weekday N`, and
//! MONTHS_BETWEEN against Oracle's documented rule computed by SQLite. Also TPC-H's date
//! predicates, and the errors.

mod common;

use common::*;
use lioscope::Session;
use proptest::prelude::*;
use proptest::test_runner::TestRunner;

/// A date and time, 1900 to 2099, as 'YYYY-MM-DD HH24:MI:SS'.
fn datetime() -> impl Strategy<Value = String> {
    (1900i32..2100, 1u32..=12, 1u32..=31, 0u32..24, 0u32..60, 0u32..60).prop_map(|(y, m, d, h, mi, s)| {
        let last = chrono::NaiveDate::from_ymd_opt(y, m, 1)
            .and_then(|f| f.checked_add_months(chrono::Months::new(1)))
            .map_or(28, |next| next.pred_opt().map_or(28, |l| chrono::Datelike::day(&l)));
        format!("{y:04}-{m:02}-{:02} {h:02}:{mi:02}:{s:02}", d.min(last))
    })
}

/// lioscope's date expression for `text`, as text in SQLite's format.
fn lioscope_date(s: &Session, expr: &str) -> Result<String, String> {
    let sql = format!("SELECT TO_CHAR({expr}, 'YYYY-MM-DD HH24:MI:SS') FROM dual");
    s.execute(&sql).map(|r| r.rows[0][0].to_string()).map_err(|e| e.to_string())
}

fn to_date(d: &str) -> String {
    format!("TO_DATE('{d}', 'YYYY-MM-DD HH24:MI:SS')")
}

fn sqlite(conn: &rusqlite::Connection, sql: &str) -> String {
    conn.query_row(sql, [], |r| r.get::<_, rusqlite::types::Value>(0))
        .map(|v| match v {
            rusqlite::types::Value::Integer(i) => i.to_string(),
            rusqlite::types::Value::Real(f) => format!("{f:.9}"),
            rusqlite::types::Value::Text(t) => t,
            other => format!("{other:?}"),
        })
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
}

/// This file's runner: a failing case's seed is saved in its .proptest-regressions file
/// and run first next time; PROPTEST_CASES sets how many cases run.
fn runner(cases: u32) -> TestRunner {
    common::sqlite::runner(file!(), cases)
}

#[test]
fn day_to_second_intervals_move_a_date_as_sqlite_does() {
    let (_dir, _path, db) = db();
    let s = db.session();
    let conn = rusqlite::Connection::open_in_memory().unwrap();
    let interval = (any::<bool>(), 0i64..3000, 0i64..24, 0i64..60, 0i64..60);
    runner(300)
        .run(&(datetime(), interval, any::<bool>()), |(d, (negative, days, h, m, sec), subtract)| {
            let sign = if negative { "-" } else { "" };
            let literal = format!("INTERVAL '{sign}{days} {h:02}:{m:02}:{sec:02}' DAY(4) TO SECOND");
            let op = if subtract { "-" } else { "+" };
            let got = lioscope_date(&s, &format!("{} {op} {literal}", to_date(&d)));
            // The interval's sign, then the operator's.
            let flip = negative != subtract;
            let sq = |n: i64, unit: &str| format!("'{}{n} {unit}'", if flip { "-" } else { "+" });
            let expected = sqlite(
                &conn,
                &format!(
                    "SELECT datetime('{d}', {}, {}, {}, {})",
                    sq(days, "days"),
                    sq(h, "hours"),
                    sq(m, "minutes"),
                    sq(sec, "seconds")
                ),
            );
            prop_assert_eq!(got, Ok(expected), "{} {} {}", d, op, literal);
            Ok(())
        })
        .unwrap();
}

#[test]
fn month_intervals_move_a_date_as_sqlite_does_or_fail_where_the_day_is_missing() {
    let (_dir, _path, db) = db();
    let s = db.session();
    let conn = rusqlite::Connection::open_in_memory().unwrap();
    runner(300)
        .run(&(datetime(), -40i64..40, 0i64..12), |(d, years, months)| {
            let total = years * 12 + if years < 0 { -months } else { months };
            let literal = format!("INTERVAL '{years}-{months}' YEAR(3) TO MONTH");
            let got = lioscope_date(&s, &format!("{} + {literal}", to_date(&d)));
            let moved = sqlite(&conn, &format!("SELECT datetime('{d}', '{total:+} months')"));
            // SQLite carries a missing day into the next month; Oracle's interval fails.
            if moved[8..10] == d[8..10] {
                prop_assert_eq!(got, Ok(moved), "{} + {}", d, literal);
            } else {
                prop_assert!(
                    got.as_ref().is_err_and(|e| e.contains("date not valid for month specified")),
                    "{d} + {literal}: {got:?} (SQLite: {moved})"
                );
            }
            Ok(())
        })
        .unwrap();
}

#[test]
fn extract_next_day_and_months_between_agree_with_sqlite() {
    let (_dir, _path, db) = db();
    let s = db.session();
    let conn = rusqlite::Connection::open_in_memory().unwrap();
    const DAYS: [&str; 7] = ["SUNDAY", "MONDAY", "TUESDAY", "WEDNESDAY", "THURSDAY", "FRIDAY", "SATURDAY"];
    runner(300)
        .run(&(datetime(), datetime(), 0usize..7, any::<bool>()), |(a, b, day, short)| {
            // EXTRACT, against strftime.
            let parts = lines(
                &s,
                &format!(
                    "SELECT EXTRACT(YEAR FROM {d}), EXTRACT(MONTH FROM {d}), EXTRACT(DAY FROM {d}) FROM dual",
                    d = to_date(&a)
                ),
            );
            let expected = sqlite(
                &conn,
                &format!(
                    "SELECT CAST(strftime('%Y', '{a}') AS INTEGER) || '|' || CAST(strftime('%m', '{a}') AS INTEGER) \
                     || '|' || CAST(strftime('%d', '{a}') AS INTEGER)"
                ),
            );
            prop_assert_eq!(&parts, &[expected], "EXTRACT from {}", a);
            // NEXT_DAY: SQLite's `weekday N` is the day itself when it falls on N.
            let name = if short { &DAYS[day][..3] } else { DAYS[day] };
            let got = lioscope_date(&s, &format!("NEXT_DAY({}, '{name}')", to_date(&a)));
            let expected = sqlite(&conn, &format!("SELECT datetime('{a}', '+1 day', 'weekday {day}')"));
            prop_assert_eq!(got, Ok(expected), "NEXT_DAY({}, {})", a, name);
            // MONTHS_BETWEEN: whole months when the days of the month match or both are
            // their months' last; else the days and time left over over 31.
            let got = lines(&s, &format!("SELECT ROUND(MONTHS_BETWEEN({}, {}), 9) FROM dual", to_date(&a), to_date(&b)));
            let last = |d: &str| format!("date('{d}', 'start of month', '+1 month', '-1 day') = date('{d}')");
            let months = format!(
                "((strftime('%Y', '{a}') - strftime('%Y', '{b}')) * 12 + strftime('%m', '{a}') - strftime('%m', '{b}'))"
            );
            let expected = sqlite(
                &conn,
                &format!(
                    "SELECT CASE WHEN strftime('%d', '{a}') = strftime('%d', '{b}') OR ({} AND {}) THEN {months} \
                     ELSE round({months} + ((strftime('%d', '{a}') - strftime('%d', '{b}')) \
                     + (julianday('{a}') - julianday(date('{a}'))) - (julianday('{b}') - julianday(date('{b}')))) / 31.0, 9) END",
                    last(&a),
                    last(&b)
                ),
            );
            let got: f64 = got[0].parse().unwrap();
            let expected: f64 = expected.parse().unwrap();
            prop_assert!((got - expected).abs() < 1e-8, "MONTHS_BETWEEN({}, {}): {} against {}", a, b, got, expected);
            Ok(())
        })
        .unwrap();
}

#[test]
fn tpch_date_predicates_read_as_oracle_writes_them() {
    let (_dir, _path, db) = db();
    let s = db.session();
    exec(&s, "CREATE TABLE lineitem (l_orderkey NUMBER, l_shipdate DATE)");
    exec(
        &s,
        "INSERT INTO lineitem SELECT LEVEL, DATE '1992-01-01' + MOD(LEVEL * 37, 2500) FROM dual CONNECT BY LEVEL <= 3000",
    );
    // Q1's cut-off, Q6's year, Q4's quarter, Q7's years.
    let count = |predicate: &str| int(&s, &format!("SELECT COUNT(*) FROM lineitem WHERE {predicate}"));
    let q1 = count("l_shipdate <= DATE '1998-12-01' - INTERVAL '90' DAY (3)");
    assert_eq!(q1, count("l_shipdate <= DATE '1998-09-02'"));
    let q6 = count("l_shipdate >= DATE '1994-01-01' AND l_shipdate < DATE '1994-01-01' + INTERVAL '1' YEAR");
    assert_eq!(q6, count("l_shipdate >= DATE '1994-01-01' AND l_shipdate < DATE '1995-01-01'"));
    assert!(q6 > 0);
    let q4 = count("l_shipdate >= DATE '1993-07-01' AND l_shipdate < DATE '1993-07-01' + INTERVAL '3' MONTH");
    assert_eq!(q4, count("l_shipdate >= DATE '1993-07-01' AND l_shipdate < DATE '1993-10-01'"));
    let by_year = count("EXTRACT(YEAR FROM l_shipdate) BETWEEN 1995 AND 1996");
    assert_eq!(by_year, count("l_shipdate >= DATE '1995-01-01' AND l_shipdate < DATE '1997-01-01'"));
    // A column plus an interval, in a select list and EXPLAIN's predicates.
    let shifted = lines(&s, "SELECT l_shipdate + INTERVAL '1' MONTH FROM lineitem WHERE l_orderkey = 1");
    assert_eq!(shifted, ["1992-03-07 00:00:00"], "1992-01-01 + 37 days, + a month");
    let plan = plan(
        &s,
        "SELECT * FROM lineitem WHERE l_shipdate + INTERVAL '1' MONTH > SYSDATE AND EXTRACT(YEAR FROM l_shipdate) = 1995",
    );
    assert!(plan.contains("\"L_SHIPDATE\"+INTERVAL'+00-01' YEAR(2) TO MONTH>"), "{plan}");
    assert!(plan.contains("EXTRACT(YEAR FROM \"L_SHIPDATE\")=1995"), "{plan}");
}

#[test]
fn bad_intervals_and_extracts_are_clear_errors() {
    let (_dir, _path, db) = db();
    let s = db.session();
    let fails = |sql: &str, wanted: &str| {
        let e = error(&s, sql);
        assert!(e.contains(wanted), "{sql}: {e}");
    };
    fails(
        "SELECT INTERVAL '1' DAY - SYSDATE FROM dual",
        "ORA-30081: invalid data type for datetime/interval arithmetic",
    );
    fails("SELECT SYSDATE + INTERVAL '100' DAY FROM dual", "leading precision of the interval is too small");
    fails("SELECT SYSDATE + INTERVAL '1 25:00:00' DAY TO SECOND FROM dual", "25 is out of range");
    fails("SELECT SYSDATE + INTERVAL '1:00' DAY TO SECOND FROM dual", "the interval is invalid");
    fails("SELECT DATE '2024-01-31' + INTERVAL '1' MONTH FROM dual", "2024-02 has no day 31");
    fails("SELECT EXTRACT(HOUR FROM SYSDATE) FROM dual", "ORA-30076: invalid extract field HOUR for a DATE");
    fails("SELECT NEXT_DAY(SYSDATE, 'someday') FROM dual", "not a valid day of the week");
    fails("SELECT ADD_INTERVAL_MONTHS(SYSDATE, 1) FROM dual", "ADD_INTERVAL_MONTHS does not exist");
    // The same expressions with values that fit run.
    assert_eq!(
        lines(&s, "SELECT DATE '2024-01-29' + INTERVAL '1' MONTH - INTERVAL '30' DAY FROM dual"),
        ["2024-01-30 00:00:00"]
    );
    assert_eq!(lines(&s, "SELECT INTERVAL '2' HOUR + DATE '2024-01-01' FROM dual"), ["2024-01-01 02:00:00"]);
    // An interval is a value of its own.
    assert_eq!(
        lines(&s, "SELECT INTERVAL '1' DAY, INTERVAL '-1-2' YEAR TO MONTH FROM dual"),
        ["+01 00:00:00.000000|-01-02"]
    );
}
