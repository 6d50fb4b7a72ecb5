//! OpenAI's two APIs behind the format dispatch.

use super::{
    chat_tools, openai_messages, openai_responses_items, parameters, parse_openai,
    parse_openai_responses, responses_tools,
};
use crate::format::calls::{CallsError, ToolCall, ToolOutcome};
use crate::format::changes::Change;
use crate::format::names::{NameTable, follows_rule};
use crate::format::options::FormatOptions;
use crate::format::provider::Provider;
use crate::format::schema::JsonObject;
use crate::tools::McpTool;
use serde_json::Value;

/// OpenAI Chat Completions.
pub(crate) struct Chat;

/// The OpenAI Responses API.
pub(crate) struct Responses;

/// One tool's parameters as either API sends them, recording every change;
/// whether they are strict when strict mode is asked for.
fn check_schema(
    schema: &JsonObject,
    options: &FormatOptions,
    changes: &mut Vec<Change>,
) -> Option<bool> {
    let converted = parameters(schema, options.strict, changes);
    options.strict.then_some(converted.strict)
}

/// `^[a-zA-Z0-9_-]{1,64}$`, for both APIs.
fn accepts_name(name: &str) -> bool {
    follows_rule(name, b"_-", false)
}

impl Provider for Chat {
    fn tools(&self, tools: &[McpTool], names: &NameTable, options: &FormatOptions) -> Value {
        chat_tools(tools, names, options)
    }

    fn parse_calls(&self, input: &Value, names: &NameTable) -> Result<Vec<ToolCall>, CallsError> {
        parse_openai(input, names)
    }

    fn render_results(&self, results: &[(ToolCall, ToolOutcome)]) -> Value {
        openai_messages(results)
    }

    fn check_schema(
        &self,
        schema: &JsonObject,
        options: &FormatOptions,
        changes: &mut Vec<Change>,
    ) -> Option<bool> {
        check_schema(schema, options, changes)
    }

    fn accepts_name(&self, name: &str) -> bool {
        accepts_name(name)
    }
}

impl Provider for Responses {
    fn tools(&self, tools: &[McpTool], names: &NameTable, options: &FormatOptions) -> Value {
        responses_tools(tools, names, options)
    }

    fn parse_calls(&self, input: &Value, names: &NameTable) -> Result<Vec<ToolCall>, CallsError> {
        parse_openai_responses(input, names)
    }

    fn render_results(&self, results: &[(ToolCall, ToolOutcome)]) -> Value {
        openai_responses_items(results)
    }

    fn check_schema(
        &self,
        schema: &JsonObject,
        options: &FormatOptions,
        changes: &mut Vec<Change>,
    ) -> Option<bool> {
        check_schema(schema, options, changes)
    }

    fn accepts_name(&self, name: &str) -> bool {
        accepts_name(name)
    }
}
