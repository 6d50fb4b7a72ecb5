//! Real MCP clients nobody here wrote, at pinned versions (the TypeScript SDK
//! 1.32.2 and the Python `mcp` 2.3.0 SDK, scripts in tests/interop/), through
//! `toolbridge serve` over HTTP and over `--stdio`, against an aggregate of
//! real servers: server-everything (stdio) and a Python SDK server.

use crate::common;
use crate::gateway_support;

use std::{
    path::{Path, PathBuf},
    process::{Command, Stdio},
    thread,
};

use common::*;
use gateway_support::*;
use serde_json::{Value, json};

/// One test at a time: each starts a gateway, Node and Python servers and
/// SDK clients, and three at once on two loaded cores made upstreams miss
/// rmcp's 10 s `server/discover` window. The SDK tests of
/// `gateway_generations` take it too.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

pub(crate) fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    SERIAL
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// A client SDK, as the interop scripts drive it.
#[derive(Clone, Copy, Debug)]
enum Sdk {
    TypeScript,
    Python,
}

/// How a client reaches the gateway.
#[derive(Clone, Debug)]
enum Via {
    /// Streamable HTTP at this URL, with the bearer token.
    Http(String),
    /// `toolbridge --config CONFIG serve --stdio`, started by the client.
    Stdio(PathBuf),
}

fn interop_script(name: &str) -> PathBuf {
    root()
        .join("crates/toolbridge-cli/tests/interop")
        .join(name)
}

/// Runs `plan` with `sdk`'s client via `via` (HOME under `home`); returns
/// what it printed, or panics with its stderr.
fn run_client(sdk: Sdk, via: &Via, plan: &Value, home: &Path) -> Value {
    let deps = deps();
    let mut cmd = match sdk {
        Sdk::TypeScript => {
            let mut c = Command::new("node");
            c.arg(interop_script("client.cjs"))
                .env("NODE_DEPS", deps.join("node"));
            c
        }
        Sdk::Python => {
            let mut c = Command::new(deps.join("py2/bin/python"));
            c.arg(interop_script("client.py"));
            c
        }
    };
    cmd.arg(plan.to_string());
    match via {
        Via::Http(url) => {
            cmd.args(["http", url]).env("INTEROP_TOKEN", TOKEN);
        }
        Via::Stdio(config) => {
            cmd.args(["stdio", toolbridge(), "--config"])
                .arg(config)
                .args(["serve", "--stdio"]);
        }
    }
    // The SDKs pass HOME (not XDG_*) on to the stdio gateway they start.
    cmd.env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join("config"))
        .env("XDG_CACHE_HOME", home.join("cache"))
        .env("XDG_DATA_HOME", home.join("data"))
        .env_remove("TOOLBRIDGE_CONFIG")
        .current_dir(home)
        .stdin(Stdio::null());
    let out = cmd.output().expect("run the interop client");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "{sdk:?} client via {via:?} failed ({:?}):\n{stderr}",
        out.status.code()
    );
    let line = stdout.lines().last().unwrap_or_default();
    serde_json::from_str(line)
        .unwrap_or_else(|e| panic!("{sdk:?} client printed no JSON ({e}): {stdout}\n{stderr}"))
}

/// A config with server-everything over stdio as `everything` and the Python
/// interop server as `py` (the server record `py`).
fn aggregate_config(dir: &Path, py: Value) -> PathBuf {
    write_config(
        dir,
        json!({
            "everything": { "command": "node", "args": [everything_js(), "stdio"] },
            "py": py,
        }),
    )
}

fn py_stdio() -> Value {
    json!({
        "command": python(),
        "args": [interop_script("interop_server.py"), "stdio"],
    })
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .unwrap_or_else(|| panic!("not an array: {v}"))
        .iter()
        .map(|s| s.as_str().unwrap_or_default().to_owned())
        .collect()
}

/// What every client does: a tool, a resource and a prompt of each upstream.
fn plan() -> Value {
    json!({
        "expectTools": ["everything__echo", "py__shout"],
        "calls": [
            { "name": "everything__echo", "arguments": { "message": "hi" } },
            { "name": "py__shout", "arguments": { "text": "loud" } },
        ],
        "reads": ["py://greeting", "demo://resource/static/document/architecture.md"],
        "prompts": [
            { "name": "py__welcome", "arguments": { "name": "Ada" } },
            { "name": "everything__simple-prompt" },
        ],
    })
}

fn check_plan_result(who: &str, seen: &Value) {
    let tools = strings(&seen["tools"]);
    for name in [
        "everything__echo",
        "everything__get-sum",
        "py__shout",
        "py__rendezvous",
    ] {
        assert!(
            tools.iter().any(|t| t == name),
            "{who}: {name} missing from {tools:?}"
        );
    }
    let nested = |key: &str| -> Vec<Vec<String>> {
        seen[key]
            .as_array()
            .unwrap_or_else(|| panic!("{who}: no {key}: {seen}"))
            .iter()
            .map(strings)
            .collect()
    };
    assert_eq!(
        nested("calls"),
        [["Echo: hi"], ["LOUD"]],
        "{who}: tool calls"
    );
    let reads = nested("reads");
    assert_eq!(reads[0], ["hello from python"], "{who}: py://greeting");
    assert!(
        reads[1].len() == 1 && reads[1][0].contains("Everything Server"),
        "{who}: server-everything's resource: {:?}",
        reads[1]
    );
    assert_eq!(
        nested("prompts"),
        [
            ["Welcome, Ada!"],
            ["This is a simple prompt without arguments."]
        ],
        "{who}: prompts"
    );
}

#[test]
fn both_sdks_list_call_read_and_get_prompts_over_http_and_stdio() {
    let _serial = one_at_a_time();
    let home = tempdir();
    let config = aggregate_config(home.path(), py_stdio());
    let gateway = Gateway::start(&config, home.path(), &[]);
    gateway.wait_for_tools(&["everything__echo", "py__shout"]);
    let sdks = [Sdk::TypeScript, Sdk::Python];
    // Both SDKs at once over HTTP: they share the gateway's upstreams.
    let http = Via::Http(gateway.url.clone());
    let runs: Vec<_> = sdks
        .into_iter()
        .map(|sdk| {
            let (via, home) = (http.clone(), home.path().to_owned());
            thread::spawn(move || (sdk, run_client(sdk, &via, &plan(), &home)))
        })
        .collect();
    for run in runs {
        let (sdk, seen) = run.join().expect("client thread");
        let who = format!("{sdk:?} over HTTP (gateway's log:\n{}\n)", gateway.log());
        check_plan_result(&who, &seen);
    }
    // Over stdio each client starts its own gateway (and its upstreams):
    // one after the other, to keep the machine's load down.
    let stdio = Via::Stdio(config.clone());
    for sdk in sdks {
        let seen = run_client(sdk, &stdio, &plan(), home.path());
        check_plan_result(&format!("{sdk:?} over stdio"), &seen);
    }
}

#[test]
fn two_clients_at_once_each_get_only_their_own_progress_logs_and_elicitations() {
    let _serial = one_at_a_time();
    // Over HTTP the upstream's progress, log messages and elicitation ride the
    // stream of the request that caused them, so the gateway can tell whose
    // they are even with both calls in flight on one upstream connection.
    let py = python_listening_script();
    let home = tempdir();
    let config = aggregate_config(home.path(), json!({ "url": py.url("/mcp") }));
    let gateway = Gateway::start(&config, home.path(), &[]);
    gateway.wait_for_tools(&["everything__echo", "py__rendezvous"]);
    let via = Via::Http(gateway.url.clone());
    let runs: Vec<_> = [(Sdk::TypeScript, "ts"), (Sdk::Python, "py")]
        .into_iter()
        .map(|(sdk, tag)| {
            let via = via.clone();
            let home = home.path().to_owned();
            thread::spawn(move || {
                let plan =
                    json!({ "rendezvous": { "name": "py__rendezvous", "tag": tag, "expect": 2 } });
                (tag, run_client(sdk, &via, &plan, &home))
            })
        })
        .collect();
    let seen: Vec<(&str, Value)> = runs
        .into_iter()
        .map(|run| run.join().expect("client thread"))
        .collect();
    let log = gateway.log();
    // Both clients' elicitations and progress first, then their logs.
    for (tag, seen) in &seen {
        assert_eq!(seen["isError"], false, "{tag}: {seen}\n{log}");
        assert_eq!(
            strings(&seen["result"]),
            [format!("{tag} got {tag} answer to question for {tag}")],
            "{tag}: the elicitation must be answered by the client that caused it: {seen}"
        );
        assert_eq!(
            strings(&seen["elicitations"]),
            [format!("question for {tag}")],
            "{tag}: elicitations: {seen}"
        );
    }
    for (tag, seen) in &seen {
        let got = strings(&seen["progress"]);
        assert!(
            !got.is_empty(),
            "{tag}: no progress reached the client: {seen}\n{log}"
        );
        assert!(
            got.iter().all(|m| *m == format!("progress for {tag}")),
            "{tag}: progress of another client: {got:?}"
        );
        only_its_own_logs(tag, seen, &log);
    }
}

#[test]
fn two_sessions_at_once_each_get_only_their_own_logs_and_elicitations() {
    let _serial = one_at_a_time();
    // Two clients with sessions, both calls in flight on the one upstream
    // connection when the upstream logs: each log message rode its
    // request's response stream, and only that tells whose it is.
    let py = python_listening_script();
    let home = tempdir();
    let config = aggregate_config(home.path(), json!({ "url": py.url("/mcp") }));
    let gateway = Gateway::start(&config, home.path(), &[]);
    gateway.wait_for_tools(&["everything__echo", "py__rendezvous"]);
    let via = Via::Http(gateway.url.clone());
    let runs: Vec<_> = ["a", "b"]
        .into_iter()
        .map(|tag| {
            let via = via.clone();
            let home = home.path().to_owned();
            thread::spawn(move || {
                let plan =
                    json!({ "rendezvous": { "name": "py__rendezvous", "tag": tag, "expect": 2 } });
                (tag, run_client(Sdk::TypeScript, &via, &plan, &home))
            })
        })
        .collect();
    let seen: Vec<(&str, Value)> = runs
        .into_iter()
        .map(|run| run.join().expect("client thread"))
        .collect();
    let log = gateway.log();
    for (tag, seen) in &seen {
        assert_eq!(seen["isError"], false, "{tag}: {seen}\n{log}");
        assert_eq!(
            strings(&seen["elicitations"]),
            [format!("question for {tag}")],
            "{tag}: elicitations: {seen}"
        );
        only_its_own_logs(tag, seen, &log);
    }
}

/// Asserts that the client `tag` got its own log messages ("log for
/// {tag}") and none of another client's. An upstream's own message may
/// come too: server-everything logs "Roots updated" after it asks for roots
/// while this client's `logging/setLevel` is the one request in flight on
/// it (and so is answered with this client's roots).
fn only_its_own_logs(tag: &str, seen: &Value, gateway_log: &str) {
    let got = strings(&seen["logs"]);
    assert!(
        got.contains(&format!("log for {tag}")),
        "{tag}: its own logs never reached it: {seen}\n{gateway_log}"
    );
    assert!(
        got.iter()
            .filter(|m| m.starts_with("log for "))
            .all(|m| *m == format!("log for {tag}")),
        "{tag}: logs of another client: {got:?}"
    );
}

/// tests/interop/interop_server.py over streamable HTTP on 127.0.0.1.
fn python_listening_script() -> Listening {
    Listening::start(
        &python(),
        &[
            interop_script("interop_server.py")
                .to_string_lossy()
                .into_owned(),
            "streamable-http".to_owned(),
        ],
        &[("PYTHONUNBUFFERED", "1")],
    )
}

#[test]
fn two_clients_at_once_each_get_only_their_own_progress_from_a_stdio_upstream() {
    let _serial = one_at_a_time();
    // Both calls run at once on the one server-everything process; the
    // gateway remaps each client's progress token onto the shared upstream
    // connection and back.
    let home = tempdir();
    let config = aggregate_config(home.path(), py_stdio());
    let gateway = Gateway::start(&config, home.path(), &[]);
    gateway.wait_for_tools(&["everything__trigger-long-running-operation"]);
    let via = Via::Http(gateway.url.clone());
    let runs: Vec<_> = [(Sdk::TypeScript, 3), (Sdk::Python, 5)]
        .into_iter()
        .map(|(sdk, steps)| {
            let via = via.clone();
            let home = home.path().to_owned();
            thread::spawn(move || {
                let plan = json!({ "progress": {
                    "name": "everything__trigger-long-running-operation",
                    "arguments": { "duration": 1.5, "steps": steps },
                } });
                (sdk, steps, run_client(sdk, &via, &plan, &home))
            })
        })
        .collect();
    for run in runs {
        let (sdk, steps, seen) = run.join().expect("client thread");
        let got: Vec<(u64, u64)> = seen["progress"]
            .as_array()
            .expect("progress")
            .iter()
            .map(|p| (p[0].as_f64().unwrap() as u64, p[1].as_f64().unwrap() as u64))
            .collect();
        let log = gateway.log();
        // Every step is this client's (its own total), in order, from the
        // first. The last may come after the result, and SDKs drop those.
        assert_eq!(got.first(), Some(&(1, steps)), "{sdk:?}: {seen}\n{log}");
        assert!(
            got.iter().all(|&(_, total)| total == steps),
            "{sdk:?}: progress of another client's call: {seen}\n{log}"
        );
        assert!(
            got.windows(2).all(|w| w[1].0 == w[0].0 + 1) && got.len() as u64 <= steps,
            "{sdk:?}: its {steps} steps in order, each once: {seen}\n{log}"
        );
    }
}

#[test]
fn the_typescript_sdk_searches_a_search_mode_profile_and_calls_what_it_found() {
    let _serial = one_at_a_time();
    // A profile in search mode over server-everything and a server that
    // pulls the rug (tool_cache.py: its `change` rewrites `ping`'s
    // description and adds a tool, both then withheld by pinning).
    let home = tempdir();
    let config = home.path().join("config.json");
    let text = json!({
        "mcpServers": {
            "everything": { "command": "node", "args": [everything_js(), "stdio"] },
            "rug": {
                "command": python(),
                "args": [test_server("tool_cache.py")],
                "env": {
                    "STARTS_FILE": home.path().join("starts"),
                    "TOOLS": "ping",
                    "RUG_PULL": "1",
                },
            },
        },
        "profiles": {
            "finder": { "tools": ["!everything__get-sum"], "discovery": "search" },
        },
    });
    std::fs::write(&config, text.to_string()).expect("write config");
    let gateway = Gateway::start(&config, home.path(), &[]);
    // Both upstreams started, their definitions pinned.
    gateway.wait_for_tools(&["everything__echo", "everything__get-sum", "rug__ping"]);
    let via = Via::Http(format!("{}/finder", gateway.url));
    let plan = json!({ "search": {
        "query": "echoes back the input message",
        "arguments": { "message": "found by search" },
        "noMatch": "zebra xylophone quasar",
        "outside": "the sum of two numbers",
        "pull": "rug__change",
        "pulled": "answers pong from ping",
    } });
    let seen = run_client(Sdk::TypeScript, &via, &plan, home.path());
    let log = gateway.log();
    assert_eq!(
        strings(&seen["tools"]),
        ["search_tools", "call_tool"],
        "{seen}\n{log}"
    );
    assert_eq!(seen["found"][0], "everything__echo", "{seen}");
    assert_eq!(seen["calledError"], false, "{seen}\n{log}");
    assert_eq!(
        strings(&seen["called"]),
        ["Echo: found by search"],
        "{seen}"
    );
    assert_eq!(seen["noMatch"], json!([]), "{seen}");
    assert_eq!(seen["noMatchError"], false, "{seen}");
    assert!(
        !strings(&seen["outside"]).contains(&"everything__get-sum".to_owned()),
        "a tool the profile leaves out was found: {seen}"
    );
    assert_eq!(seen["beforePull"][0], "rug__ping", "{seen}");
    let after = strings(&seen["afterPull"]);
    assert!(
        !after.contains(&"rug__ping".to_owned()) && !after.contains(&"rug__added".to_owned()),
        "a withheld tool was found: {seen}\n{log}"
    );
}
