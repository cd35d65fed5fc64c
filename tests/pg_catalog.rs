//! PostgreSQL's catalogs and the standard's `information_schema` over lioscope's
//! dictionary, through the embedded API: every table, index, view, sequence, column and
//! constraint appears once, tied to the others by the same OIDs; keys and definitions
//! are written as PostgreSQL writes them; `information_schema` shows a user only what it
//! may use, `pg_catalog` everything.

use lioscope::types::Value;
use lioscope::{Database, Session};

fn rows(session: &Session, sql: &str) -> Vec<Vec<String>> {
    let result = session.execute(sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
    result.rows.iter().map(|r| r.iter().map(Value::to_string).collect()).collect()
}

fn strings(items: &[&[&str]]) -> Vec<Vec<String>> {
    items.iter().map(|r| r.iter().map(|s| s.to_string()).collect()).collect()
}

fn schema(db: &Database) {
    let sys = db.session();
    for sql in [
        "CREATE TABLE dept (deptno NUMBER(2) PRIMARY KEY, dname VARCHAR2(14) NOT NULL)",
        "CREATE TABLE emp (empno NUMBER GENERATED ALWAYS AS IDENTITY, ename VARCHAR2(10) NOT NULL, \
         sal NUMBER(7,2) CONSTRAINT emp_sal_ck CHECK (sal > 0), hired DATE, grade CHAR(1), \
         deptno NUMBER(2) CONSTRAINT emp_dept_fk REFERENCES dept ON DELETE CASCADE, \
         CONSTRAINT emp_pk PRIMARY KEY (empno), CONSTRAINT emp_name_uk UNIQUE (ename, deptno))",
        "CREATE INDEX emp_hired ON emp (hired, sal)",
        "CREATE VIEW rich AS SELECT ename, sal FROM emp WHERE sal > 5000",
        "CREATE SEQUENCE invoices",
    ] {
        sys.execute(sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
    }
}

#[test]
fn every_object_appears_once_tied_to_the_others_by_its_oid() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::create(dir.path(), Default::default()).unwrap();
    schema(&db);
    let s = db.session();
    let classes = rows(&s, "SELECT relname, relkind, relnatts FROM pg_catalog.pg_class ORDER BY relname");
    let names: Vec<&str> = classes.iter().map(|r| r[0].as_str()).collect();
    assert!(names.contains(&"emp") && names.contains(&"emp_pk") && names.contains(&"emp_hired"), "{names:?}");
    let kind = |name: &str| classes.iter().find(|r| r[0] == name).map(|r| (r[1].clone(), r[2].clone())).unwrap();
    assert_eq!(kind("emp"), ("r".into(), "6".into()));
    assert_eq!(kind("emp_hired"), ("i".into(), "2".into()));
    assert_eq!(kind("rich"), ("v".into(), "2".into()));
    assert_eq!(kind("invoices"), ("S".into(), "3".into()));
    // Every column belongs to a relation pg_class lists; no OID names two relations.
    assert_eq!(
        rows(
            &s,
            "SELECT COUNT(*) FROM pg_attribute a WHERE NOT EXISTS (SELECT 1 FROM pg_class c WHERE c.oid = a.attrelid)"
        ),
        strings(&[&["0"]])
    );
    assert_eq!(rows(&s, "SELECT COUNT(*) - COUNT(DISTINCT oid) FROM pg_class"), strings(&[&["0"]]));
    // Columns with their PostgreSQL types, NOT NULL and identity.
    assert_eq!(
        rows(
            &s,
            "SELECT a.attname, a.atttypid, a.atttypmod, a.attnotnull, a.attidentity FROM pg_attribute a \
             JOIN pg_class c ON c.oid = a.attrelid WHERE c.relname = 'emp' ORDER BY a.attnum"
        ),
        strings(&[
            &["empno", "1700", "-1", "t", "a"],
            &["ename", "1043", "14", "t", ""],
            &["sal", "1700", "458758", "f", ""],
            &["hired", "1114", "0", "f", ""],
            &["grade", "1042", "5", "f", ""],
            &["deptno", "20", "-1", "f", ""],
        ])
    );
    // Indexes: the key's column numbers, primary and unique as the constraints say.
    assert_eq!(
        rows(
            &s,
            "SELECT ic.relname, i.indkey, i.indisunique, i.indisprimary FROM pg_index i \
             JOIN pg_class ic ON ic.oid = i.indexrelid JOIN pg_class t ON t.oid = i.indrelid \
             WHERE t.relname = 'emp' ORDER BY ic.relname"
        ),
        strings(&[&["emp_hired", "4 3", "f", "f"], &["emp_name_uk", "2 6", "t", "f"], &["emp_pk", "1", "t", "t"],])
    );
    assert_eq!(
        rows(&s, "SELECT indexdef FROM pg_indexes WHERE indexname = 'emp_hired'"),
        strings(&[&["CREATE INDEX emp_hired ON public.emp USING btree (hired, sal)"]])
    );
    // Constraints as PostgreSQL writes them; the foreign key points at dept's key.
    assert_eq!(
        rows(
            &s,
            "SELECT k.conname, k.contype, k.conkey, k.confkey, k.confdeltype, k.condef FROM pg_constraint k \
             JOIN pg_class c ON c.oid = k.conrelid WHERE c.relname = 'emp' ORDER BY k.conname"
        ),
        strings(&[
            &["emp_dept_fk", "f", "{6}", "{1}", "c", "FOREIGN KEY (deptno) REFERENCES dept(deptno) ON DELETE CASCADE"],
            &["emp_name_uk", "u", "{2,6}", "", " ", "UNIQUE (ename, deptno)"],
            &["emp_pk", "p", "{1}", "", " ", "PRIMARY KEY (empno)"],
            &["emp_sal_ck", "c", "", "", " ", "CHECK (sal > 0)"],
        ])
    );
    assert_eq!(
        rows(
            &s,
            "SELECT COUNT(*) FROM pg_constraint k JOIN pg_class p ON p.oid = k.confrelid WHERE p.relname = 'dept'"
        ),
        strings(&[&["1"]])
    );
    // The identity column's sequence, as pg_get_serial_sequence finds it.
    let sequence = rows(
        &s,
        "SELECT s.relname FROM pg_depend d JOIN pg_class s ON s.oid = d.objid JOIN pg_class t ON t.oid = d.refobjid \
         WHERE t.relname = 'emp' AND d.refobjsubid = 1 AND d.deptype = 'i'",
    );
    assert!(sequence.len() == 1 && sequence[0][0].starts_with("iseq$$_"), "{sequence:?}");
    // The catalogs lioscope has nothing for are there, empty, for clients that join them.
    assert_eq!(rows(&s, "SELECT COUNT(*) FROM pg_catalog.pg_inherits"), strings(&[&["0"]]));
}

#[test]
fn information_schema_shows_a_user_what_it_may_use_and_pg_catalog_everything() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::create(dir.path(), Default::default()).unwrap();
    schema(&db);
    let sys = db.session();
    sys.execute("CREATE USER scott IDENTIFIED BY tiger").unwrap();
    sys.execute("GRANT CREATE SESSION TO scott").unwrap();
    let scott = db.session();
    scott.log_in_as("SCOTT").unwrap();
    let tables = "SELECT table_name, table_type FROM information_schema.tables ORDER BY table_name";
    assert!(rows(&scott, tables).is_empty(), "nothing granted, nothing shown");
    assert_eq!(rows(&scott, "SELECT COUNT(*) FROM pg_class WHERE relname = 'emp'"), strings(&[&["1"]]));
    sys.execute("GRANT SELECT ON emp TO scott").unwrap();
    sys.execute("GRANT SELECT ON rich TO scott").unwrap();
    assert_eq!(rows(&scott, tables), strings(&[&["emp", "BASE TABLE"], &["rich", "VIEW"]]));
    assert_eq!(
        rows(
            &scott,
            "SELECT column_name, data_type, character_maximum_length, numeric_precision, numeric_scale, \
             is_nullable, is_identity FROM information_schema.columns WHERE table_name = 'emp' ORDER BY ordinal_position"
        ),
        strings(&[
            &["empno", "numeric", "", "", "", "NO", "YES"],
            &["ename", "character varying", "10", "", "", "NO", "NO"],
            &["sal", "numeric", "", "7", "2", "YES", "NO"],
            &["hired", "timestamp without time zone", "", "", "", "YES", "NO"],
            &["grade", "character", "1", "", "", "YES", "NO"],
            &["deptno", "bigint", "", "64", "0", "YES", "NO"],
        ])
    );
    assert_eq!(
        rows(
            &scott,
            "SELECT constraint_name, column_name, ordinal_position FROM information_schema.key_column_usage \
             WHERE table_name = 'emp' ORDER BY constraint_name, ordinal_position"
        ),
        strings(&[
            &["emp_dept_fk", "deptno", "1"],
            &["emp_name_uk", "ename", "1"],
            &["emp_name_uk", "deptno", "2"],
            &["emp_pk", "empno", "1"],
        ])
    );
    // Users as PostgreSQL's roles: SYS the bootstrap superuser, SCOTT a user who may log in.
    assert_eq!(
        rows(&scott, "SELECT rolname, rolsuper, rolcanlogin FROM pg_roles WHERE rolcanlogin = 't' ORDER BY oid"),
        strings(&[&["sys", "t", "t"], &["scott", "f", "t"]])
    );
}
