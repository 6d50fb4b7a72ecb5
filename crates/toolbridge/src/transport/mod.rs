//! Transports: how bytes reach an MCP server.
//!
//! Each transport is its own module and implements rmcp's
//! [`Transport`] for the client role. [`create_transport`]
//! picks one from a [`ServerSpec`]; above this module nothing knows which one
//! it has: the pool sees an [`AnyTransport`].
//!
//! - [`stdio`]: a child process in its own process group.
//! - [`http`]: streamable HTTP (rmcp's client over reqwest), and the
//!   auto-detection that falls back to legacy SSE for a url without `type`.
//! - [`sse`]: the legacy HTTP+SSE transport (2024-11-05).
//! - [`websocket`]: JSON-RPC over a WebSocket, subprotocol `mcp`.
//! - The network transports' errors are [`TransportError::Remote`], naming the server, the
//!   URL with its secrets masked, and the HTTP status when there is one.

// The example server's side of the line protocol still lives in `codec` and
// `lines`; without that server it is unused.
#[cfg_attr(not(feature = "example-server"), allow(dead_code))]
mod codec;
#[cfg(feature = "http")]
pub mod http;
#[cfg_attr(not(feature = "example-server"), allow(dead_code))]
pub(crate) mod lines;
#[cfg(feature = "http")]
pub(crate) use crate::redact;
#[cfg(feature = "http")]
mod remote;
#[cfg(feature = "http")]
mod reuse;
#[cfg(feature = "http")]
pub mod sse;
pub mod stdio;
#[cfg(feature = "websocket")]
pub mod websocket;

use std::{borrow::Cow, sync::Arc};

use futures::{FutureExt, future::Either};
use rmcp::{
    RoleClient,
    service::{RxJsonRpcMessage, TxJsonRpcMessage},
    transport::Transport,
};

use crate::{
    config::{ServerSpec, TransportKind, TransportSpec},
    process::ProcessTracker,
};

pub use stdio::StderrTail;

/// Why a transport could not be created or failed while running.
///
/// Messages never contain header values or other secrets.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TransportError {
    /// The config cannot work with this transport (a missing url, say).
    #[error("server \"{server}\": {message}")]
    Config {
        /// The server's config name.
        server: String,
        /// What is wrong and what to do.
        message: String,
    },
    /// A stdio server's command is not installed.
    #[error("server \"{server}\": command \"{command}\" not found on PATH; {hint}")]
    CommandNotFound {
        /// The server's config name.
        server: String,
        /// The command as configured.
        command: String,
        /// How to install it.
        hint: String,
    },
    /// Starting the process or opening the connection failed.
    #[error("server \"{server}\": {message}")]
    Connect {
        /// The server's config name.
        server: String,
        /// What failed (with the URL, without secrets, for network servers).
        message: String,
        /// The underlying error.
        #[source]
        source: Option<Box<dyn std::error::Error + Send + Sync>>,
    },
    /// A network server could not be reached, answered with an error or
    /// broke the connection.
    #[error("server \"{server}\": {url}: {message}")]
    Remote {
        /// The server's config name.
        server: String,
        /// The URL with user info and query values masked.
        url: String,
        /// The HTTP status, when the server answered with one.
        status: Option<u16>,
        /// What happened and what to check (header values and URL secrets
        /// are masked).
        message: String,
    },
    /// An I/O error on an open connection.
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// Any other error of an open connection.
    #[error(transparent)]
    Other(Box<dyn std::error::Error + Send + Sync>),
}

/// What [`create_transport`] needs besides the spec.
#[derive(Clone)]
pub struct TransportContext {
    /// Tracks stdio servers' process groups so they die with toolbridge.
    pub tracker: Arc<ProcessTracker>,
}

/// A transport of any kind, chosen at run time.
pub enum AnyTransport {
    /// A child process over stdin/stdout.
    Stdio(stdio::StdioTransport),
    /// Streamable HTTP.
    #[cfg(feature = "http")]
    Http(http::HttpTransport),
    /// Legacy HTTP+SSE.
    #[cfg(feature = "http")]
    Sse(sse::SseTransport),
    /// WebSocket.
    #[cfg(feature = "websocket")]
    WebSocket(websocket::WebSocketTransport),
}

impl AnyTransport {
    /// Which kind of transport this is (after auto-detection).
    pub fn kind(&self) -> TransportKind {
        match self {
            AnyTransport::Stdio(_) => TransportKind::Stdio,
            #[cfg(feature = "http")]
            AnyTransport::Http(_) => TransportKind::Http,
            #[cfg(feature = "http")]
            AnyTransport::Sse(_) => TransportKind::Sse,
            #[cfg(feature = "websocket")]
            AnyTransport::WebSocket(_) => TransportKind::WebSocket,
        }
    }

    /// The server's recent stderr lines, for stdio servers.
    pub fn stderr_tail(&self) -> Option<StderrTail> {
        match self {
            AnyTransport::Stdio(t) => Some(t.stderr_tail()),
            #[cfg(feature = "http")]
            _ => None,
        }
    }
}

/// Creates the transport `spec` asks for and opens it (spawns the process, or
/// connects; for a URL without `type`, tries streamable HTTP and falls back to
/// legacy SSE).
pub async fn create_transport(
    spec: &ServerSpec,
    ctx: &TransportContext,
) -> Result<AnyTransport, TransportError> {
    match &spec.transport {
        TransportSpec::Stdio(stdio) => {
            stdio::StdioTransport::spawn(&spec.name, stdio, &ctx.tracker).map(AnyTransport::Stdio)
        }
        #[cfg(feature = "http")]
        TransportSpec::Http(remote) => http::connect(&spec.name, remote).await,
        #[cfg(feature = "http")]
        TransportSpec::Sse(remote) => sse::SseTransport::connect(&spec.name, remote)
            .await
            .map(AnyTransport::Sse),
        #[cfg(not(feature = "http"))]
        TransportSpec::Http(_) | TransportSpec::Sse(_) => Err(missing_feature(spec, "http")),
        #[cfg(not(feature = "websocket"))]
        TransportSpec::WebSocket(_) => Err(missing_feature(spec, "websocket")),
        #[cfg(feature = "websocket")]
        TransportSpec::WebSocket(remote) => {
            websocket::WebSocketTransport::connect(&spec.name, remote)
                .await
                .map(AnyTransport::WebSocket)
        }
    }
}

/// The error for a server whose transport this build left out.
#[cfg(not(all(feature = "http", feature = "websocket")))]
fn missing_feature(spec: &ServerSpec, feature: &str) -> TransportError {
    TransportError::Config {
        server: spec.name.clone(),
        message: format!(
            "this toolbridge was built without its \"{feature}\" feature, which {} servers need; \
             rebuild it with `--features {feature}`",
            spec.kind()
        ),
    }
}

impl Transport<RoleClient> for AnyTransport {
    type Error = TransportError;

    fn name() -> Cow<'static, str> {
        "toolbridge".into()
    }

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        // rmcp spawns this future for every message, moving it into the
        // task by value, so its size is paid in copies on every call. Stdio
        // and WebSocket futures are small and stay inline; the streamable
        // HTTP and SSE ones carry rmcp's and reqwest's state (2–3.5 KiB) and
        // are boxed: one allocation, nothing next to an HTTP round trip.
        let send = match self {
            AnyTransport::Stdio(t) => Either::Left(Either::Left(
                t.send(item).map(|r| r.map_err(TransportError::Io)),
            )),
            #[cfg(feature = "websocket")]
            AnyTransport::WebSocket(t) => Either::Left(Either::Right(t.send(item))),
            #[cfg(feature = "http")]
            AnyTransport::Http(t) => Either::Right(t.send(item).boxed()),
            #[cfg(feature = "http")]
            AnyTransport::Sse(t) => Either::Right(t.send(item).boxed()),
        };
        // Without some transports, the types of their (never built) arms
        // are named here.
        #[cfg(not(feature = "websocket"))]
        let send: Either<
            Either<_, futures::future::BoxFuture<'static, _>>,
            futures::future::BoxFuture<'static, _>,
        > = send;
        send
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        match self {
            AnyTransport::Stdio(t) => t.receive().await,
            #[cfg(feature = "http")]
            AnyTransport::Http(t) => t.receive().await,
            #[cfg(feature = "http")]
            AnyTransport::Sse(t) => t.receive().await,
            #[cfg(feature = "websocket")]
            AnyTransport::WebSocket(t) => t.receive().await,
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        match self {
            AnyTransport::Stdio(t) => t.close().await.map_err(TransportError::Io),
            #[cfg(feature = "http")]
            AnyTransport::Http(t) => t.close().await,
            #[cfg(feature = "http")]
            AnyTransport::Sse(t) => t.close().await,
            #[cfg(feature = "websocket")]
            AnyTransport::WebSocket(t) => t.close().await,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::future_size;

    #[test]
    #[allow(unreachable_code, unused_variables, clippy::diverging_sub_expression)]
    fn the_send_future_rmcp_spawns_per_message_stays_small() {
        // rmcp moves this future into a new task for every message; at
        // 3.5 KiB (streamable HTTP's, inline) the copies were a tenth of the
        // client's CPU in the stdio benchmark.
        let size = future_size(&|| {
            let transport: &'static mut AnyTransport = unreachable!();
            transport.send(unreachable!())
        });
        assert!(size <= 512, "AnyTransport::send's future is {size} bytes");
    }

    /// Without the `http` feature, a remote server in the config is not a
    /// compile error but a start error that says what to rebuild with
    /// (`cargo test -p toolbridge --no-default-features --features client`).
    #[cfg(not(feature = "http"))]
    #[tokio::test]
    async fn a_transport_left_out_of_the_build_is_an_error_naming_server_and_feature() {
        let ctx = TransportContext {
            tracker: Arc::new(ProcessTracker::new()),
        };
        for (kind, url) in [
            (TransportKind::Http, "http://127.0.0.1:1/mcp"),
            (TransportKind::Sse, "http://127.0.0.1:1/sse"),
            (TransportKind::WebSocket, "ws://127.0.0.1:1/ws"),
        ] {
            let spec = ServerSpec::remote("docs", kind, url);
            let Err(error) = create_transport(&spec, &ctx).await else {
                panic!("{kind} transport opened without its feature");
            };
            let message = error.to_string();
            assert!(message.contains("server \"docs\""), "{message}");
            assert!(message.contains("--features"), "{message}");
        }
    }
}
