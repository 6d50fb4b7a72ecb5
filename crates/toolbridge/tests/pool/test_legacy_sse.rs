//! The legacy HTTP+SSE transport against server-everything and the Python
//! SDK 2.x, auto-detection of SSE-only servers, and its faults.

use crate::common;

use std::time::{Duration, Instant};

use axum::{body::Body, response::Response};
use common::{
    Lifecycle, args, assert_a_killed_server_fails_the_call_in_flight,
    assert_a_timed_out_call_is_cancelled_on_the_server, call_text, client, client_error,
    everything, python, remote, serve, tool_names, transport, untyped,
};
use serde_json::json;
use toolbridge::{
    config::{RemoteSpec, TransportKind},
    transport::sse::SseTransport,
};

#[tokio::test]
async fn server_everything_over_legacy_sse() {
    let server = everything("sse").await;
    let spec = remote(TransportKind::Sse, &server.url("/sse"), &[]);
    for lifecycle in [Lifecycle::Initialize, Lifecycle::Auto] {
        let client = client(&spec, lifecycle).await.unwrap();
        assert!(tool_names(&client).await.contains(&"echo".to_owned()));
        let text = call_text(&client, "echo", args(&[("message", json!("over sse"))]))
            .await
            .unwrap();
        assert_eq!(text, "Echo: over sse", "{lifecycle:?}");
        client.cancel().await.unwrap();
    }
}

#[tokio::test]
async fn python_sdk_2_over_legacy_sse() {
    let server = python("sse", None).await;
    let spec = remote(TransportKind::Sse, &server.url("/sse"), &[]);
    let client = client(&spec, Lifecycle::Auto).await.unwrap();
    assert_eq!(tool_names(&client).await, ["echo", "slow"]);
    let text = call_text(&client, "echo", args(&[("message", json!("py"))]))
        .await
        .unwrap();
    assert_eq!(text, "Echo: py");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn a_url_without_type_is_detected_as_legacy_sse_or_streamable_http() {
    let everything_sse = everything("sse").await;
    let python_sse = python("sse", None).await;
    let python_http = python("streamable-http", None).await;
    let everything_http = everything("streamableHttp").await;
    let cases = [
        (everything_http.url("/mcp"), TransportKind::Http),
        (everything_sse.url("/sse"), TransportKind::Sse),
        (python_sse.url("/sse"), TransportKind::Sse),
        (python_http.url("/mcp"), TransportKind::Http),
    ];
    for (url, expected) in cases {
        let spec = untyped(&url);
        let detected = transport(&spec).await.unwrap();
        assert_eq!(detected.kind(), expected, "{url}");
        drop(detected);
        let client = client(&spec, Lifecycle::Auto).await.unwrap();
        let text = call_text(&client, "echo", args(&[("message", json!("auto"))]))
            .await
            .unwrap();
        assert_eq!(text, "Echo: auto", "{url}");
        client.cancel().await.unwrap();
    }
}

#[tokio::test]
async fn a_killed_server_fails_the_call_in_flight_at_once() {
    let mut server = python("sse", None).await;
    let spec = remote(TransportKind::Sse, &server.url("/sse"), &[]);
    let client = client(&spec, Lifecycle::Auto).await.unwrap();
    assert_a_killed_server_fails_the_call_in_flight(&mut server, &client).await;
}

#[tokio::test]
async fn a_call_that_times_out_is_cancelled_on_the_server() {
    let server = python("sse", None).await;
    let spec = remote(TransportKind::Sse, &server.url("/sse"), &[]);
    let client = client(&spec, Lifecycle::Auto).await.unwrap();
    assert_a_timed_out_call_is_cancelled_on_the_server(&server, &client).await;
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn a_stream_without_endpoint_event_times_out_clearly() {
    let app = axum::Router::new().fallback(|| async {
        Response::builder()
            .header("content-type", "text/event-stream")
            .body(Body::from_stream(futures::stream::pending::<
                Result<String, std::io::Error>,
            >()))
            .unwrap()
    });
    let url = format!("{}/sse", serve(app).await);

    let spec = RemoteSpec {
        url: url.clone(),
        ..RemoteSpec::default()
    };
    let started = Instant::now();
    let Err(error) =
        SseTransport::connect_with_timeout("quiet", &spec, Duration::from_millis(300)).await
    else {
        panic!("connected without an endpoint event");
    };
    let error = error.to_string();
    assert!(started.elapsed() < Duration::from_secs(5));
    assert!(
        error.starts_with(&format!(
            "server \"quiet\": {url}: no `endpoint` event within 0.3s"
        )),
        "{error}"
    );
}

#[tokio::test]
async fn a_url_that_is_no_event_stream_is_a_clear_error() {
    let server = python("streamable-http", None).await;
    let url = server.url("/nothing-here");
    let error = client_error(&remote(TransportKind::Sse, &url, &[]), Lifecycle::Auto).await;
    assert!(
        error.contains(&format!("server \"test\": {url}: HTTP 404 Not Found")),
        "{error}"
    );
}
