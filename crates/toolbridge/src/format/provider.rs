//! What every provider implements, so one dispatch serves them all.

use super::calls::{CallsError, ToolCall, ToolOutcome};
use super::changes::Change;
use super::names::NameTable;
use super::options::FormatOptions;
use super::schema::JsonObject;
use crate::tools::McpTool;
use serde_json::Value;

/// What toolbridge knows about one LLM provider's format.
pub(crate) trait Provider: Sync {
    /// `tools` as the provider's tool definitions, ready to put in a request.
    fn tools(&self, tools: &[McpTool], names: &NameTable, options: &FormatOptions) -> Value;

    /// The tool calls in one of the provider's responses.
    fn parse_calls(&self, input: &Value, names: &NameTable) -> Result<Vec<ToolCall>, CallsError>;

    /// The messages carrying `results` back to the model.
    fn render_results(&self, results: &[(ToolCall, ToolOutcome)]) -> Value;

    /// Converts one tool's input schema as [`tools`](Self::tools) does,
    /// recording every change; returns whether the tool is sent strict, for
    /// a provider with a strict mode that `options` asks for.
    fn check_schema(
        &self,
        schema: &JsonObject,
        options: &FormatOptions,
        changes: &mut Vec<Change>,
    ) -> Option<bool>;

    /// Whether the provider's own name rule accepts `name` (toolbridge sends
    /// names every provider accepts; this tells whether a raw name was a
    /// problem for this one).
    fn accepts_name(&self, name: &str) -> bool;
}
