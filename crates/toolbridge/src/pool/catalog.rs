//! [`Catalog`]: what one server offers besides tools, as the pool keeps it:
//! its resource, resource-template and prompt lists (cached until the
//! server says they changed, or the connection is replaced), the resources
//! it was asked to report updates of, and the feed those updates go to.

// `resources/subscribe` is legacy-only in rmcp 3.11 (2026-07-28 servers use
// `subscriptions/listen`: see `listen`), but the 2025-11-25 servers people
// run use it.
#![allow(deprecated)]

use std::collections::BTreeSet;

use rmcp::{
    RoleClient,
    model::{
        ClientRequest, Prompt, Resource, ResourceTemplate, ResourceUpdatedNotificationParam, Skill,
        SubscribeRequest, SubscribeRequestParams,
    },
    service::Peer,
};

use super::cache::ListCache;

/// How many resource updates a slow watcher may fall behind by before it
/// misses some.
const UPDATES_BACKLOG: usize = 64;

/// The feed of one server's `notifications/resources/updated`.
pub(super) type UpdateFeed = tokio::sync::broadcast::Sender<ResourceUpdatedNotificationParam>;

/// One server's resources, templates and prompts, and its resource updates.
#[derive(Debug)]
pub(super) struct Catalog {
    /// `resources/list`, all pages.
    pub(super) resources: ListCache<Resource>,
    /// `resources/templates/list`, all pages.
    pub(super) templates: ListCache<ResourceTemplate>,
    /// `prompts/list`, all pages.
    pub(super) prompts: ListCache<Prompt>,
    /// `skills/list`, all pages (skills are resources: dropped with them).
    pub(super) skills: ListCache<Skill>,
    /// The URIs subscribed to, subscribed again on a new connection; a
    /// 2026-07-28 connection's listen stream watches it (see `listen`).
    subscribed: tokio::sync::watch::Sender<BTreeSet<String>>,
    /// Where `notifications/resources/updated` go; kept across reconnects,
    /// so a watcher keeps watching while the server restarts.
    pub(super) updates: UpdateFeed,
    /// Told of each `notifications/prompts/list_changed`, for
    /// [`Pool::watch_prompt_list_changes`](super::Pool::watch_prompt_list_changes).
    pub(super) prompt_changes: ChangeFeed,
    /// Told of each `notifications/resources/list_changed`, for
    /// [`Pool::watch_resource_list_changes`](super::Pool::watch_resource_list_changes).
    pub(super) resource_changes: ChangeFeed,
}

/// The feed of one kind of list-changed event (nothing is queued while
/// nobody watches; several unread events may arrive as one).
pub(super) type ChangeFeed = tokio::sync::broadcast::Sender<()>;

/// How many list changes a slow watcher may fall behind by.
const CHANGES_BACKLOG: usize = 4;

fn tell(feed: &ChangeFeed) {
    if feed.receiver_count() > 0 {
        let _ = feed.send(());
    }
}

impl Default for Catalog {
    fn default() -> Self {
        Catalog {
            resources: ListCache::default(),
            templates: ListCache::default(),
            prompts: ListCache::default(),
            skills: ListCache::default(),
            subscribed: tokio::sync::watch::Sender::new(BTreeSet::new()),
            updates: tokio::sync::broadcast::channel(UPDATES_BACKLOG).0,
            prompt_changes: tokio::sync::broadcast::channel(CHANGES_BACKLOG).0,
            resource_changes: tokio::sync::broadcast::channel(CHANGES_BACKLOG).0,
        }
    }
}

impl Catalog {
    /// A new connection: every list may differ now.
    pub(super) fn invalidate(&self) {
        self.resources.invalidate();
        self.templates.invalidate();
        self.prompts.invalidate();
        self.skills.invalidate();
    }

    /// `notifications/resources/list_changed`: templates and skills are
    /// resources too.
    pub(super) fn resources_changed(&self) {
        self.resources.invalidate();
        self.templates.invalidate();
        self.skills.invalidate();
        tell(&self.resource_changes);
    }

    /// `notifications/prompts/list_changed`.
    pub(super) fn prompts_changed(&self) {
        self.prompts.invalidate();
        tell(&self.prompt_changes);
    }

    /// `notifications/resources/updated`, passed on to the watchers.
    pub(super) fn updated(&self, update: ResourceUpdatedNotificationParam) {
        if self.updates.receiver_count() > 0 {
            let _ = self.updates.send(update);
        }
    }

    /// Notes a subscription (`on`) or its end, to renew on the next
    /// connection (and to name on a 2026-07-28 connection's listen stream);
    /// true when that changed the set.
    pub(super) fn subscribed(&self, uri: &str, on: bool) -> bool {
        self.subscribed.send_if_modified(|subscribed| match on {
            true => subscribed.insert(uri.to_owned()),
            false => subscribed.remove(uri),
        })
    }

    /// The subscribed URIs, now and as they change.
    pub(super) fn watch_subscribed(&self) -> tokio::sync::watch::Receiver<BTreeSet<String>> {
        self.subscribed.subscribe()
    }

    /// Subscribes `peer` (a new connection to the server) to every URI the
    /// old one was subscribed to, in the background: a server forgets its
    /// subscriptions when it restarts.
    pub(super) fn resubscribe(&self, server: &str, peer: &Peer<RoleClient>) {
        let uris: Vec<String> = self.subscribed.borrow().iter().cloned().collect();
        if uris.is_empty() {
            return;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let (peer, server) = (peer.clone(), server.to_owned());
        runtime.spawn(async move {
            for uri in uris {
                let request = ClientRequest::SubscribeRequest(SubscribeRequest::new(
                    SubscribeRequestParams::new(uri.clone()),
                ));
                if let Err(e) = peer.send_request(request).await {
                    tracing::warn!(server = %server, uri = %uri, error = %e, "cannot renew the resource subscription after a restart");
                }
            }
        });
    }
}
