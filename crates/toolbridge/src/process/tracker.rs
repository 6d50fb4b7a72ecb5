//! [`ProcessTracker`]: the stdio servers' process groups and the processes
//! that left them, registered with the reaper; [`GroupGuard`]: one server's
//! registration, which kills what it covers when dropped.

use crate::lock::LockUnpoisoned as _;
use std::{
    collections::HashMap,
    io::Write,
    sync::{Arc, Mutex, OnceLock, Weak, atomic::Ordering},
    time::Duration,
};

use super::{
    descendants::{ADOPTING, ProcessInfo, descendants_of, own_tree, signal_group, signal_same},
    reaper::Reaper,
};

/// How often the tracker looks for processes that left a server's group
/// while servers run.
pub const SCAN_INTERVAL: Duration = Duration::from_millis(500);

/// Tracks the process groups of the stdio servers this process started, and
/// their descendants that left those groups, so that they are killed even if
/// this process dies without cleaning up.
///
/// The reaper process starts on the first [`register`](Self::register), and
/// so does a thread that walks the process table every [`SCAN_INTERVAL`]
/// while groups are registered.
#[derive(Debug, Default)]
pub struct ProcessTracker {
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    /// The reaper, started lazily; `None` if it could not start.
    reaper: Option<Reaper>,
    /// Registered groups (keyed by leader pid = pgid), each with the
    /// processes found to have left it.
    groups: HashMap<u32, Vec<ProcessInfo>>,
    /// Whether the scanning thread runs.
    scanning: bool,
    /// Orphans of crashed servers adopted by this process (see
    /// [`adopt_orphans`](super::descendants::adopt_orphans)).
    adopted: Vec<ProcessInfo>,
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

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock_unpoisoned()
    }

    /// The reaper's process id, once it runs (for tests).
    pub fn reaper_pid(&self) -> Option<u32> {
        self.state().reaper.as_ref().map(|r| r.child.id())
    }

    /// Registers process group `pgid` (led by process `pgid`): from now on it
    /// and the processes that leave it are killed if this process dies, and
    /// when the returned guard drops.
    pub fn register(self: &Arc<Self>, pgid: u32) -> GroupGuard {
        let mut state = self.state();
        state.tell(&format!("g+{pgid}\n"));
        state.groups.insert(pgid, Vec::new());
        if !state.scanning {
            let tracker = Arc::downgrade(self);
            let started = std::thread::Builder::new()
                .name("toolbridge-process-scan".to_owned())
                .spawn(move || scan_loop(tracker));
            match started {
                Ok(_) => state.scanning = true,
                Err(e) => {
                    tracing::warn!(error = %e, "cannot start the process scanner; descendants that leave a server's process group may outlive it")
                }
            }
        }
        GroupGuard {
            pgid,
            tracker: self.clone(),
        }
    }

    /// Walks the process table for the descendants of `leaders` that left
    /// their group, and registers the new ones (with the reaper too).
    fn track(&self, leaders: &[u32]) {
        if leaders.is_empty() {
            return;
        }
        let table = own_tree();
        let mut state = self.state();
        let mut found = Vec::new();
        for leader in leaders {
            let escaped: Vec<ProcessInfo> = descendants_of(*leader, &table)
                .into_iter()
                .filter(|p| p.pgrp != *leader)
                .collect();
            let Some(known) = state.groups.get(leader) else {
                continue;
            };
            let mut known = known.clone();
            let mut lines = String::new();
            // Forget those that are gone (a process re-parented to init once
            // its server died is still its server's: keep it; it is not in
            // this process's tree, so it is looked up by its pid).
            known.retain(|k| {
                let alive = is_alive(k, &table);
                if !alive {
                    lines.push_str(&format!("p-{}\n", k.pid));
                }
                alive
            });
            for process in escaped {
                if known
                    .iter()
                    .any(|k| k.pid == process.pid && k.start == process.start)
                {
                    continue;
                }
                lines.push_str(&format!("p+{}:{}\n", process.pid, process.start));
                known.push(process);
                found.push(process.pid);
            }
            if !lines.is_empty() {
                state.tell(&lines);
            }
            // Logged once the reaper knows (a test waits for this line).
            for pid in found.drain(..) {
                tracing::debug!(
                    pid,
                    server_pid = leader,
                    "process {pid} left the process group of server process {leader}; tracking it",
                );
            }
            state.groups.insert(*leader, known);
        }
        if ADOPTING.load(Ordering::Relaxed) {
            let adopted = adopted_orphans(&table, &state);
            let mut lines = String::new();
            for process in adopted {
                if !state
                    .adopted
                    .iter()
                    .any(|k| k.pid == process.pid && k.start == process.start)
                {
                    lines.push_str(&format!("p+{}:{}\n", process.pid, process.start));
                    found.push(process.pid);
                    state.adopted.push(process);
                }
            }
            state.adopted.retain(|k| is_alive(k, &table));
            if !lines.is_empty() {
                state.tell(&lines);
            }
            for pid in found.drain(..) {
                tracing::debug!(
                    pid,
                    "process {pid} was left behind by a server that exited; tracking it"
                );
            }
        }
    }

    /// One scan of every registered group; false (and the scanner stops)
    /// when none is left.
    fn scan(&self) -> bool {
        let leaders: Vec<u32> = {
            let mut state = self.state();
            if state.groups.is_empty() {
                state.scanning = false;
                return false;
            }
            state.groups.keys().copied().collect()
        };
        self.track(&leaders);
        true
    }
}

/// Whether `known` is still the same live process: found in `tree`, or,
/// outside it (re-parented to init), by its pid.
fn is_alive(known: &ProcessInfo, tree: &[ProcessInfo]) -> bool {
    let now = match tree.iter().find(|p| p.pid == known.pid) {
        Some(p) => Some(*p),
        None => ProcessInfo::of(known.pid),
    };
    now.is_some_and(|p| p.start == known.start && !p.dead)
}

/// The orphans this process adopted (its children in another process group
/// that are neither a server leader nor the reaper) and their descendants;
/// adopted zombies are reaped on the way.
fn adopted_orphans(table: &[ProcessInfo], state: &State) -> Vec<ProcessInfo> {
    let me = std::process::id();
    let Some(my_group) = table.iter().find(|p| p.pid == me).map(|p| p.pgrp) else {
        return Vec::new();
    };
    let reaper = state.reaper.as_ref().map(|r| r.child.id());
    let mut orphans = Vec::new();
    for child in table.iter().filter(|p| {
        p.ppid == me
            && p.pgrp != my_group
            && !state.groups.contains_key(&p.pid)
            && Some(p.pid) != reaper
    }) {
        if child.dead {
            // Ours to reap: tokio only waits for the children it spawned.
            if let Ok(pid) = libc::pid_t::try_from(child.pid) {
                // SAFETY: waitpid on one specific pid with WNOHANG.
                unsafe { libc::waitpid(pid, std::ptr::null_mut(), libc::WNOHANG) };
            }
            continue;
        }
        orphans.push(*child);
        orphans.extend(descendants_of(child.pid, table));
    }
    orphans
}

fn scan_loop(tracker: Weak<ProcessTracker>) {
    loop {
        std::thread::sleep(SCAN_INTERVAL);
        let Some(tracker) = tracker.upgrade() else {
            return;
        };
        if !tracker.scan() {
            return;
        }
    }
}

impl State {
    fn tell(&mut self, lines: &str) {
        if self.reaper.is_none() {
            match Reaper::spawn() {
                Ok(r) => self.reaper = Some(r),
                Err(e) => {
                    tracing::warn!(error = %e, "could not start the process reaper; servers may outlive toolbridge if it is killed");
                    return;
                }
            }
        }
        if let Some(r) = self.reaper.as_mut()
            && let Err(e) = r.stdin.write_all(lines.as_bytes())
        {
            tracing::warn!(error = %e, "the process reaper is gone; servers may outlive toolbridge if it is killed");
        }
    }
}

impl Drop for ProcessTracker {
    fn drop(&mut self) {
        let state = self.state.get_mut().unwrap_or_else(|e| e.into_inner());
        if let Some(Reaper { mut child, stdin }) = state.reaper.take() {
            // Closing stdin lets the reaper sweep and exit; wait in the
            // background so dropping never blocks.
            drop(stdin);
            std::thread::spawn(move || child.wait());
        }
    }
}

/// A registered process group. Dropping it sends SIGKILL to the whole group
/// and to the processes that left it (whatever graceful shutdown left
/// behind), and unregisters them.
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

    /// Walks the process table now for descendants that left the group
    /// (before a close, so a server that exits gracefully cannot orphan
    /// them unseen).
    pub fn track_descendants(&self) {
        self.tracker.track(&[self.pgid]);
    }

    /// The processes known to have left the group that are still alive.
    pub fn escaped(&self) -> Vec<ProcessInfo> {
        let state = self.tracker.state();
        let known = state.groups.get(&self.pgid).cloned().unwrap_or_default();
        drop(state);
        known
            .into_iter()
            .filter(|k| ProcessInfo::of(k.pid).is_some_and(|p| p.start == k.start && !p.dead))
            .collect()
    }

    /// Sends `signal` to each process known to have left the group (still
    /// the same process); how many were signalled.
    pub fn signal_escaped(&self, signal: i32) -> usize {
        self.escaped()
            .iter()
            .filter(|p| signal_same(p, signal))
            .count()
    }
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        // While the leader (a subreaper) may still live, its tree is whole.
        self.tracker.track(&[self.pgid]);
        signal_group(self.pgid, libc::SIGKILL);
        let mut state = self.tracker.state();
        let escaped = state.groups.remove(&self.pgid).unwrap_or_default();
        let adopted = std::mem::take(&mut state.adopted);
        let mut lines = format!("g-{}\n", self.pgid);
        // What crashed servers left behind goes with the next group too.
        for process in escaped.iter().chain(&adopted) {
            signal_same(process, libc::SIGKILL);
            lines.push_str(&format!("p-{}\n", process.pid));
        }
        state.tell(&lines);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::process::group_alive;
    use std::os::unix::process::CommandExt;
    use std::process::Command;

    fn spawn_group() -> std::process::Child {
        Command::new("sleep")
            .arg("1000")
            .process_group(0)
            .spawn()
            .expect("spawn sleep")
    }

    /// Whether `child` exits within 5 s: a thread waits for it and says so
    /// (if it never exits, the thread is left blocked and the test fails).
    fn wait_gone(mut child: std::process::Child) -> bool {
        let (exited, exit) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = exited.send(child.wait().is_ok());
        });
        exit.recv_timeout(std::time::Duration::from_secs(5))
            .unwrap_or(false)
    }

    #[test]
    fn the_reaper_kills_registered_groups_when_its_pipe_closes() {
        let tracker = Arc::new(ProcessTracker::new());
        let child = spawn_group();
        let guard = tracker.register(child.id());
        // As if this process died: the pipe to the reaper closes while the
        // guard is still alive.
        let reaper = tracker.state().reaper.take().expect("reaper started");
        let Reaper {
            child: mut reaper,
            stdin,
        } = reaper;
        drop(stdin);
        assert!(wait_gone(child), "the reaper did not kill the group");
        assert!(reaper.wait().expect("reaper exit").success());
        drop(guard);
    }

    #[test]
    fn dropping_a_guard_kills_its_group() {
        let tracker = Arc::new(ProcessTracker::new());
        let child = spawn_group();
        let guard = tracker.register(child.id());
        assert!(group_alive(child.id()));
        drop(guard);
        assert!(wait_gone(child), "the group survived its guard");
    }
}
