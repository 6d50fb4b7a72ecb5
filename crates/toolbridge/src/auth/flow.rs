//! Signing in ([`sign_in`]): discovery, registration, the browser and the
//! code exchange; and signing out ([`sign_out`]): revocation, then the
//! tokens are forgotten.
//!
//! Which client toolbridge is, in the order the MCP spec gives: the
//! config's `oauth.clientId` (with `clientSecret`); else
//! `oauth.clientMetadataUrl` when the authorization server accepts client
//! ID metadata documents; else the client registered there before (kept
//! with its secret and redirect URI); else a new dynamic registration,
//! kept for the next time. An authorization server that answers
//! `invalid_client` for a kept registration has revoked it: it is
//! forgotten and toolbridge registers anew, once.

use crate::lock::LockUnpoisoned as _;
use std::{
    collections::HashMap,
    sync::{Arc, Mutex},
    time::Duration,
};

use rmcp::transport::auth::{
    AuthorizationCallback, AuthorizationManager, AuthorizationMetadata, AuthorizationRequest,
    AuthorizationSession, StoredCredentials, WWWAuthenticateParams,
};
use serde::Serialize;
use url::Url;

use super::{
    AuthError, Browser, SignInPrompt, TokenStore,
    discovery::{discover, issuer_of},
    dpop::DpopKey,
    redirect::RedirectListener,
    store::{self, Registration},
};
use crate::config::OAuthSpec;

/// How long the browser has to come back to toolbridge.
pub const SIGN_IN_TIMEOUT: Duration = Duration::from_secs(300);
/// The most sign-ins one [`SignIn`] runs for one server: the first, and
/// two scope step-ups. A server that keeps refusing gets an error, not an
/// endless loop of browser windows.
const MAX_SIGN_INS_PER_SERVER: u32 = 3;
/// The name toolbridge registers under.
const CLIENT_NAME: &str = "toolbridge";

/// Permission to sign in from inside a command: a server that answers 401
/// (or 403 `insufficient_scope`) gets the browser flow and its request is
/// retried once. Given to the pool (`PoolOptions::sign_in`) by a program
/// that has a user at hand (a terminal, or `$BROWSER`); without it such a
/// server fails with "run `toolbridge auth login NAME`".
#[derive(Clone)]
pub struct SignIn {
    /// Where tokens go.
    pub(crate) store: TokenStore,
    /// How the URL is opened.
    browser: Browser,
    /// Told about each sign-in as it starts.
    prompt: SignInPrompt,
    /// Sign-ins run per server, for [`MAX_SIGN_INS_PER_SERVER`].
    attempts: Arc<Mutex<HashMap<String, u32>>>,
}

impl std::fmt::Debug for SignIn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SignIn")
            .field("store", &self.store)
            .field("browser", &self.browser)
            .finish_non_exhaustive()
    }
}

impl SignIn {
    /// Sign-ins into `store`, opening `browser`, telling `prompt`.
    pub fn new(store: TokenStore, browser: Browser, prompt: SignInPrompt) -> Self {
        SignIn {
            store,
            browser,
            prompt,
            attempts: Arc::default(),
        }
    }

    /// Counts a sign-in for `server`; false when it has had its share.
    pub(crate) fn take_attempt(&self, server: &str) -> bool {
        let mut attempts = self.attempts.lock_unpoisoned();
        let count = attempts.entry(server.to_owned()).or_default();
        *count += 1;
        *count <= MAX_SIGN_INS_PER_SERVER
    }

    /// How many sign-ins to `server` this has started so far.
    pub(crate) fn attempts(&self, server: &str) -> u32 {
        let attempts = self.attempts.lock_unpoisoned();
        attempts.get(server).copied().unwrap_or(0)
    }

    /// Runs [`sign_in`] for `server` at `url`.
    pub async fn run(
        &self,
        server: &str,
        url: &Url,
        oauth: &OAuthSpec,
        challenge: Option<&str>,
    ) -> Result<SignedIn, AuthError> {
        sign_in(
            server,
            url,
            oauth,
            &self.store,
            challenge,
            &self.browser,
            &self.prompt,
        )
        .await
    }
}

/// A finished sign-in.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct SignedIn {
    /// The authorization server that issued the tokens.
    pub issuer: Option<String>,
    /// The scopes granted.
    pub scopes: Vec<String>,
}

/// What [`sign_out`] did.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct SignOut {
    /// There were tokens, now forgotten.
    pub was_signed_in: bool,
    /// The authorization server revoked them (it offers revocation and
    /// accepted the request).
    pub revoked: bool,
}

/// Signs in to `server` at `url` in the browser and stores the tokens;
/// with an unattended `oauth.grant`, gets them by that grant instead.
///
/// `challenge` is the `WWW-Authenticate` of the 401 or 403 that asked for
/// it, if any: its `resource_metadata` and `scope` guide discovery and the
/// scopes asked for (a 403 `insufficient_scope` asks for the scopes held
/// plus the ones it names). `prompt` is told the URL before the browser is
/// started with it.
pub async fn sign_in(
    server: &str,
    url: &Url,
    oauth: &OAuthSpec,
    store: &TokenStore,
    challenge: Option<&str>,
    browser: &Browser,
    prompt: &SignInPrompt,
) -> Result<SignedIn, AuthError> {
    if oauth.grant.is_unattended() {
        return super::grant::obtain(server, url, oauth, store, challenge).await;
    }
    match attempt(server, url, oauth, store, challenge, browser, prompt).await {
        Err(Attempt::RegistrationRevoked(issuer)) => {
            tracing::info!(
                server,
                "the authorization server no longer knows toolbridge's registration; registering anew"
            );
            store.forget_registration(&issuer)?;
            attempt(server, url, oauth, store, challenge, browser, prompt)
                .await
                .map_err(|e| e.into_error(server))
        }
        other => other.map_err(|e| e.into_error(server)),
    }
}

/// One try at signing in.
enum Attempt {
    /// The kept registration with this authorization server was refused
    /// (`invalid_client`).
    RegistrationRevoked(String),
    /// Anything else.
    Failed(AuthError),
}

impl Attempt {
    fn into_error(self, server: &str) -> AuthError {
        match self {
            Attempt::Failed(e) => e,
            Attempt::RegistrationRevoked(issuer) => AuthError::Protocol {
                server: server.to_owned(),
                step: "signing in",
                message: format!("{issuer} refused toolbridge's new registration too"),
            },
        }
    }
}

impl From<AuthError> for Attempt {
    fn from(e: AuthError) -> Self {
        Attempt::Failed(e)
    }
}

/// One sign-in in the browser: discovery, the scopes, which client
/// toolbridge is, the browser's answer and the code exchange.
async fn attempt(
    server: &str,
    url: &Url,
    oauth: &OAuthSpec,
    store: &TokenStore,
    challenge: Option<&str>,
    browser: &Browser,
    prompt: &SignInPrompt,
) -> Result<SignedIn, Attempt> {
    // DPoP when the config asks, or (unless it forbids) when the server's
    // challenge is in the DPoP scheme: the token is then bound to a new key.
    let dpop = super::dpop::wanted(oauth, challenge)
        .then(DpopKey::generate)
        .transpose()
        .map_err(|e| fail(server, "making a DPoP key", e))?
        .map(Arc::new);
    // A 401 means the server takes OAuth, even without metadata (2025-03-26);
    // without one, the sign-in needs metadata to go on.
    let (mut manager, metadata) = discover(
        server,
        url,
        store,
        challenge,
        challenge.is_some(),
        dpop.clone(),
    )
    .await?;
    let issuer = issuer_of(&metadata);
    let held = store
        .load_credentials(url)?
        .map(|c| c.granted_scopes)
        .unwrap_or_default();
    let scopes = scopes_to_ask(&manager, oauth, held, challenge, url).await;
    let client = choose_client(
        server,
        &mut manager,
        &metadata,
        &issuer,
        oauth,
        store,
        &scopes,
    )
    .await?;
    let session = AuthorizationSession::new(manager, client.request)
        .await
        .map_err(|(_, e)| fail(server, "starting the sign-in", e))?;
    let callback = browser_answer(server, &session, &client.listener, browser, prompt).await?;
    exchange_code(server, &session, &callback, client.using_kept, &issuer).await?;
    let stored = store.load_credentials(url)?;
    if let Some(key) = &dpop {
        keep_dpop_key(server, store, url, key, stored.as_ref())?;
    }
    Ok(SignedIn {
        issuer: stored
            .as_ref()
            .and_then(|c| c.issuer.clone())
            .or(Some(issuer)),
        scopes: stored.map(|c| c.granted_scopes).unwrap_or(scopes),
    })
}

/// `server`'s sign-in failed at `step`.
fn fail(server: &str, step: &'static str, error: impl std::fmt::Display) -> Attempt {
    Attempt::Failed(AuthError::protocol(server, step, error))
}

/// The scopes to ask for: the config's, else what the server asks for. A
/// step-up (403 `insufficient_scope`) keeps what was granted before (`held`)
/// and adds the scopes the challenge names, each scope once.
async fn scopes_to_ask(
    manager: &AuthorizationManager,
    oauth: &OAuthSpec,
    held: Vec<String>,
    challenge: Option<&str>,
    url: &Url,
) -> Vec<String> {
    let params = challenge.map(|c| WWWAuthenticateParams::parse(c, url));
    let scopes = if !oauth.scopes.is_empty() {
        oauth.scopes.clone()
    } else {
        manager.select_initial_scopes(&[]).await
    };
    let Some(params) = params.filter(|p| p.is_insufficient_scope()) else {
        return scopes;
    };
    let mut union = held;
    union.extend(scopes);
    union.extend(
        params
            .scope
            .as_deref()
            .unwrap_or_default()
            .split_whitespace()
            .map(str::to_owned),
    );
    let mut seen = std::collections::HashSet::new();
    union.retain(|s| seen.insert(s.clone()));
    union
}

/// Which client toolbridge is for one sign-in, and where the browser comes
/// back to.
struct SignInClient {
    /// The authorization request, as that client.
    request: AuthorizationRequest,
    /// Where the browser comes back to.
    listener: RedirectListener,
    /// The client is a registration kept from before, which the
    /// authorization server may have revoked since.
    using_kept: bool,
}

/// Which client toolbridge is, in the order the module's doc gives, and a
/// listener for the browser on the kept registration's port when there is
/// one (its redirect URI must match). A new registration is kept.
async fn choose_client(
    server: &str,
    manager: &mut AuthorizationManager,
    metadata: &AuthorizationMetadata,
    issuer: &str,
    oauth: &OAuthSpec,
    store: &TokenStore,
    scopes: &[String],
) -> Result<SignInClient, Attempt> {
    let supports_cimd = metadata
        .additional_fields
        .get("client_id_metadata_document_supported")
        .and_then(serde_json::Value::as_bool)
        .unwrap_or(false);
    let kept = match (&oauth.client_id, &oauth.client_metadata_url) {
        (None, Some(_)) if supports_cimd => None,
        (None, _) => store.registration(issuer)?,
        (Some(_), _) => None,
    };
    let listener = RedirectListener::bind(kept.as_ref().and_then(|r| port_of(&r.redirect_uri)))
        .await
        .map_err(|e| fail(server, "listening for the browser on 127.0.0.1", e))?;
    let redirect_uri = listener.redirect_uri().to_owned();
    let request = AuthorizationRequest::new(redirect_uri.clone())
        .with_client_name(CLIENT_NAME)
        .with_scopes(scopes.iter().map(String::as_str));
    let mut using_kept = false;
    let request = if let Some(client_id) = &oauth.client_id {
        as_client(request, client_id, oauth.client_secret.as_deref())
    } else if let (Some(document), true) = (&oauth.client_metadata_url, supports_cimd) {
        request.with_client_metadata_url(document)
    } else {
        let registration = match kept.filter(|r| r.redirect_uri == redirect_uri) {
            Some(registration) => {
                using_kept = true;
                registration
            }
            None => register(server, manager, issuer, &redirect_uri, scopes, store).await?,
        };
        as_client(
            request,
            &registration.client_id,
            registration.client_secret.as_deref(),
        )
    };
    Ok(SignInClient {
        request,
        listener,
        using_kept,
    })
}

/// `request` made by the client `client_id`, with its secret if it has one.
fn as_client(
    request: AuthorizationRequest,
    client_id: &str,
    secret: Option<&str>,
) -> AuthorizationRequest {
    let request = request.with_preregistered_client(client_id);
    match secret {
        Some(secret) => request.with_client_secret(secret),
        None => request,
    }
}

/// Registers toolbridge with `issuer` (dynamic client registration) for
/// `redirect_uri`, and keeps the registration for the next sign-in.
async fn register(
    server: &str,
    manager: &mut AuthorizationManager,
    issuer: &str,
    redirect_uri: &str,
    scopes: &[String],
    store: &TokenStore,
) -> Result<Registration, Attempt> {
    let scope_refs: Vec<&str> = scopes.iter().map(String::as_str).collect();
    let config = manager
        .register_client(CLIENT_NAME, redirect_uri, &scope_refs)
        .await
        .map_err(|e| match e {
            rmcp::transport::auth::AuthError::RegistrationFailed(m)
                if m.contains("not supported") =>
            {
                Attempt::Failed(AuthError::Protocol {
                    server: server.to_owned(),
                    step: "registering toolbridge",
                    message: "its authorization server does not let clients \
                              register themselves; register one there and set \
                              \"oauth\": {\"clientId\": ...} in the config"
                        .to_owned(),
                })
            }
            other => fail(server, "registering toolbridge", other),
        })?;
    let registration = Registration {
        issuer: issuer.to_owned(),
        client_id: config.client_id,
        client_secret: config.client_secret,
        redirect_uri: redirect_uri.to_owned(),
    };
    store.save_registration(&registration)?;
    Ok(registration)
}

/// Opens the sign-in page in the browser (telling `prompt` its URL) and
/// waits for the browser to come back: the answer, when it grants the
/// request and carries the state toolbridge sent.
async fn browser_answer(
    server: &str,
    session: &AuthorizationSession,
    listener: &RedirectListener,
    browser: &Browser,
    prompt: &SignInPrompt,
) -> Result<AuthorizationCallback, Attempt> {
    let auth_url = session.get_authorization_url().to_owned();
    let sent_state = query_value(&auth_url, "state");
    let opened = browser.open(&auth_url);
    prompt(server, &auth_url, opened);

    let callback_url =
        tokio::time::timeout(SIGN_IN_TIMEOUT, listener.accept(sent_state.as_deref()))
            .await
            .map_err(|_| {
                Attempt::Failed(AuthError::Timeout {
                    server: server.to_owned(),
                    after: SIGN_IN_TIMEOUT,
                })
            })?
            .map_err(|e| fail(server, "waiting for the browser", e))?;
    let refused = |reason: String| {
        Attempt::Failed(AuthError::Refused {
            server: server.to_owned(),
            reason,
        })
    };
    if let Some(error) = query_value(&callback_url, "error") {
        let description = query_value(&callback_url, "error_description")
            .map(|d| format!(" ({d})"))
            .unwrap_or_default();
        return Err(refused(format!("{error}{description}")));
    }
    let callback = AuthorizationCallback::from_redirect_url(&callback_url)
        .map_err(|e| fail(server, "reading the browser's answer", e))?;
    if sent_state.as_deref() != Some(callback.csrf_token.as_str()) {
        return Err(refused(
            "the answer's state is not the one toolbridge sent (another sign-in, or a forged \
             redirect); sign in again"
                .to_owned(),
        ));
    }
    Ok(callback)
}

/// Exchanges the browser's code for tokens, which the session stores. A
/// kept registration refused as `invalid_client` has been revoked by
/// `issuer`.
async fn exchange_code(
    server: &str,
    session: &AuthorizationSession,
    callback: &AuthorizationCallback,
    using_kept: bool,
    issuer: &str,
) -> Result<(), Attempt> {
    match session
        .handle_callback_with_issuer(
            &callback.code,
            &callback.csrf_token,
            callback.issuer.as_deref(),
        )
        .await
    {
        Ok(_) => Ok(()),
        Err(e) if using_kept && e.to_string().contains("invalid_client") => {
            Err(Attempt::RegistrationRevoked(issuer.to_owned()))
        }
        Err(e) => Err(fail(server, "exchanging the code for tokens", e)),
    }
}

/// Keeps the DPoP `key` when the tokens `stored` are bound to it; an
/// authorization server may give a bearer token instead.
fn keep_dpop_key(
    server: &str,
    store: &TokenStore,
    url: &Url,
    key: &DpopKey,
    stored: Option<&StoredCredentials>,
) -> Result<(), AuthError> {
    if stored.is_some_and(store::is_dpop_bound) {
        store.save_dpop_key(url, key)?;
    } else {
        tracing::debug!(
            server,
            "the authorization server gave a bearer token, not a DPoP-bound one"
        );
    }
    Ok(())
}

/// The `WWW-Authenticate` challenge `url` answers an unauthenticated MCP
/// request with, if it answers 401 with one: it may name the server's
/// protected resource metadata, which discovery then starts from.
pub async fn challenge_of(url: &Url) -> Option<String> {
    let initialize = serde_json::json!({
        "jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": CLIENT_NAME, "version": env!("CARGO_PKG_VERSION")}
        }
    });
    let response = reqwest::Client::new()
        .post(url.clone())
        .header(http::header::ACCEPT, "application/json, text/event-stream")
        .header(http::header::CONTENT_TYPE, "application/json")
        .body(initialize.to_string())
        .timeout(Duration::from_secs(30))
        .send()
        .await
        .ok()?;
    if response.status() != http::StatusCode::UNAUTHORIZED {
        return None;
    }
    response
        .headers()
        .get(http::header::WWW_AUTHENTICATE)?
        .to_str()
        .ok()
        .map(str::to_owned)
}

fn port_of(uri: &str) -> Option<u16> {
    Url::parse(uri).ok()?.port()
}

fn query_value(url: &str, key: &str) -> Option<String> {
    Url::parse(url)
        .ok()?
        .query_pairs()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.into_owned())
}

/// Signs out of `server` at `url`: its tokens are revoked when the
/// authorization server offers revocation (RFC 7009), then forgotten
/// either way. The client registration is kept for the next sign-in.
pub async fn sign_out(server: &str, url: &Url, store: &TokenStore) -> Result<SignOut, AuthError> {
    let Some(credentials) = store.load_credentials(url)? else {
        return Ok(SignOut {
            was_signed_in: false,
            revoked: false,
        });
    };
    let revoked = match revoke(server, url, store, &credentials).await {
        Ok(revoked) => revoked,
        Err(e) => {
            tracing::warn!(server, "could not revoke the tokens: {e}");
            false
        }
    };
    store.forget_tokens(url)?;
    Ok(SignOut {
        was_signed_in: true,
        revoked,
    })
}

/// Asks the authorization server to revoke the refresh token (which ends
/// the access tokens made from it), else the access token. False when it
/// offers no revocation endpoint.
async fn revoke(
    server: &str,
    url: &Url,
    store: &TokenStore,
    credentials: &StoredCredentials,
) -> Result<bool, AuthError> {
    let (_, metadata) = discover(server, url, store, None, true, None).await?;
    let Some(endpoint) = metadata
        .additional_fields
        .get("revocation_endpoint")
        .and_then(serde_json::Value::as_str)
    else {
        return Ok(false);
    };
    let (token, hint) = match store::refresh_token(credentials) {
        Some(token) => (token, "refresh_token"),
        None => match store::access_token(credentials) {
            Some(token) => (token, "access_token"),
            None => return Ok(false),
        },
    };
    let secret = store
        .registration(&issuer_of(&metadata))?
        .filter(|r| r.client_id == credentials.client_id)
        .and_then(|r| r.client_secret);
    let mut form = vec![
        ("token", token.as_str()),
        ("token_type_hint", hint),
        ("client_id", credentials.client_id.as_str()),
    ];
    if let Some(secret) = secret.as_deref() {
        form.push(("client_secret", secret));
    }
    let body = url::form_urlencoded::Serializer::new(String::new())
        .extend_pairs(form)
        .finish();
    let response = reqwest::Client::new()
        .post(endpoint)
        .header(
            http::header::CONTENT_TYPE,
            "application/x-www-form-urlencoded",
        )
        .body(body)
        .send()
        .await
        .map_err(|e| {
            AuthError::protocol(
                server,
                "revoking its tokens",
                crate::transport::remote::describe_reqwest_error(&e),
            )
        })?;
    if !response.status().is_success() {
        return Err(AuthError::protocol(
            server,
            "revoking its tokens",
            format!("HTTP {}", response.status()),
        ));
    }
    Ok(true)
}
