//! Tool calls in Gemini responses: `functionCall` parts.

use crate::format::calls::{CallsError, ToolCall, call, list, object_arguments};
use crate::format::names::NameTable;
use crate::format::options::Format;
use serde_json::Value;

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
