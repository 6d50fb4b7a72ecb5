//! Issue 32's eighth finding, as the probe ran it: two real clients through
//! a real `toolbridge serve`, in front of a Python SDK server that asks its
//! client a question after the call that caused it ended
//! (tests/servers/late_asker.py), over stdio and over streamable HTTP.

use crate::common;
use crate::gateway_support;

use std::{
    path::Path,
    sync::{Arc, Mutex},
};

use common::{Listening, deps, tempdir, test_server};
use gateway_support::{Gateway, call_text, write_config};
use rmcp::{
    ClientHandler, RoleClient, ServiceExt as _,
    model::{
        ClientCapabilities, ClientConfig, ElicitRequestParams, ElicitResult, ElicitationAction,
        ElicitationCapability, ErrorData, FormElicitationCapability, Implementation,
    },
    service::{RequestContext, RunningService},
    transport::StreamableHttpClientTransport,
};
use serde_json::{Value, json};

/// A client that answers every question with its own name, and keeps the
/// questions it was asked.
#[derive(Clone)]
struct Answerer {
    name: &'static str,
    asked: Arc<Mutex<Vec<String>>>,
}

impl Answerer {
    fn new(name: &'static str) -> Answerer {
        Answerer {
            name,
            asked: Arc::default(),
        }
    }

    fn asked(&self) -> Vec<String> {
        self.asked.lock().unwrap().clone()
    }
}

impl ClientHandler for Answerer {
    async fn create_elicitation(
        &self,
        params: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let message = match &params {
            ElicitRequestParams::FormElicitationParams { message, .. } => message.clone(),
            other => format!("{other:?}"),
        };
        self.asked.lock().unwrap().push(message);
        let mut result = ElicitResult::new(ElicitationAction::Accept);
        result.content = Some(json!({ "answer": self.name }));
        Ok(result)
    }

    fn get_info(&self) -> ClientConfig {
        let mut elicitation = ElicitationCapability::new();
        elicitation.form = Some(FormElicitationCapability::new());
        let mut capabilities = ClientCapabilities::default();
        capabilities.elicitation = Some(elicitation);
        ClientConfig::new(capabilities, Implementation::new(self.name, "1"))
    }
}

/// The upstream: late_asker.py as a stdio child of the gateway, or
/// listening on streamable HTTP (kept alive by the returned guard).
fn upstream(transport: &str) -> (Value, Option<Listening>) {
    let script = test_server("late_asker.py");
    // The 1.x SDK: it speaks 2025-11-25, where a server asks on the session.
    let python = deps().join("py1/bin/python").to_string_lossy().into_owned();
    match transport {
        "stdio" => (
            json!({ "command": python, "args": [script, "stdio"] }),
            None,
        ),
        _ => {
            let listening = Listening::start(
                &python,
                &[script, "streamable-http".to_owned()],
                &[("PYTHONUNBUFFERED", "1")],
            );
            let url = listening.url("/mcp");
            (json!({ "type": "http", "url": url }), Some(listening))
        }
    }
}

async fn connect(gateway: &Gateway, who: &Answerer) -> RunningService<RoleClient, Answerer> {
    who.clone()
        .serve(StreamableHttpClientTransport::from_uri(gateway.url.clone()))
        .await
        .expect("connect to the gateway")
}

fn mkfifo(path: &Path) {
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0, "mkfifo");
}

/// Client A's call is in flight; client B's call ends; the server then asks
/// B's question naming no call. It must not reach A (the probe saw A get it
/// and A's answer accepted): the server hears -32601.
async fn a_late_question_never_reaches_another_client(transport: &str) {
    let home = tempdir();
    let (spec, _listening) = upstream(transport);
    let config = write_config(home.path(), json!({ "asker": spec }));
    let gateway = Gateway::start_with(&config, home.path(), &[], None);
    let (a, b) = (Answerer::new("a"), Answerer::new("b"));
    let client_a = connect(&gateway, &a).await;
    let client_b = connect(&gateway, &b).await;
    let fifo = home.path().join("go");
    mkfifo(&fifo);

    let fifo_arg = fifo.to_string_lossy().into_owned();
    let holding = tokio::spawn(async move {
        let text = call_text(&client_a, "hold", json!({ "fifo": fifo_arg })).await;
        (client_a, text)
    });
    // ask_late returns only once A's hold runs: A's call is in flight
    // while B's ends.
    assert_eq!(
        call_text(&client_b, "ask_late", json!({})).await,
        "will ask later"
    );
    let writer = fifo.clone();
    tokio::task::spawn_blocking(move || std::fs::write(writer, b"go"))
        .await
        .unwrap()
        .expect("write the FIFO");
    let (client_a, outcome) = holding.await.unwrap();

    assert!(
        outcome.starts_with("refused: -32601"),
        "{transport}: the late question's fate: {outcome}; A was asked {:?}",
        a.asked()
    );
    assert_eq!(a.asked(), Vec::<String>::new(), "{transport}");
    assert_eq!(b.asked(), Vec::<String>::new(), "{transport}");
    client_a.cancel().await.unwrap();
    client_b.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_late_question_over_stdio_never_reaches_another_client() {
    a_late_question_never_reaches_another_client("stdio").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_late_question_over_streamable_http_never_reaches_another_client() {
    a_late_question_never_reaches_another_client("streamable-http").await;
}

/// The other side of the rule (what 9beb2dd restored for streamable HTTP):
/// clients that use the gateway in turn each get and answer the questions
/// of their own calls, however many other clients' calls ended before.
async fn clients_in_turn_answer_their_own_questions(transport: &str) {
    let home = tempdir();
    let (spec, _listening) = upstream(transport);
    let config = write_config(home.path(), json!({ "asker": spec }));
    let gateway = Gateway::start_with(&config, home.path(), &[], None);
    let (a, b) = (Answerer::new("a"), Answerer::new("b"));
    let client_a = connect(&gateway, &a).await;
    let client_b = connect(&gateway, &b).await;
    for (client, name) in [(&client_b, "b"), (&client_a, "a"), (&client_b, "b")] {
        let outcome = call_text(client, "ask_now", json!({ "who": name })).await;
        assert_eq!(
            outcome,
            format!("answered: accept {{\"answer\": \"{name}\"}}"),
            "{transport}: {name}'s own question"
        );
    }
    assert_eq!(a.asked(), ["question for a"], "{transport}");
    assert_eq!(
        b.asked(),
        ["question for b", "question for b"],
        "{transport}"
    );
    client_a.cancel().await.unwrap();
    client_b.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clients_in_turn_answer_their_own_questions_over_stdio() {
    clients_in_turn_answer_their_own_questions("stdio").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clients_in_turn_answer_their_own_questions_over_streamable_http() {
    clients_in_turn_answer_their_own_questions("streamable-http").await;
}
