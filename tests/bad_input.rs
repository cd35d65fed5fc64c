//! Bad input through the public API: statements and files the engine must refuse with a
//! precise error, leaving what is stored exactly as it was.

mod common;

use common::*;
use lioscope::{Database, DatabaseOptions, Error};
use std::io::Write;
use std::path::{Path, PathBuf};
use tempfile::TempDir;

/// A table with one column of each kind, used by the INSERT checks.
const CREATE_T: &str = "CREATE TABLE t (id INTEGER NOT NULL, name VARCHAR2(10), price NUMBER(5,2), d DATE, c CHAR(3))";

/// Everything that identifies the contents of `t` (id, pad, tag): row count, sums and
/// the segment's high-water mark.
fn fingerprint(s: &lioscope::Session, table: &str) -> (i64, String, String, String, i64) {
    (
        count(s, table),
        scalar(s, &format!("SELECT SUM(id) FROM {table}")),
        scalar(s, &format!("SELECT SUM(LENGTH(pad)) FROM {table}")),
        scalar(s, &format!("SELECT COUNT(tag) FROM {table}")),
        blocks_below_hwm(s, table),
    )
}

/// Asserts that `e` is shown to the user starting with `prefix` (what it is about).
fn assert_shown_with_prefix(e: &Error, prefix: &str) {
    let shown = e.to_string();
    assert!(shown.starts_with(prefix), "'{shown}' should start with '{prefix}'");
}

// ---------------------------------------------------------------------------------------
// SQL text
// ---------------------------------------------------------------------------------------

#[test]
fn malformed_sql_reports_message_and_position() {
    let (_dir, _, db) = temp_db(options(2048, "2M"));
    let s = db.session();
    exec(&s, CREATE_T);

    match fail(&s, "SELEC * FROM t") {
        Error::Parse { message, position } => {
            assert!(message.contains("SELEC"), "{message}");
            assert_eq!(position.as_deref(), Some("line 1, column 1"));
        }
        other => panic!("expected a parse error, got {other:?}"),
    }

    // The position counts lines and columns of the statement as written.
    let e = fail(&s, "SELECT *\n  FROM t WHERE id ==== 3");
    match &e {
        Error::Parse { message, position } => {
            assert!(message.contains("=="), "{message}");
            assert_eq!(position.as_deref(), Some("line 2, column 21"));
        }
        other => panic!("expected a parse error, got {other:?}"),
    }
    assert_eq!(e.to_string(), "syntax error at line 2, column 21: ORA-00936: missing expression, found ==");

    // Tokenizer errors carry a position too.
    match fail(&s, "SELECT * FROM t WHERE name = 'abc") {
        Error::Parse { message, position } => {
            assert_eq!(message, "ORA-01756: quoted string not properly terminated");
            assert_eq!(position.as_deref(), Some("line 1, column 30"));
        }
        other => panic!("expected a parse error, got {other:?}"),
    }

    // A bad ALTER SESSION clause is reported where it goes wrong.
    match fail(&s, "ALTER SESSION SET db_file_multiblock_read_count 8") {
        Error::Parse { message, position } => {
            assert_eq!(message, "expected =");
            assert_eq!(position.as_deref(), Some("line 1, column 49"));
        }
        other => panic!("expected a parse error, got {other:?}"),
    }

    match fail(&s, "   ;  ") {
        Error::Parse { message, position: None } => assert_eq!(message, "empty statement"),
        other => panic!("expected a parse error, got {other:?}"),
    }
    match fail(&s, "SELECT 1 FROM dual; SELECT 2 FROM dual") {
        Error::Parse { message, .. } => assert!(message.contains("expected one statement, found 2"), "{message}"),
        other => panic!("expected a parse error, got {other:?}"),
    }
    // Nothing of the above changed the table.
    assert_eq!(count(&s, "t"), 0);
}

#[test]
fn syntax_errors_read_as_oracles_naming_the_token_and_where_it_is() {
    let (_dir, _, db) = temp_db(options(2048, "2M"));
    let s = db.session();
    let cases = [
        // An operator Oracle does not have, in a select list and after it.
        ("SELECT 7 DIV 2 FROM dual", "line 1, column 10: ORA-00923: FROM keyword not found where expected, found DIV"),
        (
            "SELECT 1 FROM dual\nWHERE 7 DIV 2 = 3",
            "line 2, column 9: ORA-00933: SQL command not properly ended, found DIV",
        ),
        ("SELECT (7 DIV 2) FROM dual", "line 1, column 11: ORA-00907: missing right parenthesis, found DIV"),
        ("SELECT 1 2 FROM dual", "line 1, column 10: ORA-00923: FROM keyword not found where expected, found 2"),
        ("SELECT 1 FROM dual x y", "line 1, column 22: ORA-00933: SQL command not properly ended, found y"),
        ("SELECT 1 FROM dual ORDER 1", "line 1, column 20: ORA-00924: missing BY keyword, found ORDER"),
        ("SELECT FROM dual", "line 1, column 8: ORA-00936: missing expression, found FROM"),
        (
            "SELECT 1 FROM dual WHERE",
            "(end of statement): ORA-00936: missing expression, found the end of the statement",
        ),
        ("SELECT (1 + 2 FROM dual", "line 1, column 15: ORA-00907: missing right parenthesis, found FROM"),
        ("SELEC 1 FROM dual", "line 1, column 1: ORA-00900: invalid SQL statement, found SELEC"),
        ("SELECT 1 FROM", "(end of statement): ORA-00903: invalid table name, found the end of the statement"),
        ("SELECT 'abc FROM dual", "line 1, column 8: ORA-01756: quoted string not properly terminated"),
    ];
    let wrong: Vec<String> = cases
        .iter()
        .map(|(sql, expected)| (sql, expected, error(&s, sql)))
        .filter(|(_, expected, e)| !e.ends_with(**expected) || !e.starts_with("syntax error at line "))
        .map(|(sql, expected, e)| format!("{sql}: '{e}' should end with '{expected}'"))
        .collect();
    assert!(wrong.is_empty(), "{wrong:#?}");
    // A shape with no Oracle equivalent keeps the parser's own words.
    let e = error(&s, "CREATE TABLE u (a INTEGER,)");
    assert_eq!(e, "syntax error at line 1, column 27: Expected: column name or constraint definition, found: )");
}

#[test]
fn truncated_statement_reports_a_position() {
    let (_dir, _, db) = temp_db(options(2048, "2M"));
    let s = db.session();
    exec(&s, CREATE_T);
    match fail(&s, "SELECT * FROM t WHERE") {
        Error::Parse { message, position } => {
            assert!(message.contains("found the end of the statement"), "{message}");
            assert!(position.is_some(), "a syntax error at the end of the text has no position: {message}");
        }
        other => panic!("expected a parse error, got {other:?}"),
    }
}

#[test]
fn unknown_tables_and_columns_are_named() {
    let (_dir, _, db) = temp_db(options(2048, "2M"));
    let s = db.session();
    exec(&s, CREATE_T);

    let e = fail(&s, "SELECT * FROM nosuch");
    assert!(
        matches!(&e, Error::UnknownName { kind: "table or view", name, position: Some(p) }
            if name == "NOSUCH" && p == "line 1, column 15"),
        "{e:?}"
    );
    assert_eq!(e.to_string(), "table or view NOSUCH does not exist at line 1, column 15");

    let e = fail(&s, "SELECT id, nosuch FROM t");
    assert!(
        matches!(&e, Error::UnknownName { kind: "column", name, position: Some(p) }
            if name == "NOSUCH" && p == "line 1, column 12"),
        "{e:?}"
    );

    let e = fail(&s, "SELECT COUNT(*) FROM t WHERE missing_col > 3");
    assert!(matches!(&e, Error::UnknownName { kind: "column", name, .. } if name == "MISSING_COL"), "{e:?}");

    let e = fail(&s, "INSERT INTO nosuch VALUES (1)");
    assert!(matches!(&e, Error::UnknownName { kind: "table", name, .. } if name == "NOSUCH"), "{e:?}");

    let e = fail(&s, "INSERT INTO t (id, nosuch) VALUES (1, 2)");
    assert!(
        matches!(&e, Error::UnknownName { kind: "column", name, position: Some(p) }
            if name == "T.NOSUCH" && p == "line 1, column 20"),
        "{e:?}"
    );

    let e = fail(&s, "DROP TABLE nosuch");
    assert!(matches!(&e, Error::UnknownObject { kind: "table", name } if name == "NOSUCH"), "{e:?}");
    assert_eq!(e.to_string(), "table NOSUCH does not exist");
    let e = fail(&s, "TRUNCATE TABLE nosuch");
    assert!(matches!(&e, Error::UnknownObject { kind: "table", name } if name == "NOSUCH"), "{e:?}");
    // DROP ... IF EXISTS of a missing table is fine.
    exec(&s, "DROP TABLE IF EXISTS nosuch");

    let e = fail(&s, "CREATE TABLE t (a INTEGER)");
    assert!(matches!(&e, Error::ObjectExists { kind: "table", name } if name == "T"), "{e:?}");
    let e = fail(&s, "CREATE TABLE u (a VARCHAR2(5000))");
    assert!(
        matches!(&e, Error::InvalidValue { context, message } if context == "A" && message.contains("5000")),
        "{e:?}"
    );
    // The failed CREATE left no table behind.
    let e = fail(&s, "SELECT * FROM u");
    assert!(matches!(&e, Error::UnknownName { name, .. } if name == "U"), "{e:?}");
}

// ---------------------------------------------------------------------------------------
// INSERT values that do not fit
// ---------------------------------------------------------------------------------------

/// Asserts `e` is an InvalidValue for `column` whose message contains `fragment`.
fn assert_value_error(e: &Error, column: &str, fragment: &str) {
    match e {
        Error::InvalidValue { context, message } => {
            assert_eq!(context, column, "error names the column: {e}");
            assert!(message.contains(fragment), "message '{message}' should contain '{fragment}'");
            assert_shown_with_prefix(e, &format!("{column}: "));
        }
        other => panic!("expected an invalid value error for {column}, got {other:?}"),
    }
}

#[test]
fn insert_values_that_do_not_fit_name_the_column() {
    let (_dir, _, db) = temp_db(options(2048, "2M"));
    let s = db.session();
    exec(&s, CREATE_T);
    exec(&s, "INSERT INTO t VALUES (1, 'ok', 1.25, '2020-02-29', 'ab')");

    let cases: &[(&str, &str, &str)] = &[
        ("INSERT INTO t VALUES ('abc', 'x', 1, NULL, NULL)", "T.ID", "invalid number 'abc'"),
        (
            "INSERT INTO t VALUES (2, 'abcdefghijk', 1, NULL, NULL)",
            "T.NAME",
            "value too large (actual: 11, maximum: 10 bytes)",
        ),
        // Multibyte characters count in bytes: 6 × 2 bytes.
        (
            "INSERT INTO t VALUES (2, 'éééééé', 1, NULL, NULL)",
            "T.NAME",
            "value too large (actual: 12, maximum: 10 bytes)",
        ),
        ("INSERT INTO t VALUES (2, 'x', 1000, NULL, NULL)", "T.PRICE", "NUMBER(5,2)"),
        // Rounds to 1000.00 first, which no longer fits.
        ("INSERT INTO t VALUES (2, 'x', 999.995, NULL, NULL)", "T.PRICE", "value larger than specified precision"),
        ("INSERT INTO t VALUES (2, 'x', -12345, NULL, NULL)", "T.PRICE", "value larger than specified precision"),
        ("INSERT INTO t VALUES (2, 'x', 'twelve', NULL, NULL)", "T.PRICE", "invalid number 'twelve'"),
        ("INSERT INTO t VALUES (2, 'x', 1, 'yesterday', NULL)", "T.D", "is not a date"),
        ("INSERT INTO t VALUES (2, 'x', 1, 5, NULL)", "T.D", "cannot store NUMBER in a DATE column"),
        ("INSERT INTO t VALUES (2, 'x', 1, NULL, 'abcd')", "T.C", "value too large (actual: 4, maximum: 3 bytes)"),
        ("INSERT INTO t VALUES (2, 'x')", "T", "2 values for 5 columns"),
    ];
    for (sql, column, fragment) in cases {
        let e = fail(&s, sql);
        assert_value_error(&e, column, fragment);
    }
    for sql in ["INSERT INTO t VALUES (NULL, 'x', 1, NULL, NULL)", "INSERT INTO t (name) VALUES ('x')"] {
        let e = fail(&s, sql);
        assert_eq!(e.to_string(), "ORA-01400: cannot insert NULL into (\"LIOSCOPE\".\"T\".\"ID\")", "{sql}");
    }
    // Values that do fit, at the limits.
    exec(&s, "INSERT INTO t VALUES (2, 'abcdefghij', 999.99, '2020-03-01 12:34:56', 'xyz')");
    exec(&s, "INSERT INTO t VALUES (3, 'ééééé', -999.994, NULL, 'a')");
    let r = rows(&s, "SELECT id, name, price, d, c FROM t ORDER BY id");
    let shown: Vec<Vec<String>> = r.iter().map(|row| row.iter().map(|v| v.to_string()).collect()).collect();
    assert_eq!(
        shown,
        vec![
            vec!["1", "ok", "1.25", "2020-02-29 00:00:00", "ab "],
            vec!["2", "abcdefghij", "999.99", "2020-03-01 12:34:56", "xyz"],
            vec!["3", "ééééé", "-999.99", "", "a  "],
        ]
    );
}

#[test]
fn multi_row_insert_with_a_bad_third_row_adds_nothing() {
    let (_dir, _, db) = temp_db(options(2048, "2M"));
    let s = db.session();
    exec(&s, CREATE_T);

    // On an empty table.
    let e = fail(
        &s,
        "INSERT INTO t VALUES (1,'a',1,NULL,NULL), (2,'b',2,NULL,NULL), (3,'much too long',3,NULL,NULL), (4,'d',4,NULL,NULL)",
    );
    assert_value_error(&e, "T.NAME", "value too large (actual: 13, maximum: 10 bytes)");
    assert_eq!(count(&s, "t"), 0);
    assert_eq!(blocks_below_hwm(&s, "t"), 1, "the failed statement left no formatted block");

    // On a table with rows (the statement's rows would go into the same block).
    exec(&s, "INSERT INTO t SELECT LEVEL, 'r' || LEVEL, MOD(LEVEL, 100), NULL, NULL FROM dual CONNECT BY LEVEL <= 50");
    let before = (count_and_id_sum(&s, "t"), blocks_below_hwm(&s, "t"));
    let e = fail(
        &s,
        "INSERT INTO t VALUES (101,'a',1,NULL,NULL), (102,'b',2,NULL,NULL), (103,'c',123456,NULL,NULL), (104,'d',4,NULL,NULL)",
    );
    assert_value_error(&e, "T.PRICE", "NUMBER(5,2)");
    let e = fail(&s, "INSERT INTO t VALUES (101,'a',1,NULL,NULL), (102,'b',2,NULL,NULL), (NULL,'c',3,NULL,NULL)");
    assert_eq!(e.to_string(), "ORA-01400: cannot insert NULL into (\"LIOSCOPE\".\"T\".\"ID\")");
    assert_eq!((count_and_id_sum(&s, "t"), blocks_below_hwm(&s, "t")), before);
    assert_eq!(int(&s, "SELECT COUNT(*) FROM t WHERE id > 100"), 0);

    // The table still takes rows, and only those.
    exec(&s, "INSERT INTO t VALUES (101,'a',1,NULL,NULL), (102,'b',2,NULL,NULL)");
    assert_eq!(count_and_id_sum(&s, "t"), (52, 50 * 51 / 2 + 203));
}

#[test]
fn insert_select_failing_midway_leaves_the_table_as_it_was() {
    let (_dir, db_dir, db) = temp_db(options(2048, "2M"));
    let s = db.session();
    exec(&s, "CREATE TABLE t (id INTEGER, pad VARCHAR2(100), tag VARCHAR2(10))");
    // 1,000 rows: the last block is partly full, so the failing statement first adds rows
    // to a block that existed before it.
    exec(&s, "INSERT INTO t SELECT LEVEL, RPAD('a', 100, 'a'), 'old' FROM dual CONNECT BY LEVEL <= 1000");
    let before = fingerprint(&s, "t");
    assert_eq!(before.0, 1000);
    assert!(before.4 > 50, "1,000 rows of ~110 bytes take many 2 KiB blocks: {before:?}");

    // 5,000 rows where row 4,000 is too long for TAG: ~280 blocks were filled when it fails.
    let e = fail(
        &s,
        "INSERT INTO t SELECT 1000 + LEVEL, RPAD('b', 100, 'b'), \
         CASE WHEN LEVEL = 4000 THEN 'much too long' ELSE 'new' END FROM dual CONNECT BY LEVEL <= 5000",
    );
    assert_value_error(&e, "T.TAG", "value too large (actual: 13, maximum: 10 bytes)");
    assert_eq!(fingerprint(&s, "t"), before, "a failed INSERT ... SELECT changed the table");
    assert_eq!(int(&s, "SELECT COUNT(*) FROM t WHERE tag = 'new' OR id > 1000"), 0);

    // The same load without the bad row succeeds; the blocks the failed statement had
    // formatted above the high-water mark are formatted again, not resurrected.
    let r =
        exec(&s, "INSERT INTO t SELECT 1000 + LEVEL, RPAD('c', 100, 'c'), 'new' FROM dual CONNECT BY LEVEL <= 5000");
    assert_eq!(r.rows_affected, 5000);
    let check = |s: &lioscope::Session| {
        assert_eq!(count_and_id_sum(s, "t"), ids_up_to(6000));
        assert_eq!(int(s, "SELECT COUNT(*) FROM t WHERE pad = RPAD('b', 100, 'b')"), 0);
        assert_eq!(int(s, "SELECT COUNT(*) FROM t WHERE pad = RPAD('c', 100, 'c')"), 5000);
        assert_eq!(int(s, "SELECT COUNT(*) FROM t WHERE tag = 'old'"), 1000);
    };
    check(&s);
    drop(s);
    drop(db);
    let db = open(&db_dir, options(2048, "2M"));
    check(&db.session());
}

#[test]
fn insert_select_reading_its_own_table_failing_leaves_it_unchanged() {
    let (_dir, _, db) = temp_db(options(2048, "2M"));
    let s = db.session();
    exec(&s, "CREATE TABLE t (id INTEGER, pad VARCHAR2(100), tag VARCHAR2(10))");
    exec(&s, "INSERT INTO t SELECT LEVEL, RPAD('a', 100, 'a'), 'old' FROM dual CONNECT BY LEVEL <= 2000");
    let before = fingerprint(&s, "t");
    let e =
        fail(&s, "INSERT INTO t SELECT id + 2000, pad, CASE WHEN id = 1500 THEN 'much too long' ELSE tag END FROM t");
    assert_value_error(&e, "T.TAG", "value too large");
    assert_eq!(fingerprint(&s, "t"), before);
    // Doubling works and sees the table as it was when the statement began.
    exec(&s, "INSERT INTO t SELECT id + 2000, pad, tag FROM t");
    assert_eq!(count_and_id_sum(&s, "t"), ids_up_to(4000));
}

// ---------------------------------------------------------------------------------------
// COPY from CSV
// ---------------------------------------------------------------------------------------

fn write_csv(path: &Path, lines: impl IntoIterator<Item = String>) {
    let mut f = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    for l in lines {
        writeln!(f, "{l}").unwrap();
    }
    f.flush().unwrap();
}

fn good_lines(from: i64, to: i64) -> impl Iterator<Item = String> {
    (from..=to).map(|i| format!("{i},name {i},{}.{:02},2021-01-{:02}", i % 1000, i % 100, i % 28 + 1))
}

fn assert_csv_error(e: &Error, file: &Path, line: u64, column: usize, fragment: &str) {
    match e {
        Error::Csv { file: f, line: l, column: c, message } => {
            assert_eq!(f, file, "{e}");
            assert_eq!((*l, *c), (line, column), "line and column of: {e}");
            assert!(message.contains(fragment), "message '{message}' should contain '{fragment}'");
            assert_shown_with_prefix(e, &format!("{}, line {line}, column {column}: ", file.display()));
        }
        other => panic!("expected a CSV error, got {other:?}"),
    }
}

#[test]
fn copy_with_a_bad_line_loads_nothing_and_names_file_line_and_column() {
    let (dir, _, db) = temp_db(options(2048, "2M"));
    let s = db.session();
    exec(&s, "CREATE TABLE c (id INTEGER NOT NULL, name VARCHAR2(12), amount NUMBER(6,2), d DATE)");
    exec(&s, "INSERT INTO c VALUES (0, 'seed', 0, NULL)");
    let before = (count(&s, "c"), blocks_below_hwm(&s, "c"));

    // Header, then 2,999 good lines (many blocks), then a line whose 3rd field is not a
    // number: the header is line 1, so the bad record is on line 3,001.
    let bad_number = dir.path().join("bad_number.csv");
    write_csv(
        &bad_number,
        std::iter::once("id,name,amount,d".to_owned())
            .chain(good_lines(1, 2999))
            .chain(std::iter::once("3000,name 3000,lots,2021-01-01".to_owned()))
            .chain(good_lines(3001, 3010)),
    );
    let e = fail(&s, &format!("COPY c FROM '{}' (FORMAT CSV, HEADER)", bad_number.display()));
    assert_csv_error(&e, &bad_number, 3001, 3, "invalid number 'lots'");
    assert_eq!((count(&s, "c"), blocks_below_hwm(&s, "c")), before, "a failed COPY left rows behind");

    // A string too long in field 2, without a header.
    let too_long = dir.path().join("too_long.csv");
    write_csv(&too_long, good_lines(1, 500).chain(std::iter::once("501,thirteen char,1,2021-01-01".to_owned())));
    let e = fail(&s, &format!("COPY c FROM '{}'", too_long.display()));
    assert_csv_error(&e, &too_long, 501, 2, "value too large (actual: 13, maximum: 12 bytes)");

    // A line with a field missing.
    let short = dir.path().join("short.csv");
    write_csv(&short, good_lines(1, 10).chain(std::iter::once("11,eleven".to_owned())));
    let e = fail(&s, &format!("COPY c FROM '{}'", short.display()));
    assert_csv_error(&e, &short, 11, 3, "2 fields, expected 4");

    // An empty field in a NOT NULL column.
    let null_id = dir.path().join("null_id.csv");
    write_csv(&null_id, good_lines(1, 3).chain(std::iter::once(",no id,1,2021-01-01".to_owned())));
    let e = fail(&s, &format!("COPY c FROM '{}'", null_id.display()));
    assert_csv_error(&e, &null_id, 4, 1, "ORA-01400: cannot insert NULL into (\"LIOSCOPE\".\"C\".\"ID\")");

    // A bad date in the last field.
    let bad_date = dir.path().join("bad_date.csv");
    write_csv(&bad_date, good_lines(1, 3).chain(std::iter::once("4,four,1,2021-13-45".to_owned())));
    let e = fail(&s, &format!("COPY c FROM '{}'", bad_date.display()));
    assert_csv_error(&e, &bad_date, 4, 4, "is not a date");

    assert_eq!((count(&s, "c"), blocks_below_hwm(&s, "c")), before, "failed COPYs left rows behind");

    // A missing file is an I/O error naming it.
    let missing = dir.path().join("missing.csv");
    match fail(&s, &format!("COPY c FROM '{}'", missing.display())) {
        Error::Io { operation, path, source } => {
            assert_eq!(operation, "open");
            assert_eq!(path, missing);
            assert_eq!(source.kind(), std::io::ErrorKind::NotFound);
        }
        other => panic!("expected an I/O error, got {other:?}"),
    }

    // The table still takes a good COPY, and exactly its rows.
    let good = dir.path().join("good.csv");
    write_csv(&good, std::iter::once("id,name,amount,d".to_owned()).chain(good_lines(1, 3000)));
    let r = exec(&s, &format!("COPY c FROM '{}' (FORMAT CSV, HEADER)", good.display()));
    assert_eq!(r.rows_affected, 3000);
    // Ids 1..=3000 and the seed row's 0.
    assert_eq!(count_and_id_sum(&s, "c"), (3001, 3000 * 3001 / 2));
    assert_eq!(scalar(&s, "SELECT name FROM c WHERE id = 2999"), "name 2999");
    assert_eq!(scalar(&s, "SELECT amount FROM c WHERE id = 1234"), "234.34");
}

#[test]
fn copy_of_invalid_utf8_names_the_column() {
    let (dir, _, db) = temp_db(options(2048, "2M"));
    let s = db.session();
    exec(&s, "CREATE TABLE c (id INTEGER, name VARCHAR2(12))");
    let path = dir.path().join("latin1.csv");
    std::fs::write(&path, b"1,one\n2,caf\xe9\n3,three\n").unwrap();
    let e = fail(&s, &format!("COPY c FROM '{}'", path.display()));
    assert!(matches!(&e, Error::Csv { line: 2, .. }), "{e:?}");
    assert_eq!(count(&s, "c"), 0);
    assert!(matches!(&e, Error::Csv { column: 2, .. }), "the non-UTF-8 field is field 2: {e:?}");
}

// ---------------------------------------------------------------------------------------
// Directories and files that are not a usable database
// ---------------------------------------------------------------------------------------

#[test]
fn opening_something_that_is_not_a_database() {
    let dir = tempfile::tempdir().unwrap();

    let missing = dir.path().join("nothing_here");
    match Database::open(&missing, DatabaseOptions::default()) {
        Err(Error::NotADatabase { path, reason }) => {
            assert_eq!(path, missing);
            assert_eq!(reason, "no such directory");
        }
        Err(e) => panic!("expected NotADatabase, got {e:?}"),
        Ok(_) => panic!("opened a directory that does not exist"),
    }

    let plain = dir.path().join("plain");
    std::fs::create_dir(&plain).unwrap();
    std::fs::write(plain.join("notes.txt"), "hello").unwrap();
    match Database::open(&plain, DatabaseOptions::default()) {
        Err(e @ Error::NotADatabase { .. }) => {
            let Error::NotADatabase { path, reason } = &e else { unreachable!() };
            assert_eq!(path, &plain);
            assert_eq!(reason, "no control.json in it");
            assert_eq!(e.to_string(), format!("{} is not a lioscope database: no control.json in it", plain.display()));
        }
        Err(e) => panic!("expected NotADatabase, got {e:?}"),
        Ok(_) => panic!("opened a directory without a database"),
    }
    // Nothing was created there.
    assert!(!plain.join("control.json").exists());
    assert!(!plain.join("users01.dbf").exists());

    // A file is not a database directory either.
    let file = dir.path().join("file");
    std::fs::write(&file, "x").unwrap();
    assert!(matches!(
        Database::open(&file, DatabaseOptions::default()),
        Err(Error::NotADatabase { reason, .. }) if reason == "no such directory"
    ));

    // Creating over an existing database is refused.
    let db_dir = dir.path().join("db");
    drop(create(&db_dir, options(2048, "1M")));
    match Database::create(&db_dir, options(2048, "1M")) {
        Err(Error::ObjectExists { kind: "database", name }) => assert_eq!(name, db_dir.display().to_string()),
        Err(e) => panic!("expected ObjectExists, got {e:?}"),
        Ok(_) => panic!("created a database over another"),
    }
    // Bad creation options.
    let e = Database::create(dir.path().join("bs"), DatabaseOptions { block_size: 3000, ..Default::default() })
        .err()
        .expect("block size 3000 is refused");
    assert!(
        matches!(&e, Error::InvalidParameter { name, message } if name == "db_block_size" && message.contains("3000")),
        "{e:?}"
    );
    assert!(!dir.path().join("bs").exists(), "a refused create left a directory");
}

#[test]
fn garbage_control_file_is_not_a_database() {
    let (_dir, db_dir, db) = temp_db(options(2048, "1M"));
    exec(&db.session(), "CREATE TABLE t (a INTEGER)");
    drop(db);
    let control = db_dir.join("control.json");
    let original = std::fs::read_to_string(&control).unwrap();

    std::fs::write(&control, "this is { not json").unwrap();
    match Database::open(&db_dir, options(2048, "1M")) {
        Err(Error::NotADatabase { path, reason }) => {
            assert_eq!(path, db_dir);
            assert!(reason.starts_with("control.json is not a valid control file"), "{reason}");
        }
        Err(e) => panic!("expected NotADatabase, got {e:?}"),
        Ok(_) => panic!("opened a database with a garbage control file"),
    }

    // Valid JSON of another format.
    let other_format = original.replace("lioscope control file", "something else");
    std::fs::write(&control, other_format).unwrap();
    match Database::open(&db_dir, options(2048, "1M")) {
        Err(Error::NotADatabase { reason, .. }) => {
            assert_eq!(reason, "control.json has format 'something else'")
        }
        Err(e) => panic!("expected NotADatabase, got {e:?}"),
        Ok(_) => panic!("opened a control file of another format"),
    }

    // A block size that is not one of the valid ones.
    let mut json: serde_json::Value = serde_json::from_str(&original).unwrap();
    json["block_size"] = serde_json::json!(3000);
    std::fs::write(&control, json.to_string()).unwrap();
    assert!(matches!(
        Database::open(&db_dir, options(2048, "1M")),
        Err(Error::NotADatabase { reason, .. }) if reason.contains("block size 3000")
    ));

    // A garbage dictionary.
    std::fs::write(&control, &original).unwrap();
    let dictionary = db_dir.join("dictionary.json");
    let dict_text = std::fs::read_to_string(&dictionary).unwrap();
    std::fs::write(&dictionary, "[1, 2").unwrap();
    match Database::open(&db_dir, options(2048, "1M")) {
        Err(Error::NotADatabase { reason, .. }) => {
            assert!(reason.starts_with("dictionary.json is not valid"), "{reason}")
        }
        Err(e) => panic!("expected NotADatabase, got {e:?}"),
        Ok(_) => panic!("opened a database with a garbage dictionary"),
    }

    // Put back, the database opens and works.
    std::fs::write(&dictionary, dict_text).unwrap();
    let db = open(&db_dir, options(2048, "1M"));
    let s = db.session();
    exec(&s, "INSERT INTO t VALUES (1)");
    assert_eq!(count(&s, "t"), 1);
}

#[test]
fn datafile_of_another_database_or_not_a_datafile_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a");
    let b = dir.path().join("b");
    drop(create(&a, options(2048, "1M")));
    // Make sure the two databases get different ids.
    std::thread::sleep(std::time::Duration::from_millis(2));
    drop(create(&b, options(2048, "1M")));
    std::fs::copy(b.join("users01.dbf"), a.join("users01.dbf")).unwrap();
    match Database::open(&a, options(2048, "1M")) {
        Err(Error::Corrupt { file, block, reason }) => {
            assert_eq!(file, a.join("users01.dbf"));
            assert_eq!(block, Some(0));
            assert!(reason.contains("belongs to database"), "{reason}");
        }
        Err(e) => panic!("expected Corrupt, got {e:?}"),
        Ok(_) => panic!("opened a datafile of another database"),
    }
    std::fs::write(a.join("users01.dbf"), vec![0x42u8; 4096]).unwrap();
    match Database::open(&a, options(2048, "1M")) {
        Err(Error::Corrupt { file, block: Some(0), reason }) => {
            assert_eq!(file, a.join("users01.dbf"));
            assert!(reason.contains("not a lioscope datafile"), "{reason}");
        }
        Err(e) => panic!("expected Corrupt, got {e:?}"),
        Ok(_) => panic!("opened a file that is not a datafile"),
    }
    std::fs::remove_file(a.join("users01.dbf")).unwrap();
    match Database::open(&a, options(2048, "1M")) {
        Err(Error::Io { path, source, .. }) => {
            assert_eq!(path, a.join("users01.dbf"));
            assert_eq!(source.kind(), std::io::ErrorKind::NotFound);
        }
        Err(e) => panic!("expected Io, got {e:?}"),
        Ok(_) => panic!("opened a database without its datafile"),
    }
}

// ---------------------------------------------------------------------------------------
// Corrupted blocks
// ---------------------------------------------------------------------------------------

const BLOCK: usize = 8192;

/// Creates (block size 8192) tables T1 (1,000 rows, ~30 blocks) and T2 (300 rows), closes
/// the database and returns its temporary and database directories and T1's data object id.
fn two_tables() -> (TempDir, PathBuf, u32) {
    let (dir, db_dir, db) = temp_db(options(BLOCK, "2M"));
    let s = db.session();
    exec(&s, "CREATE TABLE t1 (id INTEGER, pad VARCHAR2(200))");
    exec(&s, "CREATE TABLE t2 (id INTEGER, name VARCHAR2(20))");
    exec(&s, "INSERT INTO t1 SELECT LEVEL, RPAD('x', 200, 'x') FROM dual CONNECT BY LEVEL <= 1000");
    exec(&s, "INSERT INTO t2 SELECT LEVEL, 'row ' || LEVEL FROM dual CONNECT BY LEVEL <= 300");
    let object_id = int(&s, "SELECT object_id FROM user_tables WHERE table_name = 'T1'") as u32;
    assert!(blocks_below_hwm(&s, "t1") > 20);
    drop(s);
    drop(db);
    (dir, db_dir, object_id)
}

/// Block numbers of `users01.dbf` whose header says: type `block_type`, object `object_id`.
fn blocks_of(datafile: &Path, block_type: u8, object_id: u32) -> Vec<u32> {
    let bytes = std::fs::read(datafile).unwrap();
    bytes
        .chunks(BLOCK)
        .enumerate()
        .filter(|(_, b)| b[0] == block_type && u32::from_le_bytes(b[20..24].try_into().unwrap()) == object_id)
        .map(|(i, _)| i as u32)
        .collect()
}

fn flip_byte(datafile: &Path, block: u32, offset: usize) {
    use std::os::unix::fs::FileExt;
    let f = std::fs::OpenOptions::new().read(true).write(true).open(datafile).unwrap();
    let at = block as u64 * BLOCK as u64 + offset as u64;
    let mut b = [0u8; 1];
    f.read_exact_at(&mut b, at).unwrap();
    b[0] ^= 0x5a;
    f.write_all_at(&b, at).unwrap();
    f.sync_all().unwrap();
}

fn assert_corrupt(e: &Error, datafile: &Path, block: u32, fragment: &str) {
    match e {
        Error::Corrupt { file, block: b, reason } => {
            assert_eq!(file, datafile, "{e}");
            assert_eq!(*b, Some(block), "{e}");
            assert!(reason.contains(fragment), "reason '{reason}' should contain '{fragment}'");
            assert_shown_with_prefix(e, &format!("corrupt data in {}, block {block}: ", datafile.display()));
        }
        other => panic!("expected a corrupt block error, got {other:?}"),
    }
}

#[test]
fn corrupted_data_block_is_reported_with_file_and_block() {
    let (_dir, db_dir, t1) = two_tables();
    let datafile = db_dir.join("users01.dbf");
    let data_blocks = blocks_of(&datafile, 0x06, t1);
    let extent_blocks = (1 << 20) / BLOCK as u32;
    assert!(data_blocks.len() > 20, "{data_blocks:?}");
    assert!(data_blocks.iter().all(|&b| b >= extent_blocks), "the first extent holds only the file header");
    // A block in the middle of the table, a byte in the middle of the block.
    let victim = data_blocks[data_blocks.len() / 2];
    flip_byte(&datafile, victim, BLOCK / 2);

    let db = open(&db_dir, options(BLOCK, "2M"));
    let s = db.session();
    for _ in 0..2 {
        // With the default multiblock reads, and again (the bad block was not kept).
        let e = fail(&s, "SELECT COUNT(*), SUM(id) FROM t1");
        assert_corrupt(&e, &datafile, victim, "checksum mismatch");
        assert_eq!(db.cache_summary().pinned, 0, "an error left buffers pinned");
    }
    // Single-block reads report it the same way.
    exec(&s, "ALTER SESSION SET db_file_multiblock_read_count = 1");
    let e = fail(&s, "SELECT MAX(pad) FROM t1");
    assert_corrupt(&e, &datafile, victim, "checksum mismatch");
    // A scan that stops before the bad block still works.
    assert_eq!(scalar(&s, "SELECT id FROM t1 WHERE ROWNUM <= 1"), "1");
    // An INSERT does not touch the bad block (it is not the last), nor do other tables.
    let other = db.session();
    assert_eq!(count_and_id_sum(&other, "t2"), ids_up_to(300));
    assert_eq!(scalar(&other, "SELECT name FROM t2 WHERE id = 299"), "row 299");
    assert_eq!(int(&other, "SELECT COUNT(*) FROM user_segments"), 2);
    assert_eq!(db.cache_summary().pinned, 0);
}

#[test]
fn corrupted_segment_header_is_reported_and_other_tables_stay_readable() {
    let (_dir, db_dir, t1) = two_tables();
    let datafile = db_dir.join("users01.dbf");
    let headers = blocks_of(&datafile, 0x10, t1);
    assert_eq!(headers.len(), 1, "one segment header for T1");
    flip_byte(&datafile, headers[0], 100);

    let db = open(&db_dir, options(BLOCK, "2M"));
    let s = db.session();
    let e = fail(&s, "SELECT COUNT(*) FROM t1");
    assert_corrupt(&e, &datafile, headers[0], "checksum mismatch");
    let e = fail(&s, "INSERT INTO t1 VALUES (1, 'x')");
    assert_corrupt(&e, &datafile, headers[0], "checksum mismatch");
    assert_eq!(db.cache_summary().pinned, 0);
    assert_eq!(count(&s, "t2"), 300);
    exec(&s, "INSERT INTO t2 VALUES (301, 'more')");
    assert_eq!(count(&s, "t2"), 301);
}

#[test]
fn block_written_at_the_wrong_address_is_detected() {
    // A block that is intact but in the wrong place (a misdirected write): the checksum
    // holds, the address in its header does not.
    let (_dir, db_dir, t1) = two_tables();
    let datafile = db_dir.join("users01.dbf");
    let data_blocks = blocks_of(&datafile, 0x06, t1);
    let (from, to) = (data_blocks[3], data_blocks[4]);
    let mut bytes = std::fs::read(&datafile).unwrap();
    let copy = bytes[from as usize * BLOCK..(from as usize + 1) * BLOCK].to_vec();
    bytes[to as usize * BLOCK..(to as usize + 1) * BLOCK].copy_from_slice(&copy);
    std::fs::write(&datafile, bytes).unwrap();

    let db = open(&db_dir, options(BLOCK, "2M"));
    let s = db.session();
    let e = fail(&s, "SELECT SUM(id) FROM t1");
    assert_corrupt(&e, &datafile, to, "claims address");
    assert_eq!(db.cache_summary().pinned, 0);
    assert_eq!(count(&s, "t2"), 300);
}

// ---------------------------------------------------------------------------------------
// Parameters
// ---------------------------------------------------------------------------------------

#[test]
fn bad_parameters_are_refused_and_change_nothing() {
    let (_dir, db_dir, db) = temp_db(options(2048, "2M"));
    let s = db.session();

    let e = fail(&s, "ALTER SESSION SET no_such_param = 3");
    assert!(matches!(&e, Error::UnknownObject { kind: "parameter", name } if name == "no_such_param"), "{e:?}");
    assert_eq!(e.to_string(), "parameter no_such_param does not exist");
    let e = fail(&s, "ALTER SYSTEM SET no_such_param = 3");
    assert!(matches!(&e, Error::UnknownObject { kind: "parameter", .. }), "{e:?}");

    let mbrc = "db_file_multiblock_read_count";
    let invalid = |e: &Error, name: &str, fragment: &str| match e {
        Error::InvalidParameter { name: n, message } => {
            assert_eq!(n, name);
            assert!(message.contains(fragment), "message '{message}' should contain '{fragment}'");
        }
        other => panic!("expected an invalid parameter error, got {other:?}"),
    };
    invalid(&fail(&s, "ALTER SESSION SET db_file_multiblock_read_count = 0"), mbrc, "0 is not between 1 and 1024");
    invalid(
        &fail(&s, "ALTER SESSION SET db_file_multiblock_read_count = 1025"),
        mbrc,
        "1025 is not between 1 and 1024",
    );
    // A sign is not part of a parameter value.
    match fail(&s, "ALTER SESSION SET db_file_multiblock_read_count = -1") {
        Error::Parse { message, position } => {
            assert_eq!(message, "expected a value");
            assert_eq!(position.as_deref(), Some("line 1, column 51"));
        }
        other => panic!("expected a parse error, got {other:?}"),
    }
    invalid(
        &fail(&s, "ALTER SESSION SET db_file_multiblock_read_count = 'lots'"),
        mbrc,
        "'lots' is not a whole number",
    );
    invalid(&fail(&s, "ALTER SYSTEM SET db_file_multiblock_read_count = 0"), mbrc, "0 is not between 1 and 1024");
    invalid(&fail(&s, "ALTER SESSION SET db_cache_size = 4M"), "db_cache_size", "cannot be changed with ALTER SESSION");
    invalid(&fail(&s, "ALTER SYSTEM SET db_cache_size = 12"), "db_cache_size", "below the minimum");
    invalid(&fail(&s, "ALTER SYSTEM SET db_cache_size = big"), "db_cache_size", "is not a size");
    invalid(&fail(&s, "ALTER SYSTEM SET db_block_size = 4096"), "db_block_size", "fixed when the database is created");
    invalid(
        &fail(&s, "ALTER SYSTEM SET filesystemio_options = async"),
        "filesystemio_options",
        "is not one of none, directio",
    );

    // None of it changed a value.
    assert_eq!(parameter(&s, mbrc), "128");
    assert_eq!(parameter(&s, "db_cache_size"), "2M");
    assert_eq!(scalar(&s, "SELECT isdefault FROM v$parameter WHERE name = 'db_file_multiblock_read_count'"), "TRUE");

    // A good value is taken.
    exec(&s, "ALTER SESSION SET db_file_multiblock_read_count = 16");
    assert_eq!(parameter(&s, mbrc), "16");

    // Bad parameters when opening.
    drop(s);
    drop(db);
    let bad = |k: &str, v: &str| DatabaseOptions { parameters: vec![(k.into(), v.into())], ..Default::default() };
    assert!(matches!(
        Database::open(&db_dir, bad("db_cache_size", "1K")),
        Err(Error::InvalidParameter { name, .. }) if name == "db_cache_size"
    ));
    assert!(matches!(
        Database::open(&db_dir, bad("no_such_param", "1")),
        Err(Error::UnknownObject { kind: "parameter", name }) if name == "no_such_param"
    ));
}
