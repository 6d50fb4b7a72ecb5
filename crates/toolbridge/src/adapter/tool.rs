//! The [`Tool`] trait: what an agent engine needs of a tool.

use futures::future::BoxFuture;
use rmcp::model::{CallToolResult, JsonObject};

use crate::{format::flatten_content, pool::PoolError};

/// Why a tool produced no result.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ToolError {
    /// The pool or the server failed (timeout, crash, protocol error).
    #[error(transparent)]
    Pool(#[from] PoolError),
}

/// A tool an agent engine can offer to a model and execute.
pub trait Tool: Send + Sync {
    /// The provider-safe name the model sees.
    fn name(&self) -> &str;
    /// What the tool does.
    fn description(&self) -> &str;
    /// The JSON Schema of the arguments, as the server sent it.
    fn parameters(&self) -> &JsonObject;
    /// Runs the tool and returns the server's result (an adapter may hold
    /// it to a size budget first, see [`super::ResultBudget`]).
    fn call(&self, arguments: JsonObject) -> BoxFuture<'_, Result<CallToolResult, ToolError>>;
    /// Runs the tool and returns its result flattened to text, the spec's
    /// `execute`: text as is, `[Image: mime]`, `[Audio: mime]`, one item per
    /// line. A failure becomes its message, so the model can read it.
    fn execute(&self, arguments: JsonObject) -> BoxFuture<'_, String> {
        Box::pin(async move {
            match self.call(arguments).await {
                Ok(result) => flatten_content(&result),
                Err(e) => format!("Error: {e}"),
            }
        })
    }
}
