//! [`Pool`]: the spec's McpService.

use crate::lock::{LockUnpoisoned as _, RwLockUnpoisoned as _};
use std::{
    collections::HashMap,
    sync::{Arc, Mutex, RwLock, atomic::AtomicU64},
    time::Duration,
};

use futures::future::join_all;
use rmcp::{
    model::{
        CallToolRequest, CallToolRequestParams, CallToolResult, ClientRequest, JsonObject,
        ProgressNotificationParam, ServerResult,
    },
    service::ServiceError,
};
use tokio::sync::Semaphore;
use tracing::Instrument as _;

use super::{
    ClientFeatures, ConnectionInfo, PoolError, ServerStatus, SkippedTool, ToolCacheOptions,
    budget::Budget,
    connection::{Connection, ERROR_STDERR_LINES},
    input_required,
    pages::{self, PagesError},
    servers::Servers,
    slot::Slot,
    tasks,
};
use crate::{
    config::ServerSpec,
    pins::{ApproveError, PinDiff, PinOptions, ServerPins, Withheld},
    process::ProcessTracker,
    tools::{McpTool, TaskSupport},
    transport::{TransportContext, unreadable::unreadable_reason},
};

/// How many times a listing is tried while the server keeps saying its list
/// changed during it.
const LIST_ATTEMPTS: usize = 3;

/// Pool-wide settings.
#[derive(Debug, Clone)]
pub struct PoolOptions {
    /// How many servers may be starting at once (default 32).
    ///
    /// Starting is mostly waiting (for `npx`/`uvx`, a network or a
    /// handshake), and a server holds its resources from the moment it is
    /// up anyway, so the cap only bounds a burst of process starts. With 8,
    /// 20 servers that each take 300 ms took 0.92 s to list; with 32, 0.34 s,
    /// and 20 CPU-bound Python starts finished sooner (0.77 s against 1.22 s)
    /// for the same total CPU (`cargo bench --bench pool -- start`).
    pub max_parallel_starts: usize,
    /// How long one server may take to start: spawn or connect, and the
    /// handshake (default 60 s: cold `npx` and `uvx` caches are slow). A
    /// server's own [`ServerSpec::startup_timeout`] overrides it.
    pub start_timeout: Duration,
    /// The longest a call may run even while the server reports progress
    /// (default 10 min). Progress restarts the per-call timeout up to this.
    pub max_total_call_time: Duration,
    /// The bound on [`Pool::close_all`] (default 10 s); after it, whatever is
    /// left is killed.
    pub close_timeout: Duration,
    /// Keep tool lists on disk between runs (default `None`: off).
    ///
    /// With a cache, [`Pool::list_server_tools`] answers from a fresh entry
    /// without starting the server, and a listing is written back. Off by
    /// default because a library pool usually lives long enough for its
    /// in-memory cache, and writing into the user's cache folder is the
    /// program's decision; the `toolbridge` CLI turns it on with
    /// [`ToolCacheOptions::user_default`].
    pub tool_cache: Option<ToolCacheOptions>,
    /// Roots, sampling, elicitation and log handlers the application offers
    /// servers (default: none, and none declared).
    pub client_features: ClientFeatures,
    /// Sign in to a remote server that answers 401 (or 403
    /// `insufficient_scope`) in the browser, then retry the request once
    /// (default `None`: such a server fails with "run `toolbridge auth login
    /// NAME`"). For programs with a user at hand; the sign-in counts against
    /// the start or call timeout it happens in.
    #[cfg(feature = "auth")]
    pub sign_in: Option<crate::auth::SignIn>,
    /// Open a `subscriptions/listen` stream on each connection to a
    /// 2026-07-28 server that announces list changes or resource updates,
    /// to hear them (default true; see `pool::listen`). A connection waits
    /// (5 s at most) for the server to acknowledge it, so a program that
    /// makes one request and exits (the `toolbridge` CLI's commands) turns
    /// it off; without it, resource subscriptions to such servers fail.
    pub listen_for_changes: bool,
    /// Pin each server's tool definitions on first sight and withhold a
    /// changed or new one until approved (see [`crate::pins`]; default
    /// `None`: off, because where pins live is the program's decision, as
    /// for the tool cache). The `toolbridge` CLI and gateway turn it on with
    /// [`PinOptions::user_default`]; a server's `pin` policy applies only
    /// when it is on.
    pub pins: Option<PinOptions>,
}

impl Default for PoolOptions {
    fn default() -> Self {
        PoolOptions {
            max_parallel_starts: 32,
            start_timeout: Duration::from_secs(60),
            max_total_call_time: Duration::from_secs(600),
            close_timeout: Duration::from_secs(10),
            tool_cache: None,
            client_features: ClientFeatures::default(),
            #[cfg(feature = "auth")]
            sign_in: None,
            listen_for_changes: true,
            pins: None,
        }
    }
}

/// Per-call settings.
#[derive(Debug, Clone, Default)]
pub struct CallOptions {
    /// A bound on the whole call, the server's start included (the CLI's
    /// `--timeout`). Progress notifications never extend it. When it passes
    /// the call fails with [`PoolError::Timeout`] (or
    /// [`PoolError::StartTimeout`] while the server is still starting) and a
    /// request in flight is cancelled on the server.
    ///
    /// Without it, the server's `timeout` (default 120 s) applies to the
    /// request as a limit on silence: each progress notification restarts
    /// it, and [`PoolOptions::max_total_call_time`] bounds the whole.
    pub timeout: Option<Duration>,
    /// An id for logs (the provider's tool call id, say); without it, the
    /// pool numbers the call.
    pub call_id: Option<String>,
    /// Handlers for the server-to-client requests and log messages this
    /// call causes (the gateway: the client that made the call); what is
    /// not set here falls back to [`PoolOptions::client_features`].
    pub client_features: Option<ClientFeatures>,
    /// Call a tool whose `execution.taskSupport` is `"optional"` as a task
    /// (created, polled, its result fetched; see [`Pool::call_tool`]).
    /// Tools whose support is `"required"` are always called as tasks, and
    /// tools without task support never are.
    pub as_task: bool,
    /// Return a 2026-07-28 input-required result as it came, instead of
    /// answering its requests through the handlers and sending the request
    /// again ([`Pool::request`] only): for a gateway whose own client is
    /// stateless and answers such results itself.
    pub relay_input_required: bool,
    /// `_meta` entries the request carries besides the pool's own (the
    /// gateway: the W3C trace context, `traceparent` and `tracestate`, on
    /// every protocol version).
    pub meta: Option<JsonObject>,
    /// The client capabilities a 2026-07-28 request declares in its
    /// `_meta`, in place of those of the pool's handlers (earlier
    /// protocols declare them once, at `initialize`, and ignore this): the
    /// gateway's own client's, so that an upstream asks only what that
    /// client can answer (SEP-2322) and refuses a call that needs more
    /// with the error a client without them gets.
    pub client_capabilities: Option<rmcp::model::ClientCapabilities>,
    /// The caller's own client is a 2025-11-25 (or older) session client
    /// that may be asked something mid-call (the gateway's, when they
    /// declared roots, sampling or elicitation): a server that speaks both
    /// 2026-07-28 and 2025-11-25 gets the request over a 2025-11-25
    /// connection of its own, opened on first need beside the 2026-07-28
    /// one, so that what the server asks mid-call is asked the 2025-11-25
    /// way, which such a client answers (see `session_connection`).
    pub session_client: bool,
}

/// How starting one server went, from [`Pool::connect_all`].
#[derive(Debug)]
pub struct StartReport {
    /// The server's config name.
    pub server: String,
    /// What the server said about itself, or why it did not start.
    pub result: Result<ConnectionInfo, PoolError>,
}

/// The tools of several servers, from [`Pool::list_tools_of`].
#[derive(Debug, Default)]
pub struct ToolListing {
    /// The tools of the servers that answered, in the order the servers
    /// were given.
    pub tools: Vec<McpTool>,
    /// The servers that could not be listed, and why.
    pub failures: Vec<(String, PoolError)>,
    /// Tools the servers listed that were left out (an invalid definition,
    /// a second tool with the same name), from each server's latest
    /// listing in this pool.
    pub skipped: Vec<SkippedTool>,
    /// Tools whose definition is not the pinned one ([`PoolOptions::pins`]):
    /// left out of [`ToolListing::tools`] under the `block` policy, listed
    /// under `warn`.
    pub withheld: Vec<Withheld>,
}

impl ToolListing {
    /// Logs each failure as a warning (the server's tools are skipped) and
    /// returns the tools.
    pub fn tools_logging_failures(self) -> Vec<McpTool> {
        for (server, error) in &self.failures {
            tracing::warn!(server = %server, error = %error, "skipping the server's tools");
        }
        for skipped in &self.skipped {
            tracing::warn!(server = %skipped.server, tool = %skipped.tool, "{skipped}");
        }
        // A flood of new tools is a few lines, not one per tool.
        for withheld in self.withheld.iter().take(20) {
            tracing::warn!(server = %withheld.server, tool = %withheld.tool, "{withheld}");
        }
        if self.withheld.len() > 20 {
            tracing::warn!(
                "and {} more tools are withheld until approved (`toolbridge tools diff`)",
                self.withheld.len() - 20
            );
        }
        self.tools
    }
}

/// A pool of connections to MCP servers. Cheap to clone; clones share the
/// connections.
#[derive(Clone)]
pub struct Pool {
    pub(super) inner: Arc<Inner>,
}

pub(super) struct Inner {
    /// The servers now; swapped whole by [`Pool::reload`].
    pub(super) servers: RwLock<Arc<Servers>>,
    pub(super) ctx: TransportContext,
    start_limit: Semaphore,
    pub(super) options: PoolOptions,
    /// Numbers the calls, for logs.
    pub(super) next_call: AtomicU64,
    /// What each server's latest listing left out, for [`ToolListing::skipped`].
    pub(super) skipped: Mutex<HashMap<String, Vec<SkippedTool>>>,
    /// The index of the tool lists last searched ([`Pool::search_tools`]).
    pub(super) search: crate::search::IndexCache,
}

impl Pool {
    /// A pool over `servers` (nothing is started yet), using the process-wide
    /// [`ProcessTracker`].
    pub fn new(servers: impl IntoIterator<Item = ServerSpec>, options: PoolOptions) -> Self {
        Self::with_tracker(servers, options, ProcessTracker::global())
    }

    /// Like [`Pool::new`] with a given process tracker.
    pub fn with_tracker(
        servers: impl IntoIterator<Item = ServerSpec>,
        options: PoolOptions,
        tracker: Arc<ProcessTracker>,
    ) -> Self {
        let servers = Servers::new(servers, &options);
        Pool {
            inner: Arc::new(Inner {
                servers: RwLock::new(Arc::new(servers)),
                ctx: TransportContext {
                    tracker,
                    #[cfg(feature = "auth")]
                    sign_in: options.sign_in.clone(),
                },
                start_limit: Semaphore::new(options.max_parallel_starts.max(1)),
                options,
                next_call: AtomicU64::new(1),
                skipped: Mutex::new(HashMap::new()),
                search: crate::search::IndexCache::new(),
            }),
        }
    }

    /// The configured servers' names, in config order (as of the latest
    /// [`Pool::reload`]).
    pub fn server_names(&self) -> Vec<String> {
        self.servers().order.clone()
    }

    /// The name of the pool's one server, when it has exactly one (what a
    /// gateway in front of one server routes every call to, without copying
    /// the list of names per call).
    pub fn only_server(&self) -> Option<String> {
        match self.servers().order.as_slice() {
            [only] => Some(only.clone()),
            _ => None,
        }
    }

    /// The spec of server `name`.
    pub fn spec(&self, name: &str) -> Option<ServerSpec> {
        self.any_slot(name).map(|s| s.spec.clone())
    }

    /// The names of the servers that are not disabled, in config order.
    pub fn active_server_names(&self) -> Vec<String> {
        let servers = self.servers();
        servers
            .order
            .iter()
            .filter(|n| servers.slots.get(*n).is_some_and(|s| !s.spec.disabled))
            .cloned()
            .collect()
    }

    /// The servers now.
    pub(super) fn servers(&self) -> Arc<Servers> {
        self.inner.servers.read_unpoisoned().clone()
    }

    /// The slot of `server`, disabled or not.
    fn any_slot(&self, server: &str) -> Option<Arc<Slot>> {
        self.inner
            .servers
            .read_unpoisoned()
            .slots
            .get(server)
            .cloned()
    }

    /// The pins of `server`, when pinning applies to it.
    fn pins(&self, server: &str) -> Option<Arc<ServerPins>> {
        self.inner
            .servers
            .read_unpoisoned()
            .pins
            .get(server)
            .cloned()
    }

    /// The slot of `server` to use: an error for a server the pool does
    /// not have, or a disabled one.
    pub(super) fn slot(&self, server: &str) -> Result<Arc<Slot>, PoolError> {
        let slot = self
            .any_slot(server)
            .ok_or_else(|| PoolError::UnknownServer {
                server: server.to_owned(),
                known: self.server_names(),
            })?;
        if slot.spec.disabled {
            return Err(PoolError::Disabled {
                server: server.to_owned(),
            });
        }
        Ok(slot)
    }

    /// The live connection to `slot`'s server, starting it if needed.
    pub(super) async fn connection(&self, slot: &Arc<Slot>) -> Result<Arc<Connection>, PoolError> {
        if let Some(conn) = slot.current() {
            return Ok(conn);
        }
        // Boxed: starting a server is rare, and inline its state machine
        // (spawn, handshake, timers) made every call's future ~12 KiB, which
        // is copied as it moves into join_all or a task.
        let start = Box::pin(slot.start(
            &self.inner.ctx,
            &self.inner.start_limit,
            &self.inner.options,
        ));
        // The server's pins are read while it starts, not after it lists.
        match self.pins(&slot.spec.name) {
            Some(pins) => {
                let read = tokio::task::spawn_blocking(move || pins.preload());
                let (conn, _) = tokio::join!(start, read);
                conn
            }
            None => start.await,
        }
    }

    /// Starts `server` if it is not running and returns what it said about itself.
    pub async fn connect(&self, server: &str) -> Result<ConnectionInfo, PoolError> {
        let slot = self.slot(server)?;
        Ok(self.connection(&slot).await?.info.clone())
    }

    /// What `server` answered to `initialize` (its name and version,
    /// capabilities, instructions, protocol version), starting it if it is
    /// not running: for embeddings that hand the handshake's result on
    /// (the Python package's `server_info`).
    pub async fn server_info(
        &self,
        server: &str,
    ) -> Result<Arc<rmcp::model::ServerPeerInfo>, PoolError> {
        let slot = self.slot(server)?;
        let conn = self.connection(&slot).await?;
        conn.peer.peer_info().ok_or_else(|| PoolError::Protocol {
            server: server.to_owned(),
            message: "the connection has no initialize result".to_owned(),
        })
    }

    /// Starts every active server in parallel (at most
    /// `max_parallel_starts` at once). One server failing never stops the
    /// others. `on_done` is told about each server as it finishes.
    pub async fn connect_all(&self, on_done: impl Fn(&StartReport)) -> Vec<StartReport> {
        let names = self.active_server_names();
        let on_done = &on_done;
        let starts = names.iter().map(|name| async move {
            let report = StartReport {
                server: name.clone(),
                result: self.connect(name).await,
            };
            on_done(&report);
            report
        });
        join_all(starts).await
    }

    /// The tools of `server` (all pages), from the cache when it is fresh:
    /// in memory, else on disk ([`PoolOptions::tool_cache`]), in which case
    /// the server is not started.
    ///
    /// The listing is bounded by the server's `timeout`. On timeout the
    /// listing is abandoned (rmcp has no way to cancel a paginated listing)
    /// and the connection stays up.
    ///
    /// With [`PoolOptions::pins`], the tools whose definition is not the
    /// pinned one are left out (policy `block`): this is the one place
    /// every listing the pool hands out goes through, so none of them ever
    /// shows a withheld tool. [`Pool::withheld_tools`] names them.
    pub async fn list_server_tools(&self, server: &str) -> Result<Arc<Vec<McpTool>>, PoolError> {
        let listed = self.list_as_served(server).await?;
        Ok(match self.pins(server) {
            Some(pins) => pins.judge(&listed).visible,
            None => listed,
        })
    }

    /// The tools of `server` as the server lists them, withheld ones
    /// included: for pinning only.
    async fn list_as_served(&self, server: &str) -> Result<Arc<Vec<McpTool>>, PoolError> {
        let slot = self.slot(server)?;
        if let Some(tools) = slot.cache.get_or_load() {
            return Ok(tools);
        }
        let span = tracing::debug_span!("list_tools", server);
        // A `tools/list_changed` during the listing (server-everything
        // sends one as it starts) means the answer may be the old list,
        // which is then not cached: list again, a few times at most.
        for _ in 1..LIST_ATTEMPTS {
            let (tools, cached) = self.list_uncached(&slot).instrument(span.clone()).await?;
            if cached {
                return Ok(tools);
            }
            tracing::debug!(
                server,
                "the tool list changed while it was listed; listing again"
            );
        }
        Ok(self.list_uncached(&slot).instrument(span).await?.0)
    }

    /// Lists `slot`'s tools from the server; the list, and whether it was
    /// cached (it is not when the list changed meanwhile).
    pub(super) async fn list_uncached(
        &self,
        slot: &Arc<Slot>,
    ) -> Result<(Arc<Vec<McpTool>>, bool), PoolError> {
        let server = slot.spec.name.as_str();
        let conn = self.connection(slot).await?;
        let ticket = slot.cache.ticket();
        let timeout = slot.spec.call_timeout();
        let listed = match tokio::time::timeout(timeout, pages::list_all_tools(server, &conn.peer))
            .await
        {
            Ok(Ok(listed)) => listed,
            Ok(Err(PagesError::Service(e))) => return Err(self.service_error(slot, &conn, None, e)),
            Ok(Err(PagesError::Pool(e))) => return Err(e),
            Err(_) => {
                return Err(PoolError::Timeout {
                    server: server.to_owned(),
                    tool: None,
                    after: timeout,
                });
            }
        };
        if let Some(headers) = &conn.param_headers {
            headers.listed();
        }
        self.inner
            .skipped
            .lock_unpoisoned()
            .insert(server.to_owned(), listed.skipped);
        let listed = listed.tools;
        let server_name = if conn.info.server_name.is_empty() {
            server
        } else {
            &conn.info.server_name
        };
        let tools: Arc<Vec<McpTool>> = Arc::new(
            listed
                .iter()
                .filter(|t| slot.spec.tool_enabled(&t.name))
                .map(|t| McpTool::from_rmcp(server, server_name, t))
                .collect(),
        );
        tracing::debug!(count = tools.len(), "listed tools");
        let cached = slot.cache.put(ticket, tools.clone());
        Ok((tools, cached))
    }

    /// Forgets the cached tool list of `server`, in memory and on disk, so
    /// that the next listing asks the server (`tools --refresh`).
    pub fn forget_tools(&self, server: &str) {
        if let Some(slot) = self.any_slot(server) {
            slot.cache.list_changed();
        }
    }

    /// The cached model of `tool` of `server`, if its list is cached (in
    /// memory or on disk); never starts the server.
    pub fn cached_tool(&self, server: &str, tool: &str) -> Option<McpTool> {
        let tools = self.cached_visible(server)?;
        tools.iter().find(|t| t.name == tool).cloned()
    }

    /// The cached list of `server` as callers see it (withheld tools left out).
    fn cached_visible(&self, server: &str) -> Option<Arc<Vec<McpTool>>> {
        let slot = self.any_slot(server)?;
        let tools = slot.cache.get_or_load()?;
        Some(match self.pins(server) {
            Some(pins) => pins.judge(&tools).visible,
            None => tools,
        })
    }

    /// Whether `server`'s tool definitions are pinned ([`PoolOptions::pins`]
    /// applies to it): each tool it lists is then the definition approved,
    /// and a changed or new one is withheld until approved.
    pub fn is_pinned(&self, server: &str) -> bool {
        self.inner
            .servers
            .read_unpoisoned()
            .pins
            .contains_key(server)
    }

    /// The tools of `server` withheld from its latest listing because their
    /// definition is not the pinned one (nothing before a listing, or
    /// without [`PoolOptions::pins`]). Never starts the server.
    pub fn withheld_tools(&self, server: &str) -> Vec<Withheld> {
        self.pins(server)
            .and_then(|pins| pins.last_verdict())
            .map(|v| v.withheld.to_vec())
            .unwrap_or_default()
    }

    /// Each withheld tool of `server` with its pinned definition and the
    /// one the server gives now (`toolbridge tools diff`); lists the
    /// server (from the cache when it is fresh). Empty when pinning is off
    /// for it.
    pub async fn pin_diff(&self, server: &str) -> Result<Vec<PinDiff>, PoolError> {
        let listed = self.list_as_served(server).await?;
        Ok(match self.pins(server) {
            Some(pins) => pins.diff(&listed),
            None => Vec::new(),
        })
    }

    /// Pins the definitions `server` gives now of `tools` (all of its
    /// withheld tools when `tools` is empty), so that they are listed and
    /// callable again; returns what was approved. Watchers of the server's
    /// list ([`Pool::watch_tool_list_changes`]) are told when something
    /// was. A tool the server does not list is [`PoolError::UnknownTool`];
    /// a server pinning does not apply to approves nothing.
    pub async fn approve_tools(
        &self,
        server: &str,
        tools: &[String],
    ) -> Result<Vec<Withheld>, PoolError> {
        let listed = self.list_as_served(server).await?;
        let Some(pins) = self.pins(server) else {
            return Ok(Vec::new());
        };
        let approved = pins.approve(&listed, tools).map_err(|e| match e {
            ApproveError::NoSuchTool(tool) => PoolError::unknown_tool(server, tool, &listed),
            ApproveError::Write(message) => PoolError::Pins {
                server: server.to_owned(),
                message,
            },
        })?;
        if !approved.is_empty()
            && let Ok(slot) = self.slot(server)
        {
            slot.cache.announce();
        }
        Ok(approved)
    }

    /// Looks at each server's pins file again (one `stat` each) and, where
    /// it changed since the server's latest listing was judged (an approval
    /// made by another process: `toolbridge tools approve` while a gateway
    /// runs), judges that listing again; tells the watchers of each server
    /// whose visible tools changed ([`Pool::watch_tool_list_changes`]), and
    /// returns their names. Never starts or lists a server.
    pub fn recheck_pins(&self) -> Vec<String> {
        let mut changed = Vec::new();
        let servers = self.servers();
        for server in &servers.order {
            let Some(pins) = servers.pins.get(server) else {
                continue;
            };
            if pins.recheck()
                && let Some(slot) = servers.slots.get(server)
            {
                tracing::info!(
                    server,
                    "the server's pins changed on disk; its tool list changed"
                );
                slot.cache.announce();
                changed.push(server.clone());
            }
        }
        changed
    }

    /// The tools of every active server, listed in parallel. Servers that
    /// fail are reported separately; their failure never hides the others'
    /// tools.
    pub async fn list_all_active_server_tools(&self) -> ToolListing {
        self.list_tools_of(&self.active_server_names()).await
    }

    /// The tools of the named servers, listed in parallel, in the order
    /// given. A server that fails is reported in [`ToolListing::failures`];
    /// the others' tools are still returned.
    pub async fn list_tools_of(&self, servers: &[String]) -> ToolListing {
        self.list_tools_reporting(servers, |_| {}).await
    }

    /// Like [`Pool::list_tools_of`], and `on_done` is told the name of each
    /// server as its listing finishes (for a progress display).
    pub async fn list_tools_reporting(
        &self,
        servers: &[String],
        on_done: impl Fn(&str),
    ) -> ToolListing {
        let on_done = &on_done;
        let results = join_all(servers.iter().map(|server| async move {
            let result = self.list_server_tools(server).await;
            on_done(server);
            result
        }))
        .await;
        let mut listing = ToolListing::default();
        {
            let skipped = self.inner.skipped.lock_unpoisoned();
            for server in servers {
                if let Some(list) = skipped.get(server) {
                    listing.skipped.extend(list.iter().cloned());
                }
            }
        }
        for (server, result) in servers.iter().zip(&results) {
            if result.is_ok() {
                listing.withheld.extend(self.withheld_tools(server));
            }
        }
        for (server, result) in servers.iter().zip(results) {
            match result {
                Ok(list) => listing.tools.extend(list.iter().cloned()),
                Err(e) => listing.failures.push((server.clone(), e)),
            }
        }
        listing
    }

    /// Calls `tool` on `server` with `arguments`.
    ///
    /// With [`CallOptions::timeout`] the whole call, start included, ends
    /// when it passes. Otherwise the request times out after the server's
    /// `timeout` (else 120 s) without an answer; progress from the server
    /// restarts that timer, up to `max_total_call_time`. On timeout the server is sent
    /// `notifications/cancelled` and the connection stays usable; so is it
    /// when the caller drops the returned future before the result arrives.
    /// If the server dies mid-call, the call fails at once with its stderr
    /// tail, and the next call restarts it.
    ///
    /// A call the server refuses (a JSON-RPC error or an `isError` result)
    /// for a tool the server does not list is [`PoolError::UnknownTool`],
    /// whatever way the server said it.
    pub async fn call_tool(
        &self,
        server: &str,
        tool: &str,
        arguments: Option<JsonObject>,
        mut options: CallOptions,
    ) -> Result<CallToolResult, PoolError> {
        let mut params = CallToolRequestParams::new(tool.to_owned());
        params.arguments = arguments;
        // Its handlers answer what the server asks: the result is the tool's.
        options.relay_input_required = false;
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
        match self.request(server, request, &options).await? {
            ServerResult::CallToolResult(result) => Ok(result),
            other => Err(super::error::unexpected(server, "tools/call", &other)),
        }
    }

    /// `tools/call` of `params` to `slot`'s server, the way [`Pool::request`]
    /// sends every one: a disabled or withheld tool refused, the tool's task
    /// support looked up (listed when not cached), then called as a task or
    /// plainly; a refusal for a tool the server does not list is
    /// [`PoolError::UnknownTool`].
    pub(super) async fn tool_call(
        &self,
        slot: &Arc<Slot>,
        params: CallToolRequestParams,
        options: &CallOptions,
        call: &super::in_flight::Call<'_>,
    ) -> Result<ServerResult, PoolError> {
        let server = slot.spec.name.as_str();
        let tool = params.name.clone();
        if !slot.spec.tool_enabled(&tool) {
            return Err(PoolError::ToolDisabled {
                server: server.to_owned(),
                tool: tool.into_owned(),
            });
        }
        let budget = Budget::new(&self.inner.options, &slot.spec, options.timeout);
        let features = options.client_features.as_ref();
        let conn = self.connection_for(slot, &budget, options).await?;
        if conn.param_headers.is_some() {
            // Boxed: the rare way (2026-07-28 over HTTP), which may list.
            Box::pin(self.ready_for_headers(slot, &conn, &tool)).await?;
        }
        if let Some(pins) = self.pins(server).filter(|p| p.blocks()) {
            // Once started, within what is left: a listing when nothing is
            // cached. Boxed: rare.
            Box::pin(self.refuse_withheld(server, &pins, &tool, &budget)).await?;
        }
        // The tool's `execution` is in its cached list; without one (none
        // yet, or the server said its list changed, as server-everything
        // does right after connecting), it is listed first.
        let support = match slot.cache.task_support(&tool) {
            Some(support) => support,
            // Boxed: rare, once per list change.
            None => Box::pin(self.listed_task_support(server, &tool, &budget)).await,
        };
        let as_task = match support {
            Some(TaskSupport::Required) => true,
            Some(TaskSupport::Optional) => options.as_task,
            _ => false,
        };
        if as_task {
            // One expression: a local here would sit in every call's future.
            return Box::pin(self.call_as_task(
                slot,
                &conn,
                &tool,
                tasks::task_request(
                    &tool,
                    params.arguments,
                    request_meta(slot, &conn, features, options),
                ),
                budget.left(),
                budget.caller,
            ))
            .await
            .map(ServerResult::CallToolResult);
        }
        let relay = options.relay_input_required;
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
        // `response` lives in this block only: held across the await below,
        // it would take room in every call's future.
        let failed = {
            // Boxed: the request's future (rmcp's send, the wait, the
            // input-required state) is ~5 KiB, and one allocation per call
            // is cheaper than copying that each time the caller moves it.
            let outgoing = input_required::Outgoing {
                conn: &conn,
                server,
                call_features: features,
                call,
                pool_features: &self.inner.options.client_features,
                meta: request_meta(slot, &conn, features, options),
                limits: budget.left(),
                relay,
            };
            let response = Box::pin(input_required::send(outgoing, request)).await;
            match response {
                Ok(ServerResult::CallToolResult(result)) if result.is_error != Some(true) => {
                    return Ok(ServerResult::CallToolResult(result));
                }
                // Asked something, for a caller that answers it itself.
                Ok(ServerResult::InputRequiredResult(asked)) if relay => {
                    return Ok(ServerResult::InputRequiredResult(asked));
                }
                // The rare way, boxed.
                other => Box::pin(self.call_failed(slot, &conn, &tool, budget.caller, other)),
            }
        };
        failed.await.map(ServerResult::CallToolResult)
    }

    /// [`PoolError::Withheld`] when `tool`'s definition is not the pinned
    /// one. The server's list is needed for that: from the cache, else
    /// listed now, within what is left of `budget`. A server whose list
    /// cannot be had cannot be checked, and its calls fail with the
    /// listing's error.
    async fn refuse_withheld(
        &self,
        server: &str,
        pins: &ServerPins,
        tool: &str,
        budget: &Budget,
    ) -> Result<(), PoolError> {
        let left = budget.left().total;
        let listed = match tokio::time::timeout(left, self.list_as_served(server)).await {
            Ok(listed) => listed?,
            Err(_) => {
                return Err(budget.bounded(PoolError::Timeout {
                    server: server.to_owned(),
                    tool: Some(tool.to_owned()),
                    after: left,
                }));
            }
        };
        let verdict = pins.judge(&listed);
        match verdict.withheld.iter().find(|w| w.tool == tool) {
            Some(withheld) => Err(PoolError::Withheld(Box::new(withheld.clone()))),
            None => Ok(()),
        }
    }

    /// `tool`'s task support from a fresh listing of `server` (connected),
    /// within what is left of `budget`: whether a call must be a task never
    /// depends on when the cached list was dropped. A listing that fails
    /// leaves it unknown (`None`): the server answers the call.
    async fn listed_task_support(
        &self,
        server: &str,
        tool: &str,
        budget: &Budget,
    ) -> Option<TaskSupport> {
        let listed = tokio::time::timeout(budget.left().idle, self.list_server_tools(server)).await;
        match listed {
            Ok(Ok(tools)) => tools
                .iter()
                .find(|t| t.name == tool)
                .and_then(super::cache::task_support),
            Ok(Err(e)) => {
                tracing::debug!(error = %e, "cannot list tools to see whether the call is a task");
                None
            }
            Err(_) => None,
        }
    }

    /// A call that did not return a plain result: an `isError` result (kept,
    /// unless the tool is unknown), or an error, as a [`PoolError`].
    pub(super) async fn call_failed(
        &self,
        slot: &Arc<Slot>,
        conn: &Arc<Connection>,
        tool: &str,
        timeout: Option<Duration>,
        response: Result<ServerResult, ServiceError>,
    ) -> Result<CallToolResult, PoolError> {
        match response {
            Ok(ServerResult::CallToolResult(result)) => {
                // A server that says it has no such tool may have changed
                // since its list was cached: list it again to be sure.
                if result
                    .content
                    .iter()
                    .filter_map(|c| c.as_text())
                    .any(|t| says_unknown_tool(&t.text, tool))
                {
                    unknown_tool(slot, tool);
                }
                self.refuse_unknown_tool(slot, tool).await?;
                Ok(result)
            }
            Ok(other) => Err(PoolError::Protocol {
                server: slot.spec.name.clone(),
                message: format!(
                    "expected a tools/call result, got {}",
                    super::error::result_kind(&other)
                ),
            }),
            Err(ServiceError::McpError(e)) => {
                if says_unknown_tool(&e.message, tool) {
                    unknown_tool(slot, tool);
                }
                self.refuse_unknown_tool(slot, tool).await?;
                Err(self.service_error(slot, conn, Some(tool), ServiceError::McpError(e)))
            }
            Err(e) => match self.service_error(slot, conn, Some(tool), e) {
                PoolError::Closed { server, tool, .. } => {
                    Err(self.closed_error(conn, server, tool).await)
                }
                other => Err(super::budget::bounded(other, timeout)),
            },
        }
    }

    /// The error for a connection that closed during a call: how the
    /// server's process ended, when it was seen ending by itself (waited for
    /// briefly: the transport notes it as it closes), and its last stderr
    /// lines. Not waited for: a descendant may hold stderr open.
    async fn closed_error(
        &self,
        conn: &Connection,
        server: String,
        tool: Option<String>,
    ) -> PoolError {
        let Some(tail) = &conn.stderr else {
            return PoolError::Closed {
                server,
                tool,
                stderr: None,
            };
        };
        let exit = tail.settled_exit().await;
        let stderr = tail.last(ERROR_STDERR_LINES);
        match exit {
            Some(status) => PoolError::Exited {
                server,
                tool,
                status,
                stderr,
            },
            None => PoolError::Closed {
                server,
                tool,
                stderr,
            },
        }
    }

    /// After the server refused a call to `tool`: [`PoolError::UnknownTool`]
    /// if the server does not list it (servers say "unknown tool" in
    /// different ways: an `isError` result, a JSON-RPC error of one code or
    /// another), else `Ok` and the refusal stands as the server gave it.
    ///
    /// The cached list answers when there is one (refused calls to listed
    /// tools, the usual case in an agent loop, cost no request); otherwise
    /// the server is asked once, and its list cached. When the list cannot
    /// be had, the refusal stands too.
    async fn refuse_unknown_tool(&self, slot: &Arc<Slot>, tool: &str) -> Result<(), PoolError> {
        // From the cache when it is fresh; dropped above when the server
        // said it has no such tool, so a stale list is not believed.
        let tools = match self.list_server_tools(&slot.spec.name).await {
            Ok(tools) => tools,
            Err(e) => {
                tracing::debug!(error = %e, "cannot list tools to check the refused call");
                return Ok(());
            }
        };
        if tools.iter().any(|t| t.name == tool) {
            return Ok(());
        }
        Err(PoolError::unknown_tool(&slot.spec.name, tool, &tools))
    }

    /// Turns an rmcp error into a [`PoolError`], forgetting the connection
    /// when it is gone; scrubbed of the server's secrets.
    pub(super) fn service_error(
        &self,
        slot: &Slot,
        conn: &Arc<Connection>,
        tool: Option<&str>,
        error: ServiceError,
    ) -> PoolError {
        self.unscrubbed_service_error(slot, conn, tool, error)
            .redacted(&slot.redactor)
    }

    fn unscrubbed_service_error(
        &self,
        slot: &Slot,
        conn: &Arc<Connection>,
        tool: Option<&str>,
        error: ServiceError,
    ) -> PoolError {
        let server = slot.spec.name.clone();
        let tool = tool.map(str::to_owned);
        match error {
            ServiceError::Timeout { timeout } => PoolError::Timeout {
                server,
                tool,
                after: timeout,
            },
            ServiceError::McpError(e) if unreadable_reason(&e).is_some() => PoolError::Unreadable {
                server,
                tool,
                reason: unreadable_reason(&e).unwrap_or_default().to_owned(),
            },
            ServiceError::McpError(e) => PoolError::Server {
                server,
                tool,
                code: e.code.0,
                message: e.message.to_string(),
                data: e.data.map(Box::new),
            },
            // A request the server refused for want of a sign-in says so
            // (the connection is not closed, but cannot be used as it is).
            ServiceError::TransportSend(e)
                if e.error
                    .downcast_ref::<crate::transport::TransportError>()
                    .is_some_and(crate::transport::TransportError::needs_sign_in) =>
            {
                slot.forget(conn);
                match e.error.downcast::<crate::transport::TransportError>() {
                    Ok(e) => PoolError::Transport(*e),
                    Err(e) => PoolError::Protocol {
                        server,
                        message: e.to_string(),
                    },
                }
            }
            ServiceError::TransportClosed | ServiceError::TransportSend(_) => {
                slot.forget(conn);
                // Ended by the transport over an answer it cannot read (a
                // streamable HTTP body over the cap fails the POST itself).
                if let Some(reason) = conn.end_reason() {
                    return PoolError::Unreadable {
                        server,
                        tool,
                        reason,
                    };
                }
                PoolError::Closed {
                    server,
                    tool,
                    stderr: conn.stderr_tail(),
                }
            }
            other => PoolError::Protocol {
                server,
                message: other.to_string(),
            },
        }
    }

    /// Tells every running server that the roots changed
    /// (`notifications/roots/list_changed`), so that those that care ask
    /// again; call it after the roots handler's answer changed. Servers
    /// started later ask anyway. Does nothing when the pool offers no roots.
    pub async fn roots_changed(&self) {
        if self.inner.options.client_features.roots.is_none() {
            return;
        }
        let servers = self.servers();
        let mut conns: Vec<Arc<Connection>> = servers
            .order
            .iter()
            .filter_map(|name| servers.slots.get(name)?.current())
            .collect();
        // Their session connections too (`session_connection`).
        let sessions: Vec<Arc<Connection>> = conns
            .iter()
            .filter_map(|conn| conn.sessions.as_ref()?.live())
            .collect();
        conns.extend(sessions);
        join_all(conns.iter().map(|conn| async move {
            if let Err(e) = conn.peer.notify_roots_list_changed().await {
                tracing::debug!(error = %e, "cannot tell a server its roots changed");
            }
        }))
        .await;
    }

    /// The servers that are running now (a live connection), in config
    /// order: what [`Pool::close_all`] would close.
    pub fn running_server_names(&self) -> Vec<String> {
        let servers = self.servers();
        servers
            .order
            .iter()
            .filter(|name| {
                servers
                    .slots
                    .get(*name)
                    .is_some_and(|slot| slot.current().is_some())
            })
            .cloned()
            .collect()
    }

    /// The progress notifications `server` sends from now on, for every
    /// call on it (a display of a long call's progress, say; nothing is
    /// queued while nobody watches). Works before the server is started, and
    /// across its restarts. A watcher that falls more than 64 notifications
    /// behind misses the oldest ([`RecvError::Lagged`](tokio::sync::broadcast::error::RecvError::Lagged)).
    pub fn watch_progress(
        &self,
        server: &str,
    ) -> Result<tokio::sync::broadcast::Receiver<ProgressNotificationParam>, PoolError> {
        Ok(self.slot(server)?.progress.subscribe())
    }

    /// An event each time `server`'s tool list changes (the server sent
    /// `notifications/tools/list_changed`, or a call showed the cached list
    /// out of date), from now on, across restarts: for a program that
    /// passes the list on (the gateway tells its clients). Several changes
    /// while nobody reads may arrive as one
    /// ([`RecvError::Lagged`](tokio::sync::broadcast::error::RecvError::Lagged)).
    pub fn watch_tool_list_changes(
        &self,
        server: &str,
    ) -> Result<tokio::sync::broadcast::Receiver<()>, PoolError> {
        Ok(self.slot(server)?.cache.watch())
    }

    /// What `server` said about itself when it started, if it is running.
    pub fn connection_info(&self, server: &str) -> Option<ConnectionInfo> {
        let slot = self.any_slot(server)?;
        slot.current().map(|c| c.info.clone())
    }

    /// Whether `server` is running (since when), stopped or failed (why);
    /// `None` for a server the pool does not have. Never starts it.
    pub fn status(&self, server: &str) -> Option<ServerStatus> {
        self.any_slot(server).map(|slot| slot.status())
    }

    /// How many tools `server` has, when its list is cached (in memory or
    /// on disk); never starts it.
    pub fn cached_tool_count(&self, server: &str) -> Option<usize> {
        self.cached_visible(server).map(|tools| tools.len())
    }

    /// The last lines `server` wrote to stderr (stdio servers that ran).
    pub fn stderr_tail(&self, server: &str) -> Option<String> {
        let slot = self.any_slot(server)?;
        slot.current()
            .and_then(|c| c.stderr_tail())
            .map(|tail| slot.redactor.redact(&tail).into_owned())
    }

    /// Closes `server` gracefully (stdin closed, then SIGTERM, then SIGKILL
    /// of its process group). The next use starts it again.
    pub async fn close(&self, server: &str) {
        if let Some(conn) = self.any_slot(server).and_then(|s| s.take()) {
            conn.close().await;
        }
    }

    /// Closes every server concurrently, within `close_timeout` overall;
    /// whatever is still running then is killed.
    pub async fn close_all(&self) {
        self.close_all_within(self.inner.options.close_timeout)
            .await;
    }

    /// [`close_all`](Self::close_all) within `limit` (at most
    /// `close_timeout`): for a caller whose own deadline is near, such as a
    /// call with `--timeout` whose server is still busy with it.
    pub async fn close_all_within(&self, limit: Duration) {
        let conns: Vec<Arc<Connection>> = self
            .servers()
            .slots
            .values()
            .filter_map(|s| s.take())
            .collect();
        if conns.is_empty() {
            return;
        }
        let closing = join_all(conns.iter().map(|c| c.close()));
        let limit = limit.min(self.inner.options.close_timeout);
        if tokio::time::timeout(limit, closing).await.is_err() {
            tracing::warn!("servers did not close in time; killing them");
        }
        // Dropping the last handles kills any process group still alive.
        drop(conns);
    }
}

/// The `_meta` a request to `conn` adds: the log level its messages are
/// wanted at and the capabilities its caller declares
/// ([`CallOptions::client_capabilities`]), on 2026-07-28 (earlier protocols
/// set both once per connection), and the caller's own entries
/// ([`CallOptions::meta`]).
pub(super) fn request_meta(
    slot: &Slot,
    conn: &Connection,
    features: Option<&ClientFeatures>,
    options: &CallOptions,
) -> Option<rmcp::model::RequestMetaObject> {
    let mut meta = match conn.log_level_per_request {
        true => slot.logs.request_meta(features),
        false => None,
    };
    if conn.log_level_per_request
        && let Some(declared) = &options.client_capabilities
    {
        meta.get_or_insert_default()
            .set_client_capabilities(declared.clone());
    }
    let Some(extra) = &options.meta else {
        return meta;
    };
    let mut meta = meta.unwrap_or_default();
    meta.0
        .0
        .extend(extra.iter().map(|(k, v)| (k.clone(), v.clone())));
    Some(meta)
}

/// Whether a server's error `message` for a call of `tool` says it has no
/// such tool: "Unknown tool: x" (Python SDK), "Tool x not found"
/// (TypeScript SDK), "tool not found" and the like.
fn says_unknown_tool(message: &str, tool: &str) -> bool {
    let message = message.to_lowercase();
    message.contains("unknown tool")
        || message.contains("tool not found")
        || (message.contains(&tool.to_lowercase())
            && (message.contains("not found") || message.contains("unknown")))
}

/// The server says it has no `tool`: its cached list is out of date.
fn unknown_tool(slot: &Slot, tool: &str) {
    tracing::debug!(server = %slot.spec.name, tool, "the server does not know the tool; dropping its cached tool list");
    slot.cache.list_changed();
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::future_size;

    #[test]
    #[allow(unreachable_code, unused_variables, clippy::diverging_sub_expression)]
    fn a_call_future_does_not_carry_the_server_start_inline() {
        // Starting a server (spawn, handshake, timers) is boxed; inline it
        // made every call's future ~12 KiB, copied each time a caller moves
        // it into join_all or a task. The request itself (rmcp's future,
        // the wait, the input-required loop: ~5 KiB) is boxed too.
        let size = future_size(&|| {
            let pool: &'static Pool = unreachable!();
            pool.call_tool("server", "tool", None, unreachable!())
        });
        assert!(size <= 4096, "Pool::call_tool's future is {size} bytes");
    }
}
