//! A tool's `parameters` for OpenAI: processJsonSchema plus `items` for
//! arrays without, or the strict form when strict mode is asked for and the
//! schema allows it.

use super::strict::{STRICT_KEYWORDS, to_strict};
use crate::format::changes::{Change, ChangeKind, Notes};
use crate::format::schema::{self, JsonObject, Normalized, TOP_LEVEL_COMPOSITION, TopLevelRules};
use serde_json::Value;

/// What OpenAI refuses at the top of a tool's schema, non-strict.
const RULES: TopLevelRules = TopLevelRules::OBJECT_ONLY;

/// What strict mode refuses at the top: composition, and any keyword
/// outside its subset.
const STRICT_RULES: TopLevelRules = TopLevelRules {
    refuses_keyword: |key| TOP_LEVEL_COMPOSITION.contains(&key) || !STRICT_KEYWORDS.contains(&key),
    ..TopLevelRules::OBJECT_ONLY
};

/// A tool's `parameters` for OpenAI.
#[derive(Debug, Clone, PartialEq)]
pub struct OpenAiParameters {
    /// The JSON Schema to send.
    pub schema: Value,
    /// Whether the schema is in strict form (send `strict: true`).
    pub strict: bool,
}

/// Converts one tool's input schema; with `strict`, tries strict mode and
/// falls back to non-strict (noting why) when the schema cannot be made strict.
pub fn parameters(input: &JsonObject, strict: bool, notes: &mut Vec<Change>) -> OpenAiParameters {
    Notes::record_into(notes, |notes| convert(input, strict, notes))
}

/// [`parameters`], recording into `notes`.
pub(crate) fn convert(input: &JsonObject, strict: bool, notes: &mut Notes) -> OpenAiParameters {
    if strict {
        // Kept only if the schema can be made strict.
        let mut strict_notes = notes.fork();
        let normalized = Normalized::new(input, STRICT_RULES, &mut strict_notes);
        match to_strict(&normalized, strict_notes) {
            Ok((schema, strict_notes)) => {
                notes.append(strict_notes);
                return OpenAiParameters {
                    schema,
                    strict: true,
                };
            }
            Err(reason) => {
                let schema = non_strict(input, notes);
                notes.add(
                    "",
                    ChangeKind::StrictFallback,
                    false,
                    format_args!("sent non-strict: {reason}"),
                );
                return OpenAiParameters {
                    schema,
                    strict: false,
                };
            }
        }
    }
    OpenAiParameters {
        schema: non_strict(input, notes),
        strict: false,
    }
}

/// The non-strict schema: processJsonSchema, and `items` for arrays without.
fn non_strict(input: &JsonObject, notes: &mut Notes) -> Value {
    let mut normalized = schema::normalize_with(input, RULES, notes);
    add_missing_items(&mut normalized, notes);
    Value::Object(normalized)
}

/// OpenAI answers "array schema missing items" to `{"type":"array"}`.
fn add_missing_items(schema: &mut JsonObject, notes: &mut Notes) {
    let lacks_items = |node: &JsonObject| {
        let [ty, items] = schema::members(node, ["type", "items"]);
        schema::has_type(ty, "array") && items.is_none()
    };
    // Nearly every schema has none: look before walking.
    if !schema::may_match(schema, &lacks_items) {
        return;
    }
    let mut root = Value::Object(std::mem::take(schema));
    schema::walk_mut(&mut root, &mut |node, path| {
        if lacks_items(node) {
            node.insert("items".into(), Value::Object(JsonObject::new()));
            notes.add(
                path,
                ChangeKind::ItemsAdded,
                true,
                "array without `items` got `items: {}`",
            );
        }
    });
    if let Value::Object(m) = root {
        *schema = m;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj(v: Value) -> JsonObject {
        v.as_object().cloned().expect("test schemas are objects")
    }

    fn strict(v: Value) -> (OpenAiParameters, Vec<Change>) {
        let mut notes = Vec::new();
        let p = parameters(&obj(v), true, &mut notes);
        (p, notes)
    }

    #[test]
    fn arrays_without_items_get_items() {
        let mut notes = Vec::new();
        let p = parameters(
            &obj(json!({"type": "object", "properties": {"xs": {"type": "array"}}})),
            false,
            &mut notes,
        );
        assert!(!p.strict);
        assert_eq!(
            p.schema["properties"]["xs"],
            json!({"type": "array", "items": {}})
        );
        assert_eq!(notes[0].path, "/properties/xs");
    }

    #[test]
    fn strict_closes_objects_and_makes_optional_nullable() {
        let (p, _) = strict(json!({
            "type": "object",
            "properties": {
                "name": {"type": "string", "minLength": 1},
                "age": {"type": "integer"},
                "tags": {"type": "array", "items": {"type": "string"}},
                "mode": {"enum": ["a", "b"]},
                "point": {
                    "type": "object",
                    "properties": {"x": {"type": "number"}, "y": {"type": "number"}},
                    "required": ["x"]
                }
            },
            "required": ["name"]
        }));
        assert!(p.strict);
        assert_eq!(
            p.schema,
            json!({
                "type": "object",
                "properties": {
                    "name": {"type": "string"},
                    "age": {"type": ["integer", "null"]},
                    "tags": {"type": ["array", "null"], "items": {"type": "string"}},
                    "mode": {"enum": ["a", "b", null]},
                    "point": {
                        "type": ["object", "null"],
                        "properties": {"x": {"type": "number"}, "y": {"type": ["number", "null"]}},
                        "required": ["x", "y"],
                        "additionalProperties": false
                    }
                },
                "required": ["name", "age", "tags", "mode", "point"],
                "additionalProperties": false
            })
        );
    }

    #[test]
    fn strict_keeps_refs_into_defs_and_strictifies_them() {
        let (p, _) = strict(json!({
            "type": "object",
            "properties": {"node": {"$ref": "#/$defs/Node"}},
            "$defs": {"Node": {
                "type": "object",
                "properties": {"next": {"$ref": "#/$defs/Node"}, "v": {"type": "string", "default": "x"}},
                "required": ["v"]
            }}
        }));
        assert!(p.strict);
        assert_eq!(
            p.schema["properties"]["node"],
            json!({"anyOf": [{"$ref": "#/$defs/Node"}, {"type": "null"}]})
        );
        assert_eq!(
            p.schema["$defs"]["Node"],
            json!({
                "type": "object",
                "properties": {
                    "next": {"anyOf": [{"$ref": "#/$defs/Node"}, {"type": "null"}]},
                    "v": {"type": "string"}
                },
                "required": ["next", "v"],
                "additionalProperties": false
            })
        );
    }

    #[test]
    fn strict_falls_back_for_free_form_maps() {
        for schema in [
            json!({"type": "object", "properties": {"m": {"type": "object"}}}),
            json!({"type": "object", "properties": {"m": {"type": "object", "additionalProperties": true}}}),
            json!({"type": "object", "properties": {"m": {"type": "object", "patternProperties": {"^x": {}}}}}),
            json!({"type": "object", "additionalProperties": {"type": "string"}}),
            json!({"type": "object", "properties": {"any": {}}}),
            json!({"type": "object", "properties": {"xs": {"type": "array"}}}),
        ] {
            let (p, notes) = strict(schema.clone());
            assert!(!p.strict, "{schema}");
            assert!(
                notes.iter().any(|n| n.kind == ChangeKind::StrictFallback),
                "{schema}"
            );
            assert!(
                p.schema.get("additionalProperties") != Some(&json!(false))
                    || schema.get("additionalProperties").is_some()
            );
        }
    }

    #[test]
    fn strict_allows_tools_without_arguments() {
        let (p, _) = strict(json!({"type": "object"}));
        assert!(p.strict);
        assert_eq!(
            p.schema,
            json!({"type": "object", "properties": {}, "required": [], "additionalProperties": false})
        );
    }

    #[test]
    fn strict_rewrites_one_of_and_drops_unsupported_formats() {
        let (p, notes) = strict(json!({
            "type": "object",
            "properties": {
                "v": {"oneOf": [{"type": "string", "format": "uri"}, {"type": "integer"}]}
            },
            "required": ["v"]
        }));
        assert!(p.strict);
        assert_eq!(
            p.schema["properties"]["v"],
            json!({"anyOf": [{"type": "string"}, {"type": "integer"}]})
        );
        assert!(notes.iter().any(|n| n.kind == ChangeKind::FormatDropped));
    }
}
