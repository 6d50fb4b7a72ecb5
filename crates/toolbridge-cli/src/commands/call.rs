//! `toolbridge call SERVER TOOL`: call one tool and print its result.

use std::{io::Read, time::Duration};

use anyhow::Context as _;
use toolbridge::pool::CallOptions;

use crate::cli::{Failure, Outcome, exit};

use super::Context;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The server's name in the config.
    pub server: String,
    /// The tool's name.
    pub tool: String,
    /// Arguments: a JSON object, @FILE to read it from a file, or - for stdin.
    #[arg(long, value_name = "JSON|@FILE|-")]
    pub args: Option<String>,
    /// Seconds the call may take (default: the server's `timeout`, else 120).
    #[arg(long, value_name = "SECS")]
    pub timeout: Option<f64>,
    /// Print the raw MCP result instead of the flattened text.
    #[arg(long)]
    pub json: bool,
}

pub async fn run(ctx: Context<'_>, args: &Args) -> Outcome {
    if let Some(error) = ctx.unresolved(&args.server) {
        return Err(Failure::usage(anyhow::anyhow!("{error}")));
    }
    let arguments = parse_arguments(args.args.as_deref()).map_err(Failure::usage)?;
    let timeout = match args.timeout {
        Some(secs) if secs.is_finite() && secs > 0.0 => Some(Duration::from_secs_f64(secs)),
        Some(secs) => {
            return Err(Failure::usage(anyhow::anyhow!(
                "--timeout must be a positive number of seconds, got {secs}"
            )));
        }
        None => None,
    };
    let result = ctx
        .pool
        .call_tool(
            &args.server,
            &args.tool,
            arguments,
            CallOptions {
                timeout,
                call_id: None,
            },
        )
        .await?;
    if args.json {
        crate::output::json(&result)?;
    } else {
        crate::output::line(&flatten(&result))?;
    }
    Ok(if result.is_error == Some(true) {
        exit::TOOL_ERROR
    } else {
        0
    })
}

/// Reads `--args`: inline JSON, `@FILE`, or `-` for stdin. Must be an object.
pub(crate) fn parse_arguments(
    raw: Option<&str>,
) -> anyhow::Result<Option<serde_json::Map<String, serde_json::Value>>> {
    let Some(raw) = raw else { return Ok(None) };
    let (text, origin) = if raw == "-" {
        let mut text = String::new();
        std::io::stdin()
            .read_to_string(&mut text)
            .context("reading --args from stdin")?;
        (text, "stdin".to_owned())
    } else if let Some(path) = raw.strip_prefix('@') {
        let text =
            std::fs::read_to_string(path).with_context(|| format!("reading --args file {path}"))?;
        (text, path.to_owned())
    } else {
        (raw.to_owned(), "--args".to_owned())
    };
    let value: serde_json::Value =
        serde_json::from_str(&text).with_context(|| format!("{origin} is not valid JSON"))?;
    match value {
        serde_json::Value::Object(map) => Ok(Some(map)),
        other => anyhow::bail!(
            "{origin} must be a JSON object of arguments, got {}",
            kind(&other)
        ),
    }
}

fn kind(v: &serde_json::Value) -> &'static str {
    match v {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "a boolean",
        serde_json::Value::Number(_) => "a number",
        serde_json::Value::String(_) => "a string",
        serde_json::Value::Array(_) => "an array",
        serde_json::Value::Object(_) => "an object",
    }
}

/// Placeholder until the format module lands: text as is, other content as a
/// placeholder.
fn flatten(result: &rmcp_model::CallToolResult) -> String {
    use rmcp_model::ContentBlock as C;
    result
        .content
        .iter()
        .map(|c| match c {
            C::Text(t) => t.text.clone(),
            C::Image(i) => format!("[Image: {}]", i.mime_type),
            C::Audio(a) => format!("[Audio: {}]", a.mime_type),
            _ => "[Resource]".to_owned(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

use toolbridge::rmcp_model;
