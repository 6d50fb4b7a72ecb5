//! [`TokenStore`]: where sign-ins are kept, in files only the user can read.
//!
//! The folder is `$XDG_DATA_HOME/toolbridge/oauth` (`~/.local/share/...`):
//! tokens are state the user cannot recreate without signing in again, so
//! they belong neither in the cache (which may be wiped) nor beside the
//! config (which people copy and share). Inside it:
//!
//! - `tokens/HOST-HASH.json`, one per resource (the server's URL): the
//!   token response, the scopes granted, when it came and which
//!   authorization server (issuer) issued it;
//! - `clients/HOST-HASH.json`, one per authorization server: the client
//!   toolbridge registered there, its secret (rmcp's stored credentials
//!   drop it, so a confidential client could not refresh after a restart)
//!   and the redirect URI it was registered with.
//!
//! Files are written atomically (a temporary sibling and a rename, as
//! config writes are) with mode 0600, in folders with mode 0700.

use std::{
    path::{Path, PathBuf},
    sync::Arc,
    time::{SystemTime, UNIX_EPOCH},
};

use rmcp::transport::auth::{AuthError as RmcpAuthError, CredentialStore, StoredCredentials};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use url::Url;

use super::{AuthError, dpop::DpopKey};

/// The folders and files of stored sign-ins.
#[derive(Debug, Clone)]
pub struct TokenStore {
    /// The `oauth` folder.
    dir: PathBuf,
}

/// A client registered with an authorization server.
#[derive(Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Registration {
    /// The authorization server (its issuer, or its authorization endpoint
    /// when the metadata names no issuer).
    pub(crate) issuer: String,
    /// The client ID it gave.
    pub(crate) client_id: String,
    /// The secret it gave, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) client_secret: Option<String>,
    /// The redirect URI registered (its port is reused when it is free).
    pub(crate) redirect_uri: String,
}

/// What a tokens file holds.
#[derive(Clone, Serialize, Deserialize)]
struct TokensFile {
    /// The resource (server URL) the tokens are for.
    resource: String,
    /// rmcp's credentials: client ID, token response, scopes, issuer.
    credentials: StoredCredentials,
}

/// What `toolbridge auth status` shows of one sign-in: never a token.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct AuthStatus {
    /// The authorization server that issued the tokens.
    pub issuer: Option<String>,
    /// The scopes granted.
    pub scopes: Vec<String>,
    /// When the access token expires, in seconds since the Unix epoch, if
    /// the authorization server said.
    pub expires_at: Option<u64>,
    /// Whether there is a refresh token, so an expired access token is
    /// renewed without a browser.
    pub refreshable: bool,
}

impl TokenStore {
    /// The user's store: `$XDG_DATA_HOME/toolbridge/oauth`, else
    /// `~/.local/share/toolbridge/oauth`; `None` without either variable.
    pub fn user_default() -> Option<Self> {
        Some(Self::in_dir(crate::config::user_data_dir()?.join("oauth")))
    }

    /// A store in `dir`.
    pub fn in_dir(dir: impl Into<PathBuf>) -> Self {
        TokenStore { dir: dir.into() }
    }

    /// The store's folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The tokens file of `resource`.
    pub fn tokens_path(&self, resource: &Url) -> PathBuf {
        self.dir.join("tokens").join(file_name(resource.as_str()))
    }

    fn registration_path(&self, issuer: &str) -> PathBuf {
        self.dir.join("clients").join(file_name(issuer))
    }

    /// What is known of the sign-in to `resource`, if there is one.
    pub fn status(&self, resource: &Url) -> Result<Option<AuthStatus>, AuthError> {
        let Some(credentials) = self.load_credentials(resource)? else {
            return Ok(None);
        };
        let Some(token) = credentials.token_response.as_ref() else {
            return Ok(None);
        };
        let _ = token;
        Ok(Some(AuthStatus {
            issuer: credentials.issuer.clone(),
            scopes: credentials.granted_scopes.clone(),
            expires_at: expires_in(&credentials)
                .zip(credentials.token_received_at)
                .map(|(expires_in, at)| at.saturating_add(expires_in)),
            refreshable: refresh_token(&credentials).is_some(),
        }))
    }

    /// The stored credentials of `resource`.
    pub(crate) fn load_credentials(
        &self,
        resource: &Url,
    ) -> Result<Option<StoredCredentials>, AuthError> {
        let path = self.tokens_path(resource);
        let Some(file) = read_json::<TokensFile>(&path)? else {
            return Ok(None);
        };
        // A hash collision, or a file copied by hand, is not this resource's.
        Ok((file.resource == resource.as_str()).then_some(file.credentials))
    }

    pub(crate) fn save_credentials(
        &self,
        resource: &Url,
        credentials: StoredCredentials,
    ) -> Result<(), AuthError> {
        let file = TokensFile {
            resource: resource.to_string(),
            credentials,
        };
        write_json(&self.tokens_path(resource), &file)
    }

    /// Forgets the tokens of `resource` (and the DPoP key they were bound
    /// to).
    pub fn forget_tokens(&self, resource: &Url) -> Result<(), AuthError> {
        remove(&self.dpop_key_path(resource))?;
        remove(&self.tokens_path(resource))
    }

    /// The DPoP key file of `resource`: beside its tokens, `.dpop`.
    fn dpop_key_path(&self, resource: &Url) -> PathBuf {
        self.tokens_path(resource).with_extension("dpop")
    }

    /// Keeps the DPoP key `resource`'s tokens are bound to (PKCS#8, 0600).
    pub(crate) fn save_dpop_key(&self, resource: &Url, key: &DpopKey) -> Result<(), AuthError> {
        let path = self.dpop_key_path(resource);
        if let Some(dir) = path.parent() {
            create_private_dir(dir).map_err(|e| AuthError::io(dir, e))?;
        }
        crate::config::write_atomic(&path, key.pkcs8(), 0o600).map_err(|e| AuthError::io(&path, e))
    }

    /// The DPoP key `resource`'s tokens are bound to, if there is one.
    pub(crate) fn dpop_key(&self, resource: &Url) -> Result<Option<DpopKey>, AuthError> {
        let path = self.dpop_key_path(resource);
        match std::fs::read(&path) {
            Ok(bytes) => match DpopKey::from_pkcs8(&bytes) {
                Ok(key) => Ok(Some(key)),
                Err(e) => {
                    tracing::warn!(file = %path.display(), "ignoring an unreadable DPoP key: {e}");
                    Ok(None)
                }
            },
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(AuthError::io(&path, e)),
        }
    }

    /// The client registered with `issuer`, if any.
    pub(crate) fn registration(&self, issuer: &str) -> Result<Option<Registration>, AuthError> {
        let path = self.registration_path(issuer);
        Ok(read_json::<Registration>(&path)?.filter(|r| r.issuer == issuer))
    }

    /// Keeps `registration`.
    pub(crate) fn save_registration(&self, registration: &Registration) -> Result<(), AuthError> {
        write_json(&self.registration_path(&registration.issuer), registration)
    }

    /// Forgets the client registered with `issuer` (it was revoked).
    pub(crate) fn forget_registration(&self, issuer: &str) -> Result<(), AuthError> {
        remove(&self.registration_path(issuer))
    }

    /// rmcp's view of the tokens of `resource`.
    pub(crate) fn credential_store(&self, resource: &Url) -> FileCredentialStore {
        FileCredentialStore {
            store: Arc::new(self.clone()),
            resource: resource.clone(),
        }
    }
}

/// rmcp's [`CredentialStore`] over one resource's tokens file.
pub(crate) struct FileCredentialStore {
    /// Where the file is.
    store: Arc<TokenStore>,
    /// Whose tokens.
    resource: Url,
}

fn store_error(error: AuthError) -> RmcpAuthError {
    RmcpAuthError::InternalError(error.to_string())
}

#[async_trait::async_trait]
impl CredentialStore for FileCredentialStore {
    async fn load(&self) -> Result<Option<StoredCredentials>, RmcpAuthError> {
        self.store
            .load_credentials(&self.resource)
            .map_err(store_error)
    }

    async fn save(&self, credentials: StoredCredentials) -> Result<(), RmcpAuthError> {
        self.store
            .save_credentials(&self.resource, credentials)
            .map_err(store_error)
    }

    async fn clear(&self) -> Result<(), RmcpAuthError> {
        self.store
            .forget_tokens(&self.resource)
            .map_err(store_error)
    }
}

/// When the access token in `credentials` should be refreshed: it has
/// expired, or less than half its life (at most 60 s) is left. A token
/// without an expiry is used until the server refuses it.
pub(crate) fn needs_refresh(credentials: &StoredCredentials) -> bool {
    if credentials.token_response.is_none() {
        return true;
    }
    let (Some(expires_in), Some(received)) =
        (expires_in(credentials), credentials.token_received_at)
    else {
        return false;
    };
    let margin = (expires_in / 2).clamp(1, 60);
    now_secs().saturating_add(margin) >= received.saturating_add(expires_in)
}

/// A field of the token response, read through its JSON form (the token
/// types are the `oauth2` crate's, whose accessor trait rmcp does not
/// export).
fn token_field(credentials: &StoredCredentials, field: &str) -> Option<serde_json::Value> {
    let token = credentials.token_response.as_ref()?;
    let mut value = serde_json::to_value(token).ok()?;
    value.get_mut(field).map(serde_json::Value::take)
}

/// The access token in `credentials`.
pub(crate) fn access_token(credentials: &StoredCredentials) -> Option<String> {
    token_field(credentials, "access_token")?
        .as_str()
        .map(str::to_owned)
}

/// True when the access token in `credentials` is DPoP-bound (its
/// `token_type` is `DPoP`): it is presented with a proof of its key.
pub(crate) fn is_dpop_bound(credentials: &StoredCredentials) -> bool {
    token_field(credentials, "token_type")
        .and_then(|t| t.as_str().map(|t| t.eq_ignore_ascii_case("dpop")))
        .unwrap_or(false)
}

/// The refresh token in `credentials`.
pub(crate) fn refresh_token(credentials: &StoredCredentials) -> Option<String> {
    token_field(credentials, "refresh_token")?
        .as_str()
        .map(str::to_owned)
}

/// The access token's lifetime in seconds, as the token response gave it.
fn expires_in(credentials: &StoredCredentials) -> Option<u64> {
    token_field(credentials, "expires_in")?.as_u64()
}

fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// `host-port-HASH.json` for a URL or issuer: readable, and unique.
fn file_name(key: &str) -> String {
    let host: String = Url::parse(key)
        .ok()
        .and_then(|u| {
            u.host_str()
                .map(|h| format!("{h}-{}", u.port_or_known_default().unwrap_or(0)))
        })
        .unwrap_or_else(|| "server".to_owned())
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '.' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let digest = Sha256::digest(key.as_bytes());
    let hash: String = digest[..8].iter().map(|b| format!("{b:02x}")).collect();
    format!("{host}-{hash}.json")
}

fn read_json<T: for<'de> Deserialize<'de>>(path: &Path) -> Result<Option<T>, AuthError> {
    let bytes = match std::fs::read(path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(AuthError::io(path, e)),
    };
    match serde_json::from_slice(&bytes) {
        Ok(value) => Ok(Some(value)),
        // A damaged file is a sign-in that must be done again, not an error
        // that blocks every command.
        Err(e) => {
            tracing::warn!(file = %path.display(), "ignoring an unreadable sign-in file: {e}");
            Ok(None)
        }
    }
}

fn write_json<T: Serialize>(path: &Path, value: &T) -> Result<(), AuthError> {
    let bytes = serde_json::to_vec_pretty(value)
        .map_err(|e| AuthError::io(path, std::io::Error::other(e)))?;
    if let Some(dir) = path.parent() {
        create_private_dir(dir).map_err(|e| AuthError::io(dir, e))?;
    }
    crate::config::write_atomic(path, &bytes, 0o600).map_err(|e| AuthError::io(path, e))
}

fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
}

fn remove(path: &Path) -> Result<(), AuthError> {
    match std::fs::remove_file(path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(AuthError::io(path, e)),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn credentials(expires_in: Option<u64>, received: u64) -> StoredCredentials {
        let mut token = json!({"access_token": "a", "token_type": "bearer", "refresh_token": "r"});
        if let Some(expires_in) = expires_in {
            token["expires_in"] = json!(expires_in);
        }
        serde_json::from_value(json!({
            "client_id": "c", "token_response": token, "granted_scopes": ["s"],
            "token_received_at": received
        }))
        .unwrap()
    }

    #[test]
    fn a_token_is_refreshed_shortly_before_it_expires_not_on_every_use() {
        let now = now_secs();
        assert!(!needs_refresh(&credentials(Some(3600), now)));
        assert!(!needs_refresh(&credentials(Some(3600), now - 3000)));
        assert!(
            needs_refresh(&credentials(Some(3600), now - 3570)),
            "60 s left"
        );
        assert!(
            needs_refresh(&credentials(Some(3600), now - 7200)),
            "expired"
        );
        // A 10 s token is not refreshed for the first 5 s.
        assert!(!needs_refresh(&credentials(Some(10), now)));
        assert!(!needs_refresh(&credentials(None, 0)), "no expiry given");
        assert_eq!(access_token(&credentials(None, 0)).as_deref(), Some("a"));
        assert_eq!(refresh_token(&credentials(None, 0)).as_deref(), Some("r"));
    }

    #[test]
    fn files_are_named_after_the_host_and_told_apart_by_a_hash() {
        let a = file_name("https://mcp.example.com/mcp");
        let b = file_name("https://mcp.example.com/other");
        assert!(a.starts_with("mcp.example.com-443-"), "{a}");
        assert!(a.ends_with(".json"));
        assert_ne!(a, b);
    }

    #[test]
    fn a_stored_sign_in_reads_back_with_status_and_is_forgotten() {
        let dir = tempfile::tempdir().unwrap();
        let store = TokenStore::in_dir(dir.path().join("oauth"));
        let url = Url::parse("https://h.example/mcp").unwrap();
        assert_eq!(store.status(&url).unwrap(), None);
        store
            .save_credentials(
                &url,
                credentials(Some(3600), 1000).with_issuer(Some("https://as".into())),
            )
            .unwrap();
        let status = store.status(&url).unwrap().unwrap();
        assert_eq!(status.issuer.as_deref(), Some("https://as"));
        assert_eq!(status.scopes, ["s"]);
        assert_eq!(status.expires_at, Some(4600));
        assert!(status.refreshable);
        // Another resource's file is not this one's.
        let other = Url::parse("https://h.example/other").unwrap();
        assert_eq!(store.status(&other).unwrap(), None);
        store.forget_tokens(&url).unwrap();
        assert_eq!(store.status(&url).unwrap(), None);
    }

    #[test]
    fn a_dpop_key_is_kept_private_beside_its_tokens_and_forgotten_with_them() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let store = TokenStore::in_dir(dir.path().join("oauth"));
        let url = Url::parse("https://h.example/mcp").unwrap();
        assert!(store.dpop_key(&url).unwrap().is_none());
        let key = DpopKey::generate().unwrap();
        store.save_dpop_key(&url, &key).unwrap();
        let path = store.dpop_key_path(&url);
        assert_eq!(
            std::fs::metadata(&path).unwrap().permissions().mode() & 0o777,
            0o600
        );
        assert_eq!(store.dpop_key(&url).unwrap().unwrap().jwk(), key.jwk());
        let mut bound = credentials(Some(3600), 1000);
        assert!(!is_dpop_bound(&bound), "a bearer token");
        bound = serde_json::from_value(json!({
            "client_id": "c", "token_response": {"access_token": "a", "token_type": "DPoP"}
        }))
        .unwrap();
        assert!(is_dpop_bound(&bound));
        store.save_credentials(&url, bound).unwrap();
        store.forget_tokens(&url).unwrap();
        assert!(store.dpop_key(&url).unwrap().is_none());
        assert!(!path.exists());
    }
}
