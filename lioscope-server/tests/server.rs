//! The server through a PostgreSQL driver (the `postgres` crate), as a Rust program
//! connects to it: types both ways, prepared statements, portals, errors with their
//! SQLSTATE, transaction blocks, cancel and statement timeouts, the connection limit,
//! and what `v$session` shows of each client.

use chrono::NaiveDateTime;
use lioscope::{Database, DatabaseOptions};
use lioscope_server::{Server, ServerOptions};
use postgres::error::SqlState;
use postgres::{Client, NoTls};
use rust_decimal::Decimal;
use std::str::FromStr;
use std::time::{Duration, Instant};

/// A server on a free loopback port over a new database, and the database's directory.
/// Clients log in with SCRAM-SHA-256 as SCOTT, a DBA.
fn server(max_connections: usize) -> (Server, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::create(dir.path(), DatabaseOptions::default()).unwrap();
    db.session().execute("CREATE USER scott IDENTIFIED BY tiger").unwrap();
    db.session().execute("GRANT DBA TO scott").unwrap();
    let options = ServerOptions { listen: "127.0.0.1:0".parse().unwrap(), max_connections, ..Default::default() };
    (Server::start(db, options).unwrap(), dir)
}

fn connect(server: &Server, application: &str) -> Client {
    let addr = server.local_addr();
    let config = format!(
        "host=127.0.0.1 port={} user=scott password=tiger dbname=lab application_name={application}",
        addr.port()
    );
    Client::connect(&config, NoTls).unwrap()
}

fn code(error: &postgres::Error) -> SqlState {
    error.code().cloned().unwrap_or_else(|| panic!("no SQLSTATE in {error}"))
}

#[test]
fn every_type_goes_both_ways_through_prepared_statements() {
    let (server, _dir) = server(10);
    let mut c = connect(&server, "types");
    c.batch_execute(
        "CREATE TABLE t (id NUMBER(10), amount NUMBER(12,2), big INTEGER, name VARCHAR2(20), code CHAR(3), \
         born DATE, seen TIMESTAMP)",
    )
    .unwrap();
    let at = NaiveDateTime::parse_from_str("2026-12-02 05:44:15.25", "%Y-%m-%d %H:%M:%S%.f").unwrap();
    let day = NaiveDateTime::parse_from_str("1999-12-31 23:59:59", "%Y-%m-%d %H:%M:%S").unwrap();
    let insert = c.prepare("INSERT INTO t VALUES ($1, $2, $3, $4, $5, $6, $7)").unwrap();
    let amount = Decimal::from_str("-12345.67").unwrap();
    let big = Decimal::from_str("1234567890123456789012345").unwrap();
    let inserted = c.execute(&insert, &[&7i64, &amount, &big, &"seven", &"ab", &day, &at]).unwrap();
    assert_eq!(inserted, 1);
    c.execute(
        &insert,
        &[
            &8i64,
            &None::<Decimal>,
            &None::<Decimal>,
            &None::<&str>,
            &None::<&str>,
            &None::<NaiveDateTime>,
            &None::<NaiveDateTime>,
        ],
    )
    .unwrap();

    let rows = c.query("SELECT id, amount, big, name, code, born, seen FROM t WHERE id = $1", &[&7i64]).unwrap();
    assert_eq!(rows.len(), 1);
    let row = &rows[0];
    assert_eq!(row.get::<_, i64>(0), 7);
    assert_eq!(row.get::<_, Decimal>(1), amount);
    assert_eq!(row.get::<_, Decimal>(2), big);
    assert_eq!(row.get::<_, String>(3), "seven");
    assert_eq!(row.get::<_, String>(4), "ab ", "CHAR(3) is blank-padded");
    assert_eq!(row.get::<_, NaiveDateTime>(5), day);
    assert_eq!(row.get::<_, NaiveDateTime>(6), at);
    let nulls = c.query_one("SELECT amount, name, seen FROM t WHERE id = 8", &[]).unwrap();
    assert_eq!(nulls.get::<_, Option<Decimal>>(0), None);
    assert_eq!(nulls.get::<_, Option<String>>(1), None);
    assert_eq!(nulls.get::<_, Option<NaiveDateTime>>(2), None);

    // The simple protocol: every value as text.
    let messages = c.simple_query("SELECT id, amount, born FROM t WHERE id = 7").unwrap();
    let postgres::SimpleQueryMessage::Row(row) = &messages[1] else { panic!("{messages:?}") };
    assert_eq!((row.get(0), row.get(1), row.get(2)), (Some("7"), Some("-12345.67"), Some("1999-12-31 23:59:59")));
}

#[test]
fn a_prepared_statement_is_parsed_once_and_run_many_times() {
    let (server, _dir) = server(10);
    let mut c = connect(&server, "parse-once");
    c.batch_execute("CREATE TABLE t (id NUMBER(10) PRIMARY KEY, v NUMBER(10))").unwrap();
    c.batch_execute("INSERT INTO t SELECT LEVEL, LEVEL * 10 FROM dual CONNECT BY LEVEL <= 100").unwrap();
    let hard = |c: &mut Client| -> i64 {
        let row = c
            .query_one("SELECT m.value FROM v$mystat m JOIN v$statname n ON n.statistic# = m.statistic# WHERE n.name = 'parse count (hard)'", &[])
            .unwrap();
        // A v$ view's column is described with the type of the values it holds.
        i64::try_from(row.get::<_, Decimal>(0)).unwrap()
    };
    let select = c.prepare("SELECT v FROM t WHERE id = $1").unwrap();
    let before = hard(&mut c);
    for id in 1..=50i64 {
        let row = c.query_one(&select, &[&id]).unwrap();
        assert_eq!(row.get::<_, i64>(0), id * 10);
    }
    let parsed = hard(&mut c) - before;
    // One plan for the fifty executions (the count query itself reads a v$ view: planned each time).
    assert!(parsed <= 2, "{parsed} hard parses for 50 executions of one prepared statement");
}

#[test]
fn a_portal_hands_rows_over_in_the_batches_asked_for() {
    let (server, _dir) = server(10);
    let mut c = connect(&server, "portal");
    c.batch_execute("CREATE TABLE t (id NUMBER(10))").unwrap();
    c.batch_execute("INSERT INTO t SELECT LEVEL FROM dual CONNECT BY LEVEL <= 10").unwrap();
    let mut tx = c.transaction().unwrap();
    let portal = tx.bind("SELECT id FROM t ORDER BY id", &[]).unwrap();
    let mut seen = Vec::new();
    loop {
        let batch = tx.query_portal(&portal, 3).unwrap();
        assert!(batch.len() <= 3);
        if batch.is_empty() {
            break;
        }
        seen.extend(batch.iter().map(|r| r.get::<_, i64>(0)));
    }
    assert_eq!(seen, (1..=10).collect::<Vec<i64>>());
    tx.commit().unwrap();
}

#[test]
fn errors_carry_oracle_numbers_and_the_sqlstate_drivers_act_on() {
    let (server, _dir) = server(10);
    let mut c = connect(&server, "errors");
    let e = c.simple_query("SELECT * FROM no_such_table").unwrap_err();
    assert_eq!(code(&e), SqlState::UNDEFINED_TABLE);
    assert!(e.as_db_error().unwrap().message().starts_with("ORA-00942"), "{e}");
    assert_eq!(code(&c.simple_query("SELEC 1 FROM dual").unwrap_err()), SqlState::SYNTAX_ERROR);
    c.batch_execute("CREATE TABLE t (id NUMBER(10) PRIMARY KEY)").unwrap();
    c.batch_execute("INSERT INTO t VALUES (1)").unwrap();
    let e = c.execute("INSERT INTO t VALUES ($1)", &[&1i64]).unwrap_err();
    assert_eq!(code(&e), SqlState::UNIQUE_VIOLATION);
    assert!(e.as_db_error().unwrap().message().starts_with("ORA-00001"), "{e}");
    // The connection goes on after errors in either protocol.
    assert_eq!(c.query_one("SELECT COUNT(*) FROM t", &[]).unwrap().get::<_, Decimal>(0), Decimal::ONE);
}

/// A server, two clients "a" and "b" of it, and table `t` holding the row (1, 0).
fn two_clients_on_one_row() -> (Server, tempfile::TempDir, Client, Client) {
    let (server, dir) = server(10);
    let mut a = connect(&server, "a");
    let b = connect(&server, "b");
    a.batch_execute("CREATE TABLE t (id NUMBER(10) PRIMARY KEY, v NUMBER(10)); INSERT INTO t VALUES (1, 0)").unwrap();
    (server, dir, a, b)
}

#[test]
fn a_serialization_failure_is_40001_for_the_driver_to_retry() {
    let (_server, _dir, mut a, mut b) = two_clients_on_one_row();
    a.batch_execute("BEGIN ISOLATION LEVEL REPEATABLE READ").unwrap();
    assert_eq!(a.query_one("SELECT v FROM t WHERE id = 1", &[]).unwrap().get::<_, i64>(0), 0);
    b.batch_execute("UPDATE t SET v = 1 WHERE id = 1").unwrap();
    let e = a.batch_execute("UPDATE t SET v = 2 WHERE id = 1").unwrap_err();
    assert_eq!(code(&e), SqlState::T_R_SERIALIZATION_FAILURE, "{e}");
    a.batch_execute("ROLLBACK").unwrap();
}

/// A BEGIN takes the isolation `default_transaction_isolation` names at that moment:
/// a block after a serializable one reads committed again, each statement seeing what
/// others committed before it, and one under the serializable default does not.
#[test]
fn each_block_reads_as_the_default_isolation_names_at_its_begin() {
    let (_server, _dir, mut a, mut b) = two_clients_on_one_row();
    let v = |c: &mut Client| -> i64 { c.query_one("SELECT v FROM t WHERE id = 1", &[]).unwrap().get(0) };
    for (round, default) in ["read committed", "serializable", "read committed", "read committed"].iter().enumerate() {
        a.batch_execute(&format!("SET default_transaction_isolation = '{default}'")).unwrap();
        a.batch_execute("BEGIN").unwrap();
        let before = v(&mut a);
        b.batch_execute(&format!("UPDATE t SET v = {} WHERE id = 1", round + 1)).unwrap();
        let after = v(&mut a);
        a.batch_execute("COMMIT").unwrap();
        let expected = if *default == "serializable" { before } else { round as i64 + 1 };
        assert_eq!(after, expected, "round {round}, {default}: read {after} after {before}");
    }
}

#[test]
fn transaction_blocks_behave_as_postgresql_clients_expect() {
    let (server, _dir) = server(10);
    let mut a = connect(&server, "a");
    let mut b = connect(&server, "b");
    a.batch_execute("CREATE TABLE t (id NUMBER(10) PRIMARY KEY)").unwrap();
    let count = |c: &mut Client| -> i64 {
        c.query_one("SELECT COUNT(*) FROM t", &[]).unwrap().get::<_, Decimal>(0).try_into().unwrap()
    };

    // Outside a block each statement commits.
    a.batch_execute("INSERT INTO t VALUES (1)").unwrap();
    assert_eq!(count(&mut b), 1);

    // Inside one, nothing is seen until COMMIT; ROLLBACK undoes.
    a.batch_execute("BEGIN; INSERT INTO t VALUES (2)").unwrap();
    assert_eq!(count(&mut b), 1);
    a.batch_execute("COMMIT").unwrap();
    assert_eq!(count(&mut b), 2);
    a.batch_execute("START TRANSACTION; INSERT INTO t VALUES (3); ROLLBACK").unwrap();
    assert_eq!(count(&mut b), 2);

    // An error aborts the block: later statements fail until it ends, COMMIT rolls back.
    a.batch_execute("BEGIN; INSERT INTO t VALUES (4)").unwrap();
    assert_eq!(code(&a.batch_execute("INSERT INTO t VALUES (1)").unwrap_err()), SqlState::UNIQUE_VIOLATION);
    let e = a.batch_execute("INSERT INTO t VALUES (5)").unwrap_err();
    assert_eq!(code(&e), SqlState::IN_FAILED_SQL_TRANSACTION);
    a.batch_execute("END").unwrap();
    assert_eq!(count(&mut b), 2, "COMMIT of an aborted block rolled it back");

    // A savepoint takes the block back from its error.
    a.batch_execute("BEGIN; INSERT INTO t VALUES (6); SAVEPOINT s").unwrap();
    assert!(a.batch_execute("INSERT INTO t VALUES (6)").is_err());
    a.batch_execute("ROLLBACK TO SAVEPOINT s; INSERT INTO t VALUES (7); COMMIT").unwrap();
    assert_eq!(count(&mut b), 4);

    // The driver's own transaction API.
    let mut tx = a.transaction().unwrap();
    tx.execute("INSERT INTO t VALUES ($1)", &[&8i64]).unwrap();
    tx.rollback().unwrap();
    assert_eq!(count(&mut b), 4);
}

#[test]
fn a_connection_that_drops_rolls_its_transaction_back_at_once() {
    let (server, _dir) = server(10);
    let mut a = connect(&server, "a");
    a.batch_execute("CREATE TABLE t (id NUMBER(10) PRIMARY KEY, v NUMBER(10)); INSERT INTO t VALUES (1, 0)").unwrap();
    a.batch_execute("BEGIN; UPDATE t SET v = 99 WHERE id = 1").unwrap();
    drop(a);
    // The row lock is released: another client updates the row without waiting long.
    let mut b = connect(&server, "b");
    b.batch_execute("SET statement_timeout = '5s'").unwrap();
    b.batch_execute("UPDATE t SET v = v + 1 WHERE id = 1").unwrap();
    assert_eq!(b.query_one("SELECT v FROM t", &[]).unwrap().get::<_, i64>(0), 1);
}

#[test]
fn a_cancel_request_stops_a_running_statement_with_ora_01013() {
    let (server, _dir) = server(10);
    let mut a = connect(&server, "runner");
    let token = a.cancel_token();
    let canceller = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(300));
        token.cancel_query(NoTls).unwrap();
    });
    let started = Instant::now();
    let e = a.simple_query("SELECT COUNT(*) FROM dual CONNECT BY LEVEL <= 100000000000").unwrap_err();
    canceller.join().unwrap();
    assert_eq!(code(&e), SqlState::QUERY_CANCELED, "{e}");
    assert!(e.as_db_error().unwrap().message().starts_with("ORA-01013"), "{e}");
    assert!(started.elapsed() < Duration::from_secs(30));
    // The connection goes on.
    assert_eq!(a.query_one("SELECT 1 FROM dual", &[]).unwrap().get::<_, Decimal>(0), Decimal::ONE);
}

#[test]
fn a_lock_timeout_ends_a_row_lock_wait_and_only_that() {
    let (server, _dir) = server(10);
    let mut a = connect(&server, "a");
    let mut b = connect(&server, "b");
    b.batch_execute("CREATE TABLE t (id NUMBER(10) PRIMARY KEY, v NUMBER(10)); INSERT INTO t VALUES (1, 0)").unwrap();
    b.batch_execute("INSERT INTO t VALUES (2, 0)").unwrap();
    b.batch_execute("BEGIN; UPDATE t SET v = 1 WHERE id = 1").unwrap();
    a.batch_execute("SET lock_timeout = '200ms'").unwrap();
    a.batch_execute("BEGIN; UPDATE t SET v = 2 WHERE id = 2").unwrap();
    let started = Instant::now();
    let e = a.execute("UPDATE t SET v = 2 WHERE id = $1", &[&1i64]).unwrap_err();
    assert_eq!(code(&e), SqlState::LOCK_NOT_AVAILABLE, "{e}");
    assert!(e.as_db_error().unwrap().message().starts_with("ORA-30006"), "{e}");
    assert!(started.elapsed() >= Duration::from_millis(200), "gave up before the limit");
    // As in PostgreSQL, the error aborts the block; its first update is rolled back.
    a.batch_execute("ROLLBACK").unwrap();
    b.batch_execute("COMMIT").unwrap();
    let values: Vec<i64> = a.query("SELECT v FROM t ORDER BY id", &[]).unwrap().iter().map(|r| r.get(0)).collect();
    assert_eq!(values, [1, 0]);
    // Back to no limit: a wait lasts until the holder ends.
    a.batch_execute("RESET lock_timeout").unwrap();
    b.batch_execute("BEGIN; UPDATE t SET v = 3 WHERE id = 1").unwrap();
    let releaser = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(400));
        b.batch_execute("COMMIT").unwrap();
    });
    a.execute("UPDATE t SET v = 4 WHERE id = $1", &[&1i64]).unwrap();
    releaser.join().unwrap();
}

#[test]
fn a_statement_timeout_interrupts_a_long_query_and_a_row_lock_wait() {
    let (server, _dir) = server(10);
    let mut a = connect(&server, "a");
    let mut b = connect(&server, "b");
    a.batch_execute("SET statement_timeout = 200").unwrap();
    let e = a.simple_query("SELECT COUNT(*) FROM dual CONNECT BY LEVEL <= 100000000000").unwrap_err();
    assert_eq!(code(&e), SqlState::QUERY_CANCELED, "{e}");
    assert!(e.as_db_error().unwrap().message().contains("statement timeout"), "{e}");
    // A timeout shorter than the start of the statement's call still stops it.
    a.batch_execute("SET statement_timeout = 1").unwrap();
    for _ in 0..20 {
        let e = a.simple_query("SELECT COUNT(*) FROM dual CONNECT BY LEVEL <= 100000000000").unwrap_err();
        assert_eq!(code(&e), SqlState::QUERY_CANCELED, "{e}");
    }
    a.batch_execute("SET statement_timeout = 200").unwrap();

    b.batch_execute("CREATE TABLE t (id NUMBER(10) PRIMARY KEY, v NUMBER(10)); INSERT INTO t VALUES (1, 0)").unwrap();
    b.batch_execute("BEGIN; UPDATE t SET v = 1 WHERE id = 1").unwrap();
    let e = a.execute("UPDATE t SET v = 2 WHERE id = $1", &[&1i64]).unwrap_err();
    assert_eq!(code(&e), SqlState::QUERY_CANCELED, "{e}");
    b.batch_execute("COMMIT").unwrap();
    a.batch_execute("SET statement_timeout = 0").unwrap();
    assert_eq!(a.query_one("SELECT v FROM t", &[]).unwrap().get::<_, i64>(0), 1);
}

#[test]
fn connections_past_the_limit_are_refused_with_53300() {
    let (server, _dir) = server(2);
    let _a = connect(&server, "a");
    let b = connect(&server, "b");
    let addr = server.local_addr();
    let config = format!("host=127.0.0.1 port={} user=scott password=tiger dbname=lab", addr.port());
    let Err(e) = Client::connect(&config, NoTls) else { panic!("a third connection was let in") };
    assert_eq!(code(&e), SqlState::TOO_MANY_CONNECTIONS, "{e}");
    drop(b);
    // A place freed is taken again.
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        match Client::connect(&config, NoTls) {
            Ok(_) => break,
            Err(e) if Instant::now() < deadline && e.code() == Some(&SqlState::TOO_MANY_CONNECTIONS) => {
                std::thread::sleep(Duration::from_millis(20))
            }
            Err(e) => panic!("{e}"),
        }
    }
}

#[test]
fn each_client_is_a_session_named_in_v_session() {
    let (server, _dir) = server(10);
    let mut a = connect(&server, "billing");
    let _b = connect(&server, "reports");
    let rows =
        a.query("SELECT program, username, machine FROM v$session WHERE type = 'USER' ORDER BY program", &[]).unwrap();
    let seen: Vec<(String, String, String)> = rows.iter().map(|r| (r.get(0), r.get(1), r.get(2))).collect();
    assert_eq!(
        seen,
        [
            ("billing".to_string(), "SCOTT".to_string(), "127.0.0.1".to_string()),
            ("reports".to_string(), "SCOTT".to_string(), "127.0.0.1".to_string())
        ]
    );
    a.batch_execute("SET application_name = 'renamed'").unwrap();
    let row = a.query_one("SELECT program FROM v$session WHERE sid = (SELECT MAX(sid) FROM v$mystat)", &[]).unwrap();
    assert_eq!(row.get::<_, String>(0), "renamed");
    assert_eq!(server.connections(), 2);
}

#[test]
fn settings_and_version_answer_as_clients_read_them() {
    let (server, _dir) = server(10);
    let mut c = connect(&server, "settings");
    let row = c.query_one("SELECT version()", &[]).unwrap();
    assert!(row.get::<_, String>(0).starts_with("PostgreSQL 16.0 (lioscope"));
    c.batch_execute("SET DateStyle TO 'ISO, DMY'").unwrap();
    let row = c.query_one("SHOW datestyle", &[]).unwrap();
    assert_eq!(row.get::<_, String>(0), "ISO, DMY");
    let e = c.batch_execute("SET no_such_setting = 1").unwrap_err();
    assert_eq!(code(&e), SqlState::UNDEFINED_OBJECT);
}

#[test]
fn copy_from_stdin_loads_text_and_csv_rows() {
    use std::io::Write;
    let (server, _dir) = server(10);
    let mut c = connect(&server, "copy");
    c.batch_execute("CREATE TABLE t (id NUMBER(10) PRIMARY KEY, name VARCHAR2(10))").unwrap();
    let mut writer = c.copy_in("COPY t FROM STDIN").unwrap();
    writer.write_all(b"1\tone\n2\t\\N\n").unwrap();
    writer.write_all(b"3\tthree\n").unwrap();
    assert_eq!(writer.finish().unwrap(), 3);
    let mut writer = c.copy_in("COPY t (name, id) FROM STDIN WITH (FORMAT csv, HEADER true)").unwrap();
    writer.write_all(b"name,id\nfour,4\n,5\n").unwrap();
    assert_eq!(writer.finish().unwrap(), 2);
    let rows = c.query("SELECT id, name FROM t ORDER BY id", &[]).unwrap();
    let seen: Vec<(i64, Option<String>)> = rows.iter().map(|r| (r.get(0), r.get(1))).collect();
    assert_eq!(
        seen,
        [(1, Some("one".into())), (2, None), (3, Some("three".into())), (4, Some("four".into())), (5, None)]
    );
    // A COPY that fails loads nothing, and the connection goes on.
    let mut writer = c.copy_in("COPY t FROM STDIN").unwrap();
    writer.write_all(b"6\tsix\n1\tduplicate\n").unwrap();
    let e = writer.finish().unwrap_err();
    assert_eq!(code(&e), SqlState::UNIQUE_VIOLATION, "{e}");
    assert_eq!(c.query_one("SELECT COUNT(*) FROM t", &[]).unwrap().get::<_, Decimal>(0), Decimal::from(5));
}

#[test]
fn the_catalogs_describe_each_column_as_its_values_arrive() {
    let (server, _dir) = server(10);
    let mut c = connect(&server, "catalogs");
    c.batch_execute(
        "CREATE TABLE t (id NUMBER(10) PRIMARY KEY, amount NUMBER(12,2), big INTEGER, plain NUMBER, name VARCHAR2(20), \
         code CHAR(3), born DATE, seen TIMESTAMP(3), span INTERVAL DAY TO SECOND, months INTERVAL YEAR TO MONTH)",
    )
    .unwrap();
    let described = c.prepare("SELECT * FROM t").unwrap();
    let catalog = c
        .query(
            "SELECT a.attname, a.atttypid, a.attnotnull FROM pg_catalog.pg_attribute a \
             WHERE a.attrelid = 't'::regclass AND a.attnum > 0 ORDER BY a.attnum",
            &[],
        )
        .unwrap();
    assert_eq!(catalog.len(), described.columns().len());
    for (row, column) in catalog.iter().zip(described.columns()) {
        assert_eq!(row.get::<_, String>(0), column.name());
        // pg_attribute's type OID is the type the column's values are sent as.
        assert_eq!(row.get::<_, Decimal>(1), Decimal::from(column.type_().oid()), "{}", column.name());
    }
    // Catalog booleans arrive as booleans, in both formats.
    let not_null: Vec<bool> = catalog.iter().map(|r| r.get(2)).collect();
    assert_eq!(not_null, [true, false, false, false, false, false, false, false, false, false]);
    let simple =
        c.simple_query("SELECT attnotnull FROM pg_attribute WHERE attrelid = 't'::regclass AND attnum = 1").unwrap();
    let Some(postgres::SimpleQueryMessage::Row(row)) =
        simple.iter().find(|m| matches!(m, postgres::SimpleQueryMessage::Row(_)))
    else {
        panic!("no row")
    };
    assert_eq!(row.get(0), Some("t"));
    // A query of a catalog lioscope has nothing in is answered with no rows.
    let none =
        c.query("SELECT i.inhparent FROM pg_catalog.pg_inherits i WHERE i.inhrelid = 't'::regclass", &[]).unwrap();
    assert!(none.is_empty());
}

#[test]
fn relation_sizes_read_as_postgresql_prints_them() {
    let (server, _dir) = server(10);
    let mut c = connect(&server, "sizes");
    // pg_size_pretty's units and rounding at their edges, as PostgreSQL 15 prints them.
    let edges = [
        (0i64, "0 bytes"),
        (10_239, "10239 bytes"),
        (10_240, "10 kB"),
        (10_751, "10 kB"),
        (10_752, "11 kB"),
        (10_485_247, "10239 kB"),
        (10_485_248, "10 MB"),
        (10_737_418_240, "10 GB"),
        (10_995_116_277_760, "10 TB"),
        (11_258_999_068_426_240, "10 PB"),
    ];
    for (bytes, printed) in edges {
        let row = c.query_one(&format!("SELECT pg_catalog.pg_size_pretty({bytes}) FROM dual"), &[]).unwrap();
        assert_eq!(row.get::<_, String>(0), printed, "{bytes} bytes");
    }
    // A table's size is its segment's: what user_segments says, in bytes.
    c.batch_execute("CREATE TABLE grows (id NUMBER(10), pad VARCHAR2(200))").unwrap();
    c.batch_execute("INSERT INTO grows SELECT LEVEL, RPAD('x', 200, 'x') FROM dual CONNECT BY LEVEL <= 2000").unwrap();
    let segment: Decimal =
        c.query_one("SELECT bytes FROM user_segments WHERE segment_name = 'GROWS'", &[]).unwrap().get(0);
    assert!(segment >= Decimal::from(2000 * 200), "{segment} bytes for 400 kB of rows");
    let row = c
        .query_one(
            "SELECT pg_catalog.pg_table_size(c.oid), pg_catalog.pg_relation_size(c.oid, 'main'), \
             pg_catalog.pg_size_pretty(pg_catalog.pg_table_size(c.oid)) FROM pg_catalog.pg_class c WHERE c.relname = 'grows'",
            &[],
        )
        .unwrap();
    assert_eq!(row.get::<_, Decimal>(0), segment);
    assert_eq!(row.get::<_, Decimal>(1), segment);
    assert_eq!(row.get::<_, String>(2), format!("{} kB", (segment / Decimal::from(1024)).round()));
}
