//! The client sessions' resource subscriptions through the gateway: each
//! subscribed on the upstream of the view that has the resource (once,
//! however many sessions want it; see `crate::subscriptions`), and the
//! upstream's updates passed to the sessions that want them.

use std::sync::atomic::Ordering;

use rmcp::model::{ErrorCode, ErrorData, ResourceUpdatedNotificationParam};
use toolbridge::pool::PoolError;

use super::{Gateway, WeakGateway, answers::to_mcp_error};
use crate::{profile::View, subscriptions::Target};

impl Gateway {
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

/// A client session as a subscriber: its id, and when it goes away (the
/// last clone of its session drops), its subscriptions end.
pub struct ClientKey {
    /// The session's id in [`Subscriptions`](crate::subscriptions::Subscriptions).
    pub id: u64,
    gateway: WeakGateway,
}

impl ClientKey {
    /// The key `id` of a session of `gateway`.
    pub(crate) fn new(id: u64, gateway: WeakGateway) -> ClientKey {
        ClientKey { id, gateway }
    }
}

impl Drop for ClientKey {
    fn drop(&mut self) {
        let Some(gateway) = self.gateway.upgrade() else {
            return;
        };
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let id = self.id;
        runtime.spawn(async move { gateway.forget_client(id).await });
    }
}
