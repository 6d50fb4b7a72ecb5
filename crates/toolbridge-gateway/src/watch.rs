//! Watches the config file and hands each new version to the gateway; and
//! the pins folder, so that an approval made by another process
//! (`toolbridge tools approve` in a terminal while the gateway runs)
//! reaches the gateway's clients as `list_changed`.
//!
//! Polls the file's modification time, size and inode once a second rather
//! than using inotify (the `notify` crate): editors and toolbridge itself
//! replace the file by renaming a new one over it, which inotify reports
//! as events on the folder that differ by editor and platform, and a watch
//! on the file itself is lost with the old inode. One `stat` a second costs
//! nothing and sees every way of changing the file. The pins folder is
//! looked at the same way: each pins write renames a file into it, which
//! changes the folder's modification time; only then are the servers' pins
//! files looked at (one `stat` each, [`Gateway::recheck_pins`]).

use std::{
    path::{Path, PathBuf},
    time::Duration,
};

use tokio_util::sync::CancellationToken;
use toolbridge::config::{Profile, ServerSpec};

use crate::Gateway;

/// How often the file is looked at.
pub const POLL: Duration = Duration::from_secs(1);

/// What identifies one version of a file (or folder): a write, a rename
/// over it or a new inode each change it. The client tokens use it too.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Version {
    modified: Option<std::time::SystemTime>,
    len: u64,
    #[cfg(unix)]
    inode: u64,
}

/// The version of the file at `path`; `None` when there is none.
pub(crate) fn version(path: &Path) -> Option<Version> {
    let meta = std::fs::metadata(path).ok()?;
    Some(Version {
        modified: meta.modified().ok(),
        len: meta.len(),
        #[cfg(unix)]
        inode: std::os::unix::fs::MetadataExt::ino(&meta),
    })
}

/// Until `stop`, reloads the gateway's servers and profiles with `load()`
/// whenever the file at `path` changes, and has the gateway look at its
/// pins again whenever its pins folder changes. A version that does not
/// load (a typo mid-edit, a profile naming a server that is not there) is
/// logged and the servers and profiles stay as they were.
pub async fn watch<F>(path: PathBuf, gateway: Gateway, load: F, stop: CancellationToken)
where
    F: Fn() -> Result<(Vec<ServerSpec>, Vec<Profile>), String>,
{
    let mut seen = version(&path);
    let pins = gateway.pins_dir().map(Path::to_path_buf);
    let mut pins_seen = pins.as_deref().and_then(version);
    loop {
        tokio::select! {
            () = stop.cancelled() => return,
            () = tokio::time::sleep(POLL) => {}
        }
        if let Some(pins) = &pins {
            let now = version(pins);
            if now != pins_seen {
                pins_seen = now;
                let changed = gateway.recheck_pins();
                if !changed.is_empty() {
                    tracing::info!(servers = ?changed, "pins changed on disk; told the clients");
                }
            }
        }
        let now = version(&path);
        if now == seen {
            continue;
        }
        seen = now;
        match load() {
            Ok((specs, profiles)) => {
                gateway.reload(specs, profiles).await;
            }
            Err(e) => {
                tracing::warn!(file = %path.display(), "keeping the servers as they were: {e}");
            }
        }
    }
}
