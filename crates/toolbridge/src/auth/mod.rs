//! OAuth 2.1 for remote servers, as the MCP authorization spec describes:
//! discovery of the authorization server, client registration, the
//! browser sign-in with PKCE, and tokens stored and refreshed.
//!
//! rmcp's `transport::auth` does the protocol (metadata discovery with the
//! 2025-03-26 fallbacks, dynamic client registration, client ID metadata
//! documents, PKCE S256, scope selection, the code exchange and refresh,
//! the RFC 8707 `resource` on every token request). This module adds what
//! it leaves to its user:
//!
//! - [`store`]: tokens per resource and client registrations per
//!   authorization server, in 0600 files written atomically; a registered
//!   client's secret is kept (rmcp's own credentials forget it);
//! - `discovery`: finding the authorization server and its metadata,
//!   shared by the sign-in, the grants and the refresh;
//! - [`flow`]: the browser sign-in ([`sign_in`]), with a new registration
//!   when the authorization server no longer knows the stored one
//!   (`invalid_client`), and signing out ([`sign_out`]) with revocation;
//! - [`grant`]: tokens without a user, for the grants of the MCP
//!   authorization extensions (`client_credentials`, `jwt_bearer` for
//!   workload identity, `id_jag` for enterprise-managed authorization);
//! - [`dpop`]: DPoP (RFC 9449) keys and proofs, for tokens bound to a key
//!   (the token requests' proofs and server nonces included);
//! - [`session`]: the bearer token of one server's HTTP connection,
//!   refreshed before it expires, and the sign-in (or the advice to sign
//!   in) when the server answers 401 or 403 `insufficient_scope`;
//! - [`browser`] and [`redirect`]: opening the authorization URL, and the
//!   loopback listener on 127.0.0.1 the browser is sent back to.

pub mod browser;
mod discovery;
pub mod dpop;
mod error;
pub mod flow;
pub mod grant;
pub mod redirect;
pub mod session;
pub mod store;

pub use browser::{Browser, SignInPrompt};
pub use error::AuthError;
pub use flow::{SignIn, SignOut, SignedIn, challenge_of, sign_in, sign_out};
pub use session::ServerAuth;
pub use store::{AuthStatus, TokenStore};
