//! The `toolbridge` command-line program: a thin layer over the library.

mod cli;
mod commands;
mod output;
mod progress;

use std::process::ExitCode;

fn main() -> ExitCode {
    cli::main()
}
