//! `toolbridge auth login|logout|status [SERVER]`: OAuth sign-in to remote
//! servers. Tokens live in the library's store (`toolbridge::auth`); this
//! file only parses, prints and picks exit codes. Nothing printed here
//! holds a token.

use std::{
    process::ExitCode,
    time::{SystemTime, UNIX_EPOCH},
};

use clap::Subcommand;
use serde::Serialize;
use toolbridge::{
    auth::{self, AuthError, AuthStatus, Browser, TokenStore},
    config::{RemoteSpec, TransportSpec},
};
use url::Url;

use crate::{
    context::Context,
    outcome::{Failure, Outcome, exit},
};

/// The `auth` subcommands.
#[derive(Debug, Subcommand)]
pub enum AuthCommand {
    /// Sign in to a server in the browser and keep its tokens.
    Login {
        /// The server's name in the config.
        server: String,
    },
    /// Revoke a server's tokens (where it supports that) and forget them.
    Logout {
        /// The server's name in the config.
        server: String,
    },
    /// Who is signed in where: issuer, scopes, expiry (never a token).
    Status {
        /// One server; default: every streamable HTTP server.
        server: Option<String>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
}

/// Runs an `auth` subcommand.
pub async fn run(command: AuthCommand, ctx: &Context) -> Outcome {
    let store = TokenStore::user_default().ok_or_else(|| Failure::usage(AuthError::NoStore))?;
    match command {
        AuthCommand::Login { server } => {
            let (url, remote) = remote_server(ctx, &server)?;
            let challenge = auth::challenge_of(&url).await;
            let signed_in = auth::sign_in(
                &server,
                &url,
                &remote.oauth,
                &store,
                challenge.as_deref(),
                &Browser::from_env(),
                &crate::context::sign_in_prompt(),
            )
            .await
            .map_err(failure)?;
            ctx.say(format_args!(
                "signed in to \"{server}\"{}{}",
                signed_in
                    .issuer
                    .map(|i| format!(" at {i}"))
                    .unwrap_or_default(),
                scopes_text(&signed_in.scopes)
            ));
            Ok(ExitCode::SUCCESS)
        }
        AuthCommand::Logout { server } => {
            let (url, _) = remote_server(ctx, &server)?;
            let out = auth::sign_out(&server, &url, &store)
                .await
                .map_err(failure)?;
            ctx.say(match (out.was_signed_in, out.revoked) {
                (false, _) => format!("not signed in to \"{server}\""),
                (true, true) => format!("signed out of \"{server}\"; its tokens were revoked"),
                (true, false) => format!(
                    "signed out of \"{server}\" (its tokens are forgotten; the server offers no \
                     revocation)"
                ),
            });
            Ok(ExitCode::SUCCESS)
        }
        AuthCommand::Status { server, json } => status(ctx, &store, server.as_deref(), json),
    }
}

/// One server's line of `auth status`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Row {
    /// The server's config name.
    server: String,
    /// Whether there are tokens.
    signed_in: bool,
    /// What is known of them.
    #[serde(flatten)]
    status: Option<AuthStatus>,
}

fn status(ctx: &Context, store: &TokenStore, only: Option<&str>, json: bool) -> Outcome {
    let names: Vec<String> = match only {
        Some(name) => {
            remote_server(ctx, name)?;
            vec![name.to_owned()]
        }
        None => {
            let config = ctx.load_config()?;
            config
                .server_names()
                .into_iter()
                .filter(|name| {
                    matches!(
                        config.resolve(name).map(|s| s.transport),
                        Ok(TransportSpec::Http(_))
                    )
                })
                .map(str::to_owned)
                .collect()
        }
    };
    let mut rows = Vec::new();
    for name in names {
        let (url, _) = remote_server(ctx, &name)?;
        let status = store.status(&url).map_err(failure)?;
        rows.push(Row {
            server: name,
            signed_in: status.is_some(),
            status,
        });
    }
    if json {
        crate::output::json(&rows)?;
        return Ok(ExitCode::SUCCESS);
    }
    if rows.is_empty() {
        ctx.say("no streamable HTTP servers in the config");
    }
    for row in rows {
        let line = match &row.status {
            None => format!("{}: not signed in", row.server),
            Some(status) => format!(
                "{}: signed in{}{}{}{}",
                row.server,
                status
                    .issuer
                    .as_ref()
                    .map(|i| format!(" at {i}"))
                    .unwrap_or_default(),
                scopes_text(&status.scopes),
                status.expires_at.map(expiry_text).unwrap_or_default(),
                if status.refreshable {
                    ", refreshed without a browser"
                } else {
                    ""
                }
            ),
        };
        crate::output::line(&line)?;
    }
    Ok(ExitCode::SUCCESS)
}

fn scopes_text(scopes: &[String]) -> String {
    if scopes.is_empty() {
        String::new()
    } else {
        format!(" (scopes: {})", scopes.join(" "))
    }
}

/// ", expires in 42 min" or ", expired 3 min ago".
fn expiry_text(at: u64) -> String {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let minutes = |secs: u64| secs.div_ceil(60);
    if at > now {
        format!(", expires in {} min", minutes(at - now))
    } else {
        format!(", expired {} min ago", minutes(now - at))
    }
}

/// The URL and spec of `server`, a streamable HTTP server of the config.
fn remote_server(ctx: &Context, server: &str) -> Result<(Url, RemoteSpec), Failure> {
    let config = ctx.load_config()?;
    let spec = config.resolve(server).map_err(Failure::usage)?;
    match spec.transport {
        TransportSpec::Http(remote) => {
            let url = Url::parse(remote.url.trim()).map_err(|e| {
                Failure::usage(anyhow::anyhow!(
                    "server \"{server}\": \"url\" is not a valid URL: {e}"
                ))
            })?;
            Ok((url, remote))
        }
        other => Err(Failure::usage(anyhow::anyhow!(
            "server \"{server}\" is a {} server; OAuth sign-in is for streamable HTTP servers \
             (\"type\": \"http\")",
            kind_name(&other)
        ))),
    }
}

fn kind_name(spec: &TransportSpec) -> &'static str {
    match spec {
        TransportSpec::Stdio(_) => "stdio",
        TransportSpec::Sse(_) => "legacy SSE",
        TransportSpec::WebSocket(_) => "WebSocket",
        _ => "remote",
    }
}

/// A sign-in failure as an exit code: timeouts 4, the rest 3.
fn failure(error: AuthError) -> Failure {
    let code = match error {
        AuthError::Timeout { .. } => exit::TIMEOUT,
        AuthError::NoStore => exit::USAGE,
        _ => exit::CONNECTION,
    };
    Failure::new(code, error)
}
