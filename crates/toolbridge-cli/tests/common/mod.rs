//! Shared fixtures for the integration tests: where the real servers are,
//! and waiting on events with deadlines instead of fixed sleeps.

#![allow(dead_code)]

use std::{
    path::{Path, PathBuf},
    process::{Command, Output, Stdio},
    time::{Duration, Instant},
};

use toolbridge::config::{ServerSpec, StdioSpec, TransportSpec};

/// The workspace root.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("workspace root")
}

/// The pinned third-party servers, installed by `scripts/setup-test-deps.sh`.
pub fn deps() -> PathBuf {
    let deps = root().join(".deps");
    assert!(
        deps.join("py2/bin/python").exists() && deps.join("node/node_modules").exists(),
        "test dependencies are missing: run scripts/setup-test-deps.sh (the README's test command does)"
    );
    deps
}

/// The test servers we wrote (Python).
pub fn test_server(name: &str) -> String {
    root()
        .join("crates/toolbridge/tests/servers")
        .join(name)
        .to_string_lossy()
        .into_owned()
}

/// The toolbridge binary under test.
pub fn toolbridge() -> &'static str {
    env!("CARGO_BIN_EXE_toolbridge")
}

/// The Python interpreter of the venv with the `mcp` 2.x SDK.
pub fn python() -> String {
    deps().join("py2/bin/python").to_string_lossy().into_owned()
}

/// The built-in example server, as a stdio spec named `name`.
pub fn example(name: &str) -> ServerSpec {
    ServerSpec::stdio(name, toolbridge(), ["example-server"])
}

/// A misbehaving raw JSON-RPC server (see tests/servers/misbehave.py).
pub fn misbehave(name: &str, mode: &str, env: &[(&str, &str)]) -> ServerSpec {
    let mut spec = ServerSpec::stdio(
        name,
        python(),
        [test_server("misbehave.py"), mode.to_owned()],
    );
    if let TransportSpec::Stdio(StdioSpec { env: e, .. }) = &mut spec.transport {
        for (k, v) in env {
            e.insert((*k).to_owned(), (*v).to_owned());
        }
    }
    spec
}

/// A server written with the Python `mcp` 2.3.0 SDK, over stdio.
pub fn python_sdk(name: &str) -> ServerSpec {
    ServerSpec::stdio(name, python(), [test_server("py_sdk_server.py")])
}

/// `@modelcontextprotocol/server-everything` over stdio.
pub fn everything(name: &str) -> ServerSpec {
    let script =
        deps().join("node/node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    ServerSpec::stdio(
        name,
        "node",
        [script.to_string_lossy().into_owned(), "stdio".to_owned()],
    )
}

/// Polls `check` until it returns true or `limit` passes; returns whether it did.
pub fn wait_until(limit: Duration, mut check: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + limit;
    loop {
        if check() {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// True if process `pid` exists and is not a zombie.
pub fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => {
            let state = stat
                .rfind(')')
                .and_then(|i| stat[i + 1..].split_whitespace().next());
            !matches!(state, Some("Z") | Some("X"))
        }
        Err(_) => false,
    }
}

/// A fresh temporary directory.
pub fn tempdir() -> tempfile::TempDir {
    tempfile::tempdir().expect("tempdir")
}

/// A temp directory holding the config file of one test.
pub struct Sandbox {
    pub dir: tempfile::TempDir,
}

impl Sandbox {
    pub fn new() -> Sandbox {
        Sandbox {
            dir: tempfile::tempdir().unwrap(),
        }
    }

    pub fn config(&self) -> PathBuf {
        self.dir.path().join("config.json")
    }

    pub fn write_config(&self, json: &serde_json::Value) {
        std::fs::write(self.config(), serde_json::to_string_pretty(json).unwrap()).unwrap();
    }

    pub fn read_config(&self) -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(self.config()).unwrap()).unwrap()
    }

    /// `toolbridge --config CONFIG args...`, stdin closed (not a terminal).
    pub fn command(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_toolbridge"));
        cmd.arg("--config")
            .arg(self.config())
            .args(args)
            .current_dir(self.dir.path())
            .env_remove("TOOLBRIDGE_CONFIG")
            .stdin(Stdio::null());
        cmd
    }

    pub fn run(&self, args: &[&str]) -> Run {
        self.run_with(args, |_| {})
    }

    /// Like `run`, after `setup` adjusts the command (its environment, say).
    pub fn run_with(&self, args: &[&str], setup: impl FnOnce(&mut Command)) -> Run {
        let mut cmd = self.command(args);
        setup(&mut cmd);
        Run::from(cmd.output().unwrap())
    }
}

/// What one run printed and how it ended.
#[derive(Debug)]
pub struct Run {
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

impl From<Output> for Run {
    fn from(o: Output) -> Run {
        Run {
            code: o.status.code(),
            stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
        }
    }
}

/// Writes an executable shell script.
#[cfg(unix)]
pub fn script(path: &Path, body: &str) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::write(path, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}
