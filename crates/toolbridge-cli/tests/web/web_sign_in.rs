//! The Servers view's Sign in and Sign out of a remote server that needs
//! OAuth (issue 29), on the real binary: the remote server is a real
//! `toolbridge serve` that is the resource server of a real authorization
//! server (panva's `oidc-provider`, .deps/oidc), and the user's browser is
//! tests/oauth/browser.sh, which walks the provider's own login and consent
//! forms and is sent back to the page's gateway's loopback listener. Once
//! signed in, the page's gateway serves the server's tools at once, with no
//! restart.

use crate::gateway_support;
use crate::web_api_client;

use std::time::Duration;

use serde_json::{Value, json};

use crate::common::poll_async;
use gateway_support::{Protected, RawClient, decline_sign_in, walk_sign_in};
use web_api_client::{Reply, Served, WRITE_HEADER};

/// The page's `gw`: the remote server, as the Servers view lists it.
async fn card(served: &Served) -> Value {
    let reply = served.api.get("/servers").await;
    assert_eq!(reply.status, 200, "{reply:?}");
    reply.json["servers"]
        .as_array()
        .and_then(|s| s.iter().find(|s| s["name"] == "gw").cloned())
        .unwrap_or_else(|| panic!("no gw in {}", reply.json))
}

/// Polls (90 s at most) until `gw`'s card satisfies `check`.
async fn card_until(served: &Served, what: &str, check: impl Fn(&Value) -> bool) -> Value {
    let found = poll_async(Duration::from_secs(90), || async {
        let card = card(served).await;
        check(&card).then_some(card)
    })
    .await;
    match found {
        Some(card) => card,
        None => panic!(
            "gw's card never got {what}; it is {}\nthe page's gateway:\n{}",
            card(served).await,
            served.gateway.log()
        ),
    }
}

/// The tool names the page's gateway serves over /mcp to a new client.
async fn served_tools(served: &Served) -> Vec<String> {
    let mut client = RawClient::new(&served.gateway.url);
    client.initialize().await;
    client
        .request("tools/list", json!({}))
        .await
        .tool_names()
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn signing_in_from_the_page_serves_the_remote_servers_tools_at_once() {
    let protected = tokio::task::block_in_place(Protected::start);
    let served = Served::start(json!({ "gw": { "url": protected.gateway.url } }));

    // Used before signing in, the server fails for want of a sign-in, and
    // its card says so (the button's cue).
    assert!(served_tools(&served).await.is_empty());
    let failed = card_until(&served, "a failure that needs a sign-in", |c| {
        c["signIn"]["needed"] == true
    })
    .await;
    assert_eq!(failed["status"], "failed", "{failed}");
    assert_eq!(failed["signIn"]["signedIn"], false, "{failed}");

    // A foreign page cannot start one: refused before anything starts.
    let foreign = served
        .api
        .send(
            "POST",
            "/servers/gw/sign-in",
            Some(json!({})),
            &[(WRITE_HEADER, "1"), ("Origin", "http://evil.example")],
        )
        .await;
    assert_eq!(foreign.status, 403, "{foreign:?}");
    let without_header = served
        .api
        .send("POST", "/servers/gw/sign-in", Some(json!({})), &[])
        .await;
    assert_eq!(without_header.status, 403, "{without_header:?}");
    let none = served.api.get("/servers/gw/sign-in").await;
    assert_eq!(none.json, json!({ "state": "none" }), "{none:?}");

    // The page's POST: the authorization server's URL, for a tab.
    let first = served.api.post("/servers/gw/sign-in", json!({})).await;
    assert_eq!(first.status, 200, "{first:?}\n{}", served.gateway.log());
    assert_eq!(first.json["state"], "waiting", "{first:?}");
    let url = first.json["authorizationUrl"]
        .as_str()
        .unwrap_or_else(|| panic!("no authorizationUrl in {first:?}"))
        .to_owned();
    assert!(
        url.starts_with(&protected.issuer_url()) && url.contains("code_challenge_method=S256"),
        "{url}"
    );
    // A second click (another tab) joins the sign-in under way.
    let second = served.api.post("/servers/gw/sign-in", json!({})).await;
    assert_eq!(second.json["authorizationUrl"], url.as_str(), "{second:?}");
    let waiting = served.api.get("/servers/gw/sign-in").await;
    assert_eq!(waiting.json["state"], "waiting", "{waiting:?}");

    // The user signs in at the provider; the browser comes back to the
    // gateway's listener.
    tokio::task::block_in_place(|| walk_sign_in(&url));
    let done = poll_async(Duration::from_secs(60), || async {
        let reply: Reply = served.api.get("/servers/gw/sign-in").await;
        (reply.json["state"] != "waiting").then_some(reply)
    })
    .await
    .expect("the sign-in never ended");
    assert_eq!(
        done.json["state"],
        "signedIn",
        "{done:?}\n{}",
        served.gateway.log()
    );
    assert_eq!(done.json["issuer"], protected.issuer_url(), "{done:?}");
    assert!(done.json.get("error").is_none(), "{done:?}");

    // Started again at once: running with its tools, served over /mcp.
    let running = card(&served).await;
    assert_eq!(running["status"], "running", "{running}");
    assert_eq!(running["signIn"]["signedIn"], true, "{running}");
    assert_eq!(running["signIn"]["needed"], false, "{running}");
    let tools = served_tools(&served).await;
    assert!(tools.iter().any(|t| t == "echo"), "{tools:?}");
    assert_eq!(running["toolCount"], tools.len(), "{running} {tools:?}");

    // Sign out: the tokens are forgotten and the server, started again
    // without them, needs a sign-in once more.
    let out = served.api.post("/servers/gw/sign-out", json!({})).await;
    assert_eq!(out.status, 200, "{out:?}");
    assert_eq!(out.json["wasSignedIn"], true, "{out:?}");
    let after = card(&served).await;
    assert_eq!(after["status"], "failed", "{after}");
    assert_eq!(
        after["signIn"],
        json!({ "signedIn": false, "needed": true })
    );
    assert!(served_tools(&served).await.is_empty());
}

/// The page's POST of a sign-in: its authorization URL.
async fn start_sign_in(served: &Served) -> String {
    let reply = served.api.post("/servers/gw/sign-in", json!({})).await;
    assert_eq!(reply.status, 200, "{reply:?}\n{}", served.gateway.log());
    assert_eq!(reply.json["state"], "waiting", "{reply:?}");
    reply.json["authorizationUrl"]
        .as_str()
        .unwrap_or_else(|| panic!("no authorizationUrl in {reply:?}"))
        .to_owned()
}

/// A sign-in the user declines at the provider fails with a message that
/// names the server and says what to do; Sign in then starts a new one
/// (not the failed one again), and Sign out cancels one under way.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_declined_sign_in_says_so_and_the_next_click_starts_a_new_one() {
    let protected = tokio::task::block_in_place(Protected::start);
    let served = Served::start(json!({ "gw": { "url": protected.gateway.url } }));
    assert!(served_tools(&served).await.is_empty());
    card_until(&served, "a failure that needs a sign-in", |c| {
        c["signIn"]["needed"] == true
    })
    .await;

    let first = start_sign_in(&served).await;
    tokio::task::block_in_place(|| decline_sign_in(&first));
    let failed = poll_async(Duration::from_secs(60), || async {
        let reply = served.api.get("/servers/gw/sign-in").await;
        (reply.json["state"] != "waiting").then_some(reply)
    })
    .await
    .expect("the sign-in never ended");
    assert_eq!(failed.json["state"], "failed", "{failed:?}");
    let message = failed.json["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("\"gw\"")
            && message.contains("access_denied")
            && message.contains("press Sign in"),
        "{message}"
    );
    let card = card(&served).await;
    assert_eq!(card["status"], "failed", "{card}");
    assert_eq!(card["signIn"], json!({ "signedIn": false, "needed": true }));

    // A new click: a new sign-in, with its own state.
    let second = start_sign_in(&served).await;
    assert_ne!(second, first);
    // Sign out while it waits: cancelled, its listener closed.
    let out = served.api.post("/servers/gw/sign-out", json!({})).await;
    assert_eq!(out.status, 200, "{out:?}");
    assert_eq!(out.json["wasSignedIn"], false, "{out:?}");
    let none = served.api.get("/servers/gw/sign-in").await;
    assert_eq!(none.json, json!({ "state": "none" }), "{none:?}");
    let redirect = url::Url::parse(&second)
        .ok()
        .and_then(|u| {
            u.query_pairs()
                .find(|(k, _)| k == "redirect_uri")
                .and_then(|(_, v)| url::Url::parse(&v).ok())
        })
        .unwrap_or_else(|| panic!("no redirect_uri in {second}"));
    let port = redirect.port().expect("the redirect URI's port");
    let closed = poll_async(Duration::from_secs(10), || async {
        tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .is_err()
            .then_some(())
    })
    .await;
    assert!(
        closed.is_some(),
        "the loopback listener on {port} still listens"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sign_in_is_for_remote_servers_and_names_the_server_otherwise() {
    let served = Served::start(json!({
        "ex": { "command": crate::common::toolbridge(), "args": ["example-server"] }
    }));
    let stdio = served.api.post("/servers/ex/sign-in", json!({})).await;
    assert_eq!(stdio.status, 400, "{stdio:?}");
    let message = stdio.json["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("\"ex\"") && message.contains("type http"),
        "{message}"
    );
    let unknown = served.api.post("/servers/nope/sign-in", json!({})).await;
    assert_eq!(unknown.status, 404, "{unknown:?}");
    assert!(
        unknown.json["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("\"nope\"")),
        "{unknown:?}"
    );
}
