//! Tool calls in Anthropic responses: `tool_use` content blocks.

use crate::format::calls::{CallsError, ToolCall, call, list, object_arguments};
use crate::format::names::NameTable;
use crate::format::options::Format;
use serde_json::Value;

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
