//! The gateway over HTTP: MCP's streamable HTTP at `/mcp` (rmcp's server:
//! 2025-11-25 sessions with `Mcp-Session-Id`, and 2026-07-28 stateless
//! requests with `server/discover`), `/healthz` and `/metrics`, all behind
//! [`security::check`]. The web page ([`crate::web`]) is merged at `/`.

use std::{net::SocketAddr, sync::Arc};

use axum::{Router, extract::State, response::IntoResponse, routing::get};
use http::{StatusCode, header};
use rmcp::transport::streamable_http_server::{
    StreamableHttpServerConfig, StreamableHttpService, session::local::LocalSessionManager,
};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use crate::{
    Gateway, GatewayError, Security,
    connections::{self, ConnectionLimits},
    security, session,
    session_owners::SessionOwners,
    stateless::Endpoint,
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
    // A stateless request whose first message is its answer gets that
    // answer as `application/json`; one that sends progress, a log message
    // or a request first still gets an event stream with all of them. An
    // event stream costs a task, a keep-alive timer and SSE framing on both
    // sides for a single message (sessions are not affected).
    let config = StreamableHttpServerConfig::default()
        .disable_allowed_hosts()
        .disable_allowed_origins()
        .with_json_response(true)
        .with_cancellation_token(shutdown);
    let sessions = Arc::new(LocalSessionManager::default());
    let mcp =
        StreamableHttpService::new(session::factory(gateway.clone()), sessions.clone(), config);
    // Stateless calls are answered by `stateless`, everything else by rmcp;
    // a session answers only the client that opened it.
    let endpoint = Endpoint::new(gateway.clone(), mcp, SessionOwners::new(sessions));
    let mcp =
        axum::routing::any(move |request: axum::extract::Request| endpoint.clone().handle(request));
    let mut router = Router::new()
        .nest_service("/mcp", mcp)
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
