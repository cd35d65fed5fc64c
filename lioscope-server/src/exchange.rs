//! One connection's exchange of messages with its client, on the connection's own thread.
//!
//! The TLS negotiation, the startup and the log-in run on the runtime's non-blocking
//! socket, within the minute a client has to log in. Once logged in, a plain TCP
//! connection is read and written with blocking system calls ([`BlockingSocket`]): the
//! thread belongs to this connection alone, so while it waits for the next message nothing
//! else needs it, and a blocking `recv` sleeps in the kernel until the message arrives and
//! returns it, where the runtime first waits in `epoll_wait` and reads after: one system
//! call a message instead of two. A TLS connection stays on the runtime's socket.
//!
//! Invariants: messages are handled one at a time and in order, as pgwire's own loop
//! handles them (a Terminate, a fatal error or a cancel request's connection ends the
//! exchange); bytes the client sent ahead (pipelined messages) move with the connection
//! from one socket to the other; a blocking read or write ends when the server's stop
//! shuts the socket down ([`OpenSockets`]), which the connection registers before
//! its first blocking read and withdraws before the socket is closed.

use crate::connection::Connection;
use futures::StreamExt;
use pgwire::api::{ClientInfo, ErrorHandler, PgWireConnectionState, PgWireServerHandlers};
use pgwire::messages::PgWireFrontendMessage;
use pgwire::tokio::server::{MaybeTls, PgWireMessageServerCodec, negotiate_tls, process_error, process_message};
use std::collections::HashMap;
use std::io;
use std::os::fd::AsRawFd;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio_util::codec::{Framed, FramedParts};

/// How long a client has from connecting to being logged in.
const LOGIN_WITHIN: Duration = Duration::from_secs(60);

type Codec = PgWireMessageServerCodec<crate::connection::Statement>;

/// Serves one client from its connection to its end: `connection` handles its messages.
/// `sockets` learns the connection's socket once it is read with blocking calls, so
/// that the server's stop can end a read.
pub async fn serve(
    socket: tokio::net::TcpStream,
    tls: Option<pgwire::tokio::TlsAcceptor>,
    connection: Arc<Connection>,
    sockets: &OpenSockets,
) {
    let login_limit = tokio::time::sleep(LOGIN_WITHIN);
    tokio::pin!(login_limit);
    let negotiated = tokio::select! {
        _ = &mut login_limit => return,
        negotiated = negotiate_tls::<crate::connection::Statement>(socket, tls) => negotiated,
    };
    // No socket: a direct TLS request without TLS configured, or an I/O error.
    let Ok(Some(mut socket)) = negotiated else { return };
    if exchange(&mut socket, &connection, Some(login_limit.as_mut())).await == Ended::Closed {
        return;
    }
    match logged_in(socket) {
        LoggedIn::Blocking(mut socket) => {
            let Some(_registered) = socket.get_ref().stream().ok().and_then(|tcp| sockets.register(tcp)) else {
                return;
            };
            exchange(&mut socket, &connection, None).await;
        }
        LoggedIn::Evented(mut socket) => {
            exchange(&mut socket, &connection, None).await;
        }
    }
}

/// The sockets of the logged-in connections that read with blocking calls
/// ([`serve`]), which the server's stop shuts down to end their reads: each
/// registered (as a second handle) from before its first blocking read until it is
/// about to be closed, so the stop never touches a closed socket's reused descriptor.
#[derive(Default)]
pub struct OpenSockets {
    next: AtomicU64,
    open: Mutex<HashMap<u64, std::net::TcpStream>>,
}

impl OpenSockets {
    /// Registers `socket` until the returned registration is dropped; `None` when it cannot
    /// be registered (no second handle to it).
    fn register(&self, socket: &std::net::TcpStream) -> Option<RegisteredSocket<'_>> {
        let handle = socket.try_clone().ok()?;
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        self.open.lock().expect("open sockets").insert(id, handle);
        Some(RegisteredSocket { sockets: self, id })
    }

    /// Shuts every registered socket down: a read or write blocked on it returns.
    pub fn shut_down_all(&self) {
        for socket in self.open.lock().expect("open sockets").values() {
            let _ = socket.shutdown(std::net::Shutdown::Both);
        }
    }
}

/// A socket's place in [`OpenSockets`], given up when dropped.
struct RegisteredSocket<'s> {
    sockets: &'s OpenSockets,
    id: u64,
}

impl Drop for RegisteredSocket<'_> {
    fn drop(&mut self) {
        self.sockets.open.lock().expect("open sockets").remove(&self.id);
    }
}

/// How an exchange ended.
#[derive(PartialEq, Eq)]
enum Ended {
    /// The connection is over.
    Closed,
    /// The client logged in (for an exchange asked to stop there).
    LoggedIn,
}

/// Reads and handles the client's messages until the connection ends or, given the
/// log-in's time limit, until the client is logged in (ready for queries).
async fn exchange<S>(
    socket: &mut Framed<S, Codec>,
    connection: &Arc<Connection>,
    mut login_limit: Option<Pin<&mut tokio::time::Sleep>>,
) -> Ended
where
    S: AsyncRead + AsyncWrite + Unpin + Send + Sync + 'static,
{
    // The connection handles the messages itself (its statement type is the one the
    // codec knows); cancel requests and the error hook come from its handler set.
    let handlers = crate::connection::Handlers(connection.clone());
    let (cancel, errors) = (handlers.cancel_handler(), handlers.error_handler());
    loop {
        let logging_in = matches!(
            socket.state(),
            PgWireConnectionState::AwaitingStartup | PgWireConnectionState::AuthenticationInProgress
        );
        let message = match login_limit.as_mut() {
            Some(_) if !logging_in => return Ended::LoggedIn,
            Some(limit) => tokio::select! {
                _ = limit.as_mut() => return Ended::Closed,
                message = socket.next() => message,
            },
            None => socket.next().await,
        };
        let Some(Ok(message)) = message else { return Ended::Closed };
        // The client hangs up: close at once (some clients wait for the server to).
        if matches!(message, PgWireFrontendMessage::Terminate(_)) {
            return Ended::Closed;
        }
        let extended_query = match socket.state() {
            PgWireConnectionState::CopyInProgress(extended_query) => extended_query,
            _ => message.is_extended_query(),
        };
        // A cancel request comes on a connection of its own, which it ends.
        let cancel_request = matches!(message, PgWireFrontendMessage::CancelRequest(_));
        let handled = process_message(
            message,
            socket,
            connection.clone(),
            connection.clone(),
            connection.clone(),
            connection.clone(),
            cancel.clone(),
        )
        .await;
        if let Err(mut error) = handled {
            errors.on_error(socket, &mut error);
            let fatal = error.is_fatal();
            if process_error(socket, error, extended_query).await.is_err() || fatal {
                return Ended::Closed;
            }
        }
        if cancel_request {
            return Ended::Closed;
        }
    }
}

/// A logged-in connection's framed socket.
enum LoggedIn {
    /// Plain TCP, moved to a [`BlockingSocket`] with whatever the client sent ahead.
    Blocking(Framed<BlockingSocket, Codec>),
    /// TLS, left on the runtime's socket.
    Evented(Framed<MaybeTls, Codec>),
}

/// The logged-in connection on a [`BlockingSocket`] where it is plain TCP.
fn logged_in(socket: Framed<MaybeTls, Codec>) -> LoggedIn {
    let parts = socket.into_parts();
    let MaybeTls::Plain(tcp) = parts.io else {
        return LoggedIn::Evented(Framed::from_parts(parts));
    };
    // Out of the runtime's registration, into blocking mode; a socket lost on the way
    // reads as closed.
    let tcp = tcp.into_std().and_then(|tcp| tcp.set_nonblocking(false).map(|()| tcp)).ok();
    let mut moved = FramedParts::new(BlockingSocket(tcp), parts.codec);
    moved.read_buf = parts.read_buf;
    moved.write_buf = parts.write_buf;
    LoggedIn::Blocking(Framed::from_parts(moved))
}

/// A connected TCP socket in blocking mode, read and written on the calling thread: every
/// poll is ready at once, having waited in the kernel as long as the call took. Only a
/// thread that serves nothing else may poll it. `None` is a socket lost while being moved,
/// which reads as closed.
pub struct BlockingSocket(Option<std::net::TcpStream>);

impl BlockingSocket {
    fn stream(&self) -> io::Result<&std::net::TcpStream> {
        self.0.as_ref().ok_or_else(|| io::Error::from(io::ErrorKind::NotConnected))
    }
}

impl AsyncRead for BlockingSocket {
    fn poll_read(self: Pin<&mut Self>, _: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let Some(tcp) = self.0.as_ref() else { return Poll::Ready(Ok(())) };
        // SAFETY: recv writes at most `room` bytes at the unfilled part's start and
        // initializes exactly the `n` it reports.
        let unfilled = unsafe { buf.unfilled_mut() };
        let room = unfilled.len();
        loop {
            // SAFETY: the pointer and length are those of the unfilled part, borrowed here.
            let n = unsafe { libc::recv(tcp.as_raw_fd(), unfilled.as_mut_ptr().cast(), room, 0) };
            if n >= 0 {
                let n = n as usize;
                // SAFETY: recv initialized these n bytes.
                unsafe { buf.assume_init(n) };
                buf.advance(n);
                return Poll::Ready(Ok(()));
            }
            let error = io::Error::last_os_error();
            if error.kind() != io::ErrorKind::Interrupted {
                return Poll::Ready(Err(error));
            }
        }
    }
}

impl AsyncWrite for BlockingSocket {
    fn poll_write(self: Pin<&mut Self>, _: &mut Context<'_>, bytes: &[u8]) -> Poll<io::Result<usize>> {
        use std::io::Write;
        let written = self.stream().and_then(|mut tcp| {
            loop {
                match tcp.write(bytes) {
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    done => break done,
                }
            }
        });
        Poll::Ready(written)
    }

    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(self.stream().and_then(|tcp| tcp.shutdown(std::net::Shutdown::Write)))
    }
}
