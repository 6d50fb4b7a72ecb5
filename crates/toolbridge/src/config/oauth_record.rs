//! [`OAuthRecord`]: a remote server's `oauth` object as written in the
//! file, every field checked (types, names of grants and client
//! authentications, what the grant needs) but no `${VAR}` expanded yet.

use std::fmt;

use serde_json::{Map, Value};

use super::{
    error::ConfigError,
    fields::Fields,
    span::Step,
    spec::{ClientAuth, OAuthGrant},
};
use crate::{json_kind::kind_of, redact::MASK};

/// A remote server's `oauth` object as written: checked, not yet expanded.
#[derive(Clone, PartialEq, Default)]
pub(crate) struct OAuthRecord {
    /// `clientId`.
    pub(crate) client_id: Option<String>,
    /// `clientSecret`: a secret, masked by `Debug`.
    pub(crate) client_secret: Option<String>,
    /// `clientMetadataUrl`.
    pub(crate) client_metadata_url: Option<String>,
    /// `scopes`.
    pub(crate) scopes: Vec<String>,
    /// `grant`.
    pub(crate) grant: OAuthGrant,
    /// `clientAuth`.
    pub(crate) client_auth: Option<ClientAuth>,
    /// `privateKey` (a secret) or `privateKeyFile`: (value, is a file).
    pub(crate) private_key: Option<(String, bool)>,
    /// `signingAlgorithm`.
    pub(crate) signing_algorithm: Option<String>,
    /// `assertion` (a secret) or `assertionFile`: (value, is a file).
    pub(crate) assertion: Option<(String, bool)>,
    /// `idp`: issuer, tokenEndpoint, clientId, clientSecret, and idToken
    /// or idTokenFile.
    pub(crate) idp: Option<IdpRecord>,
    /// `dpop`.
    pub(crate) dpop: Option<bool>,
}

/// The `oauth.idp` object as written.
#[derive(Clone, PartialEq, Default)]
pub(crate) struct IdpRecord {
    pub(crate) issuer: String,
    pub(crate) token_endpoint: Option<String>,
    pub(crate) client_id: String,
    pub(crate) client_secret: Option<String>,
    /// (value, is a file).
    pub(crate) id_token: (String, bool),
}

impl OAuthRecord {
    /// The `oauth` object of a remote server's record `fields`, checked; the
    /// default when there is none.
    pub(super) fn parse(fields: &Fields<'_>) -> Result<Self, ConfigError> {
        let obj = match fields.get("oauth") {
            None => return Ok(OAuthRecord::default()),
            Some(Value::Object(obj)) => obj,
            Some(other) => {
                return Err(fields.err(
                    "oauth",
                    &[Step::Key("oauth")],
                    format!("\"oauth\" must be an object, not {}", kind_of(other)),
                ));
            }
        };
        let oauth = OAuthFields { fields, obj };
        // Read in this order, so that of two mistakes the one reported is
        // the one it has always been.
        let scopes = oauth.scopes()?;
        let grant = oauth.grant()?;
        let client_auth = oauth.client_auth()?;
        let dpop = oauth.dpop()?;
        let idp = oauth.idp()?;
        let record = OAuthRecord {
            client_id: oauth.text("clientId")?,
            client_secret: oauth.text("clientSecret")?,
            client_metadata_url: oauth.text("clientMetadataUrl")?,
            scopes,
            grant,
            client_auth,
            private_key: oauth.value_or_file(obj, OAUTH, &[], "privateKey")?,
            signing_algorithm: oauth.text("signingAlgorithm")?,
            assertion: oauth.value_or_file(obj, OAUTH, &[], "assertion")?,
            idp,
            dpop,
        };
        record
            .check()
            .map_err(|(key, message)| oauth.invalid(&[key], message))?;
        Ok(record)
    }

    /// What the grant and the client authentication need is there: the
    /// field to blame and the message when not.
    fn check(&self) -> Result<(), (&'static str, String)> {
        let grant_name = match self.grant {
            OAuthGrant::AuthorizationCode => "authorization_code",
            OAuthGrant::ClientCredentials => "client_credentials",
            OAuthGrant::JwtBearer => "jwt_bearer",
            OAuthGrant::IdJag => "id_jag",
        };
        let needs = |key: &'static str, what: &str| {
            Err((key, format!("\"grant\": \"{grant_name}\" needs {what}")))
        };
        match self.grant {
            OAuthGrant::ClientCredentials | OAuthGrant::IdJag if self.client_id.is_none() => {
                return needs(
                    "clientId",
                    "\"clientId\" (the client registered with the authorization server)",
                );
            }
            OAuthGrant::JwtBearer if self.assertion.is_none() => {
                return needs(
                    "assertion",
                    "\"assertion\" or \"assertionFile\" (the workload's JWT)",
                );
            }
            OAuthGrant::IdJag if self.idp.is_none() => {
                return needs(
                    "idp",
                    "\"idp\" (the enterprise identity provider and the user's ID token)",
                );
            }
            _ => {}
        }
        if self.grant == OAuthGrant::ClientCredentials
            && self.client_secret.is_none()
            && self.private_key.is_none()
        {
            return needs(
                "clientSecret",
                "\"clientSecret\", or \"privateKey\"/\"privateKeyFile\" for private_key_jwt",
            );
        }
        match self.client_auth {
            Some(ClientAuth::PrivateKeyJwt) if self.private_key.is_none() => Err((
                "privateKey",
                "\"clientAuth\": \"private_key_jwt\" needs \"privateKey\" or \"privateKeyFile\""
                    .to_owned(),
            )),
            Some(method @ (ClientAuth::ClientSecretBasic | ClientAuth::ClientSecretPost))
                if self.client_secret.is_none() =>
            {
                Err((
                    "clientSecret",
                    format!(
                        "\"clientAuth\": \"{}\" needs \"clientSecret\"",
                        method.as_str()
                    ),
                ))
            }
            _ => Ok(()),
        }
    }
}

impl fmt::Debug for OAuthRecord {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OAuthRecord")
            .field("client_id", &self.client_id)
            .field("client_secret", &self.client_secret.as_ref().map(|_| MASK))
            .field("client_metadata_url", &self.client_metadata_url)
            .field("scopes", &self.scopes)
            .field("grant", &self.grant)
            .field("client_auth", &self.client_auth)
            .field("private_key", &self.private_key.as_ref().map(|_| MASK))
            .field("assertion", &self.assertion.as_ref().map(|_| MASK))
            .field("idp", &self.idp.as_ref().map(|idp| &idp.issuer))
            .field("dpop", &self.dpop)
            .finish()
    }
}

/// How messages name a key of the `oauth` object, and of its `idp`.
const OAUTH: &str = "\"oauth\".";
const IDP: &str = "\"oauth\".\"idp\".";

/// One server's `oauth` object, read with errors located in its record.
struct OAuthFields<'a> {
    /// The server's record.
    fields: &'a Fields<'a>,
    /// Its `oauth` object.
    obj: &'a Map<String, Value>,
}

impl OAuthFields<'_> {
    /// The error at `oauth` and then `keys`.
    fn invalid(&self, keys: &[&str], message: impl Into<String>) -> ConfigError {
        let mut steps = vec![Step::Key("oauth")];
        steps.extend(keys.iter().map(|key| Step::Key(key)));
        self.fields.err("oauth", &steps, message)
    }

    /// The string at `key` of `obj` (the `oauth` object or one inside it,
    /// which messages call `prefix`), when given; an error located at
    /// `oauth` and then `at`.
    fn string(
        &self,
        obj: &Map<String, Value>,
        prefix: &str,
        at: &[&str],
        key: &str,
    ) -> Result<Option<String>, ConfigError> {
        match obj.get(key).filter(|v| !v.is_null()) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(other) => Err(self.invalid(
                at,
                format!("{prefix}\"{key}\" must be a string, not {}", kind_of(other)),
            )),
        }
    }

    /// The string at `oauth.{key}`, when given.
    fn text(&self, key: &str) -> Result<Option<String>, ConfigError> {
        self.string(self.obj, OAUTH, &[key], key)
    }

    /// The error for `oauth.{key}` naming none of `names`.
    fn one_of(&self, key: &str, names: &str) -> ConfigError {
        self.invalid(
            &[key],
            format!("\"oauth\".\"{key}\" must be one of {names}"),
        )
    }

    /// `scopes`: an array of strings, empty when not given.
    fn scopes(&self) -> Result<Vec<String>, ConfigError> {
        match self.obj.get("scopes").filter(|v| !v.is_null()) {
            None => Ok(Vec::new()),
            Some(Value::Array(items)) if items.iter().all(Value::is_string) => Ok(items
                .iter()
                .filter_map(|item| item.as_str().map(str::to_owned))
                .collect()),
            Some(_) => Err(self.invalid(
                &["scopes"],
                "\"oauth\".\"scopes\" must be an array of strings",
            )),
        }
    }

    /// `grant`: the OAuth grant, authorization code when not given.
    fn grant(&self) -> Result<OAuthGrant, ConfigError> {
        match self.text("grant")? {
            None => Ok(OAuthGrant::default()),
            Some(name) => OAuthGrant::parse(&name).ok_or_else(|| {
                self.one_of(
                    "grant",
                    "\"authorization_code\", \"client_credentials\", \"jwt_bearer\" or \"id_jag\"",
                )
            }),
        }
    }

    /// `clientAuth`: how the client authenticates to the token endpoint.
    fn client_auth(&self) -> Result<Option<ClientAuth>, ConfigError> {
        match self.text("clientAuth")? {
            None => Ok(None),
            Some(name) => ClientAuth::parse(&name).map(Some).ok_or_else(|| {
                self.one_of(
                    "clientAuth",
                    "\"client_secret_basic\", \"client_secret_post\" or \"private_key_jwt\"",
                )
            }),
        }
    }

    /// `dpop`: true or false, when given.
    fn dpop(&self) -> Result<Option<bool>, ConfigError> {
        match self.obj.get("dpop").filter(|v| !v.is_null()) {
            None => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(other) => Err(self.invalid(
                &["dpop"],
                format!(
                    "\"oauth\".\"dpop\" must be true or false, not {}",
                    kind_of(other)
                ),
            )),
        }
    }

    /// `idp`: the enterprise identity provider (`issuer`, `tokenEndpoint`,
    /// `clientId`, `clientSecret`) and the user's ID token, when given.
    fn idp(&self) -> Result<Option<IdpRecord>, ConfigError> {
        let idp = match self.obj.get("idp").filter(|v| !v.is_null()) {
            None => return Ok(None),
            Some(Value::Object(idp)) => idp,
            Some(other) => {
                return Err(self.invalid(
                    &["idp"],
                    format!(
                        "\"oauth\".\"idp\" must be an object, not {}",
                        kind_of(other)
                    ),
                ));
            }
        };
        let text = |key: &str| self.string(idp, IDP, &["idp", key], key);
        let needed =
            |key: &str| self.invalid(&["idp", key], format!("\"oauth\".\"idp\" needs \"{key}\""));
        Ok(Some(IdpRecord {
            issuer: text("issuer")?.ok_or_else(|| needed("issuer"))?,
            token_endpoint: text("tokenEndpoint")?,
            client_id: text("clientId")?.ok_or_else(|| needed("clientId"))?,
            client_secret: text("clientSecret")?,
            id_token: self
                .value_or_file(idp, IDP, &["idp"], "idToken")?
                .ok_or_else(|| needed("idToken\" or \"idTokenFile"))?,
        }))
    }

    /// A secret of `obj` (named `prefix` in messages, found at `within`
    /// inside `oauth`: `[]` for `oauth` itself) given by value (`key`) or as
    /// a file (`{key}File`), not both: (value, is a file). Errors are
    /// located at the key itself.
    fn value_or_file(
        &self,
        obj: &Map<String, Value>,
        prefix: &str,
        within: &[&str],
        key: &str,
    ) -> Result<Option<(String, bool)>, ConfigError> {
        let file_key = format!("{key}File");
        fn at<'k>(within: &[&'k str], key: &'k str) -> Vec<&'k str> {
            within.iter().copied().chain([key]).collect()
        }
        let value = self.string(obj, prefix, &at(within, key), key)?;
        let file = self.string(obj, prefix, &at(within, &file_key), &file_key)?;
        match (value, file) {
            (Some(_), Some(_)) => Err(self.invalid(
                &at(within, key),
                format!(
                    "{prefix}\"{key}\" and \"{file_key}\" are two ways to give one secret: keep one"
                ),
            )),
            (Some(value), None) => Ok(Some((value, false))),
            (None, Some(path)) => Ok(Some((path, true))),
            (None, None) => Ok(None),
        }
    }
}
