//! The page's files, embedded from `crates/toolbridge-gateway/web/` at build
//! time (`rust-embed` with `debug-embed`: debug builds embed too, so tests
//! see what users get).

use axum::{
    Router,
    extract::Path,
    response::{IntoResponse, Response},
    routing::get,
};
use http::{StatusCode, header};

#[derive(rust_embed::Embed)]
#[folder = "web/"]
struct Files;

/// `/` (the page) and `/assets/{path}` (its scripts, styles and locales).
pub fn router() -> Router {
    Router::new()
        .route("/", get(|| async { file("index.html") }))
        .route(
            "/assets/{*path}",
            get(|Path(path): Path<String>| async move { file(&path) }),
        )
}

/// Every embedded path (for the locale completeness test and checks).
pub fn paths() -> impl Iterator<Item = String> {
    Files::iter().map(|p| p.into_owned())
}

/// The embedded file at `path`, if any.
pub fn get_file(path: &str) -> Option<std::borrow::Cow<'static, [u8]>> {
    Files::get(path).map(|f| f.data)
}

fn file(path: &str) -> Response {
    match Files::get(path) {
        Some(f) => (
            [
                (header::CONTENT_TYPE, content_type(path)),
                // Assets change with the binary; revalidate rather than guess.
                (header::CACHE_CONTROL, "no-cache"),
            ],
            f.data.into_owned(),
        )
            .into_response(),
        None => (StatusCode::NOT_FOUND, "not found").into_response(),
    }
}

fn content_type(path: &str) -> &'static str {
    match path.rsplit('.').next().unwrap_or("") {
        "html" => "text/html; charset=utf-8",
        "js" | "mjs" => "text/javascript; charset=utf-8",
        "css" => "text/css; charset=utf-8",
        "json" => "application/json",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        _ => "application/octet-stream",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_page_and_its_script_are_embedded() {
        assert!(get_file("index.html").is_some());
        assert!(get_file("app.js").is_some());
        assert_eq!(content_type("app.js"), "text/javascript; charset=utf-8");
    }
}
