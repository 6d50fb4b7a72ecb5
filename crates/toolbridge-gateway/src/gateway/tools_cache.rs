//! [`ToolsCache`]: a view's tools as last built, with the lists they were
//! built from, so that a listing whose upstream lists are the same ones
//! (an `Arc` each, replaced when a server's list changes) costs no rebuild.

use std::sync::Arc;

use toolbridge::{config::Profile, tools::McpTool};

use crate::profile::ViewTools;

pub(super) struct ToolsCache {
    /// The servers the lists are of, in config order.
    pub(super) servers: Vec<String>,
    pub(super) profile: Arc<Profile>,
    pub(super) lists: Vec<Arc<Vec<McpTool>>>,
    pub(super) tools: Arc<ViewTools>,
    /// The tools the view's clients were last told of (listed, or told
    /// changed): what a list change is compared with, so that a listing
    /// between the change and its notification does not hide it.
    pub(super) announced: Arc<ViewTools>,
}
