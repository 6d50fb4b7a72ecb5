//! What every command gets: the config file's path, `-q`, and the pool of
//! the configured servers, opened on first use and closed by `main` on every
//! way out.

use std::{
    cell::{Cell, OnceCell},
    path::{Path, PathBuf},
};

use tokio::sync::Notify;
use toolbridge::{
    config::{Config, ConfigError, ServerSpec, StdioSpec},
    pool::{Pool, PoolOptions},
};

use crate::{
    outcome::Failure,
    signals::{Signal, Signals},
};

/// The run's shared state. Lives on the one current-thread runtime, so
/// plain cells are enough.
pub struct Context {
    /// The config file: `--config`, else `$TOOLBRIDGE_CONFIG`, else the XDG
    /// location.
    config: PathBuf,
    /// `-q`: no progress and no messages on stderr, only errors.
    pub quiet: bool,
    /// The configured servers, once a command asked for them.
    servers: OnceCell<Servers>,
    /// Caught from when the servers are opened, so that a signal closes them
    /// instead of orphaning them; until then signals act as usual (a blocked
    /// prompt or stdin read still ends on Ctrl-C).
    signals: Cell<Option<Signals>>,
    /// Woken when `signals` is set.
    catching: Notify,
}

/// The configured servers.
pub struct Servers {
    /// Every enabled server whose config entry resolved.
    pub pool: Pool,
    /// Servers whose entry could not be resolved (an unset `${VAR}`, say):
    /// reported when used, without stopping the others.
    pub unresolved: Vec<(String, ConfigError)>,
}

impl Servers {
    /// The config error of `server`, if its entry could not be resolved.
    pub fn unresolved(&self, server: &str) -> Option<&ConfigError> {
        self.unresolved
            .iter()
            .find(|(name, _)| name == server)
            .map(|(_, e)| e)
    }
}

impl Context {
    /// A context for the config at `explicit` (`--config`) or the default
    /// location.
    pub fn new(explicit: Option<&Path>, quiet: bool) -> Context {
        Context {
            config: toolbridge::config::locate(explicit),
            quiet,
            servers: OnceCell::new(),
            signals: Cell::new(None),
            catching: Notify::new(),
        }
    }

    /// The config file's path (it may not exist).
    pub fn config_path(&self) -> &Path {
        &self.config
    }

    /// Prints `message` on stderr unless `-q` was given.
    pub fn say(&self, message: impl std::fmt::Display) {
        if !self.quiet {
            eprintln!("{}", crate::terminal::for_stderr(&message.to_string()));
        }
    }

    /// The servers of the config file (the built-in example server when
    /// there is none), in a pool that starts each one on first use. A file
    /// that cannot be read or parsed is a usage error (exit 2).
    pub fn servers(&self) -> Result<&Servers, Failure> {
        if let Some(servers) = self.servers.get() {
            return Ok(servers);
        }
        let config =
            Config::load_or_builtin(&self.config, example_spec()).map_err(Failure::usage)?;
        let mut specs: Vec<ServerSpec> = Vec::new();
        let mut unresolved = Vec::new();
        for name in config.server_names() {
            match config.resolve(name) {
                Ok(spec) => specs.push(spec),
                Err(e) => unresolved.push((name.to_owned(), e)),
            }
        }
        // Before the first server can start.
        match Signals::catch() {
            Ok(signals) => {
                self.signals.set(Some(signals));
                self.catching.notify_one();
            }
            Err(e) => tracing::warn!("cannot catch SIGINT, SIGTERM and SIGHUP: {e}"),
        }
        Ok(self.servers.get_or_init(|| Servers {
            pool: Pool::new(specs, PoolOptions::default()),
            unresolved,
        }))
    }

    /// The first SIGINT, SIGTERM or SIGHUP after the servers were opened;
    /// never, while they are not.
    pub async fn stop_signal(&self) -> Signal {
        self.catching.notified().await;
        match self.signals.take() {
            Some(mut signals) => signals.recv().await,
            None => std::future::pending().await,
        }
    }

    /// Closes every server the command started.
    pub async fn close(&self) {
        if let Some(servers) = self.servers.get() {
            servers.pool.close_all().await;
        }
    }
}

/// The built-in example server, started as this executable.
pub fn example_spec() -> StdioSpec {
    let exe = std::env::current_exe()
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_else(|_| "toolbridge".to_owned());
    StdioSpec {
        command: exe,
        args: vec!["example-server".to_owned()],
        ..StdioSpec::default()
    }
}
