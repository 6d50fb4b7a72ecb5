//! Two `toolbridge serve` replicas behind HAProxy with deploy/kubernetes/haproxy.cfg:
//! a 2025-11-25 session sticks to the replica that created it; when that
//! replica dies, the client is told 404, starts a new session and goes on
//! through the other replica.

mod common;
mod gateway_support;

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
