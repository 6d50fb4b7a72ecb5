//! The paths a sandboxed server may read and write: the system's, its own
//! files (derived from its command, its arguments and its working
//! directory), its launcher's caches, and what its rules add.

use std::{
    ffi::OsString,
    path::{Path, PathBuf},
};

use super::policy::Sandbox;

/// The system every program needs to read and run: libraries, interpreters,
/// certificates, locale and time zone data, `/proc` and `/sys`.
const SYSTEM_READ: &[&str] = &[
    "/usr",
    "/bin",
    "/sbin",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/etc",
    "/opt",
    "/proc",
    "/sys",
    "/nix/store",
    "/run/systemd/resolve",
    "/dev/random",
    "/dev/urandom",
];

/// Device files every program may write: the bit bucket, terminals and
/// POSIX shared memory.
const SYSTEM_WRITE: &[&str] = &[
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/tty",
    "/dev/ptmx",
    "/dev/pts",
    "/dev/shm",
];

/// Where toolchains in the home directory keep their interpreters and
/// packages (read only): pyenv, nvm, Volta, asdf, mise, rustup's proxies,
/// pipx and `pip --user`, Bun, Deno.
const HOME_TOOLCHAINS: &[&str] = &[
    ".pyenv",
    ".nvm",
    ".volta",
    ".asdf",
    ".local/share/mise",
    ".cargo/bin",
    ".local/bin",
    ".local/lib",
    ".local/pipx",
    ".bun",
    ".deno",
    ".local/share/pnpm",
    ".npmrc",
    ".config/uv",
];

/// Variables that name folders a server's programs load code from, read
/// like `PATH`.
const SEARCH_PATH_VARS: &[&str] = &[
    "PATH",
    "NODE_PATH",
    "PYTHONPATH",
    "PYTHONHOME",
    "PERL5LIB",
    "GEM_PATH",
    "CLASSPATH",
];

/// The caches launchers write (created when missing, so a first `npx` run
/// does not need to write the home directory itself).
const LAUNCHER_CACHES: &[(&[&str], &[&str])] = &[
    (&["npx", "npm", "node", "pnpm", "corepack"], &[".npm"]),
    (&["uvx", "uv"], &[".cache/uv", ".local/share/uv"]),
    (&["bunx", "bun"], &[".bun/install/cache"]),
];

/// The paths one server may read, and read and write.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Access {
    /// Read and execute.
    pub(crate) read: Vec<PathBuf>,
    /// Everything: read, write, create, remove, rename.
    pub(crate) write: Vec<PathBuf>,
}

/// What server `program` (resolved) started with `args` in `cwd` (its own
/// when `None`), with environment `env`, may touch under `sandbox` (not
/// [`Sandbox::Off`]).
pub(crate) fn access(
    sandbox: &Sandbox,
    program: &Path,
    args: &[String],
    cwd: Option<&Path>,
    env: &[(OsString, OsString)],
) -> Access {
    let var = |name: &str| {
        env.iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| PathBuf::from(v))
            .filter(|v| v.is_absolute())
    };
    let home = var("HOME");
    let cwd = cwd
        .map(Path::to_path_buf)
        .or_else(|| std::env::current_dir().ok())
        .unwrap_or_else(|| PathBuf::from("/"));
    let mut access = Access::default();
    access.read.extend(SYSTEM_READ.iter().map(PathBuf::from));
    access.write.extend(SYSTEM_WRITE.iter().map(PathBuf::from));
    if let Some(home) = &home {
        access
            .read
            .extend(HOME_TOOLCHAINS.iter().map(|dir| home.join(dir)));
    }
    // The folders its programs and interpreters search: `PATH`, and the
    // module paths an entry's `env` may set (`NODE_PATH` for a script that
    // requires packages installed elsewhere, `PYTHONPATH`, ...).
    for (name, value) in env {
        if SEARCH_PATH_VARS.iter().any(|var| name == var) {
            access
                .read
                .extend(std::env::split_paths(value).filter(|dir| dir.is_absolute()));
        }
    }

    // The server's own files: its program's installation (and the
    // interpreter its first line names), the paths in its arguments, its
    // working directory.
    let mut own = OwnFiles {
        home: home.as_deref(),
        access: &mut access,
        write_folders: matches!(sandbox, Sandbox::Default),
    };
    own.program(program, 0);
    for arg in args {
        for token in path_tokens(arg) {
            let token = expand_home(token, home.as_deref());
            let path = cwd.join(token);
            if path.exists() {
                own.path(&path);
            }
        }
    }
    own.access.read.push(cwd);

    if let (Some(home), Some(name)) = (&home, program.file_name().and_then(|n| n.to_str())) {
        for (launchers, caches) in LAUNCHER_CACHES {
            if launchers.contains(&name) {
                for cache in *caches {
                    let cache = home.join(cache);
                    // Best effort: without it the launcher reports the error.
                    let _ = std::fs::create_dir_all(&cache);
                    access.write.push(cache);
                }
            }
        }
    }
    match sandbox {
        Sandbox::Default => {
            access
                .write
                .push(var("TMPDIR").unwrap_or_else(std::env::temp_dir));
        }
        Sandbox::Rules(rules) => {
            access.read.extend(rules.read.iter().cloned());
            access.write.extend(rules.write.iter().cloned());
        }
        Sandbox::Off => {}
    }
    access.read.sort();
    access.read.dedup();
    access.write.sort();
    access.write.dedup();
    access
}

/// `~` or `~/…` in front of `token` replaced by `home`.
fn expand_home(token: &str, home: Option<&Path>) -> PathBuf {
    match (token.strip_prefix('~'), home) {
        (Some(rest), Some(home)) if rest.is_empty() || rest.starts_with('/') => {
            home.join(rest.trim_start_matches('/'))
        }
        _ => PathBuf::from(token),
    }
}

/// The words of `arg` that may be paths: split on white space, quotes, `=`
/// and `:` (so a `sh -c` script and `--dir=/srv` count), options left out.
fn path_tokens(arg: &str) -> impl Iterator<Item = &str> {
    arg.split(|c: char| c.is_whitespace() || "'\"=:;`".contains(c))
        .filter(|token| !token.is_empty() && !token.starts_with('-') && token.len() < 4096)
}

struct OwnFiles<'a> {
    home: Option<&'a Path>,
    access: &'a mut Access,
    /// Folders named in the arguments are writable (`"default"`).
    write_folders: bool,
}

impl OwnFiles<'_> {
    /// A path named in the arguments: a folder is the server's to work in;
    /// a program brings its installation; another file, its folder (only
    /// itself when that folder is `/` or the home directory).
    fn path(&mut self, path: &Path) {
        self.path_at(path, 0);
    }

    /// [`path`](Self::path), `depth` scripts deep.
    fn path_at(&mut self, path: &Path, depth: usize) {
        if path.is_dir() {
            if path.parent().is_none() {
                return;
            }
            if self.write_folders && !self.too_wide(path) {
                self.access.write.push(path.to_path_buf());
            } else {
                self.access.read.push(path.to_path_buf());
            }
            return;
        }
        if is_executable(path) {
            self.program(path, depth);
        }
        self.file(path);
        if let Ok(real) = path.canonicalize() {
            self.file(&real);
        }
    }

    /// A file's package: the outermost `node_modules` above it (where its
    /// imports resolve), else the nearest folder with a `package.json` or
    /// `pyproject.toml` (up to four levels up), else its own folder.
    fn file(&mut self, path: &Path) {
        if let Some(modules) = node_modules(path) {
            self.access.read.push(modules.to_path_buf());
            return;
        }
        let project = path.ancestors().skip(1).take(4).find(|dir| {
            ["package.json", "pyproject.toml"]
                .iter()
                .any(|marker| dir.join(marker).is_file())
        });
        if let Some(project) = project.filter(|dir| !self.too_wide(dir)) {
            self.access.read.push(project.to_path_buf());
            return;
        }
        match path.parent() {
            Some(parent) if !self.too_wide(parent) => self.access.read.push(parent.to_path_buf()),
            _ => self.access.read.push(path.to_path_buf()),
        }
    }

    /// `/` and the home directory are never granted whole.
    fn too_wide(&self, dir: &Path) -> bool {
        dir.parent().is_none() || Some(dir) == self.home
    }

    /// A program: the installation it sits in (`…/bin/x` → `…`), for its own
    /// link and its target; for a script, the interpreter its `#!` line
    /// names and the paths its text names (a wrapper's `exec /opt/x/bin/y`).
    fn program(&mut self, program: &Path, depth: usize) {
        let real = program.canonicalize().ok();
        for path in std::iter::once(program).chain(real.as_deref()) {
            if let Some(modules) = node_modules(path) {
                self.access.read.push(modules.to_path_buf());
            }
            let Some(dir) = path.parent() else { continue };
            let root = match dir.file_name().and_then(|n| n.to_str()) {
                Some("bin" | "sbin" | "shims") => dir.parent().unwrap_or(dir),
                _ => dir,
            };
            if self.too_wide(root) {
                self.access.read.push(dir.to_path_buf());
            } else {
                self.access.read.push(root.to_path_buf());
            }
        }
        if depth < 2
            && let Some((interpreter, named)) = real.as_deref().and_then(script)
        {
            if let Some(interpreter) = interpreter {
                self.program(&interpreter, depth + 1);
            }
            for path in named {
                self.path_at(&path, depth + 1);
            }
        }
    }
}

/// The outermost `node_modules` folder above `path`: where a package's
/// imports resolve.
fn node_modules(path: &Path) -> Option<&Path> {
    path.ancestors()
        .filter(|a| a.file_name().is_some_and(|n| n == "node_modules"))
        .last()
}

/// The longest script whose text is searched for the paths it names.
const SCRIPT_BYTES: u64 = 64 * 1024;

/// For a script (a file starting with `#!`, at most 64 KiB): the
/// interpreter its `#!` line names (`#!/usr/bin/env node` → `/usr/bin/env`,
/// whose program is found through the `PATH` entries of the read set), and
/// the absolute paths its text names that exist.
fn script(path: &Path) -> Option<(Option<PathBuf>, Vec<PathBuf>)> {
    use std::io::Read;
    let file = std::fs::File::open(path).ok()?;
    let mut text = Vec::new();
    file.take(SCRIPT_BYTES).read_to_end(&mut text).ok()?;
    let text = text.strip_prefix(b"#!")?;
    let text = String::from_utf8_lossy(text);
    let (first, rest) = text.split_once('\n').unwrap_or((&text, ""));
    let interpreter = first
        .split_whitespace()
        .next()
        .map(PathBuf::from)
        .filter(|p| p.is_absolute());
    let named = path_tokens(rest)
        .filter(|token| token.starts_with('/'))
        .map(PathBuf::from)
        .filter(|path| path.exists())
        .collect();
    Some((interpreter, named))
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    path.metadata()
        .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(home: &Path) -> Vec<(OsString, OsString)> {
        vec![
            ("HOME".into(), home.into()),
            ("PATH".into(), "/usr/bin".into()),
            ("TMPDIR".into(), "/tmp".into()),
        ]
    }

    #[test]
    fn module_search_paths_in_its_environment_are_read_not_written() {
        let dir = tempfile::tempdir().unwrap();
        let modules = dir.path().join("node_modules");
        let python = dir.path().join("site");
        let mut env = env(dir.path());
        env.push(("NODE_PATH".into(), modules.clone().into()));
        let joined = std::env::join_paths([python.clone(), PathBuf::from("relative")]).unwrap();
        env.push(("PYTHONPATH".into(), joined));
        let access = access(&Sandbox::Default, Path::new("/bin/sh"), &[], None, &env);
        assert!(access.read.contains(&modules), "{access:?}");
        assert!(access.read.contains(&python), "{access:?}");
        assert!(
            !access.read.contains(&PathBuf::from("relative")),
            "{access:?}"
        );
        assert!(!access.write.contains(&modules), "{access:?}");
    }

    #[test]
    fn a_venv_script_brings_its_venv_and_its_interpreter() {
        let dir = tempfile::tempdir().unwrap();
        let venv = dir.path().join("venv");
        let prefix = dir.path().join("python-3");
        std::fs::create_dir_all(venv.join("bin")).unwrap();
        std::fs::create_dir_all(prefix.join("bin")).unwrap();
        let python = prefix.join("bin/python3");
        std::fs::write(&python, "").unwrap();
        std::os::unix::fs::symlink(&python, venv.join("bin/python")).unwrap();
        let server = venv.join("bin/server");
        std::fs::write(
            &server,
            format!("#!{}\nimport x\n", venv.join("bin/python").display()),
        )
        .unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&server, std::fs::Permissions::from_mode(0o755)).unwrap();

        let access = access(&Sandbox::Default, &server, &[], None, &env(dir.path()));
        assert!(access.read.contains(&venv), "{access:?}");
        assert!(
            access.read.contains(&prefix.canonicalize().unwrap()),
            "{access:?}"
        );
        assert!(
            !access.read.contains(&dir.path().to_path_buf()),
            "{access:?}"
        );
    }

    #[test]
    fn folders_in_the_arguments_are_written_only_under_default() {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("data");
        std::fs::create_dir(&data).unwrap();
        let args = vec![
            "-y".to_owned(),
            "pkg".to_owned(),
            data.display().to_string(),
        ];
        let program = Path::new("/usr/bin/npx");
        let default = access(&Sandbox::Default, program, &args, None, &env(dir.path()));
        assert!(default.write.contains(&data), "{default:?}");
        assert!(default.write.contains(&dir.path().join(".npm")));
        assert!(default.write.contains(&PathBuf::from("/tmp")));
        let rules = Sandbox::Rules(Default::default());
        let strict = access(&rules, program, &args, None, &env(dir.path()));
        assert!(!strict.write.contains(&data), "{strict:?}");
        assert!(strict.read.contains(&data), "{strict:?}");
        assert!(!strict.write.contains(&PathBuf::from("/tmp")), "{strict:?}");
        assert!(strict.write.contains(&dir.path().join(".npm")));
    }

    #[test]
    fn the_home_directory_and_the_root_are_never_granted_whole() {
        let dir = tempfile::tempdir().unwrap();
        let script = dir.path().join("server.py");
        std::fs::write(&script, "").unwrap();
        let args = vec![
            script.display().to_string(),
            dir.path().display().to_string(),
            "/".to_owned(),
        ];
        let program = Path::new("/usr/bin/python3");
        let access = access(&Sandbox::Default, program, &args, None, &env(dir.path()));
        assert!(
            !access.write.contains(&dir.path().to_path_buf()),
            "{access:?}"
        );
        assert!(!access.read.contains(&PathBuf::from("/")), "{access:?}");
        assert!(access.read.contains(&script), "{access:?}");
    }

    #[test]
    fn a_wrapper_script_brings_the_program_it_runs() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("opt/tool/bin/server");
        std::fs::create_dir_all(real.parent().unwrap()).unwrap();
        std::fs::write(&real, "").unwrap();
        let wrapper = dir.path().join("wrappers/run");
        std::fs::create_dir_all(wrapper.parent().unwrap()).unwrap();
        std::fs::write(
            &wrapper,
            format!("#!/bin/sh\nexec '{}' \"$@\"\n", real.display()),
        )
        .unwrap();
        use std::os::unix::fs::PermissionsExt;
        for file in [&real, &wrapper] {
            std::fs::set_permissions(file, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        let access = access(&Sandbox::Default, &wrapper, &[], None, &env(dir.path()));
        assert!(
            access.read.contains(&dir.path().join("opt/tool")),
            "{access:?}"
        );
        assert!(
            access.read.contains(&dir.path().join("wrappers")),
            "{access:?}"
        );
    }

    #[test]
    fn a_shell_script_argument_names_its_programs() {
        let dir = tempfile::tempdir().unwrap();
        let tool = dir.path().join("tools/bin/run");
        std::fs::create_dir_all(tool.parent().unwrap()).unwrap();
        std::fs::write(&tool, "").unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&tool, std::fs::Permissions::from_mode(0o755)).unwrap();
        let args = vec!["-c".to_owned(), format!("exec '{}' --x=1", tool.display())];
        let access = access(
            &Sandbox::Default,
            Path::new("/bin/sh"),
            &args,
            None,
            &env(Path::new("/nonexistent")),
        );
        assert!(
            access.read.contains(&dir.path().join("tools")),
            "{access:?}"
        );
    }
}
