//! One live connection to one server: the rmcp client, its supervisor task,
//! and what the server told us about itself.

// Roots and sampling are deprecated by SEP-2577 but still carried (see
// client_features).
#![allow(deprecated)]

mod handshake;

use crate::lock::LockUnpoisoned as _;
use std::{
    sync::{Arc, Mutex, Weak},
    time::{Duration, Instant},
};

use rmcp::{
    ClientHandler, RoleClient,
    model::{
        ClientConfig, CreateMessageRequestParams, CreateMessageResult, CustomNotification,
        ElicitRequestParams, ElicitResult, ErrorData, Implementation, ListRootsResult,
        ProgressNotificationParam, ResourceUpdatedNotificationParam, TaskStatusNotificationParams,
    },
    service::{InboundStreamOrigin, NotificationContext, Peer, RequestContext, RunningService},
};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;
use tracing::Instrument as _;

use super::{
    ClientFeatures, PoolError,
    cache::ToolCache,
    catalog::Catalog,
    in_flight::{InFlight, Kind, Route, Tie},
    list_events::ListEvents,
    listen::{self, Listen},
    logs::{self, ServerLogs},
    param_headers::ParamHeaders,
    progress::ProgressLog,
    task_events::TaskEvents,
};
use crate::{
    config::{ServerSpec, TransportKind},
    transport::{
        AnyTransport, EndReason, StderrTail, TransportContext, TransportError, create_transport,
    },
};

/// How many stderr lines an error shows.
pub(super) const ERROR_STDERR_LINES: usize = 20;

/// The place of a current connection's session connection (opened by
/// `session_connection`, which says when and why). Here, beside the
/// connection that holds it and that it holds.
#[derive(Default)]
pub(super) struct SessionConnection {
    /// The live session connection. A std mutex: held only to clone or swap.
    pub(super) current: Mutex<Option<Arc<Connection>>>,
    /// Serializes starts, so concurrent first requests open it once.
    pub(super) starting: tokio::sync::Mutex<()>,
    /// Set when it could not be opened: not tried again beside this
    /// current connection.
    pub(super) unavailable: std::sync::atomic::AtomicBool,
}

impl SessionConnection {
    /// The live session connection, if there is one.
    pub(super) fn live(&self) -> Option<Arc<Connection>> {
        self.current
            .lock_unpoisoned()
            .as_ref()
            .filter(|c| !c.ended.is_cancelled())
            .cloned()
    }

    /// Closes the session connection, if one is open (its current
    /// connection is closing).
    pub(super) async fn close(&self) {
        let conn = self.current.lock_unpoisoned().take();
        if let Some(conn) = conn {
            // Boxed: a connection's close closes its session connection.
            Box::pin(conn.close()).await;
        }
    }
}

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
    /// How long the start (spawn/connect and handshake) took; in JSON
    /// `startMs`, whole milliseconds.
    #[serde(rename = "startMs", serialize_with = "as_millis")]
    pub start_time: Duration,
}

fn as_millis<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_u64(u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// The client side of the connection: answers the server's notifications.
pub(super) struct Handler {
    server: String,
    /// Where progress notifications are noted, to restart call timers.
    progress: Arc<ProgressLog>,
    /// Where they are passed on to whoever watches the server's progress
    /// ([`Pool::watch_progress`](super::Pool::watch_progress)).
    feed: ProgressFeed,
    /// The tool, resource and prompt lists to drop when they change, and
    /// where resource updates go (the same for a `subscriptions/listen`
    /// stream's notifications: see `listen`).
    lists: ListEvents,
    /// The pool's handlers: they decide the capabilities declared, complete
    /// a call's, and answer what no call claims.
    features: ClientFeatures,
    /// The requests in flight on the server: whose each message is.
    in_flight: Arc<InFlight>,
    /// This connection's number in `in_flight`.
    number: u64,
    /// The level log messages are wanted at, and the pool's handler.
    logs: Arc<ServerLogs>,
    /// Task status notifications, to wake the task's poller.
    task_events: TaskEvents,
    /// The server's `roots/list` requests, asked and answered.
    roots: Arc<RootsAsked>,
    /// The version `initialize` asks for: the latest with it, but
    /// [`Generation::Sessions`] asks for it by name (rmcp's default is the
    /// latest version, which has no `initialize`).
    initialize_version: Option<rmcp::model::ProtocolVersion>,
}

/// Which handshake a connection makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Generation {
    /// `server/discover` at the latest version, else `initialize`: a
    /// slot's current connection.
    Latest,
    /// `initialize` at the latest version that has it, with a session: the
    /// second connection to a server that speaks both generations
    /// (`session_connection`).
    Sessions,
}

/// How many `roots/list` requests a server sent and how many were
/// answered, for [`settle_roots`].
#[derive(Debug, Default)]
struct RootsAsked {
    asked: std::sync::atomic::AtomicUsize,
    answered: std::sync::atomic::AtomicUsize,
    notify: tokio::sync::Notify,
}

impl RootsAsked {
    fn asked(&self) -> usize {
        self.asked.load(std::sync::atomic::Ordering::Acquire)
    }

    /// Waits until every request asked so far is answered.
    async fn all_answered(&self) {
        loop {
            let answered = self.notify.notified();
            if self.answered.load(std::sync::atomic::Ordering::Acquire) >= self.asked() {
                return;
            }
            answered.await;
        }
    }
}

/// How long each ping of [`settle_roots`] may take: a server that does not
/// answer pings only loses this much of its start.
const ROOTS_PING_WAIT: Duration = Duration::from_secs(1);

/// A server that asks for its roots when it is initialized (server-
/// filesystem) applies them after the answer: until then a call is judged
/// by the roots it had (none) and refused. Before the connection is handed
/// out: a ping, whose answer comes after any `roots/list` the server sent
/// on `notifications/initialized`; if it asked, its answer, and a second
/// ping, so that the answer reached the server before the first call.
async fn settle_roots(peer: &Peer<RoleClient>, roots: &RootsAsked, deadline: tokio::time::Instant) {
    let ping = || async {
        let request = rmcp::model::ClientRequest::PingRequest(Default::default());
        let wait = (tokio::time::Instant::now() + ROOTS_PING_WAIT).min(deadline);
        matches!(
            tokio::time::timeout_at(wait, peer.send_request(request)).await,
            Ok(Ok(_))
        )
    };
    if !ping().await || roots.asked() == 0 {
        return;
    }
    if tokio::time::timeout_at(deadline, roots.all_answered())
        .await
        .is_ok()
    {
        ping().await;
    }
}

impl Handler {
    /// The handlers for a server-to-client request (see `in_flight`), or
    /// the -32601 a refused one is answered with.
    fn route(&self, context: &RequestContext<RoleClient>) -> Result<ClientFeatures, ErrorData> {
        let tie = Tie::of_request(context.extensions.get::<InboundStreamOrigin>());
        match self.in_flight.route(self.number, tie, Kind::Request) {
            Route::Call(features) => Ok(features.or(&self.features)),
            Route::Fallback => Ok(self.features.clone()),
            Route::Refused => {
                tracing::info!(
                    server = %self.server,
                    "refused a request the server sent outside the call that caused it \
                     (that call ended, or was another client's)"
                );
                Err(ErrorData::new(
                    rmcp::model::ErrorCode::METHOD_NOT_FOUND,
                    format!(
                        "toolbridge refused the request of server \"{}\": it came after the \
                         call that caused it ended, or while a call of another client ended, so \
                         it may not be the one call's in flight now; ask within the call that \
                         needs the answer",
                        self.server
                    ),
                    None,
                ))
            }
        }
    }
}

/// The progress notifications of one server, for those who watch them.
pub(super) type ProgressFeed = tokio::sync::broadcast::Sender<ProgressNotificationParam>;

impl ClientHandler for Handler {
    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.lists.tools_changed();
    }

    async fn on_resource_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.lists.resources_changed();
    }

    async fn on_prompt_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.lists.prompts_changed();
    }

    async fn on_resource_updated(
        &self,
        params: ResourceUpdatedNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.lists.resource_updated(params);
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        if self.feed.receiver_count() > 0 {
            let _ = self.feed.send(params.clone());
        }
        self.progress.arrived(params);
    }

    // Logging is deprecated by SEP-2577, but both protocols still carry it.
    #[allow(deprecated)]
    async fn on_logging_message(
        &self,
        params: rmcp::model::LoggingMessageNotificationParam,
        context: NotificationContext<RoleClient>,
    ) {
        // The request whose response stream it came on (see `in_flight`).
        // rmcp leaves the message's `_meta` in the context's extensions.
        let related = context
            .extensions
            .get::<rmcp::model::NotificationMetaObject>()
            .and_then(|meta| meta.get(logs::RELATED_REQUEST_META))
            .and_then(|id| serde_json::from_value::<rmcp::model::RequestId>(id.clone()).ok());
        // Else the one request unanswered when the transport read it.
        let alongside = context
            .extensions
            .get::<crate::transport::unreadable::ReadAlongside>();
        let tie = match (&related, alongside) {
            (Some(id), _) => Tie::Request(id),
            (None, Some(alongside)) => Tie::Alone(&alongside.0),
            (None, None) => Tie::None,
        };
        let call = match self.in_flight.route(self.number, tie, Kind::Log) {
            Route::Call(features) => Some(features),
            Route::Fallback | Route::Refused => None,
        };
        self.logs.deliver(params, call);
    }

    /// SEP-2663's `notifications/tasks`: wakes the task's poller.
    async fn on_task_status(
        &self,
        params: TaskStatusNotificationParams,
        _context: NotificationContext<RoleClient>,
    ) {
        self.wake_task(params.task.task.task_id.clone());
    }

    /// 2025-11-25's `notifications/tasks/status` (rmcp has no type for it):
    /// wakes the task's poller.
    async fn on_custom_notification(
        &self,
        notification: CustomNotification,
        _context: NotificationContext<RoleClient>,
    ) {
        if notification.method == "notifications/tasks/status"
            && let Some(id) = notification
                .params
                .as_ref()
                .and_then(|p| p.get("taskId"))
                .and_then(|id| id.as_str())
        {
            self.wake_task(id.to_owned());
        }
    }

    async fn list_roots(
        &self,
        context: RequestContext<RoleClient>,
    ) -> Result<ListRootsResult, ErrorData> {
        let _busy = self.progress.answering();
        self.roots
            .asked
            .fetch_add(1, std::sync::atomic::Ordering::AcqRel);
        let answer = match self.route(&context) {
            Ok(features) => features.answer_roots(&self.server).await,
            Err(refused) => Err(refused),
        };
        self.roots
            .answered
            .fetch_add(1, std::sync::atomic::Ordering::AcqRel);
        self.roots.notify.notify_waiters();
        // After the cancellations on their way (see `progress`).
        self.progress.after_cancels().await;
        answer
    }

    async fn create_message(
        &self,
        params: CreateMessageRequestParams,
        context: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, ErrorData> {
        let _busy = self.progress.answering();
        let answer = match self.route(&context) {
            Ok(features) => features.answer_sampling(&self.server, params).await,
            Err(refused) => Err(refused),
        };
        // After the cancellations on their way (see `progress`).
        self.progress.after_cancels().await;
        answer
    }

    async fn create_elicitation(
        &self,
        params: ElicitRequestParams,
        context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let _busy = self.progress.answering();
        let answer = match self.route(&context) {
            Ok(features) => features.answer_elicitation(&self.server, params).await,
            Err(refused) => Err(refused),
        };
        // After the cancellations on their way (see `progress`): a call
        // given up on is cancelled before its question is answered.
        self.progress.after_cancels().await;
        answer
    }

    /// Declares only the features the pool has handlers for.
    fn get_info(&self) -> ClientConfig {
        let mut config = ClientConfig::new(
            self.features.capabilities(),
            Implementation::new("toolbridge", env!("CARGO_PKG_VERSION")),
        );
        if let Some(version) = &self.initialize_version {
            config.protocol_version = version.clone();
        }
        config
    }
}

/// What a connection's handler gets from its slot, shared by the slot's
/// successive connections: the lists it keeps up to date from the server's
/// notifications, where progress goes, the pool's client handlers, and where log messages and task status
/// notifications go.
#[derive(Clone)]
pub(super) struct Listeners {
    /// Dropped on `tools/list_changed`.
    pub(super) cache: Arc<ToolCache>,
    /// Where progress notifications go, for watchers.
    pub(super) progress: ProgressFeed,
    /// The resource and prompt lists, and the resource updates' feed.
    pub(super) catalog: Arc<Catalog>,
    /// The pool's client handlers.
    pub(super) features: ClientFeatures,
    /// The level log messages are wanted at, and the pool's handler.
    pub(super) logs: Arc<ServerLogs>,
    /// The requests in flight on the server.
    pub(super) in_flight: Arc<InFlight>,
    /// Task status notifications, to wake the task's poller.
    pub(super) task_events: TaskEvents,
    /// Whether a 2026-07-28 server's list changes and resource updates are
    /// asked for on a listen stream ([`PoolOptions::listen_for_changes`](super::PoolOptions::listen_for_changes)).
    pub(super) listen: bool,
}

impl Handler {
    /// The handler of connection `number` to `server`, fed by its slot's
    /// `listeners`: `generation` says which version `initialize` asks for.
    fn new(
        server: &str,
        generation: Generation,
        listeners: Listeners,
        progress: Arc<ProgressLog>,
        number: u64,
        roots: Arc<RootsAsked>,
    ) -> Self {
        Handler {
            roots,
            server: server.to_owned(),
            lists: ListEvents {
                server: server.to_owned(),
                cache: listeners.cache,
                catalog: listeners.catalog,
            },
            progress,
            feed: listeners.progress,
            features: listeners.features,
            in_flight: listeners.in_flight,
            number,
            logs: listeners.logs,
            task_events: listeners.task_events,
            initialize_version: (generation == Generation::Sessions)
                .then_some(rmcp::model::ProtocolVersion::LATEST_WITH_INITIALIZE),
        }
    }

    fn wake_task(&self, task_id: String) {
        if self.task_events.receiver_count() > 0 {
            let _ = self.task_events.send(task_id);
        }
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
    /// Why the transport ended the connection by itself, if it did (an
    /// answer over the size cap), for the errors of the requests it failed.
    end_reason: Option<EndReason>,
    /// When progress last arrived for the calls in flight.
    pub(super) progress: Arc<ProgressLog>,
    /// Its number in the server's in-flight registry, for the ids of the
    /// requests sent on it.
    pub(super) number: u64,
    /// The server speaks 2026-07-28: each request carries the log level it
    /// wants (there is no `logging/setLevel`).
    pub(super) log_level_per_request: bool,
    /// Cancelled when the connection has ended, for whatever reason.
    pub(super) ended: CancellationToken,
    /// The `subscriptions/listen` stream its list changes and resource
    /// updates come on: 2026-07-28 servers that declare any (see `listen`).
    pub(super) listen: Option<Listen>,
    /// Calls carry tool headers (2026-07-28 over streamable HTTP; see
    /// `param_headers`).
    pub(super) param_headers: Option<ParamHeaders>,
    /// A 2026-07-28 connection's place for a session connection beside it,
    /// at 2025-11-25, which its session callers' requests take if the
    /// server speaks that too (opened on first need: `session_connection`).
    pub(super) sessions: Option<SessionConnection>,
    /// Tells the supervisor to close the connection.
    close: CancellationToken,
    /// The supervisor task; awaited by [`Connection::close`].
    supervisor: Mutex<Option<JoinHandle<()>>>,
}

impl Connection {
    /// Why the transport ended the connection by itself, once it has.
    pub(super) fn end_reason(&self) -> Option<String> {
        self.end_reason.as_ref().and_then(EndReason::get)
    }

    /// Whether it is closing or has ended.
    pub(super) fn closing(&self) -> bool {
        self.close.is_cancelled() || self.ended.is_cancelled()
    }

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
        // First, so that a session connection opening meanwhile sees it.
        self.close.cancel();
        if let Some(sessions) = &self.sessions {
            sessions.close().await;
        }
        let handle = self.supervisor.lock_unpoisoned().take();
        if let Some(handle) = handle {
            let _ = handle.await;
        }
        // It ends with the connection, which has ended now.
        if let Some(listen) = &self.listen {
            listen.stopped().await;
        }
    }
}

impl Drop for Connection {
    /// The last handle is gone (the pool was dropped, or the connection was
    /// forgotten after a failure): the supervisor closes the connection in
    /// the background, the graceful way. If the runtime stops first, its
    /// tasks are dropped, and with them the transport, whose process group
    /// guard kills the server.
    fn drop(&mut self) {
        self.close.cancel();
    }
}

/// A connection that ended by itself (a crash, or the server closing), as
/// reported to the slot that made it.
pub(super) struct Ended {
    /// Which connection; the slot compares it with its current one, since a
    /// new connection may already have replaced it.
    pub(super) connection: Weak<Connection>,
    /// How long it was up.
    pub(super) lived: Duration,
}

/// Starts `spec` and completes the MCP handshake, both within
/// `start_timeout` (on timeout, the error carries the server's stderr tail).
/// `on_end` runs in the supervisor when the connection ends by itself (a
/// crash or the server closing), not when it was closed by us, before the
/// connection is seen as ended. `max_call_time` bounds any call (progress
/// older than that is forgotten).
pub(super) async fn connect(
    spec: &ServerSpec,
    ctx: &TransportContext,
    generation: Generation,
    listeners: Listeners,
    max_call_time: Duration,
    start_timeout: Duration,
    on_end: impl FnOnce(Ended) + Send + 'static,
) -> Result<Arc<Connection>, PoolError> {
    let started = Instant::now();
    let start = Starting {
        server: &spec.name,
        after: start_timeout,
        // Capped so that no configured value can overflow the clock.
        deadline: tokio::time::Instant::now() + start_timeout.min(crate::config::MAX_TIMEOUT),
    };
    let transport = start.open(spec, ctx).await?;
    let kind = transport.kind();
    let stderr = transport.stderr_tail();
    let end_reason = transport.end_reason();
    let progress = Arc::new(ProgressLog::new(max_call_time));
    let number = listeners.in_flight.new_connection();
    let log_router = listeners.logs.clone();
    let listen = listeners.listen;
    let offers_roots = listeners.features.roots.is_some();
    let roots = Arc::new(RootsAsked::default());
    let handler = Handler::new(
        &spec.name,
        generation,
        listeners,
        progress.clone(),
        number,
        roots.clone(),
    );
    let lists = handler.lists.clone();
    let service = start
        .handshake(
            generation,
            handler,
            transport,
            stderr.as_ref(),
            end_reason.as_ref(),
        )
        .await?;
    let peer = service.peer().clone();
    start
        .before_calls(
            &peer,
            &log_router,
            offers_roots.then_some(&*roots),
            stderr.as_ref(),
        )
        .await?;
    let log_level_per_request = logs::per_request_level(&peer);
    let info = start.connected(&peer, kind, started.elapsed());
    let param_headers = ParamHeaders::for_connection(info.transport, &info.protocol_version);
    // Whether the server also speaks 2025-11-25 is known only by asking: a
    // server of both may list 2026-07-28 alone in its `server/discover`
    // answer (the conformance suite's reference server does).
    // (`log_level_per_request`: the connection is at 2026-07-28.)
    let sessions = (generation == Generation::Latest && log_level_per_request)
        .then(SessionConnection::default);
    let ended = CancellationToken::new();
    let listen = listen
        .then(|| Listen::start(&peer, lists, ended.clone()))
        .flatten();
    let conn = Arc::new(Connection {
        peer,
        info,
        stderr,
        end_reason,
        progress,
        number,
        log_level_per_request,
        ended,
        listen,
        param_headers,
        sessions,
        close: CancellationToken::new(),
        supervisor: Mutex::new(None),
    });
    conn.start_supervisor(service, started, on_end);
    // Once the connection owns it (dropped, it ends the stream's task).
    if let Some(listen) = &conn.listen {
        let wait = tokio::time::Instant::now() + listen::FIRST_OPEN_WAIT;
        listen.opened(wait.min(start.deadline)).await;
    }
    Ok(conn)
}

/// A start under way: the server, and the deadline all its steps share.
struct Starting<'a> {
    /// The server's name.
    server: &'a str,
    /// The time the start may take, as configured.
    after: Duration,
    /// When that time is up.
    deadline: tokio::time::Instant,
}

impl Starting<'_> {
    /// The start took too long: the error, with what a hung server said
    /// on stderr so far (a prompt, a download), which is why.
    fn timed_out(&self, stderr: Option<&StderrTail>) -> PoolError {
        PoolError::StartTimeout {
            server: self.server.to_owned(),
            after: self.after,
            stderr: stderr.and_then(|t| t.last(ERROR_STDERR_LINES)),
        }
    }

    /// `spec`'s transport: its process started, or its endpoint reached.
    async fn open(
        &self,
        spec: &ServerSpec,
        ctx: &TransportContext,
    ) -> Result<AnyTransport, PoolError> {
        match tokio::time::timeout_at(self.deadline, create_transport(spec, ctx)).await {
            Ok(transport) => Ok(transport?),
            Err(_) => Err(self.timed_out(None)),
        }
    }

    /// The MCP handshake of `generation` over `transport`; when it fails,
    /// why, as [`start_error`] says it.
    async fn handshake(
        &self,
        generation: Generation,
        handler: Handler,
        transport: AnyTransport,
        stderr: Option<&StderrTail>,
        end_reason: Option<&EndReason>,
    ) -> Result<RunningService<RoleClient, Handler>, PoolError> {
        let handshake = async {
            match generation {
                Generation::Latest => handshake::start(handler, transport).await,
                Generation::Sessions => handshake::start_session(handler, transport).await,
            }
        };
        match tokio::time::timeout_at(self.deadline, handshake).await {
            Err(_) => Err(self.timed_out(stderr)),
            Ok(Ok(service)) => Ok(service),
            Ok(Err(e)) => {
                // The transport's own reason, when it ended the handshake,
                // says more than "the server closed the connection".
                let ended = end_reason.and_then(EndReason::get);
                Err(start_error(self.server.to_owned(), e, ended, stderr).await)
            }
        }
    }

    /// What is done before any call: the log level set, so that the
    /// server's messages come at the level asked (a server that refuses
    /// still logs, filtered here); and, when the pool offers `roots`, the
    /// server's roots settled ([`settle_roots`]).
    async fn before_calls(
        &self,
        peer: &Peer<RoleClient>,
        log_router: &ServerLogs,
        roots: Option<&RootsAsked>,
        stderr: Option<&StderrTail>,
    ) -> Result<(), PoolError> {
        if logs::wants_set_level(peer) {
            match tokio::time::timeout_at(self.deadline, log_router.send_level(peer)).await {
                Ok(Ok(())) => {}
                Ok(Err(e)) => {
                    tracing::debug!(server = %self.server, "logging/setLevel failed: {e}")
                }
                Err(_) => return Err(self.timed_out(stderr)),
            }
        }
        if let Some(roots) = roots {
            settle_roots(peer, roots, self.deadline).await;
        }
        Ok(())
    }

    /// What the server told of itself, after a start that took `took`
    /// over `kind`: logged, and kept for `servers test`.
    fn connected(
        &self,
        peer: &Peer<RoleClient>,
        kind: TransportKind,
        took: Duration,
    ) -> ConnectionInfo {
        let info = peer_info(peer, kind, took);
        tracing::debug!(
            server = %self.server,
            transport = %kind,
            protocol = %info.protocol_version,
            ms = info.start_time.as_millis() as u64,
            "connected"
        );
        info
    }
}

impl Connection {
    /// Hands `service` to the connection's supervisor task ([`supervise`]),
    /// which [`Connection::close`] awaits.
    fn start_supervisor(
        self: &Arc<Self>,
        service: RunningService<RoleClient, Handler>,
        started: Instant,
        on_end: impl FnOnce(Ended) + Send + 'static,
    ) {
        let supervisor = tokio::spawn(
            supervise(
                service,
                self.close.clone(),
                self.ended.clone(),
                self.stderr.clone(),
                Arc::downgrade(self),
                started,
                on_end,
            )
            // The caller's span names the server.
            .instrument(tracing::Span::current()),
        );
        *self.supervisor.lock_unpoisoned() = Some(supervisor);
    }
}

/// Owns the running service until it ends by itself or `close` is cancelled.
///
/// A connection that ends by itself is reported through `on_end` before
/// `ended` is cancelled, so anyone who sees it ended (and starts the server
/// again) also sees the crash counted. The stderr tail is only logged, after
/// a moment for the server's last words.
async fn supervise(
    service: RunningService<RoleClient, Handler>,
    close: CancellationToken,
    ended: CancellationToken,
    stderr: Option<StderrTail>,
    me: Weak<Connection>,
    since: Instant,
    on_end: impl FnOnce(Ended),
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
            on_end(Ended { connection: me, lived: since.elapsed() });
            ended.cancel();
            // The error of the call it was serving says why, plainly.
            tracing::info!(reason = ?reason, "server connection ended");
            let tail = match &stderr {
                Some(tail) => tail.settled_last(ERROR_STDERR_LINES).await,
                None => None,
            };
            if let Some(tail) = tail {
                tracing::debug!("stderr before the server ended:\n{tail}");
            }
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

/// Why the handshake failed, as one plain sentence: a network server's own
/// error (it names the URL, and a timeout stays a timeout), else what the
/// server did, how its process ended when it did, and its last stderr lines.
async fn start_error(
    server: String,
    mut error: rmcp::service::ClientInitializeError,
    ended: Option<String>,
    stderr: Option<&StderrTail>,
) -> PoolError {
    use rmcp::service::ClientInitializeError as E;
    if let E::LegacyFallbackFailed { fallback, .. } = error {
        error = *fallback;
    }
    let reason = match error {
        _ if ended.is_some() => ended,
        E::TransportError { error, .. } => match error.error.downcast::<TransportError>() {
            // A stdio server's pipe closing is said below, with how it ended.
            Ok(e) if !matches!(*e, TransportError::Io(_)) => return PoolError::Transport(*e),
            _ => None,
        },
        E::ConnectionClosed(_) => None,
        other => Some(other.to_string()),
    };
    let (lines, exit) = match stderr {
        Some(tail) => {
            let lines = tail.settled_last(ERROR_STDERR_LINES).await;
            let exit = match reason {
                Some(_) => None,
                None => tail.settled_exit().await,
            };
            (lines, exit)
        }
        None => (None, None),
    };
    let (reason, exit) = match (reason, exit) {
        (Some(reason), _) => (reason, None),
        (None, Some(exit)) => (
            format!(
                "the server {} before the handshake finished",
                crate::transport::describe_exit(&exit)
            ),
            Some(exit),
        ),
        (None, None) => (
            "the server closed the connection during the handshake".to_owned(),
            None,
        ),
    };
    PoolError::Start {
        server,
        reason,
        exit,
        stderr: lines,
    }
}
