//! One connection's exchange of messages with its client, on the connection's own thread.
//!
//! The TLS negotiation, the startup and the log-in run on the runtime's non-blocking
//! socket, within the minute a client has to log in. Once logged in, a plain TCP
//! connection is read and written with blocking system calls ([`BlockingSocket`]): the
//! thread belongs to this connection alone, so while it waits for the next message nothing
//! else needs it, and a blocking `recv` sleeps in the kernel until the message arrives and
//! returns it, where the runtime first waits in `epoll_wait` and reads after: one system
//! call a message instead of two. A TLS connection stays on the runtime's socket, as does
//! one whose socket cannot be registered for the server's stop.
//!
//! Invariants: messages are handled one at a time and in order, as pgwire's own loop
//! handles them (a Terminate, a fatal error or a cancel request's connection ends the
//! exchange); bytes the client sent ahead (pipelined messages) move with the connection
//! from one socket to the other; the server's stop ends a blocking connection before its
//! next message, and shuts its socket down so that a read or write blocked on it returns
//! ([`OpenSockets`]: the connection registers its socket before its first blocking read
//! and withdraws it before the socket is closed).

use crate::connection::Connection;
use futures::StreamExt;
use pgwire::api::{ClientInfo, ErrorHandler, PgWireConnectionState, PgWireServerHandlers};
use pgwire::messages::PgWireFrontendMessage;
use pgwire::tokio::server::{MaybeTls, PgWireMessageServerCodec, negotiate_tls, process_error, process_message};
use std::collections::HashMap;
use std::io;
use std::os::fd::{AsFd, AsRawFd};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
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
    if exchange(&mut socket, &connection, Some(login_limit.as_mut()), None).await == Ended::Closed {
        return;
    }
    match logged_in(socket, sockets) {
        LoggedIn::Blocking(mut socket, _registered) => {
            exchange(&mut socket, &connection, None, Some(sockets)).await;
        }
        LoggedIn::Evented(mut socket) => {
            exchange(&mut socket, &connection, None, None).await;
        }
        LoggedIn::Stopping => {}
    }
}

/// The sockets of the logged-in connections that read with blocking calls
/// ([`serve`]), which the server's stop shuts down to end their reads: each
/// registered (as a second handle) from before its first blocking read until it is
/// about to be closed, so the stop never touches a closed socket's reused descriptor.
/// Once stopping, no socket is registered, and each connection ends before its next
/// message (a read that finds bytes still queued returns them, shut down or not).
#[derive(Default)]
pub struct OpenSockets {
    next: AtomicU64,
    open: Mutex<HashMap<u64, std::net::TcpStream>>,
    stopping: AtomicBool,
}

/// Why a socket was not registered.
enum Unregistered {
    /// The server is stopping.
    Stopping,
    /// No second handle to the socket could be made (no descriptor left).
    NoHandle,
}

impl OpenSockets {
    /// Registers `socket` until the returned registration is dropped.
    fn register(&self, socket: &impl AsFd) -> Result<RegisteredSocket<'_>, Unregistered> {
        let mut open = self.open.lock().expect("open sockets");
        if self.stopping.load(Ordering::Relaxed) {
            return Err(Unregistered::Stopping);
        }
        let handle = socket.as_fd().try_clone_to_owned().map_err(|_| Unregistered::NoHandle)?;
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        open.insert(id, std::net::TcpStream::from(handle));
        Ok(RegisteredSocket { sockets: self, id })
    }

    /// Stops: shuts every registered socket down, so that a read or write blocked on it
    /// returns, and registers no more.
    pub fn shut_down_all(&self) {
        let open = self.open.lock().expect("open sockets");
        self.stopping.store(true, Ordering::Relaxed);
        for socket in open.values() {
            let _ = socket.shutdown(std::net::Shutdown::Both);
        }
    }

    fn stopping(&self) -> bool {
        self.stopping.load(Ordering::Relaxed)
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
/// log-in's time limit, until the client is logged in (ready for queries). Given the
/// open sockets, it ends before the next message once the server is stopping (a
/// blocking socket's exchange never yields to the runtime, where the stop's
/// notification waits).
async fn exchange<S>(
    socket: &mut Framed<S, Codec>,
    connection: &Arc<Connection>,
    mut login_limit: Option<Pin<&mut tokio::time::Sleep>>,
    sockets: Option<&OpenSockets>,
) -> Ended
where
    S: AsyncRead + AsyncWrite + Unpin + Send + Sync + 'static,
{
    // The connection handles the messages itself (its statement type is the one the
    // codec knows); cancel requests and the error hook come from its handler set.
    let handlers = crate::connection::Handlers(connection.clone());
    let (cancel, errors) = (handlers.cancel_handler(), handlers.error_handler());
    loop {
        if sockets.is_some_and(OpenSockets::stopping) {
            return Ended::Closed;
        }
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
enum LoggedIn<'s> {
    /// Plain TCP, moved to a [`BlockingSocket`] with whatever the client sent ahead, and
    /// registered for the server's stop.
    Blocking(Framed<BlockingSocket, Codec>, RegisteredSocket<'s>),
    /// TLS, or a socket that could not be registered: left on the runtime's socket.
    Evented(Framed<MaybeTls, Codec>),
    /// The server is stopping: the connection ends.
    Stopping,
}

/// The logged-in connection on a [`BlockingSocket`] where it is plain TCP and its socket
/// is registered in `sockets`.
fn logged_in(socket: Framed<MaybeTls, Codec>, sockets: &OpenSockets) -> LoggedIn<'_> {
    let parts = socket.into_parts();
    let MaybeTls::Plain(tcp) = parts.io else {
        return LoggedIn::Evented(Framed::from_parts(parts));
    };
    let buffered = Buffered { codec: parts.codec, read: parts.read_buf, write: parts.write_buf };
    let registered = match sockets.register(&tcp) {
        Ok(registered) => registered,
        Err(Unregistered::Stopping) => return LoggedIn::Stopping,
        Err(Unregistered::NoHandle) => return LoggedIn::Evented(buffered.over(MaybeTls::Plain(tcp))),
    };
    // Out of the runtime's registration, into blocking mode; a socket lost on the way
    // reads as closed.
    let tcp = tcp.into_std().and_then(|tcp| tcp.set_nonblocking(false).map(|()| tcp)).ok();
    LoggedIn::Blocking(buffered.over(BlockingSocket(tcp)), registered)
}

/// A framed connection's codec and the bytes it has buffered either way, taken off its
/// socket.
struct Buffered {
    codec: Codec,
    read: bytes::BytesMut,
    write: bytes::BytesMut,
}

impl Buffered {
    /// The connection framed again, over `io`.
    fn over<I>(self, io: I) -> Framed<I, Codec> {
        let mut parts = FramedParts::new(io, self.codec);
        parts.read_buf = self.read;
        parts.write_buf = self.write;
        Framed::from_parts(parts)
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;
    use std::net::{TcpListener, TcpStream};

    /// A connected pair of loopback sockets: (the server's end, the client's).
    fn pair() -> (TcpStream, TcpStream) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let client = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        (listener.accept().unwrap().0, client)
    }

    #[test]
    fn the_stop_shuts_registered_sockets_down_and_registers_no_more() {
        let sockets = OpenSockets::default();
        let (served, mut client) = pair();
        let (withdrawn, mut other_client) = pair();
        let registered = sockets.register(&served).ok().expect("registered");
        drop(sockets.register(&withdrawn).ok().expect("registered"));
        assert!(!sockets.stopping());
        sockets.shut_down_all();
        assert!(sockets.stopping());
        client.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        assert_eq!(client.read(&mut [0u8; 1]).unwrap(), 0, "the registered socket was shut down");
        // A registration given up is not the stop's to touch.
        other_client.set_read_timeout(Some(Duration::from_millis(200))).unwrap();
        let idle = other_client.read(&mut [0u8; 1]).unwrap_err();
        assert!(matches!(idle.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut), "{idle}");
        let (late, _late_client) = pair();
        assert!(matches!(sockets.register(&late), Err(Unregistered::Stopping)), "a socket after the stop");
        drop(registered);
        assert!(sockets.open.lock().unwrap().is_empty());
    }
}
