//! What every command gets: the config file's path, `-q`, and the pool of
//! the configured servers, opened on first use and closed by `main` on every
//! way out.

use std::{cell::OnceCell, path::Path};

use tokio::sync::{Mutex, Notify};
use toolbridge::{
    config::{Config, ConfigError, ConfigLocation, ServerSpec, StdioSpec},
    pins::PinOptions,
    pool::{ClientFeatures, Pool, PoolOptions, ToolCacheOptions},
};

use crate::{
    config_inputs::TerminalEnv,
    outcome::Failure,
    signals::{Signal, Signals},
};

/// The run's shared state. Lives on the one current-thread runtime, so
/// plain cells are enough.
pub struct Context {
    /// The config file: `--config`, else `$TOOLBRIDGE_CONFIG`, else the XDG
    /// location; and whether the user named it (then it must exist).
    config: ConfigLocation,
    /// `-q`: no progress and no messages on stderr, only errors.
    pub quiet: bool,
    /// The configured servers, once a command asked for them.
    servers: OnceCell<Servers>,
    /// Caught from when the servers are opened, so that a signal closes them
    /// instead of orphaning them; until then signals act as usual (a blocked
    /// prompt or stdin read still ends on Ctrl-C). Locked by whoever waits
    /// for the next signal: the command's race, then closing.
    signals: Mutex<Option<Signals>>,
    /// Woken when `signals` is set.
    catching: Notify,
    /// `--root`, `--accept-defaults`: what the pool offers servers.
    client: crate::client::Settings,
    /// The least severe server log message shown on stderr; `None`: none.
    server_logs: Option<crate::server_logs::LogLevel>,
    /// When the command must be over, closing included (`call --timeout`).
    deadline: OnceCell<tokio::time::Instant>,
}

/// What a server still gets to exit by itself after the command's deadline
/// passed, before it is killed: enough for one that exits when its stdin
/// closes, not for one busy with the call that timed out (server-everything
/// kept it 3 s more).
const CLOSE_AFTER_DEADLINE: std::time::Duration = std::time::Duration::from_millis(200);

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
            config: toolbridge::config::locate_config(explicit),
            quiet,
            servers: OnceCell::new(),
            signals: Mutex::new(None),
            catching: Notify::new(),
            client: crate::client::Settings::default(),
            server_logs: None,
            deadline: OnceCell::new(),
        }
    }

    /// The command must be over by `deadline`, closing its servers
    /// included: [`close`](Self::close) then gives them what is left (at
    /// least [`CLOSE_AFTER_DEADLINE`]) and kills those still running.
    pub fn end_by(&self, deadline: tokio::time::Instant) {
        let _ = self.deadline.set(deadline);
    }

    /// The context with the client settings `client` (`--root`,
    /// `--accept-defaults`).
    pub fn with_client(mut self, client: crate::client::Settings) -> Context {
        self.client = client;
        self
    }

    /// Shows servers' log messages at `level` and above on stderr.
    pub fn with_server_logs(mut self, level: Option<crate::server_logs::LogLevel>) -> Context {
        self.server_logs = level;
        self
    }

    /// The config file's path (it may not exist).
    pub fn config_path(&self) -> &Path {
        &self.config.path
    }

    /// The config file, checked: the built-in example server when the
    /// default location has no file; a named file that does not exist, or
    /// one that cannot be read or parsed, is a usage error (exit 2).
    /// Warnings about the file (a misspelt key) go to stderr unless `-q`.
    pub fn load_config(&self) -> Result<Config, Failure> {
        let config = Config::load_located(&self.config, example_spec())
            .map_err(Failure::usage)?
            .with_env(TerminalEnv::default());
        for warning in config.warnings() {
            self.say(format_args!("toolbridge: warning: {warning}"));
        }
        Ok(config)
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
        let config = self.load_config()?;
        let client_features = self.client.features(self.quiet).map_err(Failure::usage)?;
        let tool_cache = ToolCacheOptions::user_default().map(|mut cache| {
            if let Some(ttl) = config.settings().tool_cache_ttl {
                cache.ttl = ttl;
            }
            cache
        });
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
                // Nobody holds the lock before `catching` is notified.
                if let Ok(mut slot) = self.signals.try_lock() {
                    *slot = Some(signals);
                    self.catching.notify_one();
                }
            }
            Err(e) => tracing::warn!("cannot catch SIGINT, SIGTERM and SIGHUP: {e}"),
        }
        Ok(self.servers.get_or_init(|| Servers {
            pool: Pool::new(
                specs,
                PoolOptions {
                    tool_cache,
                    client_features: ClientFeatures {
                        logs: self.server_logs.map(|_| {
                            std::sync::Arc::new(crate::server_logs::StderrLogs)
                                as std::sync::Arc<dyn toolbridge::pool::LogHandler>
                        }),
                        log_level: self.server_logs.map(|level| level.mcp()),
                        ..client_features
                    },
                    sign_in: sign_in(),
                    // Every command here makes its requests and exits: a
                    // listen stream would only delay the first one.
                    listen_for_changes: false,
                    pins: PinOptions::user_default(),
                    ..PoolOptions::default()
                },
            ),
            unresolved,
        }))
    }

    /// The first SIGINT, SIGTERM or SIGHUP after the servers were opened;
    /// never, while they are not.
    pub async fn stop_signal(&self) -> Signal {
        self.catching.notified().await;
        let mut signals = self.signals.lock().await;
        match signals.as_mut() {
            Some(signals) => signals.recv().await,
            None => std::future::pending().await,
        }
    }

    /// Says on stderr (unless `-q`) that the servers still running are
    /// being closed, and how to leave at once.
    pub fn say_closing(&self) {
        let running = self
            .servers
            .get()
            .map_or(0, |s| s.pool.running_server_names().len());
        if let Some(notice) = crate::signals::closing_notice(running) {
            self.say(notice);
        }
    }

    /// Closes every server the command started. A signal meanwhile (a
    /// second Ctrl-C) ends the process at once with 128 + its number; the
    /// reaper then kills the process groups still registered.
    pub async fn close(&self) {
        let Some(servers) = self.servers.get() else {
            return;
        };
        // Without a deadline, the pool's own `close_timeout`.
        let limit = self
            .deadline
            .get()
            .map_or(std::time::Duration::MAX, |deadline| {
                deadline
                    .saturating_duration_since(tokio::time::Instant::now())
                    .max(CLOSE_AFTER_DEADLINE)
            });
        let closing = servers.pool.close_all_within(limit);
        let mut signals = self.signals.lock().await;
        match signals.as_mut() {
            Some(signals) => tokio::select! {
                () = closing => {}
                signal = signals.recv() => {
                    tracing::info!("received {} while closing servers; exiting now", signal.name());
                    std::process::exit(i32::from(signal.code()));
                }
            },
            None => closing.await,
        }
    }
}

/// Browser sign-in for servers that answer 401, when there is a user to
/// do it: `$BROWSER` is set, or stdin is a terminal.
fn sign_in() -> Option<toolbridge::auth::SignIn> {
    use std::io::IsTerminal;
    use toolbridge::auth::{Browser, SignIn, TokenStore};
    if !Browser::is_configured() && !std::io::stdin().is_terminal() {
        return None;
    }
    let store = TokenStore::user_default()?;
    Some(SignIn::new(store, Browser::from_env(), sign_in_prompt()))
}

/// Tells the user where to sign in: always the URL, since a browser that
/// was started may still not show it (another machine, a headless one).
pub fn sign_in_prompt() -> toolbridge::auth::SignInPrompt {
    std::sync::Arc::new(|server: &str, url: &str, opened: bool| {
        let how = if opened {
            "a browser was opened; if it shows nothing, open"
        } else {
            "open"
        };
        let text = format!("toolbridge: to sign in to \"{server}\", {how}:\n  {url}");
        eprintln!("{}", crate::terminal::for_stderr(&text));
    })
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
