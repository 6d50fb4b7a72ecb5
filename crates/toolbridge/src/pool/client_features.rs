//! What the embedding application offers MCP servers as a client: roots,
//! sampling, elicitation, where server log messages go, and whether it
//! renders MCP Apps.
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
//! Whatever cannot be tied to one request goes to the pool's handlers (the
//! rule is in `in_flight`).
//!
//! A connection is shared by every call, so what it declares comes from the
//! pool's handlers alone: give the pool a handler for each feature that
//! calls may bring their own for (one that declines will do), or servers
//! will neither see it declared nor ask for it.
//!
//! An accepted form-mode elicitation gets the schema's defaults for every
//! field it leaves out (SEP-1034), whichever handler answered.
//!
//! [`PoolOptions::client_features`]: super::PoolOptions::client_features
//! [`CallOptions::client_features`]: super::CallOptions::client_features

// Roots, sampling and logging are deprecated by SEP-2577 (rmcp 3.11 warns),
// but the 2025-11-25 and 2026-07-28 protocols still carry them, and the
// servers people run use them.
#![allow(deprecated)]

use std::sync::Arc;

use futures::future::BoxFuture;

use super::elicitation_form::Form;
use rmcp::model::{
    ClientCapabilities, CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams,
    ElicitResult, ElicitationAction, ElicitationCapability, ErrorCode, ErrorData,
    FormElicitationCapability, ListRootsResult, LoggingLevel, LoggingMessageNotificationParam,
    RootsCapabilities, SamplingCapability, UrlElicitationCapability,
};

/// The MCP Apps extension's id (SEP-1865), under a client's
/// `capabilities.extensions`.
pub const UI_EXTENSION: &str = "io.modelcontextprotocol/ui";

/// The MIME type of an MCP App's HTML, the one a host that renders apps
/// declares.
pub const APP_MIME_TYPE: &str = "text/html;profile=mcp-app";

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

    /// Whether URL-mode elicitations (a link for the user to open) are
    /// handled too; declared as the `elicitation.url` capability. Default:
    /// form mode only.
    fn url_mode(&self) -> bool {
        false
    }
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
    /// The application renders MCP Apps (SEP-1865: a tool's `ui://`
    /// resource, HTML of [`APP_MIME_TYPE`], run in a sandbox the
    /// application hosts): declared as the `io.modelcontextprotocol/ui`
    /// extension ([`UI_EXTENSION`]), as the spec has hosts declare it, so
    /// servers that keep their app tools from clients that render none
    /// list them. Only a program that renders apps sets it (the gateway,
    /// whose page does); a plain CLI pool does not.
    pub renders_apps: bool,
    /// Which of a program's clients these handlers answer for, when it
    /// serves several (the gateway's client sessions; see
    /// [`ClientFeatures::new_client`]). A request or log message a server
    /// sends naming no call goes to the only call in flight on it only when
    /// no call of another client ended while that one was in flight, since
    /// it may be a late one of that call's; otherwise the request is
    /// refused and the log message goes to the pool's handler, never to
    /// another client (the rule is in `in_flight`).
    pub client: Option<u64>,
}

impl std::fmt::Debug for ClientFeatures {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientFeatures")
            .field("roots", &self.roots.is_some())
            .field("sampling", &self.sampling.is_some())
            .field("elicitation", &self.elicitation.is_some())
            .field("logs", &self.logs.is_some())
            .field("log_level", &self.log_level)
            .field("renders_apps", &self.renders_apps)
            .field("client", &self.client)
            .finish()
    }
}

impl ClientFeatures {
    /// Each handler from `self`, else from `fallback` (a request's features
    /// over the pool's).
    pub fn or(&self, fallback: &ClientFeatures) -> ClientFeatures {
        ClientFeatures {
            roots: self.roots.clone().or_else(|| fallback.roots.clone()),
            sampling: self.sampling.clone().or_else(|| fallback.sampling.clone()),
            elicitation: self
                .elicitation
                .clone()
                .or_else(|| fallback.elicitation.clone()),
            logs: self.logs.clone().or_else(|| fallback.logs.clone()),
            log_level: self.log_level.or(fallback.log_level),
            renders_apps: self.renders_apps || fallback.renders_apps,
            client: self.client.or(fallback.client),
        }
    }

    /// A new client identity for [`ClientFeatures::client`], unique in the
    /// process.
    pub fn new_client() -> u64 {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    }

    /// The capabilities these handlers let a client declare: only those
    /// whose handler is set.
    pub fn capabilities(&self) -> ClientCapabilities {
        let mut capabilities = ClientCapabilities::default();
        if self.roots.is_some() {
            let mut roots = RootsCapabilities::default();
            roots.list_changed = Some(true);
            capabilities.roots = Some(roots);
        }
        if self.sampling.is_some() {
            capabilities.sampling = Some(SamplingCapability::default());
        }
        if let Some(elicitation) = &self.elicitation {
            let mut declared = ElicitationCapability::new();
            declared.form = Some(FormElicitationCapability::new());
            if elicitation.url_mode() {
                declared.url = Some(UrlElicitationCapability::default());
            }
            capabilities.elicitation = Some(declared);
        }
        if self.renders_apps {
            let mut ui = rmcp::model::JsonObject::new();
            ui.insert("mimeTypes".to_owned(), serde_json::json!([APP_MIME_TYPE]));
            capabilities.extensions = Some([(UI_EXTENSION.to_owned(), ui)].into());
        }
        capabilities
    }
}

/// The JSON-RPC error for a request the client has no handler for: the
/// server asked for `what` (`roots/list`, say) although it was not declared.
pub(super) fn not_offered(server: &str, what: &str) -> ErrorData {
    ErrorData::new(
        ErrorCode::METHOD_NOT_FOUND,
        format!(
            "the client does not offer {what} to server \"{server}\": the application gave \
             toolbridge no handler for it (and did not declare the capability)"
        ),
        None,
    )
}

impl ClientFeatures {
    /// `roots/list` from `server`, answered by the roots handler.
    pub(super) async fn answer_roots(&self, server: &str) -> Result<ListRootsResult, ErrorData> {
        match &self.roots {
            Some(roots) => roots.list_roots(origin(server)).await,
            None => Err(not_offered(server, "roots")),
        }
    }

    /// `sampling/createMessage` from `server`, answered by the sampling
    /// handler.
    pub(super) async fn answer_sampling(
        &self,
        server: &str,
        params: CreateMessageRequestParams,
    ) -> Result<CreateMessageResult, ErrorData> {
        match &self.sampling {
            Some(sampling) => sampling.create_message(origin(server), params).await,
            None => Err(not_offered(server, "sampling")),
        }
    }

    /// `elicitation/create` from `server`, answered by the elicitation
    /// handler; a URL-mode request only when it handles that mode.
    pub(super) async fn answer_elicitation(
        &self,
        server: &str,
        params: ElicitRequestParams,
    ) -> Result<ElicitResult, ErrorData> {
        match &self.elicitation {
            Some(handler)
                if handler.url_mode()
                    || !matches!(params, ElicitRequestParams::UrlElicitationParams { .. }) =>
            {
                // SEP-1034: an accepted form leaves out no field the schema
                // has a default for.
                let form = match &params {
                    ElicitRequestParams::FormElicitationParams {
                        requested_schema, ..
                    } => Some(Form::from_schema(requested_schema)),
                    _ => None,
                };
                let mut answer = handler.elicit(origin(server), params).await?;
                if let Some(form) = form
                    && answer.action == ElicitationAction::Accept
                {
                    answer.content = Some(form.with_defaults(answer.content.take()));
                }
                Ok(answer)
            }
            Some(_) => Err(not_offered(server, "URL-mode elicitation")),
            None => Err(not_offered(server, "elicitation")),
        }
    }
}

fn origin(server: &str) -> RequestOrigin {
    RequestOrigin {
        server: server.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use rmcp::model::ElicitationSchema;

    use super::*;

    #[tokio::test]
    async fn a_request_without_a_handler_is_a_method_not_found_naming_the_server() {
        let none = ClientFeatures::default();
        assert_eq!(none.capabilities(), ClientCapabilities::default());
        let apps = ClientFeatures {
            renders_apps: true,
            ..ClientFeatures::default()
        };
        assert_eq!(
            serde_json::to_value(apps.capabilities()).unwrap()["extensions"],
            serde_json::json!({"io.modelcontextprotocol/ui": {"mimeTypes": ["text/html;profile=mcp-app"]}})
        );
        let error = none.answer_roots("files").await.unwrap_err();
        assert_eq!(error.code, ErrorCode::METHOD_NOT_FOUND);
        assert!(
            error
                .message
                .contains("does not offer roots to server \"files\"")
        );
        let params = ElicitRequestParams::FormElicitationParams {
            meta: None,
            message: "?".into(),
            requested_schema: ElicitationSchema::new(Default::default()),
        };
        let error = none.answer_elicitation("files", params).await.unwrap_err();
        assert!(error.message.contains("elicitation"), "{}", error.message);
    }
}
