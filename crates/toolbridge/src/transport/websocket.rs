//! JSON-RPC over a WebSocket (subprotocol `mcp`): the spec's "adding a
//! transport" example, with `tokio-tungstenite`.
//!
//! The handshake asks for subprotocol `mcp` and carries the config headers;
//! `wss://` uses rustls with the platform's trust store (as reqwest does).
//! After it, one task owns the socket: it writes each outgoing message as one
//! text frame, forwards each incoming text frame, answers pings, and on close
//! sends a close frame and waits briefly for the server's. When the socket
//! ends, [`Transport::receive`] returns `None` and sends fail.

use std::{collections::VecDeque, sync::Arc, time::Duration};

use futures::{SinkExt, StreamExt};
use http::{HeaderValue, header::SEC_WEBSOCKET_PROTOCOL};
use rmcp::{
    RoleClient,
    service::{RxJsonRpcMessage, TxJsonRpcMessage},
    transport::Transport,
};
use tokio::{
    net::TcpStream,
    sync::{mpsc, oneshot},
    task::JoinHandle,
};
use tokio_tungstenite::{
    Connector, MaybeTlsStream, WebSocketStream,
    tungstenite::{
        self, Message,
        client::IntoClientRequest,
        error::{CapacityError, ProtocolError, SubProtocolError},
        protocol::WebSocketConfig,
    },
};
use tokio_util::sync::{CancellationToken, DropGuard};

use super::{
    CANNOT_CONNECT, EndReason, TLS_FAILED, TransportError,
    codec::{Decoded, MAX_MESSAGE_BYTES, decode, encode_client_json},
    remote::{CONNECT_TIMEOUT, Remote, is_tls_error},
    unreadable::{Unanswered, Unreadable, over_cap},
};
use crate::config::RemoteSpec;

/// The subprotocol MCP servers expect.
pub const SUBPROTOCOL: &str = "mcp";
/// How long a clean close waits for the server's close frame.
const CLOSE_TIMEOUT: Duration = Duration::from_secs(2);
/// Messages in flight in either direction.
const CHANNEL_CAPACITY: usize = 64;

type Socket = WebSocketStream<MaybeTlsStream<TcpStream>>;
/// One outgoing message and where to report whether it was written.
type Outgoing = (
    tungstenite::Utf8Bytes,
    oneshot::Sender<Result<(), TransportError>>,
);

/// The WebSocket client transport.
pub struct WebSocketTransport {
    /// For errors.
    remote: Arc<Remote>,
    /// To the socket task.
    outgoing: mpsc::Sender<Outgoing>,
    /// Frames from the socket task; closed when the socket has ended.
    incoming: mpsc::Receiver<tungstenite::Bytes>,
    /// The socket task.
    task: Option<JoinHandle<()>>,
    /// Asks the socket task to close the connection (on close, and on drop).
    stop: CancellationToken,
    _stop_on_drop: DropGuard,
    /// The requests not answered yet, failed at once when the answer
    /// cannot be read or the socket ends for a reason of ours.
    in_flight: Unanswered,
    /// Error answers made for unreadable messages, not yet handed to rmcp.
    failed: VecDeque<RxJsonRpcMessage<RoleClient>>,
    /// Why the socket task ended the connection (a message over the cap).
    end_reason: EndReason,
}

impl WebSocketTransport {
    /// Opens the WebSocket at `remote.url` (`ws://` or `wss://`).
    pub async fn connect(server: &str, remote: &RemoteSpec) -> Result<Self, TransportError> {
        let remote = Remote::new(server, remote, "websocket", &["ws", "wss"])?;
        let mut request = remote
            .url
            .as_str()
            .into_client_request()
            .map_err(|e| handshake_error(&remote, e))?;
        let headers = request.headers_mut();
        for (name, value) in &remote.headers {
            headers.append(name, value.clone());
        }
        headers.insert(
            SEC_WEBSOCKET_PROTOCOL,
            HeaderValue::from_static(SUBPROTOCOL),
        );
        let connector = if remote.url.scheme() == "wss" {
            Connector::Rustls(
                tls_config().map_err(|e| remote.error(None, format!("TLS setup failed: {e}")))?,
            )
        } else {
            Connector::Plain
        };
        // The same cap on an incoming message as every other transport's
        // (tungstenite's default is 64 MiB).
        let config = WebSocketConfig::default()
            .max_message_size(Some(MAX_MESSAGE_BYTES))
            .max_frame_size(Some(MAX_MESSAGE_BYTES));
        let handshake = tokio_tungstenite::connect_async_tls_with_config(
            request,
            Some(config),
            true,
            Some(connector),
        );
        let (socket, _response) = tokio::time::timeout(CONNECT_TIMEOUT, handshake)
            .await
            .map_err(|_| {
                remote.timeout(format!(
                    "the WebSocket handshake did not finish within {}s",
                    CONNECT_TIMEOUT.as_secs()
                ))
            })?
            .map_err(|e| handshake_error(&remote, e))?;
        tracing::debug!(server = %remote.server, url = %remote.shown, "websocket open");

        let (outgoing, outgoing_rx) = mpsc::channel(CHANNEL_CAPACITY);
        let (incoming_tx, incoming) = mpsc::channel(CHANNEL_CAPACITY);
        let stop = CancellationToken::new();
        let end_reason = EndReason::default();
        let task = tokio::spawn(run_socket(
            remote.clone(),
            socket,
            outgoing_rx,
            incoming_tx,
            stop.clone(),
            end_reason.clone(),
        ));
        Ok(WebSocketTransport {
            remote,
            outgoing,
            incoming,
            task: Some(task),
            _stop_on_drop: stop.clone().drop_guard(),
            stop,
            in_flight: Unanswered::default(),
            failed: VecDeque::new(),
            end_reason,
        })
    }

    /// Why the transport ended the connection itself (a message over the
    /// size cap), once it has.
    pub fn end_reason(&self) -> EndReason {
        self.end_reason.clone()
    }
}

/// rustls with the platform's verifier and aws-lc-rs, as reqwest is set up.
fn tls_config() -> Result<Arc<rustls::ClientConfig>, rustls::Error> {
    use rustls_platform_verifier::BuilderVerifierExt;
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()?
        .with_platform_verifier()?
        .with_no_client_auth();
    Ok(Arc::new(config))
}

/// A failed handshake as a clear error: the HTTP status if the server
/// refused the upgrade, the network cause otherwise.
fn handshake_error(remote: &Remote, error: tungstenite::Error) -> TransportError {
    match error {
        tungstenite::Error::Http(response) => {
            let body = response
                .body()
                .as_deref()
                .map(|b| String::from_utf8_lossy(b).into_owned());
            remote.status_error(response.status(), body.as_deref())
        }
        tungstenite::Error::Io(e) if is_tls_error(&e) => {
            remote.error(None, format!("{TLS_FAILED}{e}"))
        }
        tungstenite::Error::Io(e) if e.kind() == std::io::ErrorKind::ConnectionRefused => remote
            .error(
                None,
                format!("{CANNOT_CONNECT}{e}; is the server running, and is the url right?"),
            ),
        tungstenite::Error::Io(e) => remote.error(None, format!("{CANNOT_CONNECT}{e}")),
        tungstenite::Error::Tls(e) => remote.error(None, format!("{TLS_FAILED}{e}")),
        tungstenite::Error::Protocol(ProtocolError::SecWebSocketSubProtocolError(
            SubProtocolError::NoSubProtocol | SubProtocolError::InvalidSubProtocol,
        )) => remote.error(
            None,
            format!("the server did not accept the WebSocket subprotocol \"{SUBPROTOCOL}\""),
        ),
        other => remote.error(None, format!("WebSocket handshake failed: {other}")),
    }
}

/// The socket task.
async fn run_socket(
    remote: Arc<Remote>,
    mut socket: Socket,
    mut outgoing: mpsc::Receiver<Outgoing>,
    incoming: mpsc::Sender<tungstenite::Bytes>,
    stop: CancellationToken,
    end_reason: EndReason,
) {
    loop {
        tokio::select! {
            biased;
            _ = stop.cancelled() => break,
            message = outgoing.recv() => {
                let Some((text, done)) = message else { break };
                let written = socket.send(Message::Text(text)).await;
                let failed = written.is_err();
                let _ = done.send(written.map_err(|e| {
                    remote.error(None, format!("sending failed: {e}"))
                }));
                if failed {
                    return;
                }
            }
            frame = socket.next() => match frame {
                Some(Ok(Message::Text(text))) => {
                    if !forward(text.into(), &incoming, &stop).await {
                        break;
                    }
                }
                Some(Ok(Message::Binary(bytes))) => {
                    // Not what the protocol says, but unambiguous: accept it.
                    if !forward(bytes, &incoming, &stop).await {
                        break;
                    }
                }
                Some(Ok(Message::Ping(_))) => {
                    // tungstenite has queued the pong; send it now.
                    if socket.flush().await.is_err() {
                        return;
                    }
                }
                Some(Ok(Message::Close(frame))) => {
                    tracing::debug!(server = %remote.server, ?frame, "websocket closed by the server");
                    // tungstenite answers the close; flush it, then the stream ends.
                    let _ = tokio::time::timeout(CLOSE_TIMEOUT, socket.flush()).await;
                    return;
                }
                Some(Ok(Message::Pong(_) | Message::Frame(_))) => {}
                Some(Err(tungstenite::Error::Capacity(CapacityError::MessageTooLong { size, .. }))) => {
                    // tungstenite cannot go on after it: the connection ends,
                    // and what was in flight fails with the real cause.
                    let reason = format!("the server sent a message it cannot read: {}", over_cap(size));
                    tracing::warn!(server = %remote.server, %reason, "websocket closed");
                    end_reason.set(Some(reason));
                    return;
                }
                Some(Err(e)) => {
                    let reason = remote.redactor.redact(&e.to_string()).into_owned();
                    tracing::debug!(server = %remote.server, %reason, "websocket failed");
                    return;
                }
                None => {
                    tracing::debug!(server = %remote.server, "websocket ended");
                    return;
                }
            }
        }
    }
    // A clean close: our close frame, then the server's answer (bounded).
    let _ = tokio::time::timeout(CLOSE_TIMEOUT, async {
        if socket.close(None).await.is_ok() {
            while let Some(Ok(_)) = socket.next().await {}
        }
    })
    .await;
}

/// Hands one frame to the client. False when the client is gone or the
/// transport is stopping.
async fn forward(
    frame: tungstenite::Bytes,
    incoming: &mpsc::Sender<tungstenite::Bytes>,
    stop: &CancellationToken,
) -> bool {
    tokio::select! {
        _ = stop.cancelled() => false,
        sent = incoming.send(frame) => sent.is_ok(),
    }
}

impl Transport<RoleClient> for WebSocketTransport {
    type Error = TransportError;

    fn name() -> std::borrow::Cow<'static, str> {
        "websocket".into()
    }

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let outgoing = self.outgoing.clone();
        let remote = self.remote.clone();
        self.in_flight.sent(&item);
        let text = encode_client_json(&item);
        async move {
            let closed = || remote.error(None, "the connection is closed");
            let text =
                text.map_err(|e| remote.error(None, format!("cannot encode a message: {e}")))?;
            // serde_json writes UTF-8 only; a `Utf8Bytes` frame checks it once more.
            let text = tungstenite::Utf8Bytes::try_from(text)
                .map_err(|e| remote.error(None, format!("cannot encode a message: {e}")))?;
            let (done, written) = oneshot::channel();
            outgoing.send((text, done)).await.map_err(|_| closed())?;
            written.await.map_err(|_| closed())?
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        loop {
            if let Some(failed) = self.failed.pop_front() {
                return Some(failed);
            }
            let Some(frame) = self.incoming.recv().await else {
                // The socket ended; if for a reason of ours, what was in
                // flight fails with it first (the handshake reads it from
                // `end_reason`).
                if let Some(reason) = self.end_reason.get() {
                    let unreadable = Unreadable { id: None, reason };
                    self.failed.extend(self.in_flight.fail(unreadable));
                    if let Some(failed) = self.failed.pop_front() {
                        return Some(failed);
                    }
                }
                return None;
            };
            match decode(&frame) {
                Decoded::Message(mut message) => {
                    self.in_flight.received(&mut message);
                    return Some(message);
                }
                Decoded::Unreadable(unreadable) => {
                    self.failed.extend(self.in_flight.fail(unreadable));
                }
                Decoded::Skip | Decoded::Invalid => {
                    tracing::debug!(server = %self.remote.server, "non-JSON-RPC frame skipped");
                }
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.stop.cancel();
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
        self.incoming.close();
        Ok(())
    }
}
