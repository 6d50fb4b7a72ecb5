//! Where the config file is: `--config PATH`, else `$TOOLBRIDGE_CONFIG`, else
//! `$XDG_CONFIG_HOME/toolbridge/config.json`, else
//! `~/.config/toolbridge/config.json`.

use std::{
    ffi::OsString,
    path::{Path, PathBuf},
};

use super::env::{Env, ProcessEnv};

/// The environment variable naming the config file.
pub const CONFIG_ENV_VAR: &str = "TOOLBRIDGE_CONFIG";

/// Where the config file is, and whether the user named it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigLocation {
    /// The file (it need not exist).
    pub path: PathBuf,
    /// True when the user named the file (`--config` or
    /// `$TOOLBRIDGE_CONFIG`): a missing file is then an error. False for the
    /// default location, where a missing file means the built-in example
    /// server.
    pub named: bool,
}

/// The config file's path: `explicit` (from `--config`) when given, else from
/// the process environment as DESIGN.md says. The file need not exist.
pub fn locate(explicit: Option<&Path>) -> PathBuf {
    locate_with(explicit, &ProcessEnv)
}

/// [`locate`], also saying whether the user named the file.
pub fn locate_config(explicit: Option<&Path>) -> ConfigLocation {
    locate_config_with(explicit, &ProcessEnv)
}

/// [`locate_config`] with the environment taken from `env`.
pub fn locate_config_with(explicit: Option<&Path>, env: &dyn Env) -> ConfigLocation {
    let named = explicit.is_some() || env.var(CONFIG_ENV_VAR).is_some_and(|v| !v.is_empty());
    ConfigLocation {
        path: locate_with(explicit, env),
        named,
    }
}

/// [`locate`] with the environment taken from `env`.
///
/// A relative `XDG_CONFIG_HOME` is ignored, as the XDG spec requires. Without
/// `HOME` the home directory comes from the system's user database.
pub fn locate_with(explicit: Option<&Path>, env: &dyn Env) -> PathBuf {
    if let Some(path) = explicit {
        return path.to_path_buf();
    }
    let non_empty = |name: &str| env.var(name).filter(|value| !value.is_empty());
    if let Some(path) = non_empty(CONFIG_ENV_VAR) {
        return PathBuf::from(path);
    }
    let config_home = xdg_base("XDG_CONFIG_HOME", ".config", |name| {
        env.var(name).map(OsString::from)
    })
    .or_else(|| std::env::home_dir().map(|home| home.join(".config")))
    .unwrap_or_else(|| PathBuf::from(".config"));
    config_home.join("toolbridge").join("config.json")
}

/// toolbridge's data folder: `$XDG_DATA_HOME/toolbridge`, else
/// `~/.local/share/toolbridge` (a relative `XDG_DATA_HOME` is ignored, as the
/// XDG spec requires); `None` without either variable. State the user cannot
/// recreate (pins, sign-in tokens) lives here, not in the cache.
pub fn user_data_dir() -> Option<PathBuf> {
    Some(
        xdg_base("XDG_DATA_HOME", ".local/share", |name| {
            std::env::var_os(name)
        })?
        .join("toolbridge"),
    )
}

/// toolbridge's cache folder: `$XDG_CACHE_HOME/toolbridge`, else
/// `~/.cache/toolbridge` (a relative `XDG_CACHE_HOME` is ignored); `None`
/// without either variable. What can be rebuilt (tool lists, saved
/// results) lives here.
pub fn user_cache_dir() -> Option<PathBuf> {
    Some(xdg_base("XDG_CACHE_HOME", ".cache", |name| std::env::var_os(name))?.join("toolbridge"))
}

/// An XDG base directory: `$VAR` when set to an absolute path (a relative
/// one is ignored, as the XDG spec requires), else `$HOME/under_home`;
/// `None` when neither is set. The one home of the XDG rule: written here
/// rather than taken from `dirs` or `etcetera` because those use
/// `~/Library` on macOS (toolbridge documents the XDG folders everywhere)
/// and read the process environment only, where the config's location is
/// also resolved against a given [`Env`] (tests, `--config` resolution).
fn xdg_base(
    var: &str,
    under_home: &str,
    lookup: impl Fn(&str) -> Option<OsString>,
) -> Option<PathBuf> {
    let set = |name: &str| lookup(name).filter(|value| !value.is_empty());
    set(var)
        .map(PathBuf::from)
        .filter(|path| path.is_absolute())
        .or_else(|| set("HOME").map(|home| PathBuf::from(home).join(under_home)))
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    fn env(vars: &[(&str, &str)]) -> HashMap<String, String> {
        vars.iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn only_the_default_location_is_unnamed() {
        let flag = locate_config_with(Some(Path::new("my.json")), &env(&[]));
        assert!(flag.named);
        let var = locate_config_with(None, &env(&[("TOOLBRIDGE_CONFIG", "/env.json")]));
        assert_eq!(
            (var.path.as_path(), var.named),
            (Path::new("/env.json"), true)
        );
        let default = locate_config_with(None, &env(&[("TOOLBRIDGE_CONFIG", ""), ("HOME", "/h")]));
        assert!(!default.named);
    }

    #[test]
    fn explicit_path_wins() {
        let env = env(&[("TOOLBRIDGE_CONFIG", "/env.json"), ("HOME", "/home/a")]);
        assert_eq!(
            locate_with(Some(Path::new("my.json")), &env),
            PathBuf::from("my.json")
        );
    }

    #[test]
    fn then_the_environment_variable() {
        let env = env(&[
            ("TOOLBRIDGE_CONFIG", "/env.json"),
            ("XDG_CONFIG_HOME", "/xdg"),
        ]);
        assert_eq!(locate_with(None, &env), PathBuf::from("/env.json"));
    }

    #[test]
    fn then_xdg_config_home() {
        let env = env(&[
            ("TOOLBRIDGE_CONFIG", ""),
            ("XDG_CONFIG_HOME", "/xdg"),
            ("HOME", "/home/a"),
        ]);
        assert_eq!(
            locate_with(None, &env),
            PathBuf::from("/xdg/toolbridge/config.json")
        );
    }

    #[test]
    fn then_home_dot_config_also_when_xdg_is_relative() {
        let expected = PathBuf::from("/home/a/.config/toolbridge/config.json");
        assert_eq!(locate_with(None, &env(&[("HOME", "/home/a")])), expected);
        let relative = env(&[("XDG_CONFIG_HOME", "rel"), ("HOME", "/home/a")]);
        assert_eq!(locate_with(None, &relative), expected);
    }

    /// The one XDG rule every folder follows: an absolute `$VAR`, else
    /// under `$HOME`; empty values count as unset, a relative `$VAR` is
    /// ignored.
    #[test]
    fn an_xdg_base_is_an_absolute_variable_else_under_home() {
        let base = |vars: &[(&str, &str)]| {
            let vars = env(vars);
            xdg_base("XDG_CACHE_HOME", ".cache", |name| {
                vars.get(name).map(OsString::from)
            })
        };
        assert_eq!(
            base(&[("XDG_CACHE_HOME", "/c"), ("HOME", "/h")]),
            Some(PathBuf::from("/c"))
        );
        assert_eq!(
            base(&[("XDG_CACHE_HOME", "rel"), ("HOME", "/h")]),
            Some(PathBuf::from("/h/.cache"))
        );
        assert_eq!(
            base(&[("XDG_CACHE_HOME", ""), ("HOME", "/h")]),
            Some(PathBuf::from("/h/.cache"))
        );
        assert_eq!(base(&[("HOME", "")]), None);
        assert_eq!(base(&[]), None);
    }
}
