//! Streamable HTTP (protocol 2025-03-26 and later), with auto-detection of
//! legacy HTTP+SSE servers.
//!
//! The protocol work is rmcp's [`StreamableHttpClientTransport`]: sessions
//! (`Mcp-Session-Id`) and their absence (2026-07-28), re-initializing once
//! when a session expires (404) and retrying the request, and `DELETE` of the
//! session on close. This module adds what rmcp
//! leaves to its user:
//!
//! - `HttpClient`, reqwest with the config headers on every request, whose
//!   errors never carry the URL or a header value (rmcp logs them), and
//!   which reuses connections unless the server's answers stall on reused
//!   connections (see `transport::reuse`);
//! - resuming response streams the server ended early, with a floor, a
//!   backoff and a bound (see `http/resume.rs`; rmcp's own resumption has no
//!   bound), so a server that ends every stream, or died, fails the call
//!   within seconds instead of being asked again until the call times out;
//! - each log message on a request's response stream marked with that
//!   request, so the pool gives it to that request's handler even with
//!   several requests in flight (see `http/related.rs`);
//! - errors that name the server, the secret-free URL and the HTTP status;
//! - [`connect`]'s auto-detection for a config that gave a url but no `type`;
//! - OAuth (feature `auth`): the bearer token of every request from the
//!   sign-in store, refreshed before it expires, and on a 401 (or 403
//!   `insufficient_scope`) with a `Bearer` challenge a sign-in when the pool
//!   allows one, then the request once more; else an error that says to run
//!   `toolbridge auth login NAME`. A server whose config sets its own
//!   `Authorization` header is left alone.

mod related;
mod resume;

use std::{collections::HashMap, sync::Arc, time::Duration};

use futures::{StreamExt, stream::BoxStream};
use http::{HeaderName, HeaderValue, StatusCode};
use rmcp::{
    RoleClient,
    model::{
        ClientCapabilities, ClientJsonRpcMessage, ClientRequest, DiscoverRequest,
        DiscoverRequestParams, GetMeta, Implementation, ProtocolVersion, RequestId,
        RequestMetaObject,
    },
    service::{RxJsonRpcMessage, TxJsonRpcMessage},
    transport::{
        StreamableHttpClientTransport, Transport,
        common::client_side_sse::NeverRetry,
        streamable_http_client::{
            SseError, StreamableHttpClient, StreamableHttpClientTransportConfig,
            StreamableHttpError, StreamableHttpPostResponse, StreamableHttpResponseLimits,
        },
    },
};
use sse_stream::Sse;

use super::{
    AnyTransport, EndReason, TransportError,
    remote::{Remote, describe_reqwest_error, one_line},
    reuse::{ReuseGuard, Route, Timed},
    sse::{SseOpenError, SseTransport},
};
use crate::config::RemoteSpec;

/// How long the auto-detection probe may take.
const PROBE_TIMEOUT: Duration = Duration::from_secs(30);
/// How much of a probe's error body is read to see whether it is JSON-RPC.
const PROBE_BODY_LIMIT: usize = 64 * 1024;

/// How many POSTs (calls) may be in flight at once on one connection.
const MAX_CONCURRENT_POSTS: usize = 64;

/// The streamable HTTP client transport: rmcp's, over reqwest, with
/// errors that name the server.
pub struct HttpTransport {
    /// rmcp's transport; its worker task owns the session.
    inner: StreamableHttpClientTransport<HttpClient>,
    /// For turning rmcp's errors into [`TransportError::Remote`].
    remote: Arc<Remote>,
    /// Why the connection ended, when it was an answer over the cap (rmcp
    /// fails that request's POST; the pool reads the reason from here).
    end_reason: EndReason,
}

impl HttpTransport {
    /// Prepares a connection to the server at `remote.url`. Nothing is sent
    /// until the client's first message (an unreachable server is reported
    /// then, by `send`).
    pub async fn connect(server: &str, remote: &RemoteSpec) -> Result<Self, TransportError> {
        let auth = server_auth(server, remote, None);
        let remote = Remote::new(server, remote, "http", &["http", "https"])?;
        let client = remote.http_client()?;
        Ok(Self::with_client(remote, client, auth))
    }

    fn with_client(remote: Arc<Remote>, client: reqwest::Client, auth: Auth) -> Self {
        // rmcp sends at most 16 POSTs at once by default; a pool of agents
        // easily has more calls in flight, and the connection pool of the
        // shared reqwest client makes more cheap (2x calls/s at 64 in flight).
        let mut config = StreamableHttpClientTransportConfig::with_uri(remote.url.as_str())
            .max_concurrent_requests(MAX_CONCURRENT_POSTS);
        // [`resume`] resumes event streams; rmcp never sees one end.
        config.retry_config = Arc::new(NeverRetry::default());
        config.reinit_on_expired_session = true;
        let end_reason = EndReason::default();
        let client = HttpClient {
            inner: client,
            fresh: Arc::default(),
            reuse: Arc::default(),
            remote: remote.clone(),
            end_reason: end_reason.clone(),
            auth,
        };
        HttpTransport {
            inner: StreamableHttpClientTransport::with_client(client, config),
            remote,
            end_reason,
        }
    }

    /// Why the connection ended by itself (an answer over the size cap),
    /// once it has.
    pub fn end_reason(&self) -> EndReason {
        self.end_reason.clone()
    }
}

impl Transport<RoleClient> for HttpTransport {
    type Error = TransportError;

    fn name() -> std::borrow::Cow<'static, str> {
        "http".into()
    }

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let sent = self.inner.send(item);
        let remote = self.remote.clone();
        async move { sent.await.map_err(|e| http_error(&remote, e)) }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        self.inner.receive().await
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        // Waits for the worker, which deletes the session (bounded by rmcp).
        let remote = self.remote.clone();
        self.inner.close().await.map_err(|e| http_error(&remote, e))
    }
}

/// Connects to a streamable HTTP server, falling back to legacy SSE when the
/// config gave no `type` and the server is not one.
///
/// Detection follows the spec's backwards-compatibility procedure with a
/// side-effect-free first POST (`server/discover`, which creates no session):
/// a success, or any answer whose body is JSON-RPC, means streamable HTTP; a
/// plain 400, 404 or 405 means "try the legacy SSE transport" (a `GET` that
/// must bring an `endpoint` event). Should that `GET` not be an event stream
/// either, streamable HTTP is used after all. Any other failure (401, 500,
/// connection refused) is reported at once.
pub async fn connect(
    server: &str,
    spec: &RemoteSpec,
    ctx: &super::TransportContext,
) -> Result<AnyTransport, TransportError> {
    #[cfg(feature = "auth")]
    let auth = server_auth(server, spec, ctx.sign_in.clone());
    #[cfg(not(feature = "auth"))]
    let auth = {
        let _ = ctx;
        None
    };
    let remote = Remote::new(server, spec, "http", &["http", "https"])?;
    let client = remote.http_client()?;
    if !spec.auto_detect {
        return Ok(AnyTransport::Http(HttpTransport::with_client(
            remote, client, auth,
        )));
    }
    let Some(status) = probe(&remote, &client).await? else {
        return Ok(AnyTransport::Http(HttpTransport::with_client(
            remote, client, auth,
        )));
    };
    tracing::debug!(
        server = %remote.server,
        url = %remote.shown,
        %status,
        "streamable HTTP probe refused; trying the legacy SSE transport"
    );
    match SseTransport::open(remote.clone(), client.clone(), super::sse::ENDPOINT_TIMEOUT).await {
        Ok(sse) => {
            tracing::debug!(server = %remote.server, "using the legacy SSE transport");
            Ok(AnyTransport::Sse(sse))
        }
        Err(SseOpenError::NotSse(reason)) => {
            tracing::debug!(
                server = %remote.server,
                %reason,
                "not a legacy SSE server either; using streamable HTTP"
            );
            Ok(AnyTransport::Http(HttpTransport::with_client(
                remote, client, auth,
            )))
        }
        Err(SseOpenError::Failed(error)) => Err(error),
    }
}

/// POSTs `server/discover` to the URL. `Ok(None)`: a streamable HTTP server;
/// `Ok(Some(status))`: the plain 400/404/405 that calls for trying legacy SSE.
async fn probe(
    remote: &Remote,
    client: &reqwest::Client,
) -> Result<Option<StatusCode>, TransportError> {
    let mut discover = DiscoverRequest::new(DiscoverRequestParams {});
    discover
        .extensions
        .insert(RequestMetaObject::with_client_context(
            ProtocolVersion::LATEST,
            Implementation::new("toolbridge", env!("CARGO_PKG_VERSION")),
            ClientCapabilities::default(),
        ));
    let message = ClientJsonRpcMessage::request(
        ClientRequest::DiscoverRequest(discover),
        RequestId::Number(0),
    );
    let attempt = async {
        let response = client
            .post(remote.url.clone())
            .header(http::header::ACCEPT, "application/json, text/event-stream")
            .header("mcp-protocol-version", ProtocolVersion::LATEST.as_str())
            .header("mcp-method", "server/discover")
            .json(&message)
            .send()
            .await
            .map_err(|e| remote.request_error(&e))?;
        let status = response.status();
        if status.is_success() {
            // Dropping the response closes an event stream the server opened.
            return Ok(None);
        }
        if matches!(status, StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN)
            && response
                .headers()
                .get(http::header::WWW_AUTHENTICATE)
                .and_then(|v| v.to_str().ok())
                .is_some_and(is_bearer_challenge)
        {
            // An OAuth server: the transport signs in (or says how to).
            return Ok(None);
        }
        let body = read_prefix(response, PROBE_BODY_LIMIT).await;
        if is_json_rpc(&body) {
            // A JSON-RPC error (no session, unknown method, ...) is still a
            // streamable HTTP server talking.
            return Ok(None);
        }
        match status {
            StatusCode::BAD_REQUEST | StatusCode::NOT_FOUND | StatusCode::METHOD_NOT_ALLOWED => {
                Ok(Some(status))
            }
            _ => Err(remote.status_error(status, Some(&String::from_utf8_lossy(&body)))),
        }
    };
    tokio::time::timeout(PROBE_TIMEOUT, attempt)
        .await
        .unwrap_or_else(|_| {
            Err(remote.timeout(format!(
                "no answer to the first request within {}s",
                PROBE_TIMEOUT.as_secs()
            )))
        })
}

/// The first `limit` bytes of a body (fewer if reading fails).
async fn read_prefix(mut response: reqwest::Response, limit: usize) -> Vec<u8> {
    let mut body = Vec::new();
    while body.len() < limit {
        match response.chunk().await {
            Ok(Some(chunk)) => body.extend_from_slice(&chunk),
            _ => break,
        }
    }
    body.truncate(limit);
    body
}

fn is_json_rpc(body: &[u8]) -> bool {
    serde_json::from_slice::<serde_json::Value>(body)
        .is_ok_and(|v| v.get("jsonrpc").is_some_and(|j| j == "2.0"))
}

/// An rmcp streamable HTTP error as a [`TransportError::Remote`].
fn http_error(remote: &Remote, error: StreamableHttpError<HttpClientError>) -> TransportError {
    match error {
        StreamableHttpError::HttpStatus(e) => match StatusCode::from_u16(e.status) {
            Ok(status) => remote.status_error(status, None),
            Err(_) => remote.error(Some(e.status), format!("HTTP {}", e.status)),
        },
        StreamableHttpError::AuthRequired(e) if is_bearer_challenge(&e.www_authenticate_header) => {
            remote.error(Some(401), sign_in_advice(&remote.server))
        }
        StreamableHttpError::InsufficientScope(e)
            if is_bearer_challenge(&e.www_authenticate_header) =>
        {
            remote.error(
                Some(403),
                format!(
                    "the server wants permissions (scopes) the sign-in did not give; {}",
                    sign_in_advice(&remote.server)
                ),
            )
        }
        StreamableHttpError::AuthRequired(_) => {
            remote.status_error(StatusCode::UNAUTHORIZED, Some("authorization required"))
        }
        StreamableHttpError::InsufficientScope(_) => {
            remote.status_error(StatusCode::FORBIDDEN, Some("insufficient scope"))
        }
        StreamableHttpError::UnexpectedServerResponse(text) => match parse_status_text(&text) {
            Some((status, body)) => remote.status_error(status, Some(body)),
            None => remote.error(
                None,
                format!("unexpected response: {}", one_line(&text, 200)),
            ),
        },
        StreamableHttpError::SessionExpired => remote.error(
            Some(404),
            "the session expired and a new one could not be started",
        ),
        StreamableHttpError::TransportChannelClosed => {
            remote.error(None, "the connection is closed")
        }
        StreamableHttpError::Client(e) => remote.error(e.status, e.message),
        other => remote.error(None, other.to_string()),
    }
}

/// What to do about a server that needs a sign-in.
fn sign_in_advice(server: &str) -> String {
    format!("the server needs you to sign in: run `toolbridge auth login {server}`")
}

/// The OAuth side of a connection, when the build has it.
#[cfg(feature = "auth")]
type Auth = Option<Arc<crate::auth::ServerAuth>>;
#[cfg(not(feature = "auth"))]
type Auth = Option<std::convert::Infallible>;

/// True when a `WWW-Authenticate` value asks for a bearer token (RFC
/// 6750): the server takes OAuth tokens. Other challenges (`Basic`, none)
/// are about the config's own headers.
pub(crate) fn is_bearer_challenge(challenge: &str) -> bool {
    challenge
        .trim_start()
        .get(..6)
        .is_some_and(|scheme| scheme.eq_ignore_ascii_case("bearer"))
}

/// The OAuth side of `server`, unless its config sends its own
/// `Authorization` header.
#[cfg(feature = "auth")]
fn server_auth(server: &str, spec: &RemoteSpec, sign_in: Option<crate::auth::SignIn>) -> Auth {
    if spec
        .headers
        .keys()
        .any(|name| name.eq_ignore_ascii_case("authorization"))
    {
        return None;
    }
    let url = url::Url::parse(spec.url.trim()).ok()?;
    crate::auth::ServerAuth::new(server, &url, &spec.oauth, sign_in)
}

#[cfg(not(feature = "auth"))]
fn server_auth(_: &str, _: &RemoteSpec, _: Option<std::convert::Infallible>) -> Auth {
    None
}

/// Splits rmcp's `"HTTP 401 Unauthorized: <body>"` into status and body.
fn parse_status_text(text: &str) -> Option<(StatusCode, &str)> {
    let rest = text.strip_prefix("HTTP ")?;
    let code = StatusCode::from_bytes(rest.get(..3)?.as_bytes()).ok()?;
    let body = rest.split_once(": ").map_or("", |(_, body)| body);
    Some((code, body))
}

/// reqwest, as rmcp's streamable HTTP backend, with errors scrubbed of the
/// URL and header values before rmcp sees (and logs) them.
#[derive(Clone)]
pub(crate) struct HttpClient {
    /// Carries the config headers as default headers; reuses connections.
    inner: reqwest::Client,
    /// The same without connection reuse, made when first needed (`None`
    /// if it could not be built).
    fresh: Arc<std::sync::OnceLock<Option<reqwest::Client>>>,
    /// Whether POSTs reuse connections.
    reuse: Arc<ReuseGuard>,
    /// For redacting error text.
    remote: Arc<Remote>,
    /// Set when an answer is over the cap, which ends rmcp's worker.
    end_reason: EndReason,
    /// The server's OAuth tokens, unless its config sends its own
    /// `Authorization` (or the build has no `auth`).
    #[cfg_attr(not(feature = "auth"), allow(dead_code))]
    auth: Auth,
}

/// A failed HTTP request, described without secrets.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub(crate) struct HttpClientError {
    /// What failed (redacted).
    pub message: String,
    /// The HTTP status, if there was a response.
    pub status: Option<u16>,
}

impl HttpClient {
    fn scrub(
        &self,
        error: StreamableHttpError<reqwest::Error>,
    ) -> StreamableHttpError<HttpClientError> {
        let redact = |text: &str| self.remote.redactor.redact(text).into_owned();
        match error {
            StreamableHttpError::Client(e) => StreamableHttpError::Client(HttpClientError {
                message: redact(&describe_reqwest_error(&e)),
                status: e.status().map(|s| s.as_u16()),
            }),
            StreamableHttpError::Sse(e) => StreamableHttpError::Sse(scrub_sse(&self.remote, e)),
            StreamableHttpError::Io(e) => {
                StreamableHttpError::Io(std::io::Error::new(e.kind(), redact(&e.to_string())))
            }
            StreamableHttpError::UnexpectedServerResponse(text) => {
                StreamableHttpError::UnexpectedServerResponse(redact(&one_line(&text, 300)).into())
            }
            StreamableHttpError::HttpStatus(e) => StreamableHttpError::HttpStatus(e),
            StreamableHttpError::UnexpectedEndOfStream => {
                StreamableHttpError::UnexpectedEndOfStream
            }
            StreamableHttpError::ResponseBodyTooLarge { max_size } => {
                self.end_reason.set(Some(format!(
                    "the server sent an answer over the {} MiB limit on one message",
                    max_size / (1024 * 1024)
                )));
                StreamableHttpError::ResponseBodyTooLarge { max_size }
            }
            StreamableHttpError::UnexpectedContentType(t) => {
                StreamableHttpError::UnexpectedContentType(t)
            }
            StreamableHttpError::ServerDoesNotSupportSse => {
                StreamableHttpError::ServerDoesNotSupportSse
            }
            StreamableHttpError::ServerDoesNotSupportDeleteSession => {
                StreamableHttpError::ServerDoesNotSupportDeleteSession
            }
            StreamableHttpError::TokioJoinError(e) => StreamableHttpError::TokioJoinError(e),
            StreamableHttpError::Deserialize(e) => StreamableHttpError::Deserialize(e),
            StreamableHttpError::TransportChannelClosed => {
                StreamableHttpError::TransportChannelClosed
            }
            StreamableHttpError::MissingSessionIdInResponse => {
                StreamableHttpError::MissingSessionIdInResponse
            }
            StreamableHttpError::AuthRequired(e) => StreamableHttpError::AuthRequired(e),
            StreamableHttpError::InsufficientScope(e) => StreamableHttpError::InsufficientScope(e),
            StreamableHttpError::ReservedHeaderConflict(h) => {
                StreamableHttpError::ReservedHeaderConflict(h)
            }
            StreamableHttpError::SessionExpired => StreamableHttpError::SessionExpired,
            StreamableHttpError::SessionRecoveryTimeout => {
                StreamableHttpError::SessionRecoveryTimeout
            }
            StreamableHttpError::ReinitializationFailed(e) => {
                StreamableHttpError::ReinitializationFailed(e)
            }
            StreamableHttpError::ControlRequestTimeout => {
                StreamableHttpError::ControlRequestTimeout
            }
            other => {
                StreamableHttpError::UnexpectedServerResponse(redact(&other.to_string()).into())
            }
        }
    }

    /// One POST, scrubbed, its event-stream answer resumed when it ends
    /// early.
    async fn post_once(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<HttpClientError>> {
        let mut custom_headers = custom_headers;
        if let ClientJsonRpcMessage::Request(request) = &message {
            trace_headers(request.request.get_meta(), &mut custom_headers);
        }
        let route = self.reuse.route();
        let request = match &message {
            ClientJsonRpcMessage::Request(request) => Some(request.id.clone()),
            _ => None,
        };
        let mut target = resume::GetTarget {
            client: self.clone(),
            uri: uri.clone(),
            session_id: session_id.clone(),
            auth_header: auth_header.clone(),
            headers: custom_headers.clone(),
            max_event_size: limits.max_sse_event_size,
        };
        let response = self
            .client_for(route)
            .post_message_with_response_limits(
                uri,
                message,
                session_id,
                auth_header,
                custom_headers,
                limits,
            )
            .await
            .map_err(|e| self.scrub(e))?;
        Ok(match response {
            StreamableHttpPostResponse::Sse(stream, session) => {
                if let Some(session) = &session {
                    // The answer to `initialize` starts the session.
                    target.session_id = Some(session.as_str().into());
                }
                let stream = self.response_stream(stream, route);
                let marked = request.clone();
                let stream = resume::resuming(stream, target, request);
                let stream = match marked {
                    Some(id) => related::mark_logs(stream, id),
                    None => stream,
                };
                StreamableHttpPostResponse::Sse(stream, session)
            }
            other => other,
        })
    }

    /// The bearer token for a request rmcp sends without one (`GET`
    /// streams, `DELETE`), or for a DPoP-bound token its headers put in
    /// `headers`; no sign-in happens here.
    async fn token_for(
        &self,
        auth_header: Option<String>,
        method: &str,
        uri: &str,
        headers: &mut HashMap<HeaderName, HeaderValue>,
    ) -> Result<Option<String>, StreamableHttpError<HttpClientError>> {
        #[cfg(feature = "auth")]
        if let (Some(auth), None) = (&self.auth, &auth_header) {
            let token = auth.bearer().await.map_err(|e| self.auth_error(e))?;
            return self.present(auth, method, uri, token, headers);
        }
        let _ = (method, uri, headers);
        Ok(auth_header)
    }

    /// `token` as rmcp's bearer, or (DPoP-bound) as the `Authorization:
    /// DPoP` and `DPoP` proof headers added to `headers` (rmcp then sends
    /// no `Authorization` of its own).
    #[cfg(feature = "auth")]
    fn present(
        &self,
        auth: &crate::auth::ServerAuth,
        method: &str,
        uri: &str,
        token: Option<String>,
        headers: &mut HashMap<HeaderName, HeaderValue>,
    ) -> Result<Option<String>, StreamableHttpError<HttpClientError>> {
        let Some(token) = token else {
            return Ok(None);
        };
        let Some((authorization, proof)) = auth
            .dpop_headers(method, uri, &token)
            .map_err(|e| self.auth_error(e))?
        else {
            return Ok(Some(token));
        };
        let value = |text: String| {
            let mut value = HeaderValue::try_from(text).map_err(|_| {
                StreamableHttpError::Client(HttpClientError {
                    message: "the access token is not a valid header value".to_owned(),
                    status: None,
                })
            })?;
            value.set_sensitive(true);
            Ok::<_, StreamableHttpError<HttpClientError>>(value)
        };
        headers.insert(http::header::AUTHORIZATION, value(authorization)?);
        headers.insert(HeaderName::from_static("dpop"), value(proof)?);
        Ok(None)
    }

    /// One POST presenting `token` (as a bearer, or DPoP-bound with a
    /// proof); a DPoP server that answers `use_dpop_nonce` gets it once
    /// more with the nonce it gave (RFC 9449 section 9).
    #[cfg(feature = "auth")]
    #[allow(clippy::too_many_arguments)]
    async fn post_presenting(
        &self,
        auth: &crate::auth::ServerAuth,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        token: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<HttpClientError>> {
        let mut headers = custom_headers.clone();
        let bearer = self.present(auth, "POST", &uri, token.clone(), &mut headers)?;
        let bound = bearer.is_none() && token.is_some();
        let result = self
            .post_once(
                uri.clone(),
                message.clone(),
                session_id.clone(),
                bearer,
                headers.clone(),
                limits,
            )
            .await;
        let nonce_asked = matches!(&result, Err(StreamableHttpError::AuthRequired(e))
            if crate::auth::dpop::is_dpop_challenge(&e.www_authenticate_header)
                && crate::auth::dpop::asks_for_nonce(&e.www_authenticate_header));
        if !(bound && nonce_asked && self.fetch_nonce(auth, &uri, &headers).await) {
            return result;
        }
        let mut headers = custom_headers;
        let bearer = self.present(auth, "POST", &uri, token, &mut headers)?;
        self.post_once(uri, message, session_id, bearer, headers, limits)
            .await
    }

    /// The nonce a DPoP server wants, kept for the next proofs: rmcp does
    /// not pass on the `DPoP-Nonce` header of the 401 that asked for it, so
    /// a `ping` (no effect on the server) with the same credentials is sent
    /// to read it from its refusal. `headers` are the refused request's.
    #[cfg(feature = "auth")]
    async fn fetch_nonce(
        &self,
        auth: &crate::auth::ServerAuth,
        uri: &str,
        headers: &HashMap<HeaderName, HeaderValue>,
    ) -> bool {
        let Some(token) = headers
            .get(&http::header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("DPoP "))
            .map(str::to_owned)
        else {
            return false;
        };
        let Ok(Some((authorization, proof))) = auth.dpop_headers("POST", uri, &token) else {
            return false;
        };
        let mut request = self
            .inner
            .post(uri)
            .header(http::header::ACCEPT, "application/json, text/event-stream")
            .header(http::header::CONTENT_TYPE, "application/json")
            .header(http::header::AUTHORIZATION, authorization)
            .header("DPoP", proof)
            .body(r#"{"jsonrpc":"2.0","id":"toolbridge-dpop-nonce","method":"ping"}"#);
        for (name, value) in headers {
            if name != http::header::AUTHORIZATION && name.as_str() != "dpop" {
                request = request.header(name, value);
            }
        }
        let Ok(response) = request
            .timeout(std::time::Duration::from_secs(30))
            .send()
            .await
        else {
            return false;
        };
        match response
            .headers()
            .get("dpop-nonce")
            .and_then(|v| v.to_str().ok())
        {
            Some(nonce) => {
                tracing::debug!(server = %self.remote.server, "the server asked for a DPoP nonce");
                auth.keep_nonce(nonce);
                true
            }
            None => false,
        }
    }

    /// A sign-in or refresh failure, as the error of the request it was for.
    #[cfg(feature = "auth")]
    fn auth_error(&self, error: crate::auth::AuthError) -> StreamableHttpError<HttpClientError> {
        let (status, message) = match &error {
            crate::auth::AuthError::SignInNeeded { .. } => {
                (Some(401), sign_in_advice(&self.remote.server))
            }
            other => {
                let text = other.to_string();
                let prefix = format!("server \"{}\": ", self.remote.server);
                (None, text.strip_prefix(&prefix).unwrap_or(&text).to_owned())
            }
        };
        StreamableHttpError::Client(HttpClientError {
            message: self.remote.redactor.redact(&message).into_owned(),
            status,
        })
    }

    /// A `GET` event stream, scrubbed.
    async fn open_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<BoxStream<'static, Result<Sse, SseError>>, StreamableHttpError<HttpClientError>>
    {
        let stream = self
            .inner
            .get_stream_with_max_sse_event_size(
                uri,
                session_id,
                last_event_id,
                auth_header,
                custom_headers,
                max_sse_event_size,
            )
            .await
            .map_err(|e| self.scrub(e))?;
        Ok(scrubbed(stream, self.remote.clone()).boxed())
    }

    /// The client for a POST sent over `route`.
    fn client_for(&self, route: Route) -> &reqwest::Client {
        if route == Route::Reuse {
            return &self.inner;
        }
        let fresh = self.fresh.get_or_init(|| {
            self.remote
                .http_client_without_reuse()
                .inspect_err(|e| tracing::debug!(error = %e, "no client without reuse"))
                .ok()
        });
        fresh.as_ref().unwrap_or(&self.inner)
    }

    /// An event-stream answer to a POST sent over `route`, scrubbed and, for
    /// a route still being judged, timed.
    fn response_stream(
        &self,
        stream: BoxStream<'static, Result<Sse, SseError>>,
        route: Route,
    ) -> BoxStream<'static, Result<Sse, SseError>> {
        let stream = scrubbed(stream, self.remote.clone());
        if route == Route::Fresh || self.reuse.stalls() {
            return stream.boxed();
        }
        let reuse = self.reuse.clone();
        let remote = self.remote.clone();
        Timed::new(stream, move |stall_like| {
            if reuse.record(route, stall_like) {
                tracing::debug!(
                    server = %remote.server,
                    url = %remote.shown,
                    "answers stall on reused connections (the server seems to leave \
                     Nagle's algorithm on); using a new connection per request"
                );
            }
        })
        .boxed()
    }
}

/// A stream-body error described without secrets.
fn scrub_sse(remote: &Remote, error: SseError) -> SseError {
    match error {
        SseError::Body(e) => {
            let message = match e.downcast_ref::<reqwest::Error>() {
                Some(e) => describe_reqwest_error(e),
                None => e.to_string(),
            };
            SseError::Body(Box::new(HttpClientError {
                message: remote.redactor.redact(&message).into_owned(),
                status: None,
            }))
        }
        other => other,
    }
}

/// `stream` with its errors scrubbed.
fn scrubbed(
    stream: BoxStream<'static, Result<Sse, SseError>>,
    remote: Arc<Remote>,
) -> impl futures::Stream<Item = Result<Sse, SseError>> + Send + Unpin + 'static {
    stream.map(move |item| item.map_err(|e| scrub_sse(&remote, e)))
}

impl StreamableHttpClient for HttpClient {
    type Error = HttpClientError;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
        self.post_message_with_response_limits(
            uri,
            message,
            session_id,
            auth_header,
            custom_headers,
            StreamableHttpResponseLimits::default(),
        )
        .await
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
        #[cfg(feature = "auth")]
        if let Some(auth) = self.auth.as_ref().filter(|_| auth_header.is_none()) {
            let token = auth.bearer().await.map_err(|e| self.auth_error(e))?;
            let first = self
                .post_presenting(
                    auth,
                    uri.clone(),
                    message.clone(),
                    session_id.clone(),
                    token.clone(),
                    custom_headers.clone(),
                    limits,
                )
                .await;
            let challenge = match &first {
                Err(StreamableHttpError::AuthRequired(e)) => &e.www_authenticate_header,
                Err(StreamableHttpError::InsufficientScope(e)) => &e.www_authenticate_header,
                _ => return first,
            };
            if !is_bearer_challenge(challenge) && !crate::auth::dpop::is_dpop_challenge(challenge) {
                return first;
            }
            auth.refused(challenge, token.as_deref())
                .await
                .map_err(|e| self.auth_error(e))?;
            let token = auth.bearer().await.map_err(|e| self.auth_error(e))?;
            return self
                .post_presenting(
                    auth,
                    uri,
                    message,
                    session_id,
                    token,
                    custom_headers,
                    limits,
                )
                .await;
        }
        self.post_once(
            uri,
            message,
            session_id,
            auth_header,
            custom_headers,
            limits,
        )
        .await
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), StreamableHttpError<Self::Error>> {
        let mut custom_headers = custom_headers;
        let auth_header = self
            .token_for(auth_header, "DELETE", &uri, &mut custom_headers)
            .await?;
        self.inner
            .delete_session(uri, session_id, auth_header, custom_headers)
            .await
            .map_err(|e| self.scrub(e))
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<BoxStream<'static, Result<Sse, SseError>>, StreamableHttpError<Self::Error>> {
        self.get_stream_with_max_sse_event_size(
            uri,
            session_id,
            last_event_id,
            auth_header,
            custom_headers,
            StreamableHttpResponseLimits::default().max_sse_event_size,
        )
        .await
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<BoxStream<'static, Result<Sse, SseError>>, StreamableHttpError<Self::Error>> {
        // rmcp opens the session's standalone stream here (it never resumes
        // one itself: see `resume`).
        let mut custom_headers = custom_headers;
        let auth_header = self
            .token_for(auth_header, "GET", &uri, &mut custom_headers)
            .await?;
        let target = resume::GetTarget {
            client: self.clone(),
            uri: uri.clone(),
            session_id: session_id.clone(),
            auth_header: auth_header.clone(),
            headers: custom_headers.clone(),
            max_event_size: max_sse_event_size,
        };
        let stream = self
            .open_stream(
                uri,
                session_id,
                last_event_id,
                auth_header,
                custom_headers,
                max_sse_event_size,
            )
            .await?;
        Ok(resume::resuming(stream, target, None))
    }
}

/// The W3C trace context a request carries in `_meta` (SEP-414: the
/// gateway passes its client's on) sent as the `traceparent` and
/// `tracestate` HTTP headers too, for HTTP servers and the proxies in front
/// of them that read only the headers. A value a header cannot carry is
/// left in `_meta` only.
fn trace_headers(meta: &RequestMetaObject, headers: &mut HashMap<HeaderName, HeaderValue>) {
    for key in ["traceparent", "tracestate"] {
        let value = meta.0.0.get(key).and_then(serde_json::Value::as_str);
        if let Some(value) = value.and_then(|v| HeaderValue::from_str(v).ok()) {
            headers.insert(HeaderName::from_static(key), value);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rmcp_status_text_is_parsed() {
        assert_eq!(
            parse_status_text("HTTP 401 Unauthorized: go away"),
            Some((StatusCode::UNAUTHORIZED, "go away"))
        );
        assert_eq!(
            parse_status_text("HTTP 405 Method Not Allowed: "),
            Some((StatusCode::METHOD_NOT_ALLOWED, ""))
        );
        assert_eq!(parse_status_text("something else"), None);
    }

    #[test]
    fn json_rpc_bodies_are_recognised() {
        assert!(is_json_rpc(
            br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"no session"}}"#
        ));
        assert!(!is_json_rpc(b"Cannot POST /sse"));
        assert!(!is_json_rpc(br#"{"detail":"Method Not Allowed"}"#));
    }
}
