//! [`ListEvents`]: what a server's list-changed and resource-updated
//! notifications change, whichever stream brings them: the connection's
//! own (2025-11-25 and older, through the client handler in `connection`)
//! or a `subscriptions/listen` stream (2026-07-28, see `listen`). One path,
//! so both protocols drop the same caches and tell the same watchers.

use std::sync::Arc;

use rmcp::model::{ResourceUpdatedNotificationParam, ServerNotification};

use super::{cache::ToolCache, catalog::Catalog};

/// The lists and feeds of one server that its notifications update.
#[derive(Debug, Clone)]
pub(super) struct ListEvents {
    /// The server's config name, for logs.
    pub(super) server: String,
    /// The tool list, dropped on `tools/list_changed`.
    pub(super) cache: Arc<ToolCache>,
    /// The resource and prompt lists, the subscribed URIs and the resource
    /// updates' feed.
    pub(super) catalog: Arc<Catalog>,
}

impl ListEvents {
    /// `notifications/tools/list_changed`.
    pub(super) fn tools_changed(&self) {
        tracing::debug!(server = %self.server, "tool list changed; dropping the cache");
        self.cache.list_changed();
    }

    /// `notifications/resources/list_changed`.
    pub(super) fn resources_changed(&self) {
        tracing::debug!(server = %self.server, "resource list changed; dropping the cache");
        self.catalog.resources_changed();
    }

    /// `notifications/prompts/list_changed`.
    pub(super) fn prompts_changed(&self) {
        tracing::debug!(server = %self.server, "prompt list changed; dropping the cache");
        self.catalog.prompts_changed();
    }

    /// `notifications/resources/updated`, passed on to the watchers.
    pub(super) fn resource_updated(&self, update: ResourceUpdatedNotificationParam) {
        self.catalog.updated(update);
    }

    /// One notification of a `subscriptions/listen` stream, to the method
    /// above that handles its kind. A stream carries no other kind (rmcp
    /// ends one that does), so any other is ignored.
    pub(super) fn deliver(&self, notification: ServerNotification) {
        match notification {
            ServerNotification::ToolListChangedNotification(_) => self.tools_changed(),
            ServerNotification::ResourceListChangedNotification(_) => self.resources_changed(),
            ServerNotification::PromptListChangedNotification(_) => self.prompts_changed(),
            ServerNotification::ResourceUpdatedNotification(update) => {
                self.resource_updated(update.params);
            }
            _ => {}
        }
    }
}
