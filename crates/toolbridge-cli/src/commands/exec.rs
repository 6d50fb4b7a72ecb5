//! `toolbridge exec --format F`: run the tool calls in a provider's response
//! and print the messages to append to the conversation.
//!
//! Only the servers the calls use are started. The calls' names are
//! resolved through the same name table `tools --format` built, from the
//! servers' tool lists, which come from the tool-list cache after a `tools`
//! (a server whose list is not cached is started to list it); then each
//! call starts its own server, and no other.
//!
//! With deferred loading in client mode (`tools --defer-loading client`),
//! the model's searches are answered too: Anthropic's with `tool_reference`
//! blocks, the Responses API's with a `tool_search_output` item holding the
//! definitions found, over the same tools and names. Searches the provider
//! runs itself need nothing from the client and are left alone.

use std::process::ExitCode;

use serde_json::Value;
use toolbridge::{
    adapter::{McpToolAdapter, ToolRegistry},
    format::{
        Format, FormatOptions, NameStyle, NameTable, ToolOutcome, convert_tools,
        deferred::{self, CLIENT_SEARCH_TOOL},
        parse_calls, render_results,
    },
    pool::PoolError,
};

use crate::{
    context::Context,
    outcome::{Failure, Outcome},
};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The provider whose response is read: openai, openai-responses, anthropic or gemini.
    #[arg(long)]
    pub format: Format,
    /// The response (a whole response, a message, or its list of calls): a file, or - for stdin.
    #[arg(long, value_name = "FILE|-", default_value = "-")]
    pub input: String,
    /// Only these servers' tools (as given to `tools --server`); default: every enabled server.
    #[arg(long = "server", value_name = "NAME")]
    pub servers: Vec<String>,
    /// The tools were sent in OpenAI strict mode: drop the nulls the model
    /// sends for optional properties before calling the server.
    #[arg(long)]
    pub strict: bool,
}

pub async fn run(args: Args, ctx: &Context) -> Outcome {
    let input = crate::input::response(&args.input).map_err(Failure::usage)?;
    // Before any server starts: an error body has no calls to run.
    if let Some(message) = provider_error(&input) {
        return Err(Failure::usage(anyhow::anyhow!(
            "the {} response is an error, not tool calls: {message}",
            args.format
        )));
    }
    let pool = &ctx.servers()?.pool;
    let servers = if args.servers.is_empty() {
        pool.active_server_names()
    } else {
        args.servers
    };
    let listing = pool.list_tools_of(&servers).await;
    for (server, error) in &listing.failures {
        tracing::warn!(server = %server, error = %error, "skipping the server's tools");
    }
    let adapters = McpToolAdapter::wrap_all(pool, listing.tools, NameStyle::Mcp);
    let tools: Vec<_> = adapters.iter().map(|a| a.mcp_tool().clone()).collect();
    // The same names `toolbridge tools --format` gave the model.
    let names = NameTable::for_tools(&tools);
    let mut registry = ToolRegistry::new();
    registry.set_strip_strict_nulls(args.strict);
    for adapter in adapters {
        registry.register(adapter).map_err(Failure::usage)?;
    }
    let mut calls = parse_calls(args.format, &input, &names).map_err(Failure::usage)?;
    let searches = deferred::search_calls(args.format, &input);
    if !searches.is_empty() {
        // Toolbridge's own search tool is not a server's tool.
        calls.retain(|call| call.tool.is_some() || call.name != CLIENT_SEARCH_TOOL);
    }
    if calls.is_empty() && searches.is_empty() {
        tracing::warn!("the {} response has no tool calls", args.format);
    }
    let mut results = registry.execute_calls(calls).await;
    explain_unlisted_servers(&mut results, &listing.failures);
    let mut messages = render_results(args.format, &results).map_err(Failure::usage)?;
    if !searches.is_empty() {
        let answers = answer_searches(pool, &servers, args.format, &names, &searches).await;
        let target = match args.format {
            Format::Anthropic => messages.get_mut("content").and_then(|c| c.as_array_mut()),
            _ => messages.as_array_mut(),
        };
        if let Some(target) = target {
            target.extend(answers);
        }
    }
    crate::output::json(&messages)?;
    Ok(ExitCode::SUCCESS)
}

/// How many tools one of the model's searches loads.
const SEARCH_LIMIT: usize = 5;

/// The answers to the model's `searches`, over the tools of `servers` under
/// the names `tools --format` gave them.
async fn answer_searches(
    pool: &toolbridge::Pool,
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
    results: &mut [(toolbridge::format::ToolCall, ToolOutcome)],
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
    format!(
        "mcp__{}__",
        toolbridge::format::names::replace_unsafe(server)
    )
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
