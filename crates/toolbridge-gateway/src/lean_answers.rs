//! How a request answered without rmcp is written: one `application/json`
//! body, shaped as rmcp's handler shapes it for the client's version, or,
//! when messages (progress, log messages) come before the result, an event
//! stream with them in order and the result last, as rmcp sends one.

// Logging is deprecated by SEP-2577 (rmcp 3.11 warns), but 2026-07-28
// clients still ask for log messages in a request's `_meta`.
#![allow(deprecated)]

use std::{convert::Infallible, time::Duration};

use axum::{
    body::{Body, Bytes},
    response::{IntoResponse, Response},
};
use futures::StreamExt;
use http::{HeaderValue, StatusCode, header};
use rmcp::model::{
    ErrorCode, ErrorData, LoggingMessageNotification, LoggingMessageNotificationParam, RequestId,
    ServerJsonRpcMessage, ServerNotification, ServerResult,
};
use tokio::sync::mpsc;
use toolbridge::pool::{LogHandler, RequestOrigin};

/// The keep-alive comment interval of an event-stream answer (rmcp's).
const KEEP_ALIVE: Duration = Duration::from_secs(15);

/// The result of the call task (a task that panicked is an internal error).
pub(crate) fn finished(
    joined: Result<Result<ServerResult, ErrorData>, tokio::task::JoinError>,
) -> Result<ServerResult, ErrorData> {
    joined.unwrap_or_else(|e| {
        Err(ErrorData::internal_error(
            format!("the gateway's call failed: {e}"),
            None,
        ))
    })
}

/// A call's log messages, on their way to its answer.
pub(crate) struct Outbox(pub mpsc::UnboundedSender<ServerJsonRpcMessage>);

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
pub(crate) fn answer_message(
    id: RequestId,
    result: Result<ServerResult, ErrorData>,
) -> ServerJsonRpcMessage {
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
pub(crate) fn json_answer(id: RequestId, result: Result<ServerResult, ErrorData>) -> Response {
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
pub(crate) struct Pending {
    pub messages: mpsc::UnboundedReceiver<ServerJsonRpcMessage>,
    /// The call, until it ends.
    pub task: Option<tokio::task::JoinHandle<Result<ServerResult, ErrorData>>>,
    /// Its result, once it ended and until it is sent.
    pub result: Option<Result<ServerResult, ErrorData>>,
    pub id: RequestId,
    /// Cancels the call when the stream is dropped before its end.
    pub _cancel_on_drop: tokio_util::sync::DropGuard,
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
pub(crate) fn event(message: &ServerJsonRpcMessage) -> Bytes {
    let mut event = b"data: ".to_vec();
    if serde_json::to_writer(&mut event, message).is_err() {
        return Bytes::new();
    }
    event.extend_from_slice(b"\n\n");
    Bytes::from(event)
}

/// The answer as an event stream, as rmcp sends one: `first`, then what
/// `pending` holds, the result last.
pub(crate) fn event_stream(first: Option<ServerJsonRpcMessage>, pending: Pending) -> Response {
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

/// The answer to request `id` as `application/json`, shaped as rmcp's
/// handler shapes it for the session's version (`legacy`: before
/// 2026-07-28).
pub(crate) fn session_json_answer(
    id: RequestId,
    result: Result<ServerResult, ErrorData>,
    legacy: bool,
) -> Response {
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
            if !legacy && error.code == ErrorCode::RESOURCE_NOT_FOUND {
                error.code = ErrorCode::INVALID_PARAMS;
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
pub(crate) fn unanswered() -> Response {
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
