//! One live connection to one server: the rmcp client, its supervisor task,
//! and what the server told us about itself.

mod handshake;

use std::{
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use rmcp::{
    ClientHandler, RoleClient,
    model::{ClientCapabilities, ClientConfig, Implementation, ProgressNotificationParam},
    service::{NotificationContext, Peer, RunningService},
};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::{PoolError, progress::ProgressLog};
use crate::{
    config::{ServerSpec, TransportKind},
    transport::{StderrTail, TransportContext, create_transport},
};

/// How many stderr lines an error shows.
const ERROR_STDERR_LINES: usize = 20;

/// What a server told us when it started, for `servers test`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ConnectionInfo {
    /// The transport used (after auto-detection).
    pub transport: TransportKind,
    /// The negotiated protocol version.
    pub protocol_version: String,
    /// The name the server reports for itself.
    pub server_name: String,
    /// The version the server reports for itself.
    pub server_version: String,
    /// How long the start (spawn/connect and handshake) took.
    #[serde(serialize_with = "as_millis")]
    pub start_time: Duration,
}

fn as_millis<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(d.as_secs_f64() * 1000.0)
}

/// The shared tool-list cache of one server. The handler clears it when the
/// server sends `notifications/tools/list_changed`.
#[derive(Debug, Default)]
pub(super) struct ToolCache {
    /// The cached list and the generation it was read at.
    pub(super) tools: Mutex<Option<Arc<Vec<crate::tools::McpTool>>>>,
    /// Bumped on every invalidation, so a listing that raced with one is not cached.
    pub(super) generation: std::sync::atomic::AtomicU64,
}

impl ToolCache {
    pub(super) fn invalidate(&self) {
        self.generation
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        *self.tools.lock().unwrap_or_else(|e| e.into_inner()) = None;
    }
}

/// The client side of the connection: answers the server's notifications.
pub(super) struct Handler {
    server: String,
    cache: Arc<ToolCache>,
    /// Where progress notifications are noted, to restart call timers.
    progress: Arc<ProgressLog>,
}

impl ClientHandler for Handler {
    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        tracing::debug!(server = %self.server, "tool list changed; dropping the cache");
        self.cache.invalidate();
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.progress.record(params.progress_token);
    }

    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("toolbridge", env!("CARGO_PKG_VERSION")),
        )
    }
}

/// A live connection.
pub(super) struct Connection {
    /// The handle callers send requests through.
    pub(super) peer: Peer<RoleClient>,
    /// What the server told us at start.
    pub(super) info: ConnectionInfo,
    /// The server's stderr (stdio servers only).
    pub(super) stderr: Option<StderrTail>,
    /// When progress last arrived for the calls in flight.
    pub(super) progress: Arc<ProgressLog>,
    /// Cancelled when the connection has ended, for whatever reason.
    pub(super) ended: CancellationToken,
    /// Tells the supervisor to close the connection.
    close: CancellationToken,
    /// The supervisor task; awaited by [`Connection::close`].
    supervisor: Mutex<Option<JoinHandle<()>>>,
    /// When the connection was made (to tell a crash loop from a rare crash).
    pub(super) since: Instant,
}

impl Connection {
    /// The last stderr lines, for error messages.
    pub(super) fn stderr_tail(&self) -> Option<String> {
        self.stderr
            .as_ref()
            .and_then(|t| t.last(ERROR_STDERR_LINES))
    }

    /// Closes the connection gracefully and waits for the transport to be
    /// closed (for stdio: stdin closed, then SIGTERM, then SIGKILL of the
    /// process group).
    pub(super) async fn close(&self) {
        self.close.cancel();
        let handle = self
            .supervisor
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        if let Some(handle) = handle {
            let _ = handle.await;
        }
    }
}

/// Starts `spec` and completes the MCP handshake. `on_end` runs in the
/// supervisor when the connection ends by itself (a crash or the server
/// closing), not when it was closed by us. `max_call_time` bounds any call
/// (progress older than that is forgotten).
pub(super) async fn connect(
    spec: &ServerSpec,
    ctx: &TransportContext,
    cache: Arc<ToolCache>,
    max_call_time: Duration,
    on_end: impl FnOnce(Option<String>) + Send + 'static,
) -> Result<Arc<Connection>, PoolError> {
    let started = Instant::now();
    let server = spec.name.clone();
    let transport = create_transport(spec, ctx).await?;
    let kind = transport.kind();
    let stderr = transport.stderr_tail();
    let progress = Arc::new(ProgressLog::new(max_call_time));
    let handler = Handler {
        server: server.clone(),
        cache,
        progress: progress.clone(),
    };
    let service: RunningService<RoleClient, Handler> =
        match handshake::start(handler, transport).await {
            Ok(service) => service,
            Err(e) => {
                let stderr = match &stderr {
                    Some(tail) => tail.settled_last(ERROR_STDERR_LINES).await,
                    None => None,
                };
                return Err(PoolError::Start {
                    server,
                    reason: describe_init_error(&e),
                    stderr,
                });
            }
        };
    let peer = service.peer().clone();
    let info = peer_info(&peer, kind, started.elapsed());
    tracing::debug!(
        server = %server,
        transport = %kind,
        protocol = %info.protocol_version,
        ms = info.start_time.as_millis() as u64,
        "connected"
    );
    let ended = CancellationToken::new();
    let close = CancellationToken::new();
    let supervisor = tokio::spawn(supervise(
        server,
        service,
        close.clone(),
        ended.clone(),
        stderr.clone(),
        on_end,
    ));
    Ok(Arc::new(Connection {
        peer,
        info,
        stderr,
        progress,
        ended,
        close,
        supervisor: Mutex::new(Some(supervisor)),
        since: started,
    }))
}

/// Owns the running service until it ends by itself or `close` is cancelled.
async fn supervise(
    server: String,
    service: RunningService<RoleClient, Handler>,
    close: CancellationToken,
    ended: CancellationToken,
    stderr: Option<StderrTail>,
    on_end: impl FnOnce(Option<String>),
) {
    let stop = service.cancellation_token();
    let mut waiting = std::pin::pin!(service.waiting());
    tokio::select! {
        _ = close.cancelled() => {
            // The service loop closes the transport on its way out.
            stop.cancel();
            let _ = waiting.await;
            ended.cancel();
        }
        reason = &mut waiting => {
            ended.cancel();
            let tail = match &stderr {
                Some(tail) => tail.settled_last(ERROR_STDERR_LINES).await,
                None => None,
            };
            tracing::warn!(server = %server, reason = ?reason, "server connection ended");
            on_end(tail);
        }
    }
}

fn peer_info(peer: &Peer<RoleClient>, kind: TransportKind, start_time: Duration) -> ConnectionInfo {
    let info = peer.peer_info();
    let (protocol_version, server_name, server_version) = match info.as_deref() {
        Some(info) => (
            info.protocol_version.to_string(),
            info.server_info
                .as_ref()
                .map(|i| i.name.clone())
                .unwrap_or_default(),
            info.server_info
                .as_ref()
                .map(|i| i.version.clone())
                .unwrap_or_default(),
        ),
        None => Default::default(),
    };
    ConnectionInfo {
        transport: kind,
        protocol_version,
        server_name,
        server_version,
        start_time,
    }
}

fn describe_init_error(e: &rmcp::service::ClientInitializeError) -> String {
    use rmcp::service::ClientInitializeError as E;
    match e {
        E::ConnectionClosed(_) => {
            "the server closed the connection during the handshake".to_owned()
        }
        E::LegacyFallbackFailed { fallback, .. } => describe_init_error(fallback),
        E::TransportError { error, context } => format!("{context}: {error}"),
        other => other.to_string(),
    }
}
