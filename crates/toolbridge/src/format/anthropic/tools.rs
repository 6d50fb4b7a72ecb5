//! Anthropic tool definitions: `{"name","description","input_schema"}`, the
//! input schema being processJsonSchema's with nothing more to change.

use crate::format::changes::{Change, Notes};
use crate::format::names::NameTable;
use crate::format::schema::{self, JsonObject, TopLevelRules};
use crate::tools::McpTool;
use serde_json::Value;

/// What Anthropic refuses at the top of a tool's schema.
const RULES: TopLevelRules = TopLevelRules::OBJECT_ONLY;

/// One tool's `input_schema`: always `type: object`, no top-level composition.
pub fn input_schema(input: &JsonObject, notes: &mut Vec<Change>) -> Value {
    Value::Object(schema::normalize(input, RULES, notes))
}

/// Anthropic tools: `[{"name","description","input_schema"}]`.
pub fn tools(tools: &[McpTool], names: &NameTable) -> Value {
    let out = tools
        .iter()
        .map(|tool| {
            // The map is made before what goes in it (why: see schema::object).
            let mut tool_def = JsonObject::with_capacity(3);
            names.insert_name_and_description(&mut tool_def, tool);
            let schema =
                schema::normalize_with(&tool.input_schema, RULES, &mut Notes::discarding());
            tool_def.insert("input_schema".into(), Value::Object(schema));
            Value::Object(tool_def)
        })
        .collect();
    Value::Array(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::sync::Arc;

    #[test]
    fn shape_and_top_level_object() {
        let schema = json!({
            "anyOf": [{"required": ["a"]}, {"required": ["b"]}],
            "properties": {"a": {"type": "string"}, "b": {"$ref": "#/$defs/B"}},
            "$defs": {"B": {"type": "integer"}}
        });
        let tools = vec![McpTool {
            id: McpTool::id_for("s", "t"),
            name: "t".into(),
            description: "d".into(),
            input_schema: Arc::new(schema.as_object().cloned().unwrap_or_default()),
            server_id: "s".into(),
            server_name: "s".into(),
            ..Default::default()
        }];
        let names = NameTable::for_tools(&tools);
        assert_eq!(
            super::tools(&tools, &names),
            json!([{
                "name": "mcp__s__t",
                "description": "d",
                "input_schema": {
                    "type": "object",
                    "properties": {"a": {"type": "string"}, "b": {"$ref": "#/$defs/B"}},
                    "required": [],
                    "$defs": {"B": {"type": "integer"}}
                }
            }])
        );
    }
}
