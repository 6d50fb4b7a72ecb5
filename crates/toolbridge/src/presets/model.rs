//! The preset data model, serialised as the spec's camelCase JSON.

use std::{fmt, str::FromStr};

use serde::{Serialize, Serializer, ser::SerializeMap};

/// What a preset is for; the spec's five categories.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Category {
    /// Web search engines.
    Search,
    /// Understanding images, screenshots and video.
    Vision,
    /// Fetching, scraping and driving web pages.
    WebReading,
    /// Source code, repositories and library documentation.
    CodeRepo,
    /// Everything else: files, memory, time, notes.
    General,
}

impl Category {
    /// Every category, in the spec's order.
    pub const ALL: [Category; 5] = [
        Category::Search,
        Category::Vision,
        Category::WebReading,
        Category::CodeRepo,
        Category::General,
    ];

    /// The name as the spec and the JSON spell it (`web-reading`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            Category::Search => "search",
            Category::Vision => "vision",
            Category::WebReading => "web-reading",
            Category::CodeRepo => "code-repo",
            Category::General => "general",
        }
    }
}

impl fmt::Display for Category {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Category {
    type Err = PresetError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Category::ALL
            .into_iter()
            .find(|c| c.as_str() == s)
            .ok_or_else(|| PresetError::UnknownCategory { name: s.to_owned() })
    }
}

/// How a preset's server is reached. The spec's `transportType`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Transport {
    /// A child process (`command` + `args`); the default.
    Stdio,
    /// A remote streamable-HTTP endpoint (`url` + `headers`).
    Http,
}

/// The registry a preset's package is published in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Registry {
    /// npmjs.com, launched with `npx -y NAME@RANGE`.
    Npm,
    /// pypi.org, launched with `uvx --from "NAME==RANGE" NAME`.
    Pypi,
}

/// The published package a stdio preset runs, for checks and for recognising
/// a configured server as this preset.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Package {
    /// Where it is published.
    pub registry: Registry,
    /// The package name (`@scope/name` for npm).
    pub name: &'static str,
    /// The pinned version range, as written in `args` (npm: `2026`, `0.2`;
    /// PyPI: `2026.*`).
    pub version: &'static str,
}

/// One curated MCP server. Field names and meanings follow the spec's
/// `OfficialMcpPreset`; `headers` and `package` are toolbridge's additions.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Preset {
    /// Unique identifier, also the default server name when added.
    pub id: &'static str,
    /// Display name.
    pub name: &'static str,
    /// Who publishes the server.
    pub provider: &'static str,
    /// What it is for.
    pub category: Category,
    /// One sentence on what it does (and what it needs).
    pub description: &'static str,
    /// The tool names the server lists (captured from the real server).
    pub tools: &'static [&'static str],
    /// Stdio (the default) or HTTP.
    #[serde(rename = "transportType")]
    pub transport: Transport,
    /// Launch command, for stdio presets.
    pub command: Option<&'static str>,
    /// Command arguments, for stdio presets.
    pub args: &'static [&'static str],
    /// Remote URL, for HTTP presets.
    pub url: Option<&'static str>,
    /// HTTP headers, for HTTP presets; `${VAR}` is the API key's reference.
    #[serde(serialize_with = "pairs_as_map")]
    pub headers: &'static [(&'static str, &'static str)],
    /// Whether the server does nothing useful without an API key.
    pub requires_api_key: bool,
    /// The variable that holds the API key (also set when the key is optional).
    pub api_key_env_var: Option<&'static str>,
    /// LLM provider ids whose key this server can reuse.
    pub linked_provider_ids: &'static [&'static str],
    /// Fixed extra environment variables.
    #[serde(serialize_with = "pairs_as_map")]
    pub extra_env: &'static [(&'static str, &'static str)],
    /// Where the server is documented.
    pub documentation_url: Option<&'static str>,
    /// An icon name for user interfaces.
    pub icon: Option<&'static str>,
    /// The package a stdio preset runs.
    pub package: Option<Package>,
    /// The sandbox its config entry gets (stdio presets).
    pub sandbox: PresetSandbox,
}

/// The sandbox a stdio preset's config entry gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum PresetSandbox {
    /// No `sandbox` key: `"default"` (or the file's `toolbridge.sandbox`).
    Default,
    /// `{"write": [the folders given after --]}`: it writes those folders
    /// and its launcher's cache, nothing else (not even `/tmp`).
    WritesItsFolders,
}

fn pairs_as_map<S: Serializer>(
    pairs: &&'static [(&'static str, &'static str)],
    s: S,
) -> Result<S::Ok, S::Error> {
    let mut map = s.serialize_map(Some(pairs.len()))?;
    for (k, v) in pairs.iter() {
        map.serialize_entry(k, v)?;
    }
    map.end()
}

/// Why a preset could not be found or turned into a config entry.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PresetError {
    /// No preset has this id.
    #[error("unknown preset \"{id}\"; `toolbridge presets list` shows the ids")]
    Unknown {
        /// The id asked for.
        id: String,
    },
    /// No category has this name.
    #[error(
        "unknown category \"{name}\"; use one of: search, vision, web-reading, code-repo, general"
    )]
    UnknownCategory {
        /// The name asked for.
        name: String,
    },
    /// An API key was given for a preset that takes none.
    #[error("preset \"{preset}\" takes no API key; leave out the key")]
    NoApiKey {
        /// The preset's id.
        preset: String,
    },
    /// The key contains `${`, which the config file would try to expand.
    #[error(
        "the API key for preset \"{preset}\" contains \"${{\", which the config file would expand; \
         export it as {var} instead"
    )]
    KeyNotStorable {
        /// The preset's id.
        preset: String,
        /// The variable to export instead.
        var: String,
    },
    /// Extra arguments were given for a remote preset.
    #[error("preset \"{preset}\" is a remote server and takes no extra arguments")]
    ExtraArgsForRemote {
        /// The preset's id.
        preset: String,
    },
}
