//! Reading the process table (`/proc` on Linux): who descends from a server,
//! across process groups and sessions, and whether a group is still alive.

/// One process, as `/proc/PID/stat` describes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProcessInfo {
    /// Its process id.
    pub pid: u32,
    /// Its parent's process id.
    pub ppid: u32,
    /// Its process group.
    pub pgrp: u32,
    /// Its session.
    pub session: u32,
    /// When it started (clock ticks since boot): with `pid`, an identity
    /// that a reused pid does not share.
    pub start: u64,
    /// A zombie or dead process (state `Z` or `X`).
    pub dead: bool,
}

impl ProcessInfo {
    /// The process `pid`, if it exists.
    pub fn of(pid: u32) -> Option<ProcessInfo> {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        parse_stat(pid, &stat)
    }
}

/// Parses one `/proc/PID/stat` line. The command name is in parentheses and
/// may itself hold spaces and parentheses, so fields are counted from the
/// last `)`.
fn parse_stat(pid: u32, stat: &str) -> Option<ProcessInfo> {
    let rest = &stat[stat.rfind(')')? + 1..];
    let mut fields = rest.split_whitespace();
    let state = fields.next()?;
    let ppid = fields.next()?.parse().ok()?;
    let pgrp = fields.next()?.parse().ok()?;
    let session = fields.next()?.parse().ok()?;
    // Fields 7 to 21 (tty_nr … itrealvalue), then 22, starttime.
    let start = fields.nth(15)?.parse().ok()?;
    Some(ProcessInfo {
        pid,
        ppid,
        pgrp,
        session,
        start,
        dead: matches!(state, "Z" | "X"),
    })
}

/// Every process in `/proc`; empty where there is no `/proc`.
pub fn process_table() -> Vec<ProcessInfo> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse::<u32>().ok())
        .filter_map(ProcessInfo::of)
        .collect()
}

/// This process and its descendants, found by following each process's
/// `/proc/PID/task/TID/children` lists down from this one: a scan that reads
/// as many files as this process's tree holds, not one per process on the
/// machine (the tracker scans every half second; on a shared machine the
/// whole table is hundreds of reads). Every process a server started is in
/// it: a child of a server's process is in its tree, and an orphan is
/// re-parented to this process when it [adopts orphans](adopt_orphans) (to
/// init otherwise, where a scan of the whole table would not link it to its
/// server either).
///
/// Falls back to [`process_table`] where the kernel has no `children` lists
/// (built without `CONFIG_PROC_CHILDREN`, or not Linux). The lists are read
/// while processes come and go, as the whole table is: a process born
/// between two reads is found by the next scan.
pub fn own_tree() -> Vec<ProcessInfo> {
    static CHILDREN_LISTS: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    let me = std::process::id();
    let listed = *CHILDREN_LISTS
        .get_or_init(|| std::fs::metadata(format!("/proc/{me}/task/{me}/children")).is_ok());
    if !listed {
        return process_table();
    }
    let Some(myself) = ProcessInfo::of(me) else {
        return process_table();
    };
    let mut tree = vec![myself];
    let mut parents = vec![me];
    while let Some(parent) = parents.pop() {
        // A process that exits meanwhile has no task folder: nothing below it
        // to find (its children went to a subreaper, found there or next time).
        let Ok(tasks) = std::fs::read_dir(format!("/proc/{parent}/task")) else {
            continue;
        };
        for task in tasks.flatten() {
            let Ok(children) = std::fs::read_to_string(task.path().join("children")) else {
                continue;
            };
            for pid in children
                .split_ascii_whitespace()
                .filter_map(|p| p.parse().ok())
            {
                if tree.iter().any(|p| p.pid == pid) {
                    continue;
                }
                if let Some(child) = ProcessInfo::of(pid) {
                    tree.push(child);
                    parents.push(pid);
                }
            }
        }
    }
    tree
}

/// The live descendants of `root` in `table` (children, their children, …),
/// whatever their group or session; `root` itself is not included.
pub fn descendants_of(root: u32, table: &[ProcessInfo]) -> Vec<ProcessInfo> {
    let mut found: Vec<ProcessInfo> = Vec::new();
    let mut parents = vec![root];
    while let Some(parent) = parents.pop() {
        for process in table.iter().filter(|p| p.ppid == parent && p.pid != root) {
            if found.iter().any(|f| f.pid == process.pid) {
                continue;
            }
            found.push(*process);
            parents.push(process.pid);
        }
    }
    found.retain(|p| !p.dead);
    found
}

/// True if any process of group `pgid` is still alive (zombies excluded).
pub fn group_alive(pgid: u32) -> bool {
    if std::fs::metadata("/proc/self/stat").is_err() {
        return signal_group(pgid, 0);
    }
    process_table().iter().any(|p| p.pgrp == pgid && !p.dead)
}

/// Sends `signal` to process group `pgid`; false if there is no such group.
pub(crate) fn signal_group(pgid: u32, signal: i32) -> bool {
    let Ok(pgid) = libc::pid_t::try_from(pgid) else {
        return false;
    };
    if pgid <= 1 {
        return false;
    }
    // SAFETY: killpg has no memory-safety preconditions.
    unsafe { libc::killpg(pgid, signal) == 0 }
}

/// Sends `signal` to `process` if it is still the same process (same pid
/// and start time) and alive; false otherwise.
pub(crate) fn signal_same(process: &ProcessInfo, signal: i32) -> bool {
    match ProcessInfo::of(process.pid) {
        Some(now) if now.start == process.start && !now.dead => {
            let Ok(pid) = libc::pid_t::try_from(process.pid) else {
                return false;
            };
            // SAFETY: kill has no memory-safety preconditions.
            pid > 1 && unsafe { libc::kill(pid, signal) == 0 }
        }
        _ => false,
    }
}

/// Whether [`adopt_orphans`] made this process a subreaper.
pub(crate) static ADOPTING: std::sync::atomic::AtomicBool =
    std::sync::atomic::AtomicBool::new(false);

/// Makes this process adopt the orphans of the servers it runs (Linux; a
/// no-op elsewhere): a server that crashes leaves its descendants to its
/// parent instead of init, and the [`ProcessTracker`](super::ProcessTracker)
/// then kills those outside this process's own process group when a
/// server's group is killed, and registers them with the reaper. Programs
/// that run servers call it once at start (the `toolbridge` binary does);
/// a program that starts children of its own *in other process groups*
/// should not, as those would count as orphans too.
pub fn adopt_orphans() -> std::io::Result<()> {
    become_subreaper()?;
    ADOPTING.store(
        cfg!(target_os = "linux"),
        std::sync::atomic::Ordering::Relaxed,
    );
    Ok(())
}

/// Makes the calling process a child subreaper (Linux): its orphaned
/// descendants are re-parented to it instead of init. Only async-signal-safe
/// work, so it may run between fork and exec; a no-op elsewhere.
pub(crate) fn become_subreaper() -> std::io::Result<()> {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: prctl with these arguments only sets a flag of the process.
        let done = unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) };
        if done != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stat_line_with_a_hostile_command_name_parses() {
        let line = "4242 (a) b (c) S 10 4242 4242 34816 4242 4194560 111 0 0 0 1 2 0 0 20 0 1 0 987654 1000 100";
        let info = parse_stat(4242, line).expect("parses");
        assert_eq!(
            (info.ppid, info.pgrp, info.session, info.start, info.dead),
            (10, 4242, 4242, 987654, false)
        );
    }

    #[test]
    fn this_processs_tree_holds_its_childrens_children_and_nothing_else() {
        // A child that starts a grandchild in a session of its own (setsid),
        // then waits: both must be in this process's tree, with the same
        // identities the whole table gives them.
        let mut child = std::process::Command::new("sh")
            .args(["-c", "setsid sleep 30 & echo $!; wait"])
            .stdout(std::process::Stdio::piped())
            .spawn()
            .expect("sh starts");
        let mut line = String::new();
        std::io::BufRead::read_line(
            &mut std::io::BufReader::new(child.stdout.take().expect("piped")),
            &mut line,
        )
        .expect("reads the grandchild's pid");
        let grandchild: u32 = line.trim().parse().expect("a pid");
        let tree = own_tree();
        let whole = process_table();
        let mut pids: Vec<u32> = descendants_of(std::process::id(), &tree)
            .iter()
            .map(|p| p.pid)
            .collect();
        let _ = child.kill();
        let _ = std::process::Command::new("kill")
            .arg(grandchild.to_string())
            .status();
        let _ = child.wait();
        pids.sort();
        let mut expected = vec![child.id(), grandchild];
        expected.sort();
        assert!(
            expected.iter().all(|p| pids.contains(p)),
            "tree {pids:?} lacks {expected:?}"
        );
        // The same identities (group and session may change meanwhile: the
        // grandchild's setsid can run between the two reads).
        for p in &tree {
            let same = whole
                .iter()
                .find(|w| w.pid == p.pid)
                .map(|w| (w.ppid, w.start));
            assert_eq!(same, Some((p.ppid, p.start)), "pid {}", p.pid);
        }
        assert!(
            !tree.iter().any(|p| p.pid == 1) && tree.len() < whole.len(),
            "the tree holds only this process's own ({} of {})",
            tree.len(),
            whole.len()
        );
    }

    #[test]
    fn descendants_are_found_across_groups_and_sessions() {
        let p = |pid, ppid, pgrp, session| ProcessInfo {
            pid,
            ppid,
            pgrp,
            session,
            start: 1,
            dead: false,
        };
        let table = [
            p(10, 1, 10, 5),
            p(11, 10, 10, 5),
            p(12, 11, 12, 12), // setsid
            p(13, 12, 12, 12),
            p(20, 1, 20, 5),
        ];
        let mut pids: Vec<u32> = descendants_of(10, &table).iter().map(|d| d.pid).collect();
        pids.sort();
        assert_eq!(pids, [11, 12, 13]);
    }
}
