//! The gateway's HTTP connections: the accept loop under [`crate::http::serve`].
//!
//! Every accepted socket gets `TCP_NODELAY`. Without it, Nagle's algorithm
//! holds back a response's second small write until the first is
//! acknowledged, and a client that has nothing to send delays that ACK
//! (~40 ms on Linux): a steady 40 ms per call for every client that reads a
//! response in more than one segment (the TypeScript and Python SDKs, plain
//! HTTP clients; issue 31). hyper writes a response's head and a known-size
//! body in one vectored write, so a JSON answer is one segment.
//!
//! Each connection is bounded ([`ConnectionLimits`]):
//! - at most `max_connections` at once; a connection past it is answered
//!   `503 Service Unavailable` (with `Retry-After`) and closed, while the
//!   connections already open go on;
//! - a connection that is waiting for a request must send the request's
//!   head (request line and headers) within `header_timeout` of its first
//!   byte (of being accepted, for its first request), or it is closed: a
//!   client that dribbles its headers (slowloris) holds a connection that
//!   long, no longer;
//! - a keep-alive connection with no request in progress is closed after
//!   `idle_timeout` without a byte.
//!
//! A request in progress (its body being read, its answer being written,
//! an event stream held open) is not timed here: the session's own expiry
//! and the connection cap bound those.
//!
//! hyper's own `header_read_timeout` starts when a connection begins
//! waiting for a request, so it would make the idle limit and the header
//! limit one number; the two are kept apart by `Watched`, which sees
//! the reads, and the response body's drop, which says when a request is
//! over. hyper-util's `GracefulShutdown` is behind a feature this
//! workspace does not build; [`TaskTracker`] does the same here.

use std::{
    convert::Infallible,
    future::Future,
    io,
    net::SocketAddr,
    pin::Pin,
    sync::{
        Arc,
        atomic::{AtomicBool, AtomicU64, Ordering},
    },
    task::{Context, Poll},
    time::Duration,
};

use axum::{Router, body::Body, extract::ConnectInfo};
use http::{Request, Response, StatusCode, header};
use http_body::{Body as HttpBody, Frame, SizeHint};
use hyper::body::Incoming;
use hyper_util::{rt::TokioIo, service::TowerToHyperService};
use tokio::{
    io::{AsyncRead, AsyncWrite, ReadBuf},
    net::{TcpListener, TcpStream},
    sync::Semaphore,
    time::{Instant, Sleep},
};
use tokio_util::{sync::CancellationToken, task::TaskTracker};

use crate::peer::Peer;

/// Bounds on the gateway's HTTP connections (see the module's docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConnectionLimits {
    /// Connections open at once; one more is answered 503 and closed.
    pub max_connections: usize,
    /// How long a request's head may take to arrive.
    pub header_timeout: Duration,
    /// How long a keep-alive connection may wait for its next request.
    pub idle_timeout: Duration,
}

impl ConnectionLimits {
    /// The default cap: far above what editors and agents on one machine
    /// open (a few each), far below the usual 20k+ descriptor limit of a
    /// service, so the gateway's own pipes to its servers never run out.
    pub const DEFAULT_MAX_CONNECTIONS: usize = 1024;
    /// The default header timeout: a real client sends its head in one
    /// write, well under a second even on a slow link.
    pub const DEFAULT_HEADER_TIMEOUT: Duration = Duration::from_secs(10);
    /// The default idle timeout: longer than the idle expiry of the usual
    /// client pools (Node's 4 s, httpx's 5 s, toolbridge's own 4 s), so a
    /// client is not caught writing into a connection being closed.
    pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(60);
}

impl Default for ConnectionLimits {
    fn default() -> Self {
        ConnectionLimits {
            max_connections: Self::DEFAULT_MAX_CONNECTIONS,
            header_timeout: Self::DEFAULT_HEADER_TIMEOUT,
            idle_timeout: Self::DEFAULT_IDLE_TIMEOUT,
        }
    }
}

/// Connections past the cap being answered 503 at once; past these, a
/// connection is closed without an answer (a flood cannot make the refusals
/// themselves a cost without bound).
const MAX_REFUSING: usize = 64;

/// Accepts connections on `listener` and serves `router` on each until
/// `shutdown` is cancelled; then stops accepting, lets each connection
/// finish the request it is serving, and returns when all are closed.
pub async fn serve(
    listener: TcpListener,
    router: Router,
    limits: ConnectionLimits,
    shutdown: CancellationToken,
) -> io::Result<()> {
    let open = Arc::new(Semaphore::new(limits.max_connections));
    let refusing = Arc::new(Semaphore::new(MAX_REFUSING));
    let tasks = TaskTracker::new();
    let mut builder = hyper::server::conn::http1::Builder::new();
    // The timeouts are `Watched`'s; hyper's would close idle connections
    // at the header timeout.
    builder.header_read_timeout(None);
    let builder = Arc::new(builder);
    loop {
        let (stream, peer) = tokio::select! {
            biased;
            () = shutdown.cancelled() => break,
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(error) => {
                    accept_failed(error, &shutdown).await;
                    continue;
                }
            },
        };
        if let Err(error) = stream.set_nodelay(true) {
            tracing::debug!("cannot set TCP_NODELAY on {peer}: {error}");
        }
        let Ok(permit) = open.clone().try_acquire_owned() else {
            if let Ok(permit) = refusing.clone().try_acquire_owned() {
                tracing::warn!(
                    "refusing a connection from {peer}: {} connections are open \
                     (the limit, --max-connections)",
                    limits.max_connections
                );
                tasks.spawn(async move {
                    refuse(stream, limits).await;
                    drop(permit);
                });
            }
            continue;
        };
        let connection = Connection {
            stream,
            remote: peer,
            router: router.clone(),
            limits,
        };
        let builder = builder.clone();
        let shutdown = shutdown.clone();
        tasks.spawn(async move {
            connection.run(&builder, &shutdown).await;
            drop(permit);
        });
    }
    drop(listener);
    tasks.close();
    tasks.wait().await;
    Ok(())
}

/// An accept that failed: a connection reset before it was accepted is
/// skipped; anything else (out of file descriptors) is logged, and the loop
/// waits a second so that it does not spin while the cause lasts.
async fn accept_failed(error: io::Error, shutdown: &CancellationToken) {
    if matches!(
        error.kind(),
        io::ErrorKind::ConnectionAborted
            | io::ErrorKind::ConnectionReset
            | io::ErrorKind::ConnectionRefused
    ) {
        return;
    }
    tracing::error!("cannot accept a connection: {error}");
    tokio::select! {
        () = shutdown.cancelled() => {}
        () = tokio::time::sleep(Duration::from_secs(1)) => {}
    }
}

/// One accepted connection within the cap.
struct Connection {
    stream: TcpStream,
    /// The peer's address, as accepted.
    remote: SocketAddr,
    router: Router,
    limits: ConnectionLimits,
}

impl Connection {
    async fn run(
        self,
        builder: &hyper::server::conn::http1::Builder,
        shutdown: &CancellationToken,
    ) {
        // Who is on the other end, once per connection, for `security`
        // (read from /proc here, in the connection's task, not in the
        // accept loop).
        let peer = match self.stream.local_addr() {
            Ok(local) => Peer::of(local, self.remote),
            Err(_) => Peer {
                addr: self.remote,
                uid: None,
            },
        };
        let activity = Activity::new();
        let io = TokioIo::new(Watched::new(self.stream, self.limits, activity.clone()));
        let service = Tracking {
            inner: TowerToHyperService::new(self.router),
            activity,
            peer,
        };
        let connection = builder.serve_connection(io, service);
        tokio::pin!(connection);
        let result = tokio::select! {
            result = connection.as_mut() => result,
            () = shutdown.cancelled() => {
                connection.as_mut().graceful_shutdown();
                connection.await
            }
        };
        if let Err(error) = result {
            tracing::debug!("connection closed: {error}");
        }
    }
}

/// Answers one request on a connection past the cap with 503 and closes
/// it (reading the request first, so the client sees the answer rather
/// than a reset).
async fn refuse(stream: TcpStream, limits: ConnectionLimits) {
    let max = limits.max_connections;
    let io = TokioIo::new(Watched::new(stream, limits, Activity::new()));
    let service = hyper::service::service_fn(move |_request: Request<Incoming>| async move {
        let mut response = Response::new(Body::from(format!(
            "toolbridge: the gateway has {max} connections open, its limit \
             (toolbridge serve --max-connections); try again later\n"
        )));
        *response.status_mut() = StatusCode::SERVICE_UNAVAILABLE;
        let headers = response.headers_mut();
        headers.insert(header::RETRY_AFTER, http::HeaderValue::from_static("1"));
        headers.insert(
            header::CONTENT_TYPE,
            http::HeaderValue::from_static("text/plain; charset=utf-8"),
        );
        Ok::<_, Infallible>(response)
    });
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder.keep_alive(false).header_read_timeout(None);
    if let Err(error) = builder.serve_connection(io, service).await {
        tracing::debug!("refused connection closed: {error}");
    }
}

/// The router as hyper's service, marking the connection busy from a
/// request's arrival until its response body is dropped (written out, or
/// the connection gone).
struct Tracking {
    inner: TowerToHyperService<Router>,
    activity: Arc<Activity>,
    peer: Peer,
}

impl hyper::service::Service<Request<Incoming>> for Tracking {
    type Response = Response<TrackedBody>;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, Infallible>> + Send>>;

    fn call(&self, mut request: Request<Incoming>) -> Self::Future {
        self.activity.start();
        request.extensions_mut().insert(ConnectInfo(self.peer));
        let activity = self.activity.clone();
        let response = self.inner.call(request);
        Box::pin(async move {
            let response = response.await?;
            Ok(response.map(|body| TrackedBody { body, activity }))
        })
    }
}

/// A response body that marks its connection idle again when dropped.
struct TrackedBody {
    body: Body,
    activity: Arc<Activity>,
}

impl HttpBody for TrackedBody {
    type Data = axum::body::Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

impl Drop for TrackedBody {
    fn drop(&mut self) {
        self.activity.done();
    }
}

/// Whether a connection is serving a request, and since when it is not.
struct Activity {
    busy: AtomicBool,
    /// When the connection was accepted: `idle_since` counts from it.
    accepted: Instant,
    /// Nanoseconds from `accepted` to the end of the last response.
    idle_since: AtomicU64,
}

impl Activity {
    fn new() -> Arc<Self> {
        Arc::new(Activity {
            busy: AtomicBool::new(false),
            accepted: Instant::now(),
            idle_since: AtomicU64::new(0),
        })
    }

    fn start(&self) {
        self.busy.store(true, Ordering::Release);
    }

    fn done(&self) {
        let nanos = u64::try_from(self.accepted.elapsed().as_nanos()).unwrap_or(u64::MAX);
        self.idle_since.store(nanos, Ordering::Relaxed);
        self.busy.store(false, Ordering::Release);
    }

    fn idle_since(&self) -> Instant {
        self.accepted + Duration::from_nanos(self.idle_since.load(Ordering::Relaxed))
    }
}

/// What a connection is waiting for, as its reads see it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Waiting {
    /// A request's head, since its first byte (or since the accept).
    Head,
    /// The first byte of the next request on a keep-alive connection.
    NextRequest,
    /// Nothing timed: a request is in progress.
    Busy,
}

/// A connection's socket, closing it (a read error hyper drops the
/// connection on) when the header or idle timeout passes. Writes pass
/// through untouched, vectored ones included: hyper writes a response's
/// head and body in one `writev`.
struct Watched {
    stream: TcpStream,
    limits: ConnectionLimits,
    activity: Arc<Activity>,
    waiting: Waiting,
    deadline: Pin<Box<Sleep>>,
}

impl Watched {
    fn new(stream: TcpStream, limits: ConnectionLimits, activity: Arc<Activity>) -> Self {
        Watched {
            stream,
            limits,
            activity,
            waiting: Waiting::Head,
            deadline: Box::pin(tokio::time::sleep(limits.header_timeout)),
        }
    }

    fn wait_for(&mut self, waiting: Waiting, deadline: Instant) {
        self.waiting = waiting;
        self.deadline.as_mut().reset(deadline);
    }
}

impl AsyncRead for Watched {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        let read = Pin::new(&mut this.stream).poll_read(cx, buf);
        if this.activity.busy.load(Ordering::Acquire) {
            // hyper reads while it answers (to see a client go away), but
            // once the answer is out it reads again only when bytes come:
            // the timer, armed now and again each time it fires while the
            // request lasts, is what brings this read back to start the
            // idle timeout.
            if this.waiting != Waiting::Busy {
                this.wait_for(Waiting::Busy, Instant::now() + this.limits.idle_timeout);
            }
            if read.is_pending() && this.deadline.as_mut().poll(cx).is_ready() {
                this.wait_for(Waiting::Busy, Instant::now() + this.limits.idle_timeout);
                let _ = this.deadline.as_mut().poll(cx);
            }
            return read;
        }
        if this.waiting == Waiting::Busy {
            // The last response is out: the next request may take its time,
            // counted from when the response's body was done.
            let done = this.activity.idle_since();
            this.wait_for(Waiting::NextRequest, done + this.limits.idle_timeout);
        }
        match read {
            Poll::Ready(Ok(())) => {
                if this.waiting == Waiting::NextRequest && buf.filled().len() > before {
                    this.wait_for(Waiting::Head, Instant::now() + this.limits.header_timeout);
                }
                Poll::Ready(Ok(()))
            }
            Poll::Ready(Err(error)) => Poll::Ready(Err(error)),
            Poll::Pending => {
                if this.deadline.as_mut().poll(cx).is_pending() {
                    return Poll::Pending;
                }
                let what = match this.waiting {
                    Waiting::Head => "a request's headers took longer than the header timeout",
                    _ => "the connection was idle longer than the idle timeout",
                };
                Poll::Ready(Err(io::Error::new(io::ErrorKind::TimedOut, what)))
            }
        }
    }
}

impl AsyncWrite for Watched {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().stream).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().stream).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().stream).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().stream).poll_shutdown(cx)
    }
}
