//! What each LLM provider would be sent for a tool, and what conversion
//! changed to get there. Both come from the library (`format::convert_tools`
//! for the definitions, `format::check` for the changes): the page shows
//! exactly what `toolbridge tools --format ...` and `--check` give.

use serde::Serialize;
use serde_json::Value;
use toolbridge::{
    McpTool,
    format::{self, Change, Format, FormatOptions, NameTable},
};

/// One provider's definition of one tool.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Preview {
    /// `openai`, `anthropic` or `gemini`.
    pub format: Format,
    /// The tool as it goes into that provider's request: OpenAI's
    /// `{"type":"function","function":{...}}`, Anthropic's
    /// `{"name","description","input_schema"}`, one of Gemini's
    /// `functionDeclarations`. `null` when the tool is not sent at all (the
    /// changes say why).
    pub definition: Option<Value>,
    /// OpenAI only: whether the tool is sent strict.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub strict: Option<bool>,
    /// Whether the provider would have refused the tool as the server sent it.
    pub would_reject: bool,
    /// What conversion changed, in order.
    pub changes: Vec<Change>,
}

/// One tool's previews.
#[derive(Debug, Clone)]
pub struct ToolPreviews {
    /// The name every provider is sent.
    pub exposed_name: String,
    /// OpenAI, Anthropic and Gemini, in that order.
    pub providers: Vec<Preview>,
}

/// The previews of each of `tools` (one server's listing), in order. Names
/// are made for the whole list, as a request with all of them carries them.
pub fn previews(tools: &[McpTool]) -> Vec<ToolPreviews> {
    let names = NameTable::for_tools(tools);
    let options = FormatOptions::default();
    let report = format::check(tools, &names, &options);
    tools
        .iter()
        .zip(report.tools)
        .map(|(tool, check)| ToolPreviews {
            exposed_name: check.exposed_name,
            providers: check
                .providers
                .into_iter()
                .map(|provider| Preview {
                    definition: definition(provider.format, tool, &names, &options),
                    format: provider.format,
                    strict: provider.strict,
                    would_reject: provider.would_reject,
                    changes: provider.changes,
                })
                .collect(),
        })
        .collect()
}

/// `tool`'s definition for `format`, out of the list a request carries.
fn definition(
    format: Format,
    tool: &McpTool,
    names: &NameTable,
    options: &FormatOptions,
) -> Option<Value> {
    let converted = format::convert_tools(format, std::slice::from_ref(tool), names, options);
    let one = match format {
        Format::Gemini => converted.pointer("/0/functionDeclarations/0"),
        _ => converted.get(0),
    };
    one.cloned()
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use serde_json::json;

    use super::*;

    fn tool(server: &str, name: &str, schema: Value) -> McpTool {
        McpTool {
            id: McpTool::id_for(server, name),
            name: name.into(),
            description: "Find things".into(),
            input_schema: Arc::new(schema.as_object().cloned().unwrap_or_default()),
            server_id: server.into(),
            server_name: server.into(),
            ..McpTool::default()
        }
    }

    #[test]
    fn each_provider_gets_its_shape_and_the_changes_made_for_it() {
        let schema = json!({"type": "object", "additionalProperties": false,
            "properties": {"q": {"type": "string"}}, "required": ["q"]});
        let previews = previews(&[tool("web", "find.all", schema)]);
        assert_eq!(previews[0].exposed_name, "mcp__web__find_all");
        let [openai, anthropic, gemini] = previews[0].providers.as_slice() else {
            panic!("three providers: {previews:?}");
        };
        assert_eq!(openai.format, Format::OpenAi);
        let openai_def = openai.definition.clone().unwrap_or_default();
        assert_eq!(openai_def["type"], "function");
        assert_eq!(openai_def["function"]["name"], "mcp__web__find_all");
        let anthropic_def = anthropic.definition.clone().unwrap_or_default();
        assert_eq!(
            anthropic_def["input_schema"]["properties"]["q"]["type"],
            "string"
        );
        let gemini_def = gemini.definition.clone().unwrap_or_default();
        assert_eq!(gemini_def["name"], "mcp__web__find_all");
        assert!(
            gemini_def["parameters"]
                .get("additionalProperties")
                .is_none()
        );
        for preview in [openai, anthropic, gemini] {
            assert!(preview.would_reject, "the dot: {preview:?}");
            assert!(
                preview
                    .changes
                    .iter()
                    .any(|c| c.kind == format::ChangeKind::NameSanitized)
            );
        }
        assert!(
            gemini
                .changes
                .iter()
                .any(|c| c.kind == format::ChangeKind::KeywordDropped
                    && c.detail.contains("additionalProperties")),
            "{gemini:?}"
        );
    }

    #[test]
    fn a_tool_only_callable_as_a_task_has_no_definition_and_says_why() {
        let mut task = tool("jobs", "build", json!({"type": "object"}));
        task.execution = Some(toolbridge::tools::ToolExecution {
            task_support: Some(toolbridge::tools::TaskSupport::Required),
        });
        let previews = previews(&[task]);
        for preview in &previews[0].providers {
            assert_eq!(preview.definition, None);
            assert!(
                preview
                    .changes
                    .iter()
                    .any(|c| c.kind == format::ChangeKind::LeftOut)
            );
        }
    }
}
