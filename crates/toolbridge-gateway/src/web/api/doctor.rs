//! `/api/doctor`: the Doctor view's API. `POST /api/doctor` is `toolbridge
//! doctor --json` (the same checks and the same report: the launchers, each
//! server's status, the findings with their fixes). It starts every
//! configured server, so it is a POST (an `<img>` or link on a foreign page
//! sends GETs) and runs one at a time: a second while one runs gets 409; `POST
//! /api/doctor/install` installs a missing launcher the way `toolbridge
//! doctor --install CMD` does, and only with `{"confirm": true}` in the
//! body (the page asks first; without it: 400 and nothing runs); `GET
//! /api/doctor/install/{command}` says what that would run, for the page
//! to show before asking.

use axum::{
    Json, Router,
    body::Bytes,
    extract::{Path, State},
    routing::{get, post},
};
use serde::Deserialize;
use serde_json::{Value, json};
use toolbridge::deps::{self, InstallOutput, Platform, ProbeStatus};
use toolbridge::doctor::{self, CheckOptions};

use super::{
    ApiError,
    servers::{load_config, view},
};
use crate::web::WebState;

/// The routes under `/api/doctor`.
pub fn routes() -> Router<WebState> {
    Router::new()
        .route("/doctor", post(report))
        .route("/doctor/install", post(install))
        .route("/doctor/install/{command}", get(plan))
}

/// `POST /api/doctor`: every configured server checked (enabled ones
/// started and closed again, apart from the gateway's own connections).
async fn report(State(state): State<WebState>) -> Result<Json<Value>, ApiError> {
    let Some(_running) = state.doctor_turn() else {
        return Err(ApiError {
            status: http::StatusCode::CONFLICT,
            message: "doctor is already checking the servers; wait for its report".into(),
            field: None,
            said: None,
        });
    };
    let Some(config) = load_config(&state)? else {
        return Ok(Json(json!({
            "config": state.config_path().display().to_string(),
            "builtin": false, "launchers": [], "servers": [], "findings": [],
        })));
    };
    let platform = Platform::current();
    let options = CheckOptions::default();
    let (probes, checks) = tokio::join!(
        deps::probe_all(&deps::KNOWN_COMMANDS, None, deps::PROBE_TIMEOUT),
        doctor::diagnose(&config, &platform, &options, |_| {}),
    );
    let mut report = doctor::report_json(&config, &probes, &checks);
    with_references(&mut report);
    Ok(Json(report))
}

/// Each server of `report` with its `ref`, by which the page addresses it
/// in `/api/servers/{ref}/...` (a finding's Sign in uses the Servers
/// view's sign-in).
fn with_references(report: &mut Value) {
    let Some(servers) = report.get_mut("servers").and_then(Value::as_array_mut) else {
        return;
    };
    for server in servers.iter_mut().filter_map(Value::as_object_mut) {
        if let Some(name) = server.get("name").and_then(Value::as_str) {
            let reference = view::reference(name);
            server.insert("ref".to_owned(), reference.into());
        }
    }
}

/// `GET /api/doctor/install/{command}`: what installing `command` would
/// run here, without running anything: `{"command", "software",
/// "installed", "ran"?, "downloadUrl"}` (`ran` absent when there is no
/// automatic way on this machine).
async fn plan(Path(command): Path<String>) -> Result<Json<Value>, ApiError> {
    let plan =
        deps::install_plan(&command, &Platform::current()).ok_or_else(|| no_plan(&command))?;
    let installed = deps::probe(&command, None, deps::PROBE_TIMEOUT)
        .await
        .is_found();
    let ran = plan
        .choose(|c| deps::find_command(c, None).is_some())
        .map(|m| m.display());
    Ok(Json(json!({
        "command": command,
        "software": plan.software,
        "installed": installed,
        "ran": ran,
        "downloadUrl": plan.download_url,
    })))
}

fn no_plan(command: &str) -> ApiError {
    ApiError::field(
        "command",
        format!(
            "no install plan for \"{command}\"; toolbridge knows node, npm, npx, uv, uvx, \
             python3 and docker"
        ),
    )
}

/// The body of `POST /api/doctor/install`.
#[derive(Debug, Deserialize)]
struct InstallRequest {
    /// The launcher to install (`npx`, `uvx`, `node`...).
    #[serde(default)]
    command: String,
    /// Must be `true`: the user confirmed running the install command.
    #[serde(default)]
    confirm: bool,
}

/// `POST /api/doctor/install` `{"command", "confirm": true}`: runs the
/// install command doctor shows for `command` and says whether it is on
/// `PATH` afterwards: `{"command", "installed", "version"?, "ran"?,
/// "output"?}`.
async fn install(body: Bytes) -> Result<Json<Value>, ApiError> {
    let request: InstallRequest = serde_json::from_slice(&body)
        .map_err(|e| ApiError::bad_request(format!("the request is not the expected JSON: {e}")))?;
    let command = request.command.trim().to_owned();
    if !request.confirm {
        return Err(ApiError::bad_request(format!(
            "installing {command} runs a command on this machine; confirm it first \
             (send \"confirm\": true)"
        )));
    }
    let platform = Platform::current();
    let Some(plan) = deps::install_plan(&command, &platform) else {
        return Err(no_plan(&command));
    };
    let before = deps::probe(&command, None, deps::PROBE_TIMEOUT).await;
    if let ProbeStatus::Found { version, .. } = &before.status {
        return Ok(Json(json!({
            "command": command, "installed": true, "version": version, "ran": null,
        })));
    }
    let Some(method) = plan
        .choose(|c| deps::find_command(c, None).is_some())
        .cloned()
    else {
        return Err(ApiError {
            status: http::StatusCode::CONFLICT,
            message: format!(
                "no automatic way to install {} here; download it from {}",
                plan.software, plan.download_url
            ),
            field: None,
            said: None,
        });
    };
    let ran = method.display();
    let output = tokio::task::spawn_blocking(move || method.run(InstallOutput::Capture))
        .await
        .map_err(|e| ApiError::internal(format!("the install did not finish: {e}")))?
        .map_err(|e| ApiError::internal(e.to_string()))?;
    let after = deps::probe(&command, None, deps::PROBE_TIMEOUT).await;
    let version = match &after.status {
        ProbeStatus::Found { version, .. } => Some(version.clone()),
        _ => None,
    };
    Ok(Json(json!({
        "command": command,
        "installed": version.is_some(),
        "version": version,
        "ran": ran,
        "output": output,
    })))
}
