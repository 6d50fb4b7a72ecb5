//! The one place a [`Format`] picks its provider: every entry point that
//! depends on the format ([`convert_tools`], [`parse_calls`],
//! [`render_results`], [`check`](super::check())) asks `provider` and calls
//! through the `Provider` trait. Adding a
//! provider means a folder that implements it, a `Format` variant and one
//! arm here.

use super::anthropic;
use super::calls::{CallsError, ToolCall, ToolOutcome};
use super::gemini;
use super::names::{NameTable, unique_tools};
use super::openai;
use super::options::{Format, FormatOptions};
use super::provider::Provider;
use crate::{hidden_chars, tools::McpTool};
use serde_json::Value;

/// The provider behind `format`; `None` for MCP's own format.
pub(crate) fn provider(format: Format) -> Option<&'static dyn Provider> {
    match format {
        Format::Mcp => None,
        Format::OpenAi => Some(&openai::Chat),
        Format::OpenAiResponses => Some(&openai::Responses),
        Format::Anthropic => Some(&anthropic::Anthropic),
        Format::Gemini => Some(&gemini::Gemini),
    }
}

/// The formats [`check`](super::check()) reports on, in its order; the
/// Responses API takes the same schemas as Chat Completions.
pub(crate) const CHECKED: [Format; 3] = [Format::OpenAi, Format::Anthropic, Format::Gemini];

/// `tools` in `format`, ready to put in a request: an array for `mcp`,
/// `openai`, `openai-responses` and `anthropic`, the nested
/// `[{"functionDeclarations": [...]}]` for `gemini`.
///
/// `names` should be built from `tools` (see [`NameTable::for_tools`]); the
/// `mcp` format keeps the tools' own ids.
///
/// ```
/// use std::sync::Arc;
/// use serde_json::json;
/// use toolbridge::{Format, FormatOptions, McpTool, NameTable, convert_tools};
///
/// let schema = json!({"type": "object", "properties": {"q": {"type": "string"}}});
/// let tools = [McpTool {
///     id: McpTool::id_for("search", "web.find"),
///     name: "web.find".into(),
///     description: "Search the web".into(),
///     input_schema: Arc::new(schema.as_object().unwrap().clone()),
///     server_id: "search".into(),
///     server_name: "search".into(),
///     ..McpTool::default()
/// }];
/// let names = NameTable::for_tools(&tools);
///
/// let anthropic = convert_tools(Format::Anthropic, &tools, &names, &FormatOptions::default());
/// // `.` is not allowed in provider tool names; it became `_`.
/// assert_eq!(anthropic[0]["name"], "mcp__search__web_find");
/// assert_eq!(anthropic[0]["input_schema"]["properties"]["q"]["type"], "string");
///
/// let gemini = convert_tools(Format::Gemini, &tools, &names, &FormatOptions::default());
/// assert_eq!(gemini[0]["functionDeclarations"][0]["name"], "mcp__search__web_find");
/// ```
pub fn convert_tools(
    format: Format,
    tools: &[McpTool],
    names: &NameTable,
    options: &FormatOptions,
) -> Value {
    // A server listing one name twice: only the first definition goes out.
    let tools = unique_tools(tools);
    let tools = tools.as_ref();
    // What a person cannot see never reaches a provider.
    let cleaned = match provider(format) {
        Some(_) => hidden_chars::cleaned_tools(tools),
        None => std::borrow::Cow::Borrowed(tools),
    };
    let tools = cleaned.as_ref();
    match provider(format) {
        // A tool that can only run as a task may take minutes while the
        // model's turn waits: it is not offered (`check` says why).
        Some(provider) if tools.iter().any(McpTool::requires_task) => {
            let callable: Vec<McpTool> = tools
                .iter()
                .filter(|t| !t.requires_task())
                .cloned()
                .collect();
            provider.tools(&callable, names, options)
        }
        Some(provider) => provider.tools(tools, names, options),
        // Serializing strings and JSON maps cannot fail.
        None => serde_json::to_value(tools).unwrap_or_else(|_| Value::Array(Vec::new())),
    }
}

/// Reads the tool calls in a provider response (see each provider's
/// `parse_calls` for the shapes accepted).
///
/// ```
/// use serde_json::json;
/// use toolbridge::{Format, NameStyle, NameTable, ToolRef, parse_calls};
///
/// let names = NameTable::new(NameStyle::Mcp, [("time", "now")]);
/// // Anthropic: the `tool_use` blocks of a Messages response.
/// let response = json!({"role": "assistant", "content": [
///     {"type": "text", "text": "Let me check."},
///     {"type": "tool_use", "id": "toolu_1", "name": "mcp__time__now", "input": {"tz": "UTC"}},
///     {"type": "tool_use", "id": "toolu_2", "name": "mcp__time__later", "input": {}}
/// ]});
/// let calls = parse_calls(Format::Anthropic, &response, &names)?;
/// assert_eq!(calls.len(), 2);
/// assert_eq!(calls[0].id.as_deref(), Some("toolu_1"));
/// assert_eq!(calls[0].tool, Some(ToolRef::new("time", "now")));
/// assert_eq!(calls[0].arguments.as_ref().unwrap()["tz"], "UTC");
/// // An unknown name is not an error of the whole response: that one call
/// // carries a message for the model.
/// assert!(calls[1].invocation().unwrap_err().contains("mcp__time__later"));
/// # Ok::<(), toolbridge::CallsError>(())
/// ```
pub fn parse_calls(
    format: Format,
    input: &Value,
    names: &NameTable,
) -> Result<Vec<ToolCall>, CallsError> {
    provider(format)
        .ok_or(CallsError::UnsupportedFormat(format))?
        .parse_calls(input, names)
}

/// The messages carrying `results` back to the model, in `format`'s shape:
/// a list of messages (OpenAI), a list of items (Responses), or one message
/// (Anthropic) or content (Gemini).
///
/// ```
/// use serde_json::json;
/// use toolbridge::rmcp_model::{CallToolResult, ContentBlock};
/// use toolbridge::{Format, NameStyle, NameTable, ToolOutcome, parse_calls, render_results};
///
/// let names = NameTable::new(NameStyle::Mcp, [("example", "hello")]);
/// let response = json!({"tool_calls": [{"id": "call_1", "type": "function",
///     "function": {"name": "mcp__example__hello", "arguments": "{\"name\":\"Ada\"}"}}]});
/// let calls = parse_calls(Format::OpenAi, &response, &names)?;
/// let outcome = ToolOutcome::Completed(CallToolResult::success(vec![ContentBlock::text("Hello, Ada!")]));
/// let results = vec![(calls[0].clone(), outcome)];
///
/// let messages = render_results(Format::OpenAi, &results)?;
/// assert_eq!(messages, json!([{"role": "tool", "tool_call_id": "call_1", "content": "Hello, Ada!"}]));
/// # Ok::<(), toolbridge::CallsError>(())
/// ```
pub fn render_results(
    format: Format,
    results: &[(ToolCall, ToolOutcome)],
) -> Result<Value, CallsError> {
    Ok(provider(format)
        .ok_or(CallsError::UnsupportedFormat(format))?
        .render_results(results))
}

#[cfg(test)]
mod calls_tests {
    use super::*;
    use crate::format::anthropic::calls::parse_anthropic;
    use crate::format::gemini::calls::parse_gemini;
    use crate::format::names::NameStyle;
    use crate::format::openai::calls::{parse_openai, parse_openai_responses};
    use crate::format::schema::JsonObject;
    use serde_json::json;

    fn names() -> NameTable {
        NameTable::new(
            NameStyle::Mcp,
            [("everything", "echo"), ("fs", "read_file")],
        )
    }

    fn routed(call: &ToolCall) -> Option<(String, String)> {
        call.invocation()
            .ok()
            .map(|(t, _)| (t.server_id.clone(), t.tool.clone()))
    }

    #[test]
    fn openai_completion_message_and_list() {
        let message = json!({
            "role": "assistant",
            "content": null,
            "tool_calls": [
                {"id": "call_1", "type": "function", "function": {"name": "mcp__everything__echo", "arguments": "{\"message\":\"hi\"}"}},
                {"id": "call_2", "type": "function", "function": {"name": "mcp__fs__read_file", "arguments": "{not json"}},
                {"id": "call_3", "type": "function", "function": {"name": "mcp__nope__x", "arguments": "{}"}},
                {"id": "call_4", "type": "function", "function": {"name": "mcp__everything__echo", "arguments": "[1]"}},
                {"id": "call_5", "type": "function", "function": {"name": "mcp__everything__echo", "arguments": ""}}
            ]
        });
        let completion = json!({"id": "x", "choices": [{"index": 0, "message": message.clone()}]});
        for input in [&completion, &message, &message["tool_calls"]] {
            let calls = parse_openai(input, &names()).unwrap_or_default();
            assert_eq!(calls.len(), 5);
            assert_eq!(calls[0].id.as_deref(), Some("call_1"));
            assert_eq!(
                routed(&calls[0]),
                Some(("everything".into(), "echo".into()))
            );
            assert_eq!(
                calls[0].arguments,
                Ok(json!({"message": "hi"})
                    .as_object()
                    .cloned()
                    .unwrap_or_default())
            );
            assert!(
                calls[1]
                    .invocation()
                    .is_err_and(|e| e.contains("not valid JSON"))
            );
            assert!(
                calls[2]
                    .invocation()
                    .is_err_and(|e| e.contains("unknown tool `mcp__nope__x`"))
            );
            assert!(
                calls[3]
                    .invocation()
                    .is_err_and(|e| e.contains("expected a JSON object"))
            );
            assert_eq!(calls[4].arguments, Ok(JsonObject::new()));
        }
    }

    #[test]
    fn openai_text_answer_has_no_calls() {
        let completion =
            json!({"choices": [{"message": {"role": "assistant", "content": "done"}}]});
        assert_eq!(parse_openai(&completion, &names()), Ok(Vec::new()));
        assert!(parse_openai(&json!({"foo": 1}), &names()).is_err());
        assert!(parse_openai(&json!("x"), &names()).is_err());
    }

    #[test]
    fn responses_function_calls() {
        let response = json!({"output": [
            {"type": "reasoning", "id": "r"},
            {"type": "function_call", "call_id": "c1", "name": "mcp__fs__read_file", "arguments": "{\"path\":\"/a\"}"}
        ]});
        let calls = parse_openai_responses(&response, &names()).unwrap_or_default();
        assert_eq!(calls.len(), 1);
        assert_eq!(calls[0].id.as_deref(), Some("c1"));
        assert_eq!(routed(&calls[0]), Some(("fs".into(), "read_file".into())));
    }

    #[test]
    fn anthropic_tool_use_blocks() {
        let message = json!({"role": "assistant", "content": [
            {"type": "text", "text": "let me"},
            {"type": "tool_use", "id": "toolu_1", "name": "mcp__everything__echo", "input": {"message": "x"}},
            {"type": "tool_use", "id": "toolu_2", "name": "mcp__everything__echo", "input": "oops"}
        ]});
        let calls = parse_anthropic(&message, &names()).unwrap_or_default();
        assert_eq!(calls.len(), 2);
        assert_eq!(calls[0].id.as_deref(), Some("toolu_1"));
        assert!(calls[0].invocation().is_ok());
        assert!(calls[1].invocation().is_err());
        assert!(parse_anthropic(&json!({"role": "assistant"}), &names()).is_err());
    }

    #[test]
    fn gemini_function_calls() {
        let response = json!({"candidates": [{"content": {"role": "model", "parts": [
            {"text": "ok"},
            {"functionCall": {"name": "mcp__everything__echo", "args": {"message": "m"}}, "thoughtSignature": "abc"},
            {"functionCall": {"id": "g2", "name": "mcp__fs__read_file"}}
        ]}}]});
        let calls = parse_gemini(&response, &names()).unwrap_or_default();
        assert_eq!(calls.len(), 2);
        assert_eq!(calls[0].id, None);
        assert_eq!(
            routed(&calls[0]),
            Some(("everything".into(), "echo".into()))
        );
        assert_eq!(calls[1].id.as_deref(), Some("g2"));
        assert_eq!(calls[1].arguments, Ok(JsonObject::new()));
        let blocked = json!({"candidates": [{"finishReason": "SAFETY"}]});
        assert_eq!(parse_gemini(&blocked, &names()), Ok(Vec::new()));
    }

    #[test]
    fn mcp_has_no_calls() {
        assert_eq!(
            parse_calls(Format::Mcp, &json!({}), &names()),
            Err(CallsError::UnsupportedFormat(Format::Mcp))
        );
    }
}

#[cfg(test)]
mod results_tests {
    use super::*;
    use crate::format::anthropic::results::anthropic_message;
    use crate::format::gemini::results::gemini_content;
    use crate::format::names::ToolRef;
    use crate::format::openai::results::{openai_messages, openai_responses_items};
    use crate::format::schema::JsonObject;
    use rmcp::model::{CallToolResult, ContentBlock};
    use serde_json::json;

    fn call(id: Option<&str>, name: &str) -> ToolCall {
        ToolCall {
            id: id.map(str::to_owned),
            name: name.to_owned(),
            tool: Some(ToolRef::new("s", "t")),
            arguments: Ok(JsonObject::new()),
        }
    }

    fn sample() -> Vec<(ToolCall, ToolOutcome)> {
        vec![
            (
                call(Some("c1"), "mcp__s__t"),
                ToolOutcome::Completed(CallToolResult::success(vec![
                    ContentBlock::text("here"),
                    ContentBlock::image("iVBO", "image/png"),
                    ContentBlock::audio("UklG", "audio/wav"),
                ])),
            ),
            (
                call(Some("c2"), "mcp__s__t"),
                ToolOutcome::Completed(CallToolResult::error(vec![ContentBlock::text("boom")])),
            ),
            (
                call(Some("c3"), "mcp__x__y"),
                ToolOutcome::Failed("unknown tool `mcp__x__y`".into()),
            ),
        ]
    }

    #[test]
    fn openai_tool_messages() {
        assert_eq!(
            openai_messages(&sample()),
            json!([
                {"role": "tool", "tool_call_id": "c1", "content": "here\n[Image: image/png]\n[Audio: audio/wav]"},
                {"role": "tool", "tool_call_id": "c2", "content": "Error: boom"},
                {"role": "tool", "tool_call_id": "c3", "content": "Error: unknown tool `mcp__x__y`"}
            ])
        );
        assert_eq!(
            openai_responses_items(&sample())[1],
            json!({"type": "function_call_output", "call_id": "c2", "output": "Error: boom"})
        );
    }

    #[test]
    fn anthropic_one_user_message_with_native_images() {
        assert_eq!(
            anthropic_message(&sample()),
            json!({"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "c1", "is_error": false, "content": [
                    {"type": "text", "text": "here"},
                    {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBO"}},
                    {"type": "text", "text": "[Audio: audio/wav]"}
                ]},
                {"type": "tool_result", "tool_use_id": "c2", "is_error": true, "content": [{"type": "text", "text": "boom"}]},
                {"type": "tool_result", "tool_use_id": "c3", "is_error": true, "content": [{"type": "text", "text": "unknown tool `mcp__x__y`"}]}
            ]})
        );
        let empty = vec![(
            call(Some("c"), "n"),
            ToolOutcome::Completed(CallToolResult::success(vec![])),
        )];
        assert_eq!(
            anthropic_message(&empty),
            json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "c", "is_error": false}]})
        );
    }

    #[test]
    fn gemini_function_responses_then_inline_data() {
        let mut results = sample();
        results[0].0.id = None;
        assert_eq!(
            gemini_content(&results),
            json!({"role": "user", "parts": [
                {"functionResponse": {"name": "mcp__s__t", "response": {"output": "here\n[Image: image/png]\n[Audio: audio/wav]"}}},
                {"functionResponse": {"id": "c2", "name": "mcp__s__t", "response": {"error": "boom"}}},
                {"functionResponse": {"id": "c3", "name": "mcp__x__y", "response": {"error": "unknown tool `mcp__x__y`"}}},
                {"inlineData": {"mimeType": "image/png", "data": "iVBO"}},
                {"inlineData": {"mimeType": "audio/wav", "data": "UklG"}}
            ]})
        );
    }

    #[test]
    fn mcp_cannot_render() {
        assert!(render_results(Format::Mcp, &sample()).is_err());
        assert!(render_results(Format::Gemini, &sample()).is_ok());
    }
}
