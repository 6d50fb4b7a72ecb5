//! The pool's servers at one moment: each configured server's slot (its
//! connection and caches) and pins, in config order. A [`Pool`] reads the
//! set for each use; [`Pool::reload`] swaps it whole, keeping the entries
//! of the servers whose spec did not change.

use std::{collections::HashMap, sync::Arc};

#[cfg(doc)]
use super::Pool;
use super::{PoolOptions, cache::ToolCache, disk_cache::DiskEntry, logs::ServerLogs, slot::Slot};
use crate::{config::ServerSpec, pins::ServerPins};

/// The configured servers.
#[derive(Default)]
pub(super) struct Servers {
    /// Config order, for listings.
    pub(super) order: Vec<String>,
    /// Each server's slot.
    pub(super) slots: HashMap<String, Arc<Slot>>,
    /// The pins of each server pinning applies to.
    pub(super) pins: HashMap<String, Arc<ServerPins>>,
}

impl Servers {
    /// Fresh entries for `specs` (a second spec of a name already taken is
    /// left out); nothing is started.
    pub(super) fn new(specs: impl IntoIterator<Item = ServerSpec>, options: &PoolOptions) -> Self {
        let mut servers = Servers::default();
        for spec in specs {
            if !servers.slots.contains_key(&spec.name) {
                servers.add_new(spec, options);
            }
        }
        servers
    }

    /// Whether the set has `name`.
    pub(super) fn has(&self, name: &str) -> bool {
        self.slots.contains_key(name)
    }

    /// Adds a fresh entry for `spec`: an empty tool cache (or its disk
    /// entry), its own log router, its pins read from disk.
    pub(super) fn add_new(&mut self, spec: ServerSpec, options: &PoolOptions) {
        let declared = options.client_features.capabilities();
        let disk = options
            .tool_cache
            .as_ref()
            .map(|cache| DiskEntry::for_spec(cache, &spec, &declared));
        let cache = ToolCache::with_disk(disk);
        let logs = ServerLogs::new(&spec.name, &options.client_features);
        if let Some(pins) = options
            .pins
            .as_ref()
            .and_then(|p| ServerPins::new(p, &spec))
        {
            self.pins.insert(spec.name.clone(), Arc::new(pins));
        }
        self.order.push(spec.name.clone());
        self.slots
            .insert(spec.name.clone(), Arc::new(Slot::new(spec, cache, logs)));
    }

    /// Adds `name`'s entry from `other` as it is (its connection, caches
    /// and pins shared).
    pub(super) fn add_kept(&mut self, name: &str, other: &Servers) {
        let Some(slot) = other.slots.get(name) else {
            return;
        };
        if let Some(pins) = other.pins.get(name) {
            self.pins.insert(name.to_owned(), pins.clone());
        }
        self.order.push(name.to_owned());
        self.slots.insert(name.to_owned(), slot.clone());
    }
}
