//! The config file: which MCP servers exist and how to reach them.
//!
//! The format is the `mcpServers` JSON that Claude Desktop, Cursor and Claude
//! Code already use; the files of VS Code (`servers`, `mcp.servers`), Zed
//! (`context_servers`), Windsurf, Cline and `~/.claude.json` are read as
//! they are (see `docs/config.md`). Every read is JSONC. [`ServerSpec`] is
//! one server after validation and expansion: everything the pool needs.
//!
//! - Reading: [`locate_config`] finds the file (and whether the user named
//!   it), [`Config::load_located`] checks it (or supplies the built-in
//!   example server at the default location), [`Config::resolve`] and
//!   [`Config::resolve_enabled`] expand `${VAR}`, `${userHome}`,
//!   `${workspaceFolder}`, `${input:ID}` and `envFile`, and give
//!   [`ServerSpec`]s; [`Config::listing`] shows servers with secrets masked;
//!   [`Config::settings`] is the global `"toolbridge"` object;
//!   [`Config::warnings`] the keys that look like mistakes;
//!   [`Config::profiles`] the gateway's profiles ([`Profile`]). One model: every
//!   server is a record as written (checked, unexpanded), from which the
//!   spec, the listing and `doctor`'s checks are derived.
//! - Secrets: expanded env and header values live in a [`SecretMap`], whose
//!   `Debug` shows `***`.
//! - Writing: [`edit`] changes a [`Document`] under a lock and saves it
//!   atomically, rewriting only the text of the servers that changed, in the
//!   key and shape the file's application reads; [`NewServer`] builds a
//!   record for `servers add`; [`import`] merges other clients' files.
//! - Errors: [`ConfigError`], naming file, line and column, server and field.

mod document;
mod dotenv;
mod edit;
mod env;
mod error;
mod expand;
mod fields;
mod file;
mod gateway;
mod import;
mod jsonc;
mod layout;
mod listing;
mod locate;
mod new_server;
mod oauth_record;
mod patch;
mod profile;
#[cfg(test)]
mod properties;
mod rate_limits;
mod record;
mod resolve;
mod rules;
mod sandbox;
mod secret;
pub mod server_keys;
pub mod server_name;
mod settings;
mod settings_keys;
mod span;
mod spec;
mod warning;

pub use document::Document;
pub use edit::write_atomic;
pub use edit::{NEW_FILE_MODE, NEW_FILE_MODE_SECRET, edit, edit_private};
pub(crate) use edit::{Unsynced, write_atomic_unsynced};
pub use env::{Env, Input, ProcessEnv};
pub use error::{ConfigError, Location};
pub use expand::input_variable;
pub(crate) use expand::{expand, unset_variables};
pub use file::{Config, EXAMPLE_SERVER};
pub use gateway::{GatewayOAuth, GatewaySettings, GatewayTracing};
pub use import::{ImportReport, Importable, import, import_servers, importable};
pub use listing::ServerListing;
pub use locate::{
    CONFIG_ENV_VAR, ConfigLocation, locate, locate_config, locate_config_with, locate_with,
    user_cache_dir, user_data_dir,
};
pub use new_server::{NewServer, NewTarget};
pub use profile::{Discovery, PROFILES_KEY, Profile, ToolMatch};
pub use rate_limits::{LIMITS_KEY, Rate, RateLimitSettings, UpstreamBound};
pub(crate) use record::ServerRecord;
pub use rules::{RULES_KEY, Rule};
pub use secret::SecretMap;
pub use settings::Settings;
pub use settings_keys::{GATEWAY_KEY, SETTINGS_KEY};
pub use spec::{
    ClientAuth, DEFAULT_CALL_TIMEOUT, IdpSpec, MAX_TIMEOUT, OAuthGrant, OAuthSpec, RemoteSpec,
    SecretSource, ServerSpec, StdioSpec, TransportKind, TransportSpec, timeout_from_secs,
};
pub use warning::ConfigWarning;
