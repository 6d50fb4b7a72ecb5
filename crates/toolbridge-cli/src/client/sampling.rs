//! Sampling from the command line: declined, with a message saying why.

#![allow(deprecated)] // sampling: SEP-2577 deprecates it, the protocols carry it

use futures::future::BoxFuture;
use toolbridge::{
    pool::{RequestOrigin, SamplingHandler},
    rmcp_model::{CreateMessageRequestParams, CreateMessageResult, ErrorCode, ErrorData},
};

/// Declines every `sampling/createMessage`: the command line has no LLM.
/// Declared all the same, so that servers show their sampling tools and
/// the user learns why they cannot run here.
#[derive(Debug, Clone, Copy)]
pub struct NoLlm {
    /// `-q`: the note on stderr is left out.
    pub quiet: bool,
}

/// The reason given to the server (and so, usually, to the user in the
/// tool's error).
pub fn declined(server: &str) -> String {
    format!(
        "toolbridge has no LLM configured; it declined server \"{server}\"'s sampling request \
         (a program using the toolbridge library can answer it with a SamplingHandler)"
    )
}

impl SamplingHandler for NoLlm {
    fn create_message(
        &self,
        origin: RequestOrigin,
        _params: CreateMessageRequestParams,
    ) -> BoxFuture<'_, Result<CreateMessageResult, ErrorData>> {
        let message = declined(&origin.server);
        if !self.quiet {
            eprintln!("toolbridge: {}", crate::terminal::for_stderr(&message));
        }
        // -1: the spec's "user rejected sampling request".
        Box::pin(async move { Err(ErrorData::new(ErrorCode(-1), message, None)) })
    }
}
