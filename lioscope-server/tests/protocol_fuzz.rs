//! Clients that break the protocol: random bytes, truncated and oversized messages, a
//! valid login followed by garbage, connections dropped mid-message. Each such client is
//! disconnected; the server goes on, and a well-behaved client connected all along
//! keeps its session, its open transaction and its answers.

use lioscope::{Database, DatabaseOptions};
use lioscope_server::{Server, ServerOptions};
use postgres::{Client, NoTls};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use rust_decimal::Decimal;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

mod frontend;
use frontend::{message, startup};

/// What one bad client sends.
fn bad_client(rng: &mut SmallRng) -> Vec<u8> {
    let random = |rng: &mut SmallRng, most: usize| {
        let n = rng.random_range(0..most);
        (0..n).map(|_| rng.random::<u8>()).collect::<Vec<u8>>()
    };
    match rng.random_range(0..7) {
        // Noise instead of a startup message.
        0 => random(rng, 200),
        // A startup message cut short.
        1 => {
            let s = startup("fuzz");
            s[..rng.random_range(1..s.len())].to_vec()
        }
        // A startup message claiming a huge length.
        2 => {
            let mut s = startup("fuzz");
            s[..4].copy_from_slice(&i32::MAX.to_be_bytes());
            s
        }
        // A login, then noise.
        3 => [startup("fuzz"), random(rng, 300)].concat(),
        // A login, then a query whose length is larger than anything allowed.
        4 => {
            let mut q = message(b'Q', b"SELECT 1 FROM dual\0");
            q[1..5].copy_from_slice(&(1i32 << 30).to_be_bytes());
            [startup("fuzz"), q].concat()
        }
        // A login, then a well-formed message cut in the middle.
        5 => {
            let q = message(b'P', b"\0SELECT * FROM t WHERE id = $1\0\0\0");
            [startup("fuzz"), q[..rng.random_range(1..q.len())].to_vec()].concat()
        }
        // A login, then messages with random tags and bodies of the length they claim.
        _ => {
            let mut out = startup("fuzz");
            for _ in 0..rng.random_range(1..6) {
                let tag = *b"QPBDESCHXFfdcp".get(rng.random_range(0..14)).expect("a tag");
                let body = random(rng, 64);
                out.extend(message(tag, &body));
            }
            out
        }
    }
}

#[test]
fn clients_that_break_the_protocol_are_dropped_and_the_server_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::create(dir.path(), DatabaseOptions::default()).unwrap();
    db.session().execute("CREATE USER scott IDENTIFIED BY tiger").unwrap();
    db.session().execute("GRANT DBA TO scott").unwrap();
    let options = ServerOptions { listen: "127.0.0.1:0".parse().unwrap(), ..Default::default() };
    let server = Server::start(db, options).unwrap();
    let port = server.local_addr().port();
    let config = format!("host=127.0.0.1 port={port} user=scott password=tiger dbname=lab");
    let mut good = Client::connect(&config, NoTls).unwrap();
    good.batch_execute("CREATE TABLE t (id NUMBER(10) PRIMARY KEY, v NUMBER(10))").unwrap();
    good.batch_execute("INSERT INTO t SELECT LEVEL, LEVEL FROM dual CONNECT BY LEVEL <= 100").unwrap();
    good.batch_execute("BEGIN; UPDATE t SET v = v + 1000 WHERE id = 1").unwrap();

    let mut rng = SmallRng::seed_from_u64(0x5eed);
    for round in 0..200 {
        let bytes = bad_client(&mut rng);
        let mut socket = TcpStream::connect(("127.0.0.1", port)).unwrap();
        socket.set_read_timeout(Some(Duration::from_millis(200))).unwrap();
        let _ = socket.write_all(&bytes);
        if rng.random_bool(0.5) {
            // Read whatever the server answers (an error, or nothing) before hanging up.
            let mut answer = [0u8; 4096];
            let _ = socket.read(&mut answer);
        }
        drop(socket);
        if round % 20 == 19 {
            // The well-behaved client's session, transaction and answers are intact.
            let row = good.query_one("SELECT SUM(v) FROM t", &[]).unwrap();
            assert_eq!(row.get::<_, Decimal>(0), Decimal::from(5050 + 1000), "round {round}");
            let mut fresh = Client::connect(&config, NoTls).unwrap();
            let row = fresh.query_one("SELECT SUM(v) FROM t", &[]).unwrap();
            assert_eq!(row.get::<_, Decimal>(0), Decimal::from(5050), "round {round}: uncommitted work seen");
        }
    }
    good.batch_execute("COMMIT").unwrap();
    let mut fresh = Client::connect(&config, NoTls).unwrap();
    assert_eq!(fresh.query_one("SELECT SUM(v) FROM t", &[]).unwrap().get::<_, Decimal>(0), Decimal::from(6050));
}
