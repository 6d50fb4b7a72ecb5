//! A request to `/mcp` counted against its client's caps
//! ([`crate::limits`]) while it is served: an `initialize` takes a session
//! slot, any other request a place among the client's requests in flight.

use std::sync::Arc;

use axum::{
    body::Body,
    response::{IntoResponse, Response},
};
use http::{Method, Request, StatusCode, header};

use crate::{
    lean_requests::{MAX_BODY, only},
    limits::{self, Caps, Client},
    peer::Peer,
};

/// What a request holds under its client's caps while it is served.
pub(crate) enum Admitted {
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
pub(crate) async fn admit(
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
pub(crate) fn is_event_stream(response: &Response) -> bool {
    response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/event-stream"))
}
