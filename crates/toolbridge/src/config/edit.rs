//! Changing the config file safely: [`edit`] locks, re-reads, changes,
//! writes atomically, unlocks.
//!
//! - Lock: an exclusive `flock` on the file's directory, so two
//!   `toolbridge servers add` at once both land (each re-reads the file
//!   after getting the lock). No lock file is created: the directory is
//!   often another application's (`.vscode/`, Claude's), and a stray
//!   `mcp.json.lock` there is litter.
//! - Text: only the servers that changed are rewritten (see `patch`);
//!   comments, blank lines and the file's indentation stay. When that is
//!   not possible the whole file is written with its indentation, unless it
//!   has comments, which would be lost: then nothing is written.
//! - Write: a temporary file in the same directory, given the original's
//!   permissions, synced, then renamed over the original. Readers see the
//!   old file or the new one, never half of one.
//! - A file that does not parse is never written: the error is returned and
//!   the file is left byte for byte as it was.
//! - A symlinked config (dotfile managers) is written through: the link
//!   stays, its target is replaced.

use std::{
    ffi::OsString,
    fs::{self, File},
    io::{self, Write},
    path::{Path, PathBuf},
};

use super::{document::Document, error::ConfigError, jsonc, patch};

/// Permissions of a new config file that holds secrets (env values, headers).
pub const NEW_FILE_MODE_SECRET: u32 = 0o600;
/// Permissions of a new config file without secrets.
pub const NEW_FILE_MODE: u32 = 0o644;

/// Applies `change` to the config file at `path` under its lock and saves the
/// result atomically.
///
/// A missing file starts as `{"mcpServers": {}}` (and its directory is
/// created); it is only created if `change` changes something. If `change`
/// returns an error, nothing is written. If nothing changed, the file is not
/// rewritten. Returns what `change` returned.
pub fn edit<T>(
    path: &Path,
    change: impl FnOnce(&mut Document) -> Result<T, ConfigError>,
) -> Result<T, ConfigError> {
    edit_with(path, false, change)
}

/// [`edit`], for a change that puts a secret in the file (an API key as
/// is): the file is written readable by its owner only
/// ([`NEW_FILE_MODE_SECRET`]) whatever its mode was, so the secret is never
/// readable by others, not even for a moment.
pub fn edit_private<T>(
    path: &Path,
    change: impl FnOnce(&mut Document) -> Result<T, ConfigError>,
) -> Result<T, ConfigError> {
    edit_with(path, true, change)
}

fn edit_with<T>(
    path: &Path,
    private: bool,
    change: impl FnOnce(&mut Document) -> Result<T, ConfigError>,
) -> Result<T, ConfigError> {
    let write_error = |source| ConfigError::Write {
        path: path.to_path_buf(),
        source,
    };
    let target = real_path(path).map_err(write_error)?;
    if let Some(dir) = target.parent().filter(|d| !d.as_os_str().is_empty()) {
        fs::create_dir_all(dir).map_err(write_error)?;
    }
    let _lock = lock(&target)?;

    let (mut doc, mode, original) = match fs::read_to_string(&target) {
        Ok(text) => {
            let mode = fs::metadata(&target).map(|m| mode_of(&m)).ok();
            (Document::parse(path, &text)?, mode, Some(text))
        }
        Err(error) if error.kind() == io::ErrorKind::NotFound => {
            (Document::new_file(path), None, None)
        }
        Err(source) => {
            return Err(ConfigError::Read {
                path: path.to_path_buf(),
                source,
            });
        }
    };
    let before = doc.root.clone();
    let out = change(&mut doc)?;
    if doc.root == before {
        return Ok(out);
    }
    // A file that holds a secret after the change (an env or header value,
    // a URL or argument secret) is made readable by its owner only, however
    // the change came (the page's server form too): a 0644 file gaining an
    // API key would otherwise show it to every local user.
    let mode = match mode {
        Some(mode) if private || doc.has_secrets() => mode & !0o077,
        Some(mode) => mode,
        None if private || doc.has_secrets() => NEW_FILE_MODE_SECRET,
        None => NEW_FILE_MODE,
    };
    let text = match &original {
        None => doc.to_json_string("  ")?,
        Some(original) => {
            let indent = patch::indent_of(original);
            match patch::patch(original, doc.layout(), &before, &doc.root, &indent) {
                Some(text) => text,
                None if has_comments(original) => {
                    return Err(write_error(io::Error::other(
                        "the change cannot be made without losing the file's comments; \
                         make it in your editor",
                    )));
                }
                None => doc.to_json_string(&indent)?,
            }
        }
    };
    write_atomic(&target, text.as_bytes(), mode).map_err(write_error)?;
    Ok(out)
    // `_lock` is dropped here, after the rename: the next editor reads the new file.
}

/// True when `text` has `//` or `/* */` comments.
fn has_comments(text: &str) -> bool {
    let stripped = jsonc::strip(text);
    // Blanking a trailing comma changes one byte to a space; a comment
    // blanks a `/`.
    text.bytes()
        .zip(stripped.bytes())
        .any(|(a, b)| a == b'/' && b == b' ')
}

/// Holds the exclusive lock until dropped.
struct Lock(File);

impl Drop for Lock {
    fn drop(&mut self) {
        // Closing the file would release the lock too; unlocking says so.
        let _ = self.0.unlock();
    }
}

/// Locks the directory holding `target` (created beforehand by `edit`).
fn lock(target: &Path) -> Result<Lock, ConfigError> {
    let dir = match target.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    let lock_error = |source| ConfigError::Lock {
        path: dir.to_path_buf(),
        source,
    };
    let file = File::open(dir).map_err(lock_error)?;
    file.lock().map_err(lock_error)?;
    Ok(Lock(file))
}

/// `path`, or the file it links to when it is a symlink (the target need
/// not exist yet: a dotfile manager may link to a file still to be written).
fn real_path(path: &Path) -> io::Result<PathBuf> {
    let mut current = path.to_path_buf();
    // The same bound the kernel puts on a chain of links.
    for _ in 0..40 {
        match fs::symlink_metadata(&current) {
            Ok(meta) if meta.file_type().is_symlink() => {
                let target = fs::read_link(&current)?;
                current = match current.parent() {
                    Some(dir) if target.is_relative() => dir.join(target),
                    _ => target,
                };
            }
            _ => return Ok(current),
        }
    }
    Err(io::Error::other("too many levels of symbolic links"))
}

/// Writes `bytes` to `target` (with permissions `mode`) through a synced
/// temporary sibling and a rename: readers see the old file or the new one.
pub fn write_atomic(target: &Path, bytes: &[u8], mode: u32) -> io::Result<()> {
    let (tmp, dir) = write_sibling(target, bytes, mode)?;
    tmp.as_file().sync_all()?;
    tmp.persist(target).map_err(|error| error.error)?;
    sync_dir(&dir);
    Ok(())
}

/// [`write_atomic`] without waiting for the disk: `target` is replaced at
/// once through a temporary sibling and a rename (readers, and this
/// program started again after a crash of its process, see the old file or
/// the new one), and [`Unsynced::sync`] makes it durable when called,
/// on another thread if need be. Until then a crash of the *system* may
/// leave the old file, none, or an empty one (the rename reached the disk
/// before the data): for a file whose readers treat an unparsable file as
/// the safe case.
pub fn write_atomic_unsynced(target: &Path, bytes: &[u8], mode: u32) -> io::Result<Unsynced> {
    let (tmp, dir) = write_sibling(target, bytes, mode)?;
    let file = tmp.persist(target).map_err(|error| error.error)?;
    Ok(Unsynced { file, dir })
}

/// A file written by [`write_atomic_unsynced`], not yet on the disk for sure.
#[derive(Debug)]
pub struct Unsynced {
    file: File,
    dir: PathBuf,
}

impl Unsynced {
    /// Waits for the file's data and its rename to reach the disk.
    pub fn sync(self) -> io::Result<()> {
        self.file.sync_all()?;
        sync_dir(&self.dir);
        Ok(())
    }
}

/// `bytes` in a new temporary sibling of `target` with permissions `mode`,
/// and `target`'s folder.
fn write_sibling(
    target: &Path,
    bytes: &[u8],
    mode: u32,
) -> io::Result<(tempfile::NamedTempFile, PathBuf)> {
    let dir = match target.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    let mut prefix = OsString::from(".");
    prefix.push(target.file_name().unwrap_or_default());
    prefix.push(".");
    let mut tmp = tempfile::Builder::new()
        .prefix(&prefix)
        .suffix(".tmp")
        .tempfile_in(dir)?;
    tmp.write_all(bytes)?;
    set_mode(tmp.as_file(), mode)?;
    Ok((tmp, dir.to_path_buf()))
}

/// Makes a rename in `dir` durable; not all file systems allow syncing a
/// directory, and the data is already safe, so failure here is ignored.
fn sync_dir(dir: &Path) {
    if let Ok(dir) = File::open(dir) {
        let _ = dir.sync_all();
    }
}

#[cfg(unix)]
fn mode_of(meta: &fs::Metadata) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    meta.permissions().mode() & 0o7777
}

#[cfg(not(unix))]
fn mode_of(_meta: &fs::Metadata) -> u32 {
    NEW_FILE_MODE
}

#[cfg(unix)]
fn set_mode(file: &File, mode: u32) -> io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    file.set_permissions(fs::Permissions::from_mode(mode))
}

#[cfg(not(unix))]
fn set_mode(_file: &File, _mode: u32) -> io::Result<()> {
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::{
        os::unix::fs::{MetadataExt, PermissionsExt},
        sync::{Arc, Barrier},
        thread,
    };

    use serde_json::{Value, json};

    use super::*;
    use crate::config::{Config, NewServer};

    fn stdio(command: &str) -> Value {
        NewServer::stdio(command, vec![]).to_record()
    }

    fn mode(path: &Path) -> u32 {
        fs::metadata(path).unwrap().permissions().mode() & 0o777
    }

    fn dir_entries(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn a_missing_file_is_created_with_its_directory() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("nested/toolbridge/config.json");
        let existed = edit(&path, |doc| {
            doc.add_server("a", stdio("srv"))?;
            Ok(doc.existed())
        })
        .unwrap();
        assert!(!existed);
        let text = fs::read_to_string(&path).unwrap();
        assert_eq!(
            serde_json::from_str::<Value>(&text).unwrap(),
            json!({"mcpServers": {"a": {"command": "srv"}}})
        );
        assert!(text.ends_with("}\n"));
        assert_eq!(mode(&path), NEW_FILE_MODE);
    }

    #[test]
    fn a_new_file_with_secrets_is_readable_by_its_owner_only() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.json");
        let mut server = NewServer::remote("https://h/mcp", None);
        if let crate::config::NewTarget::Remote { headers, .. } = &mut server.target {
            headers.push(("Authorization".into(), "Bearer x".into()));
        }
        edit(&path, |doc| doc.add_server("r", server.to_record())).unwrap();
        assert_eq!(mode(&path), NEW_FILE_MODE_SECRET);
    }

    #[test]
    fn an_existing_file_keeps_its_permissions() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.json");
        fs::write(&path, "{\"mcpServers\": {}}").unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(0o640)).unwrap();
        edit(&path, |doc| doc.add_server("a", stdio("srv"))).unwrap();
        assert_eq!(mode(&path), 0o640);
        assert!(Config::load(&path).unwrap().contains("a"));
    }

    #[test]
    fn the_file_is_replaced_by_rename_and_no_temporary_file_is_left() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.json");
        fs::write(&path, "{\"mcpServers\": {}}").unwrap();
        let inode_before = fs::metadata(&path).unwrap().ino();
        edit(&path, |doc| doc.add_server("a", stdio("srv"))).unwrap();
        assert_ne!(fs::metadata(&path).unwrap().ino(), inode_before);
        assert_eq!(dir_entries(dir.path()), ["config.json"]);
    }

    #[test]
    fn unknown_fields_and_key_order_survive_an_edit() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.json");
        let original = r#"{
  "$schema": "https://example.com/schema.json",
  "zeta": 1,
  "mcpServers": {
    "b": {"command": "b", "description": "kept", "autoApprove": ["x"], "args": ["1"]},
    "a": {"url": "https://h/mcp", "oauth": {"clientId": "c"}},
    "c": {"command": "c"}
  },
  "alpha": {"nested": [1, 2, {"deep": true}]}
}"#;
        fs::write(&path, original).unwrap();
        edit(&path, |doc| {
            doc.remove_server("a")?;
            doc.add_server("d", stdio("d"))?;
            doc.set_disabled("b", true)
        })
        .unwrap();
        let text = fs::read_to_string(&path).unwrap();
        let value: Value = serde_json::from_str(&text).unwrap();
        let root = value.as_object().unwrap();
        assert_eq!(
            root.keys().collect::<Vec<_>>(),
            ["$schema", "zeta", "mcpServers", "alpha"]
        );
        assert_eq!(root["alpha"], json!({"nested": [1, 2, {"deep": true}]}));
        let servers = root["mcpServers"].as_object().unwrap();
        assert_eq!(servers.keys().collect::<Vec<_>>(), ["b", "c", "d"]);
        let b = servers["b"].as_object().unwrap();
        assert_eq!(
            b.keys().collect::<Vec<_>>(),
            ["command", "description", "autoApprove", "args", "disabled"]
        );
        assert_eq!(b["autoApprove"], json!(["x"]));

        // Enabling removes the field and leaves the rest in place.
        edit(&path, |doc| doc.set_disabled("b", false)).unwrap();
        let value: Value = serde_json::from_str(&fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(
            value["mcpServers"]["b"],
            json!({"command": "b", "description": "kept", "autoApprove": ["x"], "args": ["1"]})
        );
    }

    #[test]
    fn a_tool_is_disabled_and_enabled_again_and_the_rest_of_the_file_stays() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.json");
        let original = "{\n  // mine\n  \"mcpServers\": {\n    \"a\": {\"command\": \"a\"},\n    \"b\": {\"command\": \"b\",   \"args\": [\"1\"]}\n  }\n}\n";
        fs::write(&path, original).unwrap();
        assert!(edit(&path, |doc| doc.set_tool_disabled("b", "rm", true)).unwrap());
        assert!(!edit(&path, |doc| doc.set_tool_disabled("b", "rm", true)).unwrap());
        assert!(edit(&path, |doc| doc.set_tool_disabled("b", "mv", true)).unwrap());
        let text = fs::read_to_string(&path).unwrap();
        assert!(text.contains("// mine"), "{text}");
        assert!(text.contains("\"a\": {\"command\": \"a\"}"), "{text}");
        let value: Value = serde_json::from_str(&jsonc::strip(&text)).unwrap();
        assert_eq!(
            value["mcpServers"]["b"]["disabledTools"],
            json!(["rm", "mv"])
        );

        assert!(edit(&path, |doc| doc.set_tool_disabled("b", "rm", false)).unwrap());
        assert!(edit(&path, |doc| doc.set_tool_disabled("b", "mv", false)).unwrap());
        assert!(!edit(&path, |doc| doc.set_tool_disabled("b", "mv", false)).unwrap());
        let text = fs::read_to_string(&path).unwrap();
        let value: Value = serde_json::from_str(&jsonc::strip(&text)).unwrap();
        assert_eq!(
            value["mcpServers"]["b"],
            json!({"command": "b", "args": ["1"]})
        );
        assert!(
            text.contains("// mine") && text.contains("\"a\": {\"command\": \"a\"}"),
            "{text}"
        );

        let unknown = edit(&path, |doc| doc.set_tool_disabled("zz", "rm", true)).unwrap_err();
        assert!(unknown.to_string().contains("zz"), "{unknown}");
    }

    #[test]
    fn vs_code_style_files_are_edited_under_servers() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("mcp.json");
        fs::write(
            &path,
            r#"{"servers": {"a": {"command": "a"}}, "inputs": []}"#,
        )
        .unwrap();
        edit(&path, |doc| doc.add_server("b", stdio("b"))).unwrap();
        let value: Value = serde_json::from_str(&fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(
            value,
            // VS Code's own entries carry a `type`.
            json!({"servers": {"a": {"command": "a"}, "b": {"type": "stdio", "command": "b"}}, "inputs": []})
        );
    }

    #[test]
    fn a_file_that_does_not_parse_is_never_written() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.json");
        for broken in [
            "{\n  \"mcpServers\": {\n    \"a\": {\"command\" \"x\"}\n  }\n}",
            "{\"mcpServers\": [1]}",
            "",
        ] {
            fs::write(&path, broken).unwrap();
            let error = edit(&path, |doc| doc.add_server("b", stdio("b"))).unwrap_err();
            assert!(
                matches!(
                    error,
                    ConfigError::Syntax { .. } | ConfigError::Invalid { .. }
                ),
                "{error:?}"
            );
            assert!(error.line_col().is_some(), "{error}");
            assert_eq!(fs::read_to_string(&path).unwrap(), broken);
        }
        assert_eq!(dir_entries(dir.path()), ["config.json"]);
    }

    #[test]
    fn a_broken_server_record_can_still_be_removed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.json");
        fs::write(
            &path,
            r#"{"mcpServers": {"bad": {"args": "x"}, "ok": {"command": "x"}}}"#,
        )
        .unwrap();
        assert!(Config::load(&path).is_err());
        edit(&path, |doc| doc.remove_server("bad")).unwrap();
        assert_eq!(Config::load(&path).unwrap().server_names(), ["ok"]);
    }

    #[test]
    fn a_server_a_profile_names_is_not_removed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.json");
        let original = r#"{"mcpServers": {"a": {"command": "a"}, "b": {"command": "b"}},
            "profiles": {"team": {"servers": ["a"]}}}"#;
        fs::write(&path, original).unwrap();
        let error = edit(&path, |doc| doc.remove_server("a")).unwrap_err();
        assert_eq!(error.profile(), Some("team"));
        assert!(
            error
                .to_string()
                .contains("profile \"team\": \"servers\" names server \"a\"; take it out"),
            "{error}"
        );
        assert_eq!(fs::read_to_string(&path).unwrap(), original);
        edit(&path, |doc| doc.remove_server("b")).unwrap();
        assert_eq!(Config::load(&path).unwrap().server_names(), ["a"]);
    }

    /// A commented config with two profiles, for the profile edits.
    const WITH_PROFILES: &str = "{\n  // servers\n  \"mcpServers\": {\n    \"a\": {\"command\": \"a\"},\n    \"b\": {\"command\": \"b\"}\n  },\n  \"profiles\": {\n    // The team's view.\n    \"team\": {\"servers\": [\"a\"], \"tools\": [\"a__*\"]}, // kept\n    /* ops */\n    \"ops\": {\"tools\": [\"!*__delete_*\"]}\n  }\n}\n";

    #[test]
    fn a_profile_put_in_place_leaves_every_other_byte_of_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.json");
        fs::write(&path, WITH_PROFILES).unwrap();
        let old = edit(&path, |doc| {
            doc.put_profile("ops", json!({"servers": ["b"], "discovery": "search"}))
        })
        .unwrap();
        assert_eq!(old, Some(json!({"tools": ["!*__delete_*"]})));
        assert_eq!(
            fs::read_to_string(&path).unwrap(),
            WITH_PROFILES.replace(
                "\"ops\": {\"tools\": [\"!*__delete_*\"]}",
                "\"ops\": {\n      \"servers\": [\n        \"b\"\n      ],\n      \"discovery\": \"search\"\n    }"
            )
        );
        let config = Config::load(&path).unwrap();
        let ops = config.profile("ops").unwrap();
        assert!(ops.includes_server("b") && !ops.includes_server("a"));

        // A new one goes after the last; the rest stays byte for byte.
        edit(&path, |doc| {
            doc.put_profile("new", json!({"tools": ["b__x"]}))
        })
        .unwrap();
        let text = fs::read_to_string(&path).unwrap();
        assert!(
            text.starts_with(&WITH_PROFILES[..WITH_PROFILES.find("\"ops\"").unwrap()]),
            "{text}"
        );
        assert!(
            text.ends_with("    },\n    \"new\": {\n      \"tools\": [\n        \"b__x\"\n      ]\n    }\n  }\n}\n"),
            "{text}"
        );
        let names: Vec<String> = Config::load(&path)
            .unwrap()
            .profiles()
            .iter()
            .map(|p| p.name.clone())
            .collect();
        assert_eq!(names, ["team", "ops", "new"]);
    }

    #[test]
    fn a_removed_profile_takes_its_comment_and_the_rest_stays() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.json");
        fs::write(&path, WITH_PROFILES).unwrap();
        let removed = edit(&path, |doc| doc.remove_profile("ops")).unwrap();
        assert_eq!(removed, json!({"tools": ["!*__delete_*"]}));
        assert_eq!(
            fs::read_to_string(&path).unwrap(),
            "{\n  // servers\n  \"mcpServers\": {\n    \"a\": {\"command\": \"a\"},\n    \"b\": {\"command\": \"b\"}\n  },\n  \"profiles\": {\n    // The team's view.\n    \"team\": {\"servers\": [\"a\"], \"tools\": [\"a__*\"]} // kept\n  }\n}\n"
        );
        let unknown = edit(&path, |doc| doc.remove_profile("ops")).unwrap_err();
        assert_eq!(
            unknown.to_string(),
            format!("unknown profile \"ops\"; {} has: team", path.display())
        );
        // The last one leaves an empty object; the servers are untouched.
        edit(&path, |doc| doc.remove_profile("team")).unwrap();
        let text = fs::read_to_string(&path).unwrap();
        let value: Value = serde_json::from_str(&jsonc::strip(&text)).unwrap();
        assert_eq!(value["profiles"], json!({}), "{text}");
        assert!(
            text.starts_with(&WITH_PROFILES[..WITH_PROFILES.find("  \"profiles\"").unwrap()]),
            "{text}"
        );
        assert!(Config::load(&path).unwrap().profiles().is_empty());
    }

    #[test]
    fn a_profile_added_to_a_file_without_profiles_keeps_its_comments() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.json");
        let original =
            "{\n  // mine\n  \"mcpServers\": {\n    \"a\": {\"command\": \"a\"} // first\n  }\n}\n";
        fs::write(&path, original).unwrap();
        edit(&path, |doc| {
            doc.put_profile("dev", json!({"servers": ["a"]}))
        })
        .unwrap();
        assert_eq!(
            fs::read_to_string(&path).unwrap(),
            "{\n  // mine\n  \"mcpServers\": {\n    \"a\": {\"command\": \"a\"} // first\n  },\n  \"profiles\": {\n    \"dev\": {\n      \"servers\": [\n        \"a\"\n      ]\n    }\n  }\n}\n"
        );
        assert!(Config::load(&path).unwrap().profile("dev").is_some());
    }

    #[test]
    fn an_invalid_profile_names_the_profile_and_field_and_writes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.json");
        fs::write(&path, WITH_PROFILES).unwrap();
        for (name, record, field, expected) in [
            (
                "ops",
                json!({"servers": ["zz"]}),
                Some("servers"),
                "profile \"ops\": \"servers\" names server \"zz\", which is not in the config; the file has: a, b",
            ),
            (
                "ops",
                json!({"tools": ["a__[x"]}),
                Some("tools"),
                "profile \"ops\": \"tools\": \"a__[x\" is not a valid glob",
            ),
            (
                "ops",
                json!({"rename": {"a__x": "no spaces"}}),
                Some("rename"),
                "\"no spaces\" is not a tool name",
            ),
            (
                "ops",
                json!({"discovery": "grep"}),
                Some("discovery"),
                "\"discovery\" must be \"list\" or \"search\"",
            ),
            ("new", json!({"tool": []}), None, "did you mean \"tools\"?"),
            ("a/b", json!({}), None, "\"a/b\" is not a profile name"),
        ] {
            let error = edit(&path, |doc| doc.put_profile(name, record.clone())).unwrap_err();
            assert_eq!(error.profile(), Some(name), "{error}");
            assert_eq!(error.field(), field, "{error}");
            assert!(error.to_string().contains(expected), "{record}: {error}");
            assert_eq!(fs::read_to_string(&path).unwrap(), WITH_PROFILES);
        }
    }

    #[test]
    fn a_profile_a_rule_names_is_not_removed_and_editors_settings_take_none() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.json");
        let original = r#"{"mcpServers": {"a": {"command": "a"}},
            "profiles": {"team": {}, "ops": {}},
            "toolbridge": {"gateway": {"rules": [{"allow": ["*"]}, {"profiles": ["ops"], "allow": ["a__*"]}]}}}"#;
        fs::write(&path, original).unwrap();
        let error = edit(&path, |doc| doc.remove_profile("ops")).unwrap_err();
        assert_eq!(error.profile(), Some("ops"));
        assert!(
            error.to_string().contains(
                "profile \"ops\": toolbridge.gateway.rules[1] names it in \"profiles\"; take it out"
            ),
            "{error}"
        );
        assert_eq!(fs::read_to_string(&path).unwrap(), original);
        edit(&path, |doc| doc.remove_profile("team")).unwrap();

        let zed = dir.path().join("zed/settings.json");
        fs::create_dir_all(zed.parent().unwrap()).unwrap();
        let settings = r#"{"context_servers": {"a": {"command": "a"}}}"#;
        fs::write(&zed, settings).unwrap();
        let error = edit(&zed, |doc| doc.put_profile("dev", json!({}))).unwrap_err();
        assert!(
            error
                .to_string()
                .contains("Zed's settings file has \"profiles\" of its own"),
            "{error}"
        );
        assert_eq!(fs::read_to_string(&zed).unwrap(), settings);
    }

    #[test]
    fn a_failed_change_writes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.json");
        let original = "{\"mcpServers\": {\"a\": {\"command\": \"a\"}}}";
        fs::write(&path, original).unwrap();

        let error = edit(&path, |doc| doc.add_server("a", stdio("other"))).unwrap_err();
        assert!(matches!(error, ConfigError::ServerExists { .. }));
        assert!(
            error.to_string().contains("server \"a\" already exists"),
            "{error}"
        );

        let error = edit(&path, |doc| doc.add_server("b", json!({"args": []}))).unwrap_err();
        assert!(matches!(error, ConfigError::Invalid { .. }), "{error:?}");

        let error = edit(&path, |doc| doc.remove_server("zzz")).unwrap_err();
        assert_eq!(
            error.to_string(),
            format!("unknown server \"zzz\"; {} has: a", path.display())
        );
        assert_eq!(fs::read_to_string(&path).unwrap(), original);
    }

    #[test]
    fn an_unchanged_document_is_not_rewritten_and_a_missing_file_not_created() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.json");
        edit(&path, |_| Ok(())).unwrap();
        assert!(!path.exists());

        fs::write(&path, "{\"mcpServers\": {\"a\": {\"command\": \"a\"}}}").unwrap();
        let inode = fs::metadata(&path).unwrap().ino();
        edit(&path, |doc| doc.set_disabled("a", false)).unwrap();
        assert_eq!(fs::metadata(&path).unwrap().ino(), inode);
    }

    #[test]
    fn a_symlinked_config_is_written_through_the_link() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("dotfiles-config.json");
        let link = dir.path().join("config.json");
        fs::write(&real, "{\"mcpServers\": {}}").unwrap();
        std::os::unix::fs::symlink(&real, &link).unwrap();
        edit(&link, |doc| doc.add_server("a", stdio("a"))).unwrap();
        assert!(
            fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert!(Config::load(&real).unwrap().contains("a"));
    }

    #[test]
    fn a_dangling_relative_symlink_creates_its_target() {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir(dir.path().join("dotfiles")).unwrap();
        let link = dir.path().join("config.json");
        std::os::unix::fs::symlink("dotfiles/config.json", &link).unwrap();
        edit(&link, |doc| doc.add_server("a", stdio("a"))).unwrap();
        let meta = fs::symlink_metadata(&link).unwrap();
        assert!(meta.file_type().is_symlink());
        let real = dir.path().join("dotfiles/config.json");
        assert!(Config::load(&real).unwrap().contains("a"));
    }

    #[test]
    fn concurrent_edits_from_two_threads_all_land() {
        let dir = tempfile::tempdir().unwrap();
        let path = Arc::new(dir.path().join("config.json"));
        const PER_THREAD: usize = 25;
        let barrier = Arc::new(Barrier::new(2));
        let threads: Vec<_> = ["left", "right"]
            .into_iter()
            .map(|side| {
                let (path, barrier) = (Arc::clone(&path), Arc::clone(&barrier));
                thread::spawn(move || {
                    barrier.wait();
                    for i in 0..PER_THREAD {
                        edit(&path, |doc| {
                            doc.add_server(&format!("{side}-{i}"), stdio("x"))
                        })
                        .unwrap();
                    }
                })
            })
            .collect();
        for thread in threads {
            thread.join().unwrap();
        }
        let config = Config::load(&path).unwrap();
        assert_eq!(config.server_names().len(), 2 * PER_THREAD);
        for side in ["left", "right"] {
            for i in 0..PER_THREAD {
                assert!(config.contains(&format!("{side}-{i}")), "{side}-{i} lost");
            }
        }
    }

    #[test]
    fn a_commented_file_keeps_its_comments_and_indentation() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("mcp.json");
        let original = "{\n    // mine\n    \"servers\": {\n        \"a\": {\"type\": \"stdio\", \"command\": \"a\"} // first\n    }\n}\n";
        fs::write(&path, original).unwrap();
        edit(&path, |doc| doc.add_server("b", stdio("b"))).unwrap();
        assert_eq!(
            fs::read_to_string(&path).unwrap(),
            // The comment after `a` stays on its line.
            "{\n    // mine\n    \"servers\": {\n        \"a\": {\"type\": \"stdio\", \"command\": \"a\"}, // first\n        \"b\": {\n            \"type\": \"stdio\",\n            \"command\": \"b\"\n        }\n    }\n}\n"
        );
        assert_eq!(dir_entries(dir.path()), ["mcp.json"]);
    }
}
