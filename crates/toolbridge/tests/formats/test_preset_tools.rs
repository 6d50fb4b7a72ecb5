//! The keyless presets list exactly the tools their `tools` field names.
//!
//! Each server is started from the pinned install in `.deps/` (made by
//! `scripts/setup-test-deps.sh`; no network at test time) and asked for its
//! tools through the pool, following `nextCursor`.
//!
//! toolbridge's client declares no sampling or elicitation capability, as the
//! catalogue's capture did: some servers (everything) add tools for clients
//! that offer them.

use std::{
    path::{Path, PathBuf},
    time::Duration,
};

use toolbridge::{
    config::{ServerSpec, TransportSpec},
    pool::{Pool, PoolOptions},
    presets,
};

/// Generous: the first start of a Node server on a busy 2-core machine.
const EXCHANGE_TIMEOUT: Duration = Duration::from_secs(90);

fn deps() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.deps")
}

fn installed(relative: &str) -> PathBuf {
    let path = deps().join(relative);
    assert!(
        path.exists(),
        "{} is missing: run scripts/setup-test-deps.sh first",
        path.display()
    );
    path
}

/// The tools `program args` lists, asked through toolbridge's own pool (the
/// same client `toolbridge tools` uses).
async fn listed_tools(program: &Path, args: &[&str], env: &[(&str, &Path)]) -> Vec<String> {
    let mut spec = ServerSpec::stdio("preset", program.to_string_lossy(), args.iter().copied());
    if let TransportSpec::Stdio(stdio) = &mut spec.transport {
        for (k, v) in env {
            stdio
                .env
                .insert((*k).to_owned(), v.to_string_lossy().into_owned());
        }
    }
    let options = PoolOptions {
        start_timeout: EXCHANGE_TIMEOUT,
        ..PoolOptions::default()
    };
    let pool = Pool::new([spec], options);
    let tools = pool
        .list_server_tools("preset")
        .await
        .unwrap_or_else(|e| panic!("{} did not list its tools: {e}", program.display()));
    pool.close_all().await;
    tools.iter().map(|t| t.name.clone()).collect()
}

fn assert_same_tools(preset_id: &str, mut listed: Vec<String>) {
    let preset = presets::get(preset_id).unwrap();
    let mut expected: Vec<String> = preset.tools.iter().map(|t| t.to_string()).collect();
    listed.sort();
    expected.sort();
    assert_eq!(
        listed, expected,
        "preset \"{preset_id}\": the server's tools (left) differ from the preset's (right)"
    );
}

fn node_bin(name: &str) -> PathBuf {
    installed(&format!("node/node_modules/.bin/{name}"))
}

#[tokio::test]
async fn everything_lists_the_presets_tools() {
    let tools = listed_tools(&node_bin("mcp-server-everything"), &[], &[]).await;
    assert_same_tools("everything", tools);
}

#[tokio::test]
async fn memory_lists_the_presets_tools() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("memory.jsonl");
    let env = [("MEMORY_FILE_PATH", file.as_path())];
    let tools = listed_tools(&node_bin("mcp-server-memory"), &[], &env).await;
    assert_same_tools("memory", tools);
}

#[tokio::test]
async fn filesystem_on_a_temp_dir_lists_the_presets_tools() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_str().unwrap();
    let tools = listed_tools(&node_bin("mcp-server-filesystem"), &[root], &[]).await;
    assert_same_tools("filesystem", tools);
}

#[tokio::test]
async fn sequential_thinking_lists_the_presets_tools() {
    let tools = listed_tools(&node_bin("mcp-server-sequential-thinking"), &[], &[]).await;
    assert_same_tools("sequential-thinking", tools);
}

#[tokio::test]
async fn time_lists_the_presets_tools() {
    let program = installed("presets-py/bin/mcp-server-time");
    let tools = listed_tools(&program, &[], &[]).await;
    assert_same_tools("time", tools);
}
