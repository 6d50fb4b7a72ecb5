//! [`IndexCache`]: the index of the tool lists last searched, built again
//! only when one of them changed.
//!
//! A pool hands out each server's tool list as an `Arc` that stays the same
//! until the list changes (`notifications/tools/list_changed`, a reconnect,
//! a call that found it stale, a config change that made a new pool), so
//! the lists' identities are the key: no hashing of definitions per search.
//! The cached index holds the lists, so a key's allocations cannot be
//! reused by other lists while it is cached.

use crate::lock::LockUnpoisoned as _;
use std::sync::{Arc, Mutex};

use super::ToolIndex;
use crate::tools::McpTool;

/// Each list's server and address: what an index was built from.
type Key = Vec<(String, usize)>;

/// The last index built, and the lists it was built from.
#[derive(Debug, Default)]
pub struct IndexCache {
    last: Mutex<Option<(Key, Arc<ToolIndex>)>>,
}

impl IndexCache {
    /// An empty cache.
    pub fn new() -> Self {
        Self::default()
    }

    /// The index of `lists` (each server's name and its tool list): the
    /// cached one if it was built from these very lists, else a new one,
    /// which is then kept.
    pub fn index_for(&self, lists: Vec<(String, Arc<Vec<McpTool>>)>) -> Arc<ToolIndex> {
        let key: Key = lists
            .iter()
            .map(|(server, list)| (server.clone(), Arc::as_ptr(list) as usize))
            .collect();
        let mut last = self.last.lock_unpoisoned();
        if let Some((cached, index)) = last.as_ref()
            && *cached == key
        {
            return index.clone();
        }
        let index = Arc::new(ToolIndex::new(lists.into_iter().map(|(_, list)| list)));
        *last = Some((key, index.clone()));
        index
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(names: &[&str]) -> Arc<Vec<McpTool>> {
        Arc::new(
            names
                .iter()
                .map(|name| McpTool {
                    id: McpTool::id_for("s", name),
                    name: (*name).into(),
                    server_id: "s".into(),
                    server_name: "s".into(),
                    ..McpTool::default()
                })
                .collect(),
        )
    }

    #[test]
    fn the_same_lists_reuse_the_index_and_a_changed_list_builds_anew() {
        let cache = IndexCache::new();
        let first = list(&["read_file"]);
        let a = cache.index_for(vec![("s".into(), first.clone())]);
        let b = cache.index_for(vec![("s".into(), first.clone())]);
        assert!(Arc::ptr_eq(&a, &b));
        assert_eq!(a.search("read", 5).len(), 1);
        // The server's list changed: a new list, even with equal contents.
        let changed = list(&["write_file"]);
        let c = cache.index_for(vec![("s".into(), changed)]);
        assert!(!Arc::ptr_eq(&a, &c));
        assert!(c.search("read", 5).is_empty());
        assert_eq!(c.search("write", 5).len(), 1);
        // Another set of servers is another key.
        let d = cache.index_for(vec![("s".into(), first.clone()), ("t".into(), list(&[]))]);
        assert!(!Arc::ptr_eq(&a, &d));
    }
}
