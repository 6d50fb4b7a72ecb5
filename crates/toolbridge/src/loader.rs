//! The spec's ToolsLoader: which servers' tools to offer, converted to a
//! provider's format.

use crate::{
    format::{Format, FormatOptions, NameTable, convert_tools},
    pool::Pool,
    tools::McpTool,
};

/// How tools are selected (the spec's `mode`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Mode {
    /// Every active (enabled) server.
    #[default]
    Auto,
    /// Only the selected servers.
    Manual(Vec<String>),
}

/// The spec's loader config: MCP tools are offered only when enabled.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LoaderConfig {
    /// When false (the default), no tools are loaded.
    pub enabled: bool,
    /// Which servers.
    pub mode: Mode,
}

impl LoaderConfig {
    /// Enabled, every active server.
    pub fn auto() -> Self {
        LoaderConfig {
            enabled: true,
            mode: Mode::Auto,
        }
    }

    /// Enabled, only `servers`.
    pub fn manual(servers: impl IntoIterator<Item = impl Into<String>>) -> Self {
        LoaderConfig {
            enabled: true,
            mode: Mode::Manual(servers.into_iter().map(Into::into).collect()),
        }
    }
}

/// What [`setup_mcp_tools`] returns.
#[derive(Debug, Clone)]
pub struct SetupResult {
    /// The tool definitions in the provider's format, ready for a request.
    pub tools: serde_json::Value,
    /// The MCP tools they came from.
    pub mcp_tools: Vec<McpTool>,
    /// The names they were given, to route the model's calls back.
    pub names: NameTable,
}

/// The spec's `fetchMcpTools`: disabled gives nothing; auto lists every
/// active server; manual lists the selected servers; in parallel either way.
/// A server that fails is logged and skipped.
pub async fn fetch_mcp_tools(pool: &Pool, config: &LoaderConfig) -> Vec<McpTool> {
    if !config.enabled {
        return Vec::new();
    }
    let servers = match &config.mode {
        Mode::Auto => pool.active_server_names(),
        Mode::Manual(servers) => servers.clone(),
    };
    pool.list_tools_of(&servers).await.tools_logging_failures()
}

/// The spec's `setupMcpTools`: fetches the tools, logs how many each server
/// has, and converts them to `format`. `None` when there are no tools.
pub async fn setup_mcp_tools(
    pool: &Pool,
    config: &LoaderConfig,
    format: Format,
    options: &FormatOptions,
) -> Option<SetupResult> {
    let mcp_tools = fetch_mcp_tools(pool, config).await;
    if mcp_tools.is_empty() {
        return None;
    }
    for (server, count) in count_by_server(&mcp_tools) {
        tracing::info!(server = %server, tools = count, "loaded MCP tools");
    }
    let names = NameTable::for_tools(&mcp_tools);
    let tools = convert_tools(format, &mcp_tools, &names, options);
    Some(SetupResult {
        tools,
        mcp_tools,
        names,
    })
}

/// Tool counts per server, in the order servers first appear.
pub fn count_by_server(tools: &[McpTool]) -> Vec<(&str, usize)> {
    let mut counts: Vec<(&str, usize)> = Vec::new();
    for tool in tools {
        match counts.iter_mut().find(|(s, _)| *s == tool.server_id) {
            Some((_, n)) => *n += 1,
            None => counts.push((&tool.server_id, 1)),
        }
    }
    counts
}
