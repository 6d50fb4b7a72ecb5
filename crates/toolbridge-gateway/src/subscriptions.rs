//! [`Subscriptions`]: which client session wants the updates of which
//! resource (`resources/subscribe`), and the upstream's
//! `notifications/resources/updated` fanned out to those sessions only.
//!
//! One upstream subscription per (server, URI), however many clients want
//! it: the first client's subscribe is forwarded (through
//! `Pool::subscribe_resource`, which renews it when the server restarts),
//! the last client's unsubscribe, or its going away, unsubscribes the
//! upstream. Changes of one (server, URI) reach the upstream one at a time,
//! in the order they were decided, so a subscribe racing the last
//! unsubscribe cannot leave the upstream unsubscribed while a client waits.

use std::{
    collections::HashMap,
    sync::{Arc, Mutex},
};
use toolbridge::lock::LockUnpoisoned as _;

use futures::future::join_all;
use rmcp::{
    RoleServer,
    model::ResourceUpdatedNotificationParam,
    service::{Peer, SubscriptionSink},
};
use toolbridge::pool::{Pool, PoolError};

/// (server, URI)
type Key = (String, String);

/// Where a client's resource updates go.
#[derive(Clone)]
pub enum Target {
    /// A 2025-11-25 session's stream (`resources/subscribe`).
    Session(Peer<RoleServer>),
    /// A 2026-07-28 client's `subscriptions/listen` stream (its
    /// `resourceSubscriptions`); it leaves when the stream ends.
    Stream(SubscriptionSink),
}

impl Target {
    /// Whether the client is gone (its session's transport closed).
    fn is_gone(&self) -> bool {
        match self {
            Target::Session(peer) => peer.is_transport_closed(),
            Target::Stream(_) => false,
        }
    }

    async fn send(&self, update: ResourceUpdatedNotificationParam) {
        let sent = match self {
            Target::Session(peer) => peer
                .notify_resource_updated(update)
                .await
                .map_err(|e| e.to_string()),
            Target::Stream(sink) => sink
                .notify_resource_updated(update.uri)
                .await
                .map_err(|e| e.to_string()),
        };
        if let Err(e) = sent {
            tracing::debug!(error = %e, "cannot tell a client of a resource update");
        }
    }
}

/// The resource subscriptions of every client session.
#[derive(Default)]
pub struct Subscriptions {
    entries: Mutex<HashMap<Key, Arc<Entry>>>,
}

/// One subscribed resource of one upstream server.
#[derive(Default)]
struct Entry {
    /// The sessions that want its updates (by `ClientKey` id), and where
    /// each wants them sent.
    clients: Mutex<Vec<(u64, Target)>>,
    /// Whether the upstream is subscribed; held while that changes, so the
    /// upstream hears the changes in the order they were decided.
    upstream: tokio::sync::Mutex<bool>,
}

impl Entry {
    fn clients(&self) -> std::sync::MutexGuard<'_, Vec<(u64, Target)>> {
        self.clients.lock_unpoisoned()
    }
}

impl Subscriptions {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<Key, Arc<Entry>>> {
        self.entries.lock_unpoisoned()
    }

    fn entry(&self, server: &str, uri: &str) -> Arc<Entry> {
        self.lock()
            .entry((server.to_owned(), uri.to_owned()))
            .or_default()
            .clone()
    }

    /// Forgets `key` when nobody wants it and nobody is changing it.
    fn tidy(&self, key: &Key) {
        let mut entries = self.lock();
        let unused = entries.get(key).is_some_and(|entry| {
            Arc::strong_count(entry) == 1
                && entry.clients().is_empty()
                && entry.upstream.try_lock().is_ok_and(|up| !*up)
        });
        if unused {
            entries.remove(key);
        }
    }

    /// Session `client` wants the updates of `uri` of `server` sent to
    /// `target`: the upstream is subscribed unless another client already
    /// made it so.
    pub async fn subscribe(
        &self,
        pool: &Pool,
        server: &str,
        uri: &str,
        client: u64,
        target: Target,
    ) -> Result<(), PoolError> {
        let entry = self.entry(server, uri);
        let result = {
            let mut upstream = entry.upstream.lock().await;
            let result = if *upstream {
                Ok(())
            } else {
                pool.subscribe_resource(server, uri).await
            };
            if result.is_ok() {
                *upstream = true;
                let mut clients = entry.clients();
                clients.retain(|(id, _)| *id != client);
                clients.push((client, target));
            }
            result
        };
        drop(entry);
        self.tidy(&(server.to_owned(), uri.to_owned()));
        result
    }

    /// Session `client` no longer wants the updates of `uri` (of whichever
    /// server it subscribed it on); the upstream is unsubscribed when no
    /// session wants them any more, on `pool`.
    pub async fn unsubscribe(&self, uri: &str, client: u64, pool: &Pool) {
        let keys: Vec<Key> = self
            .lock()
            .keys()
            .filter(|(_, u)| u == uri)
            .cloned()
            .collect();
        for key in keys {
            self.leave(&key, Some(client), pool).await;
        }
    }

    /// Session `client` went away: each of its subscriptions ends as
    /// [`Subscriptions::unsubscribe`] ends one.
    pub async fn forget(&self, client: u64, pool: &Pool) {
        let keys: Vec<Key> = self
            .lock()
            .iter()
            .filter(|(_, entry)| entry.clients().iter().any(|(id, _)| *id == client))
            .map(|(key, _)| key.clone())
            .collect();
        for key in keys {
            self.leave(&key, Some(client), pool).await;
        }
    }

    /// Removes `client` (and sessions that are gone) from `key`, and
    /// unsubscribes the upstream if nobody is left.
    async fn leave(&self, key: &Key, client: Option<u64>, pool: &Pool) {
        let Some(entry) = self.lock().get(key).cloned() else {
            return;
        };
        {
            let mut upstream = entry.upstream.lock().await;
            let nobody = {
                let mut clients = entry.clients();
                clients.retain(|(id, target)| Some(*id) != client && !target.is_gone());
                clients.is_empty()
            };
            if nobody && *upstream {
                *upstream = false;
                let (server, uri) = key;
                if let Err(e) = pool.unsubscribe_resource(server, uri).await {
                    tracing::debug!(server, uri, error = %e, "cannot unsubscribe the upstream");
                }
            }
        }
        drop(entry);
        self.tidy(key);
    }

    /// `update` of `server`'s resource, sent to the sessions that want it.
    /// True when sessions that went away were its last (the caller then
    /// unsubscribes the upstream with [`Subscriptions::release`]).
    pub async fn deliver(&self, server: &str, update: ResourceUpdatedNotificationParam) -> bool {
        let key = (server.to_owned(), update.uri.clone());
        let Some(entry) = self.lock().get(&key).cloned() else {
            return false;
        };
        let targets: Vec<Target> = {
            let mut clients = entry.clients();
            let before = clients.len();
            clients.retain(|(_, target)| !target.is_gone());
            if clients.is_empty() && before > 0 {
                return true;
            }
            clients.iter().map(|(_, target)| target.clone()).collect()
        };
        join_all(targets.iter().map(|target| target.send(update.clone()))).await;
        false
    }

    /// Nobody wants `uri` of `server` any more (its sessions went away):
    /// the upstream is unsubscribed.
    pub async fn release(&self, server: &str, uri: &str, pool: &Pool) {
        self.leave(&(server.to_owned(), uri.to_owned()), None, pool)
            .await;
    }

    /// `server` was started anew in `pool` (its config entry changed): the
    /// resources sessions still want are subscribed on it.
    pub async fn renew(&self, server: &str, pool: &Pool) {
        let entries: Vec<(Key, Arc<Entry>)> = self
            .lock()
            .iter()
            .filter(|((s, _), _)| s == server)
            .map(|(key, entry)| (key.clone(), entry.clone()))
            .collect();
        for ((_, uri), entry) in entries {
            let mut upstream = entry.upstream.lock().await;
            // The new entry has no subscription yet.
            *upstream = false;
            if entry.clients().is_empty() {
                continue;
            }
            match pool.subscribe_resource(server, &uri).await {
                Ok(()) => *upstream = true,
                Err(e) => tracing::warn!(
                    server,
                    uri = %uri,
                    error = %e,
                    "cannot renew the resource subscription on the server's new entry"
                ),
            }
        }
    }

    /// `server` left the config: its subscriptions are dropped.
    pub fn drop_server(&self, server: &str) {
        self.lock().retain(|(s, _), _| s != server);
    }
}
