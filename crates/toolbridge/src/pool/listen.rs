//! [`Listen`]: the `subscriptions/listen` stream that a 2026-07-28 server's
//! list changes and resource updates come on.
//!
//! A server that speaks 2026-07-28 sends `notifications/tools/list_changed`
//! (and the prompts and resources ones) and `notifications/resources/updated`
//! only on a stream the client opened with `subscriptions/listen`, naming
//! what it wants; it answers `resources/subscribe` with an error (rmcp 3.11
//! keeps that for the older protocols). So each connection to such a server
//! that declares `listChanged` (tools, prompts or resources) or
//! `resources.subscribe` has ONE stream, asking for:
//!
//! - the list changes the server declares (`toolsListChanged`,
//!   `promptsListChanged`, `resourcesListChanged`);
//! - the URIs subscribed through [`Pool::subscribe_resource`](super::Pool::subscribe_resource)
//!   (the catalog's set, kept across the slot's connections), as
//!   `resourceSubscriptions`.
//!
//! It is opened as soon as the connection is made, and the connection is
//! handed out once the first attempt is over (5 s at most; the stream goes
//! on being opened in the background). Eager rather than lazy (when the
//! first watcher comes): it costs only one request per connection, held
//! open, and a stream opened after the tool list was first listed would miss
//! a change in between. A server that declares only `subscribe` gets a stream once a URI
//! is subscribed.
//!
//! What arrives goes through [`ListEvents`], exactly as the older protocols'
//! notifications do (caches dropped, watchers told). A change of the
//! subscribed URIs opens a new stream with the new filter, then drops the old
//! one (they overlap, so nothing falls between them); `subscribe_resource`
//! returns once the server acknowledged a filter naming the URI. A filter the
//! server refuses with an error is not asked again until the URIs change
//! (the subscription that caused it fails). A stream that ends while the
//! connection lives (the server ended it, the transport dropped it, we fell
//! behind), or that could not be opened (the transport failed, or the server
//! did not acknowledge it within 30 s), is opened again after a pause
//! (250 ms, doubling up to 8 s; from 250 ms again after a stream that lasted
//! 30 s); since notifications may have been lost meanwhile, the lists the new
//! stream covers are then dropped as if they had changed (missed resource
//! updates cannot be recovered). The task ends
//! with the connection, and [`Connection::close`](super::connection::Connection::close)
//! waits for it.

use crate::lock::LockUnpoisoned as _;
use std::{
    collections::BTreeSet,
    sync::Mutex,
    time::{Duration, Instant},
};

use futures::FutureExt as _;
use rmcp::{
    RoleClient, ServiceError,
    model::{ServerCapabilities, SubscriptionFilter},
    service::{Peer, Subscription},
};
use tokio::{sync::watch, task::JoinHandle};
use tokio_util::sync::CancellationToken;
use tracing::Instrument as _;

use super::{PoolError, list_events::ListEvents};

/// The first pause before opening an ended stream again; doubles each time.
const FIRST_PAUSE: Duration = Duration::from_millis(250);
/// The longest pause.
const MAX_PAUSE: Duration = Duration::from_secs(8);
/// A stream that lasted this long was fine: the next pause is the first.
const STEADY: Duration = Duration::from_secs(30);
/// How long a new connection waits for its first stream.
pub(super) const FIRST_OPEN_WAIT: Duration = Duration::from_secs(5);
/// How long the server may take to acknowledge a stream before the attempt
/// counts as failed (rmcp's `listen` waits for ever).
const ACK_WAIT: Duration = Duration::from_secs(30);

/// One connection's listen stream: the task that keeps it open, and what
/// the server last acknowledged.
#[derive(Debug)]
pub(super) struct Listen {
    /// The stream's state, for [`Listen::subscribed`].
    state: watch::Receiver<State>,
    /// The task; it ends with the connection, awaited by [`Listen::stopped`].
    task: Mutex<Option<JoinHandle<()>>>,
}

/// Where the stream is.
#[derive(Debug, Clone)]
enum State {
    /// Being opened (the first time, or again after it ended).
    Opening,
    /// The last attempt failed (not with an answer: the transport, no
    /// acknowledgment in time); it is tried again after a pause.
    Down,
    /// Nothing to ask for (only updates are offered, and no URI is
    /// subscribed).
    Idle,
    /// The server acknowledged a stream for these URIs.
    Open {
        /// The URIs the filter named.
        asked: BTreeSet<String>,
        /// The URIs the server accepted (a subset).
        accepted: BTreeSet<String>,
    },
    /// The server answered the filter naming these URIs with an error.
    Refused {
        /// The URIs the filter named.
        asked: BTreeSet<String>,
        /// Its JSON-RPC error code.
        code: i32,
        /// Its error message.
        message: String,
    },
}

/// What the server declares it can tell, hence what a filter asks for.
#[derive(Debug, Clone, Copy)]
struct Offered {
    tools: bool,
    prompts: bool,
    resources: bool,
    updates: bool,
}

impl Offered {
    fn of(caps: &ServerCapabilities) -> Offered {
        let yes = |flag: Option<bool>| flag == Some(true);
        Offered {
            tools: caps.tools.as_ref().is_some_and(|t| yes(t.list_changed)),
            prompts: caps.prompts.as_ref().is_some_and(|p| yes(p.list_changed)),
            resources: caps.resources.as_ref().is_some_and(|r| yes(r.list_changed)),
            updates: caps.resources.as_ref().is_some_and(|r| yes(r.subscribe)),
        }
    }

    /// The filter asking for every list change offered and for updates of
    /// `uris`; `None` when it would ask for nothing.
    fn filter(&self, uris: &BTreeSet<String>) -> Option<SubscriptionFilter> {
        let mut filter = SubscriptionFilter::builder();
        if self.tools {
            filter = filter.tools_list_changed();
        }
        if self.prompts {
            filter = filter.prompts_list_changed();
        }
        if self.resources {
            filter = filter.resources_list_changed();
        }
        if self.updates && !uris.is_empty() {
            filter = filter.resource_subscriptions(uris.iter().cloned());
        }
        let filter = filter.build();
        (filter != SubscriptionFilter::default()).then_some(filter)
    }
}

impl Listen {
    /// Starts the listen stream of the connection `peer` (ending when
    /// `ended` is cancelled), if the server speaks 2026-07-28 and declares
    /// anything to listen to; `None` otherwise (the older protocols send
    /// their notifications on the connection itself).
    pub(super) fn start(
        peer: &Peer<RoleClient>,
        events: ListEvents,
        ended: CancellationToken,
    ) -> Option<Listen> {
        let info = peer.peer_info()?;
        if info.protocol_version.has_initialize() {
            return None;
        }
        let offered = Offered::of(&info.capabilities);
        if !(offered.tools || offered.prompts || offered.resources || offered.updates) {
            return None;
        }
        let (state, watched) = watch::channel(State::Opening);
        let stream = Stream {
            peer: peer.clone(),
            offered,
            uris: events.catalog.watch_subscribed(),
            events,
            state,
            ended,
        };
        // In the caller's span, which names the server.
        let task = tokio::spawn(stream.run().instrument(tracing::Span::current()));
        Some(Listen {
            state: watched,
            task: Mutex::new(Some(task)),
        })
    }

    /// Waits (`limit` at most) until the server acknowledged a stream
    /// naming `uri` (subscribed in the catalog first). The server refusing
    /// the filter, or accepting it without `uri`, is an error; so is the
    /// connection ending first.
    pub(super) async fn subscribed(
        &self,
        server: &str,
        uri: &str,
        limit: Duration,
    ) -> Result<(), PoolError> {
        let mut state = self.state.clone();
        let settled = state.wait_for(|state| match state {
            State::Open { asked, .. } | State::Refused { asked, .. } => asked.contains(uri),
            State::Opening | State::Down | State::Idle => false,
        });
        let state = match tokio::time::timeout(limit, settled).await {
            Ok(Ok(state)) => state.clone(),
            Ok(Err(_)) => {
                return Err(PoolError::Closed {
                    server: server.to_owned(),
                    tool: None,
                    stderr: None,
                });
            }
            Err(_) => {
                return Err(PoolError::RequestTimeout {
                    server: server.to_owned(),
                    method: "subscriptions/listen".to_owned(),
                    after: limit,
                });
            }
        };
        match state {
            State::Open { accepted, .. } if accepted.contains(uri) => Ok(()),
            State::Open { .. } => Err(PoolError::UnknownResource {
                server: server.to_owned(),
                uri: uri.to_owned(),
                message: "its subscriptions/listen stream did not accept updates of it".to_owned(),
            }),
            State::Refused { code, message, .. } => Err(PoolError::Server {
                server: server.to_owned(),
                tool: None,
                code,
                message,
                data: None,
            }),
            State::Opening | State::Down | State::Idle => unreachable_state(server),
        }
    }

    /// Waits until the first attempt to open a stream is over (it was
    /// acknowledged, refused or failed, or there is nothing to ask for),
    /// `until` at most: the connection is handed
    /// out after that, so a change that comes after the first listing is
    /// heard. A stream that takes longer is waited for in the background.
    pub(super) async fn opened(&self, until: tokio::time::Instant) {
        let mut state = self.state.clone();
        let settled = state.wait_for(|state| !matches!(state, State::Opening));
        if tokio::time::timeout_at(until, settled).await.is_err() {
            tracing::debug!("the subscriptions/listen stream is not open yet; going on without it");
        }
    }

    /// Waits for the task to end (it does once the connection has ended).
    pub(super) async fn stopped(&self) {
        let task = self.task.lock_unpoisoned().take();
        if let Some(task) = task {
            let _ = task.await;
        }
    }
}

/// `wait_for` only returns the states it waited for; an error all the same
/// rather than a panic in library code.
fn unreachable_state(server: &str) -> Result<(), PoolError> {
    Err(PoolError::Protocol {
        server: server.to_owned(),
        message: "the subscriptions/listen stream is in no settled state".to_owned(),
    })
}

/// What the stream's task owns.
struct Stream {
    /// The connection.
    peer: Peer<RoleClient>,
    /// What the server can tell.
    offered: Offered,
    /// The subscribed URIs (the catalog's).
    uris: watch::Receiver<BTreeSet<String>>,
    /// Where what arrives goes.
    events: ListEvents,
    /// Where the stream is, for [`Listen::subscribed`].
    state: watch::Sender<State>,
    /// The connection has ended.
    ended: CancellationToken,
}

/// What woke the task up while a stream is open.
enum Step {
    /// The stream's next notification.
    Heard(Box<rmcp::model::ServerNotification>),
    /// The server ended the stream.
    Ended,
    /// The stream broke (why).
    Broke(ServiceError),
    /// The subscribed URIs changed (`false`: the catalog is gone).
    Refilter(bool),
}

/// How an attempt to open a stream went.
enum Opened {
    Open(Box<Subscription>),
    /// Nothing to ask for.
    Nothing,
    /// The server answered with an error (noted in the state).
    Refused,
    /// It failed otherwise (the transport): try again later.
    Failed,
}

impl Stream {
    async fn run(mut self) {
        let mut pause = FIRST_PAUSE;
        // A stream ended: notifications may have been missed.
        let mut gap = false;
        loop {
            let mut stream = match self.open().await {
                None => return,
                Some(Opened::Open(stream)) => stream,
                Some(Opened::Nothing) => {
                    // Nothing to do until the URIs change.
                    if !self.uris_changed().await {
                        return;
                    }
                    continue;
                }
                Some(Opened::Refused) => {
                    gap = true;
                    if !self.uris_changed().await {
                        return;
                    }
                    continue;
                }
                Some(Opened::Failed) => {
                    gap = true;
                    if !self.pause(&mut pause).await {
                        return;
                    }
                    continue;
                }
            };
            if std::mem::take(&mut gap) {
                self.missed(stream.acknowledged());
            }
            let since = Instant::now();
            // Hear it until it ends.
            loop {
                let step = tokio::select! {
                    biased;
                    _ = self.ended.cancelled() => return,
                    heard = stream.next() => match heard {
                        Ok(Some(notification)) => Step::Heard(Box::new(notification)),
                        Ok(None) => Step::Ended,
                        Err(e) => Step::Broke(e),
                    },
                    changed = self.uris.changed() => Step::Refilter(changed.is_ok()),
                };
                // The connection itself is going: so is its stream.
                if matches!(step, Step::Ended | Step::Broke(_)) && self.peer.is_transport_closed() {
                    return;
                }
                match step {
                    Step::Heard(notification) => self.events.deliver(*notification),
                    Step::Ended => {
                        tracing::debug!(end = ?stream.end(), "the server ended its subscriptions/listen stream; opening it again");
                        break;
                    }
                    Step::Broke(e) => {
                        tracing::debug!(error = %e, "the subscriptions/listen stream broke; opening it again");
                        break;
                    }
                    Step::Refilter(false) => return,
                    Step::Refilter(true) => match self.open().await {
                        None => return,
                        Some(Opened::Open(new)) => {
                            // What the old stream already brought is not lost.
                            while let Some(Ok(Some(notification))) = stream.next().now_or_never() {
                                self.events.deliver(notification);
                            }
                            stream = new;
                        }
                        // The old stream stays, with its filter.
                        Some(Opened::Refused) => {}
                        // Nothing left to ask: no stream.
                        Some(Opened::Nothing) => break,
                        Some(Opened::Failed) => {
                            gap = true;
                            break;
                        }
                    },
                }
            }
            drop(stream);
            if matches!(*self.state.borrow(), State::Idle) {
                continue;
            }
            gap = true;
            if since.elapsed() >= STEADY {
                pause = FIRST_PAUSE;
            }
            self.state.send_replace(State::Opening);
            if !self.pause(&mut pause).await {
                return;
            }
        }
    }

    /// Asks for a stream naming the subscribed URIs as they are now; `None`
    /// when the connection ended meanwhile.
    async fn open(&mut self) -> Option<Opened> {
        let asked = self.uris.borrow_and_update().clone();
        let Some(filter) = self.offered.filter(&asked) else {
            self.state.send_replace(State::Idle);
            return Some(Opened::Nothing);
        };
        let opened = tokio::select! {
            biased;
            _ = self.ended.cancelled() => return None,
            opened = tokio::time::timeout(ACK_WAIT, self.peer.listen(filter)) => opened,
        };
        let Ok(opened) = opened else {
            tracing::debug!("the server did not acknowledge subscriptions/listen in time");
            self.state.send_replace(State::Down);
            return Some(Opened::Failed);
        };
        Some(match opened {
            Ok(stream) => {
                let accepted = stream
                    .acknowledged()
                    .resource_subscriptions
                    .iter()
                    .flatten()
                    .cloned()
                    .collect();
                self.state.send_replace(State::Open { asked, accepted });
                Opened::Open(Box::new(stream))
            }
            Err(ServiceError::McpError(e)) => {
                tracing::warn!(
                    server = %self.events.server,
                    code = e.code.0,
                    error = %e.message,
                    "the server refused subscriptions/listen: its list changes and resource \
                     updates are not heard until the subscribed resources change"
                );
                self.state.send_replace(State::Refused {
                    asked,
                    code: e.code.0,
                    message: e.message.into_owned(),
                });
                Opened::Refused
            }
            Err(e) => {
                tracing::debug!(error = %e, "cannot open the subscriptions/listen stream");
                self.state.send_replace(State::Down);
                Opened::Failed
            }
        })
    }

    /// The lists `filter` covers are dropped as if they had changed: a
    /// change may have come while no stream was open.
    fn missed(&self, filter: &SubscriptionFilter) {
        if filter.tools_list_changed == Some(true) {
            self.events.tools_changed();
        }
        if filter.prompts_list_changed == Some(true) {
            self.events.prompts_changed();
        }
        if filter.resources_list_changed == Some(true) {
            self.events.resources_changed();
        }
    }

    /// Waits for the subscribed URIs to change; `false` if the connection
    /// ended (or the catalog is gone) first.
    async fn uris_changed(&mut self) -> bool {
        tokio::select! {
            biased;
            _ = self.ended.cancelled() => false,
            changed = self.uris.changed() => changed.is_ok(),
        }
    }

    /// Waits `pause` (then doubles it, up to [`MAX_PAUSE`]); `false` if the
    /// connection ended first.
    async fn pause(&self, pause: &mut Duration) -> bool {
        let wait = *pause;
        *pause = (*pause * 2).min(MAX_PAUSE);
        tokio::select! {
            biased;
            _ = self.ended.cancelled() => false,
            _ = tokio::time::sleep(wait) => true,
        }
    }
}

#[cfg(test)]
mod tests {
    use rmcp::model::ServerCapabilities;

    use super::*;

    fn uris(names: &[&str]) -> BTreeSet<String> {
        names.iter().map(|n| (*n).to_owned()).collect()
    }

    #[test]
    fn a_filter_asks_for_the_list_changes_declared_and_the_uris_subscribed() {
        let caps = ServerCapabilities::builder()
            .enable_tools()
            .enable_tool_list_changed()
            .enable_prompts()
            .enable_resources()
            .enable_resources_subscribe()
            .build();
        let filter = Offered::of(&caps).filter(&uris(&["a://1"])).unwrap();
        assert_eq!(filter.tools_list_changed, Some(true));
        // Prompts without `listChanged`, resources without it either.
        assert_eq!(filter.prompts_list_changed, None);
        assert_eq!(filter.resources_list_changed, None);
        assert_eq!(
            filter.resource_subscriptions,
            Some(vec!["a://1".to_owned()])
        );
    }

    #[test]
    fn a_server_that_only_offers_updates_gets_a_stream_once_a_uri_is_subscribed() {
        let caps = ServerCapabilities::builder()
            .enable_resources()
            .enable_resources_subscribe()
            .build();
        let offered = Offered::of(&caps);
        assert_eq!(offered.filter(&uris(&[])), None);
        assert!(offered.filter(&uris(&["a://1"])).is_some());
        // URIs are never named to a server that cannot report them.
        let caps = ServerCapabilities::builder()
            .enable_tools()
            .enable_tool_list_changed()
            .build();
        let filter = Offered::of(&caps).filter(&uris(&["a://1"])).unwrap();
        assert_eq!(filter.resource_subscriptions, None);
    }
}
