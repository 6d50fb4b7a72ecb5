//! [`ToolRegistry`]: the tools offered to a model, by the name the model uses.

use std::{collections::HashMap, sync::Arc};

use futures::future::join_all;

use super::Tool;
use crate::format::{ToolCall, ToolOutcome};

/// Registering a tool failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RegistryError {
    /// Another tool already has the name; two servers' tools must never
    /// silently replace each other.
    #[error("a tool named \"{0}\" is already registered")]
    Duplicate(String),
}

/// The tools offered to a model, looked up by exposed name.
#[derive(Default, Clone)]
pub struct ToolRegistry {
    by_name: HashMap<String, Arc<dyn Tool>>,
    /// Registration order, for listings.
    order: Vec<String>,
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

    /// Adds `tool`; a name that is already taken is an error.
    pub fn register(&mut self, tool: Arc<dyn Tool>) -> Result<(), RegistryError> {
        let name = tool.name().to_owned();
        if self.by_name.contains_key(&name) {
            return Err(RegistryError::Duplicate(name));
        }
        self.order.push(name.clone());
        self.by_name.insert(name, tool);
        Ok(())
    }

    /// The tool named `name`.
    pub fn get(&self, name: &str) -> Option<&Arc<dyn Tool>> {
        self.by_name.get(name)
    }

    /// The tools, in registration order.
    pub fn tools(&self) -> impl Iterator<Item = &Arc<dyn Tool>> {
        self.order.iter().filter_map(|n| self.by_name.get(n))
    }

    /// How many tools are registered.
    pub fn len(&self) -> usize {
        self.order.len()
    }

    /// True when no tool is registered.
    pub fn is_empty(&self) -> bool {
        self.order.is_empty()
    }

    /// Runs `calls` concurrently and pairs each with its outcome, in order.
    /// An unknown tool or unusable arguments become a failed outcome whose
    /// message the model can read; nothing here panics or aborts the batch.
    pub async fn execute_calls(&self, calls: Vec<ToolCall>) -> Vec<(ToolCall, ToolOutcome)> {
        let outcomes = join_all(calls.iter().map(|call| self.execute_call(call))).await;
        calls.into_iter().zip(outcomes).collect()
    }

    async fn execute_call(&self, call: &ToolCall) -> ToolOutcome {
        let mut arguments = match &call.arguments {
            Ok(arguments) => arguments.clone(),
            Err(why) => {
                return ToolOutcome::Failed(format!(
                    "invalid arguments for `{}`: {why}",
                    call.name
                ));
            }
        };
        let Some(tool) = self.get(&call.name) else {
            return ToolOutcome::Failed(format!(
                "unknown tool `{}`; call one of the tools listed in the request",
                call.name
            ));
        };
        if self.strip_strict_nulls {
            crate::format::openai::strip_strict_nulls(&mut arguments, tool.parameters());
        }
        match tool.call(arguments).await {
            Ok(result) => ToolOutcome::Completed(result),
            Err(e) => ToolOutcome::Failed(e.to_string()),
        }
    }
}
