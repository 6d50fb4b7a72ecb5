//! [`FailureKind`]: why a server failed, as data. A [`Failure`](super::Failure)'s
//! `error` is the library's English sentence; its kind is what that
//! sentence says, in values no language owns (the command, the status, the
//! URL), so a program with readers of other languages (the settings page)
//! can say it in theirs from its own strings (`common.failures.KIND`, every
//! kind in [`FailureKind::KINDS`]), and say the sentence as it is for
//! [`FailureKind::Other`].
//!
//! It is derived in one place, [`FailureKind::of`], from the
//! [`PoolError`] the failure was made from (doctor's findings use it too).

use std::time::Duration;

use serde::Serialize;

use super::PoolError;
use crate::{
    doctor::Fix,
    transport::{CANNOT_CONNECT, TLS_FAILED, TransportError},
};

/// What kind of failure a server's was.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(
    tag = "kind",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
#[non_exhaustive]
pub enum FailureKind {
    /// The stdio command is not installed.
    CommandNotFound {
        /// The command as configured.
        command: String,
        /// How to install it.
        fix: Fix,
    },
    /// The process exited (before its handshake finished, or while in use).
    Exited {
        /// Its exit status.
        code: i32,
    },
    /// The process was killed by a signal.
    Killed {
        /// The signal's number.
        signal: i32,
    },
    /// The server closed the connection while a request was in flight.
    Closed,
    /// It did not finish starting within its start timeout.
    StartTimeout {
        /// The start timeout, in milliseconds.
        after_ms: u64,
    },
    /// A connection that worked ended by itself.
    StoppedByItself {
        /// How long it had been up, in milliseconds.
        after_ms: u64,
    },
    /// The server refused toolbridge for want of an OAuth sign-in.
    SignInNeeded,
    /// A network server answered with an HTTP error status.
    HttpStatus {
        /// The status.
        status: u16,
        /// The URL, its secrets masked.
        url: String,
    },
    /// Nothing listens at the URL's port.
    ConnectionRefused {
        /// The URL, its secrets masked.
        url: String,
    },
    /// The connection could not be opened (DNS, routing...).
    CannotConnect {
        /// The URL, its secrets masked.
        url: String,
    },
    /// The server's TLS certificate was not trusted.
    CertificateNotTrusted {
        /// The URL, its secrets masked.
        url: String,
    },
    /// The TLS handshake failed otherwise.
    TlsFailed {
        /// The URL, its secrets masked.
        url: String,
    },
    /// A network server did not answer in time.
    NoAnswer {
        /// The URL, its secrets masked.
        url: String,
    },
    /// Any other failure: only the library's sentence says it.
    Other,
}

impl FailureKind {
    /// Every kind a reader's language has a sentence for, as serialized
    /// (`kind`): all but `other`.
    pub const KINDS: &'static [&'static str] = &[
        "commandNotFound",
        "exited",
        "killed",
        "closed",
        "startTimeout",
        "stoppedByItself",
        "signInNeeded",
        "httpStatus",
        "connectionRefused",
        "cannotConnect",
        "certificateNotTrusted",
        "tlsFailed",
        "noAnswer",
    ];

    /// The kind of `error`'s failure.
    pub fn of(error: &PoolError) -> FailureKind {
        match error {
            PoolError::Transport(transport) => FailureKind::of_transport(transport),
            PoolError::Start {
                exit: Some(status), ..
            }
            | PoolError::Exited { status, .. } => FailureKind::of_exit(status),
            PoolError::Closed { .. } => FailureKind::Closed,
            PoolError::StartTimeout { after, .. } => FailureKind::StartTimeout {
                after_ms: millis(*after),
            },
            _ => FailureKind::Other,
        }
    }

    /// A connection that was up for `lived` and ended by itself.
    pub(super) fn stopped_by_itself(lived: Duration) -> FailureKind {
        FailureKind::StoppedByItself {
            after_ms: millis(lived),
        }
    }

    fn of_transport(error: &TransportError) -> FailureKind {
        match error {
            TransportError::CommandNotFound { command, fix, .. } => FailureKind::CommandNotFound {
                command: command.clone(),
                fix: (**fix).clone(),
            },
            _ if error.needs_sign_in() => FailureKind::SignInNeeded,
            TransportError::Remote {
                status: Some(status),
                url,
                ..
            } => FailureKind::HttpStatus {
                status: *status,
                url: url.clone(),
            },
            TransportError::Remote { url, message, .. } => {
                let url = url.clone();
                if let Some(cause) = message.strip_prefix(TLS_FAILED) {
                    if crate::doctor::is_certificate_error(cause) {
                        FailureKind::CertificateNotTrusted { url }
                    } else {
                        FailureKind::TlsFailed { url }
                    }
                } else if let Some(cause) = message.strip_prefix(CANNOT_CONNECT) {
                    if cause.to_ascii_lowercase().contains("refused") {
                        FailureKind::ConnectionRefused { url }
                    } else {
                        FailureKind::CannotConnect { url }
                    }
                } else {
                    FailureKind::Other
                }
            }
            TransportError::Timeout { url, .. } => FailureKind::NoAnswer { url: url.clone() },
            _ => FailureKind::Other,
        }
    }

    fn of_exit(status: &std::process::ExitStatus) -> FailureKind {
        use std::os::unix::process::ExitStatusExt;
        match (status.code(), status.signal()) {
            (Some(code), _) => FailureKind::Exited { code },
            (None, Some(signal)) => FailureKind::Killed { signal },
            (None, None) => FailureKind::Other,
        }
    }
}

fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use std::os::unix::process::ExitStatusExt;

    use super::*;

    fn remote(status: Option<u16>, message: &str) -> PoolError {
        PoolError::Transport(TransportError::Remote {
            server: "r".into(),
            url: "https://example.com/mcp?key=***".into(),
            status,
            message: message.into(),
        })
    }

    /// One failure of each kind, with the kind it is; the match fails to
    /// compile when a kind is added without an example here.
    fn examples() -> Vec<(PoolError, FailureKind)> {
        let url = || "https://example.com/mcp?key=***".to_owned();
        let all = vec![
            (
                PoolError::Transport(TransportError::CommandNotFound {
                    server: "s".into(),
                    command: "nope".into(),
                    fix: Box::new(Fix::InstallCommand {
                        command: "nope".into(),
                        own_path: false,
                    }),
                }),
                FailureKind::CommandNotFound {
                    command: "nope".into(),
                    fix: Fix::InstallCommand {
                        command: "nope".into(),
                        own_path: false,
                    },
                },
            ),
            (
                PoolError::Start {
                    server: "s".into(),
                    reason: "the server exited with status 3 before the handshake finished".into(),
                    exit: Some(std::process::ExitStatus::from_raw(3 << 8)),
                    stderr: None,
                },
                FailureKind::Exited { code: 3 },
            ),
            (
                PoolError::Exited {
                    server: "s".into(),
                    tool: None,
                    status: std::process::ExitStatus::from_raw(9),
                    stderr: None,
                },
                FailureKind::Killed { signal: 9 },
            ),
            (
                PoolError::Closed {
                    server: "s".into(),
                    tool: Some("t".into()),
                    stderr: None,
                },
                FailureKind::Closed,
            ),
            (
                PoolError::StartTimeout {
                    server: "s".into(),
                    after: Duration::from_millis(1500),
                    stderr: None,
                },
                FailureKind::StartTimeout { after_ms: 1500 },
            ),
            (
                PoolError::Reloaded { server: "s".into() },
                FailureKind::stopped_by_itself(Duration::from_secs(2)),
            ),
            (
                remote(
                    Some(401),
                    "the server needs you to sign in: run `toolbridge auth login r`",
                ),
                FailureKind::SignInNeeded,
            ),
            (
                remote(Some(404), "HTTP 404 Not Found; check the url"),
                FailureKind::HttpStatus {
                    status: 404,
                    url: url(),
                },
            ),
            (
                remote(
                    None,
                    "cannot connect: tcp connect error: Connection refused (os error 111); is \
                     the server running, and is the url right?",
                ),
                FailureKind::ConnectionRefused { url: url() },
            ),
            (
                remote(None, "cannot connect: dns error: failed to lookup address"),
                FailureKind::CannotConnect { url: url() },
            ),
            (
                remote(
                    None,
                    "TLS handshake failed: invalid peer certificate: UnknownIssuer",
                ),
                FailureKind::CertificateNotTrusted { url: url() },
            ),
            (
                remote(
                    None,
                    "TLS handshake failed: received fatal alert: HandshakeFailure",
                ),
                FailureKind::TlsFailed { url: url() },
            ),
            (
                PoolError::Transport(TransportError::Timeout {
                    server: "r".into(),
                    url: url(),
                    message: "no answer to the first request within 30s".into(),
                }),
                FailureKind::NoAnswer { url: url() },
            ),
            (
                PoolError::Start {
                    server: "s".into(),
                    reason: "the server closed the connection during the handshake".into(),
                    exit: None,
                    stderr: None,
                },
                FailureKind::Other,
            ),
        ];
        for (_, kind) in &all {
            match kind {
                FailureKind::CommandNotFound { .. }
                | FailureKind::Exited { .. }
                | FailureKind::Killed { .. }
                | FailureKind::Closed
                | FailureKind::StartTimeout { .. }
                | FailureKind::StoppedByItself { .. }
                | FailureKind::SignInNeeded
                | FailureKind::HttpStatus { .. }
                | FailureKind::ConnectionRefused { .. }
                | FailureKind::CannotConnect { .. }
                | FailureKind::CertificateNotTrusted { .. }
                | FailureKind::TlsFailed { .. }
                | FailureKind::NoAnswer { .. }
                | FailureKind::Other => {}
            }
        }
        all
    }

    #[test]
    fn each_failure_is_told_its_kind() {
        for (error, kind) in examples() {
            // The one made by the slot itself has no error to come from.
            if matches!(kind, FailureKind::StoppedByItself { .. }) {
                continue;
            }
            assert_eq!(FailureKind::of(&error), kind, "{error}");
        }
    }

    #[test]
    fn kinds_lists_every_kind_but_other_as_serialized_once() {
        let serialized: Vec<String> = examples()
            .iter()
            .map(|(_, kind)| {
                serde_json::to_value(kind).unwrap()["kind"]
                    .as_str()
                    .unwrap()
                    .to_owned()
            })
            .filter(|kind| kind != "other")
            .collect();
        assert_eq!(serialized, FailureKind::KINDS);
    }

    #[test]
    fn a_kind_serializes_the_values_its_sentence_is_made_of() {
        let kind = FailureKind::of(&remote(Some(500), "HTTP 500 Internal Server Error"));
        assert_eq!(
            serde_json::to_value(&kind).unwrap(),
            serde_json::json!({"kind": "httpStatus", "status": 500,
                "url": "https://example.com/mcp?key=***"})
        );
        assert_eq!(
            serde_json::to_value(FailureKind::StartTimeout { after_ms: 2500 }).unwrap(),
            serde_json::json!({"kind": "startTimeout", "afterMs": 2500})
        );
    }
}
