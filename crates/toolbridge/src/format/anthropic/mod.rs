//! Anthropic Messages: tool definitions `{"name","description","input_schema"}`,
//! `tool_use` calls and `tool_result` messages.
//!
//! Anthropic takes JSON Schema (draft 2020-12) nearly as is, `$ref` and
//! `$defs` included, but refuses an `input_schema` that is not `type: object`
//! or that has `oneOf`/`allOf`/`anyOf` at the top; processJsonSchema removes
//! both problems.

pub mod calls;
mod provider;
pub mod results;
pub mod tools;

pub use calls::parse_anthropic;
pub(crate) use provider::Anthropic;
pub use results::anthropic_message;
pub use tools::{input_schema, tools};
