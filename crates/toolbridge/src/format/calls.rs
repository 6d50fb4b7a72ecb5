//! Tool calls a model made, read from a provider's response.
//!
//! A response that is not of the provider's shape is an error; a call inside
//! it with an unknown tool name or malformed arguments is not: it becomes a
//! [`ToolCall`] whose [`ToolCall::invocation`] is an error message, which the
//! executor sends back to the model as that call's (error) result.

use super::names::{NameTable, ToolRef};
use super::options::Format;
use super::schema::JsonObject;
use rmcp::model::CallToolResult;
use serde_json::Value;

/// One tool call, whatever provider it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCall {
    /// The provider's id for the call (`tool_call_id`, `tool_use_id`,
    /// `call_id`, Gemini's optional `id`); results must carry it back.
    pub id: Option<String>,
    /// The tool name the model used (an exposed name).
    pub name: String,
    /// The tool the name routes to; `None` when the table has no such name.
    pub tool: Option<ToolRef>,
    /// The arguments, or why they are unusable (not JSON, not an object).
    pub arguments: Result<JsonObject, String>,
}

impl ToolCall {
    /// What to run, or the message to return to the model instead.
    pub fn invocation(&self) -> Result<(&ToolRef, &JsonObject), String> {
        let Some(tool) = &self.tool else {
            return Err(format!(
                "unknown tool `{}`; call one of the tools listed in the request",
                self.name
            ));
        };
        match &self.arguments {
            Ok(args) => Ok((tool, args)),
            Err(why) => Err(format!("invalid arguments for `{}`: {why}", self.name)),
        }
    }
}

/// What running one call produced.
#[derive(Debug, Clone, PartialEq)]
pub enum ToolOutcome {
    /// The server answered; the result may itself be an error (`isError`).
    Completed(CallToolResult),
    /// The call produced no result: unknown tool, bad arguments, timeout,
    /// lost connection. The message is shown to the model.
    Failed(String),
}

impl From<Result<CallToolResult, String>> for ToolOutcome {
    fn from(result: Result<CallToolResult, String>) -> Self {
        match result {
            Ok(r) => ToolOutcome::Completed(r),
            Err(message) => ToolOutcome::Failed(message),
        }
    }
}

/// A provider response that could not be read as a whole.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CallsError {
    /// The format has no tool-call shape (`mcp`).
    #[error("format `{0}` has no tool calls; use openai, openai-responses, anthropic or gemini")]
    UnsupportedFormat(Format),
    /// The input is not a response, message or call list of the format.
    #[error("input is not {format} output: {detail}")]
    Unrecognized {
        /// The format the input was read as.
        format: Format,
        /// What was expected.
        detail: String,
    },
}

/// The elements of a list, or none when it is not one.
pub(crate) fn list(value: &Value) -> &[Value] {
    match value {
        Value::Array(items) => items,
        _ => &[],
    }
}

/// A call to the tool the model named `name`, routed through `names`.
pub(crate) fn call(
    id: Option<&Value>,
    name: Option<&Value>,
    arguments: Result<JsonObject, String>,
    names: &NameTable,
) -> ToolCall {
    let name = name.and_then(Value::as_str).unwrap_or_default().to_owned();
    ToolCall {
        id: id.and_then(Value::as_str).map(str::to_owned),
        tool: names.resolve(&name).cloned(),
        name,
        arguments,
    }
}

/// Arguments sent as a JSON string (OpenAI); an object is taken as is.
pub(crate) fn json_arguments(value: Option<&Value>) -> Result<JsonObject, String> {
    match value {
        None | Some(Value::Null) => Ok(JsonObject::new()),
        Some(Value::String(text)) if text.trim().is_empty() => Ok(JsonObject::new()),
        Some(Value::String(text)) => match serde_json::from_str::<Value>(text) {
            Ok(Value::Object(args)) => Ok(args),
            Ok(other) => Err(format!("expected a JSON object, got `{other}`")),
            Err(e) => Err(format!("not valid JSON ({e})")),
        },
        Some(Value::Object(args)) => Ok(args.clone()),
        Some(other) => Err(format!("expected a JSON object, got `{other}`")),
    }
}

/// Arguments sent as an object (Anthropic, Gemini).
pub(crate) fn object_arguments(value: Option<&Value>) -> Result<JsonObject, String> {
    match value {
        None | Some(Value::Null) => Ok(JsonObject::new()),
        Some(Value::Object(args)) => Ok(args.clone()),
        Some(other) => Err(format!("expected a JSON object, got `{other}`")),
    }
}
