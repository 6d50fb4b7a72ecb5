//! Session `tools/call` POSTs answered directly, as one JSON write, past
//! rmcp's session machinery.
//!
//! rmcp answers every request of a 2025-11-25 session through the session's
//! worker task: a request-wise channel opened by a round trip to the
//! worker, the message pushed to it, on to the service's loop and a handler
//! task, the result back through the loop and the worker into the channel,
//! and out as an event stream with a priming event first (its own write).
//! Per call that was 2-5× the CPU of the floor relay (docs/performance.md,
//! "Every client through the gateway"). Here the gateway's HTTP endpoint
//! hands a session's `tools/call` to the session's own handler code
//! ([`Session::call_tool_directly`]) in a task of its own, and answers
//! `application/json`, which the spec lets a server choose for any POST
//! whose client accepts both JSON and event streams.
//!
//! Only calls nothing can be sent for before their result come here, so
//! nothing is lost by leaving the event stream out:
//! - the client declared no roots, sampling or elicitation (an upstream's
//!   request mid-call would ride the call's event stream), and the request
//!   carries no progress token (its progress would too);
//! - the request is as rmcp would take it: JSON-RPC 2.0 with exactly the
//!   four keys, a session the table knows (registered from its handshake),
//!   a protocol version before 2026-07-28 (no per-request `_meta` version,
//!   no `inputResponses`/`requestState`).
//!
//! Everything else goes to rmcp unchanged. What rmcp does beside a request
//! is kept: a `notifications/cancelled` naming a call here cancels it (and
//! goes on to rmcp), a call survives its client's disconnect (the spec:
//! disconnection is not cancellation) and ends with the session (a
//! `DELETE`, its expiry), and the session's worker hears of its calls often
//! enough ([`KEEP_ALIVE_EVERY`]) that its idle expiry counts them. A
//! cancelled call's POST ends as rmcp ends it: an event stream without an
//! answer. Log messages of the call go to the session's peer as before (the
//! standalone stream). A JSON answer has no event id to resume from: the
//! answers rmcp would have made resumable (`Last-Event-ID`) are those sent
//! as event streams, and those still go to rmcp.

// Logging is deprecated by SEP-2577 (rmcp 3.11 warns), but 2025-11-25
// clients use it.
#![allow(deprecated)]

use std::{
    collections::HashMap,
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use axum::{
    body::Body,
    response::{IntoResponse, Response},
};
use http::{HeaderMap, HeaderValue, Request, StatusCode, header};
use rmcp::{
    RoleServer,
    model::{
        CallToolRequestParams, ClientJsonRpcMessage, ClientNotification, CustomNotification,
        ErrorData, ProtocolVersion, RequestId, RequestMetaObject, ServerJsonRpcMessage,
        ServerResult,
    },
    service::Peer,
    transport::streamable_http_server::session::{SessionManager, local::LocalSessionManager},
};
use tokio_util::sync::CancellationToken;
use toolbridge::lock::LockUnpoisoned as _;

use crate::{
    identity::ClientIdentity,
    limits::CallSlot,
    session::{Incoming, Session},
    stateless::{Envelope, MAX_BODY, accepts_json_and_events, only},
};

/// How often, at most, a session's direct calls are told to its rmcp
/// worker, whose idle expiry (5 minutes) counts only what it sees.
pub const KEEP_ALIVE_EVERY: Duration = Duration::from_secs(10);

/// The method of the notification that tells a session's worker its
/// client is still calling (its handler ignores it).
const ALIVE_METHOD: &str = "notifications/toolbridge/session_alive";

/// The sessions of one endpoint whose `tools/call` may be answered here.
pub struct DirectSessions {
    table: Mutex<HashMap<String, Entry>>,
    sessions: Arc<LocalSessionManager>,
}

/// One session, as its handshake left it.
struct Entry {
    /// The session's handler code (rmcp holds its own copy).
    session: Session,
    peer: Peer<RoleServer>,
    /// Whether its client can be asked nothing mid-call.
    askable: bool,
    /// Its protocol version shapes the answer as rmcp's handler shapes it.
    legacy: bool,
    /// Cancelled when the session ends: its calls end too.
    closed: CancellationToken,
    /// Its calls in flight here, by request id.
    calls: HashMap<RequestId, CancellationToken>,
    /// When its worker last heard of a call.
    told: Instant,
}

/// A session's place in the table; dropped with the session (rmcp drops
/// its handler), it leaves the table and ends the session's calls.
pub struct Registration {
    table: Arc<DirectSessions>,
    id: String,
}

impl Drop for Registration {
    fn drop(&mut self) {
        if let Some(entry) = self.table.table.lock_unpoisoned().remove(&self.id) {
            entry.closed.cancel();
        }
    }
}

/// A session POST, as this module sees it.
pub enum Taken {
    /// A `tools/call` answered here.
    Call(DirectCall),
    /// Everything else, for rmcp, as it came (a cancellation already
    /// passed on to the call it names, if that call is here).
    Rmcp(Request<Body>),
}

/// A session's `tools/call`, ready to run.
pub struct DirectCall {
    session: Session,
    peer: Peer<RoleServer>,
    legacy: bool,
    id: RequestId,
    params: Box<CallToolRequestParams>,
    meta: RequestMetaObject,
    headers: HeaderMap,
    ct: CancellationToken,
    /// Takes the call out of its session's calls when it ends.
    guard: CallGuard,
}

/// A call's entry among its session's calls, until it ends.
struct CallGuard {
    table: Arc<DirectSessions>,
    session: String,
    id: RequestId,
}

impl Drop for CallGuard {
    fn drop(&mut self) {
        if let Some(entry) = self.table.table.lock_unpoisoned().get_mut(&self.session) {
            entry.calls.remove(&self.id);
        }
    }
}

impl DirectSessions {
    /// The table of `sessions`' sessions (rmcp's session manager, told of
    /// the calls made here).
    pub fn new(sessions: Arc<LocalSessionManager>) -> Arc<DirectSessions> {
        Arc::new(DirectSessions {
            table: Mutex::default(),
            sessions,
        })
    }

    /// Notes session `id`, whose handler code is `session` and whose
    /// client is `peer` (after its handshake), until the registration
    /// drops.
    pub fn register(
        self: &Arc<Self>,
        id: String,
        session: Session,
        peer: Peer<RoleServer>,
    ) -> Registration {
        let info = peer.peer_info();
        let askable = info.as_ref().is_none_or(|info| {
            let c = &info.capabilities;
            c.roots.is_some() || c.sampling.is_some() || c.elicitation.is_some()
        });
        let legacy = info
            .as_ref()
            .is_none_or(|info| info.protocol_version.has_initialize());
        let entry = Entry {
            session,
            peer,
            askable,
            legacy,
            closed: CancellationToken::new(),
            calls: HashMap::new(),
            told: Instant::now(),
        };
        self.table.lock_unpoisoned().insert(id.clone(), entry);
        Registration {
            table: self.clone(),
            id,
        }
    }

    /// Whether session `id` is in the table (its POSTs are looked at).
    pub fn knows(&self, id: &str) -> bool {
        self.table.lock_unpoisoned().contains_key(id)
    }

    /// What session `session`'s POST `request` is: a call answered here,
    /// or a request for rmcp (`Err`: its body could not be read).
    pub async fn take(
        self: &Arc<Self>,
        session: &str,
        request: Request<Body>,
    ) -> Result<Taken, Response> {
        if !plain_headers(request.headers()) {
            return Ok(Taken::Rmcp(request));
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
        let taken = match parse(&bytes) {
            Some(Message::Call { id, params, meta }) => self.begin(session, id, params, meta),
            Some(Message::Cancelled(id)) => {
                self.cancel(session, &id);
                None
            }
            None => None,
        };
        Ok(match taken {
            Some(mut call) => {
                call.headers = parts.headers;
                Taken::Call(call)
            }
            None => Taken::Rmcp(Request::from_parts(parts, Body::from(bytes))),
        })
    }

    /// Call `id` of session `session`, when the session's calls are
    /// answered here and no call of that id is in flight.
    fn begin(
        self: &Arc<Self>,
        session: &str,
        id: RequestId,
        params: Box<CallToolRequestParams>,
        meta: RequestMetaObject,
    ) -> Option<DirectCall> {
        let mut table = self.table.lock_unpoisoned();
        let entry = table.get_mut(session)?;
        if entry.askable || entry.calls.contains_key(&id) {
            return None;
        }
        let ct = entry.closed.child_token();
        entry.calls.insert(id.clone(), ct.clone());
        if entry.told.elapsed() >= KEEP_ALIVE_EVERY {
            entry.told = Instant::now();
            self.tell_worker(session);
        }
        Some(DirectCall {
            session: entry.session.clone(),
            peer: entry.peer.clone(),
            legacy: entry.legacy,
            id: id.clone(),
            params,
            meta,
            headers: HeaderMap::new(),
            ct,
            guard: CallGuard {
                table: self.clone(),
                session: session.to_owned(),
                id,
            },
        })
    }

    /// Cancels call `id` of session `session`, if it is here.
    fn cancel(&self, session: &str, id: &RequestId) {
        if let Some(ct) = self
            .table
            .lock_unpoisoned()
            .get(session)
            .and_then(|entry| entry.calls.get(id))
        {
            ct.cancel();
        }
    }

    /// Tells session `session`'s worker that its client is calling, so its
    /// idle expiry does not end a session in use (a notification its
    /// handler ignores; sent from a task, the call does not wait on it).
    fn tell_worker(&self, session: &str) {
        let sessions = self.sessions.clone();
        let id = session.into();
        tokio::spawn(async move {
            let alive =
                ClientNotification::CustomNotification(CustomNotification::new(ALIVE_METHOD, None));
            let message = ClientJsonRpcMessage::notification(alive);
            if let Err(e) = sessions.accept_message(&id, message).await {
                tracing::debug!(error = %e, "cannot tell a session's worker of its calls");
            }
        });
    }
}

impl DirectCall {
    /// Runs the call in a task of its own (it outlives its client's
    /// disconnect, as rmcp's do) holding `slot` (its place under the caps),
    /// and answers it: JSON, or an event stream without an answer when the
    /// client cancelled it (as rmcp ends a cancelled request's stream).
    pub async fn answer(
        self,
        client: Option<ClientIdentity>,
        slot: Option<Arc<CallSlot>>,
    ) -> Response {
        let DirectCall {
            session,
            peer,
            legacy,
            id,
            params,
            meta,
            headers,
            ct,
            guard,
        } = self;
        let answer_id = id.clone();
        let task_ct = ct.clone();
        // Boxed: the call's state machine moved by value into the task's
        // cell was copied at the spawn and again as it finished.
        let task = tokio::spawn(Box::pin(async move {
            let _slot = slot;
            let _guard = guard;
            let incoming = Incoming {
                peer: &peer,
                id: &id,
                meta: &meta,
                headers: &headers,
                client: client.as_ref(),
            };
            session
                .call_tool_directly(incoming, *params, &task_ct)
                .await
                .map(ServerResult::from)
        }));
        let result = task.await.unwrap_or_else(|e| {
            Err(ErrorData::internal_error(
                format!("the gateway's call failed: {e}"),
                None,
            ))
        });
        if ct.is_cancelled() {
            return unanswered();
        }
        json(answer_id, result, legacy)
    }
}

/// The session id of the request whose rmcp extensions are `extensions`
/// (the `initialized` notification carries its HTTP request's parts).
pub fn session_id(extensions: &rmcp::model::Extensions) -> Option<String> {
    let parts = extensions.get::<http::request::Parts>()?;
    only(&parts.headers, "mcp-session-id").map(str::to_owned)
}

/// Whether a session POST's headers are those rmcp takes as they are, for
/// a protocol version before 2026-07-28 (SEP-2243's headers not required).
fn plain_headers(headers: &HeaderMap) -> bool {
    let version_ok = match only(headers, "mcp-protocol-version") {
        None => !headers.contains_key("mcp-protocol-version"),
        Some(version) => ProtocolVersion::KNOWN_VERSIONS
            .iter()
            .any(|v| v.as_str() == version && v.has_initialize()),
    };
    version_ok
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

/// A session POST's message, where this module has a use for it.
enum Message {
    Call {
        id: RequestId,
        params: Box<CallToolRequestParams>,
        meta: RequestMetaObject,
    },
    Cancelled(RequestId),
}

/// A `notifications/cancelled` as it comes.
#[derive(serde::Deserialize)]
struct Cancellation<'a> {
    #[serde(borrow)]
    method: std::borrow::Cow<'a, str>,
    params: CancellationParams,
}

#[derive(serde::Deserialize)]
struct CancellationParams {
    #[serde(rename = "requestId")]
    request_id: RequestId,
}

/// The message in `body`: a `tools/call` this module may answer (no
/// progress token, nothing of 2026-07-28), or a cancellation.
fn parse(body: &[u8]) -> Option<Message> {
    let Ok(envelope) = serde_json::from_slice::<Envelope<'_>>(body) else {
        let cancellation: Cancellation<'_> = serde_json::from_slice(body).ok()?;
        return (cancellation.method == "notifications/cancelled")
            .then_some(Message::Cancelled(cancellation.params.request_id));
    };
    if envelope.method != "tools/call" {
        return None;
    }
    let mut params: CallToolRequestParams = serde_json::from_str(envelope.params.get()).ok()?;
    let meta = params.meta.take().unwrap_or_default();
    let plain = meta.get_progress_token().is_none()
        && meta.protocol_version().is_none()
        && params.input_responses.is_none()
        && params.request_state.is_none();
    plain.then(|| Message::Call {
        id: envelope.id,
        params: Box::new(params),
        meta,
    })
}

/// The answer to request `id` as `application/json`, shaped as rmcp's
/// handler shapes it for the session's version (`legacy`: before
/// 2026-07-28).
fn json(id: RequestId, result: Result<ServerResult, ErrorData>, legacy: bool) -> Response {
    let message = match result {
        Ok(mut result) => {
            if legacy {
                result.strip_result_type_for_legacy_peer();
                result.strip_non_object_output_for_legacy_peer();
            } else {
                result.fill_missing_cache_hints();
            }
            ServerJsonRpcMessage::response(result, id)
        }
        Err(mut error) => {
            // As rmcp's handler: 2026-07-28 peers get the standard code.
            if !legacy && error.code == rmcp::model::ErrorCode::RESOURCE_NOT_FOUND {
                error.code = rmcp::model::ErrorCode::INVALID_PARAMS;
            }
            ServerJsonRpcMessage::error(error, Some(id))
        }
    };
    match serde_json::to_vec(&message) {
        Ok(body) => (
            StatusCode::OK,
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
    }
}

/// A cancelled call's POST: an event stream that ends without an answer.
fn unanswered() -> Response {
    (
        StatusCode::OK,
        [
            (header::CONTENT_TYPE, "text/event-stream"),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        Body::empty(),
    )
        .into_response()
}
