//! [`EndReason`]: why a transport ended a connection by itself.

use crate::lock::LockUnpoisoned as _;
use std::sync::{Arc, Mutex};

/// Why a transport ended its connection by itself (a stdio server that
/// prints only noise on stdout, a WebSocket message over the size cap),
/// shared with the pool so a failed start or a closed connection says so
/// instead of "the server closed the connection".
#[derive(Debug, Clone, Default)]
pub struct EndReason(Arc<Mutex<Option<String>>>);

impl EndReason {
    /// Records `reason` (a sentence fragment), keeping the first one given.
    pub(crate) fn set(&self, reason: Option<String>) {
        let mut slot = self.0.lock_unpoisoned();
        if slot.is_none() {
            *slot = reason;
        }
    }

    /// The reason, once the transport gave one.
    pub fn get(&self) -> Option<String> {
        self.0.lock_unpoisoned().clone()
    }
}
