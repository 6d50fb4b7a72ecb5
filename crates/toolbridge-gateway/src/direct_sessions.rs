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
//! (`Session::call_tool_directly`) in a task of its own, and answers
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
//! enough ([`crate::session_table::KEEP_ALIVE_EVERY`]) that its idle expiry counts them. A
//! cancelled call's POST ends as rmcp ends it: an event stream without an
//! answer. Log messages of the call go to the session's peer as before (the
//! standalone stream). A JSON answer has no event id to resume from: the
//! answers rmcp would have made resumable (`Last-Event-ID`) are those sent
//! as event streams, and those still go to rmcp.

// Logging is deprecated by SEP-2577 (rmcp 3.11 warns), but 2025-11-25
// clients use it.
#![allow(deprecated)]

use std::sync::Arc;

use axum::{body::Body, response::Response};
use http::{HeaderMap, Request};
use rmcp::model::{
    CallToolRequestParams, ErrorData, ProtocolVersion, RequestId, RequestMetaObject, ServerResult,
};

use crate::{
    identity::ClientIdentity,
    incoming::Incoming,
    lean_answers::{session_json_answer, unanswered},
    lean_requests::{Envelope, json_body_headers, only, read_body},
    limits::CallSlot,
    session::Session,
    session_table::{Begun, SessionTable},
};

/// The sessions of an endpoint whose calls are answered here.
pub type DirectSessions = SessionTable<Session>;

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
    begun: Begun<Session>,
    id: RequestId,
    params: Box<CallToolRequestParams>,
    meta: RequestMetaObject,
    headers: HeaderMap,
}

/// What session `session`'s POST `request` is: a call answered here, or a
/// request for rmcp (`Err`: its body could not be read).
pub async fn take(
    table: &Arc<DirectSessions>,
    session: &str,
    request: Request<Body>,
) -> Result<Taken, Response> {
    if !plain_headers(request.headers()) {
        return Ok(Taken::Rmcp(request));
    }
    let (parts, body) = request.into_parts();
    let bytes = read_body(body).await?;
    let taken = match parse(&bytes) {
        Some(Message::Call { id, params, meta }) => {
            table.begin(session, id.clone()).map(|begun| DirectCall {
                begun,
                id,
                params,
                meta,
                headers: HeaderMap::new(),
            })
        }
        Some(Message::Cancelled(id)) => {
            table.cancel(session, &id);
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
            begun:
                Begun {
                    session,
                    peer,
                    legacy,
                    ct,
                    guard,
                },
            id,
            params,
            meta,
            headers,
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
        session_json_answer(answer_id, result, legacy)
    }
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
    version_ok && json_body_headers(headers)
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
