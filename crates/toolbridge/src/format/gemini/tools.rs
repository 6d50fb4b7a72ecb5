//! Gemini function declarations: `[{"functionDeclarations":[{"name",
//! "description","parameters"}]}]`, or `parametersJsonSchema` instead.

use super::json_schema::json_schema;
use super::parameters::convert;
use crate::format::changes::Notes;
use crate::format::names::NameTable;
use crate::format::options::FormatOptions;
use crate::format::schema::{self, JsonObject};
use crate::tools::McpTool;
use serde_json::Value;

/// Gemini tools: `[{"functionDeclarations":[{"name","description",
/// "parameters"}]}]` (or `parametersJsonSchema`), or `[]` without tools.
pub fn tools(tools: &[McpTool], names: &NameTable, options: &FormatOptions) -> Value {
    if tools.is_empty() {
        return Value::Array(Vec::new());
    }
    let declarations: Vec<Value> = tools
        .iter()
        .map(|tool| {
            // The map is made before what goes in it (why: see schema::object).
            let mut declaration = JsonObject::with_capacity(3);
            names.insert_name_and_description(&mut declaration, tool);
            let mut notes = Notes::discarding();
            if options.gemini_json_schema {
                declaration.insert(
                    "parametersJsonSchema".into(),
                    json_schema(&tool.input_schema, &mut notes),
                );
            } else if let Some(params) = convert(&tool.input_schema, &mut notes) {
                declaration.insert("parameters".into(), params);
            }
            Value::Object(declaration)
        })
        .collect();
    Value::Array(vec![schema::object([(
        "functionDeclarations",
        Value::Array(declarations),
    )])])
}
