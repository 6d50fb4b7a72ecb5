//! Stateless (2026-07-28) `tools/call` and `tools/list` POSTs answered
//! directly, without a per-request rmcp service.
//!
//! rmcp's streamable HTTP server serves each stateless request by starting a
//! whole service for it (a peer, its channels, a serve loop and a handler
//! task), which was most of the gateway's time per call. Here the JSON-RPC
//! body is parsed once and handed to the same functions the rmcp handler
//! ([`crate::session`]) calls; the answer goes back as `application/json`.
//!
//! Only requests rmcp would accept as they are come here: no session, the
//! 2026-07-28 version in the `MCP-Protocol-Version` header and in complete
//! request `_meta`, `Mcp-Method` / `Mcp-Name` headers matching the body, an
//! `Accept` naming JSON and event streams. A call whose client can be asked
//! something mid-call (it declares elicitation, sampling or roots) or
//! answers such a question (`requestState`) is held as rmcp's path holds it
//! ([`crate::held_calls`]). Everything else (sessions, other methods, every
//! malformed request and its error) goes to rmcp's service unchanged
//! (`Lane::Rmcp`).
//!
//! Progress and log messages of the call (which rmcp sends on the
//! request's event stream) are not lost: when one comes before the result,
//! the answer is an event stream after all, with the messages in order and
//! then the result, as rmcp would send it. (rmcp's client puts a progress
//! token on every request, so a token alone cannot mean "stream this".)

// Logging is deprecated by SEP-2577 (rmcp 3.11 warns), but 2026-07-28
// clients still ask for log messages in a request's `_meta`.
#![allow(deprecated)]

use std::{convert::Infallible, sync::Arc, time::Duration};

use axum::{
    body::{Body, Bytes},
    response::{IntoResponse, Response},
};
use futures::StreamExt;
use http::{HeaderMap, HeaderValue, Method, Request, StatusCode, header};
use rmcp::{
    model::{
        CallToolRequestParams, ErrorCode, ErrorData, JsonRpcVersion2_0, LoggingMessageNotification,
        LoggingMessageNotificationParam, PaginatedRequestParams, ProgressNotification,
        ProgressNotificationParam, ProgressToken, ProtocolVersion, RequestId, RequestMetaObject,
        ServerJsonRpcMessage, ServerNotification, ServerResult,
    },
    transport::streamable_http_server::{
        StreamableHttpService, session::local::LocalSessionManager,
    },
};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use toolbridge::pool::{CallOptions, ClientFeatures, LogHandler, RequestOrigin};

use crate::{
    Gateway,
    direct_sessions::{DirectCall, DirectSessions, Taken},
    identity::ClientIdentity,
    limits::{self, Caps, Client},
    peer::Peer,
    profile::ViewName,
    session::{self, Caller, ProgressRelay},
    session_owners::SessionOwners,
    trace_context::TraceContext,
};

/// The largest body read here; a larger one goes to rmcp, which enforces
/// its own limit (the same 4 MiB).
pub(crate) const MAX_BODY: u64 = 4 * 1024 * 1024;
/// The keep-alive comment interval of an event-stream answer (rmcp's).
const KEEP_ALIVE: Duration = Duration::from_secs(15);
/// The header naming a 2025-11-25 client's session.
const SESSION_HEADER: &str = "mcp-session-id";
/// What rmcp puts before a Base64-encoded header value (SEP-2243).
const BASE64_HEADER_PREFIX: &str = "=?base64?";

/// rmcp's streamable HTTP service as the gateway configures it.
pub type RmcpService =
    StreamableHttpService<crate::request_spans::Traced<session::Session>, LocalSessionManager>;

/// The `/mcp` endpoint (or a profile's `/mcp/NAME`): stateless calls
/// answered here, the rest by rmcp.
#[derive(Clone)]
pub struct Endpoint {
    gateway: Gateway,
    view: ViewName,
    rmcp: Arc<RmcpService>,
    owners: Arc<SessionOwners>,
    direct: Arc<DirectSessions>,
}

/// The request this module serves, parsed.
enum Lean {
    Call {
        id: RequestId,
        params: CallToolRequestParams,
        caller: Caller,
        log_level: Option<rmcp::model::LoggingLevel>,
        progress: Option<ProgressToken>,
        /// The application, from `_meta`'s clientInfo (the page's Home).
        app: Option<Box<rmcp::model::Implementation>>,
        /// The client's W3C trace context (`_meta`, else the headers);
        /// boxed, as most requests have none.
        trace: Option<Box<TraceContext>>,
    },
    /// `tools/list`, with the client's trace context if it sent one.
    List(
        RequestId,
        Option<PaginatedRequestParams>,
        Option<Box<TraceContext>>,
    ),
}

/// Who answers a request.
enum Lane {
    /// This module.
    Lean(Lean),
    /// rmcp's service, with the request as it came (its body already read
    /// when it was looked at).
    Rmcp(Request<Body>),
    /// A session's `tools/call`, past rmcp's session ([`crate::direct_sessions`]).
    Session(Box<DirectCall>),
}

impl Endpoint {
    /// The endpoint of `gateway`'s `view` in front of `rmcp` (whose
    /// sessions have the same view).
    pub fn new(
        gateway: Gateway,
        view: ViewName,
        rmcp: RmcpService,
        owners: SessionOwners,
        direct: Arc<DirectSessions>,
    ) -> Endpoint {
        Endpoint {
            gateway,
            view,
            rmcp: Arc::new(rmcp),
            owners: Arc::new(owners),
            direct,
        }
    }

    /// Answers one HTTP request to `/mcp`, within the caps of its client
    /// ([`crate::limits`]).
    pub async fn handle(self, request: Request<Body>) -> Response {
        let client = ClientIdentity::of(request.extensions()).cloned();
        let session = request
            .headers()
            .get(SESSION_HEADER)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        if let (Some(id), Some(client)) = (&session, &client)
            && !self.owners.permits(id, &client.key()).await
        {
            // As rmcp answers a session it does not know.
            return (StatusCode::NOT_FOUND, "Not Found: Session not found").into_response();
        }
        let (request, admitted) = match admit(self.gateway.caps(), request).await {
            Ok(admitted) => admitted,
            Err(refused) => return refused,
        };
        // The rights and rates of a `tools/call` ([`crate::admission`]).
        let request = match crate::admission::check(
            &self.gateway,
            &self.view,
            client.as_ref(),
            request,
        )
        .await
        {
            Ok(request) => request,
            Err(refused) => return refused,
        };
        let (opening, call) = match admitted {
            Admitted::Free => (None, None),
            Admitted::Session(slot) => (Some(slot), None),
            Admitted::Call(slot) => (None, Some(slot)),
        };
        let lane = match &session {
            Some(id) if self.direct.knows(id) => match self.direct.take(id, request).await {
                Ok(Taken::Call(call)) => Ok(Lane::Session(Box::new(call))),
                Ok(Taken::Rmcp(request)) => Ok(Lane::Rmcp(request)),
                Err(refused) => Err(refused),
            },
            Some(_) => Ok(Lane::Rmcp(request)),
            None => lane(request).await,
        };
        let response = match lane {
            Ok(Lane::Lean(lean)) => self.answer(lean, client).await,
            Ok(Lane::Session(direct)) => direct.answer(client, call.clone()).await,
            // Boxed: rmcp's service future (~6 KiB) would sit in every
            // request's future, which axum moves into a box of its own.
            Ok(Lane::Rmcp(request)) => {
                let rmcp = Box::pin(self.rmcp.handle(request));
                let response = match opening {
                    Some(slot) => limits::opening(slot, rmcp).await.map(Body::new),
                    None => rmcp.await.map(Body::new),
                };
                if session.is_none()
                    && let Some(client) = client
                    && let Some(opened) = response
                        .headers()
                        .get(SESSION_HEADER)
                        .and_then(|v| v.to_str().ok())
                {
                    self.owners.opened(opened, client.key()).await;
                }
                response
            }
            Err(response) => response,
        };
        match call {
            // An event stream carries the answer later: the request is in
            // flight until it ends.
            Some(slot) if is_event_stream(&response) => response.map(|body| {
                Body::from_stream(body.into_data_stream().map(move |chunk| {
                    let _in_flight = &slot;
                    chunk
                }))
            }),
            _ => response,
        }
    }

    async fn answer(&self, lean: Lean, client: Option<ClientIdentity>) -> Response {
        match lean {
            Lean::List(id, params, trace) => {
                // Its span, as rmcp's requests get theirs (`request_spans`).
                let served = crate::tracing_export::Served {
                    method: "tools/list",
                    target: None,
                    client: client.as_ref(),
                    view: &self.view,
                    incoming: trace.as_deref(),
                };
                let mut span = self.gateway.tracing().served(served, Vec::new);
                let requester = session::Requester {
                    view: &self.view,
                    client: client.as_ref(),
                    app: None,
                    trace: None,
                };
                let result = session::list_tools(&self.gateway, requester, params)
                    .await
                    .map(ServerResult::ListToolsResult);
                span.finish_with(&result);
                json_answer(id, result)
            }
            Lean::Call {
                id,
                params,
                caller,
                log_level,
                progress,
                app,
                trace,
            } => {
                if let Some(app) = &app {
                    self.gateway.connected_clients().stateless_call(
                        app,
                        &self.view,
                        client.as_ref(),
                    );
                }
                let sender = Sender { client, trace };
                self.call(id, params, caller, log_level, progress, sender)
                    .await
            }
        }
    }

    /// `tools/call`: run as its own task, its progress (under the client's
    /// token) and log messages collected; JSON when the result comes first.
    /// In a task, each wake of the upstream call polls the call alone, not
    /// the whole HTTP connection's future above it (polled inline, a held
    /// call made 10-20% fewer calls per second at 64 in flight,
    /// docs/performance.md). A client that goes away cancels the call,
    /// audited as such.
    async fn call(
        &self,
        id: RequestId,
        params: CallToolRequestParams,
        caller: Caller,
        log_level: Option<rmcp::model::LoggingLevel>,
        progress: Option<ProgressToken>,
        sender: Sender,
    ) -> Response {
        let (outbox, mut messages) = mpsc::unbounded_channel();
        let progress = progress.map(|token| {
            let outbox = outbox.clone();
            ProgressRelay::Direct(Arc::new(move |mut params: ProgressNotificationParam| {
                params.progress_token = token.clone();
                let notification =
                    ServerNotification::ProgressNotification(ProgressNotification::new(params));
                let _ = outbox.send(ServerJsonRpcMessage::notification(notification));
            }))
        });
        let options = CallOptions {
            client_features: Some(ClientFeatures {
                logs: Some(
                    self.gateway
                        .upstream_logs()
                        .tee(Some(Arc::new(Outbox(outbox)))),
                ),
                log_level,
                // A stateless request is a client of its own.
                client: Some(ClientFeatures::new_client()),
                ..ClientFeatures::default()
            }),
            ..CallOptions::default()
        };
        let ct = CancellationToken::new();
        let gateway = self.gateway.clone();
        let view = self.view.clone();
        let task_ct = ct.clone();
        // Boxed: moved into the task's cell by value, the call's state
        // machine (~6 KiB) was copied at the spawn and again as it finished.
        let mut task = tokio::spawn(Box::pin(async move {
            let requester = session::Requester {
                view: &view,
                client: sender.client.as_ref(),
                app: None,
                trace: sender.trace.as_deref(),
            };
            session::call_tool(
                &gateway, requester, params, options, caller, progress, &task_ct,
            )
            .await
            .map(ServerResult::from)
        }));
        // Dropped with this future or the event stream (the client went
        // away): the call ends.
        let cancel_on_drop = ct.drop_guard();
        let result = tokio::select! {
            biased;
            Some(first) = messages.recv() => {
                return event_stream(Some(first), Pending {
                    messages,
                    task: Some(task),
                    result: None,
                    id,
                    _cancel_on_drop: cancel_on_drop,
                });
            }
            joined = &mut task => finished(joined),
        };
        match messages.try_recv() {
            // A log message sent just before the result.
            Ok(first) => event_stream(
                Some(first),
                Pending {
                    messages,
                    task: None,
                    result: Some(result),
                    id,
                    _cancel_on_drop: cancel_on_drop,
                },
            ),
            Err(_) => json_answer(id, result),
        }
    }
}

/// Who sent a stateless call: the client, and the trace it is part of.
struct Sender {
    client: Option<ClientIdentity>,
    trace: Option<Box<TraceContext>>,
}

/// The result of the call task (a task that panicked is an internal error).
fn finished(
    joined: Result<Result<ServerResult, ErrorData>, tokio::task::JoinError>,
) -> Result<ServerResult, ErrorData> {
    joined.unwrap_or_else(|e| {
        Err(ErrorData::internal_error(
            format!("the gateway's call failed: {e}"),
            None,
        ))
    })
}

/// Which lane `request` takes; `Err` when its body could not be read.
async fn lane(request: Request<Body>) -> Result<Lane, Response> {
    if !lean_headers(request.method(), request.headers()) {
        return Ok(Lane::Rmcp(request));
    }
    let (parts, body) = request.into_parts();
    let bytes = axum::body::to_bytes(body, MAX_BODY as usize)
        .await
        .map_err(|_| {
            (
                StatusCode::BAD_REQUEST,
                "Bad Request: the request body could not be read",
            )
                .into_response()
        })?;
    match parse(&parts.headers, &bytes) {
        Some(lean) => Ok(Lane::Lean(lean)),
        None => Ok(Lane::Rmcp(Request::from_parts(parts, Body::from(bytes)))),
    }
}

/// What a request holds under its client's caps while it is served.
enum Admitted {
    /// Nothing counted (not a POST, not a request, not over a connection
    /// the accept loop made).
    Free,
    /// An `initialize`: the slot of the session it opens.
    Session(limits::SessionSlot),
    /// Any other request: its place among the client's requests in flight
    /// (also held by the request's handler, [`limits::Handled`]).
    Call(Arc<limits::CallSlot>),
}

/// The JSON-RPC fields [`admit`] looks at.
#[derive(serde::Deserialize)]
struct Probe {
    id: Option<serde_json::Value>,
    method: Option<String>,
}

/// Counts `request` against its client's caps, or the answer that refuses
/// it. Its body is read (up to [`MAX_BODY`]; a larger one goes on unread,
/// for rmcp to refuse) and put back.
async fn admit(
    caps: &Arc<Caps>,
    request: Request<Body>,
) -> Result<(Request<Body>, Admitted), Response> {
    let peer = request
        .extensions()
        .get::<axum::extract::ConnectInfo<Peer>>()
        .map(|info| info.0);
    let too_big = only(request.headers(), header::CONTENT_LENGTH.as_str())
        .and_then(|v| v.parse::<u64>().ok())
        .is_some_and(|len| len > MAX_BODY);
    let (Some(peer), Method::POST, false) = (peer, request.method().clone(), too_big) else {
        return Ok((request, Admitted::Free));
    };
    let (parts, body) = request.into_parts();
    // Without a length (chunked) the body is read up to the limit too, so
    // no encoding goes around the caps.
    let bytes = axum::body::to_bytes(body, MAX_BODY as usize)
        .await
        .map_err(|_| {
            (
                StatusCode::PAYLOAD_TOO_LARGE,
                "Payload Too Large: the request body could not be read within 4 MiB",
            )
                .into_response()
        })?;
    let probe = serde_json::from_slice::<Probe>(&bytes).ok();
    let session = only(&parts.headers, "mcp-session-id");
    let client = Client::of(&peer);
    let admitted = match probe {
        Some(Probe {
            id: Some(id),
            method: Some(method),
        }) => {
            let counted = if method == "initialize" && session.is_none() {
                caps.open_session(&client).map(Admitted::Session)
            } else {
                caps.begin_call(&client, session, &id)
                    .map(|slot| Admitted::Call(Arc::new(slot)))
            };
            match counted {
                Ok(admitted) => admitted,
                Err(refusal) => {
                    tracing::info!(%client, method, "{}", refusal.message());
                    return Err(refusal.response(Some(&id)));
                }
            }
        }
        _ => Admitted::Free,
    };
    let mut parts = parts;
    if let Admitted::Call(slot) = &admitted {
        // rmcp hands the request's parts to the session's handler: the slot
        // lives as long as the request is handled, even when its client has
        // dropped the event stream (rmcp keeps a session's request going).
        parts.extensions.insert(limits::Handled(slot.clone()));
    }
    Ok((Request::from_parts(parts, Body::from(bytes)), admitted))
}

/// Whether `response` is an event stream (its answers come later).
fn is_event_stream(response: &Response) -> bool {
    response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/event-stream"))
}

/// Whether the headers are those of a stateless 2026-07-28 POST rmcp would
/// take as they are.
fn lean_headers(method: &Method, headers: &HeaderMap) -> bool {
    *method == Method::POST
        && !headers.contains_key(SESSION_HEADER)
        && only(headers, "mcp-protocol-version")
            .is_some_and(|v| v == ProtocolVersion::V_2026_07_28.as_str())
        && only(headers, header::CONTENT_TYPE.as_str()).is_some_and(|v| {
            v.split(';')
                .next()
                .is_some_and(|essence| essence.trim().eq_ignore_ascii_case("application/json"))
        })
        && only(headers, header::ACCEPT.as_str()).is_some_and(accepts_json_and_events)
        && only(headers, header::CONTENT_LENGTH.as_str())
            .and_then(|v| v.parse::<u64>().ok())
            .is_some_and(|len| len <= MAX_BODY)
}

/// An `Accept` value that plainly lists both `application/json` and
/// `text/event-stream` (no weights: those are left to rmcp to judge).
pub(crate) fn accepts_json_and_events(accept: &str) -> bool {
    let mut json = false;
    let mut events = false;
    for item in accept.split(',') {
        let item = item.trim();
        if item.contains(';') {
            return false;
        }
        json |= item.eq_ignore_ascii_case("application/json");
        events |= item.eq_ignore_ascii_case("text/event-stream");
    }
    json && events
}

/// The one value of header `name`, if it has exactly one and it is text.
pub(crate) fn only<'h>(headers: &'h HeaderMap, name: &str) -> Option<&'h str> {
    let mut values = headers.get_all(name).iter();
    let value = values.next()?;
    if values.next().is_some() {
        return None;
    }
    value.to_str().ok()
}

/// A JSON-RPC request as it comes, its params left as they are until the
/// method says what they are. Exactly these four keys: anything else (a
/// batch, a stray `result`, an extension) is left to rmcp.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Envelope<'a> {
    /// "2.0", checked by its type.
    #[serde(rename = "jsonrpc")]
    _version: JsonRpcVersion2_0,
    pub id: RequestId,
    #[serde(borrow)]
    pub method: std::borrow::Cow<'a, str>,
    #[serde(borrow)]
    pub params: &'a serde_json::value::RawValue,
}

/// The request in `body`, when this module serves it.
///
/// Parsed here rather than as rmcp's `ClientJsonRpcMessage`, whose untagged
/// enum and flattened `_meta` buffer the whole message before reading it:
/// that was 15% of the gateway's CPU per call (docs/performance.md). The
/// params end as rmcp's parse leaves them (`_meta` taken out).
fn parse(headers: &HeaderMap, body: &[u8]) -> Option<Lean> {
    let envelope: Envelope<'_> = serde_json::from_slice(body).ok()?;
    let method = only(headers, "mcp-method")?;
    if method != envelope.method {
        return None;
    }
    let id = envelope.id;
    match method {
        "tools/call" => {
            let mut params: CallToolRequestParams =
                serde_json::from_str(envelope.params.get()).ok()?;
            let meta = checked_meta(params.meta.take())?;
            let name = only(headers, "mcp-name")?;
            if name != params.name || name.starts_with(BASE64_HEADER_PREFIX) {
                return None;
            }
            // A client that may be asked something mid-call (it declares
            // elicitation, sampling or roots) or answers such a question
            // (`requestState`) gets a held call.
            let declared = meta.client_capabilities();
            let may_be_asked = declared.as_ref().is_some_and(|c| {
                c.elicitation.is_some() || c.sampling.is_some() || c.roots.is_some()
            });
            let caller = if may_be_asked || params.request_state.is_some() {
                Caller::Stateless {
                    declared: declared.map(Box::new),
                }
            } else {
                Caller::Direct
            };
            Some(Lean::Call {
                id,
                params,
                caller,
                log_level: meta.log_level(),
                progress: meta.get_progress_token(),
                app: meta.client_info().map(Box::new),
                trace: TraceContext::incoming(Some(&meta.0), Some(headers)).map(Box::new),
            })
        }
        "tools/list" if !headers.contains_key("mcp-name") => {
            let mut params: PaginatedRequestParams =
                serde_json::from_str(envelope.params.get()).ok()?;
            let meta = checked_meta(params.meta.take())?;
            let trace = TraceContext::incoming(Some(&meta.0), Some(headers)).map(Box::new);
            Some(Lean::List(id, Some(params), trace))
        }
        _ => None,
    }
}

/// `meta` when it is a complete 2026-07-28 request `_meta`.
fn checked_meta(meta: Option<RequestMetaObject>) -> Option<RequestMetaObject> {
    let meta = meta?;
    let v2026 = ProtocolVersion::V_2026_07_28;
    (meta.protocol_version().as_ref() == Some(&v2026)
        && meta.missing_required_keys(&v2026).is_empty())
    .then_some(meta)
}

/// A call's log messages, on their way to its answer.
struct Outbox(mpsc::UnboundedSender<ServerJsonRpcMessage>);

impl LogHandler for Outbox {
    fn log(&self, _origin: RequestOrigin, message: LoggingMessageNotificationParam) {
        let notification = ServerNotification::LoggingMessageNotification(
            LoggingMessageNotification::new(message),
        );
        let _ = self
            .0
            .send(ServerJsonRpcMessage::notification(notification));
    }
}

/// The JSON-RPC answer to request `id`, shaped as rmcp's handler shapes it
/// for a 2026-07-28 client (cache hints filled in; "resource not found" is
/// `INVALID_PARAMS`).
fn answer_message(id: RequestId, result: Result<ServerResult, ErrorData>) -> ServerJsonRpcMessage {
    match result {
        Ok(mut result) => {
            result.fill_missing_cache_hints();
            ServerJsonRpcMessage::response(result, id)
        }
        Err(mut error) => {
            if error.code == ErrorCode::RESOURCE_NOT_FOUND {
                error.code = ErrorCode::INVALID_PARAMS;
            }
            ServerJsonRpcMessage::error(error, Some(id))
        }
    }
}

/// The answer as `application/json`, with the HTTP status rmcp gives it.
fn json_answer(id: RequestId, result: Result<ServerResult, ErrorData>) -> Response {
    let message = answer_message(id, result);
    let status = match &message {
        ServerJsonRpcMessage::Error(error) => match error.error.code {
            ErrorCode::UNSUPPORTED_PROTOCOL_VERSION
            | ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY
            | ErrorCode::HEADER_MISMATCH => StatusCode::BAD_REQUEST,
            ErrorCode::METHOD_NOT_FOUND => StatusCode::NOT_FOUND,
            _ => StatusCode::OK,
        },
        _ => StatusCode::OK,
    };
    // An upstream's full queue (`rate_limits`): 429, with when to retry.
    let retry = match &message {
        ServerJsonRpcMessage::Error(error) => {
            crate::rate_limits::Limited::retry_after_of(&error.error)
        }
        _ => None,
    };
    let status = if retry.is_some() {
        StatusCode::TOO_MANY_REQUESTS
    } else {
        status
    };
    let mut response = match serde_json::to_vec(&message) {
        Ok(body) => (
            status,
            [(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            )],
            body,
        )
            .into_response(),
        Err(e) => (
            StatusCode::INTERNAL_SERVER_ERROR,
            format!("Internal Server Error: the answer could not be serialized: {e}"),
        )
            .into_response(),
    };
    if let Some(wait) = retry {
        let secs = wait.as_secs_f64().ceil().max(1.0) as u64;
        response
            .headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from(secs));
    }
    response
}

/// What is left to send of a call answered as an event stream.
struct Pending {
    messages: mpsc::UnboundedReceiver<ServerJsonRpcMessage>,
    /// The call, until it ends.
    task: Option<tokio::task::JoinHandle<Result<ServerResult, ErrorData>>>,
    /// Its result, once it ended and until it is sent.
    result: Option<Result<ServerResult, ErrorData>>,
    id: RequestId,
    /// Cancels the call when the stream is dropped before its end.
    _cancel_on_drop: tokio_util::sync::DropGuard,
}

impl Pending {
    /// The next event of the stream: a message, a keep-alive comment, or
    /// the result last; `None` after it.
    async fn next(&mut self) -> Option<Bytes> {
        loop {
            let Some(task) = &mut self.task else {
                if let Ok(message) = self.messages.try_recv() {
                    return Some(event(&message));
                }
                let result = self.result.take()?;
                return Some(event(&answer_message(self.id.clone(), result)));
            };
            tokio::select! {
                biased;
                Some(message) = self.messages.recv() => return Some(event(&message)),
                joined = task => {
                    self.task = None;
                    self.result = Some(finished(joined));
                }
                () = tokio::time::sleep(KEEP_ALIVE) => return Some(Bytes::from_static(b":\n\n")),
            }
        }
    }
}

/// One message as an event (`data:` and the JSON on one line).
fn event(message: &ServerJsonRpcMessage) -> Bytes {
    let mut event = b"data: ".to_vec();
    if serde_json::to_writer(&mut event, message).is_err() {
        return Bytes::new();
    }
    event.extend_from_slice(b"\n\n");
    Bytes::from(event)
}

/// The answer as an event stream, as rmcp sends one: `first`, then what
/// `pending` holds, the result last.
fn event_stream(first: Option<ServerJsonRpcMessage>, pending: Pending) -> Response {
    let first = futures::stream::iter(first.map(|m| event(&m)));
    let rest = futures::stream::unfold(pending, |mut pending| async move {
        let item = pending.next().await?;
        Some((item, pending))
    });
    let body = Body::from_stream(first.chain(rest).map(Ok::<Bytes, Infallible>));
    (
        StatusCode::OK,
        [
            (header::CONTENT_TYPE, "text/event-stream"),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        [("x-accel-buffering", "no")],
        body,
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    use rmcp::model::{ClientJsonRpcMessage, ClientRequest, GetMeta};
    use serde_json::{Value, json};

    use super::*;

    fn headers(method: &str, name: Option<&str>) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert("mcp-method", method.parse().unwrap());
        if let Some(name) = name {
            headers.insert("mcp-name", name.parse().unwrap());
        }
        headers
    }

    fn meta(extra: Value) -> Value {
        let mut meta = json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": { "name": "t", "version": "1" },
            "io.modelcontextprotocol/clientCapabilities": {},
        });
        meta.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        meta
    }

    /// What `parse` made of `body`, as JSON, checked against rmcp's own
    /// parse of it: a request this module takes must be one rmcp takes,
    /// with the same id, params and `_meta`.
    fn lean(headers: &HeaderMap, body: &Value) -> Option<Value> {
        let bytes = serde_json::to_vec(body).unwrap();
        let lean = parse(headers, &bytes)?;
        let Ok(ClientJsonRpcMessage::Request(rmcp)) = serde_json::from_slice(&bytes) else {
            panic!("taken here but not a request to rmcp: {body}");
        };
        let meta = rmcp.request.get_meta();
        let (id, params) = match (&lean, rmcp.request.clone()) {
            (
                Lean::Call {
                    id,
                    params,
                    caller,
                    log_level,
                    progress,
                    app,
                    ..
                },
                ClientRequest::CallToolRequest(r),
            ) => {
                assert_eq!(
                    serde_json::to_value(params).unwrap(),
                    serde_json::to_value(&r.params).unwrap()
                );
                assert_eq!(*log_level, meta.log_level());
                assert_eq!(*progress, meta.get_progress_token());
                assert_eq!(app.as_deref(), meta.client_info().as_ref());
                let held = matches!(caller, Caller::Stateless { .. });
                (id, json!({ "call": params, "held": held }))
            }
            (Lean::List(id, params, _), ClientRequest::ListToolsRequest(r)) => {
                assert_eq!(
                    serde_json::to_value(params).unwrap(),
                    serde_json::to_value(&r.params).unwrap()
                );
                (id, json!({ "list": params }))
            }
            _ => panic!("another method than rmcp's: {body}"),
        };
        assert_eq!(*id, rmcp.id);
        Some(params)
    }

    #[test]
    fn what_is_taken_here_is_what_rmcp_reads_and_the_rest_goes_to_rmcp() {
        let call = |extra: Value| {
            json!({ "jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {
                "name": "echo", "arguments": { "text": "hi" }, "_meta": meta(extra),
            } })
        };
        let echo = headers("tools/call", Some("echo"));
        // Taken: plain, with progress and a log level, from a client that
        // can be asked (held), a retry (held), a list with a cursor.
        let plain = lean(&echo, &call(json!({}))).expect("a plain call");
        assert_eq!(plain["held"], false);
        assert_eq!(plain["call"]["arguments"]["text"], "hi");
        assert!(plain["call"].get("_meta").is_none(), "{plain}");
        lean(
            &echo,
            &call(json!({ "progressToken": "p", "io.modelcontextprotocol/logLevel": "info" })),
        )
        .expect("a call with progress");
        let asked = json!({ "io.modelcontextprotocol/clientCapabilities": { "elicitation": {} } });
        assert_eq!(lean(&echo, &call(asked)).expect("held")["held"], true);
        let mut retry = call(json!({}));
        retry["params"]["requestState"] = json!("abc");
        retry["params"]["inputResponses"] = json!({ "input-0": { "action": "decline" } });
        assert_eq!(lean(&echo, &retry).expect("a retry")["held"], true);
        let list = json!({ "jsonrpc": "2.0", "id": "l", "method": "tools/list",
            "params": { "cursor": "10", "_meta": meta(json!({})) } });
        let listed = lean(&headers("tools/list", None), &list).expect("a list");
        assert_eq!(listed["list"]["cursor"], "10");

        // Left to rmcp (its answer, its error).
        let mut stray_result = call(json!({}));
        stray_result["result"] = json!({});
        let mut old_version = call(json!({}));
        old_version["jsonrpc"] = json!("1.0");
        let mut no_version = call(json!({}));
        no_version.as_object_mut().unwrap().remove("jsonrpc");
        let mut v2025 = call(json!({}));
        v2025["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = json!("2025-11-25");
        let mut no_version_meta = call(json!({}));
        no_version_meta["params"]["_meta"]
            .as_object_mut()
            .unwrap()
            .remove("io.modelcontextprotocol/protocolVersion");
        let mut no_meta = call(json!({}));
        no_meta["params"].as_object_mut().unwrap().remove("_meta");
        let mut null_id = call(json!({}));
        null_id["id"] = Value::Null;
        for body in [
            stray_result,
            old_version,
            no_version,
            v2025,
            no_version_meta,
            no_meta,
            null_id,
        ] {
            assert!(lean(&echo, &body).is_none(), "taken: {body}");
        }
        assert!(lean(&headers("tools/call", Some("other")), &call(json!({}))).is_none());
        assert!(lean(&headers("tools/list", None), &call(json!({}))).is_none());
        assert!(lean(&echo, &json!([call(json!({}))])).is_none(), "a batch");
        let ping = json!({ "jsonrpc": "2.0", "id": 1, "method": "ping", "params": { "_meta": meta(json!({})) } });
        assert!(lean(&headers("ping", None), &ping).is_none());
    }
}
