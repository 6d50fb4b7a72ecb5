//! Tool calls in OpenAI responses: Chat Completions' `tool_calls` (and the
//! legacy `function_call`), the Responses API's `function_call` items.

use crate::format::calls::{CallsError, ToolCall, call, json_arguments, list};
use crate::format::names::NameTable;
use crate::format::options::Format;
use serde_json::Value;

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

/// One entry of a `tool_calls` list.
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
