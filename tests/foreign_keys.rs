//! Foreign keys through the public API: declared inline and out of line, in CREATE TABLE
//! and ALTER TABLE; Oracle's errors for a child key without a parent (ORA-02291) and a
//! parent key with children (ORA-02292); ON DELETE CASCADE and SET NULL, over several
//! levels and a self-referencing table; two sessions, one waiting for the other's
//! uncommitted parent or child; and a crash in the middle of a cascading delete.

mod common;

use common::*;
use std::time::Duration;

const PARENT_MISSING: &str = "ORA-02291: integrity constraint (LIOSCOPE.EMP_DEPT_FK) violated - parent key not found";
const CHILD_FOUND: &str = "ORA-02292: integrity constraint (LIOSCOPE.EMP_DEPT_FK) violated - child record found";

/// dept (10, 20, 30) and emp, whose deptno refers to dept with `rule` (`""`, `ON DELETE
/// CASCADE`, `ON DELETE SET NULL`), with an index on emp.deptno if `indexed`.
fn dept_emp(s: &lioscope::Session, rule: &str, indexed: bool) {
    exec(s, "CREATE TABLE dept (deptno INTEGER CONSTRAINT dept_pk PRIMARY KEY, dname VARCHAR2(14))");
    exec(
        s,
        &format!(
            "CREATE TABLE emp (empno INTEGER PRIMARY KEY, deptno NUMBER(4), CONSTRAINT emp_dept_fk FOREIGN KEY (deptno) REFERENCES dept {rule})"
        ),
    );
    if indexed {
        exec(s, "CREATE INDEX emp_deptno ON emp (deptno, empno)");
    }
    exec(s, "INSERT INTO dept VALUES (10, 'ACCOUNTING')");
    exec(s, "INSERT INTO dept VALUES (20, 'RESEARCH')");
    exec(s, "INSERT INTO dept VALUES (30, 'SALES')");
}

#[test]
fn foreign_keys_are_declared_inline_and_out_of_line_and_shown_in_the_dictionary() {
    let (_t, _d, db) = db();
    let s = db.session();
    dept_emp(&s, "ON DELETE CASCADE", false);
    // Inline, system-named, referring to the parent's primary key without naming its
    // columns; and a self-referencing key on a unique key named by its column.
    exec(
        &s,
        "CREATE TABLE proj (id INTEGER PRIMARY KEY, code VARCHAR2(8) UNIQUE, deptno INTEGER REFERENCES dept ON DELETE SET NULL, parent_code VARCHAR2(8) REFERENCES proj (code))",
    );
    let r = lines(
        &s,
        "SELECT table_name, constraint_name, r_constraint_name, delete_rule, status, generated FROM user_constraints WHERE constraint_type = 'R' ORDER BY table_name, delete_rule",
    );
    assert_eq!(r.len(), 3, "{r:?}");
    assert_eq!(r[0], "EMP|EMP_DEPT_FK|DEPT_PK|CASCADE|ENABLED|USER NAME");
    let uk =
        scalar(&s, "SELECT constraint_name FROM user_constraints WHERE table_name = 'PROJ' AND constraint_type = 'U'");
    assert!(
        r[1].starts_with("PROJ|SYS_C") && r[1].ends_with(&format!("|{uk}|NO ACTION|ENABLED|GENERATED NAME")),
        "{r:?}"
    );
    assert!(r[2].starts_with("PROJ|SYS_C") && r[2].ends_with("|DEPT_PK|SET NULL|ENABLED|GENERATED NAME"), "{r:?}");
    assert_eq!(
        lines(&s, "SELECT column_name, position FROM user_cons_columns WHERE constraint_name = 'EMP_DEPT_FK'"),
        ["DEPTNO|1"]
    );
    // Two columns, referring to a key whose columns are listed in another order: the
    // foreign key's columns follow the key's.
    exec(&s, "CREATE TABLE pair (a INTEGER, b VARCHAR2(4), CONSTRAINT pair_pk PRIMARY KEY (a, b))");
    exec(
        &s,
        "CREATE TABLE pair_child (y VARCHAR2(4), x INTEGER, CONSTRAINT pc_fk FOREIGN KEY (y, x) REFERENCES pair (b, a))",
    );
    assert_eq!(
        lines(
            &s,
            "SELECT column_name, position FROM user_cons_columns WHERE constraint_name = 'PC_FK' ORDER BY position"
        ),
        ["X|1", "Y|2"]
    );
    exec(&s, "INSERT INTO pair VALUES (1, 'a')");
    exec(&s, "INSERT INTO pair_child VALUES ('a', 1)");
    assert_eq!(
        error(&s, "INSERT INTO pair_child VALUES ('b', 1)"),
        "ORA-02291: integrity constraint (LIOSCOPE.PC_FK) violated - parent key not found"
    );
    // MATCH SIMPLE: a key with a NULL column refers to nothing.
    exec(&s, "INSERT INTO pair_child VALUES ('zz', NULL)");
    // Added by ALTER TABLE, to a table of the same name space.
    exec(&s, "CREATE TABLE bonus (empno INTEGER)");
    exec(&s, "ALTER TABLE bonus ADD CONSTRAINT bonus_emp_fk FOREIGN KEY (empno) REFERENCES emp (empno)");
    assert_eq!(int(&s, "SELECT COUNT(*) FROM user_constraints WHERE constraint_name = 'BONUS_EMP_FK'"), 1);
    assert_eq!(
        error(&s, "INSERT INTO bonus VALUES (7)"),
        "ORA-02291: integrity constraint (LIOSCOPE.BONUS_EMP_FK) violated - parent key not found"
    );
}

#[test]
fn bad_foreign_key_definitions_get_oracle_errors() {
    let (_t, _d, db) = db();
    let s = db.session();
    dept_emp(&s, "", false);
    exec(&s, "CREATE TABLE nokey (a INTEGER, b DATE)");
    let create = |cols: &str| error(&s, &format!("CREATE TABLE c ({cols})"));
    assert_eq!(
        create("d INTEGER REFERENCES dept (dname)"),
        "ORA-02270: no matching unique or primary key for this column-list in DEPT"
    );
    assert_eq!(
        create("d INTEGER REFERENCES nokey"),
        "ORA-02268: referenced table nokey does not have a primary key".replace("nokey", "NOKEY")
    );
    assert_eq!(
        create("d INTEGER, e INTEGER, FOREIGN KEY (d, e) REFERENCES dept (deptno)"),
        "ORA-02256: number of referencing columns must match referenced columns"
    );
    assert_eq!(
        create("d DATE REFERENCES dept"),
        "ORA-02267: column type incompatible with referenced column type (C.D and DEPT.DEPTNO)"
    );
    assert!(create("d INTEGER REFERENCES nosuch").contains("NOSUCH"));
    assert!(create("d INTEGER REFERENCES dept (nosuch)").contains("DEPT.NOSUCH"));
    assert!(create("d INTEGER REFERENCES dept ON DELETE SET DEFAULT").contains("not supported"));
    assert_eq!(int(&s, "SELECT COUNT(*) FROM user_tables WHERE table_name = 'C'"), 0);
    // The parent's key and the parent table are kept while a foreign key refers to them.
    assert_eq!(
        error(&s, "ALTER TABLE dept DROP CONSTRAINT dept_pk"),
        "ORA-02273: this unique/primary key is referenced by some foreign keys (foreign key LIOSCOPE.EMP_DEPT_FK)"
    );
    assert_eq!(
        error(&s, "ALTER TABLE dept DISABLE CONSTRAINT dept_pk"),
        "ORA-02297: cannot disable constraint (LIOSCOPE.DEPT_PK) - dependencies exist (foreign key LIOSCOPE.EMP_DEPT_FK)"
    );
    assert_eq!(
        error(&s, "DROP TABLE dept"),
        "ORA-02449: unique/primary keys in table referenced by foreign keys (foreign key LIOSCOPE.EMP_DEPT_FK)"
    );
    assert_eq!(
        error(&s, "TRUNCATE TABLE dept"),
        "ORA-02266: unique/primary keys in table referenced by enabled foreign keys (foreign key LIOSCOPE.EMP_DEPT_FK)"
    );
    assert_eq!(count(&s, "dept"), 3);
    // A disabled foreign key lets the key be disabled, not dropped.
    exec(&s, "ALTER TABLE emp DISABLE CONSTRAINT emp_dept_fk");
    exec(&s, "ALTER TABLE dept DISABLE CONSTRAINT dept_pk");
    assert!(error(&s, "ALTER TABLE dept DROP CONSTRAINT dept_pk").starts_with("ORA-02273"));
    exec(&s, "ALTER TABLE dept ENABLE CONSTRAINT dept_pk");
    exec(&s, "ALTER TABLE emp ENABLE CONSTRAINT emp_dept_fk");
    // CASCADE CONSTRAINTS drops the children's foreign keys with the table.
    exec(&s, "INSERT INTO emp VALUES (1, 10)");
    exec(&s, "DROP TABLE dept CASCADE CONSTRAINTS");
    assert_eq!(int(&s, "SELECT COUNT(*) FROM user_constraints WHERE constraint_type = 'R'"), 0);
    exec(&s, "INSERT INTO emp VALUES (2, 99)");
    // A self-referencing table drops without CASCADE CONSTRAINTS.
    exec(&s, "CREATE TABLE tree (id INTEGER PRIMARY KEY, up INTEGER REFERENCES tree)");
    exec(&s, "DROP TABLE tree");
}

#[test]
fn a_child_row_needs_its_parent_key_on_every_path_a_row_is_written() {
    let (dir, _d, db) = db();
    let s = db.session();
    dept_emp(&s, "", false);
    assert_eq!(error(&s, "INSERT INTO emp VALUES (1, 40)"), PARENT_MISSING);
    exec(&s, "INSERT INTO emp VALUES (1, 10)");
    exec(&s, "INSERT INTO emp VALUES (2, NULL)");
    // 10.0 is the key 10.
    exec(&s, "INSERT INTO emp VALUES (3, 10.0)");
    exec(&s, "CREATE TABLE src (empno INTEGER, deptno INTEGER)");
    exec(&s, "INSERT INTO src VALUES (4, 20)");
    exec(&s, "INSERT INTO src VALUES (5, 50)");
    // One orphan among several rows: the statement changes nothing.
    assert_eq!(error(&s, "INSERT INTO emp SELECT empno, deptno FROM src"), PARENT_MISSING);
    assert_eq!(error(&s, "INSERT /*+ APPEND */ INTO emp SELECT empno, deptno FROM src"), PARENT_MISSING);
    let csv = dir.path().join("emp.csv");
    std::fs::write(&csv, "6,30\n7,60\n").unwrap();
    assert_eq!(error(&s, &format!("COPY emp FROM '{}'", csv.display())), PARENT_MISSING);
    assert_eq!(count(&s, "emp"), 3);
    // APPEND into a table with an enabled foreign key loads the conventional way.
    exec(&s, "INSERT /*+ APPEND */ INTO emp SELECT empno, deptno FROM src WHERE deptno = 20");
    exec(&s, "INSERT INTO emp SELECT empno + 10, 30 FROM src");
    assert_eq!(error(&s, "UPDATE emp SET deptno = 40 WHERE empno = 1"), PARENT_MISSING);
    exec(&s, "UPDATE emp SET deptno = 30 WHERE empno = 1");
    exec(&s, "UPDATE emp SET deptno = NULL WHERE empno = 3");
    assert_eq!(
        lines(&s, "SELECT empno, deptno FROM emp ORDER BY empno"),
        ["1|30", "2|", "3|", "4|20", "14|30", "15|30"]
    );
    // A parent key inserted earlier in the same transaction counts; and a row may refer
    // to itself, or to a row of the same statement.
    manual(&s);
    exec(&s, "INSERT INTO dept VALUES (40, 'OPERATIONS')");
    exec(&s, "INSERT INTO emp VALUES (8, 40)");
    exec(&s, "COMMIT");
    exec(&s, "CREATE TABLE tree (id INTEGER PRIMARY KEY, up INTEGER REFERENCES tree)");
    exec(&s, "INSERT INTO tree VALUES (1, 1)");
    exec(&s, "INSERT INTO tree SELECT empno + 1, MOD(empno + 1, 3) + 1 FROM emp WHERE empno IN (1, 2)");
    assert_eq!(
        error(&s, "INSERT INTO tree VALUES (5, 6)").replace(
            &scalar(
                &s,
                "SELECT constraint_name FROM user_constraints WHERE table_name = 'TREE' AND constraint_type = 'R'"
            ),
            "FK"
        ),
        "ORA-02291: integrity constraint (LIOSCOPE.FK) violated - parent key not found"
    );
    exec(&s, "COMMIT");
}

#[test]
fn a_parent_key_with_children_cannot_be_deleted_or_changed() {
    for indexed in [false, true] {
        let (_t, _d, db) = db();
        let s = db.session();
        dept_emp(&s, "", indexed);
        exec(&s, "INSERT INTO emp VALUES (1, 10)");
        exec(&s, "INSERT INTO emp VALUES (2, 10)");
        assert_eq!(error(&s, "DELETE FROM dept WHERE deptno = 10"), CHILD_FOUND);
        assert_eq!(error(&s, "DELETE FROM dept"), CHILD_FOUND);
        assert_eq!(error(&s, "UPDATE dept SET deptno = 11 WHERE deptno = 10"), CHILD_FOUND);
        assert_eq!(count(&s, "dept"), 3);
        // A key no child has, or one kept: fine.
        exec(&s, "DELETE FROM dept WHERE deptno = 20");
        exec(&s, "UPDATE dept SET deptno = 31 WHERE deptno = 30");
        exec(&s, "UPDATE dept SET deptno = deptno, dname = 'X'");
        // The children deleted first, in the same transaction: then the parent goes.
        manual(&s);
        exec(&s, "DELETE FROM emp WHERE deptno = 10");
        exec(&s, "DELETE FROM dept WHERE deptno = 10");
        exec(&s, "COMMIT");
        assert_eq!(lines(&s, "SELECT deptno FROM dept"), ["31"]);
        // A self-referencing table: deleting every row at once is fine, one with
        // children is not.
        exec(
            &s,
            "CREATE TABLE tree (id INTEGER CONSTRAINT tree_pk PRIMARY KEY, up INTEGER CONSTRAINT tree_fk REFERENCES tree)",
        );
        exec(&s, "INSERT INTO tree VALUES (1, NULL)");
        exec(&s, "INSERT INTO tree VALUES (2, 1)");
        exec(&s, "INSERT INTO tree VALUES (3, 2)");
        assert_eq!(
            error(&s, "DELETE FROM tree WHERE id = 2"),
            "ORA-02292: integrity constraint (LIOSCOPE.TREE_FK) violated - child record found"
        );
        exec(&s, "DELETE FROM tree");
        exec(&s, "COMMIT");
        assert_eq!(count(&s, "tree"), 0);
    }
}

#[test]
fn on_delete_cascade_and_set_null_reach_every_level() {
    for indexed in [false, true] {
        let (_t, _d, db) = db();
        let s = db.session();
        dept_emp(&s, "ON DELETE CASCADE", indexed);
        exec(&s, "CREATE TABLE task (id INTEGER PRIMARY KEY, empno INTEGER REFERENCES emp ON DELETE CASCADE)");
        exec(&s, "CREATE TABLE note (id INTEGER, empno INTEGER REFERENCES emp ON DELETE SET NULL)");
        for e in 1..=6 {
            exec(&s, &format!("INSERT INTO emp VALUES ({e}, {})", if e <= 4 { 10 } else { 20 }));
            exec(&s, &format!("INSERT INTO task VALUES ({e}, {e})"));
            exec(&s, &format!("INSERT INTO note VALUES ({e}, {e})"));
        }
        assert_eq!(exec(&s, "DELETE FROM dept WHERE deptno = 10").rows_affected, 1);
        assert_eq!(lines(&s, "SELECT empno FROM emp ORDER BY empno"), ["5", "6"]);
        assert_eq!(lines(&s, "SELECT id FROM task ORDER BY id"), ["5", "6"]);
        assert_eq!(lines(&s, "SELECT id, empno FROM note ORDER BY id"), ["1|", "2|", "3|", "4|", "5|5", "6|6"]);
        // The cascade is part of the statement: one that fails takes it all back.
        exec(&s, "CREATE TABLE keep (empno INTEGER NOT NULL REFERENCES emp ON DELETE SET NULL)");
        exec(&s, "INSERT INTO keep VALUES (6)");
        assert_eq!(
            error(&s, "DELETE FROM dept WHERE deptno = 20"),
            "ORA-01407: cannot update (\"LIOSCOPE\".\"KEEP\".\"EMPNO\") to NULL"
        );
        assert_eq!(count(&s, "emp"), 2);
        assert_eq!(count(&s, "task"), 2);
        assert_eq!(lines(&s, "SELECT id, empno FROM note WHERE id > 4 ORDER BY id"), ["5|5", "6|6"]);
        // ROLLBACK takes back a whole cascade.
        exec(&s, "DELETE FROM keep");
        manual(&s);
        exec(&s, "DELETE FROM dept");
        assert_eq!((count(&s, "dept"), count(&s, "emp"), count(&s, "task")), (0, 0, 0));
        exec(&s, "ROLLBACK");
        assert_eq!((count(&s, "dept"), count(&s, "emp"), count(&s, "task")), (2, 2, 2));
    }
}

#[test]
fn a_deep_self_referencing_cascade_takes_no_stack() {
    let (_t, _d, db) = db();
    let s = db.session();
    exec(&s, "CREATE TABLE chain (id INTEGER PRIMARY KEY, up INTEGER REFERENCES chain ON DELETE CASCADE)");
    exec(&s, "CREATE INDEX chain_up ON chain (up)");
    exec(&s, "INSERT INTO chain VALUES (0, NULL)");
    exec(&s, "INSERT INTO chain SELECT level, level - 1 FROM dual CONNECT BY level <= 3000");
    exec(&s, "INSERT INTO chain VALUES (5000, 5000)");
    assert_eq!(exec(&s, "DELETE FROM chain WHERE id = 0").rows_affected, 1);
    assert_eq!(lines(&s, "SELECT id FROM chain"), ["5000"]);
    exec(&s, "DELETE FROM chain");
    assert_eq!(count(&s, "chain"), 0);
}

#[test]
fn enabling_a_foreign_key_validates_the_rows() {
    let (_t, _d, db) = db();
    let s = db.session();
    dept_emp(&s, "", false);
    exec(&s, "ALTER TABLE emp DROP CONSTRAINT emp_dept_fk");
    exec(&s, "INSERT INTO emp VALUES (1, 10)");
    exec(&s, "INSERT INTO emp VALUES (2, 77)");
    exec(&s, "INSERT INTO emp VALUES (3, NULL)");
    let add = "ALTER TABLE emp ADD CONSTRAINT emp_dept_fk FOREIGN KEY (deptno) REFERENCES dept";
    assert_eq!(error(&s, add), "ORA-02298: cannot validate (LIOSCOPE.EMP_DEPT_FK) - parent keys not found");
    assert_eq!(int(&s, "SELECT COUNT(*) FROM user_constraints WHERE table_name = 'EMP'"), 1);
    exec(&s, "UPDATE emp SET deptno = 20 WHERE empno = 2");
    exec(&s, add);
    exec(&s, "ALTER TABLE emp DISABLE CONSTRAINT emp_dept_fk");
    assert_eq!(scalar(&s, "SELECT status FROM user_constraints WHERE constraint_name = 'EMP_DEPT_FK'"), "DISABLED");
    exec(&s, "INSERT INTO emp VALUES (4, 88)");
    exec(&s, "DELETE FROM dept WHERE deptno = 10");
    let enable = "ALTER TABLE emp ENABLE CONSTRAINT emp_dept_fk";
    assert_eq!(error(&s, enable), "ORA-02298: cannot validate (LIOSCOPE.EMP_DEPT_FK) - parent keys not found");
    exec(&s, "DELETE FROM emp WHERE deptno IN (10, 88)");
    exec(&s, enable);
    assert_eq!(error(&s, "INSERT INTO emp VALUES (5, 88)"), PARENT_MISSING);
}

#[test]
fn a_foreign_key_is_not_validated_while_its_parent_has_uncommitted_changes() {
    let (_t, _d, db) = db();
    let s = db.session();
    dept_emp(&s, "", false);
    exec(&s, "ALTER TABLE emp DROP CONSTRAINT emp_dept_fk");
    exec(&s, "INSERT INTO emp VALUES (1, 10)");
    exec(&s, "COMMIT");
    // Another session deletes the parent key the child row needs, and has not committed:
    // checked against the committed parent, the key would pass and then be orphaned.
    let other = db.session();
    manual(&other);
    exec(&other, "DELETE FROM dept WHERE deptno = 10");
    let add = "ALTER TABLE emp ADD CONSTRAINT emp_dept_fk FOREIGN KEY (deptno) REFERENCES dept";
    let e = error(&s, add);
    assert!(e.contains("resource busy: DEPT") && e.contains("uncommitted changes"), "{e}");
    exec(&other, "COMMIT");
    assert_eq!(error(&s, add), "ORA-02298: cannot validate (LIOSCOPE.EMP_DEPT_FK) - parent keys not found");
    exec(&s, "INSERT INTO dept VALUES (10, 'BACK')");
    exec(&s, add);
    exec(&s, "ALTER TABLE emp DISABLE CONSTRAINT emp_dept_fk");
    exec(&other, "UPDATE dept SET dname = 'X' WHERE deptno = 10");
    let e = error(&s, "ALTER TABLE emp ENABLE CONSTRAINT emp_dept_fk");
    assert!(e.contains("resource busy: DEPT"), "{e}");
    exec(&other, "ROLLBACK");
    exec(&s, "ALTER TABLE emp ENABLE CONSTRAINT emp_dept_fk");
}

/// The rows of `child` whose `column` is not NULL and matches no row of `parent`.
fn orphans(s: &lioscope::Session, child: &str, column: &str, parent: &str) -> i64 {
    int(
        s,
        &format!(
            "SELECT COUNT(*) FROM {child} c LEFT JOIN {parent} p ON c.{column} = p.{column} WHERE c.{column} IS NOT NULL AND p.{column} IS NULL"
        ),
    )
}

/// Waits until session `sid` waits for another transaction (the TX enqueue, as
/// `v$session` shows it); fails the test if it has not within 30 seconds.
fn wait_for_enqueue(probe: &lioscope::Session, sid: u32) {
    let waiting =
        format!("SELECT COUNT(*) FROM v$session WHERE sid = {sid} AND event = 'enq: TX - row lock contention'");
    let started = std::time::Instant::now();
    while int(probe, &waiting) == 0 {
        assert!(started.elapsed() < Duration::from_secs(30), "session {sid} never waited");
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// Runs `sql` in a new session of `db` on another thread, once `a` has done `first`
/// (uncommitted); `a` commits or rolls back once the other waits. Returns the other
/// statement's outcome.
fn second_waits_for_first(
    db: &lioscope::Database,
    a: &lioscope::Session,
    first: &str,
    sql: &'static str,
    commit: bool,
) -> Result<(), String> {
    manual(a);
    exec(a, first);
    let (sid_tx, sid_rx) = std::sync::mpsc::channel();
    let second = {
        let db = db.clone();
        std::thread::spawn(move || {
            let b = db.session();
            sid_tx.send(b.sid()).expect("the test waits for the sid");
            b.execute(sql).map(|_| ()).map_err(|e| e.to_string())
        })
    };
    let b_sid = sid_rx.recv().expect("the second session started");
    wait_for_enqueue(a, b_sid);
    exec(a, if commit { "COMMIT" } else { "ROLLBACK" });
    second.join().unwrap()
}

#[test]
fn a_child_insert_waits_for_an_uncommitted_delete_of_its_parent() {
    for commit in [true, false] {
        let (_t, _d, db) = db();
        let a = db.session();
        dept_emp(&a, "", false);
        let outcome = second_waits_for_first(
            &db,
            &a,
            "DELETE FROM dept WHERE deptno = 10",
            "INSERT INTO emp VALUES (1, 10)",
            commit,
        );
        let s = db.session();
        if commit {
            assert_eq!(outcome, Err(PARENT_MISSING.into()));
            assert_eq!(count(&s, "emp"), 0);
        } else {
            assert_eq!(outcome, Ok(()));
            assert_eq!(
                lines(&s, "SELECT e.empno, d.dname FROM emp e, dept d WHERE e.deptno = d.deptno"),
                ["1|ACCOUNTING"]
            );
        }
    }
}

#[test]
fn a_parent_delete_waits_for_an_uncommitted_child_insert() {
    for indexed in [false, true] {
        for commit in [true, false] {
            for cascade in [false, true] {
                let (_t, _d, db) = db();
                let a = db.session();
                dept_emp(&a, if cascade { "ON DELETE CASCADE" } else { "" }, indexed);
                let outcome = second_waits_for_first(
                    &db,
                    &a,
                    "INSERT INTO emp VALUES (1, 10)",
                    "DELETE FROM dept WHERE deptno = 10",
                    commit,
                );
                let s = db.session();
                let case = format!("indexed {indexed}, commit {commit}, cascade {cascade}");
                match (commit, cascade) {
                    (true, false) => {
                        assert_eq!(outcome, Err(CHILD_FOUND.into()), "{case}");
                        assert_eq!((count(&s, "dept"), count(&s, "emp")), (3, 1), "{case}");
                    }
                    (true, true) => {
                        assert_eq!(outcome, Ok(()), "{case}");
                        assert_eq!((count(&s, "dept"), count(&s, "emp")), (2, 0), "{case}");
                    }
                    (false, _) => {
                        assert_eq!(outcome, Ok(()), "{case}");
                        assert_eq!((count(&s, "dept"), count(&s, "emp")), (2, 0), "{case}");
                    }
                }
                // Never an orphan.
                assert_eq!(orphans(&s, "emp", "deptno", "dept"), 0, "{case}");
            }
        }
    }
}

#[test]
fn a_crash_in_the_middle_of_a_cascading_delete_leaves_no_orphan_and_no_half_delete() {
    let (_t, dir, db) = temp_db(options(8192, "1M"));
    {
        let s = db.session();
        dept_emp(&s, "ON DELETE CASCADE", false);
        exec(&s, "CREATE TABLE task (id INTEGER, empno INTEGER REFERENCES emp ON DELETE CASCADE)");
        exec(&s, "INSERT INTO emp SELECT level, 10 + 10 * MOD(level, 2) FROM dual CONNECT BY level <= 3000");
        exec(&s, "INSERT INTO task SELECT level, level FROM dual CONNECT BY level <= 3000");
    }
    drop(db);
    let consistent = |db: &lioscope::Database| {
        let s = db.session();
        let orphans = (orphans(&s, "emp", "deptno", "dept"), orphans(&s, "task", "empno", "emp"));
        assert_eq!(orphans, (0, 0));
        (count(&s, "dept"), count(&s, "emp"), count(&s, "task"))
    };
    // Uncommitted when the power goes, with the cascade's changed blocks written to the
    // datafiles by a checkpoint: recovery takes the whole statement back.
    let db = crash_after(&dir, options(8192, "1M"), 3, |db| {
        let s = db.session();
        manual(&s);
        assert_eq!(exec(&s, "DELETE FROM dept WHERE deptno = 10").rows_affected, 1);
        assert_eq!((count(&s, "emp"), count(&s, "task")), (1500, 1500));
        exec(&db.session(), "ALTER SYSTEM CHECKPOINT");
    });
    assert_eq!(consistent(&db), (3, 3000, 3000));
    drop(db);
    // Committed: all of it is there after the crash.
    let db = crash_after(&dir, options(8192, "1M"), 5, |db| {
        let s = db.session();
        exec(&s, "DELETE FROM dept WHERE deptno = 20");
    });
    assert_eq!(consistent(&db), (2, 1500, 1500));
    let s = db.session();
    assert_eq!(int(&s, "SELECT COUNT(*) FROM emp WHERE deptno = 20"), 0);
    assert_eq!(error(&s, "INSERT INTO emp VALUES (9999, 20)"), PARENT_MISSING);
}

#[test]
fn append_into_a_table_with_an_enabled_foreign_key_loads_the_conventional_way() {
    let (_t, _d, db) = temp_db(options(8192, "32M"));
    let s = db.session();
    dept_emp(&s, "", false);
    exec(&s, "CREATE TABLE h (empno INTEGER, deptno INTEGER CONSTRAINT h_fk REFERENCES dept) COMPRESS FOR QUERY HIGH");
    let cus = sysstat(&s, "HCC load direct CUs");
    exec(&s, "INSERT /*+ APPEND */ INTO h SELECT level, 10 FROM dual CONNECT BY level <= 1000");
    assert_eq!(sysstat(&s, "HCC load direct CUs"), cus, "rows into row blocks, as Oracle does");
    assert_eq!(
        error(&s, "INSERT /*+ APPEND */ INTO h SELECT level, 50 FROM dual CONNECT BY level <= 10"),
        "ORA-02291: integrity constraint (LIOSCOPE.H_FK) violated - parent key not found"
    );
    // Disabled, the foreign key no longer keeps the load from its direct path.
    exec(&s, "ALTER TABLE h DISABLE CONSTRAINT h_fk");
    exec(&s, "INSERT /*+ APPEND */ INTO h SELECT level, 50 FROM dual CONNECT BY level <= 1000");
    assert!(sysstat(&s, "HCC load direct CUs") > cus);
    assert_eq!(count(&s, "h"), 2000);
}
