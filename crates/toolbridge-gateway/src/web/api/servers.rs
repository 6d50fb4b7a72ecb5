//! `/api/servers`: the Servers view's API. List every configured server
//! (disabled ones and ones this gateway does not serve too) with its state;
//! add, edit (renaming allowed), remove, enable, disable, test; sign in to
//! and out of a remote server that takes OAuth ([`sign_in`]).
//!
//! Every write goes through [`toolbridge::config::edit`], the code behind
//! `toolbridge servers add/remove/enable/disable`: locked, re-read, atomic,
//! only the changed servers rewritten (comments stay), never over a file
//! that does not parse. A request that fails validation writes nothing and
//! names the field ([`ApiError::field`]). The gateway's config watcher
//! (polling once a second) then starts and stops what changed; the API does
//! not reload the gateway itself, since which servers it serves also
//! depends on `serve --server`, which only the watcher's loader knows.
//!
//! Secrets never leave: records are shown as `servers list` shows them
//! (env and header values `***`, secrets in URLs and arguments masked), a
//! server's stderr and errors with its secrets removed. A masked value sent
//! back unchanged keeps the stored secret (see [`form`]).
//!
//! Times: `startedAtMs` is milliseconds since the Unix epoch; `startMs` the
//! duration of the start and handshake.

pub mod form;
pub mod sign_in;
pub mod variable;
pub mod view;

use std::path::Path;

use axum::{
    Json, Router,
    body::Bytes,
    extract::{Path as UrlPath, State},
    routing::{get, post},
};
use http::StatusCode;
use serde_json::{Value, json};
use toolbridge::{
    config::{self, Config, ConfigError, Document, EXAMPLE_SERVER, TransportSpec},
    deps::Platform,
    doctor::{self, CheckOptions},
};

use self::{form::ServerForm, view::ServerView};
use super::{ApiError, error::config_error};
use crate::web::WebState;

/// The routes under `/api/servers`.
pub fn routes() -> Router<WebState> {
    Router::new()
        .route("/servers", get(list).post(add))
        .route("/servers/{name}", get(one).put(edit).delete(remove))
        .route("/servers/{name}/enable", post(enable))
        .route("/servers/{name}/disable", post(disable))
        .route("/servers/{name}/test", post(test))
        .route("/servers/{name}/variable", post(set_variable))
        .route(
            "/servers/{name}/sign-in",
            get(sign_in::status).post(sign_in::start),
        )
        .route("/servers/{name}/sign-out", post(sign_in::sign_out))
}

/// The config the page shows: the file, or, when the default file does not
/// exist, the built-in example server the gateway then serves (`None` when
/// there is neither).
pub fn load_config(state: &WebState) -> Result<Option<Config>, ApiError> {
    let path = state.config_path();
    match Config::load(path) {
        Ok(config) => Ok(Some(config)),
        Err(ConfigError::Read { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
            Ok(state
                .gateway()
                .pool()
                .spec(EXAMPLE_SERVER)
                .and_then(|spec| match spec.transport {
                    TransportSpec::Stdio(stdio) => Some(Config::builtin(path, stdio)),
                    _ => None,
                }))
        }
        Err(e) => Err(config_error(e)),
    }
}

/// `GET /api/servers`: `{"configPath", "builtin", "servers": [ServerView]}`.
async fn list(State(state): State<WebState>) -> Result<Json<Value>, ApiError> {
    let config = load_config(&state)?;
    let servers = config
        .as_ref()
        .map(|c| view::views(c, state.gateway()))
        .unwrap_or_default();
    Ok(Json(json!({
        "configPath": state.config_path().display().to_string(),
        "builtin": config.as_ref().is_some_and(Config::is_builtin),
        "servers": servers,
    })))
}

/// `GET /api/servers/{name}`: one [`ServerView`].
async fn one(
    State(state): State<WebState>,
    UrlPath(name): UrlPath<String>,
) -> Result<Json<ServerView>, ApiError> {
    let name = named(&state, name);
    find(&state, &name).map(Json)
}

/// The server a URL's `{name}` means: that name, or the server whose
/// [`view::reference`] it is (the page addresses servers by reference).
pub(crate) fn named(state: &WebState, segment: String) -> String {
    let Ok(Some(config)) = load_config(state) else {
        return segment;
    };
    let names: Vec<String> = config.listing().into_iter().map(|l| l.name).collect();
    if names.contains(&segment) {
        return segment;
    }
    names
        .into_iter()
        .find(|name| view::reference(name) == segment)
        .unwrap_or(segment)
}

fn find(state: &WebState, name: &str) -> Result<ServerView, ApiError> {
    load_config(state)?
        .map(|c| view::views(&c, state.gateway()))
        .unwrap_or_default()
        .into_iter()
        .find(|v| v.config.name == name)
        .ok_or_else(|| unknown(name))
}

fn unknown(name: &str) -> ApiError {
    ApiError::not_found(format!(
        "there is no server \"{name}\" in the config; reload the page to see the current list"
    ))
}

/// `POST /api/servers` with a [`ServerForm`]: 201 and the new server.
async fn add(
    State(state): State<WebState>,
    body: Bytes,
) -> Result<(StatusCode, Json<ServerView>), ApiError> {
    let form: ServerForm = parse(&body)?;
    let name = form.checked_name()?;
    let record = form.to_record(None)?;
    let added = name.clone();
    write(&state, move |doc| {
        if doc.contains(&added) {
            return Ok(Err(taken(&added)));
        }
        doc.add_server(&added, record).map(Ok)
    })
    .await?;
    Ok((StatusCode::CREATED, Json(find(&state, &name)?)))
}

/// `PUT /api/servers/{name}` with a [`ServerForm`]: the edited server. A
/// new `name` renames it (the server moves to the end of the file).
async fn edit(
    State(state): State<WebState>,
    UrlPath(name): UrlPath<String>,
    body: Bytes,
) -> Result<Json<ServerView>, ApiError> {
    let name = named(&state, name);
    let form: ServerForm = parse(&body)?;
    // An existing name sent back unchanged is kept as it is.
    let new_name = if form.name == name {
        name.clone()
    } else {
        form.checked_name()?
    };
    form.check()?;
    let renamed = new_name.clone();
    write(&state, move |doc| {
        let Some(stored) = doc.server(&name).cloned() else {
            return Ok(Err(unknown(&name)));
        };
        let record = match form.to_record(Some(&stored)) {
            Ok(record) => record,
            Err(error) => return Ok(Err(error)),
        };
        if renamed != name {
            if doc.contains(&renamed) {
                return Ok(Err(taken(&renamed)));
            }
            doc.remove_server(&name)?;
        }
        doc.put_server(&renamed, record).map(|_| Ok(()))
    })
    .await?;
    Ok(Json(find(&state, &new_name)?))
}

fn taken(name: &str) -> ApiError {
    ApiError::field(
        "name",
        format!("a server named \"{name}\" already exists; choose another name"),
    )
}

/// `DELETE /api/servers/{name}`: 204.
async fn remove(
    State(state): State<WebState>,
    UrlPath(name): UrlPath<String>,
) -> Result<StatusCode, ApiError> {
    let name = named(&state, name);
    require_file(state.config_path(), &name)?;
    write(&state, move |doc| doc.remove_server(&name).map(|_| Ok(()))).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// `POST /api/servers/{name}/enable`: the server.
async fn enable(
    State(state): State<WebState>,
    UrlPath(name): UrlPath<String>,
) -> Result<Json<ServerView>, ApiError> {
    let name = named(&state, name);
    set_disabled(state, name, false).await
}

/// `POST /api/servers/{name}/variable` with `{"variable", "value"}`: the
/// server, its `${variable}` references in `env` and `headers` replaced by
/// the value ([`variable`]).
async fn set_variable(
    State(state): State<WebState>,
    UrlPath(name): UrlPath<String>,
    body: Bytes,
) -> Result<Json<ServerView>, ApiError> {
    let name = named(&state, name);
    require_file(state.config_path(), &name)?;
    variable::set(&state, name.clone(), parse(&body)?).await?;
    Ok(Json(find(&state, &name)?))
}

/// `POST /api/servers/{name}/disable`: the server.
async fn disable(
    State(state): State<WebState>,
    UrlPath(name): UrlPath<String>,
) -> Result<Json<ServerView>, ApiError> {
    let name = named(&state, name);
    set_disabled(state, name, true).await
}

async fn set_disabled(
    state: WebState,
    name: String,
    disabled: bool,
) -> Result<Json<ServerView>, ApiError> {
    require_file(state.config_path(), &name)?;
    let changed = name.clone();
    write(&state, move |doc| {
        doc.set_disabled(&changed, disabled).map(Ok)
    })
    .await?;
    Ok(Json(find(&state, &name)?))
}

/// `POST /api/servers/{name}/test`: starts the server apart from the
/// gateway's (doctor's check: config, command, handshake, tool listing)
/// and closes it again: `{"server", "ok", "toolCount", "startMs", ...,
/// "findings": [...]}`.
async fn test(
    State(state): State<WebState>,
    UrlPath(name): UrlPath<String>,
) -> Result<Json<Value>, ApiError> {
    let name = named(&state, name);
    let config = load_config(&state)?.ok_or_else(|| unknown(&name))?;
    let check = doctor::diagnose_server(
        &config,
        &name,
        &Platform::current(),
        &CheckOptions::default(),
    )
    .await
    .ok_or_else(|| unknown(&name))?;
    let mut out = json!({
        "server": check.server,
        "ok": check.findings.is_empty() && check.started.is_some(),
        "findings": check.findings,
    });
    if let (Some(Value::Object(started)), Value::Object(out)) = (
        check
            .started
            .as_ref()
            .and_then(|s| serde_json::to_value(s).ok()),
        &mut out,
    ) {
        out.extend(started);
    }
    Ok(Json(out))
}

/// The request body as `T`, or a 400 naming what is wrong with it.
fn parse<T: serde::de::DeserializeOwned>(body: &[u8]) -> Result<T, ApiError> {
    serde_json::from_slice(body)
        .map_err(|e| ApiError::bad_request(format!("the request is not the expected JSON: {e}")))
}

/// Editing needs a config file: without one only the built-in example
/// server exists, and it cannot be edited (as in the CLI).
pub(crate) fn require_file(path: &Path, name: &str) -> Result<(), ApiError> {
    if path.exists() {
        return Ok(());
    }
    Err(ApiError::not_found(format!(
        "there is no config file at {}, so \"{name}\" cannot be changed; add a server first",
        path.display()
    )))
}

/// Runs `change` through [`config::edit`] on the gateway's config file,
/// off the async threads (the edit waits for the file's lock). `change`
/// returns `Ok(Err(..))` for a refusal found before it changed anything:
/// nothing is written then.
pub(crate) async fn write<T: Send + 'static>(
    state: &WebState,
    change: impl FnOnce(&mut Document) -> Result<Result<T, ApiError>, ConfigError> + Send + 'static,
) -> Result<T, ApiError> {
    let path = state.config_path().to_owned();
    tokio::task::spawn_blocking(move || config::edit(&path, change))
        .await
        .map_err(|e| ApiError::internal(format!("the config edit did not finish: {e}")))?
        .map_err(config_error)?
}
