//! [`AuthError`]: why signing in to a server, or refreshing its token,
//! failed. Messages name the server and never hold a token or a secret.

use std::path::PathBuf;

/// Why signing in, refreshing or signing out failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AuthError {
    /// There is no folder for tokens: neither `$XDG_DATA_HOME` nor `$HOME`
    /// is set.
    #[error("no folder to keep sign-in tokens in: set $XDG_DATA_HOME or $HOME")]
    NoStore,
    /// A token or registration file could not be read or written.
    #[error("{}: {source}; check that the folder is yours and writable", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// What failed.
        #[source]
        source: std::io::Error,
    },
    /// The server needs a sign-in, and none can be started here (no
    /// browser and no terminal).
    #[error("server \"{server}\" needs you to sign in: run `toolbridge auth login {server}`")]
    SignInNeeded {
        /// The server's config name.
        server: String,
    },
    /// A step of the OAuth protocol failed (discovery, registration, the
    /// code exchange, a refresh, revocation).
    #[error("server \"{server}\": {step} failed: {message}")]
    Protocol {
        /// The server's config name.
        server: String,
        /// Which step ("finding its authorization server", "registering
        /// toolbridge", ...).
        step: &'static str,
        /// What the authorization server or the network said (no secrets).
        message: String,
    },
    /// The browser never came back to toolbridge's redirect listener.
    #[error(
        "server \"{server}\": the sign-in was not finished within {secs} s; run `toolbridge auth \
         login {server}` again and finish it in the browser",
        secs = .after.as_secs()
    )]
    Timeout {
        /// The server's config name.
        server: String,
        /// How long toolbridge waited.
        after: std::time::Duration,
    },
    /// The authorization server sent the browser back with an error (the
    /// user declined, say), or with a `state` toolbridge did not send.
    #[error("server \"{server}\": the sign-in was refused: {reason}")]
    Refused {
        /// The server's config name.
        server: String,
        /// The `error` (and `error_description`) it sent, or the state
        /// mismatch.
        reason: String,
    },
}

impl AuthError {
    /// An I/O error on `path`.
    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        AuthError::Io {
            path: path.into(),
            source,
        }
    }

    /// A failed protocol `step` of `server`, from rmcp's error.
    pub(crate) fn protocol(
        server: &str,
        step: &'static str,
        error: impl std::fmt::Display,
    ) -> Self {
        AuthError::Protocol {
            server: server.to_owned(),
            step,
            message: error.to_string(),
        }
    }
}
