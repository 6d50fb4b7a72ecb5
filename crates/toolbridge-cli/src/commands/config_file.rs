//! Reading and writing the config file as raw JSON, for `presets add` and
//! `doctor`.
//!
//! TEMPORARY: this stands in for the library's `config` module, written in
//! parallel. When merging, replace `config_path` with the config module's
//! path lookup, `read_raw` with its raw-entry reader, and `write_atomic` in
//! `presets add` with its locked atomic `edit`. Nothing else in the CLI
//! touches the file.

use std::{
    io::Write,
    path::{Path, PathBuf},
};

use anyhow::{Context, Result, bail};
use serde_json::{Map, Value};

/// The config file: `--config`, else `$TOOLBRIDGE_CONFIG`, else
/// `$XDG_CONFIG_HOME/toolbridge/config.json` (`~/.config/...`), as DESIGN.md says.
pub fn config_path(explicit: Option<&Path>) -> Result<PathBuf> {
    if let Some(path) = explicit {
        return Ok(path.to_owned());
    }
    if let Some(path) = std::env::var_os("TOOLBRIDGE_CONFIG").filter(|p| !p.is_empty()) {
        return Ok(PathBuf::from(path));
    }
    let base = match std::env::var_os("XDG_CONFIG_HOME").filter(|p| !p.is_empty()) {
        Some(dir) => PathBuf::from(dir),
        None => match std::env::var_os("HOME").filter(|p| !p.is_empty()) {
            Some(home) => PathBuf::from(home).join(".config"),
            None => bail!("cannot find the config file: set HOME or pass --config PATH"),
        },
    };
    Ok(base.join("toolbridge").join("config.json"))
}

/// The file's JSON, `None` when it does not exist. A file that does not parse
/// is an error (and is never overwritten).
pub fn read_raw(path: &Path) -> Result<Option<Value>> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
    };
    let value: Value = serde_json::from_str(&text)
        .with_context(|| format!("{} is not valid JSON; fix it first", path.display()))?;
    if !value.is_object() {
        bail!("{}: the top level must be a JSON object", path.display());
    }
    Ok(Some(value))
}

/// The server map in `root`: `mcpServers`, or VS Code's `servers`; `None`
/// when there is neither.
pub fn servers(root: &Value) -> Option<&Map<String, Value>> {
    ["mcpServers", "servers"]
        .iter()
        .find_map(|key| root.get(key))
        .and_then(Value::as_object)
}

/// The server map in `root` for writing, created as `mcpServers` if absent.
pub fn servers_mut<'a>(root: &'a mut Value, path: &Path) -> Result<&'a mut Map<String, Value>> {
    let Some(object) = root.as_object_mut() else {
        bail!("{}: the top level must be a JSON object", path.display());
    };
    let key = if object.contains_key("mcpServers") || !object.contains_key("servers") {
        "mcpServers"
    } else {
        "servers"
    };
    object
        .entry(key)
        .or_insert_with(|| Value::Object(Map::new()))
        .as_object_mut()
        .with_context(|| format!("{}: \"{key}\" must be a JSON object", path.display()))
}

/// Writes `value` to `path` atomically (temp file in the same directory, then
/// rename). `private` makes the file 0600 (it holds a secret); otherwise an
/// existing file keeps its permissions and a new one gets 0644.
pub fn write_atomic(path: &Path, value: &Value, private: bool) -> Result<()> {
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let mut temp = tempfile::NamedTempFile::new_in(dir)
        .with_context(|| format!("cannot write in {}", dir.display()))?;
    let mut text = serde_json::to_string_pretty(value)?;
    text.push('\n');
    temp.write_all(text.as_bytes())?;
    temp.as_file().sync_all()?;
    set_mode(temp.path(), path, private)?;
    temp.persist(path)
        .with_context(|| format!("cannot replace {}", path.display()))?;
    Ok(())
}

#[cfg(unix)]
fn set_mode(temp: &Path, target: &Path, private: bool) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let mode = if private {
        0o600
    } else {
        match std::fs::metadata(target) {
            Ok(meta) => meta.permissions().mode() & 0o7777,
            Err(_) => 0o644,
        }
    };
    std::fs::set_permissions(temp, std::fs::Permissions::from_mode(mode))
        .with_context(|| format!("cannot set the permissions of {}", target.display()))
}

#[cfg(not(unix))]
fn set_mode(_temp: &Path, _target: &Path, _private: bool) -> Result<()> {
    Ok(())
}
