//! [`ToolRegistry`]: the tools offered to a model, and the way back from the
//! model's calls to them.
//!
//! A call is routed by the tool its name resolved to in the
//! [`NameTable`](crate::format::NameTable) the model's response was read
//! with ([`ToolCall::tool`]), never by the name string itself; a call that
//! did not resolve, or whose arguments are unusable, fails with
//! [`ToolCall::invocation`]'s message.

use std::{collections::HashMap, sync::Arc};

use futures::StreamExt;

use super::{McpToolAdapter, Tool};
use crate::format::{ToolCall, ToolOutcome, ToolRef};

/// How many calls of one batch ([`ToolRegistry::execute_calls`]) run at
/// once. Each result is held to its budget as it arrives, so what a batch
/// holds is bounded by this many raw results in flight, not by the size of
/// the batch: 100 calls returning 15 MB each once held 5.4 GB.
pub const MAX_PARALLEL_CALLS: usize = 8;

/// Registering a tool failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RegistryError {
    /// Another tool already has the name, or is the same server's same
    /// tool; two tools must never silently replace each other.
    #[error("a tool named \"{0}\" is already registered")]
    Duplicate(String),
}

/// The tools offered to a model, by the server tool they stand for and by
/// exposed name.
#[derive(Default, Clone)]
pub struct ToolRegistry {
    /// What calls are routed by.
    by_tool: HashMap<ToolRef, Arc<McpToolAdapter>>,
    /// Exposed name → tool, for [`ToolRegistry::get`] and duplicate checks.
    by_name: HashMap<String, ToolRef>,
    /// Registration order, for listings.
    order: Vec<ToolRef>,
    /// Drop the `null`s an OpenAI strict-mode model sends for optional
    /// properties before calling the server.
    strip_strict_nulls: bool,
}

impl ToolRegistry {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    /// Whether to drop the `null`s a strict-mode model sends for the
    /// properties a tool's schema leaves optional (see
    /// [`strip_strict_nulls`](crate::format::openai::strip_strict_nulls)).
    pub fn set_strip_strict_nulls(&mut self, strip: bool) {
        self.strip_strict_nulls = strip;
    }

    /// Adds `tool`; a name or a server tool that is already registered is
    /// an error.
    pub fn register(&mut self, tool: Arc<McpToolAdapter>) -> Result<(), RegistryError> {
        let name = tool.name().to_owned();
        let key = ToolRef::new(&tool.mcp_tool().server_id, &tool.mcp_tool().name);
        if self.by_name.contains_key(&name) || self.by_tool.contains_key(&key) {
            return Err(RegistryError::Duplicate(name));
        }
        self.order.push(key.clone());
        self.by_name.insert(name, key.clone());
        self.by_tool.insert(key, tool);
        Ok(())
    }

    /// The tool exposed as `name`.
    pub fn get(&self, name: &str) -> Option<&Arc<McpToolAdapter>> {
        self.by_name.get(name).and_then(|key| self.by_tool.get(key))
    }

    /// The tool that runs `tool` of its server.
    pub fn get_tool(&self, tool: &ToolRef) -> Option<&Arc<McpToolAdapter>> {
        self.by_tool.get(tool)
    }

    /// The tools, in registration order.
    pub fn tools(&self) -> impl Iterator<Item = &Arc<McpToolAdapter>> {
        self.order.iter().filter_map(|key| self.by_tool.get(key))
    }

    /// How many tools are registered.
    pub fn len(&self) -> usize {
        self.order.len()
    }

    /// True when no tool is registered.
    pub fn is_empty(&self) -> bool {
        self.order.is_empty()
    }

    /// Runs `calls` concurrently, at most [`MAX_PARALLEL_CALLS`] at once,
    /// and pairs each with its outcome, in order. An unknown tool or
    /// unusable arguments become a failed outcome whose message the model
    /// can read; nothing here panics or aborts the batch.
    pub async fn execute_calls(&self, calls: Vec<ToolCall>) -> Vec<(ToolCall, ToolOutcome)> {
        // By index: a closure taking `&ToolCall` makes the future's `Send`
        // unprovable to rustc (its higher-ranked lifetime, rust#64552), and
        // embeddings run this future on a multi-thread runtime.
        let calls_ref = &calls;
        let outcomes: Vec<ToolOutcome> = futures::stream::iter(0..calls.len())
            .map(|i| self.execute_call(&calls_ref[i]))
            .buffered(MAX_PARALLEL_CALLS)
            .collect()
            .await;
        calls.into_iter().zip(outcomes).collect()
    }

    async fn execute_call(&self, call: &ToolCall) -> ToolOutcome {
        let (tool_ref, arguments) = match call.invocation() {
            Ok(invocation) => invocation,
            Err(message) => return ToolOutcome::Failed(message),
        };
        let Some(tool) = self.by_tool.get(tool_ref) else {
            return ToolOutcome::Failed(format!(
                "tool `{}` (tool \"{}\" of server \"{}\") is not registered; \
                 call one of the tools listed in the request",
                call.name, tool_ref.tool, tool_ref.server_id
            ));
        };
        let mut arguments = arguments.clone();
        if self.strip_strict_nulls {
            crate::format::openai::strip_strict_nulls(&mut arguments, tool.parameters());
        }
        // The pool's span for the call carries the provider's call id.
        match tool.call_with_id(arguments, call.id.clone()).await {
            Ok(result) => ToolOutcome::Completed(result),
            Err(e) => ToolOutcome::Failed(e.to_string()),
        }
    }
}
