//! A server the gateway does not serve because its record uses a `${VAR}`
//! that is not set in the gateway's environment: why, said plainly
//! ([`NotServed`]), and the fix that works from the page without a restart
//! (`POST /api/servers/{name}/variable` with `{"variable", "value"}`): the
//! references to that variable in the server's `env` and `headers` values
//! are replaced by the value, in a file then readable by its owner only
//! (the CLI's rule for a key stored in the config). The gateway's config
//! watcher then starts the server as for any other edit.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use toolbridge::config::{self, Config, ConfigError};

use crate::web::WebState;
use crate::web::api::{ApiError, error::config_error};

/// Why an enabled server is not served.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase", tag = "kind")]
pub enum NotServed {
    /// Its record uses `${variable}` in `field`, and it is not set.
    UnsetVariable {
        /// The variable.
        variable: String,
        /// The field using it (`env`, `headers`, `args`, `url`...).
        field: String,
        /// The page can set it (the reference is in `env` or `headers`).
        fixable: bool,
    },
    /// Its record does not resolve for another reason.
    Invalid {
        /// The config error, as the CLI says it.
        message: String,
    },
    /// It resolves, but the gateway serves it not (yet): the watcher
    /// applies a change within a second; `serve --server` leaves servers out.
    Pending,
}

/// Why server `name` of `config`, enabled and not served, is not.
pub fn why(config: &Config, name: &str) -> NotServed {
    match config.resolve(name) {
        Err(ConfigError::UnsetVariable {
            field, variable, ..
        }) => NotServed::UnsetVariable {
            fixable: field == "env" || field == "headers",
            variable,
            field,
        },
        Err(e) => NotServed::Invalid {
            message: e.to_string(),
        },
        Ok(_) => NotServed::Pending,
    }
}

/// The body of `POST /api/servers/{name}/variable`.
#[derive(Debug, Deserialize)]
pub struct SetVariable {
    /// The variable's name, as in `${NAME}`.
    pub variable: String,
    /// Its value.
    pub value: String,
}

/// Replaces `${variable}` in server `name`'s `env` and `headers` values by
/// `value`, in the gateway's config file (made 0600).
pub async fn set(state: &WebState, name: String, body: SetVariable) -> Result<(), ApiError> {
    if body.value.is_empty() {
        return Err(ApiError::field("value", "enter the value to store"));
    }
    let path = state.config_path().to_owned();
    let reference = format!("${{{}}}", body.variable);
    let outcome = tokio::task::spawn_blocking(move || {
        config::edit_private(&path, |doc| {
            let Some(mut record) = doc.server(&name).cloned() else {
                return Ok(Err(ApiError::not_found(format!(
                    "there is no server \"{name}\" in the config; reload the page"
                ))));
            };
            let mut replaced = 0;
            for field in ["env", "headers"] {
                if let Some(Value::Object(map)) = record.get_mut(field) {
                    for value in map.values_mut() {
                        if let Value::String(text) = value
                            && text.contains(&reference)
                        {
                            *text = text.replace(&reference, &body.value);
                            replaced += 1;
                        }
                    }
                }
            }
            if replaced == 0 {
                return Ok(Err(ApiError::bad_request(format!(
                    "server \"{name}\" has no {reference} in its \"env\" or \"headers\"; \
                     set {} in the gateway's environment and restart it",
                    body.variable
                ))));
            }
            doc.put_server(&name, record).map(|_| Ok(()))
        })
    })
    .await
    .map_err(|e| ApiError::internal(format!("the config edit did not finish: {e}")))?;
    outcome.map_err(config_error)?
}
