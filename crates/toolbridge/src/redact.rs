//! Keeping secrets out of what toolbridge shows: listings, `doctor`'s
//! findings, errors and logs.
//!
//! Two tools, one policy:
//!
//! - Masking by position: [`mask_url`] and [`mask_args`] hide the parts of a
//!   URL or an argument list that are secrets by where they sit (a password
//!   before `@`, a `?token=` value, the value after `--api-key`). They work
//!   on values as written in the config (`https://${HOST}/mcp?key=${KEY}`)
//!   and on expanded ones alike; [`shown_url`] is [`mask_url`] for a parsed
//!   URL. Every env and header value is a secret and is shown as [`MASK`].
//! - Scrubbing by value: a [`Redactor`] knows a server's expanded secrets
//!   (header values, the URL's user info and query values) and removes them
//!   from text that came from elsewhere (a library's error message, a
//!   server's error page) before it reaches an error or a log.
//!
//! Masking errs on the side of hiding: a harmless value shown as `***` costs
//! a look at the file; a token shown in a terminal or a log is leaked.

use std::borrow::Cow;

use url::Url;

use crate::config::{ServerSpec, TransportSpec};

/// What a hidden value is shown as.
pub const MASK: &str = "***";

/// `url` with its secrets replaced by [`MASK`]: the password (or a lone
/// user name, usually a token) before `@`, and query or fragment values
/// whose name looks like a credential (`key`, `token`, `secret`, `auth`,
/// `password`, `session`, `sig`, ...) or whose value looks like a token.
/// Works on unexpanded URLs (`https://${HOST}/mcp?key=${KEY}`) too.
pub fn mask_url(url: &str) -> String {
    let (before_fragment, fragment) = match url.split_once('#') {
        Some((before, fragment)) => (before, Some(fragment)),
        None => (url, None),
    };
    let (base, query) = match before_fragment.split_once('?') {
        Some((base, query)) => (base, Some(query)),
        None => (before_fragment, None),
    };
    let mut out = mask_userinfo(base);
    if let Some(query) = query {
        out.push('?');
        out.push_str(&mask_pairs(query));
    }
    if let Some(fragment) = fragment {
        out.push('#');
        out.push_str(&mask_pairs(fragment));
    }
    out
}

/// `url` as errors and logs may show it: [`mask_url`] of its text.
pub fn shown_url(url: &Url) -> String {
    mask_url(url.as_str())
}

/// `args` with secrets masked: the value of a secret-looking flag
/// (`--api-key X`, `--token=X`), a secret-looking `Name: value` header
/// (`Authorization: Bearer X`, as `mcp-remote --header` takes it), the
/// secrets in URLs, and a bare argument that is a key by its look
/// (`looks_like_key`: `sk-live-…`, a long hex string, a long mix of
/// upper- and lower-case letters and digits).
pub fn mask_args(args: &[String]) -> Vec<String> {
    let mut out = Vec::with_capacity(args.len());
    let mut mask_next = false;
    for arg in args {
        if mask_next && !arg.starts_with('-') {
            out.push(MASK.to_string());
            mask_next = false;
            continue;
        }
        mask_next = false;
        if arg.starts_with('-') {
            match arg.split_once('=') {
                Some((flag, _)) if looks_secret_name(flag) => out.push(format!("{flag}={MASK}")),
                Some(_) => out.push(arg.clone()),
                None => {
                    mask_next = looks_secret_name(arg);
                    out.push(arg.clone());
                }
            }
        } else if arg.contains("://") {
            out.push(mask_url(arg));
        } else if let Some((name, _)) = arg
            .split_once(':')
            .filter(|(name, _)| !name.is_empty() && !name.contains(' ') && looks_secret_name(name))
        {
            out.push(format!("{name}: {MASK}"));
        } else if looks_like_key(arg) {
            out.push(MASK.to_string());
        } else {
            out.push(arg.clone());
        }
    }
    out
}

/// The beginnings of well-known API keys and tokens (OpenAI, Anthropic,
/// Stripe, GitHub, GitLab, Slack, Hugging Face, AWS, Google).
const KEY_PREFIXES: [&str; 14] = [
    "sk-",
    "sk_",
    "pk_live_",
    "rk_live_",
    "ghp_",
    "gho_",
    "ghs_",
    "github_pat_",
    "glpat-",
    "xoxb-",
    "xoxp-",
    "hf_",
    "AKIA",
    "AIza",
];

/// True for a bare argument that is a key by its look alone: a known key
/// prefix and 16 characters or more; or 20 or more token characters (no
/// `/`: paths and package names are not keys) mixing upper- and lower-case
/// letters and digits; or 32 hex digits or more.
fn looks_like_key(arg: &str) -> bool {
    let token_chars = arg
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "-_.~+=".contains(c));
    if !token_chars {
        return false;
    }
    let known = arg.len() >= 16 && KEY_PREFIXES.iter().any(|p| arg.starts_with(p));
    let mixed = arg.len() >= 20
        && arg.chars().any(|c| c.is_ascii_uppercase())
        && arg.chars().any(|c| c.is_ascii_lowercase())
        && arg.chars().any(|c| c.is_ascii_digit());
    let hex = arg.len() >= 32 && arg.chars().all(|c| c.is_ascii_hexdigit());
    known || mixed || hex
}

/// True when a flag, header, query or variable name suggests a credential.
pub(crate) fn looks_secret_name(name: &str) -> bool {
    let name: String = name
        .chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .map(|c| c.to_ascii_lowercase())
        .collect();
    const PARTS: [&str; 9] = [
        "key",
        "token",
        "secret",
        "pass",
        "pwd",
        "auth",
        "credential",
        "session",
        "cookie",
    ];
    PARTS.iter().any(|part| name.contains(part))
        || matches!(name.as_str(), "sig" | "signature" | "code")
}

/// True for a long opaque value that mixes letters and digits, like an API
/// key or a signed token.
fn looks_like_token(value: &str) -> bool {
    value.len() >= 20
        && value
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.~+/=%".contains(c))
        && value.chars().any(|c| c.is_ascii_alphabetic())
        && value.chars().any(|c| c.is_ascii_digit())
}

fn mask_pairs(pairs: &str) -> String {
    pairs
        .split('&')
        .map(|pair| match pair.split_once('=') {
            Some((name, value)) if looks_secret_name(name) || looks_like_token(value) => {
                format!("{name}={MASK}")
            }
            Some(_) => pair.to_string(),
            None if looks_like_token(pair) => MASK.to_string(),
            None => pair.to_string(),
        })
        .collect::<Vec<_>>()
        .join("&")
}

fn mask_userinfo(base: &str) -> String {
    let Some(scheme_end) = base.find("://") else {
        return base.to_string();
    };
    let authority_start = scheme_end + 3;
    let authority_end = base[authority_start..]
        .find('/')
        .map_or(base.len(), |i| authority_start + i);
    let authority = &base[authority_start..authority_end];
    let Some(at) = authority.rfind('@') else {
        return base.to_string();
    };
    let userinfo = &authority[..at];
    let masked = match userinfo.split_once(':') {
        Some((user, _)) => format!("{user}:{MASK}"),
        None => MASK.to_string(),
    };
    format!(
        "{}{masked}{}",
        &base[..authority_start],
        &base[authority_start + at..]
    )
}

/// Secrets shorter than this are not searched for in free text: masking every
/// "1" or "on" in a message would make it unreadable and protect nothing.
/// (Short values are still masked where their position is known: in the URL.)
const MIN_SECRET_LEN: usize = 4;

/// Words of a header value that are not secret: the scheme of
/// `Authorization: Bearer <token>` and its kin.
const AUTH_SCHEMES: &[&str] = &["Bearer", "Basic", "Digest", "Token"];

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

    /// A redactor for a server's secrets: its env and header values, its
    /// URL's, its `oauth` secrets, and the arguments [`mask_args`] hides. For text that came from
    /// the server (its stderr, an error page): a server echoing its API key
    /// must not get it shown by toolbridge.
    pub fn for_server(spec: &ServerSpec) -> Redactor {
        match &spec.transport {
            TransportSpec::Stdio(stdio) => {
                let masked = mask_args(&stdio.args);
                let hidden = stdio
                    .args
                    .iter()
                    .zip(&masked)
                    .filter(|(arg, shown)| arg != shown)
                    .map(|(arg, _)| arg.as_str());
                Redactor::new(None, stdio.env.values().map(String::as_str).chain(hidden))
            }
            TransportSpec::Http(remote)
            | TransportSpec::Sse(remote)
            | TransportSpec::WebSocket(remote) => {
                let url = Url::parse(&remote.url).ok();
                let secrets = remote.headers.values().map(String::as_str);
                Redactor::new(url.as_ref(), secrets.chain(remote.oauth.secrets()))
            }
        }
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
    fn url_query_credentials_are_masked_and_the_rest_kept() {
        assert_eq!(
            mask_url("https://x.com/mcp?api_key=abc&page=2&token=t#frag"),
            "https://x.com/mcp?api_key=***&page=2&token=***#frag"
        );
        assert_eq!(
            mask_url("https://x.com/sse?sessionId=42"),
            "https://x.com/sse?sessionId=***"
        );
        assert_eq!(
            mask_url("https://${HOST}/mcp?key=${KEY}"),
            "https://${HOST}/mcp?key=***"
        );
    }

    #[test]
    fn token_looking_query_values_are_masked_whatever_their_name() {
        assert_eq!(
            mask_url("https://x.com/mcp?x=ghp_a1b2c3d4e5f6g7h8i9j0&lang=en"),
            "https://x.com/mcp?x=***&lang=en"
        );
    }

    #[test]
    fn passwords_and_lone_user_tokens_in_urls_are_masked() {
        assert_eq!(
            mask_url("https://user:pw@host:8080/p?q=1"),
            "https://user:***@host:8080/p?q=1"
        );
        assert_eq!(mask_url("wss://tok@host/ws"), "wss://***@host/ws");
        assert_eq!(
            mask_url("http://127.0.0.1:8000/sse"),
            "http://127.0.0.1:8000/sse"
        );
    }

    #[test]
    fn secret_flags_headers_and_urls_in_args_are_masked() {
        let args: Vec<String> = [
            "-y",
            "server",
            "--api-key",
            "sk-1",
            "--token=t",
            "--port",
            "80",
            "Authorization: Bearer x",
            "https://h/mcp?key=k",
            "/home/me/project-2024/index.js",
        ]
        .map(String::from)
        .to_vec();
        assert_eq!(
            mask_args(&args),
            [
                "-y",
                "server",
                "--api-key",
                "***",
                "--token=***",
                "--port",
                "80",
                "Authorization: ***",
                "https://h/mcp?key=***",
                "/home/me/project-2024/index.js",
            ]
        );
    }

    /// Issue 32's fifteenth finding: a key passed as a bare argument was
    /// shown as it is.
    #[test]
    fn a_bare_key_argument_is_masked_and_ordinary_arguments_are_kept() {
        let key = "sk-live-4f9a8b7c6d5e4f3a2b1c";
        let args: Vec<String> = [
            "server",
            key,
            "ghp_16C7e42F292c6912E7710c838347Ae178B4a",
            "0123456789abcdef0123456789abcdef",
            "AbCdEfGhIj0123456789Kl",
            "@modelcontextprotocol/server-everything",
            "mcp-server-fetch-2024-11-05",
            "/srv/Data2024/ProjectFiles/index.js",
            "--port",
            "8080",
        ]
        .map(String::from)
        .to_vec();
        assert_eq!(
            mask_args(&args),
            [
                "server",
                "***",
                "***",
                "***",
                "***",
                "@modelcontextprotocol/server-everything",
                "mcp-server-fetch-2024-11-05",
                "/srv/Data2024/ProjectFiles/index.js",
                "--port",
                "8080",
            ]
        );
        // And the one redaction hides it in what a server prints.
        let spec = crate::config::ServerSpec::stdio("s", "srv", ["run", key]);
        let redactor = Redactor::for_server(&spec);
        assert_eq!(redactor.redact(&format!("bad key {key}")), "bad key ***");
    }

    #[test]
    fn a_parsed_url_is_masked_by_the_same_rules() {
        let url = Url::parse("https://user:pa55@example.com:8443/mcp?token=abc&flag#frag").unwrap();
        assert_eq!(
            shown_url(&url),
            "https://user:***@example.com:8443/mcp?token=***&flag#frag"
        );
        let plain = Url::parse("http://127.0.0.1:3001/sse").unwrap();
        assert_eq!(shown_url(&plain), "http://127.0.0.1:3001/sse");
    }

    #[test]
    fn unparseable_urls_are_masked_too() {
        assert_eq!(mask_url("not a url ?token=x"), "not a url ?token=***");
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
