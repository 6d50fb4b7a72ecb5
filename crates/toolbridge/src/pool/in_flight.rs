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
//!    When that request has ended (a late request of a call that is over),
//!    it is refused: never passed to another call.
//! 2. Otherwise (stdio, WebSocket, legacy SSE: one stream for everything),
//!    when exactly one request in flight on the connection brought
//!    handlers, it goes to those, unless a request of another client
//!    ([`ClientFeatures::client`]) ended on the connection while that one
//!    was in flight: the request may be a late one of the other client's,
//!    and is refused rather than shown to the wrong client. A request of
//!    another client that ended before this one began does not count: on a
//!    stream that names no call, a late request of it and this call's own
//!    are the same bytes, and refusing both would refuse every request
//!    behind a gateway its clients use in turn (the conformance suite's
//!    sampling and elicitation scenarios, one client each).
//! 3. Otherwise to the pool's handlers ([`PoolOptions::client_features`]).
//! 4. A feature neither has a handler for, and a refused request, are
//!    answered with a JSON-RPC error (-32601).
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
    /// A request of another client ended on the connection while this one
    /// was in flight: what names no request may be that one's.
    shared: bool,
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
        let mut entries = self.registry.lock();
        let Some(entry) = entries.remove(&self.key) else {
            return;
        };
        for other in entries.values_mut() {
            if other.features.client != entry.features.client {
                other.shared = true;
            }
        }
        drop(entries);
        if let Some(id) = entry.id {
            self.registry.remember(id, entry.features);
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
        self.lock().insert(
            key,
            Entry {
                id: None,
                features,
                shared: false,
            },
        );
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

    /// Where a server-to-client request with `origin` (from its
    /// extensions) goes, by the module's rule.
    pub(super) fn route(&self, origin: Option<&InboundStreamOrigin>) -> Route {
        let entries = self.lock();
        let ended = self.ended.lock_unpoisoned();
        match origin {
            Some(InboundStreamOrigin::OutboundRequest(id)) => {
                if let Some(entry) = entries.values().find(|e| e.id.as_ref() == Some(id)) {
                    return Route::Call(entry.features.clone());
                }
                if ended.iter().any(|(ended, _)| ended == id) {
                    return Route::Refused;
                }
                // The server may answer before the sender noted the id it
                // went out with: then one not yet noted is it.
                only(entries.values().filter(|e| e.id.is_none())).map_or(Route::Pool, Route::Call)
            }
            Some(InboundStreamOrigin::Unassociated) => Route::Pool,
            None => {
                let mut all = entries.values();
                match (all.next(), all.next()) {
                    (Some(only), None) if only.shared => Route::Refused,
                    (Some(only), None) => Route::Call(only.features.clone()),
                    _ => Route::Pool,
                }
            }
        }
    }
}

/// Where a server-to-client request goes.
pub(super) enum Route {
    /// To the handlers of the call it belongs to.
    Call(ClientFeatures),
    /// To the pool's handlers.
    Pool,
    /// Nowhere: it may belong to a call that ended, of another client.
    Refused,
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

    impl Route {
        fn call(self) -> Option<ClientFeatures> {
            match self {
                Route::Call(features) => Some(features),
                _ => None,
            }
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
            root_of(registry.route(Some(&to_b)).call()).await.as_deref(),
            Some("file:///b")
        );
        // Untied, with two candidates: nobody's guess, the pool's handlers.
        assert!(matches!(registry.route(None), Route::Pool));
        assert!(matches!(
            registry.route(Some(&InboundStreamOrigin::Unassociated)),
            Route::Pool
        ));
        drop(b);
        // B's call ended: a request tied to it is refused, not given to A...
        assert!(matches!(registry.route(Some(&to_b)), Route::Refused));
        // An untied one goes to A: both calls are of one client here (no
        // client named), so a late request of B's is A's client's too.
        assert_eq!(
            root_of(registry.route(None).call()).await.as_deref(),
            Some("file:///a")
        );
        drop(a);
        assert!(matches!(registry.route(None), Route::Pool));
    }

    /// Issue 32's eighth finding: client B's call ended while client A's
    /// was in flight, then its server asked (over stdio: no call named),
    /// and the request went to A's call, the only one in flight. Refused
    /// now, for as long as A's call lasts.
    #[tokio::test]
    async fn a_late_request_never_goes_to_another_clients_call() {
        let registry = Arc::new(InFlight::default());
        let a = registry.register(client("a", 1));
        a.sent_as(RequestId::Number(1));
        let b = registry.register(client("b", 2));
        b.sent_as(RequestId::Number(2));
        drop(b);
        assert!(matches!(registry.route(None), Route::Refused));
        // A's own later request on the one connection changes nothing.
        let again = registry.register(client("a", 1));
        again.sent_as(RequestId::Number(3));
        drop(again);
        assert!(matches!(registry.route(None), Route::Refused));
        drop(a);
        assert!(matches!(registry.route(None), Route::Pool));
    }

    /// Clients in turn: B's call ended before A's began, so what comes
    /// during A's call is A's (the revert of 9beb2dd: refusing it refused
    /// every sampling request behind a gateway used by one client after
    /// another). One client's own calls never shut each other out.
    #[tokio::test]
    async fn clients_in_turn_each_get_their_own_calls_requests() {
        let registry = Arc::new(InFlight::default());
        let b = registry.register(client("b", 2));
        b.sent_as(RequestId::Number(1));
        drop(b);
        let a = registry.register(client("a", 1));
        a.sent_as(RequestId::Number(2));
        assert_eq!(
            root_of(registry.route(None).call()).await.as_deref(),
            Some("file:///a")
        );
        let first = registry.register(client("a", 1));
        first.sent_as(RequestId::Number(3));
        drop(first);
        assert_eq!(
            root_of(registry.route(None).call()).await.as_deref(),
            Some("file:///a")
        );
    }

    fn client(name: &'static str, id: u64) -> ClientFeatures {
        ClientFeatures {
            client: Some(id),
            ..features(name)
        }
    }

    #[tokio::test]
    async fn a_request_tied_to_a_call_without_handlers_goes_to_the_pool() {
        let registry = Arc::new(InFlight::default());
        let a = registry.register(features("a"));
        a.sent_as(RequestId::Number(1));
        let to_other = InboundStreamOrigin::OutboundRequest(RequestId::Number(9));
        assert!(matches!(registry.route(Some(&to_other)), Route::Pool));
        // Not yet noted as sent: the one unsent registration is the one.
        let b = registry.register(features("b"));
        assert_eq!(
            root_of(registry.route(Some(&to_other)).call())
                .await
                .as_deref(),
            Some("file:///b")
        );
        drop(b);
    }
}
