//! The keyless presets list exactly the tools their `tools` field names.
//!
//! Each server is started from the pinned install in `.deps/` (made by
//! `scripts/setup-test-deps.sh`; no network at test time) and asked for its
//! tools with a minimal JSON-RPC exchange over stdio: `initialize`,
//! `notifications/initialized`, `tools/list` (following `nextCursor`).
//!
//! The client declares no capabilities, as the catalogue's capture did: some
//! servers (everything) add tools for clients that offer sampling or
//! elicitation. When the pool lands, these can go through it instead.

use std::{
    path::{Path, PathBuf},
    process::Stdio,
    time::Duration,
};

use serde_json::{Value, json};
use tokio::{
    io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines},
    process::{ChildStdin, ChildStdout},
};
use toolbridge::presets;

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

struct Peer {
    stdin: ChildStdin,
    stdout: Lines<BufReader<ChildStdout>>,
}

impl Peer {
    async fn send(&mut self, message: Value) {
        let mut line = message.to_string();
        line.push('\n');
        self.stdin.write_all(line.as_bytes()).await.unwrap();
        self.stdin.flush().await.unwrap();
    }

    /// The response to request `id`; notifications, server requests and
    /// non-JSON lines before it are skipped.
    async fn response(&mut self, id: u64) -> Value {
        loop {
            let line =
                self.stdout.next_line().await.unwrap().unwrap_or_else(|| {
                    panic!("server closed stdout before answering request {id}")
                });
            let Ok(message) = serde_json::from_str::<Value>(&line) else {
                continue;
            };
            if message.get("id") == Some(&json!(id)) && message.get("method").is_none() {
                assert!(message.get("error").is_none(), "error: {message}");
                return message["result"].clone();
            }
        }
    }
}

async fn listed_tools(program: &Path, args: &[&str], env: &[(&str, &Path)]) -> Vec<String> {
    let mut child = tokio::process::Command::new(program)
        .args(args)
        .envs(env.iter().map(|(k, v)| (k, v.as_os_str())))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {}: {e}", program.display()));
    let mut peer = Peer {
        stdin: child.stdin.take().unwrap(),
        stdout: BufReader::new(child.stdout.take().unwrap()).lines(),
    };
    let exchange = async {
        peer.send(json!({
            "jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "toolbridge-tests", "version": "0"}
            }
        }))
        .await;
        let init = peer.response(1).await;
        assert!(init["capabilities"]["tools"].is_object(), "{init}");
        peer.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
        let mut names = Vec::new();
        let mut cursor: Option<Value> = None;
        for id in 2.. {
            let params = match &cursor {
                Some(c) => json!({"cursor": c}),
                None => json!({}),
            };
            peer.send(
                json!({"jsonrpc": "2.0", "id": id, "method": "tools/list", "params": params}),
            )
            .await;
            let page = peer.response(id).await;
            for tool in page["tools"].as_array().unwrap() {
                names.push(tool["name"].as_str().unwrap().to_owned());
            }
            cursor = page.get("nextCursor").filter(|c| !c.is_null()).cloned();
            if cursor.is_none() {
                break;
            }
        }
        names
    };
    let names = tokio::time::timeout(EXCHANGE_TIMEOUT, exchange)
        .await
        .unwrap_or_else(|_| panic!("{} did not list its tools in time", program.display()));
    drop(peer);
    let _ = child.kill().await;
    names
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
