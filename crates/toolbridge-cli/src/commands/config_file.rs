//! Reading the config file as raw JSON, for `doctor`: it must be able to
//! look at entries that do not validate or resolve, which is exactly when
//! users need it.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use serde_json::{Map, Value};

/// The config file: `--config`, else `$TOOLBRIDGE_CONFIG`, else the XDG location.
pub fn config_path(explicit: Option<&Path>) -> Result<PathBuf> {
    Ok(toolbridge::config::locate(explicit))
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
