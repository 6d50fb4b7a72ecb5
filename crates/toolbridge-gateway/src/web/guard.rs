//! What every page response carries and what every page write must carry.
//!
//! - A Content-Security-Policy with no inline script, no foreign origin, no
//!   framing (the page loads only its own files; images and audio from tool
//!   results come as `data:` or `blob:` URLs). The one exception is the MCP
//!   Apps sandbox document, framed by the page only, with a policy of its
//!   own ([`crate::web::app_sandbox`]).
//! - Requests that change something (any method but GET and HEAD) must send
//!   [`WRITE_HEADER`]: a foreign page cannot send a custom header without a
//!   CORS preflight, which the gateway never grants. The gateway's
//!   [`crate::security`] has already refused a foreign `Origin`.

use axum::{
    extract::Request,
    middleware::Next,
    response::{IntoResponse, Response},
};
use http::{HeaderValue, Method, StatusCode, header};

use super::app_sandbox;

/// The header the page's own script sends with every write.
pub const WRITE_HEADER: &str = "x-toolbridge-request";

/// The page's Content-Security-Policy.
pub const CSP: &str = "default-src 'self'; script-src 'self'; style-src 'self'; \
    img-src 'self' data: blob:; media-src 'self' data: blob:; connect-src 'self'; \
    object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

/// The middleware: refuses writes without [`WRITE_HEADER`] (403) and adds
/// the security headers to every response.
pub async fn guard(request: Request, next: Next) -> Response {
    let writes = !matches!(*request.method(), Method::GET | Method::HEAD);
    let sandbox = app_sandbox::is_sandbox(request.uri().path());
    let mut response = if writes && !request.headers().contains_key(WRITE_HEADER) {
        (
            StatusCode::FORBIDDEN,
            axum::Json(serde_json::json!({ "error": {
                "message": format!("writes need the {WRITE_HEADER} header (sent by the page itself)")
            }})),
        )
            .into_response()
    } else {
        next.run(request).await
    };
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(if sandbox { app_sandbox::CSP } else { CSP }),
    );
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    headers.insert(
        header::X_FRAME_OPTIONS,
        HeaderValue::from_static(if sandbox { "SAMEORIGIN" } else { "DENY" }),
    );
    response
}
