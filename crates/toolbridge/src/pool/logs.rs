//! Server log messages (`notifications/message`): the level servers are
//! asked for, and the handing of each message to its handler at that level.
//!
//! Whose a message is (a call's, else the pool's) is decided where every
//! server-to-client message is, by the in-flight registry (`in_flight`):
//! over streamable HTTP the transport marks each log message read from a
//! request's response stream with that request's id
//! ([`RELATED_REQUEST_META`] in its `_meta`), and such a message goes to the
//! handlers of that request, even when rmcp hands it over after the
//! request's answer; a message that names no request goes to the one call
//! in flight on the server, else to the pool's handler
//! ([`PoolOptions::client_features`]).
//!
//! Levels: on the 2025 protocols the level is set once per connection with
//! `logging/setLevel`, right after the handshake, for servers that declare
//! `logging`; on 2026-07-28 (no session) each request carries it in its
//! `_meta` (`io.modelcontextprotocol/logLevel`). Either way a handler only
//! gets messages at its level or above (its request's level, else the
//! pool's): many servers log at every level whatever they are asked.
//!
//! [`PoolOptions::client_features`]: super::PoolOptions::client_features

// Logging is deprecated by SEP-2577 (rmcp 3.11 warns), but the 2025-11-25
// and 2026-07-28 protocols still carry it.
#![allow(deprecated)]

use crate::lock::LockUnpoisoned as _;
use std::sync::{Arc, Mutex};

use rmcp::{
    RoleClient,
    model::{
        ClientRequest, LoggingLevel, LoggingMessageNotificationParam, RequestMetaObject,
        ServerResult, SetLevelRequest, SetLevelRequestParams,
    },
    service::{Peer, PeerRequestOptions, ServiceError},
};

use super::{ClientFeatures, LogHandler, Pool, PoolError, RequestOrigin};

impl Pool {
    /// Asks `server` for log messages at `level` and above from now on: at
    /// once with `logging/setLevel` when it is running a 2025 protocol and
    /// declares `logging`, else with its next start (or, on 2026-07-28, with
    /// each request). The pool's handler filters at `level` too.
    ///
    /// Fails with [`PoolError::UnknownServer`] (or `Disabled`), or with the
    /// server's refusal, which leaves the new level in place for filtering.
    pub async fn set_log_level(&self, server: &str, level: LoggingLevel) -> Result<(), PoolError> {
        let slot = &self.slot(server)?;
        slot.logs.set_level(level);
        let Some(conn) = slot.current() else {
            return Ok(());
        };
        if !wants_set_level(&conn.peer) {
            return Ok(());
        }
        let timeout = slot.spec.call_timeout();
        match tokio::time::timeout(timeout, slot.logs.send_level(&conn.peer)).await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => Err(self.service_error(slot, &conn, None, e)),
            Err(_) => Err(PoolError::Timeout {
                server: server.to_owned(),
                tool: None,
                after: timeout,
            }),
        }
    }
}

/// The `_meta` key under which the streamable HTTP transport notes the id
/// of the request whose response stream a log message came on.
pub(crate) const RELATED_REQUEST_META: &str = "io.github.toolbridge/relatedRequestId";

/// A handler and the least severe level it wants.
struct Route {
    handler: Arc<dyn LogHandler>,
    level: Option<LoggingLevel>,
}

/// One server's log messages: the pool's handler and the level asked.
/// Kept by the server's slot, across reconnects.
pub(super) struct ServerLogs {
    /// The server's config name, for [`RequestOrigin`].
    server: String,
    /// The pool's handler, if any.
    pool: Option<Arc<dyn LogHandler>>,
    /// The level asked of the server ([`Pool::set_log_level`](super::Pool::set_log_level)
    /// changes it).
    level: Mutex<Option<LoggingLevel>>,
}

impl ServerLogs {
    /// The log messages of `server`, with the pool's `features`.
    pub(super) fn new(server: &str, features: &ClientFeatures) -> Self {
        ServerLogs {
            server: server.to_owned(),
            pool: features.logs.clone(),
            level: Mutex::new(features.log_level),
        }
    }

    /// The level asked of the server now.
    pub(super) fn level(&self) -> Option<LoggingLevel> {
        *self.level.lock_unpoisoned()
    }

    /// Changes the level asked of the server (and the pool handler's filter).
    pub(super) fn set_level(&self, level: LoggingLevel) {
        *self.level.lock_unpoisoned() = Some(level);
    }

    /// The `_meta` a request carries on 2026-07-28: the level its logs are
    /// wanted at, when someone takes them (`None`: nothing to add).
    pub(super) fn request_meta(
        &self,
        features: Option<&ClientFeatures>,
    ) -> Option<RequestMetaObject> {
        let own = features.filter(|f| f.logs.is_some());
        let level = match own {
            Some(f) => f.log_level.or_else(|| self.level()),
            None if self.pool.is_some() => self.level(),
            None => None,
        }?;
        let mut meta = RequestMetaObject::new();
        meta.set_log_level(level);
        Some(meta)
    }

    /// Hands `message` to the handler it belongs to, if it is at that
    /// handler's level or above: the log handler of `call` (the handlers of
    /// the call the in-flight registry says it is, see `in_flight`), else
    /// the pool's.
    pub(super) fn deliver(
        &self,
        message: LoggingMessageNotificationParam,
        call: Option<ClientFeatures>,
    ) {
        let own = call.and_then(|f| {
            f.logs.map(|handler| Route {
                handler,
                level: f.log_level,
            })
        });
        let route = match own {
            Some(route) => Route {
                level: route.level.or_else(|| self.level()),
                ..route
            },
            None => match &self.pool {
                Some(handler) => Route {
                    handler: handler.clone(),
                    level: self.level(),
                },
                None => {
                    tracing::debug!(level = ?message.level, "server log message with no handler");
                    return;
                }
            },
        };
        if route
            .level
            .is_some_and(|least| severity(message.level) < severity(least))
        {
            return;
        }
        route.handler.log(
            RequestOrigin {
                server: self.server.clone(),
            },
            message,
        );
    }

    /// Asks a 2025 server that declares `logging` for the current level
    /// (`logging/setLevel`), when one is set and someone takes the messages.
    /// A server that refuses is only noted: its messages still arrive at its
    /// own level, and are filtered here.
    pub(super) async fn send_level(&self, peer: &Peer<RoleClient>) -> Result<(), ServiceError> {
        let Some(level) = self.level() else {
            return Ok(());
        };
        if !wants_set_level(peer) {
            return Ok(());
        }
        let request =
            ClientRequest::SetLevelRequest(SetLevelRequest::new(SetLevelRequestParams::new(level)));
        match peer
            .send_request_with_option(request, PeerRequestOptions::no_options())
            .await?
            .await_response()
            .await?
        {
            ServerResult::EmptyResult(_) => Ok(()),
            _ => Err(ServiceError::UnexpectedResponse),
        }
    }
}

/// Whether `peer` is a server that takes `logging/setLevel`: one that
/// declares `logging`, on a protocol with a session (2025).
pub(super) fn wants_set_level(peer: &Peer<RoleClient>) -> bool {
    peer.peer_info().is_some_and(|info| {
        info.protocol_version.has_initialize() && info.capabilities.logging.is_some()
    })
}

/// Whether `peer` speaks a protocol where each request carries its log level
/// (2026-07-28: no session, no `logging/setLevel`).
pub(super) fn per_request_level(peer: &Peer<RoleClient>) -> bool {
    peer.peer_info()
        .is_some_and(|info| !info.protocol_version.has_initialize())
}

/// `level`'s rank, least severe first (RFC 5424 order, as MCP has it).
pub(super) fn severity(level: LoggingLevel) -> u8 {
    match level {
        LoggingLevel::Debug => 0,
        LoggingLevel::Info => 1,
        LoggingLevel::Notice => 2,
        LoggingLevel::Warning => 3,
        LoggingLevel::Error => 4,
        LoggingLevel::Critical => 5,
        LoggingLevel::Alert => 6,
        LoggingLevel::Emergency => 7,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pool::in_flight::{InFlight, Kind, Route as Whose, Tie};

    /// A server's log messages with its in-flight registry: what the
    /// connection's handler does with each message.
    struct Router {
        logs: ServerLogs,
        in_flight: InFlight,
    }

    impl Router {
        fn new(server: &str, features: &ClientFeatures) -> Self {
            Router {
                logs: ServerLogs::new(server, features),
                in_flight: InFlight::default(),
            }
        }

        fn deliver(&self, message: LoggingMessageNotificationParam, tie: Tie<'_>) {
            let call = match self.in_flight.route(0, tie, Kind::Log) {
                Whose::Call(features) => Some(features),
                Whose::Fallback | Whose::Refused => None,
            };
            self.logs.deliver(message, call);
        }

        fn deliver_any(&self, message: LoggingMessageNotificationParam) {
            self.deliver(message, Tie::None);
        }
    }

    #[derive(Default)]
    struct Collect(Mutex<Vec<String>>);

    impl LogHandler for Collect {
        fn log(&self, origin: RequestOrigin, message: LoggingMessageNotificationParam) {
            self.0
                .lock_unpoisoned()
                .push(format!("{} {}", origin.server, message.data));
        }
    }

    impl Collect {
        fn take(&self) -> Vec<String> {
            std::mem::take(&mut *self.0.lock_unpoisoned())
        }
    }

    fn message(level: LoggingLevel, text: &str) -> LoggingMessageNotificationParam {
        LoggingMessageNotificationParam::new(level, serde_json::json!(text))
    }

    fn features(handler: &Arc<Collect>, level: Option<LoggingLevel>) -> ClientFeatures {
        ClientFeatures {
            logs: Some(handler.clone()),
            log_level: level,
            ..ClientFeatures::default()
        }
    }

    #[test]
    fn the_one_request_in_flight_with_a_handler_gets_the_message() {
        let pool = Arc::new(Collect::default());
        let own = Arc::new(Collect::default());
        let router = Router::new("s", &features(&pool, None));
        {
            let _call = router.in_flight.enter(Some(&features(&own, None)));
            router.deliver_any(message(LoggingLevel::Info, "mine"));
        }
        router.deliver_any(message(LoggingLevel::Info, "after"));
        assert_eq!(own.take(), ["s \"mine\""]);
        assert_eq!(pool.take(), ["s \"after\""]);
    }

    #[test]
    fn with_two_requests_in_flight_the_pool_handler_gets_it() {
        let pool = Arc::new(Collect::default());
        let own = Arc::new(Collect::default());
        let router = Router::new("s", &features(&pool, None));
        let _mine = router.in_flight.enter(Some(&features(&own, None)));
        let _other = router.in_flight.enter(None);
        router.deliver_any(message(LoggingLevel::Info, "whose?"));
        assert!(own.take().is_empty());
        assert_eq!(pool.take(), ["s \"whose?\""]);
    }

    #[test]
    fn with_two_requests_in_flight_a_message_known_to_be_ones_goes_to_it() {
        let pool = Arc::new(Collect::default());
        let mine = Arc::new(Collect::default());
        let other = Arc::new(Collect::default());
        let router = Router::new("s", &features(&pool, None));
        let mine_call = router.in_flight.enter(Some(&features(&mine, None)));
        let other_call = router.in_flight.enter(Some(&features(&other, None)));
        mine_call.sent_as(0, rmcp::model::RequestId::Number(1));
        other_call.sent_as(0, rmcp::model::RequestId::Number(2));
        let id = rmcp::model::RequestId::Number(1);
        router.deliver(message(LoggingLevel::Info, "mine"), Tie::Request(&id));
        assert_eq!(mine.take(), ["s \"mine\""]);
        assert!(other.take().is_empty());
        assert!(pool.take().is_empty());
        // Handed over after its request ended: still its own.
        drop(mine_call);
        router.deliver(message(LoggingLevel::Info, "late"), Tie::Request(&id));
        assert_eq!(mine.take(), ["s \"late\""]);
        assert!(pool.take().is_empty());
    }

    #[test]
    fn messages_below_the_level_are_dropped() {
        let pool = Arc::new(Collect::default());
        let router = Router::new("s", &features(&pool, Some(LoggingLevel::Warning)));
        router.deliver_any(message(LoggingLevel::Info, "chatter"));
        router.deliver_any(message(LoggingLevel::Error, "broken"));
        assert_eq!(pool.take(), ["s \"broken\""]);
        router.logs.set_level(LoggingLevel::Debug);
        router.deliver_any(message(LoggingLevel::Debug, "detail"));
        assert_eq!(pool.take(), ["s \"detail\""]);
    }

    #[test]
    fn a_request_asks_for_its_own_level_or_the_pools() {
        let pool = Arc::new(Collect::default());
        let logs = ServerLogs::new("s", &features(&pool, Some(LoggingLevel::Warning)));
        let meta = logs.request_meta(None);
        assert_eq!(
            meta.and_then(|m| m.log_level()),
            Some(LoggingLevel::Warning)
        );
        let own = features(&pool, Some(LoggingLevel::Debug));
        let meta = logs.request_meta(Some(&own));
        assert_eq!(meta.and_then(|m| m.log_level()), Some(LoggingLevel::Debug));
        let silent = ServerLogs::new("s", &ClientFeatures::default());
        assert!(silent.request_meta(None).is_none());
    }
}
