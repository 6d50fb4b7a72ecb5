//! The stdio transport: a child process speaking newline-delimited JSON-RPC.
//!
//! Spawned as the leader of its own process group (registered with the
//! [`ProcessTracker`]), with a minimal environment plus the config's `env`.
//! Its stderr is drained continuously into a [`StderrTail`] so it can never
//! block the server and so errors can show what the server said before it
//! died. Lines on stdout that are not
//! JSON-RPC are skipped (logged at debug), except before the server's first
//! message: a server that prints only such lines (a banner, a crash report
//! on stdout) fails its start after [`NOISE_GRACE`], or at once when its
//! stdout closes, naming the first line, instead of waiting for the whole
//! start timeout. One banner line and then answers still works.
//!
//! A message on stdout that cannot be read (over the size cap, nested too
//! deep, not UTF-8, a raw NUL byte) fails the request it answered at once;
//! see the `unreadable` module.

use crate::lock::LockUnpoisoned as _;
use std::{
    collections::VecDeque,
    ffi::OsString,
    path::Path,
    process::Stdio,
    sync::{
        Arc, Mutex,
        atomic::{AtomicBool, Ordering},
    },
    time::Duration,
};

use process_wrap::tokio::{ChildWrapper, CommandWrap, ProcessGroup};
use rmcp::{
    RoleClient,
    service::{RxJsonRpcMessage, TxJsonRpcMessage},
    transport::Transport,
};
use tokio::{
    io::{AsyncBufRead, AsyncBufReadExt, BufReader},
    process::{ChildStdin, ChildStdout},
    sync::Notify,
};

use super::{
    EndReason, TransportError,
    codec::{Decoded, decode, encode_client_line},
    lines::Lines,
    unreadable::Unanswered,
};
use crate::{
    config::StdioSpec,
    process::{GroupGuard, ProcessTracker},
};

#[cfg(target_os = "linux")]
use crate::sandbox::SandboxGuard;
/// Nothing of a sandbox outlives its spawn where there is none.
#[cfg(not(target_os = "linux"))]
type SandboxGuard = ();

/// The variables a stdio server inherits from toolbridge's environment (when
/// set); everything else it gets comes from the config's `env`. Besides the
/// basics: where the TLS trust store is and which proxy to use (OpenSSL,
/// Node, Python requests, curl), without which every `npx`/`uvx` server
/// fails behind a TLS-intercepting proxy.
pub const INHERITED_ENV: &[&str] = &[
    "HOME",
    "LOGNAME",
    "PATH",
    "SHELL",
    "TERM",
    "USER",
    "LANG",
    "TMPDIR",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "NODE_EXTRA_CA_CERTS",
    "REQUESTS_CA_BUNDLE",
    "CURL_CA_BUNDLE",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "NO_PROXY",
    "http_proxy",
    "https_proxy",
    "no_proxy",
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
    /// How the server process ended, once toolbridge saw it end by itself.
    exit: Mutex<Option<std::process::ExitStatus>>,
    /// Woken when `exit` is set.
    exit_notify: Notify,
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
        let mut lines = self.0.lines.lock_unpoisoned();
        if lines.len() == TAIL_LINES {
            lines.pop_front();
        }
        lines.push_back(line);
    }

    /// The kept lines, oldest first.
    pub fn lines(&self) -> Vec<String> {
        let lines = self.0.lines.lock_unpoisoned();
        lines.iter().cloned().collect()
    }

    /// The last `n` lines joined with newlines, or `None` when there are none.
    pub fn last(&self, n: usize) -> Option<String> {
        let lines = self.0.lines.lock_unpoisoned();
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

    /// How the server process ended (see [`describe_exit`]), when it ended
    /// by itself or on its stdin closing; `None` while it runs, or when
    /// toolbridge had to signal it.
    pub fn exit(&self) -> Option<std::process::ExitStatus> {
        let exit = self.0.exit.lock_unpoisoned();
        *exit
    }

    /// Like [`exit`](Self::exit), after giving a server whose connection
    /// just closed a moment (at most 500 ms) to be seen ending.
    pub async fn settled_exit(&self) -> Option<std::process::ExitStatus> {
        let noted = self.0.exit_notify.notified();
        if let Some(exit) = self.exit() {
            return Some(exit);
        }
        let _ = tokio::time::timeout(Duration::from_millis(500), noted).await;
        self.exit()
    }

    fn set_exit(&self, status: std::process::ExitStatus) {
        {
            let mut exit = self.0.exit.lock_unpoisoned();
            exit.get_or_insert(status);
        }
        self.0.exit_notify.notify_waiters();
    }

    fn close(&self) {
        self.0.closed.store(true, Ordering::Release);
        self.0.closed_notify.notify_waiters();
    }
}

/// How a process ended, after "the server": "exited with status 1", "was
/// killed by signal 9 (SIGKILL)".
pub fn describe_exit(status: &std::process::ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("exited with status {code}"),
        (None, Some(signal)) => match signal_name(signal) {
            Some(name) => format!("was killed by signal {signal} ({name})"),
            None => format!("was killed by signal {signal}"),
        },
        (None, None) => status.to_string(),
    }
}

fn signal_name(signal: i32) -> Option<&'static str> {
    Some(match signal {
        libc::SIGHUP => "SIGHUP",
        libc::SIGINT => "SIGINT",
        libc::SIGQUIT => "SIGQUIT",
        libc::SIGILL => "SIGILL",
        libc::SIGABRT => "SIGABRT",
        libc::SIGBUS => "SIGBUS",
        libc::SIGFPE => "SIGFPE",
        libc::SIGKILL => "SIGKILL",
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGPIPE => "SIGPIPE",
        libc::SIGTERM => "SIGTERM",
        _ => return None,
    })
}

/// A running stdio server.
///
/// Messages go over `lines`, which writes a burst of requests in few
/// syscalls, and are parsed by `codec`, which reads `tools/call` results
/// without trying every result type first.
pub struct StdioTransport {
    /// The child; taken by `close`, killed (with its group) when dropped.
    child: Option<Box<dyn ChildWrapper>>,
    /// Kills the whole group (grandchildren included) when dropped, and
    /// keeps it registered with the reaper until then.
    group: Option<GroupGuard>,
    stderr: StderrTail,
    lines: Lines<ChildStdout, ChildStdin>,
    /// What reading needs beyond the lines (boxed: it is rarely used, and
    /// keeps the transport small).
    reading: Box<Reading>,
    /// Why the transport ended the connection itself, for the error.
    end_reason: EndReason,
    /// What of the server's sandbox must outlive it (its cgroup).
    sandbox: Option<SandboxGuard>,
}

/// The read side's state beyond the lines.
#[derive(Debug, Default)]
struct Reading {
    /// The requests not answered yet, for failing them when an answer
    /// cannot be read.
    in_flight: Unanswered,
    /// Error answers made for unreadable messages, not yet handed to rmcp.
    failed: VecDeque<RxJsonRpcMessage<RoleClient>>,
    /// Whether the server has sent a message yet, and the first line it
    /// printed that was not one.
    startup: Startup,
}

/// How long a stdio server may go on printing only lines that are not MCP
/// messages on stdout, before its first message, until its start fails.
pub const NOISE_GRACE: Duration = Duration::from_secs(5);

/// What a server printed on stdout before its first message.
#[derive(Debug, Default)]
struct Startup {
    /// A message arrived: noise is only skipped from now on.
    answered: bool,
    /// The first line that was not a message, shortened.
    first_noise: Option<String>,
    /// When the start fails if no message arrives.
    deadline: Option<tokio::time::Instant>,
}

impl Startup {
    fn noise(&mut self, line: String) {
        if self.first_noise.is_none() {
            self.first_noise = Some(line);
            self.deadline = Some(tokio::time::Instant::now() + NOISE_GRACE);
        }
    }

    fn answered(&mut self) {
        self.answered = true;
        self.deadline = None;
    }

    /// Why the start failed, when noise was all the server printed.
    fn reason(&self, what: &str) -> Option<String> {
        let line = self.first_noise.as_ref()?;
        Some(format!(
            "it printed \"{line}\" on stdout, which is not an MCP message, and {what}; \
             a stdio server must write only JSON-RPC messages to stdout (logs belong on stderr)"
        ))
    }
}

/// At most this much of a noise line goes into an error.
const SHOWN_NOISE_CHARS: usize = 200;

fn shown_noise(line: &[u8]) -> String {
    let text = String::from_utf8_lossy(line);
    let text: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    match text.char_indices().nth(SHOWN_NOISE_CHARS) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text,
    }
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
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        if let Some(cwd) = &spec.cwd {
            command.current_dir(cwd);
        }
        let (confinement, sandbox) = match confine(server, spec, &program, &env)? {
            Some((confinement, guard)) => (Some(confinement), Some(guard)),
            None => (None, None),
        };
        let sandboxed = confinement.is_some();
        // The server adopts its orphaned descendants, so those that leave its
        // process group stay findable (see `crate::process`); then it enters
        // its sandbox.
        // SAFETY: `become_subreaper` makes one prctl call and
        // `Confinement::apply` only system calls on values made before the
        // fork: async-signal-safe, between fork and exec.
        unsafe {
            command.pre_exec(move || {
                crate::process::descendants::become_subreaper()?;
                #[cfg(target_os = "linux")]
                if let Some(confinement) = &confinement {
                    confinement.apply()?;
                }
                Ok(())
            });
        }
        let mut wrapped = CommandWrap::from(command);
        wrapped.wrap(ProcessGroup::leader());
        let mut child = wrapped.spawn().map_err(|e| TransportError::Connect {
            server: server.to_owned(),
            message: if sandboxed {
                format!(
                    "cannot start \"{}\" in its sandbox: {e}; set \"sandbox\": false for \
                     this server to run it without one",
                    spec.command
                )
            } else {
                format!("cannot start \"{}\": {e}", spec.command)
            },
            source: Some(Box::new(e)),
        })?;
        let group = child.id().map(|pid| tracker.register(pid));
        let io = child.inner_mut();
        let (Some(stdin), Some(stdout), stderr) =
            (io.stdin().take(), io.stdout().take(), io.stderr().take())
        else {
            return Err(TransportError::Connect {
                server: server.to_owned(),
                message: "the child process has no stdin or stdout pipe".to_owned(),
                source: None,
            });
        };
        let tail = StderrTail::default();
        if let Some(stderr) = stderr {
            tokio::spawn(drain_stderr(server.to_owned(), stderr, tail.clone()));
        }
        tracing::debug!(server, command = %spec.command, pid = ?child.id(), "started stdio server");
        Ok(StdioTransport {
            child: Some(child),
            group,
            stderr: tail,
            lines: Lines::new(stdout, stdin),
            reading: Box::default(),
            end_reason: EndReason::default(),
            sandbox,
        })
    }

    /// The server's recent stderr lines.
    pub fn stderr_tail(&self) -> StderrTail {
        self.stderr.clone()
    }

    /// Why the transport ended the connection itself (a server printing
    /// only noise on stdout), once it has.
    pub fn end_reason(&self) -> EndReason {
        self.end_reason.clone()
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
        self.reading.in_flight.sent(&item);
        self.lines.send(&mut |out| encode_client_line(&item, out))
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        loop {
            if let Some(failed) = self.reading.failed.pop_front() {
                return Some(failed);
            }
            let watching = !self.reading.startup.answered;
            let mut noise = None;
            let next = self.lines.next(|line| {
                let decoded = decode(line);
                if watching && matches!(decoded, Decoded::Skip) {
                    noise = Some(shown_noise(line));
                }
                decoded
            });
            let decoded = match self.reading.startup.deadline {
                Some(deadline) => tokio::select! {
                    decoded = next => decoded,
                    () = tokio::time::sleep_until(deadline) => {
                        let what = format!("nothing else within {} s", NOISE_GRACE.as_secs());
                        self.end_reason.set(self.reading.startup.reason(&what));
                        return None;
                    }
                },
                None => next.await,
            };
            match decoded {
                None => {
                    if !self.reading.startup.answered {
                        self.end_reason
                            .set(self.reading.startup.reason("then closed its stdout"));
                    }
                    return None;
                }
                Some(Decoded::Message(mut message)) => {
                    self.reading.startup.answered();
                    self.reading.in_flight.received(&mut message);
                    return Some(message);
                }
                Some(Decoded::Unreadable(unreadable)) => {
                    self.reading.startup.answered();
                    self.reading
                        .failed
                        .extend(self.reading.in_flight.fail(unreadable));
                }
                Some(Decoded::Skip | Decoded::Invalid) => {
                    if let Some(line) = noise {
                        self.reading.startup.noise(line);
                    }
                }
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        // Close stdin (the MCP way to ask a stdio server to exit), wait, then
        // SIGTERM the group, wait, then SIGKILL it.
        if let Some(group) = &self.group {
            // Before the server can exit and orphan them.
            group.track_descendants();
        }
        self.lines.close();
        let result = match self.child.as_mut() {
            Some(child) => shut_down(child.as_mut(), &self.stderr, self.group.as_ref()).await,
            None => Ok(()),
        };
        self.child = None;
        if let Some(group) = &self.group {
            terminate_escaped(group).await;
        }
        // The leader is gone; sweep whatever else is left in its group.
        drop(self.group.take());
        drop(self.sandbox.take());
        result
    }
}

/// How long a server dropped without `close` may take to be seen ending by
/// itself before its group is killed.
const EXIT_WATCH: Duration = Duration::from_millis(100);

impl Drop for StdioTransport {
    /// Dropped without `close` (a failed handshake, say). A server that
    /// closed its stdout may not have finished exiting: it gets
    /// 100 ms to be seen ending, so that how it ended ("exited with
    /// status 1") can be reported, then the group guard kills whatever is
    /// left. Without a runtime, the guard kills it at once.
    fn drop(&mut self) {
        let Some(mut child) = self.child.take() else {
            return;
        };
        if let Ok(Some(status)) = child.try_wait() {
            self.stderr.set_exit(status);
            return;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let group = self.group.take();
        let sandbox = self.sandbox.take();
        let tail = self.stderr.clone();
        runtime.spawn(async move {
            if let Ok(Ok(status)) = tokio::time::timeout(EXIT_WATCH, child.wait()).await {
                tail.set_exit(status);
            }
            drop(child);
            drop(group);
            drop(sandbox);
        });
    }
}

/// How long a server gets to exit after stdin closes, and again after SIGTERM.
const EXIT_GRACE: Duration = Duration::from_secs(3);

/// Closes a server whose stdin is closed. How it ended, if it did before
/// any signal (by itself, a crash, or on stdin closing), is noted in `tail`
/// for the error of a call it was serving.
async fn shut_down(
    child: &mut dyn ChildWrapper,
    tail: &StderrTail,
    group: Option<&GroupGuard>,
) -> std::io::Result<()> {
    if let Some(status) = wait_for_exit(child, group).await? {
        tail.set_exit(status);
        return Ok(());
    }
    match child.signal(libc::SIGTERM) {
        Ok(()) => {
            if wait_for_exit(child, group).await?.is_some() {
                return Ok(());
            }
        }
        Err(e) => tracing::debug!("cannot send SIGTERM to a stdio server: {e}"),
    }
    Box::into_pin(child.kill()).await
}

/// How the child ended, if it did within [`EXIT_GRACE`]. Meanwhile its
/// process tree is walked every [`TRACK_WHILE_CLOSING`], so that what it
/// starts while shutting down and leaves behind is known too.
async fn wait_for_exit(
    child: &mut dyn ChildWrapper,
    group: Option<&GroupGuard>,
) -> std::io::Result<Option<std::process::ExitStatus>> {
    let deadline = tokio::time::Instant::now() + EXIT_GRACE;
    loop {
        let step = (tokio::time::Instant::now() + TRACK_WHILE_CLOSING).min(deadline);
        match tokio::time::timeout_at(step, child.wait()).await {
            Ok(Ok(status)) => {
                tracing::debug!(%status, "stdio server exited");
                return Ok(Some(status));
            }
            Ok(Err(e)) => return Err(e),
            Err(_) if step >= deadline => return Ok(None),
            Err(_) => {
                if let Some(group) = group {
                    group.track_descendants();
                }
            }
        }
    }
}

/// How often a closing server's tree is walked for processes leaving it.
const TRACK_WHILE_CLOSING: Duration = Duration::from_millis(100);

/// After the server exited: SIGTERM to the processes that left its group
/// and are still alive, and up to [`EXIT_GRACE`] for them to go; the
/// [`GroupGuard`]'s drop then kills what is left.
async fn terminate_escaped(group: &GroupGuard) {
    if group.signal_escaped(libc::SIGTERM) == 0 {
        return;
    }
    let deadline = tokio::time::Instant::now() + EXIT_GRACE;
    while tokio::time::Instant::now() < deadline && !group.escaped().is_empty() {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// The environment a stdio server gets: [`INHERITED_ENV`] from ours, plus
/// the variables `spec.inherit_env` names (`HTTPS_PROXY`, or a prefix
/// pattern like `LC_*`), then the config's `env` on top.
pub fn child_env(spec: &StdioSpec) -> Vec<(OsString, OsString)> {
    let inherited = |name: &str| {
        INHERITED_ENV.contains(&name)
            || spec
                .inherit_env
                .iter()
                .any(|pattern| match pattern.strip_suffix('*') {
                    Some(prefix) => name.starts_with(prefix),
                    None => pattern == name,
                })
    };
    let mut env: Vec<(OsString, OsString)> = std::env::vars_os()
        .filter(|(k, _)| k.to_str().is_some_and(inherited))
        .filter(|(k, _)| !spec.env.contains_key(k.to_str().unwrap_or_default()))
        .collect();
    env.extend(
        spec.env
            .iter()
            .map(|(k, v)| (OsString::from(k), OsString::from(v))),
    );
    env
}

/// The sandbox of server `server` made ready before fork (`None` for
/// `"sandbox": false`); an error naming the server and the way out where
/// this system cannot sandbox it.
#[cfg(target_os = "linux")]
fn confine(
    server: &str,
    spec: &StdioSpec,
    program: &Path,
    env: &[(OsString, OsString)],
) -> Result<Option<(crate::sandbox::Confinement, SandboxGuard)>, TransportError> {
    if !spec.sandbox.is_on() {
        return Ok(None);
    }
    crate::sandbox::Confinement::prepare(
        &spec.sandbox,
        program,
        &spec.args,
        spec.cwd.as_deref(),
        env,
    )
    .map(Some)
    .map_err(|e| unsandboxable(server, &e.0))
}

#[cfg(not(target_os = "linux"))]
fn confine(
    server: &str,
    spec: &StdioSpec,
    _program: &Path,
    _env: &[(OsString, OsString)],
) -> Result<Option<((), SandboxGuard)>, TransportError> {
    match crate::sandbox::Support::get().refused() {
        Some(why) if spec.sandbox.is_on() => Err(unsandboxable(server, &why)),
        _ => Ok(None),
    }
}

fn unsandboxable(server: &str, why: &str) -> TransportError {
    TransportError::Config {
        server: server.to_owned(),
        message: format!(
            "cannot be sandboxed on this system: {why}; it was not started. Set \"sandbox\": \
             false in its config entry to run it with your full rights"
        ),
    }
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
        fix: Box::new(install_fix(&spec.command, spec.env.contains_key("PATH"))),
    })
}

/// What to tell a user whose server needs `command` (the same advice as
/// `toolbridge doctor` gives).
fn install_fix(command: &str, own_path: bool) -> crate::doctor::Fix {
    let plan = crate::deps::install_plan(command, &crate::deps::Platform::current());
    crate::doctor::Fix::install(command, plan.as_ref(), own_path)
}

async fn drain_stderr(server: String, stderr: tokio::process::ChildStderr, tail: StderrTail) {
    let mut reader = BufReader::new(stderr);
    let mut line = Vec::new();
    loop {
        match read_capped_line(&mut reader, &mut line, TAIL_LINE_BYTES).await {
            Ok(true) => {
                let text = String::from_utf8_lossy(&line)
                    .trim_end_matches('\r')
                    .to_owned();
                tracing::debug!(server = %server, "stderr: {text}");
                tail.push(text);
            }
            Ok(false) => break,
            Err(e) => {
                tracing::debug!(server = %server, error = %e, "stderr closed");
                break;
            }
        }
    }
    tail.close();
}

/// Reads one line into `line` (without its `\n`), keeping at most `cap`
/// bytes and one more, so that [`StderrTail::push`] still sees it was
/// longer: the rest of the line is read and dropped. A server that writes an
/// endless line costs a bounded buffer, not memory without end. `false` at
/// the end of the stream with nothing read.
async fn read_capped_line<R: AsyncBufRead + Unpin>(
    reader: &mut R,
    line: &mut Vec<u8>,
    cap: usize,
) -> std::io::Result<bool> {
    line.clear();
    let mut read_any = false;
    loop {
        let available = reader.fill_buf().await?;
        if available.is_empty() {
            return Ok(read_any);
        }
        read_any = true;
        let (chunk, done) = match available.iter().position(|&b| b == b'\n') {
            Some(end) => (&available[..end], Some(end + 1)),
            None => (available, None),
        };
        let room = (cap + 1).saturating_sub(line.len());
        line.extend_from_slice(&chunk[..chunk.len().min(room)]);
        let used = done.unwrap_or(available.len());
        reader.consume(used);
        if done.is_some() {
            return Ok(true);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Regression: an endless stderr line was kept whole while it was read
    /// (2.9 GB in 10 s) and only cut when stored.
    #[tokio::test]
    async fn a_100_mb_stderr_line_is_read_into_a_bounded_buffer() {
        let (mut writer, reader) = tokio::io::duplex(64 * 1024);
        let feed = tokio::spawn(async move {
            use tokio::io::AsyncWriteExt;
            let block = vec![b'x'; 1 << 20];
            for _ in 0..100 {
                writer.write_all(&block).await.unwrap();
            }
            writer.write_all(b"\nnext\n").await.unwrap();
        });
        let mut reader = BufReader::new(reader);
        let mut line = Vec::new();
        assert!(
            read_capped_line(&mut reader, &mut line, 2000)
                .await
                .unwrap()
        );
        assert_eq!(
            line.len(),
            2001,
            "kept the cap and one byte to show the cut"
        );
        assert!(
            line.capacity() < 64 * 1024,
            "the buffer grew to {} bytes",
            line.capacity()
        );
        assert!(
            read_capped_line(&mut reader, &mut line, 2000)
                .await
                .unwrap()
        );
        assert_eq!(line, b"next");
        feed.await.unwrap();
        assert!(
            !read_capped_line(&mut reader, &mut line, 2000)
                .await
                .unwrap()
        );
    }

    #[test]
    fn the_hint_for_a_missing_launcher_names_what_provides_it() {
        let hint = install_fix("npx", false).to_string();
        assert!(hint.starts_with("install Node.js"), "{hint}");
        let hint = install_fix("uvx", true).to_string();
        assert!(hint.starts_with("install uv"), "{hint}");
        assert!(hint.contains("sets its own PATH"), "{hint}");
        let fix = install_fix("my-server", false);
        assert!(
            fix.to_string().starts_with("install \"my-server\""),
            "{fix}"
        );
        let error = TransportError::CommandNotFound {
            server: "s".into(),
            command: "my-server".into(),
            fix: Box::new(fix),
        };
        assert!(
            error.to_string().ends_with("PATH; see `toolbridge doctor`"),
            "{error}"
        );
    }
}
