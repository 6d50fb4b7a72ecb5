//! The API's one error shape.

use axum::{
    Json,
    response::{IntoResponse, Response},
};
use http::StatusCode;

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
}

impl ApiError {
    /// 400, about the whole request.
    pub fn bad_request(message: impl Into<String>) -> Self {
        ApiError {
            status: StatusCode::BAD_REQUEST,
            message: message.into(),
            field: None,
        }
    }

    /// 400 (or 422), about one form field.
    pub fn field(field: impl Into<String>, message: impl Into<String>) -> Self {
        ApiError {
            status: StatusCode::UNPROCESSABLE_ENTITY,
            message: message.into(),
            field: Some(field.into()),
        }
    }

    /// 404: an unknown server, tool, preset, resource or prompt.
    pub fn not_found(message: impl Into<String>) -> Self {
        ApiError {
            status: StatusCode::NOT_FOUND,
            message: message.into(),
            field: None,
        }
    }

    /// 500 or 502: the config file or a server failed.
    pub fn internal(message: impl Into<String>) -> Self {
        ApiError {
            status: StatusCode::INTERNAL_SERVER_ERROR,
            message: message.into(),
            field: None,
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
        (self.status, Json(serde_json::json!({ "error": error }))).into_response()
    }
}
