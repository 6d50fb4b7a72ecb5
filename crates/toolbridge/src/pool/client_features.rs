//! What the embedding application offers MCP servers as a client: roots,
//! sampling, elicitation, and where server log messages go.
//!
//! Each feature is declared to servers only when the application supplies a
//! handler for it ([`ClientFeatures`] with the field set), because servers
//! hide tools from clients that do not declare what those tools need.
//!
//! Features are given once for the pool ([`PoolOptions::client_features`]),
//! and may be given per request ([`CallOptions::client_features`]): a
//! server-to-client request, or a log message, that belongs to a request in
//! flight goes to that request's handlers first, so a program serving
//! several clients (the gateway) routes each to the client that caused it.
//! Whatever cannot be tied to one request goes to the pool's handlers.
//!
//! [`PoolOptions::client_features`]: super::PoolOptions::client_features
//! [`CallOptions::client_features`]: super::CallOptions::client_features

// Roots, sampling and logging are deprecated by SEP-2577 (rmcp 3.11 warns),
// but the 2025-11-25 and 2026-07-28 protocols still carry them, and the
// servers people run use them.
#![allow(deprecated)]

use std::sync::Arc;

use futures::future::BoxFuture;
use rmcp::model::{
    CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams, ElicitResult, ErrorData,
    ListRootsResult, LoggingLevel, LoggingMessageNotificationParam,
};

/// Which server asks, for handlers that serve several.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestOrigin {
    /// The server's config name.
    pub server: String,
}

/// Answers `roots/list`: the folders the application lets servers see.
pub trait RootsProvider: Send + Sync {
    /// The roots to give `origin`'s server.
    fn list_roots(
        &self,
        origin: RequestOrigin,
    ) -> BoxFuture<'_, Result<ListRootsResult, ErrorData>>;
}

/// Answers `sampling/createMessage`: asks the application's LLM.
pub trait SamplingHandler: Send + Sync {
    /// The model's answer to `params`, asked by `origin`'s server.
    fn create_message(
        &self,
        origin: RequestOrigin,
        params: CreateMessageRequestParams,
    ) -> BoxFuture<'_, Result<CreateMessageResult, ErrorData>>;
}

/// Answers `elicitation/create`: asks the user.
pub trait ElicitationHandler: Send + Sync {
    /// The user's answer to `params`, asked by `origin`'s server.
    fn elicit(
        &self,
        origin: RequestOrigin,
        params: ElicitRequestParams,
    ) -> BoxFuture<'_, Result<ElicitResult, ErrorData>>;
}

/// Receives the log messages servers send (`notifications/message`).
pub trait LogHandler: Send + Sync {
    /// One message from `origin`'s server.
    fn log(&self, origin: RequestOrigin, message: LoggingMessageNotificationParam);
}

/// The client features an application supplies; a feature is declared to
/// servers only when its handler is set.
#[derive(Clone, Default)]
pub struct ClientFeatures {
    /// Answers `roots/list`; declares the `roots` capability (with
    /// `listChanged`).
    pub roots: Option<Arc<dyn RootsProvider>>,
    /// Answers `sampling/createMessage`; declares `sampling`.
    pub sampling: Option<Arc<dyn SamplingHandler>>,
    /// Answers `elicitation/create`; declares `elicitation` (form mode).
    pub elicitation: Option<Arc<dyn ElicitationHandler>>,
    /// Receives server log messages.
    pub logs: Option<Arc<dyn LogHandler>>,
    /// The least severe level asked of servers (`logging/setLevel`, or per
    /// request on 2026-07-28); `None` leaves each server at its default.
    pub log_level: Option<LoggingLevel>,
}

impl std::fmt::Debug for ClientFeatures {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientFeatures")
            .field("roots", &self.roots.is_some())
            .field("sampling", &self.sampling.is_some())
            .field("elicitation", &self.elicitation.is_some())
            .field("logs", &self.logs.is_some())
            .field("log_level", &self.log_level)
            .finish()
    }
}
