//! [`ConfigWarning`]: something in a config file that toolbridge ignores
//! and the user probably did not mean (a misspelt key), reported without
//! stopping anything.

use std::fmt;

use serde_json::{Map, Value};

use super::{
    error::Location,
    fields::Source,
    settings_keys::{SETTINGS_FIELDS, SETTINGS_KEY},
    span::Step,
};

/// The keys of a server entry that toolbridge reads.
pub(crate) use super::server_keys::SERVER_KEY_NAMES as SERVER_FIELDS;

/// Keys that other applications write into a server entry and toolbridge
/// ignores on purpose: no warning for them.
const FOREIGN_FIELDS: [&str; 16] = [
    "autoApprove",    // Claude Desktop, Cline, Windsurf
    "alwaysAllow",    // Roo Code, Cline
    "description",    // several
    "name",           // several
    "source",         // Zed: "custom" or "extension"
    "settings",       // Zed: an extension server's settings
    "gallery",        // VS Code: installed from the gallery
    "version",        // VS Code
    "dev",            // VS Code: watch and debug settings
    "networkTimeout", // Cline
    "trust",          // Gemini CLI
    "includeTools",   // Gemini CLI
    "excludeTools",   // Gemini CLI
    "icon",           // several
    "title",          // several
    "$schema",
];

/// A key toolbridge does not know, in a server entry or in the
/// `"toolbridge"` settings. Its `Display` is one sentence naming the place,
/// the server, the key and the nearest known key.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ConfigWarning {
    /// Where the key is.
    pub at: Location,
    /// The server whose entry has it; `None` for the settings.
    pub server: Option<String>,
    /// The key as written.
    pub key: String,
    /// The known key it is nearest to, if one is near.
    pub suggestion: Option<&'static str>,
    /// What is ignored, when it is more than a key (a Zed extension server).
    pub note: Option<String>,
}

impl fmt::Display for ConfigWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: ", self.at)?;
        match &self.server {
            Some(server) => write!(f, "server \"{server}\": ")?,
            None => write!(f, "\"{SETTINGS_KEY}\": ")?,
        }
        if let Some(note) = &self.note {
            return f.write_str(note);
        }
        write!(f, "unknown key \"{}\" is ignored", self.key)?;
        match self.suggestion {
            Some(known) => write!(f, "; did you mean \"{known}\"?"),
            None => Ok(()),
        }
    }
}

/// Warnings for the keys of server `server`'s entry `obj` that toolbridge
/// neither reads nor ignores on purpose.
pub(crate) fn unknown_server_keys(
    src: &Source<'_>,
    server: &str,
    obj: &Map<String, Value>,
) -> Vec<ConfigWarning> {
    unknown_keys(src, Some(server), obj, &SERVER_FIELDS, &FOREIGN_FIELDS)
}

/// Warnings for the keys of the `"toolbridge"` settings that it does not read.
pub(crate) fn unknown_setting_keys(
    src: &Source<'_>,
    obj: &Map<String, Value>,
) -> Vec<ConfigWarning> {
    unknown_keys(src, None, obj, &SETTINGS_FIELDS, &[])
}

fn unknown_keys(
    src: &Source<'_>,
    server: Option<&str>,
    obj: &Map<String, Value>,
    known: &[&'static str],
    foreign: &[&str],
) -> Vec<ConfigWarning> {
    obj.keys()
        .filter(|key| !known.contains(&key.as_str()) && !foreign.contains(&key.as_str()))
        .map(|key| ConfigWarning {
            at: src.locate(server, &[Step::Key(key)]),
            server: server.map(str::to_string),
            key: key.clone(),
            suggestion: nearest(key, known),
            note: None,
        })
        .collect()
}

/// The known key `key` is most likely a misspelling of, ignoring case: one
/// `key` starts with (`environment` is `env`), else the longest common
/// prefix, ties broken by edit distance; `None` when nothing is close.
pub(crate) fn nearest(key: &str, known: &[&'static str]) -> Option<&'static str> {
    let key = key.to_ascii_lowercase();
    known
        .iter()
        .map(|candidate| {
            let lower = candidate.to_ascii_lowercase();
            let prefix = key
                .chars()
                .zip(lower.chars())
                .take_while(|(a, b)| a == b)
                .count();
            let whole = key.starts_with(&lower);
            (*candidate, whole, prefix, strsim::levenshtein(&key, &lower))
        })
        .filter(|(_, whole, prefix, distance)| *whole || *prefix >= 3 || *distance <= 2)
        .max_by(|a, b| (a.1, a.2).cmp(&(b.1, b.2)).then(b.3.cmp(&a.3)))
        .map(|(candidate, ..)| candidate)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn misspellings_point_at_the_key_meant() {
        for (typo, meant) in [
            ("enviroment", "env"),
            ("environment", "env"),
            ("arguments", "args"),
            ("header", "headers"),
            ("timout", "timeout"),
            ("disable", "disabled"),
            ("inheritenv", "inheritEnv"),
            ("comand", "command"),
            ("startup_timeout", "startupTimeout"),
        ] {
            assert_eq!(nearest(typo, &SERVER_FIELDS), Some(meant), "{typo}");
        }
        assert_eq!(nearest("zzzz", &SERVER_FIELDS), None);
    }
}
