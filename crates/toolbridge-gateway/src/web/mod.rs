//! The settings web page (`toolbridge serve` at `/`, `toolbridge ui`):
//! manage servers, profiles and presets, see doctor's findings, try tools, browse
//! resources and prompts, in English, Chinese and Japanese.
//!
//! Layout:
//! - [`assets`]: the page's files (`crates/toolbridge-gateway/web/`),
//!   embedded in the binary: no CDN, works offline, no Node to build;
//! - [`guard`]: what the page's responses carry (Content-Security-Policy)
//!   and what its writes must carry (a header a foreign page cannot send);
//! - [`app_sandbox`]: the document MCP Apps are framed in, with a policy of
//!   its own (inline scripts, an opaque origin, no network);
//! - [`api`]: the JSON API under `/api`, one module per view;
//! - [`session`]: signing the page in with the gateway's token or a
//!   one-time code (`/api/session`) and the session id it then sends in a
//!   header;
//! - [`sign_ins`]: the OAuth sign-ins to remote servers the Servers view
//!   starts (the library's browser flow, the URL handed to the page);
//! - [`state`]: what the API handlers share (the gateway, the config path);
//! - [`said`]: a message of the server's the page says in its language (a
//!   key of its strings and the values), English rendered from its strings.
//!
//! The page's writes go through `toolbridge::config`'s edit code, the same
//! as the CLI's (atomic, locked, never over a file that does not parse); the
//! gateway's config watcher then starts and stops what changed.

pub mod api;
pub mod app_sandbox;
pub mod assets;
pub mod guard;
pub mod said;
pub mod session;
pub mod sign_ins;
pub mod state;

#[cfg(test)]
mod locales_check;

use axum::Router;

pub use state::{Access, WebState};

/// The page's routes: the assets at `/` and `/assets/...`, the API under
/// `/api`. The gateway's [`crate::security`] checks (Host, Origin, peer,
/// token or session) wrap these as they wrap `/mcp`.
pub fn router(state: WebState) -> Router {
    Router::new()
        .nest("/api", api::router().with_state(state))
        .merge(assets::router())
        .layer(axum::middleware::from_fn(guard::guard))
}
