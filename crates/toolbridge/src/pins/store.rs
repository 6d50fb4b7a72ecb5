//! One server's pins on disk.
//!
//! Two files per server in the pins folder, named after the server and a
//! hash of what makes it that server (config name, transport, command,
//! arguments, working directory, URL; not its environment or headers, so a
//! rotated key keeps the pins):
//!
//! - `NAME-HASH.json`: `{"version": 1, "server": NAME, "tools": {TOOL: PIN}}`,
//!   read on every listing that finds it changed, so it holds hashes only;
//! - `NAME-HASH.definitions.json`: the pinned definitions, for
//!   `toolbridge tools diff` (read only there).
//!
//! Both are written atomically (a temporary sibling renamed over the file)
//! with mode 0600, in a folder with mode 0700. An approval writes the
//! definitions first, so that a pin never points to a definition not yet
//! written, and waits for the disk. A server's first sight writes its pins
//! file at once and leaves waiting for the disk, and the definitions, to
//! the caller's background (see `ServerPins`'s first sight): a crash in
//! between leaves pins whose `before` is missing from `tools diff`.

use std::{
    collections::HashMap,
    io,
    path::{Path, PathBuf},
};

use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest as _, Sha256};

use super::canonical::{self, Digest};
use crate::config::{ServerSpec, TransportSpec, Unsynced};

/// The version of the files' format.
const VERSION: u32 = 1;

/// What identifies a file's contents on disk without reading it: changed
/// by every write (a rename gives a new inode).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Stamp {
    modified: Option<std::time::SystemTime>,
    len: u64,
    inode: u64,
}

/// The pins of one server, as read.
#[derive(Debug, Default, Clone)]
pub(super) struct Pins {
    /// Tool name to pin, as its 32 bytes (the file holds their text).
    pub(super) tools: HashMap<String, Digest>,
}

#[derive(Serialize)]
struct PinsFile<'a> {
    version: u32,
    server: &'a str,
    tools: std::collections::BTreeMap<&'a str, &'a str>,
}

/// [`PinsFile`] as read: into the map the pins are kept in, in one pass.
#[derive(Deserialize)]
struct PinsFileRead {
    version: u32,
    tools: HashMap<String, PinRead>,
}

/// A pin's text read straight into its 32 bytes; any other text is an
/// error, which makes the file damaged.
struct PinRead(Digest);

impl<'de> Deserialize<'de> for PinRead {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visit;
        impl serde::de::Visitor<'_> for Visit {
            type Value = PinRead;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a pin: \"sha256:\" and 64 lowercase hex digits")
            }
            fn visit_str<E: serde::de::Error>(self, text: &str) -> Result<PinRead, E> {
                canonical::parse_pin(text)
                    .map(PinRead)
                    .ok_or_else(|| E::invalid_value(serde::de::Unexpected::Str(text), &self))
            }
        }
        deserializer.deserialize_str(Visit)
    }
}

#[derive(Serialize, Deserialize, Default)]
struct DefinitionsFile {
    version: u32,
    server: String,
    tools: std::collections::BTreeMap<String, Value>,
}

/// How reading the pins went.
#[derive(Debug)]
pub(super) enum Read {
    /// No file: the server was never pinned.
    Missing,
    /// The pins.
    Pins(Pins),
    /// A file that cannot be read or does not parse.
    Damaged(String),
}

/// Where one server's pins are.
#[derive(Debug, Clone)]
pub(super) struct Store {
    /// The server's config name.
    pub(super) server: String,
    /// The pins file.
    pub(super) path: PathBuf,
    /// The definitions file.
    definitions: PathBuf,
}

impl Store {
    /// The files of `spec` in `dir`.
    pub(super) fn for_spec(dir: &Path, spec: &ServerSpec) -> Self {
        let stem = file_stem(spec);
        Store {
            server: spec.name.clone(),
            path: dir.join(format!("{stem}.json")),
            definitions: dir.join(format!("{stem}.definitions.json")),
        }
    }

    /// The pins file's stamp; `None` when it does not exist (or cannot be
    /// looked at, which reading then reports).
    pub(super) fn stamp(&self) -> Option<Stamp> {
        use std::os::unix::fs::MetadataExt as _;
        let meta = std::fs::metadata(&self.path).ok()?;
        Some(Stamp {
            modified: meta.modified().ok(),
            len: meta.len(),
            inode: meta.ino(),
        })
    }

    pub(super) fn read(&self) -> Read {
        let bytes = match std::fs::read(&self.path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Read::Missing,
            Err(e) => return Read::Damaged(format!("cannot read {}: {e}", self.path.display())),
        };
        match serde_json::from_slice::<PinsFileRead>(&bytes) {
            Ok(file) if file.version == VERSION => Read::Pins(Pins {
                tools: file
                    .tools
                    .into_iter()
                    .map(|(tool, PinRead(pin))| (tool, pin))
                    .collect(),
            }),
            Ok(file) => Read::Damaged(format!(
                "{} is of version {}, which this toolbridge does not know",
                self.path.display(),
                file.version
            )),
            Err(e) => Read::Damaged(format!("{} does not parse: {e}", self.path.display())),
        }
    }

    /// The pinned definitions (empty when there are none).
    pub(super) fn read_definitions(&self) -> HashMap<String, Value> {
        std::fs::read(&self.definitions)
            .ok()
            .and_then(|bytes| serde_json::from_slice::<DefinitionsFile>(&bytes).ok())
            .map(|file| file.tools.into_iter().collect())
            .unwrap_or_default()
    }

    /// Writes `pins` and their `definitions` as the server's, replacing
    /// what was there, and waits for the disk; `definitions` of tools not
    /// in `pins` are dropped, and those missing are kept from the old file.
    pub(super) fn write(&self, pins: &Pins, definitions: HashMap<String, Value>) -> io::Result<()> {
        self.write_definitions(definitions, |tool| pins.tools.contains_key(tool))?;
        crate::config::write_atomic(&self.path, &self.pins_bytes(pins)?, 0o600)
    }

    /// Writes `pins` as the server's pins file at once, without waiting
    /// for the disk: the file is in place for every reader when this
    /// returns (and for this program after a crash of its process); the
    /// [`Unsynced`] makes it durable. A crash of the system before that may
    /// leave no file (the server is pinned afresh) or an empty one (every
    /// tool withheld until approved): never a pin that was not given.
    pub(super) fn write_pins_unsynced(&self, pins: &Pins) -> io::Result<Unsynced> {
        if let Some(dir) = self.path.parent() {
            create_private_dir(dir)?;
        }
        crate::config::write_atomic_unsynced(&self.path, &self.pins_bytes(pins)?, 0o600)
    }

    /// Writes the definitions file: `definitions` over those of the old
    /// file, of the tools `keep` keeps; waits for the disk.
    pub(super) fn write_definitions(
        &self,
        definitions: HashMap<String, Value>,
        keep: impl Fn(&str) -> bool,
    ) -> io::Result<()> {
        if let Some(dir) = self.path.parent() {
            create_private_dir(dir)?;
        }
        let mut kept = self.read_definitions();
        kept.extend(definitions);
        kept.retain(|tool, _| keep(tool));
        let definitions = DefinitionsFile {
            version: VERSION,
            server: self.server.clone(),
            tools: kept.into_iter().collect(),
        };
        let bytes = serde_json::to_vec_pretty(&definitions).map_err(io::Error::other)?;
        crate::config::write_atomic(&self.definitions, &bytes, 0o600)
    }

    fn pins_bytes(&self, pins: &Pins) -> io::Result<Vec<u8>> {
        let texts: Vec<(&str, String)> = pins
            .tools
            .iter()
            .map(|(tool, pin)| (tool.as_str(), canonical::pin_text(pin)))
            .collect();
        let file = PinsFile {
            version: VERSION,
            server: &self.server,
            tools: texts
                .iter()
                .map(|(tool, pin)| (*tool, pin.as_str()))
                .collect(),
        };
        serde_json::to_vec_pretty(&file).map_err(io::Error::other)
    }
}

fn create_private_dir(dir: &Path) -> io::Result<()> {
    use std::os::unix::fs::DirBuilderExt as _;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
}

/// `NAME-HASH`: the name made safe for a file name, and the first 8 bytes
/// (hex) of the SHA-256 of what identifies the server.
fn file_stem(spec: &ServerSpec) -> String {
    let mut key = Sha256::new();
    let mut field = |text: &str| {
        key.update((text.len() as u64).to_le_bytes());
        key.update(text.as_bytes());
    };
    field("toolbridge-pins-1");
    field(&spec.name);
    match &spec.transport {
        TransportSpec::Stdio(stdio) => {
            field("stdio");
            field(&stdio.command);
            for arg in &stdio.args {
                field(arg);
            }
            field(
                &stdio
                    .cwd
                    .as_deref()
                    .map(|p| p.to_string_lossy())
                    .unwrap_or_default(),
            );
        }
        TransportSpec::Http(remote)
        | TransportSpec::Sse(remote)
        | TransportSpec::WebSocket(remote) => {
            field("remote");
            field(&remote.url);
        }
    }
    let digest = key.finalize();
    let hash: String = digest[..8].iter().map(|b| format!("{b:02x}")).collect();
    let name: String = spec
        .name
        .chars()
        .take(64)
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    format!("{name}-{hash}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_are_private_and_round_trip() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().expect("tempdir");
        let pins_dir = dir.path().join("pins");
        let store = Store::for_spec(&pins_dir, &ServerSpec::stdio("my/server", "srv", ["a"]));
        assert!(matches!(store.read(), Read::Missing));
        assert!(store.stamp().is_none());
        let pin = canonical::digest(&crate::tools::McpTool::default());
        let pins = Pins {
            tools: HashMap::from([("t".to_owned(), pin)]),
        };
        let definitions = HashMap::from([("t".to_owned(), serde_json::json!({"name": "t"}))]);
        store.write(&pins, definitions).expect("written");
        let Read::Pins(read) = store.read() else {
            panic!("pins not read back")
        };
        assert_eq!(read.tools, pins.tools);
        // The file holds the pin's text, as every earlier toolbridge wrote it.
        let file: Value =
            serde_json::from_slice(&std::fs::read(&store.path).expect("read")).expect("json");
        assert_eq!(file["version"], 1);
        assert_eq!(file["server"], "my/server");
        assert_eq!(file["tools"]["t"], canonical::pin_text(&pin).as_str());
        assert_eq!(store.read_definitions()["t"]["name"], "t");
        let mode = |p: &Path| std::fs::metadata(p).expect("exists").permissions().mode() & 0o777;
        assert_eq!(mode(&pins_dir), 0o700);
        assert_eq!(mode(&store.path), 0o600);
        assert_eq!(mode(&store.definitions), 0o600);
        let name = store.path.file_name().expect("name").to_string_lossy();
        assert!(name.starts_with("my_server-"), "{name}");
        // Another command under the same name is another server.
        let other = Store::for_spec(&pins_dir, &ServerSpec::stdio("my/server", "srv", ["b"]));
        assert_ne!(other.path, store.path);
        std::fs::write(&store.path, "{not json").expect("write");
        assert!(matches!(store.read(), Read::Damaged(_)));
        // A pin that is not a SHA-256's text damages the file: nothing in it
        // is trusted.
        std::fs::write(
            &store.path,
            r#"{"version": 1, "server": "my/server", "tools": {"t": "sha256:1"}}"#,
        )
        .expect("write");
        assert!(matches!(store.read(), Read::Damaged(why) if why.contains("sha256")));
    }
}
