//! Install plans: the exact command lines that install a missing launcher.

use super::platform::{Os, Platform};

/// How to install the software that provides a command, on one platform.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstallPlan {
    /// The command that was asked for (`npx`).
    pub command: String,
    /// The software that provides it (`Node.js`).
    pub software: &'static str,
    /// Ways to install it, best first; may be empty when only the download
    /// page helps.
    pub methods: Vec<InstallMethod>,
    /// The official download page, always valid as a last resort.
    pub download_url: &'static str,
}

/// One way to install: command lines to run in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstallMethod {
    /// What it uses, for people (`Homebrew`, `the official install script`).
    pub via: &'static str,
    /// The commands, each as program and arguments, run one after the other.
    pub commands: Vec<Vec<String>>,
    /// Programs that must be on `PATH` for this method to work.
    pub requires: Vec<&'static str>,
}

impl InstallPlan {
    /// The first method whose required programs are all `available`.
    pub fn choose(&self, available: impl Fn(&str) -> bool) -> Option<&InstallMethod> {
        self.methods
            .iter()
            .find(|m| m.requires.iter().all(|r| available(r)))
    }
}

impl InstallMethod {
    /// The commands as one shell line (`a && b`), quoted so it can be pasted.
    pub fn display(&self) -> String {
        self.commands
            .iter()
            .map(|argv| argv.iter().map(|a| quote(a)).collect::<Vec<_>>().join(" "))
            .collect::<Vec<_>>()
            .join(" && ")
    }
}

/// Where the output of the install commands goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InstallOutput {
    /// To this process's stdout and stderr, as it happens (a terminal).
    Inherit,
    /// Captured and returned (a web page shows it afterwards).
    Capture,
}

/// Why an install did not complete.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum InstallError {
    /// A program of the method could not be started.
    #[error("cannot run {program}; install it by hand from the download page")]
    Spawn {
        /// The program.
        program: String,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// A command of the method failed; the later ones were not run.
    #[error("`{command}` failed ({status}); run it yourself to see why{}", tail(.output))]
    Failed {
        /// The command line that failed.
        command: String,
        /// How it ended.
        status: std::process::ExitStatus,
        /// Its last output lines, when captured.
        output: String,
    },
}

/// How many lines of captured output an install keeps.
const OUTPUT_LINES: usize = 40;

fn tail(output: &str) -> String {
    if output.trim().is_empty() {
        String::new()
    } else {
        format!(":\n{output}")
    }
}

impl InstallMethod {
    /// Runs the method's commands in order, in the foreground, stopping at
    /// the first failure. With [`InstallOutput::Capture`], returns the last
    /// lines they wrote (stdout and stderr); else an empty string.
    pub fn run(&self, output: InstallOutput) -> Result<String, InstallError> {
        let mut captured = String::new();
        for argv in &self.commands {
            let Some((program, args)) = argv.split_first() else {
                continue;
            };
            let mut command = std::process::Command::new(program);
            command.args(args);
            let spawn_error = |source| InstallError::Spawn {
                program: program.clone(),
                source,
            };
            let status = match output {
                InstallOutput::Inherit => command.status().map_err(spawn_error)?,
                InstallOutput::Capture => {
                    let out = command
                        .stdin(std::process::Stdio::null())
                        .output()
                        .map_err(spawn_error)?;
                    captured.push_str(&String::from_utf8_lossy(&out.stdout));
                    captured.push_str(&String::from_utf8_lossy(&out.stderr));
                    out.status
                }
            };
            let lines: Vec<&str> = captured.lines().collect();
            let kept = lines[lines.len().saturating_sub(OUTPUT_LINES)..].join("\n");
            if !status.success() {
                return Err(InstallError::Failed {
                    command: argv.join(" "),
                    status,
                    output: kept,
                });
            }
            captured = kept;
        }
        Ok(captured)
    }
}

/// Quotes one argument for display in a POSIX shell or PowerShell.
fn quote(arg: &str) -> String {
    let plain = !arg.is_empty()
        && arg
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./:=@+,%".contains(c));
    if plain {
        arg.to_owned()
    } else if !arg.contains(['"', '$', '`', '\\']) {
        format!("\"{arg}\"")
    } else {
        format!("'{}'", arg.replace('\'', r"'\''"))
    }
}

/// What to tell a user whose server needs `command` that is not installed,
/// in one sentence: the best install line for this platform from `plan`
/// when there is one. `own_path` says the server sets its own `PATH` in its
/// env, which is then the one that must hold the command.
///
/// The stdio transport's "command not found" error and `doctor` give this
/// same advice.
pub fn install_fix(command: &str, plan: Option<&InstallPlan>, own_path: bool) -> String {
    crate::doctor::Fix::install(command, plan, own_path).to_string()
}

const NODE_DOWNLOAD: &str = "https://nodejs.org/en/download";
const UV_DOWNLOAD: &str = "https://docs.astral.sh/uv/getting-started/installation/";
const PYTHON_DOWNLOAD: &str = "https://www.python.org/downloads/";
const DOCKER_DOWNLOAD: &str = "https://docs.docker.com/get-started/get-docker/";

/// A Linux distribution family, by package manager.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PackageManager {
    Apt,
    Dnf,
    Pacman,
    Apk,
    Zypper,
}

impl PackageManager {
    fn of(platform: &Platform) -> Option<PackageManager> {
        platform.distro_ids().find_map(|id| {
            Some(match id {
                "debian" | "ubuntu" | "linuxmint" | "pop" | "raspbian" | "elementary" | "kali"
                | "zorin" => PackageManager::Apt,
                "fedora" | "rhel" | "centos" | "rocky" | "almalinux" | "ol" | "amzn" => {
                    PackageManager::Dnf
                }
                "arch" | "manjaro" | "endeavouros" => PackageManager::Pacman,
                "alpine" => PackageManager::Apk,
                "suse" | "sles" | "opensuse" | "opensuse-leap" | "opensuse-tumbleweed" => {
                    PackageManager::Zypper
                }
                _ => return None,
            })
        })
    }

    /// The install commands for `packages`, with `sudo` unless root.
    fn method(self, packages: &[&str], is_root: bool) -> InstallMethod {
        let (via, program, mut commands): (_, _, Vec<Vec<&str>>) = match self {
            // A fresh container has no package lists: update first.
            PackageManager::Apt => (
                "apt-get",
                "apt-get",
                vec![vec!["apt-get", "update"], vec!["apt-get", "install", "-y"]],
            ),
            PackageManager::Dnf => ("dnf", "dnf", vec![vec!["dnf", "install", "-y"]]),
            PackageManager::Pacman => (
                "pacman",
                "pacman",
                vec![vec!["pacman", "-S", "--needed", "--noconfirm"]],
            ),
            PackageManager::Apk => ("apk", "apk", vec![vec!["apk", "add"]]),
            PackageManager::Zypper => (
                "zypper",
                "zypper",
                vec![vec!["zypper", "--non-interactive", "install"]],
            ),
        };
        if let Some(last) = commands.last_mut() {
            last.extend_from_slice(packages);
        }
        let mut requires = vec![program];
        let commands = commands
            .into_iter()
            .map(|argv| {
                let sudo = (!is_root).then_some("sudo");
                sudo.into_iter().chain(argv).map(String::from).collect()
            })
            .collect();
        if !is_root {
            requires.push("sudo");
        }
        InstallMethod {
            via,
            commands,
            requires,
        }
    }
}

fn argv(args: &[&str]) -> Vec<String> {
    args.iter().map(|s| (*s).to_owned()).collect()
}

fn single(via: &'static str, requires: &[&'static str], args: &[&str]) -> InstallMethod {
    InstallMethod {
        via,
        commands: vec![argv(args)],
        requires: requires.to_vec(),
    }
}

/// How to install the software that provides `command` on `platform`, or
/// `None` for a command toolbridge knows nothing about.
///
/// - `node`, `npm`, `npx`: Node.js. Windows: winget; macOS: Homebrew; Linux:
///   the distribution's package manager where known; else the download page.
/// - `uv`, `uvx`: the official install script (PowerShell on Windows), then
///   `pip install --user uv` through Python where Python exists.
/// - `python3`: the system package manager, else the download page.
/// - `docker`: the download page (Docker Desktop or Engine need choices).
pub fn install_plan(command: &str, platform: &Platform) -> Option<InstallPlan> {
    let command_name = command.strip_suffix(".exe").unwrap_or(command);
    let (software, methods, download_url) = match command_name {
        "node" | "npm" | "npx" => ("Node.js", node_methods(platform), NODE_DOWNLOAD),
        "uv" | "uvx" => ("uv", uv_methods(platform), UV_DOWNLOAD),
        "python3" | "python" => ("Python 3", python_methods(platform), PYTHON_DOWNLOAD),
        "docker" => ("Docker", Vec::new(), DOCKER_DOWNLOAD),
        _ => return None,
    };
    Some(InstallPlan {
        command: command.to_owned(),
        software,
        methods,
        download_url,
    })
}

fn node_methods(platform: &Platform) -> Vec<InstallMethod> {
    match platform.os {
        Os::Windows => vec![single(
            "winget",
            &["winget"],
            &["winget", "install", "OpenJS.NodeJS.LTS"],
        )],
        Os::MacOs => vec![single("Homebrew", &["brew"], &["brew", "install", "node"])],
        Os::Linux => match PackageManager::of(platform) {
            // npm (which brings npx) is a separate package on most distributions.
            Some(pm) => vec![pm.method(&["nodejs", "npm"], platform.is_root)],
            None => Vec::new(),
        },
        Os::Other => Vec::new(),
    }
}

fn uv_methods(platform: &Platform) -> Vec<InstallMethod> {
    match platform.os {
        Os::Windows => vec![
            single(
                "the official install script",
                &["powershell"],
                &[
                    "powershell",
                    "-ExecutionPolicy",
                    "ByPass",
                    "-c",
                    "irm https://astral.sh/uv/install.ps1 | iex",
                ],
            ),
            single(
                "pip",
                &["python"],
                &["python", "-m", "pip", "install", "--user", "uv"],
            ),
        ],
        _ => vec![
            single(
                "the official install script",
                &["sh", "curl"],
                &[
                    "sh",
                    "-c",
                    "curl -LsSf https://astral.sh/uv/install.sh | sh",
                ],
            ),
            single(
                "pip",
                &["python3"],
                &["python3", "-m", "pip", "install", "--user", "uv"],
            ),
        ],
    }
}

fn python_methods(platform: &Platform) -> Vec<InstallMethod> {
    match platform.os {
        Os::Windows => vec![single(
            "winget",
            &["winget"],
            &["winget", "install", "Python.Python.3.13"],
        )],
        Os::MacOs => vec![single(
            "Homebrew",
            &["brew"],
            &["brew", "install", "python"],
        )],
        Os::Linux => match PackageManager::of(platform) {
            Some(PackageManager::Pacman) => {
                vec![PackageManager::Pacman.method(&["python"], platform.is_root)]
            }
            Some(pm) => vec![pm.method(&["python3"], platform.is_root)],
            None => Vec::new(),
        },
        Os::Other => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn install_fix_names_the_best_command_and_the_path_the_server_uses() {
        let platform = Platform::of(Os::MacOs, false);
        let plan = install_plan("npx", &platform);
        let fix = install_fix("npx", plan.as_ref(), false);
        assert!(
            fix.starts_with("install Node.js: `brew install node`"),
            "{fix}"
        );
        let fix = install_fix("my-tool", None, true);
        assert_eq!(
            fix,
            "install \"my-tool\" or put its directory on PATH (this server sets its own PATH \
             in env; the command must be on that one)"
        );
    }

    fn lines(command: &str, platform: &Platform) -> Vec<String> {
        install_plan(command, platform)
            .unwrap()
            .methods
            .iter()
            .map(InstallMethod::display)
            .collect()
    }

    fn distro(os_release: &str) -> Platform {
        Platform::linux(os_release, true)
    }

    #[test]
    fn node_on_windows_uses_winget() {
        let p = Platform::of(Os::Windows, false);
        assert_eq!(lines("npx", &p), ["winget install OpenJS.NodeJS.LTS"]);
    }

    #[test]
    fn node_on_macos_uses_homebrew() {
        let p = Platform::of(Os::MacOs, false);
        assert_eq!(lines("node", &p), ["brew install node"]);
        assert_eq!(install_plan("npm", &p).unwrap().software, "Node.js");
    }

    #[test]
    fn node_on_debian_family_uses_apt_get() {
        for id in [
            "ID=debian",
            "ID=ubuntu",
            "ID=linuxmint\nID_LIKE=\"ubuntu debian\"",
        ] {
            assert_eq!(
                lines("npx", &distro(id)),
                ["apt-get update && apt-get install -y nodejs npm"],
                "{id}"
            );
        }
    }

    #[test]
    fn node_on_other_distributions_uses_their_package_manager() {
        assert_eq!(
            lines("node", &distro("ID=fedora")),
            ["dnf install -y nodejs npm"]
        );
        assert_eq!(
            lines(
                "node",
                &distro("ID=\"rocky\"\nID_LIKE=\"rhel centos fedora\"")
            ),
            ["dnf install -y nodejs npm"]
        );
        assert_eq!(
            lines("node", &distro("ID=arch")),
            ["pacman -S --needed --noconfirm nodejs npm"]
        );
        assert_eq!(lines("node", &distro("ID=alpine")), ["apk add nodejs npm"]);
        assert_eq!(
            lines(
                "node",
                &distro("ID=\"opensuse-tumbleweed\"\nID_LIKE=\"opensuse suse\"")
            ),
            ["zypper --non-interactive install nodejs npm"]
        );
    }

    #[test]
    fn non_root_linux_installs_go_through_sudo() {
        let p = Platform::linux("ID=debian", false);
        let plan = install_plan("npx", &p).unwrap();
        assert_eq!(
            plan.methods[0].display(),
            "sudo apt-get update && sudo apt-get install -y nodejs npm"
        );
        assert_eq!(plan.methods[0].requires, ["apt-get", "sudo"]);
    }

    #[test]
    fn node_on_unknown_distribution_offers_only_the_download_page() {
        for p in [
            distro("ID=gentoo"),
            distro(""),
            Platform::of(Os::Other, false),
        ] {
            let plan = install_plan("npx", &p).unwrap();
            assert!(plan.methods.is_empty(), "{p:?}");
            assert_eq!(plan.download_url, "https://nodejs.org/en/download");
        }
    }

    #[test]
    fn uv_uses_the_official_script_then_pip() {
        for p in [distro("ID=debian"), Platform::of(Os::MacOs, false)] {
            assert_eq!(
                lines("uvx", &p),
                [
                    "sh -c \"curl -LsSf https://astral.sh/uv/install.sh | sh\"",
                    "python3 -m pip install --user uv"
                ]
            );
        }
        assert_eq!(
            lines("uv", &Platform::of(Os::Windows, false)),
            [
                "powershell -ExecutionPolicy ByPass -c \"irm https://astral.sh/uv/install.ps1 | iex\"",
                "python -m pip install --user uv"
            ]
        );
    }

    #[test]
    fn uv_falls_back_to_pip_only_where_python_exists() {
        let plan = install_plan("uvx", &distro("ID=debian")).unwrap();
        let chosen = plan.choose(|c| c == "python3").unwrap();
        assert_eq!(chosen.via, "pip");
        assert_eq!(
            plan.choose(|c| ["sh", "curl", "python3"].contains(&c))
                .unwrap()
                .via,
            "the official install script"
        );
        assert!(plan.choose(|_| false).is_none());
    }

    #[test]
    fn python_and_docker_have_plans_and_unknown_commands_none() {
        assert_eq!(
            lines("python3", &distro("ID=arch")),
            ["pacman -S --needed --noconfirm python"]
        );
        assert_eq!(
            lines("python3", &distro("ID=debian")),
            ["apt-get update && apt-get install -y python3"]
        );
        let docker = install_plan("docker", &distro("ID=debian")).unwrap();
        assert!(docker.methods.is_empty());
        assert!(install_plan("my-own-server", &distro("ID=debian")).is_none());
    }

    #[test]
    fn display_quotes_only_what_needs_it() {
        assert_eq!(quote("a b"), "\"a b\"");
        assert_eq!(quote("$HOME"), "'$HOME'");
        assert_eq!(quote("it's $x"), "'it'\\''s $x'");
        assert_eq!(quote(""), "\"\"");
        assert_eq!(quote("--user"), "--user");
    }
}
