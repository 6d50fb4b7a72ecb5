//! Executable tools for an agent engine: the spec's ITool, McpToolAdapter,
//! DirectMcpToolAdapter, loadMcpTools, loadDirectMcpTools and ToolRegistry.
//!
//! [`McpToolAdapter`] runs a tool through the shared [`Pool`](crate::pool::Pool)
//! (user-configured servers); [`DirectMcpToolAdapter`] holds its own
//! connection (built-in or per-session servers) that the caller closes at
//! the end of the session. Both expose provider-safe names from a
//! [`NameTable`](crate::format::NameTable), and a [`ToolRegistry`] routes a
//! model's calls back to them.

mod direct;
mod mcp;
mod registry;
mod tool;

pub use direct::{DirectConnection, DirectMcpToolAdapter, DirectTools, load_direct_mcp_tools};
pub use mcp::{McpToolAdapter, load_mcp_tools};
pub use registry::{RegistryError, ToolRegistry};
pub use tool::{Tool, ToolError};
