//! What the network transports (streamable HTTP, legacy SSE, WebSocket)
//! share: the parsed URL and its secret-free form, the config headers, the
//! HTTP client, and turning failures into [`TransportError::Remote`].

use std::{error::Error as _, sync::Arc, time::Duration};

use http::{HeaderMap, HeaderName, HeaderValue, StatusCode};
use url::Url;

use super::{
    CANNOT_CONNECT, TLS_FAILED, TransportError,
    redact::{Redactor, shown_url},
};
use crate::config::RemoteSpec;

/// How long opening a TCP (and TLS) connection may take.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// How long an idle connection is kept for reuse: less than the 5 s after
/// which common servers (Node, uvicorn, Apache) close idle keep-alive
/// connections, so a request is never written into a connection the server
/// is closing at that moment (a POST cannot be retried safely).
const POOL_IDLE_TIMEOUT: Duration = Duration::from_secs(4);

/// How many same-origin redirects a request may follow.
const MAX_REDIRECTS: usize = 10;

/// Headers the transports set themselves; a config that sets one is wrong.
const RESERVED_HEADERS: &[&str] = &[
    "accept",
    "connection",
    "content-length",
    "content-type",
    "host",
    "last-event-id",
    "mcp-protocol-version",
    "mcp-session-id",
    "transfer-encoding",
    "upgrade",
];

/// One network server: everything a transport needs to reach it and to
/// report failures without leaking secrets. Shared by a transport's tasks.
#[derive(Debug)]
pub struct Remote {
    /// The server's config name, in every error.
    pub server: String,
    /// Where to connect.
    pub url: Url,
    /// `url` with its secrets masked: the only form errors and logs show.
    pub shown: String,
    /// The config headers, marked sensitive so `Debug` never prints them.
    pub headers: HeaderMap,
    /// Scrubs header values and URL secrets from text that came from elsewhere.
    pub redactor: Redactor,
}

impl Remote {
    /// Validates `spec` for a transport named `kind` that accepts URLs with
    /// one of `schemes`.
    pub fn new(
        server: &str,
        spec: &RemoteSpec,
        kind: &str,
        schemes: &[&str],
    ) -> Result<Arc<Self>, TransportError> {
        let config_error = |message: String| TransportError::Config {
            server: server.to_owned(),
            message,
        };
        if spec.url.trim().is_empty() {
            return Err(config_error(format!("{kind} transport requires \"url\"")));
        }
        // url's parse errors never quote the input, so they are safe to show.
        let mut url = Url::parse(spec.url.trim())
            .map_err(|e| config_error(format!("\"url\" is not a valid URL: {e}")))?;
        if !schemes.contains(&url.scheme()) {
            let expected: Vec<String> = schemes.iter().map(|s| format!("{s}://")).collect();
            return Err(config_error(format!(
                "{kind} transport needs a {} url, got {}",
                expected.join(" or "),
                shown_url(&url)
            )));
        }
        let mut headers = HeaderMap::new();
        for (name, value) in &spec.headers {
            let header_name = HeaderName::from_bytes(name.as_bytes())
                .map_err(|_| config_error(format!("header name {name:?} is not valid")))?;
            if RESERVED_HEADERS.contains(&header_name.as_str())
                || header_name.as_str().starts_with("sec-websocket-")
            {
                return Err(config_error(format!(
                    "header {name:?} is set by the {kind} transport itself; remove it from \"headers\""
                )));
            }
            let mut header_value = HeaderValue::from_str(value).map_err(|_| {
                config_error(format!(
                    "the value of header {name:?} is not valid (visible ASCII only)"
                ))
            })?;
            header_value.set_sensitive(true);
            headers.append(header_name, header_value);
        }
        let secrets = spec.headers.values().map(String::as_str);
        let redactor = Redactor::new(Some(&url), secrets.chain(spec.oauth.secrets()));
        if headers.contains_key(http::header::AUTHORIZATION) {
            // reqwest turns user info into `Authorization: Basic`, which would
            // replace the header the config sets explicitly.
            let _ = url.set_username("");
            let _ = url.set_password(None);
        }
        Ok(Arc::new(Remote {
            server: server.to_owned(),
            shown: shown_url(&url),
            url,
            headers,
            redactor,
        }))
    }

    /// An error about this server; `message` is redacted.
    pub fn error(&self, status: Option<u16>, message: impl AsRef<str>) -> TransportError {
        TransportError::Remote {
            server: self.server.clone(),
            url: self.shown.clone(),
            status,
            message: self.redactor.redact(message.as_ref()).into_owned(),
        }
    }

    /// A timeout of this server; `message` (what did not happen in time)
    /// is redacted.
    pub fn timeout(&self, message: impl AsRef<str>) -> TransportError {
        TransportError::Timeout {
            server: self.server.clone(),
            url: self.shown.clone(),
            message: self.redactor.redact(message.as_ref()).into_owned(),
        }
    }

    /// An error for an HTTP answer with a failure `status`.
    pub fn status_error(&self, status: StatusCode, detail: Option<&str>) -> TransportError {
        let mut message = status_text(status);
        if let Some(detail) = detail.map(str::trim).filter(|d| !d.is_empty()) {
            message.push_str(": ");
            message.push_str(&one_line(detail, 200));
        }
        if let Some(hint) = status_hint(status) {
            message.push_str("; ");
            message.push_str(hint);
        }
        self.error(Some(status.as_u16()), message)
    }

    /// An error for a failed HTTP request.
    pub fn request_error(&self, error: &reqwest::Error) -> TransportError {
        if error.is_timeout() {
            return self.timeout(describe_reqwest_error(error));
        }
        self.error(
            error.status().map(|s| s.as_u16()),
            describe_reqwest_error(error),
        )
    }

    /// The HTTP client for this server: the config headers on every request,
    /// a connect timeout, rustls, only same-origin redirects (a redirect
    /// elsewhere would hand the headers to another host), and idle
    /// connections kept for reuse (see [`POOL_IDLE_TIMEOUT`]).
    ///
    /// hyper returns a connection to the pool only once its response body
    /// has been read to the end; one dropped half-read is closed, never
    /// reused, so a reused connection has no stale bytes in it.
    pub fn http_client(&self) -> Result<reqwest::Client, TransportError> {
        self.client_builder()
            .pool_idle_timeout(POOL_IDLE_TIMEOUT)
            .build()
            .map_err(|e| self.request_error(&e))
    }

    /// [`Remote::http_client`], but with a new connection for every request
    /// (for servers whose answers stall on reused connections).
    pub fn http_client_without_reuse(&self) -> Result<reqwest::Client, TransportError> {
        self.client_builder()
            .pool_max_idle_per_host(0)
            .build()
            .map_err(|e| self.request_error(&e))
    }

    fn client_builder(&self) -> reqwest::ClientBuilder {
        reqwest::Client::builder()
            .default_headers(self.headers.clone())
            .connect_timeout(CONNECT_TIMEOUT)
            // reqwest's default, stated because a request written in two
            // segments would wait for the server's delayed ACK.
            .tcp_nodelay(true)
            .redirect(same_origin_redirects())
    }
}

/// `HTTP 404 Not Found`.
pub fn status_text(status: StatusCode) -> String {
    match status.canonical_reason() {
        Some(reason) => format!("HTTP {} {reason}", status.as_u16()),
        None => format!("HTTP {}", status.as_u16()),
    }
}

/// What a user should check when a server answers `status`.
fn status_hint(status: StatusCode) -> Option<&'static str> {
    match status {
        StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN => {
            Some("check the credentials in the server's \"headers\" (e.g. Authorization)")
        }
        StatusCode::NOT_FOUND => Some("check the url"),
        _ => None,
    }
}

/// `text` on one line, cut to about `max` bytes (an HTML error page does not
/// belong in an error message whole).
pub fn one_line(text: &str, max: usize) -> String {
    let mut line: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if line.len() > max {
        let mut cut = max;
        while !line.is_char_boundary(cut) {
            cut -= 1;
        }
        line.truncate(cut);
        line.push('…');
    }
    line
}

/// A reqwest error as a short message without its URL: what failed and the
/// innermost cause ("connection refused", a TLS certificate problem, ...).
pub fn describe_reqwest_error(error: &reqwest::Error) -> String {
    let mut root = None;
    let mut next = error.source();
    while let Some(source) = next {
        root = Some(source);
        next = source.source();
    }
    let Some(root) = root else {
        return without_url(error);
    };
    let cause = root.to_string();
    if error.is_timeout() {
        "timed out".to_owned()
    } else if is_tls_error(error) {
        format!("{TLS_FAILED}{cause}")
    } else if error.is_connect() && cause.contains("refused") {
        format!("{CANNOT_CONNECT}{cause}; is the server running, and is the url right?")
    } else if error.is_connect() {
        format!("{CANNOT_CONNECT}{cause}")
    } else {
        format!("{}: {cause}", without_url(error))
    }
}

/// Whether a rustls error is somewhere in `error`'s chain (also inside
/// `io::Error`s, whose `source` skips the error they wrap).
pub fn is_tls_error(error: &(dyn std::error::Error + 'static)) -> bool {
    let mut next = Some(error);
    while let Some(error) = next {
        if error.is::<rustls::Error>() {
            return true;
        }
        if let Some(inner) = error
            .downcast_ref::<std::io::Error>()
            .and_then(|e| e.get_ref())
            && is_tls_error(inner)
        {
            return true;
        }
        next = error.source();
    }
    false
}

/// reqwest's text for `error` without the "for url (...)" part.
fn without_url(error: &reqwest::Error) -> String {
    let text = error.to_string();
    match text.find(" for url (") {
        Some(at) => text[..at].to_owned(),
        None => text,
    }
}

/// Follows 307/308 redirects to the same origin only: they keep method and
/// body, and do not send the config headers to another host.
fn same_origin_redirects() -> reqwest::redirect::Policy {
    reqwest::redirect::Policy::custom(|attempt| {
        let keeps_body = matches!(
            attempt.status(),
            StatusCode::TEMPORARY_REDIRECT | StatusCode::PERMANENT_REDIRECT
        );
        let same_origin = attempt
            .previous()
            .first()
            .is_some_and(|first| first.origin() == attempt.url().origin());
        if !keeps_body || !same_origin {
            attempt.stop()
        } else if attempt.previous().len() > MAX_REDIRECTS {
            attempt.error(format!("more than {MAX_REDIRECTS} redirects"))
        } else {
            attempt.follow()
        }
    })
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    fn spec(url: &str, headers: &[(&str, &str)]) -> RemoteSpec {
        RemoteSpec {
            url: url.to_owned(),
            headers: headers
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect::<BTreeMap<_, _>>()
                .into(),
            auto_detect: false,
            oauth: Default::default(),
        }
    }

    #[test]
    fn config_errors_name_the_server_and_never_show_values() {
        let err = Remote::new("ws", &spec("", &[]), "websocket", &["ws", "wss"]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "server \"ws\": websocket transport requires \"url\""
        );

        let err = Remote::new(
            "h",
            &spec("ftp://x/?token=sekrit", &[]),
            "http",
            &["http", "https"],
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("needs a http:// or https:// url"), "{err}");
        assert!(!err.contains("sekrit"), "{err}");

        let err = Remote::new(
            "h",
            &spec("http://x/", &[("Authorization", "Bearer abc\ndef")]),
            "http",
            &["http"],
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("\"Authorization\" is not valid"), "{err}");
        assert!(!err.contains("abc"), "{err}");

        let err = Remote::new(
            "h",
            &spec("http://x/", &[("Mcp-Session-Id", "1")]),
            "http",
            &["http"],
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("set by the http transport itself"), "{err}");
    }

    #[test]
    fn headers_are_sensitive_and_errors_are_redacted() {
        let remote = Remote::new(
            "h",
            &spec(
                "http://127.0.0.1:1/mcp?key=qsecret1",
                &[("Authorization", "Bearer hsecret2")],
            ),
            "http",
            &["http"],
        )
        .unwrap();
        assert!(!format!("{remote:?}").contains("hsecret2"));
        let err = remote
            .status_error(
                StatusCode::UNAUTHORIZED,
                Some("<html>bad token hsecret2 for key qsecret1</html>"),
            )
            .to_string();
        assert_eq!(
            err,
            "server \"h\": http://127.0.0.1:1/mcp?key=***: HTTP 401 Unauthorized: \
             <html>bad token *** for key ***</html>; check the credentials in the \
             server's \"headers\" (e.g. Authorization)"
        );
    }

    #[test]
    fn one_line_cuts_long_text() {
        assert_eq!(one_line("a\n  b", 10), "a b");
        assert_eq!(one_line("abcdef", 3), "abc…");
    }
}
