//! The page's session: how the page proves it may use `/api` when the
//! gateway requires a token (`$TOOLBRIDGE_GATEWAY_TOKEN`, or any listener off
//! loopback).
//!
//! Not a cookie: browsers send a host's cookies to every port of that host,
//! so a page or dev server on any other `127.0.0.1` port would receive it
//! and could replay it. The page keeps its session id in `sessionStorage`,
//! which belongs to the page's origin (scheme, host *and port*) and is read
//! by no other, and sends it in the [`SESSION_HEADER`] of each `/api`
//! request; a foreign page can neither read it nor send a custom header
//! without a CORS preflight, which the gateway never grants.
//!
//! 1. The page's files (`/`, `/assets/...`) are served to anyone who passes
//!    the `Host`/`Origin` checks: they are the same embedded files for
//!    everyone and hold nothing secret.
//! 2. The page signs in with `POST /api/session`, body `{"token": T}` (the
//!    user pastes the gateway's token into the page's sign-in form) or
//!    `{"code": C}` with a one-time code: `toolbridge ui` opens
//!    `http://ADDR/#code=C` ([`page_url`]), never the token, which would sit
//!    on the browser's command line for every local user to read in
//!    `/proc/PID/cmdline`. A code works once, within [`CODE_LIFETIME`]; the
//!    fragment never reaches a server and the page removes it from the
//!    address bar; it is taken only from a connection of the gateway's own
//!    user ([`crate::peer`]). Right: 201 `{"session": ID}`, a new random id (32 bytes
//!    from the system, not the token). Wrong: 401.
//! 3. [`crate::security`] accepts that id in [`SESSION_HEADER`], in place of
//!    the bearer token, for `/api` ([`covers`]); not for `/mcp` or
//!    `/metrics`, whose clients are programs that send the token.
//! 4. `DELETE /api/session` (the page's "Sign out") ends the session.
//!
//! Sessions live in memory (a restarted gateway asks again), at most
//! [`MAX_SESSIONS`] (the oldest goes), each until it has been unused for
//! [`IDLE`] or open for [`LIFETIME`].
//!
//! Without a token configured (the loopback default) nothing is needed: the
//! page signs in to nothing.

use std::{
    sync::Mutex,
    time::{Duration, Instant},
};

use axum::{
    body::Body,
    extract::Request,
    response::{IntoResponse, Response},
};
use http::{HeaderMap, Method, StatusCode, header};
use serde_json::json;
use toolbridge::lock::LockUnpoisoned as _;

use crate::secret_tokens::{constant_time_eq, random_token};

/// Where the page signs in (`POST`) and out (`DELETE`).
pub const SESSION_PATH: &str = "/api/session";

/// The header the page sends its session id in.
pub const SESSION_HEADER: &str = "x-toolbridge-session";

/// How many sessions are kept at most.
pub const MAX_SESSIONS: usize = 64;

/// How long a session lasts at most.
pub const LIFETIME: Duration = Duration::from_secs(8 * 60 * 60);

/// How long a session lasts unused.
pub const IDLE: Duration = Duration::from_secs(30 * 60);

/// How long a one-time code of `toolbridge ui` can be used.
pub const CODE_LIFETIME: Duration = Duration::from_secs(5 * 60);

/// How many unused one-time codes are kept at most.
const MAX_CODES: usize = 16;

/// The largest sign-in body read.
const MAX_BODY: usize = 4096;

struct Open {
    id: String,
    opened: Instant,
    used: Instant,
}

impl Open {
    fn live(&self) -> bool {
        self.opened.elapsed() < LIFETIME && self.used.elapsed() < IDLE
    }
}

/// The open sessions and the unused one-time codes of one gateway.
#[derive(Default)]
pub struct Sessions {
    /// Oldest first.
    open: Mutex<Vec<Open>>,
    /// Codes and when each was made, oldest first.
    codes: Mutex<Vec<(String, Instant)>>,
}

impl std::fmt::Debug for Sessions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let open = self.open.lock().map(|o| o.len()).unwrap_or_default();
        f.debug_struct("Sessions").field("open", &open).finish()
    }
}

impl Sessions {
    /// Opens a session; its new id.
    fn open(&self) -> std::io::Result<String> {
        let id = random_token()?;
        let mut open = self.open.lock_unpoisoned();
        open.retain(Open::live);
        if open.len() >= MAX_SESSIONS {
            open.remove(0);
        }
        let now = Instant::now();
        open.push(Open {
            id: id.clone(),
            opened: now,
            used: now,
        });
        Ok(id)
    }

    /// A new one-time code that opens one session (for `toolbridge ui`).
    pub fn one_time_code(&self) -> std::io::Result<String> {
        let code = random_token()?;
        let mut codes = self.codes.lock_unpoisoned();
        codes.retain(|(_, at)| at.elapsed() < CODE_LIFETIME);
        if codes.len() >= MAX_CODES {
            codes.remove(0);
        }
        codes.push((code.clone(), Instant::now()));
        Ok(code)
    }

    /// True, once, for a code [`Sessions::one_time_code`] made less than
    /// [`CODE_LIFETIME`] ago.
    fn redeem(&self, given: &str) -> bool {
        let mut codes = self.codes.lock_unpoisoned();
        codes.retain(|(_, at)| at.elapsed() < CODE_LIFETIME);
        let found = codes
            .iter()
            .position(|(code, _)| constant_time_eq(given.as_bytes(), code.as_bytes()));
        found.map(|i| codes.remove(i)).is_some()
    }

    /// True when `headers` carry the id of a live session (which counts
    /// as a use of it).
    pub fn accepts(&self, headers: &HeaderMap) -> bool {
        let Some(given) = session_id(headers) else {
            return false;
        };
        let mut open = self.open.lock_unpoisoned();
        open.retain(Open::live);
        match open
            .iter_mut()
            .find(|o| constant_time_eq(given.as_bytes(), o.id.as_bytes()))
        {
            Some(session) => {
                session.used = Instant::now();
                true
            }
            None => false,
        }
    }

    /// Ends the session whose id `headers` carry; whether there was one.
    fn close(&self, headers: &HeaderMap) -> bool {
        let Some(given) = session_id(headers) else {
            return false;
        };
        let mut open = self.open.lock_unpoisoned();
        let before = open.len();
        open.retain(|o| !constant_time_eq(given.as_bytes(), o.id.as_bytes()));
        open.len() < before
    }
}

fn session_id(headers: &HeaderMap) -> Option<&str> {
    headers
        .get(SESSION_HEADER)
        .and_then(|v| v.to_str().ok())
        .map(str::trim)
        .filter(|v| !v.is_empty())
}

/// True for the paths a session opens: `/api`; not `/mcp` and `/metrics`
/// (programs send the bearer token there).
pub fn covers(path: &str) -> bool {
    path == "/api" || path.starts_with("/api/")
}

/// True for the page's own files, which need no session: `/` and
/// `/assets/...`.
pub fn is_page_file(path: &str) -> bool {
    path == "/" || path.starts_with("/assets/")
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct SignIn {
    token: Option<String>,
    code: Option<String>,
}

/// Answers `/api/session` for a gateway requiring `token` (`None`: no token
/// is required): `POST` signs in, `DELETE` signs out. Called by
/// [`crate::security::check`] after the `Host`, `Origin` and peer checks.
/// A one-time code is taken only from a connection of the gateway's own
/// user (`from_owner`): the code sits on the browser's command line, where
/// another local user could read it and race the browser to it.
pub async fn answer(
    token: Option<&str>,
    sessions: &Sessions,
    from_owner: bool,
    request: Request,
) -> Response {
    if request.method() == Method::DELETE {
        let closed = sessions.close(request.headers());
        if closed {
            tracing::info!("closed a page session");
        }
        return no_store(StatusCode::NO_CONTENT, json!(null));
    }
    if request.method() != Method::POST {
        return no_store(
            StatusCode::METHOD_NOT_ALLOWED,
            json!({ "error": { "message": "sign in with POST, sign out with DELETE" } }),
        );
    }
    let Some(token) = token else {
        return no_store(
            StatusCode::OK,
            json!({ "session": null, "required": false }),
        );
    };
    let body = axum::body::to_bytes(request.into_body(), MAX_BODY)
        .await
        .unwrap_or_default();
    let given: Option<SignIn> = serde_json::from_slice(&body).ok();
    let right = match given {
        Some(SignIn {
            token: Some(given), ..
        }) => constant_time_eq(given.trim().as_bytes(), token.as_bytes()),
        Some(SignIn {
            code: Some(code), ..
        }) => from_owner && sessions.redeem(code.trim()),
        _ => false,
    };
    if !right {
        tracing::info!("refused a sign-in to the page: wrong or missing token or code");
        return no_store(
            StatusCode::UNAUTHORIZED,
            json!({ "error": { "message":
                "wrong token, or a sign-in code that was used or is too old; paste the \
                 gateway's token ($TOOLBRIDGE_GATEWAY_TOKEN or the gateway-token file), or run \
                 `toolbridge ui` again" } }),
        );
    }
    match sessions.open() {
        Ok(id) => {
            tracing::info!("opened a page session");
            no_store(
                StatusCode::CREATED,
                json!({ "session": id, "idleSeconds": IDLE.as_secs() }),
            )
        }
        Err(e) => {
            tracing::warn!("cannot open a page session: {e}");
            no_store(
                StatusCode::INTERNAL_SERVER_ERROR,
                json!({ "error": { "message":
                    "cannot open a session: the system gave no random bytes; try again" } }),
            )
        }
    }
}

fn no_store(status: StatusCode, body: serde_json::Value) -> Response {
    let mut response = if body.is_null() {
        (status, Body::empty()).into_response()
    } else {
        (status, axum::Json(body)).into_response()
    };
    response.headers_mut().insert(
        header::CACHE_CONTROL,
        http::HeaderValue::from_static("no-store"),
    );
    response
}

/// `http://ADDR/`, or with a one-time `code`, `http://ADDR/#code=CODE`.
pub fn page_url(addr: std::net::SocketAddr, code: Option<&str>) -> String {
    match code {
        None => format!("http://{addr}/"),
        Some(code) => format!("http://{addr}/#code={code}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with_session(id: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(SESSION_HEADER, http::HeaderValue::from_str(id).unwrap());
        headers
    }

    #[test]
    fn only_an_opened_session_is_accepted_until_it_is_closed() {
        let sessions = Sessions::default();
        let id = sessions.open().unwrap();
        assert_eq!(id.len(), 64);
        assert!(sessions.accepts(&with_session(&id)));
        assert!(!sessions.accepts(&with_session("nope")));
        assert!(!sessions.accepts(&HeaderMap::new()));
        let mut cookie = HeaderMap::new();
        cookie.insert(
            header::COOKIE,
            http::HeaderValue::from_str(&format!("toolbridge-session-1={id}")).unwrap(),
        );
        assert!(!sessions.accepts(&cookie), "a cookie is no session");
        assert!(sessions.close(&with_session(&id)));
        assert!(!sessions.accepts(&with_session(&id)));
    }

    #[test]
    fn the_oldest_session_goes_first() {
        let sessions = Sessions::default();
        let first = sessions.open().unwrap();
        for _ in 0..MAX_SESSIONS {
            sessions.open().unwrap();
        }
        assert!(!sessions.accepts(&with_session(&first)));
    }

    #[test]
    fn an_idle_or_old_session_is_over() {
        let sessions = Sessions::default();
        let id = sessions.open().unwrap();
        {
            let mut open = sessions.open.lock().unwrap();
            open[0].used = Instant::now().checked_sub(IDLE).unwrap();
        }
        assert!(!sessions.accepts(&with_session(&id)), "idle too long");
        let id = sessions.open().unwrap();
        {
            let mut open = sessions.open.lock().unwrap();
            let last = open.last_mut().unwrap();
            last.opened = Instant::now().checked_sub(LIFETIME).unwrap();
        }
        assert!(!sessions.accepts(&with_session(&id)), "open too long");
    }

    #[test]
    fn a_code_works_once() {
        let sessions = Sessions::default();
        let code = sessions.one_time_code().unwrap();
        assert!(!sessions.redeem("0000"));
        assert!(sessions.redeem(&code));
        assert!(!sessions.redeem(&code));
        let addr = "127.0.0.1:5".parse().unwrap();
        assert_eq!(page_url(addr, None), "http://127.0.0.1:5/");
        assert_eq!(page_url(addr, Some("ab")), "http://127.0.0.1:5/#code=ab");
        assert!(covers("/api/presets") && !covers("/mcp") && !covers("/metrics"));
        assert!(is_page_file("/") && is_page_file("/assets/app.js") && !is_page_file("/api"));
    }
}
