//! One turn of an agent loop: the model asked for tool calls; run them
//! against a pool of MCP servers and print the messages to send back.
//!
//! ```sh
//! cargo run -p toolbridge --example agent_loop
//! ```
//!
//! The model's answer is scripted (an OpenAI Chat Completions response
//! written below) so the program needs no API key. The server is the
//! built-in example server, run as this very program with
//! `--example-server`. In a real agent, the tools from [`convert_tools`] go
//! into the request, and the printed messages are appended to the
//! conversation before asking the model again.

use std::process::ExitCode;

use serde_json::{Value, json};
use toolbridge::{
    Format, FormatOptions, McpTool, NameTable, Pool, PoolOptions, ServerSpec, ToolRegistry,
    convert_tools, load_mcp_tools, parse_calls, render_results,
};

/// The argument that makes this program act as the example MCP server.
const SERVE_FLAG: &str = "--example-server";

/// What the model answered: three tool calls, one of them to a tool that
/// does not exist (it becomes an error message the model can read).
fn scripted_model_response() -> Value {
    json!({
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "choices": [{
            "index": 0,
            "finish_reason": "tool_calls",
            "message": {
                "role": "assistant",
                "content": null,
                "tool_calls": [
                    {"id": "call_hello", "type": "function",
                     "function": {"name": "mcp__example__hello", "arguments": "{\"name\":\"Ada\"}"}},
                    {"id": "call_image", "type": "function",
                     "function": {"name": "mcp__example__tiny_image", "arguments": "{}"}},
                    {"id": "call_missing", "type": "function",
                     "function": {"name": "mcp__example__no_such_tool", "arguments": "{}"}}
                ]
            }
        }]
    })
}

fn main() -> ExitCode {
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
    let result = if std::env::args().nth(1).as_deref() == Some(SERVE_FLAG) {
        runtime.block_on(toolbridge::example_server::serve_stdio())
    } else {
        runtime.block_on(run())
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error}");
            ExitCode::FAILURE
        }
    }
}

async fn run() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let exe = std::env::current_exe()?;
    let server = ServerSpec::stdio("example", exe.to_string_lossy(), [SERVE_FLAG]);
    let pool = Pool::new([server], PoolOptions::default());

    // The tools the model is offered, as executable adapters in a registry
    // that routes the model's calls back to them.
    let adapters = load_mcp_tools(&pool, &pool.active_server_names()).await;
    let mut registry = ToolRegistry::new();
    for adapter in adapters {
        registry.register(adapter)?;
    }
    let tools: Vec<McpTool> = registry.tools().map(|t| t.mcp_tool().clone()).collect();
    let names = NameTable::for_tools(&tools);
    let offered = convert_tools(Format::OpenAi, &tools, &names, &FormatOptions::default());
    eprintln!(
        "offered {} tools to the model",
        offered.as_array().map_or(0, Vec::len)
    );

    // The model's answer, and the calls in it, run in parallel.
    let calls = parse_calls(Format::OpenAi, &scripted_model_response(), &names)?;
    let results = registry.execute_calls(calls).await;

    // What to append to the conversation: one `role: tool` message per call.
    let messages = render_results(Format::OpenAi, &results)?;
    println!("{}", serde_json::to_string_pretty(&messages)?);
    pool.close_all().await;
    Ok(())
}
