//! [`Gateway`]: the state every client session shares: the pool of upstreams,
//! the profiles and each view's name tables, the resource routes, the
//! connected clients (by view) and their resource subscriptions, the
//! metrics.

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
        ErrorCode, ErrorData, Prompt, Resource, ResourceTemplate, ResourceUpdatedNotificationParam,
        ServerNotification, Tool,
    },
    service::{Peer, SubscriptionSink},
};
use toolbridge::{
    config::{Profile, ServerSpec},
    pool::{self, Pool, PoolError, PoolOptions},
    tools::McpTool,
};

use crate::{
    client_peer::Unrouted,
    held_calls::HeldCalls,
    metrics::Metrics,
    names::{Catalog, Route},
    profile::{View, ViewName, ViewTools},
    relay::{self, ListKind},
    subscriptions::{ClientKey, Subscriptions, Target},
};

/// Gateway-wide settings.
#[derive(Debug, Clone)]
pub struct GatewayOptions {
    /// The options of the upstreams' pool (timeouts, tool cache, parallel
    /// starts). The client features are the gateway's own: each call brings
    /// its client's.
    pub pool: PoolOptions,
    /// How many items one page of a listing gives a client.
    pub page_size: usize,
    /// What one client may hold at once over HTTP (`limits`).
    pub limits: crate::limits::Limits,
    /// The config's profiles, each served at `/mcp/NAME`.
    pub profiles: Vec<Profile>,
    /// Which clients may use which tools (`toolbridge.gateway.rules`).
    pub rights: crate::rights::Rights,
    /// Rate limits and upstream bounds (`toolbridge.gateway.limits`).
    pub rate_limits: crate::rate_limits::RateLimits,
    /// Where the spans of its calls go (`tracing_export`); off by default.
    pub tracing: crate::tracing_export::Tracing,
}

impl Default for GatewayOptions {
    fn default() -> Self {
        GatewayOptions {
            pool: PoolOptions::default(),
            page_size: 200,
            limits: crate::limits::Limits::default(),
            profiles: Vec::new(),
            rights: crate::rights::Rights::default(),
            rate_limits: crate::rate_limits::RateLimits::default(),
            tracing: crate::tracing_export::Tracing::off(),
        }
    }
}

/// The gateway's shared state. Cheap to clone.
#[derive(Clone)]
pub struct Gateway {
    inner: Arc<Inner>,
}

struct Inner {
    /// Every upstream server (the enabled ones of the config); its servers
    /// are replaced by [`Gateway::reload`]. Every client session shares it,
    /// so each server runs once however many clients there are.
    pool: Pool,
    /// Where the pool keeps its pins, when it pins tool definitions.
    pins_dir: Option<std::path::PathBuf>,
    /// Items per page to clients.
    page_size: usize,
    /// The profiles by name; swapped whole by [`Gateway::reload`].
    profiles: RwLock<Arc<HashMap<String, Arc<Profile>>>>,
    /// What `/mcp` shows: every server, every tool.
    everything: Arc<Profile>,
    /// Each view's tools and the lists they were built from: rebuilt when a
    /// server's cached list is another one (it changed), the servers did or
    /// the profile did.
    tools: Mutex<HashMap<ViewName, ToolsCache>>,
    /// The servers whose tools the gateway listed itself, to tell whether a
    /// list change concerns a profile, since a client last listed them: a
    /// server that says its list changed after every listing gets one such
    /// listing per client listing, not a loop.
    compared: Mutex<std::collections::HashSet<String>>,
    /// Each view's prompt catalog of its latest prompt listing.
    prompts: Mutex<HashMap<ViewName, Arc<Catalog<Prompt>>>>,
    /// Resource URI → server, from the latest listings.
    resources: Mutex<HashMap<String, String>>,
    /// Resource template → server, from the latest listings.
    templates: Mutex<Vec<(String, String)>>,
    /// Connected clients (sessions) and their views, told when their
    /// view's lists change.
    clients: Mutex<Vec<(ViewName, Peer<RoleServer>)>>,
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
    /// Sessions and requests in flight per client, against the limits.
    caps: Arc<crate::limits::Caps>,
    /// The rules' rights.
    rights: crate::rights::Rights,
    /// Rate limits and upstream bounds.
    rate_limits: crate::rate_limits::RateLimits,
    /// The clients seen, for the page's Home.
    connected: crate::connected_clients::ConnectedClients,
    /// Calls in flight and the last ended, for the page's Activity.
    activity: crate::activity::Activity,
    /// The upstreams' log messages, for the page's Logs.
    upstream_logs: crate::upstream_logs::UpstreamLogs,
    /// The spans of the calls, when tracing is on.
    tracing: crate::tracing_export::Tracing,
}

struct ToolsCache {
    /// The servers the lists are of, in config order.
    servers: Vec<String>,
    profile: Arc<Profile>,
    lists: Vec<Arc<Vec<McpTool>>>,
    tools: Arc<ViewTools>,
    /// The tools the view's clients were last told of (listed, or told
    /// changed): what a list change is compared with, so that a listing
    /// between the change and its notification does not hide it.
    announced: Arc<ViewTools>,
}

impl Gateway {
    /// A gateway over `specs` (disabled servers left out); nothing starts
    /// until a client asks.
    pub fn new(specs: Vec<ServerSpec>, options: GatewayOptions) -> Gateway {
        let mut pool_options = options.pool;
        // What no client's call claims (see `client_peer`).
        pool_options.client_features = Unrouted::features();
        let upstream_logs = crate::upstream_logs::UpstreamLogs::default();
        pool_options.client_features.logs = Some(upstream_logs.tee(None));
        // Each change pinning sees is an audit line.
        if let Some(pins) = pool_options.pins.as_mut()
            && pins.on_event.is_none()
        {
            pins.on_event = Some(Arc::new(crate::audit::pin_event));
        }
        let pins_dir = pool_options.pins.as_ref().map(|p| p.dir.clone());
        let pool = Pool::new(enabled(specs), pool_options);
        let gateway = Gateway {
            inner: Arc::new(Inner {
                pool,
                pins_dir,
                page_size: options.page_size.max(1),
                profiles: RwLock::new(Arc::new(by_name(options.profiles))),
                everything: Arc::new(Profile::everything("")),
                tools: Mutex::new(HashMap::new()),
                compared: Mutex::default(),
                prompts: Mutex::new(HashMap::new()),
                resources: Mutex::new(HashMap::new()),
                templates: Mutex::new(Vec::new()),
                clients: Mutex::new(Vec::new()),
                listeners: Arc::default(),
                subscriptions: Subscriptions::default(),
                next_client: AtomicU64::new(0),
                held: Arc::default(),
                metrics: Metrics::default(),
                caps: crate::limits::Caps::new(options.limits),
                rights: options.rights,
                rate_limits: options.rate_limits,
                connected: Default::default(),
                activity: Default::default(),
                upstream_logs,
                tracing: options.tracing,
            }),
        };
        relay::watch(&gateway, gateway.pool(), &gateway.pool().server_names());
        gateway
    }

    /// A handle that does not keep the gateway alive, for its tasks.
    pub(crate) fn downgrade(&self) -> WeakGateway {
        WeakGateway(Arc::downgrade(&self.inner))
    }

    /// Upstream `server`'s `kind` list changed: the clients whose view
    /// shows that server are told. For tools, a search-mode view is not
    /// (it lists the same two tools whatever the server has), and a view
    /// whose `tools` globs pick some of the server's tools only when the
    /// tools it shows are now other than it was told (a change to a tool
    /// its profile leaves out is not its own). That takes a listing of the
    /// server, made once per change and then not again until a client has
    /// listed (a server that says its list changed after every listing
    /// would otherwise be listed in a loop): meanwhile such views are told.
    pub async fn list_changed(&self, kind: ListKind, server: &str) {
        if kind == ListKind::Prompts {
            self.inner.prompts.lock_unpoisoned().clear();
        }
        let may_list = kind == ListKind::Tools
            && self
                .inner
                .compared
                .lock_unpoisoned()
                .insert(server.to_owned());
        // The resource routes are refreshed by the next listing, or on a miss.
        let mut told = Vec::new();
        for name in self.watched_views() {
            let Ok(view) = self.view(&name) else {
                continue;
            };
            if !view.profile.includes_server(server) {
                continue;
            }
            let tell = match kind {
                ListKind::Tools if view.searches() => false,
                ListKind::Tools if may_list && !view.profile.tools.is_empty() => {
                    self.tools_changed(&view).await
                }
                ListKind::Tools | ListKind::Prompts | ListKind::Resources => true,
            };
            if tell {
                told.push(name);
            }
        }
        self.notify(&told, kind).await;
    }

    /// A client of `view` listed its tools: the servers of the view may be
    /// listed again to tell whether a list change concerns a profile.
    pub fn client_listed(&self, view: &View) {
        self.inner
            .compared
            .lock_unpoisoned()
            .retain(|server| !view.profile.includes_server(server));
    }

    /// Whether `view`'s tools are other than its clients were last told,
    /// noting the new ones as told.
    async fn tools_changed(&self, view: &View) -> bool {
        let known = self
            .inner
            .tools
            .lock_unpoisoned()
            .get(&view.name)
            .map(|cached| cached.announced.clone());
        let now = self.tools(view).await;
        let mut cache = self.inner.tools.lock_unpoisoned();
        if let Some(cached) = cache.get_mut(&view.name) {
            cached.announced = now.clone();
        }
        known.is_none_or(|known| !known.same_as(&now))
    }

    /// Tells the clients of `views` that their `kind` list changed.
    async fn notify(&self, views: &[ViewName], kind: ListKind) {
        if views.is_empty() {
            return;
        }
        let clients = self.live_clients();
        join_all(
            clients
                .iter()
                .filter(|(view, _)| views.contains(view))
                .map(|(_, peer)| kind.notify(peer)),
        )
        .await;
        self.inner
            .listeners
            .send(|view| views.contains(view), &[kind.notification()])
            .await;
    }

    /// The views that have clients to tell of changes now.
    fn watched_views(&self) -> Vec<ViewName> {
        let mut views: Vec<ViewName> = self
            .live_clients()
            .into_iter()
            .map(|(view, _)| view)
            .collect();
        views.extend(self.inner.listeners.views());
        let mut unique = Vec::with_capacity(views.len());
        for view in views {
            if !unique.contains(&view) {
                unique.push(view);
            }
        }
        unique
    }

    /// View `name` as the config says now; an error for a profile the
    /// config no longer has.
    pub fn view(&self, name: &ViewName) -> Result<View, ErrorData> {
        let profile = match name {
            ViewName::All => self.inner.everything.clone(),
            ViewName::Profile(profile) => self
                .inner
                .profiles
                .read_unpoisoned()
                .get(profile.as_ref())
                .cloned()
                .ok_or_else(|| {
                    ErrorData::invalid_request(
                        format!(
                            "profile {profile} is no longer in the gateway's config; \
                             connect to another one"
                        ),
                        None,
                    )
                })?,
        };
        Ok(View {
            name: name.clone(),
            profile,
        })
    }

    /// Whether the config has profile `name`.
    pub fn has_profile(&self, name: &str) -> bool {
        self.inner.profiles.read_unpoisoned().contains_key(name)
    }

    /// `update` of a resource of `server`, sent to the client sessions
    /// subscribed to it; when they have all gone away, the upstream is
    /// unsubscribed.
    pub async fn resource_updated(&self, server: &str, update: ResourceUpdatedNotificationParam) {
        let uri = update.uri.clone();
        let subscriptions = &self.inner.subscriptions;
        if subscriptions.deliver(server, update).await {
            subscriptions.release(server, &uri, self.pool()).await;
        }
    }

    /// A new client session's key for resource subscriptions; when it drops,
    /// the session's subscriptions end.
    pub fn client_key(&self) -> ClientKey {
        let id = self.inner.next_client.fetch_add(1, Ordering::Relaxed);
        ClientKey::new(id, self.downgrade())
    }

    /// Session `client` of `view` wants the updates of resource `uri` (sent
    /// to `target`): subscribed on the server of the view that has it (the
    /// upstream once, however many clients want it).
    pub async fn subscribe(
        &self,
        view: &View,
        uri: &str,
        client: &ClientKey,
        target: Target,
    ) -> Result<(), ErrorData> {
        let servers = self.servers_for_uri(view, uri).await;
        let mut last = None;
        for server in &servers {
            match self
                .inner
                .subscriptions
                .subscribe(self.pool(), server, uri, client.id, target.clone())
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
            .unsubscribe(uri, client.id, self.pool())
            .await;
    }

    /// Session `client` went away: its subscriptions end.
    pub(crate) async fn forget_client(&self, client: u64) {
        self.inner.subscriptions.forget(client, self.pool()).await;
    }

    /// Tells a 2026-07-28 client's `subscriptions/listen` stream (`sink`)
    /// of the list changes of its `view` until the guard drops.
    pub fn listen(&self, view: ViewName, sink: SubscriptionSink) -> Listening {
        let key = self.inner.listeners.next.fetch_add(1, Ordering::Relaxed);
        self.inner
            .listeners
            .sinks
            .lock_unpoisoned()
            .push((key, view, sink));
        Listening {
            listeners: self.inner.listeners.clone(),
            key,
        }
    }

    fn live_clients(&self) -> Vec<(ViewName, Peer<RoleServer>)> {
        let mut clients = self.inner.clients.lock_unpoisoned();
        clients.retain(|(_, peer)| !peer.is_transport_closed());
        clients.clone()
    }

    /// The pool of every upstream server (the config's enabled ones).
    pub fn pool(&self) -> &Pool {
        &self.inner.pool
    }

    /// The sessions and requests in flight per client, against the limits.
    pub fn caps(&self) -> &Arc<crate::limits::Caps> {
        &self.inner.caps
    }

    /// Which clients may use which tools.
    pub fn rights(&self) -> &crate::rights::Rights {
        &self.inner.rights
    }

    /// The rate limits and upstream bounds.
    pub fn rate_limits(&self) -> &crate::rate_limits::RateLimits {
        &self.inner.rate_limits
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

    /// The clients seen (the page's Home).
    pub fn connected_clients(&self) -> &crate::connected_clients::ConnectedClients {
        &self.inner.connected
    }

    /// Calls in flight and the last ended (the page's Activity).
    pub fn activity(&self) -> &crate::activity::Activity {
        &self.inner.activity
    }

    /// The upstreams' last log messages (the page's Logs).
    pub fn upstream_logs(&self) -> &crate::upstream_logs::UpstreamLogs {
        &self.inner.upstream_logs
    }

    /// The config's profile names, sorted (each served at `/mcp/NAME`).
    pub fn profile_names(&self) -> Vec<String> {
        let mut names: Vec<String> = self
            .inner
            .profiles
            .read_unpoisoned()
            .keys()
            .cloned()
            .collect();
        names.sort();
        names
    }

    /// The tracing of its calls (off, or exporting).
    pub fn tracing(&self) -> &crate::tracing_export::Tracing {
        &self.inner.tracing
    }

    /// Each upstream server and whether it is running now.
    pub fn upstream_states(&self) -> Vec<(String, bool)> {
        let running = self.pool().running_server_names();
        self.pool()
            .server_names()
            .into_iter()
            .map(|name| {
                let up = running.contains(&name);
                (name, up)
            })
            .collect()
    }

    /// Replaces the servers with `specs` (the pool's
    /// [`Pool::reload`]: new servers added, removed and changed ones
    /// stopped, changed ones starting again with their new entry on next
    /// use, the others untouched) and the profiles with `profiles`. The
    /// clients of each view that shows a server that changed, and of each
    /// profile that changed, are told their lists changed.
    pub async fn reload(&self, specs: Vec<ServerSpec>, profiles: Vec<Profile>) -> ConfigChanges {
        let servers = self.pool().reload(enabled(specs)).await;
        let before = self.inner.profiles.read_unpoisoned().clone();
        let after = by_name(profiles);
        let changes = ConfigChanges {
            servers,
            profiles: profile_changes(&before, &after),
        };
        if !changes.profiles.is_empty() {
            *self.inner.profiles.write_unpoisoned() = Arc::new(after);
        }
        if changes.is_empty() {
            return changes;
        }
        let servers = &changes.servers;
        tracing::info!(
            added = ?servers.added,
            removed = ?servers.removed,
            changed = ?servers.changed,
            profiles = ?changes.profiles,
            "config changed; servers and profiles updated"
        );
        let started: Vec<String> = servers
            .added
            .iter()
            .chain(&servers.changed)
            .cloned()
            .collect();
        relay::watch(self, self.pool(), &started);
        for server in &servers.removed {
            self.inner.subscriptions.drop_server(server);
        }
        for server in &servers.changed {
            // In the background: it starts the server.
            if let Ok(runtime) = tokio::runtime::Handle::try_current() {
                let (gateway, server) = (self.clone(), server.clone());
                runtime.spawn(async move {
                    let pool = gateway.pool();
                    gateway.inner.subscriptions.renew(&server, pool).await;
                });
            }
        }
        let touched: Vec<&String> = servers
            .added
            .iter()
            .chain(&servers.removed)
            .chain(&servers.changed)
            .collect();
        let affected: Vec<ViewName> = self
            .watched_views()
            .into_iter()
            .filter(|name| match name {
                ViewName::All => !touched.is_empty(),
                ViewName::Profile(profile) => {
                    changes.profiles.iter().any(|p| p == profile.as_ref())
                        || self.view(name).is_ok_and(|view| {
                            touched.iter().any(|s| view.profile.includes_server(s))
                        })
                }
            })
            .collect();
        self.forget_lists();
        for kind in ListKind::ALL {
            self.notify(&affected, kind).await;
        }
        changes
    }

    /// Forgets what the gateway knows of every view's lists (built again on
    /// next use) and of the profiles that are gone.
    fn forget_lists(&self) {
        let profiles = self.inner.profiles.read_unpoisoned().clone();
        let gone = |view: &ViewName| {
            view.profile_name()
                .is_some_and(|name| !profiles.contains_key(name))
        };
        self.inner
            .tools
            .lock_unpoisoned()
            .retain(|view, _| !gone(view));
        self.inner.prompts.lock_unpoisoned().clear();
    }

    /// The pins folder, when the gateway pins tool definitions.
    pub fn pins_dir(&self) -> Option<&std::path::Path> {
        self.inner.pins_dir.as_deref()
    }

    /// The pins changed on disk (an approval made by another process):
    /// each upstream whose visible tools changed tells its watchers, and
    /// so the clients, that its list changed. The servers whose list did.
    pub fn recheck_pins(&self) -> Vec<String> {
        self.pool().recheck_pins()
    }

    /// Remembers a connected client of `view`, to tell it when the view's
    /// lists change.
    pub fn register_client(&self, view: ViewName, peer: Peer<RoleServer>) {
        let mut clients = self.inner.clients.lock_unpoisoned();
        clients.retain(|(_, peer)| !peer.is_transport_closed());
        clients.push((view, peer));
    }

    /// Closes every upstream server (the gateway is stopping).
    pub async fn close_all(&self) {
        self.pool().close_all().await;
    }

    /// The tools `view` shows, under the names its clients see. Servers
    /// that cannot be listed are left out (and logged).
    pub async fn tools(&self, view: &View) -> Arc<ViewTools> {
        let pool = self.pool();
        let servers: Vec<String> = pool
            .server_names()
            .into_iter()
            .filter(|name| view.profile.includes_server(name))
            .collect();
        let results = join_all(
            servers
                .iter()
                .map(|name| async move { pool.list_server_tools(name).await }),
        )
        .await;
        let mut lists = Vec::with_capacity(results.len());
        for (name, result) in servers.iter().zip(results) {
            match result {
                Ok(list) => lists.push(list),
                Err(e) => {
                    tracing::warn!(server = name, error = %e, "leaving the server's tools out");
                    lists.push(Arc::new(Vec::new()));
                }
            }
        }
        let mut cache = self.inner.tools.lock_unpoisoned();
        let cached = cache.get(&view.name);
        if let Some(cached) = cached
            && cached.servers == servers
            && Arc::ptr_eq(&cached.profile, &view.profile)
            && cached.lists.len() == lists.len()
            && cached
                .lists
                .iter()
                .zip(&lists)
                .all(|(a, b)| Arc::ptr_eq(a, b))
        {
            return cached.tools.clone();
        }
        let announced = cached.map(|c| c.announced.clone());
        let tools = Arc::new(ViewTools::build(
            view,
            servers
                .iter()
                .zip(&lists)
                .map(|(server, list)| (server.as_str(), list.as_slice()))
                .collect(),
        ));
        let announced = announced.unwrap_or_else(|| tools.clone());
        cache.insert(
            view.name.clone(),
            ToolsCache {
                servers,
                profile: view.profile.clone(),
                lists,
                tools: tools.clone(),
                announced,
            },
        );
        tools
    }

    /// Where the tool `view`'s clients call `name` is: itself on the one
    /// upstream when the view is every tool of just one (no listing
    /// needed), else from the view's catalog.
    pub async fn resolve_tool(&self, view: &View, name: &str) -> Option<Route> {
        if view.profile.is_everything()
            && let [only] = self.pool().server_names().as_slice()
        {
            return Some(Route {
                server: only.clone(),
                name: name.to_owned(),
            });
        }
        self.tools(view).await.catalog.resolve(name).cloned()
    }

    /// The prompts of `view`'s servers under the names its clients see.
    pub async fn prompts(&self, view: &View) -> Arc<Catalog<Prompt>> {
        let lists = self
            .list_each(view, |pool, server| async move {
                pool.list_prompts(&server).await
            })
            .await;
        let items = lists
            .into_iter()
            .flat_map(|(server, prompts)| {
                prompts
                    .iter()
                    .map(|p| (server.clone(), p.name.clone(), p.clone()))
                    .collect::<Vec<_>>()
            })
            .collect();
        let catalog = Arc::new(Catalog::build(
            items,
            view.servers(&self.pool().server_names()).len() > 1,
            |p, name| p.name = name.to_owned(),
        ));
        self.inner
            .prompts
            .lock_unpoisoned()
            .insert(view.name.clone(), catalog.clone());
        catalog
    }

    /// Where the prompt `view`'s clients call `name` is.
    pub async fn resolve_prompt(&self, view: &View, name: &str) -> Option<Route> {
        if let [only] = view.servers(&self.pool().server_names()).as_slice() {
            return Some(Route {
                server: (*only).clone(),
                name: name.to_owned(),
            });
        }
        let known = self
            .inner
            .prompts
            .lock_unpoisoned()
            .get(&view.name)
            .and_then(|c| c.resolve(name).cloned());
        match known {
            Some(route) => Some(route),
            None => self.prompts(view).await.resolve(name).cloned(),
        }
    }

    /// The resources of `view`'s servers (URIs unchanged), noting which
    /// server has each.
    pub async fn resources(&self, view: &View) -> Vec<Resource> {
        let lists = self
            .list_each(view, |pool, server| async move {
                pool.list_resources(&server).await
            })
            .await;
        let mut all = Vec::new();
        let mut routes = HashMap::new();
        let listed: Vec<String> = lists.iter().map(|(server, _)| server.clone()).collect();
        for (server, resources) in lists {
            for resource in resources.iter() {
                routes
                    .entry(resource.uri.clone())
                    .or_insert_with(|| server.clone());
                all.push(resource.clone());
            }
        }
        // The routes of the servers listed are replaced; other views' stay.
        let mut known = self.inner.resources.lock_unpoisoned();
        known.retain(|_, server| !listed.contains(server));
        for (uri, server) in routes {
            known.entry(uri).or_insert(server);
        }
        all
    }

    /// The resource templates of `view`'s servers, noting which server has
    /// each.
    pub async fn resource_templates(&self, view: &View) -> Vec<ResourceTemplate> {
        let lists = self
            .list_each(view, |pool, server| async move {
                pool.list_resource_templates(&server).await
            })
            .await;
        let mut all = Vec::new();
        let mut routes = Vec::new();
        let listed: Vec<String> = lists.iter().map(|(server, _)| server.clone()).collect();
        for (server, templates) in lists {
            for template in templates.iter() {
                routes.push((template.uri_template.clone(), server.clone()));
                all.push(template.clone());
            }
        }
        let mut known = self.inner.templates.lock_unpoisoned();
        known.retain(|(_, server)| !listed.contains(server));
        known.extend(routes);
        all
    }

    /// The servers of `view` that may have resource `uri`, the likeliest
    /// first: the one that listed it, else those with a template it fits,
    /// else (when nothing is known) every server of the view in config
    /// order. Never a server the view does not show.
    pub async fn servers_for_uri(&self, view: &View, uri: &str) -> Vec<String> {
        let names = self.pool().server_names();
        let servers = view.servers(&names);
        if let [only] = servers.as_slice() {
            return vec![(*only).clone()];
        }
        let shown = |server: &String| view.profile.includes_server(server);
        for attempt in 0..2 {
            let listed = self.inner.resources.lock_unpoisoned().get(uri).cloned();
            if let Some(server) = listed.filter(shown) {
                return vec![server];
            }
            let fitting: Vec<String> = self
                .inner
                .templates
                .lock_unpoisoned()
                .iter()
                .filter(|(template, server)| shown(server) && template_fits(template, uri))
                .map(|(_, server)| server.clone())
                .collect();
            if !fitting.is_empty() {
                return fitting;
            }
            if attempt == 0 {
                self.resources(view).await;
                self.resource_templates(view).await;
            }
        }
        servers.into_iter().cloned().collect()
    }

    /// One listing (`list`: the pool's, all pages, bounded and cached
    /// until the server says it changed) of each server of `view`, in
    /// config order; a server that does not offer it gives nothing, one
    /// that fails is logged.
    async fn list_each<T, Listed>(
        &self,
        view: &View,
        list: impl Fn(Pool, String) -> Listed,
    ) -> Vec<(String, Arc<Vec<T>>)>
    where
        Listed: Future<Output = Result<Arc<Vec<T>>, PoolError>>,
    {
        let servers = self
            .pool()
            .server_names()
            .into_iter()
            .filter(|name| view.profile.includes_server(name));
        join_all(servers.map(|name| {
            let listing = list(self.pool().clone(), name.clone());
            async move {
                let items = match listing.await {
                    Ok(items) => items,
                    Err(e) if is_not_offered(&e) => Arc::new(Vec::new()),
                    Err(e) => {
                        tracing::warn!(server = name, error = %e, "leaving the server's listing out");
                        Arc::new(Vec::new())
                    }
                };
                (name, items)
            }
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

/// The open `subscriptions/listen` streams, with their views.
#[derive(Default)]
struct Listeners {
    sinks: Mutex<Vec<(u64, ViewName, SubscriptionSink)>>,
    next: AtomicU64,
}

impl Listeners {
    /// Sends each of `notifications` the stream accepted to every stream
    /// of a view `to` takes.
    async fn send(&self, to: impl Fn(&ViewName) -> bool, notifications: &[ServerNotification]) {
        let sinks: Vec<SubscriptionSink> = self
            .sinks
            .lock_unpoisoned()
            .iter()
            .filter(|(_, view, _)| to(view))
            .map(|(_, _, sink)| sink.clone())
            .collect();
        for sink in &sinks {
            for notification in notifications {
                // Refused when the client did not ask for that kind.
                let _ = sink.send(notification.clone()).await;
            }
        }
    }

    /// The views of the open streams.
    fn views(&self) -> Vec<ViewName> {
        self.sinks
            .lock_unpoisoned()
            .iter()
            .map(|(_, view, _)| view.clone())
            .collect()
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
            .retain(|(key, _, _)| *key != self.key);
    }
}

/// What a [`Gateway::reload`] changed.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct ConfigChanges {
    /// The servers added, removed and changed ([`Pool::reload`]).
    pub servers: pool::Changes,
    /// Profiles added, removed or changed, sorted.
    pub profiles: Vec<String>,
}

impl ConfigChanges {
    /// True when nothing changed.
    pub fn is_empty(&self) -> bool {
        self.servers.is_empty() && self.profiles.is_empty()
    }
}

/// The servers of `specs` the gateway serves: the enabled ones.
fn enabled(specs: Vec<ServerSpec>) -> impl Iterator<Item = ServerSpec> {
    specs.into_iter().filter(|spec| !spec.disabled)
}

/// The profiles by name.
fn by_name(profiles: Vec<Profile>) -> HashMap<String, Arc<Profile>> {
    profiles
        .into_iter()
        .map(|p| (p.name.clone(), Arc::new(p)))
        .collect()
}

/// The names of the profiles added, removed or changed from `before` to
/// `after`, sorted.
fn profile_changes(
    before: &HashMap<String, Arc<Profile>>,
    after: &HashMap<String, Arc<Profile>>,
) -> Vec<String> {
    let mut names: Vec<String> = before
        .keys()
        .chain(after.keys())
        .filter(|name| match (before.get(*name), after.get(*name)) {
            (Some(a), Some(b)) => a != b,
            _ => true,
        })
        .cloned()
        .collect();
    names.sort();
    names.dedup();
    names
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

/// Whether a server does not offer what was asked (it does not declare
/// it, or answers "method not found"), which in an aggregate listing means
/// "nothing", not a failure.
fn is_not_offered(error: &PoolError) -> bool {
    matches!(error, PoolError::NotOffered { .. })
        || matches!(error, PoolError::Server { code, .. } if *code == ErrorCode::METHOD_NOT_FOUND.0)
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
pub(crate) fn to_rmcp_tool(tool: &McpTool) -> Tool {
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
/// as it was, the rest as an internal error naming the server. A server
/// the pool does not have was in the client's listing (every name a client
/// can send comes from one) and has left the config since.
pub fn to_mcp_error(error: PoolError) -> ErrorData {
    match error {
        PoolError::Server { code, message, .. } => ErrorData::new(ErrorCode(code), message, None),
        PoolError::UnknownServer { server, .. } => ErrorData::internal_error(
            format!("server {server} was removed from the gateway's config; list again"),
            None,
        ),
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

    /// Issue 24: each upstream had a pool of its own, so the gateway's
    /// `max_parallel_starts` bounded nothing.
    #[tokio::test]
    async fn the_upstreams_share_one_parallel_start_limit() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("starts");
        // Each start notes `+` as it begins and `-` 200 ms later, then ends
        // (a server that exits before the handshake: the start fails).
        let script = format!(
            "echo + >> '{log}' && sleep 0.2 && echo - >> '{log}'",
            log = log.display()
        );
        let specs = ["a", "b", "c"]
            .map(|name| ServerSpec::stdio(name, "sh", ["-c".to_owned(), script.clone()]));
        let options = GatewayOptions {
            pool: PoolOptions {
                max_parallel_starts: 1,
                ..PoolOptions::default()
            },
            ..GatewayOptions::default()
        };
        let gateway = Gateway::new(specs.to_vec(), options);
        let view = gateway.view(&ViewName::All).unwrap();
        // Lists (so starts) every upstream at once.
        gateway.tools(&view).await;
        let marks: String = std::fs::read_to_string(&log)
            .unwrap()
            .split_whitespace()
            .collect();
        assert_eq!(marks, "+-".repeat(3), "starts overlapped");
        gateway.close_all().await;
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
