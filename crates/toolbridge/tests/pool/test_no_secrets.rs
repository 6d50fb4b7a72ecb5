//! No secret from the config (a header value, a token in the URL query, the
//! URL's user info, an env value) appears in any error message or log line,
//! even when the server echoes them back in its error page; nor in `doctor`'s
//! findings, nor in the `Debug` output of specs, listings, configs or errors.
//! The same for an `oauth.clientSecret`. (Tokens from a sign-in: see the
//! CLI's `tests/cli/auth.rs`, which looks for them in `auth status`, listings
//! and `-v` logs.)

use crate::common;

use std::{
    io::Write,
    sync::{Arc, Mutex},
};

use axum::{body::Body, response::Response};
use common::{
    Lifecycle, args, call_text, client, client_error, closed_port, python, remote,
    rmcp_server::RmcpServer, serve, untyped,
};
use serde_json::json;
use toolbridge::{
    config::{Config, ServerSpec, TransportKind, TransportSpec},
    deps::Platform,
    doctor,
};

const HEADER_SECRET: &str = "hdr-SECRET-1234";
const QUERY_SECRET: &str = "url-SECRET-5678";
const PASSWORD_SECRET: &str = "pw-SECRET-9012";
const ENV_SECRET: &str = "env-SECRET-3456";
const SECRETS: [&str; 4] = [HEADER_SECRET, QUERY_SECRET, PASSWORD_SECRET, ENV_SECRET];

/// `base` with user info and a secret query, and the secret header.
fn secret_spec(kind: TransportKind, base: &str) -> ServerSpec {
    let url = base.replacen("://", &format!("://user:{PASSWORD_SECRET}@"), 1);
    let url = format!("{url}?token={QUERY_SECRET}&mode=x");
    let auth = format!("Bearer {HEADER_SECRET}");
    remote(kind, &url, &[("Authorization", &auth)])
}

fn untyped_secret(base: &str) -> ServerSpec {
    let typed = secret_spec(TransportKind::Http, base);
    let TransportSpec::Http(typed_remote) = &typed.transport else {
        unreachable!()
    };
    let mut spec = untyped(&typed_remote.url);
    if let TransportSpec::Http(r) = &mut spec.transport {
        r.headers = typed_remote.headers.clone();
    }
    spec
}

/// A server answering `status` with a page that repeats the request line and
/// every request header.
async fn echoing_server(status: u16) -> String {
    let app = axum::Router::new().fallback(move |request: axum::extract::Request| async move {
        let page = format!(
            "<html>{} {} {:?}</html>",
            request.method(),
            request.uri(),
            request.headers()
        );
        Response::builder()
            .status(status)
            .header("content-type", "text/html")
            .body(Body::from(page))
            .unwrap()
    });
    serve(app).await
}

/// Collects every log line written while it is the thread's subscriber.
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn assert_no_secret(what: &str, text: &str) {
    for secret in SECRETS {
        assert!(!text.contains(secret), "{what} leaks {secret}:\n{text}");
    }
}

// A current-thread runtime: every task of the client runs on this thread,
// under the capturing subscriber.
#[tokio::test(flavor = "current_thread")]
async fn secrets_stay_out_of_errors_and_logs() {
    let captured = Captured::default();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::TRACE)
        .with_ansi(false)
        .with_writer({
            let captured = captured.clone();
            move || captured.clone()
        })
        .finish();
    let _guard = tracing::subscriber::set_default(subscriber);

    let dead = closed_port().await;
    let page_401 = echoing_server(401).await;
    let page_500 = echoing_server(500).await;
    let page_404 = echoing_server(404).await;
    let ws = python("websocket", Some("other-token")).await;

    let failing = [
        secret_spec(TransportKind::Http, &format!("http://127.0.0.1:{dead}/mcp")),
        secret_spec(TransportKind::Http, &format!("{page_401}/mcp")),
        secret_spec(TransportKind::Http, &format!("{page_500}/mcp")),
        untyped_secret(&format!("http://127.0.0.1:{dead}/mcp")),
        untyped_secret(&format!("{page_401}/mcp")),
        untyped_secret(&format!("{page_404}/mcp")),
        secret_spec(TransportKind::Sse, &format!("http://127.0.0.1:{dead}/sse")),
        secret_spec(TransportKind::Sse, &format!("{page_404}/sse")),
        secret_spec(
            TransportKind::WebSocket,
            &format!("ws://127.0.0.1:{dead}/ws"),
        ),
        secret_spec(
            TransportKind::WebSocket,
            &format!("ws://127.0.0.1:{}/ws", ws.port),
        ),
    ];
    for spec in &failing {
        for lifecycle in [Lifecycle::Initialize, Lifecycle::Auto] {
            let error = client_error(spec, lifecycle).await;
            assert!(error.contains("server \"test\""), "{error}");
            assert!(
                error.contains("token=***"),
                "the URL is shown masked: {error}"
            );
            assert_no_secret("an error", &error);
        }
    }

    // A working session, with everything logged down to trace.
    let server = RmcpServer::start(true).await;
    let spec = secret_spec(TransportKind::Http, &server.url());
    let client = client(&spec, Lifecycle::Initialize).await.unwrap();
    let text = call_text(&client, "echo", args(&[("message", json!("hi"))]))
        .await
        .unwrap();
    assert_eq!(text, "Echo: hi");
    client.cancel().await.unwrap();
    let sent = &server.requests()[0];
    assert_eq!(
        sent.headers["authorization"],
        format!("Bearer {HEADER_SECRET}")
    );

    let logs = String::from_utf8_lossy(&captured.0.lock().unwrap()).into_owned();
    assert!(logs.lines().count() > 10, "logs were captured:\n{logs}");
    assert_no_secret("the logs", &logs);
}

/// The environment the config's `${VAR}`s expand from: every secret.
fn secret_env() -> std::collections::HashMap<String, String> {
    [
        ("HDR", HEADER_SECRET),
        ("TOK", QUERY_SECRET),
        ("PW", PASSWORD_SECRET),
        ("KEY", ENV_SECRET),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect()
}

/// A config whose servers take every secret from the environment: a remote
/// server on `port` (secrets in user info, query and a header) and a stdio
/// server (secrets in env and arguments).
fn secret_config(port: u16) -> Config {
    let text = json!({"mcpServers": {
        "remote": {
            "type": "http",
            "url": format!("http://user:${{PW}}@127.0.0.1:{port}/mcp?token=${{TOK}}&mode=x"),
            "headers": {"Authorization": "Bearer ${HDR}"}
        },
        "local": {
            "command": "toolbridge-test-no-such-command",
            "args": ["--api-key", "${KEY}", "--token=${TOK}"],
            "env": {"API_KEY": "${KEY}", "AUTH": "Bearer ${HDR}"}
        },
        "bad-url": {"type": "http", "url": "${PW}"},
        "oauth": {
            "type": "http",
            "url": format!("http://127.0.0.1:{port}/mcp"),
            "oauth": {"clientId": "toolbridge-test", "clientSecret": "${KEY}"}
        }
    }})
    .to_string();
    Config::parse(std::path::Path::new("config.json"), text)
        .unwrap()
        .with_env(secret_env())
}

/// Regression: doctor printed an unreachable URL expanded, so
/// `?token=${TOK}` showed the token.
#[tokio::test]
async fn doctor_findings_hold_no_secret() {
    let dead = closed_port().await;
    let config = secret_config(dead);
    let findings = doctor::check_servers(&config, &Platform::current(), doctor::URL_TIMEOUT).await;
    let unreachable = findings
        .iter()
        .find(|f| f.server == "remote")
        .expect("the remote server does not answer");
    assert!(
        unreachable.to_string().contains("token=***"),
        "the URL is shown masked: {unreachable}"
    );
    assert!(findings.iter().any(|f| f.server == "local"), "{findings:?}");
    assert!(
        findings.iter().any(|f| f.server == "bad-url"),
        "{findings:?}"
    );
    for finding in &findings {
        assert_no_secret("a finding", &finding.to_string());
        assert_no_secret("a finding's Debug", &format!("{finding:?}"));
        assert_no_secret("a finding's JSON", &serde_json::to_string(finding).unwrap());
    }
}

/// Regression: `ServerSpec` derived `Debug` with expanded headers and env,
/// so `{:?}` in a log or a panic message printed them.
#[tokio::test]
async fn debug_output_holds_no_secret() {
    let config = secret_config(1);
    for name in ["remote", "local", "oauth"] {
        let spec = config.resolve(name).unwrap();
        assert_no_secret("a spec's Debug", &format!("{spec:?}"));
        assert_no_secret("a spec's Debug", &format!("{spec:#?}"));
        assert_no_secret("a transport's Debug", &format!("{:?}", spec.transport));
    }
    let spec = secret_spec(TransportKind::WebSocket, "ws://127.0.0.1:1/ws");
    assert_no_secret("a spec's Debug", &format!("{spec:#?}"));

    // The secrets are still there for the transports to send.
    let TransportSpec::Stdio(local) = config.resolve("local").unwrap().transport else {
        panic!("local is a stdio server")
    };
    assert_eq!(
        local.env.get("API_KEY").map(String::as_str),
        Some(ENV_SECRET)
    );
    assert_eq!(local.args[1], ENV_SECRET);
    let TransportSpec::Http(oauth) = config.resolve("oauth").unwrap().transport else {
        panic!("oauth is an http server")
    };
    assert_eq!(oauth.oauth.client_secret.as_deref(), Some(ENV_SECRET));

    let error = config.resolve("bad-url").unwrap_err();
    assert_no_secret("a config error", &error.to_string());
    assert_no_secret("a config error's Debug", &format!("{error:?}"));

    // Values written into the file as they are (no `${VAR}`).
    let literal = Config::parse(
        std::path::Path::new("config.json"),
        json!({"mcpServers": {"s": {
            "url": format!("https://user:{PASSWORD_SECRET}@h/mcp?token={QUERY_SECRET}"),
            "headers": {"Authorization": format!("Bearer {HEADER_SECRET}")},
            "oauth": {"clientId": "id", "clientSecret": ENV_SECRET}
        }}})
        .to_string(),
    )
    .unwrap();
    assert_no_secret("a config's Debug", &format!("{literal:?}"));
    assert_no_secret("a listing's Debug", &format!("{:?}", literal.listing()));
    assert_no_secret(
        "a listing's JSON",
        &serde_json::to_string(&literal.listing()).unwrap(),
    );
    assert_no_secret(
        "a resolved literal spec's Debug",
        &format!("{:?}", literal.resolve("s").unwrap()),
    );
}
