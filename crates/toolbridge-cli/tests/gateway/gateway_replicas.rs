//! Two `toolbridge serve` replicas behind HAProxy with deploy/kubernetes/haproxy.cfg:
//! a 2025-11-25 session sticks to the replica that created it; when that
//! replica dies, the client is told 404, starts a new session and goes on
//! through the other replica. A 2026-07-28 client needs no affinity, except
//! for the retry of a call its replica holds for an answer (`requestState`).

use crate::common;
use crate::gateway_support;

use common::*;
use gateway_support::*;
use serde_json::{Value, json};

fn echo_text(body: &Option<Value>) -> Option<&str> {
    body.as_ref()?
        .pointer("/result/content/0/text")
        .and_then(Value::as_str)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_sticks_to_its_replica_and_starts_again_on_the_other_when_it_dies() {
    let home = tempdir();
    let config = write_config(
        home.path(),
        json!({ "example": { "command": toolbridge(), "args": ["example-server"] } }),
    );
    let mut replicas = [
        Gateway::start(&config, home.path(), &[]),
        Gateway::start(&config, home.path(), &[]),
    ];
    let proxy = Haproxy::start(&replicas.iter().map(Gateway::addr).collect::<Vec<_>>());

    let mut client = RawClient::new(&proxy.url);
    client.initialize().await;
    let session = client.session.clone().expect("session");

    // The session lives in one replica: the other does not know it.
    let mut owner = None;
    for (i, replica) in replicas.iter().enumerate() {
        let mut direct = RawClient::new(&replica.url);
        direct.session = Some(session.clone());
        let answer = direct.request("ping", json!({})).await;
        match answer.status {
            200 => owner = Some(i),
            404 => {}
            other => panic!("replica {i} answered {other} to a ping: {answer:?}"),
        }
    }
    let owner = owner.expect("one replica holds the session");

    // Round robin alone would send every other request to the replica that
    // does not know the session; the stick table sends them all to its owner.
    for n in 0..10 {
        let answer = client
            .call("echo", json!({ "text": format!("call {n}") }))
            .await;
        assert_eq!(answer.status, 200, "call {n} through HAProxy: {answer:?}");
        assert_eq!(echo_text(&answer.body), Some(format!("call {n}").as_str()));
    }

    replicas[owner].kill();

    // The session died with its replica: the survivor answers 404...
    let lost = client
        .call("echo", json!({ "text": "after the crash" }))
        .await;
    assert_eq!(
        lost.status, 404,
        "a request of a dead replica's session must get 404: {lost:?}"
    );
    // ...the client starts a new session, which the survivor holds, and goes on.
    client.initialize().await;
    assert_ne!(client.session.as_deref(), Some(session.as_str()));
    for n in 0..5 {
        let answer = client
            .call("echo", json!({ "text": format!("again {n}") }))
            .await;
        assert_eq!(
            answer.status, 200,
            "call {n} after re-initialising: {answer:?}"
        );
        assert_eq!(echo_text(&answer.body), Some(format!("again {n}").as_str()));
    }
}

/// Tool calls replica `gateway` counted on its `/metrics`.
async fn calls_counted(gateway: &Gateway) -> f64 {
    let text = gateway.metrics().await;
    text.lines()
        .filter(|l| l.starts_with("toolbridge_gateway_tool_calls_total"))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum()
}

/// `toolbridge bench` through `url` (`calls` echo calls, 4 in flight): the
/// errors it counted, or a panic with its output.
fn bench_errors(home: &std::path::Path, url: &str, calls: u32) -> u64 {
    let config = home.join("client.json");
    std::fs::write(
        &config,
        json!({ "mcpServers": { "lb": {
            "url": url, "headers": { "Authorization": format!("Bearer {TOKEN}") },
        } } })
        .to_string(),
    )
    .unwrap();
    let out = std::process::Command::new(toolbridge())
        .arg("--config")
        .arg(&config)
        .args(["-q", "bench", "lb", "echo", "--args", r#"{"text":"x"}"#])
        .args([
            "--calls",
            &calls.to_string(),
            "--concurrency",
            "4",
            "--json",
        ])
        .env("HOME", home)
        .env("XDG_CACHE_HOME", home.join("cache"))
        .env("XDG_DATA_HOME", home.join("data"))
        .env("XDG_CONFIG_HOME", home.join("config"))
        .stdin(std::process::Stdio::null())
        .output()
        .expect("run toolbridge bench");
    let report: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "bench printed no report ({e}): {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    assert_eq!(report["calls"], calls, "{report}");
    report["errors"].as_u64().expect("errors")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stateless_clients_need_no_affinity_and_go_on_when_a_replica_dies() {
    // toolbridge's own client speaks 2026-07-28 when the server does: no
    // session, so HAProxy's round robin spreads its calls over both replicas.
    let home = tempdir();
    let config = write_config(
        home.path(),
        json!({ "example": { "command": toolbridge(), "args": ["example-server"] } }),
    );
    let mut replicas = [
        Gateway::start(&config, home.path(), &[]),
        Gateway::start(&config, home.path(), &[]),
    ];
    let proxy = Haproxy::start(&replicas.iter().map(Gateway::addr).collect::<Vec<_>>());
    let (dir, url) = (home.path().to_owned(), proxy.url.clone());
    let errors = tokio::task::spawn_blocking(move || bench_errors(&dir, &url, 40))
        .await
        .unwrap();
    assert_eq!(errors, 0, "calls through HAProxy failed");
    for replica in &replicas {
        assert!(
            calls_counted(replica).await > 0.0,
            "replica {} served none of the calls: they were not spread",
            replica.addr()
        );
    }

    replicas[0].kill();
    let (dir, url) = (home.path().to_owned(), proxy.url.clone());
    let errors = tokio::task::spawn_blocking(move || bench_errors(&dir, &url, 20))
        .await
        .unwrap();
    assert_eq!(
        errors, 0,
        "a stateless client must not notice a replica dying"
    );
}

#[test]
fn a_stateless_clients_answer_reaches_the_replica_that_holds_its_call() {
    // server-everything speaks 2025-11-25 and asks its client mid-call
    // (elicitation). A 2026-07-28 client cannot be asked, so the replica
    // that runs the call holds it and answers with the question and a
    // `requestState`; the client's retry brings the answer, and must reach
    // that replica: the other one knows nothing of the call. Round robin
    // alone sends the retry to the other replica.
    let home = tempdir();
    let config = write_config(
        home.path(),
        json!({ "everything": { "command": "node", "args": [everything_js(), "stdio"] } }),
    );
    let replicas = [
        Gateway::start(&config, home.path(), &[]),
        Gateway::start(&config, home.path(), &[]),
    ];
    for replica in &replicas {
        replica.wait_for_tools(&["trigger-elicitation-request"]);
    }
    let proxy = Haproxy::start(&replicas.iter().map(Gateway::addr).collect::<Vec<_>>());
    tokio::runtime::Runtime::new()
        .unwrap()
        .block_on(answers_reach_their_replica(&proxy.url));
}

/// Four elicitation calls through `url` (HAProxy), each answered in a retry.
async fn answers_reach_their_replica(url: &str) {
    let asking = json!({ "elicitation": {} });
    let call = json!({ "name": "trigger-elicitation-request", "arguments": {} });
    // Several calls, so that the questions come from both replicas.
    for round in 0..4 {
        let mut client = RawClient::new(url);
        let first = client
            .stateless_declaring("tools/call", call.clone(), asking.clone())
            .await;
        let result = first
            .body
            .as_ref()
            .and_then(|b| b.get("result"))
            .unwrap_or_else(|| panic!("round {round}: no result: {first:?}"));
        assert_eq!(
            result["resultType"], "input_required",
            "round {round}: {result}"
        );
        let key = result["inputRequests"]
            .as_object()
            .and_then(|asked| asked.keys().next().cloned())
            .unwrap_or_else(|| panic!("round {round}: no input request: {result}"));
        let state = result["requestState"].as_str().expect("a requestState");

        let mut retry = call.clone();
        let reply = format!("answer {round}");
        retry["inputResponses"] =
            json!({ key: { "action": "accept", "content": { "reply": reply } } });
        retry["requestState"] = json!(state);
        let second = client
            .stateless_declaring("tools/call", retry, asking.clone())
            .await;
        let result = second
            .body
            .as_ref()
            .and_then(|b| b.get("result"))
            .unwrap_or_else(|| panic!("round {round}: no result to the retry: {second:?}"));
        assert_eq!(
            result["resultType"], "complete",
            "round {round}: the retry did not reach the replica holding the call: {result}"
        );
        assert!(
            result.to_string().contains(&reply),
            "round {round}: the upstream never got the answer: {result}"
        );
    }
}
