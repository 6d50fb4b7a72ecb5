//! `toolbridge serve token create NAME [--profile P] | list [--json] |
//! revoke NAME`: the gateway's named client tokens
//! ([`toolbridge_gateway::client_tokens`]), kept hashed in
//! `gateway-clients.json` beside the config file. A running gateway picks
//! up a change from its next request.

use std::path::PathBuf;

use toolbridge_gateway::client_tokens::{self, TokenFile};

use crate::{
    context::Context,
    outcome::{Failure, Outcome, exit},
    output,
};

/// `serve token ...`.
#[derive(Debug, clap::Subcommand)]
pub enum TokenCommand {
    /// Make a client token, printed once (only its hash is kept).
    Create(CreateArgs),
    /// List the client tokens: names, profiles, when made (never a token).
    List(ListArgs),
    /// Revoke a client token; a running gateway refuses it from its next request.
    Revoke(RevokeArgs),
}

#[derive(Debug, clap::Args)]
pub struct CreateArgs {
    /// The client's name (letters, digits, '_', '-', '.'), as audit lines show it.
    pub name: String,
    /// Bind the token to this profile: it may use /mcp/PROFILE only.
    #[arg(long, value_name = "PROFILE")]
    pub profile: Option<String>,
}

#[derive(Debug, clap::Args)]
pub struct ListArgs {
    /// One JSON array of {name, profile, created}.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, clap::Args)]
pub struct RevokeArgs {
    /// The name the token was made with.
    pub name: String,
}

/// The tokens file of the config at hand: beside it, as the gateway's own
/// token is.
pub fn file_path(ctx: &Context) -> PathBuf {
    ctx.config_path()
        .parent()
        .map(|dir| dir.join(client_tokens::FILE))
        .unwrap_or_else(|| client_tokens::FILE.into())
}

pub fn run(command: TokenCommand, ctx: &Context) -> Outcome {
    let file = TokenFile::new(file_path(ctx));
    let failed = |e: client_tokens::ClientTokenError| {
        let code = match e {
            client_tokens::ClientTokenError::Io { .. } => exit::CONNECTION,
            _ => exit::USAGE,
        };
        Failure::new(code, e)
    };
    match command {
        TokenCommand::Create(args) => {
            if let Some(profile) = &args.profile {
                // A token for a profile the config lacks would open nothing.
                let config = ctx.load_config()?;
                config
                    .find_profile(profile)
                    .map_err(|e| Failure::new(exit::USAGE, e))?;
            }
            let token = file
                .create(&args.name, args.profile.as_deref())
                .map_err(failed)?;
            output::line(&token)?;
            let bound = args
                .profile
                .map(|p| format!(", for /mcp/{p} only"))
                .unwrap_or_default();
            ctx.say(format_args!(
                "toolbridge: client token {:?} made{bound}; it is shown this once: clients send \
                 Authorization: Bearer <it>",
                args.name
            ));
        }
        TokenCommand::List(args) => {
            let tokens = file.list().map_err(failed)?;
            if args.json {
                output::json(&tokens)?;
            } else if tokens.is_empty() {
                ctx.say(format_args!(
                    "toolbridge: no client tokens; make one with `toolbridge serve token create NAME`"
                ));
            } else {
                for token in tokens {
                    let profile = token.profile.as_deref().unwrap_or("(every path)");
                    output::line(&format!("{}\t{profile}\t{}", token.name, token.created))?;
                }
            }
        }
        TokenCommand::Revoke(args) => {
            file.revoke(&args.name).map_err(failed)?;
            ctx.say(format_args!(
                "toolbridge: client token {:?} revoked",
                args.name
            ));
        }
    }
    Ok(std::process::ExitCode::SUCCESS)
}
