//! `toolbridge tools search QUERY` against real servers (the example server
//! and server-everything): the best tools first, in the format asked for,
//! under the names `tools --format` gives them; `--limit` and `--server`;
//! a query matching nothing prints `[]` and succeeds; a tool the config
//! leaves out (`disabledTools`) is never found; an empty query is a usage
//! error. `tools --defer-loading` puts the provider's search tool first,
//! and `exec` answers the model's client-side searches.

use crate::common;

use common::*;
use serde_json::{Value, json};

fn sandbox() -> Sandbox {
    let sandbox = Sandbox::new();
    sandbox.write_config(&json!({"mcpServers": {
        "example": {"command": toolbridge(), "args": ["example-server"]},
        "everything": {"command": "node", "args": [everything_js(), "stdio"]},
    }}));
    sandbox
}

fn parsed(run: &Run) -> Vec<Value> {
    assert_eq!(run.code, Some(0), "{run:?}");
    serde_json::from_str::<Vec<Value>>(&run.stdout).expect("a JSON array")
}

#[test]
fn the_best_tools_come_first_in_the_format_asked_for() {
    let home = sandbox();
    let tools = parsed(&home.run(&["tools", "search", "add", "two", "numbers"]));
    assert!(!tools.is_empty() && tools.len() <= 5, "{tools:?}");
    assert_eq!(tools[0]["serverId"], "everything");
    assert_eq!(tools[0]["name"], "get-sum");
    let scores: Vec<f64> = tools.iter().map(|t| t["score"].as_f64().unwrap()).collect();
    assert!(scores.windows(2).all(|w| w[0] >= w[1]), "{scores:?}");
    assert!(scores.iter().all(|s| *s > 0.0));

    let anthropic = parsed(&home.run(&[
        "tools",
        "search",
        "greet someone by name",
        "--format",
        "anthropic",
        "--limit",
        "1",
    ]));
    assert_eq!(anthropic.len(), 1);
    assert_eq!(anthropic[0]["name"], "mcp__example__hello");
    assert!(anthropic[0]["input_schema"]["properties"]["name"].is_object());
    // The same name the full listing gives it.
    let all = parsed(&home.run(&["tools", "--format", "anthropic"]));
    assert!(all.iter().any(|t| t["name"] == "mcp__example__hello"));

    let gemini: Value = serde_json::from_str(
        &home
            .run(&["tools", "search", "echo a message", "--format", "gemini"])
            .stdout,
    )
    .unwrap();
    assert!(
        gemini[0]["functionDeclarations"]
            .as_array()
            .is_some_and(|d| !d.is_empty())
    );
}

#[test]
fn server_limits_the_search_to_those_servers() {
    let home = sandbox();
    let tools = parsed(&home.run(&["tools", "search", "echo", "--server", "example"]));
    assert!(!tools.is_empty());
    assert!(
        tools.iter().all(|t| t["serverId"] == "example"),
        "{tools:?}"
    );
    let tools = parsed(&home.run(&["tools", "search", "echo", "--server", "everything"]));
    assert!(
        tools.iter().all(|t| t["serverId"] == "everything"),
        "{tools:?}"
    );
}

#[test]
fn no_match_is_an_empty_list_and_an_empty_query_a_usage_error() {
    let home = sandbox();
    let run = home.run(&["tools", "search", "zebra xylophone quasar"]);
    assert_eq!(parsed(&run), Vec::<Value>::new());
    let run = home.run(&["tools", "search", " "]);
    assert_eq!(run.code, Some(2), "{run:?}");
    assert!(run.stderr.contains("the query is empty"), "{}", run.stderr);
}

#[test]
fn a_tool_the_config_leaves_out_is_never_found() {
    let home = Sandbox::new();
    home.write_config(&json!({"mcpServers": {
        "everything": {"command": "node", "args": [everything_js(), "stdio"],
                       "disabledTools": ["get-sum"]},
        "control": {"command": "node", "args": [everything_js(), "stdio"]},
    }}));
    let tools = parsed(&home.run(&["tools", "search", "add two numbers", "--limit", "20"]));
    let found: Vec<String> = tools
        .iter()
        .map(|t| {
            format!(
                "{}/{}",
                t["serverId"].as_str().unwrap(),
                t["name"].as_str().unwrap()
            )
        })
        .collect();
    assert!(found.contains(&"control/get-sum".to_owned()), "{found:?}");
    assert!(
        !found.contains(&"everything/get-sum".to_owned()),
        "{found:?}"
    );
}

#[test]
fn defer_loading_puts_the_providers_search_tool_first() {
    let home = sandbox();
    let anthropic = parsed(&home.run(&["tools", "--format", "anthropic", "--defer-loading"]));
    assert_eq!(
        anthropic[0],
        json!({"type": "tool_search_tool_bm25_20251119", "name": "tool_search_tool_bm25"})
    );
    assert!(anthropic.len() > 10);
    assert!(
        anthropic[1..].iter().all(|t| t["defer_loading"] == true),
        "{anthropic:?}"
    );

    let responses = parsed(&home.run(&[
        "tools",
        "--format",
        "openai-responses",
        "--defer-loading",
        "client",
    ]));
    assert_eq!(responses[0]["type"], "tool_search");
    assert_eq!(responses[0]["execution"], "client");
    assert!(
        responses[1..]
            .iter()
            .all(|t| t["type"] == "function" && t["defer_loading"] == true)
    );

    for (format, says) in [
        ("openai", "openai-responses"),
        ("gemini", "Interactions API"),
    ] {
        let run = home.run(&["tools", "--format", format, "--defer-loading"]);
        assert_eq!(run.code, Some(2), "{run:?}");
        assert!(run.stderr.contains(says), "{}", run.stderr);
    }
}

#[test]
fn exec_answers_the_models_client_side_searches() {
    let home = sandbox();
    // Anthropic: a search of toolbridge's own search tool, a call of a real
    // tool, and a search Anthropic ran itself (nothing to answer).
    let response = json!({"role": "assistant", "content": [
        {"type": "server_tool_use", "id": "srvtoolu_1", "name": "tool_search_tool_bm25",
         "input": {"query": "time"}},
        {"type": "tool_use", "id": "toolu_1", "name": "search_tools",
         "input": {"query": "greet someone by name"}},
        {"type": "tool_use", "id": "toolu_2", "name": "mcp__example__hello", "input": {"name": "Ada"}}
    ]});
    let out = output_with_stdin(
        &mut home.command(&["exec", "--format", "anthropic"]),
        response.to_string().as_bytes(),
    );
    let run = Run::from(out);
    assert_eq!(run.code, Some(0), "{run:?}");
    let message: Value = serde_json::from_str(&run.stdout).unwrap();
    let blocks = message["content"].as_array().unwrap();
    assert_eq!(blocks.len(), 2, "{message}");
    let hello = blocks
        .iter()
        .find(|b| b["tool_use_id"] == "toolu_2")
        .unwrap();
    assert!(hello.to_string().contains("Ada"), "{hello}");
    let search = blocks
        .iter()
        .find(|b| b["tool_use_id"] == "toolu_1")
        .unwrap();
    assert_eq!(search["type"], "tool_result");
    assert_eq!(
        search["content"][0],
        json!({"type": "tool_reference", "tool_name": "mcp__example__hello"})
    );

    // Responses: a client search gets the definitions found.
    let response = json!({"output": [
        {"type": "tool_search_call", "id": "ts_1", "call_id": "call_9", "execution": "client",
         "arguments": {"query": "greet someone by name"}, "status": "completed"}
    ]});
    let run = Run::from(output_with_stdin(
        &mut home.command(&["exec", "--format", "openai-responses"]),
        response.to_string().as_bytes(),
    ));
    assert_eq!(run.code, Some(0), "{run:?}");
    let items: Vec<Value> = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(items.len(), 1, "{items:?}");
    assert_eq!(items[0]["type"], "tool_search_output");
    assert_eq!(items[0]["call_id"], "call_9");
    assert_eq!(items[0]["tools"][0]["name"], "mcp__example__hello");
    assert_eq!(items[0]["tools"][0]["type"], "function");
}
