//! [`Pool::request`]: any MCP request to one server, with the pool's start,
//! timeout, cancellation and error rules. The typed operations (resources,
//! prompts, completion) and the gateway's forwarding are built on it;
//! `tools/call` keeps its own path ([`Pool::call_tool`]), which also knows
//! tools.

use rmcp::model::{ClientRequest, ServerResult};

use super::{CallOptions, Pool, PoolError, input_required, progress::Limits, service};

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
        let slot = self.slot(server)?;
        let method = request.method().to_owned();
        let features = options.client_features.as_ref();
        // Log messages while it runs may be this request's.
        let in_flight = slot.logs.enter(features);
        let (conn, limits) = match options.timeout {
            None => {
                let timeout = slot.spec.call_timeout();
                let limits = Limits {
                    idle: timeout,
                    total: self.inner.options.max_total_call_time.max(timeout),
                };
                (self.connection(slot).await?, limits)
            }
            Some(limit) => Box::pin(self.start_within(slot, limit)).await?,
        };
        let outgoing = input_required::Outgoing {
            conn: &conn,
            server,
            call_features: features,
            pool_features: &self.inner.options.client_features,
            meta: service::request_meta(slot, &conn, features, options),
            limits,
            relay: options.relay_input_required,
        };
        let response = input_required::send(outgoing, request).await;
        if features.is_some_and(|f| f.logs.is_some()) {
            // rmcp hands each notification to a task of its own: the log
            // messages sent just before the answer go to this request's
            // handler while it is still in flight.
            tokio::task::yield_now().await;
        }
        drop(in_flight);
        response.map_err(|e| match self.service_error(slot, &conn, None, e) {
            // "Listing tools timed out" would name the wrong request.
            PoolError::Timeout { server, after, .. } => PoolError::RequestTimeout {
                server,
                method,
                // The caller's bound, not what was left of it after the start.
                after: options.timeout.unwrap_or(after),
            },
            other => other,
        })
    }
}
