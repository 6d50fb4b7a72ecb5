//! [`DirectMcpToolAdapter`]: a tool of a server the adapter connects to
//! itself, for built-in or per-session servers whose lifetime is the
//! session's, not the pool's.

use std::sync::Arc;

use futures::{future::BoxFuture, future::join_all};
use rmcp::model::{CallToolResult, JsonObject};

use super::{Tool, ToolError};
use crate::{
    config::ServerSpec,
    format::{NameStyle, NameTable},
    pool::{CallOptions, Pool, PoolError, PoolOptions},
    tools::McpTool,
};

/// One server's own connection, returned by [`load_direct_mcp_tools`] so the
/// caller can close it when the session ends. Its process is tracked like
/// every stdio server's, so it is killed even if the host dies first.
#[derive(Clone)]
pub struct DirectConnection {
    server: String,
    /// A pool of exactly this server: it brings start timeouts, stderr
    /// capture, process groups and graceful close with it.
    pool: Pool,
}

impl DirectConnection {
    /// The server's config name.
    pub fn server(&self) -> &str {
        &self.server
    }

    /// Closes the server (stdin, then SIGTERM, then SIGKILL of its group).
    pub async fn close(&self) {
        self.pool.close_all().await;
    }
}

/// A tool of a directly connected server, named `{server}__{tool}` (made
/// provider-safe).
pub struct DirectMcpToolAdapter {
    tool: McpTool,
    name: String,
    connection: DirectConnection,
}

impl DirectMcpToolAdapter {
    /// The MCP tool behind the adapter.
    pub fn mcp_tool(&self) -> &McpTool {
        &self.tool
    }
}

impl Tool for DirectMcpToolAdapter {
    fn name(&self) -> &str {
        &self.name
    }

    fn description(&self) -> &str {
        &self.tool.description
    }

    fn parameters(&self) -> &JsonObject {
        &self.tool.input_schema
    }

    fn call(&self, arguments: JsonObject) -> BoxFuture<'_, Result<CallToolResult, ToolError>> {
        Box::pin(async move {
            Ok(self
                .connection
                .pool
                .call_tool(
                    &self.connection.server,
                    &self.tool.name,
                    Some(arguments),
                    CallOptions::default(),
                )
                .await?)
        })
    }
}

/// What [`load_direct_mcp_tools`] returns: the tools, the connections to
/// close at the end of the session, and the servers that failed.
pub struct DirectTools {
    /// Every tool of every server that started.
    pub tools: Vec<Arc<DirectMcpToolAdapter>>,
    /// One per server that started; close them when the session ends.
    pub connections: Vec<DirectConnection>,
    /// The servers that could not start or list their tools, and why.
    pub failures: Vec<(String, PoolError)>,
}

/// The spec's `loadDirectMcpTools`: connects to each server on its own (in
/// parallel), discovers its tools and wraps them. A server that fails is
/// reported in [`DirectTools::failures`] and closed; the others are kept.
pub async fn load_direct_mcp_tools(servers: Vec<ServerSpec>) -> DirectTools {
    let started = join_all(servers.into_iter().map(|spec| async move {
        let server = spec.name.clone();
        let connection = DirectConnection {
            server: server.clone(),
            pool: Pool::new([spec], PoolOptions::default()),
        };
        match connection.pool.list_server_tools(&server).await {
            Ok(tools) => Ok((connection, tools)),
            Err(e) => {
                connection.close().await;
                Err((server, e))
            }
        }
    }))
    .await;
    let mut connections = Vec::new();
    let mut listed = Vec::new();
    let mut failures = Vec::new();
    for result in started {
        match result {
            Ok((connection, tools)) => {
                listed.extend(tools.iter().map(|t| (connection.clone(), t.clone())));
                connections.push(connection);
            }
            Err(failure) => failures.push(failure),
        }
    }
    let names = NameTable::new(
        NameStyle::Direct,
        listed
            .iter()
            .map(|(_, t)| (t.server_id.clone(), t.name.clone())),
    );
    let tools = listed
        .into_iter()
        .map(|(connection, tool)| {
            let name = names.name_for(&tool).into_owned();
            Arc::new(DirectMcpToolAdapter {
                tool,
                name,
                connection,
            })
        })
        .collect();
    DirectTools {
        tools,
        connections,
        failures,
    }
}
