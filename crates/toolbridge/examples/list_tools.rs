//! Lists the tools of the servers in a config file, in one provider's format.
//!
//! ```sh
//! cargo run -p toolbridge --example list_tools -- openai            # the built-in example server
//! cargo run -p toolbridge --example list_tools -- gemini mcp.json   # the servers of mcp.json
//! ```
//!
//! The format is one of `mcp`, `openai`, `openai-responses`, `anthropic`,
//! `gemini`. Without a config file, the program runs the built-in example
//! server: it starts itself with `--example-server` (see [`example_server_spec`]).

use std::{path::Path, process::ExitCode};

use toolbridge::{
    Config, Format, FormatOptions, NameTable, Pool, PoolOptions, ServerSpec, convert_tools,
};

/// The argument that makes this program act as the example MCP server.
const SERVE_FLAG: &str = "--example-server";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("error: cannot start the tokio runtime: {error}");
            return ExitCode::FAILURE;
        }
    };
    let result = if args.first().map(String::as_str) == Some(SERVE_FLAG) {
        runtime.block_on(toolbridge::example_server::serve_stdio())
    } else {
        runtime.block_on(run(&args))
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error}");
            ExitCode::FAILURE
        }
    }
}

async fn run(args: &[String]) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let format: Format = args.first().map_or("openai", String::as_str).parse()?;
    let servers = match args.get(1) {
        Some(path) => {
            let config = Config::load(Path::new(path))?;
            config
                .resolve_enabled()
                .into_iter()
                .collect::<Result<Vec<_>, _>>()?
        }
        None => vec![example_server_spec()?],
    };

    let pool = Pool::new(servers, PoolOptions::default());
    let listing = pool.list_all_active_server_tools().await;
    for (server, error) in &listing.failures {
        eprintln!("warning: skipped server \"{server}\": {error}");
    }
    let names = NameTable::for_tools(&listing.tools);
    let converted = convert_tools(format, &listing.tools, &names, &FormatOptions::default());
    println!("{}", serde_json::to_string_pretty(&converted)?);
    pool.close_all().await;
    Ok(())
}

/// The built-in example server, run as this very program with
/// [`SERVE_FLAG`]: no `toolbridge` binary needs to be installed.
pub fn example_server_spec() -> std::io::Result<ServerSpec> {
    let exe = std::env::current_exe()?;
    Ok(ServerSpec::stdio(
        "example",
        exe.to_string_lossy(),
        [SERVE_FLAG],
    ))
}
