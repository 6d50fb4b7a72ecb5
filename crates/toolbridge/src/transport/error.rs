//! [`TransportError`]: why a transport could not be opened or failed while
//! running, naming the server (and, for network servers, the URL with its
//! secrets masked).

/// How a [`TransportError::Remote`] message about a failed TLS handshake
/// starts (the HTTP and WebSocket transports say it so): what
/// [`FailureKind::of`](crate::pool::FailureKind::of) tells one by.
pub(crate) const TLS_FAILED: &str = "TLS handshake failed: ";

/// How a [`TransportError::Remote`] message about a connection that could
/// not be opened starts ("cannot connect: Connection refused ...").
pub(crate) const CANNOT_CONNECT: &str = "cannot connect: ";

/// Why a transport could not be created or failed while running.
///
/// Messages never contain header values or other secrets.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TransportError {
    /// The config cannot work with this transport (a missing url, say).
    #[error("server \"{server}\": {message}")]
    Config {
        /// The server's config name.
        server: String,
        /// What is wrong and what to do.
        message: String,
    },
    /// A stdio server's command is not installed.
    #[error(
        "server \"{server}\": command \"{command}\" not found on PATH; {fix}; see `toolbridge doctor`"
    )]
    CommandNotFound {
        /// The server's config name.
        server: String,
        /// The command as configured.
        command: String,
        /// How to install it (doctor's advice, as data: the settings page
        /// says it in its reader's language). Boxed: every `Result` of the
        /// pool carries the largest variant's size.
        fix: Box<crate::doctor::Fix>,
    },
    /// Starting the process or opening the connection failed.
    #[error("server \"{server}\": {message}")]
    Connect {
        /// The server's config name.
        server: String,
        /// What failed (with the URL, without secrets, for network servers).
        message: String,
        /// The underlying error.
        #[source]
        source: Option<Box<dyn std::error::Error + Send + Sync>>,
    },
    /// A network server could not be reached, answered with an error or
    /// broke the connection.
    #[error("server \"{server}\": {url}: {message}")]
    Remote {
        /// The server's config name.
        server: String,
        /// The URL with user info and query values masked.
        url: String,
        /// The HTTP status, when the server answered with one.
        status: Option<u16>,
        /// What happened and what to check (header values and URL secrets
        /// are masked).
        message: String,
    },
    /// A network server did not answer in time (exit code 4 in the CLI, as
    /// every timeout).
    #[error("server \"{server}\": {url}: {message}")]
    Timeout {
        /// The server's config name.
        server: String,
        /// The URL with user info and query values masked.
        url: String,
        /// What did not happen in time.
        message: String,
    },
    /// An I/O error on an open connection.
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// Any other error of an open connection.
    #[error(transparent)]
    Other(Box<dyn std::error::Error + Send + Sync>),
}

impl TransportError {
    /// True when a network server refused the request for want of a
    /// sign-in (HTTP 401 or 403 whose message says to sign in).
    pub fn needs_sign_in(&self) -> bool {
        matches!(
            self,
            TransportError::Remote { status: Some(401 | 403), message, .. }
                if message.contains("toolbridge auth login")
        )
    }
}
