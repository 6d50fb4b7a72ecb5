//! Dependency checks, the spec's `DependencyCheckService`: is a launcher such
//! as `npx` or `uvx` installed, which version, and how to install it.
//!
//! [`probe_all`] looks the commands up on `PATH` and asks each for
//! `--version`, in parallel, each with a short timeout. [`install_plan`] is a
//! pure function of the command and the [`Platform`] that returns the exact
//! command lines that would install it; running them is the caller's decision
//! (the CLI asks first); [`install_fix`] says it in one sentence.

mod install;
mod platform;
mod probe;

pub use install::{
    InstallError, InstallMethod, InstallOutput, InstallPlan, install_fix, install_plan,
};
pub use platform::{Os, Platform};
pub use probe::{
    KNOWN_COMMANDS, PROBE_TIMEOUT, Probe, ProbeStatus, find_command, probe, probe_all,
};
