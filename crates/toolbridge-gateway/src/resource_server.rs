//! The gateway as an OAuth 2.1 resource server (config
//! `"toolbridge": {"gateway": {"oauth": {...}}}`).
//!
//! - Each MCP path is a resource: `{resource}/mcp` and, per profile,
//!   `{resource}/mcp/NAME` (`resource`: the config's, else the address the
//!   gateway listens on). Its protected resource metadata (RFC 9728) is at
//!   `/.well-known/oauth-protected-resource` + the path (and, for `/mcp`, at
//!   `/.well-known/oauth-protected-resource` itself, where some clients
//!   look), naming the issuer as its authorization server.
//! - A refused request gets 401 with `WWW-Authenticate: Bearer
//!   resource_metadata="…"` (and `error="invalid_token"` when a token was
//!   sent), so a client can find the issuer and sign in (MCP's
//!   authorization spec).
//! - An access token must be a JWT signed by one of the issuer's keys (its
//!   JWKS, from `jwksUri` or the issuer's metadata), with an asymmetric
//!   algorithm, `iss` the issuer, `aud` the resource of the path asked for
//!   (or one of the config's `audience`), not expired and already valid
//!   (`exp`, `nbf`, with [`LEEWAY_SECS`] for clocks that differ). The
//!   `jsonwebtoken` crate checks all of that; this module finds the key.
//! - Keys are fetched on the first token and again when a token names a
//!   key (`kid`) the set lacks, so an issuer's key rotation is picked up;
//!   such refetches are limited ([`REFETCH_BURST`] per [`REFETCH_WINDOW`]),
//!   so a stream of made-up `kid`s cannot make the gateway hammer the
//!   issuer.
//! - A token that passed is remembered, by the SHA-256 of the resource it
//!   was checked for and the token (the gateway holds no token), until its
//!   `exp`: a client sends the same token with every request, and its
//!   signature check is most of what the resource server costs (measured:
//!   docs/performance.md, "The gateway for a team"). The memory is dropped
//!   whenever a fetch brings a key set that differs from the one held, so a
//!   token whose key the issuer withdrew is refused from then on, as it
//!   would be without it; at most [`VERIFIED_MAX`] tokens are held.

use std::{
    collections::{HashMap, VecDeque},
    sync::Arc,
    time::{Duration, Instant, SystemTime, UNIX_EPOCH},
};

use jsonwebtoken::{
    Algorithm, DecodingKey, Validation,
    jwk::{Jwk, JwkSet},
};
use serde_json::{Map, Value, json};
use sha2::{Digest as _, Sha256};
use tokio::sync::{Mutex, RwLock};
use toolbridge::{config::GatewayOAuth, lock::LockUnpoisoned as _};

use crate::identity::{ClientIdentity, ClientKind, mcp_profile};

/// Seconds of clock difference allowed on `exp` and `nbf`.
pub const LEEWAY_SECS: u64 = 30;
/// Fetches of the issuer's keys allowed within [`REFETCH_WINDOW`].
pub const REFETCH_BURST: usize = 4;
/// See [`REFETCH_BURST`].
pub const REFETCH_WINDOW: Duration = Duration::from_secs(60);
/// Verified tokens remembered at most; past it, the expired ones are
/// dropped, and when none is, all of them.
pub const VERIFIED_MAX: usize = 1024;
/// How long one request to the issuer may take.
const ISSUER_TIMEOUT: Duration = Duration::from_secs(10);
/// The well-known path of protected resource metadata (RFC 9728).
pub const METADATA_PATH: &str = "/.well-known/oauth-protected-resource";

/// The algorithms a token may be signed with: asymmetric only (a shared
/// secret cannot come from a JWKS, and accepting HS256 would let a
/// published public key sign tokens).
const ALGORITHMS: [Algorithm; 9] = [
    Algorithm::RS256,
    Algorithm::RS384,
    Algorithm::RS512,
    Algorithm::PS256,
    Algorithm::PS384,
    Algorithm::PS512,
    Algorithm::ES256,
    Algorithm::ES384,
    Algorithm::EdDSA,
];

/// The issuer's keys as last fetched.
#[derive(Default)]
struct Keys {
    set: Option<JwkSet>,
    /// The JWKS address, once found.
    jwks_uri: Option<String>,
}

/// The gateway's OAuth resource server.
pub struct ResourceServer {
    issuer: String,
    /// Scheme, host and port clients reach the gateway at, without a
    /// trailing `/`.
    base: String,
    audience: Vec<String>,
    scopes: Vec<String>,
    configured_jwks: Option<String>,
    http: reqwest::Client,
    keys: RwLock<Keys>,
    /// When keys were fetched lately; held while fetching, so that
    /// requests that all miss the same key wait for one fetch.
    fetches: Mutex<VecDeque<Instant>>,
    /// Tokens that passed, until they expire or the key set changes.
    verified: std::sync::Mutex<Verified>,
}

/// The tokens [`ResourceServer::verify`] took lately, by the SHA-256 of
/// their resource and themselves.
#[derive(Default)]
struct Verified {
    /// Bumped at each change of the key set: a check that began under an
    /// older set does not put its result here.
    generation: u64,
    tokens: HashMap<[u8; 32], Taken>,
}

/// A token that passed: who it is, and its `exp` (Unix seconds).
struct Taken {
    identity: ClientIdentity,
    exp: u64,
}

impl Verified {
    /// The key set changed: forget every token.
    fn clear(&mut self) {
        self.generation += 1;
        self.tokens.clear();
    }

    fn insert(&mut self, key: [u8; 32], taken: Taken, now: u64) {
        if self.tokens.len() >= VERIFIED_MAX {
            self.tokens.retain(|_, t| t.exp > now);
            if self.tokens.len() >= VERIFIED_MAX {
                self.tokens.clear();
            }
        }
        self.tokens.insert(key, taken);
    }
}

impl std::fmt::Debug for ResourceServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResourceServer")
            .field("issuer", &self.issuer)
            .field("base", &self.base)
            .finish_non_exhaustive()
    }
}

/// Why a token was refused; said to the client in `error_description`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused(pub String);

impl ResourceServer {
    /// The resource server of `settings`, for a gateway that clients reach
    /// at `base` (`http://127.0.0.1:8931`) unless `settings` names its
    /// `resource`.
    pub fn new(settings: &GatewayOAuth, base: &str) -> Result<ResourceServer, String> {
        let http = reqwest::Client::builder()
            .connect_timeout(ISSUER_TIMEOUT)
            .timeout(ISSUER_TIMEOUT)
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| format!("cannot make an HTTP client for the OAuth issuer: {e}"))?;
        let base = settings.resource.as_deref().unwrap_or(base);
        Ok(ResourceServer {
            issuer: settings.issuer.clone(),
            base: base.trim_end_matches('/').to_owned(),
            audience: settings.audience.clone(),
            scopes: settings.scopes.clone(),
            configured_jwks: settings.jwks_uri.clone(),
            http,
            keys: RwLock::default(),
            fetches: Mutex::default(),
            verified: std::sync::Mutex::default(),
        })
    }

    /// The issuer.
    pub fn issuer(&self) -> &str {
        &self.issuer
    }

    /// The resource URL of the MCP path `path` (`/mcp/ops/x` →
    /// `{base}/mcp/ops`); `None` for a path that is not MCP.
    pub fn resource(&self, path: &str) -> Option<String> {
        Some(format!("{}{}", self.base, resource_path(path)?))
    }

    /// The address of the metadata of `path`'s resource, for
    /// `WWW-Authenticate`; for a path that is not MCP, `/mcp`'s.
    pub fn metadata_url(&self, path: &str) -> String {
        let path = resource_path(path).unwrap_or_else(|| "/mcp".into());
        format!("{}{METADATA_PATH}{path}", self.base)
    }

    /// The protected resource metadata served at `path` (under
    /// [`METADATA_PATH`]); `None` when `path` names no resource.
    pub fn metadata(&self, path: &str) -> Option<Value> {
        let rest = path.strip_prefix(METADATA_PATH)?;
        let resource = if rest.is_empty() || rest == "/" {
            self.resource("/mcp")?
        } else {
            self.resource(rest)?
        };
        let mut metadata = json!({
            "resource": resource,
            "authorization_servers": [self.issuer],
            "bearer_methods_supported": ["header"],
            "resource_name": "toolbridge gateway",
        });
        if !self.scopes.is_empty() {
            metadata["scopes_supported"] = json!(self.scopes);
        }
        Some(metadata)
    }

    /// The client `token` proves to be, for a request to `path`.
    pub async fn verify(&self, token: &str, path: &str) -> Result<ClientIdentity, Refused> {
        let key = verified_key(token, path);
        let now = unix_now();
        let generation = {
            let verified = self.verified.lock_unpoisoned();
            if let Some(taken) = verified.tokens.get(&key)
                && now < taken.exp
            {
                return Ok(taken.identity.clone());
            }
            verified.generation
        };
        let identity = self.check(token, path).await?;
        // `exp` is required and was checked: a number.
        let exp = identity.claims.get("exp").and_then(Value::as_f64);
        // Past `exp` but within the leeway: taken, not remembered.
        if let Some(exp) = exp.map(|e| e as u64).filter(|e| *e > now) {
            let mut verified = self.verified.lock_unpoisoned();
            if verified.generation == generation {
                let taken = Taken {
                    identity: identity.clone(),
                    exp,
                };
                verified.insert(key, taken, now);
            }
        }
        Ok(identity)
    }

    /// [`ResourceServer::verify`] without the memory of verified tokens:
    /// the signature, the claims, the key.
    async fn check(&self, token: &str, path: &str) -> Result<ClientIdentity, Refused> {
        let header = jsonwebtoken::decode_header(token)
            .map_err(|_| Refused("the access token is not a JWT".into()))?;
        if !ALGORITHMS.contains(&header.alg) {
            return Err(Refused(format!(
                "the access token is signed with {:?}; only asymmetric algorithms are accepted",
                header.alg
            )));
        }
        let jwk = self.key(header.kid.as_deref()).await?;
        let key = DecodingKey::from_jwk(&jwk)
            .map_err(|e| Refused(format!("the issuer's key cannot check the token: {e}")))?;
        let mut validation = Validation::new(header.alg);
        validation.leeway = LEEWAY_SECS;
        validation.validate_nbf = true;
        validation.set_issuer(&[&self.issuer]);
        let mut audience = self.audience.clone();
        audience.extend(self.resource(path));
        validation.set_audience(&audience);
        validation.set_required_spec_claims(&["exp", "iss", "aud"]);
        let data = jsonwebtoken::decode::<Map<String, Value>>(token, &key, &validation)
            .map_err(|e| Refused(describe(&e, &audience)))?;
        Ok(identity(data.claims))
    }

    /// The key `kid` (or, without one, the only key), fetching
    /// the keys again when they lack it and the rate allows.
    async fn key(&self, kid: Option<&str>) -> Result<Jwk, Refused> {
        if let Some(jwk) = self.known_key(kid).await {
            return Ok(jwk);
        }
        let mut fetches = self.fetches.lock().await;
        // Another request may have fetched them while this one waited.
        if let Some(jwk) = self.known_key(kid).await {
            return Ok(jwk);
        }
        let now = Instant::now();
        while fetches
            .front()
            .is_some_and(|t| now.duration_since(*t) > REFETCH_WINDOW)
        {
            fetches.pop_front();
        }
        let first = self.keys.read().await.set.is_none();
        if !first && fetches.len() >= REFETCH_BURST {
            return Err(Refused(unknown_key(kid)));
        }
        fetches.push_back(now);
        match self.fetch_keys().await {
            Ok(set) => {
                let mut keys = self.keys.write().await;
                if keys.set.as_ref() != Some(&set) {
                    self.verified.lock_unpoisoned().clear();
                }
                keys.set = Some(set);
            }
            Err(e) => {
                tracing::warn!(issuer = %self.issuer, "cannot fetch the OAuth issuer's keys: {e}");
                return Err(Refused(format!(
                    "the gateway cannot check the token now: {e}"
                )));
            }
        }
        drop(fetches);
        self.known_key(kid)
            .await
            .ok_or_else(|| Refused(unknown_key(kid)))
    }

    async fn known_key(&self, kid: Option<&str>) -> Option<Jwk> {
        let keys = self.keys.read().await;
        let set = keys.set.as_ref()?;
        match kid {
            Some(kid) => set.find(kid).cloned(),
            // Without a `kid`, only a set of one key says which.
            None => match set.keys.as_slice() {
                [only] => Some(only.clone()),
                _ => None,
            },
        }
    }

    /// The issuer's JWKS, from `jwksUri` or the issuer's metadata.
    async fn fetch_keys(&self) -> Result<JwkSet, String> {
        // Not in the `match`: its read guard would live through the write.
        let known = self.keys.read().await.jwks_uri.clone();
        let uri = match known {
            Some(uri) => uri,
            None => {
                let uri = match &self.configured_jwks {
                    Some(uri) => uri.clone(),
                    None => self.discover_jwks_uri().await?,
                };
                self.keys.write().await.jwks_uri = Some(uri.clone());
                uri
            }
        };
        let set: JwkSet = self.get_json(&uri).await?;
        Ok(set)
    }

    /// `jwks_uri` from the issuer's metadata: OpenID Connect discovery,
    /// else RFC 8414's.
    async fn discover_jwks_uri(&self) -> Result<String, String> {
        let issuer = self.issuer.trim_end_matches('/');
        let url = url::Url::parse(issuer).map_err(|e| format!("bad issuer URL: {e}"))?;
        let origin = url.origin().ascii_serialization();
        let path = url.path().trim_end_matches('/');
        let candidates = [
            format!("{issuer}/.well-known/openid-configuration"),
            format!("{origin}/.well-known/oauth-authorization-server{path}"),
        ];
        let mut last = String::new();
        for candidate in candidates {
            match self.get_json::<Value>(&candidate).await {
                Ok(metadata) => {
                    if metadata.get("issuer").and_then(Value::as_str) != Some(&self.issuer) {
                        return Err(format!(
                            "the metadata at {candidate} names another issuer ({}); check \
                             \"gateway\".\"oauth\".\"issuer\"",
                            metadata.get("issuer").unwrap_or(&Value::Null)
                        ));
                    }
                    return metadata
                        .get("jwks_uri")
                        .and_then(Value::as_str)
                        .map(str::to_owned)
                        .ok_or_else(|| format!("the metadata at {candidate} has no jwks_uri"));
                }
                Err(e) => last = e,
            }
        }
        Err(last)
    }

    async fn get_json<T: serde::de::DeserializeOwned>(&self, url: &str) -> Result<T, String> {
        let response = self
            .http
            .get(url)
            .header(http::header::ACCEPT, "application/json")
            .send()
            .await
            .map_err(|e| format!("{url}: {e}"))?;
        if !response.status().is_success() {
            return Err(format!("{url}: HTTP {}", response.status().as_u16()));
        }
        response
            .json()
            .await
            .map_err(|e| format!("{url}: not the JSON expected: {e}"))
    }
}

/// Where [`Verified`] keeps `token` checked for `path`: the SHA-256 of the
/// path's profile (the resource, which `aud` must name) and the token.
fn verified_key(token: &str, path: &str) -> [u8; 32] {
    let mut hash = Sha256::new();
    match mcp_profile(path) {
        Some(Some(profile)) => hash.update(profile.as_bytes()),
        Some(None) => hash.update(b"\0mcp"),
        None => hash.update(b"\0other"),
    }
    hash.update(b"\0");
    hash.update(token.as_bytes());
    hash.finalize().into()
}

fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// The resource part of an MCP path: `/mcp` or `/mcp/NAME`.
fn resource_path(path: &str) -> Option<String> {
    Some(match mcp_profile(path)? {
        None => "/mcp".to_owned(),
        Some(profile) => format!("/mcp/{profile}"),
    })
}

fn unknown_key(kid: Option<&str>) -> String {
    match kid {
        Some(kid) => {
            format!("the access token is signed by a key the issuer does not publish (kid {kid:?})")
        }
        None => "the access token names no key (kid) and the issuer has several".into(),
    }
}

fn describe(error: &jsonwebtoken::errors::Error, audience: &[String]) -> String {
    use jsonwebtoken::errors::ErrorKind;
    match error.kind() {
        ErrorKind::ExpiredSignature => "the access token has expired".into(),
        ErrorKind::ImmatureSignature => "the access token is not valid yet (nbf)".into(),
        ErrorKind::InvalidAudience => format!(
            "the access token is for another resource (aud); this one is {}",
            audience.last().map(String::as_str).unwrap_or_default()
        ),
        ErrorKind::InvalidIssuer => "the access token is from another issuer (iss)".into(),
        ErrorKind::InvalidSignature => "the access token's signature is wrong".into(),
        ErrorKind::MissingRequiredClaim(claim) => {
            format!("the access token has no {claim:?} claim")
        }
        _ => format!("the access token is not valid: {error}"),
    }
}

/// The identity of a token's claims.
fn identity(claims: Map<String, Value>) -> ClientIdentity {
    let name = ["sub", "client_id", "azp"]
        .iter()
        .find_map(|key| claims.get(*key).and_then(Value::as_str))
        .unwrap_or("unnamed")
        .to_owned();
    let scopes: Arc<[String]> = match (claims.get("scope"), claims.get("scp")) {
        (Some(Value::String(scope)), _) => scope.split_whitespace().map(str::to_owned).collect(),
        (_, Some(Value::Array(scp))) => scp
            .iter()
            .filter_map(|s| s.as_str().map(str::to_owned))
            .collect(),
        (_, Some(Value::String(scp))) => scp.split_whitespace().map(str::to_owned).collect(),
        _ => Arc::from([]),
    };
    let mut identity = ClientIdentity::new(ClientKind::OAuth, name);
    identity.scopes = scopes;
    identity.claims = Arc::new(claims);
    identity
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resources_and_their_metadata() {
        let mut settings = GatewayOAuth::new("https://login.example.com");
        settings.scopes = vec!["tools".into()];
        let server = ResourceServer::new(&settings, "http://127.0.0.1:8931/").expect("server");
        assert_eq!(
            server.resource("/mcp").as_deref(),
            Some("http://127.0.0.1:8931/mcp")
        );
        assert_eq!(
            server.resource("/mcp/ops").as_deref(),
            Some("http://127.0.0.1:8931/mcp/ops")
        );
        assert_eq!(server.resource("/api"), None);
        assert_eq!(
            server.metadata_url("/mcp/ops"),
            "http://127.0.0.1:8931/.well-known/oauth-protected-resource/mcp/ops"
        );
        let root = server.metadata(METADATA_PATH).expect("root metadata");
        assert_eq!(root["resource"], "http://127.0.0.1:8931/mcp");
        assert_eq!(
            root["authorization_servers"][0],
            "https://login.example.com"
        );
        assert_eq!(root["scopes_supported"][0], "tools");
        let ops = server
            .metadata("/.well-known/oauth-protected-resource/mcp/ops")
            .expect("profile metadata");
        assert_eq!(ops["resource"], "http://127.0.0.1:8931/mcp/ops");
        assert_eq!(
            server.metadata("/.well-known/oauth-protected-resource/api"),
            None
        );
    }

    #[test]
    fn scopes_and_name_from_claims() {
        let claims = json!({"sub": "alice", "scope": "read write"});
        let Value::Object(claims) = claims else {
            unreachable!()
        };
        let who = identity(claims);
        assert_eq!((who.kind, who.name.as_str()), (ClientKind::OAuth, "alice"));
        assert_eq!(*who.scopes, ["read", "write"]);
        let Value::Object(claims) = json!({"client_id": "ci", "scp": ["a"]}) else {
            unreachable!()
        };
        let who = identity(claims);
        assert_eq!(
            (who.name.as_str(), &who.scopes[..]),
            ("ci", &["a".to_owned()][..])
        );
    }
}
