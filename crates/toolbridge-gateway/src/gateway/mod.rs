//! [`Gateway`]: the state every client session shares: the pool of
//! upstreams, the profiles and each view's name tables, the resource routes,
//! the connected clients (by view) and their resource subscriptions, the
//! metrics. Its jobs are a module each:
//! - `listings`: what a view lists (tools, prompts, resources, templates)
//!   over its upstreams, and where each name a client sends goes back to,
//!   with `tools_cache`, a view's tools as last built;
//! - `notify`: clients told that their view's lists changed, and
//!   `listeners`, the 2026-07-28 clients' `subscriptions/listen` streams;
//! - `resource_subscriptions`: client sessions' resource subscriptions;
//! - `reload`: a new config's servers and profiles, and `config_changes`,
//!   what a reload changed;
//! - `build`: a new gateway: its pool (with the gateway's own client
//!   features and audit of pins), its state, and the relay of its
//!   upstreams' notifications started;
//! - `answers`: what a client is answered with (tools as rmcp's model,
//!   JSON-RPC errors, pages).
//!
//! The modules use this one (the state) and the leaves (`tools_cache`,
//! `listeners`, `config_changes`, `answers`), which use none of them: no
//! module of the gateway imports one that imports it back.

pub(crate) mod answers;
mod build;
mod config_changes;
mod listeners;
mod listings;
mod notify;
mod reload;
pub(crate) mod resource_subscriptions;
mod tools_cache;

pub use self::answers::{page, to_mcp_error};
pub use self::config_changes::ConfigChanges;
pub use self::listeners::Listening;

use std::{
    collections::HashMap,
    sync::{Arc, Mutex, RwLock, Weak, atomic::AtomicU64},
};
use toolbridge::lock::RwLockUnpoisoned as _;

use rmcp::{
    RoleServer,
    model::{ErrorData, Prompt},
    service::Peer,
};
use toolbridge::{
    config::Profile,
    pool::{Pool, PoolOptions},
};

use self::{listeners::Listeners, tools_cache::ToolsCache};
use crate::{
    held_calls::HeldCalls,
    metrics::Metrics,
    names::Routed,
    profile::{View, ViewName},
    subscriptions::Subscriptions,
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
    /// Each view's prompts under their exposed names, from its latest prompt listing.
    prompts: Mutex<HashMap<ViewName, Arc<Routed<Prompt>>>>,
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
    /// The clients' tasks (`crate::gateway_tasks`).
    tasks: Arc<crate::task_store::Tasks>,
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

impl Gateway {
    /// A handle that does not keep the gateway alive, for its tasks.
    pub(crate) fn downgrade(&self) -> WeakGateway {
        WeakGateway(Arc::downgrade(&self.inner))
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

    /// The clients' tasks.
    pub fn tasks(&self) -> &Arc<crate::task_store::Tasks> {
        &self.inner.tasks
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

    /// Closes every upstream server (the gateway is stopping).
    pub async fn close_all(&self) {
        self.pool().close_all().await;
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

#[cfg(test)]
mod tests {
    use super::*;
    use toolbridge::config::ServerSpec;

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
}
