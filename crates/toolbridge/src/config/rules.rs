//! [`Rule`]: one entry of `"toolbridge": {"gateway": {"rules": [...]}}`,
//! which tools of the gateway a kind of client may list and call.
//!
//! ```json
//! { "toolbridge": { "gateway": { "rules": [
//!     { "clients": ["ci"], "allow": ["github__*", "!github__delete_*"] },
//!     { "profiles": ["ops"], "scopes": ["tools.write"], "allow": ["fs__write_*"] },
//!     { "claims": {"groups": "admins"}, "allow": ["*"] } ] } } }
//! ```
//!
//! A rule applies to a request when each condition it has holds:
//! `clients` names the client (a token's name or an OAuth subject, or
//! `token:NAME` / `oauth:SUB` for one kind only), `profiles` the profile
//! it came through (`/mcp/NAME`), `scopes` are all among its OAuth scopes,
//! `claims` each equal its token's claim (or are among the claim's items
//! when the claim is an array). `allow` globs match the gateway's tool
//! names, `{server}__{tool}` as the server gives the tool (a profile's
//! rename does not change what a rule means), `!GLOB` excludes. The
//! gateway applies them (its `rights` module): with no rules,
//! every client may use every tool; with rules, a named-token or OAuth
//! client may use a tool only when a rule that applies to it allows it.
//! The rules are checked when the file loads: a mistake names the rule by
//! its index and the field.

use serde_json::{Map, Value};

use super::{
    error::ConfigError, fields::Source, profile::ToolGlobs, settings_keys::GATEWAY_KEY, span::Step,
    warning::nearest,
};
use crate::json_kind::kind_of;

/// The key of the rules in `"gateway"`.
pub const RULES_KEY: &str = "rules";

/// The keys a rule reads.
const RULE_FIELDS: [&str; 5] = ["clients", "profiles", "scopes", "claims", "allow"];

/// One rule, checked.
#[derive(Clone)]
pub struct Rule {
    /// Its place in `"rules"` (from 0), to name it in messages.
    pub index: usize,
    /// The clients it applies to (names, `token:NAME`, `oauth:SUB`); empty
    /// means every client.
    pub clients: Vec<String>,
    /// The profiles it applies to; empty means every path (`/mcp` too).
    pub profiles: Vec<String>,
    /// The OAuth scopes a client needs, all of them, for the rule to apply.
    pub scopes: Vec<String>,
    /// The claims a client's token needs, each with its value.
    pub claims: Vec<(String, Value)>,
    /// The `allow` globs as written, `!` exclusions included.
    pub allow: Vec<String>,
    globs: ToolGlobs,
}

impl Rule {
    /// True when `allow` lets tool `name` (`{server}__{tool}`) through.
    pub fn allows_tool(&self, name: &str) -> bool {
        self.globs.matches(name)
    }

    /// How the rule is named in messages: `toolbridge.gateway.rules[N]`.
    pub fn label(&self) -> String {
        format!("toolbridge.gateway.rules[{}]", self.index)
    }
}

impl PartialEq for Rule {
    /// Equal when written the same (the globs follow from `allow`).
    fn eq(&self, other: &Self) -> bool {
        self.index == other.index
            && self.clients == other.clients
            && self.profiles == other.profiles
            && self.scopes == other.scopes
            && self.claims == other.claims
            && self.allow == other.allow
    }
}

impl Eq for Rule {}

impl std::fmt::Debug for Rule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Rule")
            .field("index", &self.index)
            .field("clients", &self.clients)
            .field("profiles", &self.profiles)
            .field("scopes", &self.scopes)
            .field("claims", &self.claims)
            .field("allow", &self.allow)
            .finish()
    }
}

/// Reads `"rules"` (`value`) of the `"gateway"` object in `src`.
pub(crate) fn parse_rules(src: &Source<'_>, value: &Value) -> Result<Vec<Rule>, ConfigError> {
    let Value::Array(items) = value else {
        return Err(invalid(
            src,
            &[],
            format!(
                "\"gateway\".\"rules\" must be an array of rules ([{{\"clients\": [...], \
                 \"allow\": [...]}}]), not {}",
                kind_of(value)
            ),
        ));
    };
    items
        .iter()
        .enumerate()
        .map(|(index, item)| parse_rule(src, index, item))
        .collect()
}

fn parse_rule(src: &Source<'_>, index: usize, value: &Value) -> Result<Rule, ConfigError> {
    let at = |steps: &[Step<'_>], message: String| {
        let mut full = vec![Step::Index(index)];
        full.extend_from_slice(steps);
        invalid(
            src,
            &full,
            format!("toolbridge.gateway.rules[{index}]: {message}"),
        )
    };
    let Value::Object(obj) = value else {
        return Err(at(
            &[],
            format!(
                "a rule must be an object ({{\"clients\": [...], \"allow\": [...]}}), not {}",
                kind_of(value)
            ),
        ));
    };
    if let Some(key) = obj.keys().find(|k| !RULE_FIELDS.contains(&k.as_str())) {
        let hint = match nearest(key, &RULE_FIELDS) {
            Some(meant) => format!("did you mean \"{meant}\"?"),
            None => format!("a rule has {}", RULE_FIELDS.join(", ")),
        };
        // An unknown key could be a condition mistyped: the rule would
        // apply more widely than written, so it is an error.
        return Err(at(
            &[Step::Key(key)],
            format!("unknown key \"{key}\"; {hint}"),
        ));
    }
    let strings = |field: &'static str| -> Result<Vec<String>, ConfigError> {
        match obj.get(field) {
            None | Some(Value::Null) => Ok(Vec::new()),
            Some(Value::Array(items)) => items
                .iter()
                .enumerate()
                .map(|(i, item)| match item {
                    Value::String(s) if !s.trim().is_empty() => Ok(s.trim().to_owned()),
                    other => Err(at(
                        &[Step::Key(field), Step::Index(i)],
                        format!(
                            "\"{field}\" must be an array of non-empty strings; item {i} is {}",
                            kind_of(other)
                        ),
                    )),
                })
                .collect(),
            Some(other) => Err(at(
                &[Step::Key(field)],
                format!(
                    "\"{field}\" must be an array of strings, not {}",
                    kind_of(other)
                ),
            )),
        }
    };
    let clients = strings("clients")?;
    let profiles = strings("profiles")?;
    let scopes = strings("scopes")?;
    let allow = strings("allow")?;
    if allow.is_empty() {
        return Err(at(
            &[Step::Key("allow")],
            "needs \"allow\": the tools it lets its clients use, as globs over the gateway's \
             names ({server}__{tool}, `!` excludes)"
                .into(),
        ));
    }
    let globs = ToolGlobs::compile(&allow).map_err(|(i, why)| {
        let steps = match i {
            Some(i) => vec![Step::Key("allow"), Step::Index(i)],
            None => vec![Step::Key("allow")],
        };
        at(&steps, format!("\"allow\": {why}"))
    })?;
    let claims = match obj.get("claims") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Object(claims)) => claim_values(claims).map_err(|(key, why)| {
            at(
                &[Step::Key("claims"), Step::Key(&key)],
                format!("\"claims\".\"{key}\" {why}"),
            )
        })?,
        Some(other) => {
            return Err(at(
                &[Step::Key("claims")],
                format!(
                    "\"claims\" must be an object of claim names to values, not {}",
                    kind_of(other)
                ),
            ));
        }
    };
    Ok(Rule {
        index,
        clients,
        profiles,
        scopes,
        claims,
        allow,
        globs,
    })
}

/// The claims a rule asks for: each a string, number or boolean.
fn claim_values(claims: &Map<String, Value>) -> Result<Vec<(String, Value)>, (String, String)> {
    claims
        .iter()
        .map(|(key, value)| match value {
            Value::String(_) | Value::Number(_) | Value::Bool(_) => {
                Ok((key.clone(), value.clone()))
            }
            other => Err((
                key.clone(),
                format!(
                    "must be a string, number or boolean to compare the token's claim with, not {}",
                    kind_of(other)
                ),
            )),
        })
        .collect()
}

/// Checks that each rule's `profiles` are profiles of the file (`known`):
/// a mistyped name would quietly narrow the rule to no request at all.
pub(crate) fn check_profiles(
    src: &Source<'_>,
    rules: &[Rule],
    known: &[&str],
) -> Result<(), ConfigError> {
    for rule in rules {
        for (i, name) in rule.profiles.iter().enumerate() {
            if known.contains(&name.as_str()) {
                continue;
            }
            let hint = match known.iter().min_by_key(|k| strsim::levenshtein(k, name)) {
                Some(near) if strsim::levenshtein(near, name) <= 2 => {
                    format!("; did you mean {near:?}?")
                }
                _ if known.is_empty() => "; the file has no \"profiles\"".to_owned(),
                _ => format!("; its profiles are {}", known.join(", ")),
            };
            return Err(invalid(
                src,
                &[
                    Step::Index(rule.index),
                    Step::Key("profiles"),
                    Step::Index(i),
                ],
                format!("{}: no profile named {name:?}{hint}", rule.label()),
            ));
        }
    }
    Ok(())
}

fn invalid(src: &Source<'_>, steps: &[Step<'_>], message: String) -> ConfigError {
    let mut full = vec![Step::Key(GATEWAY_KEY), Step::Key(RULES_KEY)];
    full.extend_from_slice(steps);
    src.invalid(None, Some(GATEWAY_KEY), &full, message)
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use crate::config::Config;

    fn parse(rules: &str) -> Result<Config, String> {
        let text = format!(
            r#"{{"toolbridge": {{"gateway": {{"rules": {rules}}}}}, "profiles": {{"ops": {{}}}}, "mcpServers": {{}}}}"#
        );
        Config::parse(Path::new("config.json"), text).map_err(|e| e.to_string())
    }

    #[test]
    fn rules_are_read_with_their_conditions() {
        let config = parse(
            r#"[{"clients": ["ci"], "allow": ["gh__*", "!gh__delete_*"]},
                {"profiles": ["ops"], "scopes": ["tools.write"], "claims": {"groups": "admins"},
                 "allow": ["fs__*"]}]"#,
        )
        .expect("config");
        let rules = &config.settings().gateway.rules;
        assert_eq!(rules.len(), 2);
        assert_eq!(rules[0].clients, ["ci"]);
        assert!(rules[0].allows_tool("gh__create_issue"));
        assert!(!rules[0].allows_tool("gh__delete_repo"));
        assert!(!rules[0].allows_tool("fs__read_file"));
        assert_eq!(rules[1].profiles, ["ops"]);
        assert_eq!(rules[1].scopes, ["tools.write"]);
        assert_eq!(rules[1].claims[0].0, "groups");
        assert_eq!(rules[1].label(), "toolbridge.gateway.rules[1]");
        let none = Config::parse(Path::new("c.json"), r#"{"mcpServers": {}}"#).unwrap();
        assert!(none.settings().gateway.rules.is_empty());
    }

    #[test]
    fn mistakes_name_the_rule_and_the_field() {
        let cases = [
            (r#"{"allow": ["*"]}"#, "must be an array of rules"),
            (r#"[{"clients": ["ci"]}]"#, "rules[0]: needs \"allow\""),
            (
                r#"[{"allow": ["*"]}, {"client": ["ci"], "allow": ["*"]}]"#,
                "rules[1]: unknown key \"client\"; did you mean \"clients\"?",
            ),
            (
                r#"[{"allow": ["a[" ]}]"#,
                "\"allow\": \"a[\" is not a valid glob",
            ),
            (
                r#"[{"allow": "*"}]"#,
                "\"allow\" must be an array of strings",
            ),
            (r#"[{"scopes": [""], "allow": ["*"]}]"#, "item 0 is"),
            (
                r#"[{"claims": {"groups": ["a"]}, "allow": ["*"]}]"#,
                "\"claims\".\"groups\" must be a string, number or boolean",
            ),
            (r#"[3]"#, "a rule must be an object"),
            (
                r#"[{"profiles": ["opz"], "allow": ["*"]}]"#,
                "rules[0]: no profile named \"opz\"; did you mean \"ops\"?",
            ),
            (
                r#"[{"allow": ["*"]}, {"profiles": ["ops", "finance"], "allow": ["*"]}]"#,
                "rules[1]: no profile named \"finance\"; its profiles are ops",
            ),
        ];
        for (rules, expected) in cases {
            let error = parse(rules).expect_err(rules);
            assert!(error.contains(expected), "{rules}: {error}");
            assert!(error.contains("config.json"), "{error}");
        }
    }
}
