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
}

impl WebState {
    /// The page of `gateway`, editing the config file at `config_path` (the
    /// one the gateway watches).
    pub fn new(gateway: Gateway, config_path: PathBuf) -> Self {
        WebState {
            inner: Arc::new(Inner {
                gateway,
                config_path,
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
}
