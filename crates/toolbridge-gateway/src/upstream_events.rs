//! What upstream servers send on their own, passed on to the gateway's
//! clients: their list changes (tools, prompts, resources: the clients of
//! each view that shows the server are told, see
//! [`Gateway::list_changed`](crate::Gateway::list_changed)) and their resource updates (to
//! the client sessions subscribed to that resource, see
//! [`Subscriptions`](crate::subscriptions::Subscriptions)).
//!
//! One task per server and kind of event, reading the pool's feed of that
//! server; it ends when the server's entry is gone from the pool (it left
//! the config, or its entry changed and a new one took its place: a reload
//! starts a task for the new one) or the gateway is.

use rmcp::{
    RoleServer,
    model::{ResourceUpdatedNotificationParam, ServerNotification},
    service::Peer,
};
use tokio::sync::broadcast::{Receiver, error::RecvError};
use toolbridge::pool::{Pool, PoolError};

use crate::gateway::{Gateway, WeakGateway};

/// A list an upstream server may say changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ListKind {
    /// `notifications/tools/list_changed`
    Tools,
    /// `notifications/prompts/list_changed`
    Prompts,
    /// `notifications/resources/list_changed` (resources and templates)
    Resources,
}

impl ListKind {
    /// Every kind.
    pub const ALL: [ListKind; 3] = [ListKind::Tools, ListKind::Prompts, ListKind::Resources];

    /// The changes of this list of `server` in `pool`, from now on.
    fn watch(self, pool: &Pool, server: &str) -> Result<Receiver<()>, PoolError> {
        match self {
            ListKind::Tools => pool.watch_tool_list_changes(server),
            ListKind::Prompts => pool.watch_prompt_list_changes(server),
            ListKind::Resources => pool.watch_resource_list_changes(server),
        }
    }

    /// The notification that says this list changed.
    pub fn notification(self) -> ServerNotification {
        match self {
            ListKind::Tools => ServerNotification::ToolListChangedNotification(Default::default()),
            ListKind::Prompts => {
                ServerNotification::PromptListChangedNotification(Default::default())
            }
            ListKind::Resources => {
                ServerNotification::ResourceListChangedNotification(Default::default())
            }
        }
    }

    /// Tells the client of `peer` that this list changed.
    pub async fn notify(self, peer: &Peer<RoleServer>) {
        let sent = match self {
            ListKind::Tools => peer.notify_tool_list_changed().await,
            ListKind::Prompts => peer.notify_prompt_list_changed().await,
            ListKind::Resources => peer.notify_resource_list_changed().await,
        };
        if let Err(e) = sent {
            tracing::debug!(error = %e, list = ?self, "cannot tell a client its list changed");
        }
    }
}

/// Starts relaying what each server of `names` in `pool` sends on its own
/// to `gateway`'s clients, for as long as its entry in the pool lives.
pub fn watch(gateway: &Gateway, pool: &Pool, names: &[String]) {
    let Ok(runtime) = tokio::runtime::Handle::try_current() else {
        return;
    };
    for name in names {
        for kind in ListKind::ALL {
            if let Ok(changes) = kind.watch(pool, name) {
                runtime.spawn(relay_changes(
                    gateway.downgrade(),
                    name.clone(),
                    kind,
                    changes,
                ));
            }
        }
        if let Ok(updates) = pool.watch_resource_updates(name) {
            runtime.spawn(relay_updates(gateway.downgrade(), name.clone(), updates));
        }
    }
}

async fn relay_changes(
    gateway: WeakGateway,
    server: String,
    kind: ListKind,
    mut changes: Receiver<()>,
) {
    loop {
        // Lagged: several changes, one notification says them all.
        if let Err(RecvError::Closed) = changes.recv().await {
            return;
        }
        let Some(gateway) = gateway.upgrade() else {
            return;
        };
        gateway.list_changed(kind, &server).await;
    }
}

async fn relay_updates(
    gateway: WeakGateway,
    server: String,
    mut updates: Receiver<ResourceUpdatedNotificationParam>,
) {
    loop {
        let update = match updates.recv().await {
            Ok(update) => update,
            Err(RecvError::Lagged(missed)) => {
                tracing::warn!(
                    server,
                    missed,
                    "clients missed resource updates: too many at once"
                );
                continue;
            }
            Err(RecvError::Closed) => return,
        };
        let Some(gateway) = gateway.upgrade() else {
            return;
        };
        gateway.resource_updated(&server, update).await;
    }
}
