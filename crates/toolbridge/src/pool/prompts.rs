//! A server's prompts: listing them, and getting one with its arguments.

use std::sync::Arc;

use rmcp::model::{
    ClientRequest, ErrorCode, GetPromptRequest, GetPromptRequestParams, GetPromptResult,
    JsonObject, Prompt, ServerResult,
};

use super::{CallOptions, Listing, Pool, PoolError, error::Feature, error::unexpected};

impl Pool {
    /// The prompts of `server` (all pages), from its cache when it is
    /// fresh. The cache is dropped when the server sends
    /// `notifications/prompts/list_changed`, and on a reconnect.
    /// [`PoolError::NotOffered`] if the server offers no prompts.
    pub async fn list_prompts(&self, server: &str) -> Result<Arc<Vec<Prompt>>, PoolError> {
        self.list_items(server).await
    }

    /// The prompts of each of `servers`, listed in parallel. A server that
    /// fails is in [`Listing::failures`]; one without prompts has none.
    pub async fn list_prompts_of(&self, servers: &[String]) -> Listing<Prompt> {
        self.list_items_of(servers).await
    }

    /// The messages of prompt `name` of `server`, filled in with
    /// `arguments` (MCP prompt arguments are strings). Timeouts and
    /// cancellation as for [`Pool::request`].
    ///
    /// When the server refuses (servers send the same error for an unknown
    /// prompt and for wrong arguments), its prompt list says which:
    /// [`PoolError::UnknownPrompt`] if it does not list `name`, else
    /// [`PoolError::InvalidParams`] for `-32602`, else the server's error.
    pub async fn get_prompt(
        &self,
        server: &str,
        name: &str,
        arguments: Option<JsonObject>,
        options: &CallOptions,
    ) -> Result<GetPromptResult, PoolError> {
        let mut params = GetPromptRequestParams::new(name);
        if let Some(arguments) = arguments {
            params = params.with_arguments(arguments);
        }
        let request = ClientRequest::GetPromptRequest(GetPromptRequest::new(params));
        match self
            .request_offered(server, Feature::Prompts, request, options)
            .await
        {
            Ok(ServerResult::GetPromptResult(result)) => Ok(result),
            Ok(other) => Err(unexpected(server, "prompts/get", &other)),
            // Servers say "no such prompt" in different ways (`-32602`
            // from the TypeScript SDK, `-32603` from Python's 2.x): the list
            // tells.
            Err(error @ PoolError::Server { .. }) => {
                Err(self.refused_prompt(server, name, error).await)
            }
            Err(e) => Err(e),
        }
    }

    /// Why `server` refused to get prompt `name` with `error`: the prompt
    /// is not listed, or the arguments were refused (`-32602`), or `error`
    /// stands as the server gave it.
    async fn refused_prompt(&self, server: &str, name: &str, error: PoolError) -> PoolError {
        // A stale list would wrongly say the prompt is unknown.
        if let Ok(slot) = self.slot(server) {
            slot.catalog.prompts.invalidate();
        }
        if let Ok(prompts) = self.list_prompts(server).await
            && !prompts.iter().any(|p| p.name == name)
        {
            return PoolError::UnknownPrompt {
                server: server.to_owned(),
                prompt: name.to_owned(),
                known: prompts.iter().map(|p| p.name.clone()).collect(),
            };
        }
        match error {
            PoolError::Server { code, message, .. } if code == ErrorCode::INVALID_PARAMS.0 => {
                PoolError::InvalidParams {
                    server: server.to_owned(),
                    subject: format!("the arguments of prompt \"{name}\""),
                    message,
                }
            }
            other => other,
        }
    }

    /// An event each time `server` sends `notifications/prompts/list_changed`,
    /// from now on, across restarts: for a program that passes the list on
    /// (the gateway tells its clients). Several changes while nobody reads
    /// may arrive as one
    /// ([`RecvError::Lagged`](tokio::sync::broadcast::error::RecvError::Lagged)).
    pub fn watch_prompt_list_changes(
        &self,
        server: &str,
    ) -> Result<tokio::sync::broadcast::Receiver<()>, PoolError> {
        Ok(self.slot(server)?.catalog.prompt_changes.subscribe())
    }
}
