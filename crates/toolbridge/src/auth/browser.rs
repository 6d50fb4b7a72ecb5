//! [`Browser`]: how the authorization URL reaches the user. `$BROWSER`
//! when it is set (the usual convention: a command, `%s` standing for the
//! URL, else the URL is its last argument), else the platform's opener
//! (`xdg-open`, `open`), else nothing: the caller shows the URL.

use std::{process::Stdio, sync::Arc};

/// Where an authorization URL is opened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Browser {
    /// `$BROWSER`'s command, as words.
    Command(Vec<String>),
    /// The platform's opener (`xdg-open` or `open`), found on `PATH`.
    Platform(std::path::PathBuf),
    /// No way to open one: the URL is only shown.
    None,
}

/// Told about a sign-in as it starts: the server's name, the URL the user
/// must visit, and whether a browser was started with it. The CLI prints
/// the URL on stderr; the library prints nothing.
pub type SignInPrompt = Arc<dyn Fn(&str, &str, bool) + Send + Sync>;

impl Browser {
    /// `$BROWSER` when set, else the platform's opener when there is one.
    pub fn from_env() -> Self {
        if let Some(command) = std::env::var("BROWSER")
            .ok()
            .and_then(|value| value.split(':').next().map(str::to_owned))
            .map(|first| {
                first
                    .split_whitespace()
                    .map(str::to_owned)
                    .collect::<Vec<_>>()
            })
            .filter(|words| !words.is_empty())
        {
            return Browser::Command(command);
        }
        let opener = if cfg!(target_os = "macos") {
            "open"
        } else {
            "xdg-open"
        };
        match which::which(opener) {
            Ok(path) => Browser::Platform(path),
            Err(_) => Browser::None,
        }
    }

    /// True when `$BROWSER` is set: a sign-in can be done without a
    /// terminal.
    pub fn is_configured() -> bool {
        std::env::var_os("BROWSER").is_some_and(|v| !v.is_empty())
    }

    /// Starts the browser on `url`; false when there is none or it could
    /// not be started. The browser is not waited for (it may keep
    /// running); its exit is collected in the background.
    pub fn open(&self, url: &str) -> bool {
        let (program, args): (&std::ffi::OsStr, Vec<String>) = match self {
            Browser::Command(words) => {
                let Some((program, rest)) = words.split_first() else {
                    return false;
                };
                let mut args: Vec<String> = rest.iter().map(|w| w.replace("%s", url)).collect();
                if !words.iter().any(|w| w.contains("%s")) {
                    args.push(url.to_owned());
                }
                (program.as_ref(), args)
            }
            Browser::Platform(path) => (path.as_os_str(), vec![url.to_owned()]),
            Browser::None => return false,
        };
        let child = tokio::process::Command::new(program)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn();
        match child {
            Ok(mut child) => {
                tokio::spawn(async move {
                    let _ = child.wait().await;
                });
                true
            }
            Err(e) => {
                tracing::debug!("cannot start the browser: {e}");
                false
            }
        }
    }
}
