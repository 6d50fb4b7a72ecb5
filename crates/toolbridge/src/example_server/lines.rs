//! [`ServerLines`]: the example server's side of newline-delimited JSON-RPC
//! (its stdin and stdout), on the same line framing as the stdio client,
//! with incoming `tools/call` requests parsed without trying every request
//! type first.

use rmcp::{
    RoleServer,
    model::{CallToolRequest, ClientRequest, JsonRpcMessage, JsonRpcRequest, JsonRpcVersion2_0},
    service::{RxJsonRpcMessage, TxJsonRpcMessage},
    transport::Transport,
};
use serde::Deserialize;
use tokio::io::{AsyncRead, AsyncWrite};

use crate::transport::{
    codec::{Decoded, Present, decode_as, encode_line},
    lines::Lines,
};

/// A server's side of newline-delimited JSON-RPC over `read` and `write`
/// (for example a process's stdin and stdout), with coalesced writes and
/// `tools/call` requests parsed without trying every request type first.
pub struct ServerLines<R, W> {
    lines: Lines<R, W>,
}

impl<R, W> ServerLines<R, W>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    /// Serves over `read` (requests in) and `write` (responses out).
    pub fn new(read: R, write: W) -> Self {
        ServerLines {
            lines: Lines::new(read, write),
        }
    }
}

impl<R, W> Transport<RoleServer> for ServerLines<R, W>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.lines.send(&mut |out| encode_line(&item, out))
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        self.lines.receive(decode_for_server).await
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.lines.close();
        Ok(())
    }
}

/// Parses one message a server received, taking the short way for
/// `tools/call` requests.
fn decode_for_server(text: &[u8]) -> Decoded<RoleServer> {
    decode_as(text, call_request)
}

/// The envelope of a request, borrowed from the text.
#[derive(Deserialize)]
struct RequestEnvelope<'a> {
    jsonrpc: Option<&'a str>,
    id: Option<rmcp::model::NumberOrString>,
    method: Option<&'a str>,
    #[serde(default)]
    result: Present,
    #[serde(default)]
    error: Present,
}

/// The short way: a `tools/call` request parsed as one. rmcp reads a
/// message with a method and an id, and neither a result nor an error, as a
/// request, and its `ClientRequest` tells the variants apart by method, so
/// a request whose method is `tools/call` and whose params are a
/// `CallToolRequest`'s is one; its `params`, with their `_meta`, are read
/// by rmcp's own type.
fn call_request(text: &[u8]) -> Option<RxJsonRpcMessage<RoleServer>> {
    let envelope: RequestEnvelope<'_> = serde_json::from_slice(text).ok()?;
    if envelope.jsonrpc != Some("2.0")
        || envelope.method != Some("tools/call")
        || envelope.result.0
        || envelope.error.0
    {
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

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::transport::codec::properties::{arb_client_message_text, outcome};

    fn generic(text: &str) -> String {
        outcome(decode_as::<RoleServer>(text.as_bytes(), |_| None))
    }

    fn is_call(decoded: &Decoded<RoleServer>) -> bool {
        matches!(
            decoded,
            Decoded::Message(JsonRpcMessage::Request(JsonRpcRequest {
                request: ClientRequest::CallToolRequest(_),
                ..
            }))
        )
    }

    #[test]
    fn a_call_request_decodes_on_the_server_as_rmcp_would() {
        for text in [
            // 2026-07-28: per-request _meta, which rmcp keeps in extensions
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"},"io.modelcontextprotocol/clientCapabilities":{},"progressToken":0},"name":"echo","arguments":{"text":"hi"}}}"#,
            // initialize-era, string id, no arguments
            r#"{"id":"a","method":"tools/call","jsonrpc":"2.0","params":{"name":"hello"}}"#,
        ] {
            assert!(call_request(text.as_bytes()).is_some(), "{text}");
            let fast = decode_for_server(text.as_bytes());
            assert!(is_call(&fast), "{text}");
            assert_eq!(outcome(fast), generic(text), "{text}");
        }
        // Anything else takes rmcp's path: other methods, a tools/call
        // without params (not a CallToolRequest; rmcp makes it a custom
        // one), and one with a stray `result` (rmcp refuses that shape).
        for text in [
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#,
            r#"{"jsonrpc":"2.0","id":3,"method":"tools/call"}"#,
            r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"x"},"result":null}"#,
        ] {
            assert!(call_request(text.as_bytes()).is_none(), "{text}");
            let decoded = decode_for_server(text.as_bytes());
            assert!(!is_call(&decoded), "{text}");
            assert_eq!(outcome(decoded), generic(text), "{text}");
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2048))]

        /// Whatever a client sends, the short way gives what rmcp's own
        /// parse gives.
        #[test]
        fn the_short_way_decodes_client_messages_as_rmcp_does(text in arb_client_message_text()) {
            let ours = outcome(decode_for_server(text.as_bytes()));
            prop_assert_eq!(ours, generic(&text), "{}", text);
        }
    }
}
