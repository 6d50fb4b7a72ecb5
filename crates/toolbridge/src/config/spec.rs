//! [`ServerSpec`]: one server, validated and expanded, ready to connect.
//!
//! Expanded values may hold secrets, so nothing here prints them: env and
//! header values are a [`SecretMap`], and the `Debug` of a URL or an argument
//! list shows it masked (by the crate's one redaction module).

use crate::pins::PinPolicy;
use std::{fmt, path::PathBuf, time::Duration};

use super::secret::SecretMap;
use crate::redact::{MASK, mask_args, mask_url};
use crate::sandbox::Sandbox;

/// The default time one tool call may take: 120 s, as the spec says.
pub const DEFAULT_CALL_TIMEOUT: Duration = Duration::from_secs(120);

/// The longest timeout toolbridge accepts: 30 days. No call is meant to run
/// longer, and a much longer one (`1e19` seconds) cannot be added to a clock
/// reading: it made the pool panic instead of waiting.
pub const MAX_TIMEOUT: Duration = Duration::from_secs(30 * 24 * 3600);

/// `secs` as a timeout: a positive, finite number of seconds up to
/// [`MAX_TIMEOUT`]; `None` for anything else. The one check for the config's
/// `timeout` and the command line's `--timeout`.
pub fn timeout_from_secs(secs: f64) -> Option<Duration> {
    (secs.is_finite() && secs > 0.0 && secs <= MAX_TIMEOUT.as_secs_f64())
        .then(|| Duration::from_secs_f64(secs))
}

/// One MCP server, validated, with every `${VAR}` expanded. Its `Debug`
/// shows no secret.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerSpec {
    /// The server's name in the config (`mcpServers` key).
    pub name: String,
    /// How to reach it.
    pub transport: TransportSpec,
    /// Time one tool call may take; `None` means [`DEFAULT_CALL_TIMEOUT`].
    pub timeout: Option<Duration>,
    /// A disabled server keeps its record but is never started.
    pub disabled: bool,
    /// Time the server may take to start and answer the handshake
    /// (`startupTimeout`); `None` means the pool's default.
    pub startup_timeout: Option<Duration>,
    /// Tools of this server that are never listed nor called
    /// (`disabledTools`, as Cline and Claude Code write it).
    pub disabled_tools: Vec<String>,
    /// When set, the only tools of this server that are listed and called
    /// (`enabledTools`, an allow list; `disabledTools` still removes from
    /// it). `None`: every tool.
    pub enabled_tools: Option<Vec<String>>,
    /// The most characters of one result given to a model (`resultBudget`);
    /// `None` means the default budget.
    pub result_budget: Option<usize>,
    /// What pinning does with the server's tool definitions (`pin`, else
    /// the settings' `pin`; default `block`).
    pub pin: PinPolicy,
}

/// How to reach a server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TransportSpec {
    /// A child process speaking newline-delimited JSON-RPC on stdin/stdout.
    Stdio(StdioSpec),
    /// Streamable HTTP (protocol 2025-03-26 and later).
    Http(RemoteSpec),
    /// The legacy HTTP+SSE transport (protocol 2024-11-05).
    Sse(RemoteSpec),
    /// JSON-RPC over a WebSocket, subprotocol `mcp`.
    WebSocket(RemoteSpec),
}

/// The transport names, as the config's `type` field spells them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum TransportKind {
    /// `stdio`
    Stdio,
    /// `http` (`streamable-http`, `streamableHttp`)
    Http,
    /// `sse`
    Sse,
    /// `websocket` (`ws`)
    WebSocket,
}

impl TransportKind {
    /// The canonical name, as written in the config.
    pub fn as_str(self) -> &'static str {
        match self {
            TransportKind::Stdio => "stdio",
            TransportKind::Http => "http",
            TransportKind::Sse => "sse",
            TransportKind::WebSocket => "websocket",
        }
    }

    /// Parses a `type`/`transport` value, accepting the aliases DESIGN.md lists.
    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "stdio" => TransportKind::Stdio,
            "http" | "streamable-http" | "streamableHttp" | "streamable_http" => {
                TransportKind::Http
            }
            "sse" => TransportKind::Sse,
            "websocket" | "ws" => TransportKind::WebSocket,
            _ => return None,
        })
    }
}

impl fmt::Display for TransportKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A server started as a child process.
#[derive(Clone, PartialEq, Eq, Default)]
pub struct StdioSpec {
    /// The program, looked up on `PATH` when it has no `/`.
    pub command: String,
    /// Its arguments.
    pub args: Vec<String>,
    /// Variables set on top of the minimal environment the child gets.
    pub env: SecretMap,
    /// Working directory; toolbridge's own when `None`.
    pub cwd: Option<PathBuf>,
    /// Names of toolbridge's own environment variables passed on as they
    /// are (`inheritEnv`: a proxy, a CA bundle, `DISPLAY`).
    pub inherit_env: Vec<String>,
    /// What the server may do (`sandbox`); [`Sandbox::Default`] unless the
    /// config says otherwise.
    pub sandbox: Sandbox,
}

/// A server reached over the network.
#[derive(Clone, PartialEq, Eq, Default)]
pub struct RemoteSpec {
    /// The endpoint (for SSE, the event-stream URL).
    pub url: String,
    /// Headers sent with every request (and the WebSocket handshake).
    pub headers: SecretMap,
    /// True when the config gave a URL but no `type`: streamable HTTP is tried
    /// first and legacy SSE is the fallback.
    pub auto_detect: bool,
    /// How to sign in with OAuth (`oauth`); empty when the config has none,
    /// and toolbridge discovers and registers by itself.
    pub oauth: OAuthSpec,
}

/// The `oauth` object of a remote server, expanded: all optional. Without
/// it toolbridge discovers the authorization server and registers itself.
#[derive(Clone, PartialEq, Eq, Default)]
pub struct OAuthSpec {
    /// A client ID registered with the authorization server beforehand
    /// (`clientId`).
    pub client_id: Option<String>,
    /// That client's secret (`clientSecret`, `${VAR}` expanded). Never
    /// printed: `Debug` masks it.
    pub client_secret: Option<String>,
    /// An https URL where toolbridge's client metadata document is hosted
    /// (`clientMetadataUrl`), used as the client ID by authorization servers
    /// that accept such documents.
    pub client_metadata_url: Option<String>,
    /// The scopes to ask for (`scopes`); empty means the ones the server
    /// names.
    pub scopes: Vec<String>,
    /// How toolbridge gets its tokens (`grant`): a browser sign-in unless
    /// the config names a grant that needs no user.
    pub grant: OAuthGrant,
    /// How toolbridge authenticates as the client at the token endpoint
    /// (`clientAuth`); `None` lets the authorization server's metadata
    /// decide among the methods the config's credentials allow.
    pub client_auth: Option<ClientAuth>,
    /// The private key of `private_key_jwt` (`privateKey`, the PEM itself,
    /// or `privateKeyFile`, a path).
    pub private_key: Option<SecretSource>,
    /// The JWS algorithm the private key signs with (`signingAlgorithm`),
    /// default `ES256`.
    pub signing_algorithm: Option<String>,
    /// The workload's JWT of the `jwt_bearer` grant (`assertion`, or
    /// `assertionFile`, read anew for every token request: platforms rotate
    /// the file).
    pub assertion: Option<SecretSource>,
    /// The enterprise identity provider of the `id_jag` grant (`idp`).
    pub idp: Option<IdpSpec>,
    /// DPoP-bound tokens (`dpop`, RFC 9449): `Some(true)` always, `Some(false)`
    /// never, `None` when the server's challenge asks for the `DPoP` scheme.
    pub dpop: Option<bool>,
}

/// How toolbridge gets tokens from the authorization server (`oauth.grant`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OAuthGrant {
    /// `authorization_code`: the browser sign-in with PKCE (the default).
    #[default]
    AuthorizationCode,
    /// `client_credentials` (the OAuth client credentials extension): the
    /// client's own credentials, no user.
    ClientCredentials,
    /// `jwt_bearer` (workload identity federation, RFC 7523): a JWT the
    /// workload's platform issued is the grant.
    JwtBearer,
    /// `id_jag` (enterprise-managed authorization): the user's ID token from
    /// the enterprise identity provider is exchanged there for an ID-JAG
    /// (RFC 8693), which the authorization server takes as a JWT grant.
    IdJag,
}

impl OAuthGrant {
    /// The grant named `name` in the config.
    pub fn parse(name: &str) -> Option<Self> {
        Some(match name {
            "authorization_code" => OAuthGrant::AuthorizationCode,
            "client_credentials" => OAuthGrant::ClientCredentials,
            "jwt_bearer" => OAuthGrant::JwtBearer,
            "id_jag" => OAuthGrant::IdJag,
            _ => return None,
        })
    }

    /// True when tokens come without a user (no browser, no prompt).
    pub fn is_unattended(self) -> bool {
        self != OAuthGrant::AuthorizationCode
    }
}

/// How the client authenticates at a token endpoint (`oauth.clientAuth`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClientAuth {
    /// `client_secret_basic`: HTTP Basic with the ID and secret.
    ClientSecretBasic,
    /// `client_secret_post`: the ID and secret in the request body.
    ClientSecretPost,
    /// `private_key_jwt` (RFC 7523 section 2.2): a JWT signed with the
    /// client's private key.
    PrivateKeyJwt,
}

impl ClientAuth {
    /// The method named `name` in the config.
    pub fn parse(name: &str) -> Option<Self> {
        Some(match name {
            "client_secret_basic" => ClientAuth::ClientSecretBasic,
            "client_secret_post" => ClientAuth::ClientSecretPost,
            "private_key_jwt" => ClientAuth::PrivateKeyJwt,
            _ => return None,
        })
    }

    /// The name OAuth metadata uses for it.
    pub fn as_str(self) -> &'static str {
        match self {
            ClientAuth::ClientSecretBasic => "client_secret_basic",
            ClientAuth::ClientSecretPost => "client_secret_post",
            ClientAuth::PrivateKeyJwt => "private_key_jwt",
        }
    }
}

/// A secret the config gives by value (`${VAR}` expanded) or as a file to
/// read when it is needed.
#[derive(Clone, PartialEq, Eq)]
pub enum SecretSource {
    /// The secret itself.
    Value(String),
    /// A file holding it (surrounding whitespace is not part of it).
    File(PathBuf),
}

impl SecretSource {
    /// The secret: the value, or the file's content, trimmed.
    pub fn read(&self) -> std::io::Result<String> {
        match self {
            SecretSource::Value(value) => Ok(value.clone()),
            SecretSource::File(path) => Ok(std::fs::read_to_string(path)?.trim().to_owned()),
        }
    }

    /// The value, when it is one (for scrubbing it from text).
    pub fn value(&self) -> Option<&str> {
        match self {
            SecretSource::Value(value) => Some(value),
            SecretSource::File(_) => None,
        }
    }
}

impl fmt::Debug for SecretSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SecretSource::Value(_) => f.write_str(MASK),
            SecretSource::File(path) => f.debug_tuple("File").field(path).finish(),
        }
    }
}

/// The enterprise identity provider of the `id_jag` grant (`oauth.idp`).
#[derive(Clone, PartialEq, Eq)]
pub struct IdpSpec {
    /// Its issuer URL (`issuer`): the ID-JAG's `iss`.
    pub issuer: String,
    /// Its token endpoint (`tokenEndpoint`); without it, the one its OpenID
    /// configuration names.
    pub token_endpoint: Option<String>,
    /// toolbridge's client ID there (`clientId`).
    pub client_id: String,
    /// That client's secret (`clientSecret`), sent in the request body.
    pub client_secret: Option<String>,
    /// The user's ID token from the single sign-on (`idToken` or
    /// `idTokenFile`).
    pub id_token: SecretSource,
}

impl fmt::Debug for IdpSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("IdpSpec")
            .field("issuer", &self.issuer)
            .field("token_endpoint", &self.token_endpoint)
            .field("client_id", &self.client_id)
            .field("client_secret", &self.client_secret.as_ref().map(|_| MASK))
            .field("id_token", &self.id_token)
            .finish()
    }
}

impl OAuthSpec {
    /// The secrets given by value, for scrubbing them from text.
    pub fn secrets(&self) -> impl Iterator<Item = &str> {
        let idp = self.idp.as_ref();
        [
            self.client_secret.as_deref(),
            self.private_key.as_ref().and_then(SecretSource::value),
            self.assertion.as_ref().and_then(SecretSource::value),
            idp.and_then(|idp| idp.client_secret.as_deref()),
            idp.and_then(|idp| idp.id_token.value()),
        ]
        .into_iter()
        .flatten()
    }
}

impl fmt::Debug for OAuthSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OAuthSpec")
            .field("client_id", &self.client_id)
            .field("client_secret", &self.client_secret.as_ref().map(|_| MASK))
            .field("client_metadata_url", &self.client_metadata_url)
            .field("scopes", &self.scopes)
            .field("grant", &self.grant)
            .field("client_auth", &self.client_auth)
            .field("private_key", &self.private_key)
            .field("signing_algorithm", &self.signing_algorithm)
            .field("assertion", &self.assertion)
            .field("idp", &self.idp)
            .field("dpop", &self.dpop)
            .finish()
    }
}

impl fmt::Debug for StdioSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StdioSpec")
            .field("command", &self.command)
            .field("args", &mask_args(&self.args))
            .field("env", &self.env)
            .field("cwd", &self.cwd)
            .field("inherit_env", &self.inherit_env)
            .field("sandbox", &self.sandbox)
            .finish()
    }
}

impl fmt::Debug for RemoteSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RemoteSpec")
            .field("url", &mask_url(&self.url))
            .field("headers", &self.headers)
            .field("auto_detect", &self.auto_detect)
            .field("oauth", &self.oauth)
            .finish()
    }
}

impl ServerSpec {
    /// A stdio server running `command args...`, with defaults for the rest.
    pub fn stdio(
        name: impl Into<String>,
        command: impl Into<String>,
        args: impl IntoIterator<Item = impl Into<String>>,
    ) -> Self {
        ServerSpec {
            name: name.into(),
            transport: TransportSpec::Stdio(StdioSpec {
                command: command.into(),
                args: args.into_iter().map(Into::into).collect(),
                ..StdioSpec::default()
            }),
            timeout: None,
            disabled: false,
            startup_timeout: None,
            disabled_tools: Vec::new(),
            enabled_tools: None,
            result_budget: None,
            pin: PinPolicy::default(),
        }
    }

    /// A network server of `kind` (not stdio) at `url`, with defaults for the rest.
    pub fn remote(name: impl Into<String>, kind: TransportKind, url: impl Into<String>) -> Self {
        let remote = RemoteSpec {
            url: url.into(),
            ..RemoteSpec::default()
        };
        let transport = match kind {
            TransportKind::Sse => TransportSpec::Sse(remote),
            TransportKind::WebSocket => TransportSpec::WebSocket(remote),
            TransportKind::Http | TransportKind::Stdio => TransportSpec::Http(remote),
        };
        ServerSpec {
            name: name.into(),
            transport,
            timeout: None,
            disabled: false,
            startup_timeout: None,
            disabled_tools: Vec::new(),
            enabled_tools: None,
            result_budget: None,
            pin: PinPolicy::default(),
        }
    }

    /// Which transport this server uses.
    pub fn kind(&self) -> TransportKind {
        match &self.transport {
            TransportSpec::Stdio(_) => TransportKind::Stdio,
            TransportSpec::Http(_) => TransportKind::Http,
            TransportSpec::Sse(_) => TransportKind::Sse,
            TransportSpec::WebSocket(_) => TransportKind::WebSocket,
        }
    }

    /// The time one tool call may take.
    pub fn call_timeout(&self) -> Duration {
        self.timeout.unwrap_or(DEFAULT_CALL_TIMEOUT)
    }

    /// False for a tool in `disabledTools`, or missing from `enabledTools`
    /// when that is set: the pool neither lists nor calls it.
    pub fn tool_enabled(&self, tool: &str) -> bool {
        !self.disabled_tools.iter().any(|disabled| disabled == tool)
            && self
                .enabled_tools
                .as_ref()
                .is_none_or(|enabled| enabled.iter().any(|e| e == tool))
    }
}
