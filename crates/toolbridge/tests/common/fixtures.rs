//! Fixtures for the pool and adapter tests: the stdio servers they run (the
//! example server, misbehaving ones, the Python SDK's, server-everything)
//! as specs, checks on the processes they leave, waits with deadlines, and
//! a capture of the library's tracing output.

use std::{
    path::{Path, PathBuf},
    sync::{Arc, Mutex},
    time::Duration,
};

use tokio::sync::Notify;

#[allow(unused_imports)]
pub use super::wait::{alive, poll_async, wait_until};
use toolbridge::{
    config::{ServerSpec, StdioSpec, TransportSpec},
    pool::{Pool, PoolOptions},
    process::ProcessTracker,
};

/// The example server program built with the library.
pub fn example_server() -> &'static str {
    env!("CARGO_BIN_EXE_toolbridge-example-server")
}

/// The built-in example server, as a stdio spec named `name`.
pub fn example(name: &str) -> ServerSpec {
    ServerSpec::stdio(name, example_server(), Vec::<String>::new())
}

/// The example server, started through `sh`, which first appends its pid
/// (the example server's, as `exec` keeps it) to `pid_file`.
pub fn example_noting_pid(name: &str, pid_file: &Path) -> ServerSpec {
    let script = format!(
        "echo $$ >> '{}' && exec '{}'",
        pid_file.display(),
        example_server()
    );
    ServerSpec::stdio(name, "sh", ["-c".to_owned(), script])
}

/// The test servers we wrote (Python).
pub fn test_server(name: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/servers")
        .join(name)
        .to_string_lossy()
        .into_owned()
}

/// The Python interpreter of the venv with the `mcp` 2.x SDK.
pub fn python() -> String {
    super::deps()
        .join("py2/bin/python")
        .to_string_lossy()
        .into_owned()
}

/// A misbehaving raw JSON-RPC server (see tests/servers/misbehave.py).
pub fn misbehave(name: &str, mode: &str, env: &[(&str, &str)]) -> ServerSpec {
    let mut spec = ServerSpec::stdio(
        name,
        python(),
        [test_server("misbehave.py"), mode.to_owned()],
    );
    if let TransportSpec::Stdio(StdioSpec { env: e, .. }) = &mut spec.transport {
        for (k, v) in env {
            e.insert((*k).to_owned(), (*v).to_owned());
        }
    }
    spec
}

/// A server written with the Python `mcp` 2.3.0 SDK, over stdio.
pub fn python_sdk(name: &str) -> ServerSpec {
    ServerSpec::stdio(name, python(), [test_server("py_sdk_server.py")])
}

/// `@modelcontextprotocol/server-everything` over stdio.
pub fn everything_stdio(name: &str) -> ServerSpec {
    let script = super::deps()
        .join("node/node_modules/@modelcontextprotocol/server-everything/dist/index.js")
        .to_string_lossy()
        .into_owned();
    ServerSpec::stdio(name, "node", [script, "stdio".to_owned()])
}

/// A pool over `servers` with default options and its own process tracker.
pub fn pool(servers: Vec<ServerSpec>) -> Pool {
    pool_with(servers, PoolOptions::default())
}

/// A pool over `servers` with `options` and its own process tracker.
pub fn pool_with(servers: Vec<ServerSpec>, options: PoolOptions) -> Pool {
    Pool::with_tracker(servers, options, Arc::new(ProcessTracker::new()))
}

/// A tool call's arguments: `v` if it is an object, else none.
pub fn object_args(v: serde_json::Value) -> Option<serde_json::Map<String, serde_json::Value>> {
    v.as_object().cloned()
}

/// A stdio server `name` that is a tree of three generations in one process
/// group: `sh -c` → python (misbehave.py `grandchild`) → `sleep`. Once
/// started it writes "pgid python_pid sleep_pid" to `pid_file`.
pub fn process_tree(name: &str, pid_file: &Path) -> ServerSpec {
    let script = format!("{} {} grandchild", python(), test_server("misbehave.py"));
    let mut spec = ServerSpec::stdio(name, "sh", ["-c".to_owned(), script]);
    if let TransportSpec::Stdio(s) = &mut spec.transport {
        s.env
            .insert("PID_FILE".into(), pid_file.to_string_lossy().into_owned());
    }
    spec
}

/// The pids written to `pid_file`, in order.
pub fn read_pids(pid_file: &Path) -> Vec<u32> {
    std::fs::read_to_string(pid_file)
        .expect("pid file")
        .split_whitespace()
        .map(|p| p.parse().expect("a pid"))
        .collect()
}

/// True once process group `pgid` is gone and none of `pids` is alive.
pub fn tree_gone(pgid: u32, pids: &[u32]) -> bool {
    !toolbridge::process::group_alive(pgid) && pids.iter().all(|p| !alive(*p))
}

/// Kills process `pid` when dropped (a test's stray process, even when the
/// test fails).
pub struct KillOnDrop(pub u32);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        // SAFETY: kill only sends a signal.
        unsafe { libc::kill(self.0 as i32, libc::SIGKILL) };
    }
}

/// A fresh temporary directory.
pub fn tempdir() -> tempfile::TempDir {
    tempfile::tempdir().expect("tempdir")
}

/// The tracing output of the library and rmcp (every level, span fields
/// included),
/// captured on the current thread: use it with a current-thread runtime,
/// where every task runs on the test's thread.
#[derive(Clone, Default)]
pub struct Logs {
    text: Arc<Mutex<Vec<u8>>>,
    written: Arc<Notify>,
}

impl Logs {
    /// Starts capturing on this thread until the guard drops.
    pub fn capture() -> (Logs, tracing::subscriber::DefaultGuard) {
        let logs = Logs::default();
        // Every level of the library and of rmcp. (process-wrap's own debug
        // spans print a child's whole environment; they are not ours.)
        let subscriber = tracing_subscriber::fmt()
            .with_env_filter("toolbridge=trace,rmcp=trace")
            .with_ansi(false)
            .with_span_events(tracing_subscriber::fmt::format::FmtSpan::NEW)
            .with_writer(logs.clone())
            .finish();
        let guard = tracing::subscriber::set_default(subscriber);
        (logs, guard)
    }

    /// Everything written so far.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.text.lock().expect("log lock")).into_owned()
    }

    /// Waits (at most `limit`) until the output contains `needle`.
    pub async fn wait_for(&self, needle: &str, limit: Duration) -> bool {
        tokio::time::timeout(limit, async {
            loop {
                let written = self.written.notified();
                tokio::pin!(written);
                written.as_mut().enable();
                if self.text().contains(needle) {
                    return;
                }
                written.await;
            }
        })
        .await
        .is_ok()
    }
}

impl std::io::Write for Logs {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.text.lock().expect("log lock").extend_from_slice(buf);
        self.written.notify_waiters();
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for Logs {
    type Writer = Logs;

    fn make_writer(&'a self) -> Self::Writer {
        self.clone()
    }
}
