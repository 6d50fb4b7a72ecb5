//! No secret from the config (a header value, a token in the URL query, the
//! URL's user info) appears in any error message or log line, even when the
//! server echoes them back in its error page.

mod common;

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
use toolbridge::config::{ServerSpec, TransportKind, TransportSpec};

const HEADER_SECRET: &str = "hdr-SECRET-1234";
const QUERY_SECRET: &str = "url-SECRET-5678";
const PASSWORD_SECRET: &str = "pw-SECRET-9012";
const SECRETS: [&str; 3] = [HEADER_SECRET, QUERY_SECRET, PASSWORD_SECRET];

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
