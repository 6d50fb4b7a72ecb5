//! [`ServerStatus`]: whether one pooled server is running, stopped or
//! failed, for a program that shows its servers (the gateway's web page).

use std::time::SystemTime;

use super::{ConnectionInfo, FailureKind, PoolError};

/// One server's state in the pool, as of now.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ServerStatus {
    /// A live connection.
    Running {
        /// What the server said about itself when it started.
        info: ConnectionInfo,
        /// When it finished starting (wall clock).
        since: SystemTime,
    },
    /// Not started yet, or closed by the pool; the next use starts it.
    Stopped,
    /// Its last start failed, or its last connection ended by itself; the
    /// next use starts it again.
    Failed(Failure),
}

/// Why a server's start failed or its connection ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    /// The error, naming the server (no secrets, as every pool error): the
    /// library's English sentence.
    pub error: String,
    /// What kind of failure it was, as data, for a program that says it in
    /// its reader's language ([`FailureKind::of`] the same error).
    pub kind: FailureKind,
    /// The last lines the server wrote to stderr, when it wrote any.
    pub stderr: Option<String>,
    /// When it happened.
    pub at: SystemTime,
    /// The server refused toolbridge for want of an OAuth sign-in (a 401
    /// with a bearer challenge): a program with a user at hand (the
    /// gateway's page) offers to sign in instead of only showing the
    /// error.
    pub needs_sign_in: bool,
}

impl Failure {
    /// The failure `error` describes, now.
    pub(super) fn of(error: &PoolError) -> Failure {
        let stderr = match error {
            PoolError::Start { stderr, .. }
            | PoolError::StartTimeout { stderr, .. }
            | PoolError::Closed { stderr, .. }
            | PoolError::Exited { stderr, .. } => stderr.clone(),
            _ => None,
        };
        Failure {
            error: error.to_string(),
            kind: FailureKind::of(error),
            stderr,
            at: SystemTime::now(),
            needs_sign_in: error.needs_sign_in(),
        }
    }
}
