//! [`Env`]: where `${VAR}` values and the config location come from. The
//! process environment in the program, a map in tests.

use std::collections::{BTreeMap, HashMap};

/// A source of environment variables.
pub trait Env: Send + Sync {
    /// The value of `name`, or `None` when it is not set.
    fn var(&self, name: &str) -> Option<String>;

    /// The answer to `${input:ID}` when its variable
    /// ([`input_variable`](super::input_variable)) is not set: a program on
    /// a terminal asks the user (hiding the answer when `input.password`);
    /// `None` (the default) makes the reference an error naming the input.
    fn ask(&self, input: &Input) -> Option<String> {
        let _ = input;
        None
    }
}

/// An entry of a VS Code config's `inputs`: what `${input:ID}` asks for.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Input {
    /// The id, as in `${input:ID}`.
    pub id: String,
    /// The prompt (`description`), when the file gives one.
    pub description: Option<String>,
    /// True for `"password": true`: the answer is not echoed.
    pub password: bool,
}

/// The environment of the running process.
#[derive(Debug, Clone, Copy, Default)]
pub struct ProcessEnv;

impl Env for ProcessEnv {
    fn var(&self, name: &str) -> Option<String> {
        std::env::var_os(name).map(|value| value.to_string_lossy().into_owned())
    }
}

impl Env for HashMap<String, String> {
    fn var(&self, name: &str) -> Option<String> {
        self.get(name).cloned()
    }
}

impl Env for BTreeMap<String, String> {
    fn var(&self, name: &str) -> Option<String> {
        self.get(name).cloned()
    }
}
