//! Telling the gateway's clients that their view's lists changed: an
//! upstream's list change ([`Gateway::list_changed`], from `upstream_events`) or a
//! reload reaches the clients of each view that shows the server, over their
//! sessions ([`Gateway::register_client`]) and their 2026-07-28
//! `subscriptions/listen` streams ([`Gateway::listen`]).

use std::sync::atomic::Ordering;
use toolbridge::lock::LockUnpoisoned as _;

use futures::future::join_all;
use rmcp::{
    RoleServer,
    service::{Peer, SubscriptionSink},
};

use super::{Gateway, listeners::Listening};
use crate::{
    profile::{View, ViewName},
    upstream_events::ListKind,
};

impl Gateway {
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
    pub(super) async fn notify(&self, views: &[ViewName], kind: ListKind) {
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
    pub(super) fn watched_views(&self) -> Vec<ViewName> {
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

    /// Remembers a connected client of `view`, to tell it when the view's
    /// lists change.
    pub fn register_client(&self, view: ViewName, peer: Peer<RoleServer>) {
        let mut clients = self.inner.clients.lock_unpoisoned();
        clients.retain(|(_, peer)| !peer.is_transport_closed());
        clients.push((view, peer));
    }
}
