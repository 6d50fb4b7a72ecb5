//! Tool results for OpenAI: Chat Completions `tool` messages and Responses
//! API `function_call_output` items, both with the flattened text.

use crate::format::calls::{ToolCall, ToolOutcome};
use crate::format::results::text_with_error;
use serde_json::{Value, json};

/// `[{"role":"tool","tool_call_id","content"}]`, one per call.
pub fn openai_messages(results: &[(ToolCall, ToolOutcome)]) -> Value {
    Value::Array(
        results
            .iter()
            .map(|(call, outcome)| {
                json!({
                    "role": "tool",
                    "tool_call_id": call.id.as_deref().unwrap_or_default(),
                    "content": text_with_error(outcome),
                })
            })
            .collect(),
    )
}

/// `[{"type":"function_call_output","call_id","output"}]`, one per call.
pub fn openai_responses_items(results: &[(ToolCall, ToolOutcome)]) -> Value {
    Value::Array(
        results
            .iter()
            .map(|(call, outcome)| {
                json!({
                    "type": "function_call_output",
                    "call_id": call.id.as_deref().unwrap_or_default(),
                    "output": text_with_error(outcome),
                })
            })
            .collect(),
    )
}
