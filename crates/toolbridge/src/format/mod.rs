//! Pure conversions between toolbridge's tool model and LLM providers.
//!
//! Outbound, tools become each provider's tool definitions
//! ([`convert_tools`]); inbound, [`parse_calls`] reads the tool calls in a
//! provider's response and [`render_results`] writes what running them
//! produced, using [`flatten`] where a provider takes text. [`check()`]
//! reports what conversion changed and what a provider would have refused.
//!
//! Layout, from the bottom up:
//! - [`options`] names the formats; [`names`] gives every tool a name all
//!   providers accept and maps it back; [`changes`] is the change log every
//!   converter writes; [`calls`] and [`results`] hold what every provider's
//!   calls and results are made of; [`flatten`] turns a result into text;
//!   [`budget`] cuts what is too big for a model to hold.
//! - [`schema`] is the provider-neutral schema work: the spec's
//!   `processJsonSchema`, `$ref`s, walks. It knows no provider.
//! - [`openai`], [`anthropic`] and [`gemini`] each hold one provider's
//!   knowledge: tool definitions, schema rules, calls, results.
//! - [`deferred`] marks every definition `defer_loading` beside the
//!   provider's tool search tool, and reads and answers the searches a
//!   client runs.
//! - `provider` is the trait each of them implements; [`dispatch`] is the
//!   one place a [`Format`] picks its provider; [`check()`] asks every
//!   provider through it.
//!
//! Nothing here does I/O or blocks, and no JSON input makes it panic.

pub mod anthropic;
pub mod budget;
pub mod calls;
pub mod changes;
pub mod check;
pub mod deferred;
pub mod dispatch;
pub mod flatten;
pub mod gemini;
pub mod names;
pub mod openai;
pub mod options;
pub(crate) mod provider;
pub mod results;
pub mod schema;

pub use budget::{DEFAULT_RESULT_BUDGET, fit_result};
pub use calls::{CallsError, ToolCall, ToolOutcome};
pub use changes::{Change, ChangeKind};
pub use check::{CheckReport, ServerSummary, check, check_formats};
pub use dispatch::{convert_tools, parse_calls, render_results};
pub use flatten::flatten_content;
pub use names::{NameStyle, NameTable, ToolRef};
pub use options::{Format, FormatOptions, UnknownFormat};
