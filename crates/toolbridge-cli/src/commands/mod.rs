//! One module per subcommand, plus what they share: loading the config into
//! a pool, and closing it on every way out (normal exit and signals).

pub mod bench;
pub mod call;
pub mod config_file;
pub mod doctor;
pub mod example_server;
pub mod exec;
pub mod presets;
pub mod servers;
pub mod tools;

use std::future::Future;

use toolbridge::{
    config::{Config, ConfigError, ServerSpec, StdioSpec},
    pool::{Pool, PoolOptions},
};

use crate::cli::{Cli, Failure, Outcome};

/// What a pool-using command gets.
pub struct Context<'a> {
    pub cli: &'a Cli,
    /// Every enabled server whose config entry resolved.
    pub pool: Pool,
    /// Servers whose entry could not be resolved (an unset `${VAR}`, say):
    /// reported when used, without stopping the others.
    pub unresolved: Unresolved,
}

/// Servers whose config entry could not be resolved, with why.
pub type Unresolved = Vec<(String, ConfigError)>;

impl Context<'_> {
    /// The config error of `server`, if its entry could not be resolved.
    pub fn unresolved(&self, server: &str) -> Option<&ConfigError> {
        self.unresolved
            .iter()
            .find(|(name, _)| name == server)
            .map(|(_, e)| e)
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

/// The servers of the config file (the built-in example server when there is
/// no config file): those that resolved, and the errors of those that did not.
/// A file that cannot be read or parsed is an error of its own (exit 2).
fn load_servers(cli: &Cli) -> Result<(Vec<ServerSpec>, Unresolved), Failure> {
    let path = toolbridge::config::locate(cli.config.as_deref());
    let config = Config::load_or_builtin(&path, example_spec()).map_err(Failure::usage)?;
    let mut specs = Vec::new();
    let mut unresolved = Vec::new();
    for name in config.server_names() {
        match config.resolve(name) {
            Ok(spec) => specs.push(spec),
            Err(e) => unresolved.push((name.to_owned(), e)),
        }
    }
    Ok((specs, unresolved))
}

/// Runs `command` on a current-thread runtime with a pool of the configured
/// servers, and closes every server afterwards, also on SIGINT, SIGTERM and
/// SIGHUP.
pub fn run_with_pool<'a, F, Fut>(cli: &'a Cli, command: F) -> Outcome
where
    F: FnOnce(Context<'a>) -> Fut,
    Fut: Future<Output = Outcome>,
{
    let (servers, unresolved) = load_servers(cli)?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Failure::new(crate::cli::exit::CONNECTION, e))?;
    runtime.block_on(async {
        let pool = Pool::new(servers, PoolOptions::default());
        let ctx = Context {
            cli,
            pool: pool.clone(),
            unresolved,
        };
        let outcome = tokio::select! {
            outcome = command(ctx) => outcome,
            signal = shutdown_signal() => {
                tracing::info!("received {signal}; closing servers");
                pool.close_all().await;
                return Ok(128 + signal_number(signal));
            }
        };
        pool.close_all().await;
        outcome
    })
}

async fn shutdown_signal() -> &'static str {
    use tokio::signal::unix::{SignalKind, signal};
    let (Ok(mut int), Ok(mut term), Ok(mut hup)) = (
        signal(SignalKind::interrupt()),
        signal(SignalKind::terminate()),
        signal(SignalKind::hangup()),
    ) else {
        return std::future::pending().await;
    };
    tokio::select! {
        _ = int.recv() => "SIGINT",
        _ = term.recv() => "SIGTERM",
        _ = hup.recv() => "SIGHUP",
    }
}

fn signal_number(name: &str) -> u8 {
    match name {
        "SIGHUP" => 1,
        "SIGINT" => 2,
        _ => 15,
    }
}
