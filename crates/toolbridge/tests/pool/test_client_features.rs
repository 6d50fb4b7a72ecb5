//! Roots, sampling and elicitation offered through the application's
//! handlers, against servers nobody here wrote (server-everything over
//! stdio and streamable HTTP) and a Python `mcp` 2.x server that asks in
//! the 2026-07-28 input-required form.

#![allow(deprecated)] // roots and sampling: see pool::client_features

use crate::common;

use std::{
    sync::{Arc, Mutex},
    time::Duration,
};

use common::fixtures::*;
use futures::future::BoxFuture;
use serde_json::json;
use toolbridge::{
    config::{ServerSpec, TransportKind},
    pool::{
        CallOptions, ClientFeatures, ElicitationHandler, PoolOptions, RequestOrigin, RootsProvider,
        SamplingHandler,
    },
    rmcp_model::{
        CallToolRequest, CallToolRequestParams, CallToolResult, ClientRequest, ContentBlock,
        CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams, ElicitResult,
        ElicitationAction, ErrorData, ListRootsResult, Root, SamplingMessage, ServerResult,
    },
};

/// The tools server-everything 2026.8.31 lists to any client.
const EVERYTHING_BASE_TOOLS: usize = 13;

fn text(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|c| match c {
            ContentBlock::Text(t) => Some(t.text.clone()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Roots: fixed folders.
struct Folders(Vec<(&'static str, &'static str)>);

impl RootsProvider for Folders {
    fn list_roots(
        &self,
        _origin: RequestOrigin,
    ) -> BoxFuture<'_, Result<ListRootsResult, ErrorData>> {
        let roots = self
            .0
            .iter()
            .map(|(uri, name)| Root::new(*uri).with_name(*name))
            .collect();
        Box::pin(async move { Ok(ListRootsResult::new(roots)) })
    }
}

/// Sampling: a fixed answer; notes the prompts it was given.
#[derive(Default)]
struct Llm {
    prompts: Mutex<Vec<String>>,
}

impl SamplingHandler for Llm {
    fn create_message(
        &self,
        _origin: RequestOrigin,
        params: CreateMessageRequestParams,
    ) -> BoxFuture<'_, Result<CreateMessageResult, ErrorData>> {
        let asked = serde_json::to_string(&params.messages).unwrap_or_default();
        self.prompts.lock().unwrap().push(asked);
        Box::pin(async move {
            Ok(CreateMessageResult::new(
                SamplingMessage::assistant_text("a sampled answer from the handler"),
                "test-model".to_owned(),
            ))
        })
    }
}

/// Elicitation: accepts with `name` (and the schema's other defaults, as the
/// server-everything form needs none); optionally waits at a barrier first,
/// so that two calls are both waiting on their elicitation at once.
struct User {
    name: &'static str,
    barrier: Option<Arc<tokio::sync::Barrier>>,
    asked: Mutex<Vec<String>>,
}

impl User {
    fn named(name: &'static str) -> Arc<User> {
        Arc::new(User {
            name,
            barrier: None,
            asked: Mutex::new(Vec::new()),
        })
    }
}

impl ElicitationHandler for User {
    fn elicit(
        &self,
        origin: RequestOrigin,
        params: ElicitRequestParams,
    ) -> BoxFuture<'_, Result<ElicitResult, ErrorData>> {
        let message = match &params {
            ElicitRequestParams::FormElicitationParams { message, .. } => message.clone(),
            ElicitRequestParams::UrlElicitationParams { message, .. } => message.clone(),
            _ => String::new(),
        };
        self.asked
            .lock()
            .unwrap()
            .push(format!("{}: {message}", origin.server));
        Box::pin(async move {
            if let Some(barrier) = &self.barrier {
                barrier.wait().await;
            }
            Ok(
                ElicitResult::new(ElicitationAction::Accept).with_content(json!({
                    "name": self.name,
                    "check": true,
                    "email": "ada@example.com",
                })),
            )
        })
    }

    fn url_mode(&self) -> bool {
        true
    }
}

fn all_features(user: Arc<User>, llm: Arc<Llm>) -> ClientFeatures {
    ClientFeatures {
        roots: Some(Arc::new(Folders(vec![("file:///srv/project", "project")]))),
        sampling: Some(llm),
        elicitation: Some(user),
        ..ClientFeatures::default()
    }
}

fn with_features(features: ClientFeatures) -> PoolOptions {
    PoolOptions {
        client_features: features,
        ..PoolOptions::default()
    }
}

fn per_call(features: ClientFeatures) -> CallOptions {
    CallOptions {
        client_features: Some(features),
        timeout: Some(Duration::from_secs(60)),
        ..CallOptions::default()
    }
}

#[tokio::test]
async fn server_everything_lists_the_tools_for_the_features_offered_and_no_more() {
    let bare = pool(vec![everything_stdio("everything")]);
    let offered = pool_with(
        vec![everything_stdio("everything")],
        with_features(all_features(User::named("Ada"), Arc::default())),
    );
    let names = |tools: &[toolbridge::tools::McpTool]| {
        tools.iter().map(|t| t.name.clone()).collect::<Vec<_>>()
    };
    let (bare_tools, offered_tools) = futures::join!(
        bare.list_server_tools("everything"),
        offered.list_server_tools("everything")
    );
    let bare_tools = names(&bare_tools.unwrap());
    let offered_tools = names(&offered_tools.unwrap());
    assert_eq!(bare_tools.len(), EVERYTHING_BASE_TOOLS, "{bare_tools:?}");
    assert!(!bare_tools.iter().any(|t| t == "get-roots-list"));
    // Roots, sampling and elicitation (form and URL mode) each show their
    // tool. The two `-async` tools also need the client to run sampling and
    // elicitation as tasks (`tasks.requests`), which is not offered here.
    for tool in [
        "get-roots-list",
        "trigger-sampling-request",
        "trigger-elicitation-request",
        "trigger-url-elicitation",
    ] {
        assert!(offered_tools.iter().any(|t| t == tool), "{offered_tools:?}");
    }
    assert_eq!(
        offered_tools.len(),
        EVERYTHING_BASE_TOOLS + 4,
        "{offered_tools:?}"
    );
    bare.close_all().await;
    offered.close_all().await;
}

#[tokio::test]
async fn server_everything_sees_the_roots_the_sampling_answer_and_the_elicited_values() {
    let llm = Arc::new(Llm::default());
    let user = User::named("Ada Lovelace");
    let pool = pool_with(
        vec![everything_stdio("everything")],
        with_features(all_features(user.clone(), llm.clone())),
    );
    let options = || CallOptions {
        timeout: Some(Duration::from_secs(60)),
        ..CallOptions::default()
    };

    let roots = pool
        .call_tool("everything", "get-roots-list", None, options())
        .await
        .unwrap();
    let roots = text(&roots);
    assert!(roots.contains("file:///srv/project"), "{roots}");
    assert!(roots.contains("project"), "{roots}");

    let sampled = pool
        .call_tool(
            "everything",
            "trigger-sampling-request",
            object_args(json!({"prompt": "the ultimate question"})),
            options(),
        )
        .await
        .unwrap();
    let sampled = text(&sampled);
    assert!(
        sampled.contains("a sampled answer from the handler"),
        "{sampled}"
    );
    assert!(
        llm.prompts.lock().unwrap()[0].contains("the ultimate question"),
        "the handler got the server's prompt"
    );

    let elicited = pool
        .call_tool("everything", "trigger-elicitation-request", None, options())
        .await
        .unwrap();
    let elicited = text(&elicited);
    assert!(elicited.contains("Ada Lovelace"), "{elicited}");
    assert_eq!(
        user.asked.lock().unwrap()[0],
        "everything: Please provide inputs for the following fields:"
    );
    pool.close_all().await;
}

/// The gateway's case: two calls on one connection, each with its own
/// elicitation handler, both waiting on their elicitation at the same time;
/// each server-to-client request reaches the handler of the call that
/// caused it, never the other's or the pool's.
#[tokio::test]
async fn concurrent_calls_each_get_their_own_elicitation() {
    let server = common::everything("streamableHttp").await;
    let spec = ServerSpec::remote("everything", TransportKind::Http, server.url("/mcp"));
    // The pool's handler declares elicitation; a call routed to it would say "pool".
    let pool = pool_with(
        vec![spec],
        with_features(ClientFeatures {
            elicitation: Some(User::named("pool")),
            ..ClientFeatures::default()
        }),
    );
    let both_waiting = Arc::new(tokio::sync::Barrier::new(2));
    let client = |name: &'static str| ClientFeatures {
        elicitation: Some(Arc::new(User {
            name,
            barrier: Some(both_waiting.clone()),
            asked: Mutex::new(Vec::new()),
        })),
        ..ClientFeatures::default()
    };
    let (alice, bob) = tokio::time::timeout(
        Duration::from_secs(90),
        futures::future::join(
            pool.call_tool(
                "everything",
                "trigger-elicitation-request",
                None,
                per_call(client("alice")),
            ),
            pool.call_tool(
                "everything",
                "trigger-elicitation-request",
                None,
                per_call(client("bob")),
            ),
        ),
    )
    .await
    .expect("both calls answered");
    let (alice, bob) = (text(&alice.unwrap()), text(&bob.unwrap()));
    assert!(alice.contains("alice") && !alice.contains("bob"), "{alice}");
    assert!(bob.contains("bob") && !bob.contains("alice"), "{bob}");
    pool.close_all().await;
}

fn input_required_server() -> ServerSpec {
    ServerSpec::stdio("asks", python(), [test_server("input_required.py")])
}

/// Python `mcp` 2.x on 2026-07-28 answers the call with an input-required
/// result (elicitation and roots); the pool answers through the call's
/// handlers and retries, through `call_tool` and `request` alike.
#[tokio::test]
async fn an_input_required_result_is_answered_through_the_calls_handlers_and_retried() {
    // The pool's own handlers would answer "pool"; the call brings its own.
    let pool = pool_with(
        vec![input_required_server()],
        with_features(ClientFeatures {
            elicitation: Some(User::named("pool")),
            roots: Some(Arc::new(Folders(vec![("file:///pool", "pool")]))),
            ..ClientFeatures::default()
        }),
    );
    let user = User::named("Grace");
    let features = ClientFeatures {
        elicitation: Some(user.clone()),
        roots: Some(Arc::new(Folders(vec![("file:///home/grace/src", "src")]))),
        ..ClientFeatures::default()
    };
    let result = pool
        .call_tool("asks", "greet", None, per_call(features.clone()))
        .await
        .unwrap();
    assert_eq!(text(&result), "Hello, Grace! Roots: file:///home/grace/src");
    let info = pool.connection_info("asks").unwrap();
    assert_eq!(
        info.protocol_version, "2026-07-28",
        "the input-required form is the 2026-07-28 one"
    );
    assert_eq!(user.asked.lock().unwrap()[0], "asks: What is your name?");

    // The same loop serves Pool::request; without per-call handlers the
    // pool's answer.
    let request =
        ClientRequest::CallToolRequest(CallToolRequest::new(CallToolRequestParams::new("greet")));
    match pool
        .request("asks", request, &CallOptions::default())
        .await
        .unwrap()
    {
        ServerResult::CallToolResult(result) => {
            assert_eq!(text(&result), "Hello, pool! Roots: file:///pool");
        }
        other => panic!("expected a tools/call result, got {other:?}"),
    }
    pool.close_all().await;
}

/// SEP-2322: input-required state is kept per request. Two calls in flight
/// at once on one 2026-07-28 connection each get input-required results
/// (the Python SDK's `requestState` binds each to its own call); each is
/// answered through its own handlers and retried with its own state, and
/// each result names its own caller.
#[tokio::test]
async fn concurrent_input_required_calls_each_keep_their_own_state() {
    // The pool's handlers declare the capabilities; each call brings its own.
    let pool = pool_with(
        vec![input_required_server()],
        with_features(ClientFeatures {
            elicitation: Some(User::named("pool")),
            roots: Some(Arc::new(Folders(vec![("file:///pool", "pool")]))),
            ..ClientFeatures::default()
        }),
    );
    pool.connect("asks").await.unwrap();
    let caller = |name: &'static str, root: &'static str| {
        per_call(ClientFeatures {
            elicitation: Some(User::named(name)),
            roots: Some(Arc::new(Folders(vec![(root, name)]))),
            ..ClientFeatures::default()
        })
    };
    let (ada, grace) = tokio::time::timeout(
        Duration::from_secs(60),
        futures::future::join(
            pool.call_tool("asks", "greet", None, caller("Ada", "file:///ada")),
            pool.call_tool("asks", "greet", None, caller("Grace", "file:///grace")),
        ),
    )
    .await
    .expect("both calls answered");
    assert_eq!(text(&ada.unwrap()), "Hello, Ada! Roots: file:///ada");
    assert_eq!(text(&grace.unwrap()), "Hello, Grace! Roots: file:///grace");
    pool.close_all().await;
}

/// Roots that change while the servers run.
struct Moving(Mutex<&'static str>);

impl RootsProvider for Moving {
    fn list_roots(
        &self,
        _origin: RequestOrigin,
    ) -> BoxFuture<'_, Result<ListRootsResult, ErrorData>> {
        let uri = *self.0.lock().unwrap();
        Box::pin(async move { Ok(ListRootsResult::new(vec![Root::new(uri)])) })
    }
}

/// server-everything keeps the roots it was given and asks again on
/// `notifications/roots/list_changed`, which `Pool::roots_changed` sends.
#[tokio::test]
async fn roots_changed_makes_running_servers_ask_for_the_roots_again() {
    let roots = Arc::new(Moving(Mutex::new("file:///first")));
    let pool = pool_with(
        vec![everything_stdio("everything")],
        with_features(ClientFeatures {
            roots: Some(roots.clone()),
            ..ClientFeatures::default()
        }),
    );
    let listed = || async {
        let result = pool
            .call_tool("everything", "get-roots-list", None, CallOptions::default())
            .await
            .unwrap();
        text(&result)
    };
    assert!(listed().await.contains("file:///first"));
    *roots.0.lock().unwrap() = "file:///second";
    // Without the notification the server keeps what it had.
    assert!(listed().await.contains("file:///first"));
    pool.roots_changed().await;
    let seen = poll_async(Duration::from_secs(20), || async {
        listed().await.contains("file:///second").then_some(())
    })
    .await;
    assert!(seen.is_some(), "the server never asked again");
    pool.close_all().await;
}

/// Over stdio nothing ties a server's request to a call, but with one call
/// in flight bringing handlers, it can only be that call's.
#[tokio::test]
async fn over_stdio_the_one_call_with_handlers_gets_the_elicitation() {
    let pool = pool_with(
        vec![everything_stdio("everything")],
        with_features(ClientFeatures {
            elicitation: Some(User::named("pool")),
            ..ClientFeatures::default()
        }),
    );
    let caller = ClientFeatures {
        elicitation: Some(User::named("caller")),
        ..ClientFeatures::default()
    };
    let own = pool
        .call_tool(
            "everything",
            "trigger-elicitation-request",
            None,
            per_call(caller),
        )
        .await
        .unwrap();
    assert!(text(&own).contains("Name: caller"), "{}", text(&own));
    // A call without handlers of its own: the pool's.
    let pooled = pool
        .call_tool(
            "everything",
            "trigger-elicitation-request",
            None,
            CallOptions::default(),
        )
        .await
        .unwrap();
    assert!(text(&pooled).contains("Name: pool"), "{}", text(&pooled));
    pool.close_all().await;
}

/// Elicitation: a user who takes a while, answering `after` the question.
struct SlowUser {
    after: Duration,
}

impl ElicitationHandler for SlowUser {
    fn elicit(
        &self,
        _origin: RequestOrigin,
        _params: ElicitRequestParams,
    ) -> BoxFuture<'_, Result<ElicitResult, ErrorData>> {
        Box::pin(async move {
            // The scenario itself: the person reads and types for a while.
            tokio::time::sleep(self.after).await;
            Ok(ElicitResult::new(ElicitationAction::Accept)
                .with_content(json!({"name": "Slow Sam"})))
        })
    }
}

/// Regression: the server's `timeout` limits its silence, and a server
/// waiting for the user's answer is not silent: a call whose elicitation
/// took longer than the timeout to answer timed out while the user typed.
#[tokio::test]
async fn a_server_waiting_for_the_users_answer_does_not_time_the_call_out() {
    let mut spec = everything_stdio("everything");
    spec.timeout = Some(Duration::from_secs(1));
    let pool = pool_with(
        vec![spec],
        with_features(ClientFeatures {
            elicitation: Some(Arc::new(SlowUser {
                after: Duration::from_secs(3),
            })),
            ..ClientFeatures::default()
        }),
    );
    // Started first: the start is not the call.
    pool.connect("everything").await.unwrap();
    let answered = pool
        .call_tool(
            "everything",
            "trigger-elicitation-request",
            None,
            CallOptions::default(),
        )
        .await
        .unwrap();
    assert!(text(&answered).contains("Slow Sam"), "{}", text(&answered));
    pool.close_all().await;
}
