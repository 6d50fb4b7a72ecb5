//! `/metrics`: the gateway's figures in Prometheus text format.
//!
//! Calls, errors and call latency per server and tool, and whether each
//! upstream server is running (sampled when scraped).

use std::{sync::Mutex, time::Duration};
use toolbridge::lock::LockUnpoisoned as _;

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

/// Labels of one tool's figures.
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ToolLabels {
    server: String,
    tool: String,
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
            scrape: Mutex::new(()),
        }
    }
}

impl Metrics {
    /// Counts one call of `tool` on `server` that took `took`.
    pub fn call(&self, server: &str, tool: &str, took: Duration, failed: bool) {
        let labels = ToolLabels {
            server: server.to_owned(),
            tool: tool.to_owned(),
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
