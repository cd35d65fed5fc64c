//! lioscope's server: one database, many clients, over PostgreSQL's wire protocol.
//!
//! ```text
//!  psql, drivers, pgbench ──TCP (TLS)──► listener ──► Connection (a thread and a session per client)
//!                                                 │ startup: SCRAM-SHA-256 (or trust) → the session's user
//!                                                 │          application_name, address → v$session
//!                                                 │ simple query: statements split, run in turn
//!                                                 │ extended: Parse → PreparedStatement (parsed once)
//!                                                 │           Bind/Execute → its kept plan, bind values
//!                                                 ▼
//!                                  Backend (the connection's thread) ──► lioscope Session ──► engine
//!  cancel request ──TCP──► CancelRequests ──► the session's Canceller (ORA-01013)
//! ```
//!
//! Modules: `authentication` (SCRAM against lioscope's users), `tls` (the certificate and
//! key), `exchange` (a connection's loop of messages: log-in on the runtime's socket,
//! then blocking reads on the connection's own thread), `connection` (the protocol's
//! handlers), `backend` (a client's session,
//! statements, transaction block and settings), `client_commands` (what the server
//! answers itself: BEGIN, COMMIT, SET, SHOW, ...), `catalog_queries` (clients' queries
//! of `pg_catalog` and `information_schema` written in lioscope's dialect), `copy_text`
//! (COPY's text format as CSV), `settings`, `sql_text` (placeholders, statement
//! splitting), `wire_types` (types and values on the wire), `sqlstate` (errors).
//!
//! Invariants: a connection's session runs one call at a time; a connection that goes
//! rolls back what its session left uncommitted (its session is dropped, after any
//! running call is interrupted); the server never exits with a client's transaction
//! half done: at shutdown, running statements get a grace period, then are interrupted
//! and rolled back, and the database is checkpointed and closed.

mod authentication;
mod backend;
mod catalog_queries;
mod client_commands;
mod connection;
mod copy_text;
mod exchange;
mod settings;
mod sql_text;
mod sqlstate;
mod tls;
mod wire_types;

use lioscope::{Canceller, Database};
use pgwire::api::cancel::CancelHandler;
use pgwire::messages::cancel::CancelRequest;
use pgwire::messages::startup::SecretKey;
use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

pub use settings::SERVER_VERSION;

pub use authentication::Auth;

/// The server's TLS certificate chain and private key, PEM files.
#[derive(Debug, Clone)]
pub struct TlsFiles {
    pub certificate: std::path::PathBuf,
    pub key: std::path::PathBuf,
}

/// What `lioscope serve` is told.
#[derive(Debug, Clone)]
pub struct ServerOptions {
    /// Where to listen (`127.0.0.1:5433` unless told otherwise).
    pub listen: SocketAddr,
    /// Connections past this many are refused with SQLSTATE 53300.
    pub max_connections: usize,
    /// The database name clients must ask for; any name when `None`.
    pub database: Option<String>,
    pub auth: Auth,
    /// TLS for clients that ask for it (`sslmode=require`), when given.
    pub tls: Option<TlsFiles>,
    /// Refuse clients that do not use TLS.
    pub require_tls: bool,
    /// How long running statements may go on at shutdown before they are interrupted.
    pub shutdown_grace: Duration,
}

impl Default for ServerOptions {
    fn default() -> Self {
        ServerOptions {
            listen: SocketAddr::from(([127, 0, 0, 1], 5433)),
            max_connections: 100,
            database: None,
            auth: Auth::ScramSha256,
            tls: None,
            require_tls: false,
            shutdown_grace: Duration::from_secs(10),
        }
    }
}

/// What every connection of a server shares.
struct Shared {
    db: Database,
    options: ServerOptions,
    /// The SCRAM exchanges clients log in with.
    authenticator: authentication::Authenticator,
    /// Takes the TLS handshake of a client that asks for TLS.
    tls: Option<pgwire::tokio::TlsAcceptor>,
    /// Clients logged in now.
    connections: AtomicUsize,
    /// Each logged-in connection's cancel key and session, by process id (its SID).
    cancels: Mutex<HashMap<i32, (i32, Canceller)>>,
    shutting_down: AtomicBool,
    /// Wakes every connection's thread to close it when the server stops.
    stopping: Arc<tokio::sync::Notify>,
    /// The connections' threads.
    threads: Mutex<Vec<std::thread::JoinHandle<()>>>,
    /// The sockets of logged-in connections, read with blocking calls.
    sockets: exchange::OpenSockets,
}

impl Shared {
    /// Asks every connection to close: one waiting at an await sees the notification, one
    /// in a blocking read or write finds its socket shut down.
    fn close_connections(&self) {
        self.stopping.notify_waiters();
        self.sockets.shut_down_all();
    }
}

/// Cancel requests: a client's key finds the session to interrupt.
struct CancelRequests(Arc<Shared>);

#[async_trait::async_trait]
impl CancelHandler for CancelRequests {
    async fn on_cancel_request(&self, request: CancelRequest) {
        let cancels = self.0.cancels.lock().expect("cancel registry");
        if let Some((secret, canceller)) = cancels.get(&request.pid)
            && request.secret_key.eq_value(&SecretKey::I32(*secret))
        {
            canceller.cancel();
        }
    }
}

/// A server running on its own threads; [`Server::shutdown`] (or dropping it) stops it.
pub struct Server {
    addr: SocketAddr,
    shared: Arc<Shared>,
    runtime: Option<tokio::runtime::Runtime>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    done: Option<std::sync::mpsc::Receiver<()>>,
}

impl Server {
    /// Starts serving `db`: binds the address (port 0: a free one) and accepts clients
    /// on a runtime of its own. A non-loopback address with trust authentication is
    /// refused.
    pub fn start(db: Database, options: ServerOptions) -> std::io::Result<Server> {
        if options.auth == Auth::Trust && !options.listen.ip().is_loopback() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                format!("trust authentication listens on a loopback address only, not {}", options.listen.ip()),
            ));
        }
        if options.require_tls && options.tls.is_none() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "TLS is required but no certificate was given",
            ));
        }
        let (tls, certificate_pem) = match &options.tls {
            Some(files) => {
                let (acceptor, pem) = tls::acceptor(files)?;
                (Some(acceptor), Some(pem))
            }
            None => (None, None),
        };
        let authenticator = authentication::Authenticator::new(certificate_pem.as_deref())
            .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, format!("the TLS certificate: {e}")))?;
        let runtime =
            tokio::runtime::Builder::new_multi_thread().enable_all().thread_name("lioscope-server").build()?;
        let listener = runtime.block_on(tokio::net::TcpListener::bind(options.listen))?;
        let addr = listener.local_addr()?;
        let shared = Arc::new(Shared {
            db,
            options,
            authenticator,
            tls,
            connections: AtomicUsize::new(0),
            cancels: Mutex::new(HashMap::new()),
            shutting_down: AtomicBool::new(false),
            stopping: Arc::new(tokio::sync::Notify::new()),
            threads: Mutex::new(Vec::new()),
            sockets: exchange::OpenSockets::default(),
        });
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let (done_tx, done) = std::sync::mpsc::channel();
        let accepting = shared.clone();
        runtime.spawn(async move {
            accept(listener, accepting, stopped).await;
            let _ = done_tx.send(());
        });
        Ok(Server { addr, shared, runtime: Some(runtime), stop: Some(stop), done: Some(done) })
    }

    /// The address clients connect to.
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// Clients logged in now.
    pub fn connections(&self) -> usize {
        self.shared.connections.load(Ordering::Relaxed)
    }

    /// Stops: no new clients; running statements go on for the grace period, then are
    /// interrupted; every connection is closed (rolling back what it left open); the
    /// database is checkpointed.
    pub fn shutdown(mut self) -> lioscope::Result<()> {
        self.stop_serving();
        self.shared.db.close()
    }

    /// Serves until the process gets SIGTERM or SIGINT, then shuts down
    /// ([`Server::shutdown`]).
    pub fn run_until_signal(self) -> lioscope::Result<()> {
        if let Some(runtime) = &self.runtime {
            runtime.block_on(async {
                use tokio::signal::unix::{SignalKind, signal};
                match (signal(SignalKind::terminate()), signal(SignalKind::interrupt())) {
                    (Ok(mut term), Ok(mut int)) => {
                        tokio::select! {
                            _ = term.recv() => {}
                            _ = int.recv() => {}
                        }
                    }
                    _ => std::future::pending::<()>().await,
                }
            });
        }
        self.shutdown()
    }

    fn stop_serving(&mut self) {
        self.shared.shutting_down.store(true, Ordering::Relaxed);
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(done) = self.done.take() {
            let _ = done.recv_timeout(Duration::from_secs(5));
        }
        // Running statements get their grace period, then are interrupted.
        let deadline = std::time::Instant::now() + self.shared.options.shutdown_grace;
        while self.shared.db.active_user_calls() > 0 && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        for (_, canceller) in self.shared.cancels.lock().expect("cancel registry").values() {
            canceller.cancel();
        }
        // Closing a connection drops its session: uncommitted work is rolled back.
        self.shared.close_connections();
        let threads = std::mem::take(&mut *self.shared.threads.lock().expect("connection threads"));
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        for thread in threads {
            while !thread.is_finished() && std::time::Instant::now() < deadline {
                // A connection at an await sees the stop there, one reading its socket
                // finds it shut down; a statement whose call began after the first
                // request is asked again.
                self.shared.close_connections();
                for (_, canceller) in self.shared.cancels.lock().expect("cancel registry").values() {
                    canceller.cancel();
                }
                std::thread::sleep(Duration::from_millis(10));
            }
            if thread.is_finished() {
                let _ = thread.join();
            }
        }
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_timeout(Duration::from_secs(5));
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop_serving();
    }
}

/// Accepts clients until told to stop; each connection gets a thread of its own.
async fn accept(listener: tokio::net::TcpListener, shared: Arc<Shared>, mut stop: tokio::sync::oneshot::Receiver<()>) {
    loop {
        let (socket, peer) = tokio::select! {
            _ = &mut stop => return,
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(e) => {
                    eprintln!("lioscope serve: accept: {e}");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
        };
        let _ = socket.set_nodelay(true);
        let session = shared.db.session_without_user();
        let connection = connection::Connection::new(shared.clone(), session, &peer.ip().to_string());
        let socket = match socket.into_std() {
            Ok(socket) => socket,
            Err(e) => {
                eprintln!("lioscope serve: {peer}: {e}");
                continue;
            }
        };
        let serving = shared.clone();
        let thread = std::thread::Builder::new()
            .name(format!("lioscope-client-{}", peer.port()))
            .spawn(move || serve_connection(socket, connection, serving));
        match thread {
            Ok(handle) => {
                let mut threads = shared.threads.lock().expect("connection threads");
                threads.retain(|t| !t.is_finished());
                threads.push(handle);
            }
            Err(e) => eprintln!("lioscope serve: a thread for {peer}: {e}"),
        }
    }
}

/// One connection on a thread of its own, as a PostgreSQL backend is a process of its
/// own: its statements run on this thread, so a statement costs no hand-over between
/// threads, and a long one holds up no other client. The protocol runs on a runtime of
/// the thread's own ([`exchange`]); the server's stop ends it.
fn serve_connection(socket: std::net::TcpStream, connection: Arc<connection::Connection>, shared: Arc<Shared>) {
    let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("lioscope serve: a runtime for a client: {e}");
            return;
        }
    };
    runtime.block_on(async move {
        let Ok(socket) = tokio::net::TcpStream::from_std(socket) else { return };
        let tls = shared.tls.clone();
        tokio::select! {
            // A client that breaks the protocol is disconnected; the server goes on.
            _ = exchange::serve(socket, tls, connection, &shared.sockets) => {}
            _ = shared.stopping.notified() => {}
        }
    });
}
