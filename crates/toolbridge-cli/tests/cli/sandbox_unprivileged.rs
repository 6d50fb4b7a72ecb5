//! The sandbox as a user without root runs it: no `pids` cgroup, so the
//! process limit is `RLIMIT_NPROC` in a user namespace of the server's own,
//! and the network namespace needs that user namespace too. The tests run
//! as root here, so `toolbridge` runs as `nobody` (uid 65534) through
//! `setpriv`; run by anyone else it runs as they are.
//!
//! The hostile server (tests/servers/sandbox_hostile.py) tries to fork
//! 10,000 processes and to read a file planted outside its read set that
//! the same user can read without the sandbox; each is refused, and no
//! process of the server is left once `toolbridge` exits.

use crate::common;

use std::{
    os::unix::fs::PermissionsExt as _,
    path::{Path, PathBuf},
    process::{Command, Stdio},
    time::Duration,
};

use serde_json::json;

/// The uid and gid the tests run `toolbridge` as when they run as root.
const NOBODY: u32 = 65534;

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// `program args...` as an unprivileged user: `nobody` through `setpriv`
/// when the tests run as root, else as they are.
fn unprivileged(program: &str, args: &[&str]) -> Command {
    if is_root() {
        let mut command = Command::new("setpriv");
        command
            .args([
                "--reuid",
                &NOBODY.to_string(),
                "--regid",
                &NOBODY.to_string(),
            ])
            .args(["--clear-groups", "--inh-caps=-all", "--"])
            .arg(program)
            .args(args);
        command
    } else {
        let mut command = Command::new(program);
        command.args(args);
        command
    }
}

/// A folder the unprivileged user owns (root made it; `nobody` gets it).
fn owned_dir(parent: &Path) -> tempfile::TempDir {
    let dir = tempfile::tempdir_in(parent).expect("tempdir");
    if is_root() {
        std::os::unix::fs::chown(dir.path(), Some(NOBODY), Some(NOBODY)).expect("chown");
    }
    dir
}

struct Setup {
    home: tempfile::TempDir,
    _outside: tempfile::TempDir,
    secret: PathBuf,
}

impl Setup {
    fn new() -> Setup {
        let home = owned_dir(&std::env::temp_dir());
        // Outside every read set: under the target folder, not /tmp, not
        // the crate; readable by everyone, so only the sandbox refuses it.
        let outside = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
        std::fs::set_permissions(outside.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        let secret = outside.path().join("secret.txt");
        std::fs::write(&secret, "the planted secret").unwrap();
        std::fs::set_permissions(&secret, std::fs::Permissions::from_mode(0o644)).unwrap();
        let own = home.path().join("own");
        // The system's Python with the test venv's packages: the venv's own
        // interpreter links into root's home (pyenv), which `nobody` cannot
        // enter. `PYTHONPATH` is in the sandbox's read set, as `PATH` is.
        let packages = std::fs::read_dir(common::deps().join("py2/lib"))
            .expect("the py2 venv")
            .flatten()
            .map(|e| e.path().join("site-packages"))
            .find(|p| p.exists())
            .expect("the py2 venv's site-packages");
        let config = json!({ "mcpServers": { "hostile": {
            "command": "/usr/bin/python3",
            "args": [common::test_server("sandbox_hostile.py")],
            "env": { "PYTHONPATH": packages },
            "sandbox": {
                "write": [own],
                "network": "none",
                "processes": 64,
                "memoryMb": 1024
            }
        } } });
        let path = home.path().join("config.json");
        std::fs::write(&path, config.to_string()).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        Setup {
            home,
            _outside: outside,
            secret,
        }
    }

    /// `toolbridge call hostile TOOL --args ARGS` as the unprivileged user:
    /// its exit code, stdout and stderr.
    fn call(&self, tool: &str, args: serde_json::Value) -> (Option<i32>, String, String) {
        let config = self.home.path().join("config.json");
        let config = config.to_string_lossy();
        let args = args.to_string();
        let out = unprivileged(
            common::toolbridge(),
            &[
                "--config", &config, "call", "hostile", tool, "--args", &args,
            ],
        )
        .current_dir(self.home.path())
        .env("HOME", self.home.path())
        .env("XDG_CONFIG_HOME", self.home.path().join("config"))
        .env("XDG_CACHE_HOME", self.home.path().join("cache"))
        .env("XDG_DATA_HOME", self.home.path().join("data"))
        .env_remove("TOOLBRIDGE_CONFIG")
        .stdin(Stdio::null())
        .output()
        .expect("run toolbridge unprivileged");
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }
}

/// The processes whose command line names `needle`, as `(pid, uid)`.
fn processes_naming(needle: &str) -> Vec<(u32, u32)> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        if !String::from_utf8_lossy(&cmdline).contains(needle) {
            continue;
        }
        let uid = std::fs::read_to_string(entry.path().join("status"))
            .ok()
            .and_then(|status| {
                status
                    .lines()
                    .find_map(|l| l.strip_prefix("Uid:"))
                    .and_then(|ids| ids.split_whitespace().next()?.parse().ok())
            })
            .unwrap_or(u32::MAX);
        found.push((pid, uid));
    }
    found
}

/// `pid` is gone (or a zombie nobody reaps: not running), within 10 s.
fn gone(pid: u32) -> bool {
    common::wait_until(Duration::from_secs(10), || !common::alive(pid))
}

#[test]
fn an_unprivileged_users_sandbox_refuses_a_fork_bomb_and_a_file_outside_and_leaves_nothing() {
    let setup = Setup::new();
    let secret = setup.secret.to_string_lossy().into_owned();

    // The user can read the file without the sandbox: only the sandbox
    // refuses it below.
    let plain = unprivileged("cat", &[&secret]).output().expect("cat");
    assert!(
        String::from_utf8_lossy(&plain.stdout).contains("the planted secret"),
        "the unprivileged user cannot read the planted file even without a sandbox: {plain:?}"
    );

    // It runs unprivileged, and its server too.
    let (code, pid, stderr) = setup.call("pid", json!({}));
    assert_eq!(code, Some(0), "{stderr}");
    let pid: u32 = pid.trim().parse().unwrap_or_else(|_| panic!("{pid}"));
    assert!(gone(pid), "the server {pid} outlived its `toolbridge call`");

    let (code, read, stderr) = setup.call("read", json!({ "path": secret }));
    assert_eq!(code, Some(0), "{stderr}");
    assert!(read.contains("refused: EACCES"), "read outside: {read}");
    assert!(!read.contains("the planted secret"), "{read}");

    // 10,000 processes: refused at the limit (RLIMIT_NPROC in the server's
    // own user namespace), not before the first few.
    let (code, forked, stderr) = setup.call("fork_many", json!({ "count": 10_000 }));
    assert_eq!(code, Some(0), "{stderr}");
    assert!(forked.contains("refused: EAGAIN"), "{forked}");
    let made: usize = forked
        .trim()
        .rsplit(' ')
        .nth(1)
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{forked}"));
    assert!((1..64).contains(&made), "{forked}");

    // 8 GiB of address space.
    let (code, mapped, stderr) = setup.call("allocate", json!({ "mb": 8192 }));
    assert_eq!(code, Some(0), "{stderr}");
    assert!(mapped.contains("refused: ENOMEM"), "{mapped}");

    // Nothing of the server is left running: not it, not a child (other
    // users' servers of the same script, other tests', are not ours).
    // SAFETY: geteuid has no preconditions.
    let uid = if is_root() {
        NOBODY
    } else {
        unsafe { libc::geteuid() }
    };
    let script = common::test_server("sandbox_hostile.py");
    let left = || -> Vec<u32> {
        processes_naming(&script)
            .into_iter()
            .filter(|(_, owner)| *owner == uid)
            .map(|(pid, _)| pid)
            .collect()
    };
    common::wait_until(Duration::from_secs(10), || left().is_empty());
    let left = left();
    assert!(left.is_empty(), "left running: {left:?}");
}
