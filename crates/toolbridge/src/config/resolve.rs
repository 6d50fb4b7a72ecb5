//! Resolving a [`ServerRecord`] into the [`ServerSpec`] the pool starts:
//! every reference in scope expanded (`${VAR}`, `${input:ID}`, `envFile`),
//! relative paths taken from the config file's directory, and the global
//! settings filling what the record leaves out.
//!
//! A disabled server is never started, so it is not resolved: its values
//! are kept as written (`${VAR}` unexpanded, no `envFile` read, no input
//! asked for), and an unset variable in it is no error.

use std::path::PathBuf;

use super::{
    dotenv,
    error::ConfigError,
    expand::{ExpandError, Scope, expand_in},
    fields::Source,
    oauth_record::IdpRecord,
    record::{ServerRecord, check_url, infer_remote, needs_command_or_url},
    secret::SecretMap,
    settings::Settings,
    span::Step,
    spec::{
        IdpSpec, OAuthSpec, RemoteSpec, SecretSource, ServerSpec, StdioSpec, TransportKind,
        TransportSpec,
    },
};
use crate::sandbox::Sandbox;

impl ServerRecord {
    /// Expands every reference in `scope` and builds the runtime spec, the
    /// global `settings` filling what the record leaves out. A relative
    /// `cwd` or `envFile` is taken relative to the config file's directory.
    ///
    /// A disabled server is never started, so it is not resolved: its
    /// values are kept as written (`${VAR}` unexpanded, no `envFile` read,
    /// no input asked for), and an unset variable in it is no error.
    pub(crate) fn resolve(
        &self,
        src: &Source<'_>,
        scope: Scope<'_>,
        settings: &Settings,
    ) -> Result<ServerSpec, ConfigError> {
        let resolver = Resolver {
            record: self,
            src: *src,
            scope,
        };
        let transport = match (self.declared, &self.command, &self.url) {
            (Some(TransportKind::Stdio) | None, Some(command), _) => {
                TransportSpec::Stdio(resolver.stdio(command, settings)?)
            }
            (_, _, Some(url)) => resolver.remote(url)?,
            // `parse` guarantees the field the transport needs.
            _ => return Err(needs_command_or_url(src, &self.name)),
        };
        Ok(ServerSpec {
            name: self.name.clone(),
            transport,
            timeout: self.timeout,
            disabled: self.disabled,
            startup_timeout: self.startup_timeout.or(settings.startup_timeout),
            disabled_tools: self.disabled_tools.clone(),
            enabled_tools: self.enabled_tools.clone(),
            result_budget: self.result_budget.or(settings.result_budget),
            pin: self.pin.or(settings.pin).unwrap_or_default(),
        })
    }
}

/// One record being resolved, with what every field of it needs: where it
/// was read (for errors and relative paths) and the references in scope.
struct Resolver<'a> {
    /// The server as written.
    record: &'a ServerRecord,
    /// The file it was read from.
    src: Source<'a>,
    /// What its references expand against.
    scope: Scope<'a>,
}

impl Resolver<'_> {
    /// `path`, taken relative to the config file's directory when relative.
    fn relative(&self, path: &str) -> PathBuf {
        let path = PathBuf::from(path);
        match self.src.path.parent() {
            Some(dir) if path.is_relative() && !dir.as_os_str().is_empty() => dir.join(path),
            _ => path,
        }
    }

    /// `text`, the value of `field` at `steps` (called `label` in messages),
    /// with every reference expanded; a disabled server's text as written.
    fn expand(
        &self,
        field: &str,
        label: &str,
        steps: &[Step<'_>],
        text: &str,
    ) -> Result<String, ConfigError> {
        if self.record.disabled {
            return Ok(text.to_owned());
        }
        let name = self.record.name.as_str();
        expand_in(text, self.scope).map_err(|error| match error {
            ExpandError::Unset(variable) => ConfigError::UnsetVariable {
                at: self.src.locate(Some(name), steps),
                server: name.to_string(),
                field: field.to_string(),
                variable,
            },
            ExpandError::Input(input) => ConfigError::UnsetInput {
                at: self.src.locate(Some(name), steps),
                server: name.to_string(),
                field: field.to_string(),
                input,
            },
            ExpandError::Syntax(message) => {
                self.invalid(field, steps, format!("{label} {message}"))
            }
        })
    }

    /// The error for this server's `field` at `steps`.
    fn invalid(&self, field: &str, steps: &[Step<'_>], message: impl Into<String>) -> ConfigError {
        self.src
            .invalid(Some(self.record.name.as_str()), Some(field), steps, message)
    }

    /// The stdio transport: the program and its arguments expanded, its
    /// environment, working directory, inherited variables and sandbox.
    fn stdio(&self, command: &str, settings: &Settings) -> Result<StdioSpec, ConfigError> {
        let steps = [Step::Key("command")];
        let command = self.expand("command", "\"command\"", &steps, command)?;
        if command.trim().is_empty() {
            return Err(self.invalid(
                "command",
                &steps,
                "\"command\" is empty after expanding variables",
            ));
        }
        let args = self
            .record
            .args
            .iter()
            .enumerate()
            .map(|(i, arg)| {
                let label = format!("\"args\"[{i}]");
                self.expand("args", &label, &[Step::Key("args"), Step::Index(i)], arg)
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(StdioSpec {
            command,
            args,
            env: self.env()?,
            cwd: self.record.cwd.as_deref().map(|cwd| self.relative(cwd)),
            inherit_env: self.inherit_env(settings),
            sandbox: self.sandbox(settings)?,
        })
    }

    /// The extra environment of a stdio server: the `envFile`'s variables,
    /// then `env` over them. A disabled server's `envFile` is not read.
    fn env(&self) -> Result<SecretMap, ConfigError> {
        let mut env = SecretMap::default();
        if let Some(file) = self
            .record
            .env_file
            .as_ref()
            .filter(|_| !self.record.disabled)
        {
            let steps = [Step::Key("envFile")];
            let file = self.relative(&self.expand("envFile", "\"envFile\"", &steps, file)?);
            let vars =
                dotenv::read(&file).map_err(|message| self.invalid("envFile", &steps, message))?;
            env.extend(vars);
        }
        for (key, value) in &self.record.env {
            let label = format!("\"env\".\"{key}\"");
            let value = self.expand("env", &label, &[Step::Key("env"), Step::Key(key)], value)?;
            env.insert(key.clone(), value);
        }
        Ok(env)
    }

    /// The record's `inheritEnv`, then the global ones it does not repeat.
    fn inherit_env(&self, settings: &Settings) -> Vec<String> {
        let mut inherit_env = self.record.inherit_env.clone();
        for pattern in &settings.inherit_env {
            if !inherit_env.contains(pattern) {
                inherit_env.push(pattern.clone());
            }
        }
        inherit_env
    }

    /// The record's sandbox, else the global one, else the default.
    fn sandbox(&self, settings: &Settings) -> Result<Sandbox, ConfigError> {
        match self.record.sandbox.as_ref().or(settings.sandbox.as_ref()) {
            Some(record) => record.resolve(
                &|label, steps, text| self.expand("sandbox", label, steps, text),
                &|path| self.relative(path),
            ),
            None => Ok(Sandbox::Default),
        }
    }

    /// A network transport: the URL expanded and checked (when the type is
    /// not declared, its scheme chooses WebSocket or HTTP), the headers and
    /// the OAuth settings.
    fn remote(&self, url: &str) -> Result<TransportSpec, ConfigError> {
        let steps = [Step::Key(self.record.url_key)];
        let url = self.expand("url", "\"url\"", &steps, url)?;
        let kind = self.record.declared.unwrap_or_else(|| infer_remote(&url));
        if !self.record.disabled {
            check_url(kind, &url).map_err(|message| self.invalid("url", &steps, message))?;
        }
        let remote = RemoteSpec {
            url,
            headers: self.headers()?,
            auto_detect: self.record.declared.is_none() && kind == TransportKind::Http,
            oauth: self.oauth()?,
        };
        Ok(match kind {
            TransportKind::Sse => TransportSpec::Sse(remote),
            TransportKind::WebSocket => TransportSpec::WebSocket(remote),
            TransportKind::Http | TransportKind::Stdio => TransportSpec::Http(remote),
        })
    }

    /// The request headers, expanded; a value may not hold a line break,
    /// which would end the header.
    fn headers(&self) -> Result<SecretMap, ConfigError> {
        self.record
            .headers
            .iter()
            .map(|(key, value)| {
                let steps = [Step::Key("headers"), Step::Key(key)];
                let label = format!("\"headers\".\"{key}\"");
                let value = self.expand("headers", &label, &steps, value)?;
                if value.contains(['\r', '\n']) {
                    return Err(self.invalid(
                        "headers",
                        &steps,
                        format!("{label} must not contain a line break"),
                    ));
                }
                Ok((key.clone(), value))
            })
            .collect()
    }

    /// The `oauth` object, its strings and secrets expanded.
    fn oauth(&self) -> Result<OAuthSpec, ConfigError> {
        let oauth = &self.record.oauth;
        let text = |key: &str, value: &Option<String>| self.expand_given(&[key], value);
        let secret = |key: &str, value: &Option<(String, bool)>| {
            value
                .as_ref()
                .map(|value| self.secret(&[], key, value))
                .transpose()
        };
        Ok(OAuthSpec {
            client_id: text("clientId", &oauth.client_id)?,
            client_secret: text("clientSecret", &oauth.client_secret)?,
            client_metadata_url: text("clientMetadataUrl", &oauth.client_metadata_url)?,
            scopes: oauth.scopes.clone(),
            grant: oauth.grant,
            client_auth: oauth.client_auth,
            private_key: secret("privateKey", &oauth.private_key)?,
            signing_algorithm: oauth.signing_algorithm.clone(),
            assertion: secret("assertion", &oauth.assertion)?,
            idp: oauth.idp.as_ref().map(|idp| self.idp(idp)).transpose()?,
            dpop: oauth.dpop,
        })
    }

    /// `oauth.idp`, the identity provider whose ID token is exchanged,
    /// expanded.
    fn idp(&self, idp: &IdpRecord) -> Result<IdpSpec, ConfigError> {
        let text = |key: &str, value: &str| self.expand_oauth(&["idp", key], value);
        let given = |key: &str, value: &Option<String>| self.expand_given(&["idp", key], value);
        let id_token = self.secret(&["idp"], "idToken", &idp.id_token)?;
        Ok(IdpSpec {
            issuer: text("issuer", &idp.issuer)?,
            token_endpoint: given("tokenEndpoint", &idp.token_endpoint)?,
            client_id: text("clientId", &idp.client_id)?,
            client_secret: given("clientSecret", &idp.client_secret)?,
            id_token,
        })
    }

    /// A secret under `oauth` (inside the objects `parents`), given by value
    /// at `key` or as a file at `{key}File`, expanded.
    fn secret(
        &self,
        parents: &[&str],
        key: &str,
        (value, is_file): &(String, bool),
    ) -> Result<SecretSource, ConfigError> {
        let key = if *is_file {
            format!("{key}File")
        } else {
            key.to_owned()
        };
        let keys: Vec<&str> = parents.iter().copied().chain([key.as_str()]).collect();
        let value = self.expand_oauth(&keys, value)?;
        Ok(if *is_file {
            SecretSource::File(value.into())
        } else {
            SecretSource::Value(value)
        })
    }

    /// `value`, when given, at `oauth` and then `keys`, expanded.
    fn expand_given(
        &self,
        keys: &[&str],
        value: &Option<String>,
    ) -> Result<Option<String>, ConfigError> {
        value
            .as_deref()
            .map(|value| self.expand_oauth(keys, value))
            .transpose()
    }

    /// `text`, the value at `oauth` and then `keys`, expanded.
    fn expand_oauth(&self, keys: &[&str], text: &str) -> Result<String, ConfigError> {
        let mut steps = vec![Step::Key("oauth")];
        steps.extend(keys.iter().map(|key| Step::Key(key)));
        let label = format!("\"oauth\".\"{}\"", keys.join("\".\""));
        self.expand("oauth", &label, &steps, text)
    }
}
