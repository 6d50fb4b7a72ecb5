//! `--timeout SECS`, the one parser for every command that takes it
//! (`call`, `servers add`); clap runs it while it reads the command line, so
//! a bad value is a usage error (exit 2) before anything starts.

use std::time::Duration;

/// A positive number of seconds, at most the library's
/// [`MAX_TIMEOUT`](toolbridge::config::MAX_TIMEOUT) (the same rule as the
/// config's `timeout`).
pub fn parse(text: &str) -> Result<Duration, String> {
    text.parse::<f64>()
        .ok()
        .and_then(toolbridge::config::timeout_from_secs)
        .ok_or_else(|| {
            format!(
                "expected a positive number of seconds, at most {}, got \"{text}\"",
                toolbridge::config::MAX_TIMEOUT.as_secs()
            )
        })
}
