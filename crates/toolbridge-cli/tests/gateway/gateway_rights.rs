//! Rights and limits of the gateway's clients (`toolbridge.gateway.rules`
//! and `toolbridge.gateway.limits`), end to end: a real `toolbridge serve`
//! over two real example servers, named client tokens made with the real
//! CLI, OAuth access tokens of a real authorization server (panva's
//! `oidc-provider`, .deps/oidc), MCP over plain HTTP so that statuses and
//! headers are seen as they are.

use crate::common;
use crate::gateway_support;

use std::{
    path::{Path, PathBuf},
    time::{Duration, Instant},
};

use serde_json::{Value, json};

use common::{Sandbox, poll_async, toolbridge};
use gateway_support::{Answer, Gateway, RawClient, access_token, issuer};

/// A config over two example servers, `reader` and `writer`, with
/// `profiles` and the `toolbridge` settings `settings`.
fn config(dir: &Path, profiles: Value, settings: Value) -> PathBuf {
    let server = json!({ "command": toolbridge(), "args": ["example-server"] });
    let path = dir.join("config.json");
    let config = json!({
        "toolbridge": settings,
        "mcpServers": { "reader": server, "writer": server },
        "profiles": profiles,
    });
    std::fs::write(&path, config.to_string()).expect("write config");
    path
}

/// `toolbridge serve token create NAME [--profile P]`: the token printed.
fn token(config: &Path, name: &str, profile: Option<&str>) -> String {
    let mut command = std::process::Command::new(toolbridge());
    command
        .arg("--config")
        .arg(config)
        .args(["serve", "token", "create", name])
        .env_remove("TOOLBRIDGE_CONFIG");
    if let Some(profile) = profile {
        command.args(["--profile", profile]);
    }
    let output = command.output().expect("run toolbridge serve token create");
    let run = common::Run::from(output);
    assert_eq!(run.code, Some(0), "token create {name}: {}", run.stderr);
    run.stdout
        .lines()
        .find(|l| l.trim().starts_with("tbc_"))
        .unwrap_or_else(|| panic!("no token printed: {}", run.stdout))
        .trim()
        .to_owned()
}

/// The names an answer to `tools/list` gives, sorted.
fn listed(answer: &Answer) -> Vec<String> {
    let mut names = answer
        .tool_names()
        .unwrap_or_else(|| panic!("no tools in {answer:?}"));
    names.sort();
    names
}

/// The text of a call's result.
fn text(answer: &Answer) -> String {
    answer
        .body
        .as_ref()
        .and_then(|b| b.pointer("/result/content/0/text"))
        .and_then(Value::as_str)
        .unwrap_or_else(|| panic!("no result text in {answer:?}"))
        .to_owned()
}

/// The JSON-RPC error of an answer.
fn error(answer: &Answer) -> &Value {
    answer
        .body
        .as_ref()
        .and_then(|b| b.get("error"))
        .unwrap_or_else(|| panic!("no error in {answer:?}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_clients_on_two_profiles_see_and_call_only_what_their_rules_allow() {
    let sandbox = Sandbox::new();
    let profiles = json!({
        "alpha": { "servers": ["reader"], "rename": { "reader__hello": "greet" } },
        "beta": { "servers": ["writer"] },
        "finder": { "discovery": "search" },
    });
    let rules = json!([
        { "clients": ["alice"], "allow": ["reader__*", "!reader__tiny_*"] },
        { "clients": ["bob"], "allow": ["writer__echo"] },
        { "clients": ["carol"], "profiles": ["finder"], "allow": ["writer__slow"] },
    ]);
    let config = config(
        sandbox.dir.path(),
        profiles,
        json!({ "gateway": { "rules": rules } }),
    );
    let alice = token(&config, "alice", Some("alpha"));
    let bob = token(&config, "bob", Some("beta"));
    let carol = token(&config, "carol", None);
    let dave = token(&config, "dave", None);
    let gateway = Gateway::start(&config, sandbox.dir.path(), &[]);
    // The owner (the gateway's own token) is not narrowed by the rules.
    tokio::task::block_in_place(|| {
        gateway.wait_for_tools(&["reader__echo", "writer__echo", "writer__tiny_image"])
    });
    let at = |profile: &str| format!("{}/{profile}", gateway.url);

    // alice, on alpha: reader's tools but the tiny ones, `hello` renamed.
    let mut a = RawClient::with_token(&at("alpha"), &alice);
    a.initialize().await;
    let tools = listed(&a.request("tools/list", json!({})).await);
    assert_eq!(tools, ["echo", "greet", "slow"]);
    let stateless = listed(
        &RawClient::with_token(&at("alpha"), &alice)
            .stateless("tools/list", json!({}))
            .await,
    );
    assert_eq!(stateless, tools, "2026-07-28 lists the same");
    assert_eq!(
        text(&a.call("greet", json!({ "name": "Ann" })).await),
        "Hello, Ann!"
    );
    let refused = a.call("tiny_image", json!({})).await;
    assert_eq!(
        refused.status, 200,
        "a token client's refusal is in the answer"
    );
    let message = error(&refused)["message"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert_eq!(error(&refused)["code"], -32003, "{refused:?}");
    assert!(
        message.contains("\"token:alice\"") && message.contains("\"reader__tiny_image\""),
        "the error names the client and the tool: {message}"
    );
    let stateless = RawClient::with_token(&at("alpha"), &alice)
        .stateless(
            "tools/call",
            json!({ "name": "tiny_image", "arguments": {} }),
        )
        .await;
    assert_eq!(error(&stateless)["code"], -32003, "{stateless:?}");

    // bob, on beta: writer's echo only.
    let mut b = RawClient::with_token(&at("beta"), &bob);
    b.initialize().await;
    assert_eq!(listed(&b.request("tools/list", json!({})).await), ["echo"]);
    assert_eq!(text(&b.call("echo", json!({ "text": "hi" })).await), "hi");
    let refused = b.call("slow", json!({ "ms": 1 })).await;
    assert_eq!(error(&refused)["code"], -32003, "{refused:?}");

    // carol, on the search profile: the pair, a search that finds only
    // her tool, a call through call_tool of it works, of another does not.
    let mut c = RawClient::with_token(&at("finder"), &carol);
    c.initialize().await;
    assert_eq!(
        listed(&c.request("tools/list", json!({})).await),
        ["call_tool", "search_tools"]
    );
    let found = c
        .call(
            "search_tools",
            json!({ "query": "echo sleep text milliseconds", "limit": 10 }),
        )
        .await;
    let names: Vec<String> = found
        .body
        .as_ref()
        .and_then(|b| b.pointer("/result/structuredContent/tools"))
        .and_then(Value::as_array)
        .unwrap_or_else(|| panic!("no search result: {found:?}"))
        .iter()
        .filter_map(|t| t["name"].as_str().map(str::to_owned))
        .collect();
    assert_eq!(names, ["writer__slow"], "only what carol may call is found");
    let through = c
        .call(
            "call_tool",
            json!({ "name": "writer__slow", "arguments": { "ms": 1 } }),
        )
        .await;
    assert_eq!(text(&through), "slept 1 ms");
    let other = c
        .call(
            "call_tool",
            json!({ "name": "reader__echo", "arguments": { "text": "x" } }),
        )
        .await;
    assert_eq!(error(&other)["code"], -32003, "{other:?}");
    // The same rule does not reach her through /mcp.
    let mut c_all = RawClient::with_token(&gateway.url, &carol);
    c_all.initialize().await;
    assert!(listed(&c_all.request("tools/list", json!({})).await).is_empty());

    // dave has no rule: nothing listed, not even the search pair.
    let mut d = RawClient::with_token(&at("finder"), &dave);
    d.initialize().await;
    assert!(listed(&d.request("tools/list", json!({})).await).is_empty());
    let refused = d.call("search_tools", json!({ "query": "echo" })).await;
    let found = refused
        .body
        .as_ref()
        .and_then(|b| b.pointer("/result/structuredContent/tools"))
        .and_then(Value::as_array)
        .map(Vec::len);
    assert_eq!(
        found,
        Some(0),
        "a search finds nothing for him: {refused:?}"
    );

    // Each refusal of a right is an audit line.
    let audited = |line: &str| {
        line.contains("tool=\"tiny_image\"")
            && line.contains("client=\"alice\"")
            && line.contains("outcome=\"refused\"")
    };
    let seen = poll_async(Duration::from_secs(10), || async {
        gateway.log().lines().any(audited).then_some(())
    })
    .await;
    assert!(
        seen.is_some(),
        "no audit line of the refusal:\n{}",
        gateway.log()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_oauth_client_without_the_write_scope_is_listed_the_read_tools_and_told_to_step_up() {
    let issuer = issuer();
    let issuer_url = format!("http://127.0.0.1:{}", issuer.port);
    let sandbox = Sandbox::new();
    let rules = json!([
        { "scopes": ["tools.read"], "allow": ["*__echo", "*__hello"] },
        { "scopes": ["tools.read", "tools.write"], "allow": ["*"] },
    ]);
    let config = config(
        sandbox.dir.path(),
        json!({}),
        json!({ "gateway": {
            "oauth": { "issuer": issuer_url, "scopes": ["tools.read", "tools.write"] },
            "rules": rules,
        } }),
    );
    let gateway = Gateway::start(&config, sandbox.dir.path(), &[]);
    tokio::task::block_in_place(|| gateway.wait_for_tools(&["reader__echo", "writer__slow"]));
    let base = format!("http://{}", gateway.addr());

    let reader = access_token(&issuer, &gateway.url, "tools.read").await;
    let mut client = RawClient::with_token(&gateway.url, &reader);
    client.initialize().await;
    let tools = listed(&client.request("tools/list", json!({})).await);
    assert_eq!(
        tools,
        [
            "reader__echo",
            "reader__hello",
            "writer__echo",
            "writer__hello"
        ]
    );
    let stateless = RawClient::with_token(&gateway.url, &reader)
        .stateless("tools/list", json!({}))
        .await;
    assert_eq!(listed(&stateless), tools);
    assert_eq!(
        text(&client.call("reader__echo", json!({ "text": "r" })).await),
        "r"
    );
    // A write tool: 403 with the challenge naming the scope, on both
    // generations.
    for answer in [
        client.call("writer__slow", json!({ "ms": 1 })).await,
        RawClient::with_token(&gateway.url, &reader)
            .stateless(
                "tools/call",
                json!({ "name": "writer__slow", "arguments": { "ms": 1 } }),
            )
            .await,
    ] {
        assert_eq!(answer.status, 403, "{answer:?}");
        let challenge = answer.header("www-authenticate");
        assert!(challenge.starts_with("Bearer "), "{challenge}");
        assert!(
            challenge.contains("error=\"insufficient_scope\"")
                && challenge.contains("scope=\"tools.write\""),
            "{challenge}"
        );
        assert!(
            challenge.contains(&format!(
                "resource_metadata=\"{base}/.well-known/oauth-protected-resource/mcp\""
            )),
            "{challenge}"
        );
        let message = error(&answer)["message"].as_str().unwrap_or_default();
        assert!(
            message.contains("\"tools.write\"") && message.contains("writer__slow"),
            "{message}"
        );
    }

    // Stepped up: the call works.
    let writer = access_token(&issuer, &gateway.url, "tools.read tools.write").await;
    let mut client = RawClient::with_token(&gateway.url, &writer);
    client.initialize().await;
    assert_eq!(
        listed(&client.request("tools/list", json!({})).await).len(),
        10
    );
    assert_eq!(
        text(&client.call("writer__slow", json!({ "ms": 1 })).await),
        "slept 1 ms"
    );
}

/// The median of `samples`.
fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

/// `n` calls of `echo` by `client`, one after another: each one's time.
async fn timed_calls(client: &mut RawClient, n: usize) -> Vec<Duration> {
    let mut times = Vec::with_capacity(n);
    for i in 0..n {
        let started = Instant::now();
        let answer = client
            .call("reader__echo", json!({ "text": i.to_string() }))
            .await;
        times.push(started.elapsed());
        assert_eq!(
            answer.status, 200,
            "the calm client was refused: {answer:?}"
        );
        assert_eq!(text(&answer), i.to_string());
    }
    times
}

/// What the noisy client of the burst test does now.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Phase {
    Quiet,
    Burst,
    /// Burst until its share of the 1,000 calls is sent, then stop.
    Finish,
}

/// One noisy client: calls `echo` over and over while the phase is not
/// quiet, until `quota` calls are sent and the phase is `Finish`; how many
/// were answered, refused (429, each checked) and sent.
async fn noisy(
    url: String,
    token: String,
    quota: usize,
    mut phase: tokio::sync::watch::Receiver<Phase>,
) -> (usize, usize, usize) {
    // Stateless (2026-07-28) calls over one kept-alive connection: the
    // cheapest burst a client can send.
    let mut client = RawClient::keep_alive(&url, &token);
    let (mut ok, mut limited, mut sent) = (0usize, 0usize, 0usize);
    loop {
        let now = *phase
            .wait_for(|p| *p != Phase::Quiet)
            .await
            .expect("the test holds the sender");
        if now == Phase::Finish && sent >= quota {
            return (ok, limited, sent);
        }
        let answer = client
            .stateless(
                "tools/call",
                json!({ "name": "reader__echo", "arguments": { "text": "n" } }),
            )
            .await;
        sent += 1;
        match answer.status {
            200 => ok += 1,
            429 => {
                let retry: u64 = answer.header("retry-after").parse().expect("Retry-After");
                assert!((1..=2).contains(&retry), "Retry-After {retry}");
                let error = error(&answer);
                assert_eq!(error["code"], -32029, "{answer:?}");
                assert_eq!(error["data"]["limit"], "client");
                let message = error["message"].as_str().unwrap_or_default();
                assert!(
                    message.contains("\"token:noisy\"")
                        && message.contains("toolbridge.gateway.limits.client")
                        && message.contains("retry in"),
                    "{message}"
                );
                limited += 1;
            }
            other => panic!("the noisy client got {other}: {answer:?}"),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_burst_over_its_limit_gets_429_while_another_clients_latency_holds() {
    let sandbox = Sandbox::new();
    // Every client 5 calls a second; the calm one far more than it makes.
    let limits = json!({
        "client": { "perSecond": 5, "burst": 5 },
        "clients": { "calm": { "perSecond": 100000, "burst": 100000 } },
    });
    let config = config(
        sandbox.dir.path(),
        json!({}),
        json!({ "gateway": { "limits": limits } }),
    );
    let noisy_token = token(&config, "noisy", None);
    let calm = token(&config, "calm", None);
    let gateway = Gateway::start(&config, sandbox.dir.path(), &[]);
    tokio::task::block_in_place(|| gateway.wait_for_tools(&["reader__echo"]));

    // The noisy client: at least 1,000 calls back to back (each sent as
    // soon as the last is answered, over one kept-alive connection), in the
    // loaded windows.
    let (phase, watch) = tokio::sync::watch::channel(Phase::Quiet);
    let burst = vec![tokio::spawn(noisy(
        gateway.url.clone(),
        noisy_token.clone(),
        1000,
        watch.clone(),
    ))];
    // The calm client, well within its limit: quiet and loaded windows in
    // turn, so that the machine's other load weighs on both alike.
    let mut calm = RawClient::with_token(&gateway.url, &calm);
    calm.initialize().await;
    timed_calls(&mut calm, 20).await; // warm
    let (mut quiet, mut loaded) = (Vec::new(), Vec::new());
    for _ in 0..4 {
        phase.send_replace(Phase::Quiet);
        quiet.extend(timed_calls(&mut calm, 100).await);
        phase.send_replace(Phase::Burst);
        loaded.extend(timed_calls(&mut calm, 100).await);
    }
    phase.send_replace(Phase::Finish);
    let (mut ok, mut limited, mut sent) = (0, 0, 0);
    for task in burst {
        let (o, l, s) = task.await.expect("burst task");
        (ok, limited, sent) = (ok + o, limited + l, sent + s);
    }
    let (quiet, loaded) = (median(quiet), median(loaded));
    let ratio = loaded.as_secs_f64() / quiet.as_secs_f64();
    eprintln!(
        "burst: {sent} calls, {ok} answered, {limited} refused (429); calm client's median: \
         quiet {:.3} ms, loaded {:.3} ms, ratio {ratio:.2}",
        quiet.as_secs_f64() * 1e3,
        loaded.as_secs_f64() * 1e3
    );
    assert!(sent >= 1000, "{sent}");
    assert!(
        limited > ok,
        "most of the burst is refused: {limited} of {sent}"
    );
    assert!(
        ok >= 5,
        "the burst's first calls are within the limit: {ok}"
    );
    assert!(
        ratio <= 2.0,
        "the calm client's median went from {quiet:?} to {loaded:?} under the burst"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upstreams_bound_queues_calls_then_refuses_with_a_clear_error() {
    let sandbox = Sandbox::new();
    let limits = json!({ "upstream": { "inFlight": 2, "queue": 2 } });
    let config = config(
        sandbox.dir.path(),
        json!({}),
        json!({ "gateway": { "limits": limits } }),
    );
    let gateway = Gateway::start(&config, sandbox.dir.path(), &[]);
    tokio::task::block_in_place(|| gateway.wait_for_tools(&["writer__slow"]));

    // Five slow calls at once, each from its own session (opened first):
    // two in flight, two queued, one refused at once.
    let mut clients = Vec::new();
    for _ in 0..5 {
        let mut client = RawClient::new(&gateway.url);
        client.initialize().await;
        clients.push(client);
    }
    let (tx, mut answers) = tokio::sync::mpsc::unbounded_channel();
    for mut client in clients {
        let tx = tx.clone();
        tokio::spawn(async move {
            let answer = client.call("writer__slow", json!({ "ms": 6000 })).await;
            let _ = tx.send(answer);
        });
    }
    drop(tx);
    let refused = answers.recv().await.expect("an answer");
    let error = error(&refused);
    assert_eq!(error["code"], -32029, "{refused:?}");
    assert_eq!(error["data"]["limit"], "upstream");
    let message = error["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("\"writer\"")
            && message.contains("2 calls in flight and 2 waiting")
            && message.contains("retry in"),
        "{message}"
    );
    // Meanwhile the other server is not bound by writer's calls.
    let mut other = RawClient::new(&gateway.url);
    other.initialize().await;
    assert_eq!(
        text(&other.call("reader__echo", json!({ "text": "r" })).await),
        "r"
    );
    // The four others ran, the queued ones once places were free.
    let mut done = 0;
    while let Some(answer) = answers.recv().await {
        assert_eq!(text(&answer), "slept 6000 ms", "{answer:?}");
        done += 1;
    }
    assert_eq!(done, 4);
    assert_eq!(
        text(&other.call("writer__echo", json!({ "text": "6" })).await),
        "6"
    );
}

#[test]
fn over_stdio_the_limits_error_is_the_calls_answer() {
    use std::io::{BufRead as _, Write as _};
    let sandbox = Sandbox::new();
    let limits = json!({ "client": { "perSecond": 0.01, "burst": 2 } });
    let config = config(
        sandbox.dir.path(),
        json!({}),
        json!({ "gateway": { "limits": limits } }),
    );
    let home = sandbox.dir.path();
    let mut child = std::process::Command::new(toolbridge())
        .arg("--config")
        .arg(&config)
        .args(["serve", "--stdio"])
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join("config"))
        .env("XDG_CACHE_HOME", home.join("cache"))
        .env("XDG_DATA_HOME", home.join("data"))
        .env_remove("TOOLBRIDGE_CONFIG")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("spawn toolbridge serve --stdio");
    let (tx, lines) = std::sync::mpsc::channel::<Value>();
    let stdout = child.stdout.take().expect("stdout");
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stdout)
            .lines()
            .map_while(Result::ok)
        {
            if let Ok(message) = serde_json::from_str(&line) {
                let _ = tx.send(message);
            }
        }
    });
    let mut stdin = child.stdin.take().expect("stdin");
    let mut ask = |id: u64, method: &str, params: Value| {
        let message = json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params });
        writeln!(stdin, "{message}").expect("write to the gateway");
        loop {
            let answer = lines
                .recv_timeout(Duration::from_secs(60))
                .expect("an answer within 60 s");
            if answer["id"] == id {
                if method == "initialize" {
                    let initialized =
                        json!({ "jsonrpc": "2.0", "method": "notifications/initialized" });
                    writeln!(stdin, "{initialized}").expect("write to the gateway");
                }
                return answer;
            }
        }
    };
    ask(
        1,
        "initialize",
        json!({ "protocolVersion": "2025-11-25", "capabilities": {},
                "clientInfo": { "name": "raw", "version": "1" } }),
    );
    let call = json!({ "name": "reader__echo", "arguments": { "text": "s" } });
    let answers: Vec<Value> = (2..5)
        .map(|id| ask(id, "tools/call", call.clone()))
        .collect();
    let _ = child.kill();
    let _ = child.wait();
    for answer in &answers[..2] {
        assert_eq!(answer["result"]["content"][0]["text"], "s", "{answer}");
    }
    let error = &answers[2]["error"];
    assert_eq!(error["code"], -32029, "{}", answers[2]);
    assert_eq!(error["data"]["limit"], "client");
    assert!(
        error["data"]["retryAfterMs"]
            .as_u64()
            .is_some_and(|ms| ms > 1000)
    );
    let message = error["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("\"stdio\"") && message.contains("retry in"),
        "{message}"
    );
}
