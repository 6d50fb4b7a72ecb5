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
    /// How clients sign in, for the Home view.
    access: Access,
    /// The OAuth sign-ins to remote servers the page started.
    sign_ins: super::sign_ins::SignIns,
}

/// How the gateway's clients sign in, as the Home view says it (never a
/// token itself).
#[derive(Debug, Clone)]
pub struct Access {
    /// Where the admin token comes from.
    pub token: crate::security::TokenSource,
    /// An OAuth issuer is configured.
    pub oauth: bool,
}

impl Default for Access {
    fn default() -> Self {
        Access {
            token: crate::security::TokenSource::None,
            oauth: false,
        }
    }
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
                access: Access::default(),
                sign_ins: Default::default(),
            }),
        }
    }

    /// [`WebState::new`], saying how clients sign in.
    pub fn with_access(gateway: Gateway, config_path: PathBuf, access: Access) -> Self {
        WebState {
            inner: Arc::new(Inner {
                gateway,
                config_path,
                doctor: tokio::sync::Mutex::new(()),
                access,
                sign_ins: Default::default(),
            }),
        }
    }

    /// How clients sign in.
    pub fn access(&self) -> &Access {
        &self.inner.access
    }

    /// The gateway: its upstream pools and their states.
    pub fn gateway(&self) -> &Gateway {
        &self.inner.gateway
    }

    /// The config file the page reads and edits.
    pub fn config_path(&self) -> &std::path::Path {
        &self.inner.config_path
    }

    /// The OAuth sign-ins to remote servers the page started.
    pub fn sign_ins(&self) -> &super::sign_ins::SignIns {
        &self.inner.sign_ins
    }

    /// Doctor's turn, unless a doctor run is under way (each starts every
    /// configured server).
    pub fn doctor_turn(&self) -> Option<tokio::sync::MutexGuard<'_, ()>> {
        self.inner.doctor.try_lock().ok()
    }
}
