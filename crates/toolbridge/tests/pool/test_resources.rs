//! Resources (issue 12): listing (all pages), templates, reading text and
//! blobs, subscriptions and their updates, against servers nobody here
//! wrote: the conformance suite's reference server (streamable HTTP, one
//! for the whole binary) and server-everything (stdio). The cache and its
//! invalidation by `notifications/resources/list_changed`, pages and the
//! listing bounds use `tests/servers/catalog_server.py`, since no
//! third-party server sends them.

use crate::common;

use base64::Engine as _;
use common::{SOON, fixtures::*, reference::reference_url};
use toolbridge::{
    config::{ServerSpec, StdioSpec, TransportKind, TransportSpec},
    pool::{CallOptions, Feature, PoolError},
    rmcp_model::ResourceContents,
};

/// The conformance reference server, as server `name`.
fn reference(name: &str) -> ServerSpec {
    ServerSpec::remote(name, TransportKind::Http, reference_url())
}

/// `catalog_server.py` as server `name`, with `env`.
fn catalog(name: &str, env: &[(&str, &str)]) -> ServerSpec {
    let mut spec = ServerSpec::stdio(name, python(), [test_server("catalog_server.py")]);
    if let TransportSpec::Stdio(StdioSpec { env: e, .. }) = &mut spec.transport {
        for (k, v) in env {
            e.insert((*k).to_owned(), (*v).to_owned());
        }
    }
    spec
}

fn uris(resources: &[toolbridge::rmcp_model::Resource]) -> Vec<String> {
    resources.iter().map(|r| r.uri.clone()).collect()
}

#[tokio::test]
async fn the_reference_servers_resources_and_templates_are_listed() {
    let pool = pool(vec![reference("ref")]);
    let resources = pool.list_resources("ref").await.unwrap();
    let listed = uris(&resources);
    for uri in [
        "test://static-text",
        "test://static-binary",
        "test://watched-resource",
    ] {
        assert!(listed.iter().any(|u| u == uri), "{uri} in {listed:?}");
    }
    let text = resources
        .iter()
        .find(|r| r.uri == "test://static-text")
        .unwrap();
    assert_eq!(text.mime_type.as_deref(), Some("text/plain"));
    let templates = pool.list_resource_templates("ref").await.unwrap();
    let template = templates
        .iter()
        .find(|t| t.uri_template == "test://template/{id}/data")
        .unwrap_or_else(|| panic!("the template in {templates:?}"));
    assert_eq!(template.mime_type.as_deref(), Some("application/json"));
    pool.close_all().await;
}

#[tokio::test]
async fn text_and_binary_resources_are_read_from_the_reference_server() {
    let pool = pool(vec![reference("ref")]);
    let options = CallOptions::default();
    let text = pool
        .read_resource("ref", "test://static-text", &options)
        .await
        .unwrap();
    match &text.contents[..] {
        [ResourceContents::TextResourceContents { text, uri, .. }] => {
            assert_eq!(uri, "test://static-text");
            assert_eq!(text, "This is the content of the static text resource.");
        }
        other => panic!("one text content, got {other:?}"),
    }
    let binary = pool
        .read_resource("ref", "test://static-binary", &options)
        .await
        .unwrap();
    match &binary.contents[..] {
        [
            ResourceContents::BlobResourceContents {
                blob, mime_type, ..
            },
        ] => {
            assert_eq!(mime_type.as_deref(), Some("image/png"));
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(blob)
                .unwrap();
            assert!(bytes.starts_with(b"\x89PNG"), "a PNG");
        }
        other => panic!("one blob content, got {other:?}"),
    }
    // A resource of the template, filled in.
    let filled = pool
        .read_resource("ref", "test://template/7/data", &options)
        .await
        .unwrap();
    match &filled.contents[..] {
        [ResourceContents::TextResourceContents { text, .. }] => {
            assert!(text.contains("Data for ID: 7"), "{text}");
        }
        other => panic!("one text content, got {other:?}"),
    }
    pool.close_all().await;
}

#[tokio::test]
async fn an_unknown_resource_is_a_usage_error_naming_the_server_and_uri() {
    let pool = pool(vec![reference("ref"), catalog("cat", &[])]);
    for server in ["ref", "cat"] {
        let error = pool
            .read_resource(server, "test://no-such-thing", &CallOptions::default())
            .await
            .unwrap_err();
        assert!(
            matches!(&error, PoolError::UnknownResource { uri, .. } if uri == "test://no-such-thing"),
            "{error:?}"
        );
        assert!(error.is_usage());
        let message = error.to_string();
        assert!(
            message.starts_with(&format!(
                "server \"{server}\" has no resource \"test://no-such-thing\""
            )),
            "{message}"
        );
    }
    pool.close_all().await;
}

#[tokio::test]
async fn subscribing_and_unsubscribing_on_the_reference_server_succeed() {
    let pool = pool(vec![reference("ref")]);
    pool.subscribe_resource("ref", "test://watched-resource")
        .await
        .unwrap();
    pool.unsubscribe_resource("ref", "test://watched-resource")
        .await
        .unwrap();
    pool.close_all().await;
}

#[tokio::test]
async fn a_subscribed_resource_reports_its_updates_from_server_everything() {
    let pool = pool(vec![everything_stdio("everything")]);
    let uri = "demo://resource/dynamic/text/1";
    let mut updates = pool.watch_resource_updates("everything").unwrap();
    pool.subscribe_resource("everything", uri).await.unwrap();
    // Starts the server's updates of the resources subscribed to; it sends
    // the first at once.
    pool.call_tool(
        "everything",
        "toggle-subscriber-updates",
        None,
        CallOptions::default(),
    )
    .await
    .unwrap();
    let update = tokio::time::timeout(SOON, updates.recv())
        .await
        .expect("an update within SOON")
        .unwrap();
    assert_eq!(update.uri, uri);
    pool.unsubscribe_resource("everything", uri).await.unwrap();
    pool.close_all().await;
}

#[tokio::test]
async fn a_server_without_subscriptions_says_so() {
    let pool = pool(vec![catalog("cat", &[])]);
    let error = pool
        .subscribe_resource("cat", "file:///r/0.txt")
        .await
        .unwrap_err();
    assert!(
        matches!(
            error,
            PoolError::NotOffered {
                feature: Feature::ResourceSubscriptions,
                ..
            }
        ),
        "{error:?}"
    );
    assert!(
        error
            .to_string()
            .starts_with("server \"cat\" offers no resource subscriptions"),
        "{error}"
    );
    pool.close_all().await;
}

#[tokio::test]
async fn resources_come_in_pages_and_stay_cached_until_the_server_says_they_changed() {
    let pool = pool(vec![catalog(
        "cat",
        &[("RESOURCES", "5"), ("PAGE_SIZE", "2")],
    )]);
    let listings = |pool: &toolbridge::Pool| {
        pool.stderr_tail("cat")
            .unwrap_or_default()
            .lines()
            .filter(|l| l.starts_with("LIST resources"))
            .count()
    };
    let first = pool.list_resources("cat").await.unwrap();
    assert_eq!(
        uris(&first),
        (0..5)
            .map(|i| format!("file:///r/{i}.txt"))
            .collect::<Vec<_>>()
    );
    // Three pages of two, one request each.
    assert!(
        wait_until(SOON, || listings(&pool) == 3),
        "{:?}",
        pool.stderr_tail("cat")
    );
    // The second listing is the cached one.
    let again = pool.list_resources("cat").await.unwrap();
    assert!(std::sync::Arc::ptr_eq(&first, &again));
    assert!(pool.list_prompts("cat").await.unwrap().len() == 1);
    // The server adds a resource and a prompt, and says so before it answers.
    pool.call_tool("cat", "add", None, CallOptions::default())
        .await
        .unwrap();
    let resources = pool.list_resources("cat").await.unwrap();
    assert!(
        uris(&resources).contains(&"file:///r/added.txt".to_owned()),
        "{:?}",
        uris(&resources)
    );
    let prompts = pool.list_prompts("cat").await.unwrap();
    assert!(prompts.iter().any(|p| p.name == "added"), "{prompts:?}");
    pool.close_all().await;
}

#[tokio::test]
async fn a_server_that_offers_no_resources_says_so_and_lists_none_among_others() {
    let pool = pool(vec![
        catalog("tools", &[("MODE", "tools-only")]),
        catalog("cat", &[]),
    ]);
    let error = pool.list_resources("tools").await.unwrap_err();
    assert!(error.is_usage(), "{error:?}");
    assert!(
        error
            .to_string()
            .starts_with("server \"tools\" offers no resources"),
        "{error}"
    );
    let error = pool.list_prompts("tools").await.unwrap_err();
    assert!(
        error
            .to_string()
            .starts_with("server \"tools\" offers no prompts"),
        "{error}"
    );
    let servers = ["tools".to_owned(), "cat".to_owned()];
    let listing = pool.list_resources_of(&servers).await;
    assert!(listing.failures.is_empty(), "{:?}", listing.failures);
    let counts: Vec<(String, usize)> = listing
        .servers
        .iter()
        .map(|(server, items)| (server.clone(), items.len()))
        .collect();
    assert_eq!(counts, [("tools".to_owned(), 0), ("cat".to_owned(), 5)]);
    let prompts = pool.list_prompts_of(&servers).await;
    assert!(prompts.failures.is_empty(), "{:?}", prompts.failures);
    pool.close_all().await;
}

#[tokio::test]
async fn a_resource_list_that_never_ends_is_stopped() {
    let pool = pool(vec![catalog("loop", &[("MODE", "endless")])]);
    let error = pool.list_resources("loop").await.unwrap_err();
    assert!(
        matches!(
            error,
            PoolError::EndlessListing {
                list: "resource",
                ..
            }
        ),
        "{error:?}"
    );
    assert!(
        error
            .to_string()
            .contains("its resource list does not end (page 2 points back"),
        "{error}"
    );
    // All servers: a failure of that one.
    let listing = pool.list_resources_of(&["loop".to_owned()]).await;
    assert_eq!(listing.failures.len(), 1);
    pool.close_all().await;
}

#[tokio::test]
async fn a_read_that_times_out_names_the_request_and_is_a_timeout() {
    let pool = pool(vec![catalog("cat", &[])]);
    // Started first: the bound is for the request.
    pool.connect("cat").await.unwrap();
    let options = CallOptions {
        timeout: Some(std::time::Duration::from_millis(300)),
        ..CallOptions::default()
    };
    let error = pool
        .read_resource("cat", "file:///r/silent", &options)
        .await
        .unwrap_err();
    assert!(error.is_timeout(), "{error:?}");
    // Regression: it said "listing tools on server \"cat\" timed out".
    assert!(
        error.to_string().starts_with(
            "resources/read request to server \"cat\" timed out after 0.3 s; the server was \
             told to cancel it"
        ),
        "{error}"
    );
    pool.close_all().await;
}

#[tokio::test]
async fn subscriptions_are_renewed_when_the_server_restarts() {
    let pool = pool(vec![everything_stdio("everything")]);
    let uri = "demo://resource/dynamic/text/2";
    let mut updates = pool.watch_resource_updates("everything").unwrap();
    pool.subscribe_resource("everything", uri).await.unwrap();
    // A new process, which knows nothing of the subscription.
    pool.close("everything").await;
    pool.call_tool(
        "everything",
        "toggle-subscriber-updates",
        None,
        CallOptions::default(),
    )
    .await
    .unwrap();
    // The new process reports the resource (at once if the renewal came
    // first, else on its next round, 5 s later): the same watcher hears it.
    let update = tokio::time::timeout(SOON, updates.recv())
        .await
        .expect("an update within SOON")
        .unwrap();
    assert_eq!(update.uri, uri);
    pool.close_all().await;
}
