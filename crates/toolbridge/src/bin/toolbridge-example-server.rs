//! `toolbridge-example-server`: the built-in example MCP server over stdio,
//! as a program of its own, so the library's tests (and anyone without the
//! CLI) can run it. The CLI's `toolbridge example-server` serves the same.

use std::process::ExitCode;

fn main() -> ExitCode {
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("toolbridge-example-server: cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(toolbridge::example_server::serve_stdio()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("toolbridge-example-server: {e}");
            ExitCode::FAILURE
        }
    }
}
