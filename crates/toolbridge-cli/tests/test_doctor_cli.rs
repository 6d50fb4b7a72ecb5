//! `toolbridge doctor`, run as a user would, against real processes and
//! sockets on 127.0.0.1.

mod common;

use std::{
    io::{Read, Write},
    net::TcpListener,
};

use common::Sandbox;
use serde_json::json;

/// A port on 127.0.0.1 that nothing listens on.
fn closed_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

/// A server on 127.0.0.1 that answers one HTTP request with 404.
struct OneAnswer {
    addr: std::net::SocketAddr,
    handle: std::thread::JoinHandle<String>,
}

impl OneAnswer {
    fn start() -> OneAnswer {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let handle = std::thread::spawn(move || {
            let (mut socket, _) = listener.accept().unwrap();
            let mut buf = [0u8; 2048];
            let n = socket.read(&mut buf).unwrap_or(0);
            let _ = socket.write_all(
                b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n",
            );
            String::from_utf8_lossy(&buf[..n]).into_owned()
        });
        OneAnswer { addr, handle }
    }

    fn url(&self) -> String {
        format!("http://{}/mcp", self.addr)
    }

    /// The request it answered. Connects once itself, so a server that
    /// nobody asked is not waited for forever (it then returns "").
    fn request(self) -> String {
        let _ = std::net::TcpStream::connect(self.addr);
        self.handle.join().unwrap()
    }
}

fn problem_lines(stdout: &str) -> Vec<&str> {
    stdout
        .lines()
        .filter(|l| l.trim_start().starts_with("problem"))
        .collect()
}

#[test]
fn missing_command_unset_variable_and_unreachable_url_are_all_reported() {
    let sandbox = Sandbox::new();
    let port = closed_port();
    sandbox.write_config(&json!({"mcpServers": {
        "no-cmd": {"command": "toolbridge-test-no-such-command"},
        "no-var": {"command": "sh", "args": ["-c", "${TOOLBRIDGE_TEST_UNSET}"]},
        "down": {"type": "http", "url": format!("http://127.0.0.1:{port}/mcp")}
    }}));
    let run = sandbox.run_with(&["doctor"], |c| {
        c.env_remove("TOOLBRIDGE_TEST_UNSET");
    });
    assert_eq!(run.code, Some(1), "{run:?}");
    let problems = problem_lines(&run.stdout);
    assert_eq!(problems.len(), 3, "{}", run.stdout);
    assert!(
        problems[0].contains(
            "no-cmd: command \"toolbridge-test-no-such-command\" not found on PATH; fix: install"
        ),
        "{}",
        problems[0]
    );
    assert!(
        problems[1].contains("no-var: ${TOOLBRIDGE_TEST_UNSET} is not set; fix: export"),
        "{}",
        problems[1]
    );
    assert!(
        problems[2].contains(&format!(
            "down: http://127.0.0.1:{port}/mcp does not answer"
        )),
        "{}",
        problems[2]
    );
    assert!(problems[2].contains("; fix: "), "{}", problems[2]);
    assert!(run.stdout.contains("3 problems found"));
}

#[test]
fn healthy_config_exits_0() {
    let sandbox = Sandbox::new();
    let server = OneAnswer::start();
    let url = server.url();
    sandbox.write_config(&json!({"mcpServers": {
        "local": {"command": "sh", "args": ["-c", "${TOOLBRIDGE_TEST_SET}"]},
        "remote": {"type": "http", "url": url},
        "off": {"command": "toolbridge-test-no-such-command", "disabled": true}
    }}));
    let run = sandbox.run_with(&["doctor"], |c| {
        c.env("TOOLBRIDGE_TEST_SET", "true");
    });
    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(problem_lines(&run.stdout).is_empty(), "{}", run.stdout);
    assert!(run.stdout.contains("  ok       local"), "{}", run.stdout);
    assert!(run.stdout.contains("  ok       remote"), "{}", run.stdout);
    assert!(run.stdout.contains("off (disabled, not checked)"));
    assert!(
        run.stdout
            .contains("everything the configured servers need is present")
    );
    assert!(
        server.request().starts_with("GET /mcp "),
        "doctor did not ask"
    );
}

#[test]
fn no_config_file_is_healthy() {
    let sandbox = Sandbox::new();
    let run = sandbox.run(&["doctor"]);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(run.stdout.contains("no config file at"), "{}", run.stdout);
    assert!(run.stdout.contains("launchers:"));
}

#[test]
fn preset_without_its_key_is_reported_with_the_variable_to_export() {
    let sandbox = Sandbox::new();
    assert_eq!(sandbox.run(&["presets", "add", "tavily"]).code, Some(0));
    let run = sandbox.run_with(&["doctor"], |c| {
        c.env_remove("TAVILY_API_KEY");
    });
    assert_eq!(run.code, Some(1), "{run:?}");
    let problems = problem_lines(&run.stdout);
    assert!(
        problems.iter().any(|l| l.contains(
            "tavily: API key TAVILY_API_KEY for preset \"tavily\" is missing; fix: export TAVILY_API_KEY="
        )),
        "{}",
        run.stdout
    );
}

#[cfg(unix)]
#[test]
fn missing_launcher_points_at_doctor_install() {
    let sandbox = Sandbox::new();
    let empty = tempfile::tempdir().unwrap();
    sandbox.write_config(&json!({"mcpServers": {"m": {"command": "npx", "args": ["-y", "x"]}}}));
    let run = sandbox.run_with(&["doctor"], |c| {
        c.env("PATH", empty.path());
    });
    assert_eq!(run.code, Some(1), "{run:?}");
    assert!(
        run.stdout
            .contains("m: command \"npx\" not found on PATH; fix: install Node.js"),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("toolbridge doctor --install npx"));
    assert!(run.stdout.contains("  missing  npx"));
}

/// A PATH holding only stand-ins for `sh` and `curl` that record their
/// arguments in `marker` instead of installing anything.
#[cfg(unix)]
fn recording_path() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("ran");
    for name in ["sh", "curl"] {
        common::script(
            &dir.path().join(name),
            &format!("echo \"{name} $*\" >> '{}'", marker.display()),
        );
    }
    (dir, marker)
}

#[cfg(unix)]
#[test]
fn install_without_a_terminal_or_yes_shows_the_command_and_never_runs_it() {
    let sandbox = Sandbox::new();
    let (bin, marker) = recording_path();
    let run = sandbox.run_with(&["doctor", "--install", "uvx"], |c| {
        c.env("PATH", bin.path());
    });
    assert_eq!(run.code, Some(1), "{run:?}");
    assert!(
        run.stdout
            .contains("sh -c \"curl -LsSf https://astral.sh/uv/install.sh | sh\""),
        "{}",
        run.stdout
    );
    assert!(run.stderr.contains("re-run with --yes"), "{}", run.stderr);
    assert!(
        !marker.exists(),
        "the install command ran without confirmation"
    );
}

#[cfg(unix)]
#[test]
fn install_with_yes_runs_exactly_the_shown_command() {
    let sandbox = Sandbox::new();
    let (bin, marker) = recording_path();
    let run = sandbox.run_with(&["doctor", "--install", "uvx", "--yes"], |c| {
        c.env("PATH", bin.path());
    });
    let ran = std::fs::read_to_string(&marker).unwrap();
    assert_eq!(
        ran,
        "sh -c curl -LsSf https://astral.sh/uv/install.sh | sh\n"
    );
    // The stand-in installed nothing, and doctor says so.
    assert_eq!(run.code, Some(1), "{run:?}");
    assert!(run.stderr.contains("still not on PATH"), "{}", run.stderr);
}

#[test]
fn install_of_an_unknown_command_is_a_usage_error() {
    let sandbox = Sandbox::new();
    let run = sandbox.run(&["doctor", "--install", "toolbridge-test-unknown"]);
    assert_eq!(run.code, Some(2), "{run:?}");
    assert!(run.stderr.contains("no install plan"), "{}", run.stderr);
}

/// `doctor --install` on a terminal (a pseudo-terminal made by util-linux
/// `script`), answering `answer` to the prompt.
#[cfg(target_os = "linux")]
fn install_on_a_terminal(answer: &str) -> (common::Run, Option<String>) {
    use std::process::Command;
    let sandbox = Sandbox::new();
    let (bin, marker) = recording_path();
    let line = format!(
        "'{}' --config '{}' doctor --install uvx",
        env!("CARGO_BIN_EXE_toolbridge"),
        sandbox.config().display()
    );
    let output = common::output_with_stdin(
        Command::new("/usr/bin/script")
            .args(["-q", "-e", "-c", &line, "/dev/null"])
            .env("PATH", bin.path())
            .env("SHELL", "/bin/sh"),
        format!("{answer}\n").as_bytes(),
    );
    let run = common::Run::from(output);
    (run, std::fs::read_to_string(marker).ok())
}

#[cfg(target_os = "linux")]
#[test]
fn install_on_a_terminal_runs_only_after_yes() {
    let (run, ran) = install_on_a_terminal("n");
    assert!(run.stdout.contains("run it? [y/N]"), "{run:?}");
    assert!(run.stdout.contains("not run"), "{run:?}");
    assert_eq!(run.code, Some(1));
    assert_eq!(
        ran, None,
        "the install command ran although the answer was no"
    );

    let (run, ran) = install_on_a_terminal("y");
    assert!(run.stdout.contains("run it? [y/N]"), "{run:?}");
    assert_eq!(
        ran.as_deref(),
        Some("sh -c curl -LsSf https://astral.sh/uv/install.sh | sh\n")
    );
}

/// Regression: doctor printed an unreachable URL with its `${VAR}`s
/// expanded, so a key in the query or the user info reached the terminal.
#[test]
fn doctor_output_holds_no_secret_human_or_json() {
    const KEY: &str = "key-SECRET-1234";
    const PW: &str = "pw-SECRET-5678";
    let sandbox = Sandbox::new();
    let port = closed_port();
    sandbox.write_config(&json!({"mcpServers": {
        "down": {
            "type": "http",
            "url": format!("http://me:${{TOOLBRIDGE_TEST_PW}}@127.0.0.1:{port}/mcp?key=${{TOOLBRIDGE_TEST_KEY}}"),
            "headers": {"Authorization": "Bearer ${TOOLBRIDGE_TEST_KEY}"}
        },
        "no-cmd": {
            "command": "toolbridge-test-no-such-command",
            "args": ["--api-key", "${TOOLBRIDGE_TEST_KEY}"],
            "env": {"KEY": "${TOOLBRIDGE_TEST_KEY}"}
        }
    }}));
    let secrets = |c: &mut std::process::Command| {
        c.env("TOOLBRIDGE_TEST_KEY", KEY)
            .env("TOOLBRIDGE_TEST_PW", PW);
    };

    let human = sandbox.run_with(&["doctor"], secrets);
    assert_eq!(human.code, Some(1), "{human:?}");
    assert!(
        human.stdout.contains(&format!(
            "down: http://me:***@127.0.0.1:{port}/mcp?key=*** does not answer"
        )),
        "{}",
        human.stdout
    );

    let machine = sandbox.run_with(&["doctor", "--json"], secrets);
    assert_eq!(machine.code, Some(1), "{machine:?}");
    let report: serde_json::Value = serde_json::from_str(&machine.stdout).unwrap();
    let findings = report["findings"].as_array().unwrap();
    let down = findings.iter().find(|f| f["server"] == "down").unwrap();
    assert_eq!(down["problem"]["kind"], "unreachable", "{report:#}");
    assert_eq!(
        down["problem"]["url"],
        format!("http://me:***@127.0.0.1:{port}/mcp?key=***")
    );
    assert_eq!(
        report["servers"][0],
        json!({"name": "down", "status": "problem"})
    );

    for run in [&human, &machine] {
        for secret in [KEY, PW] {
            assert!(
                !run.stdout.contains(secret) && !run.stderr.contains(secret),
                "doctor leaks {secret}: {run:?}"
            );
        }
    }
}

#[test]
fn doctor_reads_the_config_as_the_other_commands_do() {
    let sandbox = Sandbox::new();
    // `${env:VAR}` and `$$` are the config's syntax; doctor used to take
    // them for an unset variable and a missing command.
    sandbox.write_config(&json!({"mcpServers": {
        "env-prefix": {"command": "${env:TOOLBRIDGE_TEST_SH}"},
        "escaped": {"command": "sh", "args": ["-c", "echo $${NOT_A_VARIABLE}"]},
        "empty-default": {"command": "${TOOLBRIDGE_TEST_EMPTY:-sh}"}
    }}));
    let run = sandbox.run_with(&["doctor"], |c| {
        c.env("TOOLBRIDGE_TEST_SH", "sh")
            .env("TOOLBRIDGE_TEST_EMPTY", "")
            .env_remove("NOT_A_VARIABLE");
    });
    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(problem_lines(&run.stdout).is_empty(), "{}", run.stdout);
}
