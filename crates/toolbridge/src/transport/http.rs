//! Streamable HTTP transport. Work in progress (issue 3): connecting returns a clear error.

use rmcp::{
    RoleClient,
    service::{RxJsonRpcMessage, TxJsonRpcMessage},
    transport::Transport,
};

use super::TransportError;
use crate::config::RemoteSpec;

/// The Streamable HTTP client transport.
pub struct HttpTransport {
    _private: (),
}

impl HttpTransport {
    /// Opens a connection to the server at `remote.url`.
    pub async fn connect(server: &str, remote: &RemoteSpec) -> Result<Self, TransportError> {
        let _ = remote;
        Err(TransportError::Config {
            server: server.to_owned(),
            message: "the http transport is not available in this build yet".to_owned(),
        })
    }
}

impl Transport<RoleClient> for HttpTransport {
    type Error = std::io::Error;

    fn send(
        &mut self,
        _item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        std::future::ready(Err(std::io::Error::from(std::io::ErrorKind::NotConnected)))
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        None
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        Ok(())
    }
}

/// Connects to a streamable HTTP server, falling back to legacy SSE when the
/// config gave no `type` and the server answers the first POST with 400, 404
/// or 405.
pub async fn connect(
    server: &str,
    remote: &RemoteSpec,
) -> Result<super::AnyTransport, TransportError> {
    HttpTransport::connect(server, remote)
        .await
        .map(super::AnyTransport::Http)
}
