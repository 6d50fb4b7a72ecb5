//! How a command ends: an exit code, or a failure that is printed once on
//! stderr and becomes its exit code (DESIGN.md, "Command line").

use std::process::ExitCode;

use toolbridge::pool::PoolError;

/// Exit codes, as DESIGN.md fixes them. Success is 0; a signal N ends the
/// program with 128 + N.
pub mod exit {
    /// The tool returned `isError` (for `doctor`: something is missing).
    pub const TOOL_ERROR: u8 = 1;
    /// Usage or config error, an unknown server or tool included.
    pub const USAGE: u8 = 2;
    /// Connection or protocol error.
    pub const CONNECTION: u8 = 3;
    /// Timeout: start, request or call.
    pub const TIMEOUT: u8 = 4;
}

/// What a command returns: the exit code of a run that went as it should
/// (0, or 1 for a tool's `isError`), or a failure to report.
pub type Outcome = Result<ExitCode, Failure>;

/// An error on its way to becoming an exit code.
#[derive(Debug)]
pub struct Failure {
    /// The exit code, one of [`exit`].
    pub code: u8,
    /// What went wrong, with its causes.
    pub error: anyhow::Error,
}

impl Failure {
    /// A failure that exits with `code`.
    pub fn new(code: u8, error: impl Into<anyhow::Error>) -> Self {
        Failure {
            code,
            error: error.into(),
        }
    }

    /// A usage or config error (exit 2).
    pub fn usage(error: impl Into<anyhow::Error>) -> Self {
        Self::new(exit::USAGE, error)
    }

    /// Prints the error and its causes, each once, on stderr. Commands that
    /// go on after a failure (one server of many) print it here too.
    pub fn print(&self) {
        let text = format!("toolbridge: {}", chain(&self.error));
        eprintln!("{}", crate::terminal::for_stderr(&text));
    }
}

impl From<PoolError> for Failure {
    fn from(e: PoolError) -> Self {
        let code = if e.is_usage() {
            exit::USAGE
        } else if e.is_timeout() {
            exit::TIMEOUT
        } else {
            exit::CONNECTION
        };
        Failure::new(code, e)
    }
}

/// The exit code of `outcome`, after printing its failure.
pub fn report(outcome: Outcome) -> ExitCode {
    match outcome {
        Ok(code) => code,
        Err(failure) => {
            failure.print();
            ExitCode::from(failure.code)
        }
    }
}

/// The error and its causes, each once: a cause whose text the message
/// already holds is not repeated.
fn chain(error: &anyhow::Error) -> String {
    let mut text = error.to_string();
    for cause in error.chain().skip(1) {
        let cause = cause.to_string();
        if !text.contains(&cause) {
            text.push_str(": ");
            text.push_str(&cause);
        }
    }
    text
}
