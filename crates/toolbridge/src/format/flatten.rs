//! A tool result as one string, for providers and agents that take text.

use rmcp::model::{CallToolResult, ContentBlock, Resource, ResourceContents};

/// The spec's `flattenContent`, extended: every content item on its own line.
///
/// - text as is;
/// - images and audio as `[Image: mime]` and `[Audio: mime]`;
/// - embedded text resources as a `[Resource: uri (mime)]` line naming
///   where the text comes from, then the text;
/// - embedded binary resources as `[Resource: uri (mime, N bytes)]`;
/// - resource links as one line: `[Resource link: name <uri> (mime)]
///   description` (the title stands for the name when there is one; a
///   name the uri already says is left out, and so are missing parts);
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
/// assert_eq!(
///     flatten_content(&result),
///     "Here is the chart:\n[Image: image/png]\n[Resource: file:///notes.txt (text/plain)]\nbuy milk"
/// );
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
    // Written into one string: a result of 500,000 items does not become
    // 500,000 strings first.
    let mut out = String::new();
    for (i, block) in content.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        match block {
            ContentBlock::Text(t) => out.push_str(&t.text),
            other => out.push_str(&block_text(other)),
        }
    }
    out
}

/// One content item as text.
pub fn block_text(block: &ContentBlock) -> String {
    match block {
        ContentBlock::Text(t) => t.text.clone(),
        ContentBlock::Image(i) => format!("[Image: {}]", i.mime_type),
        ContentBlock::Audio(a) => format!("[Audio: {}]", a.mime_type),
        ContentBlock::Resource(r) => match &r.resource {
            ResourceContents::TextResourceContents {
                uri,
                mime_type,
                text,
                ..
            } => format!(
                "[Resource: {}]\n{text}",
                described(uri, mime_type.as_deref(), None)
            ),
            ResourceContents::BlobResourceContents {
                uri,
                mime_type,
                blob,
                ..
            } => format!(
                "[Resource: {}]",
                described(uri, mime_type.as_deref(), Some(base64_len(blob)))
            ),
            _ => "[Resource]".to_owned(),
        },
        ContentBlock::ResourceLink(link) => link_text(link),
        _ => "[Unsupported content]".to_owned(),
    }
}

/// A resource link as one readable line: what it is called, where it is,
/// what it holds.
fn link_text(link: &Resource) -> String {
    let name = link.title.as_deref().unwrap_or(&link.name).trim();
    let mut out = String::from("[Resource link: ");
    if !name.is_empty() && !link.uri.contains(name) {
        out.push_str(&one_line(name));
        out.push(' ');
    }
    out.push('<');
    out.push_str(&link.uri);
    out.push('>');
    if let Some(mime) = &link.mime_type {
        out.push_str(&format!(" ({mime})"));
    }
    out.push(']');
    if let Some(description) = link.description.as_deref().map(str::trim)
        && !description.is_empty()
    {
        out.push(' ');
        out.push_str(&one_line(description));
    }
    out
}

/// `text` with its line breaks made spaces, so one item stays one line.
fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `uri (mime, N bytes)`, leaving out what is not known.
fn described(uri: &str, mime: Option<&str>, bytes: Option<usize>) -> String {
    match (mime, bytes) {
        (Some(mime), Some(n)) => format!("{uri} ({mime}, {n} bytes)"),
        (Some(mime), None) => format!("{uri} ({mime})"),
        (None, Some(n)) => format!("{uri} ({n} bytes)"),
        (None, None) => uri.to_owned(),
    }
}

/// How many bytes the base64 text `blob` holds, without decoding it.
fn base64_len(blob: &str) -> usize {
    let digits = blob.bytes().filter(|b| !b.is_ascii_whitespace()).count();
    let padding = blob.bytes().rev().take_while(|b| *b == b'=').count().min(2);
    (digits * 3 / 4).saturating_sub(padding)
}

#[cfg(test)]
mod tests {
    use super::*;
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
            "[Resource: file:///a.txt (text/plain)]\ntext of a\n\
             [Resource: file:///b.bin (application/octet-stream, 3 bytes)]\n\
             [Resource: file:///c (3 bytes)]\n\
             [Resource link: <file:///d.png> (image/png)]"
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

    #[test]
    fn resource_links_read_as_one_line_with_name_and_description() {
        let mut report = Resource::new("https://example.com/q3.pdf", "Quarterly report")
            .with_mime_type("application/pdf");
        report.description = Some("Figures for Q3,\nby region".into());
        let mut titled = Resource::new("file:///notes.txt", "notes");
        titled.title = Some("Meeting notes".into());
        let bare = Resource::new("file:///x", "");
        let result = CallToolResult::success(vec![
            ContentBlock::resource_link(report),
            ContentBlock::resource_link(titled),
            ContentBlock::resource_link(bare),
        ]);
        assert_eq!(
            flatten_content(&result),
            "[Resource link: Quarterly report <https://example.com/q3.pdf> (application/pdf)] Figures for Q3, by region\n\
             [Resource link: Meeting notes <file:///notes.txt>]\n\
             [Resource link: <file:///x>]"
        );
    }

    #[test]
    fn every_kind_of_content_shows_up_one_item_per_line() {
        let result = CallToolResult::success(vec![
            ContentBlock::text("text"),
            ContentBlock::image("AAAA", "image/jpeg"),
            ContentBlock::audio("BBBB", "audio/mpeg"),
            ContentBlock::embedded_text("file:///t.txt", "resource text"),
            ContentBlock::resource(
                ResourceContents::blob("CCCC", "file:///b.bin").with_mime_type("application/zip"),
            ),
            ContentBlock::resource_link(Resource::new("file:///l.md", "readme")),
        ]);
        let text = flatten_content(&result);
        assert_eq!(
            text.lines().collect::<Vec<_>>(),
            [
                "text",
                "[Image: image/jpeg]",
                "[Audio: audio/mpeg]",
                "[Resource: file:///t.txt (text/plain)]",
                "resource text",
                "[Resource: file:///b.bin (application/zip, 3 bytes)]",
                "[Resource link: readme <file:///l.md>]",
            ]
        );
    }

    #[test]
    fn an_error_with_only_structured_content_shows_it() {
        let mut result = CallToolResult::error(vec![]);
        result.structured_content = Some(json!({"error": "quota", "retryAfterMs": 500}));
        assert_eq!(
            flatten_content(&result),
            r#"{"error":"quota","retryAfterMs":500}"#
        );
    }

    #[test]
    fn a_blob_says_how_many_bytes_it_holds() {
        for (blob, bytes) in [
            ("", 0),
            ("AA==", 1),
            ("AAA=", 2),
            ("AAAA", 3),
            ("AAAA\nAAAA", 6),
        ] {
            assert_eq!(base64_len(blob), bytes, "{blob:?}");
        }
        let mut embedded = ResourceContents::blob("iVBORw0KGgo=", "test://chart");
        if let ResourceContents::BlobResourceContents { mime_type, .. } = &mut embedded {
            *mime_type = Some("image/png".to_owned());
        }
        assert_eq!(
            block_text(&ContentBlock::resource(embedded)),
            "[Resource: test://chart (image/png, 8 bytes)]"
        );
    }
}
