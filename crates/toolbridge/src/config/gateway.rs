//! [`GatewaySettings`]: the gateway's part of the global settings,
//! `"toolbridge": {"gateway": {...}}`.
//!
//! ```json
//! { "toolbridge": { "gateway": { "oauth": {
//!     "issuer": "https://login.example.com",
//!     "resource": "https://tools.example.com",
//!     "audience": ["api://toolbridge"],
//!     "jwksUri": "https://login.example.com/keys",
//!     "scopes": ["tools.read", "tools.write"] },
//!   "tracing": { "otlpEndpoint": "http://127.0.0.1:4318" } } } }
//! ```

use serde_json::Value;

use super::{
    fields::Source,
    rate_limits::{LIMITS_KEY, RateLimitSettings},
    rules::{RULES_KEY, Rule, parse_rules},
    settings_keys::GATEWAY_KEY,
    span::Step,
};
use crate::{config::ConfigError, json_kind::kind_of};

/// The gateway's settings.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct GatewaySettings {
    /// The gateway as an OAuth 2.1 resource server (`oauth`).
    pub oauth: Option<GatewayOAuth>,
    /// Which clients may use which tools (`rules`, see [`Rule`]); empty:
    /// every client every tool.
    pub rules: Vec<Rule>,
    /// Rate limits and the upstreams' bound (`limits`).
    pub limits: RateLimitSettings,
    /// Where the gateway's traces go (`tracing`).
    pub tracing: GatewayTracing,
}

/// `"gateway": {"tracing": {...}}`: the OpenTelemetry traces of the
/// gateway's requests. Off unless an endpoint is set here or in the
/// environment (the gateway's `tracing_export` says the precedence).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct GatewayTracing {
    /// The OTLP/HTTP collector's base URL (`otlpEndpoint`, e.g.
    /// `http://127.0.0.1:4318`); spans go to its `/v1/traces`.
    pub otlp_endpoint: Option<String>,
}

/// `"gateway": {"oauth": {...}}`: the authorization server whose JWT access
/// tokens the gateway accepts.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct GatewayOAuth {
    /// The issuer (`issuer`): the tokens' `iss`, and where its metadata
    /// (`/.well-known/openid-configuration` or
    /// `/.well-known/oauth-authorization-server`) names its keys.
    pub issuer: String,
    /// The gateway's own address as its clients reach it (`resource`,
    /// scheme, host and port, e.g. `https://tools.example.com`): the
    /// resource of `/mcp` is this plus `/mcp`. Without it, the address the
    /// gateway listens on.
    pub resource: Option<String>,
    /// The `aud` values accepted instead of the resource's URL
    /// (`audience`, a string or an array), for issuers that name an API
    /// rather than the resource.
    pub audience: Vec<String>,
    /// Where the issuer's keys are (`jwksUri`), instead of its metadata's
    /// `jwks_uri`.
    pub jwks_uri: Option<String>,
    /// The scopes the gateway's metadata offers (`scopes`).
    pub scopes: Vec<String>,
}

impl GatewayOAuth {
    /// The settings of `issuer`, with nothing else set.
    pub fn new(issuer: impl Into<String>) -> GatewayOAuth {
        GatewayOAuth {
            issuer: issuer.into(),
            resource: None,
            audience: Vec::new(),
            jwks_uri: None,
            scopes: Vec::new(),
        }
    }
}

/// The keys of `"gateway"`.
const GATEWAY_FIELDS: [&str; 4] = ["oauth", RULES_KEY, LIMITS_KEY, "tracing"];

/// The keys of `"oauth"`.
const OAUTH_FIELDS: [&str; 5] = ["issuer", "resource", "audience", "jwksUri", "scopes"];

impl GatewaySettings {
    /// Reads `value`, the `"gateway"` object of the `"toolbridge"`
    /// settings in `src`.
    pub(crate) fn parse(src: &Source<'_>, value: &Value) -> Result<Self, ConfigError> {
        let at = |steps: &[&str], message: String| {
            let mut full = vec![Step::Key(GATEWAY_KEY)];
            full.extend(steps.iter().map(|s| Step::Key(s)));
            src.invalid(None, Some(GATEWAY_KEY), &full, message)
        };
        let Value::Object(obj) = value else {
            return Err(at(
                &[],
                format!("\"gateway\" must be an object, not {}", kind_of(value)),
            ));
        };
        // A mistyped security setting must not pass unnoticed: unknown keys
        // are errors here, not warnings.
        if let Some(unknown) = obj.keys().find(|k| !GATEWAY_FIELDS.contains(&k.as_str())) {
            return Err(at(
                &[unknown],
                format!(
                    "\"gateway\" has no setting {unknown:?}; it takes {}",
                    GATEWAY_FIELDS.join(", ")
                ),
            ));
        }
        let rules = match obj.get(RULES_KEY).filter(|v| !v.is_null()) {
            Some(value) => parse_rules(src, value)?,
            None => Vec::new(),
        };
        let limits = match obj.get(LIMITS_KEY).filter(|v| !v.is_null()) {
            Some(value) => RateLimitSettings::parse(src, value)?,
            None => RateLimitSettings::default(),
        };
        let tracing = match obj.get("tracing").filter(|v| !v.is_null()) {
            None => GatewayTracing::default(),
            Some(value) => parse_tracing(value).map_err(|(key, message)| {
                let steps: Vec<&str> = ["tracing"].into_iter().chain(key).collect();
                at(&steps, message)
            })?,
        };
        let Some(oauth) = obj.get("oauth").filter(|v| !v.is_null()) else {
            return Ok(GatewaySettings {
                oauth: None,
                rules,
                limits,
                tracing,
            });
        };
        let Value::Object(oauth) = oauth else {
            return Err(at(
                &["oauth"],
                format!(
                    "\"gateway\".\"oauth\" must be an object with \"issuer\", not {}",
                    kind_of(oauth)
                ),
            ));
        };
        if let Some(unknown) = oauth.keys().find(|k| !OAUTH_FIELDS.contains(&k.as_str())) {
            return Err(at(
                &["oauth", unknown],
                format!(
                    "\"gateway\".\"oauth\" has no setting {unknown:?}; it takes {}",
                    OAUTH_FIELDS.join(", ")
                ),
            ));
        }
        let string = |key: &str| -> Result<Option<String>, ConfigError> {
            match oauth.get(key).filter(|v| !v.is_null()) {
                None => Ok(None),
                Some(Value::String(s)) if !s.trim().is_empty() => Ok(Some(s.trim().to_owned())),
                Some(other) => Err(at(
                    &["oauth", key],
                    format!(
                        "\"gateway\".\"oauth\".\"{key}\" must be a non-empty string, not {}",
                        kind_of(other)
                    ),
                )),
            }
        };
        let strings = |key: &str| -> Result<Vec<String>, ConfigError> {
            match oauth.get(key).filter(|v| !v.is_null()) {
                None => Ok(Vec::new()),
                Some(Value::String(s)) => Ok(vec![s.clone()]),
                Some(Value::Array(items)) if items.iter().all(Value::is_string) => Ok(items
                    .iter()
                    .filter_map(|i| i.as_str().map(str::to_owned))
                    .collect()),
                Some(_) => Err(at(
                    &["oauth", key],
                    format!(
                        "\"gateway\".\"oauth\".\"{key}\" must be a string or an array of strings"
                    ),
                )),
            }
        };
        let url = |key: &str| -> Result<Option<String>, ConfigError> {
            let Some(value) = string(key)? else {
                return Ok(None);
            };
            check_url(&value).map_err(|why| {
                at(
                    &["oauth", key],
                    format!("\"gateway\".\"oauth\".\"{key}\" ({value}) {why}"),
                )
            })?;
            Ok(Some(value))
        };
        let Some(issuer) = url("issuer")? else {
            return Err(at(
                &["oauth"],
                "\"gateway\".\"oauth\" needs \"issuer\": the URL of the authorization server \
                 whose tokens the gateway accepts"
                    .into(),
            ));
        };
        Ok(GatewaySettings {
            oauth: Some(GatewayOAuth {
                issuer,
                resource: url("resource")?,
                audience: strings("audience")?,
                jwks_uri: url("jwksUri")?,
                scopes: strings("scopes")?,
            }),
            rules,
            limits,
            tracing,
        })
    }
}

/// `"tracing"`'s object; an error names the key at fault (if one) and says
/// what the key takes.
fn parse_tracing(value: &Value) -> Result<GatewayTracing, (Option<&str>, String)> {
    let Value::Object(obj) = value else {
        return Err((
            None,
            format!(
                "\"gateway\".\"tracing\" must be an object with \"otlpEndpoint\", not {}",
                kind_of(value)
            ),
        ));
    };
    if let Some(unknown) = obj.keys().find(|k| k.as_str() != "otlpEndpoint") {
        return Err((
            Some(unknown),
            format!(
                "\"gateway\".\"tracing\" has no setting {unknown:?}; it takes \"otlpEndpoint\""
            ),
        ));
    }
    let endpoint = match obj.get("otlpEndpoint").filter(|v| !v.is_null()) {
        None => None,
        Some(Value::String(s)) => {
            let s = s.trim();
            let url = url::Url::parse(s).map_err(|e| {
                (
                    Some("otlpEndpoint"),
                    format!("\"gateway\".\"tracing\".\"otlpEndpoint\" ({s}) is not a URL: {e}"),
                )
            })?;
            if !matches!(url.scheme(), "http" | "https") || url.host().is_none() {
                return Err((
                    Some("otlpEndpoint"),
                    format!(
                        "\"gateway\".\"tracing\".\"otlpEndpoint\" ({s}) must be an http or https \
                         URL with a host, the OTLP/HTTP collector's base (e.g. http://127.0.0.1:4318)"
                    ),
                ));
            }
            Some(s.to_owned())
        }
        Some(other) => {
            return Err((
                Some("otlpEndpoint"),
                format!(
                    "\"gateway\".\"tracing\".\"otlpEndpoint\" must be a URL string, not {}",
                    kind_of(other)
                ),
            ));
        }
    };
    Ok(GatewayTracing {
        otlp_endpoint: endpoint,
    })
}

/// An `https` URL, or `http` to a loopback host (tokens and keys must not
/// travel in the clear).
fn check_url(value: &str) -> Result<(), String> {
    let url = url::Url::parse(value).map_err(|e| format!("is not a URL: {e}"))?;
    let loopback = match url.host() {
        Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        None => return Err("has no host".into()),
    };
    match url.scheme() {
        "https" => Ok(()),
        "http" if loopback => Ok(()),
        "http" => Err("must use https (http only to a loopback host)".into()),
        other => Err(format!("must be an https URL, not {other}:")),
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use crate::config::Config;

    fn parse(text: &str) -> Result<Config, String> {
        Config::parse(Path::new("config.json"), text).map_err(|e| e.to_string())
    }

    #[test]
    fn the_oauth_settings_are_read() {
        let config = parse(
            r#"{"toolbridge": {"gateway": {"oauth": {"issuer": "https://login.example.com",
                "resource": "https://tools.example.com", "audience": "api://tb",
                "scopes": ["read", "write"]}}}, "mcpServers": {}}"#,
        )
        .expect("config");
        let oauth = config.settings().gateway.oauth.clone().expect("oauth");
        assert_eq!(oauth.issuer, "https://login.example.com");
        assert_eq!(oauth.resource.as_deref(), Some("https://tools.example.com"));
        assert_eq!(oauth.audience, ["api://tb"]);
        assert_eq!(oauth.scopes, ["read", "write"]);
        assert_eq!(oauth.jwks_uri, None);
        let none = parse(r#"{"mcpServers": {}}"#).expect("config");
        assert_eq!(none.settings().gateway.oauth, None);
    }

    #[test]
    fn mistakes_name_the_setting() {
        let cases = [
            (r#"{"oauth": {}}"#, "needs \"issuer\""),
            (
                r#"{"oauth": {"issuer": "http://login.example.com"}}"#,
                "must use https",
            ),
            (
                r#"{"oauth": {"issuer": "https://a.example", "audiance": "x"}}"#,
                "\"audiance\"",
            ),
            (
                r#"{"oauth": {"issuer": 3}}"#,
                "\"issuer\" must be a non-empty string",
            ),
            (r#"{"oath": {}}"#, "no setting \"oath\""),
            (r#"[]"#, "\"gateway\" must be an object"),
        ];
        for (gateway, expected) in cases {
            let text = format!(r#"{{"toolbridge": {{"gateway": {gateway}}}, "mcpServers": {{}}}}"#);
            let error = parse(&text).expect_err(gateway);
            assert!(error.contains(expected), "{gateway}: {error}");
            assert!(error.contains("config.json"), "{error}");
        }
        parse(r#"{"toolbridge": {"gateway": {"oauth": {"issuer": "http://127.0.0.1:9/"}}}}"#)
            .expect("http to loopback is allowed");
    }

    #[test]
    fn the_tracing_endpoint_is_read_and_mistakes_are_named() {
        let config = parse(
            r#"{"toolbridge": {"gateway": {"tracing": {"otlpEndpoint": " http://127.0.0.1:4318 "}}},
                "mcpServers": {}}"#,
        )
        .expect("config");
        let tracing = &config.settings().gateway.tracing;
        assert_eq!(
            tracing.otlp_endpoint.as_deref(),
            Some("http://127.0.0.1:4318")
        );
        let none = parse(r#"{"mcpServers": {}}"#).expect("config");
        assert_eq!(none.settings().gateway.tracing.otlp_endpoint, None);
        let cases = [
            (r#"{"tracing": []}"#, "\"tracing\" must be an object"),
            (
                r#"{"tracing": {"endpoint": "x"}}"#,
                "no setting \"endpoint\"",
            ),
            (
                r#"{"tracing": {"otlpEndpoint": 4318}}"#,
                "must be a URL string",
            ),
            (
                r#"{"tracing": {"otlpEndpoint": "grpc://127.0.0.1:4317"}}"#,
                "must be an http or https",
            ),
            (
                r#"{"tracing": {"otlpEndpoint": "not a url"}}"#,
                "is not a URL",
            ),
        ];
        for (gateway, expected) in cases {
            let text = format!(r#"{{"toolbridge": {{"gateway": {gateway}}}, "mcpServers": {{}}}}"#);
            let error = parse(&text).expect_err(gateway);
            assert!(error.contains(expected), "{gateway}: {error}");
            assert!(error.contains("config.json"), "{error}");
        }
    }
}
