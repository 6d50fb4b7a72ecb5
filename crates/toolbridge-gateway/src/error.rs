//! The gateway's errors.

use std::{net::SocketAddr, path::PathBuf};

/// What can stop the gateway from serving.
#[derive(Debug, thiserror::Error)]
pub enum GatewayError {
    /// The listen address could not be bound.
    #[error("cannot listen on {addr}: {source}; choose another address with --listen")]
    Bind {
        /// The address asked for.
        addr: SocketAddr,
        /// Why.
        source: std::io::Error,
    },
    /// Serving HTTP failed.
    #[error("the gateway's HTTP server failed: {0}")]
    Serve(#[source] std::io::Error),
    /// Serving MCP over stdin/stdout failed.
    #[error("the gateway's stdio server failed: {0}")]
    Stdio(String),
    /// The bearer token file could not be read or written.
    #[error(
        "cannot use the gateway token file {path}: {source}; check its folder's permissions, \
         or set $TOOLBRIDGE_GATEWAY_TOKEN (a read-only config folder, as in a container, \
         cannot hold the file)"
    )]
    TokenFile {
        /// The token file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The config's gateway settings cannot be used.
    #[error("{0}")]
    Config(String),
    /// `--server` named a server the config does not have.
    #[error("no server named {server:?} in the config; configured: {known}")]
    UnknownServer {
        /// The name given.
        server: String,
        /// The configured names, comma-separated.
        known: String,
    },
}
