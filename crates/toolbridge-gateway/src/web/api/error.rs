//! The API's one error shape.

use axum::{
    Json,
    response::{IntoResponse, Response},
};
use http::StatusCode;

use toolbridge::config::ConfigError;

use crate::web::said::Said;

/// An error the page shows: next to `field` when it names a form field,
/// else at the top of the view. `message` is one plain sentence, never a
/// secret.
#[derive(Debug, Clone)]
pub struct ApiError {
    /// The HTTP status.
    pub status: StatusCode,
    /// What went wrong and what to do.
    pub message: String,
    /// The form field at fault (`name`, `command`, `url`, `env.KEY`...).
    pub field: Option<String>,
    /// The message as the page's strings say it (the page shows it in its
    /// language; `message` is its English).
    pub said: Option<Box<Said>>,
}

impl ApiError {
    /// 400, about the whole request.
    pub fn bad_request(message: impl Into<String>) -> Self {
        ApiError {
            status: StatusCode::BAD_REQUEST,
            message: message.into(),
            field: None,
            said: None,
        }
    }

    /// 400 (or 422), about one form field.
    pub fn field(field: impl Into<String>, message: impl Into<String>) -> Self {
        ApiError {
            status: StatusCode::UNPROCESSABLE_ENTITY,
            message: message.into(),
            field: Some(field.into()),
            said: None,
        }
    }

    /// 422 about one form field, `said` in the page's strings (its English
    /// is the message).
    pub fn said_at(field: impl Into<String>, said: Said) -> Self {
        ApiError {
            status: StatusCode::UNPROCESSABLE_ENTITY,
            message: said.english(),
            field: Some(field.into()),
            said: Some(Box::new(said)),
        }
    }

    /// 404: an unknown server, tool, preset, resource or prompt.
    pub fn not_found(message: impl Into<String>) -> Self {
        ApiError {
            status: StatusCode::NOT_FOUND,
            message: message.into(),
            field: None,
            said: None,
        }
    }

    /// 500 or 502: the config file or a server failed.
    pub fn internal(message: impl Into<String>) -> Self {
        ApiError {
            status: StatusCode::INTERNAL_SERVER_ERROR,
            message: message.into(),
            field: None,
            said: None,
        }
    }
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut error = serde_json::json!({ "message": self.message });
        if let Some(field) = self.field {
            error["field"] = field.into();
        }
        if let Some(said) = &self.said {
            error["said"] = said.to_json();
        }
        (self.status, Json(serde_json::json!({ "error": error }))).into_response()
    }
}

/// A config error as the page shows it: next to the form field it is
/// about, when it is about one.
pub fn config_error(error: ConfigError) -> ApiError {
    let message = chain(&error);
    match &error {
        ConfigError::Invalid {
            field: Some(field), ..
        } => {
            let field = match field.as_str() {
                "type" | "transport" | "transportType" => "transport",
                "serverUrl" => "url",
                other => other,
            };
            ApiError::field(field, message)
        }
        ConfigError::Invalid { .. } => ApiError::bad_request(message),
        ConfigError::ServerExists { .. } => ApiError::field("name", message),
        ConfigError::UnknownServer { .. } => ApiError::not_found(message),
        ConfigError::Syntax { .. } => ApiError {
            status: StatusCode::CONFLICT,
            message: format!("{message}; fix the file in your editor, nothing was written"),
            field: None,
            said: None,
        },
        _ => ApiError::internal(message),
    }
}

/// The error and its causes, joined: "cannot write PATH: permission denied".
/// `error` and its sources, as one sentence.
fn chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}
