//! Messages toolbridge cannot read, and failing the request they answered at
//! once instead of letting it wait for its whole timeout.
//!
//! A message can be unreadable because it is over
//! [`MAX_MESSAGE_BYTES`](super::codec::MAX_MESSAGE_BYTES), nested deeper than
//! the JSON parser allows, not UTF-8, or holds a raw control character such
//! as NUL. The transports that frame messages themselves (stdio, WebSocket,
//! legacy SSE) turn such a message into an [`Unreadable`], with the id of the
//! request it answered when a tolerant scan finds one: at depth 1 in the
//! message's head, or, for an over-cap message, in its kept head or tail
//! (the TypeScript SDK writes `"id"` after `"result"`).
//!
//! [`Unanswered`] knows the ids of the requests sent and not yet answered.
//! With an id, the request it names fails at once; without one, every
//! request in flight on that connection fails with the reason (one of them
//! was answered by the message, and there is no telling which). The
//! connection stays up either way: the next message may be fine. The
//! failure reaches the caller as a JSON-RPC error response made here,
//! marked so the pool reports it as a protocol error
//! ([`PoolError::Unreadable`](crate::pool::PoolError::Unreadable), exit 3)
//! rather than as the server's own error.
//!
//! Knowing them, it also marks a log message read while exactly one request
//! is unanswered with that request ([`ReadAlongside`]): on a transport with
//! one stream for everything, that is the pool's "one request in flight"
//! taken in order with the answers, when the message was read, not later
//! when rmcp's task for it runs (see `pool::in_flight`).

use std::collections::HashSet;

use rmcp::{
    RoleClient,
    model::{
        ClientNotification, ErrorCode, ErrorData, GetExtensions as _, JsonRpcError, JsonRpcMessage,
        JsonRpcVersion2_0, NumberOrString, RequestId, ServerNotification,
    },
    service::{RxJsonRpcMessage, TxJsonRpcMessage},
};

use super::codec::MAX_MESSAGE_BYTES;

/// How much of an over-cap message's start and end is kept to find its id.
pub(crate) const KEPT_EDGE_BYTES: usize = 4096;

/// The `data` of the error responses made here, by which the pool tells
/// them from a server's own errors.
const MARKER: &str = "io.toolbridge/unreadable";

/// A message that could not be read: why, and the request it answered when
/// that could be found.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Unreadable {
    /// The id of the request it answered, when found.
    pub(crate) id: Option<RequestId>,
    /// Why it could not be read, as a sentence fragment ("it is 17.0 MiB,
    /// over the 16 MiB limit").
    pub(crate) reason: String,
}

impl Unreadable {
    /// An over-cap message of `bytes` bytes, of which `head` and `tail` were
    /// kept.
    pub(crate) fn oversize(head: &[u8], tail: &[u8], bytes: usize) -> Self {
        Unreadable {
            id: id_in_head(head).or_else(|| id_in_tail(tail)),
            reason: over_cap(bytes),
        }
    }

    /// A message the JSON parser refused with `error`.
    pub(crate) fn unparsable(text: &[u8], error: &serde_json::Error) -> Self {
        Unreadable {
            id: id_in_head(&text[..text.len().min(KEPT_EDGE_BYTES)]),
            reason: describe(text, error),
        }
    }
}

/// The reason for a message of `bytes` bytes over the cap.
pub(crate) fn over_cap(bytes: usize) -> String {
    format!(
        "it is {}, over the {} MiB limit on one message",
        mib(bytes),
        MAX_MESSAGE_BYTES / (1024 * 1024)
    )
}

fn mib(bytes: usize) -> String {
    format!("{:.1} MiB", bytes as f64 / (1024.0 * 1024.0))
}

/// Why `text` could not be parsed: size, depth or encoding, in words.
fn describe(text: &[u8], error: &serde_json::Error) -> String {
    if let Err(e) = std::str::from_utf8(text) {
        return format!(
            "it is not valid UTF-8 (an invalid byte at offset {})",
            e.valid_up_to()
        );
    }
    if let Some(at) = text.iter().position(|&b| b == 0) {
        return format!("it holds a raw NUL byte (at offset {at}), which JSON does not allow");
    }
    let message = error.to_string();
    if message.contains("recursion limit") {
        return "it is nested deeper than the 128 levels the JSON parser allows".to_owned();
    }
    if message.contains("control character") {
        return format!("it holds a raw control character in a string ({message})");
    }
    format!("it is not valid JSON ({message})")
}

/// True when `text` looks like a JSON-RPC message that failed to parse, as
/// opposed to a log line or other noise on the stream.
pub(crate) fn looks_like_message(text: &[u8]) -> bool {
    let head = &text[..text.len().min(KEPT_EDGE_BYTES)];
    let trimmed = head.trim_ascii_start();
    trimmed.first() == Some(&b'{') && contains(head, b"\"jsonrpc\"")
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

/// The `"id"` of the object `head` starts, found at depth 1 by a scan that
/// needs no valid JSON after it.
fn id_in_head(head: &[u8]) -> Option<RequestId> {
    let mut depth = 0usize;
    let mut i = 0;
    while i < head.len() {
        match head[i] {
            b'"' => {
                let end = string_end(head, i)?;
                if depth == 1 && &head[i + 1..end] == b"id" {
                    let value = skip_ws(head, end + 1);
                    if head.get(value) == Some(&b':') {
                        return id_at(head, skip_ws(head, value + 1));
                    }
                }
                i = end + 1;
                continue;
            }
            b'{' | b'[' => depth += 1,
            b'}' | b']' => depth = depth.saturating_sub(1),
            _ => {}
        }
        i += 1;
    }
    None
}

/// The `"id"` among the last members of the object `tail` ends: the last
/// `"id": value` whose rest holds only simple members and the closing `}`.
fn id_in_tail(tail: &[u8]) -> Option<RequestId> {
    let mut from = tail.len();
    while let Some(at) = rfind(&tail[..from], b"\"id\"") {
        from = at;
        if at > 0 && tail[at - 1] == b'\\' {
            continue;
        }
        let colon = skip_ws(tail, at + 4);
        if tail.get(colon) != Some(&b':') {
            continue;
        }
        let start = skip_ws(tail, colon + 1);
        let Some(id) = id_at(tail, start) else {
            continue;
        };
        let rest = &tail[value_end(tail, start)..];
        let closes = rest.iter().filter(|&&b| b == b'}').count() == 1
            && rest.trim_ascii_end().ends_with(b"}")
            && !rest.iter().any(|&b| matches!(b, b'{' | b'[' | b']'));
        if closes {
            return Some(id);
        }
    }
    None
}

fn rfind(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).rposition(|w| w == needle)
}

fn skip_ws(text: &[u8], mut i: usize) -> usize {
    while text.get(i).is_some_and(u8::is_ascii_whitespace) {
        i += 1;
    }
    i
}

/// The index of the quote that closes the string opening at `start`.
fn string_end(text: &[u8], start: usize) -> Option<usize> {
    let mut i = start + 1;
    while i < text.len() {
        match text[i] {
            b'\\' => i += 2,
            b'"' => return Some(i),
            _ => i += 1,
        }
    }
    None
}

/// Where the number or string at `start` ends.
fn value_end(text: &[u8], start: usize) -> usize {
    if text.get(start) == Some(&b'"') {
        return string_end(text, start).map_or(text.len(), |e| e + 1);
    }
    let mut i = start;
    while text
        .get(i)
        .is_some_and(|b| b.is_ascii_digit() || matches!(b, b'-' | b'+' | b'.' | b'e' | b'E'))
    {
        i += 1;
    }
    i
}

/// The id (a number or a string) at `start`.
fn id_at(text: &[u8], start: usize) -> Option<RequestId> {
    let end = value_end(text, start);
    let value = text.get(start..end)?;
    if value.first() != Some(&b'"') && text.get(end).is_none() {
        // A number cut off by the end of the kept bytes.
        return None;
    }
    serde_json::from_slice::<NumberOrString>(value).ok()
}

/// The requests sent on a connection and not answered yet, so that an
/// unreadable answer fails them at once.
#[derive(Debug, Default)]
pub(crate) struct Unanswered {
    ids: HashSet<RequestId>,
}

/// The mark, in a log message's extensions, of the one request that was
/// unanswered when the message was read.
#[derive(Debug, Clone)]
pub(crate) struct ReadAlongside(pub(crate) RequestId);

impl Unanswered {
    /// Notes a message being sent: a request's id, or a cancellation, which
    /// ends the wait for one.
    pub(crate) fn sent(&mut self, message: &TxJsonRpcMessage<RoleClient>) {
        match message {
            JsonRpcMessage::Request(request) => {
                self.ids.insert(request.id.clone());
            }
            JsonRpcMessage::Notification(note) => {
                if let ClientNotification::CancelledNotification(cancelled) = &note.notification
                    && let Some(id) = &cancelled.params.request_id
                {
                    self.ids.remove(id);
                }
            }
            _ => {}
        }
    }

    /// Notes a message received: an answer ends its request's wait; a log
    /// message read while exactly one request is unanswered is marked with
    /// it ([`ReadAlongside`]).
    pub(crate) fn received(&mut self, message: &mut RxJsonRpcMessage<RoleClient>) {
        match message {
            JsonRpcMessage::Notification(note) => {
                if let ServerNotification::LoggingMessageNotification(_) = &note.notification
                    && self.ids.len() == 1
                    && let Some(id) = self.ids.iter().next()
                {
                    let mark = ReadAlongside(id.clone());
                    note.notification.extensions_mut().insert(mark);
                }
            }
            JsonRpcMessage::Response(response) => {
                self.ids.remove(&response.id);
            }
            JsonRpcMessage::Error(error) => {
                if let Some(id) = &error.id {
                    self.ids.remove(id);
                }
            }
            _ => {}
        }
    }

    /// The error answers that fail what `unreadable` answered: the request
    /// it names, or, when its id is unknown, every request in flight.
    pub(crate) fn fail(&mut self, unreadable: Unreadable) -> Vec<RxJsonRpcMessage<RoleClient>> {
        let ids: Vec<RequestId> = match unreadable.id {
            Some(id) if self.ids.remove(&id) => vec![id],
            Some(_) => Vec::new(),
            None => self.ids.drain().collect(),
        };
        if ids.is_empty() {
            tracing::warn!(
                reason = %unreadable.reason,
                "dropped a message toolbridge cannot read, which answers no request in flight"
            );
        }
        ids.into_iter()
            .map(|id| failure(id, &unreadable.reason))
            .collect()
    }
}

/// The error response that fails request `id` because its answer could not
/// be read.
pub(crate) fn failure(id: RequestId, reason: &str) -> RxJsonRpcMessage<RoleClient> {
    JsonRpcMessage::Error(JsonRpcError {
        jsonrpc: JsonRpcVersion2_0,
        id: Some(id),
        error: ErrorData::new(
            ErrorCode::PARSE_ERROR,
            reason.to_owned(),
            Some(serde_json::json!({ MARKER: true })),
        ),
    })
}

/// The reason, when `error` was made by [`failure`].
pub(crate) fn unreadable_reason(error: &ErrorData) -> Option<&str> {
    let marked = error
        .data
        .as_ref()
        .and_then(|d| d.get(MARKER))
        .is_some_and(|v| v == true);
    (marked && error.code == ErrorCode::PARSE_ERROR).then_some(error.message.as_ref())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn num(n: i64) -> Option<RequestId> {
        Some(NumberOrString::Number(n))
    }

    #[test]
    fn the_id_is_found_at_depth_one_only() {
        assert_eq!(id_in_head(br#"{"jsonrpc":"2.0","id":7,"result":{"#), num(7));
        assert_eq!(
            id_in_head(br#"{"result":{"id":1,"x":"\"id\":2"},"id":"abc","#),
            Some(NumberOrString::String("abc".into()))
        );
        assert_eq!(id_in_head(br#"{"jsonrpc":"2.0","result":{"id":3,"#), None);
        // A number that may go on past the kept bytes is not taken.
        assert_eq!(id_in_head(br#"{"id":12"#), None);
    }

    #[test]
    fn the_id_after_the_result_is_found_in_the_tail() {
        assert_eq!(
            id_in_tail(br#"xxxxx"}]},"jsonrpc":"2.0","id":42}"#),
            num(42)
        );
        assert_eq!(
            id_in_tail(br#"xx"}]},"id":"s-1","jsonrpc":"2.0"}"#),
            Some(NumberOrString::String("s-1".into()))
        );
        // An "id" inside the result is not the message's.
        assert_eq!(id_in_tail(br#"xx","id":5}]}}"#), None);
        assert_eq!(id_in_tail(br#"xxxxxxxx"}]}}"#), None);
    }

    #[test]
    fn reasons_name_size_depth_and_encoding() {
        let parse = |t: &[u8]| {
            Unreadable::unparsable(
                t,
                &serde_json::from_slice::<serde_json::Value>(t).unwrap_err(),
            )
        };
        let deep = format!(
            r#"{{"jsonrpc":"2.0","id":1,"result":{}{}}}"#,
            "[".repeat(500),
            "]".repeat(500)
        );
        let u = parse(deep.as_bytes());
        assert_eq!(u.id, num(1));
        assert!(u.reason.contains("nested deeper"), "{}", u.reason);
        let u = parse(b"{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":\"\xff\"}");
        assert_eq!(u.id, num(2));
        assert!(u.reason.contains("not valid UTF-8"), "{}", u.reason);
        let u = parse(b"{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":\"\x00\"}");
        assert!(u.reason.contains("NUL byte"), "{}", u.reason);
        let u = Unreadable::oversize(
            b"{\"jsonrpc\":\"2.0\",\"result\":{",
            b"xx\"}]},\"id\":9}",
            17 << 20,
        );
        assert_eq!(u.id, num(9));
        assert_eq!(
            u.reason,
            "it is 17.0 MiB, over the 16 MiB limit on one message"
        );
    }

    #[test]
    fn an_unknown_id_fails_every_request_in_flight() {
        let mut in_flight = Unanswered::default();
        in_flight
            .ids
            .extend([NumberOrString::Number(1), NumberOrString::Number(2)]);
        let failed = in_flight.fail(Unreadable {
            id: None,
            reason: "r".into(),
        });
        assert_eq!(failed.len(), 2);
        let JsonRpcMessage::Error(e) = &failed[0] else {
            panic!("an error")
        };
        assert_eq!(unreadable_reason(&e.error), Some("r"));
        assert!(in_flight.ids.is_empty());
    }

    fn log() -> RxJsonRpcMessage<RoleClient> {
        serde_json::from_str(
            r#"{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"hi"}}"#,
        )
        .unwrap()
    }

    fn mark(message: &RxJsonRpcMessage<RoleClient>) -> Option<RequestId> {
        let JsonRpcMessage::Notification(note) = message else {
            return None;
        };
        note.notification
            .extensions()
            .get::<ReadAlongside>()
            .map(|m| m.0.clone())
    }

    #[test]
    fn a_log_message_read_while_one_request_is_unanswered_is_marked_with_it() {
        let mut unanswered = Unanswered::default();
        let mut alone = log();
        unanswered.received(&mut alone);
        assert_eq!(mark(&alone), None, "none unanswered");
        unanswered.ids.insert(NumberOrString::Number(1));
        let mut alone = log();
        unanswered.received(&mut alone);
        assert_eq!(mark(&alone), num(1));
        unanswered.ids.insert(NumberOrString::Number(2));
        let mut two = log();
        unanswered.received(&mut two);
        assert_eq!(mark(&two), None, "two unanswered");
    }
}
