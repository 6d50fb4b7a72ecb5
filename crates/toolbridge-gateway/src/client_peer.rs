//! A gateway client, as the handlers the pool gives a request's
//! server-to-client traffic to: an upstream's sampling, elicitation and
//! roots requests, and its log messages, go to the client whose request
//! caused them (`CallOptions::client_features`).
//!
//! Each server-to-client request carries the id of the client's request it
//! belongs to (rmcp's `OriginatingRequestId`), so over streamable HTTP it
//! rides that request's response stream, as the spec asks.
//!
//! Which client's handlers a message goes to is the pool's in-flight rule
//! (`toolbridge::pool`'s `in_flight`: the call it is tied to, else the only
//! call in flight on that server). What no call claims comes to the
//! gateway's fallback, the pool-wide handlers [`Unrouted`]: a request is
//! refused, a log message only kept for the page, never sent to a client
//! that may not have caused it.

// Roots, sampling and logging are deprecated by SEP-2577 (rmcp 3.11 warns),
// but the 2025-11-25 protocol the gateway's clients speak still carries them.
#![allow(deprecated)]

use std::sync::{Arc, OnceLock};

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
pub struct ClientPeer {
    peer: Peer<RoleServer>,
    request: Option<RequestId>,
    /// Log messages on their way to the client, in order (a task sends
    /// them; started with the first).
    logs: OnceLock<tokio::sync::mpsc::UnboundedSender<LoggingMessageNotificationParam>>,
}

impl ClientPeer {
    /// The features `peer` offers (those it declared), for a call made by
    /// its request `request`.
    pub fn features(peer: Peer<RoleServer>, request: Option<RequestId>) -> ClientFeatures {
        let capabilities = peer.peer_info().map(|info| info.capabilities.clone());
        let me = Arc::new(ClientPeer {
            peer,
            request,
            logs: OnceLock::new(),
        });
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
            // What the connection declares is the pool's (`Unrouted`).
            renders_apps: false,
            client: None,
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
        let sender = self.logs.get_or_init(|| {
            let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
            let peer = self.peer.clone();
            tokio::spawn(async move {
                while let Some(message) = rx.recv().await {
                    if peer.notify_logging_message(message).await.is_err() {
                        break;
                    }
                }
            });
            tx
        });
        let _ = sender.send(message);
    }
}

/// The pool-wide handlers, the gateway's fallback (see `toolbridge::pool`'s
/// in-flight rule): what no call of a client claims. Every feature is
/// declared upstream, so servers offer the tools that need them; what
/// reaches these is refused, as no client can be named: roots are none,
/// sampling and elicitation -32601. (Log messages no call claims go to the
/// page's Logs view: see `upstream_logs`.)
#[derive(Clone)]
pub struct Unrouted;

/// -32601, as for what a client does not offer: the server asked no
/// client the gateway can name.
fn no_client(server: &str) -> ErrorData {
    ErrorData::new(
        rmcp::model::ErrorCode::METHOD_NOT_FOUND,
        format!(
            "the gateway cannot tell which of its clients server {server} is asking: \
             it asked outside of a call, during several, or after another client's call \
             ended during this one; ask within the call that needs the answer"
        ),
        None,
    )
}

impl Unrouted {
    /// The pool-wide features: every request refused, and no log handler.
    pub fn features() -> ClientFeatures {
        let me = Arc::new(Unrouted);
        ClientFeatures {
            roots: Some(me.clone()),
            sampling: Some(me.clone()),
            elicitation: Some(me),
            logs: None,
            log_level: None,
            // The page renders MCP Apps (web/components/mcp-app.js).
            renders_apps: true,
            client: None,
        }
    }
}

impl RootsProvider for Unrouted {
    fn list_roots(
        &self,
        _origin: RequestOrigin,
    ) -> BoxFuture<'_, Result<ListRootsResult, ErrorData>> {
        // Asked outside of a call: the gateway shares no folders.
        Box::pin(async { Ok(ListRootsResult::default()) })
    }
}

impl SamplingHandler for Unrouted {
    fn create_message(
        &self,
        origin: RequestOrigin,
        _params: CreateMessageRequestParams,
    ) -> BoxFuture<'_, Result<CreateMessageResult, ErrorData>> {
        Box::pin(async move { Err(no_client(&origin.server)) })
    }
}

impl ElicitationHandler for Unrouted {
    fn elicit(
        &self,
        origin: RequestOrigin,
        _params: ElicitRequestParams,
    ) -> BoxFuture<'_, Result<ElicitResult, ErrorData>> {
        Box::pin(async move { Err(no_client(&origin.server)) })
    }
}
