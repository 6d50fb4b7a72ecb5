//! `/metrics`: the gateway's figures in Prometheus text format.
//!
//! Calls, errors and call latency per server, tool, client and profile,
//! and whether each upstream server is running (sampled when scraped).
//!
//! The `client` label is the client's name (a named token's, an OAuth
//! token's subject, `admin`, `local` or `stdio`), the `profile` label the
//! profile it reached (empty at `/mcp`). Both are bounded: the first
//! [`MAX_LABEL_VALUES`] distinct values of each are kept, any later one is
//! counted as [`OTHER`], so a flood of OAuth subjects cannot grow the
//! scrape without end.

use std::{
    collections::HashSet,
    sync::{Mutex, RwLock},
    time::Duration,
};
use toolbridge::lock::{LockUnpoisoned as _, RwLockUnpoisoned as _};

use prometheus_client::{
    encoding::{EncodeLabelSet, text::encode},
    metrics::{
        counter::Counter,
        family::Family,
        gauge::Gauge,
        histogram::{Histogram, exponential_buckets},
    },
    registry::Registry,
};

/// How many distinct values the `client` label (and, apart, the
/// `profile` label) takes before the next ones are counted as [`OTHER`].
pub const MAX_LABEL_VALUES: usize = 64;

/// The label value of the clients (or profiles) past the bound.
pub const OTHER: &str = "_other";

/// Labels of one tool's figures.
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ToolLabels {
    server: String,
    tool: String,
    client: String,
    profile: String,
}

/// The values one label has taken, up to [`MAX_LABEL_VALUES`].
#[derive(Default)]
struct Bounded(RwLock<HashSet<String>>);

impl Bounded {
    /// `value` while it is among the first values seen, else [`OTHER`].
    fn label(&self, value: &str) -> String {
        if self.0.read_unpoisoned().contains(value) {
            return value.to_owned();
        }
        let mut seen = self.0.write_unpoisoned();
        if seen.len() < MAX_LABEL_VALUES || seen.contains(value) {
            seen.insert(value.to_owned());
            value.to_owned()
        } else {
            OTHER.to_owned()
        }
    }
}

/// Labels of one upstream server.
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ServerLabels {
    server: String,
}

fn latency_histogram() -> Histogram {
    // 0.5 ms to ~16 s.
    Histogram::new(exponential_buckets(0.0005, 2.0, 16))
}

/// The gateway's metrics.
pub struct Metrics {
    registry: Registry,
    calls: Family<ToolLabels, Counter>,
    errors: Family<ToolLabels, Counter>,
    latency: Family<ToolLabels, Histogram, fn() -> Histogram>,
    up: Family<ServerLabels, Gauge>,
    /// The `client` and `profile` values in use.
    clients: Bounded,
    profiles: Bounded,
    /// Serialises scrapes: the gauges are set, then encoded.
    scrape: Mutex<()>,
}

impl Default for Metrics {
    fn default() -> Self {
        let mut registry = Registry::with_prefix("toolbridge_gateway");
        let calls = Family::<ToolLabels, Counter>::default();
        let errors = Family::<ToolLabels, Counter>::default();
        let latency = Family::<ToolLabels, Histogram, fn() -> Histogram>::new_with_constructor(
            latency_histogram as fn() -> Histogram,
        );
        let up = Family::<ServerLabels, Gauge>::default();
        registry.register("tool_calls", "Tool calls forwarded", calls.clone());
        registry.register(
            "tool_errors",
            "Tool calls that failed or returned isError",
            errors.clone(),
        );
        registry.register(
            "tool_call_duration_seconds",
            "Tool call latency through the gateway",
            latency.clone(),
        );
        registry.register(
            "upstream_up",
            "1 when the upstream server is running",
            up.clone(),
        );
        Metrics {
            registry,
            calls,
            errors,
            latency,
            up,
            clients: Bounded::default(),
            profiles: Bounded::default(),
            scrape: Mutex::new(()),
        }
    }
}

impl Metrics {
    /// Counts one call of `tool` on `server` that took `took`, made by the
    /// client named `client` through `profile` (`""`: `/mcp`).
    pub fn call(
        &self,
        server: &str,
        tool: &str,
        (client, profile): (&str, &str),
        took: Duration,
        failed: bool,
    ) {
        let labels = ToolLabels {
            server: server.to_owned(),
            tool: tool.to_owned(),
            client: self.clients.label(client),
            profile: self.profiles.label(profile),
        };
        self.calls.get_or_create(&labels).inc();
        if failed {
            self.errors.get_or_create(&labels).inc();
        }
        self.latency
            .get_or_create(&labels)
            .observe(took.as_secs_f64());
    }

    /// The text exposition, with each upstream's state as given.
    pub fn encode(&self, upstreams: &[(String, bool)]) -> String {
        let _scrape = self.scrape.lock_unpoisoned();
        self.up.clear();
        for (server, running) in upstreams {
            self.up
                .get_or_create(&ServerLabels {
                    server: server.clone(),
                })
                .set(i64::from(*running));
        }
        let mut text = String::new();
        // Writing to a String cannot fail.
        let _ = encode(&mut text, &self.registry);
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calls_are_labelled_by_client_and_profile_within_the_bound() {
        let metrics = Metrics::default();
        metrics.call("s", "t", ("alice", "team"), Duration::from_millis(2), false);
        metrics.call("s", "t", ("alice", ""), Duration::from_millis(2), true);
        for n in 0..MAX_LABEL_VALUES + 10 {
            metrics.call("s", "t", (&format!("c{n}"), "team"), Duration::ZERO, false);
        }
        let text = metrics.encode(&[]);
        assert!(
            text.contains(r#"toolbridge_gateway_tool_calls_total{server="s",tool="t",client="alice",profile="team"} 1"#),
            "{text}"
        );
        assert!(
            text.contains(r#"toolbridge_gateway_tool_errors_total{server="s",tool="t",client="alice",profile=""} 1"#),
            "{text}"
        );
        // alice and the first 63 others; the 11 past the bound are one.
        let clients: HashSet<&str> = text
            .lines()
            .filter(|l| l.starts_with("toolbridge_gateway_tool_calls_total{"))
            .filter_map(|l| l.split("client=\"").nth(1)?.split('"').next())
            .collect();
        assert_eq!(clients.len(), MAX_LABEL_VALUES + 1, "{clients:?}");
        assert!(clients.contains(OTHER));
        assert!(!clients.contains(format!("c{}", MAX_LABEL_VALUES).as_str()));
        assert!(text.contains(&format!(
            r#"toolbridge_gateway_tool_calls_total{{server="s",tool="t",client="{OTHER}",profile="team"}} 11"#
        )), "{text}");
    }
}
