//! Shared fixtures for the integration tests: where the real servers are,
//! and waiting on events with deadlines instead of fixed sleeps.

#![allow(dead_code)]

#[path = "../../../toolbridge/tests/common/reference.rs"]
pub mod reference;
#[path = "../../../toolbridge/tests/common/wait.rs"]
mod wait;
#[allow(unused_imports)]
pub use wait::{alive, poll_async, wait_until};

use std::{
    io::Write,
    path::{Path, PathBuf},
    process::{Command, Output, Stdio},
    sync::Arc,
    time::{Duration, Instant},
};

use toolbridge::{
    config::{ServerSpec, StdioSpec, TransportSpec},
    pool::{Pool, PoolOptions},
    process::ProcessTracker,
};

/// The workspace root.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("workspace root")
}

/// The pinned third-party servers, installed by `scripts/setup-test-deps.sh`.
pub fn deps() -> PathBuf {
    let deps = root().join(".deps");
    assert!(
        deps.join("py2/bin/python").exists() && deps.join("node/node_modules").exists(),
        "test dependencies are missing: run scripts/setup-test-deps.sh (the README's test command does)"
    );
    deps
}

/// The test servers we wrote (Python).
pub fn test_server(name: &str) -> String {
    root()
        .join("crates/toolbridge/tests/servers")
        .join(name)
        .to_string_lossy()
        .into_owned()
}

/// The toolbridge binary under test.
pub fn toolbridge() -> &'static str {
    env!("CARGO_BIN_EXE_toolbridge")
}

/// The Python interpreter of the venv with the `mcp` 2.x SDK.
pub fn python() -> String {
    deps().join("py2/bin/python").to_string_lossy().into_owned()
}

/// The built-in example server, as a stdio spec named `name`.
pub fn example(name: &str) -> ServerSpec {
    ServerSpec::stdio(name, toolbridge(), ["example-server"])
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

/// The script of `@modelcontextprotocol/server-everything`, to run with `node`.
pub fn everything_js() -> PathBuf {
    deps().join("node/node_modules/@modelcontextprotocol/server-everything/dist/index.js")
}

/// The JSON-RPC messages recorded in `record` (a server started behind
/// `tee -a RECORD`) that have `method` and `uri`.
pub fn upstream_requests(record: &Path, method: &str, uri: &str) -> usize {
    std::fs::read_to_string(record)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|m| m["method"] == method && m["params"]["uri"] == uri)
        .count()
}

/// An MCP client that reports `notifications/tools/list_changed`.
pub struct ListWatcher(pub tokio::sync::mpsc::UnboundedSender<()>);

impl rmcp::ClientHandler for ListWatcher {
    async fn on_tool_list_changed(
        &self,
        _context: rmcp::service::NotificationContext<rmcp::RoleClient>,
    ) {
        let _ = self.0.send(());
    }
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
pub fn args(v: serde_json::Value) -> Option<serde_json::Map<String, serde_json::Value>> {
    v.as_object().cloned()
}

/// The pids a process tree wrote to `pid_file`: its process group, then
/// each process.
pub fn read_pids(pid_file: &Path) -> Vec<u32> {
    std::fs::read_to_string(pid_file)
        .expect("pid file")
        .split_whitespace()
        .map(|p| p.parse().unwrap())
        .collect()
}

/// True once process group `pgid` is gone and none of `pids` is alive.
pub fn tree_gone(pgid: u32, pids: &[u32]) -> bool {
    !toolbridge::process::group_alive(pgid) && pids.iter().all(|p| !alive(*p))
}

/// Runs `command` with `input` on its stdin (then closed), capturing stdout
/// and stderr.
pub fn output_with_stdin(command: &mut Command, input: &[u8]) -> Output {
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(input).unwrap();
    child.wait_with_output().unwrap()
}

/// A fresh temporary directory.
pub fn tempdir() -> tempfile::TempDir {
    tempfile::tempdir().expect("tempdir")
}

/// A temp directory holding the config file of one test.
pub struct Sandbox {
    pub dir: tempfile::TempDir,
}

impl Sandbox {
    pub fn new() -> Sandbox {
        Sandbox {
            dir: tempfile::tempdir().unwrap(),
        }
    }

    pub fn config(&self) -> PathBuf {
        self.dir.path().join("config.json")
    }

    pub fn write_config(&self, json: &serde_json::Value) {
        std::fs::write(self.config(), serde_json::to_string_pretty(json).unwrap()).unwrap();
    }

    pub fn read_config(&self) -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(self.config()).unwrap()).unwrap()
    }

    /// The sandbox's cache folder (`$XDG_CACHE_HOME` of its commands): the
    /// tool-list cache lands in `toolbridge/tools` under it.
    pub fn cache_home(&self) -> PathBuf {
        self.dir.path().join("cache")
    }

    /// The sandbox's data folder (`$XDG_DATA_HOME` of its commands): the
    /// tool pins land in `toolbridge/pins` under it.
    pub fn data_home(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    /// `toolbridge --config CONFIG args...`, stdin closed (not a terminal),
    /// with the sandbox's own cache and data folders.
    pub fn command(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_toolbridge"));
        cmd.arg("--config")
            .arg(self.config())
            .args(args)
            .current_dir(self.dir.path())
            .env_remove("TOOLBRIDGE_CONFIG")
            .env("XDG_CACHE_HOME", self.cache_home())
            .env("XDG_DATA_HOME", self.data_home())
            .stdin(Stdio::null());
        cmd
    }

    pub fn run(&self, args: &[&str]) -> Run {
        self.run_with(args, |_| {})
    }

    /// Like `run`, after `setup` adjusts the command (its environment, say).
    pub fn run_with(&self, args: &[&str], setup: impl FnOnce(&mut Command)) -> Run {
        let mut cmd = self.command(args);
        setup(&mut cmd);
        Run::from(cmd.output().unwrap())
    }
}

/// What one run printed and how it ended.
#[derive(Debug)]
pub struct Run {
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

impl From<Output> for Run {
    fn from(o: Output) -> Run {
        Run {
            code: o.status.code(),
            stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
        }
    }
}

/// Writes an executable shell script.
#[cfg(unix)]
pub fn script(path: &Path, body: &str) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::write(path, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// A network test server (started in its own process group, killed on drop)
/// that printed `LISTENING <port>`.
pub struct Listening {
    child: std::process::Child,
    pub port: u16,
}

impl Listening {
    /// Starts `program args` with `env` and waits (60 s at most) for its
    /// `LISTENING <port>` line on stdout or stderr.
    // The child is waited for in `Drop`, which clippy cannot see.
    #[allow(clippy::zombie_processes)]
    pub fn start(program: &str, args: &[String], env: &[(&str, &str)]) -> Listening {
        use std::io::BufRead;
        use std::os::unix::process::CommandExt;
        let mut child = Command::new(program)
            .args(args)
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .spawn()
            .expect("spawn test server");
        let (tx, rx) = std::sync::mpsc::channel::<String>();
        let out = child.stdout.take().expect("stdout");
        let err = child.stderr.take().expect("stderr");
        for stream in [
            Box::new(out) as Box<dyn std::io::Read + Send>,
            Box::new(err),
        ] {
            let tx = tx.clone();
            std::thread::spawn(move || {
                for line in std::io::BufReader::new(stream)
                    .lines()
                    .map_while(Result::ok)
                {
                    let _ = tx.send(line);
                }
            });
        }
        let deadline = Instant::now() + Duration::from_secs(60);
        let mut seen = Vec::new();
        while let Ok(line) = rx.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
            if let Some(port) = line.strip_prefix("LISTENING ") {
                let port = port.trim().parse().expect("port");
                return Listening { child, port };
            }
            seen.push(line);
        }
        // SAFETY: killpg only sends a signal.
        unsafe { libc::killpg(child.id() as i32, libc::SIGKILL) };
        panic!(
            "{program} never said LISTENING; output:\n{}",
            seen.join("\n")
        );
    }

    /// `http://127.0.0.1:<port><path>`
    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }
}

impl Drop for Listening {
    fn drop(&mut self) {
        // SAFETY: killpg only sends a signal.
        unsafe { libc::killpg(self.child.id() as i32, libc::SIGKILL) };
        let _ = self.child.wait();
    }
}

/// server-everything in `mode` (`sse` or `streamableHttp`) on 127.0.0.1.
pub fn everything_listening(mode: &str) -> Listening {
    let servers = root().join("crates/toolbridge/tests/servers");
    Listening::start(
        "node",
        &[
            "--require".to_owned(),
            servers
                .join("listen_localhost.cjs")
                .to_string_lossy()
                .into_owned(),
            everything_js().to_string_lossy().into_owned(),
            mode.to_owned(),
        ],
        &[("PORT", "0")],
    )
}

/// tests/servers/py_server.py over `transport` (`sse`, `streamable-http` with
/// the Python SDK 2.x; `websocket` with 1.x) on 127.0.0.1.
pub fn python_listening(transport: &str) -> Listening {
    let venv = if transport == "websocket" {
        "py1"
    } else {
        "py2"
    };
    let python = deps().join(venv).join("bin/python");
    Listening::start(
        &python.to_string_lossy(),
        &[test_server("py_server.py"), transport.to_owned()],
        &[("PYTHONUNBUFFERED", "1")],
    )
}

/// How a measured run ended: what it printed, its exit code, its peak
/// resident memory and how long it took.
#[derive(Debug)]
pub struct Measured {
    pub run: Run,
    /// The process's own peak resident set (`ru_maxrss` from `wait4`), in KiB:
    /// read from the kernel, not guessed from outside.
    pub peak_kib: u64,
    pub elapsed: Duration,
}

/// Runs `cmd` to its end (stdin closed, stdout and stderr captured in full)
/// and reports its peak memory from `wait4`'s resource usage.
#[cfg(target_os = "linux")]
pub fn run_measured(cmd: &mut Command) -> Measured {
    use std::io::Read;
    let start = Instant::now();
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let drain = |mut stream: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            let _ = stream.read_to_end(&mut bytes);
            String::from_utf8_lossy(&bytes).into_owned()
        })
    };
    let stdout = drain(Box::new(child.stdout.take().expect("stdout")));
    let stderr = drain(Box::new(child.stderr.take().expect("stderr")));
    let pid = child.id() as libc::pid_t;
    let mut status = 0;
    // SAFETY: a zeroed rusage is a valid value for wait4 to fill in.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `pid` is our own unwaited child; both pointers are valid.
    let waited = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(waited, pid, "wait4: {}", std::io::Error::last_os_error());
    // Reaped here; dropping a `Child` neither waits nor kills.
    drop(child);
    let code = libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status));
    Measured {
        run: Run {
            code,
            stdout: stdout.join().expect("stdout reader"),
            stderr: stderr.join().expect("stderr reader"),
        },
        peak_kib: usage.ru_maxrss as u64,
        elapsed: start.elapsed(),
    }
}
