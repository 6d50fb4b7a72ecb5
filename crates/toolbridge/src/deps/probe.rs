//! Finding commands on `PATH` and asking them for their version.

use std::{
    ffi::OsStr,
    path::{Path, PathBuf},
    process::Stdio,
    time::Duration,
};

/// The launchers presets and typical configs use, probed by `doctor`.
pub const KNOWN_COMMANDS: [&str; 7] = ["node", "npm", "npx", "uv", "uvx", "python3", "docker"];

/// How long one `--version` probe may take before it counts as broken.
pub const PROBE_TIMEOUT: Duration = Duration::from_secs(3);

/// What probing one command found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Probe {
    /// The command looked for.
    pub command: String,
    /// Whether it is there and works.
    pub status: ProbeStatus,
}

/// Whether a command is installed and runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProbeStatus {
    /// Not found on `PATH`.
    Missing,
    /// Found, and `--version` answered.
    Found {
        /// Where it is.
        path: PathBuf,
        /// The first line `--version` printed.
        version: String,
    },
    /// Found, but `--version` failed or did not answer in time (a broken
    /// shim, say).
    Broken {
        /// Where it is.
        path: PathBuf,
        /// What went wrong.
        reason: String,
    },
}

impl Probe {
    /// Whether the command is installed and answered.
    pub fn is_found(&self) -> bool {
        matches!(self.status, ProbeStatus::Found { .. })
    }
}

/// Looks `command` up on `path_var` (toolbridge's `PATH` when `None`) and asks
/// it for `--version`, giving up after `timeout`.
pub async fn probe(command: &str, path_var: Option<&OsStr>, timeout: Duration) -> Probe {
    let status = match find_command(command, path_var) {
        None => ProbeStatus::Missing,
        Some(path) => match version(&path, timeout).await {
            Ok(version) => ProbeStatus::Found { path, version },
            Err(reason) => ProbeStatus::Broken { path, reason },
        },
    };
    Probe {
        command: command.to_owned(),
        status,
    }
}

/// Probes all `commands` in parallel; results are in the same order.
pub async fn probe_all(
    commands: &[&str],
    path_var: Option<&OsStr>,
    timeout: Duration,
) -> Vec<Probe> {
    futures::future::join_all(commands.iter().map(|c| probe(c, path_var, timeout))).await
}

/// Where `command` is: itself when it has a path separator, else the first
/// match on `path_var` (or toolbridge's `PATH`).
pub fn find_command(command: &str, path_var: Option<&OsStr>) -> Option<PathBuf> {
    if command.is_empty() {
        return None;
    }
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    match path_var {
        Some(paths) => which::which_in(command, Some(paths), cwd).ok(),
        None => which::which(command).ok(),
    }
}

async fn version(path: &Path, timeout: Duration) -> Result<String, String> {
    let child = tokio::process::Command::new(path)
        .arg("--version")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        // Dropping the future on timeout kills the child.
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| format!("cannot run it: {e}"))?;
    let output = tokio::time::timeout(timeout, child.wait_with_output())
        .await
        .map_err(|_| {
            format!(
                "`--version` did not answer within {:.1} s",
                timeout.as_secs_f64()
            )
        })?
        .map_err(|e| format!("cannot run it: {e}"))?;
    let first_line = |bytes: &[u8]| {
        String::from_utf8_lossy(bytes)
            .lines()
            .map(str::trim)
            .find(|l| !l.is_empty())
            .map(String::from)
    };
    let line = first_line(&output.stdout).or_else(|| first_line(&output.stderr));
    match (output.status.success(), line) {
        (true, Some(line)) => Ok(line),
        (true, None) => Ok(String::from("(no version printed)")),
        (false, line) => Err(format!(
            "`--version` failed ({}){}",
            output.status,
            line.map(|l| format!(": {l}")).unwrap_or_default()
        )),
    }
}

#[cfg(all(test, unix))]
mod tests {
    use std::{ffi::OsString, os::unix::fs::PermissionsExt};

    use super::*;

    fn script(dir: &Path, name: &str, body: &str) {
        let path = dir.join(name);
        std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }

    #[tokio::test]
    async fn found_missing_and_broken_commands_are_told_apart() {
        let dir = tempfile::tempdir().unwrap();
        script(dir.path(), "good", "echo 'good 1.2.3'; echo more");
        script(dir.path(), "bad", "echo 'bad: no such option' >&2; exit 3");
        script(dir.path(), "slow", "exec sleep 30");
        let path = OsString::from(dir.path());
        let mut probes = probe_all(&["good", "bad", "absent"], Some(&path), PROBE_TIMEOUT).await;
        // A short limit, so the hanging one is given up on quickly.
        probes.insert(
            2,
            probe("slow", Some(&path), Duration::from_millis(300)).await,
        );
        assert_eq!(
            probes[0].status,
            ProbeStatus::Found {
                path: dir.path().join("good"),
                version: "good 1.2.3".into()
            }
        );
        match &probes[1].status {
            ProbeStatus::Broken { reason, .. } => {
                assert!(reason.contains("bad: no such option"), "{reason}")
            }
            other => panic!("{other:?}"),
        }
        match &probes[2].status {
            ProbeStatus::Broken { reason, .. } => {
                assert!(reason.contains("did not answer"), "{reason}")
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(probes[3].status, ProbeStatus::Missing);
        assert_eq!(probes[3].command, "absent");
        assert!(probes[0].is_found() && !probes[3].is_found());
    }

    #[tokio::test]
    async fn only_the_given_path_is_searched() {
        let dir = tempfile::tempdir().unwrap();
        let empty = OsString::from(dir.path());
        // `sh` is on every Unix PATH, but not in the empty directory.
        let probe = probe("sh", Some(&empty), PROBE_TIMEOUT).await;
        assert_eq!(probe.status, ProbeStatus::Missing);
    }
}
