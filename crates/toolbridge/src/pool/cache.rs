//! A server's lists, kept until the server says they changed or the
//! connection is replaced: [`ListCache`] for any list (resources, resource
//! templates, prompts), and [`ToolCache`], the tool list, built on it.
//!
//! A listing takes time, and the list may be invalidated while it is in
//! flight (`notifications/tools/list_changed`, a reconnect). So a listing
//! takes a [`Ticket`] before it asks the server, and [`ListCache::put`]
//! stores its result only if nothing invalidated the cache since: a stale
//! list is returned to its caller but never cached.
//!
//! With a [`DiskEntry`] (the pool's `tool_cache` option), a stored tool list
//! is also written to disk and read back by the next run, and a list the
//! server says changed is deleted there too.

use crate::lock::LockUnpoisoned as _;
use std::sync::{
    Arc, Mutex,
    atomic::{AtomicBool, Ordering},
};

use super::disk_cache::DiskEntry;
use crate::tools::{McpTool, TaskSupport};

/// The cache generation a listing started at; see [`ListCache::put`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Ticket(u64);

/// One server's list of `T`, in memory.
#[derive(Debug)]
pub(super) struct ListCache<T> {
    /// The generation (bumped on every invalidation) and the list stored
    /// since, behind one lock so that a `put` and an `invalidate` can never
    /// interleave.
    state: Mutex<(u64, Option<Arc<Vec<T>>>)>,
}

impl<T> Default for ListCache<T> {
    fn default() -> Self {
        ListCache {
            state: Mutex::new((0, None)),
        }
    }
}

impl<T> ListCache<T> {
    /// The cached list, if it is fresh.
    pub(super) fn get(&self) -> Option<Arc<Vec<T>>> {
        self.lock().1.clone()
    }

    /// Takes a ticket before asking the server for the list.
    pub(super) fn ticket(&self) -> Ticket {
        Ticket(self.lock().0)
    }

    /// Stores `items`, listed with `ticket`, unless the cache was
    /// invalidated after the ticket was taken. Returns whether it stored.
    pub(super) fn put(&self, ticket: Ticket, items: Arc<Vec<T>>) -> bool {
        self.put_with(ticket, items, |_| {})
    }

    /// [`ListCache::put`], running `also` with the list first when it is
    /// stored, under the cache's lock (no invalidation can slip between).
    fn put_with(&self, ticket: Ticket, items: Arc<Vec<T>>, also: impl FnOnce(&[T])) -> bool {
        let mut state = self.lock();
        if state.0 != ticket.0 {
            return false;
        }
        also(&items);
        state.1 = Some(items);
        true
    }

    /// Drops the list (it changed, or the connection is new); listings in
    /// flight will not be cached.
    pub(super) fn invalidate(&self) {
        self.invalidate_with(|| {});
    }

    /// [`ListCache::invalidate`], running `also` under the cache's lock.
    fn invalidate_with(&self, also: impl FnOnce()) {
        let mut state = self.lock();
        state.0 = state.0.wrapping_add(1);
        state.1 = None;
        also();
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, (u64, Option<Arc<Vec<T>>>)> {
        self.state.lock_unpoisoned()
    }
}

/// The shared tool-list cache of one server: a [`ListCache`] of tools, on
/// disk too when the pool keeps one.
#[derive(Debug, Default)]
pub(super) struct ToolCache {
    /// The list in memory.
    list: ListCache<McpTool>,
    /// Whether some tool of the stored list can be called as a task, so
    /// that a call only searches the list when there is something to find.
    /// Set before the list is stored, so never older than it.
    any_task: AtomicBool,
    /// The server's entry in the on-disk cache, when the pool has one.
    disk: Option<DiskEntry>,
    /// Set when the disk had no fresh entry, cleared when the list changes
    /// or the server reconnects: every call looks its tool up, and without
    /// a listed list each one read the disk (a failed `open` per call,
    /// blocking, in async code).
    disk_missed: AtomicBool,
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

/// `tool`'s task support, when it has some (`optional` or `required`).
pub(super) fn task_support(tool: &McpTool) -> Option<TaskSupport> {
    tool.execution
        .as_ref()
        .and_then(|e| e.task_support)
        .filter(|t| *t != TaskSupport::Forbidden)
}

impl ToolCache {
    /// A cache that also keeps its lists in `disk`.
    pub(super) fn with_disk(disk: Option<DiskEntry>) -> Self {
        ToolCache {
            disk,
            ..ToolCache::default()
        }
    }

    /// The cached list, if it is fresh.
    pub(super) fn get(&self) -> Option<Arc<Vec<McpTool>>> {
        self.list.get()
    }

    /// The list in memory, else the one on disk if it is fresh (then kept
    /// in memory too). Never starts anything.
    pub(super) fn get_or_load(&self) -> Option<Arc<Vec<McpTool>>> {
        if let Some(tools) = self.get() {
            return Some(tools);
        }
        if self.disk_missed.load(Ordering::Acquire) {
            return None;
        }
        let ticket = self.ticket();
        let Some(tools) = self.disk.as_ref()?.load() else {
            self.disk_missed.store(true, Ordering::Release);
            return None;
        };
        let tools = Arc::new(tools);
        self.list
            .put_with(ticket, tools.clone(), |tools| self.note_tasks(tools));
        Some(tools)
    }

    /// The task support the cached list (in memory, else on disk) gives
    /// `tool` (`Some(None)`: none, or no such tool). Unknown without a
    /// cached list: `None`.
    pub(super) fn task_support(&self, tool: &str) -> Option<Option<TaskSupport>> {
        let find = |tools: &[McpTool]| tools.iter().find(|t| t.name == tool).and_then(task_support);
        if let Some(tools) = self.get() {
            return Some(match self.any_task.load(Ordering::Acquire) {
                true => find(&tools),
                false => None,
            });
        }
        self.get_or_load().map(|tools| find(&tools))
    }

    /// Takes a ticket before asking the server for its tools.
    pub(super) fn ticket(&self) -> Ticket {
        self.list.ticket()
    }

    /// Stores `tools`, listed with `ticket`, unless the cache was
    /// invalidated after the ticket was taken. Returns whether it stored.
    pub(super) fn put(&self, ticket: Ticket, tools: Arc<Vec<McpTool>>) -> bool {
        self.list.put_with(ticket, tools, |tools| {
            // Under the lock, so that an invalidation cannot slip between
            // the check and the write and leave an old list on disk.
            if let Some(disk) = &self.disk {
                disk.store(tools);
            }
            self.note_tasks(tools);
        })
    }

    fn note_tasks(&self, tools: &[McpTool]) {
        let any = tools.iter().any(|t| task_support(t).is_some());
        self.any_task.store(any, Ordering::Release);
    }

    /// Drops the list in memory (a new connection); the disk entry stays,
    /// listings in flight will not be cached.
    pub(super) fn invalidate(&self) {
        self.list.invalidate();
        self.disk_missed.store(false, Ordering::Release);
    }

    /// The server's list changed (or is doubted): drops it in memory and on
    /// disk, and listings in flight will not be cached.
    pub(super) fn list_changed(&self) {
        self.list.invalidate_with(|| {
            if let Some(disk) = &self.disk {
                disk.remove();
            }
        });
        self.disk_missed.store(false, Ordering::Release);
        if self.changes.0.receiver_count() > 0 {
            let _ = self.changes.0.send(());
        }
    }

    /// Tells the watchers the list they see changed while the server's own
    /// did not (an approval let a withheld tool through); the cached list
    /// stays.
    pub(super) fn announce(&self) {
        if self.changes.0.receiver_count() > 0 {
            let _ = self.changes.0.send(());
        }
    }

    /// The list-changed events from now on.
    pub(super) fn watch(&self) -> tokio::sync::broadcast::Receiver<()> {
        self.changes.0.subscribe()
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

    /// A call looks its tool up in the cached list; without one in memory
    /// the disk is read once, not on every call, until the server
    /// reconnects.
    #[test]
    fn a_missing_disk_entry_is_read_once_until_the_server_reconnects() {
        let dir = tempfile::tempdir().expect("tempdir");
        let options = super::super::ToolCacheOptions::in_dir(dir.path());
        let spec = crate::config::ServerSpec::stdio("s", "server", ["--flag"]);
        let declared = rmcp::model::ClientCapabilities::default();
        let entry = || DiskEntry::for_spec(&options, &spec, &declared);
        let cache = ToolCache::with_disk(Some(entry()));
        assert!(cache.get_or_load().is_none());
        // Another run lists the server and writes its entry meanwhile.
        entry().store(&list("a"));
        assert!(cache.get_or_load().is_none(), "the miss is remembered");
        assert_eq!(cache.task_support("a"), None);
        cache.invalidate();
        let loaded = cache.get_or_load().expect("read again after a reconnect");
        assert_eq!(loaded[0].name, "a");
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

    #[test]
    fn a_list_cache_keeps_only_listings_that_did_not_race_with_a_change() {
        let cache = ListCache::<&str>::default();
        let ticket = cache.ticket();
        cache.invalidate();
        assert!(!cache.put(ticket, Arc::new(vec!["old"])));
        assert!(cache.get().is_none());
        assert!(cache.put(cache.ticket(), Arc::new(vec!["new"])));
        assert_eq!(cache.get().as_deref(), Some(&vec!["new"]));
        cache.invalidate();
        assert!(cache.get().is_none());
    }
}
