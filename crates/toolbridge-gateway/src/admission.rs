//! [`check`]: an HTTP `tools/call` held against its client's rights
//! ([`crate::rights`]) and rate limits ([`crate::rate_limits`]) before it
//! is dispatched, so that the refusal can be an HTTP status: once rmcp
//! answers a session's request on an event stream, the status is 200
//! whatever the result says.
//!
//! - An OAuth client calling a tool a rule would let it call with more
//!   scopes: `403 Forbidden` with `WWW-Authenticate: Bearer
//!   error="insufficient_scope", scope="…", resource_metadata="…"`, the
//!   scopes the tool needs (as the 2026-07-28 authorization spec has it:
//!   the client adds them to those it has and signs in again). Any other
//!   call without the right is refused by the call itself
//!   (`session::call_tool`), a JSON-RPC error naming the right.
//! - A call over a rate limit: `429 Too Many Requests` with `Retry-After`
//!   (whole seconds) and the JSON-RPC error ([`Limited::error`]) as the
//!   body, its `data.retryAfterMs` exact.
//!
//! Only when there are rules or rates: otherwise nothing is read here. A
//! body that is not one `tools/call` goes on as it came (rmcp refuses what
//! is not MCP); rights are checked again in the call whatever comes here.

use axum::{
    body::Body,
    response::{IntoResponse, Response},
};
use http::{HeaderValue, Method, Request, StatusCode, header};
use rmcp::model::ErrorData;
use serde_json::{Value, json, value::RawValue};
use toolbridge::adapter::search::{CALL_TOOL, SEARCH_TOOL};

use std::{borrow::Cow, time::Duration};

use crate::{
    Gateway,
    audit::{self, Outcome},
    identity::{ClientIdentity, ClientKind},
    profile::ViewName,
    rate_limits::Limited,
    rights::Denied,
};

/// The largest body read here (the gateway's limit for a request).
const MAX_BODY: usize = 4 * 1024 * 1024;

/// The protected resource metadata URL of the path an OAuth client's
/// request came to, put into the request by the auth layer
/// ([`crate::security`]) for the 403 challenge.
#[derive(Debug, Clone)]
pub struct ResourceMetadata(pub String);

/// The fields of a JSON-RPC request looked at here, borrowed from the
/// body where they can be: the arguments are only read (for the name a
/// search-mode call tool is given) when it is that tool.
#[derive(serde::Deserialize)]
struct Probe<'a> {
    id: Option<Value>,
    #[serde(borrow)]
    method: Option<Cow<'a, str>>,
    #[serde(borrow)]
    params: Option<Params<'a>>,
}

#[derive(serde::Deserialize)]
struct Params<'a> {
    #[serde(borrow)]
    name: Option<Cow<'a, str>>,
    #[serde(borrow)]
    arguments: Option<&'a RawValue>,
}

/// The `name` of a call tool's arguments.
#[derive(serde::Deserialize)]
struct Inner<'a> {
    #[serde(borrow)]
    name: Option<Cow<'a, str>>,
}

/// `request` to `view` from `client`, with its body read and put back; or
/// the refusal of the `tools/call` it is.
pub async fn check(
    gateway: &Gateway,
    view: &ViewName,
    client: Option<&ClientIdentity>,
    request: Request<Body>,
) -> Result<Request<Body>, Response> {
    let rights = gateway.rights();
    let rates = gateway.rate_limits();
    let (true, Some(client), &Method::POST) = (
        rights.has_rules() || rates.limits_calls(),
        client,
        request.method(),
    ) else {
        return Ok(request);
    };
    let (parts, body) = request.into_parts();
    let bytes = axum::body::to_bytes(body, MAX_BODY).await.map_err(|_| {
        (
            StatusCode::PAYLOAD_TOO_LARGE,
            "Payload Too Large: the request body could not be read within 4 MiB",
        )
            .into_response()
    })?;
    let metadata = parts.extensions.get::<ResourceMetadata>().cloned();
    let probe = serde_json::from_slice::<Probe<'_>>(&bytes).ok();
    let refused = match probe {
        Some(probe) => refusal(gateway, view, client, probe, metadata).await,
        None => None,
    };
    match refused {
        Some(response) => Err(response),
        None => Ok(Request::from_parts(parts, Body::from(bytes))),
    }
}

/// The refusal of the request `probe` is, if it is a `tools/call`
/// `client` may not make now.
async fn refusal(
    gateway: &Gateway,
    view: &ViewName,
    client: &ClientIdentity,
    probe: Probe<'_>,
    metadata: Option<ResourceMetadata>,
) -> Option<Response> {
    let (rights, rates) = (gateway.rights(), gateway.rate_limits());
    let Probe {
        id: Some(id),
        method: Some(method),
        params: Some(Params {
            name: Some(name),
            arguments,
        }),
    } = probe
    else {
        return None;
    };
    if method != "tools/call" {
        return None;
    }
    let view = gateway.view(view).ok()?;
    let tool = if view.searches() && name == SEARCH_TOOL {
        None
    } else {
        let inner = match arguments {
            Some(arguments)
                if view.searches() && name == CALL_TOOL && arguments.get().starts_with('{') =>
            {
                serde_json::from_str::<Inner<'_>>(arguments.get())
                    .ok()
                    .and_then(|inner| inner.name)
            }
            _ => None,
        };
        let name = inner.as_deref().unwrap_or(&name);
        // A name the view does not have: the call says so.
        let route = gateway.resolve_tool(&view, name).await?;
        if let Err(denied) = rights.check(Some(client), &view.name, &route) {
            if client.kind == ClientKind::OAuth && !denied.scopes.is_empty() {
                audit::call(
                    &route.server,
                    &route.name,
                    Duration::ZERO,
                    Outcome::Refused,
                    Some(client),
                    view.name.profile_name(),
                );
                return Some(insufficient_scope(&denied, id, metadata));
            }
            // Refused by the call, in the JSON-RPC answer.
            return None;
        }
        Some(route)
    };
    let name = tool.map(|r| format!("{}__{}", r.server, r.name));
    // Not an audit line each: a flood of refusals would be one of lines.
    if let Err(limited) = rates.take(client, name.as_deref()) {
        tracing::debug!(client = %client.key(), limit = %limited.limit, "rate limited");
        return Some(too_many_requests(&limited, id));
    }
    None
}

/// The JSON-RPC error answer to request `id`.
fn error_body(id: Value, error: ErrorData) -> String {
    json!({ "jsonrpc": "2.0", "id": id, "error": error }).to_string()
}

/// `403` with the `insufficient_scope` challenge naming `denied`'s scopes.
fn insufficient_scope(denied: &Denied, id: Value, metadata: Option<ResourceMetadata>) -> Response {
    let mut params = vec![
        "error=\"insufficient_scope\"".to_owned(),
        format!("scope=\"{}\"", quoted(&denied.scopes.join(" "))),
    ];
    if let Some(ResourceMetadata(url)) = metadata {
        params.push(format!("resource_metadata=\"{}\"", quoted(&url)));
    }
    params.push(format!(
        "error_description=\"{}\"",
        quoted(&format!("tool {} needs more scope", denied.tool))
    ));
    let challenge = format!("Bearer {}", params.join(", "));
    let mut response = (
        StatusCode::FORBIDDEN,
        [(header::CONTENT_TYPE, "application/json")],
        error_body(id, denied.error()),
    )
        .into_response();
    if let Ok(value) = HeaderValue::from_str(&challenge) {
        response
            .headers_mut()
            .insert(header::WWW_AUTHENTICATE, value);
    }
    response
}

/// `429` with `Retry-After`.
pub(crate) fn too_many_requests(limited: &Limited, id: Value) -> Response {
    (
        StatusCode::TOO_MANY_REQUESTS,
        [
            (header::CONTENT_TYPE, "application/json".to_owned()),
            (header::RETRY_AFTER, limited.retry_after_secs().to_string()),
        ],
        error_body(id, limited.error()),
    )
        .into_response()
}

/// `text` as the inside of a quoted-string (no quote or backslash).
fn quoted(text: &str) -> String {
    text.replace(['"', '\\'], "'")
}
