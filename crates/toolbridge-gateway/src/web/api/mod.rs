//! The page's JSON API under `/api`, one module per view. Every error is
//! an [`ApiError`]: `{"error": {"message", "field"?}}` with a status.
//!
//! Each view's module exposes `routes() -> Router<WebState>`, merged here.

pub mod catalog;
pub mod doctor;
pub mod error;
pub mod home;
pub mod import;
pub mod presets;
pub mod profiles;
pub mod servers;
pub mod tools;

use axum::{Router, routing::get};

pub use error::ApiError;

use super::WebState;

/// Every API route.
pub fn router() -> Router<WebState> {
    Router::new()
        .route("/version", get(version))
        .merge(servers::routes())
        .merge(doctor::routes())
        .merge(presets::routes())
        .merge(catalog::routes())
        .merge(tools::routes())
        .merge(home::routes())
        .merge(import::routes())
        .merge(profiles::routes())
}

async fn version() -> axum::Json<serde_json::Value> {
    axum::Json(serde_json::json!({ "version": env!("CARGO_PKG_VERSION") }))
}
