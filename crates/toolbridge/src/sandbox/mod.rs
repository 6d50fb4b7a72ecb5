//! The sandbox of stdio servers (Linux): set up between fork and exec, so no
//! helper program and no root.
//!
//! - **Files**: Landlock. The server reads and runs the system (`/usr`,
//!   `/etc`, `/proc`...), its own files (the installation of its program and
//!   of the interpreter its `#!` line names, the paths in its arguments,
//!   its working directory, the directories on its `PATH`, toolchains in the
//!   home directory: pyenv, nvm...); it writes its launcher's caches
//!   (`~/.npm` for npx, `~/.cache/uv` and `~/.local/share/uv` for uvx) and
//!   `/dev/null` and the like; under `"default"` also its temporary
//!   directory (`TMPDIR`, else `/tmp`) and the folders its arguments name.
//!   Everything else is refused with `EACCES`, through `..`, symlinks and
//!   `/proc/self/root` alike (Landlock checks the file reached, not the
//!   path written).
//! - **Signals and abstract UNIX sockets** (Landlock ABI 6): scoped to the
//!   server's own processes; it cannot signal toolbridge or other programs.
//! - **Network**: `"any"`; `"loopback"`, a network namespace of its own
//!   with only `lo` up; `"none"`, a network namespace with nothing up, and
//!   every TCP connect and bind refused by Landlock (ABI 4). A network
//!   namespace needs a user namespace when not root.
//! - **Limits**: `memoryMb` is `RLIMIT_AS`; `processes` is `RLIMIT_NPROC`
//!   in a user namespace of the server's own (as root, whom the kernel
//!   exempts from it, the `pids.max` of a cgroup of its own).
//! - **Privileges**: `PR_SET_NO_NEW_PRIVS` (no setuid program gains
//!   anything); as root, the capabilities in `confine`'s list are dropped
//!   from the bounding set.
//!
//! What it does not do: hide what the read set holds (the server reads
//! `/etc` and its own files); limit what it does with the network it has
//! (`"any"` is the user's network); restrict UDP or UNIX sockets by path
//! under `"any"`; protect anything on systems without Landlock, where a
//! sandboxed server does not start (see [`Support`]).

#[cfg(target_os = "linux")]
mod cgroup;
#[cfg(target_os = "linux")]
mod confine;
#[cfg(target_os = "linux")]
mod paths;
mod policy;
mod support;

#[cfg(target_os = "linux")]
pub use confine::{ConfineError, Confinement, SandboxGuard};
pub use policy::{Network, Sandbox, SandboxRules};
pub use support::Support;
