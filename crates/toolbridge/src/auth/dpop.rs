//! DPoP (RFC 9449): proof-of-possession for access tokens. A [`DpopKey`]
//! is an ES256 key pair made for one server's sign-in and kept with its
//! tokens (a DPoP-bound token is worthless without the key it is bound
//! to); [`DpopKey::proof`] is the `DPoP` header of one HTTP request: a JWT
//! of type `dpop+jwt` carrying the public key, signed with the private one,
//! with the request's method and URL, a fresh `jti`, the time, the access
//! token's hash (`ath`) and the server's nonce when it gave one.
//!
//! Written here because rmcp has no DPoP. The crypto is aws-lc-rs (already
//! toolbridge's TLS provider through rustls, and the signer of the
//! `jsonwebtoken` rmcp uses): it makes the key pair and hands out the public
//! point the JWK needs, which `jsonwebtoken` does not; the JWS around it is
//! base64url of two JSON objects.

use crate::lock::LockUnpoisoned as _;
use aws_lc_rs::{
    digest,
    rand::SystemRandom,
    signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair, KeyPair},
};
use base64::{Engine, engine::general_purpose::URL_SAFE_NO_PAD};
use serde_json::{Value, json};

use crate::config::OAuthSpec;

/// An ES256 key pair for DPoP proofs.
pub struct DpopKey {
    /// The PKCS#8 form, as it is stored.
    pkcs8: Vec<u8>,
    /// The same, ready to sign.
    pair: EcdsaKeyPair,
}

impl std::fmt::Debug for DpopKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("DpopKey { .. }")
    }
}

impl DpopKey {
    /// A new key pair.
    pub fn generate() -> Result<Self, String> {
        let document =
            EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &SystemRandom::new())
                .map_err(|_| "could not make a DPoP key".to_owned())?;
        Self::from_pkcs8(document.as_ref())
    }

    /// The key pair stored as `pkcs8`.
    pub fn from_pkcs8(pkcs8: &[u8]) -> Result<Self, String> {
        let pair = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, pkcs8)
            .map_err(|_| "the stored DPoP key is not a P-256 key".to_owned())?;
        Ok(DpopKey {
            pkcs8: pkcs8.to_vec(),
            pair,
        })
    }

    /// The PKCS#8 form, to store.
    pub fn pkcs8(&self) -> &[u8] {
        &self.pkcs8
    }

    /// The public key as a JWK (RFC 7517): no private part.
    pub fn jwk(&self) -> Value {
        // An uncompressed P-256 point: 0x04, then x and y, 32 bytes each.
        let point = self.pair.public_key().as_ref();
        json!({
            "kty": "EC",
            "crv": "P-256",
            "x": URL_SAFE_NO_PAD.encode(&point[1..33]),
            "y": URL_SAFE_NO_PAD.encode(&point[33..65]),
        })
    }

    /// The `DPoP` header for a `method` request to `url`, presenting
    /// `access_token` (none at the token endpoint), with the server's
    /// `nonce` when it asked for one.
    pub fn proof(
        &self,
        method: &str,
        url: &str,
        access_token: Option<&str>,
        nonce: Option<&str>,
    ) -> Result<String, String> {
        let header = json!({"typ": "dpop+jwt", "alg": "ES256", "jwk": self.jwk()});
        let mut jti = [0u8; 16];
        aws_lc_rs::rand::fill(&mut jti).map_err(|_| "no randomness for a DPoP proof".to_owned())?;
        let iat = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let mut claims = json!({
            "jti": URL_SAFE_NO_PAD.encode(jti),
            "htm": method,
            "htu": htu(url),
            "iat": iat,
        });
        if let Some(token) = access_token {
            let hash = digest::digest(&digest::SHA256, token.as_bytes());
            claims["ath"] = URL_SAFE_NO_PAD.encode(hash.as_ref()).into();
        }
        if let Some(nonce) = nonce {
            claims["nonce"] = nonce.into();
        }
        let signing_input = format!(
            "{}.{}",
            URL_SAFE_NO_PAD.encode(header.to_string()),
            URL_SAFE_NO_PAD.encode(claims.to_string())
        );
        let signature = self
            .pair
            .sign(&SystemRandom::new(), signing_input.as_bytes())
            .map_err(|_| "could not sign a DPoP proof".to_owned())?;
        Ok(format!(
            "{signing_input}.{}",
            URL_SAFE_NO_PAD.encode(signature.as_ref())
        ))
    }
}

/// rmcp's OAuth HTTP client for a DPoP sign-in: every token request
/// (a form POST with a `grant_type`) carries a proof of [`DpopKey`], and an
/// authorization server that answers `use_dpop_nonce` (RFC 9449 section 8)
/// gets the request once more with the nonce it sent, which later token
/// requests carry too. Other requests (metadata, registration) go as they
/// are. rmcp cannot add a header to its token requests, nor make a second
/// request of the same kind for the retry, so this sends them itself.
pub(crate) struct DpopTokenClient {
    key: std::sync::Arc<DpopKey>,
    /// Follows redirects (metadata discovery).
    follow: reqwest::Client,
    /// Does not (token requests: a redirect must not carry the grant on).
    stop: reqwest::Client,
    /// The authorization server's latest nonce.
    nonce: std::sync::Mutex<Option<String>>,
}

/// The most of an authorization server's answer read.
const MAX_OAUTH_BODY: usize = 1024 * 1024;

impl DpopTokenClient {
    /// A client proving possession of `key`.
    pub(crate) fn new(key: std::sync::Arc<DpopKey>) -> Result<Self, String> {
        let build = |redirect| {
            reqwest::Client::builder()
                .timeout(std::time::Duration::from_secs(30))
                .redirect(redirect)
                .build()
                .map_err(|e| e.to_string())
        };
        Ok(DpopTokenClient {
            key,
            follow: build(reqwest::redirect::Policy::limited(5))?,
            stop: build(reqwest::redirect::Policy::none())?,
            nonce: std::sync::Mutex::new(None),
        })
    }

    fn nonce(&self) -> Option<String> {
        self.nonce.lock_unpoisoned().clone()
    }

    fn keep_nonce(&self, headers: &http::HeaderMap) -> bool {
        let Some(nonce) = headers.get("dpop-nonce").and_then(|v| v.to_str().ok()) else {
            return false;
        };
        *self.nonce.lock_unpoisoned() = Some(nonce.to_owned());
        true
    }

    async fn send(
        &self,
        parts: &http::request::Parts,
        body: &[u8],
        stop: bool,
        proof: bool,
    ) -> Result<http::Response<Vec<u8>>, rmcp::transport::auth::OAuthHttpClientError> {
        let client = if stop { &self.stop } else { &self.follow };
        let url = parts.uri.to_string();
        let mut request = client
            .request(parts.method.clone(), &url)
            .headers(parts.headers.clone())
            .body(body.to_vec());
        if proof {
            let nonce = self.nonce();
            let proof = self
                .key
                .proof(parts.method.as_str(), &url, None, nonce.as_deref())?;
            request = request.header("DPoP", proof);
        }
        let response = request.send().await?;
        let mut out = http::Response::builder().status(response.status());
        if let Some(headers) = out.headers_mut() {
            headers.extend(response.headers().clone());
        }
        if response.content_length().unwrap_or(0) > MAX_OAUTH_BODY as u64 {
            return Err("the authorization server's answer is too large".into());
        }
        let bytes = response.bytes().await?;
        if bytes.len() > MAX_OAUTH_BODY {
            return Err("the authorization server's answer is too large".into());
        }
        Ok(out.body(bytes.to_vec())?)
    }
}

impl rmcp::transport::auth::OAuthHttpClient for DpopTokenClient {
    fn execute(
        &self,
        request: rmcp::transport::auth::OAuthHttpRequest,
    ) -> rmcp::transport::auth::OAuthHttpClientFuture<'_> {
        Box::pin(async move {
            let rmcp::transport::auth::OAuthHttpRequest {
                request,
                redirect_policy,
                ..
            } = request;
            let (parts, body) = request.into_parts();
            let stop = !matches!(
                redirect_policy,
                rmcp::transport::auth::OAuthHttpRedirectPolicy::Follow
            );
            let token_request = parts.method == http::Method::POST
                && url::form_urlencoded::parse(&body).any(|(k, _)| k == "grant_type");
            let response = self.send(&parts, &body, stop, token_request).await?;
            let fresh_nonce = self.keep_nonce(response.headers());
            if token_request
                && fresh_nonce
                && response.status() == http::StatusCode::BAD_REQUEST
                && asks_for_nonce(&String::from_utf8_lossy(response.body()))
            {
                tracing::debug!("the authorization server asked for a DPoP nonce; sending it");
                let again = self.send(&parts, &body, stop, true).await?;
                self.keep_nonce(again.headers());
                return Ok(again);
            }
            Ok(response)
        })
    }
}

/// The `htu` of a request to `url`: the URL without its query and fragment
/// (RFC 9449 section 4.2).
pub fn htu(url: &str) -> String {
    let end = url.find(['?', '#']).unwrap_or(url.len());
    url[..end].to_owned()
}

/// True when a `WWW-Authenticate` value is a `DPoP` challenge.
pub fn is_dpop_challenge(challenge: &str) -> bool {
    let scheme = challenge.trim_start();
    scheme
        .get(..4)
        .is_some_and(|s| s.eq_ignore_ascii_case("dpop"))
        && scheme[4..].starts_with([' ', ',']) | scheme[4..].is_empty()
}

/// True when a `WWW-Authenticate` value (or a token error) asks for a
/// fresh server nonce (`use_dpop_nonce`).
pub fn asks_for_nonce(text: &str) -> bool {
    text.contains("use_dpop_nonce")
}

/// Whether a sign-in to a server with `oauth` that refused with `challenge`
/// binds its tokens to a DPoP key: `"dpop": true` always, `false` never,
/// unset when the challenge is in the `DPoP` scheme (the server asks).
pub(crate) fn wanted(oauth: &OAuthSpec, challenge: Option<&str>) -> bool {
    oauth
        .dpop
        .unwrap_or_else(|| challenge.is_some_and(is_dpop_challenge))
}

#[cfg(test)]
mod tests {
    use aws_lc_rs::signature::{ECDSA_P256_SHA256_FIXED, UnparsedPublicKey};

    use super::*;

    fn decode(part: &str) -> Value {
        serde_json::from_slice(&URL_SAFE_NO_PAD.decode(part).unwrap()).unwrap()
    }

    #[test]
    fn a_proof_is_a_dpop_jwt_signed_by_the_key_its_header_carries() {
        let key = DpopKey::generate().unwrap();
        let proof = key
            .proof(
                "POST",
                "https://mcp.example/mcp?x=1#f",
                Some("tok"),
                Some("n-1"),
            )
            .unwrap();
        let parts: Vec<&str> = proof.split('.').collect();
        assert_eq!(parts.len(), 3);
        let header = decode(parts[0]);
        assert_eq!(header["typ"], "dpop+jwt");
        assert_eq!(header["alg"], "ES256");
        let jwk = &header["jwk"];
        assert_eq!(jwk["kty"], "EC");
        assert_eq!(jwk["crv"], "P-256");
        assert!(jwk.get("d").is_none(), "no private key in the header");
        // The signature verifies with the public key of the header's JWK.
        let x = URL_SAFE_NO_PAD.decode(jwk["x"].as_str().unwrap()).unwrap();
        let y = URL_SAFE_NO_PAD.decode(jwk["y"].as_str().unwrap()).unwrap();
        let point = [&[4u8][..], &x, &y].concat();
        let signature = URL_SAFE_NO_PAD.decode(parts[2]).unwrap();
        let signed = format!("{}.{}", parts[0], parts[1]);
        UnparsedPublicKey::new(&ECDSA_P256_SHA256_FIXED, &point)
            .verify(signed.as_bytes(), &signature)
            .expect("the proof verifies");
        // A changed claim does not.
        let forged = format!(
            "{}.{}",
            parts[0],
            URL_SAFE_NO_PAD.encode(r#"{"htm":"GET"}"#)
        );
        assert!(
            UnparsedPublicKey::new(&ECDSA_P256_SHA256_FIXED, &point)
                .verify(forged.as_bytes(), &signature)
                .is_err()
        );
        let claims = decode(parts[1]);
        assert_eq!(claims["htm"], "POST");
        assert_eq!(
            claims["htu"], "https://mcp.example/mcp",
            "no query or fragment"
        );
        assert_eq!(claims["nonce"], "n-1");
        // ath: base64url(SHA-256("tok")).
        assert_eq!(claims["ath"], "GnZ0607njffhrEOak8P6jjyUV4TU3sn9jjARc4svHWI");
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs();
        assert!(claims["iat"].as_u64().unwrap().abs_diff(now) < 5);
    }

    #[test]
    fn each_proof_is_fresh_and_a_token_request_has_no_ath() {
        let key = DpopKey::generate().unwrap();
        let claims = |proof: String| decode(proof.split('.').nth(1).unwrap());
        let a = claims(
            key.proof("POST", "https://as.example/token", None, None)
                .unwrap(),
        );
        let b = claims(
            key.proof("POST", "https://as.example/token", None, None)
                .unwrap(),
        );
        assert_ne!(a["jti"], b["jti"]);
        assert!(a.get("ath").is_none() && a.get("nonce").is_none());
    }

    #[test]
    fn a_stored_key_reads_back_as_the_same_key() {
        let key = DpopKey::generate().unwrap();
        let again = DpopKey::from_pkcs8(key.pkcs8()).unwrap();
        assert_eq!(key.jwk(), again.jwk());
        assert!(DpopKey::from_pkcs8(b"not a key").is_err());
    }

    #[test]
    fn challenges_are_told_apart_by_scheme_and_nonce_requests_are_seen() {
        assert!(is_dpop_challenge(
            r#"DPoP resource_metadata="https://m/.well-known/x""#
        ));
        assert!(is_dpop_challenge("dpop"));
        assert!(!is_dpop_challenge(r#"Bearer resource_metadata="x""#));
        assert!(!is_dpop_challenge("DPoPx realm=a"));
        assert!(asks_for_nonce(
            r#"DPoP error="use_dpop_nonce", resource_metadata="x""#
        ));
        assert!(!asks_for_nonce(r#"DPoP error="invalid_token""#));
        assert_eq!(htu("https://h/p?q#f"), "https://h/p");
    }

    #[test]
    fn dpop_is_used_when_the_config_says_or_the_server_challenges_with_it() {
        let with = |dpop| OAuthSpec {
            dpop,
            ..OAuthSpec::default()
        };
        let dpop_challenge = Some(r#"DPoP resource_metadata="https://m/.well-known/r""#);
        let bearer_challenge = Some(r#"Bearer resource_metadata="https://m/.well-known/r""#);
        assert!(wanted(&with(None), dpop_challenge));
        assert!(!wanted(&with(None), bearer_challenge));
        assert!(!wanted(&with(None), None));
        assert!(wanted(&with(Some(true)), bearer_challenge));
        assert!(!wanted(&with(Some(false)), dpop_challenge));
    }
}
