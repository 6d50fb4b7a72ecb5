//! `toolbridge ui`: the settings page in the browser. Starts the gateway
//! (`serve`) on loopback and opens its page.
//!
//! - Listens on `127.0.0.1:8931` (`serve`'s default) when that port is free,
//!   else on any free port: a stable address keeps what the page remembers
//!   in the browser (the language) from one run to the next, and a gateway
//!   already running there does not stop the page from opening.
//! - Loopback only: the page manages the config file; `serve --listen`
//!   with a token is the way to reach it from elsewhere.
//! - Prints the page's address on stdout (with a one-time sign-in code,
//!   `/#code=CODE`, when `$TOOLBRIDGE_GATEWAY_TOKEN` requires a token: never
//!   the token, which would sit on the browser's command line for every local
//!   user to read) and opens it with `$BROWSER` (`%s` standing for the URL) or
//!   `xdg-open`/`open`, the opener `auth login` uses; `--no-open` only
//!   prints it. Runs until interrupted, like `serve`.

use std::net::SocketAddr;

use anyhow::anyhow;
use toolbridge::auth::Browser;

use crate::{
    commands::serve::{self, DEFAULT_LISTEN},
    context::Context,
    outcome::{Failure, Outcome},
};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Where to listen, on loopback (default: 127.0.0.1:8931 when free,
    /// else any free port; port 0: any free port).
    #[arg(long, value_name = "ADDR:PORT")]
    pub listen: Option<SocketAddr>,
    /// Print the page's address without opening a browser.
    #[arg(long)]
    pub no_open: bool,
}

pub async fn run(args: Args, ctx: &Context) -> Outcome {
    let listen = match args.listen {
        Some(addr) if !addr.ip().is_loopback() => {
            return Err(Failure::usage(anyhow!(
                "`toolbridge ui` listens on loopback only, not {addr}; use \
                 `toolbridge serve --listen {addr}` (it requires a token) to reach the page \
                 from elsewhere"
            )));
        }
        Some(addr) => addr,
        None => default_listen(),
    };
    let no_open = args.no_open;
    let serve_args = serve::Args {
        command: None,
        listen,
        stdio: false,
        profile: None,
        servers: Vec::new(),
        // `ui` runs on the one-thread runtime of every other command.
        threads: None,
        connections: serve::ConnectionArgs::default(),
    };
    serve::run_with(serve_args, ctx, |url| {
        // The address is this command's output (a closed stdout is no
        // reason to stop serving the page).
        if let Err(e) = crate::output::write(&format!("{url}\n")) {
            tracing::debug!("cannot print the page's address: {e}");
        }
        if no_open {
            return;
        }
        if Browser::from_env().open(url) {
            ctx.say("toolbridge: opened the settings page in your browser; Ctrl-C stops it");
        } else {
            eprintln!(
                "toolbridge: no browser to open (set $BROWSER); open the address above yourself"
            );
        }
    })
    .await
}

/// `serve`'s default address when its port is free, else any free port.
fn default_listen() -> SocketAddr {
    let preferred: SocketAddr = DEFAULT_LISTEN
        .parse()
        .unwrap_or(SocketAddr::from(([127, 0, 0, 1], 0)));
    match std::net::TcpListener::bind(preferred) {
        // Free now: released for the gateway to bind a moment later.
        Ok(_) => preferred,
        Err(_) => SocketAddr::new(preferred.ip(), 0),
    }
}
