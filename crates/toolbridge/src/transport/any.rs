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

#[cfg(feature = "websocket")]
use super::websocket;
use super::{EndReason, TransportError, stdio, stdio::StderrTail};
#[cfg(feature = "http")]
use super::{http, sse};
use crate::{
    config::{ServerSpec, TransportKind, TransportSpec},
    process::ProcessTracker,
};
/// What [`create_transport`] needs besides the spec.
#[derive(Clone)]
pub struct TransportContext {
    /// Tracks stdio servers' process groups so they die with toolbridge.
    pub tracker: Arc<ProcessTracker>,
    /// May a remote server's 401 start a browser sign-in (see
    /// `PoolOptions::sign_in`).
    #[cfg(feature = "auth")]
    pub sign_in: Option<crate::auth::SignIn>,
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

    /// Why the transport ends the connection by itself, once it does (for
    /// the transports that can: stdio, streamable HTTP, WebSocket).
    pub fn end_reason(&self) -> Option<EndReason> {
        match self {
            AnyTransport::Stdio(t) => Some(t.end_reason()),
            #[cfg(feature = "http")]
            AnyTransport::Http(t) => Some(t.end_reason()),
            #[cfg(feature = "websocket")]
            AnyTransport::WebSocket(t) => Some(t.end_reason()),
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
        TransportSpec::Http(remote) => http::connect(&spec.name, remote, ctx).await,
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
            #[cfg(feature = "auth")]
            sign_in: None,
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
