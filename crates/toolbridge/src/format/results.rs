//! What every provider's tool results are made of: whether a call failed,
//! its text (flattened, marked when it failed), and the media a provider may
//! take natively. Each provider's message shapes live in its folder.

use super::calls::ToolOutcome;
use super::flatten::flatten_content;
use rmcp::model::{CallToolResult, ContentBlock, ResourceContents};

/// Whether the server marked the result as an error (`isError`).
pub(crate) fn is_error(result: &CallToolResult) -> bool {
    result.is_error == Some(true)
}

/// The flattened text, marked when the call failed.
pub(crate) fn text_with_error(outcome: &ToolOutcome) -> String {
    match outcome {
        ToolOutcome::Completed(result) if is_error(result) => {
            format!("Error: {}", flatten_content(result))
        }
        ToolOutcome::Completed(result) => flatten_content(result),
        ToolOutcome::Failed(message) => format!("Error: {message}"),
    }
}

/// The media type and base64 data of an image, audio or binary resource.
pub(crate) fn media_of(block: &ContentBlock) -> Option<(&str, &str)> {
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
