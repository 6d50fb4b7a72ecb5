//! `GET /api/tools` and `GET /api/tools/{server}`: the served servers, and
//! one server's tools as it names them, each with its provider previews.

use axum::{
    Json,
    extract::{Path, State},
};
use serde::Serialize;
use serde_json::{Value, json};
use toolbridge::McpTool;

use super::preview::{Preview, previews};
use crate::web::{WebState, api::ApiError};

/// The served servers in config order, each with whether it runs now.
pub async fn servers(State(state): State<WebState>) -> Json<Value> {
    let servers: Vec<Value> = state
        .gateway()
        .upstream_states()
        .into_iter()
        .map(|(name, running)| json!({ "name": name, "running": running }))
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
}

/// `server`'s tools (starting it when its list is not cached): 404 for a
/// server the gateway does not serve, 502 when it cannot be listed.
pub async fn tools(
    State(state): State<WebState>,
    Path(server): Path<String>,
) -> Result<Json<Value>, ApiError> {
    let upstreams = state.gateway().upstreams();
    let pool = upstreams
        .pool(&server)
        .ok_or_else(|| unknown_server(&server))?;
    let tools = pool
        .list_server_tools(&server)
        .await
        .map_err(|e| ApiError {
            status: http::StatusCode::BAD_GATEWAY,
            message: format!("the tools of server \"{server}\" could not be listed: {e}"),
            field: None,
        })?;
    let previews = previews(&tools);
    let views: Vec<ToolView<'_>> = tools
        .iter()
        .zip(previews)
        .map(|(tool, previews)| ToolView {
            tool,
            exposed_name: previews.exposed_name,
            previews: previews.providers,
        })
        .collect();
    Ok(Json(json!({ "server": server, "tools": views })))
}

/// 404 for a server the gateway does not serve.
pub fn unknown_server(server: &str) -> ApiError {
    ApiError::not_found(format!(
        "the gateway serves no server named \"{server}\"; it may be disabled or not in the config"
    ))
}
