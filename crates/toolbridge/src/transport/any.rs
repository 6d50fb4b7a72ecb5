//! [`AnyTransport`]: the one factory that turns a [`ServerSpec`] into an
//! open transport, and the enum the pool holds without knowing which kind
//! it has.

use std::{borrow::Cow, sync::Arc};

use futures::{FutureExt, future::Either};
use rmcp::{
    RoleClient,
    service::{RxJsonRpcMessage, TxJsonRpcMessage},
    transport::Transport,
};

use super::{TransportError, http, sse, stdio, stdio::StderrTail, websocket};
use crate::{
    config::{ServerSpec, TransportKind, TransportSpec},
    process::ProcessTracker,
};

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
