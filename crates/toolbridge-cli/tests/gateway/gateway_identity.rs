//! Who a client of the gateway is: named client tokens made, listed and
//! revoked through the real CLI while a real `toolbridge serve` runs, and
//! the gateway as an OAuth resource server in front of a real authorization
//! server (panva's `oidc-provider`, .deps/oidc, started by the test with
//! tests/oauth/issuer.mjs) whose JWT access tokens it checks.

use crate::common;
use crate::gateway_support;

use std::{path::Path, time::Duration};

use serde_json::{Value, json};

use common::{Listening, Sandbox, poll_async, root, toolbridge};
use gateway_support::{
    Gateway, Protected, RawClient, TOKEN, access_token, example_config as config, issuer,
    oauth_browser,
};

/// `toolbridge --config CONFIG serve token ARGS...`.
fn token_cli(config: &Path, args: &[&str]) -> common::Run {
    let output = std::process::Command::new(toolbridge())
        .arg("--config")
        .arg(config)
        .arg("serve")
        .arg("token")
        .args(args)
        .env_remove("TOOLBRIDGE_CONFIG")
        .stdin(std::process::Stdio::null())
        .output()
        .expect("run toolbridge serve token");
    common::Run::from(output)
}

/// One POST of `message` to `url` with `token`: status, `WWW-Authenticate`,
/// body.
async fn post(url: &str, token: Option<&str>, message: Value) -> (u16, String, String) {
    let mut request = reqwest::Client::new()
        .post(url)
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .timeout(Duration::from_secs(30))
        .json(&message);
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    let response = request.send().await.expect("POST to the gateway");
    let status = response.status().as_u16();
    let challenge = response
        .headers()
        .get("www-authenticate")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    (status, challenge, response.text().await.unwrap_or_default())
}

fn initialize() -> Value {
    json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": { "name": "identity-test", "version": "1" } } })
}

/// Initialises a session with `token` and calls `echo`: the text it echoed.
async fn echo(url: &str, token: &str, text: &str) -> String {
    let mut client = RawClient::with_token(url, token);
    client.initialize().await;
    let answer = client.call("echo", json!({ "text": text })).await;
    assert_eq!(answer.status, 200, "{answer:?}");
    answer
        .body
        .as_ref()
        .and_then(|b| b.pointer("/result/content/0/text"))
        .and_then(Value::as_str)
        .unwrap_or_else(|| panic!("no echo in {answer:?}"))
        .to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn named_tokens_are_made_listed_bound_and_revoked_while_the_gateway_runs() {
    let sandbox = Sandbox::new();
    let config = config(sandbox.dir.path(), json!({}));
    let gateway = Gateway::start(&config, sandbox.dir.path(), &[]);
    tokio::task::block_in_place(|| gateway.wait_for_tools(&["echo"]));
    let base = format!("http://{}", gateway.addr());

    // Made through the real CLI while the gateway runs: printed once.
    let made = token_cli(&config, &["create", "ci"]);
    assert_eq!(made.code, Some(0), "{made:?}");
    let ci = made.stdout.trim().to_owned();
    assert!(ci.starts_with("tbc_") && ci.len() > 60, "{made:?}");
    let bound = token_cli(&config, &["create", "ops-bot", "--profile", "ops"]);
    assert_eq!(bound.code, Some(0), "{bound:?}");
    let ops = bound.stdout.trim().to_owned();
    let again = token_cli(&config, &["create", "ci"]);
    assert_eq!(again.code, Some(2), "{again:?}");
    assert!(again.stderr.contains("exists already"), "{again:?}");

    // Stored hashed, owner-only; listed without the tokens.
    let file = sandbox.dir.path().join("gateway-clients.json");
    let stored = std::fs::read_to_string(&file).expect("tokens file");
    assert!(!stored.contains(&ci) && !stored.contains(&ops), "{stored}");
    use std::os::unix::fs::PermissionsExt as _;
    let mode = std::fs::metadata(&file).expect("meta").permissions().mode();
    assert_eq!(mode & 0o777, 0o600);
    let listed = token_cli(&config, &["list", "--json"]);
    assert_eq!(listed.code, Some(0), "{listed:?}");
    assert!(!listed.stdout.contains("tbc_"), "{listed:?}");
    let listed: Value = serde_json::from_str(&listed.stdout).expect("list JSON");
    assert_eq!(listed[0]["name"], "ci");
    assert_eq!(listed[0]["profile"], Value::Null);
    assert_eq!(listed[1]["name"], "ops-bot");
    assert_eq!(listed[1]["profile"], "ops");

    // The new token works without a restart, and the audit line names it.
    assert_eq!(echo(&gateway.url, &ci, "from ci").await, "from ci");
    let audited = poll_async(Duration::from_secs(10), || async {
        let log = gateway.log();
        log.lines()
            .any(|l| l.contains("tool call") && l.contains("\"ci\"") && l.contains("token"))
            .then_some(())
    })
    .await;
    assert!(
        audited.is_some(),
        "no audit line naming ci:\n{}",
        gateway.log()
    );
    assert!(!gateway.log().contains(&ci), "the token reached the log");

    // A named token reaches MCP only, not the page's API or /metrics.
    let metrics = reqwest::Client::new()
        .get(format!("{base}/metrics"))
        .bearer_auth(&ci)
        .send()
        .await
        .expect("GET /metrics");
    assert_eq!(metrics.status().as_u16(), 403);

    // Bound to "ops": refused on /mcp and on another profile's path, served
    // on its own.
    let (status, _, body) = post(&gateway.url, Some(&ops), initialize()).await;
    assert_eq!(status, 403, "{body}");
    assert!(body.contains("\"ops\""), "{body}");
    let (status, _, body) = post(&format!("{base}/mcp/dev"), Some(&ops), initialize()).await;
    assert_eq!(status, 403, "{body}");
    assert_eq!(echo(&format!("{base}/mcp/ops"), &ops, "ops").await, "ops");
    // A token for a profile the config lacks is not made.
    let stray = token_cli(&config, &["create", "stray", "--profile", "nope"]);
    assert_eq!(stray.code, Some(2), "{stray:?}");
    assert!(stray.stderr.contains("nope"), "{stray:?}");

    // Revoked through the CLI: refused from the next request, no restart.
    let revoked = token_cli(&config, &["revoke", "ci"]);
    assert_eq!(revoked.code, Some(0), "{revoked:?}");
    let (status, challenge, body) = post(&gateway.url, Some(&ci), initialize()).await;
    assert_eq!(status, 401, "{body}");
    assert!(challenge.starts_with("Bearer"), "{challenge}");
    assert!(challenge.contains("invalid_token"), "{challenge}");
    let unknown = token_cli(&config, &["revoke", "ci"]);
    assert_eq!(unknown.code, Some(2), "{unknown:?}");
    // The admin token still works.
    assert_eq!(echo(&gateway.url, TOKEN, "admin").await, "admin");
}

/// A session answers only the client that opened it: another client's
/// token with its id gets the 404 of an unknown session, while the owner
/// goes on using it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_answers_only_the_client_that_opened_it() {
    let sandbox = Sandbox::new();
    let config = config(sandbox.dir.path(), json!({}));
    let gateway = Gateway::start(&config, sandbox.dir.path(), &[]);
    tokio::task::block_in_place(|| gateway.wait_for_tools(&["echo"]));
    let made = token_cli(&config, &["create", "intruder"]);
    assert_eq!(made.code, Some(0), "{made:?}");
    let intruder = made.stdout.trim().to_owned();

    let mut owner = RawClient::new(&gateway.url);
    owner.initialize().await;
    let session = owner.session.clone().expect("a session");
    let mut other = RawClient::with_token(&gateway.url, &intruder);
    other.session = Some(session.clone());
    let answer = other.call("echo", json!({ "text": "not mine" })).await;
    assert_eq!(
        answer.status, 404,
        "another client used the session: {answer:?}"
    );
    let answer = owner.call("echo", json!({ "text": "mine" })).await;
    assert_eq!(answer.status, 200, "{answer:?}");
    assert_eq!(
        answer
            .body
            .as_ref()
            .and_then(|b| b.pointer("/result/content/0/text")),
        Some(&json!("mine"))
    );
    // The intruder's own session works.
    assert_eq!(echo(&gateway.url, &intruder, "own").await, "own");
}

/// A token the issuer's test route signs: for `aud`, expiring in
/// `exp_secs`, by a key it never published when `unpublished`.
async fn forged(issuer: &Listening, aud: &str, exp_secs: i64, unpublished: bool) -> String {
    let body: Value = reqwest::Client::new()
        .post(issuer.url("/test/forge"))
        .json(&json!({ "aud": aud, "expSecs": exp_secs, "unpublished": unpublished }))
        .send()
        .await
        .expect("POST /test/forge")
        .json()
        .await
        .expect("forge JSON");
    body["token"].as_str().expect("token").to_owned()
}

/// A 401 of the resource server: its challenge names the metadata of `/mcp`
/// (and `invalid_token` when `invalid`).
fn assert_challenge(base: &str, answer: &(u16, String, String), invalid: bool, why: &str) {
    let (status, challenge, body) = answer;
    assert_eq!(*status, 401, "{why}: {body}");
    let metadata = format!("resource_metadata=\"{base}/.well-known/oauth-protected-resource/mcp\"");
    assert!(challenge.starts_with("Bearer "), "{why}: {challenge}");
    assert!(challenge.contains(&metadata), "{why}: {challenge}");
    assert_eq!(
        challenge.contains("error=\"invalid_token\""),
        invalid,
        "{why}: {challenge}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_gateway_takes_the_issuers_jwt_access_tokens_and_refuses_bad_ones() {
    let issuer = issuer();
    let issuer_url = format!("http://127.0.0.1:{}", issuer.port);
    let sandbox = Sandbox::new();
    let config = config(
        sandbox.dir.path(),
        json!({ "gateway": { "oauth": { "issuer": issuer_url, "scopes": ["tools.read", "tools.write"] } } }),
    );
    let gateway = Gateway::start(&config, sandbox.dir.path(), &[]);
    tokio::task::block_in_place(|| gateway.wait_for_tools(&["echo"]));
    let base = format!("http://{}", gateway.addr());
    let resource = gateway.url.clone();

    // Without a token: 401 naming the metadata, which names the issuer.
    let answer = post(&resource, None, initialize()).await;
    assert_challenge(&base, &answer, false, "no token");
    for path in [
        "/.well-known/oauth-protected-resource",
        "/.well-known/oauth-protected-resource/mcp",
    ] {
        let metadata: Value = reqwest::get(format!("{base}{path}"))
            .await
            .expect("GET metadata")
            .json()
            .await
            .expect("metadata JSON");
        assert_eq!(
            metadata["resource"],
            resource.as_str(),
            "{path}: {metadata}"
        );
        assert_eq!(
            metadata["authorization_servers"][0],
            issuer_url.as_str(),
            "{metadata}"
        );
        assert_eq!(
            metadata["scopes_supported"],
            json!(["tools.read", "tools.write"])
        );
    }
    let profile: Value = reqwest::get(format!(
        "{base}/.well-known/oauth-protected-resource/mcp/ops"
    ))
    .await
    .expect("GET profile metadata")
    .json()
    .await
    .expect("metadata JSON");
    assert_eq!(profile["resource"], format!("{base}/mcp/ops"));

    // The issuer's token for this resource: the call works, and the audit
    // line names the OAuth client (never its token).
    let token = access_token(&issuer, &resource, "tools.read tools.write").await;
    assert_eq!(echo(&resource, &token, "signed in").await, "signed in");
    let audited = poll_async(Duration::from_secs(10), || async {
        gateway
            .log()
            .lines()
            .any(|l| l.contains("tool call") && l.contains("oauth") && l.contains("gateway-client"))
            .then_some(())
    })
    .await;
    assert!(
        audited.is_some(),
        "no audit line of the OAuth client:\n{}",
        gateway.log()
    );
    assert!(!gateway.log().contains(&token), "the token reached the log");

    // A token the issuer made for another resource.
    let elsewhere = access_token(&issuer, "http://127.0.0.1:1/mcp", "tools.read tools.write").await;
    let answer = post(&resource, Some(&elsewhere), initialize()).await;
    assert_challenge(&base, &answer, true, "wrong audience");
    assert!(answer.1.contains("another resource"), "{}", answer.1);
    // A token for the profile's resource is not one for /mcp.
    let for_profile = access_token(
        &issuer,
        &format!("{base}/mcp/ops"),
        "tools.read tools.write",
    )
    .await;
    assert_challenge(
        &base,
        &post(&resource, Some(&for_profile), initialize()).await,
        true,
        "profile audience",
    );

    // Expired (past the leeway), and signed by a key the issuer never
    // published: refused. The same route's valid token is taken, so the
    // refusals are about what differs.
    let valid = forged(&issuer, &resource, 300, false).await;
    assert_eq!(
        echo(&resource, &valid, "forged but valid").await,
        "forged but valid"
    );
    let expired = forged(&issuer, &resource, -120, false).await;
    let answer = post(&resource, Some(&expired), initialize()).await;
    assert_challenge(&base, &answer, true, "expired");
    assert!(answer.1.contains("expired"), "{}", answer.1);
    let stranger = forged(&issuer, &resource, 300, true).await;
    let answer = post(&resource, Some(&stranger), initialize()).await;
    assert_challenge(&base, &answer, true, "unknown key");
    assert!(answer.1.contains("does not publish"), "{}", answer.1);
    let garbage = post(&resource, Some("not-a-jwt"), initialize()).await;
    assert_challenge(&base, &garbage, true, "not a JWT");

    // The issuer rotates its key: its new tokens (a kid the gateway has
    // not seen) are taken, the gateway fetching the new key set.
    let rotated: Value = reqwest::Client::new()
        .post(issuer.url("/test/rotate"))
        .send()
        .await
        .expect("rotate")
        .json()
        .await
        .expect("rotate JSON");
    let after = access_token(&issuer, &resource, "tools.read tools.write").await;
    let kid = jsonwebtoken_kid(&after);
    assert_eq!(
        Some(kid.as_str()),
        rotated["kid"].as_str(),
        "the issuer did not rotate"
    );
    assert_eq!(
        echo(&resource, &after, "after rotation").await,
        "after rotation"
    );
    // The old key is gone from the set: its token no longer passes.
    assert_challenge(
        &base,
        &post(&resource, Some(&token), initialize()).await,
        true,
        "old key",
    );

    // A stream of tokens naming unknown keys is refused without fetching
    // the key set for each: the gateway has used its fetches of the minute
    // (the first, the stranger's, the rotation's, the old key's).
    let fetched = jwks_fetches(&issuer).await;
    for _ in 0..10 {
        let stranger = forged(&issuer, &resource, 300, true).await;
        let answer = post(&resource, Some(&stranger), initialize()).await;
        assert_challenge(&base, &answer, true, "unknown key in a flood");
    }
    assert_eq!(
        jwks_fetches(&issuer).await,
        fetched,
        "made-up kids made the gateway refetch"
    );
    assert!(fetched <= 4, "{fetched} fetches of the key set");
}

/// How often the issuer's key set was fetched.
async fn jwks_fetches(issuer: &Listening) -> u64 {
    let stats: Value = reqwest::get(issuer.url("/test/stats"))
        .await
        .expect("GET /test/stats")
        .json()
        .await
        .expect("stats JSON");
    stats["jwksFetches"].as_u64().expect("jwksFetches")
}

/// The TypeScript SDK's OAuth client (ClientCredentialsProvider) signs in
/// by itself: from the gateway's 401 to its metadata, the issuer, a token
/// for the gateway's resource, then the call.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_typescript_sdk_signs_in_through_the_gateways_metadata_and_calls_a_tool() {
    let issuer = issuer();
    let issuer_url = format!("http://127.0.0.1:{}", issuer.port);
    let sandbox = Sandbox::new();
    let config = config(
        sandbox.dir.path(),
        json!({ "gateway": { "oauth": { "issuer": issuer_url } } }),
    );
    let gateway = Gateway::start(&config, sandbox.dir.path(), &[]);
    tokio::task::block_in_place(|| gateway.wait_for_tools(&["echo"]));
    let script = root().join("crates/toolbridge-cli/tests/oauth/sdk_client.cjs");
    let output = tokio::process::Command::new("node")
        .arg(&script)
        .arg(&gateway.url)
        .arg(&issuer_url)
        .env("NODE_DEPS", common::deps().join("node"))
        .kill_on_drop(true)
        .output();
    let output = tokio::time::timeout(Duration::from_secs(90), output)
        .await
        .expect("the SDK client finished within 90 s")
        .expect("run node");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "the SDK client failed: {}\n{stdout}\ngateway:\n{}",
        String::from_utf8_lossy(&output.stderr),
        gateway.log()
    );
    let seen: Value = serde_json::from_str(stdout.trim()).expect("the client's JSON line");
    assert!(
        seen["tools"]
            .as_array()
            .is_some_and(|t| t.iter().any(|n| n == "echo")),
        "{seen}"
    );
    assert_eq!(seen["echo"], json!(["sdk signed in"]), "{seen}");
    let audited = poll_async(Duration::from_secs(10), || async {
        gateway
            .log()
            .lines()
            .any(|l| l.contains("tool call") && l.contains("oauth") && l.contains("sdk-client"))
            .then_some(())
    })
    .await;
    assert!(
        audited.is_some(),
        "no audit line of the SDK client:\n{}",
        gateway.log()
    );
}

/// toolbridge's own client signs in to the gateway as to any remote
/// server: `auth login` meets the 401, follows the metadata to the issuer,
/// registers itself, and walks the authorization code flow with PKCE through
/// the issuer's own login and consent pages (tests/oauth/browser.sh as
/// `$BROWSER`); `call` then goes through with the token, audited under the
/// user's name.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn toolbridge_auth_login_signs_in_to_the_gateway_and_calls_through_it() {
    let protected = tokio::task::block_in_place(Protected::start);
    let gateway = &protected.gateway;

    let client = Sandbox::new();
    client.write_config(&json!({ "mcpServers": { "gw": { "url": gateway.url } } }));
    let browser = oauth_browser();
    let with_browser = |c: &mut std::process::Command| {
        c.env("BROWSER", &browser);
    };
    let login =
        tokio::task::block_in_place(|| client.run_with(&["auth", "login", "gw"], with_browser));
    assert_eq!(
        login.code,
        Some(0),
        "{login:?}\ngateway:\n{}",
        gateway.log()
    );
    assert!(login.stderr.contains("signed in to \"gw\""), "{login:?}");
    let call = tokio::task::block_in_place(|| {
        client.run(&[
            "call",
            "gw",
            "echo",
            "--args",
            r#"{"text": "via auth login"}"#,
        ])
    });
    assert_eq!(call.code, Some(0), "{call:?}\ngateway:\n{}", gateway.log());
    assert_eq!(call.stdout.trim(), "via auth login");
    let audited = poll_async(Duration::from_secs(10), || async {
        gateway
            .log()
            .lines()
            .any(|l| l.contains("tool call") && l.contains("oauth") && l.contains("\"alice\""))
            .then_some(())
    })
    .await;
    assert!(
        audited.is_some(),
        "no audit line of alice:\n{}",
        gateway.log()
    );
}

/// The `kid` in a JWT's header.
fn jsonwebtoken_kid(token: &str) -> String {
    use base64::Engine as _;
    let header = token.split('.').next().expect("header");
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(header)
        .expect("base64url header");
    let header: Value = serde_json::from_slice(&bytes).expect("header JSON");
    header["kid"].as_str().expect("kid").to_owned()
}
