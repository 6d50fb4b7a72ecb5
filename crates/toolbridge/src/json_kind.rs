//! [`kind_of`]: what kind of JSON value a value is, as a message says it
//! ("must be a string, not a number"). One wording for every such message:
//! the config's errors and the CLI's arguments.

use serde_json::Value;

/// "a number", "an array", ...: for messages.
pub fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}
