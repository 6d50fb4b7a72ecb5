//! Hiding secrets when showing a config: header and env values, passwords
//! and tokens in URLs, secret-looking arguments.
//!
//! Masking errs on the side of hiding: a harmless value shown as `***` costs
//! a look at the file; a token shown in a terminal or a log is leaked.

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

/// `args` with secrets masked: the value of a secret-looking flag
/// (`--api-key X`, `--token=X`), a secret-looking `Name: value` header
/// (`Authorization: Bearer X`, as `mcp-remote --header` takes it) and the
/// secrets in URLs.
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
        } else {
            out.push(arg.clone());
        }
    }
    out
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
}
