//! Tool results for Gemini: one `user` content of `functionResponse` parts
//! (`output` or `error`, with the call id when the model gave one), then
//! `inlineData` parts for images and audio.

use crate::format::calls::{ToolCall, ToolOutcome};
use crate::format::flatten::flatten_content;
use crate::format::results::{is_error, media_of};
use rmcp::model::CallToolResult;
use serde_json::{Value, json};

/// Media types Gemini takes as inline data.
const GEMINI_MEDIA: [&str; 13] = [
    "image/png",
    "image/jpeg",
    "image/webp",
    "image/heic",
    "image/heif",
    "audio/wav",
    "audio/mp3",
    "audio/mpeg",
    "audio/aiff",
    "audio/aac",
    "audio/ogg",
    "audio/flac",
    "audio/x-wav",
];

/// `{"role":"user","parts":[{"functionResponse":{"id"?,"name","response"}},
/// ..., {"inlineData":{"mimeType","data"}}, ...]}`.
pub fn gemini_content(results: &[(ToolCall, ToolOutcome)]) -> Value {
    let mut parts: Vec<Value> = Vec::with_capacity(results.len());
    let mut media: Vec<Value> = Vec::new();
    for (call, outcome) in results {
        let response = match outcome {
            ToolOutcome::Completed(result) => {
                media.extend(gemini_media(result));
                let key = if is_error(result) { "error" } else { "output" };
                json!({ key: flatten_content(result) })
            }
            ToolOutcome::Failed(message) => json!({"error": message}),
        };
        let mut function_response = serde_json::Map::new();
        if let Some(id) = &call.id {
            function_response.insert("id".into(), Value::from(id.clone()));
        }
        function_response.insert("name".into(), Value::from(call.name.clone()));
        function_response.insert("response".into(), response);
        parts.push(json!({"functionResponse": function_response}));
    }
    parts.extend(media);
    json!({"role": "user", "parts": parts})
}

/// Inline data parts for the images and audio Gemini takes.
fn gemini_media(result: &CallToolResult) -> Vec<Value> {
    result
        .content
        .iter()
        .filter_map(media_of)
        .filter(|(mime, _)| GEMINI_MEDIA.contains(mime))
        .map(|(mime, data)| json!({"inlineData": {"mimeType": mime, "data": data}}))
        .collect()
}
