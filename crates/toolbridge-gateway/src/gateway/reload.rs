//! [`Gateway::reload`]: a new config's servers (the pool's own reload) and
//! profiles, and the clients told of the lists that changed.

use std::sync::Arc;
use toolbridge::lock::{LockUnpoisoned as _, RwLockUnpoisoned as _};

use toolbridge::config::{Profile, ServerSpec};
#[cfg(doc)]
use toolbridge::pool::Pool;

use super::{
    Gateway,
    config_changes::{ConfigChanges, by_name, enabled, profile_changes},
};
use crate::{
    profile::ViewName,
    upstream_events::{self, ListKind},
};

impl Gateway {
    /// Replaces the servers with `specs` (the pool's
    /// [`Pool::reload`]: new servers added, removed and changed ones
    /// stopped, changed ones starting again with their new entry on next
    /// use, the others untouched) and the profiles with `profiles`. The
    /// clients of each view that shows a server that changed, and of each
    /// profile that changed, are told their lists changed.
    pub async fn reload(&self, specs: Vec<ServerSpec>, profiles: Vec<Profile>) -> ConfigChanges {
        let servers = self.pool().reload(enabled(specs)).await;
        let before = self.inner.profiles.read_unpoisoned().clone();
        let after = by_name(profiles);
        let changes = ConfigChanges {
            servers,
            profiles: profile_changes(&before, &after),
        };
        if !changes.profiles.is_empty() {
            *self.inner.profiles.write_unpoisoned() = Arc::new(after);
        }
        if changes.is_empty() {
            return changes;
        }
        let servers = &changes.servers;
        tracing::info!(
            added = ?servers.added,
            removed = ?servers.removed,
            changed = ?servers.changed,
            profiles = ?changes.profiles,
            "config changed; servers and profiles updated"
        );
        let started: Vec<String> = servers
            .added
            .iter()
            .chain(&servers.changed)
            .cloned()
            .collect();
        upstream_events::watch(self, self.pool(), &started);
        for server in &servers.removed {
            self.inner.subscriptions.drop_server(server);
        }
        for server in &servers.changed {
            // In the background: it starts the server.
            if let Ok(runtime) = tokio::runtime::Handle::try_current() {
                let (gateway, server) = (self.clone(), server.clone());
                runtime.spawn(async move {
                    let pool = gateway.pool();
                    gateway.inner.subscriptions.renew(&server, pool).await;
                });
            }
        }
        let touched: Vec<&String> = servers
            .added
            .iter()
            .chain(&servers.removed)
            .chain(&servers.changed)
            .collect();
        let affected: Vec<ViewName> = self
            .watched_views()
            .into_iter()
            .filter(|name| match name {
                ViewName::All => !touched.is_empty(),
                ViewName::Profile(profile) => {
                    changes.profiles.iter().any(|p| p == profile.as_ref())
                        || self.view(name).is_ok_and(|view| {
                            touched.iter().any(|s| view.profile.includes_server(s))
                        })
                }
            })
            .collect();
        self.forget_lists();
        for kind in ListKind::ALL {
            self.notify(&affected, kind).await;
        }
        changes
    }

    /// Forgets what the gateway knows of every view's lists (built again on
    /// next use) and of the profiles that are gone.
    fn forget_lists(&self) {
        let profiles = self.inner.profiles.read_unpoisoned().clone();
        let gone = |view: &ViewName| {
            view.profile_name()
                .is_some_and(|name| !profiles.contains_key(name))
        };
        self.inner
            .tools
            .lock_unpoisoned()
            .retain(|view, _| !gone(view));
        self.inner.prompts.lock_unpoisoned().clear();
    }
}
