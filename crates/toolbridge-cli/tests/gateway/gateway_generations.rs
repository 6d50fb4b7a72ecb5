//! A 2025-11-25 session client of the gateway in front of an upstream that
//! speaks both protocol generations on one endpoint (the 0.2 conformance
//! suite's reference server, .deps/conformance/everything-server-0.2): the
//! gateway reaches the upstream over 2026-07-28, but the upstream asks a
//! 2025-11-25 client for sampling and elicitation with requests of its own,
//! which exist on 2025-11-25 only; so such a client's requests go over a
//! 2025-11-25 connection beside the 2026-07-28 one (the pool's
//! `session_connection`), and the questions reach the client. What it sees
//! and may call stays what every client of its rights sees.

use crate::common;
use crate::gateway_support;

use std::{
    path::Path,
    sync::{Arc, Mutex},
};

// Sampling is deprecated by SEP-2577 but 2025-11-25 carries it.
#[allow(deprecated)]
use rmcp::model::{
    CreateMessageRequestParams, CreateMessageResult, SamplingCapability, SamplingMessage,
};
use rmcp::{
    ClientHandler, RoleClient, ServiceExt as _,
    model::{
        ClientCapabilities, ClientConfig, ElicitRequestParams, ElicitResult, ElicitationAction,
        ElicitationCapability, ErrorData, FormElicitationCapability, Implementation,
        ProtocolVersion, Role,
    },
    service::RequestContext,
    transport::StreamableHttpClientTransport,
};
use serde_json::{Value, json};

use common::{Sandbox, reference::reference_02_url, tempdir, toolbridge};
use gateway_support::{Gateway, RawClient, call_text, write_config};

/// A 2025-11-25 session client that declares sampling and elicitation,
/// answers both, and keeps what it was asked.
#[derive(Clone, Default)]
struct Asked {
    questions: Arc<Mutex<Vec<String>>>,
}

impl Asked {
    fn questions(&self) -> Vec<String> {
        self.questions.lock().unwrap().clone()
    }
}

#[allow(deprecated)]
impl ClientHandler for Asked {
    async fn create_message(
        &self,
        params: CreateMessageRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, ErrorData> {
        let prompt = params
            .messages
            .first()
            .and_then(|m| m.content.first())
            .and_then(|c| c.as_text())
            .map(|t| t.text.clone())
            .unwrap_or_default();
        self.questions
            .lock()
            .unwrap()
            .push(format!("sampling: {prompt}"));
        Ok(CreateMessageResult::new(
            SamplingMessage::new(Role::Assistant, "four, says the client"),
            "test-model".to_owned(),
        ))
    }

    async fn create_elicitation(
        &self,
        params: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let message = match &params {
            ElicitRequestParams::FormElicitationParams { message, .. } => message.clone(),
            other => format!("{other:?}"),
        };
        self.questions
            .lock()
            .unwrap()
            .push(format!("elicitation: {message}"));
        let mut result = ElicitResult::new(ElicitationAction::Accept);
        result.content = Some(json!({ "response": "yes" }));
        Ok(result)
    }

    fn get_info(&self) -> ClientConfig {
        let mut elicitation = ElicitationCapability::new();
        elicitation.form = Some(FormElicitationCapability::new());
        let mut capabilities = ClientCapabilities::default();
        capabilities.elicitation = Some(elicitation);
        capabilities.sampling = Some(SamplingCapability::default());
        let mut config = ClientConfig::new(capabilities, Implementation::new("asked", "1"));
        config.protocol_version = ProtocolVersion::LATEST_WITH_INITIALIZE;
        config
    }
}

/// A gateway whose only upstream is the two-generation reference server,
/// as `ref` (its tools keep their names).
fn gateway(home: &Path) -> Gateway {
    let config = write_config(
        home,
        json!({ "ref": { "type": "http", "url": reference_02_url() } }),
    );
    Gateway::start_with(&config, home, &[], None)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_client_is_asked_for_sampling_and_elicitation_by_an_upstream_of_both_generations()
{
    let home = tempdir();
    let gateway = gateway(home.path());
    let asked = Asked::default();
    let client = asked
        .clone()
        .serve(StreamableHttpClientTransport::from_uri(gateway.url.clone()))
        .await
        .expect("connect to the gateway");
    assert_eq!(
        client.peer_info().map(|i| i.protocol_version.clone()),
        Some(ProtocolVersion::LATEST_WITH_INITIALIZE),
        "the client's session is at 2025-11-25"
    );

    // The reference server checks the answer against a schema of its own
    // (it wants a `method` in the result, which rmcp's typed result has
    // not), so only the question is checked here; that the answer comes
    // back is elicitation's check below. Before the session connection,
    // the question never came: over 2026-07-28 the server cannot send it.
    let sampled = call_text(&client, "test_sampling", json!({ "prompt": "2+2?" })).await;
    assert_eq!(asked.questions(), ["sampling: 2+2?"], "{sampled}");
    assert_eq!(
        call_text(&client, "test_elicitation", json!({ "message": "Go on?" })).await,
        r#"User response: action=accept, content={"response":"yes"}"#,
        "the upstream's elicitation request reached the client and its answer came back"
    );
    assert_eq!(
        asked.questions(),
        ["sampling: 2+2?", "elicitation: Go on?"],
        "each question asked once, of the client whose call caused it"
    );
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_client_subscribes_to_a_resource_of_an_upstream_of_both_generations() {
    let home = tempdir();
    let gateway = gateway(home.path());
    let mut client = RawClient::new(&gateway.url);
    client.initialize().await;
    let uri = "test://static-text";
    let subscribed = client
        .request("resources/subscribe", json!({ "uri": uri }))
        .await;
    let body = subscribed.body.clone().unwrap_or_default();
    assert_eq!(
        body.get("result"),
        Some(&json!({})),
        "subscribed through the gateway: {subscribed:?}"
    );
    let unsubscribed = client
        .request("resources/unsubscribe", json!({ "uri": uri }))
        .await;
    assert_eq!(
        unsubscribed.body.unwrap_or_default().get("result"),
        Some(&json!({})),
        "unsubscribed"
    );
}

/// The names an answer to `tools/list` gives, sorted.
fn listed(answer: &gateway_support::Answer) -> Vec<String> {
    let mut names = answer
        .tool_names()
        .unwrap_or_else(|| panic!("no tools in {answer:?}"));
    names.sort();
    names
}

/// A client's rights are the same on both paths: a 2025-11-25 session
/// client that can be asked (whose calls take the upstream's 2025-11-25
/// connection) lists and may call exactly what a 2026-07-28 client with the
/// same token may.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_client_sees_and_calls_what_its_rights_allow_as_a_stateless_one_does() {
    let sandbox = Sandbox::new();
    let path = sandbox.dir.path().join("config.json");
    let config = json!({
        "toolbridge": { "gateway": { "rules": [
            { "clients": ["alice"], "allow": ["ref__test_*", "!ref__test_elicitation"] },
        ] } },
        "mcpServers": {
            "ref": { "type": "http", "url": reference_02_url() },
            "example": { "command": toolbridge(), "args": ["example-server"] },
        },
    });
    std::fs::write(&path, config.to_string()).expect("write config");
    let output = std::process::Command::new(toolbridge())
        .arg("--config")
        .arg(&path)
        .args(["serve", "token", "create", "alice"])
        .env_remove("TOOLBRIDGE_CONFIG")
        .output()
        .expect("run toolbridge serve token create");
    let run = common::Run::from(output);
    assert_eq!(run.code, Some(0), "token create: {}", run.stderr);
    let alice = run
        .stdout
        .lines()
        .find(|l| l.trim().starts_with("tbc_"))
        .unwrap_or_else(|| panic!("no token printed: {}", run.stdout))
        .trim()
        .to_owned();
    let gateway = Gateway::start(&path, sandbox.dir.path(), &[]);

    let mut session = RawClient::with_token(&gateway.url, &alice);
    session
        .initialize_with(json!({ "elicitation": { "form": {} } }))
        .await;
    let tools = listed(&session.request("tools/list", json!({})).await);
    assert!(
        tools.contains(&"ref__test_sampling".to_owned()),
        "alice may use test_sampling: {tools:?}"
    );
    assert!(
        !tools
            .iter()
            .any(|t| t == "ref__test_elicitation" || t.starts_with("example__")),
        "what her rights deny is not listed: {tools:?}"
    );
    let stateless = listed(
        &RawClient::with_token(&gateway.url, &alice)
            .stateless("tools/list", json!({}))
            .await,
    );
    assert_eq!(stateless, tools, "2026-07-28 lists the same");

    let refused = session
        .call("ref__test_elicitation", json!({ "message": "Go on?" }))
        .await;
    let error = refused
        .body
        .as_ref()
        .and_then(|b| b.get("error"))
        .unwrap_or_else(|| panic!("no error in {refused:?}"));
    assert_eq!(error["code"], -32003, "refused by her rights: {refused:?}");
    let allowed = session.call("ref__test_simple_text", json!({})).await;
    let text = allowed
        .body
        .as_ref()
        .and_then(|b| b.pointer("/result/content/0/text"))
        .and_then(Value::as_str)
        .unwrap_or_else(|| panic!("no result text in {allowed:?}"));
    assert_eq!(text, "This is a simple text response for testing.");
}

/// Runs an interop client script (tests/interop/) with `plan` against the
/// gateway at `gateway`; returns the JSON line it printed, or panics with
/// its stderr and the gateway's.
fn sdk_client(mut command: std::process::Command, plan: Value, gateway: &Gateway) -> Value {
    let home = tempdir();
    let home = home.path();
    let out = command
        .arg(plan.to_string())
        .args(["http", &gateway.url])
        .env("INTEROP_TOKEN", gateway_support::TOKEN)
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join("config"))
        .env("XDG_CACHE_HOME", home.join("cache"))
        .env("XDG_DATA_HOME", home.join("data"))
        .stdin(std::process::Stdio::null())
        .output()
        .expect("run the SDK client");
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(
        out.status.success(),
        "the SDK client failed ({:?}):\n{stderr}\ngateway:\n{}",
        out.status.code(),
        gateway.log()
    );
    serde_json::from_str(stdout.lines().last().unwrap_or_default())
        .unwrap_or_else(|e| panic!("no JSON from the SDK client ({e}): {stdout}\n{stderr}"))
}

fn interop_script(name: &str) -> std::path::PathBuf {
    common::root()
        .join("crates/toolbridge-cli/tests/interop")
        .join(name)
}

/// The TypeScript SDK (1.32.2), a 2025-11-25 session client, calls tools
/// of a Python `mcp` 2.x server that the gateway reaches over 2026-07-28
/// only (it refuses `initialize`, so there is no 2025-11-25 connection to
/// carry its questions): the server asks in input-required results, which
/// a 2025-11-25 client cannot read; the gateway asks the client with `elicitation/create` and
/// `sampling/createMessage` of its own and retries the call upstream with
/// the answers, which the tools' results repeat. (One upstream: its tools
/// keep their names.)
#[test]
fn the_typescript_sdk_answers_a_2026_python_servers_elicitation_and_sampling() {
    let _serial = crate::gateway_interop::one_at_a_time();
    let home = tempdir();
    let config = write_config(
        home.path(),
        json!({ "py": {
            "command": common::python(),
            "args": [common::test_server("asking_fixture_2026.py")],
        } }),
    );
    let gateway = Gateway::start(&config, home.path(), &[]);
    gateway.wait_for_tools(&["ask_name", "ask_model"]);
    let mut node = std::process::Command::new("node");
    node.arg(interop_script("client.cjs"))
        .env("NODE_DEPS", common::deps().join("node"));
    let seen = sdk_client(
        node,
        json!({ "asks": [
            { "name": "ask_name", "arguments": {} },
            { "name": "ask_model", "arguments": { "prompt": "2+2?" } },
        ] }),
        &gateway,
    );
    assert_eq!(seen["protocolVersion"], "2025-11-25", "{seen}");
    assert_eq!(
        seen["elicitations"],
        json!(["What is your name?"]),
        "{seen}"
    );
    assert_eq!(seen["samplings"], json!(["2+2?"]), "{seen}");
    assert_eq!(seen["isError"], json!([false, false]), "{seen}");
    assert_eq!(
        seen["results"],
        json!([
            ["Hello, Ada! [over 2026-07-28]"],
            ["The model said: ts model says: 2+2? (ts-model) [over 2026-07-28]"],
        ]),
        "the server, reached over 2026-07-28, got the client's answers: {seen}"
    );
}

/// The Python `mcp` 2.x SDK, pinned to 2026-07-28 (stateless: no
/// `initialize`, no session), calls server-everything's sampling and
/// elicitation tools; server-everything speaks 2025-11-25 and asks with
/// requests of its own mid-call, which a stateless client can only be
/// asked in its call's result: the gateway holds the upstream call, answers
/// the client with input required, and passes the answers of its retry
/// back to the upstream's requests.
#[test]
fn the_python_sdk_at_2026_answers_server_everythings_elicitation_and_sampling() {
    let _serial = crate::gateway_interop::one_at_a_time();
    let home = tempdir();
    let config = write_config(
        home.path(),
        json!({ "everything": {
            "command": "node", "args": [common::everything_js(), "stdio"],
        } }),
    );
    let gateway = Gateway::start(&config, home.path(), &[]);
    gateway.wait_for_tools(&["trigger-elicitation-request", "trigger-sampling-request"]);
    let mut python = std::process::Command::new(common::python());
    python.arg(interop_script("client.py"));
    let seen = sdk_client(
        python,
        json!({ "mode": "2026-07-28", "asks": [
            { "name": "trigger-elicitation-request", "arguments": {} },
            { "name": "trigger-sampling-request", "arguments": { "prompt": "2+2?" } },
        ] }),
        &gateway,
    );
    assert_eq!(seen["protocolVersion"], "2026-07-28", "{seen}");
    assert_eq!(
        seen["elicitations"],
        json!(["Please provide inputs for the following fields:"]),
        "{seen}"
    );
    assert_eq!(
        seen["samplings"],
        json!(["Resource trigger-sampling-request context: 2+2?"]),
        "{seen}"
    );
    assert_eq!(seen["isError"], json!([false, false]), "{seen}");
    let results = &seen["results"];
    let elicited = results[0].to_string();
    assert!(
        elicited.contains("User provided the requested information")
            && elicited.contains("py answer to Please provide inputs"),
        "server-everything never got the elicitation's answer: {seen}"
    );
    let sampled = results[1].to_string();
    assert!(
        sampled.contains(r#"\"model\": \"py-model\""#)
            && sampled.contains("py model says: Resource trigger-sampling-request context: 2+2?"),
        "server-everything never got the sampling answer: {seen}"
    );
}
