//! Whether reusing HTTP connections to a server pays, decided from how its
//! streamed answers arrive.
//!
//! Reusing a connection saves a TCP (and TLS) handshake per request. But a
//! server that leaves Nagle's algorithm on (`axum::serve` does, unless told
//! otherwise) holds back every small write while an earlier one is not yet
//! acknowledged. On a connection that goes request, answer, request, answer,
//! Linux delays its ACKs (~40 ms; other systems up to 200 ms), so each part
//! of a streamed answer after the first, such as the JSON-RPC response after
//! an SSE priming event, arrives one delayed ACK late. A new connection does
//! not stall: its first segments are acknowledged at once. The client cannot
//! see the socket to tell the two apart, so [`ReuseGuard`] watches the gaps
//! between the parts of event-stream answers and, when they look like
//! delayed ACKs, sends a few requests over new connections: if those answer
//! without the gaps, reuse is what stalls, and this server gets a new
//! connection per request from then on (as rmcp's default client does for
//! every server). A tool that is merely slow answers just as slowly over a
//! new connection, so reuse stays on (and such probes get rarer).
//!
//! # Why this is decided by timing
//!
//! Issue 10 asked for a deterministic rule instead. None was found that
//! keeps both properties the HTTP tests check (sequential calls to a server
//! with TCP_NODELAY share one connection; a server with Nagle on ends up
//! with a new connection per request, so its calls do not stall):
//!
//! - *What the client can know deterministically does not decide it.* The
//!   stall depends on the server's socket option (Nagle) and on the client's
//!   kernel being in delayed-ACK mode; neither is visible through HTTP, and
//!   hyper gives no access to the socket between reads.
//! - *Never reusing connections for event-stream answers* (the answers that
//!   come in two parts) would be deterministic, but costs every server that
//!   does set TCP_NODELAY a TCP (and TLS) handshake per call, which is the
//!   cost reuse exists to save.
//! - *`TCP_QUICKACK` on the client socket* would stop the delayed ACK, but it
//!   is Linux-only, is cleared by the kernel after a while and must be set
//!   again after every read, which needs a connector of our own under hyper.
//! - *A probe at connect* is a timing judgement too, on fewer samples: a new
//!   connection is not yet in delayed-ACK mode, so the probe would need
//!   several real round trips per server start (tools/list, say), on every
//!   start, and a server busy at that moment would be misjudged for good.
//! - *A per-server setting* asks users a question about their server's TCP
//!   options they cannot answer; the config format (DESIGN.md) has no such
//!   key. It could be added later as an override of this guess.
//!
//! What makes the guess safe: it only ever picks between two correct
//! behaviours (the same requests, over a reused or a new connection), never
//! changes a result; the gap it looks for is a delayed ACK's (35–250 ms,
//! [`STALL_GAP`]) between parts of *one* answer, not the time a tool takes;
//! it acts only after [`FIRST_THRESHOLD`] such answers in a row and after
//! [`CLEAN_PROBES`] answers over new connections *without* the gap, so a
//! slow server is compared, found slow, and compared exponentially less
//! often (at most [`MAX_THRESHOLD`] answers apart); and once it has decided
//! that reuse stalls it stops timing. A wrong guess costs latency only: a
//! handshake per request, or a delayed ACK per call.
//!
//! # Why it stays now that toolbridge's own gateway sets TCP_NODELAY
//!
//! `toolbridge serve` left Nagle on too until issue 31 (it served with
//! `axum::serve`); its accept loop now sets `TCP_NODELAY`, so against it the
//! guard sees no gap and keeps reuse, at the cost of one clock read per
//! event of an event-stream answer. The servers it exists for are still
//! out there: any MCP server on `axum::serve` (rmcp's own examples) or
//! another stack that leaves Nagle on. Removing it would bring their 40 ms
//! per call back.

use crate::lock::LockUnpoisoned as _;
use std::{
    ops::RangeInclusive,
    pin::Pin,
    sync::{
        Mutex,
        atomic::{AtomicBool, Ordering},
    },
    task::{Context, Poll},
    time::Duration,
};

use futures::Stream;
// tokio's, so tests can run on paused time; it is std's otherwise.
use tokio::time::Instant;

/// A gap between two parts of one answer that may be a delayed ACK: Linux
/// delays ACKs 40 ms and more, macOS up to 100 ms, Windows up to 200 ms.
pub const STALL_GAP: RangeInclusive<Duration> =
    Duration::from_millis(35)..=Duration::from_millis(250);

/// Answers in a row with such a gap, over reused connections, before the
/// next requests are sent over new ones to compare (doubled each time the
/// comparison finds the server merely slow).
const FIRST_THRESHOLD: u32 = 2;
/// The most answers in a row needed before comparing again.
const MAX_THRESHOLD: u32 = 1024;
/// Answers over new connections without the gaps that decide that reuse
/// stalls.
const CLEAN_PROBES: u32 = 2;

/// Which connection a request goes over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Route {
    /// A pooled connection, watched for stalls.
    Reuse,
    /// A new connection, to compare with reused ones.
    Probe,
    /// A new connection: reuse stalls on this server.
    Fresh,
}

/// Decides between reused and new connections for one server.
#[derive(Debug)]
pub struct ReuseGuard {
    /// Reuse was found to stall; every request gets a new connection.
    stalls: AtomicBool,
    /// The next request goes over a new connection, to compare.
    probe_next: AtomicBool,
    state: Mutex<State>,
}

#[derive(Debug)]
struct State {
    /// Answers in a row over reused connections with a stall-like gap.
    suspicious: u32,
    /// How many such answers start a comparison.
    threshold: u32,
    /// Answers over new connections without such gaps.
    clean_probes: u32,
}

impl Default for ReuseGuard {
    fn default() -> Self {
        ReuseGuard {
            stalls: AtomicBool::new(false),
            probe_next: AtomicBool::new(false),
            state: Mutex::new(State {
                suspicious: 0,
                threshold: FIRST_THRESHOLD,
                clean_probes: 0,
            }),
        }
    }
}

impl ReuseGuard {
    /// Where the next request goes.
    pub fn route(&self) -> Route {
        if self.stalls.load(Ordering::Relaxed) {
            Route::Fresh
        } else if self.probe_next.load(Ordering::Relaxed)
            && self.probe_next.swap(false, Ordering::Relaxed)
        {
            Route::Probe
        } else {
            Route::Reuse
        }
    }

    /// Whether reuse was found to stall.
    pub fn stalls(&self) -> bool {
        self.stalls.load(Ordering::Relaxed)
    }

    /// Notes how an event-stream answer sent over `route` arrived. Returns
    /// true when this answer settled that reuse stalls.
    pub fn record(&self, route: Route, stall_like: bool) -> bool {
        if route == Route::Fresh || self.stalls() {
            return false;
        }
        let mut state = self.state.lock_unpoisoned();
        match (route, stall_like) {
            (Route::Reuse, true) => {
                state.suspicious += 1;
                if state.suspicious >= state.threshold {
                    state.suspicious = 0;
                    self.probe_next.store(true, Ordering::Relaxed);
                }
            }
            (Route::Reuse, false) => state.suspicious = 0,
            (Route::Probe, false) => {
                state.clean_probes += 1;
                if state.clean_probes >= CLEAN_PROBES {
                    self.stalls.store(true, Ordering::Relaxed);
                    return true;
                }
                self.probe_next.store(true, Ordering::Relaxed);
            }
            (Route::Probe, true) => {
                // As slow over a new connection: the server is slow.
                state.clean_probes = 0;
                state.suspicious = 0;
                state.threshold = (state.threshold * 2).min(MAX_THRESHOLD);
            }
            (Route::Fresh, _) => {}
        }
        false
    }
}

/// Times the parts of an event-stream answer: when it is dropped, whether a
/// gap between two parts (the headers being the first) was stall-like.
/// `on_end` gets that, if at least one event came.
pub struct Timed<S, F: FnOnce(bool)> {
    inner: S,
    last: Instant,
    events: u32,
    stall_like: bool,
    on_end: Option<F>,
}

impl<S, F: FnOnce(bool)> Timed<S, F> {
    /// `inner`, whose headers arrived just now.
    pub fn new(inner: S, on_end: F) -> Self {
        Timed {
            inner,
            last: Instant::now(),
            events: 0,
            stall_like: false,
            on_end: Some(on_end),
        }
    }
}

impl<S: Stream + Unpin, F: FnOnce(bool) + Unpin> Stream for Timed<S, F> {
    type Item = S::Item;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<S::Item>> {
        let item = Pin::new(&mut self.inner).poll_next(cx);
        if let Poll::Ready(Some(_)) = &item {
            let now = Instant::now();
            let this = &mut *self;
            this.stall_like |= STALL_GAP.contains(&now.duration_since(this.last));
            this.events += 1;
            this.last = now;
        }
        item
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.inner.size_hint()
    }
}

impl<S, F: FnOnce(bool)> Drop for Timed<S, F> {
    fn drop(&mut self) {
        if self.events > 0
            && let Some(on_end) = self.on_end.take()
        {
            on_end(self.stall_like);
        }
    }
}

#[cfg(test)]
mod tests {
    use futures::StreamExt;

    use super::*;

    fn answer(guard: &ReuseGuard, stall_like_when_reused: bool, slow_server: bool) -> Route {
        let route = guard.route();
        let stall_like = match route {
            Route::Reuse => stall_like_when_reused || slow_server,
            Route::Probe | Route::Fresh => slow_server,
        };
        guard.record(route, stall_like);
        route
    }

    #[test]
    fn reuse_is_dropped_when_new_connections_answer_without_the_gaps() {
        let guard = ReuseGuard::default();
        let routes: Vec<Route> = (0..6).map(|_| answer(&guard, true, false)).collect();
        assert_eq!(
            routes,
            [
                Route::Reuse,
                Route::Reuse,
                Route::Probe,
                Route::Probe,
                Route::Fresh,
                Route::Fresh
            ]
        );
        assert!(guard.stalls());
    }

    #[test]
    fn a_slow_server_keeps_reuse_and_is_probed_less_and_less() {
        let guard = ReuseGuard::default();
        let routes: Vec<Route> = (0..200).map(|_| answer(&guard, false, true)).collect();
        assert!(!guard.stalls());
        let probes: Vec<usize> = routes
            .iter()
            .enumerate()
            .filter(|(_, r)| **r == Route::Probe)
            .map(|(i, _)| i)
            .collect();
        // After 2, then 4, 8, 16, 32, 64 stall-like answers in a row.
        assert_eq!(probes, [2, 7, 16, 33, 66, 131]);
    }

    #[test]
    fn a_clean_answer_over_a_reused_connection_resets_the_count() {
        let guard = ReuseGuard::default();
        for _ in 0..10 {
            assert_eq!(answer(&guard, true, false), Route::Reuse);
            assert_eq!(answer(&guard, false, false), Route::Reuse);
        }
        assert!(!guard.stalls());
    }

    #[tokio::test(start_paused = true)]
    async fn timed_streams_report_stall_like_gaps_between_parts() {
        let report = std::sync::Arc::new(Mutex::new(Vec::new()));
        for gaps in [vec![0, 1], vec![0, 41], vec![3, 400], vec![]] {
            let parts = futures::stream::iter(gaps.clone()).then(|ms| async move {
                tokio::time::sleep(Duration::from_millis(ms)).await;
            });
            let report = report.clone();
            let mut timed = Timed::new(Box::pin(parts), move |stall_like| {
                report.lock().unwrap().push(stall_like)
            });
            while timed.next().await.is_some() {}
        }
        // An answer without events reports nothing.
        assert_eq!(*report.lock().unwrap(), [false, true, false]);
    }
}
