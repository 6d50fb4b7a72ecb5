//! A `pids` cgroup of its own for a server whose sandbox limits its
//! processes while toolbridge runs as root: the kernel never applies
//! `RLIMIT_NPROC` to root (`copy_process` exempts the root user), so the
//! limit is the cgroup's `pids.max`. The server joins the cgroup between
//! fork and exec, by writing `0` (itself) to a file of the cgroup opened
//! before the fork. Works with the v1 `pids` hierarchy and with cgroup v2
//! where the `pids` controller can be enabled below toolbridge's own cgroup.
//!
//! Which file: under v1, `tasks`, which moves the one calling thread; under
//! v2, `cgroup.procs` (v2 has no `tasks`). Between fork and exec the child
//! has exactly one thread, so moving it moves the whole process, and
//! everything it starts after inherits the cgroup: the same confinement.
//! But writing to `cgroup.procs` takes the kernel's global
//! `cgroup_threadgroup_rwsem` for writing, which waits for an RCU grace
//! period: 13–32 ms per start measured here (kernel 6.18, `strace -T` of
//! the child's `write`), against 0.03 ms for `tasks`, where the kernel
//! skips that lock for a thread moving itself.

use std::{
    fs::{File, OpenOptions},
    os::fd::{AsRawFd, RawFd},
    path::{Path, PathBuf},
    sync::atomic::{AtomicU64, Ordering},
    time::{Duration, Instant},
};

/// One server's cgroup; removed (once its processes are gone) when dropped.
#[derive(Debug)]
pub(crate) struct PidsCgroup {
    dir: PathBuf,
    join: File,
}

impl PidsCgroup {
    /// A new cgroup allowing at most `max` processes.
    pub(crate) fn create(max: u64) -> Result<Self, String> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let (parent, hierarchy) = pids_dir().ok_or_else(|| {
            "no writable `pids` cgroup controller was found (cgroup v1 `pids`, or v2 with \
             `pids` in cgroup.controllers)"
                .to_owned()
        })?;
        let dir = parent.join(format!(
            "toolbridge-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        let made = (|| {
            std::fs::write(dir.join("pids.max"), max.to_string())?;
            OpenOptions::new()
                .write(true)
                .open(dir.join(hierarchy.join_file()))
        })();
        match made {
            Ok(join) => Ok(PidsCgroup { dir, join }),
            Err(e) => {
                let _ = std::fs::remove_dir(&dir);
                Err(format!("cannot set up {}: {e}", dir.display()))
            }
        }
    }

    /// The open `tasks` (v1) or `cgroup.procs` (v2), close-on-exec, the
    /// child writes `0` to.
    pub(crate) fn join_fd(&self) -> RawFd {
        self.join.as_raw_fd()
    }
}

impl Drop for PidsCgroup {
    /// Removes the cgroup once its last process has exited: at once when it
    /// is empty, else from a thread that retries for up to 10 s (the
    /// processes are being killed as the server's transport drops).
    fn drop(&mut self) {
        if std::fs::remove_dir(&self.dir).is_ok() {
            return;
        }
        let dir = std::mem::take(&mut self.dir);
        let _ = std::thread::Builder::new()
            .name("toolbridge-cgroup-cleanup".to_owned())
            .spawn(move || {
                let deadline = Instant::now() + Duration::from_secs(10);
                while std::fs::remove_dir(&dir).is_err() && Instant::now() < deadline {
                    if !dir.exists() {
                        return;
                    }
                    std::thread::sleep(Duration::from_millis(50));
                }
            });
    }
}

/// The cgroup hierarchy the `pids` controller is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Hierarchy {
    V1,
    V2,
}

impl Hierarchy {
    /// The file a process writes `0` to, to join a cgroup (see the module's
    /// doc for why not `cgroup.procs` under v1).
    fn join_file(self) -> &'static str {
        match self {
            Hierarchy::V1 => "tasks",
            Hierarchy::V2 => "cgroup.procs",
        }
    }
}

/// The directory of this process's own `pids` cgroup, where server cgroups
/// are made, and its hierarchy.
fn pids_dir() -> Option<(PathBuf, Hierarchy)> {
    let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    let own = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let mut v2 = None;
    for line in mountinfo.lines() {
        let Some((left, right)) = line.split_once(" - ") else {
            continue;
        };
        let left: Vec<&str> = left.split(' ').collect();
        let right: Vec<&str> = right.split(' ').collect();
        let (Some(root), Some(mount), Some(fstype)) = (left.get(3), left.get(4), right.first())
        else {
            continue;
        };
        match *fstype {
            "cgroup"
                if right
                    .get(2)
                    .is_some_and(|o| o.split(',').any(|o| o == "pids")) =>
            {
                let path = own.lines().find_map(|l| {
                    let mut parts = l.splitn(3, ':');
                    let (_, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
                    controllers.split(',').any(|c| c == "pids").then_some(path)
                })?;
                return Some((join(mount, root, path), Hierarchy::V1));
            }
            "cgroup2" => v2 = Some((mount.to_string(), root.to_string())),
            _ => {}
        }
    }
    let (mount, root) = v2?;
    let path = own.lines().find_map(|l| l.strip_prefix("0::"))?;
    let dir = join(&mount, &root, path);
    let controllers = std::fs::read_to_string(dir.join("cgroup.controllers")).ok()?;
    if !controllers.split_whitespace().any(|c| c == "pids") {
        return None;
    }
    let subtree = std::fs::read_to_string(dir.join("cgroup.subtree_control")).unwrap_or_default();
    if !subtree.split_whitespace().any(|c| c == "pids") {
        std::fs::write(dir.join("cgroup.subtree_control"), "+pids").ok()?;
    }
    Some((dir, Hierarchy::V2))
}

/// `mount` + `path` (as `/proc/self/cgroup` shows it) less the mount's root.
fn join(mount: &str, root: &str, path: &str) -> PathBuf {
    let inner = Path::new(path)
        .strip_prefix(root)
        .unwrap_or(Path::new(path));
    let inner = inner.strip_prefix("/").unwrap_or(inner);
    Path::new(mount).join(inner)
}
