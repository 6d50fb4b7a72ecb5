//! Gemini behind the format dispatch.

use super::{gemini_content, parameters, parameters_json_schema, parse_gemini, tools};
use crate::format::calls::{CallsError, ToolCall, ToolOutcome};
use crate::format::changes::Change;
use crate::format::names::{NameTable, follows_rule};
use crate::format::options::FormatOptions;
use crate::format::provider::Provider;
use crate::format::schema::JsonObject;
use crate::tools::McpTool;
use serde_json::Value;

/// Gemini `generateContent`.
pub(crate) struct Gemini;

impl Provider for Gemini {
    fn tools(&self, list: &[McpTool], names: &NameTable, options: &FormatOptions) -> Value {
        tools(list, names, options)
    }

    fn parse_calls(&self, input: &Value, names: &NameTable) -> Result<Vec<ToolCall>, CallsError> {
        parse_gemini(input, names)
    }

    fn render_results(&self, results: &[(ToolCall, ToolOutcome)]) -> Value {
        gemini_content(results)
    }

    fn check_schema(
        &self,
        schema: &JsonObject,
        options: &FormatOptions,
        changes: &mut Vec<Change>,
    ) -> Option<bool> {
        if options.gemini_json_schema {
            parameters_json_schema(schema, changes);
        } else {
            parameters(schema, changes);
        }
        None
    }

    /// `^[a-zA-Z_][a-zA-Z0-9_.:-]{0,63}$`.
    fn accepts_name(&self, name: &str) -> bool {
        follows_rule(name, b"_.:-", true)
    }
}
