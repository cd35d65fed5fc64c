//! What the instance does with the undo tablespace at open and while it runs, through the
//! public API: a database created before undo existed gets it at open, with the size
//! asked for; a tablespace that grew shows its new size as `undo_tablespace_size` after
//! reopen; ALTER SYSTEM SET undo_retention reaches undo at once. (The undo tablespace
//! itself is tested beside its code, on the transactions' fixture.)

use lioscope::{Database, DatabaseOptions, Session};

const UNDO_FILE: &str = "undotbs01.dbf";

fn options(parameters: &[(&str, &str)]) -> DatabaseOptions {
    DatabaseOptions {
        parameters: parameters.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect(),
        ..DatabaseOptions::default()
    }
}

/// The one value of a one-row, one-column query.
fn value(session: &Session, sql: &str) -> String {
    let result = session.query(sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
    assert_eq!(result.rows.len(), 1, "{sql}");
    result.rows[0][0].to_string()
}

fn number(session: &Session, sql: &str) -> u64 {
    let text = value(session, sql);
    text.parse().unwrap_or_else(|_| panic!("{sql} gave '{text}', not a count"))
}

/// A table of `rows` rows of 3000 bytes each, whose every UPDATE of two rows writes about
/// one undo block of before-images.
fn wide_table(session: &Session, rows: u32) {
    session.execute("CREATE TABLE t (id NUMBER, v VARCHAR2(4000))").unwrap();
    session
        .execute(&format!("INSERT INTO t SELECT LEVEL, RPAD('x', 3000, 'x') FROM dual CONNECT BY LEVEL <= {rows}"))
        .unwrap();
}

#[test]
fn a_database_without_undo_gets_it_at_open() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    drop(Database::create(&path, DatabaseOptions::default()).unwrap());
    // The control file of a database created before undo existed lists no undo file.
    let control_path = path.join("control.json");
    let mut control: serde_json::Value = serde_json::from_slice(&std::fs::read(&control_path).unwrap()).unwrap();
    let datafiles = control["datafiles"].as_array_mut().expect("the control file lists datafiles");
    let before = datafiles.len();
    datafiles.retain(|d| d["name"] != UNDO_FILE);
    assert_eq!(datafiles.len(), before - 1, "the undo file was listed");
    std::fs::write(&control_path, serde_json::to_vec(&control).unwrap()).unwrap();
    std::fs::remove_file(path.join(UNDO_FILE)).unwrap();

    let db = Database::open(&path, options(&[("undo_tablespace_size", "1M")])).unwrap();
    assert_eq!(std::fs::metadata(path.join(UNDO_FILE)).unwrap().len(), 1 << 20, "the undo file is made");
    let session = db.session();
    assert_eq!(session.parameters().get("undo_tablespace_size"), "1M");
    assert_eq!(number(&session, "SELECT COUNT(*) FROM v$rollstat"), 10, "ten undo segments");
    session.execute("CREATE TABLE t (id NUMBER)").unwrap();
    session.execute("INSERT INTO t VALUES (1)").unwrap();
    session.set_autocommit(false);
    session.execute("UPDATE t SET id = 2").unwrap();
    assert_eq!(value(&session, "SELECT id FROM t"), "2");
    session.execute("ROLLBACK").unwrap();
    assert_eq!(value(&session, "SELECT id FROM t"), "1", "the change was undone through the new undo");
}

#[test]
fn a_grown_undo_tablespace_shows_its_size_after_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let opened = options(&[("undo_tablespace_size", "1M"), ("undo_retention", "0")]);
    {
        let db = Database::create(&path, opened.clone()).unwrap();
        let session = db.session();
        wide_table(&session, 600);
        // 1.8 MB of before-images in one transaction: more than the tablespace holds.
        session.set_autocommit(false);
        session.execute("UPDATE t SET v = RPAD('y', 3000, 'y')").unwrap();
        session.execute("COMMIT").unwrap();
        assert!(number(&session, "SELECT SUM(extends) FROM v$rollstat") > 0, "the tablespace grew");
        drop(session);
        db.close().unwrap();
    }
    let size = std::fs::metadata(path.join(UNDO_FILE)).unwrap().len();
    assert!(size > 1 << 20, "the file grew ({size} bytes)");
    let db = Database::open(&path, opened).unwrap();
    let session = db.session();
    let shown = session.parameters().get("undo_tablespace_size").to_owned();
    assert_eq!(lioscope::parse_size(&shown), Some(size), "undo_tablespace_size is {shown}");
    assert_eq!(number(&session, "SELECT SUM(extends) FROM v$rollstat"), 0, "nothing grew since open");
}

#[test]
fn alter_system_undo_retention_applies_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::create(
        dir.path().join("db"),
        options(&[("undo_tablespace_size", "72K"), ("undo_tablespace_maxsize", "72K"), ("undo_retention", "900")]),
    )
    .unwrap();
    let session = db.session();
    wide_table(&session, 2);
    let reuse = |session: &Session| {
        (
            number(session, "SELECT unxpblkreucnt FROM v$undostat"),
            number(session, "SELECT expblkreucnt FROM v$undostat"),
        )
    };
    let cycle = |n| {
        for i in 0..n {
            session.execute(&format!("UPDATE t SET v = RPAD('{}', 3000, 'z')", i % 10)).unwrap();
        }
    };
    // Six undo blocks, each transaction's before-images filling one: within the
    // retention, the ring reuses unexpired blocks.
    cycle(8);
    let (unexpired, expired) = reuse(&session);
    assert!(unexpired > 0, "blocks within the retention were reused ({unexpired})");
    assert_eq!(expired, 0, "no block had expired");
    session.execute("ALTER SYSTEM SET undo_retention = 0").unwrap();
    cycle(2);
    let (unexpired_after, expired_after) = reuse(&session);
    assert_eq!(unexpired_after, unexpired, "with no retention, no block is unexpired");
    assert!(expired_after > 0, "the blocks reused since count as expired");
}
