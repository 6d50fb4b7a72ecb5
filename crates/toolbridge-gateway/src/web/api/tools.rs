//! The tools view's API: each served server's tools with what every LLM
//! provider would be sent for them, and trying a tool.
//!
//! - `GET /api/tools`: the served servers (for the picker);
//! - `GET /api/tools/{server}`: the server's tools, each with its OpenAI,
//!   Anthropic and Gemini definitions and what conversion changed
//!   ([`listing`], [`preview`]);
//! - `POST /api/tools/{server}/{tool}/call` `{arguments, callId, timeoutMs}`:
//!   runs the tool through the server's pool and answers the raw MCP
//!   content, the flattened text, `isError`, `elapsedMs` and the server's
//!   log messages ([`call`]; the page as the call's client:
//!   [`page_client`]);
//! - `POST /api/tools/{server}/approve` `{tools}`: pins the current
//!   definitions of the server's withheld tools (all of them without
//!   `tools`); the gateway's clients are told their tool list changed
//!   ([`listing::approve`]);
//! - `POST /api/tools/{server}/{tool}/disable` and `.../enable`: adds the
//!   tool to the server's `disabledTools` in the config file, or takes it
//!   out; the config watcher then reloads and the gateway's `tools/list`
//!   follows ([`switch`]);
//! - `GET /api/calls/{callId}`: a call's latest progress and the
//!   elicitation waiting for the page; `POST
//!   /api/calls/{callId}/elicitation` `{id, action, content}` answers it
//!   ([`page_client`]);
//! - `DELETE /api/calls/{callId}`: cancels a call in flight; the upstream
//!   is sent `notifications/cancelled` ([`in_flight`]). A page that goes
//!   away (its fetch aborted, the connection closed) cancels its call the
//!   same way.

pub mod call;
pub mod in_flight;
pub mod listing;
pub mod page_client;
pub mod preview;
pub mod switch;

use axum::{
    Extension, Router,
    routing::{delete, get, post},
};

use crate::web::WebState;

/// The tools view's routes, with their own register of calls in flight.
pub fn routes() -> Router<WebState> {
    Router::new()
        .route("/tools", get(listing::servers))
        .route("/tools/{server}", get(listing::tools))
        .route("/tools/{server}/approve", post(listing::approve))
        .route("/tools/{server}/{tool}/call", post(call::call))
        .route("/tools/{server}/{tool}/disable", post(switch::disable))
        .route("/tools/{server}/{tool}/enable", post(switch::enable))
        .route("/calls/{call_id}", delete(call::cancel).get(call::state))
        .route("/calls/{call_id}/elicitation", post(call::answer))
        .layer(Extension(in_flight::Calls::default()))
}
