//! What the web API's handlers share.

use std::{path::PathBuf, sync::Arc};

use crate::Gateway;

/// The gateway the page manages and the config file it edits.
#[derive(Clone)]
pub struct WebState {
    inner: Arc<Inner>,
}

struct Inner {
    gateway: Gateway,
    config_path: PathBuf,
    /// Held while doctor runs: one at a time.
    doctor: tokio::sync::Mutex<()>,
}

impl WebState {
    /// The page of `gateway`, editing the config file at `config_path` (the
    /// one the gateway watches).
    pub fn new(gateway: Gateway, config_path: PathBuf) -> Self {
        WebState {
            inner: Arc::new(Inner {
                gateway,
                config_path,
                doctor: tokio::sync::Mutex::new(()),
            }),
        }
    }

    /// The gateway: its upstream pools and their states.
    pub fn gateway(&self) -> &Gateway {
        &self.inner.gateway
    }

    /// The config file the page reads and edits.
    pub fn config_path(&self) -> &std::path::Path {
        &self.inner.config_path
    }

    /// Doctor's turn, unless a doctor run is under way (each starts every
    /// configured server).
    pub fn doctor_turn(&self) -> Option<tokio::sync::MutexGuard<'_, ()>> {
        self.inner.doctor.try_lock().ok()
    }
}
