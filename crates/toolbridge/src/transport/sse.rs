//! The legacy HTTP+SSE transport (protocol 2024-11-05), which rmcp 3 no
//! longer has a client for.
//!
//! The client opens one long `GET` event stream. The server's first event,
//! `endpoint`, names the URL (relative to the stream's, with its own opaque
//! query such as `?sessionId=`) to which the client POSTs each JSON-RPC
//! message; the server answers 202 and sends responses and notifications as
//! `message` events on the stream. A reader task owns the stream; when the
//! stream ends, [`Transport::receive`] returns `None`, so every call still
//! waiting fails at once, and later sends fail without trying.
//!
//! Events are parsed by our own parser (`sse/events.rs`), which holds at
//! most 16 MiB of one, the cap on a message of every transport: a larger
//! event ends the connection with an error that says so.

mod events;

use std::{
    collections::VecDeque,
    sync::{Arc, OnceLock},
    time::Duration,
};

use futures::{StreamExt, stream::BoxStream};
use http::StatusCode;
use rmcp::{
    RoleClient,
    service::{RxJsonRpcMessage, TxJsonRpcMessage},
    transport::Transport,
};
use tokio::{sync::mpsc, task::JoinHandle};
use tokio_util::sync::{CancellationToken, DropGuard};
use url::Url;

use self::events::{Events, EventsError};
use super::{
    TransportError,
    codec::{Decoded, MAX_MESSAGE_BYTES, decode, encode_client_json},
    redact::shown_url,
    remote::Remote,
    unreadable::{Unanswered, Unreadable},
};
use crate::config::RemoteSpec;

/// How long the server may take to open the stream and send its `endpoint`
/// event.
pub const ENDPOINT_TIMEOUT: Duration = Duration::from_secs(10);
/// How long one POST may take; servers answer 202 at once and reply on the stream.
const POST_TIMEOUT: Duration = Duration::from_secs(30);
/// Messages read from the stream but not yet received by the client.
const CHANNEL_CAPACITY: usize = 64;

/// The legacy HTTP+SSE client transport.
pub struct SseTransport {
    /// Messages from the event stream, in order; closed when the stream ends.
    messages: mpsc::Receiver<String>,
    /// What `send` needs, shared with its futures.
    poster: Arc<Poster>,
    /// The task reading the event stream.
    reader: Option<JoinHandle<()>>,
    /// Stops the reader (on close, and on drop through the guard).
    stop: CancellationToken,
    _stop_on_drop: DropGuard,
    /// The requests not answered yet, failed at once when the answer
    /// cannot be read or the stream ends over one.
    in_flight: Unanswered,
    /// Error answers made for unreadable messages, not yet handed to rmcp.
    failed: VecDeque<RxJsonRpcMessage<RoleClient>>,
}

/// Sends messages to the server's endpoint.
struct Poster {
    remote: Arc<Remote>,
    client: reqwest::Client,
    /// The URL from the `endpoint` event, resolved against the stream's.
    endpoint: Url,
    /// Whether and why the event stream has ended.
    ended: Arc<StreamEnd>,
}

/// The end of the event stream, shared by the reader task and the poster:
/// once the stream has ended nothing sent could be answered.
#[derive(Default)]
struct StreamEnd {
    /// Cancelled when the stream has ended.
    token: CancellationToken,
    /// Why, when it was not the server closing it.
    reason: OnceLock<String>,
}

/// Why [`SseTransport::open`] failed.
#[derive(Debug)]
pub(crate) enum SseOpenError {
    /// The URL does not serve an event stream at all (an error status or
    /// another content type): not a legacy SSE server.
    NotSse(TransportError),
    /// An SSE server, or none at all, that failed.
    Failed(TransportError),
}

impl SseTransport {
    /// Opens the event stream at `remote.url` and waits (at most
    /// [`ENDPOINT_TIMEOUT`]) for the server's `endpoint` event.
    pub async fn connect(server: &str, remote: &RemoteSpec) -> Result<Self, TransportError> {
        Self::connect_with_timeout(server, remote, ENDPOINT_TIMEOUT).await
    }

    /// [`connect`](Self::connect) with another limit on the wait for the
    /// `endpoint` event.
    pub async fn connect_with_timeout(
        server: &str,
        remote: &RemoteSpec,
        endpoint_timeout: Duration,
    ) -> Result<Self, TransportError> {
        let remote = Remote::new(server, remote, "sse", &["http", "https"])?;
        let client = remote.http_client()?;
        Self::open(remote, client, endpoint_timeout)
            .await
            .map_err(|e| match e {
                SseOpenError::NotSse(e) | SseOpenError::Failed(e) => e,
            })
    }

    pub(crate) async fn open(
        remote: Arc<Remote>,
        client: reqwest::Client,
        endpoint_timeout: Duration,
    ) -> Result<Self, SseOpenError> {
        let deadline = tokio::time::Instant::now() + endpoint_timeout;
        let no_endpoint = || {
            SseOpenError::Failed(remote.timeout(format!(
                "no `endpoint` event within {:.1}s; is this a legacy SSE (2024-11-05) endpoint?",
                endpoint_timeout.as_secs_f64()
            )))
        };
        let request = client
            .get(remote.url.clone())
            .header(http::header::ACCEPT, "text/event-stream")
            .header(http::header::CACHE_CONTROL, "no-cache")
            .send();
        let response = match tokio::time::timeout_at(deadline, request).await {
            Err(_) => return Err(no_endpoint()),
            Ok(Err(e)) => return Err(SseOpenError::Failed(remote.request_error(&e))),
            Ok(Ok(response)) => response,
        };
        let status = response.status();
        if !status.is_success() {
            let body = tokio::time::timeout_at(deadline, response.text())
                .await
                .ok()
                .and_then(Result::ok);
            return Err(SseOpenError::NotSse(
                remote.status_error(status, body.as_deref()),
            ));
        }
        let content_type = response
            .headers()
            .get(http::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_owned();
        if !content_type
            .to_ascii_lowercase()
            .starts_with("text/event-stream")
        {
            return Err(SseOpenError::NotSse(remote.error(
                Some(status.as_u16()),
                format!("not an event stream (Content-Type {content_type:?})"),
            )));
        }
        let mut events = Events::new(response.bytes_stream().boxed(), MAX_MESSAGE_BYTES);

        let endpoint = match tokio::time::timeout_at(deadline, next_endpoint(&mut events)).await {
            Err(_) => return Err(no_endpoint()),
            Ok(Err(reason)) => return Err(SseOpenError::Failed(remote.error(None, reason))),
            Ok(Ok(endpoint)) => endpoint,
        };
        let endpoint = remote.url.join(endpoint.trim()).map_err(|e| {
            SseOpenError::Failed(remote.error(
                None,
                format!("the `endpoint` event's URL is not valid: {e}"),
            ))
        })?;
        if endpoint.origin() != remote.url.origin() {
            // The config headers (credentials) would go to another host.
            return Err(SseOpenError::Failed(remote.error(
                None,
                format!(
                    "the server's message endpoint {} is on another origin; refusing to send it the config headers",
                    shown_url(&endpoint)
                ),
            )));
        }
        tracing::debug!(
            server = %remote.server,
            endpoint = %shown_url(&endpoint),
            "legacy SSE stream open"
        );

        let (tx, messages) = mpsc::channel(CHANNEL_CAPACITY);
        let stop = CancellationToken::new();
        let ended = Arc::new(StreamEnd::default());
        let reader = tokio::spawn(read_events(
            remote.clone(),
            events,
            tx,
            stop.clone(),
            ended.clone(),
        ));
        Ok(SseTransport {
            messages,
            poster: Arc::new(Poster {
                remote,
                client,
                endpoint,
                ended,
            }),
            reader: Some(reader),
            _stop_on_drop: stop.clone().drop_guard(),
            stop,
            in_flight: Unanswered::default(),
            failed: VecDeque::new(),
        })
    }
}

/// Reads events until the `endpoint` event and returns its data.
async fn next_endpoint<B: AsRef<[u8]>>(
    events: &mut Events<BoxStream<'static, reqwest::Result<B>>, B>,
) -> Result<String, String> {
    loop {
        match events.next().await {
            Some(Ok(event)) if event.event == "endpoint" => {
                return Some(event.data)
                    .filter(|d| !d.trim().is_empty())
                    .ok_or_else(|| "the `endpoint` event has no URL".to_owned());
            }
            Some(Ok(event)) => {
                tracing::debug!(event = %event.event, "event before `endpoint` ignored");
            }
            Some(Err(e)) => return Err(format!("the event stream failed: {e}")),
            None => return Err("the event stream closed before the `endpoint` event".to_owned()),
        }
    }
}

/// The reader task: forwards `message` events until the stream ends or `stop`.
async fn read_events<B: AsRef<[u8]>>(
    remote: Arc<Remote>,
    mut events: Events<BoxStream<'static, reqwest::Result<B>>, B>,
    tx: mpsc::Sender<String>,
    stop: CancellationToken,
    ended: Arc<StreamEnd>,
) {
    let _ended = ended.token.clone().drop_guard();
    loop {
        let event = tokio::select! {
            _ = stop.cancelled() => return,
            event = events.next() => event,
        };
        let event = match event {
            Some(Ok(event)) => event,
            Some(Err(EventsError::TooLarge(e))) => {
                let reason = format!("{e}; the connection is closed");
                tracing::warn!(server = %remote.server, url = %remote.shown, "{reason}");
                let _ = ended.reason.set(reason);
                return;
            }
            Some(Err(e)) => {
                let reason = remote.redactor.redact(&e.to_string()).into_owned();
                tracing::debug!(server = %remote.server, %reason, "legacy SSE stream failed");
                return;
            }
            None => {
                tracing::debug!(server = %remote.server, "legacy SSE stream closed by the server");
                return;
            }
        };
        match event.event.as_str() {
            "" | "message" => {}
            other => {
                tracing::debug!(server = %remote.server, event = other, "event ignored");
                continue;
            }
        }
        tokio::select! {
            _ = stop.cancelled() => return,
            sent = tx.send(event.data) => if sent.is_err() { return },
        }
    }
}

impl Poster {
    async fn post(&self, message: TxJsonRpcMessage<RoleClient>) -> Result<(), TransportError> {
        if self.ended.token.is_cancelled() {
            return Err(self.remote.error(
                None,
                match self.ended.reason.get() {
                    Some(reason) => reason.as_str(),
                    None => "the connection is closed (the server ended the event stream)",
                },
            ));
        }
        let body = encode_client_json(&message).map_err(|e| {
            self.remote
                .error(None, format!("cannot encode a message: {e}"))
        })?;
        let response = self
            .client
            .post(self.endpoint.clone())
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .body(body)
            .timeout(POST_TIMEOUT)
            .send()
            .await
            .map_err(|e| self.remote.request_error(&e))?;
        let status = response.status();
        if status.is_success() {
            return Ok(());
        }
        let body = response.text().await.ok();
        let mut error = self.remote.status_error(status, body.as_deref());
        if status == StatusCode::NOT_FOUND
            && let TransportError::Remote { message, .. } = &mut error
        {
            message.push_str(" (the server no longer knows this session)");
        }
        Err(error)
    }
}

impl Transport<RoleClient> for SseTransport {
    type Error = TransportError;

    fn name() -> std::borrow::Cow<'static, str> {
        "sse".into()
    }

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.in_flight.sent(&item);
        let poster = self.poster.clone();
        async move { poster.post(item).await }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        loop {
            if let Some(failed) = self.failed.pop_front() {
                return Some(failed);
            }
            let Some(data) = self.messages.recv().await else {
                // The stream ended; over an event too large to read, what
                // was in flight fails with that reason first.
                if let Some(reason) = self.poster.ended.reason.get() {
                    let unreadable = Unreadable {
                        id: None,
                        reason: reason.clone(),
                    };
                    self.failed.extend(self.in_flight.fail(unreadable));
                    if let Some(failed) = self.failed.pop_front() {
                        return Some(failed);
                    }
                }
                return None;
            };
            match decode(data.as_bytes()) {
                Decoded::Message(mut message) => {
                    self.in_flight.received(&mut message);
                    return Some(message);
                }
                Decoded::Unreadable(unreadable) => {
                    self.failed.extend(self.in_flight.fail(unreadable));
                }
                Decoded::Skip | Decoded::Invalid => tracing::debug!(
                    server = %self.poster.remote.server,
                    "non-JSON-RPC message skipped"
                ),
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.stop.cancel();
        if let Some(reader) = self.reader.take() {
            // Dropping the stream closes the GET connection; the server ends the session.
            let _ = reader.await;
        }
        self.messages.close();
        Ok(())
    }
}
