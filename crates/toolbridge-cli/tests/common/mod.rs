//! Running the real `toolbridge` binary, each test in its own temp directory.

#![allow(dead_code)] // each test file uses a different part

use std::{
    path::{Path, PathBuf},
    process::{Command, Output, Stdio},
};

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
