//! Legacy HTTP+SSE (protocol 2024-11-05) transport. Work in progress (issue 3): connecting returns a clear error.

use rmcp::{
    RoleClient,
    service::{RxJsonRpcMessage, TxJsonRpcMessage},
    transport::Transport,
};

use super::TransportError;
use crate::config::RemoteSpec;

/// The Legacy HTTP+SSE (protocol 2024-11-05) client transport.
pub struct SseTransport {
    _private: (),
}

impl SseTransport {
    /// Opens a connection to the server at `remote.url`.
    pub async fn connect(server: &str, remote: &RemoteSpec) -> Result<Self, TransportError> {
        let _ = remote;
        Err(TransportError::Config {
            server: server.to_owned(),
            message: "the sse transport is not available in this build yet".to_owned(),
        })
    }
}

impl Transport<RoleClient> for SseTransport {
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
