//! Prompts and completion (issue 12), against servers nobody here wrote:
//! the conformance suite's reference server (streamable HTTP, one for the
//! whole binary) and server-everything (stdio); the errors for a prompt a
//! server does not list or wrong arguments also against
//! `tests/servers/catalog_server.py`.

use crate::common;

use std::collections::HashMap;

use common::{fixtures::*, reference::reference_url};
use serde_json::json;
use toolbridge::{
    config::{ServerSpec, TransportKind},
    format::flatten::block_text,
    pool::{CallOptions, PoolError},
    rmcp_model::{CompletionContext, ContentBlock, Reference},
};

fn reference(name: &str) -> ServerSpec {
    ServerSpec::remote(name, TransportKind::Http, reference_url())
}

/// `{key: value}` as prompt arguments.
fn arguments(pairs: &[(&str, &str)]) -> Option<serde_json::Map<String, serde_json::Value>> {
    Some(
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), json!(v)))
            .collect(),
    )
}

#[tokio::test]
async fn the_reference_servers_prompts_are_listed_and_got() {
    let pool = pool(vec![reference("ref")]);
    let prompts = pool.list_prompts("ref").await.unwrap();
    let names: Vec<&str> = prompts.iter().map(|p| p.name.as_str()).collect();
    for name in [
        "test_simple_prompt",
        "test_prompt_with_arguments",
        "test_prompt_with_embedded_resource",
        "test_prompt_with_image",
    ] {
        assert!(names.contains(&name), "{name} in {names:?}");
    }
    let with_arguments = prompts
        .iter()
        .find(|p| p.name == "test_prompt_with_arguments")
        .unwrap();
    let declared: Vec<&str> = with_arguments
        .arguments
        .iter()
        .flatten()
        .map(|a| a.name.as_str())
        .collect();
    assert_eq!(declared, ["arg1", "arg2"]);

    let options = CallOptions::default();
    let simple = pool
        .get_prompt("ref", "test_simple_prompt", None, &options)
        .await
        .unwrap();
    let texts: Vec<String> = simple
        .messages
        .iter()
        .map(|m| block_text(&m.content))
        .collect();
    assert_eq!(texts, ["This is a simple prompt for testing."]);

    let filled = pool
        .get_prompt(
            "ref",
            "test_prompt_with_arguments",
            arguments(&[("arg1", "alpha"), ("arg2", "beta")]),
            &options,
        )
        .await
        .unwrap();
    assert_eq!(
        block_text(&filled.messages[0].content),
        "Prompt with arguments: arg1='alpha', arg2='beta'"
    );

    let embedded = pool
        .get_prompt(
            "ref",
            "test_prompt_with_embedded_resource",
            arguments(&[("resourceUri", "test://example")]),
            &options,
        )
        .await
        .unwrap();
    assert!(
        matches!(embedded.messages[0].content, ContentBlock::Resource(_)),
        "{embedded:?}"
    );
    let texts: Vec<String> = embedded
        .messages
        .iter()
        .map(|m| block_text(&m.content))
        .collect();
    assert_eq!(
        texts,
        [
            "[Resource: test://example (text/plain)]\nEmbedded resource content for testing.",
            "Please process the embedded resource above."
        ]
    );

    let image = pool
        .get_prompt("ref", "test_prompt_with_image", None, &options)
        .await
        .unwrap();
    assert_eq!(block_text(&image.messages[0].content), "[Image: image/png]");
    pool.close_all().await;
}

#[tokio::test]
async fn an_unknown_prompt_names_the_servers_prompts() {
    let pool = pool(vec![
        reference("ref"),
        ServerSpec::stdio("cat", python(), [test_server("catalog_server.py")]),
    ]);
    for (server, listed) in [("ref", "test_simple_prompt"), ("cat", "greet")] {
        let error = pool
            .get_prompt(server, "no_such_prompt", None, &CallOptions::default())
            .await
            .unwrap_err();
        assert!(
            matches!(&error, PoolError::UnknownPrompt { prompt, known, .. }
                if prompt == "no_such_prompt" && known.iter().any(|k| k == listed)),
            "{error:?}"
        );
        assert!(error.is_usage());
        assert!(
            error.to_string().starts_with(&format!(
                "server \"{server}\" has no prompt \"no_such_prompt\"; its"
            )),
            "{error}"
        );
    }
    pool.close_all().await;
}

#[tokio::test]
async fn a_prompt_without_its_required_argument_is_refused_as_such() {
    let pool = pool(vec![ServerSpec::stdio(
        "cat",
        python(),
        [test_server("catalog_server.py")],
    )]);
    let error = pool
        .get_prompt("cat", "greet", None, &CallOptions::default())
        .await
        .unwrap_err();
    assert!(
        matches!(error, PoolError::InvalidParams { .. }),
        "{error:?}"
    );
    assert!(error.is_usage());
    assert_eq!(
        error.to_string(),
        "server \"cat\" refused the arguments of prompt \"greet\": Missing required \
         argument: name; check the arguments"
    );
    let greeted = pool
        .get_prompt(
            "cat",
            "greet",
            arguments(&[("name", "Ada")]),
            &CallOptions::default(),
        )
        .await
        .unwrap();
    assert_eq!(block_text(&greeted.messages[0].content), "Hello, Ada!");
    pool.close_all().await;
}

#[tokio::test]
async fn server_everythings_prompts_are_got_with_arguments() {
    let pool = pool(vec![everything_stdio("everything")]);
    let prompts = pool.list_prompts("everything").await.unwrap();
    let names: Vec<&str> = prompts.iter().map(|p| p.name.as_str()).collect();
    assert!(names.contains(&"simple-prompt"), "{names:?}");
    assert!(names.contains(&"args-prompt"), "{names:?}");
    let got = pool
        .get_prompt(
            "everything",
            "args-prompt",
            arguments(&[("city", "Lisbon")]),
            &CallOptions::default(),
        )
        .await
        .unwrap();
    let text = block_text(&got.messages[0].content);
    assert!(text.contains("Lisbon"), "{text}");
    pool.close_all().await;
}

#[tokio::test]
async fn completion_uses_the_other_arguments_as_context() {
    let pool = pool(vec![everything_stdio("everything")]);
    let prompt = Reference::for_prompt("completable-prompt");
    let options = CallOptions::default();
    let departments = pool
        .complete(
            "everything",
            prompt.clone(),
            "department",
            "S",
            None,
            &options,
        )
        .await
        .unwrap();
    assert_eq!(departments.completion.values, ["Sales", "Support"]);
    let context = CompletionContext::with_arguments(HashMap::from([(
        "department".to_owned(),
        "Engineering".to_owned(),
    )]));
    let names = pool
        .complete("everything", prompt, "name", "", Some(context), &options)
        .await
        .unwrap();
    assert_eq!(names.completion.values, ["Alice", "Bob", "Charlie"]);
    pool.close_all().await;
}

#[tokio::test]
async fn the_reference_server_completes_prompt_and_template_arguments() {
    let pool = pool(vec![reference("ref")]);
    let options = CallOptions::default();
    for reference in [
        Reference::for_prompt("test_prompt_with_arguments"),
        Reference::for_resource("test://template/{id}/data"),
    ] {
        let result = pool
            .complete("ref", reference, "arg1", "a", None, &options)
            .await
            .unwrap();
        // The reference server completes nothing, by design.
        assert!(result.completion.values.is_empty(), "{result:?}");
    }
    pool.close_all().await;
}

#[tokio::test]
async fn a_server_without_completion_says_so() {
    let pool = pool(vec![ServerSpec::stdio(
        "cat",
        python(),
        [test_server("catalog_server.py")],
    )]);
    let error = pool
        .complete(
            "cat",
            Reference::for_prompt("greet"),
            "name",
            "A",
            None,
            &CallOptions::default(),
        )
        .await
        .unwrap_err();
    assert!(
        error
            .to_string()
            .starts_with("server \"cat\" offers no argument completion"),
        "{error}"
    );
    pool.close_all().await;
}

#[tokio::test]
async fn a_python_sdk_server_on_2026_07_28_offers_its_resources_and_prompts() {
    let pool = pool(vec![ServerSpec::stdio(
        "py",
        python(),
        [test_server("py_catalog.py")],
    )]);
    let info = pool.connect("py").await.unwrap();
    assert_eq!(info.protocol_version, "2026-07-28");
    let resources = pool.list_resources("py").await.unwrap();
    assert_eq!(resources[0].uri, "note://hello");
    let templates = pool.list_resource_templates("py").await.unwrap();
    assert_eq!(templates[0].uri_template, "note://item/{id}");
    let options = CallOptions::default();
    let read = pool
        .read_resource("py", "note://item/5", &options)
        .await
        .unwrap();
    assert_eq!(
        block_text(&ContentBlock::resource(read.contents[0].clone())),
        "[Resource: note://item/5 (text/plain)]\nitem 5"
    );
    let got = pool
        .get_prompt("py", "review", arguments(&[("code", "x = 1")]), &options)
        .await
        .unwrap();
    assert_eq!(block_text(&got.messages[0].content), "Please review: x = 1");
    // Regression: the Python SDK answers an unknown prompt with -32603
    // "Internal server error", which was a connection error (exit 3).
    let error = pool
        .get_prompt("py", "no_such_prompt", None, &options)
        .await
        .unwrap_err();
    assert!(
        matches!(&error, PoolError::UnknownPrompt { known, .. } if known == &["review"]),
        "{error:?}"
    );
    pool.close_all().await;
}
