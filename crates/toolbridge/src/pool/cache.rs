//! [`ToolCache`]: one server's tool list, kept until the server says it
//! changed or the connection is replaced.
//!
//! A listing takes time, and the list may be invalidated while it is in
//! flight (`notifications/tools/list_changed`, a reconnect). So a listing
//! takes a [`Ticket`] before it asks the server, and [`ToolCache::put`]
//! stores its result only if nothing invalidated the cache since: a stale
//! list is returned to its caller but never cached.
//!
//! With a [`DiskEntry`] (the pool's `tool_cache` option), a stored list is
//! also written to disk and read back by the next run, and a list the
//! server says changed is deleted there too.

use std::sync::{Arc, Mutex};

use super::disk_cache::DiskEntry;
use crate::tools::McpTool;

/// The shared tool-list cache of one server.
#[derive(Debug, Default)]
pub(super) struct ToolCache {
    /// The list and the generation it belongs to, behind one lock so that a
    /// `put` and an `invalidate` can never interleave.
    state: Mutex<State>,
    /// The server's entry in the on-disk cache, when the pool has one.
    disk: Option<DiskEntry>,
    /// Told each time the list changed, for [`Pool::watch_tool_list_changes`](super::Pool::watch_tool_list_changes).
    changes: Changes,
}

/// The senders of list-changed events (nothing is queued while nobody
/// watches).
#[derive(Debug)]
pub(super) struct Changes(tokio::sync::broadcast::Sender<()>);

impl Default for Changes {
    fn default() -> Self {
        Changes(tokio::sync::broadcast::channel(4).0)
    }
}

#[derive(Debug, Default)]
struct State {
    /// Bumped on every invalidation.
    generation: u64,
    /// The cached list, if one was stored since the last invalidation.
    tools: Option<Arc<Vec<McpTool>>>,
    /// Whether some tool of `tools` can only be called as a task, so that
    /// a call only searches the list when there is something to find.
    any_task_only: bool,
}

impl State {
    fn set(&mut self, tools: Arc<Vec<McpTool>>) {
        self.any_task_only = tools.iter().any(McpTool::requires_task);
        self.tools = Some(tools);
    }
}

/// The cache generation a listing started at; see [`ToolCache::put`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Ticket(u64);

impl ToolCache {
    /// A cache that also keeps its lists in `disk`.
    pub(super) fn with_disk(disk: Option<DiskEntry>) -> Self {
        ToolCache {
            state: Mutex::default(),
            disk,
            changes: Changes::default(),
        }
    }

    /// The cached list, if it is fresh.
    pub(super) fn get(&self) -> Option<Arc<Vec<McpTool>>> {
        self.lock().tools.clone()
    }

    /// The list in memory, else the one on disk if it is fresh (then kept
    /// in memory too). Never starts anything.
    pub(super) fn get_or_load(&self) -> Option<Arc<Vec<McpTool>>> {
        if let Some(tools) = self.get() {
            return Some(tools);
        }
        let ticket = self.ticket();
        let tools = Arc::new(self.disk.as_ref()?.load()?);
        let mut state = self.lock();
        if state.generation == ticket.0 {
            state.set(tools.clone());
        }
        Some(tools)
    }

    /// Whether the cached list (in memory, else on disk) says `tool` can
    /// only be called as a task. Unknown without a cached list: `false`.
    pub(super) fn requires_task(&self, tool: &str) -> bool {
        {
            let state = self.lock();
            if let Some(tools) = &state.tools {
                return state.any_task_only
                    && tools.iter().any(|t| t.name == tool && t.requires_task());
            }
        }
        self.get_or_load()
            .is_some_and(|tools| tools.iter().any(|t| t.name == tool && t.requires_task()))
    }

    /// Takes a ticket before asking the server for its tools.
    pub(super) fn ticket(&self) -> Ticket {
        Ticket(self.lock().generation)
    }

    /// Stores `tools`, listed with `ticket`, unless the cache was
    /// invalidated after the ticket was taken. Returns whether it stored.
    pub(super) fn put(&self, ticket: Ticket, tools: Arc<Vec<McpTool>>) -> bool {
        let mut state = self.lock();
        if state.generation != ticket.0 {
            return false;
        }
        if let Some(disk) = &self.disk {
            // Under the lock, so that an invalidation cannot slip between
            // the check and the write and leave an old list on disk.
            disk.store(&tools);
        }
        state.set(tools);
        true
    }

    /// Drops the list in memory (a new connection); the disk entry stays,
    /// listings in flight will not be cached.
    pub(super) fn invalidate(&self) {
        let mut state = self.lock();
        state.generation = state.generation.wrapping_add(1);
        state.tools = None;
    }

    /// The server's list changed (or is doubted): drops it in memory and on
    /// disk, and listings in flight will not be cached.
    pub(super) fn list_changed(&self) {
        let mut state = self.lock();
        state.generation = state.generation.wrapping_add(1);
        state.tools = None;
        if let Some(disk) = &self.disk {
            disk.remove();
        }
        drop(state);
        if self.changes.0.receiver_count() > 0 {
            let _ = self.changes.0.send(());
        }
    }

    /// The list-changed events from now on.
    pub(super) fn watch(&self) -> tokio::sync::broadcast::Receiver<()> {
        self.changes.0.subscribe()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(name: &str) -> Arc<Vec<McpTool>> {
        let tool = rmcp::model::Tool::new(name.to_owned(), "", Arc::new(serde_json::Map::new()));
        Arc::new(vec![McpTool::from_rmcp("s", "s", &tool)])
    }

    #[test]
    fn a_listing_is_cached_until_the_list_changes() {
        let cache = ToolCache::default();
        assert!(cache.get().is_none());
        let tools = list("a");
        assert!(cache.put(cache.ticket(), tools.clone()));
        assert!(cache.get().is_some_and(|got| Arc::ptr_eq(&got, &tools)));
        cache.invalidate();
        assert!(cache.get().is_none());
    }

    #[test]
    fn a_listing_that_raced_with_a_change_is_not_cached() {
        let cache = ToolCache::default();
        let ticket = cache.ticket();
        // The server says its list changed while our listing is in flight:
        // what we got back may be the old list.
        cache.invalidate();
        assert!(!cache.put(ticket, list("old")));
        assert!(cache.get().is_none());
        // A listing started after the change is cached.
        assert!(cache.put(cache.ticket(), list("new")));
        assert_eq!(cache.get().map(|t| t[0].name.clone()), Some("new".into()));
    }
}
