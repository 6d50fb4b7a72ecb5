//! Gemini `parametersJsonSchema`: full JSON Schema minus `$schema`, for
//! [`FormatOptions::gemini_json_schema`](crate::format::FormatOptions::gemini_json_schema).

use crate::format::changes::{Change, ChangeKind, Notes};
use crate::format::schema::{self, JsonObject, TopLevelRules};
use serde_json::Value;

/// What `parametersJsonSchema` refuses at the top: only `$schema`.
const RULES: TopLevelRules = TopLevelRules {
    refuses_keyword: |key| key == "$schema",
    refuses_composition: false,
    refuses_unknown_required: false,
};

/// One tool's `parametersJsonSchema`: processJsonSchema minus every `$schema`.
pub fn parameters_json_schema(input: &JsonObject, notes: &mut Vec<Change>) -> Value {
    Notes::record_into(notes, |notes| json_schema(input, notes))
}

/// [`parameters_json_schema`], recording into `notes`.
pub(crate) fn json_schema(input: &JsonObject, notes: &mut Notes) -> Value {
    let normalized = schema::normalize_with(input, RULES, notes);
    // Nearly every schema has none left: look before walking.
    if !schema::may_match(&normalized, &|node| node.contains_key("$schema")) {
        return Value::Object(normalized);
    }
    let mut out = Value::Object(normalized);
    schema::walk_mut(&mut out, &mut |node, path| {
        if node.remove("$schema").is_some() {
            notes.add(
                path,
                ChangeKind::KeywordDropped,
                true,
                "`$schema` is not accepted by Gemini",
            );
        }
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj(v: Value) -> JsonObject {
        v.as_object().cloned().expect("test schemas are objects")
    }

    #[test]
    fn json_schema_mode_only_removes_schema_keyword() {
        let mut notes = Vec::new();
        let out = parameters_json_schema(
            &obj(json!({
                "$schema": "x",
                "type": "object",
                "properties": {"$schema": {"type": "string", "$schema": "y"}, "a": {"type": ["string", "null"]}},
                "additionalProperties": false
            })),
            &mut notes,
        );
        assert_eq!(
            out,
            json!({
                "type": "object",
                "properties": {"$schema": {"type": "string"}, "a": {"type": ["string", "null"]}},
                "required": [],
                "additionalProperties": false
            })
        );
        assert_eq!(notes.len(), 2);
    }
}
