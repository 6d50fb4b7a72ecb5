//! Tokens without a user ([`obtain`]): the grants of the MCP authorization
//! extensions, for servers whose `oauth.grant` is not the browser sign-in.
//!
//! - `client_credentials` (the OAuth client credentials extension, SEP-1046):
//!   rmcp's `ClientCredentialsConfig` does the token request, with the
//!   client secret (HTTP Basic or in the body) or a `private_key_jwt`
//!   assertion (RFC 7523 section 2.2) it signs itself. rmcp picks Basic only
//!   when the authorization server offers nothing else; a `clientAuth` the
//!   config names is made rmcp's choice by narrowing the metadata it is
//!   given to that one method.
//! - `id_jag` (enterprise-managed authorization, SEP-990): rmcp's
//!   `enterprise` module exchanges the user's ID token at the identity
//!   provider for an ID-JAG (RFC 8693) and redeems it at the MCP server's
//!   authorization server (RFC 7523 JWT bearer grant), checking the ID-JAG's
//!   bindings on the way.
//! - `jwt_bearer` (workload identity federation, SEP-1933): the workload's
//!   JWT is the grant (RFC 7523 section 2.1). rmcp has no such request (its
//!   JWT bearer grant is private to the ID-JAG exchange), so `jwt_bearer`
//!   writes the one form POST. A refusal is the error, never retried and
//!   never followed by another grant: the platform's token is what it is.
//!
//! Each stores the token where the browser sign-in would, so the rest of
//! toolbridge (the session's bearer, `auth status`, `auth logout`) is the
//! same; without a refresh token, the session asks [`obtain`] again when
//! the token is near its end.

use std::time::{SystemTime, UNIX_EPOCH};

use oauth2::ClientSecret;

use rmcp::transport::auth::{
    AuthorizationMetadata, ClientCredentialsConfig, JwtSigningAlgorithm, OAuthTokenResponse,
    StoredCredentials,
    enterprise::{
        EmaAuthorizationServer, EmaClientAuthentication, EmaError, EmaExchangeRequest,
        EmaExchangeStage,
    },
};
use url::Url;

use super::{
    AuthError, SignedIn, TokenStore,
    discovery::{discover, issuer_of},
    dpop::{DpopKey, DpopTokenClient},
    store::is_dpop_bound as store_is_dpop_bound,
};
use crate::config::{ClientAuth, IdpSpec, OAuthGrant, OAuthSpec, SecretSource};

/// `grant_type` of RFC 7523's JWT bearer grant.
const JWT_BEARER: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";

/// Gets `server`'s tokens with its config's unattended grant and stores
/// them. `challenge` is the `WWW-Authenticate` of the refusal that asked
/// for it, if any (it may name the resource metadata).
pub async fn obtain(
    server: &str,
    url: &Url,
    oauth: &OAuthSpec,
    store: &TokenStore,
    challenge: Option<&str>,
) -> Result<SignedIn, AuthError> {
    // DPoP for the grants whose token requests rmcp sends (through the
    // manager's client, or the enterprise exchange's).
    let dpop = (oauth.grant != OAuthGrant::JwtBearer && super::dpop::wanted(oauth, challenge))
        .then(DpopKey::generate)
        .transpose()
        .map_err(|e| AuthError::protocol(server, "making a DPoP key", e))?
        .map(std::sync::Arc::new);
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
    let fail = |step: &'static str, e: String| AuthError::protocol(server, step, e);
    let client_id = oauth.client_id.clone().unwrap_or_default();
    let resource = url.as_str().to_owned();
    let step = "getting a token";
    let token: OAuthTokenResponse = match oauth.grant {
        OAuthGrant::AuthorizationCode => {
            return Err(fail(
                step,
                "the browser sign-in is not an unattended grant".into(),
            ));
        }
        OAuthGrant::ClientCredentials => {
            let config = client_credentials(server, oauth, &resource)?;
            if let Some(method) = oauth.client_auth {
                manager.set_metadata(with_only_method(&metadata, method));
            }
            manager
                .validate_client_credentials_metadata(&config)
                .map_err(|e| fail(step, e.to_string()))?;
            manager
                .configure_client_credentials(&config)
                .map_err(|e| fail(step, e.to_string()))?;
            // rmcp stores the tokens through the manager's credential store.
            // Its `private_key_jwt` future holds a form encoder across an
            // await and so is not `Send`: it runs on a blocking thread of
            // its own, where the runtime drives it without moving it.
            let handle = tokio::runtime::Handle::current();
            tokio::task::spawn_blocking(move || {
                handle.block_on(async move { manager.exchange_client_credentials(&config).await })
            })
            .await
            .map_err(|e| fail(step, e.to_string()))?
            .map_err(|e| fail(step, e.to_string()))?
        }
        OAuthGrant::JwtBearer => {
            let assertion = read_secret(server, "assertion", oauth.assertion.as_ref())?;
            let token = jwt_bearer(&metadata, oauth, &resource, &assertion)
                .await
                .map_err(|e| fail(step, e))?;
            save(store, url, &client_id, &issuer, &token)?;
            token
        }
        OAuthGrant::IdJag => {
            let idp = oauth.idp.as_ref().ok_or_else(|| {
                fail(step, "\"grant\": \"id_jag\" needs \"oauth\".\"idp\"".into())
            })?;
            let token = id_jag(server, &metadata, oauth, idp, &resource, dpop.clone()).await?;
            save(store, url, &client_id, &issuer, &token)?;
            token
        }
    };
    if let Some(key) = &dpop
        && store
            .load_credentials(url)?
            .as_ref()
            .is_some_and(store_is_dpop_bound)
    {
        store.save_dpop_key(url, key)?;
    }
    let scopes = serde_json::to_value(&token)
        .ok()
        .and_then(|v| v.get("scope")?.as_str().map(str::to_owned))
        .map(|s| s.split_whitespace().map(str::to_owned).collect())
        .unwrap_or_else(|| oauth.scopes.clone());
    tracing::debug!(server, issuer, "got a token with an unattended grant");
    Ok(SignedIn {
        issuer: Some(issuer),
        scopes,
    })
}

/// rmcp's client credentials config for `oauth`: `private_key_jwt` when the
/// config says so or gives a key and no secret; else the client secret.
fn client_credentials(
    server: &str,
    oauth: &OAuthSpec,
    resource: &str,
) -> Result<ClientCredentialsConfig, AuthError> {
    let client_id = oauth.client_id.clone().unwrap_or_default();
    let use_key = match oauth.client_auth {
        Some(method) => method == ClientAuth::PrivateKeyJwt,
        None => oauth.client_secret.is_none(),
    };
    if use_key {
        let key = read_secret(server, "privateKey", oauth.private_key.as_ref())?;
        return Ok(ClientCredentialsConfig::PrivateKeyJwt {
            client_id,
            signing_key: key.into_bytes(),
            signing_algorithm: signing_algorithm(server, oauth.signing_algorithm.as_deref())?,
            token_endpoint_audience: None,
            scopes: oauth.scopes.clone(),
            resource: Some(resource.to_owned()),
        });
    }
    Ok(ClientCredentialsConfig::ClientSecret {
        client_id,
        client_secret: oauth.client_secret.clone().unwrap_or_default(),
        scopes: oauth.scopes.clone(),
        resource: Some(resource.to_owned()),
    })
}

/// The JWS algorithm named in `signingAlgorithm`, default ES256.
fn signing_algorithm(server: &str, name: Option<&str>) -> Result<JwtSigningAlgorithm, AuthError> {
    Ok(match name.unwrap_or("ES256") {
        "ES256" => JwtSigningAlgorithm::ES256,
        "ES384" => JwtSigningAlgorithm::ES384,
        "RS256" => JwtSigningAlgorithm::RS256,
        "RS384" => JwtSigningAlgorithm::RS384,
        "RS512" => JwtSigningAlgorithm::RS512,
        other => {
            return Err(AuthError::protocol(
                server,
                "signing the client assertion",
                format!(
                    "\"oauth\".\"signingAlgorithm\" {other:?} is not one toolbridge signs with: \
                     use ES256, ES384, RS256, RS384 or RS512"
                ),
            ));
        }
    })
}

/// `metadata` offering only `method` at the token endpoint: rmcp then uses
/// that one (it otherwise prefers `client_secret_post`).
fn with_only_method(metadata: &AuthorizationMetadata, method: ClientAuth) -> AuthorizationMetadata {
    let mut metadata = metadata.clone();
    let offered = metadata
        .additional_fields
        .get("token_endpoint_auth_methods_supported")
        .and_then(serde_json::Value::as_array)
        .map(|methods| methods.iter().any(|m| m.as_str() == Some(method.as_str())));
    // An authorization server that lists its methods without this one is
    // left to refuse it: rmcp's check then names what it offers.
    if offered != Some(false) {
        metadata.additional_fields.insert(
            "token_endpoint_auth_methods_supported".to_owned(),
            serde_json::json!([method.as_str()]),
        );
    }
    metadata
}

/// The secret of `field`, read now (a file is read for every request).
fn read_secret(
    server: &str,
    field: &str,
    source: Option<&SecretSource>,
) -> Result<String, AuthError> {
    let step = "reading a credential";
    let source = source.ok_or_else(|| {
        AuthError::protocol(server, step, format!("\"oauth\".\"{field}\" is not set"))
    })?;
    let value = source.read().map_err(|e| match source {
        SecretSource::File(path) => AuthError::io(path, e),
        SecretSource::Value(_) => AuthError::protocol(server, step, e.to_string()),
    })?;
    if value.is_empty() {
        return Err(AuthError::protocol(
            server,
            step,
            format!("\"oauth\".\"{field}\" is empty"),
        ));
    }
    Ok(value)
}

/// The body of an RFC 7523 JWT bearer grant request: the grant, the
/// scopes, the resource (RFC 8707, as every MCP token request has), and the
/// client's ID when it authenticates by none or by a secret in the body.
fn jwt_bearer_form(oauth: &OAuthSpec, resource: &str, assertion: &str) -> Vec<(String, String)> {
    let mut form = vec![
        ("grant_type".to_owned(), JWT_BEARER.to_owned()),
        ("assertion".to_owned(), assertion.to_owned()),
    ];
    if !oauth.scopes.is_empty() {
        form.push(("scope".to_owned(), oauth.scopes.join(" ")));
    }
    form.push(("resource".to_owned(), resource.to_owned()));
    let basic = basic_auth(oauth).is_some();
    if let (Some(client_id), false) = (&oauth.client_id, basic) {
        form.push(("client_id".to_owned(), client_id.clone()));
        if let Some(secret) = &oauth.client_secret {
            form.push(("client_secret".to_owned(), secret.clone()));
        }
    }
    form
}

/// `pairs` form-encoded (a function of its own: the encoder cannot be held
/// across an `await`).
fn form_body(pairs: &[(String, String)]) -> String {
    url::form_urlencoded::Serializer::new(String::new())
        .extend_pairs(pairs)
        .finish()
}

/// `(id, secret)` when the client authenticates with HTTP Basic: it has a
/// secret and the config does not ask for the body.
fn basic_auth(oauth: &OAuthSpec) -> Option<(&str, &str)> {
    match (oauth.client_auth, &oauth.client_id, &oauth.client_secret) {
        (Some(ClientAuth::ClientSecretPost), ..) => None,
        (_, Some(id), Some(secret)) => Some((id, secret)),
        _ => None,
    }
}

/// The JWT bearer grant (RFC 7523 section 2.1) with the workload's
/// `assertion`, at `metadata`'s token endpoint. Errors carry the
/// authorization server's `error` and `error_description`.
async fn jwt_bearer(
    metadata: &AuthorizationMetadata,
    oauth: &OAuthSpec,
    resource: &str,
    assertion: &str,
) -> Result<OAuthTokenResponse, String> {
    let body = form_body(&jwt_bearer_form(oauth, resource, assertion));
    let mut request = reqwest::Client::new()
        .post(&metadata.token_endpoint)
        .header(
            http::header::CONTENT_TYPE,
            "application/x-www-form-urlencoded",
        )
        .header(http::header::ACCEPT, "application/json")
        .timeout(std::time::Duration::from_secs(30))
        .body(body);
    if let Some((id, secret)) = basic_auth(oauth) {
        let encode =
            |s: &str| url::form_urlencoded::byte_serialize(s.as_bytes()).collect::<String>();
        request = request.basic_auth(encode(id), Some(encode(secret)));
    }
    let response = request
        .send()
        .await
        .map_err(|e| crate::transport::remote::describe_reqwest_error(&e))?;
    let status = response.status();
    let bytes = response
        .bytes()
        .await
        .map_err(|e| crate::transport::remote::describe_reqwest_error(&e))?;
    if !status.is_success() {
        return Err(oauth_error(status, &bytes));
    }
    serde_json::from_slice(&bytes).map_err(|e| format!("the token response is not one: {e}"))
}

/// An OAuth error response as text: `error: description (HTTP n)`.
fn oauth_error(status: http::StatusCode, body: &[u8]) -> String {
    let value: Option<serde_json::Value> = serde_json::from_slice(body).ok();
    let field = |name: &str| {
        value
            .as_ref()
            .and_then(|v| v.get(name)?.as_str().map(str::to_owned))
    };
    match (field("error"), field("error_description")) {
        (Some(error), Some(description)) => format!("{error}: {description} (HTTP {status})"),
        (Some(error), None) => format!("{error} (HTTP {status})"),
        _ => format!("the authorization server answered HTTP {status}"),
    }
}

/// Enterprise-managed authorization: the ID token for an ID-JAG at the
/// identity provider, the ID-JAG for an access token at the MCP server's
/// authorization server (rmcp's `enterprise` exchange).
async fn id_jag(
    server: &str,
    metadata: &AuthorizationMetadata,
    oauth: &OAuthSpec,
    idp: &IdpSpec,
    resource: &str,
    dpop: Option<std::sync::Arc<DpopKey>>,
) -> Result<OAuthTokenResponse, AuthError> {
    let step = "the enterprise token exchange";
    let fail = |e: String| AuthError::protocol(server, step, e);
    let id_token = read_secret(server, "idp\".\"idToken", Some(&idp.id_token))?;
    let idp_token_endpoint = match &idp.token_endpoint {
        Some(endpoint) => endpoint.clone(),
        None => openid_token_endpoint(&idp.issuer).await.map_err(fail)?,
    };
    let idp_auth = match &idp.client_secret {
        Some(secret) => {
            EmaClientAuthentication::ClientSecretPost(ClientSecret::new(secret.clone()))
        }
        None => EmaClientAuthentication::None,
    };
    let idp_server = EmaAuthorizationServer::new(&idp.issuer, idp_token_endpoint, &idp.client_id)
        .with_client_authentication(idp_auth);
    let as_auth = match (oauth.client_auth, &oauth.client_secret) {
        (Some(ClientAuth::PrivateKeyJwt), _) => {
            return Err(fail(
                "\"clientAuth\": \"private_key_jwt\" is not supported with \"grant\": \"id_jag\" \
                 yet: use the client secret"
                    .into(),
            ));
        }
        (Some(ClientAuth::ClientSecretPost), Some(secret)) => {
            EmaClientAuthentication::ClientSecretPost(ClientSecret::new(secret.clone()))
        }
        (_, Some(secret)) => {
            EmaClientAuthentication::ClientSecretBasic(ClientSecret::new(secret.clone()))
        }
        (_, None) => EmaClientAuthentication::None,
    };
    let resource_as = EmaAuthorizationServer::new(
        issuer_of(metadata),
        &metadata.token_endpoint,
        oauth.client_id.clone().unwrap_or_default(),
    )
    .with_client_authentication(as_auth);
    let http =
        rmcp::transport::auth::default_oauth_http_client().map_err(|e| fail(e.to_string()))?;
    // A DPoP-bound token: the proof goes to the server's authorization
    // server, not to the identity provider (the ID-JAG is no access token).
    let bound = dpop.map(DpopTokenClient::new).transpose().map_err(fail)?;
    let resource_http: &dyn rmcp::transport::auth::OAuthHttpClient = match &bound {
        Some(client) => client,
        None => &http,
    };
    let token = EmaExchangeRequest::new_with_id_token(idp_server, resource_as, resource, &id_token)
        .with_scopes(oauth.scopes.iter().cloned())
        .exchange(&http, resource_http)
        .await
        .map_err(|e| fail(describe_ema_error(&e)))?;
    let mut response = serde_json::json!({
        "access_token": token.access_token.secret(),
        "token_type": "bearer",
    });
    if let Some(expires_in) = token.expires_in {
        response["expires_in"] = expires_in.as_secs().into();
    }
    if !token.scopes.is_empty() {
        let mut scopes: Vec<&str> = token.scopes.iter().map(String::as_str).collect();
        scopes.sort_unstable();
        response["scope"] = scopes.join(" ").into();
    }
    serde_json::from_value(response).map_err(|e| fail(e.to_string()))
}

/// rmcp's exchange error, naming which server refused.
fn describe_ema_error(error: &EmaError) -> String {
    let at = |stage: &EmaExchangeStage| match stage {
        EmaExchangeStage::IdentityProvider => "the identity provider",
        EmaExchangeStage::ResourceAuthorizationServer => "the server's authorization server",
        _ => "an authorization server",
    };
    match error {
        EmaError::InvalidGrant(stage) => format!(
            "{} refused the grant (invalid_grant): the ID token may have expired; sign in to \
             the identity provider again",
            at(stage)
        ),
        EmaError::OAuthRejected {
            stage,
            status,
            code,
        } => format!("{} answered HTTP {status}: {code}", at(stage)),
        other => other.to_string(),
    }
}

/// The token endpoint in `issuer`'s OpenID configuration.
async fn openid_token_endpoint(issuer: &str) -> Result<String, String> {
    let at = format!(
        "{}/.well-known/openid-configuration",
        issuer.trim_end_matches('/')
    );
    let response = reqwest::Client::new()
        .get(&at)
        .timeout(std::time::Duration::from_secs(30))
        .send()
        .await
        .map_err(|e| crate::transport::remote::describe_reqwest_error(&e))?;
    if !response.status().is_success() {
        return Err(format!(
            "the identity provider's OpenID configuration ({at}) answered HTTP {}; set \
             \"oauth\".\"idp\".\"tokenEndpoint\"",
            response.status()
        ));
    }
    let value: serde_json::Value = response
        .json()
        .await
        .map_err(|e| format!("the identity provider's OpenID configuration: {e}"))?;
    value
        .get("token_endpoint")
        .and_then(serde_json::Value::as_str)
        .map(str::to_owned)
        .ok_or_else(|| {
            format!("{at} names no token_endpoint; set \"oauth\".\"idp\".\"tokenEndpoint\"")
        })
}

/// Stores `token` for `url` as rmcp's credentials.
fn save(
    store: &TokenStore,
    url: &Url,
    client_id: &str,
    issuer: &str,
    token: &OAuthTokenResponse,
) -> Result<(), AuthError> {
    let scopes = serde_json::to_value(token)
        .ok()
        .and_then(|v| v.get("scope")?.as_str().map(str::to_owned))
        .map(|s| s.split_whitespace().map(str::to_owned).collect())
        .unwrap_or_default();
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let credentials =
        StoredCredentials::new(client_id.to_owned(), Some(token.clone()), scopes, Some(now))
            .with_issuer(Some(issuer.to_owned()));
    store.save_credentials(url, credentials)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(json: serde_json::Value) -> OAuthSpec {
        let config = serde_json::json!({"mcpServers": {"s": {"url": "https://mcp.example/mcp", "oauth": json}}});
        let config =
            crate::config::Config::parse(std::path::Path::new("c.json"), config.to_string())
                .unwrap();
        match config.resolve("s").unwrap().transport {
            crate::config::TransportSpec::Http(remote) => remote.oauth,
            other => panic!("{other:?}"),
        }
    }

    fn metadata(methods: serde_json::Value) -> AuthorizationMetadata {
        serde_json::from_value(serde_json::json!({
            "issuer": "https://as.example",
            "authorization_endpoint": "https://as.example/authorize",
            "token_endpoint": "https://as.example/token",
            "token_endpoint_auth_methods_supported": methods,
        }))
        .unwrap()
    }

    #[test]
    fn the_jwt_bearer_request_carries_the_assertion_resource_and_public_client_id() {
        let oauth = spec(serde_json::json!({
            "grant": "jwt_bearer", "clientId": "workload", "assertion": "eyJ.a.b",
            "scopes": ["read", "write"]
        }));
        let form = jwt_bearer_form(&oauth, "https://mcp.example/mcp", "eyJ.a.b");
        let get = |k: &str| {
            form.iter()
                .find(|(key, _)| key == k)
                .map(|(_, v)| v.as_str())
        };
        assert_eq!(get("grant_type"), Some(JWT_BEARER));
        assert_eq!(get("assertion"), Some("eyJ.a.b"));
        assert_eq!(get("scope"), Some("read write"));
        assert_eq!(get("resource"), Some("https://mcp.example/mcp"));
        assert_eq!(get("client_id"), Some("workload"));
        assert_eq!(get("client_secret"), None);
        assert_eq!(basic_auth(&oauth), None);
    }

    #[test]
    fn a_confidential_workload_authenticates_with_basic_unless_told_post() {
        let basic = spec(serde_json::json!({
            "grant": "jwt_bearer", "clientId": "w", "clientSecret": "s", "assertion": "j"
        }));
        assert_eq!(basic_auth(&basic), Some(("w", "s")));
        let form = jwt_bearer_form(&basic, "https://r", "j");
        assert!(
            form.iter()
                .all(|(k, _)| k != "client_id" && k != "client_secret")
        );
        let post = spec(serde_json::json!({
            "grant": "jwt_bearer", "clientId": "w", "clientSecret": "s", "assertion": "j",
            "clientAuth": "client_secret_post"
        }));
        assert_eq!(basic_auth(&post), None);
        let form = jwt_bearer_form(&post, "https://r", "j");
        assert!(form.contains(&("client_secret".to_owned(), "s".to_owned())));
    }

    #[test]
    fn a_named_client_auth_is_the_only_method_rmcp_is_offered() {
        let both = metadata(serde_json::json!([
            "client_secret_post",
            "client_secret_basic"
        ]));
        let narrowed = with_only_method(&both, ClientAuth::ClientSecretBasic);
        assert_eq!(
            narrowed.additional_fields["token_endpoint_auth_methods_supported"],
            serde_json::json!(["client_secret_basic"])
        );
        // One the server does not offer stays unoffered: rmcp's check says so.
        let post_only = metadata(serde_json::json!(["client_secret_post"]));
        let kept = with_only_method(&post_only, ClientAuth::ClientSecretBasic);
        assert_eq!(
            kept.additional_fields["token_endpoint_auth_methods_supported"],
            serde_json::json!(["client_secret_post"])
        );
    }

    #[test]
    fn client_credentials_use_the_key_when_told_or_when_there_is_no_secret() {
        let pem = "-----BEGIN PRIVATE KEY-----\nMIGH\n-----END PRIVATE KEY-----";
        let keyed = spec(serde_json::json!({
            "grant": "client_credentials", "clientId": "c", "privateKey": pem
        }));
        let config = client_credentials("s", &keyed, "https://r").unwrap();
        assert!(
            matches!(&config, ClientCredentialsConfig::PrivateKeyJwt { client_id, signing_key, .. }
                if client_id == "c" && signing_key == pem.as_bytes()),
            "{config:?}"
        );
        let secret = spec(serde_json::json!({
            "grant": "client_credentials", "clientId": "c", "clientSecret": "x"
        }));
        assert!(matches!(
            client_credentials("s", &secret, "https://r").unwrap(),
            ClientCredentialsConfig::ClientSecret { .. }
        ));
        let bad = spec(serde_json::json!({
            "grant": "client_credentials", "clientId": "c", "privateKey": pem,
            "signingAlgorithm": "HS256"
        }));
        let error = client_credentials("s", &bad, "https://r")
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("HS256") && error.contains("ES256"),
            "{error}"
        );
    }

    #[test]
    fn an_oauth_error_says_what_the_server_said() {
        let text = oauth_error(
            http::StatusCode::BAD_REQUEST,
            br#"{"error":"invalid_grant","error_description":"JWT assertion is expired"}"#,
        );
        assert_eq!(
            text,
            "invalid_grant: JWT assertion is expired (HTTP 400 Bad Request)"
        );
        assert_eq!(
            oauth_error(http::StatusCode::BAD_GATEWAY, b"<html>"),
            "the authorization server answered HTTP 502 Bad Gateway"
        );
    }

    #[test]
    fn an_assertion_file_is_read_anew_each_time() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("token");
        std::fs::write(&path, "first\n").unwrap();
        let source = SecretSource::File(path.clone());
        assert_eq!(
            read_secret("s", "assertionFile", Some(&source)).unwrap(),
            "first"
        );
        std::fs::write(&path, "second").unwrap();
        assert_eq!(
            read_secret("s", "assertionFile", Some(&source)).unwrap(),
            "second"
        );
        std::fs::write(&path, "  \n").unwrap();
        let error = read_secret("s", "assertionFile", Some(&source))
            .unwrap_err()
            .to_string();
        assert!(error.contains("is empty"), "{error}");
    }
}
