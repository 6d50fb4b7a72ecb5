//! JSON with comments (VS Code's `settings.json` and `mcp.json` are JSONC):
//! comments and trailing commas are blanked out with spaces, so the result
//! parses as JSON and every line and column stays where it was.

/// `text` with `//` and `/* */` comments and trailing commas replaced by
/// spaces (newlines inside block comments are kept).
pub(crate) fn strip(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = bytes.to_vec();
    let mut i = 0;
    let mut in_string = false;
    // A comma with only whitespace or comments after it so far.
    let mut pending_comma = None;
    while i < bytes.len() {
        let byte = bytes[i];
        if in_string {
            match byte {
                b'\\' => i += 1,
                b'"' => in_string = false,
                _ => {}
            }
            i += 1;
            continue;
        }
        match (byte, bytes.get(i + 1)) {
            (b'/', Some(b'/')) => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    out[i] = b' ';
                    i += 1;
                }
                continue;
            }
            (b'/', Some(b'*')) => {
                let end = text[i + 2..]
                    .find("*/")
                    .map_or(bytes.len(), |e| i + 2 + e + 2);
                for slot in &mut out[i..end] {
                    if *slot != b'\n' {
                        *slot = b' ';
                    }
                }
                i = end;
                continue;
            }
            (b'"', _) => {
                in_string = true;
                pending_comma = None;
            }
            (b',', _) => pending_comma = Some(i),
            (b'}' | b']', _) => {
                if let Some(comma) = pending_comma.take() {
                    out[comma] = b' ';
                }
            }
            (b' ' | b'\t' | b'\n' | b'\r', _) => {}
            _ => pending_comma = None,
        }
        i += 1;
    }
    // Only whole ASCII bytes or whole comments were replaced, so this is
    // still UTF-8; the lossy path is never taken.
    String::from_utf8(out).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments_and_trailing_commas_become_spaces() {
        let text = "{\n  // line comment ü\n  \"a\": [1, 2,], /* block\n é */ \"b\": \"//not a comment\",\n}";
        let stripped = strip(text);
        assert_eq!(stripped.len(), text.len());
        assert_eq!(stripped.lines().count(), text.lines().count());
        let value: serde_json::Value = serde_json::from_str(&stripped).unwrap();
        assert_eq!(
            value,
            serde_json::json!({"a": [1, 2], "b": "//not a comment"})
        );
    }

    #[test]
    fn escaped_quotes_do_not_end_strings() {
        let text = r#"{"a": "x\" // y", "b": 1}"#;
        assert_eq!(strip(text), text);
    }

    #[test]
    fn commas_between_values_are_kept() {
        let text = "[1, /* c */ 2]";
        assert_eq!(strip(text), "[1,         2]");
    }
}
