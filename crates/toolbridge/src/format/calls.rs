//! Tool calls a model made, read from a provider's response.
//!
//! A response that is not of the provider's shape is an error; a call inside
//! it with an unknown tool name or malformed arguments is not: it becomes a
//! [`ToolCall`] whose [`ToolCall::invocation`] is an error message, which the
//! executor sends back to the model as that call's (error) result.

use super::names::{NameTable, ToolRef};
use super::options::Format;
use super::schema::JsonObject;
use rmcp::model::CallToolResult;
use serde_json::Value;

/// One tool call, whatever provider it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCall {
    /// The provider's id for the call (`tool_call_id`, `tool_use_id`,
    /// `call_id`, Gemini's optional `id`); results must carry it back.
    pub id: Option<String>,
    /// The tool name the model used (an exposed name).
    pub name: String,
    /// The tool the name routes to; `None` when the table has no such name.
    pub tool: Option<ToolRef>,
    /// The arguments, or why they are unusable (not JSON, not an object).
    pub arguments: Result<JsonObject, String>,
}

impl ToolCall {
    /// What to run, or the message to return to the model instead.
    pub fn invocation(&self) -> Result<(&ToolRef, &JsonObject), String> {
        let Some(tool) = &self.tool else {
            return Err(format!(
                "unknown tool `{}`; call one of the tools listed in the request",
                self.name
            ));
        };
        match &self.arguments {
            Ok(args) => Ok((tool, args)),
            Err(why) => Err(format!("invalid arguments for `{}`: {why}", self.name)),
        }
    }
}

/// What running one call produced.
#[derive(Debug, Clone, PartialEq)]
pub enum ToolOutcome {
    /// The server answered; the result may itself be an error (`isError`).
    Completed(CallToolResult),
    /// The call produced no result: unknown tool, bad arguments, timeout,
    /// lost connection. The message is shown to the model.
    Failed(String),
}

impl From<Result<CallToolResult, String>> for ToolOutcome {
    fn from(result: Result<CallToolResult, String>) -> Self {
        match result {
            Ok(r) => ToolOutcome::Completed(r),
            Err(message) => ToolOutcome::Failed(message),
        }
    }
}

/// A provider response that could not be read as a whole.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CallsError {
    /// The format has no tool-call shape (`mcp`).
    #[error("format `{0}` has no tool calls; use openai, openai-responses, anthropic or gemini")]
    UnsupportedFormat(Format),
    /// The input is not a response, message or call list of the format.
    #[error("input is not {format} output: {detail}")]
    Unrecognized {
        /// The format the input was read as.
        format: Format,
        /// What was expected.
        detail: String,
    },
}

/// Reads the tool calls in a provider response (see the per-format
/// functions for the shapes accepted).
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
    match format {
        Format::OpenAi => parse_openai(input, names),
        Format::OpenAiResponses => parse_openai_responses(input, names),
        Format::Anthropic => parse_anthropic(input, names),
        Format::Gemini => parse_gemini(input, names),
        Format::Mcp => Err(CallsError::UnsupportedFormat(format)),
    }
}

/// OpenAI Chat Completions: a whole completion (`choices[0].message`), one
/// assistant message, or its `tool_calls` list. Each call's
/// `function.arguments` is a JSON string. A legacy `function_call` is read too.
pub fn parse_openai(input: &Value, names: &NameTable) -> Result<Vec<ToolCall>, CallsError> {
    let unrecognized = || CallsError::Unrecognized {
        format: Format::OpenAi,
        detail: "expected a chat completion, an assistant message or a tool_calls list".into(),
    };
    let message = match input {
        Value::Array(_) => {
            return Ok(list(input).iter().map(|c| openai_call(c, names)).collect());
        }
        Value::Object(m) if m.contains_key("choices") => {
            match m
                .get("choices")
                .and_then(|c| c.get(0))
                .and_then(|c| c.get("message"))
            {
                Some(message) => message,
                None => return Ok(Vec::new()),
            }
        }
        Value::Object(m)
            if m.contains_key("tool_calls")
                || m.contains_key("role")
                || m.contains_key("function_call") =>
        {
            input
        }
        _ => return Err(unrecognized()),
    };
    let mut calls: Vec<ToolCall> = list(message.get("tool_calls").unwrap_or(&Value::Null))
        .iter()
        .map(|c| openai_call(c, names))
        .collect();
    if let Some(legacy) = message.get("function_call").filter(|f| f.is_object()) {
        calls.push(call(
            None,
            legacy.get("name"),
            json_arguments(legacy.get("arguments")),
            names,
        ));
    }
    Ok(calls)
}

fn openai_call(value: &Value, names: &NameTable) -> ToolCall {
    let function = value.get("function").unwrap_or(&Value::Null);
    call(
        value.get("id"),
        function.get("name"),
        json_arguments(function.get("arguments")),
        names,
    )
}

/// OpenAI Responses API: a response (`output`) or its output list; items of
/// type `function_call` carry `call_id`, `name` and `arguments` (a JSON string).
pub fn parse_openai_responses(
    input: &Value,
    names: &NameTable,
) -> Result<Vec<ToolCall>, CallsError> {
    let items = match input {
        Value::Array(_) => input,
        Value::Object(m) if m.contains_key("output") => m.get("output").unwrap_or(&Value::Null),
        _ => {
            return Err(CallsError::Unrecognized {
                format: Format::OpenAiResponses,
                detail: "expected a response with `output` or an output list".into(),
            });
        }
    };
    Ok(list(items)
        .iter()
        .filter(|item| item.get("type").and_then(Value::as_str) == Some("function_call"))
        .map(|item| {
            call(
                item.get("call_id").or_else(|| item.get("id")),
                item.get("name"),
                json_arguments(item.get("arguments")),
                names,
            )
        })
        .collect())
}

/// Anthropic Messages: a message (`content`) or its content list; blocks of
/// type `tool_use` carry `id`, `name` and `input` (an object).
pub fn parse_anthropic(input: &Value, names: &NameTable) -> Result<Vec<ToolCall>, CallsError> {
    let blocks = match input {
        Value::Array(_) => input,
        Value::Object(m) if m.contains_key("content") => m.get("content").unwrap_or(&Value::Null),
        _ => {
            return Err(CallsError::Unrecognized {
                format: Format::Anthropic,
                detail: "expected a message with `content` or a content list".into(),
            });
        }
    };
    Ok(list(blocks)
        .iter()
        .filter(|b| b.get("type").and_then(Value::as_str) == Some("tool_use"))
        .map(|b| {
            call(
                b.get("id"),
                b.get("name"),
                object_arguments(b.get("input")),
                names,
            )
        })
        .collect())
}

/// Gemini `generateContent`: a response (`candidates[0].content.parts`), a
/// content (`parts`) or a parts list; `functionCall` parts carry `name`,
/// `args` (an object) and an optional `id`.
pub fn parse_gemini(input: &Value, names: &NameTable) -> Result<Vec<ToolCall>, CallsError> {
    let parts = match input {
        Value::Array(_) => input,
        Value::Object(m) if m.contains_key("candidates") => {
            match m
                .get("candidates")
                .and_then(|c| c.get(0))
                .and_then(|c| c.get("content"))
                .and_then(|c| c.get("parts"))
            {
                Some(parts) => parts,
                None => return Ok(Vec::new()),
            }
        }
        Value::Object(m) if m.contains_key("parts") => m.get("parts").unwrap_or(&Value::Null),
        _ => {
            return Err(CallsError::Unrecognized {
                format: Format::Gemini,
                detail: "expected a generateContent response, a content or a parts list".into(),
            });
        }
    };
    Ok(list(parts)
        .iter()
        .filter_map(|p| p.get("functionCall").or_else(|| p.get("function_call")))
        .map(|f| {
            call(
                f.get("id"),
                f.get("name"),
                object_arguments(f.get("args")),
                names,
            )
        })
        .collect())
}

/// The elements of a list, or none when it is not one.
fn list(value: &Value) -> &[Value] {
    match value {
        Value::Array(items) => items,
        _ => &[],
    }
}

fn call(
    id: Option<&Value>,
    name: Option<&Value>,
    arguments: Result<JsonObject, String>,
    names: &NameTable,
) -> ToolCall {
    let name = name.and_then(Value::as_str).unwrap_or_default().to_owned();
    ToolCall {
        id: id.and_then(Value::as_str).map(str::to_owned),
        tool: names.resolve(&name).cloned(),
        name,
        arguments,
    }
}

/// Arguments sent as a JSON string (OpenAI); an object is taken as is.
fn json_arguments(value: Option<&Value>) -> Result<JsonObject, String> {
    match value {
        None | Some(Value::Null) => Ok(JsonObject::new()),
        Some(Value::String(text)) if text.trim().is_empty() => Ok(JsonObject::new()),
        Some(Value::String(text)) => match serde_json::from_str::<Value>(text) {
            Ok(Value::Object(args)) => Ok(args),
            Ok(other) => Err(format!("expected a JSON object, got `{other}`")),
            Err(e) => Err(format!("not valid JSON ({e})")),
        },
        Some(Value::Object(args)) => Ok(args.clone()),
        Some(other) => Err(format!("expected a JSON object, got `{other}`")),
    }
}

/// Arguments sent as an object (Anthropic, Gemini).
fn object_arguments(value: Option<&Value>) -> Result<JsonObject, String> {
    match value {
        None | Some(Value::Null) => Ok(JsonObject::new()),
        Some(Value::Object(args)) => Ok(args.clone()),
        Some(other) => Err(format!("expected a JSON object, got `{other}`")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::names::NameStyle;
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
