//! Executable tools for an agent engine: the spec's ITool, McpToolAdapter,
//! DirectMcpToolAdapter, loadMcpTools, loadDirectMcpTools and ToolRegistry.
//!
//! One adapter, [`McpToolAdapter`], runs a tool of a server in a
//! [`Pool`](crate::pool::Pool); its name style is a parameter
//! ([`NameStyle`](crate::format::NameStyle)). [`load_mcp_tools`] wraps the
//! tools of the user's servers in the shared pool (`mcp__{server}__{tool}`);
//! [`load_direct_mcp_tools`] starts a session's own servers in a pool of
//! their own (`{server}__{tool}`, the spec's DirectMcpToolAdapter), which
//! the caller closes at the end of the session. A [`ToolRegistry`] routes a
//! model's calls back to the adapters through the name table. Results are
//! held to a [`ResultBudget`] before a model gets them. [`execute_response`]
//! runs the calls in a provider's response and renders their results.
//! [`SearchThenCall`] offers a model two tools instead of them all: search
//! the tools for a task, then call one by the name the search gave.

mod direct;
mod exec;
mod mcp;
mod registry;
pub mod result_budget;
pub mod search;
mod tool;

pub use direct::{DirectConnection, DirectTools, load_direct_mcp_tools};
pub use exec::{ExecError, ExecOptions, execute_response};
pub use mcp::{McpToolAdapter, load_mcp_tools};
pub use registry::{MAX_PARALLEL_CALLS, RegistryError, ToolRegistry};
pub use result_budget::ResultBudget;
pub use search::SearchThenCall;
pub use tool::{Tool, ToolError};
