//! Who may talk to the gateway over HTTP: `Host` and `Origin` checks (DNS
//! rebinding, foreign web pages), the local user behind a loopback
//! connection, and the bearer token.
//!
//! - On a loopback listener, `Host` must name a loopback host (`localhost`,
//!   `127.0.0.1`, `[::1]`, any port): a web page whose domain was rebound to
//!   127.0.0.1 sends its own domain and gets 403.
//! - An `Origin` header, when present, must be the gateway's own origin (the
//!   `Host` it was reached at); for `/mcp` on a loopback listener, any
//!   loopback origin too (browser-based MCP tools such as the Inspector run
//!   on a port of their own). Any other gets 403: the page and `/api` take
//!   requests from the page itself only, not from a page on another port of
//!   the same host. Clients that are not browsers send none.
//! - A loopback listener without a token serves its own user only: a
//!   connection whose socket belongs to another local user
//!   ([`crate::peer`]) gets 403 on everything but `/healthz` (any local
//!   account can reach 127.0.0.1, and the gateway starts commands as its
//!   user). With a token, whoever holds it is let in.
//! - A listener off loopback requires `Authorization: Bearer TOKEN`; with a
//!   token configured (`$TOOLBRIDGE_GATEWAY_TOKEN`), loopback requires it
//!   too. Missing or wrong: 401. `/healthz` needs no token (load balancers
//!   probe it); it tells nothing but whether the gateway is up. Neither do
//!   the page's own files (`/`, `/assets/...`): the same embedded files for
//!   everyone.
//! - For `/api`, the page may show a session id instead of the token, in a
//!   header; see [`crate::web::session`] (not for `/mcp` or `/metrics`).
//! - Besides the gateway's own (admin) token, a named client token
//!   ([`crate::client_tokens`]) or, with an OAuth issuer configured, a JWT
//!   access token of that issuer ([`crate::resource_server`]) lets a client
//!   in, to MCP only (and a token bound to a profile to that profile's path
//!   only: 403 elsewhere). Such a token lets another local user into a
//!   loopback gateway without an admin token too. With an issuer
//!   configured, the gateway always has an admin token (generated as off
//!   loopback), and its 401 names its protected resource metadata.
//!
//! This is the one place that decides who a client is: every request that
//! gets through carries its [`ClientIdentity`] in its extensions.
//!
//! Tokens are compared in constant time and never logged.

use std::{
    io::Write as _,
    net::{IpAddr, SocketAddr},
    path::{Path, PathBuf},
    sync::Arc,
};

use axum::{
    body::Body,
    extract::{ConnectInfo, Request, State},
    middleware::Next,
    response::{IntoResponse, Response},
};
use http::{StatusCode, header};

use crate::{
    GatewayError,
    client_tokens::{self, ClientTokens},
    identity::{ClientIdentity, ClientKind},
    peer::{self, Peer},
    resource_server::{self, Refused, ResourceServer},
    secret_tokens::{constant_time_eq, random_token},
    web::session::{self, Sessions},
};

/// The environment variable that sets the bearer token.
pub const TOKEN_ENV: &str = "TOOLBRIDGE_GATEWAY_TOKEN";

/// The token file's name, in the config folder.
pub const TOKEN_FILE: &str = "gateway-token";

/// Where the token came from, for the message at start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TokenSource {
    /// No token: a loopback listener without `$TOOLBRIDGE_GATEWAY_TOKEN`.
    None,
    /// `$TOOLBRIDGE_GATEWAY_TOKEN`.
    Env,
    /// Generated into (or read from) this file.
    File(PathBuf),
}

/// The HTTP access rules of one listener.
#[derive(Clone)]
pub struct Security {
    /// The listener is on a loopback address.
    loopback: bool,
    /// The bearer token every request (but `/healthz`) must carry.
    token: Option<Arc<str>>,
    /// The web page's sessions, opened at `/api/session`.
    sessions: Arc<Sessions>,
    /// The gateway's own user: the only one served on loopback without a
    /// token.
    owner: u32,
    /// The named client tokens.
    client_tokens: Option<Arc<ClientTokens>>,
    /// The OAuth resource server, with an issuer configured.
    oauth: Option<Arc<ResourceServer>>,
}

/// Who else than the admin may be let in.
#[derive(Debug, Default)]
pub struct Clients {
    /// The named client tokens.
    pub tokens: Option<ClientTokens>,
    /// The OAuth resource server.
    pub oauth: Option<ResourceServer>,
}

impl std::fmt::Debug for Security {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Security")
            .field("loopback", &self.loopback)
            .field("token", &self.token.as_ref().map(|_| "<redacted>"))
            .finish()
    }
}

impl Security {
    /// The rules for a listener on `listen`: `env_token` (the value of
    /// `$TOOLBRIDGE_GATEWAY_TOKEN`) when set; else, off loopback, the token
    /// in `token_file`, generated there (mode 0600) the first time.
    pub fn new(
        listen: SocketAddr,
        env_token: Option<String>,
        token_file: &Path,
    ) -> Result<(Security, TokenSource), GatewayError> {
        Security::with_clients(listen, env_token, token_file, Clients::default())
    }

    /// [`Security::new`], letting in `clients` too. With an OAuth issuer,
    /// a loopback listener has an admin token as well (from the file when
    /// not in the environment): a gateway that asks for sign-in does not
    /// let every local process of its user in without one.
    pub fn with_clients(
        listen: SocketAddr,
        env_token: Option<String>,
        token_file: &Path,
        clients: Clients,
    ) -> Result<(Security, TokenSource), GatewayError> {
        let loopback = listen.ip().is_loopback();
        let (token, source) = match env_token.filter(|t| !t.trim().is_empty()) {
            Some(token) => (Some(token.trim().to_owned()), TokenSource::Env),
            None if loopback && clients.oauth.is_none() => (None, TokenSource::None),
            None => (
                Some(file_token(token_file)?),
                TokenSource::File(token_file.to_owned()),
            ),
        };
        Ok((
            Security {
                loopback,
                token: token.map(Arc::from),
                sessions: Arc::default(),
                owner: peer::own_uid(),
                client_tokens: clients.tokens.map(Arc::new),
                oauth: clients.oauth.map(Arc::new),
            },
            source,
        ))
    }

    /// Whether requests need the token.
    pub fn requires_token(&self) -> bool {
        self.token.is_some()
    }

    /// The address that opens the web page of a gateway listening on
    /// `addr`: `http://ADDR/`, or, with a token required, with a one-time
    /// sign-in code `http://ADDR/#code=CODE` (for `toolbridge ui`; the code
    /// opens one session, once, within minutes, and only for the gateway's
    /// own user: never the token, which would be on the browser's command
    /// line for every local user to read).
    pub fn page_url(&self, addr: SocketAddr) -> String {
        if self.token.is_none() {
            return session::page_url(addr, None);
        }
        match self.sessions.one_time_code() {
            Ok(code) => session::page_url(addr, Some(&code)),
            Err(e) => {
                tracing::warn!("cannot make a sign-in code ({e}); the page asks for the token");
                session::page_url(addr, None)
            }
        }
    }

    /// True when `request` came over a connection of the gateway's own user.
    fn comes_from_owner(&self, request: &Request) -> bool {
        peer_of(request).and_then(|p| p.uid) == Some(self.owner)
    }

    /// Checks `request`'s `Host` and `Origin`; the refusal if any.
    fn refuse_origin(&self, request: &Request) -> Option<Response> {
        let headers = request.headers();
        let host = headers
            .get(header::HOST)
            .and_then(|h| h.to_str().ok())
            .unwrap_or_default();
        if self.loopback && !is_loopback_host(host_name(host)) {
            return Some(refusal(
                StatusCode::FORBIDDEN,
                "Host is not a loopback name; the gateway listens on loopback only".into(),
            ));
        }
        let path = request.uri().path();
        let page = session::covers(path) || session::is_page_file(path);
        if let Some(origin) = headers.get(header::ORIGIN) {
            let allowed =
                origin
                    .to_str()
                    .ok()
                    .and_then(origin_authority)
                    .is_some_and(|authority| {
                        authority.eq_ignore_ascii_case(host)
                            || (!page && self.loopback && is_loopback_host(host_name(authority)))
                    });
            if !allowed {
                return Some(refusal(
                    StatusCode::FORBIDDEN,
                    "requests from a foreign web page (Origin) are refused".into(),
                ));
            }
        }
        None
    }

    /// Who sent `request` (its `Host` and `Origin` already checked), with
    /// `presented` what its bearer token was found to be: its identity
    /// (`None` for the page's own files and `/api/session` without a
    /// credential), or the refusal.
    fn identify(
        &self,
        request: &Request,
        presented: Option<Result<ClientIdentity, Refused>>,
    ) -> Result<Option<ClientIdentity>, Box<Response>> {
        let headers = request.headers();
        let path = request.uri().path();
        let presented = match presented {
            Some(Ok(identity)) => return Ok(Some(identity)),
            // A loopback gateway without a token ignores a wrong one, as
            // it always has: its own user needs none.
            Some(Err(_)) if self.token.is_none() => None,
            Some(Err(refused)) => Some(refused),
            None => None,
        };
        if self.loopback && self.token.is_none() && !self.comes_from_owner(request) {
            let who = peer_of(request).and_then(|p| p.uid).map_or_else(
                || "a user it cannot tell".to_owned(),
                |u| format!("uid {u}"),
            );
            return Err(Box::new(refusal(
                StatusCode::FORBIDDEN,
                format!(
                    "this gateway listens on loopback without a token and serves only its own \
                     user (uid {}), not {who}; to let other local users in, start it with \
                     ${TOKEN_ENV} set and give them the token, or give them a client token \
                     (toolbridge serve token create NAME)",
                    self.owner
                ),
            )));
        }
        // The page's files hold nothing secret; `/api/session` checks the
        // token or code it is given itself.
        if session::is_page_file(path) || path == session::SESSION_PATH {
            return Ok(None);
        }
        if self.token.is_none() {
            return Ok(Some(ClientIdentity::new(ClientKind::Local, "local")));
        }
        let api = session::covers(path);
        if api && self.sessions.accepts(headers) {
            return Ok(Some(ClientIdentity::new(ClientKind::Admin, "page")));
        }
        Err(Box::new(self.unauthorized(
            path,
            presented.as_ref(),
            if api {
                "sign in first: open the address `toolbridge ui` prints, or sign in on \
                 the page with the gateway's token"
            } else if presented.is_some() {
                "the bearer token was refused; send Authorization: Bearer TOKEN with a valid token"
            } else {
                "missing or wrong bearer token; send Authorization: Bearer TOKEN"
            },
        )))
    }

    /// The client a bearer token is: the admin, a named client, an OAuth
    /// client; `None` when it is none of those kinds at all.
    async fn bearer(&self, token: &str, path: &str) -> Option<Result<ClientIdentity, Refused>> {
        if let Some(admin) = &self.token
            && constant_time_eq(token.as_bytes(), admin.as_bytes())
        {
            return Some(Ok(ClientIdentity::new(ClientKind::Admin, "admin")));
        }
        if token.starts_with(client_tokens::PREFIX) {
            let known = self.client_tokens.as_ref().and_then(|t| t.identify(token));
            return Some(known.ok_or_else(|| Refused("unknown or revoked client token".into())));
        }
        match &self.oauth {
            Some(oauth) => Some(oauth.verify(token, path).await),
            None => Some(Err(Refused("wrong bearer token".into()))),
        }
    }

    /// 401, with `WWW-Authenticate` naming the resource's metadata when an
    /// issuer is configured, and `invalid_token` when a token was refused.
    fn unauthorized(&self, path: &str, refused: Option<&Refused>, message: &str) -> Response {
        let mut challenge = String::from("Bearer");
        let mut params = Vec::new();
        if let Some(oauth) = &self.oauth {
            params.push(format!(
                "resource_metadata=\"{}\"",
                oauth.metadata_url(path)
            ));
        }
        if let Some(Refused(why)) = refused {
            params.push("error=\"invalid_token\"".to_owned());
            // A quoted-string: no quote or backslash inside.
            let why = why.replace(['"', '\\'], "'");
            params.push(format!("error_description=\"{why}\""));
        }
        if !params.is_empty() {
            challenge.push(' ');
            challenge.push_str(&params.join(", "));
        }
        let body = match refused {
            Some(Refused(why)) => format!("{message} ({why})"),
            None => message.to_owned(),
        };
        let mut response = refusal(StatusCode::UNAUTHORIZED, body);
        if let Ok(value) = http::HeaderValue::from_str(&challenge) {
            response
                .headers_mut()
                .insert(header::WWW_AUTHENTICATE, value);
        }
        response
    }
}

/// The peer of the connection `request` came on, when the server recorded
/// it (`http::serve` does, once per connection).
fn peer_of(request: &Request) -> Option<Peer> {
    request
        .extensions()
        .get::<ConnectInfo<Peer>>()
        .map(|ConnectInfo(peer)| *peer)
}

/// The axum middleware that applies [`Security`] to every route, and puts
/// the client's [`ClientIdentity`] into the request's extensions.
pub async fn check(
    State(security): State<Arc<Security>>,
    mut request: Request,
    next: Next,
) -> Response {
    let refused = |request: &Request, refusal: Response| {
        tracing::info!(
            path = %request.uri().path(),
            status = refusal.status().as_u16(),
            "refused a request"
        );
        refusal
    };
    if let Some(refusal) = security.refuse_origin(&request) {
        return refused(&request, refusal);
    }
    let path = request.uri().path();
    if path == "/healthz" {
        return next.run(request).await;
    }
    // Public, as RFC 9728 has it: how to get a token.
    if let Some(oauth) = &security.oauth
        && path.starts_with(resource_server::METADATA_PATH)
    {
        return match oauth.metadata(path) {
            Some(metadata) => axum::Json(metadata).into_response(),
            None => refusal(StatusCode::NOT_FOUND, "no such resource".into()),
        };
    }
    // Owned: a borrowed request (its body is not `Sync`) cannot be held
    // across the await.
    let bearer = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|h| h.to_str().ok())
        .and_then(|h| h.strip_prefix("Bearer "))
        .map(|t| t.trim().to_owned())
        .filter(|t| !t.is_empty());
    let presented = match bearer {
        Some(bearer) => {
            let path = request.uri().path().to_owned();
            security.bearer(&bearer, &path).await
        }
        None => None,
    };
    let identity = match security.identify(&request, presented) {
        Ok(identity) => identity,
        Err(refusal) => return refused(&request, *refusal),
    };
    if let Some(identity) = identity {
        if let Err(why) = identity.may_reach(path) {
            return refused(&request, refusal(StatusCode::FORBIDDEN, why));
        }
        // Where an OAuth client steps up its scopes (`admission`'s 403).
        if let (ClientKind::OAuth, Some(oauth)) = (identity.kind, &security.oauth) {
            let url = oauth.metadata_url(request.uri().path());
            request
                .extensions_mut()
                .insert(crate::admission::ResourceMetadata(url));
        }
        request.extensions_mut().insert(identity);
    }
    if request.uri().path() == session::SESSION_PATH {
        let from_owner = security.comes_from_owner(&request);
        return session::answer(
            security.token.as_deref(),
            &security.sessions,
            from_owner,
            request,
        )
        .await;
    }
    next.run(request).await
}

fn refusal(status: StatusCode, message: String) -> Response {
    (status, Body::from(message)).into_response()
}

/// The host part of a `Host` value or an authority (`[::1]:80` → `[::1]`).
fn host_name(authority: &str) -> &str {
    if authority.starts_with('[') {
        return authority
            .find(']')
            .map_or(authority, |end| &authority[..=end]);
    }
    authority.split(':').next().unwrap_or(authority)
}

fn is_loopback_host(host: &str) -> bool {
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    bare.eq_ignore_ascii_case("localhost")
        || bare.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// `host[:port]` of an `Origin` (`http://localhost:3000` → `localhost:3000`).
fn origin_authority(origin: &str) -> Option<&str> {
    let (_, rest) = origin.split_once("://")?;
    Some(rest.split('/').next().unwrap_or(rest))
}

/// The token in `path`, generated there first if the file does not exist.
fn file_token(path: &Path) -> Result<String, GatewayError> {
    let failed = |source| GatewayError::TokenFile {
        path: path.to_owned(),
        source,
    };
    match std::fs::read_to_string(path) {
        Ok(token) if !token.trim().is_empty() => return Ok(token.trim().to_owned()),
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(failed(e)),
    }
    let token = random_token().map_err(failed)?;
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(failed)?;
    }
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt as _;
        options.mode(0o600);
    }
    let mut file = options.open(path).map_err(failed)?;
    file.write_all(format!("{token}\n").as_bytes())
        .map_err(failed)?;
    Ok(token)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_and_origins() {
        assert_eq!(host_name("[::1]:8080"), "[::1]");
        assert_eq!(host_name("localhost:1"), "localhost");
        assert!(is_loopback_host("[::1]") && is_loopback_host("127.0.0.1"));
        assert!(!is_loopback_host("evil.example.com"));
        assert_eq!(
            origin_authority("http://localhost:3000"),
            Some("localhost:3000")
        );
    }

    /// Off loopback without `$TOOLBRIDGE_GATEWAY_TOKEN` and with no usable
    /// token file (a container's read-only /etc/toolbridge), the error names
    /// the file and the variable that avoids it.
    #[test]
    fn an_unusable_token_file_names_the_file_and_the_variable() {
        let listen: SocketAddr = "0.0.0.0:8080".parse().expect("address");
        let file = Path::new("/dev/null/gateway-token");
        let message = match Security::new(listen, None, file) {
            Ok(_) => panic!("a token file under /dev/null was used"),
            Err(error) => error.to_string(),
        };
        assert!(message.contains("/dev/null/gateway-token"), "{message}");
        assert!(message.contains("$TOOLBRIDGE_GATEWAY_TOKEN"), "{message}");
        assert!(Security::new(listen, Some("t".into()), file).is_ok());
    }
}
