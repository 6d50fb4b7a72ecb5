//! Progress on stderr while servers start, only when stderr is a terminal
//! and `-q` was not given.

use std::{io::IsTerminal, time::Duration};

use indicatif::{ProgressBar, ProgressStyle};

/// A counter of finished servers, shown as a spinner line on stderr.
pub struct Progress(Option<ProgressBar>);

impl Progress {
    /// A progress line for `total` servers; hidden when `quiet` or when
    /// stderr is not a terminal.
    pub fn servers(total: usize, what: &str, quiet: bool) -> Self {
        if quiet || total == 0 || !std::io::stderr().is_terminal() {
            return Progress(None);
        }
        let bar = ProgressBar::new(total as u64);
        let style = ProgressStyle::with_template("{spinner} {msg} {pos}/{len} servers ({elapsed})")
            .unwrap_or_else(|_| ProgressStyle::default_spinner());
        bar.set_style(style);
        bar.set_message(what.to_owned());
        bar.enable_steady_tick(Duration::from_millis(100));
        Progress(Some(bar))
    }

    /// One more server finished.
    pub fn inc(&self) {
        if let Some(bar) = &self.0 {
            bar.inc(1);
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        if let Some(bar) = &self.0 {
            bar.finish_and_clear();
        }
    }
}
