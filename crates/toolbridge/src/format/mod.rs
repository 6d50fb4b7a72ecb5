//! Pure conversions between toolbridge's tool model and LLM providers.
//!
//! Outbound, tools become each provider's tool definitions:
//! [`convert_tools`] dispatches to [`openai`], [`anthropic`] and [`gemini`],
//! which start from the spec's [`process_json_schema`](schema::process_json_schema)
//! and apply each provider's rules; [`names`] gives every tool a name all
//! providers accept and maps it back; [`check()`] reports what changed.
//!
//! Inbound, [`calls`] reads the tool calls in a provider's response and
//! [`results`] renders what running them produced, using [`flatten`] where a
//! provider takes text.
//!
//! Nothing here does I/O or blocks, and no JSON input makes it panic.

pub mod anthropic;
pub mod calls;
pub mod check;
pub mod convert;
pub mod flatten;
pub mod gemini;
pub mod names;
pub mod openai;
pub mod options;
pub mod results;
pub mod schema;

pub use calls::{CallsError, ToolCall, ToolOutcome, parse_calls};
pub use check::{Change, ChangeKind, CheckReport, check};
pub use convert::convert_tools;
pub use flatten::flatten_content;
pub use names::{NameStyle, NameTable, ToolRef};
pub use options::{Format, FormatOptions, UnknownFormat};
pub use results::render_results;
