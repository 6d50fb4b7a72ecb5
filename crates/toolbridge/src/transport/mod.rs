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

mod codec;
pub mod http;
pub mod lines;
pub(crate) use crate::redact;
mod remote;
mod reuse;
pub mod sse;
pub mod stdio;
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
    Http(http::HttpTransport),
    /// Legacy HTTP+SSE.
    Sse(sse::SseTransport),
    /// WebSocket.
    WebSocket(websocket::WebSocketTransport),
}

impl AnyTransport {
    /// Which kind of transport this is (after auto-detection).
    pub fn kind(&self) -> TransportKind {
        match self {
            AnyTransport::Stdio(_) => TransportKind::Stdio,
            AnyTransport::Http(_) => TransportKind::Http,
            AnyTransport::Sse(_) => TransportKind::Sse,
            AnyTransport::WebSocket(_) => TransportKind::WebSocket,
        }
    }

    /// The server's recent stderr lines, for stdio servers.
    pub fn stderr_tail(&self) -> Option<StderrTail> {
        match self {
            AnyTransport::Stdio(t) => Some(t.stderr_tail()),
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
        TransportSpec::Http(remote) => http::connect(&spec.name, remote).await,
        TransportSpec::Sse(remote) => sse::SseTransport::connect(&spec.name, remote)
            .await
            .map(AnyTransport::Sse),
        TransportSpec::WebSocket(remote) => {
            websocket::WebSocketTransport::connect(&spec.name, remote)
                .await
                .map(AnyTransport::WebSocket)
        }
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
        match self {
            AnyTransport::Stdio(t) => Either::Left(Either::Left(
                t.send(item).map(|r| r.map_err(TransportError::Io)),
            )),
            AnyTransport::WebSocket(t) => Either::Left(Either::Right(t.send(item))),
            AnyTransport::Http(t) => Either::Right(t.send(item).boxed()),
            AnyTransport::Sse(t) => Either::Right(t.send(item).boxed()),
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        match self {
            AnyTransport::Stdio(t) => t.receive().await,
            AnyTransport::Http(t) => t.receive().await,
            AnyTransport::Sse(t) => t.receive().await,
            AnyTransport::WebSocket(t) => t.receive().await,
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        match self {
            AnyTransport::Stdio(t) => t.close().await.map_err(TransportError::Io),
            AnyTransport::Http(t) => t.close().await,
            AnyTransport::Sse(t) => t.close().await,
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
}
