//! Sending one request to a server, and the 2026-07-28 input-required loop
//! (SEP-2322, "MRTR"): the one path [`Pool::call_tool`] and
//! [`Pool::request`] both take.
//!
//! A server on 2026-07-28 may answer `tools/call`, `prompts/get` or
//! `resources/read` with an `InputRequiredResult` instead of the result:
//! the roots, sampling or elicitation requests it needs answered, and an
//! opaque `requestState`. Each request is answered through the handlers of
//! the call ([`CallOptions::client_features`], each completed with the
//! pool's), and the original request is sent again with the answers
//! (`inputResponses`) and the echoed state, at most
//! [`DEFAULT_MRTR_MAX_ROUNDS`] times in all. The call's time limits bound
//! the whole, the answering included: a user who never answers an
//! elicitation times the call out as a silent server would.
//!
//! rmcp's own loop (`RunningService::call_tool`) answers through the
//! connection's one handler, which cannot know the caller; this one knows.
//!
//! [`Pool::call_tool`]: super::Pool::call_tool
//! [`Pool::request`]: super::Pool::request
//! [`CallOptions::client_features`]: super::CallOptions::client_features

#![allow(deprecated)] // sampling and roots: see client_features

use std::time::Duration;

use rmcp::{
    model::DEFAULT_MRTR_MAX_ROUNDS,
    model::{
        ClientRequest, ErrorData, InputRequest, InputRequests, InputRequiredResult, InputResponses,
        RequestMetaObject, ServerResult,
    },
    service::{PeerRequestOptions, ServiceError},
};
use tokio::time::Instant;

use super::{
    ClientFeatures,
    connection::Connection,
    in_flight::Call,
    progress::{self, Limits},
};

/// One request on its way to a server: where it goes, whose handlers
/// answer what the server asks back, and within which limits.
pub(super) struct Outgoing<'a> {
    /// The connection it is sent on.
    pub(super) conn: &'a Connection,
    /// The server's name, for errors.
    pub(super) server: &'a str,
    /// The request's own handlers, when its caller brought some.
    pub(super) call_features: Option<&'a ClientFeatures>,
    /// The request in the server's in-flight registry, which notes the ids
    /// it goes out with (see `in_flight`).
    pub(super) call: &'a Call<'a>,
    /// The pool's handlers: they complete the request's, or stand in.
    pub(super) pool_features: &'a ClientFeatures,
    /// The request's `_meta` (the log level asked on 2026-07-28).
    pub(super) meta: Option<RequestMetaObject>,
    /// Its time limits; they bound the answering of input requests too.
    pub(super) limits: Limits,
    /// Whether an input-required result goes back to the caller as it came
    /// (the gateway relays it to a stateless client) instead of being
    /// answered here.
    pub(super) relay: bool,
}

/// Sends `request` as `outgoing` says and waits for its result within its
/// limits, answering input-required results through the request's handlers
/// (completed with the pool's), or the pool's; with `relay`, an
/// input-required result is returned as it came.
///
/// Each id the request goes out with is noted in the server's in-flight
/// registry ([`Outgoing::call`]), for the server-to-client messages it
/// causes.
pub(super) async fn send(
    outgoing: Outgoing<'_>,
    request: ClientRequest,
) -> Result<ServerResult, ServiceError> {
    Box::pin(exchange(&outgoing, request)).await
}

/// [`send`]'s rounds.
async fn exchange(
    outgoing: &Outgoing<'_>,
    request: ClientRequest,
) -> Result<ServerResult, ServiceError> {
    let Outgoing {
        conn,
        server,
        call_features,
        call,
        pool_features,
        ref meta,
        limits,
        relay,
    } = *outgoing;
    let started = Instant::now();
    // Kept for a retry only where the server may ask for one; boxed, as is
    // the rest of the rare way: it would sit in every call's future.
    // A relayed input-required result goes back as it came.
    let retry = (!relay && resendable(&request)).then(|| Box::new(request.clone()));
    let handle = conn
        .peer
        .send_request_with_option(request, options(meta.clone()))
        .await?;
    call.sent_as(conn.number, handle.id.clone());
    let asked = match progress::await_response(handle, &conn.progress, limits).await? {
        ServerResult::InputRequiredResult(asked) if retry.is_some() => asked,
        result => return Ok(result),
    };
    let Some(request) = retry else {
        return Ok(ServerResult::InputRequiredResult(asked));
    };
    let completed = call_features.map(|f| f.or(pool_features));
    Box::pin(more_rounds(
        Rounds {
            conn,
            server,
            features: completed.as_ref().unwrap_or(pool_features),
            call,
            meta: meta.as_ref(),
            limits,
            started,
        },
        *request,
        asked,
    ))
    .await
}

/// Whether the server may answer `request` with an input-required result.
fn resendable(request: &ClientRequest) -> bool {
    matches!(
        request,
        ClientRequest::CallToolRequest(_)
            | ClientRequest::GetPromptRequest(_)
            | ClientRequest::ReadResourceRequest(_)
    )
}

/// One request and its response.
async fn round(
    conn: &Connection,
    request: ClientRequest,
    call: &Call<'_>,
    meta: Option<&RequestMetaObject>,
    limits: Limits,
) -> Result<ServerResult, ServiceError> {
    let handle = conn
        .peer
        .send_request_with_option(request, options(meta.cloned()))
        .await?;
    call.sent_as(conn.number, handle.id.clone());
    progress::await_response(handle, &conn.progress, limits).await
}

/// What the rounds after the first share.
struct Rounds<'a> {
    conn: &'a Connection,
    server: &'a str,
    features: &'a ClientFeatures,
    call: &'a Call<'a>,
    /// The request's `_meta` (the log level asked on 2026-07-28).
    meta: Option<&'a RequestMetaObject>,
    limits: Limits,
    started: Instant,
}

/// rmcp's options for one round: no rmcp timeout (ours is cheaper per call
/// than rmcp's progress-reset watcher, see `progress`), and `meta`.
fn options(meta: Option<RequestMetaObject>) -> PeerRequestOptions {
    let mut options = PeerRequestOptions::no_options();
    options.meta = meta;
    options
}

/// Answers `asked` and sends `request` again, until the server gives its
/// result, within the call's limits and the round cap.
async fn more_rounds(
    rounds: Rounds<'_>,
    mut request: ClientRequest,
    mut asked: InputRequiredResult,
) -> Result<ServerResult, ServiceError> {
    let Rounds {
        conn,
        server,
        features,
        call,
        meta,
        limits,
        started,
    } = rounds;
    let deadline = started
        .checked_add(limits.total)
        .unwrap_or_else(|| started + Duration::from_secs(365 * 24 * 3600));
    let timed_out = ServiceError::Timeout {
        timeout: limits.total,
    };
    let mut state_only_rounds = 0u32;
    // The first round was the caller's.
    for _ in 1..DEFAULT_MRTR_MAX_ROUNDS {
        let requests = asked.input_requests.take().unwrap_or_default();
        if requests.is_empty() && asked.request_state.is_none() {
            return Err(ServiceError::McpError(ErrorData::internal_error(
                format!(
                    "server \"{server}\" asked for input without saying what (no inputRequests \
                     and no requestState)"
                ),
                None,
            )));
        }
        let answering = async {
            if requests.is_empty() {
                // Only state: the server is working; ask again after a
                // growing pause (as rmcp does: 50 ms doubling to 250 ms).
                let pause = 50u64.saturating_mul(1 << state_only_rounds.min(3)).min(250);
                state_only_rounds += 1;
                tokio::time::sleep(Duration::from_millis(pause)).await;
                Ok(InputResponses::new())
            } else {
                state_only_rounds = 0;
                answer(server, features, requests).await
            }
        };
        let responses = tokio::time::timeout_at(deadline, answering)
            .await
            .map_err(|_| ServiceError::Timeout {
                timeout: limits.total,
            })?
            .map_err(ServiceError::McpError)?;
        set_inputs(&mut request, responses, asked.request_state.take());
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(timed_out);
        }
        let limits = Limits {
            idle: limits.idle.min(left),
            total: left,
        };
        match round(conn, request.clone(), call, meta, limits).await? {
            ServerResult::InputRequiredResult(next) => asked = next,
            result => return Ok(result),
        }
    }
    Err(ServiceError::InputRequiredRoundsExceeded {
        max_rounds: DEFAULT_MRTR_MAX_ROUNDS,
    })
}

/// The answers to `requests`, asked of the handlers concurrently (an
/// elicitation need not wait for the roots).
async fn answer(
    server: &str,
    features: &ClientFeatures,
    requests: InputRequests,
) -> Result<InputResponses, ErrorData> {
    let answers = requests.into_iter().map(|(key, request)| async move {
        let value = match request {
            InputRequest::ListRoots(_) => to_value(features.answer_roots(server).await?),
            InputRequest::CreateMessage(request) => {
                to_value(features.answer_sampling(server, request.params).await?)
            }
            InputRequest::Elicitation(request) => {
                to_value(features.answer_elicitation(server, request.params).await?)
            }
            // A kind of request this rmcp does not know yet.
            #[allow(unreachable_patterns)]
            _ => {
                return Err(ErrorData::invalid_params(
                    format!("server \"{server}\" asked for an input toolbridge does not know"),
                    None,
                ));
            }
        }?;
        Ok((key, value))
    });
    Ok(futures::future::try_join_all(answers)
        .await?
        .into_iter()
        .collect())
}

fn to_value(answer: impl serde::Serialize) -> Result<serde_json::Value, ErrorData> {
    serde_json::to_value(answer).map_err(|e| {
        ErrorData::internal_error(format!("cannot encode an input response: {e}"), None)
    })
}

/// Puts the answers and the echoed state into `request` for the next round.
fn set_inputs(request: &mut ClientRequest, responses: InputResponses, state: Option<String>) {
    let responses = (!responses.is_empty()).then_some(responses);
    match request {
        ClientRequest::CallToolRequest(r) => {
            r.params.input_responses = responses;
            r.params.request_state = state;
        }
        ClientRequest::GetPromptRequest(r) => {
            r.params.input_responses = responses;
            r.params.request_state = state;
        }
        ClientRequest::ReadResourceRequest(r) => {
            r.params.input_responses = responses;
            r.params.request_state = state;
        }
        _ => {}
    }
}
