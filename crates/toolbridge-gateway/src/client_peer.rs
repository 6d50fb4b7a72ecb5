//! A gateway client, as the handlers the pool gives a request's
//! server-to-client traffic to: an upstream's sampling, elicitation and
//! roots requests, and its log messages, go to the client whose request
//! caused them (`CallOptions::client_features`).
//!
//! Each server-to-client request carries the id of the client's request it
//! belongs to (rmcp's `OriginatingRequestId`), so over streamable HTTP it
//! rides that request's response stream, as the spec asks.

// Roots, sampling and logging are deprecated by SEP-2577 (rmcp 3.11 warns),
// but the 2025-11-25 protocol the gateway's clients speak still carries them.
#![allow(deprecated)]

use std::sync::Arc;

use futures::future::BoxFuture;
use rmcp::{
    RoleServer,
    model::{
        ClientResult, CreateMessageRequest, CreateMessageRequestParams, CreateMessageResult,
        ElicitRequest, ElicitRequestParams, ElicitResult, ErrorData, GetExtensions,
        ListRootsRequest, ListRootsResult, LoggingMessageNotificationParam, RequestId,
        ServerRequest,
    },
    service::{OriginatingRequestId, Peer, ServiceError},
};
use toolbridge::pool::{
    ClientFeatures, ElicitationHandler, LogHandler, RequestOrigin, RootsProvider, SamplingHandler,
};

/// One client's peer, and the request of its that the traffic belongs to.
#[derive(Clone)]
pub struct ClientPeer {
    peer: Peer<RoleServer>,
    request: Option<RequestId>,
}

impl ClientPeer {
    /// The features `peer` offers (those it declared), for a call made by
    /// its request `request`.
    pub fn features(peer: Peer<RoleServer>, request: Option<RequestId>) -> ClientFeatures {
        let capabilities = peer.peer_info().map(|info| info.capabilities.clone());
        let me = Arc::new(ClientPeer { peer, request });
        let declared =
            |f: fn(&rmcp::model::ClientCapabilities) -> bool| capabilities.as_ref().is_some_and(f);
        ClientFeatures {
            roots: declared(|c| c.roots.is_some()).then(|| me.clone() as Arc<dyn RootsProvider>),
            sampling: declared(|c| c.sampling.is_some())
                .then(|| me.clone() as Arc<dyn SamplingHandler>),
            elicitation: declared(|c| c.elicitation.is_some())
                .then(|| me.clone() as Arc<dyn ElicitationHandler>),
            logs: Some(me as Arc<dyn LogHandler>),
            log_level: None,
        }
    }

    async fn ask(&self, mut request: ServerRequest) -> Result<ClientResult, ErrorData> {
        if let Some(id) = &self.request {
            request
                .extensions_mut()
                .insert(OriginatingRequestId(id.clone()));
        }
        self.peer.send_request(request).await.map_err(|e| match e {
            ServiceError::McpError(e) => e,
            other => ErrorData::internal_error(
                format!("the gateway's client did not answer: {other}"),
                None,
            ),
        })
    }
}

fn unexpected(what: &str) -> ErrorData {
    ErrorData::internal_error(
        format!("the gateway's client answered {what} with another kind of result"),
        None,
    )
}

impl RootsProvider for ClientPeer {
    fn list_roots(
        &self,
        _origin: RequestOrigin,
    ) -> BoxFuture<'_, Result<ListRootsResult, ErrorData>> {
        Box::pin(async move {
            match self
                .ask(ServerRequest::ListRootsRequest(ListRootsRequest::default()))
                .await?
            {
                ClientResult::ListRootsResult(result) => Ok(result),
                _ => Err(unexpected("roots/list")),
            }
        })
    }
}

impl SamplingHandler for ClientPeer {
    fn create_message(
        &self,
        _origin: RequestOrigin,
        params: CreateMessageRequestParams,
    ) -> BoxFuture<'_, Result<CreateMessageResult, ErrorData>> {
        Box::pin(async move {
            match self
                .ask(ServerRequest::CreateMessageRequest(
                    CreateMessageRequest::new(params),
                ))
                .await?
            {
                ClientResult::CreateMessageResult(result) => Ok(*result),
                _ => Err(unexpected("sampling/createMessage")),
            }
        })
    }
}

impl ElicitationHandler for ClientPeer {
    fn elicit(
        &self,
        _origin: RequestOrigin,
        params: ElicitRequestParams,
    ) -> BoxFuture<'_, Result<ElicitResult, ErrorData>> {
        Box::pin(async move {
            match self
                .ask(ServerRequest::ElicitRequest(ElicitRequest::new(params)))
                .await?
            {
                ClientResult::ElicitResult(result) => Ok(result),
                _ => Err(unexpected("elicitation/create")),
            }
        })
    }
}

impl LogHandler for ClientPeer {
    fn log(&self, _origin: RequestOrigin, message: LoggingMessageNotificationParam) {
        let peer = self.peer.clone();
        tokio::spawn(async move {
            let _ = peer.notify_logging_message(message).await;
        });
    }
}

/// The pool-wide handlers: declared upstream so that servers offer the
/// tools that need them, they answer whatever could not be tied to a
/// client's request with an error saying so.
#[derive(Debug, Clone, Copy)]
pub struct NoClient;

fn no_client() -> ErrorData {
    ErrorData::internal_error(
        "no gateway client is waiting for this request: the server asked outside of a client's call",
        None,
    )
}

impl RootsProvider for NoClient {
    fn list_roots(
        &self,
        _origin: RequestOrigin,
    ) -> BoxFuture<'_, Result<ListRootsResult, ErrorData>> {
        Box::pin(async { Ok(ListRootsResult::default()) })
    }
}

impl SamplingHandler for NoClient {
    fn create_message(
        &self,
        _origin: RequestOrigin,
        _params: CreateMessageRequestParams,
    ) -> BoxFuture<'_, Result<CreateMessageResult, ErrorData>> {
        Box::pin(async { Err(no_client()) })
    }
}

impl ElicitationHandler for NoClient {
    fn elicit(
        &self,
        _origin: RequestOrigin,
        _params: ElicitRequestParams,
    ) -> BoxFuture<'_, Result<ElicitResult, ErrorData>> {
        Box::pin(async { Err(no_client()) })
    }
}

impl NoClient {
    /// The pool-wide features: every request feature declared, none answered.
    pub fn features() -> ClientFeatures {
        ClientFeatures {
            roots: Some(Arc::new(NoClient)),
            sampling: Some(Arc::new(NoClient)),
            elicitation: Some(Arc::new(NoClient)),
            logs: None,
            log_level: None,
        }
    }
}
