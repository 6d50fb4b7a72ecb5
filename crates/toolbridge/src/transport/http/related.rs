//! Which request a log message on a response stream belongs to.
//!
//! A streamable HTTP server sends the log messages a request causes on that
//! request's response stream, but a log message names no request, and rmcp
//! merges every stream into one before the pool sees it. So each log
//! message read from a request's stream is marked here, in its `_meta`,
//! with the request's id ([`RELATED_REQUEST_META`]); the pool takes the
//! mark out again and gives the message to that request's handler. Without
//! it two calls in flight at once on one server could not tell their log
//! messages apart (a gateway's two clients would get neither's).

use futures::{StreamExt, stream::BoxStream};
use rmcp::{model::RequestId, transport::streamable_http_client::SseError};
use serde_json::{Map, Value};
use sse_stream::Sse;

use crate::pool::RELATED_REQUEST_META;

/// A response's event stream.
type Events = BoxStream<'static, Result<Sse, SseError>>;

/// `stream`, the response stream of the request `request`, with each log
/// message on it marked as that request's.
pub fn mark_logs(stream: Events, request: RequestId) -> Events {
    let Ok(id) = serde_json::to_value(&request) else {
        return stream;
    };
    stream
        .map(move |event| event.map(|event| mark(event, &id)))
        .boxed()
}

/// `event` with `id` in its `_meta` when it is a log message.
fn mark(mut event: Sse, id: &Value) -> Sse {
    let Some(data) = event.data.as_deref() else {
        return event;
    };
    // Cheap test first: most events are progress and the answer.
    if !data.contains("notifications/message") {
        return event;
    }
    let Ok(Value::Object(mut message)) = serde_json::from_str::<Value>(data) else {
        return event;
    };
    if message.get("method").and_then(Value::as_str) != Some("notifications/message")
        || message.contains_key("id")
    {
        return event;
    }
    let Some(Value::Object(params)) = message.get_mut("params") else {
        return event;
    };
    let meta = params
        .entry("_meta")
        .or_insert_with(|| Value::Object(Map::new()));
    let Value::Object(meta) = meta else {
        return event;
    };
    meta.insert(RELATED_REQUEST_META.to_owned(), id.clone());
    if let Ok(data) = serde_json::to_string(&message) {
        event.data = Some(data);
    }
    event
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(data: &str) -> Sse {
        Sse::default().data(data)
    }

    #[test]
    fn a_log_message_is_marked_with_its_request() {
        let marked = mark(
            event(
                r#"{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"hi"}}"#,
            ),
            &Value::from(7),
        );
        let message: Value =
            serde_json::from_str(marked.data.as_deref().unwrap_or("")).unwrap_or_default();
        assert_eq!(message["params"]["_meta"][RELATED_REQUEST_META], 7);
        assert_eq!(message["params"]["data"], "hi");
    }

    #[test]
    fn other_messages_are_left_as_they_came() {
        let answer = r#"{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"notifications/message"}]}}"#;
        assert_eq!(
            mark(event(answer), &Value::from(7)).data.as_deref(),
            Some(answer)
        );
    }
}
