//! The spec's `loadDirectMcpTools`: a session's own servers (built-in or
//! per-session), whose lifetime is the session's, not the shared pool's.
//! Their tools are the same [`McpToolAdapter`]s, named `{server}__{tool}`.

use std::sync::Arc;

use super::McpToolAdapter;
use crate::{
    config::ServerSpec,
    format::NameStyle,
    pool::{Pool, PoolError, PoolOptions},
};

/// One of a session's servers, returned by [`load_direct_mcp_tools`] so the
/// caller can close it when the session ends. Its process is tracked like
/// every stdio server's, so it is killed even if the host dies first; and
/// when the session's last handle is dropped, it is closed too.
#[derive(Clone)]
pub struct DirectConnection {
    /// The server's config name.
    server: String,
    /// The session's pool, which runs this server.
    pool: Pool,
}

impl DirectConnection {
    /// The server's config name.
    pub fn server(&self) -> &str {
        &self.server
    }

    /// Closes the server (stdin, then SIGTERM, then SIGKILL of its group).
    pub async fn close(&self) {
        self.pool.close(&self.server).await;
    }
}

/// What [`load_direct_mcp_tools`] returns: the tools, the connections to
/// close at the end of the session, and the servers that failed.
pub struct DirectTools {
    /// Every tool of every server that started.
    pub tools: Vec<Arc<McpToolAdapter>>,
    /// One per server that started; close them when the session ends.
    pub connections: Vec<DirectConnection>,
    /// The servers that could not start or list their tools, and why.
    pub failures: Vec<(String, PoolError)>,
}

/// The spec's `loadDirectMcpTools`: starts `servers` in a pool of the
/// session's own (in parallel), discovers their tools and wraps them as
/// [`McpToolAdapter`]s named `{server}__{tool}`. A server that fails is
/// reported in [`DirectTools::failures`] and closed; the others are kept.
pub async fn load_direct_mcp_tools(servers: Vec<ServerSpec>) -> DirectTools {
    let pool = Pool::new(servers, PoolOptions::default());
    let names = pool.server_names().to_vec();
    let listing = pool.list_tools_of(&names).await;
    for (server, _) in &listing.failures {
        pool.close(server).await;
    }
    let connections = names
        .into_iter()
        .filter(|name| !listing.failures.iter().any(|(failed, _)| failed == name))
        .map(|server| DirectConnection {
            server,
            pool: pool.clone(),
        })
        .collect();
    DirectTools {
        tools: McpToolAdapter::wrap_all(&pool, listing.tools, NameStyle::Direct),
        connections,
        failures: listing.failures,
    }
}
