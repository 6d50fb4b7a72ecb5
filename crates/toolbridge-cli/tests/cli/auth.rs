//! OAuth sign-in (`toolbridge auth`, and any command meeting a 401) with the
//! real binary, a `$BROWSER` script that follows the authorization
//! redirect, and the built-in example MCP server behind a bearer-token
//! check.
//!
//! The authorization server is a small double on 127.0.0.1: the official
//! conformance suite's servers (scripts/conformance.sh runs all their OAuth
//! scenarios) live for one client command, issue no refresh tokens and
//! cannot be told to forget a registration, so the states these tests need
//! (an expired access token with a valid refresh token, a revoked client)
//! cannot be reached with them.

use crate::common;

use std::{
    collections::{HashMap, HashSet},
    net::SocketAddr,
    os::unix::fs::PermissionsExt,
    path::{Path, PathBuf},
    sync::{Arc, Mutex},
};

use axum::{
    Router,
    extract::{Request, State},
    http::{HeaderMap, StatusCode, Uri, header},
    middleware::Next,
    response::{IntoResponse, Response},
    routing::{get, post},
};
use common::*;
use rmcp::transport::streamable_http_server::{
    StreamableHttpServerConfig, StreamableHttpService, session::local::LocalSessionManager,
};
use serde_json::{Value, json};

/// What the authorization server knows and saw.
#[derive(Default)]
struct AsState {
    /// Registered clients: ID and secret.
    clients: HashMap<String, String>,
    /// Dynamic registrations made.
    registrations: usize,
    /// Authorization requests (browser visits).
    authorizations: usize,
    /// Live access tokens.
    access: HashSet<String>,
    /// Live refresh tokens and their client.
    refresh: HashMap<String, String>,
    /// The `resource` of every refresh-token grant.
    refresh_resources: Vec<Option<String>>,
    /// Tokens revoked.
    revoked: Vec<String>,
    /// Every token issued, to look for in output.
    issued: Vec<String>,
    /// Counter for new IDs and tokens.
    next: usize,
}

type Shared = Arc<Mutex<AsState>>;

/// The authorization server (and protected resource) double, on its own
/// runtime thread.
struct Double {
    addr: SocketAddr,
    state: Shared,
    _runtime: tokio::runtime::Runtime,
}

impl Double {
    fn start() -> Double {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let addr = listener.local_addr().unwrap();
        let state: Shared = Arc::default();
        let base = format!("http://{addr}");
        let mcp: StreamableHttpService<toolbridge::example_server::ExampleServer, _> =
            StreamableHttpService::new(
                || Ok(toolbridge::example_server::ExampleServer::new()),
                Arc::new(LocalSessionManager::default()),
                StreamableHttpServerConfig::default(),
            );
        let protected =
            Router::new()
                .nest_service("/mcp", mcp)
                .layer(axum::middleware::from_fn_with_state(
                    (state.clone(), base.clone()),
                    bearer_check,
                ));
        let app = Router::new()
            .route(
                "/.well-known/oauth-protected-resource/mcp",
                get(resource_metadata),
            )
            .route(
                "/.well-known/oauth-authorization-server",
                get(server_metadata),
            )
            .route("/register", post(register))
            .route("/authorize", get(authorize))
            .route("/token", post(token))
            .route("/revoke", post(revoke))
            .with_state((state.clone(), base))
            .merge(protected);
        runtime.spawn(async move {
            let listener = tokio::net::TcpListener::from_std(listener).unwrap();
            let _ = axum::serve(listener, app).await;
        });
        Double {
            addr,
            state,
            _runtime: runtime,
        }
    }

    fn url(&self) -> String {
        format!("http://{}/mcp", self.addr)
    }

    fn with<T>(&self, f: impl FnOnce(&mut AsState) -> T) -> T {
        f(&mut self.state.lock().unwrap())
    }
}

type Ctx = State<(Shared, String)>;

async fn resource_metadata(State((_, base)): Ctx) -> Response {
    json_response(
        StatusCode::OK,
        json!({"resource": format!("{base}/mcp"), "authorization_servers": [base]}),
    )
}

async fn server_metadata(State((_, base)): Ctx) -> Response {
    json_response(
        StatusCode::OK,
        json!({
            "issuer": base,
            "authorization_endpoint": format!("{base}/authorize"),
            "token_endpoint": format!("{base}/token"),
            "registration_endpoint": format!("{base}/register"),
            "revocation_endpoint": format!("{base}/revoke"),
            "response_types_supported": ["code"],
            "grant_types_supported": ["authorization_code", "refresh_token"],
            "code_challenge_methods_supported": ["S256"],
            "token_endpoint_auth_methods_supported": ["client_secret_post"],
        }),
    )
}

async fn register(State((state, _)): Ctx, body: String) -> Response {
    let request: Value = serde_json::from_str(&body).unwrap_or_default();
    let mut s = state.lock().unwrap();
    s.next += 1;
    s.registrations += 1;
    let (id, secret) = (format!("client-{}", s.next), format!("secret-{}", s.next));
    s.clients.insert(id.clone(), secret.clone());
    json_response(
        StatusCode::CREATED,
        json!({"client_id": id, "client_secret": secret,
               "redirect_uris": request["redirect_uris"], "client_name": request["client_name"]}),
    )
}

async fn authorize(State((state, _)): Ctx, uri: Uri) -> Response {
    let query = pairs(uri.query().unwrap_or_default());
    state.lock().unwrap().authorizations += 1;
    let mut to = url::Url::parse(&query["redirect_uri"]).unwrap();
    to.query_pairs_mut()
        .append_pair("code", "the-code")
        .append_pair("state", &query["state"]);
    (StatusCode::FOUND, [(header::LOCATION, to.to_string())]).into_response()
}

async fn token(State((state, _)): Ctx, body: String) -> Response {
    let form = pairs(&body);
    let mut s = state.lock().unwrap();
    let client = form.get("client_id").cloned().unwrap_or_default();
    if s.clients.get(&client) != form.get("client_secret") {
        return json_response(
            StatusCode::UNAUTHORIZED,
            json!({"error": "invalid_client", "error_description": "unknown client"}),
        );
    }
    let refresh = match form.get("grant_type").map(String::as_str) {
        Some("authorization_code") => {
            s.next += 1;
            format!("refresh-{}", s.next)
        }
        Some("refresh_token") => {
            let presented = form.get("refresh_token").cloned().unwrap_or_default();
            if s.refresh.get(&presented) != Some(&client) {
                return json_response(StatusCode::BAD_REQUEST, json!({"error": "invalid_grant"}));
            }
            s.refresh_resources.push(form.get("resource").cloned());
            presented
        }
        _ => {
            return json_response(
                StatusCode::BAD_REQUEST,
                json!({"error": "unsupported_grant_type"}),
            );
        }
    };
    s.next += 1;
    let access = format!("access-{}", s.next);
    s.access.insert(access.clone());
    s.refresh.insert(refresh.clone(), client);
    s.issued.extend([access.clone(), refresh.clone()]);
    json_response(
        StatusCode::OK,
        json!({"access_token": access, "token_type": "Bearer", "expires_in": 3600,
               "refresh_token": refresh, "scope": "mcp"}),
    )
}

async fn revoke(State((state, _)): Ctx, body: String) -> Response {
    let form = pairs(&body);
    let mut s = state.lock().unwrap();
    let token = form.get("token").cloned().unwrap_or_default();
    s.refresh.remove(&token);
    s.revoked.push(token);
    StatusCode::OK.into_response()
}

/// The protected resource: a live access token, or 401 with the challenge
/// that points at the resource metadata.
async fn bearer_check(
    State((state, base)): Ctx,
    headers: HeaderMap,
    request: Request,
    next: Next,
) -> Response {
    let token = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::to_owned);
    let live = token.is_some_and(|t| state.lock().unwrap().access.contains(&t));
    if !live {
        let challenge = format!(
            "Bearer error=\"invalid_token\", resource_metadata=\"{base}/.well-known/oauth-protected-resource/mcp\""
        );
        return (
            StatusCode::UNAUTHORIZED,
            [(header::WWW_AUTHENTICATE, challenge)],
            "sign in",
        )
            .into_response();
    }
    next.run(request).await
}

fn json_response(status: StatusCode, body: Value) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}

fn pairs(text: &str) -> HashMap<String, String> {
    url::form_urlencoded::parse(text.as_bytes())
        .into_owned()
        .collect()
}

/// A sandbox whose config names the double as server `remote`, with its
/// own home, data and config folders, and a `$BROWSER` that logs each URL
/// it is given and follows it with curl.
struct Signing {
    sandbox: Sandbox,
    double: Double,
}

impl Signing {
    fn new() -> Signing {
        let sandbox = Sandbox::new();
        let double = Double::start();
        sandbox.write_config(
            &json!({"mcpServers": {"remote": {"type": "http", "url": double.url()}}}),
        );
        script(
            &sandbox.dir.path().join("browser"),
            &format!(
                "echo \"$1\" >> '{}'\nexec curl -sfL -o /dev/null \"$1\"",
                sandbox.dir.path().join("browser.log").display()
            ),
        );
        Signing { sandbox, double }
    }

    /// The user takes `seconds` in the browser before the sign-in goes on.
    fn slow_browser(&self, seconds: u32) {
        script(
            &self.sandbox.dir.path().join("browser"),
            &format!(
                "echo \"$1\" >> '{}'\nsleep {seconds}\nexec curl -sfL -o /dev/null \"$1\"",
                self.sandbox.dir.path().join("browser.log").display()
            ),
        );
    }

    fn data(&self) -> PathBuf {
        self.sandbox.dir.path().join("data")
    }

    /// `toolbridge args` with the sandbox's folders; with the `$BROWSER`
    /// script when `browser`, else with none (and stdin not a terminal).
    fn run(&self, args: &[&str], browser: bool) -> Run {
        let dir = self.sandbox.dir.path().to_owned();
        let data = self.data();
        self.sandbox.run_with(args, |cmd| {
            cmd.env("HOME", &dir)
                .env("XDG_CONFIG_HOME", dir.join("config-home"))
                .env("XDG_DATA_HOME", &data)
                .env_remove("TOOLBRIDGE_LOG");
            if browser {
                cmd.env("BROWSER", dir.join("browser"));
            } else {
                cmd.env_remove("BROWSER");
            }
        })
    }

    /// How many times the browser was started.
    fn browser_starts(&self) -> usize {
        std::fs::read_to_string(self.sandbox.dir.path().join("browser.log"))
            .map(|log| log.lines().count())
            .unwrap_or(0)
    }

    /// The one file under `data/toolbridge/oauth/<kind>`.
    fn stored(&self, kind: &str) -> PathBuf {
        let dir = self.data().join("toolbridge/oauth").join(kind);
        let files: Vec<PathBuf> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        assert_eq!(files.len(), 1, "{files:?}");
        files[0].clone()
    }

    /// Makes the stored access token an hour old: expired.
    fn expire_access_token(&self) {
        let path = self.stored("tokens");
        let mut file: Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let received = file["credentials"]["token_received_at"].as_u64().unwrap();
        file["credentials"]["token_received_at"] = json!(received - 3600);
        std::fs::write(&path, file.to_string()).unwrap();
    }

    fn call_echo(&self, browser: bool) -> Run {
        self.run(
            &[
                "call",
                "remote",
                "echo",
                "--args",
                r#"{"text": "hi there"}"#,
            ],
            browser,
        )
    }
}

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

#[test]
fn login_stores_tokens_only_the_user_can_read_and_a_call_uses_them() {
    let t = Signing::new();
    let login = t.run(&["auth", "login", "remote"], true);
    assert_eq!(login.code, Some(0), "{login:?}");
    assert_eq!(t.browser_starts(), 1);
    assert!(
        login.stderr.contains("signed in to \"remote\""),
        "{login:?}"
    );

    let tokens = t.stored("tokens");
    let clients = t.stored("clients");
    assert_eq!(mode(&tokens), 0o600);
    assert_eq!(
        mode(&clients),
        0o600,
        "the registration holds the client secret"
    );
    assert_eq!(mode(tokens.parent().unwrap()), 0o700);
    // The registered client's secret is kept: refresh needs it after a restart.
    let registration: Value =
        serde_json::from_str(&std::fs::read_to_string(&clients).unwrap()).unwrap();
    assert_eq!(registration["clientSecret"], "secret-1");

    let call = t.call_echo(false);
    assert_eq!(call.code, Some(0), "{call:?}");
    assert_eq!(call.stdout.trim(), "hi there");
    assert_eq!(t.browser_starts(), 1, "no second sign-in");
}

#[test]
fn an_expired_access_token_is_refreshed_without_a_browser() {
    let t = Signing::new();
    assert_eq!(t.run(&["auth", "login", "remote"], true).code, Some(0));
    t.expire_access_token();

    // No $BROWSER and no terminal: a sign-in could not even start.
    let call = t.call_echo(false);
    assert_eq!(call.code, Some(0), "{call:?}");
    assert_eq!(call.stdout.trim(), "hi there");
    assert_eq!(t.browser_starts(), 1, "the refresh needed no browser");
    let resources = t.double.with(|s| s.refresh_resources.clone());
    assert_eq!(
        resources,
        vec![Some(t.double.url())],
        "one refresh, with the RFC 8707 resource"
    );
}

#[test]
fn a_revoked_registration_is_replaced_by_a_new_one() {
    let t = Signing::new();
    assert_eq!(t.run(&["auth", "login", "remote"], true).code, Some(0));
    t.expire_access_token();
    // The authorization server forgets toolbridge's client: the refresh
    // gets `invalid_client`.
    t.double.with(|s| s.clients.clear());

    let call = t.call_echo(true);
    assert_eq!(call.code, Some(0), "{call:?}");
    assert_eq!(call.stdout.trim(), "hi there");
    assert_eq!(t.double.with(|s| s.registrations), 2, "registered anew");
    assert_eq!(t.browser_starts(), 2, "signed in again with the new client");
    let registration: Value =
        serde_json::from_str(&std::fs::read_to_string(t.stored("clients")).unwrap()).unwrap();
    assert_eq!(registration["clientId"], "client-4", "{registration}");
}

#[test]
fn without_a_browser_a_server_that_needs_a_sign_in_says_how() {
    let t = Signing::new();
    let call = t.call_echo(false);
    assert_eq!(call.code, Some(3), "{call:?}");
    assert!(
        call.stderr
            .contains("needs you to sign in: run `toolbridge auth login remote`"),
        "{call:?}"
    );
    assert!(!call.stderr.contains("check the credentials"), "{call:?}");
    assert_eq!(t.double.with(|s| s.authorizations), 0);
}

/// rmcp waits 10 s for the answer to `server/discover`, then falls back to
/// `initialize`; a user who takes longer in the browser than that (the sign-in
/// answers the first request's 401) got a connection at the older protocol,
/// and a 2026-07-28-only server refused the start. Signed in, the start runs
/// again and speaks 2026-07-28.
#[test]
fn a_sign_in_slower_than_the_discover_wait_still_starts_at_2026_07_28() {
    let t = Signing::new();
    // The scenario itself: the person reads the page and types.
    t.slow_browser(11);
    let call = t.run(
        &[
            "-v",
            "call",
            "remote",
            "echo",
            "--args",
            r#"{"text": "hi"}"#,
        ],
        true,
    );
    assert_eq!(call.code, Some(0), "{call:?}");
    assert_eq!(t.browser_starts(), 1);
    let connected: Vec<_> = call
        .stderr
        .lines()
        .filter(|l| l.contains("connected server=remote"))
        .collect();
    assert!(
        connected
            .last()
            .is_some_and(|l| l.contains("protocol=2026-07-28")),
        "{connected:?}"
    );
}

#[test]
fn a_command_meeting_a_401_signs_in_and_retries_once() {
    let t = Signing::new();
    let call = t.call_echo(true);
    assert_eq!(call.code, Some(0), "{call:?}");
    assert_eq!(call.stdout.trim(), "hi there");
    assert_eq!(t.browser_starts(), 1);
    assert!(call.stderr.contains("to sign in to \"remote\""), "{call:?}");
}

#[test]
fn status_listings_and_logs_never_show_a_token() {
    let t = Signing::new();
    assert_eq!(t.run(&["auth", "login", "remote"], true).code, Some(0));
    t.expire_access_token();
    let mut outputs = vec![t.run(
        &["-v", "call", "remote", "echo", "--args", r#"{"text": "x"}"#],
        false,
    )];
    let status = t.run(&["auth", "status", "--json"], false);
    assert_eq!(status.code, Some(0), "{status:?}");
    let rows: Value = serde_json::from_str(&status.stdout).unwrap();
    assert_eq!(rows[0]["server"], "remote");
    assert_eq!(rows[0]["signedIn"], true);
    assert_eq!(rows[0]["scopes"], json!(["mcp"]));
    assert_eq!(rows[0]["refreshable"], true);
    assert!(rows[0]["expiresAt"].as_u64().is_some(), "{rows}");
    outputs.push(status);
    outputs.push(t.run(&["auth", "status"], false));
    outputs.push(t.run(&["servers", "list", "--json"], false));
    outputs.push(t.run(&["servers", "list"], false));

    let mut secrets = t.double.with(|s| s.issued.clone());
    secrets.push("secret-1".to_owned());
    assert!(secrets.len() >= 4, "{secrets:?}");
    for run in &outputs {
        for secret in &secrets {
            assert!(
                !run.stdout.contains(secret.as_str()) && !run.stderr.contains(secret.as_str()),
                "{secret} shown in {run:?}"
            );
        }
    }
}

#[test]
fn logout_revokes_and_forgets_the_tokens() {
    let t = Signing::new();
    assert_eq!(t.run(&["auth", "login", "remote"], true).code, Some(0));
    let logout = t.run(&["auth", "logout", "remote"], false);
    assert_eq!(logout.code, Some(0), "{logout:?}");
    assert!(logout.stderr.contains("revoked"), "{logout:?}");
    assert_eq!(
        t.double.with(|s| s.revoked.clone()),
        vec!["refresh-2".to_owned()]
    );
    let status = t.run(&["auth", "status", "remote"], false);
    assert_eq!(status.stdout.trim(), "remote: not signed in", "{status:?}");
}

#[test]
fn doctor_says_to_sign_in_not_to_check_the_headers() {
    let t = Signing::new();
    let doctor = t.run(&["doctor", "--json"], false);
    let text = format!("{}{}", doctor.stdout, doctor.stderr);
    assert!(
        text.contains("sign in: run `toolbridge auth login remote`"),
        "{doctor:?}"
    );
    assert!(!text.contains("check the token"), "{doctor:?}");
}

#[test]
fn signing_in_again_after_the_registration_was_revoked_registers_anew() {
    let t = Signing::new();
    assert_eq!(t.run(&["auth", "login", "remote"], true).code, Some(0));
    // The code exchange with the kept client gets `invalid_client`.
    t.double.with(|s| s.clients.clear());
    let login = t.run(&["auth", "login", "remote"], true);
    assert_eq!(login.code, Some(0), "{login:?}");
    assert_eq!(t.double.with(|s| s.registrations), 2);
    let registration: Value =
        serde_json::from_str(&std::fs::read_to_string(t.stored("clients")).unwrap()).unwrap();
    assert_ne!(registration["clientId"], "client-1", "{registration}");
    assert_eq!(t.call_echo(false).code, Some(0));
}
