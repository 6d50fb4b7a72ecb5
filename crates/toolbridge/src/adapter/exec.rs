//! [`execute_response`]: run the tool calls in a provider's response and
//! give the messages to append to the conversation, the one path behind
//! `toolbridge exec` and every embedding (the Python package's
//! `Pool.exec`).
//!
//! Only the servers the calls use are started. The calls' names are
//! resolved through the same name table the tool listings built
//! (`mcp__{server}__{tool}`), from the tool lists of the servers whose
//! names the calls could be ([`may_be_of_server`]), which come from the
//! pool's tool cache when it has them; then each call starts its own
//! server, and no other. A server no call names is neither started nor
//! listed.
//!
//! With deferred loading in client mode (`tools --defer-loading client`),
//! the model's searches are answered too: Anthropic's with `tool_reference`
//! blocks, the Responses API's with a `tool_search_output` item holding the
//! definitions found, over the same tools and names. Searches the provider
//! runs itself need nothing from the client and are left alone.

use serde_json::Value;

use super::{McpToolAdapter, RegistryError, ToolRegistry};
use crate::{
    format::{
        CallsError, Format, FormatOptions, NameStyle, NameTable, ToolCall, ToolOutcome,
        convert_tools,
        deferred::{self, CLIENT_SEARCH_TOOL},
        names::{may_be_of_server, replace_unsafe},
        parse_calls, render_results,
    },
    pool::{Pool, PoolError},
};

/// What [`execute_response`] may use.
#[derive(Debug, Clone, Default)]
pub struct ExecOptions {
    /// Only these servers' tools (default: every enabled server).
    pub servers: Option<Vec<String>>,
    /// The tools were sent in OpenAI strict mode: drop the nulls the model
    /// sends for optional properties before calling the server.
    pub strict: bool,
}

/// Why a response could not be run at all (a call that fails is a message
/// for the model instead, in the rendered results).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ExecError {
    /// The response is the provider's error body, not tool calls.
    #[error("the {format} response is an error, not tool calls: {message}")]
    ProviderError {
        /// The format the response was read as.
        format: Format,
        /// The provider's message (and its error type or code).
        message: String,
    },
    /// The response is not one of the format's shapes, or the format has
    /// no tool calls.
    #[error(transparent)]
    Calls(#[from] CallsError),
    /// Two servers' tools got one name.
    #[error(transparent)]
    Registry(#[from] RegistryError),
}

/// Runs the tool calls in `response` (a whole response, a message, or its
/// list of calls, in `format`) on `pool`'s servers, in parallel, and returns
/// the messages carrying their results back to the model
/// ([`render_results`]). A call to an unknown tool, or to a server whose
/// tools could not be listed, becomes an error message the model can read
/// ("server \"X\" failed to start: ..."), not an error of the whole batch.
pub async fn execute_response(
    pool: &Pool,
    format: Format,
    response: &Value,
    options: &ExecOptions,
) -> Result<Value, ExecError> {
    // Before any server starts: an error body has no calls to run.
    if let Some(message) = provider_error(response) {
        return Err(ExecError::ProviderError { format, message });
    }
    let servers = match &options.servers {
        Some(servers) => servers.clone(),
        None => pool.active_server_names(),
    };
    // The model's searches (deferred loading in client mode) are answered
    // over every server's tools; without them, the calls' names, read
    // before any server starts, say which servers to list (a slow server no
    // call uses delays nothing).
    let searches = deferred::search_calls(format, response);
    let servers: Vec<String> = if searches.is_empty() {
        let named = parse_calls(format, response, &NameTable::for_tools(&[]))?;
        servers
            .into_iter()
            .filter(|server| named.iter().any(|c| may_be_of_server(&c.name, server)))
            .collect()
    } else {
        servers
    };
    let listing = pool.list_tools_of(&servers).await;
    for (server, error) in &listing.failures {
        tracing::warn!(server = %server, error = %error, "skipping the server's tools");
    }
    let adapters = McpToolAdapter::wrap_all(pool, listing.tools, NameStyle::Mcp);
    let tools: Vec<_> = adapters.iter().map(|a| a.mcp_tool().clone()).collect();
    // The same names the tool listings in `format` gave the model.
    let names = NameTable::for_tools(&tools);
    let mut registry = ToolRegistry::new();
    registry.set_strip_strict_nulls(options.strict);
    for adapter in adapters {
        registry.register(adapter)?;
    }
    let mut calls = parse_calls(format, response, &names)?;
    if !searches.is_empty() {
        // Toolbridge's own search tool is not a server's tool.
        calls.retain(|call| call.tool.is_some() || call.name != CLIENT_SEARCH_TOOL);
    }
    if calls.is_empty() && searches.is_empty() {
        tracing::warn!("the {format} response has no tool calls");
    }
    let mut results = registry.execute_calls(calls).await;
    explain_unlisted_servers(&mut results, &listing.failures);
    let mut messages = render_results(format, &results)?;
    if !searches.is_empty() {
        let answers = answer_searches(pool, &servers, format, &names, &searches).await;
        let target = match format {
            Format::Anthropic => messages.get_mut("content").and_then(|c| c.as_array_mut()),
            _ => messages.as_array_mut(),
        };
        if let Some(target) = target {
            target.extend(answers);
        }
    }
    Ok(messages)
}

/// How many tools one of the model's searches loads.
const SEARCH_LIMIT: usize = 5;

/// The answers to the model's `searches`, over the tools of `servers` under
/// the names the tool listings gave them.
async fn answer_searches(
    pool: &Pool,
    servers: &[String],
    format: Format,
    names: &NameTable,
    searches: &[deferred::SearchCall],
) -> Vec<Value> {
    let (index, _) = pool.tool_index_of(servers).await;
    searches
        .iter()
        .map(|search| {
            let found: Vec<_> = index
                .search(&search.query, SEARCH_LIMIT)
                .into_iter()
                .map(|hit| hit.tool.clone())
                .collect();
            match format {
                Format::Anthropic => deferred::anthropic_references(
                    &search.id,
                    found
                        .iter()
                        .map(|t| names.name_for(t))
                        .collect::<Vec<_>>()
                        .iter()
                        .map(|n| n.as_ref()),
                ),
                _ => deferred::responses_search_output(
                    &search.id,
                    convert_tools(format, &found, names, &FormatOptions::default()),
                ),
            }
        })
        .collect()
}

/// A call to a server whose tools could not be listed (it failed to start,
/// say) did not resolve to a tool: tell the model why the server is missing
/// ("server \"X\" failed to start: ...") rather than "unknown tool". The
/// server is recognised by the name's `mcp__{server}__` prefix, for this
/// message only; calls are never routed by it.
fn explain_unlisted_servers(
    results: &mut [(ToolCall, ToolOutcome)],
    failures: &[(String, PoolError)],
) {
    for (call, outcome) in results.iter_mut() {
        if call.tool.is_some() {
            continue;
        }
        let failed = failures
            .iter()
            .filter(|(server, _)| call.name.starts_with(&name_prefix(server)))
            .max_by_key(|(server, _)| server.len());
        if let Some((_, error)) = failed {
            *outcome = ToolOutcome::Failed(error.to_string());
        }
    }
}

/// `mcp__{server}__` with the characters a provider refuses replaced, as
/// the name table writes it.
fn name_prefix(server: &str) -> String {
    format!("mcp__{}__", replace_unsafe(server))
}

/// The provider's own message when `response` is an API error body instead
/// of a response: OpenAI's and Gemini's `{"error": {"message": ...}}`
/// (Gemini's also as the one element of an array), Anthropic's
/// `{"type": "error", "error": {"type": ..., "message": ...}}`. The error's
/// type, status or code follows the message in parentheses.
fn provider_error(response: &Value) -> Option<String> {
    let response = match response {
        Value::Array(items) if items.len() == 1 => &items[0],
        other => other,
    };
    let error = response.get("error")?.as_object()?;
    // A response object that also has the fields of a reply is not an
    // error body (OpenAI's Responses objects carry `"error": null`).
    let message = error.get("message")?.as_str()?.trim();
    let kind = ["type", "status", "code"]
        .iter()
        .filter_map(|key| match error.get(*key)? {
            Value::String(s) if !s.is_empty() => Some(s.clone()),
            Value::Number(n) => Some(n.to_string()),
            _ => None,
        })
        .next();
    Some(match kind {
        Some(kind) => format!("{message} ({kind})"),
        None => message.to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::provider_error;
    use serde_json::json;

    #[test]
    fn openai_anthropic_and_gemini_error_bodies_give_their_message() {
        let openai = json!({"error": {"message": "Incorrect API key provided: sk-...abc.",
            "type": "invalid_request_error", "param": null, "code": "invalid_api_key"}});
        assert_eq!(
            provider_error(&openai).as_deref(),
            Some("Incorrect API key provided: sk-...abc. (invalid_request_error)")
        );
        let anthropic = json!({"type": "error", "error": {"type": "overloaded_error",
            "message": "Overloaded"}, "request_id": "req_1"});
        assert_eq!(
            provider_error(&anthropic).as_deref(),
            Some("Overloaded (overloaded_error)")
        );
        let gemini = json!([{"error": {"code": 400, "message": "API key not valid.",
            "status": "INVALID_ARGUMENT"}}]);
        assert_eq!(
            provider_error(&gemini).as_deref(),
            Some("API key not valid. (INVALID_ARGUMENT)")
        );
    }

    #[test]
    fn responses_are_not_errors() {
        for response in [
            json!({"id": "resp_1", "object": "response", "error": null, "output": []}),
            json!({"role": "assistant", "tool_calls": []}),
            json!({"candidates": [{"content": {"parts": []}}]}),
        ] {
            assert_eq!(provider_error(&response), None, "{response}");
        }
    }
}
