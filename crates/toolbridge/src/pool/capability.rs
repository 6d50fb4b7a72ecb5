//! Whether a server offers a feature (it declares the capability when it
//! starts), and requests that need one: a server without `prompts` is told
//! apart from a broken one before it is asked anything.

use std::sync::Arc;

use rmcp::model::{ClientRequest, ServerResult};

use super::{CallOptions, Pool, PoolError, error::Feature, slot::Slot};

impl Pool {
    /// Starts `slot`'s server if needed (within `limit`, when given) and
    /// checks that it declares `feature`: [`PoolError::NotOffered`] if not.
    pub(super) async fn offering(
        &self,
        slot: &Arc<Slot>,
        feature: Feature,
        limit: Option<std::time::Duration>,
    ) -> Result<(), PoolError> {
        let conn = match limit {
            None => self.connection(slot).await?,
            Some(limit) => Box::pin(self.start_within(slot, limit)).await?.0,
        };
        // A server that told us nothing is asked anyway: it answers for itself.
        let Some(info) = conn.peer.peer_info() else {
            return Ok(());
        };
        let caps = &info.capabilities;
        let offered = match feature {
            Feature::Resources => caps.resources.is_some(),
            Feature::ResourceSubscriptions => caps
                .resources
                .as_ref()
                .is_some_and(|r| r.subscribe == Some(true)),
            Feature::Prompts => caps.prompts.is_some(),
            Feature::Completions => caps.completions.is_some(),
            Feature::Skills => caps.supports_skills(),
        };
        if offered {
            Ok(())
        } else {
            Err(PoolError::NotOffered {
                server: slot.spec.name.clone(),
                feature,
            })
        }
    }

    /// [`Pool::request`] to a server that declares `feature`, the start, the
    /// check and the request all within `options.timeout` when it is set.
    pub(super) async fn request_offered(
        &self,
        server: &str,
        feature: Feature,
        request: ClientRequest,
        options: &CallOptions,
    ) -> Result<ServerResult, PoolError> {
        let slot = self.slot(server)?;
        let started = tokio::time::Instant::now();
        self.offering(slot, feature, options.timeout).await?;
        let Some(limit) = options.timeout else {
            return self.request(server, request, options).await;
        };
        let left = CallOptions {
            timeout: Some(limit.saturating_sub(started.elapsed())),
            ..options.clone()
        };
        self.request(server, request, &left)
            .await
            .map_err(|e| match e {
                // The caller's bound, not what was left of it.
                PoolError::RequestTimeout { server, method, .. } => PoolError::RequestTimeout {
                    server,
                    method,
                    after: limit,
                },
                other => other,
            })
    }
}

/// The error for a `result` that is not what `method` answers.
pub(super) fn unexpected(server: &str, method: &str, result: &ServerResult) -> PoolError {
    PoolError::Protocol {
        server: server.to_owned(),
        message: format!(
            "it answered {method} with something else ({})",
            super::service::result_kind(result)
        ),
    }
}
