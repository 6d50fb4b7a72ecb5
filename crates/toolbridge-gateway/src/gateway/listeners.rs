//! The 2026-07-28 clients' open `subscriptions/listen` streams, with their
//! views: told of list changes as the sessions are.

use std::sync::{Arc, Mutex, atomic::AtomicU64};
use toolbridge::lock::LockUnpoisoned as _;

use rmcp::{model::ServerNotification, service::SubscriptionSink};

use crate::profile::ViewName;

/// The open `subscriptions/listen` streams, with their views.
#[derive(Default)]
pub(super) struct Listeners {
    pub(super) sinks: Mutex<Vec<(u64, ViewName, SubscriptionSink)>>,
    pub(super) next: AtomicU64,
}

impl Listeners {
    /// Sends each of `notifications` the stream accepted to every stream
    /// of a view `to` takes.
    pub(super) async fn send(
        &self,
        to: impl Fn(&ViewName) -> bool,
        notifications: &[ServerNotification],
    ) {
        let sinks: Vec<SubscriptionSink> = self
            .sinks
            .lock_unpoisoned()
            .iter()
            .filter(|(_, view, _)| to(view))
            .map(|(_, _, sink)| sink.clone())
            .collect();
        for sink in &sinks {
            for notification in notifications {
                // Refused when the client did not ask for that kind.
                let _ = sink.send(notification.clone()).await;
            }
        }
    }

    /// The views of the open streams.
    pub(super) fn views(&self) -> Vec<ViewName> {
        self.sinks
            .lock_unpoisoned()
            .iter()
            .map(|(_, view, _)| view.clone())
            .collect()
    }
}

/// A `subscriptions/listen` stream being told of changes; dropping it
/// stops that.
pub struct Listening {
    pub(super) listeners: Arc<Listeners>,
    pub(super) key: u64,
}

impl Drop for Listening {
    fn drop(&mut self) {
        self.listeners
            .sinks
            .lock_unpoisoned()
            .retain(|(key, _, _)| *key != self.key);
    }
}
