//! `/api/import`: the servers of another application's MCP config file
//! (Claude Desktop's `claude_desktop_config.json`, Cursor's `mcp.json`, VS
//! Code's `mcp.json` or `settings.json`, Claude Code, Windsurf, Zed), shown
//! and then added, with the code behind `toolbridge servers import`
//! ([`toolbridge::config::importable`] and
//! [`toolbridge::config::import_servers`]).
//!
//! The page reads the file the user picked (a file input) and sends its
//! text with its name, `{"fileName", "text"}`: the gateway reads no path
//! the page names. Both routes are POSTs, so the guard's checks on writes
//! (the page's header, its own Origin) hold for the preview too, and a
//! file's text never goes in an address.
//!
//! - `POST /api/import/preview` → `{"foundIn", "servers": [{"name",
//!   "transport", "launch", "env", "headers", "exists"}], "invalid":
//!   [message]}`: secrets masked as `servers list` masks them (argument
//!   and URL secrets, every env and header value);
//! - `POST /api/import` with `"servers": [names]` → `{"added", "skipped",
//!   "invalid", "inputs"}`: only those servers, a name the config already
//!   has skipped (never replaced from the page), written through
//!   `config::edit` (locked, atomic, comments kept).

use std::path::{Path, PathBuf};

use axum::{Json, Router, body::Bytes, extract::State, routing::post};
use serde::Deserialize;
use serde_json::{Value, json};
use toolbridge::{
    config::{self, Importable},
    redact::{mask_args, mask_url},
};

use super::{ApiError, error::config_error, servers::load_config};
use crate::web::WebState;

/// The routes under `/api/import`.
pub fn routes() -> Router<WebState> {
    Router::new()
        .route("/import/preview", post(preview))
        .route("/import", post(import))
}

/// The body of both routes.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ImportRequest {
    /// The picked file's name (`mcp.json`, `settings.json`...): it tells
    /// VS Code's and Zed's `settings.json` apart.
    #[serde(default)]
    file_name: String,
    /// The file's text.
    text: String,
    /// The servers to add (import only).
    #[serde(default)]
    servers: Vec<String>,
}

impl ImportRequest {
    fn parse(body: &[u8]) -> Result<ImportRequest, ApiError> {
        serde_json::from_slice(body).map_err(|e| {
            ApiError::bad_request(format!(
                "the request is not the expected JSON ({{\"fileName\", \"text\"}}): {e}"
            ))
        })
    }

    /// The file as the library reads it: its name only (no folder: where
    /// it came from is the browser's; `${workspaceFolder}` stays as written).
    fn importable(&self) -> Result<Importable, ApiError> {
        let name = Path::new(self.file_name.trim())
            .file_name()
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from("mcp.json"));
        config::importable(&name, &self.text, None)
            .map_err(|e| ApiError::field("file", e.to_string()))
    }
}

/// `POST /api/import/preview`: the file's servers, masked, each saying
/// whether the config already has its name.
async fn preview(State(state): State<WebState>, body: Bytes) -> Result<Json<Value>, ApiError> {
    let request = ImportRequest::parse(&body)?;
    let found = request.importable()?;
    let existing: Vec<String> = load_config(&state)?
        .map(|c| c.listing().into_iter().map(|l| l.name).collect())
        .unwrap_or_default();
    let servers: Vec<Value> = found
        .servers
        .iter()
        .map(|(name, record)| shown(name, record, existing.contains(name)))
        .collect();
    Ok(Json(json!({
        "foundIn": found.found_in,
        "servers": servers,
        "invalid": found.invalid.iter().map(ToString::to_string).collect::<Vec<_>>(),
    })))
}

/// One server of the file as the preview shows it.
fn shown(name: &str, record: &Value, exists: bool) -> Value {
    let text = |key: &str| record.get(key).and_then(Value::as_str);
    let names = |key: &str| -> Vec<String> {
        record
            .get(key)
            .and_then(Value::as_object)
            .map(|m| m.keys().cloned().collect())
            .unwrap_or_default()
    };
    let (transport, launch) = match (text("command"), text("url").or(text("serverUrl"))) {
        (Some(command), _) => {
            let args: Vec<String> = record
                .get("args")
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .filter_map(|v| v.as_str().map(str::to_owned))
                        .collect()
                })
                .unwrap_or_default();
            let launch = std::iter::once(command.to_owned())
                .chain(mask_args(&args))
                .collect::<Vec<_>>()
                .join(" ");
            ("stdio".to_owned(), launch)
        }
        (None, Some(url)) => (text("type").unwrap_or("http").to_owned(), mask_url(url)),
        (None, None) => (String::new(), String::new()),
    };
    json!({
        "name": name,
        "transport": transport,
        "launch": launch,
        "env": names("env"),
        "headers": names("headers"),
        "exists": exists,
    })
}

/// `POST /api/import`: adds the chosen servers of the file.
async fn import(State(state): State<WebState>, body: Bytes) -> Result<Json<Value>, ApiError> {
    let request = ImportRequest::parse(&body)?;
    if request.servers.is_empty() {
        return Err(ApiError::field(
            "servers",
            "choose at least one server to import",
        ));
    }
    let found = request.importable()?;
    let unknown: Vec<&String> = request
        .servers
        .iter()
        .filter(|name| !found.servers.iter().any(|(n, _)| n == *name))
        .collect();
    if let Some(name) = unknown.first() {
        return Err(ApiError::field(
            "servers",
            format!("the file has no importable server \"{name}\""),
        ));
    }
    let path = state.config_path().to_owned();
    let chosen = request.servers;
    let report = tokio::task::spawn_blocking(move || {
        config::import_servers(&path, found, Some(&chosen), false)
    })
    .await
    .map_err(|e| ApiError::internal(format!("the import did not finish: {e}")))?
    .map_err(config_error)?;
    Ok(Json(json!({
        "foundIn": report.found_in,
        "added": report.added,
        "skipped": report.skipped,
        "invalid": report.invalid.iter().map(ToString::to_string).collect::<Vec<_>>(),
        "inputs": report.inputs,
    })))
}
