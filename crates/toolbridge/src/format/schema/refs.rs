//! Local `$ref`s: what they point to, and the one inliner every provider
//! uses to put a target in place of its reference.

use super::JsonObject;
use super::pointer::unescape_pointer;
use serde_json::Value;

/// The schema a local reference (`#`, `#/$defs/x`, `#/definitions/x`, any
/// JSON pointer after `#`) points to inside `root`.
pub(crate) fn resolve_local_ref<'a>(root: &'a JsonObject, reference: &str) -> Option<&'a Value> {
    resolve_pointer(reference, |first| root.get(first))
}

/// [`resolve_local_ref`] in a root whose members `member` looks up.
pub(crate) fn resolve_pointer<'a>(
    reference: &str,
    member: impl FnOnce(&str) -> Option<&'a Value>,
) -> Option<&'a Value> {
    let pointer = reference.strip_prefix('#')?;
    if pointer.is_empty() {
        return None;
    }
    let mut segments = pointer.strip_prefix('/')?.split('/');
    let first = unescape_pointer(segments.next()?);
    let mut node = member(&first)?;
    for segment in segments {
        let segment = unescape_pointer(segment);
        node = match node {
            Value::Object(m) => m.get(&segment)?,
            Value::Array(items) => items.get(segment.parse::<usize>().ok()?)?,
            _ => return None,
        };
    }
    Some(node)
}

/// Whether `reference` is `#`, a reference to the whole schema.
pub(crate) fn is_root_ref(reference: &str) -> bool {
    reference == "#"
}

/// The schema a reference node becomes when its target is inlined: the
/// members of `target` (what the `$ref` points to), then the members of
/// `node` other than `$ref`, which override the target's, in their order.
///
/// The one inliner: the top-level `$ref` processJsonSchema follows, OpenAI
/// strict mode's `$ref` with siblings, Gemini's inlined `$ref`s and `allOf`
/// branches all go through here.
pub(crate) fn inline(target: &JsonObject, node: &JsonObject) -> JsonObject {
    let mut merged = JsonObject::with_capacity(target.len() + node.len());
    merged.extend(target.iter().map(|(k, v)| (k.clone(), v.clone())));
    for (key, value) in node {
        if key != "$ref" {
            merged.insert(key.clone(), value.clone());
        }
    }
    merged
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj(v: Value) -> JsonObject {
        v.as_object().cloned().expect("test schemas are objects")
    }

    #[test]
    fn local_refs_resolve_by_pointer() {
        let root = obj(json!({"$defs": {"a/b": {"type": "string"}}, "items": [{"x": 1}]}));
        assert_eq!(
            resolve_local_ref(&root, "#/$defs/a~1b"),
            Some(&json!({"type": "string"}))
        );
        assert_eq!(resolve_local_ref(&root, "#/items/0/x"), Some(&json!(1)));
        assert_eq!(resolve_local_ref(&root, "#/nope"), None);
        assert_eq!(resolve_local_ref(&root, "http://x/y"), None);
        assert_eq!(resolve_local_ref(&root, "#"), None);
    }

    #[test]
    fn inlined_siblings_override_the_target() {
        let target = obj(json!({"type": "string", "description": "target", "minLength": 1}));
        let node = obj(json!({"$ref": "#/$defs/T", "description": "node", "title": "t"}));
        assert_eq!(
            Value::Object(inline(&target, &node)),
            json!({"type": "string", "description": "node", "minLength": 1, "title": "t"})
        );
    }
}
