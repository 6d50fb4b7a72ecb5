//! [`Gateway`]: the state every client session shares: the upstream pools,
//! the name tables, the resource routes, the connected clients and their
//! resource subscriptions, the metrics.

use std::{
    collections::HashMap,
    sync::{
        Arc, Mutex, RwLock, Weak,
        atomic::{AtomicU64, Ordering},
    },
};
use toolbridge::lock::{LockUnpoisoned as _, RwLockUnpoisoned as _};

use futures::future::join_all;
use rmcp::{
    RoleServer,
    model::{
        ClientRequest, ErrorCode, ErrorData, ListPromptsRequest, ListResourceTemplatesRequest,
        ListResourcesRequest, PaginatedRequestParams, Prompt, Resource, ResourceTemplate,
        ResourceUpdatedNotificationParam, ServerNotification, ServerResult, Tool,
    },
    service::{Peer, SubscriptionSink},
};
use toolbridge::{
    config::ServerSpec,
    pool::{CallOptions, ClientFeatures, Pool, PoolError, PoolOptions},
    tools::McpTool,
};

use crate::{
    client_peer::{InFlight, InFlightCall, Unrouted},
    held_calls::HeldCalls,
    metrics::Metrics,
    names::{Catalog, Route},
    relay::{self, ListKind},
    subscriptions::{ClientKey, Subscriptions, Target},
    upstreams::{Changes, SharedUpstreams, Upstreams},
};

/// At most this many pages are read from one server's listing.
const MAX_PAGES: usize = 100;

/// Gateway-wide settings.
#[derive(Debug, Clone)]
pub struct GatewayOptions {
    /// The options of each upstream's pool (timeouts, tool cache). The
    /// client features are the gateway's own: each call brings its client's.
    pub pool: PoolOptions,
    /// How many items one page of a listing gives a client.
    pub page_size: usize,
}

impl Default for GatewayOptions {
    fn default() -> Self {
        GatewayOptions {
            pool: PoolOptions::default(),
            page_size: 200,
        }
    }
}

/// The gateway's shared state. Cheap to clone.
#[derive(Clone)]
pub struct Gateway {
    inner: Arc<Inner>,
}

struct Inner {
    /// The upstream servers now; swapped whole by [`Gateway::reload`].
    upstreams: RwLock<SharedUpstreams>,
    /// The options the pools were made with.
    pool_options: PoolOptions,
    /// Items per page to clients.
    page_size: usize,
    /// The tool catalog and the lists it was built from: rebuilt when a
    /// server's cached list is another one (it changed) or the servers did.
    tools: Mutex<Option<ToolsCache>>,
    /// The prompt catalog of the latest prompt listing.
    prompts: Mutex<Option<Arc<Catalog<Prompt>>>>,
    /// Resource URI → server, from the latest listings.
    resources: Mutex<HashMap<String, String>>,
    /// Resource template → server, from the latest listings.
    templates: Mutex<Vec<(String, String)>>,
    /// Connected clients (sessions), told when lists change.
    clients: Mutex<Vec<Peer<RoleServer>>>,
    /// 2026-07-28 clients' `subscriptions/listen` streams, told too.
    listeners: Arc<Listeners>,
    /// Which client session wants the updates of which resource.
    subscriptions: Subscriptions,
    /// The next client session's id in `subscriptions`.
    next_client: AtomicU64,
    /// Stateless clients' calls waiting for their answers.
    held: Arc<HeldCalls>,
    /// Calls, errors, latency, upstream state.
    metrics: Metrics,
    /// The calls in flight per server, for what the pool cannot route.
    in_flight: Arc<InFlight>,
}

struct ToolsCache {
    upstreams: SharedUpstreams,
    lists: Vec<Arc<Vec<McpTool>>>,
    catalog: Arc<Catalog<Tool>>,
}

impl Gateway {
    /// A gateway over `specs` (disabled servers left out); nothing starts
    /// until a client asks.
    pub fn new(specs: Vec<ServerSpec>, options: GatewayOptions) -> Gateway {
        let in_flight = Arc::new(InFlight::default());
        let mut pool_options = options.pool;
        pool_options.client_features = Unrouted::features(in_flight.clone());
        // Each change pinning sees is an audit line.
        if let Some(pins) = pool_options.pins.as_mut()
            && pins.on_event.is_none()
        {
            pins.on_event = Some(Arc::new(crate::audit::pin_event));
        }
        let upstreams = Arc::new(Upstreams::new(specs, &pool_options));
        let gateway = Gateway {
            inner: Arc::new(Inner {
                upstreams: RwLock::new(upstreams.clone()),
                pool_options,
                page_size: options.page_size.max(1),
                tools: Mutex::new(None),
                prompts: Mutex::new(None),
                resources: Mutex::new(HashMap::new()),
                templates: Mutex::new(Vec::new()),
                clients: Mutex::new(Vec::new()),
                listeners: Arc::default(),
                subscriptions: Subscriptions::default(),
                next_client: AtomicU64::new(0),
                held: Arc::default(),
                metrics: Metrics::default(),
                in_flight,
            }),
        };
        relay::watch(&gateway, &upstreams, &upstreams.order);
        gateway
    }

    /// A handle that does not keep the gateway alive, for its tasks.
    pub(crate) fn downgrade(&self) -> WeakGateway {
        WeakGateway(Arc::downgrade(&self.inner))
    }

    /// An upstream's `kind` list changed: what the gateway keeps of it is
    /// dropped (rebuilt on next use) and clients are told.
    pub async fn list_changed(&self, kind: ListKind) {
        match kind {
            ListKind::Tools => *self.inner.tools.lock_unpoisoned() = None,
            ListKind::Prompts => {
                *self.inner.prompts.lock_unpoisoned() = None;
            }
            // The routes are refreshed by the next listing, or on a miss.
            ListKind::Resources => {}
        }
        let clients = self.live_clients();
        join_all(clients.iter().map(|peer| kind.notify(peer))).await;
        self.inner.listeners.send(&[kind.notification()]).await;
    }

    /// `update` of a resource of `server`, sent to the client sessions
    /// subscribed to it; when they have all gone away, the upstream is
    /// unsubscribed.
    pub async fn resource_updated(&self, server: &str, update: ResourceUpdatedNotificationParam) {
        let uri = update.uri.clone();
        let subscriptions = &self.inner.subscriptions;
        if subscriptions.deliver(server, update).await {
            subscriptions
                .release(server, &uri, |s| self.upstreams().pool(s).cloned())
                .await;
        }
    }

    /// A new client session's key for resource subscriptions; when it drops,
    /// the session's subscriptions end.
    pub fn client_key(&self) -> ClientKey {
        let id = self.inner.next_client.fetch_add(1, Ordering::Relaxed);
        ClientKey::new(id, self.downgrade())
    }

    /// Session `client` wants the updates of resource `uri` (sent to
    /// `target`): subscribed on the server that has it (the upstream once,
    /// however many clients want it).
    pub async fn subscribe(
        &self,
        uri: &str,
        client: &ClientKey,
        target: Target,
    ) -> Result<(), ErrorData> {
        let servers = self.servers_for_uri(uri).await;
        let upstreams = self.upstreams();
        let mut last = None;
        for server in &servers {
            let Some(pool) = upstreams.pool(server) else {
                continue;
            };
            match self
                .inner
                .subscriptions
                .subscribe(pool, server, uri, client.id, target.clone())
                .await
            {
                Ok(()) => return Ok(()),
                Err(e) if servers.len() > 1 && is_unknown_resource(&e) => last = Some(e),
                Err(e) => return Err(to_mcp_error(e)),
            }
        }
        Err(last.map(to_mcp_error).unwrap_or_else(|| {
            ErrorData::resource_not_found(
                format!("no server of the gateway has resource {uri}"),
                None,
            )
        }))
    }

    /// Session `client` no longer wants the updates of resource `uri`; the
    /// upstream is unsubscribed when no session wants them any more.
    pub async fn unsubscribe(&self, uri: &str, client: &ClientKey) {
        self.inner
            .subscriptions
            .unsubscribe(uri, client.id, |s| self.upstreams().pool(s).cloned())
            .await;
    }

    /// Session `client` went away: its subscriptions end.
    pub(crate) async fn forget_client(&self, client: u64) {
        self.inner
            .subscriptions
            .forget(client, |s| self.upstreams().pool(s).cloned())
            .await;
    }

    /// Tells a 2026-07-28 client's `subscriptions/listen` stream (`sink`)
    /// of list changes until the guard drops.
    pub fn listen(&self, sink: SubscriptionSink) -> Listening {
        let key = self.inner.listeners.next.fetch_add(1, Ordering::Relaxed);
        self.inner
            .listeners
            .sinks
            .lock_unpoisoned()
            .push((key, sink));
        Listening {
            listeners: self.inner.listeners.clone(),
            key,
        }
    }

    fn live_clients(&self) -> Vec<Peer<RoleServer>> {
        let mut clients = self.inner.clients.lock_unpoisoned();
        clients.retain(|peer| !peer.is_transport_closed());
        clients.clone()
    }

    /// The upstream servers now.
    pub fn upstreams(&self) -> SharedUpstreams {
        self.inner.upstreams.read_unpoisoned().clone()
    }

    /// Notes a call to `server` for a client with `features` until the
    /// guard drops.
    pub fn enter_call(&self, server: &str, features: ClientFeatures) -> InFlightCall {
        self.inner.in_flight.enter(server, features)
    }

    /// The stateless clients' calls held open for their answers.
    pub fn held_calls(&self) -> &Arc<HeldCalls> {
        &self.inner.held
    }

    /// Items per page to clients.
    pub fn page_size(&self) -> usize {
        self.inner.page_size
    }

    /// The metrics.
    pub fn metrics(&self) -> &Metrics {
        &self.inner.metrics
    }

    /// Each upstream server and whether it is running now.
    pub fn upstream_states(&self) -> Vec<(String, bool)> {
        self.upstreams()
            .iter()
            .map(|(name, pool)| (name.to_owned(), !pool.running_server_names().is_empty()))
            .collect()
    }

    /// Replaces the servers with `specs`: new ones are added, removed and
    /// changed ones closed (changed ones start again with their new entry
    /// on next use), the others untouched. Connected clients are told the
    /// lists changed.
    pub async fn reload(&self, specs: Vec<ServerSpec>) -> Changes {
        let (next, closing, changes) = {
            let mut current = self.inner.upstreams.write_unpoisoned();
            let (next, closing, changes) = current.updated(specs, &self.inner.pool_options);
            let next = Arc::new(next);
            if !changes.is_empty() {
                *current = next.clone();
            }
            (next, closing, changes)
        };
        if changes.is_empty() {
            return changes;
        }
        tracing::info!(
            added = ?changes.added,
            removed = ?changes.removed,
            changed = ?changes.changed,
            "config changed; servers updated"
        );
        let started: Vec<String> = changes
            .added
            .iter()
            .chain(&changes.changed)
            .cloned()
            .collect();
        relay::watch(self, &next, &started);
        for server in &changes.removed {
            self.inner.subscriptions.drop_server(server);
        }
        for server in &changes.changed {
            // In the background: it starts the server.
            if let (Some(pool), Ok(runtime)) =
                (next.pool(server), tokio::runtime::Handle::try_current())
            {
                let (gateway, pool, server) = (self.clone(), pool.clone(), server.clone());
                runtime.spawn(async move {
                    gateway.inner.subscriptions.renew(&server, &pool).await;
                });
            }
        }
        self.lists_changed().await;
        join_all(closing.iter().map(Pool::close_all)).await;
        changes
    }

    /// Forgets what the gateway knows of the lists and tells every client
    /// that tools, prompts and resources may have changed.
    pub async fn lists_changed(&self) {
        for kind in ListKind::ALL {
            self.list_changed(kind).await;
        }
    }

    /// The pins folder, when the gateway pins tool definitions.
    pub fn pins_dir(&self) -> Option<&std::path::Path> {
        self.inner
            .pool_options
            .pins
            .as_ref()
            .map(|p| p.dir.as_path())
    }

    /// The pins changed on disk (an approval made by another process):
    /// each upstream whose visible tools changed tells its watchers, and
    /// so the clients, that its list changed. The servers whose list did.
    pub fn recheck_pins(&self) -> Vec<String> {
        let upstreams = self.upstreams();
        upstreams
            .iter()
            .flat_map(|(_, pool)| pool.recheck_pins())
            .collect()
    }

    /// Remembers a connected client, to tell it when lists change.
    pub fn register_client(&self, peer: Peer<RoleServer>) {
        let mut clients = self.inner.clients.lock_unpoisoned();
        clients.retain(|peer| !peer.is_transport_closed());
        clients.push(peer);
    }

    /// Closes every upstream server (the gateway is stopping).
    pub async fn close_all(&self) {
        self.upstreams().close_all().await;
    }

    /// The tools of every upstream server under the names clients see.
    /// Servers that cannot be listed are left out (and logged).
    pub async fn tools(&self) -> Arc<Catalog<Tool>> {
        let upstreams = self.upstreams();
        let results = join_all(
            upstreams
                .iter()
                .map(|(name, pool)| async move { pool.list_server_tools(name).await }),
        )
        .await;
        let mut lists = Vec::with_capacity(results.len());
        for ((name, _), result) in upstreams.iter().zip(results) {
            match result {
                Ok(list) => lists.push(list),
                Err(e) => {
                    tracing::warn!(server = name, error = %e, "leaving the server's tools out");
                    lists.push(Arc::new(Vec::new()));
                }
            }
        }
        let mut cache = self.inner.tools.lock_unpoisoned();
        if let Some(cached) = cache.as_ref()
            && Arc::ptr_eq(&cached.upstreams, &upstreams)
            && cached.lists.len() == lists.len()
            && cached
                .lists
                .iter()
                .zip(&lists)
                .all(|(a, b)| Arc::ptr_eq(a, b))
        {
            return cached.catalog.clone();
        }
        let items = upstreams
            .order
            .iter()
            .zip(&lists)
            .flat_map(|(server, list)| {
                list.iter()
                    .map(move |t| (server.clone(), t.name.clone(), to_rmcp_tool(t)))
            })
            .collect();
        let catalog = Arc::new(Catalog::build(
            items,
            upstreams.order.len() > 1,
            |t, name| t.name = name.to_owned().into(),
        ));
        *cache = Some(ToolsCache {
            upstreams,
            lists,
            catalog: catalog.clone(),
        });
        catalog
    }

    /// Where the tool clients call `name` is: itself on the one upstream
    /// when there is one (no listing needed), else from the catalog.
    pub async fn resolve_tool(&self, name: &str) -> Option<Route> {
        let upstreams = self.upstreams();
        if let [only] = upstreams.order.as_slice() {
            return Some(Route {
                server: only.clone(),
                name: name.to_owned(),
            });
        }
        self.tools().await.resolve(name).cloned()
    }

    /// The prompts of every upstream server under the names clients see.
    pub async fn prompts(&self) -> Arc<Catalog<Prompt>> {
        let upstreams = self.upstreams();
        let lists = self
            .list_each(&upstreams, |cursor| {
                ClientRequest::ListPromptsRequest(ListPromptsRequest::with_param(
                    PaginatedRequestParams::default().with_cursor(cursor),
                ))
            })
            .await;
        let items = lists
            .into_iter()
            .flat_map(|(server, results)| {
                results.into_iter().flat_map(move |result| match result {
                    ServerResult::ListPromptsResult(page) => page
                        .prompts
                        .into_iter()
                        .map(|p| (server.clone(), p.name.clone(), p))
                        .collect::<Vec<_>>(),
                    _ => Vec::new(),
                })
            })
            .collect();
        let catalog = Arc::new(Catalog::build(
            items,
            upstreams.order.len() > 1,
            |p, name| p.name = name.to_owned(),
        ));
        *self.inner.prompts.lock_unpoisoned() = Some(catalog.clone());
        catalog
    }

    /// Where the prompt clients call `name` is.
    pub async fn resolve_prompt(&self, name: &str) -> Option<Route> {
        let upstreams = self.upstreams();
        if let [only] = upstreams.order.as_slice() {
            return Some(Route {
                server: only.clone(),
                name: name.to_owned(),
            });
        }
        let known = self
            .inner
            .prompts
            .lock_unpoisoned()
            .as_ref()
            .and_then(|c| c.resolve(name).cloned());
        match known {
            Some(route) => Some(route),
            None => self.prompts().await.resolve(name).cloned(),
        }
    }

    /// The resources of every upstream server (URIs unchanged), noting which
    /// server has each.
    pub async fn resources(&self) -> Vec<Resource> {
        let upstreams = self.upstreams();
        let lists = self
            .list_each(&upstreams, |cursor| {
                ClientRequest::ListResourcesRequest(ListResourcesRequest::with_param(
                    PaginatedRequestParams::default().with_cursor(cursor),
                ))
            })
            .await;
        let mut all = Vec::new();
        let mut routes = HashMap::new();
        for (server, results) in lists {
            for result in results {
                if let ServerResult::ListResourcesResult(page) = result {
                    for resource in page.resources {
                        routes
                            .entry(resource.uri.clone())
                            .or_insert_with(|| server.clone());
                        all.push(resource);
                    }
                }
            }
        }
        *self.inner.resources.lock_unpoisoned() = routes;
        all
    }

    /// The resource templates of every upstream server, noting which server
    /// has each.
    pub async fn resource_templates(&self) -> Vec<ResourceTemplate> {
        let upstreams = self.upstreams();
        let lists = self
            .list_each(&upstreams, |cursor| {
                ClientRequest::ListResourceTemplatesRequest(
                    ListResourceTemplatesRequest::with_param(
                        PaginatedRequestParams::default().with_cursor(cursor),
                    ),
                )
            })
            .await;
        let mut all = Vec::new();
        let mut routes = Vec::new();
        for (server, results) in lists {
            for result in results {
                if let ServerResult::ListResourceTemplatesResult(page) = result {
                    for template in page.resource_templates {
                        routes.push((template.uri_template.clone(), server.clone()));
                        all.push(template);
                    }
                }
            }
        }
        *self.inner.templates.lock_unpoisoned() = routes;
        all
    }

    /// The servers that may have resource `uri`, the likeliest first: the
    /// one that listed it, else those with a template it fits, else (when
    /// nothing is known) every server in config order.
    pub async fn servers_for_uri(&self, uri: &str) -> Vec<String> {
        let upstreams = self.upstreams();
        if let [only] = upstreams.order.as_slice() {
            return vec![only.clone()];
        }
        for attempt in 0..2 {
            let listed = self.inner.resources.lock_unpoisoned().get(uri).cloned();
            if let Some(server) = listed {
                return vec![server];
            }
            let fitting: Vec<String> = self
                .inner
                .templates
                .lock_unpoisoned()
                .iter()
                .filter(|(template, _)| template_fits(template, uri))
                .map(|(_, server)| server.clone())
                .collect();
            if !fitting.is_empty() {
                return fitting;
            }
            if attempt == 0 {
                self.resources().await;
                self.resource_templates().await;
            }
        }
        upstreams.order.clone()
    }

    /// Every page of one listing from each server, in config order; a server
    /// that does not offer it gives nothing, one that fails is logged.
    async fn list_each(
        &self,
        upstreams: &Upstreams,
        request: impl Fn(Option<String>) -> ClientRequest + Copy,
    ) -> Vec<(String, Vec<ServerResult>)> {
        join_all(upstreams.iter().map(|(name, pool)| async move {
            let pages = match list_pages(pool, name, request).await {
                Ok(pages) => pages,
                Err(e) if is_not_offered(&e) => Vec::new(),
                Err(e) => {
                    tracing::warn!(server = name, error = %e, "leaving the server's listing out");
                    Vec::new()
                }
            };
            (name.to_owned(), pages)
        }))
        .await
    }
}

/// A [`Gateway`] that its own tasks hold without keeping it alive.
#[derive(Clone)]
pub(crate) struct WeakGateway(Weak<Inner>);

impl WeakGateway {
    /// The gateway, while it lives.
    pub(crate) fn upgrade(&self) -> Option<Gateway> {
        self.0.upgrade().map(|inner| Gateway { inner })
    }
}

/// The open `subscriptions/listen` streams.
#[derive(Default)]
struct Listeners {
    sinks: Mutex<Vec<(u64, SubscriptionSink)>>,
    next: AtomicU64,
}

impl Listeners {
    /// Sends each of `notifications` the stream accepted to every stream.
    async fn send(&self, notifications: &[ServerNotification]) {
        let sinks: Vec<SubscriptionSink> = self
            .sinks
            .lock_unpoisoned()
            .iter()
            .map(|(_, sink)| sink.clone())
            .collect();
        for sink in &sinks {
            for notification in notifications {
                // Refused when the client did not ask for that kind.
                let _ = sink.send(notification.clone()).await;
            }
        }
    }
}

/// A `subscriptions/listen` stream being told of changes; dropping it
/// stops that.
pub struct Listening {
    listeners: Arc<Listeners>,
    key: u64,
}

impl Drop for Listening {
    fn drop(&mut self) {
        self.listeners
            .sinks
            .lock_unpoisoned()
            .retain(|(key, _)| *key != self.key);
    }
}

/// Every page of a listing from `server`, following `nextCursor`, bounded.
async fn list_pages(
    pool: &Pool,
    server: &str,
    request: impl Fn(Option<String>) -> ClientRequest,
) -> Result<Vec<ServerResult>, PoolError> {
    let mut pages = Vec::new();
    let mut cursor = None;
    let options = CallOptions::default();
    for _ in 0..MAX_PAGES {
        let page = pool
            .request(server, request(cursor.take()), &options)
            .await?;
        let next = match &page {
            ServerResult::ListPromptsResult(p) => p.next_cursor.clone(),
            ServerResult::ListResourcesResult(p) => p.next_cursor.clone(),
            ServerResult::ListResourceTemplatesResult(p) => p.next_cursor.clone(),
            _ => None,
        };
        pages.push(page);
        match next {
            Some(next) if !next.is_empty() => cursor = Some(next),
            _ => return Ok(pages),
        }
    }
    tracing::warn!(
        server,
        "the server's listing goes on past {MAX_PAGES} pages; keeping the first"
    );
    Ok(pages)
}

/// Whether a server does not know a resource, or offers no subscriptions
/// (so another server may).
fn is_unknown_resource(error: &PoolError) -> bool {
    match error {
        PoolError::Server { code, .. } => {
            *code == ErrorCode::RESOURCE_NOT_FOUND.0 || *code == ErrorCode::INVALID_PARAMS.0
        }
        PoolError::NotOffered { .. } => true,
        _ => false,
    }
}

/// Whether a server said it does not offer what was asked (method not
/// found), which in an aggregate listing means "nothing", not a failure.
fn is_not_offered(error: &PoolError) -> bool {
    matches!(error, PoolError::Server { code, .. } if *code == ErrorCode::METHOD_NOT_FOUND.0)
}

/// Whether `uri` may come from `template` (RFC 6570): the text before the
/// first expression is a prefix of it. Enough to pick the server; the
/// server itself decides.
fn template_fits(template: &str, uri: &str) -> bool {
    let literal = template.split('{').next().unwrap_or_default();
    !literal.is_empty() && uri.starts_with(literal)
}

/// A pool tool as rmcp's model, for a client's `tools/list`: every field
/// the server sent, its `_meta` included. Not its `execution`: the gateway
/// runs a task-only tool as a task itself (the pool does) and offers its
/// clients no tasks, so to them every tool is a plain call.
fn to_rmcp_tool(tool: &McpTool) -> Tool {
    let mut out = Tool::default();
    out.name = tool.name.clone().into();
    out.title = tool.title.clone();
    out.description = (!tool.description.is_empty()).then(|| tool.description.clone().into());
    out.input_schema = tool.input_schema.clone();
    out.output_schema = tool.output_schema.clone();
    out.annotations = tool.annotations.clone();
    out.icons = tool.icons.clone();
    out.meta = tool.meta.clone().map(rmcp::model::MetaObject);
    out
}

/// A pool error as the JSON-RPC error a client gets: the server's own error
/// as it was, the rest as an internal error naming the server.
pub fn to_mcp_error(error: PoolError) -> ErrorData {
    match error {
        PoolError::Server { code, message, .. } => ErrorData::new(ErrorCode(code), message, None),
        e if e.is_usage() => ErrorData::invalid_params(e.to_string(), None),
        e => ErrorData::internal_error(e.to_string(), None),
    }
}

/// A page of `items` for a client: `cursor` is the offset as a string.
pub fn page<T: Clone>(
    items: &[T],
    cursor: Option<&str>,
    size: usize,
) -> Result<(Vec<T>, Option<String>), ErrorData> {
    let start = match cursor {
        None => 0,
        Some(c) => c
            .parse::<usize>()
            .ok()
            .filter(|s| *s <= items.len())
            .ok_or_else(|| {
                ErrorData::invalid_params(
                    format!("invalid cursor {c:?}; list from the start"),
                    None,
                )
            })?,
    };
    let end = start.saturating_add(size).min(items.len());
    let next = (end < items.len()).then(|| end.to_string());
    Ok((items[start..end].to_vec(), next))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 24: the conversion back to rmcp dropped the server's `_meta`.
    #[test]
    fn a_tool_keeps_its_servers_meta_but_not_the_execution_carrier() {
        let mut listed = serde_json::json!({"tools": [{
            "name": "research", "inputSchema": {"type": "object"},
            "execution": {"taskSupport": "required"},
            "_meta": {"com.example/ui": {"icon": "search"}},
        }]});
        toolbridge::tools::keep_execution(&mut listed);
        let tool: Tool = serde_json::from_value(listed["tools"][0].clone()).unwrap();
        let pooled = McpTool::from_rmcp("s", "s", &tool);
        assert!(pooled.requires_task());
        let served = serde_json::to_value(to_rmcp_tool(&pooled)).unwrap();
        assert_eq!(
            served["_meta"],
            serde_json::json!({"com.example/ui": {"icon": "search"}})
        );
        assert!(served.get("execution").is_none(), "{served}");
    }

    #[test]
    fn pages_follow_offsets_and_reject_foreign_cursors() {
        let items: Vec<u32> = (0..5).collect();
        let (first, next) = page(&items, None, 2).unwrap_or_default();
        assert_eq!(first, [0, 1]);
        assert_eq!(next.as_deref(), Some("2"));
        let (last, next) = page(&items, Some("4"), 2).unwrap_or_default();
        assert_eq!((last, next), (vec![4], None));
        assert!(page(&items, Some("x"), 2).is_err());
    }

    #[test]
    fn a_template_fits_the_uris_with_its_literal_prefix() {
        assert!(template_fits(
            "test://template/{id}/data",
            "test://template/7/data"
        ));
        assert!(!template_fits("test://template/{id}", "file:///x"));
        assert!(!template_fits("{all}", "file:///x"));
    }
}
