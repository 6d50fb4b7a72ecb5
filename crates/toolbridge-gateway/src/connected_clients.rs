//! The clients connected to the gateway, as the settings page's Home lists
//! them: each session's `clientInfo` (name, version), its protocol
//! version, its view (`/mcp` or a profile), who it signed in as, its tool
//! calls and when it was last seen.
//!
//! A session is noted when its client finishes the handshake
//! (`notifications/initialized`) and marked closed when the session ends
//! (the [`Connected`] guard the session holds drops). Memory is bounded:
//! at most [`KEPT`] entries, the closed ones least recently seen going
//! first. Nothing secret is kept: a token client is known by its name.

use std::{
    collections::HashMap,
    sync::{Arc, Mutex},
    time::{SystemTime, UNIX_EPOCH},
};

use serde::Serialize;
use toolbridge::lock::LockUnpoisoned as _;

use crate::{identity::ClientIdentity, profile::ViewName};

/// The most entries kept (open sessions included).
pub const KEPT: usize = 200;

/// One client as the page shows it.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ClientEntry {
    /// `clientInfo.name`.
    pub name: String,
    /// `clientInfo.version`.
    pub version: String,
    /// The protocol version it negotiated (e.g. `2025-11-25`).
    pub protocol: String,
    /// The profile it connected to (`/mcp/NAME`); `None`: `/mcp`.
    pub profile: Option<String>,
    /// Who it signed in as: a named token, an OAuth subject, `admin`,
    /// `local`; `None` when no credential was needed.
    pub signed_in_as: Option<String>,
    /// Tool calls made in this session.
    pub calls: u64,
    /// When the session started, in ms since the Unix epoch.
    pub connected_ms: u64,
    /// When it last made a request, in ms since the Unix epoch.
    pub last_seen_ms: u64,
    /// The session is still open.
    pub open: bool,
    /// A 2026-07-28 client without a session: one entry per application,
    /// version, profile and sign-in, its calls counted together.
    pub stateless: bool,
}

/// Every client seen, by session. Cheap to clone.
#[derive(Debug, Clone, Default)]
pub struct ConnectedClients {
    entries: Arc<Mutex<HashMap<u64, ClientEntry>>>,
}

/// A session's place in [`ConnectedClients`]: marks it closed on drop.
#[derive(Debug)]
pub struct Connected {
    clients: ConnectedClients,
    session: u64,
}

impl Drop for Connected {
    fn drop(&mut self) {
        if let Some(entry) = self
            .clients
            .entries
            .lock_unpoisoned()
            .get_mut(&self.session)
        {
            entry.open = false;
        }
    }
}

impl ConnectedClients {
    /// Notes session `session` of a client that said it is `info`, speaking
    /// `protocol`, on `view`, signed in as `identity`. Until the returned
    /// guard drops, it is open.
    pub fn opened(
        &self,
        session: u64,
        info: &rmcp::model::Implementation,
        protocol: &str,
        view: &ViewName,
        identity: Option<&ClientIdentity>,
    ) -> Connected {
        let now = now_ms();
        let entry = ClientEntry {
            name: info.name.clone(),
            version: info.version.clone(),
            protocol: protocol.to_owned(),
            profile: view.profile_name().map(str::to_owned),
            signed_in_as: identity.map(|c| format!("{} ({})", c.name, c.kind.as_str())),
            calls: 0,
            connected_ms: now,
            last_seen_ms: now,
            open: true,
            stateless: false,
        };
        let mut entries = self.entries.lock_unpoisoned();
        entries.insert(session, entry);
        evict(&mut entries);
        Connected {
            clients: self.clone(),
            session,
        }
    }

    /// Session `session` made a tool call (a session that never finished
    /// its handshake is not listed).
    pub fn called(&self, session: u64) {
        if let Some(entry) = self.entries.lock_unpoisoned().get_mut(&session) {
            entry.calls += 1;
            entry.last_seen_ms = now_ms();
        }
    }

    /// A stateless (2026-07-28) client that said it is `info` (in its
    /// request's `_meta`) made a tool call on `view`, signed in as `identity`.
    pub fn stateless_call(
        &self,
        info: &rmcp::model::Implementation,
        view: &ViewName,
        identity: Option<&ClientIdentity>,
    ) {
        use std::hash::{Hash as _, Hasher as _};
        let mut hasher = std::hash::DefaultHasher::new();
        (
            &info.name,
            &info.version,
            view.profile_name(),
            identity.map(|c| &c.name),
        )
            .hash(&mut hasher);
        // Apart from the sessions' ids, which count up from 0.
        let key = hasher.finish() | 1 << 63;
        let now = now_ms();
        let mut entries = self.entries.lock_unpoisoned();
        let entry = entries.entry(key).or_insert_with(|| ClientEntry {
            name: info.name.clone(),
            version: info.version.clone(),
            protocol: "2026-07-28".to_owned(),
            profile: view.profile_name().map(str::to_owned),
            signed_in_as: identity.map(|c| format!("{} ({})", c.name, c.kind.as_str())),
            calls: 0,
            connected_ms: now,
            last_seen_ms: now,
            open: false,
            stateless: true,
        });
        entry.calls += 1;
        entry.last_seen_ms = now;
        evict(&mut entries);
    }

    /// Every client kept, the open ones first, then the most recently seen.
    pub fn list(&self) -> Vec<ClientEntry> {
        let mut list: Vec<ClientEntry> = self.entries.lock_unpoisoned().values().cloned().collect();
        list.sort_by(|a, b| {
            b.open
                .cmp(&a.open)
                .then(b.last_seen_ms.cmp(&a.last_seen_ms))
                .then(a.name.cmp(&b.name))
        });
        list
    }
}

/// Drops entries beyond [`KEPT`]: closed ones least recently seen first,
/// then (should every kept one be open) the open ones least recently seen.
fn evict(entries: &mut HashMap<u64, ClientEntry>) {
    while entries.len() > KEPT {
        let oldest = entries
            .iter()
            .min_by_key(|(_, e)| (e.open, e.last_seen_ms))
            .map(|(id, _)| *id);
        match oldest {
            Some(id) => entries.remove(&id),
            None => break,
        };
    }
}

pub(crate) fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info(name: &str) -> rmcp::model::Implementation {
        rmcp::model::Implementation::new(name, "1.2")
    }

    #[test]
    fn a_session_is_listed_counts_its_calls_and_closes_with_its_guard() {
        let clients = ConnectedClients::default();
        let guard = clients.opened(
            7,
            &info("claude-code"),
            "2025-11-25",
            &ViewName::profile("dev"),
            None,
        );
        clients.called(7);
        clients.called(7);
        clients.called(8); // never opened: not listed
        let list = clients.list();
        assert_eq!(list.len(), 1);
        assert_eq!(list[0].name, "claude-code");
        assert_eq!(list[0].profile.as_deref(), Some("dev"));
        assert_eq!(list[0].calls, 2);
        assert!(list[0].open);
        drop(guard);
        assert!(!clients.list()[0].open);
    }

    #[test]
    fn memory_is_bounded_and_closed_sessions_go_first() {
        let clients = ConnectedClients::default();
        let open = clients.opened(0, &info("kept-open"), "2025-11-25", &ViewName::All, None);
        for session in 1..=(KEPT as u64 + 50) {
            drop(clients.opened(session, &info("gone"), "2025-11-25", &ViewName::All, None));
        }
        let list = clients.list();
        assert_eq!(list.len(), KEPT);
        assert_eq!(list[0].name, "kept-open");
        drop(open);
    }
}
