//! `toolbridge serve`: the gateway, one MCP server over every configured
//! server, on streamable HTTP (`--listen`: every server at `/mcp`, each
//! profile of the config at `/mcp/NAME`) or stdio (`--stdio`, with
//! `--profile NAME` one profile's view).
//!
//! On HTTP it prints one line on stderr as soon as it listens, whatever
//! `-q` says, for scripts and tests to read the address from:
//! `toolbridge: listening on http://127.0.0.1:PORT/mcp`.
//!
//! `serve token ...` manages the named client tokens it accepts
//! ([`crate::commands::serve_token`]).

use std::{
    net::SocketAddr,
    num::{NonZeroU64, NonZeroUsize},
    process::ExitCode,
    time::Duration,
};

use anyhow::anyhow;
use tokio_util::sync::CancellationToken;
use toolbridge::{
    config::{Profile, ServerSpec},
    pins::PinOptions,
    pool::PoolOptions,
};
use toolbridge_gateway::{
    Clients, ConnectionLimits, Gateway, GatewayOptions, Limits, Security, TokenSource,
    client_tokens::ClientTokens,
    http,
    profile::ViewName,
    rate_limits::RateLimits,
    resource_server::ResourceServer,
    rights::Rights,
    security::{TOKEN_ENV, TOKEN_FILE},
};

use crate::{
    context::Context,
    outcome::{Failure, Outcome, exit},
    signals::Signals,
};

/// The default listen address: loopback, a port unlikely to be taken.
pub const DEFAULT_LISTEN: &str = "127.0.0.1:8931";

#[derive(Debug, clap::Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct Args {
    /// `serve token ...` (without one: serve).
    #[command(subcommand)]
    pub command: Option<ServeCommand>,
    /// Where to listen for MCP over HTTP (port 0: any free port).
    #[arg(long, value_name = "ADDR:PORT", default_value = DEFAULT_LISTEN)]
    pub listen: SocketAddr,
    /// Serve MCP on stdin/stdout instead of HTTP.
    #[arg(long)]
    pub stdio: bool,
    /// With --stdio: serve this profile of the config (over HTTP every
    /// profile is at /mcp/NAME).
    #[arg(long, value_name = "NAME", requires = "stdio")]
    pub profile: Option<String>,
    /// Serve only this server (repeatable; default: every enabled server).
    #[arg(long = "server", value_name = "NAME")]
    pub servers: Vec<String>,
    /// Worker threads (default: half the cores, at least one).
    #[arg(long, value_name = "N")]
    pub threads: Option<NonZeroUsize>,
    #[command(flatten)]
    pub connections: ConnectionArgs,
}

/// `toolbridge serve ...`: what `serve` does besides serving.
#[derive(Debug, clap::Subcommand)]
pub enum ServeCommand {
    /// The named client tokens the gateway accepts: create, list, revoke.
    #[command(subcommand)]
    Token(crate::commands::serve_token::TokenCommand),
}

/// The limits on the gateway's HTTP connections and on what each client
/// holds (docs/gateway.md).
#[derive(Debug, Clone, clap::Args)]
pub struct ConnectionArgs {
    /// HTTP connections open at once; one more is answered 503.
    #[arg(long, value_name = "N", default_value_t = default_max_connections())]
    pub max_connections: NonZeroUsize,
    /// Seconds a client may take to send a request's headers.
    #[arg(long, value_name = "SECS", default_value_t = secs(ConnectionLimits::DEFAULT_HEADER_TIMEOUT))]
    pub header_timeout: NonZeroU64,
    /// Seconds a keep-alive connection may wait for its next request.
    #[arg(long, value_name = "SECS", default_value_t = secs(ConnectionLimits::DEFAULT_IDLE_TIMEOUT))]
    pub idle_timeout: NonZeroU64,
    /// MCP sessions open at once, all clients together; one more is 503.
    #[arg(long, value_name = "N", default_value_t = nonzero(Limits::DEFAULT_SESSIONS))]
    pub max_sessions: NonZeroUsize,
    /// MCP sessions one client (local user, or remote address) may have
    /// open; one more is 429.
    #[arg(long, value_name = "N", default_value_t = nonzero(Limits::DEFAULT_SESSIONS_PER_CLIENT))]
    pub max_sessions_per_client: NonZeroUsize,
    /// Requests one client may have in flight; one more gets a JSON-RPC
    /// error.
    #[arg(long, value_name = "N", default_value_t = nonzero(Limits::DEFAULT_CALLS_PER_CLIENT))]
    pub max_calls_per_client: NonZeroUsize,
}

fn nonzero(n: usize) -> NonZeroUsize {
    NonZeroUsize::new(n).unwrap_or(NonZeroUsize::MIN)
}

fn default_max_connections() -> NonZeroUsize {
    NonZeroUsize::new(ConnectionLimits::DEFAULT_MAX_CONNECTIONS).unwrap_or(NonZeroUsize::MIN)
}

fn secs(limit: Duration) -> NonZeroU64 {
    NonZeroU64::new(limit.as_secs()).unwrap_or(NonZeroU64::MIN)
}

impl Default for ConnectionArgs {
    fn default() -> Self {
        ConnectionArgs {
            max_connections: default_max_connections(),
            header_timeout: secs(ConnectionLimits::DEFAULT_HEADER_TIMEOUT),
            idle_timeout: secs(ConnectionLimits::DEFAULT_IDLE_TIMEOUT),
            max_sessions: nonzero(Limits::DEFAULT_SESSIONS),
            max_sessions_per_client: nonzero(Limits::DEFAULT_SESSIONS_PER_CLIENT),
            max_calls_per_client: nonzero(Limits::DEFAULT_CALLS_PER_CLIENT),
        }
    }
}

impl ConnectionArgs {
    /// The limits these flags set.
    pub fn limits(&self) -> ConnectionLimits {
        ConnectionLimits {
            max_connections: self.max_connections.get(),
            header_timeout: Duration::from_secs(self.header_timeout.get()),
            idle_timeout: Duration::from_secs(self.idle_timeout.get()),
        }
    }

    /// The caps on what each client holds these flags set.
    pub fn client_limits(&self) -> Limits {
        Limits {
            sessions: self.max_sessions.get(),
            sessions_per_client: self.max_sessions_per_client.get(),
            calls_per_client: self.max_calls_per_client.get(),
        }
    }
}

impl Args {
    /// The gateway's worker threads: `--threads`, else half the cores (at
    /// least one). The other half is left to its stdio servers and its
    /// clients, which on the same machine are on every call's path: on 2
    /// cores one worker made 15-30% more calls per second than two, with a
    /// third of the context switches per call (docs/performance.md). One
    /// thread runs the current-thread runtime: the accept loop and every
    /// call on the same thread.
    pub fn worker_threads(&self) -> usize {
        self.threads.map_or_else(
            || {
                std::thread::available_parallelism()
                    .map_or(1, |cores| cores.get() / 2)
                    .max(1)
            },
            |n| n.get(),
        )
    }
}

pub async fn run(args: Args, ctx: &Context) -> Outcome {
    if let Some(ServeCommand::Token(command)) = args.command {
        return crate::commands::serve_token::run(command, ctx);
    }
    run_with(args, ctx, |_| {}).await
}

/// `serve`, calling `listening` with the settings page's address once the
/// HTTP listener is bound (`toolbridge ui` opens it in the browser).
pub async fn run_with(args: Args, ctx: &Context, listening: impl FnOnce(&str)) -> Outcome {
    let (specs, profiles) = load(ctx, &args.servers)?;
    let view = match &args.profile {
        None => ViewName::All,
        Some(name) => {
            // An unknown profile: the error names the ones there are.
            ctx.load_config()?
                .find_profile(name)
                .map_err(Failure::usage)?;
            ViewName::profile(name)
        }
    };
    // Rules and limits as the gateway starts (a change takes a restart).
    let gateway_settings = ctx.load_config()?.settings().gateway.clone();
    let tracing = tracing_of(ctx)?;
    let gateway = Gateway::new(
        specs,
        GatewayOptions {
            pool: PoolOptions {
                pins: PinOptions::user_default(),
                ..PoolOptions::default()
            },
            limits: args.connections.client_limits(),
            profiles,
            rights: Rights::new(gateway_settings.rules),
            rate_limits: RateLimits::new(&gateway_settings.limits),
            tracing: tracing.clone(),
            ..GatewayOptions::default()
        },
    );
    let stop = CancellationToken::new();
    let mut signals = Signals::catch()
        .map_err(|e| Failure::new(exit::CONNECTION, anyhow!("cannot catch signals: {e}")))?;
    let watching = toolbridge_gateway::watch::watch(
        ctx.config_path().to_owned(),
        gateway.clone(),
        || load(ctx, &args.servers).map_err(|f| format!("{:#}", f.error)),
        stop.clone(),
    );
    let serving = async {
        if args.stdio {
            toolbridge_gateway::stdio::serve(gateway.clone(), view).await
        } else {
            serve_http(&args, ctx, gateway.clone(), stop.clone(), listening).await
        }
    };
    let outcome = tokio::select! {
        result = serving => result
            .map(|()| ExitCode::SUCCESS)
            .map_err(|e| match e {
                // The config's gateway settings: a config error (exit 2).
                toolbridge_gateway::GatewayError::Config(_) => Failure::usage(e),
                e => Failure::new(exit::CONNECTION, e),
            }),
        signal = signals.recv() => {
            tracing::info!("received {}; closing servers", signal.name());
            Ok(signal.exit_code())
        }
        () = watching => Ok(ExitCode::SUCCESS),
    };
    stop.cancel();
    gateway.close_all().await;
    // The spans still queued, sent before the process ends.
    tracing.shutdown().await;
    outcome
}

/// The gateway's tracing, as the config's `"gateway": {"tracing"}` and the
/// OpenTelemetry environment variables say (off without an endpoint).
fn tracing_of(ctx: &Context) -> Result<toolbridge_gateway::tracing_export::Tracing, Failure> {
    let config = ctx.load_config()?;
    toolbridge_gateway::tracing_export::Tracing::start(&config.settings().gateway.tracing)
        .map_err(Failure::usage)
}

async fn serve_http(
    args: &Args,
    ctx: &Context,
    gateway: Gateway,
    stop: CancellationToken,
    listening: impl FnOnce(&str),
) -> Result<(), toolbridge_gateway::GatewayError> {
    let token_file = ctx
        .config_path()
        .parent()
        .map(|dir| dir.join(TOKEN_FILE))
        .unwrap_or_else(|| TOKEN_FILE.into());
    let listener = http::bind(args.listen).await?;
    let addr = listener.local_addr().unwrap_or(args.listen);
    let clients = Clients {
        tokens: Some(ClientTokens::new(crate::commands::serve_token::file_path(
            ctx,
        ))),
        oauth: resource_server(ctx, addr)?,
    };
    let oauth = clients.oauth.is_some();
    let (security, source) = Security::with_clients(
        args.listen,
        std::env::var(TOKEN_ENV).ok(),
        &token_file,
        clients,
    )?;
    match &source {
        TokenSource::File(path) => eprintln!(
            "toolbridge: clients must send Authorization: Bearer <the token in {}>",
            path.display()
        ),
        TokenSource::Env => ctx.say(format_args!(
            "toolbridge: clients must send Authorization: Bearer ${TOKEN_ENV}"
        )),
        TokenSource::None => {}
    }
    eprintln!("toolbridge: listening on {}", http::mcp_url(addr));
    ctx.say(format_args!("toolbridge: settings page at http://{addr}/"));
    listening(&security.page_url(addr));
    let access = toolbridge_gateway::web::Access {
        token: source,
        oauth,
    };
    let web = toolbridge_gateway::web::WebState::with_access(
        gateway.clone(),
        ctx.config_path().to_owned(),
        access,
    );
    let router = http::router(gateway, security, stop.clone(), Some(web));
    http::serve(listener, router, args.connections.limits(), stop).await
}

/// The OAuth resource server of the config's `"gateway": {"oauth"}`, for
/// a gateway listening on `addr`. Without a `resource` in the config, the
/// resource is the listen address, which must then be one clients can
/// reach by (not 0.0.0.0).
fn resource_server(
    ctx: &Context,
    addr: SocketAddr,
) -> Result<Option<ResourceServer>, toolbridge_gateway::GatewayError> {
    let config = ctx
        .load_config()
        .map_err(|f| toolbridge_gateway::GatewayError::Config(format!("{:#}", f.error)))?;
    let Some(oauth) = config.settings().gateway.oauth.clone() else {
        return Ok(None);
    };
    if oauth.resource.is_none() && addr.ip().is_unspecified() {
        return Err(toolbridge_gateway::GatewayError::Config(format!(
            "{}: \"gateway\".\"oauth\" needs \"resource\" (the address clients reach the \
             gateway at, e.g. https://tools.example.com) when it listens on {addr}",
            config.path().display()
        )));
    }
    ResourceServer::new(&oauth, &format!("http://{addr}"))
        .map(Some)
        .map_err(toolbridge_gateway::GatewayError::Config)
}

/// The servers to serve: the config's enabled servers, or those named with
/// `--server` (an unknown name is a usage error). Entries that cannot be
/// resolved (an unset `${VAR}`) are left out with a warning. And the
/// config's profiles (a profile's servers left out by `--server` show
/// nothing).
fn load(ctx: &Context, only: &[String]) -> Result<(Vec<ServerSpec>, Vec<Profile>), Failure> {
    let config = ctx.load_config()?;
    let names = config.server_names();
    for wanted in only {
        if !names.iter().any(|n| n == wanted) {
            return Err(Failure::usage(
                toolbridge_gateway::GatewayError::UnknownServer {
                    server: wanted.clone(),
                    known: names.join(", "),
                },
            ));
        }
    }
    let mut specs = Vec::new();
    for name in names {
        if !only.is_empty() && !only.iter().any(|n| n == name) {
            continue;
        }
        match config.resolve(name) {
            Ok(spec) => specs.push(spec),
            Err(e) => ctx.say(format_args!("toolbridge: warning: not serving {name}: {e}")),
        }
    }
    Ok((specs, config.profiles().to_vec()))
}
