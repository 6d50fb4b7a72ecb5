//! Incoming JSON text as rmcp messages, with a short way for `tools/call`
//! results.
//!
//! rmcp parses an incoming message as `JsonRpcMessage`, which buffers the
//! whole message, and its result as the untagged `ServerResult`, which tries
//! the result types in turn: `CallToolResult` is the sixteenth. In a profile
//! of many calls in flight that was 39% of the client's CPU. [`decode`]
//! first looks at the message's envelope and at the keys of its result: when
//! rmcp's generic path could only make a `CallToolResult` of it, it parses
//! it as one straight away. The test for "could only" needs no knowledge of
//! which requests were sent (see [`CallResultKeys`]); anything else goes
//! through rmcp's own types, so a caller gets exactly what rmcp's generic
//! path would give.

use rmcp::{
    RoleClient,
    model::{
        CallToolResult, ContentBlock, JsonRpcMessage, JsonRpcResponse, JsonRpcVersion2_0,
        ServerResult,
    },
    service::{RxJsonRpcMessage, ServiceRole},
};
use serde::{Deserialize, de::IgnoredAny};
use serde_json::value::RawValue;

use crate::transport::unreadable::{Unreadable, looks_like_message};

/// Most bytes one incoming message may have on any transport (the same cap
/// as rmcp's): a longer stdio line is dropped as it streams past, a longer
/// SSE event or WebSocket message ends the connection; either way the
/// request it answered fails at once saying so (see `unreadable`).
pub(crate) const MAX_MESSAGE_BYTES: usize = 16 * 1024 * 1024;

const UTF8_BOM: &[u8] = b"\xEF\xBB\xBF";

/// What one incoming text turned out to be.
#[derive(Debug)]
pub(crate) enum Decoded<R: ServiceRole = RoleClient> {
    /// A message for rmcp.
    Message(RxJsonRpcMessage<R>),
    /// Nothing to deliver: not JSON at all, or a notification this side
    /// does not know (both logged at debug).
    Skip,
    /// Well-formed JSON with an id that is not a valid message; JSON-RPC
    /// asks for an "Invalid Request" error in reply (as rmcp sends).
    Invalid,
    /// A message that cannot be read (too deep, not UTF-8, a raw NUL...):
    /// the request it answered should fail at once with the reason.
    Unreadable(Unreadable),
}

/// Parses one message a client received (a line without its newline, a
/// frame, an event's data).
pub(crate) fn decode(text: &[u8]) -> Decoded {
    decode_as(text, |text| {
        call_result(text).or_else(|| tool_list_keeping_execution(text))
    })
}

/// A `tools/list` response whose tools carry `execution`, which rmcp's
/// `Tool` would drop: parsed with each tool's `execution` moved into its
/// `_meta` (see [`crate::tools::keep_execution`]). `None` for anything else.
fn tool_list_keeping_execution(text: &[u8]) -> Option<RxJsonRpcMessage<RoleClient>> {
    const NEEDLE: &[u8] = b"\"execution\"";
    if !text.windows(NEEDLE.len()).any(|w| w == NEEDLE) {
        return None;
    }
    let mut message: serde_json::Value = serde_json::from_slice(text).ok()?;
    if !crate::tools::keep_execution(message.get_mut("result")?) {
        return None;
    }
    serde_json::from_value(message).ok()
}

/// Parses one message for role `R`: `short_way` first, which must give
/// exactly what rmcp's generic parse would or nothing, then rmcp's types.
pub(crate) fn decode_as<R: ServiceRole>(
    text: &[u8],
    short_way: impl FnOnce(&[u8]) -> Option<RxJsonRpcMessage<R>>,
) -> Decoded<R> {
    let text = text.strip_prefix(UTF8_BOM).unwrap_or(text);
    if let Some(message) = short_way(text) {
        return Decoded::Message(message);
    }
    match serde_json::from_slice::<RxJsonRpcMessage<R>>(text) {
        Ok(message) => Decoded::Message(message),
        Err(e) => classify_failure(text, &e),
    }
}

/// Whether a field is in a message at all, `null` included: rmcp tells a
/// response from a request or an error by which keys are present.
#[derive(Default)]
pub(crate) struct Present(pub(crate) bool);

impl<'de> Deserialize<'de> for Present {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        IgnoredAny::deserialize(deserializer)?;
        Ok(Present(true))
    }
}

/// The envelope of a response, borrowed from the text.
#[derive(Deserialize)]
struct ResponseEnvelope<'a> {
    jsonrpc: Option<&'a str>,
    id: Option<rmcp::model::NumberOrString>,
    #[serde(borrow)]
    result: Option<&'a RawValue>,
    #[serde(default)]
    method: Present,
    #[serde(default)]
    error: Present,
}

/// The keys of a result that rmcp's untagged `ServerResult` can only read
/// as a `CallToolResult`.
///
/// Every result type rmcp tries before `CallToolResult` needs a field that
/// `CallToolResult` does not have (`tools`, `contents`, `action`, `task`,
/// ...), except `SubscriptionsListenResult`, which is `resultType` with a
/// `_meta`. So a result object whose keys are all `CallToolResult`'s, and
/// not both of those two, falls through every earlier type to
/// `CallToolResult`; if it parses as one, that is what rmcp makes of it.
/// (The property tests in `properties` check this against rmcp on
/// arbitrary results: a new rmcp whose union grows a type before
/// `CallToolResult` fails them.)
struct CallResultKeys;

impl<'de> Deserialize<'de> for CallResultKeys {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(CallResultKeys)
    }
}

impl<'de> serde::de::Visitor<'de> for CallResultKeys {
    type Value = CallResultKeys;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("an object with only CallToolResult's fields")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let (mut result_type, mut meta) = (false, false);
        while let Some(key) = map.next_key::<CallResultKey>()? {
            match key {
                CallResultKey::ResultType => result_type = true,
                CallResultKey::Meta => meta = true,
                CallResultKey::Content
                | CallResultKey::StructuredContent
                | CallResultKey::IsError => {}
                CallResultKey::Other => {
                    return Err(serde::de::Error::custom("not a CallToolResult field"));
                }
            }
            map.next_value::<IgnoredAny>()?;
        }
        if result_type && meta {
            return Err(serde::de::Error::custom(
                "could be a SubscriptionsListenResult",
            ));
        }
        Ok(CallResultKeys)
    }
}

/// One key of a result object, as [`CallResultKeys`] sorts it.
enum CallResultKey {
    ResultType,
    Content,
    StructuredContent,
    IsError,
    Meta,
    Other,
}

impl<'de> Deserialize<'de> for CallResultKey {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl serde::de::Visitor<'_> for KeyVisitor {
            type Value = CallResultKey;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a key")
            }

            fn visit_str<E: serde::de::Error>(self, key: &str) -> Result<CallResultKey, E> {
                Ok(match key {
                    "resultType" => CallResultKey::ResultType,
                    "content" => CallResultKey::Content,
                    "structuredContent" => CallResultKey::StructuredContent,
                    "isError" => CallResultKey::IsError,
                    "_meta" => CallResultKey::Meta,
                    _ => CallResultKey::Other,
                })
            }
        }
        deserializer.deserialize_str(KeyVisitor)
    }
}

/// The short way: a response whose result rmcp could only read as a
/// `CallToolResult`, and does.
fn call_result(text: &[u8]) -> Option<RxJsonRpcMessage<RoleClient>> {
    let envelope: ResponseEnvelope<'_> = serde_json::from_slice(text).ok()?;
    // rmcp's shape check: a response has a result and neither a method nor
    // an error, whatever their values.
    if envelope.jsonrpc != Some("2.0") || envelope.method.0 || envelope.error.0 {
        return None;
    }
    let id = envelope.id?;
    let result = envelope.result?.get();
    serde_json::from_str::<CallResultKeys>(result).ok()?;
    let result = call_tool_result(result)?;
    Some(JsonRpcMessage::Response(JsonRpcResponse {
        jsonrpc: JsonRpcVersion2_0,
        id,
        result: ServerResult::CallToolResult(result),
    }))
}

/// `result` as rmcp's `CallToolResult`, with its content list allocated once
/// at its final size.
///
/// Parsed whole, the content list grows by doubling: for 500,000 items of
/// 288 bytes (`ContentBlock`) the last growth holds 75 MB and 151 MB at
/// once. Here the items are first found as borrowed slices (16 bytes each),
/// the list is allocated for exactly that many, and each item is parsed
/// into it; the other members go through rmcp's own `CallToolResult` with
/// an empty list in its place, so every rule of rmcp's (a present
/// `structuredContent: null`, a `resultType`, at least one known field)
/// still applies. A repeated key, a key written with escapes or a
/// `content` that is not a list of content blocks gives `None` (rmcp's
/// generic path then decides).
fn call_tool_result(result: &str) -> Option<CallToolResult> {
    let Members(members) = serde_json::from_str(result).ok()?;
    let mut rest = String::from("{");
    let mut content = None;
    for (key, value) in members {
        if key == "content" && value.get() != "null" {
            content = Some(value);
            continue;
        }
        if rest.len() > 1 {
            rest.push(',');
        }
        rest.push('"');
        rest.push_str(key);
        rest.push_str("\":");
        rest.push_str(value.get());
    }
    if content.is_some() {
        if rest.len() > 1 {
            rest.push(',');
        }
        rest.push_str("\"content\":[]");
    }
    rest.push('}');
    let mut parsed: CallToolResult = serde_json::from_str(&rest).ok()?;
    if let Some(content) = content {
        let items: Vec<&RawValue> = serde_json::from_str(content.get()).ok()?;
        let mut blocks = Vec::with_capacity(items.len());
        for item in items {
            blocks.push(serde_json::from_str::<ContentBlock>(item.get()).ok()?);
        }
        parsed.content = blocks;
    }
    Some(parsed)
}

/// The members of a JSON object, borrowed from its text, in order. Fails on
/// a key written with escapes (it cannot be borrowed) or a repeated key.
struct Members<'a>(Vec<(&'a str, &'a RawValue)>);

impl<'de> Deserialize<'de> for Members<'de> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct MembersVisitor;
        impl<'de> serde::de::Visitor<'de> for MembersVisitor {
            type Value = Members<'de>;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an object")
            }

            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<Self::Value, A::Error> {
                let mut members: Vec<(&'de str, &'de RawValue)> = Vec::new();
                while let Some((key, value)) = map.next_entry::<&'de str, &'de RawValue>()? {
                    if members.iter().any(|(k, _)| *k == key) {
                        return Err(serde::de::Error::custom("a repeated key"));
                    }
                    members.push((key, value));
                }
                Ok(Members(members))
            }
        }
        deserializer.deserialize_map(MembersVisitor)
    }
}

/// What to do with text that is not a message rmcp accepts.
fn classify_failure<R: ServiceRole>(text: &[u8], error: &serde_json::Error) -> Decoded<R> {
    use serde_json::error::Category;
    let shown = String::from_utf8_lossy(&text[..text.len().min(200)]);
    match error.classify() {
        Category::Syntax | Category::Eof | Category::Io if looks_like_message(text) => {
            // A JSON-RPC message the parser cannot take: it may answer a
            // request, which should fail now rather than time out.
            let unreadable = Unreadable::unparsable(text, error);
            tracing::debug!(reason = %unreadable.reason, "unreadable message: {shown}");
            Decoded::Unreadable(unreadable)
        }
        Category::Syntax | Category::Eof | Category::Io => {
            // Not JSON: nothing to correlate a reply with, and replying to
            // noise can start an error storm. Other SDKs ignore it too.
            tracing::debug!("ignoring a message that is not JSON-RPC: {shown}");
            Decoded::Skip
        }
        Category::Data => {
            let value: serde_json::Value = serde_json::from_slice(text).unwrap_or_default();
            if value.get("id").is_some() {
                tracing::debug!("invalid JSON-RPC message ({error}): {shown}");
                Decoded::Invalid
            } else {
                // A notification we do not understand (LSP chatter, a
                // newer spec's notification): ignore it.
                tracing::debug!("ignoring a notification toolbridge does not know: {shown}");
                Decoded::Skip
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(decoded: Decoded) -> RxJsonRpcMessage<RoleClient> {
        match decoded {
            Decoded::Message(m) => m,
            other => panic!("expected a message, got {other:?}"),
        }
    }

    /// rmcp's own parse, as `Debug` text (its messages have no `PartialEq`;
    /// `Debug` shows every variant and field).
    fn generic(text: &str) -> String {
        let message: RxJsonRpcMessage<RoleClient> =
            serde_json::from_str(text).expect("rmcp parses it");
        format!("{message:?}")
    }

    #[test]
    fn a_call_result_decodes_as_rmcp_would() {
        let text = r#"{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"hi"},{"type":"image","data":"AA==","mimeType":"image/png"}],"isError":false,"structuredContent":{"a":1},"_meta":{"k":"v"}}}"#;
        assert!(call_result(text.as_bytes()).is_some(), "the short way");
        let decoded = message(decode(text.as_bytes()));
        assert_eq!(format!("{decoded:?}"), generic(text));
        let JsonRpcMessage::Response(response) = decoded else {
            panic!("a response")
        };
        assert!(matches!(response.result, ServerResult::CallToolResult(_)));
    }

    /// Regression (issue 16 item 5): 500,000 content items held 24 times
    /// their size, the list's last doubling among it.
    #[test]
    fn a_long_content_list_is_allocated_once_at_its_size() {
        let items = vec![r#"{"type":"text","text":"x"}"#; 1000].join(",");
        let text = format!(
            r#"{{"jsonrpc":"2.0","id":1,"result":{{"isError":false,"content":[{items}]}}}}"#
        );
        let decoded = message(decode(text.as_bytes()));
        assert_eq!(format!("{decoded:?}"), generic(&text));
        let JsonRpcMessage::Response(response) = decoded else {
            panic!("a response")
        };
        let ServerResult::CallToolResult(result) = response.result else {
            panic!("a call result")
        };
        assert_eq!(result.content.len(), 1000);
        assert_eq!(result.content.capacity(), 1000);
    }

    #[test]
    fn results_rmcp_reads_as_something_else_take_the_generic_path() {
        for text in [
            // a task instead of a result
            r#"{"jsonrpc":"2.0","id":1,"result":{"task":{"taskId":"t","status":"working","createdAt":"2026-01-01T00:00:00Z","lastUpdatedAt":"2026-01-01T00:00:00Z","ttl":null}}}"#,
            // no known field at all
            r#"{"jsonrpc":"2.0","id":2,"result":{"whatever":true}}"#,
            // call result fields next to another type's: rmcp makes it a tool list
            r#"{"jsonrpc":"2.0","id":3,"result":{"content":[],"tools":[]}}"#,
            // resultType and _meta: rmcp tries SubscriptionsListenResult first
            r#"{"jsonrpc":"2.0","id":4,"result":{"resultType":"complete","_meta":{"io.modelcontextprotocol/subscriptionId":1},"content":[]}}"#,
        ] {
            assert!(call_result(text.as_bytes()).is_none(), "{text}");
            assert_eq!(
                format!("{:?}", message(decode(text.as_bytes()))),
                generic(text),
                "{text}"
            );
        }
    }

    #[test]
    fn a_stray_method_or_error_makes_it_no_response_even_when_null() {
        // rmcp refuses these shapes; the short way must not accept them.
        for text in [
            r#"{"jsonrpc":"2.0","id":1,"method":null,"result":{"content":[]}}"#,
            r#"{"jsonrpc":"2.0","id":1,"error":null,"result":{"content":[]}}"#,
        ] {
            assert!(call_result(text.as_bytes()).is_none(), "{text}");
            assert!(
                matches!(decode(text.as_bytes()), Decoded::Invalid),
                "{text}"
            );
        }
    }

    #[test]
    fn noise_and_bad_messages() {
        assert!(matches!(decode(b"this is not JSON"), Decoded::Skip));
        assert!(matches!(decode(b"{not json either"), Decoded::Skip));
        // A message that looks like JSON-RPC but cannot be parsed is not
        // noise: the request it answers must fail.
        assert!(matches!(
            decode(b"{\"jsonrpc\":\"2.0\",\"id\":4,\"result\":\"\xff\"}"),
            Decoded::Unreadable(Unreadable { id: Some(_), .. })
        ));
        // A notification whose params do not fit: ignored, never answered.
        assert!(matches!(
            decode(br#"{"jsonrpc":"2.0","method":"notifications/progress","params":"x"}"#),
            Decoded::Skip
        ));
        assert!(matches!(
            decode(br#"{"jsonrpc":"1.0","id":1,"result":{}}"#),
            Decoded::Invalid
        ));
        let bom = b"\xEF\xBB\xBF{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}";
        assert!(matches!(decode(bom), Decoded::Message(_)));
    }
}
