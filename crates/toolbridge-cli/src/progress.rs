//! Progress on stderr while servers start, only when stderr is a terminal
//! and `-q` was not given: a spinner line that counts the servers done and
//! names the ones still pending.

use std::{io::IsTerminal, sync::Mutex, time::Duration};
use toolbridge::lock::LockUnpoisoned as _;

use indicatif::{ProgressBar, ProgressStyle};

/// How many columns of the spinner line the pending servers' names may take.
const NAMES_WIDTH: usize = 60;

/// A counter of finished servers, shown as a spinner line on stderr.
pub struct Progress {
    /// The spinner; `None` when nothing is shown.
    bar: Option<ProgressBar>,
    /// What is happening ("starting"), the first words of the line.
    what: String,
    /// How many servers there are.
    total: usize,
    /// The servers not done yet, in the order given.
    pending: Mutex<Vec<String>>,
}

impl Progress {
    /// A progress line for the servers `names` that names those still
    /// pending; hidden when `quiet` or when stderr is not a terminal. Tell
    /// it each server that is done with [`Progress::done`].
    pub fn naming(names: &[String], what: &str, quiet: bool) -> Self {
        let total = names.len();
        let shown = !quiet && total > 0 && std::io::stderr().is_terminal();
        let bar = shown.then(|| {
            let bar = ProgressBar::new(total as u64);
            let style = ProgressStyle::with_template("{spinner} {wide_msg} ({elapsed})")
                .unwrap_or_else(|_| ProgressStyle::default_spinner());
            bar.set_style(style);
            bar.enable_steady_tick(Duration::from_millis(100));
            bar
        });
        let progress = Progress {
            bar,
            what: what.to_owned(),
            total,
            pending: Mutex::new(names.to_vec()),
        };
        progress.redraw();
        progress
    }

    /// Server `name` finished.
    pub fn done(&self, name: &str) {
        {
            let mut pending = self.pending.lock_unpoisoned();
            if let Some(at) = pending.iter().position(|n| n == name) {
                pending.remove(at);
            }
        }
        if let Some(bar) = &self.bar {
            bar.inc(1);
        }
        self.redraw();
    }

    /// Runs `write` (printing a result line, say) with the spinner line
    /// cleared, so that the two never mix.
    pub fn suspend<T>(&self, write: impl FnOnce() -> T) -> T {
        match &self.bar {
            Some(bar) => bar.suspend(write),
            None => write(),
        }
    }

    fn redraw(&self) {
        let Some(bar) = &self.bar else {
            return;
        };
        let pending = self.pending.lock_unpoisoned();
        bar.set_message(pending_line(&self.what, self.total, &pending, NAMES_WIDTH));
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

/// The spinner's text: what is happening, how many of `total` servers are
/// done, and the names of the `pending` ones, as many as fit in `width`
/// characters, the rest counted: `starting 2/5 servers; waiting for github,
/// memory and 1 more`.
pub fn pending_line(what: &str, total: usize, pending: &[String], width: usize) -> String {
    let done = total.saturating_sub(pending.len());
    let mut line = format!("{what} {done}/{total} servers");
    if pending.is_empty() {
        return line;
    }
    line.push_str("; waiting for ");
    let mut names = String::new();
    let mut shown = 0;
    for (i, name) in pending.iter().enumerate() {
        let length = name.chars().count();
        if shown == 0 {
            // The first name is always shown, cut only if it alone is too long.
            if length > width {
                names.extend(name.chars().take(width.saturating_sub(1).max(1)));
                names.push('…');
            } else {
                names.push_str(name);
            }
            shown = 1;
            continue;
        }
        let left = pending.len() - i - 1;
        let rest = if left > 0 {
            format!(" and {left} more").len()
        } else {
            0
        };
        if names.chars().count() + 2 + length + rest > width {
            break;
        }
        names.push_str(", ");
        names.push_str(name);
        shown += 1;
    }
    line.push_str(&names);
    let hidden = pending.len() - shown;
    if hidden > 0 {
        line.push_str(&format!(" and {hidden} more"));
    }
    line
}

#[cfg(test)]
mod tests {
    use super::pending_line;

    fn names(names: &[&str]) -> Vec<String> {
        names.iter().map(|n| n.to_string()).collect()
    }

    #[test]
    fn the_line_names_every_pending_server_that_fits() {
        assert_eq!(
            pending_line("starting", 3, &names(&["github", "slow"]), 60),
            "starting 1/3 servers; waiting for github, slow"
        );
    }

    #[test]
    fn names_that_do_not_fit_are_counted() {
        let pending = names(&["filesystem", "github", "memory", "sequential-thinking"]);
        assert_eq!(
            pending_line("starting", 6, &pending, 30),
            "starting 2/6 servers; waiting for filesystem, github and 2 more"
        );
        assert_eq!(
            pending_line("starting", 6, &pending, 12),
            "starting 2/6 servers; waiting for filesystem and 3 more"
        );
    }

    #[test]
    fn a_long_first_name_is_cut_not_dropped() {
        let line = pending_line("starting", 1, &names(&["a-very-long-server-name"]), 10);
        assert_eq!(line, "starting 0/1 servers; waiting for a-very-lo…");
    }

    #[test]
    fn when_nothing_is_pending_only_the_count_is_left() {
        assert_eq!(pending_line("listing", 2, &[], 60), "listing 2/2 servers");
    }
}
