//! The tool model: one MCP tool of one server, as the loader, the formats and
//! the adapters see it.

use serde::{Deserialize, Serialize};
use std::sync::Arc;

pub use rmcp::model::{Icon, ToolAnnotations};

/// The `_meta` key under which a tool's `execution` object travels from the
/// transport to [`McpTool::from_rmcp`].
///
/// rmcp 3.11's `Tool` has no `execution` field and drops it when it parses a
/// `tools/list` result; [`keep_execution`] moves it into the tool's `_meta`
/// (which rmcp keeps) before rmcp parses the message, and
/// [`McpTool::from_rmcp`] takes it out again. Nothing else sees the key.
pub const EXECUTION_META_KEY: &str = "io.github.toolbridge/execution";

/// One tool offered by one MCP server.
///
/// Serialized in the `toolbridge tools --format mcp` shape: the server's
/// own fields (`name`, `title`, `description`, `inputSchema`,
/// `outputSchema`, `annotations`, `icons`, `execution`, `_meta`) as MCP
/// spells them,
/// plus `id`, `serverId` and `serverName`. Fields the server did not send
/// are left out.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct McpTool {
    /// `mcp__{server}__{tool}`, before any provider-specific sanitizing.
    pub id: String,
    /// The tool's name as the server knows it; this is what `tools/call` takes.
    pub name: String,
    /// A human-readable title, if the server gave one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The tool's description, empty when the server gave none.
    pub description: String,
    /// The tool's JSON Schema for its arguments, as the server sent it.
    pub input_schema: Arc<serde_json::Map<String, serde_json::Value>>,
    /// The JSON Schema of the tool's `structuredContent`, if it declares one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<Arc<serde_json::Map<String, serde_json::Value>>>,
    /// The server's hints about the tool (read-only, destructive,
    /// idempotent, open world, title). Hints from an untrusted server, not
    /// guarantees.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<ToolAnnotations>,
    /// Icons for a user interface.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Vec<Icon>>,
    /// How the tool may be run (task augmentation).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub execution: Option<ToolExecution>,
    /// The server's own `_meta` for the tool, as it sent it (without the
    /// key toolbridge carries `execution` under, [`EXECUTION_META_KEY`]).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<serde_json::Map<String, serde_json::Value>>,
    /// The config name of the server that offers the tool.
    pub server_id: String,
    /// The name the server reported for itself, or the config name.
    pub server_name: String,
}

/// A tool's `execution` object.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolExecution {
    /// Whether the tool may, must or must not be called as a task; absent
    /// means [`TaskSupport::Forbidden`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_support: Option<TaskSupport>,
}

/// Whether a tool can be called as a task (`execution.taskSupport`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TaskSupport {
    /// Only as a plain call (the default).
    Forbidden,
    /// Either way.
    Optional,
    /// Only as a task: a plain `tools/call` fails.
    Required,
}

impl McpTool {
    /// The id of tool `tool` of server `server`: `mcp__{server}__{tool}`.
    pub fn id_for(server: &str, tool: &str) -> String {
        format!("mcp__{server}__{tool}")
    }

    /// Builds the model of `tool` as offered by the server configured as
    /// `server_id`, which calls itself `server_name`. Its `execution` is
    /// read from where [`keep_execution`] put it.
    pub fn from_rmcp(server_id: &str, server_name: &str, tool: &rmcp::model::Tool) -> Self {
        let execution = tool
            .meta
            .as_ref()
            .and_then(|meta| meta.get(EXECUTION_META_KEY))
            .and_then(|value| serde_json::from_value::<ToolExecution>(value.clone()).ok());
        let meta = tool
            .meta
            .as_ref()
            .map(|meta| {
                meta.iter()
                    .filter(|(key, _)| key.as_str() != EXECUTION_META_KEY)
                    .map(|(key, value)| (key.clone(), value.clone()))
                    .collect::<serde_json::Map<_, _>>()
            })
            .filter(|meta| !meta.is_empty());
        McpTool {
            id: Self::id_for(server_id, &tool.name),
            name: tool.name.to_string(),
            title: tool.title.clone(),
            description: tool.description.as_deref().unwrap_or_default().to_owned(),
            input_schema: tool.input_schema.clone(),
            output_schema: tool.output_schema.clone(),
            annotations: tool.annotations.clone(),
            icons: tool.icons.clone(),
            execution,
            meta,
            server_id: server_id.to_owned(),
            server_name: server_name.to_owned(),
        }
    }

    /// True when the tool can only be called as a task
    /// (`execution.taskSupport: "required"`); the pool calls it as one.
    pub fn requires_task(&self) -> bool {
        self.execution
            .as_ref()
            .and_then(|e| e.task_support)
            .is_some_and(|t| t == TaskSupport::Required)
    }
}

/// Moves the `execution` object of each tool in a `tools/list` result
/// (`{"tools": [...]}`) into the tool's `_meta` under
/// [`EXECUTION_META_KEY`], so that it survives rmcp's parse; returns
/// whether anything moved. Anything that is not a tool object is left as it
/// is.
pub fn keep_execution(result: &mut serde_json::Value) -> bool {
    let Some(tools) = result.get_mut("tools").and_then(|t| t.as_array_mut()) else {
        return false;
    };
    let mut moved = false;
    for tool in tools {
        let Some(tool) = tool.as_object_mut() else {
            continue;
        };
        let Some(execution) = tool.remove("execution") else {
            continue;
        };
        let meta = tool
            .entry("_meta")
            .or_insert_with(|| serde_json::Value::Object(serde_json::Map::new()));
        if let Some(meta) = meta.as_object_mut() {
            meta.insert(EXECUTION_META_KEY.to_owned(), execution);
            moved = true;
        }
    }
    moved
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn execution_survives_rmcp_and_comes_back_out_of_meta() {
        let mut result = json!({"tools": [
            {"name": "research", "inputSchema": {"type": "object"},
             "execution": {"taskSupport": "required"}},
            {"name": "echo", "inputSchema": {"type": "object"}, "_meta": {"x": 1}},
        ]});
        assert!(keep_execution(&mut result));
        let tools: Vec<rmcp::model::Tool> =
            serde_json::from_value(result["tools"].clone()).expect("MCP tools");
        let research = McpTool::from_rmcp("s", "s", &tools[0]);
        assert!(research.requires_task());
        assert_eq!(
            serde_json::to_value(&research).expect("serializable")["execution"],
            json!({"taskSupport": "required"})
        );
        assert!(
            research.meta.is_none(),
            "the carrier key is not the server's"
        );
        let echo = McpTool::from_rmcp("s", "s", &tools[1]);
        assert!(!echo.requires_task());
        assert!(echo.execution.is_none());
        assert_eq!(echo.meta, json!({"x": 1}).as_object().cloned());
    }
}
