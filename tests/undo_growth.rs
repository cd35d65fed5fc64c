//! The undo tablespace grows for a transaction whose undo outgrows its segment: it takes
//! the other segments' free extents and extends the file, up to `undo_tablespace_maxsize`.
//! Rollback, consistent reads and reopening work through the taken and added extents.

mod common;

use common::*;
use lioscope::{DatabaseOptions, Error, Session};

/// Rows updated: their undo (about 7 MB) is seven times a 1 MiB undo tablespace.
const ROWS: i64 = 50_000;

/// 8 KiB blocks, a cache that holds the table and its undo, and a 1 MiB undo tablespace
/// that may grow to `maxsize` (the default when `None`).
fn small_undo(maxsize: Option<&str>) -> DatabaseOptions {
    let mut options = options(8192, "64M");
    options.parameters.push(("undo_tablespace_size".into(), "1M".into()));
    if let Some(max) = maxsize {
        options.parameters.push(("undo_tablespace_maxsize".into(), max.into()));
    }
    options
}

/// A table of [`ROWS`] rows of about 100 bytes, committed.
fn load(s: &Session) {
    exec(s, "CREATE TABLE t (id NUMBER NOT NULL, v NUMBER NOT NULL, pad VARCHAR2(100))");
    exec(s, &format!("INSERT INTO t SELECT LEVEL, 1, RPAD('a', 90, 'a') FROM dual CONNECT BY LEVEL <= {ROWS}"));
    exec(s, "COMMIT");
}

const UPDATE: &str = "UPDATE t SET v = v + 1, pad = RPAD('b', 90, 'b')";

#[test]
fn an_update_with_undo_seven_times_the_tablespace_succeeds_and_rolls_back() {
    let (_t, _d, db) = temp_db(small_undo(None));
    let s = db.session();
    load(&s);
    let image = rows(&s, "SELECT id, v, pad FROM t ORDER BY id");
    manual(&s);
    exec(&s, UPDATE);
    assert_eq!(int(&s, "SELECT SUM(v) FROM t"), 2 * ROWS);
    assert!(int(&s, "SELECT SUM(extends) FROM v$rollstat") > 0, "the tablespace grew");
    assert!(int(&s, "SELECT expstealcnt FROM v$undostat") > 0, "the other segments' free extents were taken");
    assert!(int(&s, "SELECT MAX(rssize) FROM v$rollstat") > 4 << 20);
    exec(&s, "ROLLBACK");
    assert_eq!(rows(&s, "SELECT id, v, pad FROM t ORDER BY id"), image, "every row is as before");
}

#[test]
fn a_reader_older_than_the_commit_sees_the_old_rows_through_grown_undo() {
    let (_t, _d, db) = temp_db(small_undo(None));
    let (writer, reader) = (db.session(), db.session());
    load(&writer);
    manual(&reader);
    exec(&reader, "SET TRANSACTION READ ONLY");
    assert_eq!(int(&reader, "SELECT SUM(v) FROM t"), ROWS);
    exec(&writer, UPDATE);
    exec(&writer, "COMMIT");
    assert_eq!(int(&reader, "SELECT SUM(v) FROM t"), ROWS, "the snapshot is rebuilt from the grown undo");
    assert_eq!(int(&reader, "SELECT COUNT(*) FROM t WHERE pad = RPAD('a', 90, 'a')"), ROWS);
    assert_eq!(int(&reader, "SELECT ssolderrcnt FROM v$undostat"), 0);
    exec(&reader, "COMMIT");
    assert_eq!(int(&reader, "SELECT SUM(v) FROM t"), 2 * ROWS);
}

#[test]
fn undo_past_the_maximum_fails_the_statement_and_names_the_maximum() {
    let (_t, _d, db) = temp_db(small_undo(Some("2M")));
    let s = db.session();
    load(&s);
    manual(&s);
    match fail(&s, UPDATE) {
        Error::UndoSpace { reason } => assert!(reason.contains("undo_tablespace_maxsize"), "{reason}"),
        other => panic!("undo past the maximum should fail with UndoSpace, got {other}"),
    }
    assert_eq!(int(&s, "SELECT SUM(v) FROM t"), ROWS, "the failed statement changed nothing");
    assert_eq!(int(&s, "SELECT nospaceerrcnt FROM v$undostat"), 1);
    // All of it but the file header, ten segment headers, the extent map, and the six
    // blocks that ten equal first extents left over.
    assert_eq!(int(&s, "SELECT SUM(rssize) FROM v$rollstat"), (2 << 20) - 18 * 8192);
    exec(&s, "ROLLBACK");
}

#[test]
fn a_grown_undo_tablespace_keeps_its_size_and_commits_after_reopen() {
    let (_t, dir, db) = temp_db(small_undo(None));
    let (size, segments) = {
        let s = db.session();
        load(&s);
        exec(&s, UPDATE);
        exec(&s, "COMMIT");
        (
            int(&s, "SELECT SUM(rssize) FROM v$rollstat"),
            rows(&s, "SELECT usn, extents, rssize FROM v$rollstat ORDER BY usn"),
        )
    };
    drop(db);
    let file = std::fs::metadata(dir.join("undotbs01.dbf")).unwrap().len();
    assert!(file as i64 > size, "the file holds the grown extents ({file} bytes, {size} in segments)");
    let db = open(&dir, small_undo(None));
    let s = db.session();
    assert_eq!(rows(&s, "SELECT usn, extents, rssize FROM v$rollstat ORDER BY usn"), segments);
    let size_shown = if file % (1 << 20) == 0 { format!("{}M", file >> 20) } else { format!("{}K", file >> 10) };
    assert_eq!(parameter(&s, "undo_tablespace_size"), size_shown);
    assert_eq!(int(&s, "SELECT SUM(v) FROM t"), 2 * ROWS);
    exec(&s, UPDATE);
    exec(&s, "COMMIT");
    assert_eq!(int(&s, "SELECT SUM(v) FROM t"), 3 * ROWS);
}
