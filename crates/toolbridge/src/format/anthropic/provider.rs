//! Anthropic behind the format dispatch.

use super::{anthropic_message, input_schema, parse_anthropic, tools};
use crate::format::calls::{CallsError, ToolCall, ToolOutcome};
use crate::format::changes::Change;
use crate::format::names::{NameTable, follows_rule};
use crate::format::options::FormatOptions;
use crate::format::provider::Provider;
use crate::format::schema::JsonObject;
use crate::tools::McpTool;
use serde_json::Value;

/// Anthropic Messages.
pub(crate) struct Anthropic;

impl Provider for Anthropic {
    fn tools(&self, list: &[McpTool], names: &NameTable, _: &FormatOptions) -> Value {
        tools(list, names)
    }

    fn parse_calls(&self, input: &Value, names: &NameTable) -> Result<Vec<ToolCall>, CallsError> {
        parse_anthropic(input, names)
    }

    fn render_results(&self, results: &[(ToolCall, ToolOutcome)]) -> Value {
        anthropic_message(results)
    }

    fn check_schema(
        &self,
        schema: &JsonObject,
        _: &FormatOptions,
        changes: &mut Vec<Change>,
    ) -> Option<bool> {
        input_schema(schema, changes);
        None
    }

    /// `^[a-zA-Z0-9_-]{1,64}$`.
    fn accepts_name(&self, name: &str) -> bool {
        follows_rule(name, b"_-", false)
    }
}
