//! A request's upstream progress relayed to its client, under the client's
//! own progress token: to the client's rmcp peer (a session's event
//! stream), or handed to the answer being written ([`crate::endpoint`]'s
//! event stream); the page's activity sees each note too.

use std::sync::Arc;

use rmcp::{
    RoleServer,
    model::{ProgressNotificationParam, ProgressToken},
    service::Peer,
};
use toolbridge::pool::{ProgressForward, forward_progress};

/// Where a request's upstream progress goes, under the client's own
/// progress token.
pub(crate) enum ProgressRelay {
    /// To the client's peer (rmcp's service).
    Peer {
        token: ProgressToken,
        peer: Peer<RoleServer>,
    },
    /// Handed, as it comes, to a forward that puts the client's token on
    /// ([`crate::endpoint`]'s answer).
    Direct(ProgressForward),
}

impl ProgressRelay {
    /// Sends `params` on, under the client's token; false once the client
    /// is gone.
    pub(crate) async fn send(&self, mut params: ProgressNotificationParam) -> bool {
        match self {
            ProgressRelay::Peer { token, peer } => {
                params.progress_token = token.clone();
                peer.notify_progress(params).await.is_ok()
            }
            ProgressRelay::Direct(forward) => {
                forward(params);
                true
            }
        }
    }
}

/// Runs `call` relaying its upstream progress to the client under the
/// client's own progress token, when the client asked for progress; the
/// notifications are sent in order, all before the result. `tap` (the
/// page's [`crate::activity`]) sees each one too, asked for or not.
pub(crate) async fn relaying_progress<F: std::future::Future>(
    progress: Option<ProgressRelay>,
    tap: Option<ProgressForward>,
    call: F,
) -> F::Output {
    let relay = match (progress, tap) {
        (None, None) => return call.await,
        (None, Some(tap)) => return forward_progress(tap, call).await,
        (Some(ProgressRelay::Direct(forward)), tap) => {
            return forward_progress(tapped(tap, forward), call).await;
        }
        (Some(relay), tap) => (relay, tap),
    };
    let (relay, tap) = relay;
    // The peer's sends are async: they go through a task, in order.
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<ProgressNotificationParam>();
    let forward: ProgressForward = tapped(
        tap,
        Arc::new(move |params: ProgressNotificationParam| {
            let _ = tx.send(params);
        }),
    );
    let sending = tokio::spawn(async move {
        while let Some(params) = rx.recv().await {
            if !relay.send(params).await {
                break;
            }
        }
    });
    let output = forward_progress(forward, call).await;
    // The forward is gone with the call: the task ends once it has sent
    // what it holds. Bounded, should a client stop reading.
    let _ = tokio::time::timeout(RELAY_DRAIN, sending).await;
    output
}

/// `forward`, after `tap` has seen each notification.
fn tapped(tap: Option<ProgressForward>, forward: ProgressForward) -> ProgressForward {
    match tap {
        None => forward,
        Some(tap) => Arc::new(move |params: ProgressNotificationParam| {
            tap(params.clone());
            forward(params);
        }),
    }
}

/// The longest a call's result waits for its progress to reach the client.
const RELAY_DRAIN: std::time::Duration = std::time::Duration::from_secs(1);
