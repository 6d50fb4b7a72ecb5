//! Golden tests: the real tool lists of pinned third-party MCP servers
//! (captured by `scripts/capture-tool-fixtures.sh` into `tests/fixtures/`),
//! converted to every format, compared byte for byte with the expected
//! outputs in `tests/fixtures/golden/`.
//!
//! After an intended change, regenerate the expected outputs with
//! `UPDATE_GOLDEN=1 cargo test -p toolbridge --test formats format_golden::` and review
//! the diff.

use serde_json::Value;
use std::path::{Path, PathBuf};
use toolbridge::format::{Format, FormatOptions, NameTable, check, convert_tools};
use toolbridge::tools::McpTool;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

/// The tools of a captured server, as the pool would model them.
fn load(fixture: &str, server_id: &str) -> Vec<McpTool> {
    let path = fixtures().join(format!("{fixture}.tools.json"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e}; run scripts/capture-tool-fixtures.sh",
            path.display()
        )
    });
    let mut captured: Value = serde_json::from_str(&text).expect("fixture is JSON");
    // As the transport does for a live listing: rmcp's `Tool` has no
    // `execution`, so it travels in `_meta`.
    toolbridge::tools::keep_execution(&mut captured);
    let server_name = captured["serverInfo"]["name"].as_str().unwrap_or(server_id);
    let tools: Vec<rmcp::model::Tool> =
        serde_json::from_value(captured["tools"].clone()).expect("fixture tools are MCP tools");
    assert!(!tools.is_empty(), "{fixture}: no tools captured");
    tools
        .iter()
        .map(|t| McpTool::from_rmcp(server_id, server_name, t))
        .collect()
}

/// Compares `actual` with the golden file `name`, or rewrites it when
/// `UPDATE_GOLDEN` is set.
fn golden(name: &str, actual: &Value) {
    let path = fixtures().join("golden").join(name);
    let actual = serde_json::to_string_pretty(actual).expect("serializable") + "\n";
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::create_dir_all(path.parent().expect("has a parent")).expect("create golden dir");
        std::fs::write(&path, &actual).expect("write golden file");
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e}; run UPDATE_GOLDEN=1 cargo test -p toolbridge --test formats format_golden::",
            path.display()
        )
    });
    if expected != actual {
        let line = expected
            .lines()
            .zip(actual.lines())
            .position(|(e, a)| e != a)
            .unwrap_or_else(|| expected.lines().count().min(actual.lines().count()));
        panic!(
            "{name} differs from {} at line {}:\n  expected: {}\n  actual:   {}\n\
             if the change is intended, run UPDATE_GOLDEN=1 cargo test -p toolbridge --test formats format_golden::",
            path.display(),
            line + 1,
            expected.lines().nth(line).unwrap_or("<end>"),
            actual.lines().nth(line).unwrap_or("<end>"),
        );
    }
}

fn all_formats(fixture: &str, server_id: &str) {
    let tools = load(fixture, server_id);
    let names = NameTable::for_tools(&tools);
    let plain = FormatOptions::default();
    let strict = FormatOptions {
        strict: true,
        gemini_json_schema: true,
    };
    for format in Format::ALL {
        golden(
            &format!("{fixture}.{format}.json"),
            &convert_tools(format, &tools, &names, &plain),
        );
    }
    for format in [Format::OpenAi, Format::OpenAiResponses] {
        golden(
            &format!("{fixture}.{format}.strict.json"),
            &convert_tools(format, &tools, &names, &strict),
        );
    }
    golden(
        &format!("{fixture}.gemini.json-schema.json"),
        &convert_tools(Format::Gemini, &tools, &names, &strict),
    );
    let report = serde_json::to_value(check(&tools, &names, &plain)).expect("serializable");
    golden(&format!("{fixture}.check.json"), &report);
}

#[test]
fn server_everything() {
    all_formats("server-everything", "everything");
}

#[test]
fn server_filesystem() {
    all_formats("server-filesystem", "filesystem");
}

/// Issue 11 item 6: the MCP output keeps what the server said about each
/// tool (title, annotations, outputSchema, execution), and the tool that
/// can only run as a task (server-everything's `simulate-research-query`)
/// is left out of every provider format, with a note in `--check`.
#[test]
fn the_tool_model_keeps_every_field_and_task_only_tools_stay_out_of_providers() {
    let tools = load("server-everything", "everything");
    let names = NameTable::for_tools(&tools);
    let options = FormatOptions::default();
    let mcp = convert_tools(Format::Mcp, &tools, &names, &options);
    let by_name = |name: &str| {
        mcp.as_array()
            .expect("array")
            .iter()
            .find(|t| t["name"] == name)
            .cloned()
            .unwrap_or_else(|| panic!("{name} missing from the MCP output"))
    };
    let echo = by_name("echo");
    assert_eq!(echo["title"], "Echo Tool");
    assert_eq!(echo["annotations"]["readOnlyHint"], true);
    assert_eq!(echo["annotations"]["destructiveHint"], false);
    assert_eq!(echo["execution"]["taskSupport"], "forbidden");
    let structured = by_name("get-structured-content");
    assert_eq!(structured["outputSchema"]["type"], "object");
    let research = by_name("simulate-research-query");
    assert_eq!(research["execution"]["taskSupport"], "required");
    for format in [
        Format::OpenAi,
        Format::OpenAiResponses,
        Format::Anthropic,
        Format::Gemini,
    ] {
        let text = convert_tools(format, &tools, &names, &options).to_string();
        assert!(text.contains("get-structured-content"), "{format}");
        assert!(
            !text.contains("simulate-research-query"),
            "{format}: {text}"
        );
    }
    let report = serde_json::to_value(check(&tools, &names, &options)).expect("serializable");
    let research = report["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .find(|t| t["tool"] == "simulate-research-query")
        .expect("checked");
    for provider in research["providers"].as_array().expect("providers") {
        assert_eq!(provider["changes"][0]["kind"], "leftOut", "{provider}");
    }
}

/// What the golden files must show, stated directly so a careless
/// `UPDATE_GOLDEN=1` cannot bless a regression.
#[test]
fn real_schemas_meet_each_providers_rules() {
    let mut tools = load("server-everything", "everything");
    tools.extend(load("server-filesystem", "filesystem"));
    let names = NameTable::for_tools(&tools);
    let strict = FormatOptions {
        strict: true,
        ..FormatOptions::default()
    };

    // Every real tool of both servers can be sent strict to OpenAI.
    let chat = convert_tools(Format::OpenAi, &tools, &names, &strict);
    let chat = chat.as_array().expect("array");
    // All but the one that can only be called as a task.
    assert_eq!(chat.len(), tools.len() - 1);
    for t in chat {
        assert_eq!(t["function"]["strict"], true, "{}", t["function"]["name"]);
    }

    // Gemini gets no $schema, no format uri, and no-argument tools have no parameters.
    let gemini = convert_tools(Format::Gemini, &tools, &names, &FormatOptions::default());
    let text = gemini.to_string();
    assert!(!text.contains("$schema"));
    assert!(!text.contains("\"format\":\"uri\""));
    let decls = gemini[0]["functionDeclarations"]
        .as_array()
        .expect("declarations");
    let get_env = decls
        .iter()
        .find(|d| d["name"] == "mcp__everything__get-env")
        .expect("get-env is declared");
    assert!(get_env.get("parameters").is_none());

    // Every name maps back to its own server.
    for t in &tools {
        let name = names.name_for(t);
        let back = names.resolve(&name).expect("name resolves");
        assert_eq!(
            (back.server_id.as_str(), back.tool.as_str()),
            (t.server_id.as_str(), t.name.as_str())
        );
    }
}
