//! Tool results as the messages to append to a provider conversation.
//!
//! - OpenAI Chat Completions: one `role: tool` message per call, with
//!   `tool_call_id` and the flattened text;
//! - OpenAI Responses: one `function_call_output` item per call;
//! - Anthropic: one `user` message of `tool_result` blocks with `is_error`,
//!   text blocks and native image blocks;
//! - Gemini: one `user` content of `functionResponse` parts (`output` or
//!   `error`, with the call id when the model gave one), then `inlineData`
//!   parts for images and audio.

use super::calls::{CallsError, ToolCall, ToolOutcome};
use super::flatten::{block_text, flatten_content};
use super::options::Format;
use rmcp::model::{CallToolResult, ContentBlock, ResourceContents};
use serde_json::{Value, json};

/// Image types Anthropic takes as image blocks.
const ANTHROPIC_IMAGES: [&str; 4] = ["image/jpeg", "image/png", "image/gif", "image/webp"];

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
    match format {
        Format::OpenAi => Ok(openai_messages(results)),
        Format::OpenAiResponses => Ok(openai_responses_items(results)),
        Format::Anthropic => Ok(anthropic_message(results)),
        Format::Gemini => Ok(gemini_content(results)),
        Format::Mcp => Err(CallsError::UnsupportedFormat(format)),
    }
}

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

fn is_error(result: &CallToolResult) -> bool {
    result.is_error == Some(true)
}

/// The flattened text, marked when the call failed.
fn text_with_error(outcome: &ToolOutcome) -> String {
    match outcome {
        ToolOutcome::Completed(result) if is_error(result) => {
            format!("Error: {}", flatten_content(result))
        }
        ToolOutcome::Completed(result) => flatten_content(result),
        ToolOutcome::Failed(message) => format!("Error: {message}"),
    }
}

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

/// The media type and base64 data of an image, audio or binary resource.
fn media_of(block: &ContentBlock) -> Option<(&str, &str)> {
    match block {
        ContentBlock::Image(i) => Some((i.mime_type.as_str(), i.data.as_str())),
        ContentBlock::Audio(a) => Some((a.mime_type.as_str(), a.data.as_str())),
        ContentBlock::Resource(r) => match &r.resource {
            ResourceContents::BlobResourceContents {
                mime_type: Some(mime),
                blob,
                ..
            } => Some((mime.as_str(), blob.as_str())),
            _ => None,
        },
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::names::ToolRef;
    use crate::format::schema::JsonObject;

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
