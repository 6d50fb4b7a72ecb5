//! Process groups for stdio servers, and the reaper that guarantees none of
//! them outlives toolbridge.
//!
//! Every stdio server is started as the leader of its own process group, so a
//! signal to the group reaches its whole tree (`npx` → `node`, `sh -c` →
//! server). Closing a server is graceful first (close stdin, wait, SIGTERM
//! the group, then SIGKILL it; see [`crate::transport::stdio`]) and always ends
//! with a SIGKILL sweep of the group when its [`GroupGuard`] drops.
//!
//! That covers every exit toolbridge *sees*. For the ones it does not (a
//! `kill -9`, an abort), the [`ProcessTracker`] keeps a reaper: a tiny `sh`
//! process in its own process group that reads `+PGID` / `-PGID` lines from a
//! pipe whose write end only toolbridge holds. When that pipe closes, whatever
//! the reason, the reaper sends SIGTERM and then SIGKILL to every group still
//! registered. `PR_SET_PDEATHSIG` would reach only direct children, and fires
//! when the spawning *thread* exits; a pipe closes exactly when the process
//! dies. The reaper is written in POSIX `sh` so that any program embedding
//! the library gets the guarantee without cooperating.

use std::{
    io::Write,
    process::{Child, ChildStdin, Command, Stdio},
    sync::{Arc, Mutex, OnceLock},
};

/// The reaper: registers groups until stdin closes, then kills what is left.
const REAPER_SCRIPT: &str = r#"
trap '' INT HUP TERM QUIT PIPE
groups=''
while IFS= read -r line; do
  case $line in
    +*) groups="$groups ${line#+}" ;;
    -*) g=${line#-}; rest=''
        for x in $groups; do [ "$x" = "$g" ] || rest="$rest $x"; done
        groups=$rest ;;
  esac
done
[ -z "$groups" ] && exit 0
for g in $groups; do kill -s TERM -- "-$g" 2>/dev/null; done
sleep 0.5
for g in $groups; do kill -s KILL -- "-$g" 2>/dev/null; done
exit 0
"#;

/// Tracks the process groups of the stdio servers this process started, so
/// that they are killed even if this process dies without cleaning up.
///
/// The reaper process starts on the first [`register`](Self::register).
#[derive(Debug, Default)]
pub struct ProcessTracker {
    /// The reaper, started lazily; `None` inside if it could not start.
    reaper: Mutex<Option<Reaper>>,
}

#[derive(Debug)]
struct Reaper {
    /// Kept so the reaper is waited for (no zombie) when the tracker drops.
    child: Child,
    /// The write end of the reaper's stdin; closing it tells the reaper to
    /// kill every group still registered.
    stdin: ChildStdin,
}

impl ProcessTracker {
    /// A new tracker (its reaper starts with the first registered group).
    pub fn new() -> Self {
        Self::default()
    }

    /// The process-wide tracker.
    pub fn global() -> Arc<ProcessTracker> {
        static GLOBAL: OnceLock<Arc<ProcessTracker>> = OnceLock::new();
        GLOBAL
            .get_or_init(|| Arc::new(ProcessTracker::new()))
            .clone()
    }

    /// The reaper's process id, once it runs (for tests).
    pub fn reaper_pid(&self) -> Option<u32> {
        let reaper = self.reaper.lock().unwrap_or_else(|e| e.into_inner());
        reaper.as_ref().map(|r| r.child.id())
    }

    /// Registers process group `pgid`: from now on it is killed if this
    /// process dies, and when the returned guard drops.
    pub fn register(self: &Arc<Self>, pgid: u32) -> GroupGuard {
        self.tell(&format!("+{pgid}\n"));
        GroupGuard {
            pgid,
            tracker: self.clone(),
        }
    }

    fn tell(&self, line: &str) {
        let mut reaper = self.reaper.lock().unwrap_or_else(|e| e.into_inner());
        if reaper.is_none() {
            match Reaper::spawn() {
                Ok(r) => *reaper = Some(r),
                Err(e) => {
                    tracing::warn!(error = %e, "could not start the process reaper; servers may outlive toolbridge if it is killed");
                    return;
                }
            }
        }
        if let Some(r) = reaper.as_mut()
            && let Err(e) = r.stdin.write_all(line.as_bytes())
        {
            tracing::warn!(error = %e, "the process reaper is gone; servers may outlive toolbridge if it is killed");
        }
    }
}

impl Reaper {
    fn spawn() -> std::io::Result<Reaper> {
        use std::os::unix::process::CommandExt;
        let mut child = Command::new("/bin/sh")
            .arg("-c")
            .arg(REAPER_SCRIPT)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            // Its own group: a Ctrl-C meant for toolbridge must not kill the
            // reaper before it has done its job.
            .process_group(0)
            .spawn()?;
        let stdin = child
            .stdin
            .take()
            .ok_or_else(|| std::io::Error::other("reaper stdin missing"))?;
        Ok(Reaper { child, stdin })
    }
}

impl Drop for ProcessTracker {
    fn drop(&mut self) {
        let reaper = self.reaper.get_mut().unwrap_or_else(|e| e.into_inner());
        if let Some(Reaper { mut child, stdin }) = reaper.take() {
            // Closing stdin lets the reaper sweep and exit; wait in the
            // background so dropping never blocks.
            drop(stdin);
            std::thread::spawn(move || child.wait());
        }
    }
}

/// A registered process group. Dropping it sends SIGKILL to the whole group
/// (whatever graceful shutdown left behind) and unregisters it.
#[derive(Debug)]
pub struct GroupGuard {
    pgid: u32,
    tracker: Arc<ProcessTracker>,
}

impl GroupGuard {
    /// The process group id (the leader's pid).
    pub fn pgid(&self) -> u32 {
        self.pgid
    }

    /// Sends `signal` to every process of the group. Returns false when the
    /// group no longer exists.
    pub fn signal(&self, signal: i32) -> bool {
        signal_group(self.pgid, signal)
    }
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        signal_group(self.pgid, libc::SIGKILL);
        self.tracker.tell(&format!("-{}\n", self.pgid));
    }
}

/// Sends `signal` to process group `pgid`; false if there is no such group.
fn signal_group(pgid: u32, signal: i32) -> bool {
    let Ok(pgid) = libc::pid_t::try_from(pgid) else {
        return false;
    };
    if pgid <= 1 {
        return false;
    }
    // SAFETY: killpg has no memory-safety preconditions.
    unsafe { libc::killpg(pgid, signal) == 0 }
}

/// True if any process of group `pgid` is still alive (zombies excluded).
pub fn group_alive(pgid: u32) -> bool {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return signal_group(pgid, 0);
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(|s| s.parse::<u32>().ok()) else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        // Fields after the parenthesised command: state ppid pgrp ...
        let Some(rest) = stat.rfind(')').map(|i| &stat[i + 1..]) else {
            continue;
        };
        let mut fields = rest.split_whitespace();
        let state = fields.next();
        let _ppid = fields.next();
        let pgrp = fields.next().and_then(|s| s.parse::<u32>().ok());
        if pgrp == Some(pgid) && state != Some("Z") && state != Some("X") {
            return true;
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::CommandExt;

    fn spawn_group() -> std::process::Child {
        Command::new("sleep")
            .arg("1000")
            .process_group(0)
            .spawn()
            .expect("spawn sleep")
    }

    fn wait_gone(child: &mut std::process::Child) -> bool {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        while std::time::Instant::now() < deadline {
            if let Ok(Some(_)) = child.try_wait() {
                return true;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        false
    }

    #[test]
    fn the_reaper_kills_registered_groups_when_its_pipe_closes() {
        let tracker = Arc::new(ProcessTracker::new());
        let mut child = spawn_group();
        let guard = tracker.register(child.id());
        // As if this process died: the pipe to the reaper closes while the
        // guard is still alive.
        let reaper = tracker
            .reaper
            .lock()
            .unwrap()
            .take()
            .expect("reaper started");
        let Reaper {
            child: mut reaper,
            stdin,
        } = reaper;
        drop(stdin);
        assert!(wait_gone(&mut child), "the reaper did not kill the group");
        assert!(reaper.wait().expect("reaper exit").success());
        drop(guard);
    }

    #[test]
    fn dropping_a_guard_kills_its_group() {
        let tracker = Arc::new(ProcessTracker::new());
        let mut child = spawn_group();
        let guard = tracker.register(child.id());
        assert!(group_alive(child.id()));
        drop(guard);
        assert!(wait_gone(&mut child), "the group survived its guard");
    }
}
