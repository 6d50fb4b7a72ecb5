//! Deferred loading: every tool definition goes in the request marked
//! `defer_loading: true`, beside the provider's tool search tool, and the
//! model sees only the definitions its searches load. Two providers
//! document it (looked up December 2026):
//!
//! - Anthropic Messages: a tool search tool, `{"type":
//!   "tool_search_tool_bm25_20251119", "name": "tool_search_tool_bm25"}`
//!   (natural-language queries) or `{"type":
//!   "tool_search_tool_regex_20251119", "name": "tool_search_tool_regex"}`
//!   (Python regular expressions), run by Anthropic: the client does
//!   nothing for it (its `server_tool_use` and `tool_search_tool_result`
//!   blocks are not calls). Or a search of the client's own ("custom tool
//!   search"): an ordinary tool whose `tool_result` holds `{"type":
//!   "tool_reference", "tool_name": NAME}` blocks, which load those
//!   deferred tools.
//! - OpenAI Responses (gpt-5.4 and later): `{"type": "tool_search"}`, run by
//!   OpenAI, or `{"type": "tool_search", "execution": "client",
//!   "description", "parameters"}`, whose `tool_search_call` items the
//!   client answers with a `tool_search_output` item carrying the loaded
//!   definitions in `tools`. Chat Completions has no tool search.
//! - Gemini: Tool Retrieval (`tool_search` with `defer_loading`) is in the
//!   Interactions API only, in preview; `generateContent`, which
//!   toolbridge's Gemini format is, has none.
//!
//! [`convert_deferred`] writes the definitions; [`search_calls`] reads the
//! searches a client must answer, and [`anthropic_references`] and
//! [`responses_search_output`] write the answers.

use std::{fmt, str::FromStr};

use serde_json::{Value, json};

use super::{
    calls::list,
    dispatch::convert_tools,
    names::NameTable,
    options::{Format, FormatOptions},
};
use crate::tools::McpTool;

/// The name of toolbridge's own search tool in client mode, for
/// Anthropic (the Responses API's client search tool has no name).
pub const CLIENT_SEARCH_TOOL: &str = "search_tools";

/// Who runs the searches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SearchMode {
    /// The provider (Anthropic's BM25 variant; OpenAI's hosted search).
    #[default]
    Server,
    /// The provider, with regular expressions (Anthropic only).
    Regex,
    /// The client: `toolbridge exec` answers the model's searches.
    Client,
}

impl FromStr for SearchMode {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "server" | "bm25" => Ok(SearchMode::Server),
            "regex" => Ok(SearchMode::Regex),
            "client" => Ok(SearchMode::Client),
            _ => Err(format!(
                "unknown tool search `{s}`; use server, regex or client"
            )),
        }
    }
}

impl fmt::Display for SearchMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            SearchMode::Server => "server",
            SearchMode::Regex => "regex",
            SearchMode::Client => "client",
        })
    }
}

/// A format that has no deferred loading (of that kind).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{format} has no deferred tool loading{detail}")]
pub struct Unsupported {
    /// The format asked for.
    pub format: Format,
    /// What to use instead.
    detail: &'static str,
}

/// Whether `format` offers deferred loading with `search`.
pub fn supports(format: Format, search: SearchMode) -> Result<(), Unsupported> {
    let detail = match (format, search) {
        (Format::Anthropic, _) => return Ok(()),
        (Format::OpenAiResponses, SearchMode::Server | SearchMode::Client) => return Ok(()),
        (Format::OpenAiResponses, SearchMode::Regex) => {
            " with regular expressions (Anthropic's only); use server or client"
        }
        (Format::OpenAi, _) => {
            ": OpenAI's tool search is in the Responses API; use --format openai-responses"
        }
        (Format::Gemini, _) => {
            ": Gemini's Tool Retrieval is in its Interactions API (preview), not generateContent; \
             use `toolbridge tools search` to send fewer tools"
        }
        (Format::Mcp, _) => {
            ": it is a provider's request option; use anthropic or openai-responses"
        }
    };
    Err(Unsupported { format, detail })
}

/// `tools` in `format` with deferred loading: the provider's search tool
/// (or toolbridge's, with [`SearchMode::Client`]) first, then every tool
/// marked `defer_loading: true`.
pub fn convert_deferred(
    format: Format,
    tools: &[McpTool],
    names: &NameTable,
    options: &FormatOptions,
    search: SearchMode,
) -> Result<Value, Unsupported> {
    supports(format, search)?;
    let Value::Array(mut definitions) = convert_tools(format, tools, names, options) else {
        return Err(Unsupported { format, detail: "" });
    };
    for definition in &mut definitions {
        if let Some(object) = definition.as_object_mut() {
            object.insert("defer_loading".into(), Value::Bool(true));
        }
    }
    definitions.insert(0, search_tool(format, search));
    Ok(Value::Array(definitions))
}

fn query_schema() -> Value {
    json!({
        "type": "object",
        "properties": {"query": {"type": "string", "description": "The task, in words."}},
        "required": ["query"]
    })
}

const CLIENT_DESCRIPTION: &str = "Find the tools for a task: describe it in a few words \
    (\"create a GitHub issue\"); the best matching tools are loaded, and can then be called.";

fn search_tool(format: Format, search: SearchMode) -> Value {
    match (format, search) {
        (Format::Anthropic, SearchMode::Server) => {
            json!({"type": "tool_search_tool_bm25_20251119", "name": "tool_search_tool_bm25"})
        }
        (Format::Anthropic, SearchMode::Regex) => {
            json!({"type": "tool_search_tool_regex_20251119", "name": "tool_search_tool_regex"})
        }
        (Format::Anthropic, SearchMode::Client) => json!({
            "name": CLIENT_SEARCH_TOOL,
            "description": CLIENT_DESCRIPTION,
            "input_schema": query_schema(),
        }),
        (_, SearchMode::Client) => json!({
            "type": "tool_search",
            "execution": "client",
            "description": CLIENT_DESCRIPTION,
            "parameters": query_schema(),
        }),
        _ => json!({"type": "tool_search"}),
    }
}

/// One search the model asked the client to run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchCall {
    /// The id to answer (`tool_use` id, Responses `call_id`).
    pub id: String,
    /// The words searched for (empty when the model sent none).
    pub query: String,
}

/// The searches in a `format` response that the client answers: Anthropic
/// `tool_use` blocks of [`CLIENT_SEARCH_TOOL`], Responses `tool_search_call`
/// items with `execution: "client"`. Searches the provider runs are not
/// among them.
pub fn search_calls(format: Format, response: &Value) -> Vec<SearchCall> {
    let (items, kind) = match format {
        Format::Anthropic => (response.get("content").unwrap_or(response), "tool_use"),
        Format::OpenAiResponses => (
            response.get("output").unwrap_or(response),
            "tool_search_call",
        ),
        _ => return Vec::new(),
    };
    list(items)
        .iter()
        .filter(|item| item.get("type").and_then(Value::as_str) == Some(kind))
        .filter(|item| match format {
            Format::Anthropic => {
                item.get("name").and_then(Value::as_str) == Some(CLIENT_SEARCH_TOOL)
            }
            _ => item.get("execution").and_then(Value::as_str) == Some("client"),
        })
        .map(|item| {
            let id = match format {
                Format::Anthropic => item.get("id"),
                _ => item.get("call_id").or_else(|| item.get("id")),
            };
            let arguments = match format {
                Format::Anthropic => item.get("input").cloned(),
                // The arguments of a client search are an object, or (as
                // for function calls) a JSON string of one.
                _ => match item.get("arguments") {
                    Some(Value::String(s)) => serde_json::from_str(s).ok(),
                    other => other.cloned(),
                },
            };
            SearchCall {
                id: id.and_then(Value::as_str).unwrap_or_default().to_owned(),
                query: arguments
                    .as_ref()
                    .and_then(|a| a.get("query"))
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned(),
            }
        })
        .collect()
}

/// The Anthropic `tool_result` block answering search `id` with the tools
/// named `names` (each a `tool_reference`, which loads its definition).
pub fn anthropic_references<'a>(id: &str, names: impl IntoIterator<Item = &'a str>) -> Value {
    let references: Vec<Value> = names
        .into_iter()
        .map(|name| json!({"type": "tool_reference", "tool_name": name}))
        .collect();
    json!({"type": "tool_result", "tool_use_id": id, "content": references})
}

/// The Responses `tool_search_output` item answering search `id` with
/// `tools` (their Responses definitions, as [`convert_tools`] gives them).
pub fn responses_search_output(id: &str, tools: Value) -> Value {
    json!({"type": "tool_search_output", "call_id": id, "execution": "client", "tools": tools})
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    fn tools() -> Vec<McpTool> {
        let schema = json!({"type": "object", "properties": {"q": {"type": "string"}}});
        vec![McpTool {
            id: McpTool::id_for("web", "find"),
            name: "find".into(),
            description: "Search the web".into(),
            input_schema: Arc::new(schema.as_object().cloned().unwrap_or_default()),
            server_id: "web".into(),
            server_name: "web".into(),
            ..McpTool::default()
        }]
    }

    fn convert(format: Format, search: SearchMode) -> Result<Value, Unsupported> {
        let tools = tools();
        let names = NameTable::for_tools(&tools);
        convert_deferred(format, &tools, &names, &FormatOptions::default(), search)
    }

    #[test]
    fn anthropic_gets_its_search_tool_and_deferred_tools() {
        let out = convert(Format::Anthropic, SearchMode::Server).expect("anthropic");
        assert_eq!(
            out[0],
            json!({"type": "tool_search_tool_bm25_20251119", "name": "tool_search_tool_bm25"})
        );
        assert_eq!(out[1]["name"], "mcp__web__find");
        assert_eq!(out[1]["defer_loading"], true);
        assert!(out[1]["input_schema"].is_object());
        let regex = convert(Format::Anthropic, SearchMode::Regex).expect("regex");
        assert_eq!(regex[0]["type"], "tool_search_tool_regex_20251119");
        let client = convert(Format::Anthropic, SearchMode::Client).expect("client");
        assert_eq!(client[0]["name"], CLIENT_SEARCH_TOOL);
        assert!(client[0].get("defer_loading").is_none());
        assert_eq!(client[0]["input_schema"]["required"], json!(["query"]));
    }

    #[test]
    fn responses_gets_tool_search_and_deferred_functions() {
        let out = convert(Format::OpenAiResponses, SearchMode::Server).expect("responses");
        assert_eq!(out[0], json!({"type": "tool_search"}));
        assert_eq!(out[1]["type"], "function");
        assert_eq!(out[1]["defer_loading"], true);
        let client = convert(Format::OpenAiResponses, SearchMode::Client).expect("client");
        assert_eq!(client[0]["execution"], "client");
        assert!(client[0]["parameters"]["properties"]["query"].is_object());
    }

    #[test]
    fn formats_without_it_say_what_to_use() {
        for (format, says) in [
            (Format::OpenAi, "--format openai-responses"),
            (Format::Gemini, "Interactions API"),
            (Format::Mcp, "anthropic or openai-responses"),
        ] {
            let err = convert(format, SearchMode::Server).expect_err("unsupported");
            assert!(err.to_string().contains(says), "{err}");
        }
        let err = convert(Format::OpenAiResponses, SearchMode::Regex).expect_err("regex");
        assert!(err.to_string().contains("regular expressions"), "{err}");
    }

    #[test]
    fn only_the_searches_the_client_runs_are_read() {
        let anthropic = json!({"role": "assistant", "content": [
            {"type": "server_tool_use", "id": "srvtoolu_1", "name": "tool_search_tool_bm25",
             "input": {"query": "weather"}},
            {"type": "tool_use", "id": "toolu_1", "name": CLIENT_SEARCH_TOOL,
             "input": {"query": "open an issue"}},
            {"type": "tool_use", "id": "toolu_2", "name": "mcp__web__find", "input": {}}
        ]});
        assert_eq!(
            search_calls(Format::Anthropic, &anthropic),
            [SearchCall {
                id: "toolu_1".into(),
                query: "open an issue".into()
            }]
        );
        let responses = json!({"output": [
            {"type": "tool_search_call", "id": "ts_0", "call_id": null, "execution": "server",
             "arguments": {"query": "x"}, "status": "completed"},
            {"type": "tool_search_call", "id": "ts_1", "call_id": "call_9", "execution": "client",
             "arguments": "{\"query\": \"list pods\"}", "status": "completed"}
        ]});
        assert_eq!(
            search_calls(Format::OpenAiResponses, &responses),
            [SearchCall {
                id: "call_9".into(),
                query: "list pods".into()
            }]
        );
        assert!(search_calls(Format::Gemini, &json!({})).is_empty());
    }

    #[test]
    fn answers_reference_or_carry_the_tools_found() {
        assert_eq!(
            anthropic_references("toolu_1", ["mcp__web__find"]),
            json!({"type": "tool_result", "tool_use_id": "toolu_1",
                   "content": [{"type": "tool_reference", "tool_name": "mcp__web__find"}]})
        );
        let output = responses_search_output("call_9", json!([{"type": "function"}]));
        assert_eq!(output["type"], "tool_search_output");
        assert_eq!(output["execution"], "client");
        assert_eq!(output["tools"][0]["type"], "function");
    }
}
