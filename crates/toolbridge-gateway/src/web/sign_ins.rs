//! [`SignIns`]: the OAuth sign-ins the page starts for remote servers
//! (issue 29), one per server at a time.
//!
//! Each is the library's own browser sign-in ([`toolbridge::auth::sign_in`]:
//! discovery, registration, PKCE, the loopback redirect listener on
//! 127.0.0.1, the code exchange, the tokens stored), run in the gateway
//! with [`Browser::None`]: the gateway opens no browser of its own (it may
//! have no display); its [`SignInPrompt`] hands the authorization URL to
//! the page, which opens it in a tab of the user's browser. The browser is
//! sent back to the gateway's loopback listener, so it must run on the
//! gateway's machine, as for `toolbridge auth login`.
//!
//! The tokens go to the user's store ([`TokenStore::user_default`]), the
//! one the gateway's own connections read theirs from (a pool without a
//! `SignIn` uses it), so the server works as soon as the sign-in is done:
//! it is started again at once ([`reconnect`]) and the gateway's clients
//! are told its lists changed.

use std::{collections::HashMap, sync::Arc, time::Duration};

use serde::Serialize;
use tokio::sync::watch;
use toolbridge::{
    auth::{self, AuthError, Browser, SignInPrompt, TokenStore},
    config::OAuthSpec,
    lock::LockUnpoisoned as _,
};
use url::Url;

use crate::{Gateway, upstream_events::ListKind};

/// How far one sign-in has come.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(
    tag = "state",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum Phase {
    /// Finding the authorization server and registering toolbridge.
    Starting,
    /// The user is to visit `authorization_url`; the loopback listener
    /// waits for the browser to come back.
    Waiting {
        /// Where the user signs in.
        authorization_url: String,
    },
    /// The tokens are stored.
    SignedIn {
        /// The authorization server that issued them.
        issuer: Option<String>,
        /// The scopes granted.
        scopes: Vec<String>,
        /// Why the server still did not start with them, if it did not.
        #[serde(skip_serializing_if = "Option::is_none")]
        error: Option<String>,
    },
    /// The sign-in failed: why, naming the server, and what to do.
    Failed {
        /// One plain sentence (English, as the library's errors).
        message: String,
    },
}

impl Phase {
    /// Still under way: a second start joins it.
    pub fn is_running(&self) -> bool {
        matches!(self, Phase::Starting | Phase::Waiting { .. })
    }
}

/// One sign-in: its phase as it changes, and its task, to cancel it.
struct Task {
    phase: watch::Receiver<Phase>,
    handle: tokio::task::AbortHandle,
}

/// The page's sign-ins, by server name.
#[derive(Default)]
pub struct SignIns {
    tasks: std::sync::Mutex<HashMap<String, Task>>,
}

/// What a sign-in needs to know of its server.
pub struct Target {
    /// The server's config name.
    pub server: String,
    /// Its URL: the resource the tokens are for.
    pub url: Url,
    /// The config's `oauth` object (client, scopes, grant).
    pub oauth: OAuthSpec,
}

impl SignIns {
    /// The sign-in to `target.server` under way, else a new one started
    /// (into `store`, the server then restarted in `gateway`): its phase,
    /// to wait on. A second start while one runs joins it, so two clicks
    /// (or two tabs) never start two listeners and two registrations.
    pub fn start(
        &self,
        target: Target,
        store: TokenStore,
        gateway: Gateway,
    ) -> watch::Receiver<Phase> {
        let mut tasks = self.tasks.lock_unpoisoned();
        // (A task that ended without its last word, by a panic, is not
        // joined: a new one starts.)
        if let Some(task) = tasks.get(&target.server)
            && task.phase.borrow().is_running()
            && !task.handle.is_finished()
        {
            return task.phase.clone();
        }
        let (sender, phase) = watch::channel(Phase::Starting);
        let sender = Arc::new(sender);
        let told = sender.clone();
        let prompt: SignInPrompt = Arc::new(move |_server: &str, url: &str, _opened: bool| {
            told.send_replace(Phase::Waiting {
                authorization_url: url.to_owned(),
            });
        });
        let server = target.server.clone();
        let handle = tokio::spawn(async move {
            let Target { server, url, oauth } = target;
            let challenge = auth::challenge_of(&url).await;
            let signed_in = auth::sign_in(
                &server,
                &url,
                &oauth,
                &store,
                challenge.as_deref(),
                &Browser::None,
                &prompt,
            )
            .await;
            let phase = match signed_in {
                Ok(signed_in) => {
                    tracing::info!(server, "signed in from the page; starting the server again");
                    Phase::SignedIn {
                        issuer: signed_in.issuer,
                        scopes: signed_in.scopes,
                        error: reconnect(&gateway, &server).await.err(),
                    }
                }
                Err(error) => {
                    tracing::info!(server, %error, "the page's sign-in failed");
                    Phase::Failed {
                        message: page_message(&error),
                    }
                }
            };
            sender.send_replace(phase);
        })
        .abort_handle();
        tasks.insert(
            server,
            Task {
                phase: phase.clone(),
                handle,
            },
        );
        phase
    }

    /// The last sign-in to `server`, if the page started one.
    pub fn phase(&self, server: &str) -> Option<Phase> {
        let tasks = self.tasks.lock_unpoisoned();
        tasks.get(server).map(|task| task.phase.borrow().clone())
    }

    /// Ends a sign-in to `server` under way (its listener closes; a browser
    /// coming back later finds nothing) and forgets the last one.
    pub fn cancel(&self, server: &str) {
        if let Some(task) = self.tasks.lock_unpoisoned().remove(server) {
            task.handle.abort();
        }
    }
}

/// How long a start waits for the sign-in to reach its authorization URL
/// (discovery and registration) before answering with `starting`: the
/// page then polls.
pub const START_WAIT: Duration = Duration::from_secs(30);

/// Starts `server` again in `gateway` (after a sign-in or a sign-out, its
/// tokens changed): the old connection closed, a new one made and its
/// tools listed, and the gateway's clients told its lists changed. The
/// error of the new start, if it failed. A server the gateway does not
/// serve is left alone.
pub async fn reconnect(gateway: &Gateway, server: &str) -> Result<(), String> {
    let pool = gateway.pool();
    if pool.spec(server).is_none() {
        return Ok(());
    }
    pool.close(server).await;
    let started = match pool.connect(server).await {
        Ok(_) => pool.list_server_tools(server).await.map(|_| ()),
        Err(error) => Err(error),
    };
    for kind in ListKind::ALL {
        gateway.list_changed(kind, server).await;
    }
    started.map_err(|error| error.to_string())
}

/// `error` as the page says it: what to do there, not in a terminal.
fn page_message(error: &AuthError) -> String {
    match error {
        AuthError::Timeout { server, after } => format!(
            "server \"{server}\": the sign-in was not finished within {} s; press Sign in again \
             and finish it in the tab it opens",
            after.as_secs()
        ),
        other => format!("{other}; press Sign in to try again"),
    }
}
