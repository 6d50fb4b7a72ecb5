//! `/api/resources` and `/api/prompts`: the Resources-and-prompts view,
//! over the gateway's upstream pools (the servers it serves).
//!
//! - `GET /api/resources`: `{"servers": [{"server", "resources": [...],
//!   "templates": [...], "error"?}]}`, items in MCP's JSON. A server that
//!   offers no resources has empty lists; one that fails has `error`.
//! - `GET /api/resources/read?server=S&uri=U`: `{"contents": [...]}`, each
//!   as MCP sent it (`text`, or `blob` in base64) plus `summary`, the
//!   library flattener's words for it (`[Resource: uri (mime, N bytes)]`).
//! - `GET /api/prompts`: `{"servers": [{"server", "prompts": [...],
//!   "error"?}]}`, each prompt with its `arguments`.
//! - `POST /api/prompts/get` `{"server", "name", "arguments": {..}}`:
//!   `{"description"?, "messages": [{"role", "content", "text"}]}`, `text`
//!   being the content flattened as for a model.
//!
//! An unknown server, resource or prompt is 404; arguments a prompt refuses
//! are 422 with `field: "arguments"`; a server that fails is 502, one that
//! takes too long 504.

use std::collections::BTreeMap;

use axum::{
    Json, Router,
    extract::{Query, State},
    routing::{get, post},
};
use futures::future::join_all;
use http::StatusCode;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use toolbridge::{
    format::flatten::block_text,
    pool::{CallOptions, PoolError},
    rmcp_model::ContentBlock,
};

use super::{ApiError, tools::listing::unknown_server};
use crate::web::WebState;

/// The routes under `/api/resources` and `/api/prompts`.
pub fn routes() -> Router<WebState> {
    Router::new()
        .route("/resources", get(resources))
        .route("/resources/read", get(read))
        .route("/prompts", get(prompts))
        .route("/prompts/get", post(get_prompt))
}

/// Puts one of a server's lists under `key` in its `entry`, or why it could
/// not be had under `error`. A server without the capability keeps the
/// entry's empty list: that is no error.
fn fill<L, T>(entry: &mut Value, key: &str, list: Result<L, PoolError>)
where
    L: std::ops::Deref<Target = T>,
    T: Serialize + ?Sized,
{
    match list {
        Ok(list) => entry[key] = json!(*list),
        Err(PoolError::NotOffered { .. }) => {}
        Err(e) => entry["error"] = e.to_string().into(),
    }
}

async fn resources(State(state): State<WebState>) -> Json<Value> {
    let pool = state.gateway().pool();
    let names = pool.server_names();
    let servers = join_all(names.iter().map(|server| async move {
        let (resources, templates) = futures::join!(
            pool.list_resources(server),
            pool.list_resource_templates(server)
        );
        let mut entry = json!({ "server": server, "resources": [], "templates": [] });
        fill(&mut entry, "resources", resources);
        fill(&mut entry, "templates", templates);
        entry
    }))
    .await;
    Json(json!({ "servers": servers }))
}

#[derive(Deserialize)]
struct ReadQuery {
    server: String,
    uri: String,
}

async fn read(
    State(state): State<WebState>,
    Query(query): Query<ReadQuery>,
) -> Result<Json<Value>, ApiError> {
    let result = state
        .gateway()
        .pool()
        .read_resource(&query.server, &query.uri, &CallOptions::default())
        .await
        .map_err(pool_error)?;
    let contents: Vec<Value> = result
        .contents
        .into_iter()
        .map(|contents| {
            let summary = block_text(&ContentBlock::resource(contents.clone()));
            let mut item = json!(contents);
            item["summary"] = summary.into();
            item
        })
        .collect();
    Ok(Json(json!({ "contents": contents })))
}

async fn prompts(State(state): State<WebState>) -> Json<Value> {
    let pool = state.gateway().pool();
    let names = pool.server_names();
    let servers = join_all(names.iter().map(|server| async move {
        let mut entry = json!({ "server": server, "prompts": [] });
        fill(&mut entry, "prompts", pool.list_prompts(server).await);
        entry
    }))
    .await;
    Json(json!({ "servers": servers }))
}

/// The get-prompt form.
#[derive(Deserialize)]
struct GetForm {
    server: String,
    name: String,
    /// Argument values (MCP prompt arguments are strings); empty ones are
    /// left out, so optional arguments can stay blank.
    #[serde(default)]
    arguments: BTreeMap<String, String>,
}

async fn get_prompt(
    State(state): State<WebState>,
    Json(form): Json<GetForm>,
) -> Result<Json<Value>, ApiError> {
    let pool = state.gateway().pool();
    let arguments: serde_json::Map<String, Value> = form
        .arguments
        .into_iter()
        .filter(|(_, v)| !v.is_empty())
        .map(|(k, v)| (k, Value::String(v)))
        .collect();
    let result = pool
        .get_prompt(
            &form.server,
            &form.name,
            (!arguments.is_empty()).then_some(arguments),
            &CallOptions::default(),
        )
        .await
        .map_err(pool_error)?;
    let messages: Vec<Value> = result
        .messages
        .iter()
        .map(|message| {
            json!({
                "role": message.role,
                "content": message.content,
                "text": block_text(&message.content),
            })
        })
        .collect();
    Ok(Json(
        json!({ "description": result.description, "messages": messages }),
    ))
}

fn pool_error(error: PoolError) -> ApiError {
    let message = error.to_string();
    let status = match &error {
        PoolError::UnknownServer { server, .. } => return unknown_server(server),
        PoolError::UnknownResource { .. }
        | PoolError::UnknownPrompt { .. }
        | PoolError::NotOffered { .. } => StatusCode::NOT_FOUND,
        PoolError::InvalidParams { .. } => return ApiError::field("arguments", message),
        PoolError::RequestTimeout { .. }
        | PoolError::StartTimeout { .. }
        | PoolError::Timeout { .. } => StatusCode::GATEWAY_TIMEOUT,
        _ => StatusCode::BAD_GATEWAY,
    };
    ApiError {
        status,
        message,
        field: None,
        said: None,
    }
}
