//! The config file: which MCP servers exist and how to reach them.
//!
//! The format is the `mcpServers` JSON that Claude Desktop, Cursor and Claude
//! Code already use (VS Code's top-level `servers` key is accepted too); see
//! DESIGN.md. [`ServerSpec`] is one server after validation and `${VAR}`
//! expansion: everything the pool needs to connect.

mod spec;

pub use spec::{
    DEFAULT_CALL_TIMEOUT, RemoteSpec, ServerSpec, StdioSpec, TransportKind, TransportSpec,
};
