//! [`Env`]: where `${VAR}` values and the config location come from. The
//! process environment in the program, a map in tests.

use std::collections::{BTreeMap, HashMap};

/// A source of environment variables.
pub trait Env: Send + Sync {
    /// The value of `name`, or `None` when it is not set.
    fn var(&self, name: &str) -> Option<String>;
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
