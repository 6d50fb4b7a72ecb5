//! The page's JSON API under `/api`, one module per view. Every error is
//! an [`ApiError`]: `{"error": {"message", "field"?}}` with a status.
//!
//! Each view's module exposes `routes() -> Router<WebState>`, merged here.

pub mod doctor;
pub mod error;
pub mod servers;

use axum::{Router, routing::get};

pub use error::ApiError;

use super::WebState;

/// Every API route.
pub fn router() -> Router<WebState> {
    Router::new()
        .route("/version", get(version))
        .merge(servers::routes())
        .merge(doctor::routes())
    // Views add their routes here: `.merge(servers::routes())`, ...
}

async fn version() -> axum::Json<serde_json::Value> {
    axum::Json(serde_json::json!({ "version": env!("CARGO_PKG_VERSION") }))
}
