//! Tool results for Anthropic: one `user` message of `tool_result` blocks
//! with `is_error`, text blocks and native image blocks.

use crate::format::calls::{ToolCall, ToolOutcome};
use crate::format::flatten::{block_text, flatten_content};
use crate::format::results::{is_error, media_of};
use rmcp::model::CallToolResult;
use serde_json::{Value, json};

/// Image types Anthropic takes as image blocks.
const ANTHROPIC_IMAGES: [&str; 4] = ["image/jpeg", "image/png", "image/gif", "image/webp"];

/// `{"role":"user","content":[{"type":"tool_result","tool_use_id","is_error",
/// "content":[...]}]}`.
pub fn anthropic_message(results: &[(ToolCall, ToolOutcome)]) -> Value {
    let blocks: Vec<Value> = results
        .iter()
        .map(|(call, outcome)| {
            let (content, is_error) = match outcome {
                ToolOutcome::Completed(result) => (anthropic_content(result), is_error(result)),
                ToolOutcome::Failed(message) => (vec![text_block(message)], true),
            };
            let mut block = json!({
                "type": "tool_result",
                "tool_use_id": call.id.as_deref().unwrap_or_default(),
                "is_error": is_error,
            });
            // Anthropic refuses empty text blocks; no content is fine.
            let content: Vec<Value> = content
                .into_iter()
                .filter(|b| b.get("text").and_then(Value::as_str) != Some(""))
                .collect();
            if let (false, Value::Object(b)) = (content.is_empty(), &mut block) {
                b.insert("content".into(), Value::Array(content));
            }
            block
        })
        .collect();
    json!({"role": "user", "content": blocks})
}

/// A text block.
fn text_block(text: &str) -> Value {
    json!({"type": "text", "text": text})
}

/// A result's content as Anthropic blocks: images natively, the rest as text.
fn anthropic_content(result: &CallToolResult) -> Vec<Value> {
    if result.content.is_empty() {
        return vec![text_block(&flatten_content(result))];
    }
    result
        .content
        .iter()
        .map(|block| match media_of(block) {
            Some((mime, data)) if ANTHROPIC_IMAGES.contains(&mime) => json!({
                "type": "image",
                "source": {"type": "base64", "media_type": mime, "data": data},
            }),
            _ => text_block(&block_text(block)),
        })
        .collect()
}
