//! `POST /api/tools/{server}/{tool}/call` (try a tool) and
//! `DELETE /api/calls/{callId}` (cancel it).
//!
//! A call goes through the server's pool like a gateway client's
//! (`Pool::call_tool`), is noted in flight for the gateway's log routing,
//! and leaves the same audit line and metrics. Cancelling it, or the page
//! going away (the request's connection closed), drops the pool's call,
//! which sends the server `notifications/cancelled`.

use std::{
    sync::{
        Arc,
        atomic::{AtomicU64, Ordering},
    },
    time::{Duration, Instant},
};

use axum::{
    Extension, Json,
    extract::{Path, State, rejection::JsonRejection},
};
use http::StatusCode;
use rmcp::model::{ElicitationAction, ErrorCode};
use serde::Deserialize;
use serde_json::{Value, json};
use toolbridge::{
    PoolError,
    pool::{CallOptions, forward_progress},
};

use super::{
    in_flight::Calls,
    listing::unknown_server,
    page_client::{AnswerError, PageClient},
};
use crate::{
    Gateway,
    audit::{self, Outcome},
    identity::ClientIdentity,
    web::{WebState, api::ApiError},
};

/// The longest timeout the page may ask for (a day).
const MAX_TIMEOUT: Duration = Duration::from_secs(24 * 3600);

/// The longest call id the page may give.
const MAX_CALL_ID_LEN: usize = 200;

/// What the page sends to try a tool.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CallRequest {
    /// The tool's arguments: a JSON object, or null for none.
    #[serde(default)]
    pub arguments: Option<Value>,
    /// The page's id for the call, to cancel it by; one is made up when
    /// missing.
    #[serde(default)]
    pub call_id: Option<String>,
    /// A bound on the whole call, in milliseconds; without it the server's
    /// `timeout` from the config applies (default 120 s, restarted by
    /// progress).
    #[serde(default)]
    pub timeout_ms: Option<u64>,
}

/// Runs `tool` on `server`. Answers the raw MCP result (`content` with
/// images and audio as base64 and their `mimeType`, `structuredContent`,
/// `isError`) plus `text` (flattened as a model is given it), `elapsedMs`,
/// `callId`, `outcome` (`ok`, `toolError` or `cancelled`) and `logs` (the
/// server's log messages during the call, when it sent any).
///
/// Errors: 404 for an unknown server or tool, 409 for a call id already in
/// flight, 422 for arguments the server refused (its own message), 504 on
/// timeout, 502 when the server failed.
pub async fn call(
    State(state): State<WebState>,
    Extension(calls): Extension<Calls>,
    Path((server, tool)): Path<(String, String)>,
    identity: Option<Extension<ClientIdentity>>,
    body: Result<Json<CallRequest>, JsonRejection>,
) -> Result<Json<Value>, ApiError> {
    let Json(request) = body.map_err(|e| ApiError::bad_request(e.body_text()))?;
    let arguments = match request.arguments {
        None | Some(Value::Null) => None,
        Some(Value::Object(map)) => Some(map),
        Some(_) => {
            return Err(ApiError::field(
                "arguments",
                "the arguments must be a JSON object, like {\"text\": \"hi\"}",
            ));
        }
    };
    let call_id = match request.call_id {
        Some(id) if id.is_empty() || id.len() > MAX_CALL_ID_LEN => {
            return Err(ApiError::field(
                "callId",
                format!("a call id must have 1 to {MAX_CALL_ID_LEN} characters"),
            ));
        }
        Some(id) => id,
        None => made_up_call_id(),
    };
    let timeout = request
        .timeout_ms
        .filter(|ms| *ms > 0)
        .map(|ms| Duration::from_millis(ms).min(MAX_TIMEOUT));

    let gateway = state.gateway();
    let pool = gateway.pool();
    let listed = pool
        .list_server_tools(&server)
        .await
        .map_err(|e| pool_error(&server, &tool, e))?;
    if !listed.iter().any(|t| t.name == tool) {
        return Err(ApiError::not_found(format!(
            "server \"{server}\" has no tool \"{tool}\"; pick one of the tools it lists"
        )));
    }

    // The server's log messages, progress and requests during the call are
    // the page's, not a gateway client's.
    let client = Arc::new(PageClient::default());
    let entered = calls
        .enter(&call_id, client.clone())
        .ok_or_else(|| ApiError {
            status: StatusCode::CONFLICT,
            message: format!(
                "a call with id \"{call_id}\" is already running; give each call its own id"
            ),
            field: Some("callId".into()),
            said: None,
        })?;
    audit::arguments(&server, &tool, arguments.as_ref());
    let features = PageClient::features(&client);
    let mut recorded = Recorded::start(gateway, &server, &tool, identity.map(|Extension(c)| c));
    let options = CallOptions {
        timeout,
        call_id: Some(call_id.clone()),
        client_features: Some(features),
        ..CallOptions::default()
    };
    let result = tokio::select! {
        result = forward_progress(
            PageClient::progress_forward(&client),
            pool.call_tool(&server, &tool, arguments, options),
        ) => Some(result),
        () = entered.token().cancelled() => None,
    };
    let outcome = match &result {
        None => Outcome::Cancelled,
        Some(Ok(r)) if r.is_error == Some(true) => Outcome::ToolError,
        Some(Ok(_)) => Outcome::Ok,
        Some(Err(_)) => Outcome::Failed,
    };
    let took = recorded.finish(outcome);
    let elapsed_ms = u64::try_from(took.as_millis()).unwrap_or(u64::MAX);
    match result {
        None => Ok(Json(json!({
            "callId": call_id,
            "outcome": "cancelled",
            "elapsedMs": elapsed_ms,
        }))),
        Some(Ok(result)) => {
            let text = toolbridge::flatten_content(&result);
            let is_error = result.is_error == Some(true);
            let mut body = serde_json::to_value(&result)
                .ok()
                .filter(Value::is_object)
                .unwrap_or_else(|| json!({}));
            body["callId"] = call_id.into();
            body["outcome"] = if is_error { "toolError" } else { "ok" }.into();
            body["isError"] = is_error.into();
            body["text"] = text.into();
            body["elapsedMs"] = elapsed_ms.into();
            if body.get("content").is_none() {
                body["content"] = json!([]);
            }
            let logs = client.logs();
            if !logs.is_empty() {
                body["logs"] = serde_json::to_value(logs).unwrap_or_default();
            }
            Ok(Json(body))
        }
        Some(Err(e)) => Err(pool_error(&server, &tool, e)),
    }
}

/// Cancels the page's call `call_id`: 204, or 404 when no such call is in
/// flight (it finished, or never started).
pub async fn cancel(
    Extension(calls): Extension<Calls>,
    Path(call_id): Path<String>,
) -> Result<StatusCode, ApiError> {
    if calls.cancel(&call_id) {
        Ok(StatusCode::NO_CONTENT)
    } else {
        Err(ApiError::not_found(format!(
            "no call with id \"{call_id}\" is running; it may have finished already"
        )))
    }
}

/// `GET /api/calls/{callId}`: `{"running": true, "progress", "elicitation"}`,
/// the call's latest progress and the elicitation waiting for the page's
/// answer ([`PageClient::state`]), or `{"running": false}` when no such
/// call is in flight (it just ended: the page polls until its call
/// answers, and the last poll may come after the end).
pub async fn state(Extension(calls): Extension<Calls>, Path(call_id): Path<String>) -> Json<Value> {
    match calls.client(&call_id) {
        Some(client) => {
            let mut state = client.state();
            state["running"] = true.into();
            Json(state)
        }
        None => Json(json!({ "running": false })),
    }
}

/// What the page sends to answer an elicitation.
#[derive(Debug, Deserialize)]
pub struct ElicitationAnswer {
    /// The `id` of the elicitation shown.
    pub id: u64,
    /// `accept`, `decline` or `cancel`.
    pub action: String,
    /// The answers, for `accept`.
    #[serde(default)]
    pub content: Option<serde_json::Map<String, Value>>,
}

/// `POST /api/calls/{callId}/elicitation` `{id, action, content}`: the
/// person's answer to the server's question, passed on to it: 204; 404 when
/// no such question waits (answered already, or the call ended); 422 for an
/// unknown action, or naming the required fields an accepted answer lacks.
pub async fn answer(
    Extension(calls): Extension<Calls>,
    Path(call_id): Path<String>,
    body: Result<Json<ElicitationAnswer>, JsonRejection>,
) -> Result<StatusCode, ApiError> {
    let Json(answer) = body.map_err(|e| ApiError::bad_request(e.body_text()))?;
    let action = match answer.action.as_str() {
        "accept" => ElicitationAction::Accept,
        "decline" => ElicitationAction::Decline,
        "cancel" => ElicitationAction::Cancel,
        other => {
            return Err(ApiError::field(
                "action",
                format!("unknown action \"{other}\"; send accept, decline or cancel"),
            ));
        }
    };
    let client = calls
        .client(&call_id)
        .ok_or_else(|| not_running(&call_id))?;
    match client.answer(answer.id, action, answer.content) {
        Ok(()) => Ok(StatusCode::NO_CONTENT),
        Err(AnswerError::NotWaiting) => Err(ApiError::not_found(format!(
            "call \"{call_id}\" has no question {} waiting; it was answered already or the call ended",
            answer.id
        ))),
        Err(AnswerError::Missing(fields)) => Err(ApiError {
            status: StatusCode::UNPROCESSABLE_ENTITY,
            message: format!(
                "the server needs an answer for {}; fill them in or decline",
                fields.join(", ")
            ),
            said: None,
            field: fields.first().cloned(),
        }),
    }
}

fn not_running(call_id: &str) -> ApiError {
    ApiError::not_found(format!(
        "no call with id \"{call_id}\" is running; it may have finished already"
    ))
}

/// A call's audit line and metrics, written once: when it ends, or as
/// cancelled when the request is dropped first (the page went away).
struct Recorded<'a> {
    gateway: &'a Gateway,
    server: &'a str,
    tool: &'a str,
    started: Instant,
    done: bool,
    client: Option<ClientIdentity>,
}

impl<'a> Recorded<'a> {
    fn start(
        gateway: &'a Gateway,
        server: &'a str,
        tool: &'a str,
        client: Option<ClientIdentity>,
    ) -> Self {
        Recorded {
            gateway,
            server,
            tool,
            started: Instant::now(),
            done: false,
            client,
        }
    }

    /// Writes the call's line with `outcome`; how long it took.
    fn finish(&mut self, outcome: Outcome) -> Duration {
        let took = self.started.elapsed();
        if !self.done {
            self.done = true;
            audit::call(
                self.server,
                self.tool,
                took,
                outcome,
                self.client.as_ref(),
                None,
            );
            let (_, client) = audit::who(self.client.as_ref());
            self.gateway.metrics().call(
                self.server,
                self.tool,
                (client, ""),
                took,
                outcome != Outcome::Ok,
            );
        }
        took
    }
}

impl Drop for Recorded<'_> {
    fn drop(&mut self) {
        self.finish(Outcome::Cancelled);
    }
}

/// An id for a call the page gave none.
fn made_up_call_id() -> String {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    format!("web-{}", NEXT.fetch_add(1, Ordering::Relaxed))
}

/// What the page is told when a call fails: the server's own message for
/// arguments it refused, the pool's sentence (naming the server and tool)
/// for the rest.
fn pool_error(server: &str, tool: &str, error: PoolError) -> ApiError {
    let status = match &error {
        PoolError::UnknownServer { .. } => return unknown_server(server),
        PoolError::UnknownTool { .. } | PoolError::ToolDisabled { .. } => StatusCode::NOT_FOUND,
        PoolError::Server { code, .. } if *code == ErrorCode::INVALID_PARAMS.0 => {
            StatusCode::UNPROCESSABLE_ENTITY
        }
        PoolError::InvalidParams { .. } => StatusCode::UNPROCESSABLE_ENTITY,
        e if e.is_timeout() => StatusCode::GATEWAY_TIMEOUT,
        _ => StatusCode::BAD_GATEWAY,
    };
    tracing::debug!(server, tool, error = %error, "the page's tool call failed");
    ApiError {
        status,
        said: None,
        message: error.to_string(),
        field: None,
    }
}
