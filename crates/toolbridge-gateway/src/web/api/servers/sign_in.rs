//! `/api/servers/{name}/sign-in` and `/sign-out`: the Servers view's
//! Sign in and Sign out of a remote server that takes OAuth (issue 29).
//!
//! - `POST .../sign-in` starts the sign-in
//!   ([`SignIns::start`](crate::web::sign_ins::SignIns::start); a second
//!   POST while one runs joins it) and answers its phase once it has an
//!   authorization URL: `{"state": "waiting", "authorizationUrl"}` (the
//!   page opens it in a tab), or `{"state": "signedIn", ...}` at once for
//!   an unattended grant (`oauth.grant`), or `{"state": "starting"}` when
//!   discovery is slow (the page polls). A sign-in that fails before it has
//!   a URL is an error naming the server.
//! - `GET .../sign-in`: the phase of the last sign-in the page started
//!   (`waiting`, `signedIn`, `failed` with its `message`), `{"state":
//!   "none"}` without one.
//! - `POST .../sign-out`: the library's sign-out (tokens revoked where the
//!   authorization server offers it, then forgotten), a sign-in under way
//!   cancelled, and the server started again without them.
//!
//! These are writes like every other of the page: the gateway's security
//! refuses a foreign `Origin`, the guard a request without the page's
//! header ([`crate::web::guard`]), the session check one without the
//! page's session when a token is required.

use axum::{
    Json,
    extract::{Path as UrlPath, State},
};
use http::StatusCode;
use serde_json::{Value, json};
use toolbridge::{
    auth::{self, AuthError, TokenStore},
    config::{RemoteSpec, TransportSpec},
};
use url::Url;

use super::{load_config, named, unknown};
use crate::web::{
    WebState,
    api::{ApiError, error::config_error},
    sign_ins::{self, Phase, Target},
};

/// `POST /api/servers/{name}/sign-in`: the sign-in's phase once it has
/// its authorization URL (or is done, or [`sign_ins::START_WAIT`] passed).
pub async fn start(
    State(state): State<WebState>,
    UrlPath(name): UrlPath<String>,
) -> Result<Json<Value>, ApiError> {
    let name = named(&state, name);
    let (url, remote) = remote(&state, &name)?;
    let store = store(&name)?;
    let mut phase = state.sign_ins().start(
        Target {
            server: name.clone(),
            url,
            oauth: remote.oauth,
        },
        store,
        state.gateway().clone(),
    );
    // Still starting after the wait (a slow authorization server), or the
    // task ended without a word (a sign-out cancelled it): the phase as it
    // is, and the page polls.
    let _ = tokio::time::timeout(
        sign_ins::START_WAIT,
        phase.wait_for(|p| !matches!(p, Phase::Starting)),
    )
    .await;
    let now = phase.borrow().clone();
    match now {
        Phase::Failed { message } => Err(ApiError {
            status: StatusCode::BAD_GATEWAY,
            message,
            field: None,
            said: None,
        }),
        other => Ok(Json(to_json(&other))),
    }
}

/// `GET /api/servers/{name}/sign-in`: the last sign-in's phase.
pub async fn status(
    State(state): State<WebState>,
    UrlPath(name): UrlPath<String>,
) -> Result<Json<Value>, ApiError> {
    let name = named(&state, name);
    remote(&state, &name)?;
    Ok(Json(match state.sign_ins().phase(&name) {
        Some(phase) => to_json(&phase),
        None => json!({ "state": "none" }),
    }))
}

/// `POST /api/servers/{name}/sign-out`: `{"wasSignedIn", "revoked"}`, and
/// the server's state after its start without tokens (`error`).
pub async fn sign_out(
    State(state): State<WebState>,
    UrlPath(name): UrlPath<String>,
) -> Result<Json<Value>, ApiError> {
    let name = named(&state, name);
    let (url, _) = remote(&state, &name)?;
    let store = store(&name)?;
    state.sign_ins().cancel(&name);
    let out = auth::sign_out(&name, &url, &store)
        .await
        .map_err(|e| ApiError {
            status: StatusCode::BAD_GATEWAY,
            message: format!("{e}; press Sign out to try again"),
            field: None,
            said: None,
        })?;
    let mut answer = serde_json::to_value(&out).unwrap_or_default();
    if let (Err(error), Value::Object(answer)) = (
        sign_ins::reconnect(state.gateway(), &name).await,
        &mut answer,
    ) {
        answer.insert("error".to_owned(), error.into());
    }
    Ok(Json(answer))
}

fn to_json(phase: &Phase) -> Value {
    serde_json::to_value(phase).unwrap_or_default()
}

/// The token store `serve` reads: the user's.
fn store(name: &str) -> Result<TokenStore, ApiError> {
    TokenStore::user_default().ok_or_else(|| {
        ApiError::internal(format!(
            "cannot sign in to \"{name}\": {}, and restart the gateway",
            AuthError::NoStore
        ))
    })
}

/// The URL and spec of `name`, a streamable HTTP server of the config.
fn remote(state: &WebState, name: &str) -> Result<(Url, RemoteSpec), ApiError> {
    let config = load_config(state)?.ok_or_else(|| unknown(name))?;
    if !config.server_names().contains(&name) {
        return Err(unknown(name));
    }
    let spec = config.resolve(name).map_err(config_error)?;
    match spec.transport {
        TransportSpec::Http(remote) => {
            let url = Url::parse(remote.url.trim()).map_err(|e| {
                ApiError::bad_request(format!(
                    "server \"{name}\": its URL is not a valid URL ({e}); edit the server and \
                     fix it"
                ))
            })?;
            Ok((url, remote))
        }
        _ => Err(ApiError::bad_request(format!(
            "server \"{name}\" is not a streamable HTTP server; sign-in is for servers of \
             type http, which take OAuth"
        ))),
    }
}
