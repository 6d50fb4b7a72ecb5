//! Which client opened each MCP session: a session (`Mcp-Session-Id`)
//! answers only the client that opened it.
//!
//! With several credentials (named client tokens, OAuth clients) a session
//! id is no longer enough to say who may use it: a client that learnt
//! another's id could send requests in that session under its own token,
//! past its own profile binding and into the other's calls. The gateway
//! notes the [`ClientIdentity::key`](crate::identity::ClientIdentity::key)
//! of the client whose `initialize` opened a session, and answers a
//! request in it from any other client as it answers an unknown session:
//! 404 `Session not found` (so an id cannot be probed either; the client
//! opens a session of its own).
//!
//! Entries of sessions rmcp has closed (a `DELETE`, idle expiry) are dropped
//! whenever the table has doubled since it was last pruned.

use std::{collections::HashMap, sync::Arc};

use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use tokio::sync::Mutex;

/// The size from which the table is pruned.
const PRUNE_FROM: usize = 256;

/// The owners of the sessions of one rmcp session manager.
pub struct SessionOwners {
    table: Mutex<Table>,
    sessions: Arc<LocalSessionManager>,
}

#[derive(Default)]
struct Table {
    owners: HashMap<String, String>,
    pruned_at: usize,
}

impl SessionOwners {
    /// The owners of `sessions`' sessions.
    pub fn new(sessions: Arc<LocalSessionManager>) -> SessionOwners {
        SessionOwners {
            table: Mutex::default(),
            sessions,
        }
    }

    /// Whether the client `key` may use session `id`: yes unless another
    /// client opened it (an id the gateway never gave is rmcp's to refuse).
    pub async fn permits(&self, id: &str, key: &str) -> bool {
        self.table
            .lock()
            .await
            .owners
            .get(id)
            .is_none_or(|owner| owner == key)
    }

    /// Notes that the client `key` opened session `id`.
    pub async fn opened(&self, id: &str, key: String) {
        let mut table = self.table.lock().await;
        table.owners.insert(id.to_owned(), key);
        let len = table.owners.len();
        if len >= PRUNE_FROM && len >= 2 * table.pruned_at {
            let live = self.sessions.sessions.read().await;
            table.owners.retain(|id, _| live.contains_key(id.as_str()));
            table.pruned_at = table.owners.len();
        }
    }
}
