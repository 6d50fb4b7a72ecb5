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
