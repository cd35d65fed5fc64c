//! Who may log in and what each user may do, through a PostgreSQL driver: SCRAM-SHA-256
//! against the users lioscope stores, the log-in refusals (wrong password, no such user,
//! no CREATE SESSION, a locked account), object and system privileges granted and
//! revoked, a view read with its owner's rights, the DBA role, trust on loopback.

use lioscope::{Database, DatabaseOptions};
use lioscope_server::{Auth, Server, ServerOptions};
use postgres::error::SqlState;
use postgres::{Client, NoTls};

/// A server over a new database whose SYS (embedded) ran `setup` first.
fn server(setup: &[&str], auth: Auth) -> (Server, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::create(dir.path(), DatabaseOptions::default()).unwrap();
    let sys = db.session();
    for statement in setup {
        sys.execute(statement).unwrap_or_else(|e| panic!("{statement}: {e}"));
    }
    drop(sys);
    let options = ServerOptions { listen: "127.0.0.1:0".parse().unwrap(), auth, ..Default::default() };
    (Server::start(db, options).unwrap(), dir)
}

fn config(server: &Server, user: &str, password: &str) -> String {
    format!("host=127.0.0.1 port={} user={user} password='{password}' dbname=lab", server.local_addr().port())
}

fn connect(server: &Server, user: &str, password: &str) -> Result<Client, postgres::Error> {
    Client::connect(&config(server, user, password), NoTls)
}

/// The error a log-in that must fail gets.
fn refused(server: &Server, user: &str, password: &str) -> postgres::Error {
    match connect(server, user, password) {
        Ok(_) => panic!("{user} was let in"),
        Err(e) => e,
    }
}

/// The server's message in `error`.
fn message(error: &postgres::Error) -> String {
    error.as_db_error().map_or_else(|| error.to_string(), |e| e.message().to_owned())
}

fn code(error: &postgres::Error) -> SqlState {
    error.code().cloned().unwrap_or_else(|| panic!("no SQLSTATE in {error}"))
}

const USERS: &[&str] = &[
    "CREATE USER alice IDENTIFIED BY \"Wonder land\"",
    "GRANT CREATE SESSION, CREATE TABLE, CREATE VIEW TO alice",
    "CREATE USER bob IDENTIFIED BY builder",
    "GRANT CONNECT TO bob",
    "CREATE USER carol IDENTIFIED BY carol",
    "CREATE USER dave IDENTIFIED BY dave ACCOUNT LOCK",
    "GRANT CONNECT TO dave",
];

#[test]
fn scram_lets_in_the_right_password_and_no_other() {
    let (server, _dir) = server(USERS, Auth::ScramSha256);
    let mut alice = connect(&server, "alice", "Wonder land").unwrap();
    // alice may not read the v$ views (no SELECT ANY DICTIONARY), but knows her privileges.
    let row = alice.query_one("SELECT username FROM v$session WHERE sid = (SELECT MAX(sid) FROM v$mystat)", &[]);
    assert_eq!(code(&row.unwrap_err()), SqlState::INSUFFICIENT_PRIVILEGE);
    let privileges: Vec<String> =
        alice.query("SELECT privilege FROM session_privs", &[]).unwrap().iter().map(|r| r.get(0)).collect();
    assert_eq!(privileges, ["CREATE SESSION", "CREATE TABLE", "CREATE VIEW"]);

    // The password is case-sensitive; a wrong one and an unknown user look the same.
    let wrong = refused(&server, "alice", "wonder land");
    assert_eq!(code(&wrong), SqlState::INVALID_PASSWORD, "{wrong}");
    let nobody = refused(&server, "mallory", "x");
    assert_eq!(code(&nobody), SqlState::INVALID_PASSWORD, "{nobody}");
    // Right password, but no CREATE SESSION; a locked account.
    let carol = refused(&server, "carol", "carol");
    assert_eq!(code(&carol), SqlState::INVALID_AUTHORIZATION_SPECIFICATION, "{carol}");
    assert!(message(&carol).contains("ORA-01045"), "{carol}");
    let dave = refused(&server, "dave", "dave");
    assert!(message(&dave).contains("ORA-28000"), "{dave}");
    // SYS has no password yet: nobody logs in as SYS.
    assert_eq!(code(&refused(&server, "sys", "")), SqlState::INVALID_PASSWORD);
}

#[test]
fn object_privileges_are_granted_revoked_and_checked_at_each_execution() {
    let (server, _dir) = server(USERS, Auth::ScramSha256);
    let mut alice = connect(&server, "alice", "Wonder land").unwrap();
    let mut bob = connect(&server, "bob", "builder").unwrap();
    alice.batch_execute("CREATE TABLE pay (id NUMBER(10), amount NUMBER(10))").unwrap();
    alice.batch_execute("INSERT INTO pay VALUES (1, 100)").unwrap();

    let denied = bob.query("SELECT * FROM pay", &[]).unwrap_err();
    assert_eq!(code(&denied), SqlState::INSUFFICIENT_PRIVILEGE, "{denied}");
    assert!(message(&denied).contains("ORA-01031"), "{denied}");
    // bob cannot create tables, nor grant himself what alice owns.
    assert_eq!(code(&bob.batch_execute("CREATE TABLE b (x NUMBER)").unwrap_err()), SqlState::INSUFFICIENT_PRIVILEGE);
    assert_eq!(code(&bob.batch_execute("GRANT SELECT ON pay TO bob").unwrap_err()), SqlState::INSUFFICIENT_PRIVILEGE);

    alice.batch_execute("GRANT SELECT ON pay TO bob").unwrap();
    let select = bob.prepare("SELECT amount FROM pay WHERE id = $1").unwrap();
    assert_eq!(bob.query_one(&select, &[&1i64]).unwrap().get::<_, i64>(0), 100);
    let insert = bob.batch_execute("INSERT INTO pay VALUES (2, 200)").unwrap_err();
    assert_eq!(code(&insert), SqlState::INSUFFICIENT_PRIVILEGE, "{insert}");
    assert_eq!(code(&bob.batch_execute("UPDATE pay SET amount = 0").unwrap_err()), SqlState::INSUFFICIENT_PRIVILEGE);
    assert_eq!(code(&bob.batch_execute("DROP TABLE pay").unwrap_err()), SqlState::INSUFFICIENT_PRIVILEGE);

    // A revoke stops the statement bob keeps prepared, at its next execution.
    alice.batch_execute("REVOKE SELECT ON pay FROM bob").unwrap();
    assert_eq!(code(&bob.query_one(&select, &[&1i64]).unwrap_err()), SqlState::INSUFFICIENT_PRIVILEGE);

    // A grant to PUBLIC is everyone's; ALL is the four privileges.
    alice.batch_execute("GRANT ALL ON pay TO public").unwrap();
    bob.batch_execute("UPDATE pay SET amount = amount + 1").unwrap();
    assert_eq!(alice.query_one("SELECT amount FROM pay", &[]).unwrap().get::<_, i64>(0), 101);
    // A client's COPY needs INSERT only; a COPY from the server's files needs more.
    let mut copy = bob.copy_in("COPY pay FROM STDIN").unwrap();
    std::io::Write::write_all(&mut copy, b"7\t700\n").unwrap();
    assert_eq!(copy.finish().unwrap(), 1);
    let file = bob.batch_execute("COPY pay FROM '/etc/hostname'").unwrap_err();
    assert_eq!(code(&file), SqlState::INSUFFICIENT_PRIVILEGE, "{file}");
    assert!(message(&file).contains("CREATE ANY DIRECTORY"), "{file}");
    let listed: Vec<(String, String)> = alice
        .query("SELECT grantee, privilege FROM user_tab_privs ORDER BY privilege", &[])
        .unwrap()
        .iter()
        .map(|r| (r.get(0), r.get(1)))
        .collect();
    assert_eq!(listed.len(), 5, "{listed:?}");
    assert!(listed.iter().all(|(grantee, _)| grantee == "PUBLIC"), "{listed:?}");
}

#[test]
fn a_view_reads_with_its_owners_rights() {
    let (server, _dir) = server(USERS, Auth::ScramSha256);
    let mut alice = connect(&server, "alice", "Wonder land").unwrap();
    let mut bob = connect(&server, "bob", "builder").unwrap();
    alice.batch_execute("CREATE TABLE staff (name VARCHAR2(10), salary NUMBER(10))").unwrap();
    alice.batch_execute("INSERT INTO staff VALUES ('ann', 10); INSERT INTO staff VALUES ('ben', 20)").unwrap();
    alice.batch_execute("CREATE VIEW names AS SELECT name FROM staff").unwrap();
    alice.batch_execute("GRANT SELECT ON names TO bob").unwrap();
    let names: Vec<String> =
        bob.query("SELECT name FROM names ORDER BY name", &[]).unwrap().iter().map(|r| r.get(0)).collect();
    assert_eq!(names, ["ann", "ben"]);
    assert_eq!(code(&bob.query("SELECT salary FROM staff", &[]).unwrap_err()), SqlState::INSUFFICIENT_PRIVILEGE);
    // bob cannot make a view over what he may not read (nor any view: no CREATE VIEW).
    assert_eq!(
        code(&bob.batch_execute("CREATE VIEW v AS SELECT salary FROM staff").unwrap_err()),
        SqlState::INSUFFICIENT_PRIVILEGE
    );
}

#[test]
fn the_dba_role_and_system_privileges_are_granted_and_revoked() {
    let setup = [USERS, &["CREATE USER admin IDENTIFIED BY admin", "GRANT DBA TO admin"]].concat();
    let (server, _dir) = server(&setup, Auth::ScramSha256);
    let mut admin = connect(&server, "admin", "admin").unwrap();
    let mut bob = connect(&server, "bob", "builder").unwrap();
    // A DBA watches every session and manages users.
    let sessions = admin.query("SELECT username FROM v$session WHERE type = 'USER' ORDER BY username", &[]).unwrap();
    let users: Vec<String> = sessions.iter().map(|r| r.get(0)).collect();
    assert_eq!(users, ["ADMIN", "BOB"]);
    assert_eq!(code(&bob.query("SELECT * FROM v$session", &[]).unwrap_err()), SqlState::INSUFFICIENT_PRIVILEGE);
    admin.batch_execute("CREATE USER erin IDENTIFIED BY erin; GRANT CONNECT, RESOURCE TO erin").unwrap();
    let mut erin = connect(&server, "erin", "erin").unwrap();
    erin.batch_execute("CREATE TABLE e (x NUMBER(5))").unwrap();
    assert_eq!(
        code(&erin.batch_execute("CREATE VIEW ev AS SELECT x FROM e").unwrap_err()),
        SqlState::INSUFFICIENT_PRIVILEGE,
        "RESOURCE has no CREATE VIEW"
    );
    admin.batch_execute("GRANT SELECT ANY TABLE TO bob").unwrap();
    assert_eq!(bob.query("SELECT x FROM e", &[]).unwrap().len(), 0);
    admin.batch_execute("REVOKE SELECT ANY TABLE FROM bob").unwrap();
    assert_eq!(code(&bob.query("SELECT x FROM e", &[]).unwrap_err()), SqlState::INSUFFICIENT_PRIVILEGE);
    // Not while erin is connected; then, as she owns a table, only with CASCADE, which
    // takes the table along.
    let connected = admin.batch_execute("DROP USER erin CASCADE").unwrap_err();
    assert!(message(&connected).contains("ORA-01940"), "{connected}");
    drop(erin);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let kept = loop {
        let e = admin.batch_execute("DROP USER erin").unwrap_err();
        if !message(&e).contains("ORA-01940") || std::time::Instant::now() > deadline {
            break e;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    assert!(message(&kept).contains("ORA-01922"), "{kept}");
    admin.batch_execute("DROP USER erin CASCADE").unwrap();
    assert_eq!(code(&admin.query("SELECT * FROM e", &[]).unwrap_err()), SqlState::UNDEFINED_TABLE);
    assert_eq!(code(&refused(&server, "erin", "erin")), SqlState::INVALID_PASSWORD);
    // A changed password takes effect at the next log-in; SYS cannot be dropped.
    admin.batch_execute("ALTER USER bob IDENTIFIED BY \"new one\"").unwrap();
    assert_eq!(code(&refused(&server, "bob", "builder")), SqlState::INVALID_PASSWORD);
    connect(&server, "bob", "new one").unwrap();
    assert_eq!(code(&admin.batch_execute("DROP USER sys").unwrap_err()), SqlState::INSUFFICIENT_PRIVILEGE);
    // The password is not what v$sql keeps.
    let texts: Vec<String> = admin
        .query("SELECT sql_text FROM v$sql WHERE UPPER(sql_text) LIKE 'ALTER USER%'", &[])
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert_eq!(texts, ["ALTER USER bob IDENTIFIED BY *****"]);
}

#[test]
fn trust_takes_the_user_named_if_it_exists() {
    let (server, _dir) = server(USERS, Auth::Trust);
    let mut bob = connect(&server, "bob", "").unwrap();
    assert_eq!(code(&bob.query("SELECT * FROM v$session", &[]).unwrap_err()), SqlState::INSUFFICIENT_PRIVILEGE);
    let mut sys = connect(&server, "sys", "").unwrap();
    assert!(!sys.query("SELECT * FROM v$session", &[]).unwrap().is_empty());
    let nobody = refused(&server, "mallory", "");
    assert_eq!(code(&nobody), SqlState::INVALID_AUTHORIZATION_SPECIFICATION, "{nobody}");
    let options = ServerOptions { listen: "0.0.0.0:0".parse().unwrap(), auth: Auth::Trust, ..Default::default() };
    let dir = tempfile::tempdir().unwrap();
    let db = Database::create(dir.path(), DatabaseOptions::default()).unwrap();
    assert!(Server::start(db, options).is_err(), "trust on a non-loopback address");
}
