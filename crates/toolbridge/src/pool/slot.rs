//! One configured server's place in the pool: its spec, its current
//! connection (if any), its tool cache, and its crash history.

use crate::lock::LockUnpoisoned as _;
use std::{
    sync::{Arc, Mutex},
    time::{Duration, SystemTime},
};

use rmcp::model::ProtocolVersion;
use tokio_util::sync::CancellationToken;
use tracing::Instrument as _;

use super::{
    FailureKind, PoolError, PoolOptions,
    cache::ToolCache,
    catalog::Catalog,
    connection::{self, Connection, Ended, Generation, Listeners, ProgressFeed},
    in_flight::InFlight,
    logs::ServerLogs,
    status::{Failure, ServerStatus},
    task_events::{TASK_EVENT_BACKLOG, TaskEvents},
};
use crate::{config::ServerSpec, transport::TransportContext};

/// How many sign-ins to `server` the pool has started (none without `auth`).
fn sign_ins(ctx: &TransportContext, server: &str) -> u32 {
    #[cfg(feature = "auth")]
    return ctx.sign_in.as_ref().map_or(0, |s| s.attempts(server));
    #[cfg(not(feature = "auth"))]
    {
        let _ = (ctx, server);
        0
    }
}

/// A connection that lived less than this before ending counts towards a
/// crash loop, and delays the next restart.
const CRASH_LOOP_WINDOW: Duration = Duration::from_secs(30);
/// The first restart delay of a crash loop; doubles per crash.
const FIRST_BACKOFF: Duration = Duration::from_millis(250);
/// The longest restart delay.
const MAX_BACKOFF: Duration = Duration::from_secs(8);

/// One server in the pool.
pub(super) struct Slot {
    /// What to start.
    pub(super) spec: ServerSpec,
    /// The spec's secrets, scrubbed from every error made of the server's
    /// failures ([`PoolError::redacted`]).
    pub(super) redactor: crate::redact::Redactor,
    /// The live connection. A std mutex: held only to clone or swap the Arc.
    current: Mutex<Option<Arc<Connection>>>,
    /// Serializes starts, so concurrent first calls start the server once.
    starting: tokio::sync::Mutex<()>,
    /// Set when a reload removed the server or replaced its entry
    /// ([`Slot::retire`]): no connection is started or kept from then on.
    retired: CancellationToken,
    /// The tool list, cleared on `tools/list_changed` and on reconnect.
    pub(super) cache: Arc<ToolCache>,
    /// Consecutive short-lived connections, and the stderr of the last crash.
    crashes: Arc<Mutex<CrashHistory>>,
    /// When the live connection started, or why the last start failed or
    /// the last connection ended by itself: for [`Slot::status`].
    history: Mutex<History>,
    /// The server's progress notifications, for watchers; kept across
    /// reconnects.
    pub(super) progress: ProgressFeed,
    /// Its resources, templates and prompts (cleared as the tool list is),
    /// subscriptions and resource updates.
    pub(super) catalog: Arc<Catalog>,
    /// The level the server's log messages are asked at, and the pool's
    /// handler for them; kept across reconnects.
    pub(super) logs: Arc<ServerLogs>,
    /// The requests in flight on the server, which decide whose each of its
    /// messages is (see `in_flight`); kept across reconnects.
    pub(super) in_flight: Arc<InFlight>,
    /// The tasks the server sent a status notification for, to wake their
    /// pollers.
    pub(super) task_events: TaskEvents,
}

/// How many progress notifications a slow watcher may fall behind by
/// before it misses some.
const PROGRESS_BACKLOG: usize = 64;

/// The server's latest start or failure.
#[derive(Debug, Default)]
struct History {
    /// When the current connection finished starting.
    started_at: Option<SystemTime>,
    /// The last failure, cleared by the next successful start.
    failure: Option<Failure>,
}

#[derive(Debug, Default)]
struct CrashHistory {
    /// Connections in a row that ended by themselves within the window.
    in_a_row: u32,
}

impl Slot {
    pub(super) fn new(spec: ServerSpec, cache: ToolCache, logs: ServerLogs) -> Self {
        Slot {
            redactor: crate::redact::Redactor::for_server(&spec),
            spec,
            current: Mutex::new(None),
            starting: tokio::sync::Mutex::new(()),
            retired: CancellationToken::new(),
            cache: Arc::new(cache),
            crashes: Arc::new(Mutex::new(CrashHistory::default())),
            history: Mutex::new(History::default()),
            progress: tokio::sync::broadcast::channel(PROGRESS_BACKLOG).0,
            catalog: Arc::new(Catalog::default()),
            logs: Arc::new(logs),
            in_flight: Arc::default(),
            task_events: tokio::sync::broadcast::channel(TASK_EVENT_BACKLOG).0,
        }
    }

    /// The live connection, if there is one.
    pub(super) fn current(&self) -> Option<Arc<Connection>> {
        let current = self.current.lock_unpoisoned();
        current
            .as_ref()
            .filter(|c| !c.ended.is_cancelled())
            .cloned()
    }

    /// Starts the server unless a live connection appeared meanwhile; one
    /// start at a time per slot. Callers check [`Slot::current`] first. The
    /// spawn (or connect) and the handshake must finish within the spec's
    /// `startup_timeout`, else `start_timeout`.
    pub(super) async fn start(
        self: &Arc<Self>,
        ctx: &TransportContext,
        start_limit: &tokio::sync::Semaphore,
        options: &PoolOptions,
    ) -> Result<Arc<Connection>, PoolError> {
        let _starting = self.starting.lock().await;
        if let Some(conn) = self.current() {
            return Ok(conn);
        }
        // A slot retired meanwhile drops the start: its process is killed
        // with the transport.
        tokio::select! {
            biased;
            () = self.retired.cancelled() => Err(self.reloaded()),
            started = self.start_locked(ctx, start_limit, options) => started,
        }
    }

    /// [`Slot::start`] once it holds the start lock.
    async fn start_locked(
        self: &Arc<Self>,
        ctx: &TransportContext,
        start_limit: &tokio::sync::Semaphore,
        options: &PoolOptions,
    ) -> Result<Arc<Connection>, PoolError> {
        let delay = self.restart_delay();
        if !delay.is_zero() {
            tracing::info!(server = %self.spec.name, ms = delay.as_millis() as u64, "server keeps crashing; waiting before restarting it");
            tokio::time::sleep(delay).await;
        }
        let _permit = start_limit
            .acquire()
            .await
            .map_err(|_| PoolError::Protocol {
                server: self.spec.name.clone(),
                message: "the pool is closed".to_owned(),
            })?;
        self.cache.invalidate();
        self.catalog.invalidate();
        // The connection's tasks (rmcp's service loop, the supervisor) stay
        // in this span for their whole life: a root, not a child of the
        // call that happened to start the server.
        let span =
            tracing::info_span!(parent: None, "mcp_server", server = self.spec.name.as_str());
        span.follows_from(tracing::Span::current());
        // The server's own `startupTimeout` wins over the pool's default.
        let start_timeout = self.spec.startup_timeout.unwrap_or(options.start_timeout);
        let signed_in_before = sign_ins(ctx, &self.spec.name);
        let mut started = self
            .connect_once(ctx, options, start_timeout)
            .instrument(span.clone())
            .await;
        // rmcp waits 10 s for the answer to `server/discover`, then falls
        // back to `initialize`; a sign-in that answered the first request's
        // 401 in the browser takes longer than that, and then a 2026-07-28
        // server refuses the `initialize` (or a server of both revisions is
        // used at the older one). Signed in now, the next start is quick.
        if sign_ins(ctx, &self.spec.name) != signed_in_before
            && started.as_ref().map_or(true, |conn| {
                conn.info.protocol_version != ProtocolVersion::LATEST.as_str()
            })
        {
            tracing::debug!(server = %self.spec.name, "signed in during the start; starting again");
            if let Ok(conn) = &started {
                conn.close().await;
            }
            started = self
                .connect_once(ctx, options, start_timeout)
                .instrument(span)
                .await;
        }
        let conn = started.inspect_err(|error| self.failed(Failure::of(error)))?;
        {
            let mut history = self.history.lock_unpoisoned();
            history.started_at = Some(SystemTime::now());
            history.failure = None;
        }
        {
            // Checked under the lock `retire` takes the connection with: a
            // start that ends as the slot retires never leaves its server
            // running.
            let mut current = self.current.lock_unpoisoned();
            if self.retired.is_cancelled() {
                drop(current);
                conn.close().await;
                return Err(self.reloaded());
            }
            *current = Some(conn.clone());
        }
        // A 2026-07-28 connection's listen stream names them by itself.
        if conn.listen.is_none() {
            self.catalog.resubscribe(&self.spec.name, &conn.peer);
        }
        Ok(conn)
    }

    /// One start of the server, within `start_timeout`.
    async fn connect_once(
        self: &Arc<Self>,
        ctx: &TransportContext,
        options: &PoolOptions,
        start_timeout: Duration,
    ) -> Result<Arc<Connection>, PoolError> {
        let weak = Arc::downgrade(self);
        let on_end = move |ended: Ended| {
            if let Some(slot) = weak.upgrade() {
                slot.ended_by_itself(ended);
            }
        };
        connection::connect(
            &self.spec,
            ctx,
            Generation::Latest,
            self.listeners(options),
            options.max_total_call_time,
            start_timeout,
            on_end,
        )
        .await
        .map_err(|error| error.redacted(&self.redactor))
    }

    /// What each of its connections reports to (the current one and a
    /// session connection beside it alike: one cache, one catalog, one
    /// registry of requests in flight).
    pub(super) fn listeners(&self, options: &PoolOptions) -> Listeners {
        Listeners {
            cache: self.cache.clone(),
            progress: self.progress.clone(),
            catalog: self.catalog.clone(),
            features: options.client_features.clone(),
            logs: self.logs.clone(),
            in_flight: self.in_flight.clone(),
            task_events: self.task_events.clone(),
            listen: options.listen_for_changes,
        }
    }

    /// Forgets `conn` if it is still the current connection (after it
    /// failed), so the next use starts the server again.
    pub(super) fn forget(&self, conn: &Arc<Connection>) {
        self.forget_ptr(Arc::as_ptr(conn));
    }

    /// Forgets the current connection if it is the one at `conn`.
    fn forget_ptr(&self, conn: *const Connection) {
        let mut current = self.current.lock_unpoisoned();
        if current
            .as_ref()
            .is_some_and(|c| std::ptr::eq(Arc::as_ptr(c), conn))
        {
            *current = None;
        }
    }

    /// Takes the current connection out, for closing.
    pub(super) fn take(&self) -> Option<Arc<Connection>> {
        self.current.lock_unpoisoned().take()
    }

    /// Takes the slot out of service (a reload removed its server or
    /// replaced its entry): no start from now on (one under way is
    /// dropped, its process killed), and the current connection taken out,
    /// for closing.
    pub(super) fn retire(&self) -> Option<Arc<Connection>> {
        self.retired.cancel();
        self.take()
    }

    /// The error of a start on a retired slot.
    fn reloaded(&self) -> PoolError {
        PoolError::Reloaded {
            server: self.spec.name.clone(),
        }
    }

    /// Notes that a connection ended by itself: forgets it if it is still
    /// the current one (a newer connection is left alone), and counts it
    /// towards a crash loop if it was short-lived.
    fn ended_by_itself(&self, ended: Ended) {
        let stderr = ended.connection.upgrade().and_then(|c| c.stderr_tail());
        self.failed(Failure {
            error: format!(
                "server \"{}\" stopped by itself after {:.1} s; it is started again on next use",
                self.spec.name,
                ended.lived.as_secs_f64()
            ),
            kind: FailureKind::stopped_by_itself(ended.lived),
            stderr,
            at: SystemTime::now(),
            needs_sign_in: false,
        });
        self.forget_ptr(ended.connection.as_ptr());
        let mut crashes = self.crashes.lock_unpoisoned();
        crashes.in_a_row = if ended.lived < CRASH_LOOP_WINDOW {
            crashes.in_a_row + 1
        } else {
            1
        };
    }

    /// Notes why the server failed, for [`Slot::status`].
    fn failed(&self, failure: Failure) {
        let mut history = self.history.lock_unpoisoned();
        history.started_at = None;
        history.failure = Some(failure);
    }

    /// Running (since when), stopped, or failed (why), as of now.
    pub(super) fn status(&self) -> ServerStatus {
        let history = self.history.lock_unpoisoned();
        match (self.current(), &history.failure) {
            (Some(conn), _) => ServerStatus::Running {
                info: conn.info.clone(),
                since: history.started_at.unwrap_or_else(SystemTime::now),
            },
            (None, Some(failure)) => ServerStatus::Failed(failure.clone()),
            (None, None) => ServerStatus::Stopped,
        }
    }

    fn restart_delay(&self) -> Duration {
        let crashes = self.crashes.lock_unpoisoned();
        // The first restart after a crash is immediate; a loop backs off.
        match crashes.in_a_row {
            0 | 1 => Duration::ZERO,
            n => FIRST_BACKOFF
                .saturating_mul(1 << (n - 2).min(16))
                .min(MAX_BACKOFF),
        }
    }
}
