//! `toolbridge servers add NAME`: a stdio server (`--command`, or `-- CMD
//! ARGS...`) or a network server (`--url`) into the config file.

use std::path::{Path, PathBuf};

use anyhow::{Context as _, bail};
use clap::{ArgGroup, Args, ValueEnum};
use toolbridge::config::{self, NewServer, NewTarget, TransportKind};

use crate::context::Context;

/// `toolbridge servers add`
#[derive(Debug, Clone, Args)]
#[command(
    group(ArgGroup::new("target").required(true).args(["command", "url", "argv"])),
    override_usage = "toolbridge servers add NAME --command CMD [--arg ARG]... [--env KEY=VALUE]... [--cwd DIR]\n       \
                      toolbridge servers add NAME [OPTIONS] -- CMD [ARGS]...\n       \
                      toolbridge servers add NAME --url URL [--transport http|sse|websocket] [--header 'NAME: VALUE']..."
)]
pub struct AddArgs {
    /// The server's name.
    pub name: String,
    /// Program to run (a stdio server).
    #[arg(long, value_name = "CMD")]
    pub command: Option<String>,
    /// An argument for --command (repeatable).
    #[arg(
        long = "arg",
        value_name = "ARG",
        allow_hyphen_values = true,
        requires = "command"
    )]
    pub args: Vec<String>,
    /// The program and its arguments, after `--` (instead of --command and --arg).
    #[arg(last = true, value_name = "CMD ARGS")]
    pub argv: Vec<String>,
    /// Environment variable for a stdio server, KEY=VALUE (repeatable; ${VAR} allowed).
    #[arg(long = "env", value_name = "KEY=VALUE", value_parser = parse_env, conflicts_with = "url")]
    pub env: Vec<(String, String)>,
    /// Working directory for a stdio server.
    #[arg(long, value_name = "DIR", conflicts_with = "url")]
    pub cwd: Option<PathBuf>,
    /// URL of a network server.
    #[arg(long, value_name = "URL")]
    pub url: Option<String>,
    /// Transport for --url [default: websocket for ws:// URLs, else streamable HTTP
    /// with a fallback to SSE].
    #[arg(long, value_enum, requires = "url")]
    pub transport: Option<RemoteTransport>,
    /// Header sent with every request, 'Name: value' (repeatable; ${VAR} allowed).
    #[arg(long = "header", value_name = "NAME: VALUE", value_parser = parse_header, requires = "url")]
    pub headers: Vec<(String, String)>,
    /// Seconds one tool call may take [default: 120].
    #[arg(long, value_name = "SECS", value_parser = crate::timeout::parse)]
    pub timeout: Option<std::time::Duration>,
    /// Add the server disabled.
    #[arg(long)]
    pub disabled: bool,
}

/// The network transports `servers add --transport` accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum RemoteTransport {
    /// Streamable HTTP.
    #[value(alias = "streamable-http")]
    Http,
    /// Legacy HTTP+SSE.
    Sse,
    /// WebSocket.
    #[value(alias = "ws")]
    Websocket,
}

impl From<RemoteTransport> for TransportKind {
    fn from(transport: RemoteTransport) -> Self {
        match transport {
            RemoteTransport::Http => TransportKind::Http,
            RemoteTransport::Sse => TransportKind::Sse,
            RemoteTransport::Websocket => TransportKind::WebSocket,
        }
    }
}

fn parse_env(text: &str) -> Result<(String, String), String> {
    match text.split_once('=') {
        Some((key, value)) if !key.is_empty() => Ok((key.to_string(), value.to_string())),
        _ => Err(format!("expected KEY=VALUE, got \"{text}\"")),
    }
}

fn parse_header(text: &str) -> Result<(String, String), String> {
    match text.split_once(':') {
        Some((name, value)) if !name.trim().is_empty() => {
            Ok((name.trim().to_string(), value.trim().to_string()))
        }
        _ => Err("expected 'Name: value', e.g. 'Authorization: Bearer ${TOKEN}'".to_string()),
    }
}

pub fn run(path: &Path, args: AddArgs, ctx: &Context) -> anyhow::Result<()> {
    let target = match (args.url, args.command) {
        (Some(url), _) => NewTarget::Remote {
            url,
            transport: args.transport.map(Into::into),
            headers: args.headers,
        },
        (None, command) => {
            let (command, command_args) = match command {
                Some(command) => (command, args.args),
                None => {
                    let mut argv = args.argv.into_iter();
                    let Some(command) = argv.next() else {
                        bail!("give the server's program: --command CMD, or -- CMD ARGS...");
                    };
                    (command, argv.collect())
                }
            };
            // A relative --cwd means relative to where the user is now; the
            // config file would read it relative to its own directory.
            let cwd = args
                .cwd
                .map(|dir| {
                    std::path::absolute(&dir).with_context(|| format!("--cwd {}", dir.display()))
                })
                .transpose()?;
            NewTarget::Stdio {
                command,
                args: command_args,
                env: args.env,
                cwd,
            }
        }
    };
    let server = NewServer {
        target,
        timeout: args.timeout,
        disabled: args.disabled,
    };
    let created = config::edit(path, |doc| {
        doc.add_server(&args.name, server.to_record())?;
        Ok(!doc.existed())
    })?;
    if created {
        ctx.say(format_args!(
            "created {} (the built-in example server is used only while no config file exists)",
            path.display()
        ));
    }
    ctx.say(format_args!(
        "added server \"{}\" to {}",
        args.name,
        path.display()
    ));
    Ok(())
}
