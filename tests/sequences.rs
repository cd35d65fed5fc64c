//! Sequences through the public API: NEXTVAL and CURRVAL with Oracle's once-a-row rule,
//! in queries, INSERT (VALUES and SELECT) and UPDATE; the places Oracle refuses them;
//! CREATE, ALTER and DROP with their checks and `user_sequences`; sessions taking values
//! at once; and what a close and a crash do to a cache (a close skips nothing, a crash
//! skips what the cache held, neither ever gives a value twice), including a model-based
//! property test over random mixes of them; identity columns on top of them (ALWAYS, BY
//! DEFAULT, ON NULL) through INSERT, INSERT ... SELECT, COPY, UPDATE, a crash and DROP.

mod common;

use common::*;
use lioscope::Database;
use lioscope::io::{FaultIo, FaultPlan};
use proptest::prelude::*;
use std::collections::HashSet;

fn ints(s: &lioscope::Session, sql: &str) -> Vec<i64> {
    lines(s, sql).iter().map(|l| l.parse().unwrap_or_else(|_| panic!("{sql}: {l} is no number"))).collect()
}

#[test]
fn nextval_moves_on_once_a_row_and_currval_reads_the_rows_value() {
    let (_tmp, _dir, db) = db();
    let s = db.session();
    exec(&s, "CREATE SEQUENCE s START WITH 10 INCREMENT BY 5 CACHE 3");
    assert_eq!(lines(&s, "SELECT s.nextval, s.currval, s.NEXTVAL FROM dual"), ["10|10|10"]);
    assert_eq!(lines(&s, "SELECT s.currval FROM dual"), ["10"]);
    // A CURRVAL before the row's NEXTVAL, and a NEXTVAL in a CASE branch not taken, read
    // the row's new value: the sequence moves on once a row, before the row is made.
    assert_eq!(lines(&s, "SELECT s.currval, s.nextval FROM dual"), ["15|15"]);
    assert_eq!(lines(&s, "SELECT CASE WHEN 1 = 0 THEN s.nextval END, s.currval FROM dual"), ["|20"]);
    exec(&s, "ALTER SEQUENCE s RESTART START WITH 15");
    exec(&s, "CREATE TABLE t (id NUMBER, v VARCHAR2(10))");
    exec(&s, "INSERT INTO t VALUES (s.nextval, 'v' || s.currval)");
    exec(&s, "INSERT INTO t SELECT s.nextval, 'g' || LEVEL FROM dual CONNECT BY LEVEL <= 1000");
    assert_eq!(lines(&s, "SELECT COUNT(DISTINCT id), MIN(id), MAX(id) FROM t"), ["1001|15|5015"]);
    assert_eq!(lines(&s, "SELECT v FROM t WHERE id = 15"), ["v15"]);
    exec(&s, "UPDATE t SET v = 'u' || s.nextval, id = s.currval WHERE id > 5005");
    assert_eq!(lines(&s, "SELECT id, v FROM t WHERE id > 5005 ORDER BY id"), ["5020|u5020", "5025|u5025"]);
    // A query reads one value a row, also through a join and a filter.
    let taken = ints(&s, "SELECT s.nextval FROM t a JOIN t b ON a.id = b.id WHERE a.id <= 60");
    assert_eq!(taken, (0..10).map(|i| 5030 + 5 * i).collect::<Vec<_>>());
    // CURRVAL belongs to the session that took the value.
    let other = db.session();
    let message = error(&other, "SELECT s.currval FROM dual");
    assert!(message.contains("ORA-08002") && message.contains("S.CURRVAL"), "{message}");
    assert_eq!(lines(&other, "SELECT s.nextval FROM dual"), ["5080"]);
    assert_eq!(lines(&s, "SELECT s.currval FROM dual"), ["5075"]);
}

#[test]
fn sequence_numbers_are_refused_where_oracle_refuses_them() {
    let (_tmp, _dir, db) = db();
    let s = db.session();
    exec(&s, "CREATE SEQUENCE s");
    exec(&s, "CREATE TABLE t (id NUMBER)");
    exec(&s, "INSERT INTO t VALUES (1)");
    for sql in [
        "SELECT s.nextval FROM t ORDER BY 1",
        "SELECT DISTINCT s.nextval FROM t",
        "SELECT COUNT(s.nextval) FROM t",
        "SELECT s.nextval, COUNT(*) FROM t",
        "SELECT * FROM t WHERE id = s.currval",
        "SELECT (SELECT s.nextval FROM dual) FROM dual",
        "SELECT * FROM (SELECT s.nextval n FROM dual)",
        "SELECT s.nextval FROM dual UNION ALL SELECT 1 FROM dual",
        "CREATE VIEW v AS SELECT s.nextval n FROM dual",
        "DELETE FROM t WHERE id = s.nextval",
        "UPDATE t SET id = 1 WHERE id = s.nextval",
        "UPDATE t SET id = (SELECT s.nextval FROM dual)",
        "SELECT SUM(s.nextval) OVER () FROM t",
        "SELECT ROW_NUMBER() OVER (ORDER BY s.nextval) FROM t",
    ] {
        let message = error(&s, sql);
        assert!(message.contains("ORA-02287"), "{sql}: {message}");
    }
    assert!(error(&s, "SELECT nope.nextval FROM dual").contains("sequence NOPE (ORA-02289) does not exist"));
    // A column of that name is read, not a sequence.
    exec(&s, "CREATE TABLE q (nextval NUMBER)");
    exec(&s, "INSERT INTO q VALUES (7)");
    assert_eq!(lines(&s, "SELECT s.nextval FROM q s"), ["7"]);
    assert_eq!(int(&s, "SELECT last_number FROM user_sequences"), 1, "no refused statement took a value");
}

#[test]
fn ddl_checks_the_options_and_user_sequences_shows_them() {
    let (_tmp, _dir, db) = db();
    let s = db.session();
    exec(&s, "CREATE SEQUENCE up");
    exec(&s, "CREATE SEQUENCE down INCREMENT BY -2 MINVALUE -5 MAXVALUE 0 CYCLE CACHE 2 ORDER");
    assert_eq!(
        lines(&s, "SELECT * FROM user_sequences ORDER BY sequence_name"),
        ["DOWN|-5|0|-2|Y|Y|2|0", "UP|1|9999999999999999999999999999|1|N|N|20|1"]
    );
    // A descending cycle: 0, -2, -4, then from the top again.
    exec(&s, "CREATE TABLE t (id NUMBER)");
    exec(&s, "INSERT INTO t SELECT LEVEL FROM dual CONNECT BY LEVEL <= 7");
    assert_eq!(ints(&s, "SELECT down.nextval FROM t"), [0, -2, -4, 0, -2, -4, 0]);
    for (sql, code) in [
        ("CREATE SEQUENCE x INCREMENT BY 0", "ORA-04002"),
        ("CREATE SEQUENCE x MINVALUE 5 MAXVALUE 5", "ORA-04004"),
        ("CREATE SEQUENCE x MAXVALUE 10 INCREMENT BY 10", "ORA-04005"),
        ("CREATE SEQUENCE x START WITH 0", "ORA-04006"),
        ("CREATE SEQUENCE x MAXVALUE 5 START WITH 6", "ORA-04008"),
        ("CREATE SEQUENCE x CACHE 1", "ORA-04010"),
        ("CREATE SEQUENCE x MAXVALUE 5 CYCLE", "ORA-04013"),
        ("CREATE SEQUENCE x START WITH 99999999999999999999999999999", "at most 28 digits"),
        ("CREATE SEQUENCE x CACHE 5 NOCACHE", "duplicate or conflicting NOCACHE"),
        ("CREATE SEQUENCE x SCALE", "not supported"),
        ("CREATE SEQUENCE up", "sequence UP already exists"),
        ("CREATE TABLE up (a NUMBER)", "sequence UP already exists"),
        ("CREATE SEQUENCE t", "table T already exists"),
        ("CREATE SEQUENCE \"ISEQ$$_77\"", "identity columns' sequences"),
        ("ALTER SEQUENCE up START WITH 5", "ORA-02283"),
        ("ALTER SEQUENCE nope CACHE 5", "sequence NOPE (ORA-02289) does not exist"),
        ("DROP SEQUENCE nope", "sequence NOPE (ORA-02289) does not exist"),
    ] {
        let message = error(&s, sql);
        assert!(message.contains(code), "{sql}: {message}");
    }
    exec(&s, "DROP SEQUENCE IF EXISTS nope");
    exec(&s, "DROP SEQUENCE down");
    assert_eq!(lines(&s, "SELECT sequence_name FROM user_sequences"), ["UP"]);
}

#[test]
fn alter_goes_on_from_the_first_value_the_cache_had_not_given() {
    let (_tmp, _dir, db) = db();
    let s = db.session();
    exec(&s, "CREATE SEQUENCE s CACHE 10");
    exec(&s, "CREATE TABLE t (id NUMBER)");
    exec(&s, "INSERT INTO t SELECT LEVEL FROM dual CONNECT BY LEVEL <= 3");
    assert_eq!(ints(&s, "SELECT s.nextval FROM t"), [1, 2, 3]);
    assert_eq!(int(&s, "SELECT last_number FROM user_sequences"), 11);
    // As Oracle: a used sequence goes on from the value given last by the new increment.
    exec(&s, "ALTER SEQUENCE s INCREMENT BY 100 NOCACHE");
    assert_eq!(int(&s, "SELECT last_number FROM user_sequences"), 103);
    assert_eq!(ints(&s, "SELECT s.nextval FROM t"), [103, 203, 303]);
    // The reset trick: a negative increment, one NEXTVAL, the increment back.
    exec(&s, "ALTER SEQUENCE s INCREMENT BY -302");
    assert_eq!(lines(&s, "SELECT s.nextval FROM dual"), ["1"]);
    exec(&s, "ALTER SEQUENCE s INCREMENT BY 100");
    assert_eq!(ints(&s, "SELECT s.nextval FROM t"), [101, 201, 301]);
    let message = error(&s, "ALTER SEQUENCE s MAXVALUE 200");
    assert!(message.contains("ORA-04009"), "{message}");
    exec(&s, "ALTER SEQUENCE s RESTART START WITH 50 INCREMENT BY 1");
    assert_eq!(ints(&s, "SELECT s.nextval FROM t"), [50, 51, 52]);
    exec(&s, "ALTER SEQUENCE s MAXVALUE 53");
    assert_eq!(lines(&s, "SELECT s.nextval FROM dual"), ["53"]);
    let message = error(&s, "SELECT s.nextval FROM dual");
    assert!(message.contains("ORA-08004") && message.contains("exceeds MAXVALUE"), "{message}");
    exec(&s, "ALTER SEQUENCE s MINVALUE 40 CYCLE CACHE 3");
    assert_eq!(ints(&s, "SELECT s.nextval FROM t"), [40, 41, 42]);
}

#[test]
fn sessions_taking_values_at_once_never_share_one() {
    let (_tmp, _dir, db) = db();
    exec(&db.session(), "CREATE SEQUENCE s CACHE 7");
    let taken: Vec<Vec<i64>> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..4)
            .map(|_| {
                scope.spawn(|| {
                    let s = db.session();
                    (0..150).map(|_| int(&s, "SELECT s.nextval FROM dual")).collect::<Vec<i64>>()
                })
            })
            .collect();
        workers.into_iter().map(|w| w.join().unwrap()).collect()
    });
    for values in &taken {
        assert!(values.windows(2).all(|w| w[0] < w[1]), "one session's values go up");
    }
    let all: HashSet<i64> = taken.iter().flatten().copied().collect();
    assert_eq!(all, (1..=600).collect::<HashSet<i64>>(), "600 values, each once, none skipped");
}

#[test]
fn a_close_skips_nothing_and_a_crash_skips_only_what_the_cache_held() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let options = options(8192, "4M");
    {
        let db = create(&dir, options.clone());
        let s = db.session();
        exec(&s, "CREATE SEQUENCE cached CACHE 20");
        exec(&s, "CREATE SEQUENCE nocache NOCACHE");
        exec(&s, "CREATE TABLE t (id NUMBER, n NUMBER)");
        exec(&s, "INSERT INTO t SELECT cached.nextval, nocache.nextval FROM dual CONNECT BY LEVEL <= 5");
    }
    let db = open(&dir, options.clone());
    let s = db.session();
    assert_eq!(lines(&s, "SELECT cached.nextval, nocache.nextval FROM dual"), ["6|6"], "a close skips nothing");
    drop((s, db));
    // The close wrote 7 back as the first value no cache took. Committed rows take
    // values 7..=11 before the crash, uncommitted ones 12..=14; the refill at 7 took
    // values up to 26.
    let db = crash_after(&dir, options.clone(), 7, |db| {
        let s = db.session();
        exec(&s, "INSERT INTO t SELECT cached.nextval, nocache.nextval FROM dual CONNECT BY LEVEL <= 5");
        manual(&s);
        exec(&s, "INSERT INTO t SELECT cached.nextval, nocache.nextval FROM dual CONNECT BY LEVEL <= 3");
    });
    let s = db.session();
    assert_eq!(lines(&s, "SELECT MAX(id), MAX(n), COUNT(*) FROM t"), ["11|11|10"]);
    assert_eq!(
        lines(&s, "SELECT cached.nextval, nocache.nextval FROM dual"),
        ["27|15"],
        "the crash skipped what the cache held; NOCACHE skipped only the values taken"
    );
}

/// One step of the model-based test.
#[derive(Debug, Clone)]
enum Step {
    /// NEXTVAL `rows` times in session 0 or 1.
    Take { session: usize, rows: u32 },
    /// ALTER SEQUENCE ... CACHE n (0: NOCACHE).
    Cache(u32),
    /// A clean close and open.
    Reopen,
    /// A power cut while the cache holds values, and an open (after recovery).
    Crash(u64),
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        4 => (0..2usize, 1..30u32).prop_map(|(session, rows)| Step::Take { session, rows }),
        1 => prop_oneof![Just(0u32), 2..12u32].prop_map(Step::Cache),
        1 => Just(Step::Reopen),
        1 => any::<u64>().prop_map(Step::Crash),
    ]
}

/// The database in `dir` opened over a fault-injecting I/O layer, which can cut its power.
fn open_faulty(dir: &std::path::Path, options: &lioscope::DatabaseOptions) -> (Database, std::sync::Arc<FaultIo>) {
    let io = FaultIo::new(FaultPlan::default());
    let db = Database::open(dir, lioscope::DatabaseOptions { io: Some(io.clone()), ..options.clone() }).unwrap();
    (db, io)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases_or(12), ..ProptestConfig::default() })]

    /// Whatever mix of NEXTVAL in two sessions, ALTERs of the cache, closes and crashes:
    /// every value is greater than every value before it, and only a crash skips values
    /// (NEXTVAL then goes on within one cache of where it was).
    #[test]
    fn values_only_go_up_and_only_a_crash_skips_any(steps in prop::collection::vec(step(), 1..10)) {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("db");
        let options = options(8192, "4M");
        drop(create(&dir, options.clone()));
        let (mut db, mut io) = open_faulty(&dir, &options);
        exec(&db.session(), "CREATE SEQUENCE s CACHE 5");
        exec(&db.session(), "CREATE TABLE g (n NUMBER)");
        exec(&db.session(), "INSERT INTO g SELECT LEVEL FROM dual CONNECT BY LEVEL <= 30");
        // The last value given, the largest cache a refill may have taken since, and
        // whether a crash came after it.
        let (mut last, mut cache, mut crashed) = (0i64, 5i64, false);
        for step in steps {
            match step {
                Step::Take { session, rows } => {
                    let sessions = [db.session(), db.session()];
                    let taken = ints(&sessions[session], &format!("SELECT s.nextval FROM g WHERE n <= {rows}"));
                    prop_assert_eq!(taken.len(), rows as usize);
                    let first = taken[0];
                    if crashed {
                        prop_assert!(first > last && first <= last + cache.max(1) + 1, "after a crash {} follows {}", first, last);
                    } else {
                        prop_assert_eq!(first, last + 1, "no value skipped without a crash");
                    }
                    prop_assert!(taken.windows(2).all(|w| w[1] == w[0] + 1));
                    last = *taken.last().unwrap();
                    crashed = false;
                }
                Step::Cache(n) => {
                    let clause = if n == 0 { "NOCACHE".to_owned() } else { format!("CACHE {n}") };
                    exec(&db.session(), &format!("ALTER SEQUENCE s {clause}"));
                    cache = cache.max(i64::from(n));
                }
                Step::Reopen => {
                    drop(db);
                    (db, io) = open_faulty(&dir, &options);
                }
                Step::Crash(seed) => {
                    io.cut_power();
                    drop(db);
                    io.power_loss(seed).unwrap();
                    (db, io) = open_faulty(&dir, &options);
                    crashed = true;
                }
            }
        }
    }
}

#[test]
fn a_crash_never_repeats_a_value_a_session_was_given() {
    // Values handed out (not committed anywhere) before a crash are never given again.
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let options = options(8192, "4M");
    drop(create(&dir, options.clone()));
    let mut given = Vec::new();
    for round in 0..5u64 {
        let db = crash_after(&dir, options.clone(), round, |db| {
            let s = db.session();
            if round == 0 {
                exec(&s, "CREATE SEQUENCE s CACHE 4");
            }
            for _ in 0..3 {
                given.push(int(&s, "SELECT s.nextval FROM dual"));
            }
        });
        drop(db);
    }
    let distinct: HashSet<i64> = given.iter().copied().collect();
    assert_eq!(distinct.len(), given.len(), "{given:?}");
    assert!(given.windows(2).all(|w| w[0] < w[1]), "{given:?}");
    let _ = Database::open(&dir, options).unwrap();
}

#[test]
fn identity_columns_take_their_sequences_values_where_a_statement_leaves_them_none() {
    let (_tmp, dir, db) = db();
    let s = db.session();
    exec(&s, "CREATE TABLE a (id NUMBER GENERATED AS IDENTITY, v VARCHAR2(10))");
    exec(
        &s,
        "CREATE TABLE b (id NUMBER GENERATED BY DEFAULT AS IDENTITY (START WITH 100 INCREMENT BY 10 NOCACHE), \
         v VARCHAR2(10), CONSTRAINT b_pk PRIMARY KEY (id))",
    );
    exec(&s, "CREATE TABLE c (v VARCHAR2(10), id INTEGER GENERATED BY DEFAULT ON NULL AS IDENTITY (CACHE 5))");
    // ALWAYS: every row gets the next value, however the rows come.
    exec(&s, "INSERT INTO a (v) VALUES ('x')");
    exec(&s, "INSERT INTO a (v) SELECT 'g' || LEVEL FROM dual CONNECT BY LEVEL <= 3");
    exec(&s, "INSERT INTO a (v) SELECT DISTINCT v FROM a WHERE v <> 'x'");
    let csv = dir.join("a.csv");
    std::fs::write(&csv, "c1\nc2\n").unwrap();
    exec(&s, &format!("COPY a (v) FROM '{}'", csv.display()));
    assert_eq!(lines(&s, "SELECT COUNT(*), COUNT(DISTINCT id), MIN(id), MAX(id) FROM a"), ["9|9|1|9"]);
    assert_eq!(lines(&s, "SELECT v FROM a WHERE id IN (1, 8, 9) ORDER BY id"), ["x", "c1", "c2"]);
    for (sql, code) in [
        ("INSERT INTO a VALUES (50, 'no')", "ORA-32795"),
        ("INSERT INTO a (id, v) SELECT 50, 'no' FROM dual", "ORA-32795"),
        ("UPDATE a SET id = 7", "ORA-32796"),
        ("INSERT INTO b VALUES (NULL, 'null')", "ORA-01400"),
        ("CREATE TABLE d (id VARCHAR2(5) GENERATED ALWAYS AS IDENTITY)", "ORA-30675"),
        ("CREATE TABLE e (x NUMBER GENERATED AS IDENTITY, y NUMBER GENERATED AS IDENTITY)", "ORA-30669"),
        ("CREATE TABLE f (x NUMBER GENERATED AS IDENTITY (CACHE 1))", "ORA-04010"),
        ("CREATE TABLE f (x NUMBER GENERATED AS IDENTITY (WIBBLE))", "WIBBLE is not an option of an identity column"),
        ("DROP SEQUENCE \"ISEQ$$_1000\"", "ORA-32794"),
        ("ALTER SEQUENCE \"ISEQ$$_1000\" CACHE 5", "ORA-32793"),
        ("ALTER TABLE a DROP CONSTRAINT SYS_C0001001", "ORA-30671"),
    ] {
        let message = error(&s, sql);
        assert!(message.contains(code), "{sql}: {message}");
    }
    // BY DEFAULT: a value given is kept; ON NULL: a NULL given is replaced.
    exec(&s, "INSERT INTO b (v) VALUES ('x')");
    exec(&s, "INSERT INTO b VALUES (1, 'mine')");
    exec(&s, "INSERT INTO b (v) VALUES ('y')");
    exec(&s, "UPDATE b SET id = 2 WHERE id = 1");
    assert_eq!(lines(&s, "SELECT id, v FROM b ORDER BY id"), ["2|mine", "100|x", "110|y"]);
    exec(&s, "INSERT INTO c VALUES ('n', NULL)");
    exec(&s, "INSERT INTO c VALUES ('m', 42)");
    exec(&s, "INSERT INTO c (v) VALUES ('o')");
    assert_eq!(lines(&s, "SELECT v, id FROM c ORDER BY id"), ["n|1", "o|2", "m|42"]);
    assert_eq!(
        lines(
            &s,
            "SELECT table_name, column_name, generation_type, sequence_name, default_on_null FROM user_tab_identity_cols ORDER BY 1"
        ),
        ["A|ID|ALWAYS|ISEQ$$_1000|NO", "B|ID|BY DEFAULT|ISEQ$$_1002|NO", "C|ID|BY DEFAULT|ISEQ$$_1005|YES"]
    );
    assert_eq!(
        lines(
            &s,
            "SELECT table_name, nullable, identity_column FROM user_tab_columns WHERE column_name = 'ID' ORDER BY 1"
        ),
        ["A|N|YES", "B|N|YES", "C|N|YES"]
    );
    // The sequence goes with its table.
    exec(&s, "DROP TABLE a");
    assert_eq!(lines(&s, "SELECT sequence_name FROM user_sequences ORDER BY 1"), ["ISEQ$$_1002", "ISEQ$$_1005"]);
}

#[test]
fn an_identity_column_survives_a_crash_and_never_repeats_a_value() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let options = options(8192, "4M");
    {
        let db = create(&dir, options.clone());
        exec(&db.session(), "CREATE TABLE t (id NUMBER GENERATED AS IDENTITY PRIMARY KEY, v NUMBER)");
    }
    for round in 0..3u64 {
        let db = crash_after(&dir, options.clone(), round, |db| {
            let s = db.session();
            exec(&s, "INSERT INTO t (v) SELECT LEVEL FROM dual CONNECT BY LEVEL <= 30");
            manual(&s);
            exec(&s, "INSERT INTO t (v) SELECT LEVEL FROM dual CONNECT BY LEVEL <= 7");
        });
        let s = db.session();
        assert_eq!(int(&s, "SELECT COUNT(*) FROM t"), 30 * (round as i64 + 1), "only committed rows");
        assert_eq!(int(&s, "SELECT COUNT(DISTINCT id) FROM t"), 30 * (round as i64 + 1));
    }
    let db = open(&dir, options);
    let s = db.session();
    exec(&s, "INSERT INTO t (v) VALUES (0)");
    let newest = int(&s, "SELECT MAX(id) FROM t");
    assert_eq!(int(&s, "SELECT COUNT(*) FROM t WHERE id = (SELECT MAX(id) FROM t)"), 1);
    assert!(newest > 90, "after crashes the identity goes on past every value taken: {newest}");
}
