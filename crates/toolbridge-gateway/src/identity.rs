//! [`ClientIdentity`]: who a client of the gateway is, as the one auth
//! layer ([`crate::security`]) found it, and what that lets it reach.
//!
//! The layer puts the identity into every request's extensions, where the
//! MCP handlers ([`crate::session`], [`crate::endpoint`]), the audit line
//! and later rules read it ([`ClientIdentity::of`]); it never holds a token.
//!
//! - [`ClientKind::Admin`]: the gateway's own token
//!   (`$TOOLBRIDGE_GATEWAY_TOKEN` or the generated file), or a session of
//!   the web page: everything.
//! - [`ClientKind::Local`]: a loopback connection of the gateway's own user
//!   on a gateway without a token: everything, as before.
//! - [`ClientKind::Token`]: a named client token (`toolbridge serve token
//!   create NAME [--profile P]`, [`crate::client_tokens`]).
//! - [`ClientKind::OAuth`]: a JWT access token of the configured issuer
//!   ([`crate::resource_server`]), with its scopes and claims.
//!
//! Named-token and OAuth clients reach MCP only (`/mcp` and the profiles'
//! `/mcp/NAME`), never the page's API or `/metrics`; one bound to a profile
//! only that profile's path ([`ClientIdentity::may_reach`]).

use std::{fmt, sync::Arc};

use serde_json::{Map, Value};

/// How a client proved who it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ClientKind {
    /// The gateway's own token, or the web page's session.
    Admin,
    /// A named client token.
    Token,
    /// An OAuth access token of the configured issuer.
    OAuth,
    /// The gateway's own user on loopback, on a gateway without a token
    /// (and every stdio client: the one that started it).
    Local,
}

impl ClientKind {
    /// The word in audit lines and listings.
    pub fn as_str(self) -> &'static str {
        match self {
            ClientKind::Admin => "admin",
            ClientKind::Token => "token",
            ClientKind::OAuth => "oauth",
            ClientKind::Local => "local",
        }
    }
}

impl fmt::Display for ClientKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Who a client is.
#[derive(Debug, Clone, PartialEq)]
pub struct ClientIdentity {
    /// How it proved it.
    pub kind: ClientKind,
    /// Its name: the token's name, the OAuth token's `sub` (else its
    /// `client_id`), `admin`, `local` or `stdio`.
    pub name: String,
    /// The only profile it may use, when bound to one.
    pub profile: Option<String>,
    /// Its OAuth scopes (`scope`, space-separated, or `scp`); empty for
    /// other kinds. Shared: every request of a token carries the same ones
    /// (the verified token's, [`crate::resource_server`]), so a request's
    /// copy of the identity is a reference count, not a copy of them.
    pub scopes: Arc<[String]>,
    /// Its OAuth token's claims; empty for other kinds. Shared as
    /// [`ClientIdentity::scopes`] are.
    pub claims: Arc<Map<String, Value>>,
}

impl ClientIdentity {
    /// A client of `kind` named `name`, bound to no profile, without scopes
    /// or claims.
    pub fn new(kind: ClientKind, name: impl Into<String>) -> ClientIdentity {
        ClientIdentity {
            kind,
            name: name.into(),
            profile: None,
            scopes: Arc::from([]),
            claims: Arc::default(),
        }
    }

    /// The client of `serve --stdio`: the program that started the gateway.
    pub fn stdio() -> ClientIdentity {
        ClientIdentity::new(ClientKind::Local, "stdio")
    }

    /// One string per client, the same for every request of the same
    /// client (`token:NAME`, `oauth:SUB`, `admin`...): a key for per-client
    /// limits and labels.
    pub fn key(&self) -> String {
        match self.kind {
            ClientKind::Token | ClientKind::OAuth => format!("{}:{}", self.kind, self.name),
            ClientKind::Admin | ClientKind::Local => self.name.clone(),
        }
    }

    /// The identity the auth layer put into a request's extensions.
    pub fn of(extensions: &http::Extensions) -> Option<&ClientIdentity> {
        extensions.get::<ClientIdentity>()
    }

    /// The identity of an rmcp request: the auth layer's, in the HTTP
    /// request's parts rmcp keeps in the context's extensions; `None` over
    /// stdio.
    pub fn of_rmcp(extensions: &rmcp::model::Extensions) -> Option<&ClientIdentity> {
        extensions
            .get::<http::request::Parts>()
            .and_then(|parts| ClientIdentity::of(&parts.extensions))
    }

    /// Whether this client may reach `path`; `Err` says why not.
    ///
    /// Admin and local clients reach everything. Token and OAuth clients
    /// reach MCP only; one bound to a profile only `/mcp/PROFILE`.
    pub fn may_reach(&self, path: &str) -> Result<(), String> {
        if matches!(self.kind, ClientKind::Admin | ClientKind::Local) {
            return Ok(());
        }
        let Some(profile) = mcp_profile(path) else {
            return Err(format!(
                "the {} client {:?} may use MCP (/mcp) only, not {path}",
                self.kind, self.name
            ));
        };
        match (&self.profile, profile) {
            (None, _) => Ok(()),
            (Some(bound), Some(asked)) if bound == asked => Ok(()),
            (Some(bound), _) => Err(format!(
                "the {} client {:?} may use the profile {bound:?} only (/mcp/{bound}), not {path}",
                self.kind, self.name
            )),
        }
    }
}

/// The profile an MCP path is for: `Some(None)` for `/mcp` (every server),
/// `Some(Some(NAME))` for `/mcp/NAME` (and below it), `None` for a path
/// that is not MCP.
pub fn mcp_profile(path: &str) -> Option<Option<&str>> {
    let rest = path.strip_prefix("/mcp")?;
    if rest.is_empty() || rest == "/" {
        return Some(None);
    }
    let name = rest.strip_prefix('/')?.split('/').next()?;
    Some(Some(name).filter(|n| !n.is_empty()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_profile_of_a_path() {
        assert_eq!(mcp_profile("/mcp"), Some(None));
        assert_eq!(mcp_profile("/mcp/"), Some(None));
        assert_eq!(mcp_profile("/mcp/ops"), Some(Some("ops")));
        assert_eq!(mcp_profile("/mcp/ops/x"), Some(Some("ops")));
        assert_eq!(mcp_profile("/mcpx"), None);
        assert_eq!(mcp_profile("/api/servers"), None);
        assert_eq!(mcp_profile("/metrics"), None);
    }

    #[test]
    fn a_bound_token_reaches_its_profile_only() {
        let mut ops = ClientIdentity::new(ClientKind::Token, "ci");
        ops.profile = Some("ops".into());
        assert!(ops.may_reach("/mcp/ops").is_ok());
        let refused = ops.may_reach("/mcp/dev").unwrap_err();
        assert!(
            refused.contains("\"ops\"") && refused.contains("/mcp/dev"),
            "{refused}"
        );
        assert!(ops.may_reach("/mcp").is_err());
        assert!(ops.may_reach("/api/servers").is_err());

        let any = ClientIdentity::new(ClientKind::OAuth, "alice");
        assert!(any.may_reach("/mcp").is_ok() && any.may_reach("/mcp/dev").is_ok());
        assert!(any.may_reach("/metrics").is_err());

        let admin = ClientIdentity::new(ClientKind::Admin, "admin");
        assert!(admin.may_reach("/api/servers").is_ok() && admin.may_reach("/metrics").is_ok());
        assert_eq!(ops.key(), "token:ci");
    }
}
