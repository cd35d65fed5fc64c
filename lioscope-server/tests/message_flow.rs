//! When the answers of the extended query protocol leave the server. A client that sends
//! Parse, Bind, Describe and Execute gets nothing back until it sends a Flush (the
//! answers so far, no ReadyForQuery) or a Sync (the answers and ReadyForQuery): the
//! server queues them, as PostgreSQL does, so that a statement costs the client one
//! wake-up, not one for each message. An error goes out at once, as PostgreSQL sends it;
//! the server then skips every message up to the Sync and answers that with the
//! ReadyForQuery of a failed transaction, or of an idle session outside one. Spoken byte by byte over a socket, since a driver hides
//! exactly this.

use lioscope::{Database, DatabaseOptions};
use lioscope_server::{Auth, Server, ServerOptions};
use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::time::Duration;

mod frontend;
use frontend::{message, startup, strings};

fn parse(sql: &str) -> Vec<u8> {
    // The unnamed statement, no parameter types given.
    message(b'P', &[strings(&["", sql]), vec![0, 0]].concat())
}

/// Bind of the unnamed portal to the unnamed statement, one text parameter.
fn bind(parameter: &str) -> Vec<u8> {
    let mut body = strings(&["", ""]);
    body.extend_from_slice(&0i16.to_be_bytes()); // parameter formats: all text
    body.extend_from_slice(&1i16.to_be_bytes());
    body.extend_from_slice(&(parameter.len() as i32).to_be_bytes());
    body.extend_from_slice(parameter.as_bytes());
    body.extend_from_slice(&0i16.to_be_bytes()); // result formats: all text
    message(b'B', &body)
}

fn describe_portal() -> Vec<u8> {
    message(b'D', b"P\0")
}

fn execute() -> Vec<u8> {
    message(b'E', &[b"\0".as_slice(), &0i32.to_be_bytes()].concat())
}

/// A client that speaks the protocol itself, logged in as `sys` (trust).
struct Wire {
    socket: TcpStream,
    pending: Vec<u8>,
}

impl Wire {
    fn connect(port: u16) -> Wire {
        let socket = TcpStream::connect(("127.0.0.1", port)).unwrap();
        socket.set_nodelay(true).unwrap();
        let mut wire = Wire { socket, pending: Vec::new() };
        wire.send(&startup("sys"));
        let login = wire.until_ready(Duration::from_secs(10));
        assert_eq!(login.first().map(|(tag, _)| *tag), Some(b'R'), "authentication first: {:?}", tags(&login));
        wire
    }

    fn send(&mut self, bytes: &[u8]) {
        self.socket.write_all(bytes).unwrap();
    }

    /// The next whole message (tag, body), or `None` when none comes within `wait`.
    fn next(&mut self, wait: Duration) -> Option<(u8, Vec<u8>)> {
        loop {
            if self.pending.len() >= 5 {
                let len = i32::from_be_bytes(self.pending[1..5].try_into().unwrap()) as usize;
                if self.pending.len() > len {
                    let body = self.pending[5..1 + len].to_vec();
                    let tag = self.pending[0];
                    self.pending.drain(..1 + len);
                    return Some((tag, body));
                }
            }
            self.socket.set_read_timeout(Some(wait)).unwrap();
            let mut buffer = [0u8; 8192];
            match self.socket.read(&mut buffer) {
                Ok(0) => panic!("the server closed the connection"),
                Ok(n) => self.pending.extend_from_slice(&buffer[..n]),
                Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => return None,
                Err(e) => panic!("reading from the server: {e}"),
            }
        }
    }

    /// Every message that comes within `wait` of the one before.
    fn drain(&mut self, wait: Duration) -> Vec<(u8, Vec<u8>)> {
        std::iter::from_fn(|| self.next(wait)).collect()
    }

    /// Messages up to and with ReadyForQuery.
    fn until_ready(&mut self, wait: Duration) -> Vec<(u8, Vec<u8>)> {
        let mut out = Vec::new();
        while let Some(m) = self.next(wait) {
            let ready = m.0 == b'Z';
            out.push(m);
            if ready {
                return out;
            }
        }
        panic!("no ReadyForQuery within {wait:?}; got {:?}", tags(&out));
    }
}

/// The tags of messages, as letters.
fn tags(messages: &[(u8, Vec<u8>)]) -> String {
    messages.iter().map(|(tag, _)| *tag as char).collect()
}

/// The transaction status a ReadyForQuery carries.
fn status(messages: &[(u8, Vec<u8>)]) -> char {
    let (tag, body) = messages.last().expect("a message");
    assert_eq!(*tag, b'Z');
    body[0] as char
}

const QUIET: Duration = Duration::from_millis(300);
const ANSWER: Duration = Duration::from_secs(10);

/// The directory first, so that it outlives the server (dropped in reverse order).
fn server() -> (tempfile::TempDir, Server) {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::create(dir.path(), DatabaseOptions::default()).unwrap();
    db.session().execute("CREATE TABLE t (id NUMBER(10) PRIMARY KEY, name VARCHAR2(20))").unwrap();
    db.session().execute("INSERT INTO t VALUES (1, 'one')").unwrap();
    let options = ServerOptions { listen: "127.0.0.1:0".parse().unwrap(), auth: Auth::Trust, ..Default::default() };
    let server = Server::start(db, options).unwrap();
    (dir, server)
}

#[test]
fn answers_wait_for_a_flush_or_a_sync() {
    let (_dir, server) = server();
    let mut wire = Wire::connect(server.local_addr().port());

    wire.send(&[parse("SELECT name FROM t WHERE id = $1"), bind("1"), describe_portal(), execute()].concat());
    assert_eq!(tags(&wire.drain(QUIET)), "", "nothing leaves before a Flush or a Sync");

    wire.send(&message(b'H', b""));
    let flushed =
        [wire.next(ANSWER).expect("answers at the Flush")].into_iter().chain(wire.drain(QUIET)).collect::<Vec<_>>();
    // ParseComplete, BindComplete, RowDescription, the row, CommandComplete; no
    // ReadyForQuery, which only a Sync brings.
    assert_eq!(tags(&flushed), "12TDC");
    assert_eq!(flushed[3].1[6..], *b"one", "the row's one column, 'one'");

    wire.send(&message(b'S', b""));
    let synced = wire.until_ready(ANSWER);
    assert_eq!(tags(&synced), "Z");
    assert_eq!(status(&synced), 'I');

    // Bind, Describe, Execute and Sync sent together (as pgbench's prepared mode does):
    // the whole answer at once, and nothing more after it.
    wire.send(&[bind("1"), describe_portal(), execute(), message(b'S', b"")].concat());
    let answer = wire.until_ready(ANSWER);
    assert_eq!(tags(&answer), "2TDCZ");
    assert_eq!(tags(&wire.drain(QUIET)), "");
}

#[test]
fn after_an_error_the_server_skips_to_the_sync() {
    let (_dir, server) = server();
    let mut wire = Wire::connect(server.local_addr().port());

    // Outside a transaction: the error, then an idle ReadyForQuery.
    wire.send(
        &[parse("SELECT name FROM no_such_table WHERE id = $1"), bind("1"), execute(), message(b'S', b"")].concat(),
    );
    let answer = wire.until_ready(ANSWER);
    assert_eq!(tags(&answer), "EZ", "Bind and Execute after the failed Parse are skipped");
    assert_eq!(status(&answer), 'I');

    // Inside one: the transaction is failed until it ends.
    wire.send(&message(b'Q', b"BEGIN\0"));
    assert_eq!(status(&wire.until_ready(ANSWER)), 'T');
    wire.send(
        &[parse("SELECT name FROM t WHERE id = $1"), bind("not a number"), execute(), message(b'S', b"")].concat(),
    );
    let answer = wire.until_ready(ANSWER);
    // The parameter fails to decode: at the Execute here (`12EZ`), at the Bind in
    // PostgreSQL (`1EZ`); either way one error, then the failed transaction's status.
    assert!(["1EZ", "12EZ"].contains(&tags(&answer).as_str()), "{}", tags(&answer));
    assert_eq!(status(&answer), 'E');
    wire.send(&message(b'Q', b"ROLLBACK\0"));
    assert_eq!(status(&wire.until_ready(ANSWER)), 'I');

    // And the connection serves the next statement as if nothing happened.
    wire.send(&[parse("SELECT name FROM t WHERE id = $1"), bind("1"), execute(), message(b'S', b"")].concat());
    assert_eq!(tags(&wire.until_ready(ANSWER)), "12DCZ");
}

#[test]
fn messages_sent_along_with_the_startup_are_answered_after_the_log_in() {
    let (_dir, server) = server();
    let socket = TcpStream::connect(("127.0.0.1", server.local_addr().port())).unwrap();
    socket.set_nodelay(true).unwrap();
    let mut wire = Wire { socket, pending: Vec::new() };
    // One write: the server reads the query with the startup, before it logs the client
    // in, and must keep it for after.
    wire.send(&[startup("sys"), message(b'Q', b"SELECT name FROM t\0")].concat());
    let login = wire.until_ready(ANSWER);
    assert_eq!(login.first().map(|(tag, _)| *tag), Some(b'R'), "authentication first: {:?}", tags(&login));
    let answer = wire.until_ready(ANSWER);
    assert_eq!(tags(&answer), "TDCZ");
    assert!(answer[1].1.windows(3).any(|w| w == b"one"), "the row: {:?}", answer[1].1);
}

#[test]
fn the_server_s_stop_closes_a_client_waiting_between_statements() {
    let (_dir, server) = server();
    let mut wire = Wire::connect(server.local_addr().port());
    wire.send(&message(b'Q', b"SELECT name FROM t\0"));
    assert_eq!(tags(&wire.until_ready(ANSWER)), "TDCZ");
    // The connection's thread now waits in the kernel for the next statement.
    server.shutdown().unwrap();
    wire.socket.set_read_timeout(Some(ANSWER)).unwrap();
    let mut byte = [0u8; 1];
    match wire.socket.read(&mut byte) {
        Ok(0) => {}
        Err(e) if e.kind() == ErrorKind::ConnectionReset => {}
        other => panic!("the connection is still open after the server stopped: {other:?}"),
    }
}

#[test]
fn the_server_s_stop_ends_a_copy_the_client_keeps_feeding() {
    let (_dir, server) = server();
    let mut wire = Wire::connect(server.local_addr().port());
    wire.send(&message(b'Q', b"COPY t FROM STDIN\0"));
    assert_eq!(wire.next(ANSWER).map(|(tag, _)| tag), Some(b'G'), "CopyInResponse");
    // The client feeds rows without pause and awaits no answer: the stop must end the
    // connection though its reads keep finding rows (COPY's rows are not interrupted).
    let mut feeder = wire.socket.try_clone().unwrap();
    let feeding = std::thread::spawn(move || {
        let row = message(b'd', b"7\tseven\n");
        let until = std::time::Instant::now() + Duration::from_secs(30);
        while std::time::Instant::now() < until {
            if feeder.write_all(&row).is_err() {
                return true;
            }
        }
        false
    });
    std::thread::sleep(Duration::from_millis(200));
    server.shutdown().unwrap();
    assert!(feeding.join().unwrap(), "the server still took the client's COPY rows 30 s after it stopped");
}
