//! How a stateless (2026-07-28) client's request reaches its upstream:
//! held open while the upstream asks the client something
//! ([`crate::held_calls`]), or, when the client can be asked nothing and
//! resumes nothing, relayed as it came (an input-required result goes back
//! as the upstream sent it).

use rmcp::{
    ErrorData,
    model::{
        CallToolRequest, CallToolRequestParams, CallToolResponse, ClientRequest, ServerResult,
    },
};
use toolbridge::pool::CallOptions;

use crate::{
    gateway::{Gateway, to_mcp_error},
    held_calls::{self, HeldCall},
    request_errors::unexpected,
};

/// The `tools/call` of `tool` (the upstream's name) with the client's
/// arguments and, on a retry, its answers and the upstream's `requestState`.
pub(crate) fn tool_request(tool: &str, request: CallToolRequestParams) -> ClientRequest {
    let mut params = CallToolRequestParams::new(tool.to_owned());
    params.arguments = request.arguments;
    params.input_responses = request.input_responses;
    params.request_state = request.request_state;
    ClientRequest::CallToolRequest(CallToolRequest::new(params))
}

/// A `tools/call` answer as the tool handler returns it.
pub(crate) fn tool_response(
    server: &str,
    result: ServerResult,
) -> Result<CallToolResponse, ErrorData> {
    match result {
        ServerResult::CallToolResult(result) => Ok(CallToolResponse::Complete(result)),
        ServerResult::InputRequiredResult(result) => Ok(CallToolResponse::InputRequired(result)),
        _ => Err(unexpected(server, "tools/call")),
    }
}

/// `tool` of `server` called for a stateless client: an input-required
/// result (2026-07-28) goes back to the client as it came, and the client's
/// retry (its answers and the upstream's `requestState`) goes on to the
/// upstream, so no call is held open in the gateway.
pub(crate) async fn relay_call(
    pool: &toolbridge::pool::Pool,
    server: &str,
    tool: &str,
    request: CallToolRequestParams,
    options: &CallOptions,
) -> Result<CallToolResponse, ErrorData> {
    let result = pool
        .request(server, tool_request(tool, request), options)
        .await
        .map_err(to_mcp_error)?;
    tool_response(server, result)
}

/// The `requestState` of a retry of `request` (a call, a prompt, a read:
/// the requests an upstream may ask something during) and the answers it
/// brings.
fn retry_of(
    request: &mut ClientRequest,
) -> Option<(&str, &mut Option<rmcp::model::InputResponses>)> {
    let (state, responses) = match request {
        ClientRequest::CallToolRequest(r) => {
            (&r.params.request_state, &mut r.params.input_responses)
        }
        ClientRequest::GetPromptRequest(r) => {
            (&r.params.request_state, &mut r.params.input_responses)
        }
        ClientRequest::ReadResourceRequest(r) => {
            (&r.params.request_state, &mut r.params.input_responses)
        }
        _ => return None,
    };
    Some((state.as_deref()?, responses))
}

/// A stateless client's `request` to `server`: a retry naming a request
/// the gateway holds resumes it with the client's answers; any other
/// request starts (held open whenever its upstream asks the client
/// something mid-way).
pub(crate) async fn held_request(
    gateway: &Gateway,
    pool: &toolbridge::pool::Pool,
    server: &str,
    mut request: ClientRequest,
    options: CallOptions,
    client: held_calls::Client<'_>,
) -> Result<ServerResult, ErrorData> {
    let held = gateway.held_calls();
    let resumed =
        retry_of(&mut request).and_then(|(state, responses)| held.resume(state, responses));
    let call = match resumed {
        Some(call) => call,
        None => {
            let (pool, server) = (pool.clone(), server.to_owned());
            let features = options.client_features.clone().unwrap_or_default();
            HeldCall::start(features, client.declared, move |features| async move {
                let options = CallOptions {
                    client_features: Some(features),
                    ..options
                };
                pool.request(&server, request, &options)
                    .await
                    .map_err(to_mcp_error)
            })
        }
    };
    held_calls::respond(held, call.next(client.progress).await)
}
