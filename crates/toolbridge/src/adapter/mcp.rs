//! [`McpToolAdapter`]: a pooled server's tool as a [`Tool`], and the
//! spec's `loadMcpTools`.

use std::sync::Arc;

use futures::future::BoxFuture;
use rmcp::model::{CallToolResult, JsonObject};

use super::{ResultBudget, Tool, ToolError};
use crate::{
    format::{NameStyle, NameTable},
    pool::{CallOptions, Pool},
    tools::McpTool,
};

/// A tool of a server in a [`Pool`]. Its name comes from a [`NameTable`]:
/// `mcp__{server}__{tool}` for the user's servers ([`NameStyle::Mcp`]),
/// `{server}__{tool}` for a session's own servers ([`NameStyle::Direct`]),
/// made provider-safe either way. Calls use the pool's timeout for the
/// server (120 s by default), are held to a [`ResultBudget`] (the server's
/// `resultBudget`, else 100,000 characters; the whole result is saved) and
/// come back flattened by [`Tool::execute`].
pub struct McpToolAdapter {
    tool: McpTool,
    /// The provider-safe name.
    name: String,
    /// The pool that runs the server.
    pool: Pool,
    /// What a result may cost a model.
    budget: ResultBudget,
}

impl McpToolAdapter {
    /// Wraps `tool`, exposed as `name`, calling it through `pool`.
    pub fn new(tool: McpTool, name: impl Into<String>, pool: Pool) -> Self {
        McpToolAdapter {
            tool,
            name: name.into(),
            pool,
            budget: ResultBudget::default(),
        }
    }

    /// The same adapter with another default budget or results folder.
    pub fn with_budget(mut self, budget: ResultBudget) -> Self {
        self.budget = budget;
        self
    }

    /// Wraps each of `tools` (of servers in `pool`), named in `style` by one
    /// [`NameTable`], so names are unique across them.
    pub fn wrap_all(pool: &Pool, tools: Vec<McpTool>, style: NameStyle) -> Vec<Arc<Self>> {
        let names = NameTable::new(
            style,
            tools
                .iter()
                .map(|t| (t.server_id.as_str(), t.name.as_str())),
        );
        tools
            .into_iter()
            .map(|tool| {
                let name = names.name_for(&tool).into_owned();
                Arc::new(McpToolAdapter::new(tool, name, pool.clone()))
            })
            .collect()
    }

    /// The MCP tool behind the adapter.
    pub fn mcp_tool(&self) -> &McpTool {
        &self.tool
    }

    /// Like [`Tool::call`], with the provider's id for the call, which the
    /// pool's logs show as `call_id`. The result is held to the budget as
    /// soon as it arrives, so a huge one is not kept.
    pub async fn call_with_id(
        &self,
        arguments: JsonObject,
        call_id: Option<String>,
    ) -> Result<CallToolResult, ToolError> {
        let options = CallOptions {
            timeout: None,
            call_id,
            ..CallOptions::default()
        };
        let server = &self.tool.server_id;
        let result = self
            .pool
            .call_tool(server, &self.tool.name, Some(arguments), options)
            .await?;
        let server_budget = self.pool.spec(server).and_then(|s| s.result_budget);
        Ok(self
            .budget
            .apply(server, &self.tool.name, server_budget, result)
            .await)
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
        Box::pin(self.call_with_id(arguments, None))
    }
}

/// The spec's `loadMcpTools`: the tools of `servers`, listed in parallel,
/// each wrapped as an [`McpToolAdapter`] named `mcp__{server}__{tool}`. A
/// server that fails is logged and skipped; the others' tools are still
/// returned. Names are unique across all the returned tools, and the same
/// as `toolbridge tools --format` gives. A tool that can only be called as
/// a task ([`McpTool::requires_task`]) is left out, as from the provider
/// formats: it may run for minutes while the model's turn waits (the pool
/// runs it when called, [`Pool::call_tool`]).
pub async fn load_mcp_tools(pool: &Pool, servers: &[String]) -> Vec<Arc<McpToolAdapter>> {
    let tools = pool.list_tools_of(servers).await.tools_logging_failures();
    McpToolAdapter::wrap_all(pool, tools, NameStyle::Mcp)
        .into_iter()
        .filter(|adapter| {
            let tool = adapter.mcp_tool();
            if tool.requires_task() {
                tracing::info!(server = %tool.server_id, tool = %tool.name, "leaving out a tool that can only be called as a task");
            }
            !tool.requires_task()
        })
        .collect()
}
