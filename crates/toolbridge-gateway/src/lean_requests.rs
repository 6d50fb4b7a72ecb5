//! The POSTs the gateway answers without rmcp, recognised and parsed: a
//! stateless (2026-07-28) `tools/call` or `tools/list` rmcp would take as
//! it is (no session, the 2026-07-28 version in the `MCP-Protocol-Version`
//! header and in complete request `_meta`, `Mcp-Method` / `Mcp-Name`
//! headers matching the body, an `Accept` naming JSON and event streams),
//! and the pieces [`crate::direct_sessions`] reads a session's POST with.
//! A call whose client can be asked something mid-call (it declares
//! elicitation, sampling or roots) or answers such a question
//! (`requestState`) is held as rmcp's path holds it
//! ([`crate::held_calls`]). Everything else (other methods, every malformed
//! request and its error) goes to rmcp's service unchanged.

// Logging is deprecated by SEP-2577 (rmcp 3.11 warns), but 2026-07-28
// clients still ask for log messages in a request's `_meta`.
#![allow(deprecated)]

use http::{HeaderMap, Method, header};
use rmcp::model::{
    CallToolRequestParams, JsonRpcVersion2_0, PaginatedRequestParams, ProgressToken,
    ProtocolVersion, RequestId, RequestMetaObject,
};

use crate::{tool_calls::Caller, trace_context::TraceContext};

/// The largest body read here; a larger one goes to rmcp, which enforces
/// its own limit (the same 4 MiB).
pub(crate) const MAX_BODY: u64 = 4 * 1024 * 1024;
/// The header naming a 2025-11-25 client's session.
const SESSION_HEADER: &str = "mcp-session-id";
/// What rmcp puts before a Base64-encoded header value (SEP-2243).
const BASE64_HEADER_PREFIX: &str = "=?base64?";

/// The request this module serves, parsed.
pub(crate) enum Lean {
    Call {
        id: RequestId,
        params: CallToolRequestParams,
        caller: Caller,
        log_level: Option<rmcp::model::LoggingLevel>,
        progress: Option<ProgressToken>,
        /// The application, from `_meta`'s clientInfo (the page's Home).
        app: Option<Box<rmcp::model::Implementation>>,
        /// The client's W3C trace context (`_meta`, else the headers);
        /// boxed, as most requests have none.
        trace: Option<Box<TraceContext>>,
    },
    /// `tools/list`, with the client's trace context if it sent one.
    List(
        RequestId,
        Option<PaginatedRequestParams>,
        Option<Box<TraceContext>>,
    ),
}

/// Whether the headers are those of a stateless 2026-07-28 POST rmcp would
/// take as they are.
pub(crate) fn lean_headers(method: &Method, headers: &HeaderMap) -> bool {
    *method == Method::POST
        && !headers.contains_key(SESSION_HEADER)
        && only(headers, "mcp-protocol-version")
            .is_some_and(|v| v == ProtocolVersion::V_2026_07_28.as_str())
        && json_body_headers(headers)
}

/// Whether a POST's headers say its body is one JSON message of at most
/// [`MAX_BODY`] bytes and its client takes JSON and event streams: what
/// both the stateless lane and a session's direct calls require before
/// they read the body.
pub(crate) fn json_body_headers(headers: &HeaderMap) -> bool {
    only(headers, header::CONTENT_TYPE.as_str()).is_some_and(|v| {
        v.split(';')
            .next()
            .is_some_and(|essence| essence.trim().eq_ignore_ascii_case("application/json"))
    }) && only(headers, header::ACCEPT.as_str()).is_some_and(accepts_json_and_events)
        && only(headers, header::CONTENT_LENGTH.as_str())
            .and_then(|v| v.parse::<u64>().ok())
            .is_some_and(|len| len <= MAX_BODY)
}

/// A request body read whole (its length was checked against
/// [`MAX_BODY`] by [`json_body_headers`]); a 400 when it cannot be read.
pub(crate) async fn read_body(
    body: axum::body::Body,
) -> Result<axum::body::Bytes, axum::response::Response> {
    use axum::response::IntoResponse as _;
    axum::body::to_bytes(body, MAX_BODY as usize)
        .await
        .map_err(|_| {
            (
                http::StatusCode::BAD_REQUEST,
                "Bad Request: the request body could not be read",
            )
                .into_response()
        })
}

/// An `Accept` value that plainly lists both `application/json` and
/// `text/event-stream` (no weights: those are left to rmcp to judge).
pub(crate) fn accepts_json_and_events(accept: &str) -> bool {
    let mut json = false;
    let mut events = false;
    for item in accept.split(',') {
        let item = item.trim();
        if item.contains(';') {
            return false;
        }
        json |= item.eq_ignore_ascii_case("application/json");
        events |= item.eq_ignore_ascii_case("text/event-stream");
    }
    json && events
}

/// The one value of header `name`, if it has exactly one and it is text.
pub(crate) fn only<'h>(headers: &'h HeaderMap, name: &str) -> Option<&'h str> {
    let mut values = headers.get_all(name).iter();
    let value = values.next()?;
    if values.next().is_some() {
        return None;
    }
    value.to_str().ok()
}

/// A JSON-RPC request as it comes, its params left as they are until the
/// method says what they are. Exactly these four keys: anything else (a
/// batch, a stray `result`, an extension) is left to rmcp.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Envelope<'a> {
    /// "2.0", checked by its type.
    #[serde(rename = "jsonrpc")]
    _version: JsonRpcVersion2_0,
    pub id: RequestId,
    #[serde(borrow)]
    pub method: std::borrow::Cow<'a, str>,
    #[serde(borrow)]
    pub params: &'a serde_json::value::RawValue,
}

/// The request in `body`, when this module serves it.
///
/// Parsed here rather than as rmcp's `ClientJsonRpcMessage`, whose untagged
/// enum and flattened `_meta` buffer the whole message before reading it:
/// that was 15% of the gateway's CPU per call (docs/performance.md). The
/// params end as rmcp's parse leaves them (`_meta` taken out).
pub(crate) fn parse(headers: &HeaderMap, body: &[u8]) -> Option<Lean> {
    let envelope: Envelope<'_> = serde_json::from_slice(body).ok()?;
    let method = only(headers, "mcp-method")?;
    if method != envelope.method {
        return None;
    }
    let id = envelope.id;
    match method {
        "tools/call" => {
            let mut params: CallToolRequestParams =
                serde_json::from_str(envelope.params.get()).ok()?;
            let meta = checked_meta(params.meta.take())?;
            let name = only(headers, "mcp-name")?;
            if name != params.name || name.starts_with(BASE64_HEADER_PREFIX) {
                return None;
            }
            // A client that may be asked something mid-call (it declares
            // elicitation, sampling or roots) or answers such a question
            // (`requestState`) gets a held call.
            let declared = meta.client_capabilities();
            if crate::gateway_tasks::wanted(declared.as_ref()) {
                // A task, through rmcp's handler ([`crate::gateway_tasks`]).
                return None;
            }
            let may_be_asked = declared.as_ref().is_some_and(|c| {
                c.elicitation.is_some() || c.sampling.is_some() || c.roots.is_some()
            });
            let caller = if may_be_asked || params.request_state.is_some() {
                Caller::Stateless {
                    declared: declared.map(Box::new),
                }
            } else {
                Caller::Direct
            };
            Some(Lean::Call {
                id,
                params,
                caller,
                log_level: meta.log_level(),
                progress: meta.get_progress_token(),
                app: meta.client_info().map(Box::new),
                trace: TraceContext::incoming(Some(&meta.0), Some(headers)).map(Box::new),
            })
        }
        "tools/list" if !headers.contains_key("mcp-name") => {
            let mut params: PaginatedRequestParams =
                serde_json::from_str(envelope.params.get()).ok()?;
            let meta = checked_meta(params.meta.take())?;
            let trace = TraceContext::incoming(Some(&meta.0), Some(headers)).map(Box::new);
            Some(Lean::List(id, Some(params), trace))
        }
        _ => None,
    }
}

/// `meta` when it is a complete 2026-07-28 request `_meta`.
pub(crate) fn checked_meta(meta: Option<RequestMetaObject>) -> Option<RequestMetaObject> {
    let meta = meta?;
    let v2026 = ProtocolVersion::V_2026_07_28;
    (meta.protocol_version().as_ref() == Some(&v2026)
        && meta.missing_required_keys(&v2026).is_empty())
    .then_some(meta)
}

#[cfg(test)]
mod tests {
    use rmcp::model::{ClientJsonRpcMessage, ClientRequest, GetMeta};
    use serde_json::{Value, json};

    use super::*;

    fn headers(method: &str, name: Option<&str>) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert("mcp-method", method.parse().unwrap());
        if let Some(name) = name {
            headers.insert("mcp-name", name.parse().unwrap());
        }
        headers
    }

    fn meta(extra: Value) -> Value {
        let mut meta = json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": { "name": "t", "version": "1" },
            "io.modelcontextprotocol/clientCapabilities": {},
        });
        meta.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        meta
    }

    /// What `parse` made of `body`, as JSON, checked against rmcp's own
    /// parse of it: a request this module takes must be one rmcp takes,
    /// with the same id, params and `_meta`.
    fn lean(headers: &HeaderMap, body: &Value) -> Option<Value> {
        let bytes = serde_json::to_vec(body).unwrap();
        let lean = parse(headers, &bytes)?;
        let Ok(ClientJsonRpcMessage::Request(rmcp)) = serde_json::from_slice(&bytes) else {
            panic!("taken here but not a request to rmcp: {body}");
        };
        let meta = rmcp.request.get_meta();
        let (id, params) = match (&lean, rmcp.request.clone()) {
            (
                Lean::Call {
                    id,
                    params,
                    caller,
                    log_level,
                    progress,
                    app,
                    ..
                },
                ClientRequest::CallToolRequest(r),
            ) => {
                assert_eq!(
                    serde_json::to_value(params).unwrap(),
                    serde_json::to_value(&r.params).unwrap()
                );
                assert_eq!(*log_level, meta.log_level());
                assert_eq!(*progress, meta.get_progress_token());
                assert_eq!(app.as_deref(), meta.client_info().as_ref());
                let held = matches!(caller, Caller::Stateless { .. });
                (id, json!({ "call": params, "held": held }))
            }
            (Lean::List(id, params, _), ClientRequest::ListToolsRequest(r)) => {
                assert_eq!(
                    serde_json::to_value(params).unwrap(),
                    serde_json::to_value(&r.params).unwrap()
                );
                (id, json!({ "list": params }))
            }
            _ => panic!("another method than rmcp's: {body}"),
        };
        assert_eq!(*id, rmcp.id);
        Some(params)
    }

    #[test]
    fn what_is_taken_here_is_what_rmcp_reads_and_the_rest_goes_to_rmcp() {
        let call = |extra: Value| {
            json!({ "jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {
                "name": "echo", "arguments": { "text": "hi" }, "_meta": meta(extra),
            } })
        };
        let echo = headers("tools/call", Some("echo"));
        // Taken: plain, with progress and a log level, from a client that
        // can be asked (held), a retry (held), a list with a cursor.
        let plain = lean(&echo, &call(json!({}))).expect("a plain call");
        assert_eq!(plain["held"], false);
        assert_eq!(plain["call"]["arguments"]["text"], "hi");
        assert!(plain["call"].get("_meta").is_none(), "{plain}");
        lean(
            &echo,
            &call(json!({ "progressToken": "p", "io.modelcontextprotocol/logLevel": "info" })),
        )
        .expect("a call with progress");
        let asked = json!({ "io.modelcontextprotocol/clientCapabilities": { "elicitation": {} } });
        assert_eq!(lean(&echo, &call(asked)).expect("held")["held"], true);
        let mut retry = call(json!({}));
        retry["params"]["requestState"] = json!("abc");
        retry["params"]["inputResponses"] = json!({ "input-0": { "action": "decline" } });
        assert_eq!(lean(&echo, &retry).expect("a retry")["held"], true);
        let list = json!({ "jsonrpc": "2.0", "id": "l", "method": "tools/list",
            "params": { "cursor": "10", "_meta": meta(json!({})) } });
        let listed = lean(&headers("tools/list", None), &list).expect("a list");
        assert_eq!(listed["list"]["cursor"], "10");

        // Left to rmcp (its answer, its error).
        let mut stray_result = call(json!({}));
        stray_result["result"] = json!({});
        let mut old_version = call(json!({}));
        old_version["jsonrpc"] = json!("1.0");
        let mut no_version = call(json!({}));
        no_version.as_object_mut().unwrap().remove("jsonrpc");
        let mut v2025 = call(json!({}));
        v2025["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = json!("2025-11-25");
        let mut no_version_meta = call(json!({}));
        no_version_meta["params"]["_meta"]
            .as_object_mut()
            .unwrap()
            .remove("io.modelcontextprotocol/protocolVersion");
        let mut no_meta = call(json!({}));
        no_meta["params"].as_object_mut().unwrap().remove("_meta");
        let mut null_id = call(json!({}));
        null_id["id"] = Value::Null;
        for body in [
            stray_result,
            old_version,
            no_version,
            v2025,
            no_version_meta,
            no_meta,
            null_id,
        ] {
            assert!(lean(&echo, &body).is_none(), "taken: {body}");
        }
        assert!(lean(&headers("tools/call", Some("other")), &call(json!({}))).is_none());
        assert!(lean(&headers("tools/list", None), &call(json!({}))).is_none());
        assert!(lean(&echo, &json!([call(json!({}))])).is_none(), "a batch");
        let ping = json!({ "jsonrpc": "2.0", "id": 1, "method": "ping", "params": { "_meta": meta(json!({})) } });
        assert!(lean(&headers("ping", None), &ping).is_none());
    }
}
