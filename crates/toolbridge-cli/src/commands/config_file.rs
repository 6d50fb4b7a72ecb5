//! Where the config file is.

use std::path::{Path, PathBuf};

use anyhow::Result;

/// The config file: `--config`, else `$TOOLBRIDGE_CONFIG`, else the XDG location.
pub fn config_path(explicit: Option<&Path>) -> Result<PathBuf> {
    Ok(toolbridge::config::locate(explicit))
}
