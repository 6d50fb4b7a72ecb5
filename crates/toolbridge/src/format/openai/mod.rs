//! OpenAI: Chat Completions and the Responses API, with optional strict mode.
//!
//! Non-strict OpenAI takes nearly any JSON Schema with an object at the top;
//! the one thing MCP servers commonly trip over is an array without `items`
//! ([`parameters()`]). Strict mode (Structured Outputs) takes a subset
//! ([`strict`]); a tool whose schema cannot be brought into it is sent
//! non-strict. [`tools`] writes the tool definitions, [`calls`] reads the
//! calls in a response, [`results`] writes the results back.

pub mod calls;
pub mod parameters;
mod provider;
pub mod results;
pub mod strict;
pub mod tools;

pub use calls::{parse_openai, parse_openai_responses};
pub use parameters::{OpenAiParameters, parameters};
pub(crate) use provider::{Chat, Responses};
pub use results::{openai_messages, openai_responses_items};
pub use strict::strip_strict_nulls;
pub use tools::{chat_tools, responses_tools};
