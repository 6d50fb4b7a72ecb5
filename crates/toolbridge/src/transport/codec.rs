//! JSON-RPC messages as text, for the transports that frame messages
//! themselves (stdio lines, WebSocket frames, SSE events), both sides.
//!
//! rmcp parses an incoming message as the untagged `JsonRpcMessage`, whose
//! result is the untagged `ServerResult`: serde buffers the whole message and
//! then tries the variants in turn, and `CallToolResult` is the sixteenth of
//! them. In a profile of many calls in flight that was 39% of the client's CPU.
//! A client knows which request a response answers, so [`Decoder`] remembers
//! the ids of the `tools/call` requests sent through it and parses their
//! results as `CallToolResult` straight away. Everything else, including a
//! result that is not a valid `CallToolResult`, goes through rmcp's own
//! types, so a caller gets exactly what rmcp's generic path would give.
//! A server does the same for incoming `tools/call` requests
//! ([`decode_for_server`]), whose method names them.

use std::collections::HashSet;

use rmcp::{
    RoleClient, RoleServer,
    model::{
        CallToolRequest, CallToolResult, ClientNotification, ClientRequest, JsonRpcMessage,
        JsonRpcRequest, JsonRpcResponse, JsonRpcVersion2_0, MetaObject, NumberOrString,
        RequestMetaObject, ServerResult,
    },
    service::{RxJsonRpcMessage, ServiceRole, TxJsonRpcMessage},
};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

/// Beyond this many unanswered calls the oldest ids are forgotten (their
/// answers then take the generic path, which is slower, not wrong).
const MAX_TRACKED_CALLS: usize = 1 << 16;

const UTF8_BOM: &[u8] = b"\xEF\xBB\xBF";

/// Appends `message` and a newline to `out`. On error `out` is left as it was.
pub fn encode_line(message: &impl Serialize, out: &mut Vec<u8>) -> serde_json::Result<()> {
    append_line(out, |out| serde_json::to_writer(out, message))
}

/// Appends what `write` writes and a newline to `out`; on error `out` is
/// left as it was.
fn append_line(
    out: &mut Vec<u8>,
    write: impl FnOnce(&mut Vec<u8>) -> serde_json::Result<()>,
) -> serde_json::Result<()> {
    let start = out.len();
    match write(out) {
        Ok(()) => {
            out.push(b'\n');
            Ok(())
        }
        Err(e) => {
            out.truncate(start);
            Err(e)
        }
    }
}

/// Appends a client's message and a newline to `out`, byte for byte as
/// [`encode_line`] would, writing `tools/call` requests directly: rmcp's
/// serializer turns every request's params into a `serde_json::Value` tree
/// (arguments included) before writing them, to merge `_meta` maps, which
/// was a seventh of the client's CPU with many calls in flight.
pub fn encode_client_line(
    message: &TxJsonRpcMessage<RoleClient>,
    out: &mut Vec<u8>,
) -> serde_json::Result<()> {
    match message {
        JsonRpcMessage::Request(JsonRpcRequest {
            id,
            request: ClientRequest::CallToolRequest(call),
            ..
        }) if call.params.meta.is_none() && call.extensions.get::<MetaObject>().is_none() => {
            append_line(out, |out| write_call_request(id, call, out))
        }
        _ => encode_line(message, out),
    }
}

/// A client's message as one JSON text without the newline (a WebSocket
/// frame, an HTTP body), encoded as [`encode_client_line`] does.
pub fn encode_client_json(message: &TxJsonRpcMessage<RoleClient>) -> serde_json::Result<Vec<u8>> {
    let mut text = Vec::with_capacity(256);
    encode_client_line(message, &mut text)?;
    text.pop();
    Ok(text)
}

/// `{"jsonrpc":"2.0","id":…,"method":"tools/call","params":{"_meta":…,…}}`:
/// the request's `_meta` (from its extensions, where rmcp
/// puts it) first, then the params' own fields, as rmcp writes them.
fn write_call_request(
    id: &NumberOrString,
    call: &CallToolRequest,
    out: &mut Vec<u8>,
) -> serde_json::Result<()> {
    out.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
    serde_json::to_writer(&mut *out, id)?;
    out.extend_from_slice(br#","method":"tools/call","params":"#);
    match call.extensions.get::<RequestMetaObject>() {
        Some(meta) => {
            out.extend_from_slice(br#"{"_meta":"#);
            serde_json::to_writer(&mut *out, &meta.0.0)?;
            out.push(b',');
            let params = out.len();
            serde_json::to_writer(&mut *out, &call.params)?;
            // The params' own `{` (they always have a name, so never `{}`).
            out.remove(params);
        }
        None => serde_json::to_writer(&mut *out, &call.params)?,
    }
    out.push(b'}');
    Ok(())
}

/// What one incoming text turned out to be.
#[derive(Debug)]
pub enum Decoded<R: ServiceRole = RoleClient> {
    /// A message for rmcp.
    Message(RxJsonRpcMessage<R>),
    /// Nothing to deliver: not JSON at all, or a notification this client
    /// does not know (both logged at debug).
    Skip,
    /// Well-formed JSON with an id that is not a valid message; JSON-RPC
    /// asks for an "Invalid Request" error in reply (as rmcp sends).
    Invalid,
}

/// Parses incoming messages, taking the short way for `tools/call` results.
#[derive(Debug, Default)]
pub struct Decoder {
    /// Ids of the `tools/call` requests sent and not yet answered.
    calls: HashSet<i64>,
}

/// The envelope of a response, borrowed from the text.
#[derive(Deserialize)]
struct Envelope<'a> {
    jsonrpc: Option<&'a str>,
    id: Option<NumberOrString>,
    #[serde(borrow)]
    result: Option<&'a RawValue>,
    method: Option<serde::de::IgnoredAny>,
    error: Option<serde::de::IgnoredAny>,
}

impl Decoder {
    /// Notes a message about to be sent (call ids to expect answers for;
    /// cancelled calls are forgotten).
    pub fn note_sent(&mut self, message: &TxJsonRpcMessage<RoleClient>) {
        match message {
            JsonRpcMessage::Request(JsonRpcRequest {
                id: NumberOrString::Number(id),
                request: ClientRequest::CallToolRequest(_),
                ..
            }) => {
                if self.calls.len() >= MAX_TRACKED_CALLS {
                    self.calls.clear();
                }
                self.calls.insert(*id);
            }
            JsonRpcMessage::Notification(n) => {
                if let ClientNotification::CancelledNotification(c) = &n.notification
                    && let Some(NumberOrString::Number(id)) = &c.params.request_id
                {
                    self.calls.remove(id);
                }
            }
            _ => {}
        }
    }

    /// Parses one message (a line without its newline, a frame, an event's data).
    pub fn decode(&mut self, text: &[u8]) -> Decoded {
        let text = text.strip_prefix(UTF8_BOM).unwrap_or(text);
        if !self.calls.is_empty()
            && let Some(message) = self.call_result(text)
        {
            return Decoded::Message(message);
        }
        match serde_json::from_slice::<RxJsonRpcMessage<RoleClient>>(text) {
            Ok(message) => Decoded::Message(message),
            Err(e) => classify_failure(text, &e),
        }
    }

    /// The short way: a response to a call we sent whose result is a valid
    /// `CallToolResult`.
    fn call_result(&mut self, text: &[u8]) -> Option<RxJsonRpcMessage<RoleClient>> {
        let envelope: Envelope<'_> = serde_json::from_slice(text).ok()?;
        if envelope.jsonrpc != Some("2.0") || envelope.method.is_some() || envelope.error.is_some()
        {
            return None;
        }
        let Some(NumberOrString::Number(id)) = envelope.id else {
            return None;
        };
        if !self.calls.contains(&id) {
            return None;
        }
        let result: CallToolResult = serde_json::from_str(envelope.result?.get()).ok()?;
        self.calls.remove(&id);
        Some(JsonRpcMessage::Response(JsonRpcResponse {
            jsonrpc: JsonRpcVersion2_0,
            id: NumberOrString::Number(id),
            result: ServerResult::CallToolResult(result),
        }))
    }
}

/// Parses one message a server received, taking the short way for
/// `tools/call` requests.
pub fn decode_for_server(text: &[u8]) -> Decoded<RoleServer> {
    let text = text.strip_prefix(UTF8_BOM).unwrap_or(text);
    if let Some(message) = call_request(text) {
        return Decoded::Message(message);
    }
    match serde_json::from_slice::<RxJsonRpcMessage<RoleServer>>(text) {
        Ok(message) => Decoded::Message(message),
        Err(e) => classify_failure(text, &e),
    }
}

/// The envelope of a request, borrowed from the text.
#[derive(Deserialize)]
struct RequestEnvelope<'a> {
    jsonrpc: Option<&'a str>,
    id: Option<NumberOrString>,
    method: Option<&'a str>,
}

/// The short way: a `tools/call` request parsed as one (its `params`, with
/// their `_meta`, exactly as rmcp's own type reads them).
fn call_request(text: &[u8]) -> Option<RxJsonRpcMessage<RoleServer>> {
    let envelope: RequestEnvelope<'_> = serde_json::from_slice(text).ok()?;
    if envelope.jsonrpc != Some("2.0") || envelope.method != Some("tools/call") {
        return None;
    }
    let id = envelope.id?;
    let request: CallToolRequest = serde_json::from_slice(text).ok()?;
    Some(JsonRpcMessage::Request(JsonRpcRequest {
        jsonrpc: JsonRpcVersion2_0,
        id,
        request: ClientRequest::CallToolRequest(request),
    }))
}

/// What to do with text that is not a message rmcp accepts.
fn classify_failure<R: ServiceRole>(text: &[u8], error: &serde_json::Error) -> Decoded<R> {
    use serde_json::error::Category;
    let shown = String::from_utf8_lossy(&text[..text.len().min(200)]);
    match error.classify() {
        Category::Syntax | Category::Eof | Category::Io => {
            // Not JSON: nothing to correlate a reply with, and replying to
            // noise can start an error storm. Other SDKs ignore it too.
            tracing::debug!("ignoring a line that is not JSON-RPC: {shown}");
            Decoded::Skip
        }
        Category::Data => {
            let value: serde_json::Value = serde_json::from_slice(text).unwrap_or_default();
            if value.get("id").is_none() {
                // A notification we do not understand (LSP chatter, a
                // newer spec's notification): ignore it.
                tracing::debug!("ignoring a notification toolbridge does not know: {shown}");
                Decoded::Skip
            } else {
                tracing::debug!("invalid JSON-RPC message ({error}): {shown}");
                Decoded::Invalid
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use rmcp::model::{CallToolRequestParams, ServerResult};

    use super::*;

    /// A `tools/call` request as rmcp's peer sends it: `_meta` in the
    /// extensions, with the 2026-07-28 client context and a progress token.
    fn call_with(
        id: NumberOrString,
        arguments: Option<serde_json::Value>,
        meta: Option<serde_json::Value>,
    ) -> TxJsonRpcMessage<RoleClient> {
        let mut params = CallToolRequestParams::new("echo");
        if let Some(serde_json::Value::Object(arguments)) = arguments {
            params = params.with_arguments(arguments);
        }
        let mut request = rmcp::model::Request::new(params);
        if let Some(serde_json::Value::Object(meta)) = meta {
            request
                .extensions
                .insert(RequestMetaObject(MetaObject(meta)));
        }
        JsonRpcMessage::request(ClientRequest::CallToolRequest(request), id)
    }

    fn both_encodings(message: &TxJsonRpcMessage<RoleClient>) -> (String, String) {
        let (mut ours, mut rmcps) = (b"[".to_vec(), b"[".to_vec());
        encode_client_line(message, &mut ours).unwrap();
        encode_line(message, &mut rmcps).unwrap();
        (
            String::from_utf8(ours).unwrap(),
            String::from_utf8(rmcps).unwrap(),
        )
    }

    #[test]
    fn call_requests_are_written_byte_for_byte_as_rmcp_writes_them() {
        let context = serde_json::json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {"name": "toolbridge", "version": "0.1.0"},
            "io.modelcontextprotocol/clientCapabilities": {},
            "progressToken": 7
        });
        let arguments = serde_json::json!({
            "text": "a \"quoted\" line\nand ünïcödé \u{1F600} \u{0007}",
            "nested": {"z": [1, 2.5, null, true], "a": {}},
        });
        let cases = [
            call_with(NumberOrString::Number(1), None, None),
            call_with(NumberOrString::Number(2), Some(arguments.clone()), None),
            call_with(
                NumberOrString::Number(3),
                Some(arguments.clone()),
                Some(context.clone()),
            ),
            call_with(NumberOrString::Number(-4), None, Some(context.clone())),
            call_with(NumberOrString::Number(5), None, Some(serde_json::json!({}))),
            call_with(
                NumberOrString::String("req-6".into()),
                Some(arguments),
                Some(context),
            ),
        ];
        for message in &cases {
            let (ours, rmcps) = both_encodings(message);
            assert_eq!(ours, rmcps);
            assert!(ours.starts_with("[{") && ours.ends_with("}\n"), "{ours}");
            let json = encode_client_json(message).unwrap();
            assert_eq!(format!("[{}\n", String::from_utf8(json).unwrap()), ours);
        }
    }

    #[test]
    fn requests_with_meta_in_other_places_take_rmcps_path() {
        // `_meta` on the params themselves, or the legacy extension, are
        // merged by rmcp's serializer: the output is still rmcp's.
        let mut params = CallToolRequestParams::new("echo");
        params.meta = Some(RequestMetaObject(MetaObject(
            serde_json::json!({"a": 1}).as_object().unwrap().clone(),
        )));
        let mut request = rmcp::model::Request::new(params);
        request.extensions.insert(RequestMetaObject(MetaObject(
            serde_json::json!({"b": 2}).as_object().unwrap().clone(),
        )));
        request.extensions.insert(MetaObject(
            serde_json::json!({"c": 3}).as_object().unwrap().clone(),
        ));
        let message = JsonRpcMessage::request(
            ClientRequest::CallToolRequest(request),
            NumberOrString::Number(9),
        );
        let (ours, rmcps) = both_encodings(&message);
        assert_eq!(ours, rmcps);
        assert!(
            ours.contains(r#""a":1"#) && ours.contains(r#""b":2"#) && ours.contains(r#""c":3"#)
        );
    }

    fn call_request(id: i64) -> TxJsonRpcMessage<RoleClient> {
        JsonRpcMessage::request(
            ClientRequest::CallToolRequest(rmcp::model::Request::new(CallToolRequestParams::new(
                "echo",
            ))),
            NumberOrString::Number(id),
        )
    }

    fn message(decoded: Decoded) -> RxJsonRpcMessage<RoleClient> {
        match decoded {
            Decoded::Message(m) => m,
            other => panic!("expected a message, got {other:?}"),
        }
    }

    /// The generic path, as rmcp parses it, as JSON (rmcp's messages have
    /// no `PartialEq`).
    fn generic(text: &str) -> serde_json::Value {
        let message: RxJsonRpcMessage<RoleClient> =
            serde_json::from_str(text).expect("rmcp parses it");
        json(&message)
    }

    fn json(message: &RxJsonRpcMessage<RoleClient>) -> serde_json::Value {
        serde_json::to_value(message).expect("serializable")
    }

    #[test]
    fn a_call_result_decodes_as_rmcp_would() {
        let mut decoder = Decoder::default();
        decoder.note_sent(&call_request(7));
        let text = r#"{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"hi"},{"type":"image","data":"AA==","mimeType":"image/png"}],"isError":false,"structuredContent":{"a":1},"_meta":{"k":"v"}}}"#;
        let decoded = message(decoder.decode(text.as_bytes()));
        assert!(decoder.calls.is_empty(), "the answered call is forgotten");
        assert_eq!(json(&decoded), generic(text));
        let JsonRpcMessage::Response(response) = decoded else {
            panic!("a response")
        };
        assert!(matches!(response.result, ServerResult::CallToolResult(_)));
    }

    #[test]
    fn results_that_are_not_call_results_take_the_generic_path() {
        let mut decoder = Decoder::default();
        for id in 1..=4 {
            decoder.note_sent(&call_request(id));
        }
        for text in [
            // a task instead of a result
            r#"{"jsonrpc":"2.0","id":1,"result":{"task":{"taskId":"t","status":"working","createdAt":"2026-01-01T00:00:00Z","lastUpdatedAt":"2026-01-01T00:00:00Z","ttl":null}}}"#,
            // no known field at all
            r#"{"jsonrpc":"2.0","id":2,"result":{"whatever":true}}"#,
            // an error answer
            r#"{"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"bad"}}"#,
            // a response to an id we never sent a call with
            r#"{"jsonrpc":"2.0","id":99,"result":{"content":[]}}"#,
        ] {
            assert_eq!(
                json(&message(decoder.decode(text.as_bytes()))),
                generic(text),
                "{text}"
            );
        }
    }

    #[test]
    fn a_cancelled_call_is_forgotten() {
        let mut decoder = Decoder::default();
        decoder.note_sent(&call_request(5));
        let cancel: TxJsonRpcMessage<RoleClient> =
            JsonRpcMessage::notification(ClientNotification::CancelledNotification(
                rmcp::model::Notification::new(rmcp::model::CancelledNotificationParam::new(
                    Some(NumberOrString::Number(5)),
                    Some("timeout".into()),
                )),
            ));
        decoder.note_sent(&cancel);
        assert!(decoder.calls.is_empty());
    }

    #[test]
    fn noise_and_bad_messages() {
        let mut decoder = Decoder::default();
        assert!(matches!(decoder.decode(b"this is not JSON"), Decoded::Skip));
        assert!(matches!(decoder.decode(b"{not json either"), Decoded::Skip));
        // A notification whose params do not fit: ignored, never answered.
        assert!(matches!(
            decoder.decode(br#"{"jsonrpc":"2.0","method":"notifications/progress","params":"x"}"#),
            Decoded::Skip
        ));
        assert!(matches!(
            decoder.decode(br#"{"jsonrpc":"1.0","id":1,"result":{}}"#),
            Decoded::Invalid
        ));
        let bom = b"\xEF\xBB\xBF{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}";
        assert!(matches!(decoder.decode(bom), Decoded::Message(_)));
    }

    #[test]
    fn a_call_request_decodes_on_the_server_as_rmcp_would() {
        let generic = |text: &str| {
            let message: RxJsonRpcMessage<RoleServer> =
                serde_json::from_str(text).expect("rmcp parses it");
            serde_json::to_value(&message).unwrap()
        };
        for text in [
            // 2026-07-28: per-request _meta, which rmcp keeps in extensions
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"},"io.modelcontextprotocol/clientCapabilities":{},"progressToken":0},"name":"echo","arguments":{"text":"hi"}}}"#,
            // initialize-era, string id, no arguments
            r#"{"id":"a","method":"tools/call","jsonrpc":"2.0","params":{"name":"hello"}}"#,
        ] {
            let Decoded::Message(fast) = decode_for_server(text.as_bytes()) else {
                panic!("{text} must decode");
            };
            assert!(
                matches!(
                    &fast,
                    JsonRpcMessage::Request(JsonRpcRequest {
                        request: ClientRequest::CallToolRequest(_),
                        ..
                    })
                ),
                "{text}"
            );
            assert_eq!(
                serde_json::to_value(&fast).unwrap(),
                generic(text),
                "{text}"
            );
        }
        // Anything else takes rmcp's path: other methods, and a tools/call
        // without params (not a CallToolRequest; rmcp makes it a custom one).
        for text in [
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#,
            r#"{"jsonrpc":"2.0","id":3,"method":"tools/call"}"#,
        ] {
            let Decoded::Message(message) = decode_for_server(text.as_bytes()) else {
                panic!("{text} must decode");
            };
            assert!(
                !matches!(
                    &message,
                    JsonRpcMessage::Request(JsonRpcRequest {
                        request: ClientRequest::CallToolRequest(_),
                        ..
                    })
                ),
                "{text}"
            );
            assert_eq!(
                serde_json::to_value(&message).unwrap(),
                generic(text),
                "{text}"
            );
        }
    }

    #[test]
    fn encode_appends_one_line() {
        let mut out = b"x\n".to_vec();
        encode_line(&call_request(1), &mut out).unwrap();
        assert_eq!(out.last(), Some(&b'\n'));
        let line = &out[2..out.len() - 1];
        assert!(!line.contains(&b'\n'));
        let value: serde_json::Value = serde_json::from_slice(line).unwrap();
        assert_eq!(value["method"], "tools/call");
        assert_eq!(value["id"], 1);
    }
}
