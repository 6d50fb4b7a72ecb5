//! Named client tokens: `toolbridge serve token create NAME [--profile P]`,
//! `list`, `revoke`, and the gateway's check of a bearer token against them.
//!
//! The tokens live in [`FILE`] beside the gateway's own token in the config
//! folder, mode 0600, written atomically (a temporary file renamed over the
//! old one) under a lock on the folder, as the config file is:
//!
//! ```json
//! { "clients": { "ci": { "sha256": "…", "profile": "ops", "created": "2026-12-01T18:00:00Z" } } }
//! ```
//!
//! Only a token's SHA-256 is kept: the token itself is printed once, when it
//! is made. A fast hash is right here, unlike for passwords: a token is 32
//! random bytes, so there is nothing to guess faster with a fast hash (2^256
//! tries either way), and the gateway hashes the token of every request it
//! checks, where a slow hash (bcrypt, Argon2) would cost milliseconds each.
//!
//! The gateway looks at the file's modification time, size and inode on
//! each check of a named token and reads it again when they changed, so a
//! token made or revoked while it runs counts from the next request
//! (one `stat` per request that is not the admin token's).

use std::{
    fs::File,
    io,
    path::{Path, PathBuf},
    sync::RwLock,
};

use serde::{Deserialize, Serialize};
use sha2::{Digest as _, Sha256};
use toolbridge::lock::RwLockUnpoisoned as _;

use crate::{
    identity::{ClientIdentity, ClientKind},
    secret_tokens::{constant_time_eq, hex, random_token},
    watch::{Version, version},
};

/// The file's name, in the config folder.
pub const FILE: &str = "gateway-clients.json";

/// What every named token starts with: secret scanners (and people) can
/// tell a toolbridge client token from other secrets.
pub const PREFIX: &str = "tbc_";

/// What can go wrong with the tokens file.
#[derive(Debug, thiserror::Error)]
pub enum ClientTokenError {
    /// The file could not be read, written or locked.
    #[error("cannot use the client tokens file {path}: {source}; check its folder's permissions")]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// The file is not what toolbridge writes.
    #[error(
        "the client tokens file {path} is not valid ({message}); fix it, or move it away and \
         make the tokens again"
    )]
    Invalid {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// A name that cannot be a token's.
    #[error("{name:?} cannot name a client token: use 1 to 64 letters, digits, '_', '-' or '.'")]
    BadName {
        /// The name given.
        name: String,
    },
    /// The name is taken.
    #[error(
        "a client token named {name:?} exists already; revoke it first \
         (toolbridge serve token revoke {name}) or choose another name"
    )]
    Exists {
        /// The name given.
        name: String,
    },
    /// No token has the name.
    #[error("no client token named {name:?}; `toolbridge serve token list` shows them")]
    Unknown {
        /// The name given.
        name: String,
    },
}

/// One token as the file keeps it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Entry {
    /// SHA-256 of the token, hex.
    sha256: String,
    /// The profile it is bound to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    profile: Option<String>,
    /// When it was made (RFC 3339, UTC).
    created: String,
}

/// The file's contents.
#[derive(Debug, Default, Serialize, Deserialize)]
struct Contents {
    #[serde(default)]
    clients: std::collections::BTreeMap<String, Entry>,
}

/// A token as `serve token list` shows it: never the token, never its hash.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TokenInfo {
    /// Its name.
    pub name: String,
    /// The profile it is bound to, if any.
    pub profile: Option<String>,
    /// When it was made (RFC 3339, UTC).
    pub created: String,
}

/// The tokens file at a path: what the CLI changes.
#[derive(Debug, Clone)]
pub struct TokenFile {
    path: PathBuf,
}

impl TokenFile {
    /// The file at `path` (usually [`FILE`] in the config folder).
    pub fn new(path: impl Into<PathBuf>) -> TokenFile {
        TokenFile { path: path.into() }
    }

    /// Where it is.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Makes a token named `name`, bound to `profile` when given; returns
    /// the token, which is kept nowhere but in the answer.
    pub fn create(&self, name: &str, profile: Option<&str>) -> Result<String, ClientTokenError> {
        check_name(name)?;
        if let Some(profile) = profile {
            check_name(profile)?;
        }
        let token = format!("{PREFIX}{}", random_token().map_err(|e| self.io(e))?);
        self.change(|contents| {
            if contents.clients.contains_key(name) {
                return Err(ClientTokenError::Exists { name: name.into() });
            }
            contents.clients.insert(
                name.to_owned(),
                Entry {
                    sha256: digest(&token),
                    profile: profile.map(str::to_owned),
                    created: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
                },
            );
            Ok(())
        })?;
        Ok(token)
    }

    /// Revokes the token named `name`.
    pub fn revoke(&self, name: &str) -> Result<(), ClientTokenError> {
        self.change(|contents| match contents.clients.remove(name) {
            Some(_) => Ok(()),
            None => Err(ClientTokenError::Unknown { name: name.into() }),
        })
    }

    /// The tokens, by name.
    pub fn list(&self) -> Result<Vec<TokenInfo>, ClientTokenError> {
        Ok(self
            .read()?
            .clients
            .into_iter()
            .map(|(name, entry)| TokenInfo {
                name,
                profile: entry.profile,
                created: entry.created,
            })
            .collect())
    }

    fn io(&self, source: io::Error) -> ClientTokenError {
        ClientTokenError::Io {
            path: self.path.clone(),
            source,
        }
    }

    /// The contents; none when there is no file.
    fn read(&self) -> Result<Contents, ClientTokenError> {
        match std::fs::read_to_string(&self.path) {
            Ok(text) => serde_json::from_str(&text).map_err(|e| ClientTokenError::Invalid {
                path: self.path.clone(),
                message: e.to_string(),
            }),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(Contents::default()),
            Err(e) => Err(self.io(e)),
        }
    }

    /// Applies `change` under the folder's lock and writes the result
    /// atomically (0600); nothing is written when `change` fails.
    fn change(
        &self,
        change: impl FnOnce(&mut Contents) -> Result<(), ClientTokenError>,
    ) -> Result<(), ClientTokenError> {
        let dir = match self.path.parent() {
            Some(dir) if !dir.as_os_str().is_empty() => dir,
            _ => Path::new("."),
        };
        std::fs::create_dir_all(dir).map_err(|e| self.io(e))?;
        let lock = File::open(dir).map_err(|e| self.io(e))?;
        lock.lock().map_err(|e| self.io(e))?;
        let mut contents = self.read()?;
        change(&mut contents)?;
        let mut bytes = serde_json::to_vec_pretty(&contents).map_err(|e| self.io(e.into()))?;
        bytes.push(b'\n');
        toolbridge::config::write_atomic(&self.path, &bytes, 0o600).map_err(|e| self.io(e))
    }
}

/// The gateway's view of the tokens file, read again whenever it changes.
#[derive(Debug)]
pub struct ClientTokens {
    file: TokenFile,
    loaded: RwLock<Loaded>,
}

/// The file as last read.
#[derive(Debug, Default)]
struct Loaded {
    version: Option<Version>,
    entries: Vec<(String, Entry)>,
}

impl ClientTokens {
    /// The tokens of the file at `path` (it need not exist yet).
    pub fn new(path: impl Into<PathBuf>) -> ClientTokens {
        ClientTokens {
            file: TokenFile::new(path),
            loaded: RwLock::default(),
        }
    }

    /// The client `token` is, if it is one of the file's.
    pub fn identify(&self, token: &str) -> Option<ClientIdentity> {
        if !token.starts_with(PREFIX) {
            return None;
        }
        self.refresh();
        let hash = digest(token);
        let loaded = self.loaded.read_unpoisoned();
        // Every entry is compared, each in constant time.
        let mut found = None;
        for (name, entry) in &loaded.entries {
            if constant_time_eq(entry.sha256.as_bytes(), hash.as_bytes()) {
                found = Some((name, entry));
            }
        }
        found.map(|(name, entry)| {
            let mut identity = ClientIdentity::new(ClientKind::Token, name.clone());
            identity.profile = entry.profile.clone();
            identity
        })
    }

    /// Reads the file again if it changed since it was last read. A file
    /// that cannot be read or parsed counts as no tokens (and is logged):
    /// never a token that was revoked.
    fn refresh(&self) {
        let now = version(self.file.path());
        if self.loaded.read_unpoisoned().version == now && now.is_some() {
            return;
        }
        let entries = match now {
            None => Vec::new(),
            Some(_) => match self.file.read() {
                Ok(contents) => contents.clients.into_iter().collect(),
                Err(e) => {
                    tracing::warn!("no client token is accepted: {e}");
                    Vec::new()
                }
            },
        };
        *self.loaded.write_unpoisoned() = Loaded {
            version: now,
            entries,
        };
    }
}

/// SHA-256 of `token`, hex.
fn digest(token: &str) -> String {
    hex(&Sha256::digest(token.as_bytes()))
}

fn check_name(name: &str) -> Result<(), ClientTokenError> {
    let ok = (1..=64).contains(&name.len())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'));
    if ok {
        Ok(())
    } else {
        Err(ClientTokenError::BadName { name: name.into() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn made_listed_identified_revoked() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join(FILE);
        let file = TokenFile::new(&path);
        let tokens = ClientTokens::new(&path);
        let ci = file.create("ci", Some("ops")).expect("create");
        assert!(ci.starts_with(PREFIX) && ci.len() == PREFIX.len() + 64);
        assert!(matches!(
            file.create("ci", None),
            Err(ClientTokenError::Exists { .. })
        ));
        let text = std::fs::read_to_string(&path).expect("file");
        assert!(!text.contains(&ci), "the token itself was stored");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            let mode = std::fs::metadata(&path).expect("meta").permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        let who = tokens.identify(&ci).expect("the token is known");
        assert_eq!(
            (who.kind, who.name.as_str(), who.profile.as_deref()),
            (ClientKind::Token, "ci", Some("ops"))
        );
        assert_eq!(tokens.identify(&format!("{ci}0")), None);
        let listed = file.list().expect("list");
        assert_eq!(listed.len(), 1);
        assert_eq!(listed[0].name, "ci");
        file.revoke("ci").expect("revoke");
        assert_eq!(tokens.identify(&ci), None, "a revoked token was accepted");
        assert!(matches!(
            file.revoke("ci"),
            Err(ClientTokenError::Unknown { .. })
        ));
        assert!(matches!(
            file.create("no/slash", None),
            Err(ClientTokenError::BadName { .. })
        ));
    }
}
