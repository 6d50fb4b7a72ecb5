//! Pinning in the library, against a rug pull written with the Python `mcp`
//! SDK (`tests/servers/rug_pull.py`): what the pool hands out is filtered in
//! one place, so the loader, the adapters' registry and the provider
//! formats all leave the withheld tools out, and a call of one is
//! `PoolError::Withheld`; an approval lets them through and tells the
//! watchers of the server's list.

use crate::common;

use std::path::Path;

use common::{SOON, fixtures::*};
use toolbridge::{
    Format, FormatOptions, NameTable, ToolRegistry,
    config::{ServerSpec, StdioSpec, TransportSpec},
    convert_tools, load_mcp_tools,
    pins::{ChangeKind, PinEvent, PinOptions},
    pool::{CallOptions, Pool, PoolError, PoolOptions},
};

fn rug(switch: &Path) -> ServerSpec {
    let mut spec = ServerSpec::stdio("rug", python(), [test_server("rug_pull.py")]);
    if let TransportSpec::Stdio(StdioSpec { env, .. }) = &mut spec.transport {
        env.insert(
            "RUG_PULL_FILE".into(),
            switch.to_string_lossy().into_owned(),
        );
    }
    spec
}

fn pinned_pool(switch: &Path, pins: &Path, events: std::sync::mpsc::Sender<PinEvent>) -> Pool {
    let mut options = PinOptions::in_dir(pins);
    let events = std::sync::Mutex::new(events);
    options.on_event = Some(std::sync::Arc::new(move |event: &PinEvent| {
        let _ = events.lock().unwrap().send(event.clone());
    }));
    pool_with(
        vec![rug(switch)],
        PoolOptions {
            pins: Some(options),
            ..PoolOptions::default()
        },
    )
}

async fn registry_names(pool: &Pool) -> Vec<String> {
    let mut registry = ToolRegistry::new();
    for adapter in load_mcp_tools(pool, &pool.active_server_names()).await {
        registry.register(adapter).expect("registered");
    }
    let mut names: Vec<String> = registry
        .tools()
        .map(|t| t.mcp_tool().name.clone())
        .collect();
    names.sort();
    names
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_loader_registry_formats_and_calls_leave_a_withheld_tool_out_until_approved() {
    let dir = tempfile::tempdir().expect("tempdir");
    let switch = dir.path().join("pulled");
    let pins = dir.path().join("pins");
    let (tx, events) = std::sync::mpsc::channel();

    // First sight: pinned, all there.
    let first = pinned_pool(&switch, &pins, tx.clone());
    assert_eq!(registry_names(&first).await, ["add", "echo"]);
    assert!(matches!(
        events.try_recv(),
        Ok(PinEvent::FirstPinned { tools: 2, .. })
    ));
    first.close_all().await;

    // The rug is pulled; a new pool (a later run) sees it.
    std::fs::write(&switch, "").expect("pull");
    let pool = pinned_pool(&switch, &pins, tx);
    assert_eq!(registry_names(&pool).await, ["echo"]);
    let withheld = pool.withheld_tools("rug");
    let held: Vec<(&str, ChangeKind)> = withheld
        .iter()
        .map(|w| (w.tool.as_str(), w.change))
        .collect();
    assert_eq!(
        held,
        [
            ("add", ChangeKind::Changed),
            ("send_report", ChangeKind::Added)
        ]
    );
    let seen: Vec<PinEvent> = events.try_iter().collect();
    assert_eq!(seen.len(), 2, "{seen:?}");

    let listing = pool.list_all_active_server_tools().await;
    assert_eq!(listing.withheld, withheld);
    let names = NameTable::for_tools(&listing.tools);
    let openai = convert_tools(
        Format::OpenAi,
        &listing.tools,
        &names,
        &FormatOptions::default(),
    );
    let text = openai.to_string();
    assert!(text.contains("mcp__rug__echo"), "{text}");
    assert!(
        !text.contains("mcp__rug__add") && !text.contains("send_report"),
        "{text}"
    );

    let refused = pool
        .call_tool(
            "rug",
            "add",
            Some(common::args(&[("a", 1.into()), ("b", 2.into())])),
            CallOptions::default(),
        )
        .await;
    match refused {
        Err(PoolError::Withheld(w)) => {
            assert_eq!((w.server.as_str(), w.tool.as_str()), ("rug", "add"));
            let message = PoolError::Withheld(w).to_string();
            assert!(
                message.contains("toolbridge tools approve rug add"),
                "{message}"
            );
        }
        other => panic!("the call of a withheld tool was not refused: {other:?}"),
    }

    // Approval tells the watchers once and lets both through.
    let mut changes = pool.watch_tool_list_changes("rug").expect("watch");
    let approved = pool.approve_tools("rug", &[]).await.expect("approved");
    assert_eq!(approved.len(), 2);
    tokio::time::timeout(SOON, changes.recv())
        .await
        .expect("no list change after the approval")
        .expect("a change");
    assert!(changes.try_recv().is_err(), "told more than once");
    assert_eq!(registry_names(&pool).await, ["add", "echo", "send_report"]);
    let added = pool
        .call_tool(
            "rug",
            "add",
            Some(common::args(&[("a", 1.into()), ("b", 2.into())])),
            CallOptions::default(),
        )
        .await
        .expect("add after the approval");
    assert!(format!("{added:?}").contains('3'), "{added:?}");
    // Approving again approves nothing and tells nobody.
    assert!(
        pool.approve_tools("rug", &[])
            .await
            .expect("nothing")
            .is_empty()
    );
    assert!(changes.try_recv().is_err());
    pool.close_all().await;
}
