//! The rule for a new server name: what `servers add`, `servers import`, a
//! preset and the web page's server form may write into a config.
//!
//! At most [`MAX_LEN`] characters, every one printable: no control,
//! bidirectional, zero-width, tag or variation-selector character (a name
//! that reads as one thing and is another: issue 32's fifteenth finding),
//! and not `.` or `..` (a path segment a browser or a shell resolves). A name
//! already in a config is kept as it is, whatever it holds: it can still be
//! edited, disabled and removed (the rule is checked where a name is new).

use crate::hidden_chars::kind_of;

/// The longest new server name, in characters.
pub const MAX_LEN: usize = 64;

/// What is wrong with `name` as a new server name, if anything: a sentence
/// that states the rule.
pub fn problem(name: &str) -> Option<String> {
    let why = if name.trim().is_empty() {
        "it is empty".to_owned()
    } else if name == "." || name == ".." {
        format!("\"{name}\" is a path segment")
    } else if name.chars().count() > MAX_LEN {
        format!("it has {} characters", name.chars().count())
    } else if let Some((c, kind)) = name.chars().find_map(|c| kind_of(c).map(|kind| (c, kind))) {
        format!("it holds a {} (U+{:04X})", kind.describe(), c as u32)
    } else if let Some(c) = name.chars().find(|c| c.is_control()) {
        format!("it holds a control character (U+{:04X})", c as u32)
    } else {
        return None;
    };
    Some(format!(
        "{why}: a server name is 1 to {MAX_LEN} printable characters, without control, \
         bidirectional or zero-width characters, and not \".\" or \"..\""
    ))
}

/// `name` as an error message shows it: escaped, and cut at [`MAX_LEN`]
/// characters.
pub fn shown(name: &str) -> String {
    let mut cut: String = name.chars().take(MAX_LEN).collect();
    if cut.len() < name.len() {
        cut.push('…');
    }
    format!("{cut:?}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn printable_names_up_to_64_characters_pass() {
        for name in ["github", "my server", "données", "服务器", &"a".repeat(64)] {
            assert_eq!(problem(name), None, "{name}");
        }
    }

    #[test]
    fn hidden_characters_dot_segments_and_long_names_are_refused_with_the_rule() {
        for (name, why) in [
            ("", "empty"),
            ("   ", "empty"),
            (".", "path segment"),
            ("..", "path segment"),
            ("evil\u{202E}gnp.exe", "bidirectional control (U+202E)"),
            ("git\u{200B}hub", "zero-width character (U+200B)"),
            ("a\u{7}b", "control character (U+0007)"),
            ("tag\u{E0041}", "Unicode tag character"),
        ] {
            let problem = problem(name).unwrap_or_else(|| panic!("{name:?} passed"));
            assert!(problem.contains(why), "{name:?}: {problem}");
            assert!(
                problem.contains("1 to 64 printable characters"),
                "{problem}"
            );
        }
        let long = "x".repeat(65);
        assert!(problem(&long).is_some_and(|p| p.contains("65 characters")));
        let huge = "y".repeat(1 << 20);
        assert!(shown(&huge).len() < 80, "{}", shown(&huge));
    }
}
