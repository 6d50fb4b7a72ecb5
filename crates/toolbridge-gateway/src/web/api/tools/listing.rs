//! `GET /api/tools` and `GET /api/tools/{server}`: the served servers, and
//! one server's tools as it names them, each with its provider previews and
//! hidden characters, whether its definitions are pinned, and the server's
//! withheld tools with their diffs;
//! `POST /api/tools/{server}/approve`: approving those.

use axum::{
    Json,
    extract::{Path, State, rejection::JsonRejection},
};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use toolbridge::{
    McpTool,
    hidden_chars::{self, HiddenFinding},
    pins::{self, PinDiff},
    pool::PoolError,
};

use super::preview::{Preview, previews};
use crate::web::{WebState, api::ApiError};

/// The served servers in config order, each with whether it runs now and
/// the tools its `disabledTools` switches off (the gateway neither lists
/// nor calls those, so only the config knows them).
pub async fn servers(State(state): State<WebState>) -> Json<Value> {
    let mut disabled = super::switch::disabled_tools(&state);
    let servers: Vec<Value> = state
        .gateway()
        .upstream_states()
        .into_iter()
        .map(|(name, running)| {
            let off = disabled.remove(&name).unwrap_or_else(|| json!([]));
            json!({ "name": name, "running": running, "disabledTools": off })
        })
        .collect();
    Json(json!({ "servers": servers }))
}

/// One tool as the page shows it: the server's own fields as MCP spells
/// them (`name`, `title`, `description`, `inputSchema`, `outputSchema`,
/// `annotations`, `execution`...), the name providers are sent, and the
/// previews.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ToolView<'a> {
    #[serde(flatten)]
    tool: &'a McpTool,
    /// The name in every provider format (`mcp__{server}__{tool}`, made
    /// acceptable to providers).
    exposed_name: String,
    /// OpenAI, Anthropic, Gemini.
    previews: Vec<Preview>,
    /// Characters a person cannot see in the definition (removed from what
    /// providers are sent).
    hidden_characters: Vec<HiddenFinding>,
}

/// A withheld tool as the page shows it: the change, both definitions and
/// a readable diff.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct WithheldView {
    #[serde(flatten)]
    diff: PinDiff,
    /// The unified diff for a person (hidden characters as `<U+XXXX>`).
    readable: String,
    /// The command that approves it from a shell.
    approve_command: String,
}

/// `server`'s tools (starting it when its list is not cached): 404 for a
/// server the gateway does not serve, 502 when it cannot be listed.
pub async fn tools(
    State(state): State<WebState>,
    Path(server): Path<String>,
) -> Result<Json<Value>, ApiError> {
    let pool = state.gateway().pool();
    let tools = pool.list_server_tools(&server).await.map_err(|e| match e {
        PoolError::UnknownServer { .. } => unknown_server(&server),
        e => ApiError {
            status: http::StatusCode::BAD_GATEWAY,
            message: format!("the tools of server \"{server}\" could not be listed: {e}"),
            field: None,
            said: None,
        },
    })?;
    let previews = previews(&tools);
    let views: Vec<ToolView<'_>> = tools
        .iter()
        .zip(previews)
        .map(|(tool, previews)| ToolView {
            tool,
            exposed_name: previews.exposed_name,
            previews: previews.providers,
            hidden_characters: hidden_chars::tool_findings(tool),
        })
        .collect();
    // From the list just had: no second listing.
    let withheld: Vec<WithheldView> = match pool.withheld_tools(&server).is_empty() {
        true => Vec::new(),
        false => pool
            .pin_diff(&server)
            .await
            .unwrap_or_default()
            .into_iter()
            .map(|diff| WithheldView {
                readable: diff.readable(),
                approve_command: pins::approve_command(&diff.server, Some(&diff.tool)),
                diff,
            })
            .collect(),
    };
    Ok(Json(json!({
        "server": server,
        "pinned": pool.is_pinned(&server),
        "tools": views,
        "withheld": withheld,
    })))
}

/// What the page's Approve button sends.
#[derive(Debug, Default, Deserialize)]
pub struct ApproveRequest {
    /// The tools to approve; empty or absent: every withheld tool.
    #[serde(default)]
    pub tools: Vec<String>,
}

/// Pins the current definitions of `server`'s withheld tools named in the
/// request (all when it names none): `{"approved": [{server, tool, change,
/// hash}]}`. The gateway's clients are told their tool list changed. 404
/// for an unknown server or tool, 502 when the server cannot be listed.
pub async fn approve(
    State(state): State<WebState>,
    Path(server): Path<String>,
    body: Result<Json<ApproveRequest>, JsonRejection>,
) -> Result<Json<Value>, ApiError> {
    let Json(request) = body.map_err(|e| ApiError::bad_request(e.body_text()))?;
    let pool = state.gateway().pool();
    let approved = pool
        .approve_tools(&server, &request.tools)
        .await
        .map_err(|e| match e {
            PoolError::UnknownServer { .. } => unknown_server(&server),
            PoolError::UnknownTool { .. } => ApiError::not_found(e.to_string()),
            e => ApiError {
                status: http::StatusCode::BAD_GATEWAY,
                message: format!("the tools of server \"{server}\" could not be approved: {e}"),
                said: None,
                field: None,
            },
        })?;
    Ok(Json(json!({ "approved": approved })))
}

/// 404 for a server the gateway does not serve.
pub fn unknown_server(server: &str) -> ApiError {
    ApiError::not_found(format!(
        "the gateway serves no server named \"{server}\"; it may be disabled or not in the config"
    ))
}
