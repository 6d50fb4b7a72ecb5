//! OpenAI tool definitions: Chat Completions' `{"type":"function",
//! "function":{...}}` and the Responses API's flat `{"type":"function",...}`.

use super::parameters::convert;
use crate::format::changes::Notes;
use crate::format::names::NameTable;
use crate::format::options::FormatOptions;
use crate::format::schema::JsonObject;
use crate::tools::McpTool;
use serde_json::Value;

/// Chat Completions tools: `[{"type":"function","function":{"name",
/// "description","parameters"}}]`, with `"strict"` in each function when
/// `options.strict` is set.
pub fn chat_tools(tools: &[McpTool], names: &NameTable, options: &FormatOptions) -> Value {
    let out = tools
        .iter()
        .map(|tool| {
            // Each map is made before what goes in it, so memory is laid out
            // in the order dropping the result frees it (why: see schema::object).
            let mut tool_def = JsonObject::with_capacity(2);
            tool_def.insert("type".into(), Value::from("function"));
            let mut function = JsonObject::with_capacity(4);
            names.insert_name_and_description(&mut function, tool);
            let params = convert(&tool.input_schema, options.strict, &mut Notes::discarding());
            function.insert("parameters".into(), params.schema);
            if options.strict {
                function.insert("strict".into(), Value::Bool(params.strict));
            }
            tool_def.insert("function".into(), Value::Object(function));
            Value::Object(tool_def)
        })
        .collect();
    Value::Array(out)
}

/// Responses API tools: `[{"type":"function","name","description",
/// "parameters","strict"}]`. `strict` is always present because the Responses
/// API treats a missing one as `true`.
pub fn responses_tools(tools: &[McpTool], names: &NameTable, options: &FormatOptions) -> Value {
    let out = tools
        .iter()
        .map(|tool| {
            // The map is made before what goes in it (why: see schema::object).
            let mut tool_def = JsonObject::with_capacity(5);
            tool_def.insert("type".into(), Value::from("function"));
            names.insert_name_and_description(&mut tool_def, tool);
            let params = convert(&tool.input_schema, options.strict, &mut Notes::discarding());
            tool_def.insert("parameters".into(), params.schema);
            tool_def.insert("strict".into(), Value::Bool(params.strict));
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

    fn obj(v: Value) -> JsonObject {
        v.as_object().cloned().expect("test schemas are objects")
    }

    #[test]
    fn chat_and_responses_shapes() {
        let tools = vec![McpTool {
            id: McpTool::id_for("s", "t"),
            name: "t".into(),
            description: "does t".into(),
            input_schema: Arc::new(obj(
                json!({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]}),
            )),
            server_id: "s".into(),
            server_name: "S".into(),
            ..Default::default()
        }];
        let names = NameTable::for_tools(&tools);
        let params =
            json!({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]});
        assert_eq!(
            chat_tools(&tools, &names, &FormatOptions::default()),
            json!([{"type": "function", "function": {"name": "mcp__s__t", "description": "does t", "parameters": params}}])
        );
        assert_eq!(
            responses_tools(&tools, &names, &FormatOptions::default()),
            json!([{"type": "function", "name": "mcp__s__t", "description": "does t", "parameters": params, "strict": false}])
        );
        let strict = FormatOptions {
            strict: true,
            ..FormatOptions::default()
        };
        let chat = chat_tools(&tools, &names, &strict);
        assert_eq!(chat[0]["function"]["strict"], json!(true));
        assert_eq!(
            chat[0]["function"]["parameters"]["additionalProperties"],
            json!(false)
        );
    }
}
