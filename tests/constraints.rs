//! Table constraints through the public API: NOT NULL, CHECK, PRIMARY KEY and UNIQUE,
//! declared in CREATE TABLE or by ALTER TABLE, enforced on every path a row is written
//! by with Oracle's errors naming the constraint, kept across a restart and a crash,
//! shown in `user_constraints` and `user_cons_columns`.

mod common;

use common::*;
use std::time::Duration;

/// The system name of the constraint of `table` of type `kind`.
fn constraint_of(s: &lioscope::Session, table: &str, kind: &str) -> String {
    scalar(
        s,
        &format!(
            "SELECT constraint_name FROM user_constraints WHERE table_name = '{table}' AND constraint_type = '{kind}' AND search_condition IS NULL"
        ),
    )
}

#[test]
fn not_null_is_enforced_on_every_path_a_row_is_written() {
    let (dir, _d, db) = db();
    let s = db.session();
    exec(
        &s,
        "CREATE TABLE t (id INTEGER NOT NULL, name VARCHAR2(10) CONSTRAINT t_name_nn NOT NULL, note VARCHAR2(10))",
    );
    exec(&s, "CREATE TABLE src (id INTEGER, name VARCHAR2(10))");
    exec(&s, "INSERT INTO src VALUES (1, 'a')");
    exec(&s, "INSERT INTO src VALUES (2, NULL)");
    exec(&s, "INSERT INTO src VALUES (3, 'c')");
    let null_name = "ORA-01400: cannot insert NULL into (\"LIOSCOPE\".\"T\".\"NAME\")";
    assert_eq!(error(&s, "INSERT INTO t VALUES (1, NULL, 'x')"), null_name);
    assert_eq!(error(&s, "INSERT INTO t (id) VALUES (1)"), null_name);
    assert_eq!(error(&s, "INSERT INTO t (name) VALUES ('a')"), null_name.replace("NAME", "ID"));
    // One bad row among several: the statement changes nothing.
    assert_eq!(error(&s, "INSERT INTO t (id, name) SELECT id, name FROM src"), null_name);
    assert_eq!(error(&s, "INSERT /*+ APPEND */ INTO t (id, name) SELECT id, name FROM src"), null_name);
    assert_eq!(count(&s, "t"), 0);
    let csv = dir.path().join("t.csv");
    std::fs::write(&csv, "1,a,x\n2,,y\n").unwrap();
    let e = error(&s, &format!("COPY t FROM '{}'", csv.display()));
    assert!(e.contains(null_name), "{e}");
    assert_eq!(count(&s, "t"), 0);
    exec(&s, "INSERT INTO t (id, name) SELECT id, name FROM src WHERE name IS NOT NULL");
    assert_eq!(
        error(&s, "UPDATE t SET name = NULL WHERE id = 3"),
        "ORA-01407: cannot update (\"LIOSCOPE\".\"T\".\"NAME\") to NULL"
    );
    assert_eq!(lines(&s, "SELECT id, name FROM t ORDER BY id"), ["1|a", "3|c"]);
    // The NOT NULL constraints are in the dictionary, one named, one by the system.
    let c = lines(
        &s,
        "SELECT constraint_name, constraint_type, search_condition, generated FROM user_constraints WHERE table_name = 'T' ORDER BY search_condition",
    );
    assert_eq!(c.len(), 2, "{c:?}");
    assert!(c[0].starts_with("SYS_C") && c[0].ends_with("|C|\"ID\" IS NOT NULL|GENERATED NAME"), "{c:?}");
    assert_eq!(c[1], "T_NAME_NN|C|\"NAME\" IS NOT NULL|USER NAME");
}

#[test]
fn check_constraints_refuse_false_and_pass_unknown() {
    let (dir, _d, db) = db();
    let s = db.session();
    exec(
        &s,
        "CREATE TABLE emp (empno INTEGER, sal NUMBER CHECK (sal > 0), comm NUMBER, \
         CONSTRAINT emp_comm_ck CHECK (comm <= sal), CHECK (empno IS NOT NULL))",
    );
    let sal_ck = scalar(
        &s,
        "SELECT constraint_name FROM user_constraints WHERE table_name = 'EMP' AND search_condition = 'sal > 0'",
    );
    assert!(sal_ck.starts_with("SYS_C"), "{sal_ck}");
    let violated = |name: &str| format!("ORA-02290: check constraint (LIOSCOPE.{name}) violated");
    assert_eq!(error(&s, "INSERT INTO emp VALUES (1, 0, NULL)"), violated(&sal_ck));
    assert_eq!(error(&s, "INSERT INTO emp VALUES (1, 10, 20)"), violated("EMP_COMM_CK"));
    let empno_ck =
        scalar(&s, "SELECT constraint_name FROM user_constraints WHERE search_condition = 'empno IS NOT NULL'");
    assert_eq!(error(&s, "INSERT INTO emp (sal) VALUES (5)"), violated(&empno_ck));
    // UNKNOWN passes: a NULL salary or commission.
    exec(&s, "INSERT INTO emp VALUES (1, NULL, 20)");
    exec(&s, "INSERT INTO emp VALUES (2, 10, NULL)");
    exec(&s, "INSERT INTO emp VALUES (3, 10, 5)");
    assert_eq!(error(&s, "UPDATE emp SET comm = 50 WHERE empno = 3"), violated("EMP_COMM_CK"));
    assert_eq!(error(&s, "UPDATE emp SET sal = sal - 10"), violated(&sal_ck));
    // A multi-row INSERT ... SELECT with one bad row, and COPY: nothing changes.
    assert_eq!(error(&s, "INSERT INTO emp SELECT empno + 10, sal - 10, NULL FROM emp"), violated(&sal_ck));
    assert_eq!(
        error(&s, "INSERT /*+ APPEND */ INTO emp SELECT empno + 10, sal - 10, NULL FROM emp"),
        violated(&sal_ck)
    );
    let csv = dir.path().join("emp.csv");
    std::fs::write(&csv, "7,1,\n8,-1,\n").unwrap();
    let e = error(&s, &format!("COPY emp FROM '{}'", csv.display()));
    assert!(e.contains(&violated(&sal_ck)), "{e}");
    assert_eq!(lines(&s, "SELECT empno, sal, comm FROM emp ORDER BY empno"), ["1||20", "2|10|", "3|10|5"]);
    // Bad conditions are refused when the table is made.
    let e = error(&s, "CREATE TABLE bad (a INTEGER CHECK (b > 0))");
    assert!(e.contains("B") && e.contains("does not exist"), "{e}");
    assert_eq!(int(&s, "SELECT COUNT(*) FROM user_tables WHERE table_name = 'BAD'"), 0);
}

#[test]
fn primary_and_unique_keys_refuse_duplicates_naming_the_constraint() {
    let (_t, _d, db) = db();
    let s = db.session();
    exec(&s, "CREATE TABLE dept (deptno INTEGER PRIMARY KEY, dname VARCHAR2(14), loc VARCHAR2(13))");
    let pk = constraint_of(&s, "DEPT", "P");
    assert!(pk.starts_with("SYS_C"), "{pk}");
    exec(&s, "INSERT INTO dept VALUES (10, 'ACCOUNTING', 'NEW YORK')");
    assert_eq!(
        error(&s, "INSERT INTO dept VALUES (10, 'RESEARCH', 'DALLAS')"),
        format!("ORA-00001: unique constraint (LIOSCOPE.{pk}) violated")
    );
    // A primary key's columns are NOT NULL.
    assert_eq!(
        error(&s, "INSERT INTO dept VALUES (NULL, 'RESEARCH', 'DALLAS')"),
        "ORA-01400: cannot insert NULL into (\"LIOSCOPE\".\"DEPT\".\"DEPTNO\")"
    );
    // Its index has the constraint's name.
    assert_eq!(
        lines(&s, &format!("SELECT table_name, uniqueness FROM user_indexes WHERE index_name = '{pk}'")),
        ["DEPT|UNIQUE"]
    );
    // An out-of-line named key of two columns: rows whose key is all NULL are many.
    exec(
        &s,
        "CREATE TABLE loc (city VARCHAR2(10), street VARCHAR2(10), n INTEGER, CONSTRAINT loc_uk UNIQUE (city, street))",
    );
    exec(&s, "INSERT INTO loc VALUES ('A', 'x', 1)");
    exec(&s, "INSERT INTO loc VALUES ('A', 'y', 2)");
    exec(&s, "INSERT INTO loc VALUES (NULL, NULL, 3)");
    exec(&s, "INSERT INTO loc VALUES (NULL, NULL, 4)");
    let dup = "ORA-00001: unique constraint (LIOSCOPE.LOC_UK) violated";
    assert_eq!(error(&s, "INSERT INTO loc VALUES ('A', 'x', 5)"), dup);
    assert_eq!(error(&s, "UPDATE loc SET street = 'x' WHERE n = 2"), dup);
    // One duplicate among the rows of INSERT ... SELECT: nothing is inserted.
    let dup_z = "ORA-00001: unique constraint (LIOSCOPE.LOC_UK) violated";
    assert_eq!(error(&s, "INSERT INTO loc SELECT city, 'z', n + 10 FROM loc WHERE n < 3"), dup_z);
    assert_eq!(count(&s, "loc"), 4);
    assert_eq!(
        lines(
            &s,
            "SELECT constraint_name, column_name, position FROM user_cons_columns WHERE table_name = 'LOC' ORDER BY position"
        ),
        ["LOC_UK|CITY|1", "LOC_UK|STREET|2"]
    );
    // The index a key is enforced with cannot be dropped.
    let e = error(&s, "DROP INDEX loc_uk");
    assert!(e.starts_with("ORA-02429") && e.contains("LOC_UK"), "{e}");
    // DROP TABLE takes its constraints and their indexes with it.
    exec(&s, "DROP TABLE loc");
    assert_eq!(int(&s, "SELECT COUNT(*) FROM user_constraints WHERE table_name = 'LOC'"), 0);
    assert_eq!(int(&s, "SELECT COUNT(*) FROM user_indexes WHERE index_name = 'LOC_UK'"), 0);
    exec(&s, "CREATE TABLE loc (city VARCHAR2(10) CONSTRAINT loc_uk UNIQUE)");
}

#[test]
fn bad_constraint_definitions_get_oracle_errors() {
    let (_t, _d, db) = db();
    let s = db.session();
    exec(&s, "CREATE TABLE t (a INTEGER CONSTRAINT t_pk PRIMARY KEY, b INTEGER)");
    let e = error(&s, "CREATE TABLE u (a INTEGER CONSTRAINT t_pk PRIMARY KEY)");
    assert_eq!(e, "ORA-02264: name T_PK already used by an existing constraint");
    let e = error(&s, "CREATE TABLE u (a INTEGER PRIMARY KEY, b INTEGER, PRIMARY KEY (b))");
    assert_eq!(e, "ORA-02260: table U can have only one primary key");
    let e = error(&s, "CREATE TABLE u (a INTEGER, CONSTRAINT u_uk UNIQUE (a, c))");
    assert!(e.contains("U.C") && e.contains("does not exist"), "{e}");
    let e = error(&s, "CREATE TABLE u (a INTEGER, CONSTRAINT u_uk UNIQUE (a, a))");
    assert!(e.contains("listed twice"), "{e}");
    // Nothing of the refused tables is left.
    assert_eq!(int(&s, "SELECT COUNT(*) FROM user_tables WHERE table_name = 'U'"), 0);
    assert_eq!(int(&s, "SELECT COUNT(*) FROM user_constraints WHERE table_name = 'U'"), 0);
    assert_eq!(error(&s, "ALTER TABLE t ADD PRIMARY KEY (b)"), "ORA-02260: table T can have only one primary key");
    assert_eq!(
        error(&s, "ALTER TABLE t ADD CONSTRAINT t_pk CHECK (b > 0)"),
        "ORA-02264: name T_PK already used by an existing constraint"
    );
    let e = error(&s, "ALTER TABLE t DROP CONSTRAINT nope");
    assert!(e.starts_with("ORA-02443") && e.contains("NOPE"), "{e}");
    let e = error(&s, "ALTER TABLE t ENABLE CONSTRAINT nope");
    assert!(e.starts_with("ORA-02431") && e.contains("NOPE"), "{e}");
    let e = error(&s, "ALTER TABLE nope ENABLE CONSTRAINT t_pk");
    assert!(e.contains("NOPE") && e.contains("does not exist"), "{e}");
    let e = error(&s, "ALTER TABLE t ENABLE");
    assert!(e.contains("syntax error"), "{e}");
}

#[test]
fn check_conditions_whose_answer_could_change_are_refused_when_declared() {
    let (_t, _d, db) = db();
    let s = db.session();
    let sysdate = "ORA-02436: date or system variable wrongly specified in CHECK constraint";
    let e = error(&s, "CREATE TABLE u (d DATE CONSTRAINT u_d_ck CHECK (d <= SYSDATE))");
    assert_eq!(e, format!("{sysdate}: SYSDATE in CHECK constraint U_D_CK"));
    let e = error(&s, "CREATE TABLE u (d DATE, CHECK (d BETWEEN DATE '1900-01-01' AND sysdate + 1))");
    assert_eq!(e, format!("{sysdate}: SYSDATE in a CHECK constraint of U"));
    let e = error(&s, "CREATE TABLE u (n VARCHAR2(30) CHECK (n <> USER))");
    assert_eq!(e, format!("{sysdate}: USER in a CHECK constraint of U"));
    let e = error(&s, "CREATE TABLE u (d DATE CHECK (d < SYSTIMESTAMP))");
    assert!(e.starts_with(sysdate) && e.contains("SYSTIMESTAMP"), "{e}");
    let e = error(&s, "CREATE TABLE u (a NUMBER CHECK (a > DBMS_RANDOM.VALUE))");
    assert!(e.starts_with("ORA-00904") && e.contains("DBMS_RANDOM.VALUE"), "{e}");
    let e = error(&s, "CREATE TABLE u (a INTEGER CHECK (a > ROWNUM))");
    assert!(e.starts_with("ORA-00976") && e.contains("ROWNUM"), "{e}");
    let e = error(&s, "CREATE TABLE u (a INTEGER CHECK (a < s.NEXTVAL))");
    assert!(e.starts_with("ORA-02287") && e.contains("S.NEXTVAL"), "{e}");
    let e = error(&s, "CREATE TABLE u (a INTEGER CONSTRAINT u_a_ck CHECK (a IN (SELECT 1 FROM dual)))");
    assert_eq!(e, "ORA-02251: subquery not allowed here: a subquery in CHECK constraint U_A_CK");
    assert_eq!(int(&s, "SELECT COUNT(*) FROM user_tables WHERE table_name = 'U'"), 0);
    // ALTER TABLE ADD is refused the same way and leaves the table as it was.
    exec(&s, "CREATE TABLE u (d DATE, who VARCHAR2(30))");
    let e = error(&s, "ALTER TABLE u ADD CONSTRAINT u_d_ck CHECK (d > SYSDATE - 30)");
    assert_eq!(e, format!("{sysdate}: SYSDATE in CHECK constraint U_D_CK"));
    let e = error(&s, "ALTER TABLE u ADD CHECK (who = user)");
    assert_eq!(e, format!("{sysdate}: USER in a CHECK constraint of U"));
    assert_eq!(int(&s, "SELECT COUNT(*) FROM user_constraints WHERE table_name = 'U'"), 0);
    // A quoted name is a column, and a string is a string: both are allowed.
    exec(&s, "CREATE TABLE w (\"USER\" VARCHAR2(30) CHECK (\"USER\" <> 'SYSDATE'))");
    exec(&s, "ALTER TABLE u ADD CONSTRAINT u_d_ck CHECK (d > DATE '2000-01-01')");
    assert_eq!(int(&s, "SELECT COUNT(*) FROM user_constraints WHERE table_name = 'U'"), 1);
}

#[test]
fn alter_table_adds_drops_enables_and_disables_constraints() {
    let (_t, _d, db) = db();
    let s = db.session();
    exec(&s, "CREATE TABLE t (id INTEGER, qty INTEGER)");
    for (id, qty) in [(1, 5), (2, -1), (2, 7)] {
        exec(&s, &format!("INSERT INTO t VALUES ({id}, {qty})"));
    }
    // Existing rows that violate a new constraint refuse it, naming it.
    assert_eq!(
        error(&s, "ALTER TABLE t ADD CONSTRAINT t_qty_ck CHECK (qty > 0)"),
        "ORA-02293: cannot validate (LIOSCOPE.T_QTY_CK) - check constraint violated"
    );
    assert_eq!(
        error(&s, "ALTER TABLE t ADD CONSTRAINT t_pk PRIMARY KEY (id)"),
        "ORA-02437: cannot validate (LIOSCOPE.T_PK) - primary key violated"
    );
    assert_eq!(
        error(&s, "ALTER TABLE t ADD CONSTRAINT t_uk UNIQUE (id)"),
        "ORA-02299: cannot validate (LIOSCOPE.T_UK) - duplicate keys found"
    );
    assert_eq!(int(&s, "SELECT COUNT(*) FROM user_constraints"), 0);
    assert_eq!(int(&s, "SELECT COUNT(*) FROM user_indexes"), 0);
    exec(&s, "DELETE FROM t WHERE qty < 0");
    exec(&s, "ALTER TABLE t ADD CONSTRAINT t_qty_ck CHECK (qty > 0)");
    exec(&s, "ALTER TABLE t ADD CONSTRAINT t_pk PRIMARY KEY (id)");
    assert_eq!(error(&s, "INSERT INTO t VALUES (3, 0)"), "ORA-02290: check constraint (LIOSCOPE.T_QTY_CK) violated");
    assert_eq!(error(&s, "INSERT INTO t VALUES (1, 1)"), "ORA-00001: unique constraint (LIOSCOPE.T_PK) violated");
    // Disabled: not enforced, and the key's own index is gone.
    exec(&s, "ALTER TABLE t DISABLE CONSTRAINT t_pk");
    exec(&s, "ALTER TABLE t DISABLE CONSTRAINT t_qty_ck");
    assert_eq!(
        lines(&s, "SELECT constraint_name, status, index_name FROM user_constraints ORDER BY 1"),
        ["T_PK|DISABLED|", "T_QTY_CK|DISABLED|"]
    );
    assert_eq!(int(&s, "SELECT COUNT(*) FROM user_indexes"), 0);
    exec(&s, "INSERT INTO t VALUES (1, 0)");
    exec(&s, "INSERT INTO t VALUES (NULL, 3)");
    // Enabling checks the rows again.
    assert_eq!(
        error(&s, "ALTER TABLE t ENABLE CONSTRAINT t_qty_ck"),
        "ORA-02293: cannot validate (LIOSCOPE.T_QTY_CK) - check constraint violated"
    );
    assert_eq!(
        error(&s, "ALTER TABLE t ENABLE CONSTRAINT t_pk"),
        "ORA-02296: cannot validate (LIOSCOPE.T_PK) - null values found"
    );
    exec(&s, "DELETE FROM t WHERE id IS NULL");
    assert_eq!(
        error(&s, "ALTER TABLE t ENABLE CONSTRAINT t_pk"),
        "ORA-02437: cannot validate (LIOSCOPE.T_PK) - primary key violated"
    );
    exec(&s, "DELETE FROM t WHERE qty = 0");
    exec(&s, "ALTER TABLE t ENABLE CONSTRAINT t_pk");
    exec(&s, "ALTER TABLE t ENABLE CONSTRAINT t_qty_ck");
    assert_eq!(
        lines(&s, "SELECT constraint_name, status, index_name FROM user_constraints ORDER BY 1"),
        ["T_PK|ENABLED|T_PK", "T_QTY_CK|ENABLED|"]
    );
    assert_eq!(error(&s, "INSERT INTO t VALUES (1, 1)"), "ORA-00001: unique constraint (LIOSCOPE.T_PK) violated");
    // A key added where a unique index on its columns exists uses that index, and keeps
    // it when the key goes.
    exec(&s, "CREATE TABLE u (a INTEGER, b INTEGER)");
    exec(&s, "CREATE UNIQUE INDEX u_ab ON u (b, a)");
    exec(&s, "ALTER TABLE u ADD CONSTRAINT u_uk UNIQUE (a, b)");
    assert_eq!(scalar(&s, "SELECT index_name FROM user_constraints WHERE constraint_name = 'U_UK'"), "U_AB");
    exec(&s, "INSERT INTO u VALUES (1, 2)");
    assert_eq!(error(&s, "INSERT INTO u VALUES (1, 2)"), "ORA-00001: unique constraint (LIOSCOPE.U_AB) violated");
    exec(&s, "ALTER TABLE u DROP CONSTRAINT u_uk");
    assert_eq!(int(&s, "SELECT COUNT(*) FROM user_indexes WHERE index_name = 'U_AB'"), 1);
    // Dropping a constraint stops its enforcement; a NOT NULL dropped makes the column
    // nullable again.
    exec(&s, "ALTER TABLE t DROP CONSTRAINT t_pk");
    exec(&s, "INSERT INTO t VALUES (NULL, 4)");
    assert_eq!(int(&s, "SELECT COUNT(*) FROM user_indexes WHERE index_name = 'T_PK'"), 0);
}

#[test]
fn constraints_survive_a_restart_and_a_crash() {
    let (_t, dir, db) = db();
    {
        let s = db.session();
        exec(
            &s,
            "CREATE TABLE t (id INTEGER CONSTRAINT t_pk PRIMARY KEY, qty INTEGER CONSTRAINT t_ck CHECK (qty > 0) NOT NULL)",
        );
        exec(&s, "INSERT INTO t VALUES (1, 1)");
    }
    drop(db);
    let db = open(&dir, options(8192, "4M"));
    let check = |db: &lioscope::Database| {
        let s = db.session();
        assert_eq!(error(&s, "INSERT INTO t VALUES (1, 2)"), "ORA-00001: unique constraint (LIOSCOPE.T_PK) violated");
        assert_eq!(error(&s, "INSERT INTO t VALUES (2, 0)"), "ORA-02290: check constraint (LIOSCOPE.T_CK) violated");
        assert!(error(&s, "INSERT INTO t VALUES (2, NULL)").starts_with("ORA-01400"));
    };
    check(&db);
    drop(db);
    let db = crash_after(&dir, options(8192, "4M"), 7, |db| {
        let s = db.session();
        exec(&s, "ALTER TABLE t ADD CONSTRAINT t_qty_uk UNIQUE (qty)");
    });
    check(&db);
    let s = db.session();
    assert_eq!(error(&s, "INSERT INTO t VALUES (5, 1)"), "ORA-00001: unique constraint (LIOSCOPE.T_QTY_UK) violated");
    assert_eq!(int(&s, "SELECT COUNT(*) FROM user_constraints WHERE table_name = 'T'"), 4);
}

/// Waits until session `sid` waits for another transaction's row lock (the TX enqueue,
/// as `v$session` shows it); fails the test if it has not within 30 seconds.
fn wait_for_enqueue(probe: &lioscope::Session, sid: u32) {
    let waiting =
        format!("SELECT COUNT(*) FROM v$session WHERE sid = {sid} AND event = 'enq: TX - row lock contention'");
    let started = std::time::Instant::now();
    while int(probe, &waiting) == 0 {
        assert!(started.elapsed() < Duration::from_secs(30), "session {sid} never waited for the first insert");
        std::thread::sleep(Duration::from_millis(2));
    }
}

#[test]
fn a_second_session_inserting_the_same_primary_key_waits_for_the_first() {
    for first_commits in [true, false] {
        let (_t, _d, db) = db();
        let a = db.session();
        exec(&a, "CREATE TABLE dept (deptno INTEGER CONSTRAINT dept_pk PRIMARY KEY, dname VARCHAR2(14))");
        manual(&a);
        exec(&a, "INSERT INTO dept VALUES (10, 'ACCOUNTING')");
        let (sid_tx, sid_rx) = std::sync::mpsc::channel();
        let second = {
            let db = db.clone();
            std::thread::spawn(move || {
                let b = db.session();
                sid_tx.send(b.sid()).expect("the test waits for the sid");
                b.execute("INSERT INTO dept VALUES (10, 'RESEARCH')").map(|_| ()).map_err(|e| e.to_string())
            })
        };
        let b_sid = sid_rx.recv().expect("the second session started");
        wait_for_enqueue(&a, b_sid);
        exec(&a, if first_commits { "COMMIT" } else { "ROLLBACK" });
        let outcome = second.join().unwrap();
        let s = db.session();
        if first_commits {
            assert_eq!(outcome, Err("ORA-00001: unique constraint (LIOSCOPE.DEPT_PK) violated".into()));
            assert_eq!(lines(&s, "SELECT deptno, dname FROM dept"), ["10|ACCOUNTING"]);
        } else {
            assert_eq!(outcome, Ok(()));
            assert_eq!(lines(&s, "SELECT deptno, dname FROM dept"), ["10|RESEARCH"]);
        }
    }
}
