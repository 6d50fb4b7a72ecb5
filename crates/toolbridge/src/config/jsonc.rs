//! JSON with comments (VS Code's `settings.json` and `mcp.json` are JSONC):
//! comments and trailing commas are blanked out with spaces, so the result
//! parses as JSON and every line and column stays where it was. A comma
//! that follows no value (`[,]`, `"a",,}`) is not a trailing comma: it is
//! kept, so the JSON parser reports it where it is.
//!
//! Hand-written rather than `jsonc-parser`: see the measurement at the head
//! of [`super::patch`] (its reader is about as fast, but the field errors
//! need positions in this stripped text, and its edits do not give the
//! bytes the patch tests require).

/// `text` with `//` and `/* */` comments and trailing commas replaced by
/// spaces (newlines inside block comments are kept). Stripping twice gives
/// the same text as stripping once.
pub(crate) fn strip(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = bytes.to_vec();
    let mut i = 0;
    let mut in_string = false;
    // A comma after a value, with only whitespace or comments after it so far.
    let mut pending_comma = None;
    // Whether the last token outside comments ended a value (a string's
    // closing quote, a number, `true`, `}`...), so a comma may follow it.
    let mut after_value = false;
    while i < bytes.len() {
        let byte = bytes[i];
        if in_string {
            match byte {
                b'\\' => i += 1,
                b'"' => {
                    in_string = false;
                    after_value = true;
                }
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
            (b',', _) => {
                // A second comma in a row, or one after `[`, `{` or `:`,
                // is a mistake, not a trailing comma: neither is removed.
                pending_comma = after_value.then_some(i);
                after_value = false;
            }
            (b'}' | b']', _) => {
                if let Some(comma) = pending_comma.take() {
                    out[comma] = b' ';
                }
                after_value = true;
            }
            (b' ' | b'\t' | b'\n' | b'\r', _) => {}
            (b'[' | b'{' | b':', _) => {
                pending_comma = None;
                after_value = false;
            }
            _ => {
                pending_comma = None;
                after_value = true;
            }
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
    fn a_comma_after_no_value_is_kept_for_the_parser_to_report() {
        // Regression (issue 24, item 1): `"a",, }` lost both commas, one
        // per strip (a config is stripped twice), and was accepted.
        for text in [
            r#"{"x": {"command": "a",, }}"#,
            "[,]",
            "{,}",
            r#"{"a": , }"#,
            "[1,\n // c\n , ]",
        ] {
            let once = strip(text);
            assert_eq!(strip(&once), once, "{text}");
            assert!(
                serde_json::from_str::<serde_json::Value>(&once).is_err(),
                "{text} was accepted as {once}"
            );
        }
        assert_eq!(strip(r#"{"a": [1,],}"#), r#"{"a": [1 ] }"#);
    }

    #[test]
    fn commas_between_values_are_kept() {
        let text = "[1, /* c */ 2]";
        assert_eq!(strip(text), "[1,         2]");
    }
}
