//! Which handlers answer a server-to-client request (`roots/list`,
//! `sampling/createMessage`, `elicitation/create`): the requests in flight
//! on one connection that carry their own [`ClientFeatures`]
//! ([`CallOptions::client_features`]), so that a program serving several
//! clients (the gateway) sends each client only what its own calls caused.
//!
//! The rule, for a request the server sends on one connection:
//! 1. When the transport says which of our requests it belongs to
//!    (streamable HTTP: it arrived on that request's response stream; rmcp
//!    marks it with [`InboundStreamOrigin::OutboundRequest`]), it goes to
//!    that request's handlers, or to the pool's when that request brought
//!    none. A request that arrived on the standalone stream
//!    ([`InboundStreamOrigin::Unassociated`]) belongs to none: the pool's.
//! 2. Otherwise (stdio, WebSocket, legacy SSE: one stream for everything),
//!    when exactly one request in flight on the connection brought
//!    handlers, it goes to those.
//! 3. Otherwise to the pool's handlers ([`PoolOptions::client_features`]).
//! 4. A feature neither has a handler for is answered with a JSON-RPC error
//!    saying the client does not offer it.
//!
//! A request's handlers stand in for the pool's one by one: a call that
//! brings only an elicitation handler still gets the pool's roots.
//!
//! The 2026-07-28 input-required form needs no guessing: its requests come
//! back in the call's own result, and `input_required` answers them with
//! that call's handlers.
//!
//! Log messages marked with the request whose response stream they came on
//! (see `logs`) are looked up by that id too ([`InFlight::owner_of`]); as
//! rmcp may hand such a message over after its request ended, the last
//! [`RECENTLY_ENDED`] request ids of the connection are remembered with
//! their handlers.
//!
//! [`CallOptions::client_features`]: super::CallOptions::client_features
//! [`PoolOptions::client_features`]: super::PoolOptions::client_features

use crate::lock::LockUnpoisoned as _;
use std::{
    collections::{HashMap, VecDeque},
    sync::{
        Arc, Mutex,
        atomic::{AtomicU64, Ordering},
    },
};

use rmcp::{model::RequestId, service::InboundStreamOrigin};

/// How many ended requests (or earlier rounds of one) a connection
/// remembers, for their late log messages.
const RECENTLY_ENDED: usize = 64;

use super::ClientFeatures;

/// The requests in flight on one connection that brought their own
/// handlers.
#[derive(Default)]
pub(super) struct InFlight {
    /// By registration number: the request's id once it is sent, and its
    /// handlers (already completed with the pool's).
    entries: Mutex<HashMap<u64, Entry>>,
    /// Numbers the registrations.
    next: AtomicU64,
    /// The ids of requests (and rounds) that ended, newest last, with their
    /// handlers; at most [`RECENTLY_ENDED`].
    ended: Mutex<VecDeque<(RequestId, ClientFeatures)>>,
}

struct Entry {
    /// The JSON-RPC id of the request, once sent; a round of the
    /// input-required loop sends a new one.
    id: Option<RequestId>,
    features: ClientFeatures,
}

/// A registration; dropping it (the request ended, or its caller gave up)
/// removes it.
pub(super) struct Registration {
    registry: Arc<InFlight>,
    key: u64,
}

impl Registration {
    /// Notes the id the request went out with.
    pub(super) fn sent_as(&self, id: RequestId) {
        let mut entries = self.registry.lock();
        if let Some(entry) = entries.get_mut(&self.key)
            && let Some(earlier) = entry.id.replace(id)
        {
            self.registry.remember(earlier, entry.features.clone());
        }
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        let entry = self.registry.lock().remove(&self.key);
        if let Some(Entry {
            id: Some(id),
            features,
        }) = entry
        {
            self.registry.remember(id, features);
        }
    }
}

impl InFlight {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<u64, Entry>> {
        self.entries.lock_unpoisoned()
    }

    /// Registers a request that brings `features` (completed with the
    /// pool's), until the returned registration is dropped.
    pub(super) fn register(self: &Arc<Self>, features: ClientFeatures) -> Registration {
        let key = self.next.fetch_add(1, Ordering::Relaxed);
        self.lock().insert(key, Entry { id: None, features });
        Registration {
            registry: self.clone(),
            key,
        }
    }

    /// Notes that the request `id` (with `features`) ended.
    fn remember(&self, id: RequestId, features: ClientFeatures) {
        let mut ended = self.ended.lock_unpoisoned();
        if ended.len() == RECENTLY_ENDED {
            ended.pop_front();
        }
        ended.push_back((id, features));
    }

    /// The handlers of the request `id` (one that brought its own), in
    /// flight or recently ended; `None` when it is not known.
    pub(super) fn owner_of(&self, id: &RequestId) -> Option<ClientFeatures> {
        let entries = self.lock();
        if let Some(entry) = entries.values().find(|e| e.id.as_ref() == Some(id)) {
            return Some(entry.features.clone());
        }
        let ended = self.ended.lock_unpoisoned();
        if let Some((_, features)) = ended.iter().rev().find(|(ended, _)| ended == id) {
            return Some(features.clone());
        }
        // Marked before the sender noted the id it went out with.
        only(entries.values().filter(|e| e.id.is_none()))
    }

    /// The handlers of the request in flight that a server-to-client
    /// request with `origin` (from its extensions) belongs to, by the
    /// module's rule; `None` for the pool's.
    pub(super) fn route(&self, origin: Option<&InboundStreamOrigin>) -> Option<ClientFeatures> {
        let entries = self.lock();
        match origin {
            Some(InboundStreamOrigin::OutboundRequest(id)) => {
                match entries.values().find(|e| e.id.as_ref() == Some(id)) {
                    Some(entry) => Some(entry.features.clone()),
                    // The server may answer before the sender noted the id
                    // it went out with: then one not yet noted is it.
                    None => only(entries.values().filter(|e| e.id.is_none())),
                }
            }
            Some(InboundStreamOrigin::Unassociated) => None,
            None => only(entries.values()),
        }
    }
}

/// The features of the one entry of `entries`, if there is exactly one.
fn only<'a>(mut entries: impl Iterator<Item = &'a Entry>) -> Option<ClientFeatures> {
    match (entries.next(), entries.next()) {
        (Some(only), None) => Some(only.features.clone()),
        _ => None,
    }
}

#[cfg(test)]
#[allow(deprecated)] // roots: see client_features
mod tests {
    use std::sync::Arc;

    use futures::future::BoxFuture;
    use rmcp::model::{ErrorData, ListRootsResult, Root};

    use super::*;
    use crate::pool::{RequestOrigin, RootsProvider};

    struct Named(&'static str);

    impl RootsProvider for Named {
        fn list_roots(
            &self,
            _origin: RequestOrigin,
        ) -> BoxFuture<'_, Result<ListRootsResult, ErrorData>> {
            let root = Root::new(format!("file:///{}", self.0));
            Box::pin(async move { Ok(ListRootsResult::new(vec![root])) })
        }
    }

    fn features(name: &'static str) -> ClientFeatures {
        ClientFeatures {
            roots: Some(Arc::new(Named(name))),
            ..ClientFeatures::default()
        }
    }

    async fn root_of(features: Option<ClientFeatures>) -> Option<String> {
        let roots = features?.roots?;
        let listed = roots
            .list_roots(RequestOrigin { server: "s".into() })
            .await
            .ok()?;
        listed.roots.first().map(|r| r.uri.clone())
    }

    #[tokio::test]
    async fn a_request_tied_to_a_call_goes_to_that_call_even_with_others_in_flight() {
        let registry = Arc::new(InFlight::default());
        let a = registry.register(features("a"));
        let b = registry.register(features("b"));
        a.sent_as(RequestId::Number(1));
        b.sent_as(RequestId::Number(2));
        let to_b = InboundStreamOrigin::OutboundRequest(RequestId::Number(2));
        assert_eq!(
            root_of(registry.route(Some(&to_b))).await.as_deref(),
            Some("file:///b")
        );
        // Untied, with two candidates: nobody's guess, the pool's handlers.
        assert!(registry.route(None).is_none());
        assert!(
            registry
                .route(Some(&InboundStreamOrigin::Unassociated))
                .is_none()
        );
        drop(b);
        // One left: an untied request can only be its.
        assert_eq!(
            root_of(registry.route(None)).await.as_deref(),
            Some("file:///a")
        );
        drop(a);
        assert!(registry.route(None).is_none());
    }

    #[tokio::test]
    async fn a_request_tied_to_a_call_without_handlers_goes_to_the_pool() {
        let registry = Arc::new(InFlight::default());
        let a = registry.register(features("a"));
        a.sent_as(RequestId::Number(1));
        let to_other = InboundStreamOrigin::OutboundRequest(RequestId::Number(9));
        assert!(registry.route(Some(&to_other)).is_none());
        // Not yet noted as sent: the one unsent registration is the one.
        let b = registry.register(features("b"));
        assert_eq!(
            root_of(registry.route(Some(&to_other))).await.as_deref(),
            Some("file:///b")
        );
        drop(b);
    }
}
