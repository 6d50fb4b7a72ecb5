//! `doctor`: what stops each configured server from starting, and the fix.
//!
//! The checks read the config's own server records (values as written,
//! `${VAR}` not expanded) through the config's expander and environment, so
//! they can report an unset variable instead of failing on it, and they agree
//! with what [`Config::resolve`](crate::config::Config::resolve) would do. For
//! each enabled server [`check_servers`] reports, one [`Finding`] per problem:
//!
//! - a `${VAR}` without a default that is not set;
//! - a preset's API key that is missing (see [`presets::find_by_launch`](crate::presets::find_by_launch));
//! - a value the config cannot resolve (a malformed `${...}`, a URL that is
//!   not one once expanded);
//! - a stdio command that is not on `PATH` (the server's `env` `PATH` when it
//!   sets one), with an install plan when toolbridge knows one;
//! - a remote URL that does not answer (any HTTP status counts as an answer;
//!   a refused connection, a DNS failure or a timeout does not).
//!
//! Findings never hold an expanded secret: URLs are shown as written, masked
//! (by the crate's one redaction module), and failure reasons are scrubbed.

mod check;
mod finding;
mod reach;

pub use check::{URL_TIMEOUT, check_servers};
pub use finding::{Finding, Problem};
