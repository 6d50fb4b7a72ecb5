//! Which keywords hold subschemas, and bounded walks over every subschema
//! of a schema.

use super::JsonObject;
use super::pointer::Segment;
use serde_json::Value;
use std::fmt::Write;

/// How deep a rewriting conversion goes; deeper parts are cut, so hostile
/// input cannot exhaust the stack.
pub(crate) const MAX_DEPTH: usize = 32;

/// Keywords holding a map of name → subschema.
pub(crate) const MAP_KEYWORDS: [&str; 5] = [
    "properties",
    "patternProperties",
    "$defs",
    "definitions",
    "dependentSchemas",
];
/// Keywords holding one subschema.
pub(crate) const SINGLE_KEYWORDS: [&str; 11] = [
    "items",
    "additionalProperties",
    "not",
    "if",
    "then",
    "else",
    "contains",
    "propertyNames",
    "unevaluatedItems",
    "unevaluatedProperties",
    "additionalItems",
];
/// Keywords holding a list of subschemas.
pub(crate) const LIST_KEYWORDS: [&str; 5] = ["anyOf", "oneOf", "allOf", "prefixItems", "items"];

/// Calls `visit` on every schema object in `root`, parents before children
/// and siblings in order; `visit` gets the JSON pointer of the node. Iterative,
/// so no nesting depth can exhaust the stack. Values that are not schemas
/// (`enum`, `const`, `default`, property-name maps) are never visited as schemas.
pub(crate) fn walk_mut(root: &mut Value, visit: &mut dyn FnMut(&mut JsonObject, &str)) {
    /// How a node's pointer extends its parent's.
    enum Step<'a> {
        Root,
        /// `/keyword`: a keyword holding one subschema.
        Single(&'a str),
        /// `/keyword/name`: a keyword holding a map of subschemas.
        Named(&'a str, &'a str),
        /// `/keyword/3`: a keyword holding a list of subschemas.
        Indexed(&'a str, usize),
    }
    // Depth first with an explicit stack; each entry carries the length of
    // its parent's pointer, which is always a prefix of `path` when the
    // entry is popped (everything visited since is the parent's descendant).
    let mut stack: Vec<(&mut Value, usize, Step<'_>)> = Vec::with_capacity(16);
    stack.push((root, 0, Step::Root));
    let mut path = String::with_capacity(64);
    while let Some((value, parent_len, step)) = stack.pop() {
        let Value::Object(node) = value else {
            continue;
        };
        path.truncate(parent_len);
        // Writing to a String cannot fail.
        let _ = match step {
            Step::Root => Ok(()),
            Step::Single(keyword) => write!(path, "/{}", Segment(keyword)),
            Step::Named(keyword, name) => {
                write!(path, "/{}/{}", Segment(keyword), Segment(name))
            }
            Step::Indexed(keyword, i) => write!(path, "/{}/{i}", Segment(keyword)),
        };
        visit(node, &path);
        let len = path.len();
        let first_child = stack.len();
        for (key, child) in node.iter_mut() {
            let key = key.as_str();
            if MAP_KEYWORDS.contains(&key) {
                if let Value::Object(map) = child {
                    for (name, schema) in map.iter_mut() {
                        stack.push((schema, len, Step::Named(key, name)));
                    }
                }
            } else if LIST_KEYWORDS.contains(&key) && child.is_array() {
                if let Value::Array(items) = child {
                    for (i, schema) in items.iter_mut().enumerate() {
                        stack.push((schema, len, Step::Indexed(key, i)));
                    }
                }
            } else if SINGLE_KEYWORDS.contains(&key) {
                stack.push((child, len, Step::Single(key)));
            }
        }
        // Popped last-in first-out: reversed, the first child is visited first.
        stack[first_child..].reverse();
    }
}

/// Whether `test` may hold for a schema object [`walk_mut`] would visit in
/// `root`: `true` when it holds for one, or when `root` nests deeper than
/// [`MAX_DEPTH`] (looking further could exhaust the stack). Lets a caller
/// skip the walk, and what it allocates, when it would change nothing.
pub(crate) fn may_match(root: &JsonObject, test: &dyn Fn(&JsonObject) -> bool) -> bool {
    fn visit(node: &JsonObject, test: &dyn Fn(&JsonObject) -> bool, depth: usize) -> bool {
        if depth > MAX_DEPTH || test(node) {
            return true;
        }
        let child = |value: &Value| match value {
            Value::Object(m) => visit(m, test, depth + 1),
            _ => false,
        };
        node.iter().any(|(key, value)| {
            let key = key.as_str();
            if MAP_KEYWORDS.contains(&key) {
                value.as_object().is_some_and(|map| map.values().any(child))
            } else if let (true, Value::Array(items)) = (LIST_KEYWORDS.contains(&key), value) {
                items.iter().any(child)
            } else {
                SINGLE_KEYWORDS.contains(&key) && child(value)
            }
        })
    }
    visit(root, test, 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn walk_visits_schemas_in_order_and_skips_values() {
        let mut schema = json!({
            "type": "object",
            "properties": {
                "enum": {"enum": [{"type": "array"}]},
                "b": {"items": {"type": "string"}}
            },
            "default": {"type": "object"}
        });
        let mut seen = Vec::new();
        walk_mut(&mut schema, &mut |_, path| seen.push(path.to_owned()));
        assert_eq!(
            seen,
            [
                "",
                "/properties/enum",
                "/properties/b",
                "/properties/b/items"
            ]
        );
    }

    #[test]
    fn walk_survives_deep_nesting() {
        let mut deep = json!({"type": "string"});
        for _ in 0..300 {
            deep = json!({"type": "array", "items": deep});
        }
        let mut seen = 0usize;
        walk_mut(&mut deep, &mut |_, _| seen += 1);
        assert_eq!(seen, 301);
    }
}
