//! `toolbridge example-server`.

use std::process::ExitCode;

pub fn run() -> ExitCode {
    ExitCode::SUCCESS
}
