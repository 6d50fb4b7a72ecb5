//! [`RateLimits`]: how fast clients may call tools, and how many calls each
//! upstream server is given at once, from `toolbridge.gateway.limits`
//! ([`RateLimitSettings`]).
//!
//! - Rates are token buckets (GCRA, the `governor` crate): one per client
//!   (`client`, or the client's own entry in `clients`) and one per tool
//!   (`tools`, shared by every client). A call takes one token of each
//!   bucket it falls under; over a limit it is refused with [`Limited`],
//!   which says which limit and when to retry. Over HTTP that is checked
//!   before the request is dispatched ([`crate::admission`]) and answered
//!   `429 Too Many Requests` with `Retry-After`; over stdio the call's
//!   JSON-RPC error says the same in `data`.
//! - Memory per client is bounded: a client's state is forgotten once its
//!   bucket has filled up again, and at most [`MAX_KEYS`] are kept; while
//!   that many clients have calls in their buckets at once, the calls of
//!   all share one more bucket.
//! - `upstream`: at most `inFlight` calls at once per upstream server, and
//!   `queue` waiting for a place; a call beyond that is refused at once
//!   with [`Limited`] (in the call's answer: the request is dispatched by
//!   then).
//!
//! These are not [`crate::limits`]' caps (sessions and requests in flight
//! per client, which protect the gateway itself).

use std::{
    collections::HashMap,
    num::NonZeroU32,
    sync::{
        Arc, Mutex,
        atomic::{AtomicU64, AtomicUsize, Ordering},
    },
    time::Duration,
};

use globset::GlobMatcher;
use governor::{DefaultKeyedRateLimiter, Quota, clock::Clock};
use rmcp::model::{ErrorCode, ErrorData};
use serde_json::json;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use toolbridge::{
    config::{Rate, RateLimitSettings, UpstreamBound},
    lock::LockUnpoisoned as _,
};

use crate::identity::ClientIdentity;

/// The JSON-RPC error code of a call over a limit (in the
/// implementation-defined server range).
pub const RATE_LIMITED: ErrorCode = ErrorCode(-32029);

/// The most clients (or tools) one bucket keeps state for.
pub const MAX_KEYS: usize = 10_000;

/// How often (in checks) a bucket's size is looked at.
const SWEEP_EVERY: u64 = 256;

/// The key of the clients beyond [`MAX_KEYS`].
const OVERFLOW: &str = "\u{0}overflow";

/// When an upstream's queue is full, how soon to retry.
const UPSTREAM_RETRY: Duration = Duration::from_secs(1);

/// The gateway's rate limits and upstream bounds. Cheap to clone.
#[derive(Clone, Default)]
pub struct RateLimits {
    inner: Arc<Inner>,
}

#[derive(Default)]
struct Inner {
    client: Option<Bucket>,
    named: Vec<(String, Bucket)>,
    tools: Vec<(GlobMatcher, Bucket)>,
    upstream: Option<UpstreamBound>,
    upstreams: Mutex<HashMap<String, Arc<Gate>>>,
}

/// A call over a limit.
#[derive(Debug, Clone, PartialEq)]
pub struct Limited {
    /// Which limit: `client`, `clients.NAME`, `tools.GLOB` or `upstream`.
    pub limit: String,
    /// What it says, for the message.
    pub detail: String,
    /// When to try again.
    pub retry_after: Duration,
}

impl Limited {
    /// What the client reads.
    pub fn message(&self) -> String {
        format!(
            "{} (toolbridge.gateway.limits.{}); retry in {:.1} s",
            self.detail,
            self.limit,
            self.retry_after.as_secs_f64()
        )
    }

    /// `Retry-After`: whole seconds, at least 1.
    pub fn retry_after_secs(&self) -> u64 {
        self.retry_after.as_secs_f64().ceil().max(1.0) as u64
    }

    /// The JSON-RPC error: [`RATE_LIMITED`], the message, and in `data`
    /// the limit and `retryAfterMs`.
    pub fn error(&self) -> ErrorData {
        ErrorData::new(
            RATE_LIMITED,
            self.message(),
            Some(json!({
                "reason": "rateLimited",
                "limit": self.limit,
                "retryAfterMs": self.retry_after.as_millis() as u64,
            })),
        )
    }

    /// The wait in `error`'s data, when it is a [`Limited`]'s error.
    pub fn retry_after_of(error: &ErrorData) -> Option<Duration> {
        if error.code != RATE_LIMITED {
            return None;
        }
        let ms = error.data.as_ref()?.get("retryAfterMs")?.as_u64()?;
        Some(Duration::from_millis(ms))
    }
}

/// One token bucket per key.
struct Bucket {
    rate: Rate,
    limiter: DefaultKeyedRateLimiter<String>,
    checks: AtomicU64,
}

impl Bucket {
    fn new(rate: Rate) -> Bucket {
        let period = Duration::from_secs_f64(1.0 / rate.per_second).max(Duration::from_nanos(1));
        let burst = NonZeroU32::new(rate.burst).unwrap_or(NonZeroU32::MIN);
        let quota = Quota::with_period(period)
            .unwrap_or_else(|| Quota::per_second(NonZeroU32::MIN))
            .allow_burst(burst);
        Bucket {
            rate,
            limiter: DefaultKeyedRateLimiter::keyed(quota),
            checks: AtomicU64::new(0),
        }
    }

    /// Takes a token for `key`; `Err` is how long until there is one.
    fn take(&self, key: String) -> Result<(), Duration> {
        if self
            .checks
            .fetch_add(1, Ordering::Relaxed)
            .is_multiple_of(SWEEP_EVERY)
        {
            self.limiter.retain_recent();
        }
        // Past the bound (after a sweep), calls share the overflow bucket:
        // whose state is kept cannot be told without taking a token.
        let crowded = self.limiter.len() >= MAX_KEYS && {
            self.limiter.retain_recent();
            self.limiter.len() >= MAX_KEYS
        };
        let key = if crowded { OVERFLOW.to_owned() } else { key };
        self.limiter
            .check_key(&key)
            .map_err(|not_until| not_until.wait_time_from(self.limiter.clock().now()))
    }

    fn describe(&self) -> String {
        format!(
            "{} calls per second, burst {}",
            trim(self.rate.per_second),
            self.rate.burst
        )
    }
}

/// A number without a needless `.0`.
fn trim(n: f64) -> String {
    if n.fract() == 0.0 {
        format!("{n:.0}")
    } else {
        format!("{n}")
    }
}

impl RateLimits {
    /// The limits `settings` name.
    pub fn new(settings: &RateLimitSettings) -> RateLimits {
        let tools = settings
            .tools
            .iter()
            .filter_map(|(glob, rate)| {
                // Checked when the config was read.
                let matcher = globset::GlobBuilder::new(glob)
                    .literal_separator(false)
                    .build()
                    .ok()?
                    .compile_matcher();
                Some((matcher, Bucket::new(*rate)))
            })
            .collect();
        RateLimits {
            inner: Arc::new(Inner {
                client: settings.client.map(Bucket::new),
                named: settings
                    .clients
                    .iter()
                    .map(|(name, rate)| (name.clone(), Bucket::new(*rate)))
                    .collect(),
                tools,
                upstream: settings.upstream,
                upstreams: Mutex::default(),
            }),
        }
    }

    /// True when calls have rates to keep (a client's or a tool's).
    pub fn limits_calls(&self) -> bool {
        self.inner.client.is_some() || !self.inner.named.is_empty() || !self.inner.tools.is_empty()
    }

    /// Takes a call of `client` to `tool` (`{server}__{tool}`, `None` for
    /// the gateway's own search tool) from its buckets: the client's, then
    /// the tool's. `Err` names the first limit it is over.
    pub fn take(&self, client: &ClientIdentity, tool: Option<&str>) -> Result<(), Limited> {
        let key = client.key();
        let named = self
            .inner
            .named
            .iter()
            .find(|(name, _)| *name == client.name || *name == key);
        let bucket = match named {
            Some((_, bucket)) => Some(bucket),
            None => self.inner.client.as_ref(),
        };
        if let Some(bucket) = bucket
            && let Err(wait) = bucket.take(key)
        {
            let key = client.key();
            return Err(Limited {
                limit: match named {
                    Some((name, _)) => format!("clients.{name}"),
                    None => "client".to_owned(),
                },
                detail: format!(
                    "client {key:?} is over its rate limit ({})",
                    bucket.describe()
                ),
                retry_after: wait,
            });
        }
        let Some(tool) = tool else {
            return Ok(());
        };
        if let Some((matcher, bucket)) = self.inner.tools.iter().find(|(m, _)| m.is_match(tool))
            && let Err(wait) = bucket.take(tool.to_owned())
        {
            return Err(Limited {
                limit: format!("tools.{}", matcher.glob()),
                detail: format!(
                    "tool {tool:?} is over its rate limit ({}, for all clients)",
                    bucket.describe()
                ),
                retry_after: wait,
            });
        }
        Ok(())
    }

    /// A place among `server`'s calls in flight, waiting in its queue when
    /// they are all taken; `Err` when the queue is full too. Without an
    /// `upstream` bound, at once.
    pub async fn enter_upstream(&self, server: &str) -> Result<Option<UpstreamSlot>, Limited> {
        let Some(bound) = self.inner.upstream else {
            return Ok(None);
        };
        let gate = self
            .inner
            .upstreams
            .lock_unpoisoned()
            .entry(server.to_owned())
            .or_insert_with(|| {
                Arc::new(Gate {
                    permits: Arc::new(Semaphore::new(bound.in_flight)),
                    waiting: AtomicUsize::new(0),
                })
            })
            .clone();
        if let Ok(permit) = gate.permits.clone().try_acquire_owned() {
            return Ok(Some(UpstreamSlot(permit)));
        }
        let queued = gate.waiting.fetch_add(1, Ordering::AcqRel);
        let _waiting = Waiting(&gate.waiting);
        if queued >= bound.queue {
            return Err(Limited {
                limit: "upstream".to_owned(),
                detail: format!(
                    "server {server:?} has {} calls in flight and {} waiting, its most",
                    bound.in_flight, bound.queue
                ),
                retry_after: UPSTREAM_RETRY,
            });
        }
        // The semaphore is never closed.
        let permit = gate
            .permits
            .clone()
            .acquire_owned()
            .await
            .map_err(|_| Limited {
                limit: "upstream".to_owned(),
                detail: format!("server {server:?} is closing"),
                retry_after: UPSTREAM_RETRY,
            })?;
        Ok(Some(UpstreamSlot(permit)))
    }
}

impl std::fmt::Debug for RateLimits {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let rate = |b: &Bucket| b.describe();
        f.debug_struct("RateLimits")
            .field("client", &self.inner.client.as_ref().map(rate))
            .field(
                "clients",
                &self
                    .inner
                    .named
                    .iter()
                    .map(|(n, b)| (n, rate(b)))
                    .collect::<Vec<_>>(),
            )
            .field(
                "tools",
                &self
                    .inner
                    .tools
                    .iter()
                    .map(|(m, b)| (m.glob().to_string(), rate(b)))
                    .collect::<Vec<_>>(),
            )
            .field("upstream", &self.inner.upstream)
            .finish()
    }
}

/// One upstream's places and queue.
struct Gate {
    permits: Arc<Semaphore>,
    waiting: AtomicUsize,
}

/// A place in the queue, given up when dropped (served, refused or
/// cancelled).
struct Waiting<'a>(&'a AtomicUsize);

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

/// A call's place among its upstream's calls in flight, until dropped.
pub struct UpstreamSlot(#[allow(dead_code)] OwnedSemaphorePermit);

#[cfg(test)]
mod tests {
    use toolbridge::config::Rate;

    use super::*;
    use crate::identity::ClientKind;

    fn settings(client: Option<Rate>, upstream: Option<UpstreamBound>) -> RateLimitSettings {
        let mut settings = RateLimitSettings::default();
        settings.client = client;
        settings.upstream = upstream;
        settings
    }

    #[test]
    fn a_client_over_its_bucket_is_told_which_limit_and_when() {
        let limits = RateLimits::new(&settings(
            Some(Rate {
                per_second: 1.0,
                burst: 3,
            }),
            None,
        ));
        let ci = ClientIdentity::new(ClientKind::Token, "ci");
        let other = ClientIdentity::new(ClientKind::Token, "other");
        for _ in 0..3 {
            limits
                .take(&ci, Some("fs__read"))
                .expect("within the burst");
        }
        let limited = limits.take(&ci, Some("fs__read")).unwrap_err();
        assert_eq!(limited.limit, "client");
        assert!(
            limited.retry_after > Duration::ZERO && limited.retry_after <= Duration::from_secs(1)
        );
        assert!(
            limited.message().contains("\"token:ci\""),
            "{}",
            limited.message()
        );
        assert_eq!(limited.retry_after_secs(), 1);
        assert_eq!(
            Limited::retry_after_of(&limited.error()).map(|d| d.as_millis()),
            Some(limited.retry_after.as_millis())
        );
        limits
            .take(&other, None)
            .expect("another client has its own bucket");
    }

    #[test]
    fn a_named_clients_own_bucket_and_a_tools_bucket_shared_by_all() {
        let mut settings = settings(
            Some(Rate {
                per_second: 0.01,
                burst: 1,
            }),
            None,
        );
        let rate = |burst| Rate {
            per_second: 0.01,
            burst,
        };
        settings.clients = vec![("ci".into(), rate(5))];
        settings.tools = vec![("gh__create_*".into(), rate(2))];
        let limits = RateLimits::new(&settings);
        let ci = ClientIdentity::new(ClientKind::Token, "ci");
        let bob = ClientIdentity::new(ClientKind::Token, "bob");
        let eve = ClientIdentity::new(ClientKind::OAuth, "eve");
        for _ in 0..3 {
            limits
                .take(&ci, Some("gh__list"))
                .expect("ci's own burst of 5");
        }
        // The tool's bucket is shared: ci takes one, bob the other.
        limits.take(&ci, Some("gh__create_issue")).expect("first");
        limits.take(&bob, Some("gh__create_issue")).expect("second");
        let limited = limits.take(&eve, Some("gh__create_issue")).unwrap_err();
        assert_eq!(limited.limit, "tools.gh__create_*", "{limited:?}");
        assert!(
            limited.message().contains("for all clients"),
            "{}",
            limited.message()
        );
        // Each tool the glob matches has a bucket of its own.
        let fred = ClientIdentity::new(ClientKind::OAuth, "fred");
        limits
            .take(&fred, Some("gh__create_pr"))
            .expect("another tool");
        // bob's own bucket (the `client` one) is spent by his one call.
        let limited = limits.take(&bob, Some("gh__list")).unwrap_err();
        assert_eq!(limited.limit, "client");
        assert!(limits.take(&ci, Some("gh__list")).is_ok(), "ci has 5");
    }

    #[tokio::test]
    async fn an_upstream_queues_then_refuses() {
        let limits = RateLimits::new(&settings(
            None,
            Some(UpstreamBound {
                in_flight: 1,
                queue: 1,
            }),
        ));
        let first = limits.enter_upstream("slow").await.unwrap();
        let waiting = tokio::spawn({
            let limits = limits.clone();
            async move { limits.enter_upstream("slow").await.map(|s| s.is_some()) }
        });
        // Until the second is queued.
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        loop {
            let gate = limits
                .inner
                .upstreams
                .lock_unpoisoned()
                .get("slow")
                .cloned()
                .unwrap();
            if gate.waiting.load(Ordering::Acquire) == 1 {
                break;
            }
            assert!(std::time::Instant::now() < deadline, "never queued");
            tokio::task::yield_now().await;
        }
        let refused = limits
            .enter_upstream("slow")
            .await
            .err()
            .expect("the queue is full");
        assert_eq!(refused.limit, "upstream");
        assert!(
            refused.message().contains("\"slow\""),
            "{}",
            refused.message()
        );
        assert!(
            limits.enter_upstream("fast").await.is_ok(),
            "each server its own"
        );
        drop(first);
        assert_eq!(waiting.await.unwrap(), Ok(true), "the queued call goes on");
    }

    #[test]
    fn the_state_per_client_is_bounded() {
        let limits = RateLimits::new(&settings(
            Some(Rate {
                per_second: 0.001,
                burst: 1,
            }),
            None,
        ));
        for i in 0..MAX_KEYS + 50 {
            let _ = limits.take(
                &ClientIdentity::new(ClientKind::OAuth, format!("c{i}")),
                None,
            );
        }
        let bucket = limits.inner.client.as_ref().unwrap();
        assert!(
            bucket.limiter.len() <= MAX_KEYS + 1,
            "{}",
            bucket.limiter.len()
        );
    }
}
