//! The library's errors as Python exceptions. The classes are defined in
//! Python (`toolbridge/errors.py`) so that they can also derive from the
//! built-in ones (`TimeoutError`, `ValueError`); this module picks the
//! class for each error. The message is the library's, which names the
//! server, tool or file and says what to do.

use pyo3::{prelude::*, sync::PyOnceLock, types::PyType};
use toolbridge::{ConfigError, PoolError, adapter::ExecError};

/// The exception classes, by their name in `toolbridge.errors`.
#[derive(Debug, Clone, Copy)]
pub enum Kind {
    /// Anything else the library reports (a server that failed to start,
    /// closed, or refused a request).
    Server,
    /// A bad config file or dict.
    Config,
    /// What the caller asked for does not exist or is not allowed (an
    /// unknown server, tool, prompt or resource; a disabled one; bad
    /// arguments).
    Usage,
    /// A call, request or start passed its time.
    Timeout,
}

impl Kind {
    fn class_name(self) -> &'static str {
        match self {
            Kind::Server => "ServerError",
            Kind::Config => "ConfigError",
            Kind::Usage => "UsageError",
            Kind::Timeout => "CallTimeout",
        }
    }
}

static SERVER: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static CONFIG: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static USAGE: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static TIMEOUT: PyOnceLock<Py<PyType>> = PyOnceLock::new();

/// A Python exception of `kind` carrying `message`.
pub fn error(kind: Kind, message: impl Into<String>) -> PyErr {
    let message = message.into();
    Python::attach(|py| {
        let cell = match kind {
            Kind::Server => &SERVER,
            Kind::Config => &CONFIG,
            Kind::Usage => &USAGE,
            Kind::Timeout => &TIMEOUT,
        };
        match cell.import(py, "toolbridge.errors", kind.class_name()) {
            Ok(class) => PyErr::from_type(class.clone(), message),
            Err(e) => e,
        }
    })
}

/// An error of a library future, made an exception only once back in the
/// interpreter (see `bridge`).
#[derive(Debug)]
pub struct Failure {
    kind: Kind,
    message: String,
}

impl Failure {
    /// The exception.
    pub fn into_py(self) -> PyErr {
        error(self.kind, self.message)
    }
}

/// A pool error: a timeout, a usage error, or the server's.
pub fn pool(e: &PoolError) -> Failure {
    let kind = if e.is_timeout() {
        Kind::Timeout
    } else if e.is_usage() {
        Kind::Usage
    } else {
        Kind::Server
    };
    Failure {
        kind,
        message: e.to_string(),
    }
}

/// The exception for a config error.
pub fn config(e: &ConfigError) -> PyErr {
    error(Kind::Config, e.to_string())
}

/// A response that could not be run.
pub fn exec(e: &ExecError) -> Failure {
    Failure {
        kind: Kind::Usage,
        message: e.to_string(),
    }
}
