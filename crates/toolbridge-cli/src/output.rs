//! Writing data to stdout. A closed pipe (`toolbridge tools | head`) is not
//! an error: the reader has what it wanted.

use std::io::Write;

use crate::cli::{Failure, exit};

/// Writes `text` and a newline to stdout.
pub fn line(text: &str) -> Result<(), Failure> {
    let mut out = std::io::stdout().lock();
    match out
        .write_all(text.as_bytes())
        .and_then(|()| out.write_all(b"\n"))
        .and_then(|()| out.flush())
    {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(Failure::new(
            exit::CONNECTION,
            anyhow::Error::new(e).context("writing to stdout"),
        )),
    }
}

/// Writes `value` as pretty JSON to stdout.
pub fn json(value: &impl serde::Serialize) -> Result<(), Failure> {
    let text =
        serde_json::to_string_pretty(value).map_err(|e| Failure::new(exit::CONNECTION, e))?;
    line(&text)
}
