//! `lioscope serve` with the clients people use: `psql` runs a script of queries,
//! transaction blocks, settings, `\copy` and errors, and its output must equal
//! `clients/psql.out`; Python's psycopg runs `clients/psycopg_client.py`, whose checks
//! must all pass; PostgreSQL's JDBC driver runs `clients/JdbcBrowser.java`, a database
//! browser's questions. `./test.sh` installs them; where one is missing the test says it
//! skipped it. Regenerate the psql output with `UPDATE_GOLDEN=1`.

use std::net::TcpListener;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A `lioscope serve` child on a free loopback port, killed when dropped.
struct Served {
    child: Child,
    port: u16,
    _dir: tempfile::TempDir,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Serves a new database where SCOTT (password tiger) is a DBA, with `args` added.
fn serve_with(args: &[&str]) -> Served {
    let dir = tempfile::tempdir().unwrap();
    let db = lioscope::Database::create(dir.path().join("db"), Default::default()).unwrap();
    db.session().execute("CREATE USER scott IDENTIFIED BY tiger").unwrap();
    db.session().execute("GRANT DBA TO scott").unwrap();
    db.close().unwrap();
    drop(db);
    let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let child = Command::new(env!("CARGO_BIN_EXE_lioscope"))
        .args(["serve", dir.path().join("db").to_str().unwrap(), "--listen", &format!("127.0.0.1:{port}")])
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "the server did not listen");
        std::thread::sleep(Duration::from_millis(20));
    }
    Served { child, port, _dir: dir }
}

fn serve() -> Served {
    serve_with(&[])
}

#[test]
fn sigterm_stops_the_server_cleanly_rolling_back_what_clients_left_open() {
    let mut served = serve();
    let config = format!("host=127.0.0.1 port={} user=scott password=tiger dbname=lab", served.port);
    let mut a = postgres::Client::connect(&config, postgres::NoTls).unwrap();
    a.batch_execute("CREATE TABLE t (id NUMBER(10)); INSERT INTO t VALUES (1)").unwrap();
    a.batch_execute("BEGIN; INSERT INTO t VALUES (2)").unwrap();
    let status = Command::new("kill").args(["-TERM", &served.child.id().to_string()]).status().unwrap();
    assert!(status.success());
    let deadline = Instant::now() + Duration::from_secs(60);
    let exit = loop {
        if let Some(exit) = served.child.try_wait().unwrap() {
            break exit;
        }
        assert!(Instant::now() < deadline, "the server did not stop after SIGTERM");
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(exit.success(), "the server exited with {exit}");
    assert!(a.batch_execute("SELECT 1 FROM dual").is_err(), "the connection was closed");
    let db = lioscope::Database::open(served._dir.path().join("db"), Default::default()).unwrap();
    assert!(!db.recovery().needed, "a clean shutdown leaves nothing to recover");
    let rows = db.session().execute("SELECT id FROM t").unwrap().rows;
    assert_eq!(rows.iter().map(|r| r[0].to_string()).collect::<Vec<_>>(), ["1"], "the open block was rolled back");
}

fn found(program: &str, args: &[&str]) -> bool {
    Command::new(program).args(args).stdout(Stdio::null()).stderr(Stdio::null()).status().is_ok_and(|s| s.success())
}

#[test]
fn psql_runs_a_script_as_against_postgresql() {
    if !found("psql", &["--version"]) {
        eprintln!("SKIPPED: psql is not installed (./test.sh installs it)");
        return;
    }
    let served = serve();
    let tests = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let output = Command::new("psql")
        .current_dir(&tests)
        .args(["-X", "-h", "127.0.0.1", "-p", &served.port.to_string(), "-U", "scott", "-d", "lab"])
        .args(["-a", "-f", "clients/psql.sql"])
        .env("PGAPPNAME", "psql")
        .env("PGPASSWORD", "tiger")
        .output()
        .unwrap();
    let mut text = String::from_utf8_lossy(&output.stdout).to_string();
    // Errors go to stderr; keep them in order after the statement that raised them.
    for line in String::from_utf8_lossy(&output.stderr).lines() {
        text.push_str(&format!("stderr: {}\n", line.replace(&served.port.to_string(), "PORT")));
    }
    let expected_path = tests.join("clients/psql.out");
    if std::env::var("UPDATE_GOLDEN").is_ok_and(|v| v == "1") {
        std::fs::write(&expected_path, &text).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&expected_path).unwrap_or_default();
    assert!(text == expected, "psql's output differs from clients/psql.out:\n{text}");
}

#[test]
fn psycopg_connects_binds_copies_and_retries_as_against_postgresql() {
    if !found("python3", &["-c", "import psycopg"]) {
        eprintln!("SKIPPED: Python's psycopg is not installed (./test.sh installs it)");
        return;
    }
    let served = serve();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/clients/psycopg_client.py");
    let output = Command::new("python3").arg(&script).arg(served.port.to_string()).output().unwrap();
    assert!(
        output.status.success(),
        "psycopg's checks failed:\n{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

/// PostgreSQL's JDBC driver, as Debian packages it (`./test.sh` installs it).
const JDBC_JAR: &str = "/usr/share/java/postgresql.jar";

#[test]
fn a_jdbc_browser_lists_schemas_tables_and_columns() {
    if !found("java", &["-version"]) || !Path::new(JDBC_JAR).exists() {
        eprintln!("SKIPPED: java or PostgreSQL's JDBC driver ({JDBC_JAR}) is not installed (./test.sh installs them)");
        return;
    }
    let served = serve();
    let program = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/clients/JdbcBrowser.java");
    let output =
        Command::new("java").args(["-cp", JDBC_JAR]).arg(&program).arg(served.port.to_string()).output().unwrap();
    assert!(
        output.status.success(),
        "the JDBC checks failed:\n{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

#[test]
fn psql_logs_in_over_tls_with_its_password_bound_to_the_certificate() {
    if !found("psql", &["--version"]) || !found("openssl", &["version"]) {
        eprintln!("SKIPPED: psql or openssl is not installed (./test.sh installs psql)");
        return;
    }
    let certs = tempfile::tempdir().unwrap();
    let (cert, key) = (certs.path().join("server.crt"), certs.path().join("server.key"));
    let made = Command::new("openssl")
        .args(["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=localhost"])
        .args(["-addext", "subjectAltName=IP:127.0.0.1"])
        .arg("-keyout")
        .arg(&key)
        .arg("-out")
        .arg(&cert)
        .output()
        .unwrap();
    assert!(made.status.success(), "openssl: {}", String::from_utf8_lossy(&made.stderr));
    let served =
        serve_with(&["--tls-cert", cert.to_str().unwrap(), "--tls-key", key.to_str().unwrap(), "--require-tls"]);
    let psql = |options: &str| {
        let target = format!("host=127.0.0.1 port={} user=scott dbname=lab {options}", served.port);
        Command::new("psql")
            .args(["-X", "-A", "-t", "-d", &target, "-c", "SELECT 'in as ' || username FROM user_users"])
            .env("PGPASSWORD", "tiger")
            .output()
            .unwrap()
    };
    // The certificate checked against its own authority, and SCRAM-SHA-256-PLUS.
    let tls = psql(&format!("sslmode=verify-full sslrootcert={} channel_binding=require", cert.display()));
    assert!(tls.status.success(), "psql over TLS: {}", String::from_utf8_lossy(&tls.stderr));
    assert_eq!(String::from_utf8_lossy(&tls.stdout).trim(), "in as SCOTT");
    // Without TLS the server refuses to go on.
    let plain = psql("sslmode=disable");
    assert!(!plain.status.success(), "a plain connection was let in");
    assert!(String::from_utf8_lossy(&plain.stderr).contains("TLS only"), "{}", String::from_utf8_lossy(&plain.stderr));
}

#[test]
fn the_sql_runner_connects_to_a_server_and_watches_another_client_with_snapper() {
    let served = serve();
    let config =
        format!("host=127.0.0.1 port={} user=scott password=tiger dbname=lab application_name=busy", served.port);
    let mut busy = postgres::Client::connect(&config, postgres::NoTls).unwrap();
    busy.batch_execute("CREATE TABLE work (id NUMBER(6), pad VARCHAR2(50))").unwrap();
    busy.batch_execute("INSERT INTO work SELECT LEVEL, RPAD('x', 50, 'x') FROM dual CONNECT BY LEVEL <= 2000").unwrap();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let worker = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                busy.query("SELECT COUNT(*) FROM work WHERE pad LIKE '%y%'", &[]).unwrap();
            }
        })
    };
    let script = "SET AUTOTRACE TRACEONLY\nSELECT id FROM work WHERE id <= 10;\nSET AUTOTRACE OFF\n\
                  INSERT INTO work VALUES (0, 'mine');\nROLLBACK;\nSELECT COUNT(*) AS n FROM work WHERE id = 0;\n\
                  SNAPPER stats 1 1 program=busy sinclude=%logical%\nSELECT * FROM missing;\n";
    let output = Command::new(env!("CARGO_BIN_EXE_lioscope"))
        .args(["sql", "--connect", &format!("postgres://scott@127.0.0.1:{}/lab", served.port), "-c", script])
        .env("PGPASSWORD", "tiger")
        .output()
        .unwrap();
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    worker.join().unwrap();
    let out = String::from_utf8_lossy(&output.stdout);
    let err = String::from_utf8_lossy(&output.stderr);
    // AUTOTRACE over the connection: the plan and the session's statistics.
    assert!(out.contains("10 rows selected.") && out.contains("TABLE ACCESS FULL"), "{out}");
    assert!(out.contains("10  rows processed"), "{out}");
    let gets = out.lines().find(|l| l.ends_with("  consistent gets")).and_then(|l| l.split_whitespace().next());
    assert!(gets.and_then(|g| g.parse::<u64>().ok()).is_some_and(|g| g > 0), "the scan's gets counted:\n{out}");
    // SQL*Plus's transactions: the insert was rolled back.
    assert!(out.contains("1 row created.") && out.contains("Rollback complete."), "{out}");
    assert!(out.contains("|  0 |") || out.contains("| 0 |"), "the rolled-back row is gone:\n{out}");
    // SNAPPER from this connection sees the other client's work.
    let busy_rows: Vec<&str> = out.lines().filter(|l| l.contains("BUSY") || l.contains("busy")).collect();
    assert!(busy_rows.iter().any(|l| l.contains("session logical reads")), "{out}");
    // A server's error names the server and stops the script (WHENEVER SQLERROR EXIT FAILURE).
    assert!(err.contains(&format!("127.0.0.1:{}: ORA-00942", served.port)), "{err}");
    assert_eq!(output.status.code(), Some(1));
}
