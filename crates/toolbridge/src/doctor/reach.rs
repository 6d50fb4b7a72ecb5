//! Does a remote server answer at all?

use std::time::Duration;

#[cfg(feature = "http")]
use url::Url;

#[cfg(feature = "http")]
use crate::redact::Redactor;

/// Without the `http` feature no remote server can run, so no URL is tried.
#[cfg(not(feature = "http"))]
pub(super) async fn answers(_url: &str, _timeout: Duration) -> Result<(), String> {
    Err("not tried: this toolbridge was built without the \"http\" feature, which remote servers need".into())
}

/// Whether `url` answers an HTTP request at all (any status is an answer);
/// the reason when it does not, with the URL's secrets scrubbed from it.
#[cfg(feature = "http")]
pub(super) async fn answers(url: &str, timeout: Duration) -> Result<(), String> {
    // A WebSocket handshake is an HTTP request, so the same check applies.
    let url = if let Some(rest) = url.strip_prefix("ws://") {
        format!("http://{rest}")
    } else if let Some(rest) = url.strip_prefix("wss://") {
        format!("https://{rest}")
    } else {
        url.to_owned()
    };
    let redactor = Redactor::new(Url::parse(&url).ok().as_ref(), std::iter::empty());
    let client = reqwest::Client::builder()
        .connect_timeout(timeout)
        .timeout(timeout)
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .map_err(|e| format!("cannot make an HTTP client: {e}"))?;
    let reason = match client.get(&url).send().await {
        // Only the status line matters; the body (maybe an endless event
        // stream) is dropped unread.
        Ok(_) => return Ok(()),
        Err(e) if e.is_timeout() => {
            format!("no answer within {:.0} s", timeout.as_secs_f64().ceil())
        }
        Err(e) if e.is_builder() => format!("invalid URL: {}", root_cause(&e)),
        Err(e) => root_cause(&e),
    };
    Err(redactor.redact(&reason).into_owned())
}

/// The innermost error message (`connection refused`, `dns error: ...`).
#[cfg(feature = "http")]
fn root_cause(e: &(dyn std::error::Error + 'static)) -> String {
    let mut cause = e;
    while let Some(next) = cause.source() {
        cause = next;
    }
    cause.to_string()
}
