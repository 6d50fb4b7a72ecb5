//! The built-in example MCP server (in progress).
