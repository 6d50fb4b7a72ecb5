//! `toolbridge tools`: the tools of the configured servers as one JSON
//! document; `tools diff` and `tools approve`: the withheld ones (pins).

use toolbridge::{
    format::{
        Format, FormatOptions, NameTable, check_formats, convert_tools,
        deferred::{self, SearchMode},
    },
    pins::Withheld,
};

mod pins;

use crate::{
    context::Context,
    listing::{self, Failures},
    outcome::{Failure, Outcome},
    progress::Progress,
};

#[derive(Debug, clap::Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct Args {
    /// `tools search`, `tools diff`, `tools approve` (without one: list
    /// the tools).
    #[command(subcommand)]
    pub command: Option<ToolsCommand>,
    /// Output format: mcp, openai, openai-responses, anthropic or gemini.
    #[arg(long, default_value = "mcp")]
    pub format: Format,
    /// Only these servers (manual mode); without it, every enabled server.
    #[arg(long = "server", value_name = "NAME")]
    pub servers: Vec<String>,
    /// OpenAI: strict mode (closed objects, every property required, optional
    /// ones nullable); tools that cannot be strict are sent non-strict.
    #[arg(long)]
    pub strict: bool,
    /// Gemini: send the full JSON Schema as `parametersJsonSchema`.
    #[arg(long)]
    pub gemini_json_schema: bool,
    /// Instead of the tools, report per tool and provider what had to change
    /// and what a provider would reject (only about `--format`'s provider
    /// when one is given), with a summary line per server on stderr, and
    /// the tools the servers' listings left out. Always asks the servers
    /// (as --refresh).
    #[arg(long)]
    pub check: bool,
    /// Ask every server for its tools again instead of using the tool-list
    /// cache (`$XDG_CACHE_HOME/toolbridge/tools`).
    #[arg(long)]
    pub refresh: bool,
    /// Mark every tool `defer_loading` and put the provider's tool search
    /// tool first (anthropic, openai-responses): `server` (the default:
    /// Anthropic's BM25 search, OpenAI's hosted one), `regex` (Anthropic's
    /// regular-expression search) or `client` (a search `toolbridge exec`
    /// answers).
    #[arg(long, value_name = "SEARCH", num_args = 0..=1, default_missing_value = "server")]
    pub defer_loading: Option<SearchMode>,
}

/// `toolbridge tools ...`: what `tools` does besides listing.
#[derive(Debug, clap::Subcommand)]
pub enum ToolsCommand {
    /// The tools best fitting a task described in words, best first.
    Search(crate::commands::tools_search::Args),
    /// Show each withheld tool: what changed since its definition was pinned.
    Diff(pins::DiffArgs),
    /// Pin the tools' current definitions, so that they are listed and callable again.
    Approve(pins::ApproveArgs),
}

pub async fn run(args: Args, ctx: &Context) -> Outcome {
    match args.command {
        Some(ToolsCommand::Search(search)) => {
            return crate::commands::tools_search::run(search, ctx).await;
        }
        Some(ToolsCommand::Diff(diff)) => return pins::diff(diff, ctx).await,
        Some(ToolsCommand::Approve(approve)) => return pins::approve(approve, ctx).await,
        None => {}
    }
    // Before any server starts: a format without deferred loading.
    if let Some(search) = args.defer_loading {
        deferred::supports(args.format, search).map_err(Failure::usage)?;
    }
    let servers = ctx.servers()?;
    let mut failures = Failures::default();
    let chosen = listing::chosen(servers, &args.servers, &mut failures);
    // A check is a diagnosis: it asks the servers, so that what their
    // listing leaves out (not kept in the cache) is reported too.
    if args.refresh || args.check {
        for server in &chosen {
            servers.pool.forget_tools(server);
        }
    }
    let progress = Progress::naming(&chosen, "listing tools of", ctx.quiet);
    let listing = servers
        .pool
        .list_tools_reporting(&chosen, |server| progress.done(server))
        .await;
    drop(progress);
    for (_, error) in listing.failures {
        failures.add(Failure::from(error));
    }
    for skipped in &listing.skipped {
        let warning = skipped.to_string();
        eprintln!(
            "toolbridge: warning: {}",
            crate::terminal::for_stderr(&warning)
        );
    }
    warn_withheld(&listing.withheld);
    let tools = listing.tools;
    let names = NameTable::for_tools(&tools);
    let options = FormatOptions {
        strict: args.strict,
        gemini_json_schema: args.gemini_json_schema,
    };
    if args.check {
        let report = check_formats(&[args.format], &tools, &names, &options);
        for summary in &report.servers {
            ctx.say(summary);
        }
        // What the listing left out (a second tool of one name, an invalid
        // definition) never reaches the check above: report it beside it.
        let mut report = serde_json::to_value(&report).map_err(Failure::usage)?;
        report["skipped"] = listing
            .skipped
            .iter()
            .map(|skipped| {
                serde_json::json!({
                    "serverId": skipped.server,
                    "tool": skipped.tool,
                    "detail": skipped.to_string(),
                })
            })
            .collect();
        crate::output::json(&report)?;
    } else {
        if args.format != Format::Mcp {
            for tool in tools.iter().filter(|t| t.requires_task()) {
                ctx.say(format!(
                    "note: tool \"{}\" of server \"{}\" is left out: it can only be called \
                     as a task, which may run for minutes; `toolbridge call` runs it",
                    tool.name, tool.server_id
                ));
            }
        }
        let output = match args.defer_loading {
            Some(search) => {
                deferred::convert_deferred(args.format, &tools, &names, &options, search)
                    .map_err(Failure::usage)?
            }
            None => convert_tools(args.format, &tools, &names, &options),
        };
        crate::output::json(&output)?;
    }
    failures.outcome()
}

/// How many withheld tools are named one by one; the rest are counted.
const WITHHELD_NAMED: usize = 20;

/// Warns on stderr (even with `-q`: it is about what the model is not
/// given) of each withheld tool, naming the command that approves it; past
/// [`WITHHELD_NAMED`], a count per server.
pub fn warn_withheld(withheld: &[Withheld]) {
    for w in withheld.iter().take(WITHHELD_NAMED) {
        eprintln!(
            "toolbridge: warning: {}",
            crate::terminal::for_stderr(&w.to_string())
        );
    }
    if withheld.len() > WITHHELD_NAMED {
        let mut servers: Vec<&str> = withheld[WITHHELD_NAMED..]
            .iter()
            .map(|w| w.server.as_str())
            .collect();
        servers.dedup();
        let approve: Vec<String> = servers
            .iter()
            .map(|s| format!("`{}`", toolbridge::pins::approve_command(s, None)))
            .collect();
        eprintln!(
            "toolbridge: warning: and {} more tools are withheld; see `toolbridge tools diff`, \
             or approve all of a server's with {}",
            withheld.len() - WITHHELD_NAMED,
            crate::terminal::for_stderr(&approve.join(" or "))
        );
    }
}
