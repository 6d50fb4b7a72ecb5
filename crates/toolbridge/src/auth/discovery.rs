//! Finding a server's authorization server ([`discover`]): its protected
//! resource metadata (from the 401's challenge when there is one), the
//! authorization server's metadata, and the 2025-03-26 fallbacks; and
//! naming the authorization server ([`issuer_of`]). Shared by the browser
//! sign-in (`flow`), the unattended grants (`grant`) and the token refresh
//! (`session`).

use std::{sync::Arc, time::Duration};

use rmcp::transport::auth::{
    AuthError as RmcpAuthError, AuthorizationManager, AuthorizationMetadata,
};
use url::Url;

use super::{
    AuthError, TokenStore,
    dpop::{DpopKey, DpopTokenClient},
};

/// An authorization manager for `url` over `store` (its token requests
/// proving possession of `dpop` when given), and the metadata it
/// found (from the challenge's `resource_metadata` when there is one; rmcp
/// keeps its copy private). With `guessed_endpoints`, a server that
/// publishes no metadata gets the 2025-03-26 default endpoints (`/authorize`,
/// `/token`, `/register` at its origin); without, that is an error.
pub(crate) async fn discover(
    server: &str,
    url: &Url,
    store: &TokenStore,
    challenge: Option<&str>,
    guessed_endpoints: bool,
    dpop: Option<Arc<DpopKey>>,
) -> Result<(AuthorizationManager, AuthorizationMetadata), AuthError> {
    let step = "finding its authorization server";
    let manager = match dpop {
        // rmcp's own client (which also refuses metadata on private
        // addresses) cannot add the proof to token requests.
        Some(key) => {
            let client =
                DpopTokenClient::new(key).map_err(|e| AuthError::protocol(server, step, e))?;
            AuthorizationManager::new_with_oauth_http_client(url.as_str(), Arc::new(client)).await
        }
        None => AuthorizationManager::new(url.as_str()).await,
    };
    let mut manager = manager.map_err(|e| AuthError::protocol(server, step, e))?;
    manager.set_credential_store(store.credential_store(url));
    let metadata = match manager.resolve_metadata_from_challenge(challenge).await {
        // Without a 401 to go on, endpoints guessed from the URL would send
        // the user to pages that do not exist.
        Ok(resolution) if !guessed_endpoints && !resolution.source.is_discovered() => {
            return Err(AuthError::protocol(
                server,
                step,
                "the server did not ask for a sign-in (it answered without 401) and publishes \
                 no OAuth metadata; it needs none, or takes a token in the config's \"headers\"",
            ));
        }
        Ok(resolution) => resolution.metadata,
        // A 2025-03-26 server publishes no resource metadata, and its
        // authorization server's metadata at its own origin may name an
        // issuer with a path (`/oauth`), which RFC 8414's strict check
        // refuses. The MCP server itself vouches for metadata at its own
        // origin, so that one is taken, as that spec version says.
        Err(RmcpAuthError::AuthorizationServerMismatch {
            expected_issuer,
            received_issuer,
        }) => match legacy_metadata(url).await {
            Some(metadata) => {
                tracing::debug!(
                    server,
                    expected_issuer,
                    received_issuer,
                    "taking the authorization server metadata at the server's own origin \
                     (2025-03-26), whose issuer has a path"
                );
                metadata
            }
            None => {
                return Err(AuthError::protocol(
                    server,
                    step,
                    format!(
                        "its metadata names the issuer {received_issuer}, not {expected_issuer}"
                    ),
                ));
            }
        },
        Err(e) => return Err(AuthError::protocol(server, step, e)),
    };
    manager.set_metadata(metadata.clone());
    Ok((manager, metadata))
}

/// The authorization server metadata at `url`'s origin
/// (`/.well-known/oauth-authorization-server`), where a 2025-03-26 server
/// keeps it.
async fn legacy_metadata(url: &Url) -> Option<AuthorizationMetadata> {
    let mut at = url.clone();
    at.set_path("/.well-known/oauth-authorization-server");
    at.set_query(None);
    at.set_fragment(None);
    let response = reqwest::Client::new()
        .get(at)
        .timeout(Duration::from_secs(30))
        .send()
        .await
        .ok()?;
    if !response.status().is_success() {
        return None;
    }
    let metadata: AuthorizationMetadata =
        serde_json::from_slice(&response.bytes().await.ok()?).ok()?;
    // Its endpoints must be web URLs; anything else is not metadata.
    let web = |u: &str| Url::parse(u).is_ok_and(|u| matches!(u.scheme(), "http" | "https"));
    (web(&metadata.authorization_endpoint) && web(&metadata.token_endpoint)).then_some(metadata)
}

/// The authorization server's identity: its issuer, else its
/// authorization endpoint (2025-03-26 servers may publish no issuer).
pub(crate) fn issuer_of(metadata: &AuthorizationMetadata) -> String {
    metadata
        .issuer
        .clone()
        .unwrap_or_else(|| metadata.authorization_endpoint.clone())
}
