//! `doctor`: can each configured server work, and if not, what to do.
//!
//! [`diagnose`] looks at every enabled server in two steps.
//!
//! First the config alone ([`check_servers`], which can also be used on its
//! own), reading the config's own server
//! records (values as written, `${VAR}` not expanded) through the config's
//! expander and environment, so it can report an unset variable instead of
//! failing on it, and agree with what
//! [`Config::resolve`](crate::config::Config::resolve) would do:
//!
//! - a `${VAR}` without a default that is not set;
//! - a preset's API key that is missing (see [`presets::find_by_launch`](crate::presets::find_by_launch));
//! - a value the config cannot resolve (a malformed `${...}`, a URL that is
//!   not one once expanded);
//! - a stdio command that is not on `PATH` (the server's `env` `PATH` when it
//!   sets one), with an install plan when toolbridge knows one, or a path to
//!   a file that is not executable;
//! - a remote URL that does not answer at all (a refused connection, a DNS
//!   failure or a timeout).
//!
//! Then, for a server with none of those problems, a real start (module
//! `start`): spawn or connect, the MCP handshake and the tool listing, within
//! a short start timeout ([`START_TIMEOUT`], the server's `startupTimeout`,
//! or [`CheckOptions::start_timeout`]). A server that exits, hangs, answers
//! 401 or 404, or cannot list its tools is reported with the reason, its
//! stderr tail and the fix (create the folder, check the token, raise the
//! timeout); one that works, with its tool count and start time.
//!
//! Findings never hold an expanded secret: URLs are shown as written, masked
//! (by the crate's one redaction module), failure reasons are scrubbed, and
//! the config's env and header values are masked in a server's stderr too.

mod check;
mod finding;
mod fix;
mod json;
mod reach;
mod report;
mod start;

pub use check::{URL_TIMEOUT, check_servers};
pub use finding::{Finding, Problem};
pub use fix::Fix;
pub use json::report_json;
pub use report::{CheckOptions, ServerCheck, diagnose, diagnose_server};
pub(crate) use start::is_certificate_error;
pub use start::{START_TIMEOUT, Started};
