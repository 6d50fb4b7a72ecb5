//! [`ServerAuth`]: the OAuth side of one remote server's connection. The
//! HTTP transport asks it for the bearer token of every request (refreshed
//! before it expires, without a browser) and tells it when the server
//! refuses one (401, or 403 `insufficient_scope`): it signs in when the
//! program allows it ([`SignIn`]), else says how to.

use crate::lock::LockUnpoisoned as _;
use std::sync::Arc;

use rmcp::transport::auth::{AuthError as RmcpAuthError, OAuthClientConfig, WWWAuthenticateParams};
use url::Url;

use super::{
    AuthError, SignIn, TokenStore,
    discovery::{discover, issuer_of},
    store::{access_token, is_dpop_bound, needs_refresh, refresh_token},
};
use crate::config::OAuthSpec;

/// One server's tokens, as its HTTP transport uses them.
pub struct ServerAuth {
    /// The server's config name, for errors and logs.
    server: String,
    /// The server's URL: the resource the tokens are for.
    url: Url,
    /// The config's `oauth` object.
    oauth: OAuthSpec,
    /// Where the tokens are.
    store: TokenStore,
    /// Whether (and how) a refused request may start a sign-in.
    sign_in: Option<SignIn>,
    /// One refresh or sign-in at a time: requests refused together wait for
    /// the first one's sign-in instead of each opening a browser.
    busy: tokio::sync::Mutex<()>,
    /// The resource server's latest DPoP nonce (RFC 9449 section 9).
    nonce: std::sync::Mutex<Option<String>>,
}

impl std::fmt::Debug for ServerAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerAuth")
            .field("server", &self.server)
            .field("store", &self.store)
            .finish_non_exhaustive()
    }
}

impl ServerAuth {
    /// The OAuth side of `server` at `url`; `None` when there is nowhere to
    /// keep tokens (no `$HOME`), and the server is used without.
    pub fn new(
        server: &str,
        url: &Url,
        oauth: &OAuthSpec,
        sign_in: Option<SignIn>,
    ) -> Option<Arc<Self>> {
        let store = match &sign_in {
            Some(sign_in) => sign_in.store.clone(),
            None => TokenStore::user_default()?,
        };
        Some(Arc::new(ServerAuth {
            server: server.to_owned(),
            url: url.clone(),
            oauth: oauth.clone(),
            store,
            sign_in,
            busy: tokio::sync::Mutex::new(()),
            nonce: std::sync::Mutex::new(None),
        }))
    }

    /// The server's config name.
    pub fn server(&self) -> &str {
        &self.server
    }

    /// How `token` goes on a `method` request to `uri`: `None` when it is a
    /// bearer token (sent as `Authorization: Bearer`), else the
    /// `Authorization: DPoP` value and a fresh `DPoP` proof of the key the
    /// token is bound to (with the server's latest nonce).
    pub fn dpop_headers(
        &self,
        method: &str,
        uri: &str,
        token: &str,
    ) -> Result<Option<(String, String)>, AuthError> {
        let bound = self
            .store
            .load_credentials(&self.url)?
            .filter(|c| access_token(c).as_deref() == Some(token))
            .is_some_and(|c| is_dpop_bound(&c));
        if !bound {
            return Ok(None);
        }
        let Some(key) = self.store.dpop_key(&self.url)? else {
            // Without its key the token cannot be used: the server's 401
            // leads to a new sign-in.
            tracing::info!(server = %self.server, "the DPoP key of the stored token is missing");
            return Ok(None);
        };
        let nonce = self.nonce.lock_unpoisoned().clone();
        let proof = key
            .proof(method, uri, Some(token), nonce.as_deref())
            .map_err(|e| AuthError::protocol(&self.server, "making a DPoP proof", e))?;
        Ok(Some((format!("DPoP {token}"), proof)))
    }

    /// Keeps the nonce the server sent (`DPoP-Nonce`) for the next proofs.
    pub fn keep_nonce(&self, nonce: &str) {
        *self.nonce.lock_unpoisoned() = Some(nonce.to_owned());
    }

    /// The access token to send, refreshed first when it expires within a
    /// minute; `None` when not signed in (the request goes without, and
    /// the server's 401 says what it needs).
    pub async fn bearer(&self) -> Result<Option<String>, AuthError> {
        match self.store.load_credentials(&self.url)? {
            None => return Ok(None),
            Some(credentials) if !needs_refresh(&credentials) => {
                return Ok(access_token(&credentials));
            }
            Some(_) => {}
        }
        let _busy = self.busy.lock().await;
        // Another request may have refreshed it meanwhile.
        let Some(credentials) = self.store.load_credentials(&self.url)? else {
            return Ok(None);
        };
        if !needs_refresh(&credentials) {
            return Ok(access_token(&credentials));
        }
        if refresh_token(&credentials).is_none() {
            // A token got without a user is got again the same way.
            if self.oauth.grant.is_unattended() {
                super::grant::obtain(&self.server, &self.url, &self.oauth, &self.store, None)
                    .await?;
                return Ok(self
                    .store
                    .load_credentials(&self.url)?
                    .and_then(|c| access_token(&c)));
            }
            return Ok(None);
        }
        self.refresh(&credentials).await
    }

    /// Refreshes the tokens; `None` when the authorization server refused
    /// the refresh token or no longer knows the client (both forgotten:
    /// the next 401 signs in again).
    async fn refresh(
        &self,
        credentials: &rmcp::transport::auth::StoredCredentials,
    ) -> Result<Option<String>, AuthError> {
        let step = "refreshing its token";
        // A DPoP-bound token is refreshed with a proof of the same key.
        let key = if is_dpop_bound(credentials) {
            self.store.dpop_key(&self.url)?.map(Arc::new)
        } else {
            None
        };
        let (mut manager, metadata) =
            discover(&self.server, &self.url, &self.store, None, true, key).await?;
        let issuer = issuer_of(&metadata);
        let secret = if self.oauth.client_id.as_deref() == Some(credentials.client_id.as_str()) {
            self.oauth.client_secret.clone()
        } else {
            self.store
                .registration(&issuer)?
                .filter(|r| r.client_id == credentials.client_id)
                .and_then(|r| r.client_secret)
        };
        let mut config = OAuthClientConfig::new(credentials.client_id.clone(), self.url.as_str());
        if let Some(secret) = secret {
            config = config.with_client_secret(secret);
        }
        manager
            .configure_client(config)
            .map_err(|e| AuthError::protocol(&self.server, step, e))?;
        match manager.refresh_token().await {
            Ok(_) => {
                tracing::debug!(server = %self.server, "refreshed the access token");
                Ok(self
                    .store
                    .load_credentials(&self.url)?
                    .and_then(|c| access_token(&c)))
            }
            Err(RmcpAuthError::TokenRefreshRejected(_) | RmcpAuthError::AuthorizationRequired) => {
                tracing::info!(server = %self.server, "the refresh token was refused; a new sign-in is needed");
                self.store.forget_tokens(&self.url)?;
                Ok(None)
            }
            Err(e) if e.to_string().contains("invalid_client") => {
                tracing::info!(
                    server = %self.server,
                    "the authorization server no longer knows toolbridge's registration; \
                     the next sign-in registers anew"
                );
                self.store.forget_registration(&issuer)?;
                self.store.forget_tokens(&self.url)?;
                Ok(None)
            }
            Err(e) => Err(AuthError::protocol(&self.server, step, e)),
        }
    }

    /// The server refused a request that carried `sent` (or no token) with
    /// `challenge` (its `WWW-Authenticate`). `Ok` means "send it again":
    /// the token was refreshed, someone else signed in meanwhile, or this
    /// signed in. Without permission to sign in, or after too many
    /// sign-ins, it is [`AuthError::SignInNeeded`].
    pub async fn refused(&self, challenge: &str, sent: Option<&str>) -> Result<(), AuthError> {
        let _busy = self.busy.lock().await;
        let step_up = WWWAuthenticateParams::parse(challenge, &self.url).is_insufficient_scope();
        let stored = self.store.load_credentials(&self.url)?;
        let current = stored.as_ref().and_then(access_token);
        if !step_up {
            if current.is_some() && current.as_deref() != sent {
                return Ok(());
            }
            // A token refused before its time (revoked): a refresh may do.
            if let Some(credentials) = stored.filter(|c| refresh_token(c).is_some())
                && sent.is_some()
                && let Some(fresh) = self.refresh(&credentials).await?
                && Some(fresh.as_str()) != sent
            {
                return Ok(());
            }
        }
        // An unattended grant needs no permission: no browser, no prompt.
        // Its refusal is the error (the request is not sent again).
        if self.oauth.grant.is_unattended() {
            super::grant::obtain(
                &self.server,
                &self.url,
                &self.oauth,
                &self.store,
                Some(challenge),
            )
            .await?;
            return Ok(());
        }
        let needed = || AuthError::SignInNeeded {
            server: self.server.clone(),
        };
        let sign_in = self.sign_in.as_ref().ok_or_else(needed)?;
        if !sign_in.take_attempt(&self.server) {
            return Err(needed());
        }
        sign_in
            .run(&self.server, &self.url, &self.oauth, Some(challenge))
            .await?;
        Ok(())
    }
}
