//! `POST /api/tools/{server}/{tool}/disable` and `.../enable`: the switch
//! per tool. It writes the server's `disabledTools` in the config file
//! through the CLI's config code (locked, atomic, only that server's record
//! rewritten, comments kept); the gateway's config watcher then reloads,
//! and the tool leaves (or rejoins) every client's `tools/list`, as after
//! an edit of the file by hand.

use axum::{
    Json,
    extract::{Path, State},
};
use serde_json::{Value, json};

use crate::web::{
    WebState,
    api::{
        ApiError,
        servers::{require_file, write},
    },
};

/// Takes `tool` out of `server`'s listing and calls.
pub async fn disable(
    State(state): State<WebState>,
    Path((server, tool)): Path<(String, String)>,
) -> Result<Json<Value>, ApiError> {
    set(state, server, tool, true).await
}

/// Lists `tool` of `server` again.
pub async fn enable(
    State(state): State<WebState>,
    Path((server, tool)): Path<(String, String)>,
) -> Result<Json<Value>, ApiError> {
    set(state, server, tool, false).await
}

/// `{"server", "tool", "enabled", "changed"}`; 404 for a server the config
/// file does not have (or no file: the built-in example cannot be edited).
async fn set(
    state: WebState,
    server: String,
    tool: String,
    disabled: bool,
) -> Result<Json<Value>, ApiError> {
    if tool.is_empty() || tool.len() > 512 {
        return Err(ApiError::bad_request(
            "a tool name must have 1 to 512 characters",
        ));
    }
    require_file(state.config_path(), &server)?;
    let (name, tool_name) = (server.clone(), tool.clone());
    let changed = write(&state, move |doc| {
        doc.set_tool_disabled(&name, &tool_name, disabled).map(Ok)
    })
    .await?;
    Ok(Json(json!({
        "server": server,
        "tool": tool,
        "enabled": !disabled,
        "changed": changed,
    })))
}

/// Each configured server's `disabledTools`, by name (empty when the
/// config cannot be read: the page then shows no tool as off).
pub fn disabled_tools(state: &WebState) -> serde_json::Map<String, Value> {
    let Ok(Some(config)) = crate::web::api::servers::load_config(state) else {
        return serde_json::Map::new();
    };
    config
        .listing()
        .into_iter()
        .map(|l| (l.name, json!(l.disabled_tools)))
        .collect()
}
