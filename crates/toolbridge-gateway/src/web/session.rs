//! The page's session: how a browser proves it may use the page when the
//! gateway requires a token (`$TOOLBRIDGE_GATEWAY_TOKEN`, or any listener off
//! loopback). A browser cannot send `Authorization: Bearer` when the user
//! opens a URL, so:
//!
//! 1. The user opens `GET /login?token=TOKEN` (`toolbridge ui` prints and
//!    opens that address). The token is compared in constant time.
//! 2. Right token: a new random session id (32 bytes from the system, not
//!    the token) is set in an `HttpOnly; SameSite=Strict; Path=/` cookie and
//!    the browser is sent on to `/` (303). Wrong token: 401, no cookie.
//! 3. [`crate::security`] accepts that cookie, in place of the bearer token,
//!    for the page, its assets and `/api` ([`covers`]). Not for `/mcp` or
//!    `/metrics`: their clients are programs that can send the header, and a
//!    cookie there would only widen what a browser may do.
//!
//! Why a query parameter and not a `#token=` fragment read by a script: the
//! fragment never reaches the server, so the page's own script would have to
//! be served before any check and then post the token back; the query needs
//! no script at all (the Content-Security-Policy forbids inline script) and
//! leaves the address bar at once through the redirect. The query is never
//! logged (the gateway logs paths only) and `Referrer-Policy: no-referrer`
//! keeps it from other sites.
//!
//! The other rules still hold with a session: a foreign `Origin` is refused
//! (403) before the cookie is looked at, and writes need the
//! [`WRITE_HEADER`](super::guard::WRITE_HEADER) a foreign page cannot send.
//! Without a token configured (the loopback default) nothing is needed and
//! `/login` only redirects.
//!
//! Sessions live in memory: a restarted gateway asks for the token again.
//! At most [`MAX_SESSIONS`] are kept (the oldest is dropped), each for
//! [`LIFETIME`].

use std::{
    sync::Mutex,
    time::{Duration, Instant},
};
use toolbridge::lock::LockUnpoisoned as _;

use axum::{
    body::Body,
    extract::{Query, Request},
    response::{IntoResponse, Response},
};
use http::{HeaderMap, HeaderValue, StatusCode, header};

use crate::security::{constant_time_eq, random_token};

/// Where the browser signs in.
pub const LOGIN_PATH: &str = "/login";

/// The session cookie's name, followed by `-PORT`: cookies are shared by
/// every port of a host, so two gateways on one machine keep theirs apart.
pub const COOKIE_PREFIX: &str = "toolbridge-session";

/// How many sessions are kept at most.
pub const MAX_SESSIONS: usize = 64;

/// How long a session lasts.
pub const LIFETIME: Duration = Duration::from_secs(12 * 60 * 60);

/// The open sessions of one gateway.
#[derive(Default)]
pub struct Sessions {
    /// Session ids and when each was opened, oldest first.
    open: Mutex<Vec<(String, Instant)>>,
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
        open.retain(|(_, at)| at.elapsed() < LIFETIME);
        if open.len() >= MAX_SESSIONS {
            open.remove(0);
        }
        open.push((id.clone(), Instant::now()));
        Ok(id)
    }

    /// True when `headers` carry the cookie of an open session.
    pub fn accepts(&self, headers: &HeaderMap) -> bool {
        let open = self.open.lock_unpoisoned();
        cookie_values(headers).any(|given| {
            open.iter().any(|(id, at)| {
                at.elapsed() < LIFETIME && constant_time_eq(given.as_bytes(), id.as_bytes())
            })
        })
    }
}

/// True for the paths a session cookie opens: the page, its assets, `/api`;
/// not `/mcp` and `/metrics` (programs send the bearer token there).
pub fn covers(path: &str) -> bool {
    !(path == "/mcp" || path.starts_with("/mcp/") || path == "/metrics")
}

/// The values of this gateway family's session cookies in `headers`.
fn cookie_values(headers: &HeaderMap) -> impl Iterator<Item = &str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .filter(|(name, _)| name.starts_with(COOKIE_PREFIX))
        .map(|(_, value)| value.trim())
}

#[derive(serde::Deserialize)]
struct LoginQuery {
    token: Option<String>,
}

/// Answers `GET /login?token=T` for a gateway requiring `token` (`None`:
/// no token is required). Called by [`crate::security::check`] after the
/// `Host` and `Origin` checks.
pub fn login(token: Option<&str>, sessions: &Sessions, request: &Request) -> Response {
    let Some(token) = token else {
        return to_page(None);
    };
    let given = Query::<LoginQuery>::try_from_uri(request.uri())
        .ok()
        .and_then(|q| q.0.token)
        .unwrap_or_default();
    if given.is_empty() || !constant_time_eq(given.trim().as_bytes(), token.as_bytes()) {
        tracing::info!("refused a sign-in to the page: missing or wrong token");
        return refused();
    }
    let id = match sessions.open() {
        Ok(id) => id,
        Err(e) => {
            tracing::warn!("cannot open a page session: {e}");
            return (
                StatusCode::INTERNAL_SERVER_ERROR,
                "cannot open a session: the system gave no random bytes; try again",
            )
                .into_response();
        }
    };
    let host = request
        .headers()
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or_default();
    let cookie = format!(
        "{}={id}; HttpOnly; SameSite=Strict; Path=/",
        cookie_name(host)
    );
    tracing::info!("opened a page session");
    to_page(HeaderValue::from_str(&cookie).ok())
}

/// `http://ADDR/`, or with `token`, `http://ADDR/login?token=TOKEN`.
pub fn page_url(addr: std::net::SocketAddr, token: Option<&str>) -> String {
    match token {
        None => format!("http://{addr}/"),
        Some(token) => {
            let encoded: String = token
                .bytes()
                .map(|b| {
                    if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
                        char::from(b).to_string()
                    } else {
                        format!("%{b:02X}")
                    }
                })
                .collect();
            format!("http://{addr}{LOGIN_PATH}?token={encoded}")
        }
    }
}

/// `toolbridge-session-PORT` for `Host: name:PORT` (80 when none is given).
fn cookie_name(host: &str) -> String {
    let port = host
        .rsplit_once(':')
        .map(|(_, port)| port)
        .filter(|port| !port.is_empty() && port.bytes().all(|b| b.is_ascii_digit()))
        .unwrap_or("80");
    format!("{COOKIE_PREFIX}-{port}")
}

/// 303 to the page, setting `cookie` when given.
fn to_page(cookie: Option<HeaderValue>) -> Response {
    let mut response = Response::builder()
        .status(StatusCode::SEE_OTHER)
        .header(header::LOCATION, "/")
        .header(header::CACHE_CONTROL, "no-store")
        .header(header::REFERRER_POLICY, "no-referrer")
        .body(Body::empty())
        .unwrap_or_default();
    if let Some(cookie) = cookie {
        response.headers_mut().insert(header::SET_COOKIE, cookie);
    }
    response
}

fn refused() -> Response {
    (
        StatusCode::UNAUTHORIZED,
        [
            (header::CACHE_CONTROL, "no-store"),
            (header::REFERRER_POLICY, "no-referrer"),
        ],
        "wrong or missing token; open the address `toolbridge ui` prints, or /login?token= \
         followed by the gateway's token ($TOOLBRIDGE_GATEWAY_TOKEN or the gateway-token file)",
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with_cookie(cookie: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(header::COOKIE, HeaderValue::from_str(cookie).unwrap());
        headers
    }

    #[test]
    fn only_an_opened_session_is_accepted() {
        let sessions = Sessions::default();
        let id = sessions.open().unwrap();
        assert_eq!(id.len(), 64);
        assert!(sessions.accepts(&with_cookie(&format!("a=b; toolbridge-session-8931={id}"))));
        assert!(!sessions.accepts(&with_cookie("toolbridge-session-8931=nope")));
        assert!(!sessions.accepts(&with_cookie(&format!("other={id}"))));
        assert!(!sessions.accepts(&HeaderMap::new()));
    }

    #[test]
    fn the_oldest_session_goes_first() {
        let sessions = Sessions::default();
        let first = sessions.open().unwrap();
        for _ in 0..MAX_SESSIONS {
            sessions.open().unwrap();
        }
        assert!(!sessions.accepts(&with_cookie(&format!("{COOKIE_PREFIX}-1={first}"))));
    }

    #[test]
    fn cookie_names_carry_the_port() {
        assert_eq!(cookie_name("127.0.0.1:8931"), "toolbridge-session-8931");
        assert_eq!(cookie_name("[::1]:9"), "toolbridge-session-9");
        assert_eq!(cookie_name("localhost"), "toolbridge-session-80");
        assert!(covers("/") && covers("/api/presets") && covers("/assets/app.js"));
        assert!(!covers("/mcp") && !covers("/metrics"));
        let addr = "127.0.0.1:5".parse().unwrap();
        assert_eq!(page_url(addr, None), "http://127.0.0.1:5/");
        assert_eq!(
            page_url(addr, Some("a b&c")),
            "http://127.0.0.1:5/login?token=a%20b%26c"
        );
    }
}
