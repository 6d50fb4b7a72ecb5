//! [`RateLimitSettings`]: `"toolbridge": {"gateway": {"limits": {...}}}`,
//! how fast the gateway's clients may call and how many calls each
//! upstream server is given at once.
//!
//! ```json
//! { "toolbridge": { "gateway": { "limits": {
//!     "client":   { "perSecond": 20, "burst": 40 },
//!     "clients":  { "ci": { "perSecond": 100, "burst": 200 } },
//!     "tools":    { "github__create_*": { "perSecond": 1, "burst": 5 } },
//!     "upstream": { "inFlight": 16, "queue": 32 } } } } }
//! ```
//!
//! - `client`: a token bucket per client (each token name, OAuth subject,
//!   `admin`, `local`, `stdio`): `perSecond` calls on average, `burst` at
//!   once (default: `perSecond` rounded up).
//! - `clients`: the bucket of the clients named (a name matches a token's
//!   name or an OAuth subject; `token:NAME` / `oauth:SUB` one kind only),
//!   instead of `client`'s.
//! - `tools`: a bucket per tool whose gateway name (`{server}__{tool}`)
//!   matches the glob, shared by every client; the first glob that
//!   matches, in file order.
//! - `upstream`: at most `inFlight` calls at once to each upstream server,
//!   and at most `queue` more waiting for one of them (default 0); a call
//!   beyond that is refused at once.
//!
//! These are not the connection caps of `serve --max-*` (sessions and
//! requests in flight per client), which guard the gateway itself.

use serde_json::{Map, Value};

use super::{
    error::ConfigError, fields::Source, settings_keys::GATEWAY_KEY, span::Step, warning::nearest,
};
use crate::json_kind::kind_of;

/// The key of the limits in `"gateway"`.
pub const LIMITS_KEY: &str = "limits";

/// The keys `"limits"` reads.
const LIMITS_FIELDS: [&str; 4] = ["client", "clients", "tools", "upstream"];

/// The most calls per second a limit may name (a higher one is no limit).
const MAX_PER_SECOND: f64 = 1_000_000.0;

/// A token bucket: `per_second` on average, `burst` at once.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rate {
    /// Calls per second on average (`perSecond`, may be a fraction).
    pub per_second: f64,
    /// Calls at once after a quiet spell (`burst`).
    pub burst: u32,
}

// No NaN is ever read (`perSecond` must be above 0), so equality is total.
impl Eq for Rate {}

/// The bound on one upstream server's calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UpstreamBound {
    /// Calls at once (`inFlight`).
    pub in_flight: usize,
    /// Calls waiting beyond those (`queue`).
    pub queue: usize,
}

/// The gateway's rate limits; every part optional.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct RateLimitSettings {
    /// Each client's bucket (`client`).
    pub client: Option<Rate>,
    /// Named clients' own buckets (`clients`), in file order.
    pub clients: Vec<(String, Rate)>,
    /// Tools' buckets by glob (`tools`), in file order.
    pub tools: Vec<(String, Rate)>,
    /// The bound on each upstream server's calls (`upstream`).
    pub upstream: Option<UpstreamBound>,
}

impl RateLimitSettings {
    /// True when nothing is limited.
    pub fn is_empty(&self) -> bool {
        self.client.is_none()
            && self.clients.is_empty()
            && self.tools.is_empty()
            && self.upstream.is_none()
    }

    /// Reads `"limits"` (`value`) of the `"gateway"` object in `src`.
    pub(crate) fn parse(src: &Source<'_>, value: &Value) -> Result<RateLimitSettings, ConfigError> {
        let Value::Object(obj) = value else {
            return Err(invalid(
                src,
                &[],
                format!(
                    "\"gateway\".\"limits\" must be an object ({{\"client\": {{\"perSecond\": N, \
                     \"burst\": N}}}}), not {}",
                    kind_of(value)
                ),
            ));
        };
        if let Some(key) = obj.keys().find(|k| !LIMITS_FIELDS.contains(&k.as_str())) {
            let hint = match nearest(key, &LIMITS_FIELDS) {
                Some(meant) => format!("did you mean \"{meant}\"?"),
                None => format!("it takes {}", LIMITS_FIELDS.join(", ")),
            };
            return Err(invalid(
                src,
                &[Step::Key(key)],
                format!("\"gateway\".\"limits\" has no setting \"{key}\"; {hint}"),
            ));
        }
        let client = match obj.get("client").filter(|v| !v.is_null()) {
            None => None,
            Some(value) => Some(rate(src, &[Step::Key("client")], "client", value)?),
        };
        let named = |field: &'static str| -> Result<Vec<(String, Rate)>, ConfigError> {
            match obj.get(field).filter(|v| !v.is_null()) {
                None => Ok(Vec::new()),
                Some(Value::Object(entries)) => entries
                    .iter()
                    .map(|(name, value)| {
                        let steps = [Step::Key(field), Step::Key(name)];
                        let what = format!("{field}\".\"{name}");
                        Ok((name.clone(), rate(src, &steps, &what, value)?))
                    })
                    .collect(),
                Some(other) => Err(invalid(
                    src,
                    &[Step::Key(field)],
                    format!(
                        "\"gateway\".\"limits\".\"{field}\" must be an object of names to \
                         {{\"perSecond\": N, \"burst\": N}}, not {}",
                        kind_of(other)
                    ),
                )),
            }
        };
        let clients = named("clients")?;
        let tools = named("tools")?;
        for (name, _) in &tools {
            if let Err(e) = globset::Glob::new(name) {
                return Err(invalid(
                    src,
                    &[Step::Key("tools"), Step::Key(name)],
                    format!("\"gateway\".\"limits\".\"tools\": {name:?} is not a valid glob: {e}"),
                ));
            }
        }
        let upstream = match obj.get("upstream").filter(|v| !v.is_null()) {
            None => None,
            Some(value) => Some(upstream_bound(src, value)?),
        };
        Ok(RateLimitSettings {
            client,
            clients,
            tools,
            upstream,
        })
    }
}

/// `{"perSecond": N, "burst": N}` at `steps`.
fn rate(
    src: &Source<'_>,
    steps: &[Step<'_>],
    what: &str,
    value: &Value,
) -> Result<Rate, ConfigError> {
    let err = |extra: &[Step<'_>], message: String| {
        let mut full = steps.to_vec();
        full.extend_from_slice(extra);
        invalid(
            src,
            &full,
            format!("\"gateway\".\"limits\".\"{what}\" {message}"),
        )
    };
    let Value::Object(obj) = value else {
        return Err(err(
            &[],
            format!(
                "must be {{\"perSecond\": N, \"burst\": N}}, not {}",
                kind_of(value)
            ),
        ));
    };
    check_keys(obj, &["perSecond", "burst"]).map_err(|(key, hint)| {
        err(
            &[Step::Key(&key)],
            format!("has no setting \"{key}\"; {hint}"),
        )
    })?;
    let per_second = match obj.get("perSecond").and_then(Value::as_f64) {
        Some(n) if n > 0.0 && n <= MAX_PER_SECOND => n,
        _ => {
            return Err(err(
                &[Step::Key("perSecond")],
                format!(
                    "needs \"perSecond\": the calls per second on average, a number above 0 \
                     and at most {MAX_PER_SECOND}"
                ),
            ));
        }
    };
    let burst = match obj.get("burst").filter(|v| !v.is_null()) {
        None => per_second.ceil() as u32,
        Some(value) => match value.as_u64() {
            Some(n) if (1..=u64::from(u32::MAX)).contains(&n) => n as u32,
            _ => {
                return Err(err(
                    &[Step::Key("burst")],
                    "\"burst\" must be a whole number of calls, at least 1".into(),
                ));
            }
        },
    };
    Ok(Rate {
        per_second,
        burst: burst.max(1),
    })
}

/// `{"inFlight": N, "queue": N}`.
fn upstream_bound(src: &Source<'_>, value: &Value) -> Result<UpstreamBound, ConfigError> {
    let err = |extra: &[Step<'_>], message: String| {
        let mut full = vec![Step::Key("upstream")];
        full.extend_from_slice(extra);
        invalid(
            src,
            &full,
            format!("\"gateway\".\"limits\".\"upstream\" {message}"),
        )
    };
    let Value::Object(obj) = value else {
        return Err(err(
            &[],
            format!(
                "must be {{\"inFlight\": N, \"queue\": N}}, not {}",
                kind_of(value)
            ),
        ));
    };
    check_keys(obj, &["inFlight", "queue"]).map_err(|(key, hint)| {
        err(
            &[Step::Key(&key)],
            format!("has no setting \"{key}\"; {hint}"),
        )
    })?;
    let count = |key: &'static str, least: u64| -> Result<Option<usize>, ConfigError> {
        match obj.get(key).filter(|v| !v.is_null()) {
            None => Ok(None),
            Some(value) => match value.as_u64() {
                Some(n) if n >= least && n <= 1_000_000 => Ok(Some(n as usize)),
                _ => Err(err(
                    &[Step::Key(key)],
                    format!("\"{key}\" must be a whole number from {least} to 1000000"),
                )),
            },
        }
    };
    let Some(in_flight) = count("inFlight", 1)? else {
        return Err(err(
            &[],
            "needs \"inFlight\": how many calls each upstream server is given at once".into(),
        ));
    };
    Ok(UpstreamBound {
        in_flight,
        queue: count("queue", 0)?.unwrap_or(0),
    })
}

/// `Err((key, hint))` for the first key of `obj` not in `known`.
fn check_keys(obj: &Map<String, Value>, known: &[&'static str]) -> Result<(), (String, String)> {
    match obj.keys().find(|k| !known.contains(&k.as_str())) {
        None => Ok(()),
        Some(key) => {
            let hint = match nearest(key, known) {
                Some(meant) => format!("did you mean \"{meant}\"?"),
                None => format!("it takes {}", known.join(", ")),
            };
            Err((key.clone(), hint))
        }
    }
}

fn invalid(src: &Source<'_>, steps: &[Step<'_>], message: String) -> ConfigError {
    let mut full = vec![Step::Key(GATEWAY_KEY), Step::Key(LIMITS_KEY)];
    full.extend_from_slice(steps);
    src.invalid(None, Some(GATEWAY_KEY), &full, message)
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use crate::config::Config;

    fn parse(limits: &str) -> Result<Config, String> {
        let text = format!(
            r#"{{"toolbridge": {{"gateway": {{"limits": {limits}}}}}, "mcpServers": {{}}}}"#
        );
        Config::parse(Path::new("config.json"), text).map_err(|e| e.to_string())
    }

    #[test]
    fn the_limits_are_read() {
        let config = parse(
            r#"{"client": {"perSecond": 2.5}, "clients": {"ci": {"perSecond": 100, "burst": 200}},
                "tools": {"gh__*": {"perSecond": 1, "burst": 5}},
                "upstream": {"inFlight": 4, "queue": 8}}"#,
        )
        .expect("config");
        let limits = &config.settings().gateway.limits;
        let client = limits.client.expect("client");
        assert_eq!((client.per_second, client.burst), (2.5, 3));
        assert_eq!(limits.clients[0].0, "ci");
        assert_eq!(limits.clients[0].1.burst, 200);
        assert_eq!(limits.tools[0].0, "gh__*");
        let upstream = limits.upstream.expect("upstream");
        assert_eq!((upstream.in_flight, upstream.queue), (4, 8));
        let none = Config::parse(Path::new("c.json"), r#"{"mcpServers": {}}"#).unwrap();
        assert!(none.settings().gateway.limits.is_empty());
    }

    #[test]
    fn mistakes_name_the_limit() {
        let cases = [
            (r#"[]"#, "\"limits\" must be an object"),
            (
                r#"{"clinet": {}}"#,
                "no setting \"clinet\"; did you mean \"client\"?",
            ),
            (
                r#"{"client": {"burst": 3}}"#,
                "\"client\" needs \"perSecond\"",
            ),
            (r#"{"client": {"perSecond": 0}}"#, "above 0"),
            (
                r#"{"client": {"perSecond": 1, "burst": 0}}"#,
                "\"burst\" must be a whole number",
            ),
            (
                r#"{"client": {"perSecond": 1, "brust": 2}}"#,
                "did you mean \"burst\"?",
            ),
            (r#"{"clients": {"ci": 5}}"#, "\"clients\".\"ci\" must be"),
            (
                r#"{"tools": {"a[": {"perSecond": 1}}}"#,
                "is not a valid glob",
            ),
            (r#"{"upstream": {"queue": 3}}"#, "needs \"inFlight\""),
            (
                r#"{"upstream": {"inFlight": 0}}"#,
                "\"inFlight\" must be a whole number",
            ),
        ];
        for (limits, expected) in cases {
            let error = parse(limits).expect_err(limits);
            assert!(error.contains(expected), "{limits}: {error}");
            assert!(error.contains("config.json"), "{error}");
        }
    }
}
