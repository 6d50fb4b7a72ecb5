//! Process groups for stdio servers, the descendants that leave them, and
//! the reaper that guarantees none of them outlives toolbridge.
//!
//! Every stdio server is started as the leader of its own process group, so a
//! signal to the group reaches its whole tree (`npx` → `node`, `sh -c` →
//! server). Closing a server is graceful first (close stdin, wait, SIGTERM
//! the group, then SIGKILL it; see [`crate::transport::stdio`]) and always ends
//! with a SIGKILL sweep of the group when its [`GroupGuard`] drops.
//!
//! That covers every exit toolbridge *sees*. For the ones it does not (a
//! `kill -9`, an abort), the [`ProcessTracker`] keeps a reaper: a tiny `sh`
//! process in its own process group that reads registrations from a pipe
//! whose write end only toolbridge holds. When that pipe closes, whatever
//! the reason, the reaper sends SIGTERM and then SIGKILL to every group and
//! process still registered. `PR_SET_PDEATHSIG` would reach only direct
//! children, and fires when the spawning *thread* exits; a pipe closes
//! exactly when the process dies. The reaper is written in POSIX `sh` so that
//! any program embedding the library gets the guarantee without cooperating.
//!
//! # Descendants that leave the group
//!
//! A process that calls `setsid()` or `setpgid()` (a daemon, a double fork)
//! is no longer reached by a signal to the group. On Linux:
//!
//! - each server leader is made a *child subreaper*
//!   (`PR_SET_CHILD_SUBREAPER`, set between fork and exec): a descendant
//!   whose parent exits is re-parented to the server, not to init, so the
//!   server's whole tree stays visible through parent links in `/proc`,
//!   whatever sessions and groups it forms;
//! - the tracker walks those links ([`descendants`]) every
//!   [`SCAN_INTERVAL`] while servers run, and right
//!   before a server is closed, and registers each process found outside
//!   its server's group (pid and start time) with the reaper;
//! - closing a server sends SIGTERM to those processes after the server
//!   itself has exited, then SIGKILL; the reaper does the same when
//!   toolbridge dies, even by SIGKILL. A pid is only signalled while its
//!   start time still matches, so a reused pid is never hit.
//!
//! Costs: one `prctl` system call per spawn, between fork and exec; a walk
//! reads `/proc/*/stat` once for all servers: 6.3 ms for 93 processes in a
//! debug build on a busy 2-core VM (about 70 µs a process), so at one walk
//! per 500 ms about 1.3% of a core per 100 processes there, less in a
//! release build. The walk runs only while stdio servers are registered. A server whose detached descendants exit keeps them as zombies
//! (an entry in the process table, no memory) until it exits, unless it
//! reaps unknown children itself, as shells do.
//!
//! - a server that crashes takes its subreaper role with it: its orphans
//!   go to the nearest subreaper above. A program that calls
//!   [`adopt_orphans`] (the `toolbridge` binary does) is that subreaper, and
//!   kills those orphans (outside its own process group) with the next
//!   server group it kills, and registers them with the reaper.
//!
//! What remains out of reach: a process that escapes within one scan
//! interval right before toolbridge is killed by SIGKILL (a graceful close
//! or SIGTERM walks again first, so it is found there); the orphans of a
//! crashed server in a program that did not call [`adopt_orphans`];
//! processes that change user. On macOS and
//! other Unix systems there is no subreaper and no `/proc`: only the process
//! group is killed, and a descendant that calls `setsid()` survives.
//! Containers and systemd units (a cgroup) remain the complete answer there.
//!
//! # Open files
//!
//! Each stdio server holds three pipes in toolbridge. [`raise_open_file_limit`]
//! lifts the soft `RLIMIT_NOFILE` to the hard limit; programs that run
//! hundreds of servers call it once at start (the `toolbridge` binary does).

pub mod descendants;
mod limits;
mod reaper;
mod tracker;

pub use descendants::{adopt_orphans, group_alive};
pub use limits::{OpenFileLimit, raise_open_file_limit};
pub use tracker::{GroupGuard, ProcessTracker, SCAN_INTERVAL};
