//! [`Pool::request`]: the one way any MCP request goes to one server, with
//! the pool's start, limits ([`Budget`]), cancellation and error rules.
//! [`Pool::call_tool`], the typed operations (resources, prompts,
//! completion) and the gateway's forwarding are built on it; a `tools/call`
//! takes the tool's own steps on the way (`service`'s `tool_call`: disabled
//! tools, pins, task support, unknown-tool detection), whoever sends it.

use std::sync::{Arc, atomic::Ordering};

use rmcp::model::{ClientRequest, ServerResult};
use tracing::Instrument as _;

use super::{
    CallOptions, Pool, PoolError, budget::Budget, capability::offered, connection::Connection,
    error::Feature, in_flight::Call, input_required, service, slot::Slot,
};

impl Pool {
    /// Sends `request` to `server`, starting it if needed, and returns the
    /// server's result as it came.
    ///
    /// Timeouts as for [`Pool::call_tool`]: [`CallOptions::timeout`] bounds
    /// the whole request, start included; without it the server's `timeout`
    /// bounds each silence, progress restarting it up to
    /// [`PoolOptions::max_total_call_time`](super::PoolOptions::max_total_call_time).
    /// On timeout, or when the caller drops the future, the server is sent
    /// `notifications/cancelled`, and the error is
    /// [`PoolError::RequestTimeout`], naming the method. A JSON-RPC error is
    /// [`PoolError::Server`].
    ///
    /// A `tools/call` is a tool call as [`Pool::call_tool`] makes it: a tool
    /// that needs a task is called as one, a tool the server does not know
    /// is [`PoolError::UnknownTool`], a timeout [`PoolError::Timeout`]
    /// naming the tool.
    ///
    /// An input-required answer (2026-07-28) to `tools/call`, `prompts/get`
    /// or `resources/read` is answered through the client handlers
    /// ([`CallOptions::client_features`], else the pool's) and the request
    /// sent again, within the same limits; the final result is returned
    /// (unless [`CallOptions::relay_input_required`]: then it is returned).
    pub async fn request(
        &self,
        server: &str,
        request: ClientRequest,
        options: &CallOptions,
    ) -> Result<ServerResult, PoolError> {
        self.send(server, request, options, None).await
    }

    /// [`Pool::request`] to a server that declares `feature` (checked once
    /// it is started, within the same limits): [`PoolError::NotOffered`] if
    /// it does not.
    pub(super) async fn request_offered(
        &self,
        server: &str,
        feature: Feature,
        request: ClientRequest,
        options: &CallOptions,
    ) -> Result<ServerResult, PoolError> {
        self.send(server, request, options, Some(feature)).await
    }

    async fn send(
        &self,
        server: &str,
        request: ClientRequest,
        options: &CallOptions,
        feature: Option<Feature>,
    ) -> Result<ServerResult, PoolError> {
        let slot = &self.slot(server)?;
        let features = options.client_features.as_ref();
        // In flight from now on, its start included: what the server sends
        // meanwhile may be this request's (see `in_flight`).
        let call = slot.in_flight.enter(features);
        match request {
            ClientRequest::CallToolRequest(request) => {
                // Fields are only computed when the span is enabled.
                let span = tracing::info_span!(
                    "tool_call",
                    server,
                    tool = request.params.name.as_ref(),
                    call_id = %CallId {
                        given: options.call_id.as_deref(),
                        number: self.inner.next_call.fetch_add(1, Ordering::Relaxed),
                    },
                );
                self.tool_call(slot, request.params, options, &call)
                    .instrument(span)
                    .await
            }
            // Boxed: the request's future (rmcp's send, the wait, the
            // input-required state) is ~5 KiB, and would otherwise sit in
            // every tool call's future too.
            other => Box::pin(self.send_other(slot, other, options, feature, &call)).await,
        }
    }

    /// A request other than `tools/call`, to `slot`'s server.
    async fn send_other(
        &self,
        slot: &Arc<Slot>,
        request: ClientRequest,
        options: &CallOptions,
        feature: Option<Feature>,
        call: &Call<'_>,
    ) -> Result<ServerResult, PoolError> {
        let budget = Budget::new(&self.inner.options, &slot.spec, options.timeout);
        let method = request.method().to_owned();
        let conn = self.connection_for(slot, &budget, options).await?;
        if let Some(feature) = feature {
            offered(slot, &conn, feature)?;
        }
        let features = options.client_features.as_ref();
        let outgoing = input_required::Outgoing {
            conn: &conn,
            server: &slot.spec.name,
            call_features: features,
            call,
            pool_features: &self.inner.options.client_features,
            meta: service::request_meta(slot, &conn, features, options),
            limits: budget.left(),
            relay: options.relay_input_required,
        };
        let response = input_required::send(outgoing, request).await;
        response.map_err(|e| match self.service_error(slot, &conn, None, e) {
            // "Listing tools timed out" would name the wrong request.
            PoolError::Timeout { server, after, .. } => budget.bounded(PoolError::RequestTimeout {
                server,
                method,
                after,
            }),
            other => other,
        })
    }

    /// The live connection to `slot`'s server within `budget` (the
    /// caller's bound, when it sets one): [`PoolError::StartTimeout`]
    /// naming that bound when the start takes longer.
    pub(super) async fn start_for(
        &self,
        slot: &Arc<Slot>,
        budget: &Budget,
    ) -> Result<Arc<Connection>, PoolError> {
        let Some(limit) = budget.caller else {
            return self.connection(slot).await;
        };
        if let Some(conn) = slot.current() {
            return Ok(conn);
        }
        // Boxed, as the start itself: its timer would otherwise sit in
        // every call's future.
        match Box::pin(tokio::time::timeout(limit, self.connection(slot))).await {
            Ok(conn) => conn,
            Err(_) => Err(PoolError::StartTimeout {
                server: slot.spec.name.clone(),
                after: limit,
                stderr: None,
            }),
        }
    }
}

/// A call's id in logs: the caller's ([`CallOptions::call_id`]), else the
/// pool's own number for it.
struct CallId<'a> {
    given: Option<&'a str>,
    number: u64,
}

impl std::fmt::Display for CallId<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.given {
            Some(id) => f.write_str(id),
            None => write!(f, "#{}", self.number),
        }
    }
}
