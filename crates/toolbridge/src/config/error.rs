//! [`ConfigError`]: what can go wrong with a config file, naming the file, the
//! server and the field it concerns.

use std::{
    fmt, io,
    path::{Path, PathBuf},
};

/// A place in a config file: the path, and the line and column when known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    /// The file, as the caller named it.
    pub path: PathBuf,
    /// 1-based line and column of the offending value, when it could be found.
    pub line_col: Option<(u32, u32)>,
}

impl Location {
    /// A location naming only the file.
    pub fn file(path: &Path) -> Self {
        Location {
            path: path.to_path_buf(),
            line_col: None,
        }
    }
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.path.display())?;
        if let Some((line, column)) = self.line_col {
            write!(f, ":{line}:{column}")?;
        }
        Ok(())
    }
}

/// Why a config file could not be read, understood, resolved or written.
///
/// Messages name the file (with `line:column` where the problem is in the
/// text), the server and the field, and never contain header or env values.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// The file exists but could not be read.
    #[error("cannot read {}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: io::Error,
    },
    /// A config file the user named (`--config`, `$TOOLBRIDGE_CONFIG`) does
    /// not exist.
    #[error(
        "config file {} does not exist; create it with `toolbridge --config {} servers add \
         NAME -- COMMAND [ARGS]...` (or `--url URL`), or name an existing file",
        .path.display(), .path.display()
    )]
    Missing {
        /// The file that was named.
        path: PathBuf,
    },
    /// The file is not valid JSON.
    #[error("{at}: invalid JSON: {message}")]
    Syntax {
        /// Where the parser stopped.
        at: Location,
        /// What the parser expected.
        message: String,
    },
    /// The JSON is valid but a value in it is not.
    #[error("{at}: {}{message}", server_prefix(.server.as_deref()))]
    Invalid {
        /// Where the offending value is.
        at: Location,
        /// The server whose record is wrong; `None` for the file's structure.
        server: Option<String>,
        /// The field that is wrong (`args`, `url`, ...), when one is.
        field: Option<String>,
        /// What is wrong, starting with the field's name.
        message: String,
    },
    /// A `${VAR}` without a default names a variable that is not set.
    #[error(
        "{at}: server \"{server}\": \"{field}\" uses ${{{variable}}}, which is not set; \
         set it, or give a default: ${{{variable}:-value}}"
    )]
    UnsetVariable {
        /// Where the value using the variable is.
        at: Location,
        /// The server being resolved.
        server: String,
        /// The field holding the reference.
        field: String,
        /// The variable's name.
        variable: String,
    },
    /// A `${input:ID}` (VS Code) has neither its variable set nor an answer.
    #[error(
        "{at}: server \"{server}\": \"{field}\" uses ${{input:{input}}}; set {}, \
         or run toolbridge on a terminal to be asked for it",
        super::expand::input_variable(.input)
    )]
    UnsetInput {
        /// Where the value using the input is.
        at: Location,
        /// The server being resolved.
        server: String,
        /// The field holding the reference.
        field: String,
        /// The input's id (the variable that answers it is
        /// [`input_variable`](super::input_variable)`(input)`).
        input: String,
    },
    /// A profile (the top-level `"profiles"`) is not valid.
    #[error("{at}: profile \"{profile}\": {message}")]
    Profile {
        /// Where the offending value is.
        at: Location,
        /// The profile.
        profile: String,
        /// The server it names that is wrong (not in the config), if that is
        /// what is wrong.
        server: Option<Box<str>>,
        /// The field that is wrong (`servers`, `tools`, ...), when one is.
        field: Option<&'static str>,
        /// What is wrong.
        message: String,
    },
    /// No profile has this name.
    #[error("{}", unknown_profile(.path, .name, .known))]
    UnknownProfile {
        /// The config file that was searched.
        path: PathBuf,
        /// The name asked for.
        name: String,
        /// The profiles the config does have.
        known: Vec<String>,
    },
    /// No server has this name.
    #[error("{}", unknown_server(.path, .name, .known))]
    UnknownServer {
        /// The config file that was searched.
        path: PathBuf,
        /// The name asked for.
        name: String,
        /// The names the config does have.
        known: Vec<String>,
    },
    /// `servers add` with a name that is taken.
    #[error(
        "{}: server \"{name}\" already exists; remove it first (toolbridge servers remove {name}) \
         or choose another name",
        .path.display()
    )]
    ServerExists {
        /// The config file.
        path: PathBuf,
        /// The name that is taken.
        name: String,
    },
    /// Writing the file (or its temporary sibling) failed; the file is unchanged.
    #[error("cannot write {}", path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: io::Error,
    },
    /// The lock file beside the config could not be created or locked.
    #[error("cannot lock {}", path.display())]
    Lock {
        /// The lock file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: io::Error,
    },
}

impl ConfigError {
    /// The file the error is about.
    pub fn path(&self) -> &Path {
        match self {
            ConfigError::Read { path, .. }
            | ConfigError::Missing { path }
            | ConfigError::UnknownServer { path, .. }
            | ConfigError::UnknownProfile { path, .. }
            | ConfigError::ServerExists { path, .. }
            | ConfigError::Write { path, .. }
            | ConfigError::Lock { path, .. } => path,
            ConfigError::Syntax { at, .. }
            | ConfigError::Invalid { at, .. }
            | ConfigError::Profile { at, .. }
            | ConfigError::UnsetVariable { at, .. }
            | ConfigError::UnsetInput { at, .. } => &at.path,
        }
    }

    /// The server the error is about, when it concerns one.
    pub fn server(&self) -> Option<&str> {
        match self {
            ConfigError::Invalid { server, .. } => server.as_deref(),
            ConfigError::Profile { server, .. } => server.as_deref(),
            ConfigError::UnsetVariable { server, .. } | ConfigError::UnsetInput { server, .. } => {
                Some(server)
            }
            ConfigError::UnknownServer { name, .. } | ConfigError::ServerExists { name, .. } => {
                Some(name)
            }
            ConfigError::Read { .. }
            | ConfigError::Missing { .. }
            | ConfigError::Syntax { .. }
            | ConfigError::UnknownProfile { .. }
            | ConfigError::Write { .. }
            | ConfigError::Lock { .. } => None,
        }
    }

    /// The profile the error is about, when it concerns one.
    pub fn profile(&self) -> Option<&str> {
        match self {
            ConfigError::Profile { profile, .. } => Some(profile),
            ConfigError::UnknownProfile { name, .. } => Some(name),
            _ => None,
        }
    }

    /// The field the error is about, when it concerns one.
    pub fn field(&self) -> Option<&str> {
        match self {
            ConfigError::Invalid { field, .. } => field.as_deref(),
            ConfigError::Profile { field, .. } => *field,
            ConfigError::UnsetVariable { field, .. } | ConfigError::UnsetInput { field, .. } => {
                Some(field)
            }
            _ => None,
        }
    }

    /// The 1-based line and column in the file, when known.
    pub fn line_col(&self) -> Option<(u32, u32)> {
        match self {
            ConfigError::Syntax { at, .. }
            | ConfigError::Invalid { at, .. }
            | ConfigError::Profile { at, .. }
            | ConfigError::UnsetVariable { at, .. }
            | ConfigError::UnsetInput { at, .. } => at.line_col,
            _ => None,
        }
    }
}

fn server_prefix(server: Option<&str>) -> String {
    match server {
        Some(name) => format!("server \"{name}\": "),
        None => String::new(),
    }
}

fn unknown_server(path: &Path, name: &str, known: &[String]) -> String {
    if known.is_empty() {
        format!(
            "unknown server \"{name}\": {} has no servers",
            path.display()
        )
    } else {
        format!(
            "unknown server \"{name}\"; {} has: {}",
            path.display(),
            known.join(", ")
        )
    }
}

fn unknown_profile(path: &Path, name: &str, known: &[String]) -> String {
    if known.is_empty() {
        format!(
            "unknown profile \"{name}\": {} has no \"profiles\"; add one there \
             (docs/config.md, \"Profiles\")",
            path.display()
        )
    } else {
        format!(
            "unknown profile \"{name}\"; {} has: {}",
            path.display(),
            known.join(", ")
        )
    }
}
