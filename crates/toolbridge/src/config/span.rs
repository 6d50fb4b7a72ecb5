//! Finding where a value is in the JSON text, so field errors can say
//! `line:column` although `serde_json::Value` keeps no positions.
//!
//! The text has already been parsed by serde_json, so it is valid JSON; the
//! scanner only needs to skip values and match keys, not to validate.

/// One step of a path into a JSON document.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Step<'a> {
    /// A member of an object.
    Key(&'a str),
    /// An element of an array.
    Index(usize),
}

/// The 1-based line and column of the value at `path` in `text`, or `None`
/// when the path is not there. With duplicate keys the last one counts, as
/// in serde_json.
pub(crate) fn find(text: &str, path: &[Step<'_>]) -> Option<(u32, u32)> {
    let mut scanner = Scanner { text, pos: 0 };
    scanner.find(path).map(|offset| line_col(text, offset))
}

/// One member of a JSON object, as byte offsets into the text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Member {
    /// The key, decoded.
    pub(crate) key: String,
    /// Where the key's opening quote is.
    pub(crate) start: usize,
    /// Where the value starts.
    pub(crate) value_start: usize,
    /// Just after the value.
    pub(crate) value_end: usize,
}

/// The object at `path` in `text`: the offsets of its `{` and `}` and its
/// members in order; `None` when the path is not there or is no object.
pub(crate) fn object(text: &str, path: &[Step<'_>]) -> Option<(usize, usize, Vec<Member>)> {
    let mut scanner = Scanner { text, pos: 0 };
    let open = scanner.find(path)?;
    if text.as_bytes().get(open) != Some(&b'{') {
        return None;
    }
    scanner.pos = open + 1;
    let mut members = Vec::new();
    loop {
        scanner.skip_ws();
        match scanner.peek()? {
            b'}' => return Some((open, scanner.pos, members)),
            b',' => {
                scanner.pos += 1;
                continue;
            }
            _ => {}
        }
        let start = scanner.pos;
        let key = scanner.string()?;
        scanner.skip_ws();
        scanner.pos += 1; // ':'
        scanner.skip_ws();
        let value_start = scanner.pos;
        scanner.skip_value()?;
        members.push(Member {
            key,
            start,
            value_start,
            value_end: scanner.pos,
        });
    }
}

/// The 1-based line and column (in characters) of byte `offset` in `text`.
pub(crate) fn line_col(text: &str, offset: usize) -> (u32, u32) {
    let before = text.get(..offset).unwrap_or(text);
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let line = before.matches('\n').count() + 1;
    let column = before[line_start..].chars().count() + 1;
    (saturate(line), saturate(column))
}

/// `n` as a `u32`; a config file with four billion lines is not a concern.
pub(crate) fn saturate(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

struct Scanner<'a> {
    text: &'a str,
    pos: usize,
}

impl Scanner<'_> {
    fn peek(&self) -> Option<u8> {
        self.text.as_bytes().get(self.pos).copied()
    }

    fn skip_ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.pos += 1;
        }
    }

    /// The byte offset of the value at `path`, starting at the value at `pos`.
    fn find(&mut self, path: &[Step<'_>]) -> Option<usize> {
        self.skip_ws();
        let Some((step, rest)) = path.split_first() else {
            return Some(self.pos);
        };
        match (self.peek()?, step) {
            (b'{', Step::Key(wanted)) => {
                self.pos += 1;
                let mut found = None;
                loop {
                    self.skip_ws();
                    match self.peek()? {
                        b'}' => break,
                        b',' => {
                            self.pos += 1;
                            continue;
                        }
                        _ => {}
                    }
                    let key = self.string()?;
                    self.skip_ws();
                    self.pos += 1; // ':'
                    self.skip_ws();
                    if key == *wanted {
                        found = Some(self.pos);
                    }
                    self.skip_value()?;
                }
                self.pos = found?;
                self.find(rest)
            }
            (b'[', Step::Index(wanted)) => {
                self.pos += 1;
                let mut index = 0;
                loop {
                    self.skip_ws();
                    match self.peek()? {
                        b']' => return None,
                        b',' => {
                            self.pos += 1;
                            continue;
                        }
                        _ => {}
                    }
                    if index == *wanted {
                        return self.find(rest);
                    }
                    self.skip_value()?;
                    index += 1;
                }
            }
            _ => None,
        }
    }

    /// Reads the string at `pos` and returns it decoded.
    fn string(&mut self) -> Option<String> {
        let start = self.pos;
        self.skip_string()?;
        serde_json::from_str(self.text.get(start..self.pos)?).ok()
    }

    fn skip_string(&mut self) -> Option<()> {
        let bytes = self.text.as_bytes();
        let mut i = self.pos + 1;
        loop {
            match bytes.get(i)? {
                b'"' => break,
                b'\\' => i += 2,
                _ => i += 1,
            }
        }
        self.pos = i + 1;
        Some(())
    }

    fn skip_value(&mut self) -> Option<()> {
        self.skip_ws();
        match self.peek()? {
            b'"' => self.skip_string(),
            open @ (b'{' | b'[') => {
                let close = if open == b'{' { b'}' } else { b']' };
                self.pos += 1;
                loop {
                    self.skip_ws();
                    match self.peek()? {
                        c if c == close => {
                            self.pos += 1;
                            return Some(());
                        }
                        b',' | b':' => self.pos += 1,
                        _ => self.skip_value()?,
                    }
                }
            }
            _ => {
                while !matches!(
                    self.peek(),
                    None | Some(b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r')
                ) {
                    self.pos += 1;
                }
                Some(())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = r#"{
  "mcpServers": {
    "time": { "command": "uvx", "args": ["a", 5] },
    "w\u00e9b": {
      "url": "https://x/{}[],:",
      "headers": {"A": "b"}
    }
  }
}"#;

    #[test]
    fn finds_values_of_nested_keys_and_array_elements() {
        use Step::{Index, Key};
        assert_eq!(find(TEXT, &[]), Some((1, 1)));
        assert_eq!(find(TEXT, &[Key("mcpServers")]), Some((2, 17)));
        assert_eq!(find(TEXT, &[Key("mcpServers"), Key("time")]), Some((3, 13)));
        assert_eq!(
            find(TEXT, &[Key("mcpServers"), Key("time"), Key("args")]),
            Some((3, 41))
        );
        assert_eq!(
            find(
                TEXT,
                &[Key("mcpServers"), Key("time"), Key("args"), Index(1)]
            ),
            Some((3, 47))
        );
    }

    #[test]
    fn decodes_escaped_keys_and_skips_punctuation_inside_strings() {
        use Step::Key;
        assert_eq!(
            find(
                TEXT,
                &[Key("mcpServers"), Key("wéb"), Key("headers"), Key("A")]
            ),
            Some((6, 24))
        );
    }

    #[test]
    fn missing_paths_are_none() {
        use Step::{Index, Key};
        assert_eq!(find(TEXT, &[Key("nope")]), None);
        assert_eq!(
            find(
                TEXT,
                &[Key("mcpServers"), Key("time"), Key("args"), Index(2)]
            ),
            None
        );
        assert_eq!(find(TEXT, &[Index(0)]), None);
    }

    #[test]
    fn the_last_duplicate_key_wins_like_serde_json() {
        let text = r#"{"a": 1, "a": 2}"#;
        assert_eq!(find(text, &[Step::Key("a")]), Some((1, 15)));
    }

    #[test]
    fn columns_count_characters() {
        assert_eq!(line_col("ééé\n  x", 9), (2, 3));
        assert_eq!(line_col("ééx", 4), (1, 3));
    }
}
