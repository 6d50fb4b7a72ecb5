//! What this system can sandbox: the kernel's Landlock ABI, and whether
//! this process may make network namespaces. Probed once per process, by
//! system calls and `/proc/sys` files that change nothing.

use std::sync::OnceLock;

/// What the sandbox can use here.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Support {
    /// The Landlock ABI version (0: none: not Linux, a kernel before 5.13,
    /// or Landlock not enabled at boot).
    pub landlock_abi: u32,
    /// Why network namespaces cannot be made, if they cannot.
    pub netns_refused: Option<String>,
    /// True when running as root, where a network namespace needs no user
    /// namespace and a process limit needs a `pids` cgroup.
    pub root: bool,
}

impl Support {
    /// What this system supports (probed on the first call).
    pub fn get() -> &'static Support {
        static SUPPORT: OnceLock<Support> = OnceLock::new();
        SUPPORT.get_or_init(probe)
    }

    /// Why a server cannot be sandboxed here at all, if it cannot.
    pub fn refused(&self) -> Option<String> {
        if cfg!(not(target_os = "linux")) {
            return Some("the sandbox needs Linux (Landlock)".to_owned());
        }
        (self.landlock_abi == 0).then(|| {
            "this kernel has no Landlock (Linux 5.13 or later with Landlock enabled at boot, \
             `lsm=...,landlock`)"
                .to_owned()
        })
    }

    /// Why `sandbox` cannot be set up on this system, if it cannot: the
    /// server then does not start unless its config says `"sandbox":
    /// false`. `None` for `false` itself. The one home of these rules:
    /// the sandbox's setup refuses with the same words.
    pub fn refuses(&self, sandbox: &super::Sandbox) -> Option<String> {
        use super::{Network, Sandbox};
        if !sandbox.is_on() {
            return None;
        }
        if let Some(why) = self.refused() {
            return Some(why);
        }
        let network = sandbox.network();
        if network != Network::Any
            && let Some(why) = &self.netns_refused
        {
            return Some(format!(
                "\"network\": \"{}\" needs a network namespace, and {why}",
                network.as_str()
            ));
        }
        if let Sandbox::Rules(rules) = sandbox
            && rules.processes.is_some()
            && !self.root
            && let Some(why) = &self.netns_refused
        {
            return Some(format!("\"processes\" needs a user namespace, and {why}"));
        }
        None
    }

    /// Whether Landlock can restrict TCP connect and bind (ABI 4).
    pub fn tcp_rules(&self) -> bool {
        self.landlock_abi >= 4
    }

    /// One line for `doctor`.
    pub fn summary(&self) -> String {
        match self.refused() {
            Some(why) => format!("unavailable: {why}"),
            None => {
                let mut line = format!("Landlock ABI {}", self.landlock_abi);
                if !self.tcp_rules() {
                    line.push_str(" (no TCP rules)");
                }
                match &self.netns_refused {
                    None => line.push_str(", network namespaces"),
                    Some(why) => line.push_str(&format!(", no network namespaces ({why})")),
                }
                line
            }
        }
    }
}

fn probe() -> Support {
    Support {
        landlock_abi: landlock_abi(),
        netns_refused: netns_refused(),
        // SAFETY: geteuid has no preconditions.
        root: unsafe { libc::geteuid() } == 0,
    }
}

#[cfg(target_os = "linux")]
fn landlock_abi() -> u32 {
    const LANDLOCK_CREATE_RULESET_VERSION: libc::c_uint = 1;
    // SAFETY: with the VERSION flag and no attributes the call only returns
    // the ABI version (or an error).
    let abi = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<libc::c_void>(),
            0usize,
            LANDLOCK_CREATE_RULESET_VERSION,
        )
    };
    u32::try_from(abi).unwrap_or(0)
}

#[cfg(not(target_os = "linux"))]
fn landlock_abi() -> u32 {
    0
}

fn netns_refused() -> Option<String> {
    if cfg!(not(target_os = "linux")) {
        return Some("not Linux".to_owned());
    }
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        return None;
    }
    let read = |path: &str| {
        std::fs::read_to_string(path)
            .ok()
            .map(|s| s.trim().to_owned())
    };
    if read("/proc/sys/user/max_user_namespaces").as_deref() == Some("0") {
        return Some("user.max_user_namespaces is 0".to_owned());
    }
    if read("/proc/sys/kernel/unprivileged_userns_clone").as_deref() == Some("0") {
        return Some("kernel.unprivileged_userns_clone is 0".to_owned());
    }
    if read("/proc/sys/kernel/apparmor_restrict_unprivileged_userns").as_deref() == Some("1") {
        return Some(
            "AppArmor restricts unprivileged user namespaces \
             (kernel.apparmor_restrict_unprivileged_userns)"
                .to_owned(),
        );
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sandbox::{Network, Sandbox, SandboxRules};

    fn rules(network: Network, processes: Option<u64>) -> Sandbox {
        Sandbox::Rules(SandboxRules {
            network,
            processes,
            ..SandboxRules::default()
        })
    }

    #[test]
    fn what_a_system_cannot_sandbox_is_named_per_server() {
        let full = Support {
            landlock_abi: 7,
            netns_refused: None,
            root: false,
        };
        assert_eq!(full.refuses(&rules(Network::None, Some(8))), None);
        let no_landlock = Support {
            landlock_abi: 0,
            ..full.clone()
        };
        assert!(
            no_landlock
                .refuses(&Sandbox::Default)
                .is_some_and(|why| why.contains("Landlock")),
        );
        // `false` is never refused: it is how such a server starts anyway.
        assert_eq!(no_landlock.refuses(&Sandbox::Off), None);
        let no_userns = Support {
            netns_refused: Some("user.max_user_namespaces is 0".into()),
            ..full.clone()
        };
        assert_eq!(no_userns.refuses(&Sandbox::Default), None);
        assert_eq!(
            no_userns
                .refuses(&rules(Network::Loopback, None))
                .as_deref(),
            Some(
                "\"network\": \"loopback\" needs a network namespace, and user.max_user_namespaces is 0"
            )
        );
        assert_eq!(
            no_userns.refuses(&rules(Network::Any, Some(8))).as_deref(),
            Some("\"processes\" needs a user namespace, and user.max_user_namespaces is 0")
        );
        // As root the process limit is a cgroup's, no user namespace.
        let root = Support {
            root: true,
            ..no_userns
        };
        assert_eq!(root.refuses(&rules(Network::Any, Some(8))), None);
    }
}
