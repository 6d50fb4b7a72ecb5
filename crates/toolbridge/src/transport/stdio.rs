//! The stdio transport: a child process speaking newline-delimited JSON-RPC.
//!
//! Spawned with rmcp's child-process transport, as the leader of its own
//! process group (registered with the [`ProcessTracker`]), with a minimal
//! environment plus the config's `env`. Its stderr is drained continuously
//! into a [`StderrTail`] so it can never block the server and so errors can
//! show what the server said before it died. Lines on stdout that are not
//! JSON-RPC are skipped by rmcp's reader (logged at debug).

use std::{
    collections::VecDeque,
    ffi::OsString,
    path::Path,
    sync::{
        Arc, Mutex,
        atomic::{AtomicBool, Ordering},
    },
    time::Duration,
};

use process_wrap::tokio::{CommandWrap, ProcessGroup};
use rmcp::{
    RoleClient,
    service::{RxJsonRpcMessage, TxJsonRpcMessage},
    transport::{TokioChildProcess, Transport},
};
use tokio::{
    io::{AsyncBufReadExt, BufReader},
    sync::Notify,
};

use super::TransportError;
use crate::{
    config::StdioSpec,
    process::{GroupGuard, ProcessTracker},
};

/// The variables a stdio server inherits from toolbridge's environment (when
/// set); everything else it gets comes from the config's `env`.
pub const INHERITED_ENV: &[&str] = &[
    "HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER", "LANG", "TMPDIR",
];

/// How many stderr lines a [`StderrTail`] keeps.
const TAIL_LINES: usize = 50;
/// Longest stderr line kept, in bytes; the rest is cut.
const TAIL_LINE_BYTES: usize = 2000;

/// The last lines a server wrote to stderr (at most 50).
#[derive(Debug, Clone, Default)]
pub struct StderrTail(Arc<TailInner>);

#[derive(Debug, Default)]
struct TailInner {
    lines: Mutex<VecDeque<String>>,
    /// Set when the server closed its stderr.
    closed: AtomicBool,
    /// Woken when `closed` is set.
    closed_notify: Notify,
}

impl StderrTail {
    fn push(&self, mut line: String) {
        if line.len() > TAIL_LINE_BYTES {
            let mut cut = TAIL_LINE_BYTES;
            while !line.is_char_boundary(cut) {
                cut -= 1;
            }
            line.truncate(cut);
            line.push('…');
        }
        let mut lines = self.0.lines.lock().unwrap_or_else(|e| e.into_inner());
        if lines.len() == TAIL_LINES {
            lines.pop_front();
        }
        lines.push_back(line);
    }

    /// The kept lines, oldest first.
    pub fn lines(&self) -> Vec<String> {
        let lines = self.0.lines.lock().unwrap_or_else(|e| e.into_inner());
        lines.iter().cloned().collect()
    }

    /// The last `n` lines joined with newlines, or `None` when there are none.
    pub fn last(&self, n: usize) -> Option<String> {
        let lines = self.0.lines.lock().unwrap_or_else(|e| e.into_inner());
        if lines.is_empty() {
            return None;
        }
        let skip = lines.len().saturating_sub(n);
        Some(
            lines
                .iter()
                .skip(skip)
                .cloned()
                .collect::<Vec<_>>()
                .join("\n"),
        )
    }

    /// Like [`last`](Self::last), but first gives a server that is exiting a
    /// moment (at most 500 ms) to finish writing, so an error shows the
    /// server's last words rather than a partial tail.
    pub async fn settled_last(&self, n: usize) -> Option<String> {
        let notified = self.0.closed_notify.notified();
        if !self.0.closed.load(Ordering::Acquire) {
            let _ = tokio::time::timeout(Duration::from_millis(500), notified).await;
        }
        self.last(n)
    }

    fn close(&self) {
        self.0.closed.store(true, Ordering::Release);
        self.0.closed_notify.notify_waiters();
    }
}

/// A running stdio server.
pub struct StdioTransport {
    /// rmcp's transport over the child's stdin/stdout; its `close` closes
    /// stdin, waits 3 s, sends SIGTERM to the group, waits, then SIGKILLs it.
    inner: TokioChildProcess,
    /// Kills the whole group (grandchildren included) when dropped, and
    /// keeps it registered with the reaper until then.
    group: Option<GroupGuard>,
    stderr: StderrTail,
}

impl StdioTransport {
    /// Starts `spec` for the server named `server`.
    pub fn spawn(
        server: &str,
        spec: &StdioSpec,
        tracker: &Arc<ProcessTracker>,
    ) -> Result<Self, TransportError> {
        let env = child_env(spec);
        let program = resolve_command(server, spec, &env)?;
        let mut command = tokio::process::Command::new(&program);
        command
            .args(&spec.args)
            .env_clear()
            .envs(env.iter().map(|(k, v)| (k, v)))
            .kill_on_drop(true);
        if let Some(cwd) = &spec.cwd {
            command.current_dir(cwd);
        }
        let mut wrapped = CommandWrap::from(command);
        wrapped.wrap(ProcessGroup::leader());
        let (inner, stderr) = TokioChildProcess::builder(wrapped)
            .stderr(std::process::Stdio::piped())
            .spawn()
            .map_err(|e| TransportError::Connect {
                server: server.to_owned(),
                message: format!("cannot start \"{}\": {e}", spec.command),
                source: Some(Box::new(e)),
            })?;
        let group = inner.id().map(|pid| tracker.register(pid));
        let tail = StderrTail::default();
        if let Some(stderr) = stderr {
            tokio::spawn(drain_stderr(server.to_owned(), stderr, tail.clone()));
        }
        tracing::debug!(server, command = %spec.command, pid = ?inner.id(), "started stdio server");
        Ok(StdioTransport {
            inner,
            group,
            stderr: tail,
        })
    }

    /// The server's recent stderr lines.
    pub fn stderr_tail(&self) -> StderrTail {
        self.stderr.clone()
    }

    /// The server's process id.
    pub fn pid(&self) -> Option<u32> {
        self.group.as_ref().map(GroupGuard::pgid)
    }
}

impl Transport<RoleClient> for StdioTransport {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.inner.send(item)
    }

    fn receive(&mut self) -> impl Future<Output = Option<RxJsonRpcMessage<RoleClient>>> + Send {
        self.inner.receive()
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        let result = self.inner.close().await;
        // The leader is gone; sweep whatever else is left in its group.
        drop(self.group.take());
        result
    }
}

/// The environment a stdio server gets: [`INHERITED_ENV`] from ours, then
/// the config's `env` on top.
pub fn child_env(spec: &StdioSpec) -> Vec<(OsString, OsString)> {
    let mut env: Vec<(OsString, OsString)> = INHERITED_ENV
        .iter()
        .filter_map(|k| std::env::var_os(k).map(|v| (OsString::from(k), v)))
        .filter(|(k, _)| !spec.env.contains_key(k.to_str().unwrap_or_default()))
        .collect();
    env.extend(
        spec.env
            .iter()
            .map(|(k, v)| (OsString::from(k), OsString::from(v))),
    );
    env
}

/// Finds the program to run, on the child's `PATH` when the command has no `/`.
fn resolve_command(
    server: &str,
    spec: &StdioSpec,
    env: &[(OsString, OsString)],
) -> Result<std::path::PathBuf, TransportError> {
    if spec.command.contains('/') {
        return Ok(spec.command.clone().into());
    }
    let path = env
        .iter()
        .find(|(k, _)| k == "PATH")
        .map(|(_, v)| v.clone());
    let cwd = spec
        .cwd
        .clone()
        .or_else(|| std::env::current_dir().ok())
        .unwrap_or_else(|| Path::new("/").to_path_buf());
    which::which_in(&spec.command, path, cwd).map_err(|_| TransportError::CommandNotFound {
        server: server.to_owned(),
        command: spec.command.clone(),
        hint: install_hint(&spec.command),
    })
}

/// What to tell a user whose server needs `command`.
pub fn install_hint(command: &str) -> String {
    let what = match command {
        "npx" | "npm" | "node" => "install Node.js",
        "uvx" | "uv" => "install uv",
        "python" | "python3" | "pip" | "pipx" => "install Python 3",
        "docker" => "install Docker",
        "bunx" | "bun" => "install Bun",
        "deno" => "install Deno",
        _ => "install it or give its full path in the config",
    };
    format!("{what}, see `toolbridge doctor`")
}

async fn drain_stderr(server: String, stderr: tokio::process::ChildStderr, tail: StderrTail) {
    let mut lines = BufReader::new(stderr).split(b'\n');
    loop {
        match lines.next_segment().await {
            Ok(Some(bytes)) => {
                let line = String::from_utf8_lossy(&bytes)
                    .trim_end_matches('\r')
                    .to_owned();
                tracing::debug!(server = %server, "stderr: {line}");
                tail.push(line);
            }
            Ok(None) => break,
            Err(e) => {
                tracing::debug!(server = %server, error = %e, "stderr closed");
                break;
            }
        }
    }
    tail.close();
}
