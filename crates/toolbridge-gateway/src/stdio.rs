//! The gateway over stdin/stdout (`toolbridge serve --stdio [--profile
//! NAME]`): one client, the program that started it.

use rmcp::ServiceExt as _;

use crate::{Gateway, GatewayError, profile::ViewName, session::Session};

/// Serves one client, with `view` (every server, or a profile), on
/// stdin/stdout until it closes them.
pub async fn serve(gateway: Gateway, view: ViewName) -> Result<(), GatewayError> {
    let service = Session::new(gateway, view)
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|e| GatewayError::Stdio(e.to_string()))?;
    service
        .waiting()
        .await
        .map_err(|e| GatewayError::Stdio(e.to_string()))?;
    Ok(())
}
