//! Which operating system and Linux distribution toolbridge runs on.

/// An operating system family, as far as installing software goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Os {
    /// Linux; the distribution is in [`Platform::distro`].
    Linux,
    /// macOS.
    MacOs,
    /// Windows.
    Windows,
    /// Anything else (the BSDs, ...): only download pages are offered.
    Other,
}

/// What an install plan depends on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Platform {
    /// The operating system.
    pub os: Os,
    /// The `ID` from `/etc/os-release` on Linux (`debian`, `fedora`, ...).
    pub distro: Option<String>,
    /// The `ID_LIKE` list from `/etc/os-release` (`ubuntu debian` for Mint).
    pub distro_like: Vec<String>,
    /// Whether we run as root, so system package managers need no `sudo`.
    pub is_root: bool,
}

impl Platform {
    /// The platform toolbridge runs on.
    pub fn current() -> Platform {
        let os = match std::env::consts::OS {
            "linux" => Os::Linux,
            "macos" => Os::MacOs,
            "windows" => Os::Windows,
            _ => Os::Other,
        };
        let mut platform = Platform {
            os,
            distro: None,
            distro_like: Vec::new(),
            is_root: is_root(),
        };
        if os == Os::Linux {
            let text = std::fs::read_to_string("/etc/os-release")
                .or_else(|_| std::fs::read_to_string("/usr/lib/os-release"))
                .unwrap_or_default();
            let (distro, like) = parse_os_release(&text);
            platform.distro = distro;
            platform.distro_like = like;
        }
        platform
    }

    /// A Linux platform described by the text of an `os-release` file.
    pub fn linux(os_release: &str, is_root: bool) -> Platform {
        let (distro, distro_like) = parse_os_release(os_release);
        Platform {
            os: Os::Linux,
            distro,
            distro_like,
            is_root,
        }
    }

    /// A platform of `os` with no distribution (macOS, Windows, ...).
    pub fn of(os: Os, is_root: bool) -> Platform {
        Platform {
            os,
            distro: None,
            distro_like: Vec::new(),
            is_root,
        }
    }

    /// The distribution id followed by the ids it is like.
    pub(crate) fn distro_ids(&self) -> impl Iterator<Item = &str> {
        self.distro
            .iter()
            .chain(self.distro_like.iter())
            .map(String::as_str)
    }
}

#[cfg(unix)]
fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

#[cfg(not(unix))]
fn is_root() -> bool {
    false
}

/// `ID` and `ID_LIKE` from os-release text (values may be quoted).
fn parse_os_release(text: &str) -> (Option<String>, Vec<String>) {
    let mut id = None;
    let mut like = Vec::new();
    for line in text.lines() {
        let Some((key, value)) = line.trim().split_once('=') else {
            continue;
        };
        let value = value.trim().trim_matches(['"', '\'']).to_ascii_lowercase();
        match key {
            "ID" if !value.is_empty() => id = Some(value),
            "ID_LIKE" => like = value.split_whitespace().map(String::from).collect(),
            _ => {}
        }
    }
    (id, like)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn os_release_id_and_id_like_are_read() {
        let p = Platform::linux(
            "NAME=\"Linux Mint\"\nID=linuxmint\nID_LIKE=\"ubuntu debian\"\nVERSION_ID=\"21\"\n",
            false,
        );
        assert_eq!(p.distro.as_deref(), Some("linuxmint"));
        assert_eq!(p.distro_like, vec!["ubuntu", "debian"]);
        assert_eq!(
            p.distro_ids().collect::<Vec<_>>(),
            ["linuxmint", "ubuntu", "debian"]
        );
    }

    #[test]
    fn empty_os_release_means_unknown_distribution() {
        let p = Platform::linux("", true);
        assert_eq!(p.distro, None);
        assert!(p.distro_like.is_empty());
    }
}
