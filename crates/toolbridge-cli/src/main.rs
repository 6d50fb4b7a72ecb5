//! The `toolbridge` command-line program: a thin layer over the library.

mod cli;
mod commands;
mod output;
mod progress;

use std::process::ExitCode;

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    cli::main()
}
