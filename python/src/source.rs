//! Where a pool's servers come from: a config file, a dict in the config
//! file's shape, or the user's default config (`$TOOLBRIDGE_CONFIG`, else
//! `~/.config/toolbridge/config.json`), all read by the library's
//! [`Config`]: the same checks, `${VAR}` expansion and error messages as
//! the CLI's.

use std::path::{Path, PathBuf};

use pyo3::PyResult;
use toolbridge::{
    ServerSpec,
    config::{Config, ConfigError, StdioSpec, locate_config},
};

use crate::errors;

/// The name a dict config goes by in error messages.
pub const DICT_NAME: &str = "<config dict>";

/// The servers of a loaded config, every one resolved (disabled ones stay
/// in the pool, which refuses to start them); the first server that does
/// not resolve (a `${VAR}` that is not set, say) is the error.
fn specs(config: &Config) -> PyResult<Vec<ServerSpec>> {
    let mut specs = Vec::new();
    for name in config.server_names() {
        specs.push(config.resolve(name).map_err(|e| errors::config(&e))?);
    }
    Ok(specs)
}

/// The servers of the config file at `path`.
pub fn from_file(path: &Path) -> PyResult<Vec<ServerSpec>> {
    specs(&Config::load(path).map_err(|e| errors::config(&e))?)
}

/// The servers of `json`, the JSON text of a dict in the config file's
/// shape (`{"mcpServers": {...}}`), relative paths taken from the current
/// folder.
pub fn from_json(json: String) -> PyResult<Vec<ServerSpec>> {
    let path = std::env::current_dir()
        .unwrap_or_else(|_| PathBuf::from("."))
        .join(DICT_NAME);
    specs(&Config::parse(&path, json).map_err(|e| errors::config(&e))?)
}

/// The servers of the user's default config, as the `toolbridge` CLI finds
/// it; where no file exists (and none was named), the built-in example
/// server, run by `example` (this interpreter with `-m toolbridge
/// example-server`).
pub fn user_default(example: StdioSpec) -> PyResult<Vec<ServerSpec>> {
    let location = locate_config(None);
    let config =
        Config::load_located(&location, example).map_err(|e: ConfigError| errors::config(&e))?;
    specs(&config)
}
