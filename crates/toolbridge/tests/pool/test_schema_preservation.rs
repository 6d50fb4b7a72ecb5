//! JSON Schema 2020-12 as the server sent it (SEP-1613, SEP-2106): the MCP
//! tool model keeps a tool's `inputSchema` exactly, `$ref` not dereferenced
//! and every keyword kept, whether the list came from the server or from the
//! disk cache of an earlier run; the provider formats still get what they
//! accept. The server is the Python `mcp` 2.x SDK's low-level one
//! (`tests/servers/schema_2020_12.py`), which sends the schema as written.

use crate::common;

use common::fixtures::*;
use serde_json::Value;
use toolbridge::{
    config::ServerSpec,
    format::{Format, FormatOptions, NameTable, convert_tools},
    pool::{PoolOptions, ToolCacheOptions},
};

fn server() -> ServerSpec {
    ServerSpec::stdio("contacts", python(), [test_server("schema_2020_12.py")])
}

/// The schema the server lists, from the server's own file.
fn fixture() -> Value {
    let output = std::process::Command::new(python())
        .args([test_server("schema_2020_12.py"), "--print-schema".into()])
        .output()
        .expect("run the server's --print-schema");
    serde_json::from_slice(&output.stdout).expect("the fixture is JSON")
}

/// Whether `key` is a key anywhere in `value`.
fn has_key(value: &Value, key: &str) -> bool {
    match value {
        Value::Object(map) => map.iter().any(|(k, v)| k == key || has_key(v, key)),
        Value::Array(items) => items.iter().any(|v| has_key(v, key)),
        _ => false,
    }
}

#[tokio::test]
async fn a_2020_12_schema_is_kept_as_sent_from_the_server_and_from_the_disk_cache() {
    let dir = tempdir();
    let options = || PoolOptions {
        tool_cache: Some(ToolCacheOptions::in_dir(dir.path().join("cache"))),
        ..PoolOptions::default()
    };
    let expected = fixture();
    let first = pool_with(vec![server()], options());
    let listed = first.list_server_tools("contacts").await.unwrap();
    assert_eq!(Value::Object((*listed[0].input_schema).clone()), expected);
    first.close_all().await;

    let next = pool_with(vec![server()], options());
    let cached = next.list_server_tools("contacts").await.unwrap();
    assert!(
        next.connection_info("contacts").is_none(),
        "the list came from the disk, not the server"
    );
    assert_eq!(Value::Object((*cached[0].input_schema).clone()), expected);

    // The MCP format shows it whole; Gemini's OpenAPI subset has no `$ref`
    // (inlined) and no `$defs`.
    let names = NameTable::for_tools(&cached);
    let plain = FormatOptions::default();
    let mcp = convert_tools(Format::Mcp, &cached, &names, &plain);
    assert_eq!(mcp[0]["inputSchema"], expected, "{mcp}");
    let gemini = convert_tools(Format::Gemini, &cached, &names, &plain);
    assert!(
        !has_key(&gemini, "$ref") && !has_key(&gemini, "$defs"),
        "{gemini}"
    );
    next.close_all().await;
}
