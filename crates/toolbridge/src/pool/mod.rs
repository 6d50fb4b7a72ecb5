//! The connection pool: the spec's McpService.
//!
//! One [`Pool`] holds every configured server. Each server has a slot that
//! connects lazily on first use (or all at once with [`Pool::connect_all`]),
//! caches the server's tool list until the server says it changed (on disk
//! too, between runs, with [`PoolOptions::tool_cache`]), and
//! restarts the server on the next use after it crashed, with backoff when it
//! keeps crashing.
//!
//! Ownership: one supervisor task per connected server owns its rmcp
//! `RunningService` (which owns the transport). Callers talk to it only
//! through the rmcp `Peer`, a channel handle, so calls to one server run
//! concurrently and a slow server never blocks another. When the service
//! ends, the supervisor marks the slot disconnected; in-flight calls fail at
//! once with the server's stderr tail.
//!
//! [`Pool::reload`] makes a new config's servers the pool's (`reload`,
//! over the server set in `servers`): unchanged servers keep their
//! connection and calls in flight, added ones start on first use, removed
//! and changed ones are stopped (their caches and pins dropped with them),
//! and it says what changed ([`Changes`]).
//!
//! Dropping the last handle to a pool (or to a connection it replaced)
//! closes its servers in the background, the graceful way; if the runtime
//! stops first, each server's process group is killed. [`Pool::close_all`]
//! does the same and waits for it.
//!
//! Listing follows `nextCursor` page by page (`pages`), bounded: a cursor
//! seen before, more than [`MAX_TOOL_PAGES`] pages or more than
//! [`MAX_LISTED_TOOLS`] tools end it with [`PoolError::EndlessListing`]. A
//! tool with an invalid definition, or a second tool with a name already
//! listed, is left out and reported in [`ToolListing::skipped`]; the rest of
//! the server's tools are kept.
//!
//! With [`PoolOptions::pins`], [`Pool::list_server_tools`] (which every
//! listing the pool hands out goes through) leaves out the tools whose
//! definition is not the pinned one, and a call of one is
//! [`PoolError::Withheld`] ([`crate::pins`]); [`Pool::withheld_tools`],
//! [`Pool::pin_diff`] and [`Pool::approve_tools`] are the rest of it.
//!
//! Resources, resource templates and prompts are listed the same way (all
//! pages, the same bounds) and cached in memory per server until the
//! server's `notifications/resources/list_changed` or
//! `notifications/prompts/list_changed`, or a reconnect
//! (`listing`, `catalog`). Reading a resource, getting a prompt and
//! completion are single requests through [`Pool::request`]; a server that
//! does not declare the capability is [`PoolError::NotOffered`]
//! (`capability`). Resource updates reach [`Pool::watch_resource_updates`].
//!
//! Notifications: a 2025-11-25 (or older) server sends its list changes and
//! resource updates on the connection itself; a 2026-07-28 server sends them
//! only on a `subscriptions/listen` stream, which the pool keeps open per
//! connection, naming the subscribed URIs (`listen`). Both go through the
//! same code (`list_events`).
//!
//! Two generations: a server reached over 2026-07-28 that also speaks
//! 2025-11-25 gets the requests of callers whose client is a 2025-11-25
//! session client that may be asked something ([`CallOptions::session_client`])
//! over a second, 2025-11-25 connection beside the first, opened on first
//! need and closed with it (`session_connection`).
//!
//! Skills (SEP-2640): [`Pool::list_skills`], [`Pool::load_skill`] and
//! [`Pool::read_skill_file`] list a server's skills, load one and read its
//! files lazily, each checked against the skill's entry (`skills`).
//!
//! Search: [`Pool::search_tools`] ranks the listed tools for a task in
//! words, from an index rebuilt whenever a server's list changes (`search`).
//!
//! Tracing: each connection's tasks run in an `mcp_server` span (field
//! `server`); each call in a `tool_call` span (`server`, `tool`, `call_id`),
//! each listing in a `list_tools` span (`server`). No argument, header or
//! environment value is ever recorded.

mod budget;
mod cache;
mod capability;
mod catalog;
mod client_features;
mod completion;
mod connection;
mod disk_cache;
mod elicitation_form;
mod error;
mod failure_kind;
mod in_flight;
mod input_required;
mod list_events;
mod listen;
mod listing;
mod logs;
mod pages;
mod param_headers;
mod progress;
mod prompts;
mod reload;
mod request;
mod resources;
mod search;
mod servers;
mod service;
mod session_connection;
mod skills;
mod slot;
mod status;
mod task_events;
mod tasks;

pub use client_features::{
    APP_MIME_TYPE, ClientFeatures, ElicitationHandler, LogHandler, RequestOrigin, RootsProvider,
    SamplingHandler, UI_EXTENSION,
};
pub use connection::ConnectionInfo;
pub use disk_cache::ToolCacheOptions;
pub use elicitation_form::{Choice, FieldKind, Form, FormField};
pub use error::{Feature, PoolError};
pub use failure_kind::FailureKind;
pub use listing::Listing;
#[cfg_attr(not(feature = "http"), allow(unused_imports))]
pub(crate) use logs::RELATED_REQUEST_META;
pub use pages::{MAX_LISTED_TOOLS, MAX_TOOL_PAGES, SkipReason, SkippedTool};
pub use progress::{ProgressForward, forward_progress};
pub use reload::Changes;
pub use search::{ToolHit, ToolSearch};
pub use service::{CallOptions, Pool, PoolOptions, StartReport, ToolListing};
pub use skills::{LoadedSkill, MAX_SKILL_BYTES, MAX_SKILL_FILES, SkillFile, skill_file_path};
pub use status::{Failure, ServerStatus};
