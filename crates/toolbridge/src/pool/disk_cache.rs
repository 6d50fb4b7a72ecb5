//! The on-disk tool-list cache: each server's tools, kept between runs so
//! that listing does not start servers whose list is fresh.
//!
//! One file per server under [`ToolCacheOptions::dir`]
//! (`$XDG_CACHE_HOME/toolbridge/tools/`, `~/.cache/toolbridge/tools/`),
//! named by the SHA-256 of the server's resolved spec: a changed command,
//! argument, environment value, URL or header gives another file, so an
//! edited config never reads an old list. The file holds the tools and the
//! time they were listed, nothing of the spec: no secret is ever written in
//! clear. Writes are atomic (a temporary file renamed over the entry); an
//! entry that cannot be read, does not parse or is older than
//! [`ToolCacheOptions::ttl`] is ignored, never an error.

use std::{
    io::Write as _,
    path::{Path, PathBuf},
    time::{Duration, SystemTime, UNIX_EPOCH},
};

use rmcp::model::ClientCapabilities;
use serde::{Deserialize, Serialize};
use sha2::{Digest as _, Sha256};

use crate::{
    config::{ServerSpec, TransportSpec},
    tools::McpTool,
};

/// Where the tool-list cache lives and how long an entry is trusted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolCacheOptions {
    /// The folder of the entries.
    pub dir: PathBuf,
    /// How long a listed tool list is used without asking the server again
    /// (default [`ToolCacheOptions::DEFAULT_TTL`]).
    pub ttl: Duration,
}

impl ToolCacheOptions {
    /// 24 hours. A list only goes stale when a server is upgraded or its
    /// code edited under the same config; a changed config, a
    /// `tools/list_changed` notification and a call the server answers with
    /// "unknown tool" each drop the entry at once, and `tools --refresh`
    /// lists again by hand. Against that, every listing of a cold `npx` or
    /// `uvx` server costs seconds, and a user runs `tools`, then `exec`, many
    /// times a day; a day keeps a daily upgrade visible by the next morning
    /// (see docs/performance.md).
    pub const DEFAULT_TTL: Duration = Duration::from_secs(24 * 60 * 60);

    /// The cache in `dir` with the default freshness window.
    pub fn in_dir(dir: impl Into<PathBuf>) -> Self {
        ToolCacheOptions {
            dir: dir.into(),
            ttl: Self::DEFAULT_TTL,
        }
    }

    /// The user's cache: `$XDG_CACHE_HOME/toolbridge/tools`, else
    /// `$HOME/.cache/toolbridge/tools`; `None` when neither is set.
    pub fn user_default() -> Option<Self> {
        Some(Self::in_dir(crate::config::user_cache_dir()?.join("tools")))
    }
}

/// The version of the entry format; part of the key, so a new toolbridge
/// never reads an older one's entries.
const FORMAT: &str = "toolbridge-tool-cache-1";

/// One server's entry in the cache.
#[derive(Debug, Clone)]
pub(super) struct DiskEntry {
    /// The entry's file.
    path: PathBuf,
    /// How long an entry is fresh.
    ttl: Duration,
}

/// What an entry's file holds.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Stored {
    /// When the tools were listed, in ms since the Unix epoch.
    listed_at_ms: u64,
    /// The tools.
    tools: Vec<McpTool>,
}

impl DiskEntry {
    /// The entry of `spec` in the cache `options` describe, for a client
    /// that declares `declared` (servers list tools by the client's
    /// capabilities: server-everything shows its roots tool only to clients
    /// that offer roots).
    pub(super) fn for_spec(
        options: &ToolCacheOptions,
        spec: &ServerSpec,
        declared: &ClientCapabilities,
    ) -> Self {
        DiskEntry {
            path: options
                .dir
                .join(format!("{}.json", spec_key(spec, declared))),
            ttl: options.ttl,
        }
    }

    /// The entry's file.
    #[cfg(test)]
    pub(super) fn path(&self) -> &Path {
        &self.path
    }

    /// The cached tools, if the entry exists, parses and is fresh.
    pub(super) fn load(&self) -> Option<Vec<McpTool>> {
        let text = match std::fs::read(&self.path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return None,
            Err(e) => {
                tracing::debug!(path = %self.path.display(), error = %e, "tool cache entry unreadable; ignoring it");
                return None;
            }
        };
        let stored: Stored = match serde_json::from_slice(&text) {
            Ok(stored) => stored,
            Err(e) => {
                tracing::debug!(path = %self.path.display(), error = %e, "tool cache entry does not parse; ignoring it");
                return None;
            }
        };
        let age = now_ms().checked_sub(stored.listed_at_ms)?;
        if u128::from(age) > self.ttl.as_millis() {
            return None;
        }
        Some(stored.tools)
    }

    /// Writes `tools` as the entry, atomically. A failure (read-only
    /// folder, full disk) only costs the next run a listing: logged, not
    /// returned.
    pub(super) fn store(&self, tools: &[McpTool]) {
        if let Err(e) = self.try_store(tools) {
            tracing::debug!(path = %self.path.display(), error = %e, "could not write the tool cache entry");
        }
    }

    fn try_store(&self, tools: &[McpTool]) -> std::io::Result<()> {
        let dir = self.path.parent().unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir)?;
        let stored = Stored {
            listed_at_ms: now_ms(),
            tools: tools.to_vec(),
        };
        let text = serde_json::to_vec(&stored).map_err(std::io::Error::other)?;
        let mut file = tempfile::NamedTempFile::new_in(dir)?;
        file.write_all(&text)?;
        file.persist(&self.path).map_err(|e| e.error)?;
        Ok(())
    }

    /// Deletes the entry (the list changed, or the user asked to list again).
    pub(super) fn remove(&self) {
        match std::fs::remove_file(&self.path) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => {
                tracing::debug!(path = %self.path.display(), error = %e, "could not remove the tool cache entry")
            }
        }
    }
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// The SHA-256, in hex, of everything in `spec` that decides which tools the
/// server lists: its name, transport, command, arguments, environment,
/// working directory, inherited variables, URL, headers and disabled tools.
/// Timeouts and budgets are left out: changing them keeps the entry.
fn spec_key(spec: &ServerSpec, declared: &ClientCapabilities) -> String {
    let mut key = KeyHasher(Sha256::new());
    key.field(FORMAT);
    key.field(&spec.name);
    match &spec.transport {
        TransportSpec::Stdio(stdio) => {
            key.field("stdio");
            key.field(&stdio.command);
            key.list(&stdio.args);
            key.count(stdio.env.expose().len());
            for (name, value) in stdio.env.expose() {
                key.field(name);
                key.field(value);
            }
            key.field(
                &stdio
                    .cwd
                    .as_deref()
                    .map(|p| p.to_string_lossy())
                    .unwrap_or_default(),
            );
            key.list(&stdio.inherit_env);
        }
        TransportSpec::Http(remote)
        | TransportSpec::Sse(remote)
        | TransportSpec::WebSocket(remote) => {
            key.field(match &spec.transport {
                TransportSpec::Http(_) => "http",
                TransportSpec::Sse(_) => "sse",
                _ => "websocket",
            });
            key.field(&remote.url);
            key.count(remote.headers.expose().len());
            for (name, value) in remote.headers.expose() {
                key.field(name);
                key.field(value);
            }
            key.field(if remote.auto_detect { "auto" } else { "fixed" });
        }
    }
    key.list(&spec.disabled_tools);
    // Only when something is declared, so that the keys of a client that
    // declares nothing stay those of earlier versions.
    if *declared != ClientCapabilities::default() {
        key.field("declared");
        key.field(&serde_json::to_string(declared).unwrap_or_default());
    }
    // Only when set, so that the keys of entries without one stay as they were.
    if let Some(enabled) = &spec.enabled_tools {
        key.field("enabledTools");
        key.list(enabled);
    }
    let digest = key.0.finalize();
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

/// Feeds fields to the hash unambiguously (each one length-prefixed).
struct KeyHasher(Sha256);

impl KeyHasher {
    fn count(&mut self, n: usize) {
        self.0.update((n as u64).to_le_bytes());
    }

    fn field(&mut self, value: &str) {
        self.count(value.len());
        self.0.update(value.as_bytes());
    }

    fn list(&mut self, values: &[String]) {
        self.count(values.len());
        for value in values {
            self.field(value);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::StdioSpec;

    fn none() -> ClientCapabilities {
        ClientCapabilities::default()
    }

    /// A list made for a client that offered roots (server-everything adds
    /// a tool for them) must not answer for one that does not, nor the other
    /// way round.
    #[test]
    fn what_the_client_declares_is_part_of_the_key() {
        let options = ToolCacheOptions::in_dir(Path::new("/cache"));
        let mut roots = ClientCapabilities::default();
        roots.roots = Some(Default::default());
        let bare = DiskEntry::for_spec(&options, &spec("k"), &none());
        let offered = DiskEntry::for_spec(&options, &spec("k"), &roots);
        assert_ne!(bare.path(), offered.path());
    }

    fn spec(env_value: &str) -> ServerSpec {
        let mut spec = ServerSpec::stdio("s", "server", ["--flag"]);
        if let TransportSpec::Stdio(StdioSpec { env, .. }) = &mut spec.transport {
            env.extend([("API_KEY".to_owned(), env_value.to_owned())]);
        }
        spec
    }

    fn tools() -> Vec<McpTool> {
        vec![McpTool {
            id: McpTool::id_for("s", "t"),
            name: "t".into(),
            server_id: "s".into(),
            server_name: "s".into(),
            ..McpTool::default()
        }]
    }

    #[test]
    fn an_entry_round_trips_and_holds_no_secret() {
        let dir = tempfile::tempdir().expect("tempdir");
        let entry = DiskEntry::for_spec(
            &ToolCacheOptions::in_dir(dir.path()),
            &spec("sk-secret"),
            &none(),
        );
        assert!(entry.load().is_none());
        entry.store(&tools());
        assert_eq!(entry.load(), Some(tools()));
        let text = std::fs::read_to_string(entry.path()).expect("entry written");
        assert!(!text.contains("sk-secret"), "{text}");
        let name = entry
            .path()
            .file_name()
            .expect("file name")
            .to_string_lossy();
        assert!(!name.contains("sk-secret"));
        entry.remove();
        assert!(entry.load().is_none());
    }

    #[test]
    fn a_changed_spec_has_another_entry() {
        let options = ToolCacheOptions::in_dir("/cache");
        let a = DiskEntry::for_spec(&options, &spec("one"), &none());
        let b = DiskEntry::for_spec(&options, &spec("two"), &none());
        assert_ne!(a.path(), b.path());
        let mut longer = spec("one");
        longer.timeout = Some(Duration::from_secs(5));
        assert_eq!(
            a.path(),
            DiskEntry::for_spec(&options, &longer, &none()).path()
        );
    }

    #[test]
    fn stale_or_corrupt_entries_are_ignored() {
        let dir = tempfile::tempdir().expect("tempdir");
        let options = ToolCacheOptions {
            dir: dir.path().to_owned(),
            ttl: Duration::ZERO,
        };
        let entry = DiskEntry::for_spec(&options, &spec("x"), &none());
        std::fs::write(
            entry.path(),
            format!(r#"{{"listedAtMs": {}, "tools": []}}"#, now_ms() - 10_000),
        )
        .expect("write");
        assert!(entry.load().is_none(), "stale entry used");
        std::fs::write(entry.path(), "{not json").expect("write");
        assert!(entry.load().is_none());
        std::fs::write(entry.path(), [0xff, 0xfe, 0]).expect("write");
        assert!(entry.load().is_none());
    }
}
