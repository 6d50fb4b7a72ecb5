//! [`Confinement`]: one server's sandbox, made ready before fork (the
//! Landlock ruleset with its path descriptors, the limits, the namespace
//! plan, the cgroup) and applied in the child between fork and exec by
//! system calls only, which are async-signal-safe: nothing there allocates,
//! locks or formats.

use std::{
    ffi::{CStr, OsString},
    io,
    os::fd::{AsRawFd, OwnedFd, RawFd},
    path::Path,
};

use landlock::{
    ABI, Access, AccessFs, AccessNet, Ruleset, RulesetAttr, RulesetCreatedAttr, Scope,
    path_beneath_rules,
};

use super::{
    cgroup::PidsCgroup,
    paths,
    policy::{Network, Sandbox},
    support::Support,
};

/// The newest Landlock ABI toolbridge asks for; an older kernel gets what
/// it has of it (the crate's best-effort mode), a newer one this much.
const ABI_USED: ABI = ABI::V7;

/// Capabilities a server started as root never gets back after exec: loading
/// modules, raw devices (`/proc/kcore`), tracing, mounting and most of
/// `CAP_SYS_ADMIN`, rebooting, the clock, MAC policy, BPF, perf, network
/// administration (after its own loopback is up), and raising its own
/// hard limits (`CAP_SYS_RESOURCE`).
const DROPPED_CAPABILITIES: [libc::c_int; 12] = [
    12, // CAP_NET_ADMIN
    16, // CAP_SYS_MODULE
    17, // CAP_SYS_RAWIO
    19, // CAP_SYS_PTRACE
    21, // CAP_SYS_ADMIN
    22, // CAP_SYS_BOOT
    24, // CAP_SYS_RESOURCE
    25, // CAP_SYS_TIME
    32, // CAP_MAC_OVERRIDE
    33, // CAP_MAC_ADMIN
    38, // CAP_PERFMON
    39, // CAP_BPF
];

/// One server's sandbox, ready to apply in its child.
#[derive(Debug)]
pub struct Confinement {
    /// The Landlock ruleset (close-on-exec; the child inherits it across fork).
    ruleset: OwnedFd,
    /// `setrlimit` calls, soft and hard alike.
    limits: Vec<(libc::__rlimit_resource_t, libc::rlim_t)>,
    /// `unshare` flags (0: none).
    unshare: libc::c_int,
    /// For a user namespace: the maps of the user's own ids onto themselves.
    id_maps: Option<([u8; 32], usize, [u8; 32], usize)>,
    /// Bring the new network namespace's loopback up.
    loopback: bool,
    /// Running as root: drop [`DROPPED_CAPABILITIES`].
    root: bool,
    /// The file of the server's `pids` cgroup it joins by (root with a
    /// process limit: `tasks` under cgroup v1, `cgroup.procs` under v2),
    /// kept open by the [`SandboxGuard`].
    cgroup_join: Option<RawFd>,
}

/// What of a server's sandbox lives as long as the server: its `pids`
/// cgroup, removed once the guard drops and its processes are gone.
#[derive(Debug, Default)]
pub struct SandboxGuard {
    _cgroup: Option<PidsCgroup>,
}

/// Why a server could not be sandboxed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfineError(pub String);

impl Confinement {
    /// The sandbox of `program` (resolved) run with `args` in `cwd` and
    /// environment `env`, and the guard to keep while the server runs.
    /// Everything here runs in toolbridge, before fork.
    pub fn prepare(
        sandbox: &Sandbox,
        program: &Path,
        args: &[String],
        cwd: Option<&Path>,
        env: &[(OsString, OsString)],
    ) -> Result<(Self, SandboxGuard), ConfineError> {
        let support = Support::get();
        if let Some(why) = support.refuses(sandbox) {
            return Err(ConfineError(why));
        }
        let network = sandbox.network();
        let processes = match sandbox {
            Sandbox::Rules(rules) => rules.processes,
            _ => None,
        };
        let memory_mb = match sandbox {
            Sandbox::Rules(rules) => rules.memory_mb,
            _ => None,
        };
        let access = paths::access(sandbox, program, args, cwd, env);

        let ruleset = ruleset(&access, network).map_err(ConfineError)?;

        let mut limits = Vec::new();
        if let Some(mb) = memory_mb {
            limits.push((libc::RLIMIT_AS, mb.saturating_mul(1 << 20) as libc::rlim_t));
        }
        let mut cgroup = None;
        let mut unshare = 0;
        if network != Network::Any {
            unshare |= libc::CLONE_NEWNET;
        }
        if let Some(max) = processes {
            if support.root {
                cgroup = Some(PidsCgroup::create(max).map_err(|why| {
                    ConfineError(format!(
                        "\"processes\" needs, as root, a pids cgroup: {why}"
                    ))
                })?);
            } else {
                // Counted per user namespace: the server's processes only.
                unshare |= libc::CLONE_NEWUSER;
                limits.push((libc::RLIMIT_NPROC, max as libc::rlim_t));
            }
        }
        if unshare != 0 && !support.root {
            unshare |= libc::CLONE_NEWUSER;
        }
        let id_maps = (unshare & libc::CLONE_NEWUSER != 0).then(|| {
            // SAFETY: getuid and getgid have no preconditions.
            let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
            let (uid_map, uid_len) = id_map(uid);
            let (gid_map, gid_len) = id_map(gid);
            (uid_map, uid_len, gid_map, gid_len)
        });
        let confinement = Confinement {
            ruleset,
            limits,
            unshare,
            id_maps,
            loopback: network == Network::Loopback,
            root: support.root,
            cgroup_join: cgroup.as_ref().map(PidsCgroup::join_fd),
        };
        Ok((confinement, SandboxGuard { _cgroup: cgroup }))
    }

    /// Applies the sandbox to the calling process: the child, between fork
    /// and exec. Only system calls on values made before the fork.
    pub fn apply(&self) -> io::Result<()> {
        if let Some(join) = self.cgroup_join {
            write_all(join, b"0")?;
        }
        if self.unshare != 0 {
            // SAFETY: unshare only changes this process's namespaces.
            check(unsafe { libc::unshare(self.unshare) })?;
        }
        if let Some((uid_map, uid_len, gid_map, gid_len)) = &self.id_maps {
            write_file(c"/proc/self/setgroups", b"deny")?;
            write_file(c"/proc/self/uid_map", &uid_map[..*uid_len])?;
            write_file(c"/proc/self/gid_map", &gid_map[..*gid_len])?;
        }
        if self.loopback {
            loopback_up()?;
        }
        for (resource, value) in &self.limits {
            let limit = libc::rlimit {
                rlim_cur: *value,
                rlim_max: *value,
            };
            // SAFETY: a valid rlimit for one resource of this process.
            check(unsafe { libc::setrlimit(*resource, &limit) })?;
        }
        if self.root {
            for capability in DROPPED_CAPABILITIES {
                // SAFETY: prctl only changes this process's bounding set; a
                // capability this kernel does not know is skipped.
                unsafe { libc::prctl(libc::PR_CAPBSET_DROP, capability, 0, 0, 0) };
            }
        }
        // SAFETY: prctl only sets a flag of this process.
        check(unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) })?;
        // SAFETY: the ruleset descriptor is open (owned by `self`); the call
        // only restricts this process.
        let done = unsafe {
            libc::syscall(
                libc::SYS_landlock_restrict_self,
                self.ruleset.as_raw_fd(),
                0u32,
            )
        };
        if done != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }
}

/// The ruleset: every filesystem right handled (reading and running the
/// read set, everything beneath the write set), signals and abstract UNIX
/// sockets scoped to the sandbox, and for `"network": "none"` every TCP
/// connect and bind handled with no port allowed.
fn ruleset(access: &paths::Access, network: Network) -> Result<OwnedFd, String> {
    let abi = ABI_USED;
    let fail = |e: landlock::RulesetError| format!("cannot build its Landlock rules: {e}");
    let mut rules = Ruleset::default()
        .handle_access(AccessFs::from_all(abi))
        .map_err(fail)?
        .scope(Scope::from_all(abi))
        .map_err(fail)?;
    if network == Network::None {
        rules = rules
            .handle_access(AccessNet::from_all(abi))
            .map_err(fail)?;
    }
    let created = rules
        .create()
        .map_err(fail)?
        .add_rules(path_beneath_rules(&access.read, AccessFs::from_read(abi)))
        .map_err(fail)?
        .add_rules(path_beneath_rules(&access.write, AccessFs::from_all(abi)))
        .map_err(fail)?;
    let fd: Option<OwnedFd> = created.into();
    fd.ok_or_else(|| "this kernel refused to create a Landlock ruleset".to_owned())
}

/// `"ID ID 1\n"`: the id mapped onto itself in a new user namespace.
fn id_map(id: u32) -> ([u8; 32], usize) {
    let mut out = [0u8; 32];
    let text = format!("{id} {id} 1\n");
    let len = text.len().min(out.len());
    out[..len].copy_from_slice(&text.as_bytes()[..len]);
    (out, len)
}

fn check(result: libc::c_int) -> io::Result<()> {
    if result == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

fn write_all(fd: RawFd, bytes: &[u8]) -> io::Result<()> {
    // SAFETY: `bytes` is a valid buffer of its length; `fd` is open.
    let written = unsafe { libc::write(fd, bytes.as_ptr().cast(), bytes.len()) };
    if written == bytes.len() as isize {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

fn write_file(path: &CStr, bytes: &[u8]) -> io::Result<()> {
    // SAFETY: a NUL-terminated path; the descriptor is closed below.
    let fd = unsafe { libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    let written = write_all(fd, bytes);
    // SAFETY: `fd` was opened above.
    unsafe { libc::close(fd) };
    written
}

/// `struct ifreq` as `SIOCGIFFLAGS`/`SIOCSIFFLAGS` use it.
#[repr(C)]
struct IfFlags {
    name: [u8; libc::IFNAMSIZ],
    flags: libc::c_short,
    _pad: [u8; 22],
}

/// Sets the `lo` interface of the (new) network namespace up.
fn loopback_up() -> io::Result<()> {
    // SAFETY: a new datagram socket, closed below.
    let sock = unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) };
    if sock < 0 {
        return Err(io::Error::last_os_error());
    }
    let mut request = IfFlags {
        name: [0; libc::IFNAMSIZ],
        flags: 0,
        _pad: [0; 22],
    };
    request.name[..2].copy_from_slice(b"lo");
    // SAFETY: `request` is a valid ifreq for both calls.
    let result = unsafe {
        if libc::ioctl(sock, libc::SIOCGIFFLAGS, &mut request) != 0 {
            -1
        } else {
            request.flags |= libc::IFF_UP as libc::c_short;
            libc::ioctl(sock, libc::SIOCSIFFLAGS, &request)
        }
    };
    let error = (result != 0).then(io::Error::last_os_error);
    // SAFETY: `sock` was opened above.
    unsafe { libc::close(sock) };
    error.map_or(Ok(()), Err)
}
