//! Outgoing messages as JSON text: any message as rmcp writes it, and a
//! client's `tools/call` requests written straight from rmcp's structs.

use rmcp::{
    RoleClient,
    model::{
        CallToolRequestMethod, CallToolRequestParams, ClientRequest, JsonObject, JsonRpcMessage,
        JsonRpcRequest, JsonRpcVersion2_0, MetaObject, NumberOrString, RequestMetaObject,
    },
    service::TxJsonRpcMessage,
};
use serde::Serialize;

/// Appends `message` and a newline to `out`. On error `out` is left as it was.
pub(crate) fn encode_line(message: &impl Serialize, out: &mut Vec<u8>) -> serde_json::Result<()> {
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
/// [`encode_line`] would, writing `tools/call` requests through
/// [`CallRequestWire`]: rmcp's serializer turns every request's params into
/// a `serde_json::Value` tree (arguments included) before writing them, to
/// merge `_meta` maps, which was a seventh of the client's CPU with many
/// calls in flight.
pub(crate) fn encode_client_line(
    message: &TxJsonRpcMessage<RoleClient>,
    out: &mut Vec<u8>,
) -> serde_json::Result<()> {
    match CallRequestWire::of(message) {
        Some(call) => encode_line(&call, out),
        None => encode_line(message, out),
    }
}

/// A client's message as one JSON text without the newline (a WebSocket
/// frame, an HTTP body), encoded as [`encode_client_line`] does.
pub(crate) fn encode_client_json(
    message: &TxJsonRpcMessage<RoleClient>,
) -> serde_json::Result<Vec<u8>> {
    let mut text = Vec::with_capacity(256);
    encode_client_line(message, &mut text)?;
    text.pop();
    Ok(text)
}

/// A `tools/call` request as it goes on the wire,
/// `{"jsonrpc":"2.0","id":…,"method":"tools/call","params":{"_meta":…,"name":…,…}}`,
/// borrowed from rmcp's request.
///
/// It writes what rmcp's serializer writes (the properties in `properties`
/// compare the bytes on arbitrary requests): the envelope's fields in the
/// order `JsonRpcRequest` declares them, then `params` with the request's
/// `_meta` first and the params' own fields after it in declaration order
/// (rmcp's `Value` detour keeps that order because the workspace builds
/// serde_json with `preserve_order`). The one thing rmcp's detour does that
/// this does not is merge several `_meta` maps, so [`CallRequestWire::of`]
/// takes only requests with at most one.
#[derive(Serialize)]
struct CallRequestWire<'a> {
    jsonrpc: &'a JsonRpcVersion2_0,
    id: &'a NumberOrString,
    method: &'a CallToolRequestMethod,
    params: CallParamsWire<'a>,
}

/// The `params` of a [`CallRequestWire`].
#[derive(Serialize)]
struct CallParamsWire<'a> {
    /// The request's `_meta`, which rmcp keeps in the request's extensions.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    meta: Option<&'a JsonObject>,
    /// The params' own fields (their own `_meta` is `None`, see
    /// [`CallRequestWire::of`], so it is not written).
    #[serde(flatten)]
    params: &'a CallToolRequestParams,
}

impl<'a> CallRequestWire<'a> {
    /// The wire form of `message` when it is a `tools/call` request whose
    /// `_meta`, if any, is the request's own ([`RequestMetaObject`] in its
    /// extensions, where rmcp's peer puts it). A `_meta` on the params
    /// struct or the legacy [`MetaObject`] extension would have to be merged
    /// with it: those rare requests take rmcp's path.
    fn of(message: &'a TxJsonRpcMessage<RoleClient>) -> Option<Self> {
        let JsonRpcMessage::Request(JsonRpcRequest {
            jsonrpc,
            id,
            request: ClientRequest::CallToolRequest(call),
        }) = message
        else {
            return None;
        };
        if call.params.meta.is_some() || call.extensions.get::<MetaObject>().is_some() {
            return None;
        }
        Some(CallRequestWire {
            jsonrpc,
            id,
            method: &call.method,
            params: CallParamsWire {
                meta: call
                    .extensions
                    .get::<RequestMetaObject>()
                    .map(|meta| &meta.0.0),
                params: &call.params,
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use rmcp::model::{ClientNotification, NumberOrString};

    use super::*;
    use crate::transport::codec::properties::call_with;

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
            call_with(NumberOrString::Number(1), "echo", None, None),
            call_with(
                NumberOrString::Number(2),
                "echo",
                Some(arguments.clone()),
                None,
            ),
            call_with(
                NumberOrString::Number(3),
                "echo",
                Some(arguments.clone()),
                Some(context.clone()),
            ),
            call_with(
                NumberOrString::Number(-4),
                "echo",
                None,
                Some(context.clone()),
            ),
            call_with(
                NumberOrString::Number(5),
                "echo",
                None,
                Some(serde_json::json!({})),
            ),
            call_with(
                NumberOrString::String("req-6".into()),
                "echo",
                Some(arguments),
                Some(context),
            ),
        ];
        for message in &cases {
            assert!(CallRequestWire::of(message).is_some());
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
        assert!(CallRequestWire::of(&message).is_none());
        let (ours, rmcps) = both_encodings(&message);
        assert_eq!(ours, rmcps);
        assert!(
            ours.contains(r#""a":1"#) && ours.contains(r#""b":2"#) && ours.contains(r#""c":3"#)
        );
    }

    #[test]
    fn other_messages_are_rmcps() {
        let message: TxJsonRpcMessage<RoleClient> =
            JsonRpcMessage::notification(ClientNotification::CancelledNotification(
                rmcp::model::Notification::new(rmcp::model::CancelledNotificationParam::new(
                    Some(NumberOrString::Number(5)),
                    Some("timeout".into()),
                )),
            ));
        assert!(CallRequestWire::of(&message).is_none());
        let (ours, rmcps) = both_encodings(&message);
        assert_eq!(ours, rmcps);
    }

    #[test]
    fn encode_appends_one_line() {
        let mut out = b"x\n".to_vec();
        let call = call_with(NumberOrString::Number(1), "echo", None, None);
        encode_line(&call, &mut out).unwrap();
        assert_eq!(out.last(), Some(&b'\n'));
        let line = &out[2..out.len() - 1];
        assert!(!line.contains(&b'\n'));
        let value: serde_json::Value = serde_json::from_slice(line).unwrap();
        assert_eq!(value["method"], "tools/call");
        assert_eq!(value["id"], 1);
    }
}
