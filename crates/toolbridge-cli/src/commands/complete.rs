//! `toolbridge complete SERVER (--prompt NAME | --resource TEMPLATE) ARG
//! VALUE`: the values a server suggests for an argument of a prompt or of a
//! resource template, one per line.

use std::{collections::HashMap, process::ExitCode, time::Duration};

use serde_json::Value;
use toolbridge::{
    pool::CallOptions,
    rmcp_model::{CompletionContext, Reference},
};

use crate::{
    context::Context,
    outcome::{Failure, Outcome},
};

#[derive(Debug, clap::Args)]
#[command(group(clap::ArgGroup::new("reference").required(true).args(["prompt", "resource"])))]
pub struct Args {
    /// The server's name in the config.
    pub server: String,
    /// Complete an argument of this prompt.
    #[arg(long, value_name = "NAME")]
    pub prompt: Option<String>,
    /// Complete a variable of this resource template (its URI template).
    #[arg(long, value_name = "TEMPLATE")]
    pub resource: Option<String>,
    /// The argument (or template variable) to complete.
    pub argument: String,
    /// What was typed so far.
    #[arg(default_value = "", allow_hyphen_values = true)]
    pub value: String,
    /// The values of the other arguments already chosen, a JSON object
    /// (some servers suggest according to them).
    #[arg(long, value_name = "JSON")]
    pub context: Option<String>,
    /// Seconds the request may take, the server's start included.
    #[arg(long, value_name = "SECS", value_parser = crate::timeout::parse)]
    pub timeout: Option<Duration>,
    /// Print the raw MCP result.
    #[arg(long)]
    pub json: bool,
}

pub async fn run(args: Args, ctx: &Context) -> Outcome {
    let context = match args.context.as_deref() {
        Some(raw) => Some(context(raw).map_err(Failure::usage)?),
        None => None,
    };
    let reference = match (&args.prompt, &args.resource) {
        (Some(prompt), _) => Reference::for_prompt(prompt.clone()),
        (None, Some(template)) => Reference::for_resource(template.clone()),
        // clap requires one of them.
        (None, None) => {
            return Err(Failure::usage(anyhow::anyhow!(
                "give --prompt NAME or --resource TEMPLATE"
            )));
        }
    };
    let servers = ctx.servers()?;
    if let Some(error) = servers.unresolved(&args.server) {
        return Err(Failure::usage(anyhow::anyhow!("{error}")));
    }
    let options = CallOptions {
        timeout: args.timeout,
        ..CallOptions::default()
    };
    let result = servers
        .pool
        .complete(
            &args.server,
            reference,
            &args.argument,
            &args.value,
            context,
            &options,
        )
        .await?;
    if args.json {
        crate::output::json(&result)?;
        return Ok(ExitCode::SUCCESS);
    }
    let completion = &result.completion;
    for value in &completion.values {
        crate::output::line(value)?;
    }
    let shown = completion.values.len();
    match completion.total {
        Some(total) if total as usize > shown => {
            ctx.say(format_args!("({shown} of {total} values shown)"));
        }
        _ if completion.has_more == Some(true) => {
            ctx.say(format_args!(
                "(the server has more than these {shown} values)"
            ));
        }
        _ => {}
    }
    Ok(ExitCode::SUCCESS)
}

/// `--context`: a JSON object of argument values, each a string (other
/// values are taken as their JSON text).
fn context(raw: &str) -> anyhow::Result<CompletionContext> {
    let value: Value = serde_json::from_str(raw)
        .map_err(|e| anyhow::anyhow!("--context is not valid JSON: {e}"))?;
    let Value::Object(map) = value else {
        anyhow::bail!(
            "--context must be a JSON object of argument values, like {{\"department\": \"Sales\"}}"
        );
    };
    let arguments: HashMap<String, String> = map
        .into_iter()
        .map(|(name, value)| match value {
            Value::String(text) => (name, text),
            other => (name, other.to_string()),
        })
        .collect();
    Ok(CompletionContext::with_arguments(arguments))
}
