//! A server's resources: listing them and their templates, reading one
//! (text or blob), and subscribing to a resource's updates.

// `resources/subscribe` and `resources/unsubscribe` are legacy-only in rmcp
// 3.11 (2026-07-28 servers use `subscriptions/listen`: see `listen`), but
// the 2025-11-25 servers people run use them.
#![allow(deprecated)]

use std::sync::Arc;

use rmcp::model::{
    ClientRequest, ErrorCode, ReadResourceRequest, ReadResourceRequestParams, ReadResourceResult,
    Resource, ResourceTemplate, ResourceUpdatedNotificationParam, ServerResult, SubscribeRequest,
    SubscribeRequestParams, UnsubscribeRequest, UnsubscribeRequestParams,
};
use tokio::sync::broadcast::Receiver;

use super::{
    CallOptions, Listing, Pool, PoolError,
    budget::Budget,
    capability::offered,
    connection::Connection,
    error::{Feature, unexpected},
    slot::Slot,
};

impl Pool {
    /// The resources of `server` (all pages), from its cache when it is
    /// fresh. The cache is dropped when the server sends
    /// `notifications/resources/list_changed`, and on a reconnect.
    /// [`PoolError::NotOffered`] if the server offers no resources.
    pub async fn list_resources(&self, server: &str) -> Result<Arc<Vec<Resource>>, PoolError> {
        self.list_items(server).await
    }

    /// The resource templates of `server` (all pages), cached as
    /// [`Pool::list_resources`] caches resources.
    pub async fn list_resource_templates(
        &self,
        server: &str,
    ) -> Result<Arc<Vec<ResourceTemplate>>, PoolError> {
        self.list_items(server).await
    }

    /// The resources of each of `servers`, listed in parallel. A server
    /// that fails is in [`Listing::failures`]; one without resources has
    /// none.
    pub async fn list_resources_of(&self, servers: &[String]) -> Listing<Resource> {
        self.list_items_of(servers).await
    }

    /// The resource templates of each of `servers`, as
    /// [`Pool::list_resources_of`].
    pub async fn list_resource_templates_of(
        &self,
        servers: &[String],
    ) -> Listing<ResourceTemplate> {
        self.list_items_of(servers).await
    }

    /// Reads the resource at `uri` from `server`: its contents, text or
    /// blob (base64), as the server sent them. Timeouts and cancellation as
    /// for [`Pool::request`]. A URI the server does not know is
    /// [`PoolError::UnknownResource`].
    pub async fn read_resource(
        &self,
        server: &str,
        uri: &str,
        options: &CallOptions,
    ) -> Result<ReadResourceResult, PoolError> {
        let request = ClientRequest::ReadResourceRequest(ReadResourceRequest::new(
            ReadResourceRequestParams::new(uri),
        ));
        match self
            .request_offered(server, Feature::Resources, request, options)
            .await
        {
            Ok(ServerResult::ReadResourceResult(result)) => Ok(result),
            Ok(other) => Err(unexpected(server, "resources/read", &other)),
            // `-32002` is the spec's "resource not found"; the TypeScript
            // SDK says `-32602`, and the URI is the request's only parameter.
            Err(PoolError::Server { code, message, .. })
                if code == ErrorCode::RESOURCE_NOT_FOUND.0
                    || code == ErrorCode::INVALID_PARAMS.0 =>
            {
                Err(PoolError::UnknownResource {
                    server: server.to_owned(),
                    uri: uri.to_owned(),
                    message,
                })
            }
            Err(e) => Err(e),
        }
    }

    /// Asks `server` to report updates of the resource at `uri`; they
    /// arrive through [`Pool::watch_resource_updates`] (watch first, to
    /// miss none). The subscription is renewed when the server restarts.
    /// [`PoolError::NotOffered`] if the server does not offer
    /// subscriptions.
    ///
    /// A 2026-07-28 server is not sent `resources/subscribe`: the URI joins
    /// the connection's `subscriptions/listen` stream (see `listen`), and
    /// this returns once the server acknowledged it there (within the
    /// server's `timeout`).
    ///
    /// A server whose 2026-07-28 connection offers no subscriptions but
    /// which also speaks 2025-11-25 is subscribed on its session
    /// connection (`session_connection`), which offers them there.
    pub async fn subscribe_resource(&self, server: &str, uri: &str) -> Result<(), PoolError> {
        let slot = &self.slot(server)?;
        let (conn, options) = self.subscribing(slot).await?;
        offered(slot, &conn, Feature::ResourceSubscriptions)?;
        if let Some(listen) = &conn.listen {
            let added = slot.catalog.subscribed(uri, true);
            let heard = listen
                .subscribed(server, uri, slot.spec.call_timeout())
                .await;
            if heard.is_err() && added {
                // Not asked for again, on this connection or the next (a
                // subscription made before this one stays).
                slot.catalog.subscribed(uri, false);
            }
            return heard;
        }
        let request = ClientRequest::SubscribeRequest(SubscribeRequest::new(
            SubscribeRequestParams::new(uri),
        ));
        self.request_offered(server, Feature::ResourceSubscriptions, request, &options)
            .await?;
        slot.catalog.subscribed(uri, true);
        Ok(())
    }

    /// The connection `slot`'s subscriptions go on, and the options that
    /// send a request there: the current one, or its session connection
    /// when only that one can hold them.
    async fn subscribing(
        &self,
        slot: &Arc<Slot>,
    ) -> Result<(Arc<Connection>, CallOptions), PoolError> {
        let conn = self.connection(slot).await?;
        if conn.sessions.is_none() || offered(slot, &conn, Feature::ResourceSubscriptions).is_ok() {
            return Ok((conn, CallOptions::default()));
        }
        let budget = Budget::new(&self.inner.options, &slot.spec, None);
        let sessions = self.session_connection(slot, &conn, &budget).await?;
        let options = CallOptions {
            session_client: true,
            ..CallOptions::default()
        };
        Ok((sessions, options))
    }

    /// Asks `server` to stop reporting updates of the resource at `uri`
    /// (for a 2026-07-28 server: its listen stream stops naming it).
    pub async fn unsubscribe_resource(&self, server: &str, uri: &str) -> Result<(), PoolError> {
        let slot = &self.slot(server)?;
        // Not renewed on a restart, even if the request fails.
        slot.catalog.subscribed(uri, false);
        let (conn, options) = self.subscribing(slot).await?;
        if conn.listen.is_some() {
            return Ok(());
        }
        let request = ClientRequest::UnsubscribeRequest(UnsubscribeRequest::new(
            UnsubscribeRequestParams::new(uri),
        ));
        self.request_offered(server, Feature::ResourceSubscriptions, request, &options)
            .await?;
        Ok(())
    }

    /// The `notifications/resources/updated` that `server` sends from now
    /// on (nothing is queued while nobody watches). Works before the server
    /// is started, and across its restarts. A watcher that falls more than
    /// 64 updates behind misses the oldest
    /// ([`RecvError::Lagged`](tokio::sync::broadcast::error::RecvError::Lagged)).
    pub fn watch_resource_updates(
        &self,
        server: &str,
    ) -> Result<Receiver<ResourceUpdatedNotificationParam>, PoolError> {
        Ok(self.slot(server)?.catalog.updates.subscribe())
    }

    /// An event each time `server` sends
    /// `notifications/resources/list_changed` (resources or templates), as
    /// [`Pool::watch_prompt_list_changes`] for prompts.
    pub fn watch_resource_list_changes(&self, server: &str) -> Result<Receiver<()>, PoolError> {
        Ok(self.slot(server)?.catalog.resource_changes.subscribe())
    }
}
