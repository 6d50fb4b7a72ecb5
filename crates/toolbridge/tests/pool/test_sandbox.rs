//! The sandbox of stdio servers on the real kernel (Landlock, namespaces,
//! limits), against real processes: a hostile server written for the tests
//! (tests/servers/sandbox_hostile.py) that tries what a sandbox must refuse
//! and reports the errno, and real third-party servers (server-everything
//! through npx, the Python time server, server-filesystem) that must still
//! work under `"default"`.

use crate::common;

use std::{
    net::TcpListener,
    path::{Path, PathBuf},
    time::Duration,
};

use common::fixtures::*;
use serde_json::json;
use toolbridge::{
    config::{ServerSpec, TransportSpec},
    pool::{CallOptions, Pool},
    rmcp_model::{CallToolResult, ContentBlock},
    sandbox::{Network, Sandbox, SandboxRules},
};

fn text(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|c| match c {
            ContentBlock::Text(t) => Some(t.text.clone()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

async fn call(pool: &Pool, server: &str, tool: &str, args: serde_json::Value) -> String {
    let result = pool
        .call_tool(server, tool, object_args(args), CallOptions::default())
        .await
        .unwrap_or_else(|e| panic!("{tool}: {e}"));
    text(&result)
}

fn hostile(name: &str, sandbox: Sandbox) -> ServerSpec {
    let mut spec = ServerSpec::stdio(name, python(), [test_server("sandbox_hostile.py")]);
    if let TransportSpec::Stdio(stdio) = &mut spec.transport {
        stdio.sandbox = sandbox;
    }
    spec
}

/// A folder outside every read set of the tests: under the target
/// directory, not `/tmp`, not the crate.
fn outside() -> tempfile::TempDir {
    tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir in target")
}

/// A secret file planted in `dir`.
fn plant(dir: &Path) -> PathBuf {
    let secret = dir.join("secret.txt");
    std::fs::write(&secret, "the planted secret").unwrap();
    secret
}

/// The server's process (its group's leader) is gone, and so is every
/// cgroup this process made for servers.
fn nothing_remains(pid: u32) {
    let gone = wait_until(Duration::from_secs(10), || {
        !toolbridge::process::group_alive(pid) && !alive(pid)
    });
    assert!(gone, "server process {pid} or its group is still alive");
    let prefix = format!("toolbridge-{}-", std::process::id());
    let cgroups_gone = wait_until(Duration::from_secs(15), || {
        ["/sys/fs/cgroup/pids", "/sys/fs/cgroup"]
            .iter()
            .filter_map(|dir| std::fs::read_dir(dir).ok())
            .flatten()
            .flatten()
            .all(|entry| !entry.file_name().to_string_lossy().starts_with(&prefix))
    });
    assert!(cgroups_gone, "a cgroup {prefix}* is left behind");
}

#[tokio::test]
async fn a_hostile_server_is_refused_each_attempt_and_answers_the_next_call() {
    let own = tempdir();
    let out = outside();
    let secret = plant(out.path());
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let home = std::env::var("HOME").expect("HOME");
    let in_home = PathBuf::from(&home).join(format!("toolbridge-sandbox-{}", std::process::id()));

    let sandbox = Sandbox::Rules(SandboxRules {
        write: vec![own.path().to_path_buf()],
        network: Network::None,
        memory_mb: Some(1024),
        processes: Some(64),
        ..SandboxRules::default()
    });
    // Another server in the same pool, which must carry on throughout.
    let pool = pool(vec![hostile("hostile", sandbox), example("other")]);
    let pid: u32 = call(&pool, "hostile", "pid", json!({}))
        .await
        .parse()
        .unwrap();

    // What it may do, it can: its own folder.
    let mine = own.path().join("mine.txt");
    let wrote = call(&pool, "hostile", "write", json!({"path": mine})).await;
    assert_eq!(wrote, "ok");
    let read = call(&pool, "hostile", "read", json!({"path": mine})).await;
    assert_eq!(read, "ok written by a sandboxed server");

    // Reading outside its set: directly, through `..`, `/proc/self/root`
    // and a symlink it plants in its own folder.
    let dotdot = own
        .path()
        .join("..")
        .join(pathdiff(own.path(), out.path()))
        .join("secret.txt");
    let proc_root = format!("/proc/self/root{}", secret.display());
    for path in [
        secret.display().to_string(),
        dotdot.display().to_string(),
        proc_root,
    ] {
        let read = call(&pool, "hostile", "read", json!({"path": path})).await;
        assert!(read.starts_with("refused: EACCES"), "{path}: {read}");
    }
    let link = own.path().join("link");
    let through = call(
        &pool,
        "hostile",
        "symlink_read",
        json!({"link": link, "target": secret}),
    )
    .await;
    assert!(through.starts_with("refused: EACCES"), "{through}");

    // Writing into the home directory.
    let wrote = call(&pool, "hostile", "write", json!({"path": in_home})).await;
    let planted = in_home.exists();
    let _ = std::fs::remove_file(&in_home);
    assert!(wrote.starts_with("refused: EACCES"), "{wrote}");
    assert!(!planted, "{} was written", in_home.display());

    // The network: nothing reaches the port the test listens on.
    let connected = call(&pool, "hostile", "connect", json!({"port": port})).await;
    assert!(
        connected.starts_with("refused: EACCES") || connected.starts_with("refused: ENETUNREACH"),
        "{connected}"
    );
    assert!(
        listener.accept().is_err(),
        "the server's connection arrived"
    );

    // 10,000 processes: refused at the limit, not before the first few.
    let forked = call(&pool, "hostile", "fork_many", json!({"count": 10_000})).await;
    assert!(forked.starts_with("refused: EAGAIN"), "{forked}");
    let made: usize = forked.rsplit(' ').nth(1).unwrap().parse().unwrap();
    assert!((1..64).contains(&made), "{forked}");

    // 8 GiB of address space.
    let mapped = call(&pool, "hostile", "allocate", json!({"mb": 8192})).await;
    assert!(mapped.starts_with("refused: ENOMEM"), "{mapped}");

    // The other server carries on.
    let echoed = call(&pool, "other", "echo", json!({"text": "still here"})).await;
    assert!(echoed.contains("still here"), "{echoed}");

    // Still answering, the same process.
    let again: u32 = call(&pool, "hostile", "pid", json!({}))
        .await
        .parse()
        .unwrap();
    assert_eq!(again, pid);
    pool.close_all().await;
    nothing_remains(pid);
}

/// `other` relative to `base`'s parent, for a `..` path.
fn pathdiff(base: &Path, other: &Path) -> PathBuf {
    let parent = base.parent().unwrap();
    let ups = parent.components().count() - 1;
    let mut path = PathBuf::new();
    for _ in 0..ups {
        path.push("..");
    }
    path.join(other.strip_prefix("/").unwrap())
}

#[tokio::test]
async fn loopback_is_the_servers_own_not_the_hosts() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let sandbox = Sandbox::Rules(SandboxRules {
        network: Network::Loopback,
        ..SandboxRules::default()
    });
    let pool = pool(vec![hostile("loopback", sandbox)]);
    let pid: u32 = call(&pool, "loopback", "pid", json!({}))
        .await
        .parse()
        .unwrap();
    let connected = call(&pool, "loopback", "connect", json!({"port": port})).await;
    assert!(
        connected.starts_with("refused: ECONNREFUSED"),
        "{connected}"
    );
    assert!(
        listener.accept().is_err(),
        "the server's connection arrived"
    );
    let own = call(&pool, "loopback", "loopback_self", json!({})).await;
    assert_eq!(own, "ok own loopback");
    pool.close_all().await;
    nothing_remains(pid);
}

#[tokio::test]
async fn default_refuses_files_outside_and_keeps_the_network() {
    let out = outside();
    let secret = plant(out.path());
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let pool = pool(vec![
        hostile("default", Sandbox::Default),
        hostile("unsandboxed", Sandbox::Off),
    ]);
    let pid: u32 = call(&pool, "default", "pid", json!({}))
        .await
        .parse()
        .unwrap();
    let read = call(&pool, "default", "read", json!({"path": secret})).await;
    assert!(read.starts_with("refused: EACCES"), "{read}");
    // The refusal is the sandbox's: the same server without one reads it.
    let read = call(&pool, "unsandboxed", "read", json!({"path": secret})).await;
    assert_eq!(read, "ok the planted secret");
    // Its temporary folder is its to write.
    let scratch = tempdir();
    let wrote = call(
        &pool,
        "default",
        "write",
        json!({"path": scratch.path().join("x")}),
    )
    .await;
    assert_eq!(wrote, "ok");
    let connected = call(&pool, "default", "connect", json!({"port": port})).await;
    assert_eq!(connected, "ok connected");
    pool.close_all().await;
    nothing_remains(pid);
}

#[tokio::test]
async fn server_everything_starts_through_npx_under_default() {
    let node = common::deps().join("node");
    let mut spec = ServerSpec::stdio(
        "everything",
        "npx",
        ["-y", "@modelcontextprotocol/server-everything", "stdio"],
    );
    if let TransportSpec::Stdio(stdio) = &mut spec.transport {
        stdio.cwd = Some(node);
        assert_eq!(stdio.sandbox, Sandbox::Default);
    }
    let pool = pool(vec![spec]);
    let echoed = call(&pool, "everything", "echo", json!({"message": "hi"})).await;
    assert_eq!(echoed, "Echo: hi");
    pool.close_all().await;
}

#[tokio::test]
async fn the_python_time_server_starts_under_default() {
    let program = common::deps().join("presets-py/bin/mcp-server-time");
    let spec = ServerSpec::stdio(
        "time",
        program.to_string_lossy(),
        ["--local-timezone", "UTC"],
    );
    let pool = pool(vec![spec]);
    let now = call(
        &pool,
        "time",
        "get_current_time",
        json!({"timezone": "UTC"}),
    )
    .await;
    assert!(now.contains("\"timezone\": \"UTC\""), "{now}");
    pool.close_all().await;
}

/// As the presets run it: `uvx` fetching the time server into its cache
/// and running it from there (offline: the setup script cached the pinned
/// version), under `"default"`, which lets uvx write its cache.
#[tokio::test]
async fn the_python_time_server_starts_through_uvx_under_default() {
    let uvx = common::deps().join("uv/bin/uvx");
    assert!(
        uvx.exists(),
        "{} is missing: run scripts/setup-test-deps.sh",
        uvx.display()
    );
    let spec = ServerSpec::stdio(
        "time",
        uvx.to_string_lossy(),
        [
            "--offline",
            "--from",
            "mcp-server-time==2026.10.19",
            "mcp-server-time",
            "--local-timezone",
            "UTC",
        ],
    );
    if let TransportSpec::Stdio(stdio) = &spec.transport {
        assert_eq!(stdio.sandbox, Sandbox::Default);
    }
    let pool = pool(vec![spec]);
    let now = call(
        &pool,
        "time",
        "get_current_time",
        json!({"timezone": "UTC"}),
    )
    .await;
    assert!(now.contains("\"timezone\": \"UTC\""), "{now}");
    pool.close_all().await;
}

#[tokio::test]
async fn server_filesystem_works_in_its_folder_and_not_through_a_symlink_out_of_it() {
    let folder = tempdir();
    std::fs::write(folder.path().join("note.txt"), "inside").unwrap();
    let out = outside();
    let secret = plant(out.path());
    std::os::unix::fs::symlink(&secret, folder.path().join("escape.txt")).unwrap();
    let script = common::deps()
        .join("node/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js");
    let spec = ServerSpec::stdio(
        "fs",
        "node",
        [
            script.to_string_lossy().into_owned(),
            folder.path().to_string_lossy().into_owned(),
        ],
    );
    let pool = pool(vec![spec]);
    let inside = call(
        &pool,
        "fs",
        "read_text_file",
        json!({"path": folder.path().join("note.txt")}),
    )
    .await;
    assert_eq!(inside, "inside");
    let written = call(
        &pool,
        "fs",
        "write_file",
        json!({"path": folder.path().join("new.txt"), "content": "made"}),
    )
    .await;
    assert!(written.contains("Successfully wrote"), "{written}");
    let escaped = pool
        .call_tool(
            "fs",
            "read_text_file",
            object_args(json!({"path": folder.path().join("escape.txt")})),
            CallOptions::default(),
        )
        .await;
    let shown = match &escaped {
        Ok(result) => text(result),
        Err(e) => e.to_string(),
    };
    assert!(!shown.contains("the planted secret"), "{shown}");
    pool.close_all().await;
}
