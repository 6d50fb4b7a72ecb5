//! [`Rights`]: which tools a client may list and call, from the config's
//! `toolbridge.gateway.rules` ([`toolbridge::config::Rule`]).
//!
//! - No rules: every client may use every tool of its view (the gateway as
//!   it was).
//! - With rules, a named-token or OAuth client may use tool
//!   `{server}__{tool}` (the name the server gives, whatever a profile
//!   renames it to) only when a rule that applies to it allows it. The
//!   gateway's own token, the web page and the gateway's own user (a
//!   loopback gateway without a token, `serve --stdio`) are its owner:
//!   rules do not narrow them.
//! - A tool a client may not call is never listed to it (`tools/list` of
//!   both protocol generations, a search-mode profile's `search_tools`
//!   answer, the search pair itself when it may call none of the view's
//!   tools), and its call is refused with [`Denied`]: the error names the
//!   client, the tool and what right is missing; when a rule would allow it
//!   with more OAuth scopes, those scopes, for the HTTP 403
//!   `insufficient_scope` challenge ([`crate::admission`]).

use std::{borrow::Cow, sync::Arc};

use rmcp::model::{ErrorCode, ErrorData, Tool};
use serde_json::{Value, json};
use toolbridge::config::Rule;

use crate::{
    identity::{ClientIdentity, ClientKind},
    names::Route,
    profile::{ViewName, ViewTools},
};

/// The JSON-RPC error code of a call the client has no right to make
/// (in the implementation-defined server range).
pub const FORBIDDEN: ErrorCode = ErrorCode(-32003);

/// The rules, compiled. Cheap to clone.
#[derive(Debug, Clone, Default)]
pub struct Rights {
    rules: Arc<[Rule]>,
}

/// A call refused for want of a right.
#[derive(Debug, Clone, PartialEq)]
pub struct Denied {
    /// The client, as [`ClientIdentity::key`] names it.
    pub client: String,
    /// The tool, `{server}__{tool}`.
    pub tool: String,
    /// The OAuth scopes that would let it (the fewest a rule asks for),
    /// when some would; empty otherwise.
    pub scopes: Vec<String>,
    /// The rule those scopes are from.
    pub rule: Option<String>,
}

impl Denied {
    /// What the client reads.
    pub fn message(&self) -> String {
        match &self.rule {
            Some(rule) => format!(
                "client {:?} may not call tool {:?}: it needs the OAuth scope {} ({rule}); \
                 sign in again asking for it",
                self.client,
                self.tool,
                self.scopes
                    .iter()
                    .map(|s| format!("{s:?}"))
                    .collect::<Vec<_>>()
                    .join(" and ")
            ),
            None => format!(
                "client {:?} may not call tool {:?}: no rule of toolbridge.gateway.rules allows \
                 it to this client; ask the gateway's owner for the right",
                self.client, self.tool
            ),
        }
    }

    /// The JSON-RPC error: [`FORBIDDEN`], the message, and in `data` the
    /// tool, the client and the missing scopes.
    pub fn error(&self) -> ErrorData {
        ErrorData::new(
            FORBIDDEN,
            self.message(),
            Some(json!({
                "reason": "forbidden",
                "client": self.client,
                "tool": self.tool,
                "scopes": self.scopes,
            })),
        )
    }
}

/// What a rule looks at of a request.
struct Who<'a> {
    client: &'a ClientIdentity,
    profile: Option<&'a str>,
}

impl Rights {
    /// The rights `rules` give.
    pub fn new(rules: Vec<Rule>) -> Rights {
        Rights {
            rules: rules.into(),
        }
    }

    /// True when there are rules: some client may be refused something.
    pub fn has_rules(&self) -> bool {
        !self.rules.is_empty()
    }

    /// The client the rules narrow, when `client` is one (a named token or
    /// OAuth client, and there are rules); `None` means it may use all.
    fn governed<'a>(&self, client: Option<&'a ClientIdentity>) -> Option<&'a ClientIdentity> {
        let client = client?;
        let governed = matches!(client.kind, ClientKind::Token | ClientKind::OAuth);
        (governed && self.has_rules()).then_some(client)
    }

    /// Whether `client`, through `view`, may call `route`'s tool.
    pub fn check(
        &self,
        client: Option<&ClientIdentity>,
        view: &ViewName,
        route: &Route,
    ) -> Result<(), Denied> {
        let Some(client) = self.governed(client) else {
            return Ok(());
        };
        let who = Who {
            client,
            profile: view.profile_name(),
        };
        let tool = format!("{}__{}", route.server, route.name);
        if self
            .rules
            .iter()
            .any(|rule| rule.allows_tool(&tool) && applies(rule, &who))
        {
            return Ok(());
        }
        // A rule that would allow it with more scopes: the fewest.
        let step_up = self
            .rules
            .iter()
            .filter(|rule| rule.allows_tool(&tool) && applies_but_scopes(rule, &who))
            .map(|rule| {
                let missing: Vec<String> = rule
                    .scopes
                    .iter()
                    .filter(|s| !client.scopes.contains(s))
                    .cloned()
                    .collect();
                (missing, rule.label())
            })
            .min_by_key(|(missing, _)| missing.len());
        let (scopes, rule) = match step_up {
            Some((scopes, rule)) => (scopes, Some(rule)),
            None => (Vec::new(), None),
        };
        Err(Denied {
            client: client.key(),
            tool,
            scopes,
            rule,
        })
    }

    /// The tools of `tools` (a view's) that `client` may call, in order;
    /// borrowed as they are when it may call them all.
    pub fn listed<'a>(
        &self,
        client: Option<&ClientIdentity>,
        view: &ViewName,
        tools: &'a ViewTools,
    ) -> Cow<'a, [Tool]> {
        let items = &tools.routed.items;
        if self.governed(client).is_none() {
            return Cow::Borrowed(items);
        }
        Cow::Owned(
            items
                .iter()
                .filter(|tool| {
                    tools
                        .routed
                        .resolve(&tool.name)
                        .is_some_and(|route| self.check(client, view, route).is_ok())
                })
                .cloned()
                .collect(),
        )
    }

    /// Whether `client` may call any of `tools` (a search-mode view's: its
    /// search pair is listed only then).
    pub fn any(&self, client: Option<&ClientIdentity>, view: &ViewName, tools: &ViewTools) -> bool {
        self.governed(client).is_none()
            || tools
                .routed
                .routes
                .values()
                .any(|route| self.check(client, view, route).is_ok())
    }
}

/// Whether every condition of `rule` holds for `who`.
fn applies(rule: &Rule, who: &Who<'_>) -> bool {
    applies_but_scopes(rule, who) && rule.scopes.iter().all(|s| who.client.scopes.contains(s))
}

/// Whether every condition of `rule` but its scopes holds for `who`.
fn applies_but_scopes(rule: &Rule, who: &Who<'_>) -> bool {
    let client = who.client;
    let named = rule.clients.is_empty()
        || rule
            .clients
            .iter()
            .any(|c| *c == client.name || *c == client.key());
    let through = rule.profiles.is_empty()
        || who
            .profile
            .is_some_and(|p| rule.profiles.iter().any(|r| r == p));
    let claims = rule
        .claims
        .iter()
        .all(|(key, wanted)| match client.claims.get(key) {
            Some(Value::Array(items)) => items.contains(wanted),
            Some(value) => value == wanted,
            None => false,
        });
    named && through && claims
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use toolbridge::config::Config;

    use super::*;

    fn rights(rules: &str) -> Rights {
        let text = format!(
            r#"{{"toolbridge": {{"gateway": {{"rules": {rules}}}}}, "profiles": {{"ops": {{}}}}}}"#
        );
        let config = Config::parse(Path::new("c.json"), text).unwrap();
        Rights::new(config.settings().gateway.rules.clone())
    }

    fn route(server: &str, name: &str) -> Route {
        Route {
            server: server.into(),
            name: name.into(),
        }
    }

    fn oauth(name: &str, scopes: &[&str], claims: Value) -> ClientIdentity {
        let mut id = ClientIdentity::new(ClientKind::OAuth, name);
        id.scopes = scopes.iter().map(|s| s.to_string()).collect();
        id.claims = std::sync::Arc::new(claims.as_object().cloned().unwrap_or_default());
        id
    }

    #[test]
    fn no_rules_allow_everything_and_rules_allow_only_what_they_name() {
        let ci = ClientIdentity::new(ClientKind::Token, "ci");
        let all = ViewName::All;
        assert!(
            Rights::default()
                .check(Some(&ci), &all, &route("fs", "write_file"))
                .is_ok()
        );
        let rights = rights(r#"[{"clients": ["ci"], "allow": ["fs__*", "!fs__write_*"]}]"#);
        assert!(
            rights
                .check(Some(&ci), &all, &route("fs", "read_file"))
                .is_ok()
        );
        let denied = rights
            .check(Some(&ci), &all, &route("fs", "write_file"))
            .unwrap_err();
        assert_eq!(denied.tool, "fs__write_file");
        assert!(denied.scopes.is_empty() && denied.rule.is_none());
        assert!(
            denied.message().contains("\"token:ci\"")
                && denied.message().contains("\"fs__write_file\""),
            "{}",
            denied.message()
        );
        let other = ClientIdentity::new(ClientKind::Token, "other");
        assert!(
            rights
                .check(Some(&other), &all, &route("fs", "read_file"))
                .is_err()
        );
        // The owner is not narrowed.
        let admin = ClientIdentity::new(ClientKind::Admin, "admin");
        assert!(
            rights
                .check(Some(&admin), &all, &route("fs", "write_file"))
                .is_ok()
        );
        assert!(rights.check(None, &all, &route("fs", "write_file")).is_ok());
        // `token:NAME` names one kind only.
        let kind = super::tests::rights(r#"[{"clients": ["oauth:ci"], "allow": ["*"]}]"#);
        assert!(
            kind.check(Some(&ci), &all, &route("fs", "read_file"))
                .is_err()
        );
        assert!(
            kind.check(Some(&oauth("ci", &[], json!({}))), &all, &route("fs", "x"))
                .is_ok()
        );
    }

    #[test]
    fn profiles_scopes_and_claims_condition_a_rule_and_the_missing_scope_is_named() {
        let rights = rights(
            r#"[{"scopes": ["read"], "allow": ["fs__read_*"]},
                {"scopes": ["read", "write"], "allow": ["fs__*"]},
                {"profiles": ["ops"], "claims": {"groups": "admins"}, "allow": ["gh__*"]}]"#,
        );
        let all = ViewName::All;
        let reader = oauth("alice", &["read"], json!({"groups": ["dev"]}));
        assert!(
            rights
                .check(Some(&reader), &all, &route("fs", "read_file"))
                .is_ok()
        );
        let denied = rights
            .check(Some(&reader), &all, &route("fs", "write_file"))
            .unwrap_err();
        assert_eq!(denied.scopes, ["write"]);
        assert_eq!(denied.rule.as_deref(), Some("toolbridge.gateway.rules[1]"));
        assert!(
            denied.message().contains("\"write\""),
            "{}",
            denied.message()
        );
        let writer = oauth("bob", &["read", "write"], json!({}));
        assert!(
            rights
                .check(Some(&writer), &all, &route("fs", "write_file"))
                .is_ok()
        );
        let ops = ViewName::profile("ops");
        let admin = oauth("carol", &[], json!({"groups": ["admins", "dev"]}));
        assert!(
            rights
                .check(Some(&admin), &ops, &route("gh", "merge"))
                .is_ok()
        );
        assert!(
            rights
                .check(Some(&admin), &all, &route("gh", "merge"))
                .is_err(),
            "not through /mcp"
        );
        assert!(
            rights
                .check(Some(&reader), &ops, &route("gh", "merge"))
                .is_err()
        );
        assert_eq!(denied.error().code, FORBIDDEN);
    }
}
