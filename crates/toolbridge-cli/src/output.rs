//! Writing data to stdout, the one place that does. A closed pipe
//! (`toolbridge tools | head`) is not an error: the reader has what it wanted.

use std::io::{ErrorKind, Write};

use crate::outcome::{Failure, exit};

/// Writes `text` to stdout as is. A closed pipe is success; other write
/// errors are returned.
pub fn write(text: &str) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() == ErrorKind::BrokenPipe => Ok(()),
        other => other,
    }
}

/// Writes `text` to stdout; on a terminal its control characters are
/// neutralised ([`crate::terminal`]).
pub fn text(text: &str) -> Result<(), Failure> {
    raw(&crate::terminal::for_stdout(text))
}

/// Writes `text` to stdout as is (JSON, whose strings escape controls).
fn raw(text: &str) -> Result<(), Failure> {
    write(text).map_err(|e| {
        Failure::new(
            exit::CONNECTION,
            anyhow::Error::new(e).context("writing to stdout"),
        )
    })
}

/// Writes `text` and a newline to stdout.
pub fn line(line: &str) -> Result<(), Failure> {
    text(&format!("{line}\n"))
}

/// Writes `value` as pretty JSON and a newline to stdout, streamed: a large
/// result (500,000 content items) is not first copied into a string twice
/// its size. Written as is: `--json` keeps a server's characters.
pub fn json(value: &impl serde::Serialize) -> Result<(), Failure> {
    let mut out = std::io::BufWriter::with_capacity(64 * 1024, std::io::stdout().lock());
    let written = serde_json::to_writer_pretty(&mut out, value)
        .map_err(std::io::Error::from)
        .and_then(|()| out.write_all(b"\n"))
        .and_then(|()| out.flush());
    match written {
        Err(e) if e.kind() == ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(Failure::new(
            exit::CONNECTION,
            anyhow::Error::new(e).context("writing to stdout"),
        )),
        Ok(()) => Ok(()),
    }
}
