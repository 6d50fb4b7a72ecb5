//! One entry point for every format: what `toolbridge tools --format` prints.

use super::names::NameTable;
use super::options::{Format, FormatOptions};
use super::{anthropic, gemini, openai};
use crate::tools::McpTool;
use serde_json::Value;

/// `tools` in `format`, ready to put in a request: an array for `mcp`,
/// `openai`, `openai-responses` and `anthropic`, the nested
/// `[{"functionDeclarations": [...]}]` for `gemini`.
///
/// `names` should be built from `tools` (see [`NameTable::for_tools`]); the
/// `mcp` format keeps the tools' own ids.
///
/// ```
/// use std::sync::Arc;
/// use serde_json::json;
/// use toolbridge::{Format, FormatOptions, McpTool, NameTable, convert_tools};
///
/// let schema = json!({"type": "object", "properties": {"q": {"type": "string"}}});
/// let tools = [McpTool {
///     id: McpTool::id_for("search", "web.find"),
///     name: "web.find".into(),
///     description: "Search the web".into(),
///     input_schema: Arc::new(schema.as_object().unwrap().clone()),
///     server_id: "search".into(),
///     server_name: "search".into(),
/// }];
/// let names = NameTable::for_tools(&tools);
///
/// let anthropic = convert_tools(Format::Anthropic, &tools, &names, &FormatOptions::default());
/// // `.` is not allowed in provider tool names; it became `_`.
/// assert_eq!(anthropic[0]["name"], "mcp__search__web_find");
/// assert_eq!(anthropic[0]["input_schema"]["properties"]["q"]["type"], "string");
///
/// let gemini = convert_tools(Format::Gemini, &tools, &names, &FormatOptions::default());
/// assert_eq!(gemini[0]["functionDeclarations"][0]["name"], "mcp__search__web_find");
/// ```
pub fn convert_tools(
    format: Format,
    tools: &[McpTool],
    names: &NameTable,
    options: &FormatOptions,
) -> Value {
    match format {
        // Serializing strings and JSON maps cannot fail.
        Format::Mcp => serde_json::to_value(tools).unwrap_or_else(|_| Value::Array(Vec::new())),
        Format::OpenAi => openai::chat_tools(tools, names, options),
        Format::OpenAiResponses => openai::responses_tools(tools, names, options),
        Format::Anthropic => anthropic::tools(tools, names),
        Format::Gemini => gemini::tools(tools, names, options),
    }
}
