//! Property tests: each short way of the codec against rmcp's own serde, on
//! arbitrary messages, and the decoder on hostile input.
//!
//! The generators are shared with the example server's decoder tests.

use std::collections::BTreeMap;

use proptest::prelude::*;
use rmcp::{
    RoleClient,
    model::{
        CallToolRequestParams, CallToolResult, ClientRequest, ContentBlock, JsonObject,
        JsonRpcMessage, MetaObject, NumberOrString, RequestMetaObject, ServerResult,
    },
    service::{ServiceRole, TxJsonRpcMessage},
};
use serde_json::Value;

use super::{Decoded, decode, decode_as, encode_client_line, encode_line};

/// Keys MCP messages use, so that arbitrary objects often look like real
/// ones (and like the result types rmcp tries before `CallToolResult`).
const KEYS: &[&str] = &[
    "content",
    "structuredContent",
    "isError",
    "resultType",
    "_meta",
    "tools",
    "contents",
    "completion",
    "messages",
    "prompts",
    "resources",
    "resourceTemplates",
    "action",
    "task",
    "taskId",
    "status",
    "nextCursor",
    "protocolVersion",
    "capabilities",
    "serverInfo",
    "supportedVersions",
    "skills",
    "skill",
    "type",
    "text",
    "data",
    "mimeType",
    "uri",
    "name",
    "arguments",
    "progressToken",
    "requestId",
    "io.modelcontextprotocol/subscriptionId",
    "id",
    "method",
    "params",
    "result",
    "error",
    "jsonrpc",
];

/// Text with what escaping must get right: quotes, backslashes, control
/// characters, line separators, non-ASCII and astral characters.
pub(crate) fn arb_string() -> impl Strategy<Value = String> {
    let tricky = prop_oneof![
        Just('"'),
        Just('\\'),
        Just('\n'),
        Just('\r'),
        Just('\u{0}'),
        Just('\u{7f}'),
        Just('é'),
        Just('\u{2028}'),
        Just('\u{FEFF}'),
        Just('\u{1F600}'),
        any::<char>(),
    ];
    prop_oneof![
        "[a-z_]{0,8}",
        any::<String>(),
        prop::collection::vec(tricky, 0..8).prop_map(|c| c.into_iter().collect()),
    ]
}

fn arb_key() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => prop::sample::select(KEYS).prop_map(str::to_owned),
        1 => arb_string(),
    ]
}

fn arb_number() -> impl Strategy<Value = Value> {
    prop_oneof![
        (-3i64..100).prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>().prop_filter_map("finite", |f| serde_json::Number::from_f64(f)
            .map(Value::Number)),
    ]
}

/// Any JSON value, nested a few levels.
pub(crate) fn arb_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        arb_number(),
        arb_string().prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 32, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::vec((arb_key(), inner), 0..6)
                .prop_map(|kv| Value::Object(kv.into_iter().collect())),
        ]
    })
}

fn arb_object() -> impl Strategy<Value = JsonObject> {
    prop::collection::vec((arb_key(), arb_json()), 0..6).prop_map(|kv| kv.into_iter().collect())
}

fn arb_id() -> impl Strategy<Value = NumberOrString> {
    prop_oneof![
        any::<i64>().prop_map(NumberOrString::Number),
        arb_string().prop_map(|s| NumberOrString::String(s.into())),
    ]
}

// ---------------------------------------------------------------------------
// The encoder: `tools/call` requests written directly.

/// A `tools/call` request as rmcp's peer sends it: `_meta` (the 2026-07-28
/// client context, a progress token) in the extensions.
pub(crate) fn call_with(
    id: NumberOrString,
    name: &str,
    arguments: Option<Value>,
    meta: Option<Value>,
) -> TxJsonRpcMessage<RoleClient> {
    let mut params = CallToolRequestParams::new(name.to_owned());
    if let Some(Value::Object(arguments)) = arguments {
        params = params.with_arguments(arguments);
    }
    let mut request = rmcp::model::Request::new(params);
    if let Some(Value::Object(meta)) = meta {
        request
            .extensions
            .insert(RequestMetaObject(MetaObject(meta)));
    }
    JsonRpcMessage::request(ClientRequest::CallToolRequest(request), id)
}

/// Where `_meta` maps sit on an arbitrary request.
#[derive(Debug, Clone)]
struct Metas {
    /// In the extensions, as rmcp's peer puts it.
    request: Option<JsonObject>,
    /// On the params struct itself.
    params: Option<JsonObject>,
    /// The legacy extension.
    legacy: Option<JsonObject>,
}

fn arb_metas() -> impl Strategy<Value = Metas> {
    let common = prop_oneof![
        3 => Just(None),
        3 => arb_object().prop_map(Some),
        1 => Just(Some(JsonObject::new())),
    ];
    let rare = prop_oneof![
        6 => Just(None),
        1 => arb_object().prop_map(Some),
    ];
    (common, rare.clone(), rare).prop_map(|(request, params, legacy)| Metas {
        request,
        params,
        legacy,
    })
}

/// Arbitrary `tools/call` requests: any tool name, arguments of any shape,
/// numeric and string ids, `_meta` absent, empty, odd or in several places.
fn arb_call() -> impl Strategy<Value = TxJsonRpcMessage<RoleClient>> {
    let responses = prop::option::of(
        prop::collection::btree_map(arb_string(), arb_json(), 0..3)
            .prop_map(|m| m.into_iter().collect::<BTreeMap<_, _>>()),
    );
    (
        arb_id(),
        arb_string(),
        prop::option::of(arb_object()),
        arb_metas(),
        responses,
        prop::option::of(arb_string()),
    )
        .prop_map(|(id, name, arguments, metas, input_responses, state)| {
            let mut params = CallToolRequestParams::new(name);
            params.arguments = arguments;
            params.meta = metas.params.map(|m| RequestMetaObject(MetaObject(m)));
            params.input_responses = input_responses;
            params.request_state = state;
            let mut request = rmcp::model::Request::new(params);
            if let Some(meta) = metas.request {
                request
                    .extensions
                    .insert(RequestMetaObject(MetaObject(meta)));
            }
            if let Some(meta) = metas.legacy {
                request.extensions.insert(MetaObject(meta));
            }
            JsonRpcMessage::request(ClientRequest::CallToolRequest(request), id)
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// The direct encoder writes what rmcp's serializer writes, byte for byte.
    #[test]
    fn call_requests_are_encoded_byte_for_byte_as_rmcp_does(message in arb_call()) {
        let (mut ours, mut rmcps) = (Vec::new(), Vec::new());
        encode_client_line(&message, &mut ours).unwrap();
        encode_line(&message, &mut rmcps).unwrap();
        prop_assert_eq!(String::from_utf8(ours).unwrap(), String::from_utf8(rmcps).unwrap());
    }
}

// ---------------------------------------------------------------------------
// Message text, with what a hand-written envelope parser gets wrong:
// `null` where a key should be absent, duplicate keys, escaped keys, any
// key order, ids of every JSON type.

/// One object member as text: a key and its value, already rendered.
type Member = (String, String);

fn member(key: &str, value: &Value) -> Member {
    (key.to_owned(), value.to_string())
}

/// A key written with every character as a `\u` escape.
fn escaped(key: &str) -> String {
    let mut out = String::from("\"");
    for unit in key.encode_utf16() {
        out.push_str(&format!("\\u{unit:04x}"));
    }
    out.push('"');
    out
}

/// Renders members as an object, keys escaped when the key starts with
/// `\u{1}` (a marker the generators use).
fn render(members: &[Member]) -> String {
    let mut out = String::from("{");
    for (i, (key, value)) in members.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        match key.strip_prefix('\u{1}') {
            Some(key) => out.push_str(&escaped(key)),
            None => out.push_str(&Value::from(key.as_str()).to_string()),
        }
        out.push(':');
        out.push_str(value);
    }
    out.push('}');
    out
}

fn arb_content_block() -> impl Strategy<Value = Value> {
    prop_oneof![
        4 => arb_string().prop_map(|text| serde_json::json!({"type": "text", "text": text})),
        1 => (arb_string(), arb_string()).prop_map(|(data, mime)| {
            serde_json::json!({"type": "image", "data": data, "mimeType": mime})
        }),
        1 => (arb_string(), arb_string()).prop_map(|(uri, text)| {
            serde_json::json!({"type": "resource", "resource": {"uri": uri, "text": text}})
        }),
        1 => (arb_string(), arb_string()).prop_map(|(uri, name)| {
            serde_json::json!({"type": "resource_link", "uri": uri, "name": name})
        }),
        1 => (arb_string(), arb_json()).prop_map(|(text, annotations)| {
            serde_json::json!({"type": "text", "text": text, "annotations": annotations})
        }),
        1 => arb_json(),
    ]
}

/// Members of a result object: mostly `CallToolResult`'s own fields with
/// plausible values, sometimes with another result type's key beside them.
fn arb_result_members() -> impl Strategy<Value = Vec<Member>> {
    let content = prop_oneof![
        6 => prop::collection::vec(arb_content_block(), 0..4).prop_map(Value::Array),
        1 => arb_json(),
    ];
    let result_type = prop_oneof![
        4 => Just(Value::from("complete")),
        1 => Just(Value::from("task")),
        1 => Just(Value::from("input_required")),
        1 => arb_json(),
    ];
    let is_error = prop_oneof![4 => any::<bool>().prop_map(Value::Bool), 1 => arb_json()];
    let meta = prop_oneof![
        2 => arb_object().prop_map(Value::Object),
        2 => prop_oneof![(0i64..10).prop_map(Value::from), arb_json()]
            .prop_map(|id| serde_json::json!({"io.modelcontextprotocol/subscriptionId": id})),
        1 => arb_json(),
    ];
    let foreign = (prop::sample::select(KEYS), arb_json());
    (
        prop::option::weighted(0.8, content),
        prop::option::weighted(0.3, arb_json()),
        prop::option::weighted(0.5, is_error),
        prop::option::weighted(0.3, result_type),
        prop::option::weighted(0.3, meta),
        prop::option::weighted(0.2, foreign),
    )
        .prop_map(
            |(content, structured, is_error, result_type, meta, foreign)| {
                let mut members = Vec::new();
                let mut push = |key: &str, value: Option<Value>| {
                    if let Some(value) = value {
                        members.push(member(key, &value));
                    }
                };
                push("content", content);
                push("structuredContent", structured);
                push("isError", is_error);
                push("resultType", result_type);
                push("_meta", meta);
                if let Some((key, value)) = foreign {
                    members.push(member(key, &value));
                }
                members
            },
        )
        .prop_shuffle()
}

fn arb_id_text() -> impl Strategy<Value = String> {
    prop_oneof![
        6 => (0i64..1000).prop_map(|id| id.to_string()),
        1 => any::<i64>().prop_map(|id| id.to_string()),
        1 => any::<u64>().prop_map(|id| id.to_string()),
        1 => Just("7.0".to_owned()),
        1 => Just("1e2".to_owned()),
        1 => Just("1.5".to_owned()),
        2 => arb_string().prop_map(|s| Value::from(s).to_string()),
        1 => Just("null".to_owned()),
        1 => arb_json().prop_map(|v| v.to_string()),
    ]
}

fn arb_jsonrpc() -> impl Strategy<Value = Option<String>> {
    prop_oneof![
        12 => Just(Some("\"2.0\"".to_owned())),
        1 => Just(Some("\"2\\u002e0\"".to_owned())),
        1 => Just(Some("\"1.0\"".to_owned())),
        1 => Just(Some("null".to_owned())),
        1 => Just(None),
    ]
}

/// Members that do not belong: `method`, `error` or `result` as `null` or
/// a value, a second `id`, an unknown key.
fn arb_strays() -> impl Strategy<Value = Vec<Member>> {
    let stray = prop_oneof![
        (
            prop::sample::select(&["method", "error", "result", "id", "params"][..]),
            Just(Value::Null)
        )
            .prop_map(|(k, v)| member(k, &v)),
        (
            prop::sample::select(&["method", "error", "result", "id"][..]),
            arb_json()
        )
            .prop_map(|(k, v)| member(k, &v)),
        (arb_key(), arb_json()).prop_map(|(k, v)| member(&k, &v)),
    ];
    prop_oneof![
        4 => Just(Vec::new()),
        1 => prop::collection::vec(stray, 1..3),
    ]
}

/// Wraps a message body in an envelope: `jsonrpc`, maybe an `id`, strays,
/// members in any order, a key sometimes written with escapes.
fn envelope(body: impl Strategy<Value = (Vec<Member>, bool)>) -> impl Strategy<Value = String> {
    (
        arb_jsonrpc(),
        arb_id_text(),
        body,
        arb_strays(),
        prop::option::weighted(0.1, 0usize..8),
    )
        .prop_flat_map(|(jsonrpc, id, (members, with_id), strays, escape)| {
            let mut all = Vec::new();
            if let Some(jsonrpc) = jsonrpc {
                all.push(("jsonrpc".to_owned(), jsonrpc));
            }
            if with_id {
                all.push(("id".to_owned(), id));
            }
            all.extend(members);
            all.extend(strays);
            if let Some(i) = escape {
                let n = all.len();
                if n > 0 {
                    all[i % n].0.insert(0, '\u{1}');
                }
            }
            Just(all).prop_shuffle()
        })
        .prop_map(|members| render(&members))
}

fn arb_error_body() -> impl Strategy<Value = Value> {
    prop_oneof![
        3 => (any::<i32>(), arb_string(), prop::option::of(arb_json())).prop_map(|(code, message, data)| {
            let mut error = serde_json::json!({"code": code, "message": message});
            if let Some(data) = data {
                error["data"] = data;
            }
            error
        }),
        1 => arb_json(),
    ]
}

fn arb_method(known: &'static [&'static str]) -> impl Strategy<Value = Value> {
    prop_oneof![
        4 => prop::sample::select(known).prop_map(Value::from),
        1 => arb_json(),
    ]
}

/// Arbitrary text a server may send a client: responses (mostly results
/// shaped like tool results), errors, notifications and requests.
pub(crate) fn arb_server_message_text() -> impl Strategy<Value = String> {
    let notifications: &'static [&'static str] = &[
        "notifications/progress",
        "notifications/message",
        "notifications/tools/list_changed",
        "notifications/cancelled",
        "notifications/resources/updated",
    ];
    let requests: &'static [&'static str] = &[
        "ping",
        "roots/list",
        "sampling/createMessage",
        "elicitation/create",
    ];
    let body = prop_oneof![
        6 => arb_result_members().prop_map(|r| (vec![("result".to_owned(), render(&r))], true)),
        1 => arb_json().prop_map(|r| (vec![member("result", &r)], true)),
        1 => arb_error_body().prop_map(|e| (vec![member("error", &e)], true)),
        1 => (arb_method(notifications), prop::option::of(arb_json())).prop_map(|(m, p)| {
            let mut members = vec![member("method", &m)];
            members.extend(p.map(|p| member("params", &p)));
            (members, false)
        }),
        1 => (arb_method(requests), prop::option::of(arb_json())).prop_map(|(m, p)| {
            let mut members = vec![member("method", &m)];
            members.extend(p.map(|p| member("params", &p)));
            (members, true)
        }),
    ];
    envelope(body)
}

/// Arbitrary text a client may send a server: mostly `tools/call` requests
/// with params of any shape, other requests, notifications, responses and
/// errors.
pub(crate) fn arb_client_message_text() -> impl Strategy<Value = String> {
    let methods: &'static [&'static str] = &[
        "tools/call",
        "tools/call",
        "tools/call",
        "tools/list",
        "ping",
        "initialize",
        "resources/read",
    ];
    let notifications: &'static [&'static str] = &[
        "notifications/initialized",
        "notifications/cancelled",
        "notifications/progress",
    ];
    let call_params = (
        prop::option::weighted(
            0.9,
            prop_oneof![4 => arb_string().prop_map(Value::from), 1 => arb_json()],
        ),
        prop::option::weighted(
            0.6,
            prop_oneof![4 => arb_object().prop_map(Value::Object), 1 => arb_json()],
        ),
        prop::option::weighted(
            0.4,
            prop_oneof![4 => arb_object().prop_map(Value::Object), 1 => arb_json()],
        ),
        prop::option::weighted(0.1, (arb_key(), arb_json())),
    )
        .prop_map(|(name, arguments, meta, other)| {
            let mut members = Vec::new();
            members.extend(name.map(|v| member("name", &v)));
            members.extend(arguments.map(|v| member("arguments", &v)));
            members.extend(meta.map(|v| member("_meta", &v)));
            members.extend(other.map(|(k, v)| member(&k, &v)));
            members
        })
        .prop_shuffle()
        .prop_map(|members| render(&members));
    let params = prop_oneof![
        6 => call_params,
        1 => arb_json().prop_map(|p| p.to_string()),
    ];
    let body = prop_oneof![
        6 => (arb_method(methods), prop::option::weighted(0.95, params)).prop_map(|(m, p)| {
            let mut members = vec![member("method", &m)];
            members.extend(p.map(|p| ("params".to_owned(), p)));
            (members, true)
        }),
        1 => (arb_method(notifications), prop::option::of(arb_json())).prop_map(|(m, p)| {
            let mut members = vec![member("method", &m)];
            members.extend(p.map(|p| member("params", &p)));
            (members, false)
        }),
        1 => arb_json().prop_map(|r| (vec![member("result", &r)], true)),
        1 => arb_error_body().prop_map(|e| (vec![member("error", &e)], true)),
    ];
    envelope(body)
}

/// What a decoder made of a text, comparable across decoders: the
/// message's `Debug` form (which names every variant and field) and its
/// JSON (which has the `_meta` rmcp keeps in extensions).
pub(crate) fn outcome<R: ServiceRole>(decoded: Decoded<R>) -> String {
    match &decoded {
        Decoded::Message(message) => format!(
            "{decoded:?} {}",
            serde_json::to_string(message).unwrap_or_default()
        ),
        Decoded::Skip | Decoded::Invalid | Decoded::Unreadable(_) => format!("{decoded:?}"),
    }
}

fn generic(text: &[u8]) -> String {
    outcome(decode_as::<RoleClient>(text, |_| None))
}

/// A `CallToolResult` as rmcp builds it, any content and fields.
fn arb_call_result() -> impl Strategy<Value = CallToolResult> {
    let block = prop_oneof![
        arb_string().prop_map(ContentBlock::text),
        (arb_string(), arb_string()).prop_map(|(d, m)| ContentBlock::image(d, m)),
        (arb_string(), arb_string()).prop_map(|(d, m)| ContentBlock::audio(d, m)),
    ];
    (
        prop::collection::vec(block, 0..4),
        prop::option::of(arb_json()),
        prop::option::of(any::<bool>()),
        any::<bool>(),
        prop::option::of(arb_object()),
    )
        .prop_map(|(content, structured, is_error, complete, meta)| {
            let mut result = CallToolResult::success(content);
            result.structured_content = structured;
            result.is_error = is_error;
            if !complete {
                result.result_type = None;
            }
            result.meta = meta.map(MetaObject);
            result
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2048))]

    /// Whatever a server sends, the decoder gives what rmcp's own parse
    /// gives: the same message, or the same "skip" or "invalid".
    #[test]
    fn server_messages_decode_as_rmcp_decodes_them(text in arb_server_message_text()) {
        let ours = outcome(decode(text.as_bytes()));
        prop_assert_eq!(ours, generic(text.as_bytes()), "{}", text);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// Tool results as servers write them take the short way, and it gives
    /// rmcp's answer.
    #[test]
    fn call_results_take_the_short_way(id in arb_id(), result in arb_call_result()) {
        let result_type_and_meta = result.result_type.is_some() && result.meta.is_some();
        let message: rmcp::model::ServerJsonRpcMessage =
            JsonRpcMessage::response(ServerResult::CallToolResult(result), id);
        let text = serde_json::to_string(&message).unwrap();
        let decoded = decode(text.as_bytes());
        let short = matches!(
            &decoded,
            Decoded::Message(JsonRpcMessage::Response(r))
                if matches!(r.result, ServerResult::CallToolResult(_))
        );
        prop_assert!(short || result_type_and_meta, "{}", text);
        prop_assert_eq!(outcome(decoded), generic(text.as_bytes()), "{}", text);
    }

    /// Any bytes at all: no panic, and the same answer as rmcp.
    #[test]
    fn arbitrary_bytes_decode_as_rmcp_decodes_them(bytes in prop::collection::vec(any::<u8>(), 0..256)) {
        prop_assert_eq!(outcome(decode(&bytes)), generic(&bytes));
    }
}

#[test]
fn deeply_nested_and_huge_messages_neither_panic_nor_hang() {
    let deep = |inner: &str| {
        let depth = 100_000;
        format!(
            r#"{{"jsonrpc":"2.0","id":1,"result":{{"content":{}{}{}}}}}"#,
            "[".repeat(depth),
            inner,
            "]".repeat(depth)
        )
    };
    for text in [deep(""), deep("{\"a\":1}")] {
        // Unreadable, with the id found, so the request fails at once.
        let decoded = decode(text.as_bytes());
        assert!(
            matches!(&decoded, Decoded::Unreadable(u) if u.id.is_some() && u.reason.contains("nested deeper")),
            "{decoded:?}"
        );
    }
    // The largest message the framings let through.
    let text = format!(
        r#"{{"jsonrpc":"2.0","id":1,"result":{{"content":[{{"type":"text","text":"{}"}}]}}}}"#,
        "x".repeat(super::MAX_MESSAGE_BYTES - 100)
    );
    assert!(matches!(decode(text.as_bytes()), Decoded::Message(_)));
}
