//! Adding a preset to a config file as a server: the one code path behind
//! `toolbridge presets add` and the web page's Presets view.
//!
//! The API key follows one rule wherever it comes from: without a key the
//! entry holds a `${VAR}` reference the config expands at start-up (see
//! [`to_config_entry`]); with a key, the key itself is stored and the file is
//! made readable by its owner only (0600), because it now holds a secret.

use std::path::{Path, PathBuf};

use super::{
    entry::to_config_entry,
    get,
    model::{Preset, PresetError},
};
use crate::config::{self, ConfigError};

/// What to add: which preset, under which name, with which key.
#[derive(Clone, Copy, Default)]
pub struct AddPreset<'a> {
    /// The preset's id (see [`all`](super::all)).
    pub id: &'a str,
    /// The server's name in the config; `None`: the preset's id.
    pub name: Option<&'a str>,
    /// The API key to store in the file as is; `None`: a `${VAR}` reference.
    pub api_key: Option<&'a str>,
    /// Extra arguments appended to a stdio preset's arguments.
    pub extra_args: &'a [String],
}

// Written by hand: a derived `Debug` would print the key.
impl std::fmt::Debug for AddPreset<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AddPreset")
            .field("id", &self.id)
            .field("name", &self.name)
            .field("api_key", &self.api_key.map(|_| "***"))
            .field("extra_args", &self.extra_args)
            .finish()
    }
}

/// Where the added server's API key is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeyPlace {
    /// The preset takes no key.
    NoKey,
    /// The key is stored in the file, which is now readable by its owner only.
    Stored,
    /// The entry refers to this environment variable, which must be exported
    /// before toolbridge starts (`required`), or may be for higher limits.
    Reference {
        /// The variable's name.
        var: &'static str,
        /// Whether the server does nothing useful without it.
        required: bool,
    },
}

/// What [`add`] did.
#[derive(Debug, Clone)]
pub struct Added {
    /// The server's name in the config.
    pub name: String,
    /// The preset it was made from.
    pub preset: &'static Preset,
    /// Where its key is.
    pub key: KeyPlace,
    /// The config file written.
    pub path: PathBuf,
}

/// Why a preset could not be added; the file is then unchanged.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AddError {
    /// The preset is unknown, or the key or arguments do not fit it.
    #[error(transparent)]
    Preset(#[from] PresetError),
    /// The config file could not be read, parsed or written, or the name is
    /// taken or invalid.
    #[error(transparent)]
    Config(#[from] ConfigError),
}

/// Adds `request`'s preset to the config file at `path` (locked, atomic,
/// never over a file that does not parse; see [`config::edit`]). With a key,
/// the file is written readable by its owner only ([`config::edit_private`]).
pub fn add(path: &Path, request: &AddPreset<'_>) -> Result<Added, AddError> {
    let preset = get(request.id)?;
    let name = request.name.unwrap_or(preset.id).to_owned();
    let entry = to_config_entry(preset, request.api_key, request.extra_args)?;
    let add_server = |doc: &mut config::Document| doc.add_server(&name, entry);
    let key = match (request.api_key, preset.api_key_env_var) {
        (Some(_), _) => KeyPlace::Stored,
        (None, Some(var)) => KeyPlace::Reference {
            var,
            required: preset.requires_api_key,
        },
        (None, None) => KeyPlace::NoKey,
    };
    if key == KeyPlace::Stored {
        // Written 0600 from the start: the key is never readable by
        // others, not even between the write and a chmod.
        config::edit_private(path, add_server)?;
    } else {
        config::edit(path, add_server)?;
    }
    Ok(Added {
        name,
        preset,
        key,
        path: path.to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_is_stored_and_the_file_made_private_a_reference_leaves_it() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.json");
        std::fs::write(&path, "{\"mcpServers\": {}}\n").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        let mode = || std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;

        let added = add(
            &path,
            &AddPreset {
                id: "tavily",
                ..AddPreset::default()
            },
        )
        .unwrap();
        assert_eq!(
            added.key,
            KeyPlace::Reference {
                var: "TAVILY_API_KEY",
                required: true
            }
        );
        assert_eq!(mode(), 0o644);

        let added = add(
            &path,
            &AddPreset {
                id: "tavily",
                name: Some("t2"),
                api_key: Some("tvly-1"),
                ..AddPreset::default()
            },
        )
        .unwrap();
        assert_eq!((added.name.as_str(), added.key), ("t2", KeyPlace::Stored));
        assert_eq!(mode(), 0o600);
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.contains("${TAVILY_API_KEY}") && text.contains("tvly-1"));
    }

    #[test]
    fn a_taken_name_changes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.json");
        let request = AddPreset {
            id: "memory",
            ..AddPreset::default()
        };
        add(&path, &request).unwrap();
        let before = std::fs::read(&path).unwrap();
        assert!(matches!(
            add(&path, &request),
            Err(AddError::Config(ConfigError::ServerExists { .. }))
        ));
        assert_eq!(std::fs::read(&path).unwrap(), before);
    }
}
