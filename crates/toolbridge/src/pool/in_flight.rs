//! The requests in flight on one server, and the one rule that decides
//! whose a server-to-client message is: its log messages
//! (`notifications/message`) and its requests (`roots/list`,
//! `sampling/createMessage`, `elicitation/create`). A program serving
//! several clients (the gateway) gives each request its client's handlers
//! ([`CallOptions::client_features`]); this registry is the only place that
//! says which of them a message goes to. Kept by the server's slot across
//! reconnects: a request is in flight from the moment it is asked for, the
//! server's start included (a server may ask for its roots during the
//! handshake that a call caused).
//!
//! The rule, for a message the server sends:
//! 1. **Tied to a request**: the transport says which of our requests it
//!    belongs to. Over streamable HTTP a message that came on a request's
//!    response stream is tied to it (rmcp marks a request with
//!    [`InboundStreamOrigin::OutboundRequest`]; our transport marks a log
//!    message with [`RELATED_REQUEST_META`] in its `_meta`). It goes to that
//!    request's handlers (the pool's for what it brought none of):
//!    - while the request is in flight;
//!    - after it ended, a log message still goes there (rmcp may hand a
//!      message over after the answer that followed it; the last
//!      [`RECENTLY_ENDED`] requests are remembered), but a request is
//!      refused: the call that could answer it is over, and the question
//!      is never passed to another call.
//!
//!    A tie to a request that is not known (one sent by the pool for no
//!    caller: a tool listing, a task's polls; or one whose id is not noted
//!    yet) says nothing of whose it is: when exactly one request in flight
//!    has not noted its id yet it is that one, else the untied rule.
//! 2. **Untied** (stdio, WebSocket, legacy SSE: one stream for everything;
//!    a streamable HTTP server's standalone stream): when exactly one
//!    request is in flight on the server, it is that request's; unless a
//!    request of another client ([`ClientFeatures::client`]) ended while
//!    that one was in flight: the message may be a late one of the other
//!    client's, and goes to no call (a request is refused, a log message
//!    goes to the fallback). rmcp hands each message to a task of its own,
//!    which may run after the answer that followed the message ended its
//!    request; so the transports with one stream (stdio, WebSocket, legacy
//!    SSE) take the count when they read a log message, in order with the
//!    answers: one read while exactly one request was unanswered is marked
//!    with it ([`ReadAlongside`]), and that request's it is, in flight or
//!    ended, by the same rule. (A streamable HTTP standalone stream has no
//!    order against a request's own stream: its messages are counted when
//!    handed over.) A request of another client that ended before
//!    this one began does not count: on a stream that names no call, a late
//!    message of it and this call's own are the same bytes, and refusing
//!    both would refuse everything behind a gateway its clients use in turn
//!    (the conformance suite's sampling and elicitation scenarios).
//! 3. **Otherwise** (no request in flight, or several): the fallback, the
//!    pool's handlers ([`PoolOptions::client_features`]). That is the
//!    embedding program's option: the CLI answers there as for any call;
//!    the gateway's refuse a request (it cannot name the client) and keep a
//!    log message for its page's Logs view, never guessing a client.
//! 4. A feature neither has a handler for, and a refused request, are
//!    answered with a JSON-RPC error (-32601).
//!
//! Every request in flight counts (a listing the pool makes for no caller
//! too: a message may be its, and its handlers are the pool's); only those
//! that brought their own handlers are kept by id, so a request without
//! costs two atomic operations.
//!
//! A request's handlers stand in for the pool's one by one: a call that
//! brings only an elicitation handler still gets the pool's roots.
//!
//! Progress notifications need no guessing (each names its request's
//! progress token: see `progress`), nor do the 2026-07-28 input-required
//! requests (they come back in the call's own result: `input_required`
//! answers them with that call's handlers).
//!
//! [`CallOptions::client_features`]: super::CallOptions::client_features
//! [`PoolOptions::client_features`]: super::PoolOptions::client_features
//! [`RELATED_REQUEST_META`]: super::logs::RELATED_REQUEST_META
//! [`ReadAlongside`]: crate::transport::unreadable::ReadAlongside

use crate::lock::LockUnpoisoned as _;
use std::{
    collections::{HashMap, VecDeque},
    sync::{
        Mutex,
        atomic::{AtomicU64, AtomicUsize, Ordering},
    },
};

use rmcp::{model::RequestId, service::InboundStreamOrigin};

use super::ClientFeatures;

/// How many ended requests (or earlier rounds of one) a server's registry
/// remembers, for their late log messages.
const RECENTLY_ENDED: usize = 64;

/// A request id as sent on one of the server's connections (ids restart
/// with each connection).
type Sent = (u64, RequestId);

/// The requests in flight on one server.
#[derive(Default)]
pub(super) struct InFlight {
    /// Every request in flight.
    count: AtomicUsize,
    /// Those that brought their own handlers, by registration number.
    calls: Mutex<HashMap<u64, Entry>>,
    /// Numbers the registrations.
    next: AtomicU64,
    /// Numbers the server's connections.
    connections: AtomicU64,
    /// The requests (and rounds) that ended, newest last; at most
    /// [`RECENTLY_ENDED`].
    ended: Mutex<VecDeque<Ended>>,
}

/// A request (or round) that ended.
struct Ended {
    sent: Sent,
    features: ClientFeatures,
    /// Whether a request of another client ended while it was in flight.
    shared: bool,
}

struct Entry {
    /// The request's id once sent; a round of the input-required loop
    /// sends a new one.
    sent: Option<Sent>,
    /// Its own handlers (not completed with the pool's).
    features: ClientFeatures,
    /// A request of another client ended while this one was in flight:
    /// what names no request may be that one's.
    shared: bool,
}

/// What a message says about the request it belongs to.
pub(super) enum Tie<'a> {
    /// It came on the response stream of the request with this id.
    Request(&'a RequestId),
    /// It names none, and was read while the request with this id was the
    /// only one unanswered on its one-stream connection.
    Alone(&'a RequestId),
    /// Nothing.
    None,
}

impl<'a> Tie<'a> {
    /// The tie of a server-to-client request, from rmcp's mark.
    pub(super) fn of_request(origin: Option<&'a InboundStreamOrigin>) -> Self {
        match origin {
            Some(InboundStreamOrigin::OutboundRequest(id)) => Tie::Request(id),
            Some(InboundStreamOrigin::Unassociated) | None => Tie::None,
        }
    }
}

/// What kind of message is routed.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    /// A request, answered by a call in flight or by no one.
    Request,
    /// A log message, which may be handed over late.
    Log,
}

/// Where a message goes.
pub(super) enum Route {
    /// To the handlers a call brought (completed with the pool's by the
    /// caller).
    Call(ClientFeatures),
    /// To the pool's handlers.
    Fallback,
    /// Nowhere (a request only): it may belong to a call that ended, or to
    /// another client's.
    Refused,
}

impl InFlight {
    /// A number for a new connection of the server, for [`Call::sent_as`]
    /// and [`InFlight::route`].
    pub(super) fn new_connection(&self) -> u64 {
        self.connections.fetch_add(1, Ordering::Relaxed)
    }

    /// Notes a request in flight, with its own handlers if it brought
    /// some, until the returned guard is dropped.
    pub(super) fn enter(&self, features: Option<&ClientFeatures>) -> Call<'_> {
        // Counted before it is kept, and kept no longer than counted: under
        // the lock, `count` is never below the entries kept.
        self.count.fetch_add(1, Ordering::AcqRel);
        let key = features.map(|features| {
            let key = self.next.fetch_add(1, Ordering::Relaxed);
            let entry = Entry {
                sent: None,
                features: features.clone(),
                shared: false,
            };
            self.calls.lock_unpoisoned().insert(key, entry);
            key
        });
        Call {
            registry: self,
            key,
        }
    }

    /// Where a message of `kind` that came on `connection` with `tie` goes,
    /// by the module's rule.
    pub(super) fn route(&self, connection: u64, tie: Tie<'_>, kind: Kind) -> Route {
        let calls = self.calls.lock_unpoisoned();
        let (id, alone) = match tie {
            Tie::Request(id) => (id, false),
            Tie::Alone(id) => (id, true),
            Tie::None => return untied(&calls, &self.count, kind),
        };
        let sent = |e: &Entry| {
            e.sent
                .as_ref()
                .is_some_and(|(on, sent)| *on == connection && sent == id)
        };
        if let Some(entry) = calls.values().find(|e| sent(e)) {
            return match alone && entry.shared {
                true => not_shared(kind),
                false => Route::Call(entry.features.clone()),
            };
        }
        let ended = self.ended.lock_unpoisoned();
        if let Some(ended) = ended
            .iter()
            .rev()
            .find(|e| e.sent.0 == connection && &e.sent.1 == id)
        {
            return match kind {
                Kind::Request => Route::Refused,
                Kind::Log if alone && ended.shared => Route::Fallback,
                Kind::Log => Route::Call(ended.features.clone()),
            };
        }
        drop(ended);
        // The server may send before the sender noted the id it went out
        // with: then the one not yet noted is it.
        if !alone && let Some(entry) = only(calls.values().filter(|e| e.sent.is_none())) {
            return Route::Call(entry.features.clone());
        }
        // A request sent for no caller (a task's poll, a listing).
        untied(&calls, &self.count, kind)
    }

    /// Notes that the request sent as `sent` ended.
    fn remember(&self, sent: Sent, features: ClientFeatures, shared: bool) {
        let mut ended = self.ended.lock_unpoisoned();
        if ended.len() == RECENTLY_ENDED {
            ended.pop_front();
        }
        ended.push_back(Ended {
            sent,
            features,
            shared,
        });
    }
}

/// A request in flight, noted by [`InFlight::enter`]; dropping it (the
/// request ended, or its caller gave up) ends it.
pub(super) struct Call<'a> {
    registry: &'a InFlight,
    /// Its number in `calls`, when it brought its own handlers.
    key: Option<u64>,
}

impl Call<'_> {
    /// Notes the id the request (or a new round of it) went out with on the
    /// connection numbered `connection`.
    pub(super) fn sent_as(&self, connection: u64, id: RequestId) {
        let Some(key) = self.key else {
            return;
        };
        let mut calls = self.registry.calls.lock_unpoisoned();
        if let Some(entry) = calls.get_mut(&key)
            && let Some(earlier) = entry.sent.replace((connection, id))
        {
            self.registry
                .remember(earlier, entry.features.clone(), entry.shared);
        }
    }
}

impl Drop for Call<'_> {
    fn drop(&mut self) {
        if let Some(key) = self.key {
            let mut calls = self.registry.calls.lock_unpoisoned();
            if let Some(entry) = calls.remove(&key) {
                for other in calls.values_mut() {
                    if other.features.client != entry.features.client {
                        other.shared = true;
                    }
                }
                drop(calls);
                if let Some(sent) = entry.sent {
                    self.registry.remember(sent, entry.features, entry.shared);
                }
            }
        }
        self.registry.count.fetch_sub(1, Ordering::AcqRel);
    }
}

/// The untied rule: the one request in flight, unless another client's
/// ended while it was in flight.
fn untied(calls: &HashMap<u64, Entry>, count: &AtomicUsize, kind: Kind) -> Route {
    if count.load(Ordering::Acquire) != 1 {
        return Route::Fallback;
    }
    match only(calls.values()) {
        Some(entry) if entry.shared => not_shared(kind),
        Some(entry) => Route::Call(entry.features.clone()),
        // The one request in flight brought no handlers: the pool's.
        None => Route::Fallback,
    }
}

/// Where a message that may be another client's goes.
fn not_shared(kind: Kind) -> Route {
    match kind {
        Kind::Request => Route::Refused,
        Kind::Log => Route::Fallback,
    }
}

/// The one entry of `entries`, if there is exactly one.
fn only<'a>(mut entries: impl Iterator<Item = &'a Entry>) -> Option<&'a Entry> {
    match (entries.next(), entries.next()) {
        (Some(only), None) => Some(only),
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

    /// The connection of these tests.
    const ON: u64 = 0;

    impl InFlight {
        fn ask(&self, tie: Tie<'_>) -> Route {
            self.route(ON, tie, Kind::Request)
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

    async fn root_of(route: Route) -> Option<String> {
        let roots = route.call()?.roots?;
        let listed = roots
            .list_roots(RequestOrigin { server: "s".into() })
            .await
            .ok()?;
        listed.roots.first().map(|r| r.uri.clone())
    }

    fn id(n: i64) -> RequestId {
        RequestId::Number(n)
    }

    #[tokio::test]
    async fn a_request_tied_to_a_call_goes_to_that_call_even_with_others_in_flight() {
        let registry = InFlight::default();
        let a = registry.enter(Some(&features("a")));
        let b = registry.enter(Some(&features("b")));
        a.sent_as(ON, id(1));
        b.sent_as(ON, id(2));
        let to_b = id(2);
        assert_eq!(
            root_of(registry.ask(Tie::Request(&to_b))).await.as_deref(),
            Some("file:///b")
        );
        // Untied, with two candidates: nobody's guess, the fallback.
        assert!(matches!(registry.ask(Tie::None), Route::Fallback));
        drop(b);
        // B's call ended: a request tied to it is refused, not given to A...
        assert!(matches!(registry.ask(Tie::Request(&to_b)), Route::Refused));
        // ...but a log message tied to it is still B's.
        assert_eq!(
            root_of(registry.route(ON, Tie::Request(&to_b), Kind::Log))
                .await
                .as_deref(),
            Some("file:///b")
        );
        // An untied one goes to A: both calls are of one client here (no
        // client named), so a late request of B's is A's client's too.
        assert_eq!(
            root_of(registry.ask(Tie::None)).await.as_deref(),
            Some("file:///a")
        );
        drop(a);
        assert!(matches!(registry.ask(Tie::None), Route::Fallback));
    }

    #[tokio::test]
    async fn an_id_of_an_earlier_connection_ties_to_nothing_on_a_new_one() {
        let registry = InFlight::default();
        let first = registry.new_connection();
        let second = registry.new_connection();
        let a = registry.enter(Some(&features("a")));
        let b = registry.enter(Some(&features("b")));
        a.sent_as(first, id(1));
        b.sent_as(second, id(1));
        assert_eq!(
            root_of(registry.route(second, Tie::Request(&id(1)), Kind::Request))
                .await
                .as_deref(),
            Some("file:///b")
        );
        drop(a);
        // A's id 1 ended on the first connection; id 1 on the second is B's.
        assert_eq!(
            root_of(registry.route(second, Tie::Request(&id(1)), Kind::Request))
                .await
                .as_deref(),
            Some("file:///b")
        );
    }

    /// Issue 32's eighth finding: client B's call ended while client A's
    /// was in flight, then its server asked (over stdio: no call named),
    /// and the request went to A's call, the only one in flight. Refused
    /// now, for as long as A's call lasts; a log message goes to the
    /// fallback.
    #[tokio::test]
    async fn a_late_message_never_goes_to_another_clients_call() {
        let registry = InFlight::default();
        let a = registry.enter(Some(&client("a", 1)));
        a.sent_as(ON, id(1));
        let b = registry.enter(Some(&client("b", 2)));
        b.sent_as(ON, id(2));
        drop(b);
        assert!(matches!(registry.ask(Tie::None), Route::Refused));
        assert!(matches!(
            registry.route(ON, Tie::None, Kind::Log),
            Route::Fallback
        ));
        // A's own later request on the one connection changes nothing.
        let again = registry.enter(Some(&client("a", 1)));
        again.sent_as(ON, id(3));
        drop(again);
        assert!(matches!(registry.ask(Tie::None), Route::Refused));
        drop(a);
        assert!(matches!(registry.ask(Tie::None), Route::Fallback));
    }

    /// Clients in turn: B's call ended before A's began, so what comes
    /// during A's call is A's (the revert of 9beb2dd: refusing it refused
    /// every sampling request behind a gateway used by one client after
    /// another). One client's own calls never shut each other out.
    #[tokio::test]
    async fn clients_in_turn_each_get_their_own_calls_requests() {
        let registry = InFlight::default();
        let b = registry.enter(Some(&client("b", 2)));
        b.sent_as(ON, id(1));
        drop(b);
        let a = registry.enter(Some(&client("a", 1)));
        a.sent_as(ON, id(2));
        assert_eq!(
            root_of(registry.ask(Tie::None)).await.as_deref(),
            Some("file:///a")
        );
        let first = registry.enter(Some(&client("a", 1)));
        first.sent_as(ON, id(3));
        drop(first);
        assert_eq!(
            root_of(registry.ask(Tie::None)).await.as_deref(),
            Some("file:///a")
        );
    }

    fn client(name: &'static str, id: u64) -> ClientFeatures {
        ClientFeatures {
            client: Some(id),
            ..features(name)
        }
    }

    /// A request without handlers of its own counts: with it and a call in
    /// flight, an untied message may be either's.
    #[tokio::test]
    async fn a_request_without_handlers_counts_and_its_messages_are_the_pools() {
        let registry = InFlight::default();
        let listing = registry.enter(None);
        assert!(matches!(registry.ask(Tie::None), Route::Fallback));
        let a = registry.enter(Some(&features("a")));
        a.sent_as(ON, id(1));
        assert!(matches!(registry.ask(Tie::None), Route::Fallback));
        drop(listing);
        assert_eq!(
            root_of(registry.ask(Tie::None)).await.as_deref(),
            Some("file:///a")
        );
    }

    #[tokio::test]
    async fn a_tie_to_an_unknown_request_says_nothing() {
        let registry = InFlight::default();
        let a = registry.enter(Some(&features("a")));
        a.sent_as(ON, id(1));
        // A task's poll, say: the one call in flight.
        let unknown = id(9);
        assert_eq!(
            root_of(registry.ask(Tie::Request(&unknown)))
                .await
                .as_deref(),
            Some("file:///a")
        );
        // Not yet noted as sent: the one unnoted registration is the one.
        let b = registry.enter(Some(&features("b")));
        assert_eq!(
            root_of(registry.ask(Tie::Request(&unknown)))
                .await
                .as_deref(),
            Some("file:///b")
        );
        b.sent_as(ON, id(2));
        // Two in flight, both noted: the fallback.
        assert!(matches!(
            registry.ask(Tie::Request(&unknown)),
            Route::Fallback
        ));
    }

    /// A log message read while a call was the only request unanswered is
    /// that call's, even handed over after the call ended; not when another
    /// client's call ended during it.
    #[tokio::test]
    async fn a_log_message_read_alongside_one_call_is_its_even_after_it_ended() {
        let registry = InFlight::default();
        let log = |id: &RequestId| registry.route(ON, Tie::Alone(id), Kind::Log);
        let a = registry.enter(Some(&client("a", 1)));
        a.sent_as(ON, id(1));
        drop(a);
        assert_eq!(root_of(log(&id(1))).await.as_deref(), Some("file:///a"));
        // Nothing in flight: untied, it would be the fallback's.
        assert!(matches!(
            registry.route(ON, Tie::None, Kind::Log),
            Route::Fallback
        ));
        let b = registry.enter(Some(&client("b", 2)));
        b.sent_as(ON, id(2));
        let c = registry.enter(Some(&client("c", 3)));
        c.sent_as(ON, id(3));
        drop(c);
        // C ended while B ran: what was read alongside B may be C's.
        assert!(matches!(log(&id(2)), Route::Fallback));
        drop(b);
        assert!(matches!(log(&id(2)), Route::Fallback));
    }
}
