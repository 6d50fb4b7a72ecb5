//! [`ResultBudget`]: the budget an adapter holds a result to before a model
//! gets it ([`crate::format::budget`] does the cutting), and where a result
//! that was cut is kept whole: one JSON file per result (the raw MCP
//! result) under `$XDG_CACHE_HOME/toolbridge/results/` (`~/.cache/...`),
//! readable by the user only (0600, in a 0700 folder). Files older than
//! [`KEEP_FOR`] are pruned whenever a result is saved.

use std::{
    io::Write,
    path::{Path, PathBuf},
    sync::atomic::{AtomicU64, Ordering},
    time::{Duration, SystemTime},
};

use rmcp::model::CallToolResult;

use crate::format::budget::{DEFAULT_RESULT_BUDGET, fit_result, over_budget};

/// How big a result a model is given, and where results that were cut are
/// kept whole.
#[derive(Debug, Clone)]
pub struct ResultBudget {
    /// Characters of one result, for servers without a `resultBudget` of
    /// their own (default [`DEFAULT_RESULT_BUDGET`], about 25k tokens).
    pub default_chars: usize,
    /// Where a result that was cut is saved whole (default
    /// [`default_results_dir`]); `None`: not saved.
    pub save_dir: Option<PathBuf>,
}

impl Default for ResultBudget {
    fn default() -> Self {
        ResultBudget {
            default_chars: DEFAULT_RESULT_BUDGET,
            save_dir: default_results_dir(),
        }
    }
}

impl ResultBudget {
    /// `result` of `tool` of `server` held to `server_budget` (the server's
    /// `resultBudget`), else to [`default_chars`](Self::default_chars): when
    /// it is over, it is saved whole and cut to its head and tail with a
    /// note saying where it was saved. A save that fails is logged and the
    /// note says nothing of a file.
    pub async fn apply(
        &self,
        server: &str,
        tool: &str,
        server_budget: Option<usize>,
        result: CallToolResult,
    ) -> CallToolResult {
        let chars = server_budget.unwrap_or(self.default_chars);
        if !over_budget(&result, chars) {
            return result;
        }
        let Some(dir) = self.save_dir.clone() else {
            return fit_result(result, chars, None);
        };
        let (server_name, tool_name) = (server.to_owned(), tool.to_owned());
        let saving = tokio::task::spawn_blocking(move || {
            let saved = save_result(&dir, &server_name, &tool_name, &result);
            (result, saved)
        });
        let Ok((result, saved)) = saving.await else {
            return CallToolResult::error(vec![rmcp::model::ContentBlock::text(format!(
                "the result of tool \"{tool}\" of server \"{server}\" was lost while it was saved"
            ))]);
        };
        match saved {
            Ok(path) => fit_result(result, chars, Some(&path.to_string_lossy())),
            Err(e) => {
                tracing::warn!("{e}");
                fit_result(result, chars, None)
            }
        }
    }
}

/// How long a saved result is kept.
pub const KEEP_FOR: Duration = Duration::from_secs(7 * 24 * 3600);

/// A result that could not be saved.
#[derive(Debug, thiserror::Error)]
#[error("cannot save the whole result of tool \"{tool}\" of server \"{server}\" in {}: {source}; check that the folder is writable", dir.display())]
pub struct SaveError {
    /// The server.
    pub server: String,
    /// The tool.
    pub tool: String,
    /// The folder results are saved in.
    pub dir: PathBuf,
    /// Why.
    #[source]
    pub source: std::io::Error,
}

/// The default folder: `$XDG_CACHE_HOME/toolbridge/results`, else
/// `$HOME/.cache/toolbridge/results`; `None` without either.
pub fn default_results_dir() -> Option<PathBuf> {
    Some(crate::config::user_cache_dir()?.join("results"))
}

/// Saves `result` (of `tool` of `server`) as JSON in `dir` and returns the
/// file's path; prunes files older than [`KEEP_FOR`] first. Blocking I/O.
pub fn save_result(
    dir: &Path,
    server: &str,
    tool: &str,
    result: &CallToolResult,
) -> Result<PathBuf, SaveError> {
    let error = |source| SaveError {
        server: server.to_owned(),
        tool: tool.to_owned(),
        dir: dir.to_owned(),
        source,
    };
    create_private_dir(dir).map_err(error)?;
    prune(dir);
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let millis = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis());
    let name = format!(
        "{millis}-{}-{}-{}__{}.json",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed),
        file_safe(server),
        file_safe(tool)
    );
    let path = dir.join(name);
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let file = options.open(&path).map_err(error)?;
    let mut out = std::io::BufWriter::new(file);
    serde_json::to_writer(&mut out, result)
        .map_err(std::io::Error::from)
        .and_then(|()| out.flush())
        .map_err(error)?;
    Ok(path)
}

fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(0o700);
    }
    builder.create(dir)
}

/// Removes saved results older than [`KEEP_FOR`]; errors are ignored (a
/// file another process removed first, say).
fn prune(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let now = SystemTime::now();
    for entry in entries.flatten() {
        let old = entry
            .metadata()
            .and_then(|m| m.modified())
            .is_ok_and(|t| now.duration_since(t).is_ok_and(|age| age > KEEP_FOR));
        if old && entry.file_name().to_string_lossy().ends_with(".json") {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// A name part with only `[A-Za-z0-9_-]`, at most 40 characters.
fn file_safe(name: &str) -> String {
    let head: String = name.chars().take(40).collect();
    crate::format::names::replace_unsafe(&head)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::ContentBlock;

    #[test]
    fn a_saved_result_is_private_and_whole_and_old_ones_are_pruned() {
        let dir = tempfile::tempdir().unwrap();
        let results = dir.path().join("results");
        let result = CallToolResult::success(vec![ContentBlock::text("x".repeat(1000))]);
        let path = save_result(&results, "srv", "../evil tool", &result).unwrap();
        assert_eq!(path.parent(), Some(results.as_path()));
        assert!(
            path.file_name()
                .unwrap()
                .to_string_lossy()
                .ends_with("-srv_____evil_tool.json")
        );
        let back: CallToolResult =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(back, result);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        let old = results.join("old.json");
        std::fs::write(&old, "{}").unwrap();
        let long_ago = SystemTime::now() - KEEP_FOR - Duration::from_secs(60);
        std::fs::File::options()
            .write(true)
            .open(&old)
            .unwrap()
            .set_modified(long_ago)
            .unwrap();
        save_result(&results, "srv", "t", &result).unwrap();
        assert!(!old.exists(), "an old result was not pruned");
        assert!(path.exists(), "a fresh result was pruned");
    }

    #[tokio::test]
    async fn a_server_budget_overrides_the_default_and_the_cut_result_is_saved() {
        let dir = tempfile::tempdir().unwrap();
        let budget = ResultBudget {
            default_chars: 10_000,
            save_dir: Some(dir.path().join("results")),
        };
        let result = CallToolResult::success(vec![ContentBlock::text("y".repeat(5_000))]);
        // Within the default: untouched, nothing saved.
        let kept = budget.apply("srv", "t", None, result.clone()).await;
        assert_eq!(kept, result);
        assert!(!dir.path().join("results").exists());
        // The server's own budget of 1,000 cuts it, and says where it is whole.
        let cut = budget.apply("srv", "t", Some(1_000), result.clone()).await;
        let text = crate::format::flatten_content(&cut);
        assert!(text.chars().count() <= 1_000, "{}", text.len());
        let saved = text
            .split("saved in ")
            .nth(1)
            .and_then(|rest| rest.split(" …]").next())
            .expect("the note names the file");
        let whole: CallToolResult =
            serde_json::from_str(&std::fs::read_to_string(saved).unwrap()).unwrap();
        assert_eq!(whole, result);
    }
}
