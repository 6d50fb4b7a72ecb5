//! The gateway over HTTP: MCP's streamable HTTP at `/mcp` (rmcp's server:
//! 2025-11-25 sessions with `Mcp-Session-Id`, and 2026-07-28 stateless
//! requests with `server/discover`) and each profile's at `/mcp/NAME`,
//! `/healthz` and `/metrics`, all behind [`security::check`]. The web page
//! ([`crate::web`]) is merged at `/`.

use std::{
    collections::HashMap,
    net::SocketAddr,
    sync::{Arc, Mutex},
};

use axum::{
    Router,
    extract::{Path, Request, State},
    response::{IntoResponse, Response},
    routing::{any, get},
};
use http::{StatusCode, header};
use rmcp::transport::streamable_http_server::{
    StreamableHttpServerConfig, StreamableHttpService, session::local::LocalSessionManager,
};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;
use toolbridge::lock::LockUnpoisoned as _;

use crate::{
    Gateway, GatewayError, Security,
    connections::{self, ConnectionLimits},
    direct_sessions::DirectSessions,
    endpoint::Endpoint,
    profile::ViewName,
    request_spans::Traced,
    security, session,
    session_owners::SessionOwners,
    web::WebState,
};

/// Binds the listener on `addr` (port 0: any free port; see
/// [`TcpListener::local_addr`] for the one chosen).
pub async fn bind(addr: SocketAddr) -> Result<TcpListener, GatewayError> {
    TcpListener::bind(addr)
        .await
        .map_err(|source| GatewayError::Bind { addr, source })
}

/// The gateway's routes, with the web page when `web` is given. `shutdown`
/// ends the MCP sessions.
pub fn router(
    gateway: Gateway,
    security: Security,
    shutdown: CancellationToken,
    web: Option<WebState>,
) -> Router {
    // Host and Origin are checked by `security` for every route, so rmcp's
    // own checks (loopback Host names only, Origin off) are not repeated.
    let all = endpoint(&gateway, ViewName::All, &shutdown);
    let mcp = any(move |request: Request| all.clone().handle(request));
    let profiles = Profiles {
        gateway: gateway.clone(),
        shutdown,
        endpoints: Arc::default(),
    };
    let mut router = Router::new()
        .route("/mcp", mcp.clone())
        .route("/mcp/", mcp)
        .route(
            "/mcp/{profile}",
            any(move |Path(name): Path<String>, request: Request| {
                let profiles = profiles.clone();
                async move { profiles.handle(&name, request).await }
            }),
        )
        .route("/healthz", get(healthz))
        .route("/metrics", get(metrics))
        .with_state(gateway);
    if let Some(web) = web {
        router = router.merge(crate::web::router(web));
    }
    router.layer(axum::middleware::from_fn_with_state(
        Arc::new(security),
        security::check,
    ))
}

/// The MCP endpoint of `view`: its own rmcp service (its sessions are
/// valid at its path only), stateless calls answered by [`Endpoint`].
fn endpoint(gateway: &Gateway, view: ViewName, shutdown: &CancellationToken) -> Endpoint {
    // A stateless request whose first message is its answer gets that
    // answer as `application/json`; one that sends progress, a log message
    // or a request first still gets an event stream with all of them. An
    // event stream costs a task, a keep-alive timer and SSE framing on both
    // sides for a single message (sessions are not affected).
    let config = StreamableHttpServerConfig::default()
        .disable_allowed_hosts()
        .disable_allowed_origins()
        .with_json_response(true)
        .with_cancellation_token(shutdown.clone());
    let sessions = Arc::new(LocalSessionManager::default());
    let direct = DirectSessions::new(sessions.clone());
    let sessions_of = session::factory(gateway.clone(), view.clone(), direct.clone());
    let (traced, traced_view) = (gateway.clone(), view.clone());
    let mcp = StreamableHttpService::new(
        move || sessions_of().map(|s| Traced::new(s, traced.clone(), traced_view.clone())),
        sessions.clone(),
        config,
    );
    // Stateless calls and sessions' plain tool calls are answered by
    // `endpoint` and `direct_sessions`, everything else by rmcp; a session
    // answers only the client that opened it.
    Endpoint::new(
        gateway.clone(),
        view,
        mcp,
        SessionOwners::new(sessions),
        direct,
    )
}

/// The profiles' endpoints at `/mcp/NAME`, each made on its first request
/// (a profile added to the config is served without a restart).
#[derive(Clone)]
struct Profiles {
    gateway: Gateway,
    shutdown: CancellationToken,
    endpoints: Arc<Mutex<HashMap<String, Endpoint>>>,
}

impl Profiles {
    /// Answers a request to `/mcp/{name}`: 404 when the config has no such
    /// profile.
    async fn handle(&self, name: &str, request: Request) -> Response {
        if !self.gateway.has_profile(name) {
            return (
                StatusCode::NOT_FOUND,
                [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
                format!(
                    "Not Found: the gateway's config has no profile {name:?}; \
                     /mcp serves every server, /mcp/NAME a profile of the config's \"profiles\""
                ),
            )
                .into_response();
        }
        let endpoint = self
            .endpoints
            .lock_unpoisoned()
            .entry(name.to_owned())
            .or_insert_with(|| endpoint(&self.gateway, ViewName::profile(name), &self.shutdown))
            .clone();
        endpoint.handle(request).await
    }
}

/// Serves `router` on `listener` until `shutdown` is cancelled, each
/// connection with `TCP_NODELAY` and within `limits` (see
/// [`crate::connections`]; `axum::serve` sets neither).
pub async fn serve(
    listener: TcpListener,
    router: Router,
    limits: ConnectionLimits,
    shutdown: CancellationToken,
) -> Result<(), GatewayError> {
    connections::serve(listener, router, limits, shutdown)
        .await
        .map_err(GatewayError::Serve)
}

/// The URL clients use for `addr`.
pub fn mcp_url(addr: SocketAddr) -> String {
    format!("http://{addr}/mcp")
}

/// The URL clients of profile `profile` use for `addr`.
pub fn profile_url(addr: SocketAddr, profile: &str) -> String {
    format!("http://{addr}/mcp/{profile}")
}

/// `{"status":"ok"}` and nothing else: it needs no token (load balancers
/// probe it), so it names no server; `/metrics` has their states.
async fn healthz() -> impl IntoResponse {
    (
        StatusCode::OK,
        [(header::CONTENT_TYPE, "application/json")],
        r#"{"status":"ok"}"#,
    )
}

async fn metrics(State(gateway): State<Gateway>) -> impl IntoResponse {
    let text = gateway.metrics().encode(&gateway.upstream_states());
    (
        StatusCode::OK,
        [(
            header::CONTENT_TYPE,
            "application/openmetrics-text; version=1.0.0; charset=utf-8",
        )],
        text,
    )
}
