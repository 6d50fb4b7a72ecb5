//! A gateway client, as the handlers the pool gives a request's
//! server-to-client traffic to: an upstream's sampling, elicitation and
//! roots requests, and its log messages, go to the client whose request
//! caused them (`CallOptions::client_features`).
//!
//! Each server-to-client request carries the id of the client's request it
//! belongs to (rmcp's `OriginatingRequestId`), so over streamable HTTP it
//! rides that request's response stream, as the spec asks.
//!
//! What the pool cannot tie to one request (a server that sends its
//! sampling request on the standalone stream) comes to the pool-wide
//! handlers, [`Unrouted`]: it goes to the client whose call is the only one
//! in flight on that server, unless another client's call ended on that
//! server meanwhile; else it is refused (a request) or dropped (a log
//! message), never sent to a client that may not have caused it.

// Roots, sampling and logging are deprecated by SEP-2577 (rmcp 3.11 warns),
// but the 2025-11-25 protocol the gateway's clients speak still carries them.
#![allow(deprecated)]

use std::{
    collections::HashMap,
    sync::{
        Arc, Mutex, OnceLock,
        atomic::{AtomicU64, Ordering},
    },
};
use toolbridge::lock::LockUnpoisoned as _;

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

/// The gateway's calls in flight, per upstream server, with their clients.
#[derive(Default)]
pub struct InFlight {
    calls: Mutex<HashMap<String, Vec<Call>>>,
    next: AtomicU64,
}

/// One call in flight on a server.
struct Call {
    key: u64,
    features: ClientFeatures,
    /// A call of another client ended on the server while this one was in
    /// flight: a request naming no call may be a late one of that call's.
    shared: bool,
}

/// A call in flight; dropping it ends it.
pub struct InFlightCall {
    registry: Arc<InFlight>,
    server: String,
    key: u64,
}

impl InFlight {
    /// Notes a call to `server` made with `features` until the guard drops.
    pub fn enter(self: &Arc<Self>, server: &str, features: ClientFeatures) -> InFlightCall {
        let key = self.next.fetch_add(1, Ordering::Relaxed);
        self.calls
            .lock_unpoisoned()
            .entry(server.to_owned())
            .or_default()
            .push(Call {
                key,
                features,
                shared: false,
            });
        InFlightCall {
            registry: self.clone(),
            server: server.to_owned(),
            key,
        }
    }

    /// The features of the one call in flight on `server`, if exactly one
    /// and no other client's call ended on `server` while it was in flight
    /// (the rule of `toolbridge::pool`'s routing, for the requests the pool
    /// hands the gateway: those of a streamable HTTP server's standalone
    /// stream, and those that came while the pool saw no call).
    ///
    /// Another client's call that ended before this one began does not
    /// count: nothing tells its late request from this call's own, and
    /// refusing both refused every sampling and elicitation request behind
    /// a gateway its clients used in turn (9beb2dd).
    pub(crate) fn only(&self, server: &str) -> Option<ClientFeatures> {
        let calls = self.calls.lock_unpoisoned();
        match calls.get(server).map(Vec::as_slice) {
            Some([call]) if !call.shared => Some(call.features.clone()),
            _ => None,
        }
    }
}

impl Drop for InFlightCall {
    fn drop(&mut self) {
        let mut calls = self.registry.calls.lock_unpoisoned();
        if let Some(list) = calls.get_mut(&self.server) {
            if let Some(at) = list.iter().position(|call| call.key == self.key) {
                let ended = list.remove(at);
                for other in list.iter_mut() {
                    if other.features.client != ended.features.client {
                        other.shared = true;
                    }
                }
            }
            if list.is_empty() {
                calls.remove(&self.server);
            }
        }
    }
}

/// The pool-wide handlers: every feature is declared upstream, so servers
/// offer the tools that need them; what reaches these goes to the client
/// of the only call in flight on that server, else is refused.
#[derive(Clone)]
pub struct Unrouted {
    in_flight: Arc<InFlight>,
}

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
    /// The pool-wide features over the calls in `in_flight`.
    pub fn features(in_flight: Arc<InFlight>) -> ClientFeatures {
        let me = Arc::new(Unrouted { in_flight });
        ClientFeatures {
            roots: Some(me.clone()),
            sampling: Some(me.clone()),
            elicitation: Some(me.clone()),
            logs: Some(me),
            log_level: None,
            client: None,
        }
    }
}

impl RootsProvider for Unrouted {
    fn list_roots(
        &self,
        origin: RequestOrigin,
    ) -> BoxFuture<'_, Result<ListRootsResult, ErrorData>> {
        Box::pin(async move {
            match self.in_flight.only(&origin.server).and_then(|f| f.roots) {
                Some(roots) => roots.list_roots(origin).await,
                // Asked outside of a call: the gateway shares no folders.
                None => Ok(ListRootsResult::default()),
            }
        })
    }
}

impl SamplingHandler for Unrouted {
    fn create_message(
        &self,
        origin: RequestOrigin,
        params: CreateMessageRequestParams,
    ) -> BoxFuture<'_, Result<CreateMessageResult, ErrorData>> {
        Box::pin(async move {
            match self.in_flight.only(&origin.server).and_then(|f| f.sampling) {
                Some(sampling) => sampling.create_message(origin, params).await,
                None => Err(no_client(&origin.server)),
            }
        })
    }
}

impl ElicitationHandler for Unrouted {
    fn elicit(
        &self,
        origin: RequestOrigin,
        params: ElicitRequestParams,
    ) -> BoxFuture<'_, Result<ElicitResult, ErrorData>> {
        Box::pin(async move {
            match self
                .in_flight
                .only(&origin.server)
                .and_then(|f| f.elicitation)
            {
                Some(elicitation) => elicitation.elicit(origin, params).await,
                None => Err(no_client(&origin.server)),
            }
        })
    }
}

impl LogHandler for Unrouted {
    fn log(&self, origin: RequestOrigin, message: LoggingMessageNotificationParam) {
        if let Some(logs) = self.in_flight.only(&origin.server).and_then(|f| f.logs) {
            logs.log(origin, message);
        }
    }
}
