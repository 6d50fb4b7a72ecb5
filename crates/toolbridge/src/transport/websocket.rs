//! WebSocket (subprotocol `mcp`) transport. Work in progress (issue 3): connecting returns a clear error.

use rmcp::{
    RoleClient,
    service::{RxJsonRpcMessage, TxJsonRpcMessage},
    transport::Transport,
};

use super::TransportError;
use crate::config::RemoteSpec;

/// The WebSocket (subprotocol `mcp`) client transport.
pub struct WebSocketTransport {
    _private: (),
}

impl WebSocketTransport {
    /// Opens a connection to the server at `remote.url`.
    pub async fn connect(server: &str, remote: &RemoteSpec) -> Result<Self, TransportError> {
        let _ = remote;
        Err(TransportError::Config {
            server: server.to_owned(),
            message: "the websocket transport is not available in this build yet".to_owned(),
        })
    }
}

impl Transport<RoleClient> for WebSocketTransport {
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
