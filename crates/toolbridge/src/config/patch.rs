//! Saving an edit by changing only the text of the servers that changed, so
//! the rest of the file (comments, blank lines, key order, formatting) stays
//! as the user or their editor wrote it.
//!
//! The edits `servers add/remove/enable/disable/import` make change members
//! of the servers object only, and the page's profile edits members of
//! `"profiles"` only: a removed server's (or profile's) text is cut (with
//! the comments just above it), a changed one's value is rewritten, an
//! added one is appended after the last; an object the file lacks is
//! appended to the object that should hold it. The result is parsed back and
//! compared with the intended document; when they differ the result is
//! `None`, and the caller rewrites the whole file.
//!
//! Why not `jsonc-parser` (dprint's, whose CST makes format-preserving
//! edits): measured in round 25 with 0.34.0 (issue 24) on this module's
//! byte-exact cases, its edits gave the same bytes in 2 of 5 (a changed
//! server, an added `mcp.servers`); a removed server left its comment above
//! behind (`/* fetch */` stayed, `// The clock.` stayed) and kept the next
//! member's trailing comment on the wrong line, and an added server got a
//! trailing comma inside its new object and took the `// trailing` comment
//! off its neighbour. Its `CstRootNode::parse` took 89.8 ms for a 45 KiB
//! config of 300 servers against 0.76 ms for [`jsonc::strip`] and
//! serde_json (medians, 201 runs each, release, at a load of 17 on 2
//! cores): 118 times slower. Its plain reader (`parse_to_serde_value`,
//! 0.69 ms, 0.91x) would do for reading, but the field errors need the
//! positions [`span`] finds in the stripped text, so it would replace
//! [`jsonc::strip`] (136 lines) only. Kept by hand until a release passes
//! these tests.

use serde::Serialize;
use serde_json::{Map, Value, ser::PrettyFormatter};

use super::{
    jsonc,
    layout::Layout,
    profile::PROFILES_KEY,
    span::{self, Member, Step},
};

/// `original` with the servers changed from `before` to `after`, or `None`
/// when that cannot be done by changing the servers' text alone. The
/// profiles (`"profiles"`) are patched the same way, member by member, so
/// an edit of one profile leaves the others and their comments as they
/// were. Other top-level members (VS Code's `inputs`, which an import adds
/// to) may change or be added too: each one's value is rewritten, or
/// appended.
pub(crate) fn patch(
    original: &str,
    layout: Layout,
    before: &Map<String, Value>,
    after: &Map<String, Value>,
    indent: &str,
) -> Option<String> {
    let servers_key = layout.keys()[0];
    let mut text = original.to_string();
    let mut now = before.clone();
    // The profiles member by member when they are an object before (or
    // new) and after; else (a `null` replaced) as any other member.
    if let Some(profiles @ Value::Object(_)) = after.get(PROFILES_KEY)
        && servers_key != PROFILES_KEY
        && before.get(PROFILES_KEY) != Some(profiles)
        && matches!(before.get(PROFILES_KEY), None | Some(Value::Object(_)))
    {
        let mut next = now.clone();
        next.insert(PROFILES_KEY.to_string(), profiles.clone());
        if let Some(patched) = patch_members(&text, &[PROFILES_KEY], &now, &next, indent) {
            text = patched;
            now = next;
        }
    }
    let changed: Vec<&String> = after
        .keys()
        .filter(|key| key.as_str() != servers_key && now.get(*key) != after.get(*key))
        .collect();
    if !changed.is_empty() {
        if before.keys().any(|key| !after.contains_key(key)) {
            return None;
        }
        let mut midway = now.clone();
        for key in &changed {
            midway.insert((*key).clone(), after.get(*key)?.clone());
        }
        text = patch_top_members(&text, &midway, &changed, indent)?;
        now = midway;
    }
    patch_members(&text, layout.keys(), &now, after, indent)
}

/// `original` with the top-level members `changed` set to their values in
/// `after`: rewritten in place, or appended after the last member.
fn patch_top_members(
    original: &str,
    after: &Map<String, Value>,
    changed: &[&String],
    indent: &str,
) -> Option<String> {
    let stripped = jsonc::strip(original);
    let (open, close, members) = span::object(&stripped, &[])?;
    let member_indent = member_indent(original, open, &members, indent);
    let mut edits = Vec::new();
    let mut added = Vec::new();
    for key in changed {
        let value = after.get(*key)?;
        let mut same = members.iter().filter(|m| &m.key == *key);
        match (same.next(), same.next()) {
            (Some(member), None) => edits.push((
                member.value_start,
                member.value_end,
                render(value, indent, &member_indent)?,
            )),
            (None, _) => added.push((*key, value)),
            // A duplicate key: which one is meant is ambiguous.
            (Some(_), Some(_)) => return None,
        }
    }
    if !added.is_empty() {
        edits.extend(additions(original, open, close, &members, &added, indent)?);
    }
    apply(original, edits, after)
}

/// [`patch`] of the object at `keys` (the servers, the profiles) alone,
/// member by member: every other member of `before` and `after` is the
/// same.
fn patch_members(
    original: &str,
    keys: &[&str],
    before: &Map<String, Value>,
    after: &Map<String, Value>,
    indent: &str,
) -> Option<String> {
    let stripped = jsonc::strip(original);
    let steps: Vec<Step<'_>> = keys.iter().map(|key| Step::Key(key)).collect();
    let Some((open, close, members)) = span::object(&stripped, &steps) else {
        return add_container(original, &stripped, keys, after, indent);
    };
    let empty = Map::new();
    let old = match lookup(before, keys) {
        Some(old) => old.as_object()?,
        None => &empty,
    };
    let new = lookup(after, keys)?.as_object()?;
    // Duplicate keys would make "the member named X" ambiguous.
    let mut keys: Vec<&str> = members.iter().map(|m| m.key.as_str()).collect();
    keys.sort_unstable();
    if keys.windows(2).any(|pair| pair[0] == pair[1]) || members.len() != old.len() {
        return None;
    }

    let member_indent = member_indent(original, open, &members, indent);
    // (start, end, replacement), applied from the end of the text backwards.
    let mut edits: Vec<(usize, usize, String)> = Vec::new();
    for (i, member) in members.iter().enumerate() {
        match new.get(&member.key) {
            None => edits.extend(removal(original, &stripped, &members, i, open, close)?),
            Some(value) if old.get(&member.key) != Some(value) => edits.push((
                member.value_start,
                member.value_end,
                render(value, indent, &member_indent)?,
            )),
            Some(_) => {}
        }
    }
    let added: Vec<(&String, &Value)> = new
        .iter()
        .filter(|(name, _)| !old.contains_key(*name))
        .collect();
    if !added.is_empty() {
        edits.extend(additions(original, open, close, &members, &added, indent)?);
    }
    apply(original, edits, after)
}

/// The value at `keys` in `root`, unless missing or `null`.
fn lookup<'a>(root: &'a Map<String, Value>, keys: &[&str]) -> Option<&'a Value> {
    let (first, rest) = keys.split_first()?;
    let mut value = root.get(*first)?;
    for key in rest {
        value = value.get(key)?;
    }
    Some(value).filter(|value| !value.is_null())
}

/// A file without the object at `keys` (the servers, the profiles): it is
/// added to the deepest object of its path that exists (`"mcp":
/// {"servers": ...}` to the top level, or `"servers"` to an existing
/// `"mcp"`).
fn add_container(
    original: &str,
    stripped: &str,
    keys: &[&str],
    after: &Map<String, Value>,
    indent: &str,
) -> Option<String> {
    let steps: Vec<Step<'_>> = keys.iter().map(|key| Step::Key(key)).collect();
    let (depth, (open, close, members)) = (0..keys.len())
        .rev()
        .find_map(|depth| Some((depth, span::object(stripped, &steps[..depth])?)))?;
    let mut value = after.get(keys[0])?;
    for key in &keys[1..=depth] {
        value = value.get(key)?;
    }
    let name = keys[depth].to_string();
    let edits = additions(original, open, close, &members, &[(&name, value)], indent)?;
    apply(original, edits, after)
}

/// The indentation of the members of the object opening at `open`.
fn member_indent(original: &str, open: usize, members: &[Member], indent: &str) -> String {
    match members.first() {
        Some(first) => line_prefix(original, first.start).to_string(),
        None => format!("{}{indent}", line_prefix(original, open)),
    }
}

/// The edits appending `entries` to the object at `open`..`close` whose
/// members are `members`: after the last member, or inside the empty
/// braces. A comment after the last member on its line stays with it: the
/// comma goes after the member, the new members after the comment.
fn additions(
    original: &str,
    open: usize,
    close: usize,
    members: &[Member],
    entries: &[(&String, &Value)],
    indent: &str,
) -> Option<Vec<(usize, usize, String)>> {
    let member_indent = member_indent(original, open, members, indent);
    let mut added = String::new();
    for (name, value) in entries {
        let separator = if members.is_empty() && added.is_empty() {
            ""
        } else {
            ","
        };
        let name = serde_json::to_string(name).ok()?;
        added.push_str(&format!(
            "{separator}\n{member_indent}{name}: {}",
            render(value, indent, &member_indent)?
        ));
    }
    Some(match members.last() {
        Some(last) => {
            let line_end = original[last.value_end..]
                .find('\n')
                .map(|n| last.value_end + n);
            match line_end {
                Some(line_end)
                    if !original[last.value_end..line_end].trim().is_empty()
                        && jsonc::strip(&original[last.value_end..line_end])
                            .trim()
                            .is_empty() =>
                {
                    vec![
                        (last.value_end, last.value_end, ",".to_owned()),
                        (line_end, line_end, added.strip_prefix(',')?.to_owned()),
                    ]
                }
                _ => vec![(last.value_end, last.value_end, added)],
            }
        }
        None => {
            let closing = line_prefix(original, open).to_string();
            vec![(open + 1, close, format!("{added}\n{closing}"))]
        }
    })
}

/// `original` with `edits` (start, end, replacement) made, when they do not
/// overlap and the result means exactly `after`.
fn apply(
    original: &str,
    mut edits: Vec<(usize, usize, String)>,
    after: &Map<String, Value>,
) -> Option<String> {
    edits.sort_by(|a, b| b.0.cmp(&a.0).then(b.1.cmp(&a.1)));
    let mut text = original.to_string();
    let mut limit = usize::MAX;
    for (start, end, replacement) in edits {
        if end > limit {
            return None;
        }
        text.replace_range(start..end, &replacement);
        limit = start;
    }
    // The patched text must mean exactly the intended document.
    let reread: Value = serde_json::from_str(&jsonc::strip(&text)).ok()?;
    (reread == Value::Object(after.clone())).then_some(text)
}

/// The indentation unit of `text`: a tab, or the spaces of the first
/// indented line; two spaces when nothing is indented.
pub(crate) fn indent_of(text: &str) -> String {
    text.lines()
        .filter(|line| !line.trim().is_empty())
        .find_map(|line| {
            let trimmed = line.trim_start_matches([' ', '\t']);
            let prefix = &line[..line.len() - trimmed.len()];
            match prefix.chars().next() {
                Some('\t') => Some("\t".to_string()),
                Some(' ') => Some(" ".repeat(prefix.len().min(8))),
                _ => None,
            }
        })
        .unwrap_or_else(|| "  ".to_string())
}

/// `value` as pretty JSON with `indent`, its later lines starting at
/// `base` (the indentation of the member holding it).
pub(crate) fn render(value: &Value, indent: &str, base: &str) -> Option<String> {
    let mut out = Vec::new();
    let formatter = PrettyFormatter::with_indent(indent.as_bytes());
    let mut serializer = serde_json::Serializer::with_formatter(&mut out, formatter);
    value.serialize(&mut serializer).ok()?;
    let text = String::from_utf8(out).ok()?;
    Some(text.replace('\n', &format!("\n{base}")))
}

/// The removal of member `i`: from the end of the previous value (taking
/// the comma and any comment above the member with it); for the first
/// member, from the `{` through the comma after it. A comment after the
/// previous member on its line stays with it: the cut then starts at the
/// end of that line and takes the removed member's own comma, or, when it
/// was the last member without one, the previous member's.
fn removal(
    text: &str,
    stripped: &str,
    members: &[Member],
    i: usize,
    open: usize,
    close: usize,
) -> Option<Vec<(usize, usize, String)>> {
    let member = &members[i];
    Some(
        match (i.checked_sub(1).map(|p| &members[p]), members.get(i + 1)) {
            (Some(previous), _) => {
                let comma = previous.value_end + stripped[previous.value_end..].find(',')?;
                let line_end = text[comma..].find('\n').map(|n| comma + n);
                match line_end {
                    Some(line_end)
                        if line_end < member.start
                            && !text[comma + 1..line_end].trim().is_empty() =>
                    {
                        let rest = &stripped[member.value_end..];
                        if rest.trim_start().starts_with(',') {
                            let own = member.value_end + rest.find(',')?;
                            vec![(line_end, own + 1, String::new())]
                        } else {
                            vec![
                                (comma, comma + 1, String::new()),
                                (line_end, member.value_end, String::new()),
                            ]
                        }
                    }
                    _ => vec![(previous.value_end, member.value_end, String::new())],
                }
            }
            (None, Some(_)) => {
                let comma = member.value_end + stripped[member.value_end..].find(',')?;
                vec![(open + 1, comma + 1, String::new())]
            }
            (None, None) => {
                let closing = line_prefix(text, close);
                let inner = if closing.trim().is_empty() && text[..close].ends_with(closing) {
                    close - closing.len()
                } else {
                    close
                };
                vec![(open + 1, inner.max(open + 1), String::new())]
            }
        },
    )
}

/// The whitespace from the start of `offset`'s line up to the first
/// non-blank character of that line.
fn line_prefix(text: &str, offset: usize) -> &str {
    let line_start = text[..offset].rfind('\n').map_or(0, |i| i + 1);
    let line = &text[line_start..];
    let trimmed = line.trim_start_matches([' ', '\t']);
    &line[..line.len() - trimmed.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn root(text: &str) -> Map<String, Value> {
        match serde_json::from_str(&jsonc::strip(text)).unwrap() {
            Value::Object(map) => map,
            _ => panic!(),
        }
    }

    const VS_CODE: &str = "{\n\t// Servers for this project.\n\t\"servers\": {\n\t\t// The clock.\n\t\t\"clock\": {\"type\": \"stdio\", \"command\": \"uvx\"},\n\t\t/* fetch */\n\t\t\"fetch\": {\"type\": \"stdio\", \"command\": \"f\"}, // trailing\n\t},\n\t\"inputs\": []\n}\n";

    fn edited(text: &str, change: impl FnOnce(&mut Map<String, Value>)) -> Option<String> {
        let before = root(text);
        let mut after = before.clone();
        change(
            after
                .get_mut("servers")
                .and_then(Value::as_object_mut)
                .unwrap(),
        );
        patch(text, Layout::VsCode, &before, &after, &indent_of(text))
    }

    #[test]
    fn an_added_server_keeps_comments_and_tabs() {
        let text = edited(VS_CODE, |servers| {
            servers.insert(
                "new".into(),
                serde_json::json!({"type": "stdio", "command": "n"}),
            );
        })
        .unwrap();
        assert_eq!(
            text,
            VS_CODE.replace(
                "\"command\": \"f\"}",
                "\"command\": \"f\"},\n\t\t\"new\": {\n\t\t\t\"type\": \"stdio\",\n\t\t\t\"command\": \"n\"\n\t\t}"
            )
        );
    }

    #[test]
    fn a_removed_server_takes_its_comment_and_the_rest_stays() {
        let text = edited(VS_CODE, |servers| {
            servers.shift_remove("fetch");
        })
        .unwrap();
        assert_eq!(
            text,
            "{\n\t// Servers for this project.\n\t\"servers\": {\n\t\t// The clock.\n\t\t\"clock\": {\"type\": \"stdio\", \"command\": \"uvx\"}, // trailing\n\t},\n\t\"inputs\": []\n}\n"
        );
        let text = edited(VS_CODE, |servers| {
            servers.shift_remove("clock");
        })
        .unwrap();
        assert_eq!(
            text,
            "{\n\t// Servers for this project.\n\t\"servers\": {\n\t\t/* fetch */\n\t\t\"fetch\": {\"type\": \"stdio\", \"command\": \"f\"}, // trailing\n\t},\n\t\"inputs\": []\n}\n"
        );
    }

    #[test]
    fn a_comment_after_the_previous_member_stays_when_the_next_is_removed() {
        let text = "{\n\t\"servers\": {\n\t\t\"a\": {\"command\": \"a\"}, // about a\n\t\t\"b\": {\"command\": \"b\"},\n\t\t\"c\": {\"command\": \"c\"}\n\t}\n}\n";
        let middle = edited(text, |servers| {
            servers.shift_remove("b");
        })
        .unwrap();
        assert_eq!(
            middle,
            "{\n\t\"servers\": {\n\t\t\"a\": {\"command\": \"a\"}, // about a\n\t\t\"c\": {\"command\": \"c\"}\n\t}\n}\n"
        );
        let last = edited(&middle, |servers| {
            servers.shift_remove("c");
        })
        .unwrap();
        assert_eq!(
            last,
            "{\n\t\"servers\": {\n\t\t\"a\": {\"command\": \"a\"} // about a\n\t}\n}\n"
        );
    }

    #[test]
    fn a_changed_server_is_rewritten_in_place() {
        let text = edited(VS_CODE, |servers| {
            servers["clock"]["disabled"] = Value::Bool(true);
        })
        .unwrap();
        assert!(
            text.contains("// The clock.\n\t\t\"clock\": {\n\t\t\t\"type\""),
            "{text}"
        );
        assert!(
            text.contains("\"disabled\": true\n\t\t},\n\t\t/* fetch */"),
            "{text}"
        );
    }

    #[test]
    fn a_missing_servers_object_is_added_where_its_application_reads_it() {
        let text = "{\n    // editor\n    \"editor.fontSize\": 14\n}\n";
        let before = root(text);
        let mut after = before.clone();
        after.insert(
            "mcp".into(),
            serde_json::json!({"servers": {"t": {"type": "stdio", "command": "t"}}}),
        );
        let patched = patch(text, Layout::VsCodeSettings, &before, &after, "    ").unwrap();
        assert_eq!(
            patched,
            "{\n    // editor\n    \"editor.fontSize\": 14,\n    \"mcp\": {\n        \"servers\": {\n            \"t\": {\n                \"type\": \"stdio\",\n                \"command\": \"t\"\n            }\n        }\n    }\n}\n"
        );
    }

    #[test]
    fn indentation_is_detected() {
        assert_eq!(indent_of("{\n    \"a\": 1\n}"), "    ");
        assert_eq!(indent_of("{\n\t\"a\": 1\n}"), "\t");
        assert_eq!(indent_of("{\"a\": 1}"), "  ");
    }
}
