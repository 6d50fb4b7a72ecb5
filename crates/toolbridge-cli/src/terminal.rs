//! Text from servers on a terminal: control characters neutralised.
//!
//! A server's tool text, error messages, tool names and stderr lines may
//! hold escape sequences (ESC, CSI, OSC …) that a terminal would obey:
//! recolour, move the cursor, retitle the window, even write to the
//! clipboard. Written to a terminal, every C0 control except `\n` and `\t`,
//! DEL and every C1 control is shown as a visible `\x1b`-style escape. Written
//! to a pipe or a file, and in `--json` output, text is kept as it is: a
//! program reading it gets the server's bytes.

use std::{borrow::Cow, io::IsTerminal};

/// `text` with its control characters (other than `\n` and `\t`) shown as
/// `\xNN` / `\u{NN}` escapes, so a terminal prints them instead of obeying them.
pub fn neutralise(text: &str) -> Cow<'_, str> {
    if !text.chars().any(is_hostile) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if is_hostile(c) {
            if (c as u32) < 0x80 {
                out.push_str(&format!("\\x{:02x}", c as u32));
            } else {
                out.push_str(&format!("\\u{{{:x}}}", c as u32));
            }
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// A control character a terminal may act on: C0 but `\n` and `\t`, DEL, C1.
fn is_hostile(c: char) -> bool {
    (c.is_control() && c != '\n' && c != '\t') || ('\u{80}'..='\u{9f}').contains(&c)
}

/// `text` as it should reach stdout: neutralised when stdout is a terminal.
pub fn for_stdout(text: &str) -> Cow<'_, str> {
    if std::io::stdout().is_terminal() {
        neutralise(text)
    } else {
        Cow::Borrowed(text)
    }
}

/// `text` as it should reach stderr: neutralised when stderr is a terminal.
pub fn for_stderr(text: &str) -> Cow<'_, str> {
    if std::io::stderr().is_terminal() {
        neutralise(text)
    } else {
        Cow::Borrowed(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_sequences_are_shown_not_obeyed() {
        let hostile =
            "\u{1b}[31mred\u{1b}[0m \u{1b}]0;title\u{7} \u{9b}2J bell\u{7} cr\r del\u{7f}";
        assert_eq!(
            neutralise(hostile),
            "\\x1b[31mred\\x1b[0m \\x1b]0;title\\x07 \\u{9b}2J bell\\x07 cr\\x0d del\\x7f"
        );
    }

    #[test]
    fn newlines_tabs_and_plain_unicode_are_kept() {
        let text = "line 1\n\tline 2 — ünïcode ✓ 漢字";
        assert!(matches!(neutralise(text), Cow::Borrowed(t) if t == text));
    }
}
