//! `toolbridge tools search QUERY`: the tools best fitting a task described
//! in words, best first, in a provider's format (or MCP's, with scores).

use toolbridge::format::{Format, FormatOptions, NameTable, convert_tools};

use crate::{
    context::Context,
    listing::{self, Failures},
    outcome::{Failure, Outcome},
};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The task, in words (several words need no quotes).
    #[arg(value_name = "QUERY", required = true, num_args = 1..)]
    pub query: Vec<String>,
    /// How many tools at most.
    #[arg(long, default_value_t = 5)]
    pub limit: usize,
    /// Output format: mcp (with each tool's `score`), openai,
    /// openai-responses, anthropic or gemini.
    #[arg(long, default_value = "mcp")]
    pub format: Format,
    /// Only these servers' tools; without it, every enabled server's.
    #[arg(long = "server", value_name = "NAME")]
    pub servers: Vec<String>,
    /// OpenAI: strict mode, as for `tools`.
    #[arg(long)]
    pub strict: bool,
    /// Gemini: the full JSON Schema as `parametersJsonSchema`, as for `tools`.
    #[arg(long)]
    pub gemini_json_schema: bool,
}

pub async fn run(args: Args, ctx: &Context) -> Outcome {
    let query = args.query.join(" ");
    if query.trim().is_empty() {
        return Err(Failure::usage(anyhow::anyhow!(
            "the query is empty; describe the task in words, e.g. `toolbridge tools search read a file`"
        )));
    }
    let servers = ctx.servers()?;
    let mut failures = Failures::default();
    let chosen = listing::chosen(servers, &args.servers, &mut failures);
    let found = servers
        .pool
        .search_tools_of(&chosen, &query, args.limit)
        .await;
    for (_, error) in found.failures {
        failures.add(Failure::from(error));
    }
    // The names `tools --format` gives the same servers' tools (a name that
    // collides gets a suffix that depends on every tool), so that `exec`
    // routes the model's calls of what it found. The lists are cached now.
    let every = servers.pool.list_tools_of(&chosen).await.tools;
    let names = NameTable::for_tools(&every);
    let tools: Vec<_> = found.hits.iter().map(|hit| hit.tool.clone()).collect();
    let options = FormatOptions {
        strict: args.strict,
        gemini_json_schema: args.gemini_json_schema,
    };
    let mut output = convert_tools(args.format, &tools, &names, &options);
    if args.format == Format::Mcp
        && let Some(items) = output.as_array_mut()
    {
        for (item, hit) in items.iter_mut().zip(&found.hits) {
            if let Some(object) = item.as_object_mut() {
                object.insert("score".into(), serde_json::json!(hit.score));
            }
        }
    }
    crate::output::json(&output)?;
    failures.outcome()
}
