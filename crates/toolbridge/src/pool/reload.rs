//! [`Pool::reload`]: a new config's servers in a running pool, touching
//! only the servers whose entry changed.

use crate::lock::{LockUnpoisoned as _, RwLockUnpoisoned as _};
use std::sync::Arc;

use futures::future::join_all;

use super::{Pool, servers::Servers, slot::Slot};
use crate::config::ServerSpec;

/// What a [`Pool::reload`] changed, each list in config order (removed
/// servers in the old config's).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Changes {
    /// Servers new in the config.
    pub added: Vec<String>,
    /// Servers gone from the config (stopped).
    pub removed: Vec<String>,
    /// Servers whose resolved spec changed (stopped; started again with
    /// the new one on next use).
    pub changed: Vec<String>,
}

impl Changes {
    /// True when no server changed.
    pub fn is_empty(&self) -> bool {
        self.added.is_empty() && self.removed.is_empty() && self.changed.is_empty()
    }
}

impl Pool {
    /// Makes `servers` (resolved specs, as [`Pool::new`] takes them) the
    /// pool's servers, and returns what changed.
    ///
    /// A server whose spec is the same as before is untouched: its
    /// connection, its caches and the calls in flight on it go on. A new
    /// server is added (started on first use, like any). A server gone from
    /// `servers` is stopped, and one whose spec changed (a `disabled`
    /// switch included) is stopped and starts with its new spec on next
    /// use; either way its caches (tool list, resources, prompts, skipped
    /// tools) and pins are dropped with it, and its calls in flight fail
    /// ([`PoolError::Closed`](super::PoolError::Closed)). Its connection
    /// is closed gracefully, and awaited (within
    /// [`PoolOptions::close_timeout`](super::PoolOptions::close_timeout),
    /// then killed); a start of it under way is dropped, its process
    /// killed, and fails with
    /// [`PoolError::Reloaded`](super::PoolError::Reloaded).
    ///
    /// The [`PoolOptions`](super::PoolOptions) stay those the pool was made
    /// with; every server, old or new, shares one `max_parallel_starts`.
    pub async fn reload(&self, servers: impl IntoIterator<Item = ServerSpec>) -> Changes {
        let (changes, retired) = self.swap_servers(servers);
        if changes.is_empty() {
            return changes;
        }
        {
            let mut skipped = self.inner.skipped.lock_unpoisoned();
            for name in changes.removed.iter().chain(&changes.changed) {
                skipped.remove(name);
            }
        }
        tracing::info!(
            added = ?changes.added,
            removed = ?changes.removed,
            changed = ?changes.changed,
            "servers reloaded"
        );
        let conns: Vec<_> = retired.iter().filter_map(|slot| slot.retire()).collect();
        let closing = join_all(conns.iter().map(|c| c.close()));
        if tokio::time::timeout(self.inner.options.close_timeout, closing)
            .await
            .is_err()
        {
            tracing::warn!("removed or changed servers did not close in time; killing them");
        }
        // Dropping the last handles kills any process group still alive.
        drop(conns);
        changes
    }

    /// Swaps in the set for `specs`, keeping the entries whose spec is
    /// unchanged; what changed and the slots taken out.
    fn swap_servers(
        &self,
        specs: impl IntoIterator<Item = ServerSpec>,
    ) -> (Changes, Vec<Arc<Slot>>) {
        let options = &self.inner.options;
        let mut current = self.inner.servers.write_unpoisoned();
        let mut next = Servers::default();
        let mut changes = Changes::default();
        let mut retired = Vec::new();
        for spec in specs {
            if next.has(&spec.name) {
                continue;
            }
            match current.slots.get(&spec.name) {
                Some(old) if old.spec == spec => next.add_kept(&spec.name, &current),
                Some(old) => {
                    changes.changed.push(spec.name.clone());
                    retired.push(old.clone());
                    next.add_new(spec, options);
                }
                None => {
                    changes.added.push(spec.name.clone());
                    next.add_new(spec, options);
                }
            }
        }
        for name in &current.order {
            if !next.has(name) {
                changes.removed.push(name.clone());
                retired.extend(current.slots.get(name).cloned());
            }
        }
        if !changes.is_empty() {
            *current = Arc::new(next);
        }
        (changes, retired)
    }
}
