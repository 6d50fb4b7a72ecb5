//! The Home, Activity and Logs views' API:
//! - `GET /api/home`: the gateway's profiles (each served at `/mcp/NAME`),
//!   how clients sign in (never a token: where it comes from), and the
//!   clients connected ([`crate::connected_clients`]);
//! - `GET /api/activity`: the calls in flight with their progress and the
//!   last calls ended ([`crate::activity`]);
//! - `GET /api/logs`: each server's stderr tail (redacted by the pool) and
//!   the servers' last log messages ([`crate::upstream_logs`]).
//!
//! The page builds the URLs from its own origin: the address the browser
//! reached the gateway at is the one a client on this machine reaches too.

use axum::{Json, Router, extract::State, routing::get};
use serde_json::{Value, json};

use crate::{security::TokenSource, web::WebState};

/// The routes of the three views.
pub fn routes() -> Router<WebState> {
    Router::new()
        .route("/home", get(home))
        .route("/activity", get(activity))
        .route("/logs", get(logs))
}

/// `GET /api/home`.
async fn home(State(state): State<WebState>) -> Json<Value> {
    let gateway = state.gateway();
    let access = state.access();
    let token = match &access.token {
        TokenSource::None => json!({ "source": "none" }),
        TokenSource::Env => json!({ "source": "env", "variable": crate::security::TOKEN_ENV }),
        TokenSource::File(path) => json!({ "source": "file", "file": path }),
    };
    Json(json!({
        "version": env!("CARGO_PKG_VERSION"),
        "configPath": state.config_path(),
        "profiles": gateway.profile_names(),
        "token": token,
        "oauth": access.oauth,
        "clients": gateway.connected_clients().list(),
    }))
}

/// `GET /api/activity`.
async fn activity(State(state): State<WebState>) -> Json<crate::activity::Snapshot> {
    Json(state.gateway().activity().snapshot())
}

/// `GET /api/logs`.
async fn logs(State(state): State<WebState>) -> Json<Value> {
    let pool = state.gateway().pool();
    let running = pool.running_server_names();
    let servers: Vec<Value> = pool
        .server_names()
        .iter()
        .map(|name| {
            json!({
                "name": name,
                "running": running.contains(name),
                "stderr": pool.stderr_tail(name),
            })
        })
        .collect();
    Json(json!({
        "servers": servers,
        "messages": state.gateway().upstream_logs().lines(),
    }))
}
