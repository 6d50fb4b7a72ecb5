//! The gateway over stdin/stdout (`toolbridge serve --stdio`): one client,
//! the program that started it.

use rmcp::ServiceExt as _;

use crate::{Gateway, GatewayError, session::Session};

/// Serves one client on stdin/stdout until it closes them.
pub async fn serve(gateway: Gateway) -> Result<(), GatewayError> {
    let service = Session::new(gateway)
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|e| GatewayError::Stdio(e.to_string()))?;
    service
        .waiting()
        .await
        .map_err(|e| GatewayError::Stdio(e.to_string()))?;
    Ok(())
}
