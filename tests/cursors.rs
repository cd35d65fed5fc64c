//! Cursors and bind variables through the public API: a prepared statement run with many
//! bind values answers exactly what the same statement written with literals answers
//! over NUMBER and VARCHAR2 columns (index ranges given anew by the binds, NULLs, ROWNUM
//! sized by a bind, arithmetic on binds; a CHAR column compares a bind unpadded); the plan is made once and made again only when something it was made from
//! changed (DDL, ANALYZE, ALTER SESSION, SYSDATE); DML with binds, its binding and access
//! path kept as a plan is; bad bind values are clear errors.

mod common;

use common::*;
use lioscope::types::{Datum, Value};
use lioscope::{Cursor, Session};
use proptest::prelude::*;
use proptest::test_runner::{Config, FileFailurePersistence, TestCaseError, TestRunner};
use std::cell::RefCell;

/// Table `t`: ids 1..=200, `a` = id mod 17 (NULL when id mod 13 is 0), `s` a string;
/// indexes on id and on a; analyzed.
fn table(s: &Session) {
    exec(s, "CREATE TABLE t (id NUMBER NOT NULL, a NUMBER, s VARCHAR2(20))");
    exec(
        s,
        "INSERT INTO t SELECT LEVEL, CASE WHEN MOD(LEVEL, 13) = 0 THEN NULL ELSE MOD(LEVEL, 17) END, \
         'row ' || LEVEL FROM dual CONNECT BY LEVEL <= 200",
    );
    exec(s, "CREATE INDEX t_id ON t (id)");
    exec(s, "CREATE INDEX t_a ON t (a)");
    exec(s, "ANALYZE TABLE t COMPUTE STATISTICS");
}

/// Queries with binds :lo and :hi, each over another plan shape.
const QUERIES: &[&str] = &[
    "SELECT /*+ INDEX(t t_id) */ COUNT(*), SUM(a) FROM t WHERE id > :lo AND id <= :hi",
    "SELECT /*+ INDEX(t t_a) */ id FROM t WHERE a BETWEEN :lo AND :hi ORDER BY a, id",
    "SELECT /*+ FULL(t) */ COUNT(*) FROM t WHERE a >= :lo AND id < :hi",
    "SELECT id FROM t WHERE id = :lo OR a = :hi ORDER BY id",
    "SELECT /*+ INDEX(t t_id) */ id FROM t WHERE id >= :lo AND ROWNUM <= :hi",
    "SELECT /*+ INDEX(t t_id) */ MIN(s), MAX(id) FROM t WHERE id > :lo + 5 AND id < :hi * 2",
    "SELECT /*+ INDEX(t t_id) */ id FROM t WHERE id > :lo AND id > :hi AND id < 40 ORDER BY id",
    "SELECT COUNT(*) FROM t WHERE s LIKE 'row 1%' AND id BETWEEN :hi AND :lo",
];

/// A bind value as SQL text.
fn literal(v: &Value) -> String {
    match v {
        Datum::Null => "NULL".into(),
        other => format!("({other})"),
    }
}

fn value(v: Option<i64>) -> Value {
    v.map_or(Datum::Null, Datum::Int)
}

/// `text` without the places in it ("line 1, column 40"): a literal and a bind name differ
/// in length, so what follows them is at another column.
fn without_places(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find("line ") {
        out.push_str(&rest[..at]);
        let after = &rest[at + 5..];
        let digits = |t: &str| t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
        let line = digits(after);
        match after[line..].strip_prefix(", column ") {
            Some(column) if line > 0 && digits(column) > 0 => {
                out.push_str("line ?, column ?");
                rest = &column[digits(column)..];
            }
            _ => {
                out.push_str("line ");
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// Whether the error with binds is the error with literals: the same kind, and the same
/// message once each bind name in it is written as its literal and places are left out.
fn same_error(bound: &lioscope::Error, literal_error: &lioscope::Error, binds: &[(&str, &Value)]) -> bool {
    let mut message = bound.to_string();
    for (name, v) in binds {
        message = message.replace(&name.to_uppercase(), &literal(v)).replace(name, &literal(v));
    }
    std::mem::discriminant(bound) == std::mem::discriminant(literal_error)
        && without_places(&message) == without_places(&literal_error.to_string())
}

/// The property tests' runner: a failing case's seed is saved in
/// tests/cursors.proptest-regressions and run first next time; PROPTEST_CASES sets how
/// many cases run (300 unless told).
fn runner() -> TestRunner {
    TestRunner::new(Config {
        cases: cases_or(300),
        source_file: Some(file!()),
        failure_persistence: Some(Box::new(FileFailurePersistence::WithSource("proptest-regressions"))),
        ..Config::default()
    })
}

/// Runs `cursor` with `lo` and `hi` as its binds :lo and :hi (slots are the names' first
/// appearances: :hi comes first in some statements).
fn run_with(cursor: &mut Cursor<'_>, lo: &Value, hi: &Value) -> lioscope::Result<lioscope::QueryResult> {
    let binds: Vec<Value> =
        cursor.bind_names().iter().map(|n| if n == ":LO" { lo.clone() } else { hi.clone() }).collect();
    cursor.execute(&binds)
}

/// Whether what a statement with binds gave agrees with what it gave written with
/// literals (`text`): the same answer, or the same error. Values a literal statement
/// refuses (ROWNUM <= NULL) are refused with binds too.
fn agree<T: PartialEq + std::fmt::Debug>(
    got: lioscope::Result<T>,
    expected: lioscope::Result<T>,
    text: &str,
    lo: &Value,
    hi: &Value,
) -> Result<(), TestCaseError> {
    match (got, expected) {
        (Ok(got), Ok(expected)) => prop_assert_eq!(got, expected, "{}", text),
        (Err(bound), Err(literal)) => prop_assert!(
            same_error(&bound, &literal, &[(":lo", lo), (":hi", hi)]),
            "{text}: with binds `{bound}` ({bound:?}), with literals `{literal}` ({literal:?})"
        ),
        (got, expected) => prop_assert!(false, "{text}: {got:?} with binds, {expected:?} with literals"),
    }
    Ok(())
}

#[test]
fn errors_agree_only_when_kind_and_message_do() {
    let parse = |message: &str| lioscope::Error::Parse { message: message.into(), position: None };
    let invalid = |message: &str| lioscope::Error::InvalidValue { context: "ROWNUM".into(), message: message.into() };
    let null = Datum::Null;
    let binds: &[(&str, &Value)] = &[(":hi", &null)];
    assert!(same_error(&invalid("ROWNUM <= :HI is NULL"), &invalid("ROWNUM <= NULL is NULL"), binds));
    assert!(!same_error(&invalid("ROWNUM <= :HI is NULL"), &parse("ROWNUM <= NULL is NULL"), binds), "kinds differ");
    assert!(!same_error(&invalid("division by zero"), &invalid("ROWNUM <= NULL is NULL"), binds), "messages differ");
    assert_eq!(without_places("x at line 1, column 40: y"), "x at line ?, column ?: y");
}

#[test]
fn kept_plans_answer_as_the_same_statements_with_literals() {
    let (_dir, _path, db) = temp_db(options(8192, "8M"));
    let s = db.session();
    table(&s);
    let cursors: RefCell<Vec<Cursor<'_>>> =
        RefCell::new(QUERIES.iter().map(|q| s.prepare(q).unwrap_or_else(|e| panic!("{q}: {e}"))).collect());
    let bind = proptest::option::weighted(0.9, -5i64..220);
    let mut runner = runner();
    runner
        .run(&(0..QUERIES.len(), bind.clone(), bind), |(q, lo, hi)| {
            let (lo, hi) = (value(lo), value(hi));
            let text = QUERIES[q].replace(":lo", &literal(&lo)).replace(":hi", &literal(&hi));
            let expected = s.execute(&text).map(|r| r.rows);
            let got = run_with(&mut cursors.borrow_mut()[q], &lo, &hi).map(|r| r.rows);
            agree(got, expected, &text, &lo, &hi)
        })
        .unwrap();
}

#[test]
fn a_kept_plan_runs_again_without_parsing() {
    let (_dir, _path, db) = temp_db(options(8192, "8M"));
    let s = db.session();
    table(&s);
    let text = "SELECT /*+ INDEX(t t_id) */ COUNT(s) FROM t WHERE id > :lo AND id <= :hi";
    let mut cursor = s.prepare(text).unwrap();
    assert_eq!(cursor.bind_names(), [":LO", ":HI"]);
    let stats = s.stats();
    let (hard, total) = (stats.get(lioscope::Stat::ParseCountHard), stats.get(lioscope::Stat::ParseCountTotal));
    let gets = |run: &mut dyn FnMut() -> lioscope::QueryResult| {
        let before = stats.get(lioscope::Stat::ConsistentGets);
        assert_eq!(run().rows, vec![vec![Datum::Int(10)]]);
        stats.get(lioscope::Stat::ConsistentGets) - before
    };
    let mut by_cursor = Vec::new();
    for lo in (0..190).step_by(4) {
        by_cursor.push(gets(&mut || cursor.execute(&[Datum::Int(lo), Datum::Int(lo + 10)]).unwrap()));
    }
    assert_eq!(stats.get(lioscope::Stat::ParseCountHard) - hard, 1, "one plan for all executions");
    assert_eq!(stats.get(lioscope::Stat::ParseCountTotal), total, "a kept cursor parses nothing");
    // Each execution reads what the statement with literals reads: the kept plan starts
    // and stops where the new binds say.
    let by_text: Vec<u64> = (0..190)
        .step_by(4)
        .map(|lo| gets(&mut || exec(&s, &text.replace(":lo", &lo.to_string()).replace(":hi", &(lo + 10).to_string()))))
        .collect();
    assert_eq!(by_cursor, by_text);
    let sql = format!("SELECT executions FROM v$sql WHERE sql_text = '{text}'");
    assert_eq!(int(&s, &sql), 48);
}

/// Hard parses of session `s` while `run` runs.
fn hard_parses(s: &Session, run: impl FnOnce()) -> u64 {
    let before = s.stats().get(lioscope::Stat::ParseCountHard);
    run();
    s.stats().get(lioscope::Stat::ParseCountHard) - before
}

#[test]
fn ddl_analyze_and_parameters_make_the_plan_anew() {
    let (_dir, _path, db) = temp_db(options(8192, "8M"));
    let s = db.session();
    table(&s);
    let other = db.session();
    let mut cursor = s.prepare("SELECT COUNT(*) FROM t WHERE id BETWEEN :1 AND :2").unwrap();
    let mut count = |lo: i64, hi: i64| cursor.execute(&[Datum::Int(lo), Datum::Int(hi)]).unwrap().rows[0][0].clone();
    assert_eq!(hard_parses(&s, || assert_eq!(count(1, 10), Datum::Int(10))), 1);
    assert_eq!(hard_parses(&s, || assert_eq!(count(5, 10), Datum::Int(6))), 0);
    // Another session drops the index the plan reads: the cursor plans again, correctly.
    exec(&other, "DROP INDEX t_id");
    assert_eq!(hard_parses(&s, || assert_eq!(count(1, 10), Datum::Int(10))), 1);
    exec(&other, "INSERT INTO t (id) VALUES (5)");
    assert_eq!(hard_parses(&s, || assert_eq!(count(1, 10), Datum::Int(11))), 0, "DML keeps the plan");
    exec(&other, "CREATE INDEX t_id ON t (id)");
    assert_eq!(hard_parses(&s, || assert_eq!(count(1, 10), Datum::Int(11))), 1);
    exec(&other, "ANALYZE TABLE t COMPUTE STATISTICS");
    assert_eq!(hard_parses(&s, || assert_eq!(count(2, 3), Datum::Int(2))), 1);
    exec(&s, "ALTER SESSION SET db_file_multiblock_read_count = 4");
    assert_eq!(hard_parses(&s, || assert_eq!(count(2, 3), Datum::Int(2))), 1);
    exec(&other, "TRUNCATE TABLE t");
    assert_eq!(hard_parses(&s, || assert_eq!(count(1, 300), Datum::Int(0))), 1);
}

/// The parameters an execution reads are the ones set now: `statistics_level` changed by
/// ALTER SYSTEM from another session, or by ALTER SESSION (which wins), between two
/// executions of one cursor decides whether the next one gathers row-source statistics.
#[test]
fn each_execution_reads_the_parameters_set_now() {
    let (_dir, _path, db) = temp_db(options(8192, "8M"));
    let s = db.session();
    table(&s);
    let other = db.session();
    let mut cursor = s.prepare("SELECT /*+ INDEX(t t_id) */ COUNT(*) FROM t WHERE id <= :1").unwrap();
    let mut gathers = || cursor.execute(&[Datum::Int(10)]).unwrap().plan_statistics.is_some();
    assert!(!gathers());
    exec(&other, "ALTER SYSTEM SET statistics_level = ALL");
    assert!(gathers(), "another session's ALTER SYSTEM reaches the next execution");
    exec(&other, "ALTER SYSTEM SET statistics_level = TYPICAL");
    assert!(!gathers());
    exec(&s, "ALTER SESSION SET statistics_level = ALL");
    assert!(gathers(), "ALTER SESSION reaches the next execution");
    exec(&other, "ALTER SYSTEM SET statistics_level = TYPICAL");
    assert!(gathers(), "the session's own value over the system's");
    exec(&s, "ALTER SESSION SET statistics_level = TYPICAL");
    assert!(!gathers());
}

#[test]
fn sysdate_in_a_kept_plan_is_the_time_of_each_execution() {
    let (_dir, _path, db) = temp_db(options(8192, "8M"));
    let s = db.session();
    let mut cursor = s.prepare("SELECT TO_CHAR(SYSDATE, 'HH24:MI:SS'), :x FROM dual").unwrap();
    // TO_DATE without a year takes the current one: its plan holds the time too.
    let mut to_date = s.prepare("SELECT COUNT(*) FROM dual WHERE TO_DATE('01-01', 'MM-DD') < SYSDATE + :d").unwrap();
    let first = cursor.execute(&[Datum::Int(1)]).unwrap().rows[0][0].to_string();
    to_date.execute(&[Datum::Int(1)]).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(1100));
    let second = cursor.execute(&[Datum::Int(2)]).unwrap();
    assert_ne!(second.rows[0][0].to_string(), first, "SYSDATE moved on");
    assert_eq!(second.rows[0][1], Datum::Int(2));
    assert_eq!(hard_parses(&s, || drop(to_date.execute(&[Datum::Int(1)]).unwrap())), 1);
}

#[test]
fn views_are_read_at_each_execution() {
    let (_dir, _path, db) = temp_db(options(8192, "8M"));
    let s = db.session();
    let mut cursor = s.prepare("SELECT COUNT(*) FROM v$session WHERE sid >= :s").unwrap();
    let before = cursor.execute(&[Datum::Int(0)]).unwrap().rows[0][0].clone();
    let _other = db.session();
    let after = cursor.execute(&[Datum::Int(0)]).unwrap().rows[0][0].clone();
    assert_eq!(after.to_i64("count").unwrap(), before.to_i64("count").unwrap().map(|n| n + 1));
}

#[test]
fn dml_runs_with_binds() {
    let (_dir, _path, db) = temp_db(options(8192, "8M"));
    let s = db.session();
    exec(&s, "CREATE TABLE t (id NUMBER, s VARCHAR2(20))");
    let mut insert = s.prepare("INSERT INTO t VALUES (:id, :s)").unwrap();
    for id in 1..=20 {
        insert.execute(&[Datum::Int(id), Datum::string(format!("row {id}"))]).unwrap();
    }
    let mut update = s.prepare("UPDATE t SET s = :s || id WHERE id > :lo").unwrap();
    assert_eq!(update.execute(&[Datum::string("new "), Datum::Int(15)]).unwrap().rows_affected, 5);
    let mut delete = s.prepare("DELETE FROM t WHERE id <= :n").unwrap();
    assert_eq!(delete.execute(&[Datum::Int(10)]).unwrap().rows_affected, 10);
    assert_eq!(scalar(&s, "SELECT COUNT(*) || ' ' || MAX(s) FROM t"), "10 row 15");
    assert_eq!(scalar(&s, "SELECT s FROM t WHERE id = 20"), "new 20");
    // Rust values convert: None is NULL.
    insert.execute(&[21.into(), None::<&str>.into()]).unwrap();
    assert_eq!(int(&s, "SELECT COUNT(*) FROM t WHERE s IS NULL AND id = 21"), 1);
    // The binds belong to the cursor: a statement run from text afterwards has none.
    let e = fail(&s, "SELECT :id FROM dual");
    assert!(e.to_string().contains("bind variable :id") && e.to_string().contains("no value"), "{e}");
}

#[test]
fn bad_binds_are_clear_errors() {
    let (_dir, _path, db) = temp_db(options(8192, "8M"));
    let s = db.session();
    table(&s);
    let mut cursor = s.prepare("SELECT COUNT(*) FROM t WHERE id > :lo AND a < :hi").unwrap();
    let e = cursor.execute(&[Datum::Int(1)]).unwrap_err().to_string();
    assert!(e.contains("2 bind variables (:LO, :HI), 1 value was given"), "{e}");
    // A string where a number is compared: the error of the literal statement.
    let e = cursor.execute(&[Datum::string("x"), Datum::Int(1)]).unwrap_err().to_string();
    let literal = fail(&s, "SELECT COUNT(*) FROM t WHERE id > 'x' AND a < 1").to_string();
    assert_eq!(e, literal);
    // The cursor still works after its errors.
    // (ids 191..=200 but 195, whose `a` is NULL)
    assert_eq!(cursor.execute(&[Datum::Int(190), Datum::Int(100)]).unwrap().rows, vec![vec![Datum::Int(9)]]);
    let e = s.prepare("SELECT * FROM t WHERE id = ?").err().expect("? is refused").to_string();
    assert!(e.contains("name it"), "{e}");
    let e = s.prepare("ALTER SESSION SET db_file_multiblock_read_count = :x").err().expect("no binds there");
    assert!(e.to_string().contains("column 51"), "the bind variable is where the value should be: {e}");
    assert!(s.prepare("   ").is_err());
}

#[test]
fn explain_shows_the_bind_variables() {
    let (_dir, _path, db) = temp_db(options(8192, "8M"));
    let s = db.session();
    table(&s);
    let mut cursor = s.prepare("EXPLAIN SELECT /*+ INDEX(t t_id) */ s FROM t WHERE id > :lo").unwrap();
    let plan: Vec<String> = cursor.execute(&[5.into()]).unwrap().rows.iter().map(|r| r[0].to_string()).collect();
    let plan = plan.join("\n");
    assert!(plan.contains("INDEX RANGE SCAN") && plan.contains("access(\"ID\">:LO)"), "{plan}");
}

#[test]
fn plan_statistics_gather_with_binds() {
    let (_dir, _path, db) = temp_db(options(8192, "8M"));
    let s = db.session();
    table(&s);
    s.set_plan_statistics(true);
    let mut cursor = s.prepare("SELECT /*+ INDEX(t t_id) */ COUNT(*) FROM t WHERE id > :lo AND id <= :hi").unwrap();
    let result = cursor.execute(&[Datum::Int(10), Datum::Int(30)]).unwrap();
    assert_eq!(result.rows, vec![vec![Datum::Int(20)]]);
    let statistics = result.plan_statistics.expect("row-source statistics").format(true).join("\n");
    assert!(statistics.contains("INDEX RANGE SCAN"), "{statistics}");
}

/// UPDATEs and DELETEs with binds :lo and :hi over table `{t}` (indexes `{t}_id`, `{t}_a`),
/// each over another access path.
const CHANGES: &[&str] = &[
    "UPDATE /*+ INDEX({t} {t}_id) */ {t} SET a = a + 1, s = s || 'u' WHERE id > :lo AND id <= :hi",
    "UPDATE {t} SET s = 'set ' || :hi WHERE id = :lo",
    "UPDATE /*+ INDEX({t} {t}_a) */ {t} SET a = :hi WHERE a = :lo",
    "UPDATE /*+ FULL({t}) */ {t} SET a = NULL WHERE a >= :lo AND id < :hi",
    "UPDATE {t} SET a = a - :lo WHERE id >= :hi AND ROWNUM <= 3",
    "DELETE FROM {t} WHERE id BETWEEN :lo AND :hi AND MOD(id, 7) = 0",
    "DELETE /*+ INDEX({t} {t}_id) */ FROM {t} WHERE id = :lo + 3",
    "DELETE FROM {t} WHERE a = :hi AND ROWNUM <= :lo",
];

/// A prepared UPDATE or DELETE keeps what it was bound to and how it finds its rows;
/// run with many bind values, between DDL and ANALYZE of its table, it changes exactly
/// the rows the same statement written with literals changes in a twin table.
/// A prepared INSERT ... VALUES keeps its binding between executions, as an UPDATE
/// does: each execution inserts its own bind and sequence values and the time it runs
/// at, and a CHECK constraint added or the table made anew (its columns in another
/// order) are seen by the next execution; an identity column gets its value at every
/// execution.
#[test]
fn a_kept_insert_inserts_each_executions_values_and_sees_the_dictionary_change() {
    let (_dir, _path, db) = temp_db(options(8192, "8M"));
    let s = db.session();
    exec(&s, "CREATE TABLE t (id NUMBER, s VARCHAR2(20), n NUMBER)");
    exec(&s, "CREATE SEQUENCE q");
    let mut insert = s.prepare("INSERT INTO t (id, s, n) VALUES (:id, :s || '!', q.NEXTVAL)").unwrap();
    for id in 1..=3 {
        insert.execute(&[Datum::Int(id), Datum::string(format!("r{id}"))]).unwrap();
    }
    assert_eq!(lines(&s, "SELECT id, s, n FROM t ORDER BY id"), ["1|r1!|1", "2|r2!|2", "3|r3!|3"]);

    exec(&s, "ALTER TABLE t ADD CONSTRAINT t_positive CHECK (id > 0)");
    let refused = insert.execute(&[Datum::Int(-1), Datum::string("x")]).unwrap_err().to_string();
    assert!(refused.contains("ORA-02290"), "{refused}");
    insert.execute(&[Datum::Int(4), Datum::string("r4")]).unwrap();
    let again = insert.execute(&[Datum::Int(-2), Datum::string("y")]).unwrap_err().to_string();
    assert!(again.contains("ORA-02290"), "checked at every execution: {again}");
    assert_eq!(lines(&s, "SELECT COUNT(*), MAX(id) FROM t"), ["4|4"]);

    exec(&s, "DROP TABLE t");
    exec(&s, "CREATE TABLE t (n NUMBER, s VARCHAR2(20), id NUMBER)");
    insert.execute(&[Datum::Int(9), Datum::string("z")]).unwrap();
    let row = lines(&s, "SELECT id, s, CASE WHEN n > 4 THEN 'later' END FROM t");
    assert_eq!(row, ["9|z!|later"], "the values go to the named columns of the new table");

    exec(&s, "CREATE TABLE g (id NUMBER GENERATED ALWAYS AS IDENTITY, v NUMBER)");
    let mut generated = s.prepare("INSERT INTO g (v) VALUES (:v)").unwrap();
    for v in [10, 20] {
        generated.execute(&[Datum::Int(v)]).unwrap();
    }
    assert_eq!(lines(&s, "SELECT id, v FROM g ORDER BY id"), ["1|10", "2|20"], "the identity at every execution");

    exec(&s, "CREATE TABLE times (at VARCHAR2(8))");
    let mut now = s.prepare("INSERT INTO times VALUES (TO_CHAR(SYSDATE, 'HH24:MI:SS'))").unwrap();
    now.execute(&[]).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(1100));
    now.execute(&[]).unwrap();
    assert_eq!(lines(&s, "SELECT COUNT(DISTINCT at) FROM times"), ["2"], "SYSDATE is each execution's");
}

#[test]
fn kept_changes_change_as_the_same_statements_with_literals() {
    let (_dir, _path, db) = temp_db(options(8192, "8M"));
    let s = db.session();
    for t in ["tb", "tl"] {
        exec(&s, &format!("CREATE TABLE {t} (id NUMBER NOT NULL, a NUMBER, s VARCHAR2(400))"));
        exec(
            &s,
            &format!(
                "INSERT INTO {t} SELECT LEVEL, CASE WHEN MOD(LEVEL, 13) = 0 THEN NULL ELSE MOD(LEVEL, 17) END, \
                 'row ' || LEVEL FROM dual CONNECT BY LEVEL <= 300"
            ),
        );
        exec(&s, &format!("CREATE INDEX {t}_id ON {t} (id)"));
        exec(&s, &format!("CREATE INDEX {t}_a ON {t} (a)"));
        exec(&s, &format!("ANALYZE TABLE {t} COMPUTE STATISTICS"));
    }
    let of = |text: &str, t: &str| text.replace("{t}", t);
    let cursors: RefCell<Vec<Cursor<'_>>> =
        RefCell::new(CHANGES.iter().map(|c| s.prepare(&of(c, "tb")).unwrap_or_else(|e| panic!("{c}: {e}"))).collect());
    let bind = proptest::option::weighted(0.9, -5i64..320);
    // Now and then the bound table's index on `a` is made anew, the table analyzed, or
    // the table made anew: a cursor that kept the old index, decision or table binds again.
    let ddl = proptest::option::weighted(0.05, 0..3usize);
    let mut runner = runner();
    runner
        .run(&(0..CHANGES.len(), bind.clone(), bind, ddl), |(c, lo, hi, ddl)| {
            match ddl {
                Some(0) => {
                    exec(&s, "DROP INDEX tb_a");
                    exec(&s, "CREATE INDEX tb_a ON tb (a)");
                }
                Some(1) => {
                    exec(&s, "ANALYZE TABLE tb COMPUTE STATISTICS");
                }
                Some(_) => {
                    // The table made anew with the twin's rows: a change bound to the
                    // dropped one must not write there.
                    exec(&s, "DROP TABLE tb");
                    exec(&s, "CREATE TABLE tb AS SELECT * FROM tl");
                    exec(&s, "CREATE INDEX tb_id ON tb (id)");
                    exec(&s, "CREATE INDEX tb_a ON tb (a)");
                }
                None => {}
            }
            let (lo, hi) = (value(lo), value(hi));
            let text = of(CHANGES[c], "tl").replace(":lo", &literal(&lo)).replace(":hi", &literal(&hi));
            let expected = s.execute(&text).map(|r| r.rows_affected);
            let got = run_with(&mut cursors.borrow_mut()[c], &lo, &hi).map(|r| r.rows_affected);
            agree(got, expected, &text, &lo, &hi)?;
            let all = |t: &str| rows(&s, &format!("SELECT * FROM {t} ORDER BY id"));
            prop_assert_eq!(all("tb"), all("tl"), "after {}", text);
            Ok(())
        })
        .unwrap();
}

#[test]
fn a_bind_that_sizes_the_plan_makes_it_anew_when_it_changes() {
    let (_dir, _path, db) = temp_db(options(8192, "8M"));
    let s = db.session();
    table(&s);
    let mut cursor = s.prepare("SELECT /*+ INDEX(t t_id) */ id FROM t WHERE id > :lo AND ROWNUM <= ABS(:n)").unwrap();
    let mut ids = |lo: i64, n: i64| -> Vec<String> {
        let rows = cursor.execute(&[lo.into(), n.into()]).unwrap().rows;
        rows.iter().map(|r| r[0].to_string()).collect()
    };
    assert_eq!(hard_parses(&s, || assert_eq!(ids(0, -3), ["1", "2", "3"])), 1);
    assert_eq!(hard_parses(&s, || assert_eq!(ids(10, -3), ["11", "12", "13"])), 0, "only the range moved");
    assert_eq!(hard_parses(&s, || assert_eq!(ids(10, 2), ["11", "12"])), 1, "the stopkey changed");
}
