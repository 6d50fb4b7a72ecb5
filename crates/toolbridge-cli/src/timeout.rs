//! `--timeout SECS`, the one parser for every command that takes it
//! (`call`, `servers add`); clap runs it while it reads the command line, so
//! a bad value is a usage error (exit 2) before anything starts.

use std::time::Duration;

/// A positive, finite number of seconds that a [`Duration`] can hold.
pub fn parse(text: &str) -> Result<Duration, String> {
    text.parse::<f64>()
        .ok()
        .filter(|secs| secs.is_finite() && *secs > 0.0)
        .and_then(|secs| Duration::try_from_secs_f64(secs).ok())
        .ok_or_else(|| format!("expected a positive number of seconds, got \"{text}\""))
}
