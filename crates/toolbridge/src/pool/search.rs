//! [`Pool::search_tools`]: the tools best fitting a task described in
//! words, ranked by the [`search`](crate::search) index.
//!
//! The index is built from what [`Pool::list_server_tools`] gives, the
//! listing every model-facing path uses (the formats, `exec`, the adapters,
//! the gateway), so a tool left out there (`disabledTools`, a withheld
//! definition) is never found; and it is rebuilt whenever a server's list
//! is new (see [`IndexCache`](crate::search::IndexCache)).

use std::sync::Arc;

use futures::future::join_all;

use super::{Pool, PoolError};
use crate::{search::ToolIndex, tools::McpTool};

/// What [`Pool::search_tools`] found.
#[derive(Debug, Default)]
pub struct ToolSearch {
    /// The tools found, best first (at most the limit asked for); empty
    /// when nothing matched.
    pub hits: Vec<ToolHit>,
    /// The servers that could not be listed, and why; their tools were not
    /// searched.
    pub failures: Vec<(String, PoolError)>,
}

/// One tool found, with its BM25 score for the query (higher is better;
/// comparable within one search only).
#[derive(Debug, Clone, PartialEq)]
pub struct ToolHit {
    /// The tool, as listed.
    pub tool: McpTool,
    /// Its score; above zero.
    pub score: f32,
}

impl Pool {
    /// The `limit` tools of the active servers that best match `query`,
    /// best first. Servers whose list is not cached are listed (started if
    /// need be), in parallel; one that fails is reported in
    /// [`ToolSearch::failures`] and the others are still searched.
    pub async fn search_tools(&self, query: &str, limit: usize) -> ToolSearch {
        self.search_tools_of(&self.active_server_names(), query, limit)
            .await
    }

    /// Like [`Pool::search_tools`], over the tools of `servers` only.
    pub async fn search_tools_of(
        &self,
        servers: &[String],
        query: &str,
        limit: usize,
    ) -> ToolSearch {
        let (index, failures) = self.tool_index_of(servers).await;
        let hits = index
            .search(query, limit)
            .into_iter()
            .map(|hit| ToolHit {
                tool: hit.tool.clone(),
                score: hit.score,
            })
            .collect();
        ToolSearch { hits, failures }
    }

    /// The search index over the tools of `servers` (those that could be
    /// listed), and the servers that could not be, and why. The same index
    /// comes back until one of the lists changes.
    pub async fn tool_index_of(
        &self,
        servers: &[String],
    ) -> (Arc<ToolIndex>, Vec<(String, PoolError)>) {
        let listed = join_all(servers.iter().map(|s| self.list_server_tools(s))).await;
        let mut lists = Vec::with_capacity(servers.len());
        let mut failures = Vec::new();
        for (server, result) in servers.iter().zip(listed) {
            match result {
                Ok(list) => lists.push((server.clone(), list)),
                Err(e) => failures.push((server.clone(), e)),
            }
        }
        (self.inner.search.index_for(lists), failures)
    }
}
