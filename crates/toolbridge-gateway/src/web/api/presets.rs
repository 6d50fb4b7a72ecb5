//! `/api/presets`: the curated servers, searched, shown and added.
//!
//! - `GET /api/presets?q=WORDS&category=C`: `{"categories": [...], "presets":
//!   [...]}`, each preset in the spec's JSON (`toolbridge presets list
//!   --json`), matching every word in its name, description or tools, with
//!   `configuredAs`: the config's servers made from it.
//! - `GET /api/presets/{id}`: `{"preset": {...}, "entry": {...}}`, the entry
//!   being what is added without a key (a `${VAR}` reference).
//! - `POST /api/presets/{id}` `{"name"?, "apiKey"?, "extraArgs"?}`: adds it
//!   through `toolbridge::presets::add`, the CLI's code: without `apiKey`
//!   the entry refers to `${VAR}`; with it the key is stored as is and the
//!   file becomes 0600. The answer never holds the key: `{"name",
//!   "preset", "key": "none" | "stored" | "reference", "keyVar"?,
//!   "keyRequired"?}` (201).
//!
//! Errors name the form field (`name`, `apiKey`, `extraArgs`) and nothing is
//! written; an unknown preset is 404.

use axum::{
    Json, Router,
    extract::{Path, Query, State},
    routing::get,
};
use http::StatusCode;
use serde::Deserialize;
use serde_json::{Value, json};
use toolbridge::{
    config::{Config, ConfigError},
    presets::{self, AddError, AddPreset, Category, KeyPlace, PresetError},
};

use super::ApiError;
use crate::web::WebState;

/// The routes under `/api/presets`.
pub fn routes() -> Router<WebState> {
    Router::new()
        .route("/presets", get(list))
        .route("/presets/{id}", get(show).post(add))
}

#[derive(Deserialize)]
struct ListQuery {
    q: Option<String>,
    category: Option<String>,
}

async fn list(
    State(state): State<WebState>,
    Query(query): Query<ListQuery>,
) -> Result<Json<Value>, ApiError> {
    let category = match query.category.as_deref().filter(|c| !c.is_empty()) {
        Some(name) => Some(
            name.parse::<Category>()
                .map_err(|e| ApiError::field("category", e.to_string()))?,
        ),
        None => None,
    };
    let configured = configured(state.config_path().to_owned()).await;
    let found: Vec<Value> = presets::search(query.q.as_deref().unwrap_or_default())
        .filter(|p| category.is_none_or(|c| p.category == c))
        .map(|preset| {
            let mut item = json!(preset);
            item["configuredAs"] = configured
                .iter()
                .filter(|(_, p)| p.id == preset.id)
                .map(|(name, _)| name.as_str())
                .collect::<Vec<_>>()
                .into();
            item
        })
        .collect();
    Ok(Json(json!({
        "categories": Category::ALL.map(Category::as_str),
        "presets": found,
    })))
}

/// The servers of the config file that came from a preset; none when the
/// file is missing or broken (the list is still worth showing).
async fn configured(path: std::path::PathBuf) -> Vec<(String, &'static presets::Preset)> {
    tokio::task::spawn_blocking(move || {
        Config::load(&path)
            .map(|config| presets::configured(&config))
            .unwrap_or_default()
    })
    .await
    .unwrap_or_default()
}

async fn show(Path(id): Path<String>) -> Result<Json<Value>, ApiError> {
    let preset = presets::get(&id).map_err(preset_error)?;
    let entry = presets::to_config_entry(preset, None, &[]).map_err(preset_error)?;
    Ok(Json(json!({ "preset": preset, "entry": entry })))
}

/// The add form.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct AddForm {
    /// The server's name; default: the preset's id.
    name: Option<String>,
    /// The key to store in the file; absent: a `${VAR}` reference.
    api_key: Option<String>,
    /// Extra arguments for a stdio preset.
    #[serde(default)]
    extra_args: Vec<String>,
}

async fn add(
    State(state): State<WebState>,
    Path(id): Path<String>,
    Json(form): Json<AddForm>,
) -> Result<(StatusCode, Json<Value>), ApiError> {
    if form.api_key.as_deref().is_some_and(|k| k.trim().is_empty()) {
        return Err(ApiError::field(
            "apiKey",
            "type the API key, or untick \"store the key in the config file\" to use a \
             variable instead",
        ));
    }
    let path = state.config_path().to_owned();
    // File I/O under a lock: off the async threads.
    let added = tokio::task::spawn_blocking(move || {
        presets::add(
            &path,
            &AddPreset {
                id: &id,
                name: form.name.as_deref(),
                api_key: form.api_key.as_deref().map(str::trim),
                extra_args: &form.extra_args,
            },
        )
    })
    .await
    .map_err(|e| ApiError::internal(format!("adding the preset failed: {e}")))?
    .map_err(add_error)?;
    let mut answer = json!({
        "name": added.name,
        "preset": added.preset.id,
        "key": "none",
    });
    match added.key {
        KeyPlace::NoKey => {}
        KeyPlace::Stored => answer["key"] = "stored".into(),
        KeyPlace::Reference { var, required } => {
            answer["key"] = "reference".into();
            answer["keyVar"] = var.into();
            answer["keyRequired"] = required.into();
        }
    }
    Ok((StatusCode::CREATED, Json(answer)))
}

fn preset_error(error: PresetError) -> ApiError {
    let message = error.to_string();
    match error {
        PresetError::Unknown { .. } => ApiError::not_found(message),
        PresetError::NoApiKey { .. } | PresetError::KeyNotStorable { .. } => {
            ApiError::field("apiKey", message)
        }
        PresetError::ExtraArgsForRemote { .. } => ApiError::field("extraArgs", message),
        PresetError::UnknownCategory { .. } => ApiError::field("category", message),
        _ => ApiError::bad_request(message),
    }
}

fn add_error(error: AddError) -> ApiError {
    match error {
        AddError::Preset(e) => preset_error(e),
        AddError::Config(e) => {
            let message = e.to_string();
            match e {
                // A taken name, or one the file cannot hold.
                ConfigError::ServerExists { .. }
                | ConfigError::Invalid {
                    server: Some(_),
                    field: None,
                    ..
                } => ApiError::field("name", message),
                // The file does not parse, or cannot be read or written:
                // the user fixes the file, nothing was written.
                _ => ApiError {
                    status: StatusCode::CONFLICT,
                    message,
                    field: None,
                    said: None,
                },
            }
        }
        other => ApiError::internal(other.to_string()),
    }
}
