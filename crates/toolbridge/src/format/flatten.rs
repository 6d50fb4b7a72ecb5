//! A tool result as one string, for providers and agents that take text.

use rmcp::model::{CallToolResult, ContentBlock, ResourceContents};

/// The spec's `flattenContent`, extended: every content item on its own line.
///
/// - text as is;
/// - images and audio as `[Image: mime]` and `[Audio: mime]`;
/// - embedded text resources as their text;
/// - embedded binary resources as `[Resource: uri (mime)]`;
/// - resource links as `[Resource link: uri (mime)]`;
/// - when `content` is empty, `structuredContent` as JSON text.
///
/// ```
/// use toolbridge::flatten_content;
/// use toolbridge::rmcp_model::{CallToolResult, ContentBlock};
///
/// let result = CallToolResult::success(vec![
///     ContentBlock::text("Here is the chart:"),
///     ContentBlock::image("iVBORw0KGgo=", "image/png"),
///     ContentBlock::embedded_text("file:///notes.txt", "buy milk"),
/// ]);
/// assert_eq!(flatten_content(&result), "Here is the chart:\n[Image: image/png]\nbuy milk");
/// ```
pub fn flatten_content(result: &CallToolResult) -> String {
    if result.content.is_empty() {
        return match &result.structured_content {
            Some(value) => value.to_string(),
            None => String::new(),
        };
    }
    flatten_blocks(&result.content)
}

/// The content items of a result, flattened and joined with `\n`.
pub fn flatten_blocks(content: &[ContentBlock]) -> String {
    content
        .iter()
        .map(block_text)
        .collect::<Vec<_>>()
        .join("\n")
}

/// One content item as text.
pub fn block_text(block: &ContentBlock) -> String {
    match block {
        ContentBlock::Text(t) => t.text.clone(),
        ContentBlock::Image(i) => format!("[Image: {}]", i.mime_type),
        ContentBlock::Audio(a) => format!("[Audio: {}]", a.mime_type),
        ContentBlock::Resource(r) => match &r.resource {
            ResourceContents::TextResourceContents { text, .. } => text.clone(),
            ResourceContents::BlobResourceContents { uri, mime_type, .. } => {
                format!("[Resource: {}]", described(uri, mime_type.as_deref()))
            }
            _ => "[Resource]".to_owned(),
        },
        ContentBlock::ResourceLink(link) => {
            format!(
                "[Resource link: {}]",
                described(&link.uri, link.mime_type.as_deref())
            )
        }
        _ => "[Unsupported content]".to_owned(),
    }
}

fn described(uri: &str, mime: Option<&str>) -> String {
    match mime {
        Some(mime) => format!("{uri} ({mime})"),
        None => uri.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::Resource;
    use serde_json::json;

    #[test]
    fn spec_cases() {
        let result = CallToolResult::success(vec![
            ContentBlock::text("hello"),
            ContentBlock::image("AAAA", "image/png"),
            ContentBlock::audio("BBBB", "audio/wav"),
            ContentBlock::text("bye"),
        ]);
        assert_eq!(
            flatten_content(&result),
            "hello\n[Image: image/png]\n[Audio: audio/wav]\nbye"
        );
    }

    #[test]
    fn resources() {
        let result = CallToolResult::success(vec![
            ContentBlock::embedded_text("file:///a.txt", "text of a"),
            ContentBlock::resource(
                ResourceContents::blob("AAAA", "file:///b.bin")
                    .with_mime_type("application/octet-stream"),
            ),
            ContentBlock::resource(ResourceContents::blob("AAAA", "file:///c")),
            ContentBlock::resource_link(
                Resource::new("file:///d.png", "d").with_mime_type("image/png"),
            ),
        ]);
        assert_eq!(
            flatten_content(&result),
            "text of a\n[Resource: file:///b.bin (application/octet-stream)]\n[Resource: file:///c]\n[Resource link: file:///d.png (image/png)]"
        );
    }

    #[test]
    fn structured_content_when_content_is_empty() {
        let mut result = CallToolResult::success(vec![]);
        assert_eq!(flatten_content(&result), "");
        result.structured_content = Some(json!({"sum": 3}));
        assert_eq!(flatten_content(&result), r#"{"sum":3}"#);
        result.content = vec![ContentBlock::text("3")];
        assert_eq!(flatten_content(&result), "3");
    }
}
