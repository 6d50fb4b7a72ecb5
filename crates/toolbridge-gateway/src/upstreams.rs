//! The upstream servers: one [`Pool`] per configured server.
//!
//! One pool each, rather than one pool over all, so that a config change
//! replaces exactly the servers whose entry changed: the others keep their
//! connection (and their clients' calls in flight). Every client session
//! shares these pools, so each server runs once however many clients there
//! are.

use std::{collections::HashMap, sync::Arc};

use toolbridge::{
    config::ServerSpec,
    pool::{Pool, PoolOptions},
};

/// One upstream server.
#[derive(Clone)]
pub struct Upstream {
    /// Its resolved config entry, to tell whether a new config changed it.
    pub spec: ServerSpec,
    /// Its connection (started on first use, restarted after a crash).
    pub pool: Pool,
}

/// The upstream servers at one moment; replaced as a whole when the config
/// changes (sessions holding the old set finish with it).
#[derive(Clone, Default)]
pub struct Upstreams {
    /// Server names in config order (the order listings follow).
    pub order: Vec<String>,
    /// The servers by name.
    pub by_name: HashMap<String, Upstream>,
}

/// What [`Upstreams::updated`] (and a gateway's reload) changed.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Changes {
    /// Servers new in the config.
    pub added: Vec<String>,
    /// Servers gone from the config.
    pub removed: Vec<String>,
    /// Servers whose entry changed (restarted).
    pub changed: Vec<String>,
    /// Profiles added, removed or changed, sorted (set by
    /// [`Gateway::reload`](crate::Gateway::reload)).
    pub profiles: Vec<String>,
}

impl Changes {
    /// True when nothing changed.
    pub fn is_empty(&self) -> bool {
        self.added.is_empty()
            && self.removed.is_empty()
            && self.changed.is_empty()
            && self.profiles.is_empty()
    }
}

impl Upstreams {
    /// Pools for `specs` (disabled ones left out); nothing is started.
    pub fn new(specs: Vec<ServerSpec>, options: &PoolOptions) -> Self {
        let mut upstreams = Upstreams::default();
        for spec in specs.into_iter().filter(|s| !s.disabled) {
            if upstreams.by_name.contains_key(&spec.name) {
                continue;
            }
            upstreams.order.push(spec.name.clone());
            upstreams
                .by_name
                .insert(spec.name.clone(), upstream(spec, options));
        }
        upstreams
    }

    /// The set for `specs`, keeping the pools of servers whose entry did not
    /// change; the pools to close (removed or changed servers) and what
    /// changed.
    pub fn updated(
        &self,
        specs: Vec<ServerSpec>,
        options: &PoolOptions,
    ) -> (Upstreams, Vec<Pool>, Changes) {
        let mut next = Upstreams::default();
        let mut changes = Changes::default();
        for spec in specs.into_iter().filter(|s| !s.disabled) {
            if next.by_name.contains_key(&spec.name) {
                continue;
            }
            next.order.push(spec.name.clone());
            let kept = match self.by_name.get(&spec.name) {
                Some(old) if old.spec == spec => old.clone(),
                Some(_) => {
                    changes.changed.push(spec.name.clone());
                    upstream(spec.clone(), options)
                }
                None => {
                    changes.added.push(spec.name.clone());
                    upstream(spec.clone(), options)
                }
            };
            next.by_name.insert(spec.name.clone(), kept);
        }
        let mut closing = Vec::new();
        for name in &self.order {
            match next.by_name.get(name) {
                None => {
                    changes.removed.push(name.clone());
                    closing.extend(self.by_name.get(name).map(|u| u.pool.clone()));
                }
                Some(_) if changes.changed.contains(name) => {
                    closing.extend(self.by_name.get(name).map(|u| u.pool.clone()));
                }
                Some(_) => {}
            }
        }
        (next, closing, changes)
    }

    /// The pool of `server`.
    pub fn pool(&self, server: &str) -> Option<&Pool> {
        self.by_name.get(server).map(|u| &u.pool)
    }

    /// The servers with a pool each, in config order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Pool)> {
        self.order
            .iter()
            .filter_map(|name| self.by_name.get(name).map(|u| (name.as_str(), &u.pool)))
    }

    /// Closes every server.
    pub async fn close_all(&self) {
        futures::future::join_all(self.by_name.values().map(|u| u.pool.close_all())).await;
    }
}

fn upstream(spec: ServerSpec, options: &PoolOptions) -> Upstream {
    Upstream {
        pool: Pool::new([spec.clone()], options.clone()),
        spec,
    }
}

/// The upstreams as sessions see them: swapped whole on a config change.
pub type SharedUpstreams = Arc<Upstreams>;
