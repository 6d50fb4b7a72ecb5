//! The tool model: one MCP tool of one server, as the loader, the formats and
//! the adapters see it.

use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// One tool offered by one MCP server.
///
/// Serialized in the `toolbridge tools --format mcp` shape.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct McpTool {
    /// `mcp__{server}__{tool}`, before any provider-specific sanitizing.
    pub id: String,
    /// The tool's name as the server knows it; this is what `tools/call` takes.
    pub name: String,
    /// The tool's description, empty when the server gave none.
    pub description: String,
    /// The tool's JSON Schema for its arguments, as the server sent it.
    pub input_schema: Arc<serde_json::Map<String, serde_json::Value>>,
    /// The config name of the server that offers the tool.
    pub server_id: String,
    /// The name the server reported for itself, or the config name.
    pub server_name: String,
}

impl McpTool {
    /// The id of tool `tool` of server `server`: `mcp__{server}__{tool}`.
    pub fn id_for(server: &str, tool: &str) -> String {
        format!("mcp__{server}__{tool}")
    }

    /// Builds the model of `tool` as offered by the server configured as
    /// `server_id`, which calls itself `server_name`.
    pub fn from_rmcp(server_id: &str, server_name: &str, tool: &rmcp::model::Tool) -> Self {
        McpTool {
            id: Self::id_for(server_id, &tool.name),
            name: tool.name.to_string(),
            description: tool.description.as_deref().unwrap_or_default().to_owned(),
            input_schema: tool.input_schema.clone(),
            server_id: server_id.to_owned(),
            server_name: server_name.to_owned(),
        }
    }
}
