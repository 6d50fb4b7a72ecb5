//! A server's own `startupTimeout` (`ServerSpec::startup_timeout`) bounds its
//! start instead of the pool's default, against real processes.

use crate::common;

use std::time::{Duration, Instant};

use common::fixtures::{pool_with, python, test_server};
use toolbridge::{
    config::{ServerSpec, StdioSpec, TransportSpec},
    pool::PoolOptions,
};

/// tests/servers/start_faults.py in `mode`, with `env`.
fn start_faults(name: &str, mode: &str, env: &[(&str, &str)]) -> ServerSpec {
    let mut spec = ServerSpec::stdio(
        name,
        python(),
        [test_server("start_faults.py"), mode.to_owned()],
    );
    if let TransportSpec::Stdio(StdioSpec { env: e, .. }) = &mut spec.transport {
        for (k, v) in env {
            e.insert((*k).to_owned(), (*v).to_owned());
        }
    }
    spec
}

/// The pool's default is far away: only the server's own limit can end the
/// start this early.
fn patient_pool_options() -> PoolOptions {
    PoolOptions {
        start_timeout: Duration::from_secs(120),
        ..PoolOptions::default()
    }
}

#[tokio::test]
async fn a_servers_startup_timeout_overrides_the_pools_and_names_server_and_limit() {
    let mut hung = start_faults("hung", "hang-at-start", &[]);
    hung.startup_timeout = Some(Duration::from_millis(1500));
    let pool = pool_with(vec![hung], patient_pool_options());

    let started = Instant::now();
    let error = pool.connect("hung").await.unwrap_err();
    let waited = started.elapsed();

    assert!(error.is_timeout(), "{error:?}");
    assert!(
        waited < Duration::from_secs(30),
        "waited {waited:?}: the pool's 120 s, not the server's 1.5 s"
    );
    let message = error.to_string();
    assert!(
        message.starts_with("server \"hung\" did not start within 1.5 s"),
        "{message}"
    );
    assert!(message.contains("startupTimeout"), "{message}");
    // What the hung server said is why it hangs.
    assert!(message.contains("loading the model..."), "{message}");
    pool.close_all().await;
}

#[tokio::test]
async fn a_longer_startup_timeout_lets_a_slow_server_start() {
    let mut slow = start_faults("slow", "slow-start", &[("START_DELAY_MS", "1500")]);
    slow.startup_timeout = Some(Duration::from_secs(60));
    let options = PoolOptions {
        start_timeout: Duration::from_millis(500),
        ..PoolOptions::default()
    };
    let pool = pool_with(vec![slow], options);
    let info = pool.connect("slow").await.unwrap();
    assert_eq!(info.server_name, "start-faults");
    pool.close_all().await;
}

/// The regression: rmcp gives `server/discover` a fixed 10 s and then sends
/// `initialize`; a 2026-07-28 server that took longer to start (the Python
/// SDK importing under load, a cold `uvx` download) answered discover late,
/// refused the `initialize` (-32022) and never started, although its
/// `startupTimeout` was far away. The wrapper delays the real Python SDK
/// server's start by 12 s; it must start within its 60 s.
#[tokio::test]
async fn a_modern_server_slower_than_ten_seconds_starts_within_its_startup_timeout() {
    let script = format!(
        "sleep 12; exec '{}' '{}'",
        python(),
        test_server("py_sdk_server.py")
    );
    let mut slow = ServerSpec::stdio("slow-sdk", "sh", ["-c".to_owned(), script]);
    slow.startup_timeout = Some(Duration::from_secs(60));
    let pool = pool_with(vec![slow], patient_pool_options());
    let info = pool
        .connect("slow-sdk")
        .await
        .expect("the slow server starts within its startupTimeout");
    assert_eq!(info.server_name, "py-sdk-test");
    assert_eq!(info.protocol_version, "2026-07-28", "{info:?}");
    let tools = pool.list_server_tools("slow-sdk").await.expect("its tools");
    assert!(tools.iter().any(|t| t.name == "echo"), "{tools:?}");
    pool.close_all().await;
}
