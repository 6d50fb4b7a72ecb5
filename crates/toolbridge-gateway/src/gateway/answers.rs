//! What the gateway answers a client with, made from what the pool gives:
//! a pooled tool as rmcp's model, a pool error as a JSON-RPC error, a page
//! of an aggregated listing.

use rmcp::model::{ErrorCode, ErrorData, Tool};
use toolbridge::{pool::PoolError, tools::McpTool};

/// A pool tool as rmcp's model, for a client's `tools/list`: every field
/// the server sent, its `_meta` included. Not its `execution`: the gateway
/// runs a task-only tool as a task itself (the pool does), so to its
/// clients every tool is a plain call, which any client that asks for
/// tasks may run as a task of the gateway's (`crate::gateway_tasks`).
pub(crate) fn to_rmcp_tool(tool: &McpTool) -> Tool {
    let mut out = Tool::default();
    out.name = tool.name.clone().into();
    out.title = tool.title.clone();
    out.description = (!tool.description.is_empty()).then(|| tool.description.clone().into());
    out.input_schema = tool.input_schema.clone();
    out.output_schema = tool.output_schema.clone();
    out.annotations = tool.annotations.clone();
    out.icons = tool.icons.clone();
    out.meta = tool.meta.clone().map(rmcp::model::MetaObject);
    out
}

/// A pool error as the JSON-RPC error a client gets: the server's own error
/// as it was, the rest as an internal error naming the server. A server
/// the pool does not have was in the client's listing (every name a client
/// can send comes from one) and has left the config since.
pub fn to_mcp_error(error: PoolError) -> ErrorData {
    match error {
        PoolError::Server {
            code,
            message,
            data,
            ..
        } => ErrorData::new(ErrorCode(code), message, data.map(|data| *data)),
        PoolError::UnknownServer { server, .. } => ErrorData::internal_error(
            format!("server {server} was removed from the gateway's config; list again"),
            None,
        ),
        e if e.is_usage() => ErrorData::invalid_params(e.to_string(), None),
        e => ErrorData::internal_error(e.to_string(), None),
    }
}

/// A page of `items` for a client: `cursor` is the offset as a string.
pub fn page<T: Clone>(
    items: &[T],
    cursor: Option<&str>,
    size: usize,
) -> Result<(Vec<T>, Option<String>), ErrorData> {
    let start = match cursor {
        None => 0,
        Some(c) => c
            .parse::<usize>()
            .ok()
            .filter(|s| *s <= items.len())
            .ok_or_else(|| {
                ErrorData::invalid_params(
                    format!("invalid cursor {c:?}; list from the start"),
                    None,
                )
            })?,
    };
    let end = start.saturating_add(size).min(items.len());
    let next = (end < items.len()).then(|| end.to_string());
    Ok((items[start..end].to_vec(), next))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A client acts on some errors' `data` (-32021's
    /// `requiredCapabilities`, -32042's `elicitations`): the gateway passes
    /// it on with the code and message.
    #[test]
    fn an_upstream_errors_data_reaches_the_client() {
        let data = serde_json::json!({"requiredCapabilities": {"sampling": {}}});
        let error = to_mcp_error(PoolError::Server {
            server: "ref".into(),
            tool: Some("test_missing_capability".into()),
            code: -32021,
            message: "MissingRequiredClientCapabilityError".into(),
            data: Some(Box::new(data.clone())),
        });
        assert_eq!(error.code, ErrorCode(-32021));
        assert_eq!(error.message, "MissingRequiredClientCapabilityError");
        assert_eq!(error.data, Some(data));
    }

    /// Issue 24: the conversion back to rmcp dropped the server's `_meta`.
    #[test]
    fn a_tool_keeps_its_servers_meta_but_not_the_execution_carrier() {
        let mut listed = serde_json::json!({"tools": [{
            "name": "research", "inputSchema": {"type": "object"},
            "execution": {"taskSupport": "required"},
            "_meta": {"com.example/ui": {"icon": "search"}},
        }]});
        toolbridge::tools::keep_execution(&mut listed);
        let tool: Tool = serde_json::from_value(listed["tools"][0].clone()).unwrap();
        let pooled = McpTool::from_rmcp("s", "s", &tool);
        assert!(pooled.requires_task());
        let served = serde_json::to_value(to_rmcp_tool(&pooled)).unwrap();
        assert_eq!(
            served["_meta"],
            serde_json::json!({"com.example/ui": {"icon": "search"}})
        );
        assert!(served.get("execution").is_none(), "{served}");
    }

    #[test]
    fn pages_follow_offsets_and_reject_foreign_cursors() {
        let items: Vec<u32> = (0..5).collect();
        let (first, next) = page(&items, None, 2).unwrap_or_default();
        assert_eq!(first, [0, 1]);
        assert_eq!(next.as_deref(), Some("2"));
        let (last, next) = page(&items, Some("4"), 2).unwrap_or_default();
        assert_eq!((last, next), (vec![4], None));
        assert!(page(&items, Some("x"), 2).is_err());
    }
}
