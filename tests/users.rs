//! Users and privileges through the embedded API: a session logs in as a user and is
//! held to its grants; users, grants and owners survive a reopen; a damaged user entry
//! in the dictionary is refused with the field named; a password never reaches `v$sql`.

use lioscope::{Database, Error, Session};

fn database() -> (Database, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    (Database::create(dir.path(), Default::default()).unwrap(), dir)
}

/// User SCOTT made by SYS with `grants` (each as `GRANT <grant> TO scott` spells it),
/// and a session logged in as SCOTT.
fn scott(db: &Database, grants: &[&str]) -> Session {
    let sys = db.session();
    sys.execute("CREATE USER scott IDENTIFIED BY tiger").unwrap();
    for grant in grants {
        sys.execute(&format!("GRANT {grant} TO scott")).unwrap();
    }
    let scott = db.session();
    scott.log_in_as("SCOTT").unwrap();
    scott
}

fn insufficient<T: std::fmt::Debug>(result: lioscope::Result<T>) -> String {
    match result {
        Err(e @ Error::InsufficientPrivileges { .. }) => {
            assert_eq!(e.ora_code(), Some(1031));
            e.to_string()
        }
        other => panic!("expected ORA-01031, got {other:?}"),
    }
}

#[test]
fn a_session_logged_in_as_a_user_is_held_to_its_grants() {
    let (db, _dir) = database();
    let sys = db.session();
    assert_eq!(&*sys.user(), "SYS");
    sys.execute("CREATE TABLE t (id NUMBER(5))").unwrap();
    sys.execute("INSERT INTO t VALUES (1)").unwrap();
    sys.execute("CREATE USER scott IDENTIFIED BY tiger").unwrap();

    let scott = db.session();
    let denied = scott.log_in_as("SCOTT").unwrap_err();
    assert!(denied.to_string().contains("CREATE SESSION"), "{denied}");
    assert!(matches!(scott.log_in_as("NOBODY"), Err(Error::LogonDenied { .. })));
    sys.execute("GRANT CREATE SESSION TO scott").unwrap();
    scott.log_in_as("SCOTT").unwrap();
    assert_eq!(&*scott.user(), "SCOTT");

    let message = insufficient(scott.execute("SELECT * FROM t"));
    assert!(message.contains("SCOTT may not select from T"), "{message}");
    insufficient(scott.execute("EXPLAIN PLAN FOR SELECT * FROM t"));
    insufficient(scott.execute("INSERT INTO t SELECT id FROM dual, t"));
    insufficient(scott.execute("MERGE INTO t USING dual ON (1 = 0) WHEN NOT MATCHED THEN INSERT VALUES (2)"));
    insufficient(scott.execute("ALTER SYSTEM CHECKPOINT"));
    insufficient(scott.execute("ANALYZE TABLE t COMPUTE STATISTICS"));
    insufficient(scott.execute("TRUNCATE TABLE t"));
    insufficient(scott.execute("CREATE INDEX t_i ON t (id)"));
    insufficient(scott.execute("CREATE SEQUENCE s"));
    insufficient(scott.execute("CREATE USER x IDENTIFIED BY y"));

    sys.execute("GRANT SELECT, INSERT ON t TO scott").unwrap();
    assert_eq!(scott.execute("SELECT COUNT(*) FROM t").unwrap().rows[0][0].to_string(), "1");
    scott.execute("INSERT INTO t VALUES (2)").unwrap();
    insufficient(scott.execute("DELETE FROM t"));
    // A user's own objects are its own: all of USER_TABLES it sees.
    sys.execute("GRANT RESOURCE TO scott").unwrap();
    scott.execute("CREATE TABLE mine (x NUMBER(5))").unwrap();
    scott.execute("CREATE SEQUENCE my_seq").unwrap();
    scott.execute("INSERT INTO mine VALUES (my_seq.NEXTVAL)").unwrap();
    let mine = scott.execute("SELECT table_name FROM user_tables").unwrap().rows;
    assert_eq!(mine.len(), 1);
    assert_eq!(mine[0][0].to_string(), "MINE");
    let owners = sys.execute("SELECT owner, table_name FROM all_tables ORDER BY table_name").unwrap().rows;
    let owners: Vec<String> = owners.iter().map(|r| format!("{}.{}", r[0], r[1])).collect();
    assert_eq!(owners, ["SCOTT.MINE", "SYS.T"]);
    // Revoked: the next execution of a kept cursor is refused.
    let mut count = scott.prepare("SELECT COUNT(*) FROM t").unwrap();
    count.execute(&[]).unwrap();
    sys.execute("REVOKE SELECT ON t FROM scott").unwrap();
    insufficient(count.execute(&[]));
    let e = sys.execute("REVOKE SELECT ON t FROM scott").unwrap_err();
    assert!(e.to_string().contains("ORA-01927"), "{e}");
    assert!(sys.execute("GRANT SELECT ON t TO nobody").is_err());
}

#[test]
fn users_grants_and_owners_survive_a_reopen() {
    let dir = tempfile::tempdir().unwrap();
    {
        let db = Database::create(dir.path(), Default::default()).unwrap();
        let sys = db.session();
        sys.execute("CREATE USER scott IDENTIFIED BY tiger").unwrap();
        sys.execute("GRANT CONNECT, RESOURCE TO scott").unwrap();
        sys.execute("GRANT SELECT ANY DICTIONARY TO scott WITH ADMIN OPTION").unwrap();
        let scott = db.session();
        scott.log_in_as("SCOTT").unwrap();
        scott.execute("CREATE TABLE mine (x NUMBER(5))").unwrap();
        scott.execute("GRANT SELECT ON mine TO PUBLIC").unwrap();
        drop(scott);
        db.close().unwrap();
    }
    let db = Database::open(dir.path(), Default::default()).unwrap();
    let verifier = db.password_verifier("SCOTT").expect("a verifier");
    assert_eq!(verifier.iterations, 4096);
    assert_eq!(db.find_user("scott").as_deref(), Some("SCOTT"));
    let sys = db.session();
    let privileges = sys.execute("SELECT grantee, privilege, admin_option FROM dba_sys_privs").unwrap().rows;
    let privileges: Vec<String> = privileges.iter().map(|r| format!("{} {} {}", r[0], r[1], r[2])).collect();
    assert_eq!(privileges, ["SCOTT SELECT ANY DICTIONARY YES"]);
    let roles = sys.execute("SELECT granted_role FROM dba_role_privs ORDER BY 1").unwrap().rows;
    assert_eq!(roles.iter().map(|r| r[0].to_string()).collect::<Vec<_>>(), ["CONNECT", "RESOURCE"]);
    let grants = sys.execute("SELECT grantee, owner, table_name, privilege FROM dba_tab_privs").unwrap().rows;
    assert_eq!(grants.len(), 1);
    assert_eq!(grants[0].iter().map(|v| v.to_string()).collect::<Vec<_>>(), ["PUBLIC", "SCOTT", "MINE", "SELECT"]);
    // Dropping the table forgets its grants and owner.
    sys.execute("DROP TABLE mine").unwrap();
    assert!(sys.execute("SELECT * FROM dba_tab_privs").unwrap().rows.is_empty());
    sys.execute("DROP USER scott").unwrap();
    assert!(db.find_user("scott").is_none());
}

#[test]
fn a_damaged_user_entry_is_refused_naming_the_field() {
    let dir = tempfile::tempdir().unwrap();
    {
        let db = Database::create(dir.path(), Default::default()).unwrap();
        db.session().execute("CREATE USER scott IDENTIFIED BY tiger").unwrap();
        db.close().unwrap();
    }
    let path = dir.path().join("dictionary.json");
    let text = std::fs::read_to_string(&path).unwrap();
    let damaged = text.replacen("\"stored_key\": \"", "\"stored_key\": \"zz", 1);
    assert_ne!(damaged, text, "the dictionary holds the verifier");
    std::fs::write(&path, damaged).unwrap();
    let Err(e) = Database::open(dir.path(), Default::default()) else { panic!("a damaged dictionary was opened") };
    let e = e.to_string();
    assert!(e.contains("users.SCOTT.password"), "{e}");
}

#[test]
fn a_password_never_reaches_v_sql_or_v_session() {
    let (db, _dir) = database();
    let sys = db.session();
    sys.execute("CREATE USER scott IDENTIFIED BY \"Sekret 1\"").unwrap();
    let mut alter = sys.prepare("ALTER USER scott IDENTIFIED BY Sekret2").unwrap();
    alter.execute(&[]).unwrap();
    let texts = sys.execute("SELECT sql_text FROM v$sql").unwrap().rows;
    let texts: Vec<String> = texts.iter().map(|r| r[0].to_string()).collect();
    assert!(texts.iter().all(|t| !t.contains("Sekret")), "{texts:?}");
    assert!(texts.contains(&"CREATE USER scott IDENTIFIED BY *****".to_string()), "{texts:?}");
    assert!(texts.contains(&"ALTER USER scott IDENTIFIED BY *****".to_string()), "{texts:?}");
}

#[test]
fn a_session_without_a_user_may_do_nothing_until_it_logs_in() {
    let (db, _dir) = database();
    let sys = db.session();
    sys.execute("CREATE TABLE t (id NUMBER(5))").unwrap();
    sys.execute("CREATE USER scott IDENTIFIED BY tiger").unwrap();
    sys.execute("GRANT CONNECT TO scott").unwrap();
    sys.execute("GRANT SELECT ON t TO scott").unwrap();
    let client = db.session_without_user();
    assert_eq!(&*client.user(), "");
    insufficient(client.execute("SELECT * FROM t"));
    insufficient(client.execute("CREATE TABLE u (x NUMBER)"));
    let shown = sys.execute(&format!("SELECT username FROM v$session WHERE sid = {}", client.sid())).unwrap().rows;
    assert!(shown[0][0].is_null(), "no USERNAME before the log-in");
    client.log_in_as("SCOTT").unwrap();
    assert_eq!(client.execute("SELECT COUNT(*) FROM t").unwrap().rows[0][0].to_string(), "0");
}

#[test]
fn a_sequence_is_read_by_its_owner_and_those_granted_select_on_it() {
    let (db, _dir) = database();
    let sys = db.session();
    sys.execute("CREATE SEQUENCE ids").unwrap();
    let scott = scott(&db, &["CONNECT"]);
    let message = insufficient(scott.execute("SELECT ids.NEXTVAL FROM dual"));
    assert!(message.contains("sequence IDS"), "{message}");
    let e = sys.execute("GRANT INSERT ON ids TO scott").unwrap_err();
    assert!(e.to_string().contains("ORA-02205"), "{e}");
    sys.execute("GRANT SELECT ON ids TO scott").unwrap();
    assert_eq!(scott.execute("SELECT ids.NEXTVAL FROM dual").unwrap().rows[0][0].to_string(), "1");
    sys.execute("REVOKE SELECT ON ids FROM scott").unwrap();
    insufficient(scott.execute("SELECT ids.CURRVAL FROM dual"));
    sys.execute("GRANT SELECT ANY SEQUENCE TO scott").unwrap();
    assert_eq!(scott.execute("SELECT ids.NEXTVAL FROM dual").unwrap().rows[0][0].to_string(), "2");
}

#[test]
fn a_foreign_key_to_another_users_table_needs_references() {
    let (db, _dir) = database();
    let sys = db.session();
    sys.execute("CREATE TABLE dept (id NUMBER(5) PRIMARY KEY)").unwrap();
    let scott = scott(&db, &["CONNECT, RESOURCE", "SELECT ON dept"]);
    let message = insufficient(scott.execute("CREATE TABLE emp (id NUMBER(5), dept NUMBER(5) REFERENCES dept)"));
    assert!(message.contains("refer by a foreign key to DEPT"), "{message}");
    sys.execute("GRANT REFERENCES ON dept TO scott").unwrap();
    scott.execute("CREATE TABLE emp (id NUMBER(5), dept NUMBER(5) REFERENCES dept)").unwrap();
    // REVOKE ALL takes what scott holds, whichever they are.
    sys.execute("REVOKE ALL ON dept FROM scott").unwrap();
    assert!(sys.execute("SELECT * FROM dba_tab_privs").unwrap().rows.is_empty());
}

/// A prepared INSERT, UPDATE or DELETE keeps its binding between executions, not its
/// right to run: once the grant is revoked, the next execution is refused.
#[test]
fn a_prepared_change_is_refused_once_its_grant_is_revoked() {
    let (db, _dir) = database();
    let sys = db.session();
    sys.execute("CREATE TABLE t (id NUMBER(5), n NUMBER(5))").unwrap();
    let scott = scott(&db, &["CREATE SESSION", "INSERT, UPDATE, DELETE ON t"]);
    let mut insert = scott.prepare("INSERT INTO t VALUES (:id, 0)").unwrap();
    let mut update = scott.prepare("UPDATE t SET n = n + 1 WHERE id = :id").unwrap();
    let mut delete = scott.prepare("DELETE FROM t WHERE id = :id").unwrap();
    for id in 1..=2 {
        insert.execute(&[lioscope::types::Datum::Int(id)]).unwrap();
        update.execute(&[lioscope::types::Datum::Int(id)]).unwrap();
    }
    delete.execute(&[lioscope::types::Datum::Int(2)]).unwrap();
    scott.execute("COMMIT").unwrap();
    assert_eq!(sys.execute("SELECT id, n FROM t").unwrap().rows[0][1].to_string(), "1");

    sys.execute("REVOKE INSERT, UPDATE, DELETE ON t FROM scott").unwrap();
    let one = [lioscope::types::Datum::Int(1)];
    insufficient(insert.execute(&one));
    insufficient(update.execute(&one));
    insufficient(delete.execute(&one));
    assert_eq!(sys.execute("SELECT COUNT(*) FROM t").unwrap().rows[0][0].to_string(), "1");
}
