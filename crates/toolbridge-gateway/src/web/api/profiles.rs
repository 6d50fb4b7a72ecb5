//! `/api/profiles`: the Profiles view's API. A profile (the config's
//! `"profiles"`, docs/config.md) is a view of the gateway served at
//! `/mcp/NAME`; the page lists, edits, adds and removes them and previews
//! what one would serve before it is saved.
//!
//! - `GET /api/profiles`: `{"configPath", "editable", "servers": [{name,
//!   enabled, served}], "profiles": [{name, path, served, record}]}`; a
//!   record is the profile as the file has it (`servers`, `tools`,
//!   `rename`, `descriptions`, `discovery`, only those written); `path` is
//!   `/mcp/NAME` (the page makes the URL from its own origin, as Home does);
//! - `PUT /api/profiles/{name}` with a record: adds the profile or
//!   replaces it (`{"created": bool, "profile": {...}}`);
//! - `DELETE /api/profiles/{name}`: 204;
//! - `POST /api/profile-preview` `{"name"?, "record"}`: the tools the
//!   profile would serve from the gateway's servers now (`preview`).
//!
//! Writes go through [`Document::put_profile`] and
//! [`Document::remove_profile`] under [`toolbridge::config::edit`] (locked, atomic, only
//! that profile's text rewritten, comments kept), behind the page's guard
//! like every write. The record is checked as the file's loading checks it;
//! a refusal names the field (`servers`, `tools`, `rename`, `descriptions`,
//! `discovery`, `name`) and writes nothing. The gateway's config watcher
//! then reloads the profiles: `/mcp/NAME` serves the new view and its
//! clients are told their lists changed.

use std::sync::Arc;

use axum::{
    Json, Router,
    body::Bytes,
    extract::{Path as UrlPath, State},
    routing::{get, post, put},
};
use futures::future::join_all;
use http::StatusCode;
use serde_json::{Map, Value, json};
use toolbridge::{
    config::{Config, ConfigError, Discovery, Document, Profile, ToolMatch},
    tools::McpTool,
};

use super::{
    ApiError,
    error::config_error,
    servers::{load_config, require_file, write},
};
use crate::{
    profile::{View, ViewName, ViewTools},
    web::WebState,
};

/// The routes of the Profiles view.
pub fn routes() -> Router<WebState> {
    Router::new()
        .route("/profiles", get(list))
        .route("/profiles/{name}", put(save).delete(remove))
        .route("/profile-preview", post(preview))
}

/// `GET /api/profiles`.
async fn list(State(state): State<WebState>) -> Result<Json<Value>, ApiError> {
    let config = load_config(&state)?;
    let gateway = state.gateway();
    let served = gateway.pool().server_names();
    let (servers, profiles) = match &config {
        None => (Vec::new(), Vec::new()),
        Some(config) => (
            config
                .listing()
                .into_iter()
                .map(|s| {
                    json!({
                        "name": s.name,
                        "enabled": s.enabled,
                        "served": served.contains(&s.name),
                    })
                })
                .collect(),
            config
                .profiles()
                .iter()
                .map(|p| view(p, gateway.has_profile(&p.name)))
                .collect(),
        ),
    };
    Ok(Json(json!({
        "configPath": state.config_path().display().to_string(),
        "editable": config.as_ref().is_some_and(|c| !c.is_builtin()),
        "servers": servers,
        "profiles": profiles,
    })))
}

/// One profile as the page shows it.
fn view(profile: &Profile, served: bool) -> Value {
    json!({
        "name": profile.name,
        "path": format!("/mcp/{}", profile.name),
        "served": served,
        "record": record(profile),
    })
}

/// `profile` as the file writes it: only the fields it has.
fn record(profile: &Profile) -> Value {
    let mut out = Map::new();
    if let Some(servers) = &profile.servers {
        out.insert("servers".into(), json!(servers));
    }
    if !profile.tools.is_empty() {
        out.insert("tools".into(), json!(profile.tools));
    }
    let pairs = |entries: &[(String, String)]| -> Value {
        Value::Object(
            entries
                .iter()
                .map(|(k, v)| (k.clone(), Value::String(v.clone())))
                .collect(),
        )
    };
    if !profile.rename.is_empty() {
        out.insert("rename".into(), pairs(&profile.rename));
    }
    if !profile.descriptions.is_empty() {
        out.insert("descriptions".into(), pairs(&profile.descriptions));
    }
    if profile.discovery != Discovery::List {
        out.insert("discovery".into(), profile.discovery.as_str().into());
    }
    Value::Object(out)
}

/// `PUT /api/profiles/{name}` with a record.
async fn save(
    State(state): State<WebState>,
    UrlPath(name): UrlPath<String>,
    body: Bytes,
) -> Result<Json<Value>, ApiError> {
    require_file(state.config_path(), &name)?;
    let record: Value = parse(&body)?;
    if !record.is_object() {
        return Err(ApiError::bad_request(
            "the request must be a profile record: {\"servers\": [...], \"tools\": [...], ...}",
        ));
    }
    let saved = name.clone();
    let created = write(&state, move |doc: &mut Document| {
        match doc.put_profile(&saved, record) {
            Ok(old) => Ok(Ok(old.is_none())),
            Err(error @ ConfigError::Profile { .. }) => Ok(Err(profile_error(error))),
            Err(error) => Err(error),
        }
    })
    .await?;
    let config = load_config(&state)?.ok_or_else(|| unknown(&name))?;
    let profile = config.profile(&name).ok_or_else(|| unknown(&name))?;
    Ok(Json(json!({
        "created": created,
        "profile": view(profile, state.gateway().has_profile(&name)),
    })))
}

/// `DELETE /api/profiles/{name}`: 204.
async fn remove(
    State(state): State<WebState>,
    UrlPath(name): UrlPath<String>,
) -> Result<StatusCode, ApiError> {
    require_file(state.config_path(), &name)?;
    write(&state, move |doc: &mut Document| {
        match doc.remove_profile(&name) {
            Ok(_) => Ok(Ok(())),
            Err(ConfigError::UnknownProfile { name, .. }) => Ok(Err(unknown(&name))),
            Err(error @ ConfigError::Profile { .. }) => Ok(Err(ApiError {
                status: StatusCode::CONFLICT,
                ..profile_error(error)
            })),
            Err(error) => Err(error),
        }
    })
    .await?;
    Ok(StatusCode::NO_CONTENT)
}

fn unknown(name: &str) -> ApiError {
    ApiError::not_found(format!(
        "there is no profile \"{name}\" in the config; reload the page to see the current list"
    ))
}

/// A profile's config error next to the form field it is about: the field
/// it names, else the profile's name (a name that is not allowed, a key
/// the profile does not read).
fn profile_error(error: ConfigError) -> ApiError {
    match error.field() {
        Some(field) => ApiError::field(field.to_owned(), error.to_string()),
        None if error.to_string().contains("is not a profile name") => {
            ApiError::field("name", error.to_string())
        }
        None => ApiError::bad_request(error.to_string()),
    }
}

/// The request body as JSON, or a 400 naming what is wrong with it.
fn parse<T: serde::de::DeserializeOwned>(body: &[u8]) -> Result<T, ApiError> {
    serde_json::from_slice(body)
        .map_err(|e| ApiError::bad_request(format!("the request is not the expected JSON: {e}")))
}

/// `POST /api/profile-preview` `{"name"?, "record"}`: what the profile
/// would serve, from the gateway's servers as they are now:
/// `{"discovery", "servers": [{name, listed, error?}], "tools": [...],
/// "unused": {"rename": [...], "descriptions": [...]}}`. Each tool of the
/// profile's servers is `{server, tool, included, why ("glob", "all",
/// "notIncluded", "excluded"), glob, name (what clients call it, when
/// included), renamed, description, describedAnew, renameNotApplied?}`.
/// Nothing is written.
async fn preview(State(state): State<WebState>, body: Bytes) -> Result<Json<Value>, ApiError> {
    let request: Value = parse(&body)?;
    let name = match request.get("name") {
        None | Some(Value::Null) => "preview".to_owned(),
        Some(Value::String(name)) if name.trim().is_empty() => "preview".to_owned(),
        Some(Value::String(name)) => name.clone(),
        Some(_) => return Err(ApiError::field("name", "\"name\" must be a string")),
    };
    let record = request.get("record").cloned().unwrap_or_else(|| json!({}));
    let config = load_config(&state)?;
    let known: Vec<&str> = config
        .as_ref()
        .map(Config::server_names)
        .unwrap_or_default();
    let profile = Profile::check(state.config_path(), &name, &record, &known).map_err(|e| {
        if matches!(e, ConfigError::Profile { .. }) {
            profile_error(e)
        } else {
            config_error(e)
        }
    })?;
    Ok(Json(serves(&state, profile).await))
}

/// What `profile` serves from the gateway's servers now.
async fn serves(state: &WebState, profile: Profile) -> Value {
    let pool = state.gateway().pool();
    let servers: Vec<String> = pool
        .server_names()
        .into_iter()
        .filter(|s| profile.includes_server(s))
        .collect();
    let results = join_all(servers.iter().map(|s| pool.list_server_tools(s))).await;
    let mut lists: Vec<(String, Arc<Vec<McpTool>>)> = Vec::new();
    let mut listed = Vec::new();
    for (server, result) in servers.iter().zip(results) {
        match result {
            Ok(list) => {
                listed.push(json!({ "name": server, "listed": true }));
                lists.push((server.clone(), list));
            }
            Err(e) => {
                listed.push(json!({ "name": server, "listed": false, "error": e.to_string() }));
                lists.push((server.clone(), Arc::new(Vec::new())));
            }
        }
    }
    // Servers the profile names that the gateway does not serve (disabled,
    // or not valid now).
    for named in profile.servers.iter().flatten() {
        if !servers.contains(named) {
            listed.push(json!({ "name": named, "listed": false, "served": false }));
        }
    }
    let view = View {
        name: ViewName::profile(&profile.name),
        profile: Arc::new(profile),
    };
    let built = ViewTools::build(
        &view,
        lists
            .iter()
            .map(|(s, l)| (s.as_str(), l.as_slice()))
            .collect(),
    );
    let profile = &view.profile;
    let prefixed = lists.len() > 1;
    let mut used_rename = Vec::new();
    let mut used_description = Vec::new();
    let mut tools = Vec::new();
    for (server, list) in &lists {
        for tool in list.iter() {
            let listed_as = if prefixed {
                format!("{server}__{}", tool.name)
            } else {
                tool.name.clone()
            };
            let mut entry = json!({ "server": server, "tool": tool.name });
            let (why, glob) = match profile.explain(server, &tool.name) {
                ToolMatch::Included(Some(glob)) => ("glob", Some(glob)),
                ToolMatch::Included(None) => ("all", None),
                ToolMatch::NotIncluded => ("notIncluded", None),
                ToolMatch::Excluded(glob) => ("excluded", Some(glob)),
                ToolMatch::OtherServer => continue,
            };
            entry["why"] = why.into();
            entry["glob"] = glob.into();
            let found = built
                .routed
                .routes
                .iter()
                .find(|(_, r)| r.server == *server && r.name == tool.name)
                .map(|(exposed, _)| exposed.clone());
            entry["included"] = found.is_some().into();
            if let Some(exposed) = found {
                let wanted = profile.new_name(server, &tool.name, &listed_as);
                if let Some(wanted) = wanted {
                    used_rename.push(wanted.to_owned());
                    if wanted != exposed {
                        entry["renameNotApplied"] = wanted.into();
                    }
                }
                let described = profile.description(server, &tool.name, &listed_as);
                if described.is_some() {
                    used_description.push((server.clone(), tool.name.clone(), listed_as.clone()));
                }
                entry["renamed"] = (exposed != listed_as).into();
                entry["name"] = exposed.into();
                entry["description"] = described.unwrap_or(&tool.description).into();
                entry["describedAnew"] = described.is_some().into();
                if described.is_some() {
                    entry["originalDescription"] = tool.description.clone().into();
                }
            } else {
                entry["description"] = tool.description.clone().into();
            }
            tools.push(entry);
        }
    }
    // Overrides that name no tool of the profile: most likely a typo.
    let unused_rename: Vec<&str> = profile
        .rename
        .iter()
        .filter(|(_, new)| !used_rename.iter().any(|u| u == new))
        .map(|(key, _)| key.as_str())
        .collect();
    let unused_descriptions: Vec<&str> = profile
        .descriptions
        .iter()
        .filter(|(key, _)| {
            !used_description
                .iter()
                .any(|(server, tool, listed)| *key == format!("{server}__{tool}") || key == listed)
        })
        .map(|(key, _)| key.as_str())
        .collect();
    json!({
        "name": profile.name,
        "discovery": profile.discovery.as_str(),
        "servers": listed,
        "tools": tools,
        "unused": { "rename": unused_rename, "descriptions": unused_descriptions },
    })
}
