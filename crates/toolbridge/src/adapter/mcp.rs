//! [`McpToolAdapter`]: a pooled server's tool as a [`Tool`].

use std::sync::{
    Arc,
    atomic::{AtomicU64, Ordering},
};

use futures::{future::BoxFuture, future::join_all};
use rmcp::model::{CallToolResult, JsonObject};

use super::{Tool, ToolError};
use crate::{
    format::{NameStyle, NameTable},
    pool::{CallOptions, Pool},
    tools::McpTool,
};

/// Numbers the calls of this process, for logs.
static NEXT_CALL: AtomicU64 = AtomicU64::new(1);

/// A tool of a server in the [`Pool`]. Its name is `mcp__{server}__{tool}`,
/// made provider-safe; calls use the pool's timeout for the server (120 s by
/// default) and come back flattened by [`Tool::execute`].
pub struct McpToolAdapter {
    tool: McpTool,
    /// The provider-safe name.
    name: String,
    pool: Pool,
}

impl McpToolAdapter {
    /// Wraps `tool`, exposed as `name`, calling it through `pool`.
    pub fn new(tool: McpTool, name: impl Into<String>, pool: Pool) -> Self {
        McpToolAdapter {
            tool,
            name: name.into(),
            pool,
        }
    }

    /// The MCP tool behind the adapter.
    pub fn mcp_tool(&self) -> &McpTool {
        &self.tool
    }
}

impl Tool for McpToolAdapter {
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
            // The id only feeds debug logs: don't pay for it otherwise.
            let call_id = tracing::enabled!(tracing::Level::DEBUG)
                .then(|| format!("call-{}", NEXT_CALL.fetch_add(1, Ordering::Relaxed)));
            let options = CallOptions {
                timeout: None,
                call_id,
            };
            Ok(self
                .pool
                .call_tool(
                    &self.tool.server_id,
                    &self.tool.name,
                    Some(arguments),
                    options,
                )
                .await?)
        })
    }
}

/// The spec's `loadMcpTools`: the tools of `servers`, listed in parallel,
/// each wrapped as an [`McpToolAdapter`]. A server that fails is logged and
/// skipped; the others' tools are still returned. Names are unique across
/// all the returned tools.
pub async fn load_mcp_tools(pool: &Pool, servers: &[String]) -> Vec<Arc<McpToolAdapter>> {
    let listings = join_all(servers.iter().map(|s| pool.list_server_tools(s))).await;
    let mut tools = Vec::new();
    for (server, listing) in servers.iter().zip(listings) {
        match listing {
            Ok(list) => tools.extend(list.iter().cloned()),
            Err(e) => tracing::warn!(server = %server, error = %e, "skipping the server's tools"),
        }
    }
    let names = NameTable::new(
        NameStyle::Mcp,
        tools.iter().map(|t| (t.server_id.clone(), t.name.clone())),
    );
    tools
        .into_iter()
        .map(|tool| {
            let name = names.name_for(&tool).into_owned();
            Arc::new(McpToolAdapter::new(tool, name, pool.clone()))
        })
        .collect()
}
