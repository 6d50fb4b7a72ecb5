//! [`Sandbox`]: what a stdio server may do, as its config's `sandbox` says
//! (paths expanded).

use std::{fmt, path::PathBuf};

/// A stdio server's sandbox, from `sandbox` (per server) or
/// `toolbridge.sandbox` (for all): `false`, `"default"` or an object of
/// [`SandboxRules`]. Without either, [`Sandbox::Default`].
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Sandbox {
    /// `false`: the server runs with the user's full rights.
    Off,
    /// `"default"`: read the system, the server's own files and its
    /// launcher's caches; write its temporary folder, its launcher's caches
    /// and the folders named in its arguments; any network.
    #[default]
    Default,
    /// An object: the system and the server's own files to read, its
    /// launcher's caches to write, and exactly these rules beyond.
    Rules(SandboxRules),
}

/// The object form of `sandbox`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SandboxRules {
    /// More paths the server may read (and run), `~` and `${VAR}` expanded.
    pub read: Vec<PathBuf>,
    /// Paths the server may read and write (create, delete, rename inside).
    pub write: Vec<PathBuf>,
    /// What network it may use (`"any"` when not given).
    pub network: Network,
    /// Most address space per process, in MiB (`memoryMb`).
    pub memory_mb: Option<u64>,
    /// Most processes the server may have at once, itself included
    /// (`processes`).
    pub processes: Option<u64>,
}

/// The `network` of a sandbox.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Network {
    /// The user's network, as without a sandbox.
    #[default]
    Any,
    /// A network namespace of its own with only a loopback interface: the
    /// server's processes reach each other on 127.0.0.1, never the host's
    /// loopback services nor any other address.
    Loopback,
    /// A network namespace without any interface up, and (Landlock ABI 4
    /// and later) no TCP connect or bind at all.
    None,
}

impl Network {
    /// As the config writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            Network::Any => "any",
            Network::Loopback => "loopback",
            Network::None => "none",
        }
    }

    /// Parses a config value.
    pub fn parse(text: &str) -> Option<Self> {
        Some(match text {
            "any" => Network::Any,
            "loopback" => Network::Loopback,
            "none" => Network::None,
            _ => return None,
        })
    }
}

impl Sandbox {
    /// The network it allows.
    pub fn network(&self) -> Network {
        match self {
            Sandbox::Rules(rules) => rules.network,
            Sandbox::Off | Sandbox::Default => Network::Any,
        }
    }

    /// True unless `false`.
    pub fn is_on(&self) -> bool {
        !matches!(self, Sandbox::Off)
    }
}

/// One line for `servers list` and `doctor`: `off`, `default`, or the rules
/// ("read 1 path, write 2 paths, network none, memory 512 MiB, 64 processes").
impl fmt::Display for Sandbox {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Sandbox::Off => f.write_str("off"),
            Sandbox::Default => f.write_str("default"),
            Sandbox::Rules(rules) => {
                let paths = |n: usize| if n == 1 { "path" } else { "paths" };
                let mut parts = Vec::new();
                if !rules.read.is_empty() {
                    parts.push(format!(
                        "read {} {}",
                        rules.read.len(),
                        paths(rules.read.len())
                    ));
                }
                parts.push(format!(
                    "write {} {}",
                    rules.write.len(),
                    paths(rules.write.len())
                ));
                parts.push(format!("network {}", rules.network.as_str()));
                if let Some(mb) = rules.memory_mb {
                    parts.push(format!("memory {mb} MiB"));
                }
                if let Some(n) = rules.processes {
                    parts.push(format!("{n} processes"));
                }
                write!(f, "{}", parts.join(", "))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rules_read_as_one_line() {
        let rules = Sandbox::Rules(SandboxRules {
            write: vec!["/srv/a".into()],
            network: Network::None,
            memory_mb: Some(512),
            processes: Some(64),
            ..SandboxRules::default()
        });
        assert_eq!(
            rules.to_string(),
            "write 1 path, network none, memory 512 MiB, 64 processes"
        );
        assert_eq!(Sandbox::default().to_string(), "default");
        assert_eq!(Sandbox::Off.to_string(), "off");
    }
}
