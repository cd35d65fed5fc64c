//! What a server needs of a session, through the public API: interrupting its running
//! call from another thread, naming its client in `v$session`, keeping prepared
//! statements beside it, and describing a statement before it runs.

use lioscope::types::DataType;
use lioscope::{ClientIdentity, Database, Error};
use std::time::{Duration, Instant};

fn database() -> (Database, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    (Database::create(dir.path(), Default::default()).unwrap(), dir)
}

#[test]
fn a_canceller_stops_the_running_call_and_no_later_one() {
    let (db, _dir) = database();
    let s = db.session();
    let canceller = s.canceller();
    // A cancel between calls stops nothing.
    canceller.cancel();
    assert_eq!(s.execute("SELECT COUNT(*) FROM dual CONNECT BY LEVEL <= 1000").unwrap().rows[0][0].to_string(), "1000");

    let late = canceller.clone();
    let stopper = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(200));
        late.cancel();
    });
    let started = Instant::now();
    let e = s.execute("SELECT COUNT(*) FROM dual CONNECT BY LEVEL <= 100000000000").unwrap_err();
    stopper.join().unwrap();
    assert!(matches!(e, Error::Cancelled), "{e}");
    assert_eq!(e.to_string(), "ORA-01013: user requested cancel of current operation");
    assert!(started.elapsed() < Duration::from_secs(20));
    assert_eq!(s.execute("SELECT COUNT(*) FROM dual CONNECT BY LEVEL <= 10").unwrap().rows[0][0].to_string(), "10");
}

#[test]
fn a_cancel_ends_a_row_lock_wait_and_keeps_the_transaction() {
    let (db, _dir) = database();
    let holder = db.session();
    holder.execute("CREATE TABLE t (id NUMBER PRIMARY KEY, v NUMBER)").unwrap();
    holder.execute("INSERT INTO t VALUES (1, 0)").unwrap();
    holder.execute("INSERT INTO t VALUES (2, 0)").unwrap();
    holder.set_autocommit(false);
    holder.execute("UPDATE t SET v = 1 WHERE id = 1").unwrap();

    let waiter = db.session();
    waiter.set_autocommit(false);
    waiter.execute("UPDATE t SET v = 2 WHERE id = 2").unwrap();
    let canceller = waiter.canceller();
    let stopper = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(200));
        canceller.cancel();
    });
    let e = waiter.execute("UPDATE t SET v = 2 WHERE id = 1").unwrap_err();
    stopper.join().unwrap();
    assert!(matches!(e, Error::Cancelled), "{e}");
    // Only the interrupted statement failed: the waiter's earlier change is still its own.
    assert!(waiter.in_transaction());
    waiter.execute("COMMIT").unwrap();
    holder.execute("COMMIT").unwrap();
    let rows = holder.execute("SELECT v FROM t ORDER BY id").unwrap().rows;
    assert_eq!((rows[0][0].to_string(), rows[1][0].to_string()), ("1".into(), "2".into()));
}

#[test]
fn a_client_is_named_in_v_session() {
    let (db, _dir) = database();
    let s = db.session();
    s.execute("CREATE USER scott IDENTIFIED BY tiger").unwrap();
    s.execute("GRANT DBA TO scott").unwrap();
    s.log_in_as("SCOTT").unwrap();
    s.set_client(ClientIdentity { program: "billing".into(), machine: "10.0.0.7".into() });
    let row =
        s.execute(&format!("SELECT program, username, machine FROM v$session WHERE sid = {}", s.sid())).unwrap().rows;
    let row: Vec<String> = row[0].iter().map(|v| v.to_string()).collect();
    assert_eq!(row, ["billing", "SCOTT", "10.0.0.7"]);
}

#[test]
fn a_prepared_statement_runs_in_the_session_that_prepared_it_only() {
    let (db, _dir) = database();
    let s = db.session();
    s.execute("CREATE TABLE t (id NUMBER)").unwrap();
    let mut insert = s.prepare_statement("INSERT INTO t VALUES (:1)").unwrap();
    for i in 0..5 {
        insert.execute(&s, &[i.into()]).unwrap();
    }
    let other = db.session();
    let e = insert.execute(&other, &[9.into()]).unwrap_err();
    assert!(e.to_string().contains("prepared in session"), "{e}");
    assert_eq!(s.execute("SELECT COUNT(*) FROM t").unwrap().rows[0][0].to_string(), "5");
}

#[test]
fn a_statement_is_described_before_it_runs() {
    let (db, _dir) = database();
    let s = db.session();
    s.execute("CREATE TABLE t (id NUMBER(10), amount NUMBER(8,2), name VARCHAR2(20), born DATE)").unwrap();
    s.execute("CREATE VIEW v AS SELECT id, name FROM t").unwrap();
    let mut q = s
        .prepare_statement(
            "SELECT id, amount * 2 AS twice, name || '!' AS shout, born + 1 AS next_day, COUNT(*) OVER () AS n, \
             NVL(name, 'x') AS named, MAX(born) OVER () AS last, CAST(id AS VARCHAR2(5)) AS text_id \
             FROM t WHERE id = :id AND amount + :k > 0 AND born > :since",
        )
        .unwrap();
    let d = q.describe(&s).unwrap();
    let names: Vec<&str> = d.columns.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["ID", "TWICE", "SHOUT", "NEXT_DAY", "N", "NAMED", "LAST", "TEXT_ID"]);
    let number = DataType::Number { precision: None, scale: None };
    let types: Vec<Option<DataType>> = d.columns.iter().map(|c| c.data_type).collect();
    assert_eq!(types[0], Some(DataType::Number { precision: Some(10), scale: Some(0) }));
    assert_eq!(types[1], Some(number));
    assert!(matches!(types[2], Some(DataType::Varchar2 { .. })));
    assert_eq!(types[3], Some(DataType::Date));
    assert_eq!(types[4], Some(number));
    assert_eq!(types[5], Some(DataType::Varchar2 { max_bytes: 20 }));
    assert_eq!(types[6], Some(DataType::Date));
    assert_eq!(types[7], Some(DataType::Varchar2 { max_bytes: 5 }));
    assert_eq!(
        d.binds,
        [Some(DataType::Number { precision: Some(10), scale: Some(0) }), None, Some(DataType::Date)],
        "a bind in arithmetic is not typed"
    );

    let view = s.prepare_statement("SELECT * FROM v").unwrap().describe(&s).unwrap();
    assert_eq!(
        view.columns.iter().map(|c| c.data_type).collect::<Vec<_>>(),
        [Some(DataType::Number { precision: Some(10), scale: Some(0) }), Some(DataType::Varchar2 { max_bytes: 20 })]
    );
    let insert = s.prepare_statement("INSERT INTO t (name, id) VALUES (:1, :2)").unwrap().describe(&s).unwrap();
    assert!(insert.columns.is_empty());
    assert_eq!(
        insert.binds,
        [Some(DataType::Varchar2 { max_bytes: 20 }), Some(DataType::Number { precision: Some(10), scale: Some(0) })]
    );
    let update = s.prepare_statement("UPDATE t SET born = :b WHERE id = :i").unwrap().describe(&s).unwrap();
    assert_eq!(update.binds, [Some(DataType::Date), Some(DataType::Number { precision: Some(10), scale: Some(0) })]);
    // A v$ view's columns are typed by the values they hold as the statement is described.
    let fixed = s.prepare_statement("SELECT sid, program FROM v$session").unwrap().describe(&s).unwrap();
    assert_eq!(
        fixed.columns.iter().map(|c| (c.name.as_str(), c.data_type)).collect::<Vec<_>>(),
        [
            ("SID", Some(DataType::Number { precision: None, scale: None })),
            ("PROGRAM", Some(DataType::Varchar2 { max_bytes: 4000 }))
        ]
    );
    // An empty fixed view's columns have no values to be typed by.
    let empty = s.prepare_statement("SELECT inhrelid FROM pg_inherits").unwrap().describe(&s).unwrap();
    assert_eq!(empty.columns[0].data_type, None);
}

#[test]
fn a_description_is_kept_until_the_dictionary_changes() {
    let (db, _dir) = database();
    let s = db.session();
    s.execute("CREATE TABLE t (id NUMBER(5), name VARCHAR2(10))").unwrap();
    let mut q = s.prepare_statement("SELECT * FROM t WHERE id = :1").unwrap();
    let hard_parses = |s: &lioscope::Session| s.stats().get(lioscope::Stat::ParseCountHard);
    let first = q.describe(&s).unwrap();
    let before = hard_parses(&s);
    assert_eq!(q.describe(&s).unwrap(), first);
    assert_eq!(hard_parses(&s), before, "a second describe planned nothing");
    s.execute("ALTER TABLE t ADD CONSTRAINT t_pk PRIMARY KEY (id)").unwrap();
    s.execute("DROP TABLE t").unwrap();
    s.execute("CREATE TABLE t (id NUMBER(5), born DATE)").unwrap();
    let names: Vec<String> = q.describe(&s).unwrap().columns.into_iter().map(|c| c.name).collect();
    assert_eq!(names, ["ID", "BORN"], "described anew after the table changed");
}
