//! `completion/complete`: what a server suggests for an argument of a
//! prompt or of a resource template, as the user types it.

use rmcp::model::{
    ArgumentInfo, ClientRequest, CompleteRequest, CompleteRequestParams, CompleteResult,
    CompletionContext, ErrorCode, Reference, ServerResult,
};

use super::{CallOptions, Pool, PoolError, error::Feature, error::unexpected};

impl Pool {
    /// The values `server` suggests for argument `argument` of `reference`
    /// ([`Reference::for_prompt`] or [`Reference::for_resource`], a
    /// template's URI), given what was typed so far (`value`) and, in
    /// `context`, the values of the other arguments already chosen.
    /// Timeouts and cancellation as for [`Pool::request`].
    /// [`PoolError::NotOffered`] if the server offers no completion.
    pub async fn complete(
        &self,
        server: &str,
        reference: Reference,
        argument: &str,
        value: &str,
        context: Option<CompletionContext>,
        options: &CallOptions,
    ) -> Result<CompleteResult, PoolError> {
        let subject = match (reference.as_prompt_name(), reference.as_resource_uri()) {
            (Some(prompt), _) => {
                format!("completion of argument \"{argument}\" of prompt \"{prompt}\"")
            }
            (None, Some(uri)) => {
                format!("completion of argument \"{argument}\" of resource template \"{uri}\"")
            }
            (None, None) => format!("completion of argument \"{argument}\""),
        };
        let mut params = CompleteRequestParams::new(reference, ArgumentInfo::new(argument, value));
        if let Some(context) = context {
            params = params.with_context(context);
        }
        let request = ClientRequest::CompleteRequest(CompleteRequest::new(params));
        match self
            .request_offered(server, Feature::Completions, request, options)
            .await
        {
            Ok(ServerResult::CompleteResult(result)) => Ok(result),
            Ok(other) => Err(unexpected(server, "completion/complete", &other)),
            Err(PoolError::Server { code, message, .. }) if code == ErrorCode::INVALID_PARAMS.0 => {
                Err(PoolError::InvalidParams {
                    server: server.to_owned(),
                    subject,
                    message,
                })
            }
            Err(e) => Err(e),
        }
    }
}
