//! Keeping secrets out of errors and logs.
//!
//! A remote server's config carries secrets in two places: header values
//! (`Authorization: Bearer ...`) and the URL (a `?token=` query, `user:pass@`).
//! [`shown_url`] is the URL as errors and logs may show it, and a [`Redactor`]
//! scrubs those secrets from any text that came from elsewhere (a library's
//! error message, a server's error page) before it reaches an error or a log.

use std::borrow::Cow;

use url::Url;

/// What replaces a secret.
pub const MASK: &str = "***";

/// Secrets shorter than this are not searched for in free text: masking every
/// "1" or "on" in a message would make it unreadable and protect nothing.
/// (Short values are still masked where their position is known: in the URL.)
const MIN_SECRET_LEN: usize = 4;

/// Words of a header value that are not secret: the scheme of
/// `Authorization: Bearer <token>` and its kin.
const AUTH_SCHEMES: &[&str] = &["Bearer", "Basic", "Digest", "Token"];

/// `url` as it may be shown: user info and query values masked, fragment dropped.
///
/// `http://u:p@host/mcp?token=abc&x` becomes `http://***@host/mcp?token=***&x`.
pub fn shown_url(url: &Url) -> String {
    let mut out = format!("{}://", url.scheme());
    if !url.username().is_empty() || url.password().is_some() {
        out.push_str(MASK);
        out.push('@');
    }
    if let Some(host) = url.host_str() {
        out.push_str(host);
    }
    if let Some(port) = url.port() {
        out.push(':');
        out.push_str(&port.to_string());
    }
    out.push_str(url.path());
    if let Some(query) = url.query() {
        out.push('?');
        let pairs: Vec<String> = query
            .split('&')
            .map(|pair| match pair.split_once('=') {
                Some((name, _)) => format!("{name}={MASK}"),
                None => pair.to_owned(),
            })
            .collect();
        out.push_str(&pairs.join("&"));
    }
    out
}

/// Like [`shown_url`] for a URL that may not parse: an unparseable URL is not
/// shown at all, since where its secrets are cannot be known.
#[allow(dead_code)] // only its test uses it now that the module is private
pub fn shown_url_str(url: &str) -> String {
    match Url::parse(url) {
        Ok(url) => shown_url(&url),
        Err(_) => "<invalid url>".to_owned(),
    }
}

/// Removes known secret strings from text.
#[derive(Clone, Default)]
pub struct Redactor {
    /// The secrets, longest first so that a secret containing another is
    /// masked whole.
    secrets: Vec<String>,
}

impl std::fmt::Debug for Redactor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Redactor")
            .field("secrets", &self.secrets.len())
            .finish()
    }
}

impl Redactor {
    /// A redactor for the secrets in `url` (user info, query values) and in
    /// `header_values` (each value whole, and each of its words, so that the
    /// token of `Bearer <token>` is masked on its own too).
    pub fn new<'a>(url: Option<&Url>, header_values: impl IntoIterator<Item = &'a str>) -> Self {
        let mut secrets = Vec::new();
        for value in header_values {
            secrets.push(value.to_owned());
            secrets.extend(
                value
                    .split_whitespace()
                    .filter(|word| !AUTH_SCHEMES.iter().any(|s| s.eq_ignore_ascii_case(word)))
                    .map(str::to_owned),
            );
        }
        if let Some(url) = url {
            secrets.push(url.username().to_owned());
            if let Some(password) = url.password() {
                secrets.push(password.to_owned());
                // What HTTP clients make of user info: `Authorization: Basic <this>`.
                secrets.push(base64::Engine::encode(
                    &base64::engine::general_purpose::STANDARD,
                    format!("{}:{password}", url.username()),
                ));
            }
            if let Some(query) = url.query() {
                for pair in query.split('&') {
                    if let Some((_, raw)) = pair.split_once('=') {
                        secrets.push(raw.to_owned());
                    }
                }
            }
            for (_, decoded) in url.query_pairs() {
                secrets.push(decoded.into_owned());
            }
        }
        secrets.retain(|s| s.len() >= MIN_SECRET_LEN);
        secrets.sort_by(|a, b| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
        secrets.dedup();
        Redactor { secrets }
    }

    /// `text` with every known secret replaced by [`MASK`].
    pub fn redact<'t>(&self, text: &'t str) -> Cow<'t, str> {
        let mut text = Cow::Borrowed(text);
        for secret in &self.secrets {
            if text.contains(secret.as_str()) {
                text = Cow::Owned(text.replace(secret.as_str(), MASK));
            }
        }
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shown_url_masks_user_info_and_query_values() {
        let url = Url::parse("https://user:pa55@example.com:8443/mcp?token=abc&flag#frag").unwrap();
        assert_eq!(
            shown_url(&url),
            "https://***@example.com:8443/mcp?token=***&flag"
        );
        let plain = Url::parse("http://127.0.0.1:3001/sse").unwrap();
        assert_eq!(shown_url(&plain), "http://127.0.0.1:3001/sse");
    }

    #[test]
    fn unparseable_urls_are_not_shown() {
        assert_eq!(shown_url_str("not a url ?token=x"), "<invalid url>");
    }

    #[test]
    fn redactor_masks_header_values_their_words_and_url_secrets() {
        let url = Url::parse("http://bobby:hunter22@h/p?key=s%20ecret-q&n=1").unwrap();
        let r = Redactor::new(Some(&url), ["Bearer tok-123456"]);
        assert_eq!(
            r.redact("sent Bearer tok-123456 then tok-123456 to h/p?key=s%20ecret-q as bobby"),
            "sent *** then *** to h/p?key=*** as ***"
        );
        assert_eq!(r.redact("decoded s ecret-q"), "decoded ***");
        // base64("bobby:hunter22"), as in `Authorization: Basic`.
        assert_eq!(r.redact("Basic Ym9iYnk6aHVudGVyMjI="), "Basic ***");
        // Short values and the auth scheme are left alone in free text.
        assert_eq!(r.redact("n=1"), "n=1");
        assert_eq!(
            r.redact("WWW-Authenticate: Bearer"),
            "WWW-Authenticate: Bearer"
        );
    }
}
