//! `toolbridge doctor`, run as a user would, against real processes and
//! sockets on 127.0.0.1.

use crate::common;

use std::{
    io::{Read, Write},
    net::TcpListener,
    process::Command,
    time::{Duration, Instant},
};

use common::Sandbox;
use serde_json::json;

/// A port on 127.0.0.1 that nothing listens on.
fn closed_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
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
    let run = doctor(&sandbox, &[], |c| {
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
    let http = common::python_listening("streamable-http");
    sandbox.write_config(&json!({"mcpServers": {
        "local": {"command": "${TOOLBRIDGE_TEST_BIN}", "args": ["example-server"]},
        "remote": {"type": "http", "url": http.url("/mcp")},
        "off": {"command": "toolbridge-test-no-such-command", "disabled": true}
    }}));
    let run = doctor(&sandbox, &[], |c| {
        c.env("TOOLBRIDGE_TEST_BIN", common::toolbridge());
    });
    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(problem_lines(&run.stdout).is_empty(), "{}", run.stdout);
    assert!(
        run.stdout.contains("  ok       local: ") && run.stdout.contains(" tools, started in "),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("  ok       remote: "), "{}", run.stdout);
    assert!(run.stdout.contains("off (disabled, not checked)"));
    assert!(
        run.stdout
            .contains("every enabled server started and listed its tools")
    );
}

#[test]
fn no_config_file_is_healthy() {
    let sandbox = Sandbox::new();
    // No --config: the default location, which has no file.
    let mut command = Command::new(common::toolbridge());
    command
        .arg("doctor")
        .env_remove("TOOLBRIDGE_CONFIG")
        .stdin(std::process::Stdio::null());
    isolate(&sandbox, &mut command);
    let run = common::Run::from(command.output().unwrap());
    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(run.stdout.contains("no config file at"), "{}", run.stdout);
    assert!(run.stdout.contains("launchers:"));
    assert!(
        run.stdout.contains("  ok       example: ") && run.stdout.contains(" tools, started in "),
        "the built-in server is started too: {}",
        run.stdout
    );
}

#[test]
fn a_named_config_that_does_not_exist_is_exit_2_not_the_example_server() {
    let sandbox = Sandbox::new();
    let missing = sandbox.dir.path().join("typo.json");
    let mut command = Command::new(common::toolbridge());
    command
        .arg("doctor")
        .env("TOOLBRIDGE_CONFIG", &missing)
        .stdin(std::process::Stdio::null());
    isolate(&sandbox, &mut command);
    let run = common::Run::from(command.output().unwrap());
    assert_eq!(run.code, Some(2), "{run:?}");
    assert!(run.stderr.contains("typo.json"), "{}", run.stderr);
    assert!(!run.stdout.contains("example"), "{}", run.stdout);
}

#[test]
fn preset_without_its_key_is_reported_with_the_variable_to_export() {
    let sandbox = Sandbox::new();
    assert_eq!(sandbox.run(&["presets", "add", "tavily"]).code, Some(0));
    let run = doctor(&sandbox, &[], |c| {
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
    let run = doctor(&sandbox, &[], |c| {
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
    let run = doctor(&sandbox, &["--install", "uvx"], |c| {
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
    let run = doctor(&sandbox, &["--install", "uvx", "--yes"], |c| {
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
    let run = doctor(&sandbox, &["--install", "toolbridge-test-unknown"], |_| {});
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
    let denied = answering("401 Unauthorized");
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
        },
        // Started: its answer and the server's own stderr are shown.
        "denied": {
            "type": "http",
            "url": format!("http://me:${{TOOLBRIDGE_TEST_PW}}@{denied}/mcp?key=${{TOOLBRIDGE_TEST_KEY}}"),
            "headers": {"Authorization": "Bearer ${TOOLBRIDGE_TEST_KEY}"}
        },
        "echoes": {
            "command": "sh",
            "args": ["-c", "echo \"$1 $KEY $PW\" >&2; exit 1", "sh", "--api-key", "${TOOLBRIDGE_TEST_KEY}"],
            "env": {"KEY": "${TOOLBRIDGE_TEST_KEY}", "PW": "${TOOLBRIDGE_TEST_PW}"}
        }
    }}));
    let secrets = |c: &mut std::process::Command| {
        c.env("TOOLBRIDGE_TEST_KEY", KEY)
            .env("TOOLBRIDGE_TEST_PW", PW);
    };

    let human = doctor(&sandbox, &[], secrets);
    assert_eq!(human.code, Some(1), "{human:?}");
    assert!(
        human.stdout.contains(&format!(
            "down: http://me:***@127.0.0.1:{port}/mcp?key=*** does not answer"
        )),
        "{}",
        human.stdout
    );

    let denied_problem = problem_of(&human.stdout, "denied");
    assert!(denied_problem.contains("HTTP 401"), "{denied_problem}");
    let echoed = problem_of(&human.stdout, "echoes");
    assert!(echoed.contains("| --api-key *** ***"), "{echoed}");

    let machine = doctor(&sandbox, &["--json"], secrets);
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
        "env-prefix": {"command": "${env:TOOLBRIDGE_TEST_BIN}", "args": ["example-server"]},
        "escaped": {
            "command": "sh",
            "args": ["-c", "echo $${NOT_A_VARIABLE} >&2; exec \"$0\" example-server", "${TOOLBRIDGE_TEST_BIN}"]
        },
        "empty-default": {
            "command": "${TOOLBRIDGE_TEST_EMPTY:-sh}",
            "args": ["-c", "exec \"$0\" example-server", "${TOOLBRIDGE_TEST_BIN}"]
        }
    }}));
    let run = doctor(&sandbox, &[], |c| {
        c.env("TOOLBRIDGE_TEST_BIN", common::toolbridge())
            .env("TOOLBRIDGE_TEST_EMPTY", "")
            .env_remove("NOT_A_VARIABLE");
    });
    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(problem_lines(&run.stdout).is_empty(), "{}", run.stdout);
}

/// `toolbridge --config CONFIG doctor args...` with its own home, config
/// and cache folders, after `setup` adjusts the command.
fn doctor(sandbox: &Sandbox, args: &[&str], setup: impl FnOnce(&mut Command)) -> common::Run {
    let mut all = vec!["doctor"];
    all.extend_from_slice(args);
    sandbox.run_with(&all, |c| {
        isolate(sandbox, c);
        setup(c);
    })
}

/// Home, config and cache folders inside the sandbox.
fn isolate(sandbox: &Sandbox, c: &mut Command) {
    let home = sandbox.dir.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    c.env("HOME", &home)
        .env("XDG_CONFIG_HOME", home.join(".config"))
        .env("XDG_CACHE_HOME", home.join(".cache"));
}

/// An HTTP server on 127.0.0.1 that answers every request with `status`
/// and no body, for as long as the test runs.
fn answering(status: &'static str) -> std::net::SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for socket in listener.incoming() {
            let Ok(mut socket) = socket else { continue };
            std::thread::spawn(move || {
                let mut request = Vec::new();
                let mut buf = [0u8; 4096];
                // The head, then whatever body came with it.
                while !request.windows(4).any(|w| w == b"\r\n\r\n") {
                    match socket.read(&mut buf) {
                        Ok(0) | Err(_) => return,
                        Ok(n) => request.extend_from_slice(&buf[..n]),
                    }
                }
                let _ = socket.write_all(
                    format!("HTTP/1.1 {status}\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
                        .as_bytes(),
                );
            });
        }
    });
    addr
}

/// The problem line of `server`, and the lines that follow it up to the
/// next server's.
fn problem_of<'a>(stdout: &'a str, server: &str) -> String {
    let start = format!("  problem  {server}: ");
    let mut lines = stdout.lines().skip_while(|l| !l.starts_with(&start));
    let mut found: Vec<&'a str> = lines.next().into_iter().collect();
    found.extend(lines.take_while(|l| l.starts_with("           ")));
    assert!(!found.is_empty(), "no problem for {server}:\n{stdout}");
    found.join("\n")
}

#[test]
fn a_server_that_exits_at_once_is_a_problem_with_its_stderr() {
    let sandbox = Sandbox::new();
    sandbox.write_config(&json!({"mcpServers": {
        "exits": {"command": "sh", "args": ["-c", "echo 'fatal: WEATHER_API_KEY is not set' >&2; exit 1"]}
    }}));
    let run = doctor(&sandbox, &[], |_| {});
    assert_eq!(run.code, Some(1), "{run:?}");
    let problem = problem_of(&run.stdout, "exits");
    assert!(problem.contains("exits: failed to start: "), "{problem}");
    assert!(
        problem.contains("| fatal: WEATHER_API_KEY is not set"),
        "{problem}"
    );
    assert!(
        problem.contains("; fix: its stderr (below) says why"),
        "{problem}"
    );
    assert!(run.stdout.contains("1 problem found"), "{}", run.stdout);
}

#[cfg(unix)]
#[test]
fn a_command_that_is_not_executable_is_reported_with_chmod() {
    let sandbox = Sandbox::new();
    let program = sandbox.dir.path().join("server.sh");
    std::fs::write(&program, "#!/bin/sh\nexec sleep 1000\n").unwrap();
    sandbox.write_config(&json!({"mcpServers": {"plain-file": {"command": program}}}));
    let run = doctor(&sandbox, &[], |_| {});
    assert_eq!(run.code, Some(1), "{run:?}");
    let problem = problem_of(&run.stdout, "plain-file");
    assert!(
        problem.contains(&format!(
            "command \"{0}\" is not executable; fix: make it executable (chmod +x {0})",
            program.display()
        )),
        "{problem}"
    );
}

#[test]
fn a_server_that_hangs_fails_at_the_start_timeout_with_its_stderr() {
    let sandbox = Sandbox::new();
    sandbox.write_config(&json!({"mcpServers": {
        "hangs": {"command": common::python(), "args": [common::test_server("start_faults.py"), "hang-at-start"]},
        "fine": {"command": common::toolbridge(), "args": ["example-server"]}
    }}));
    let started = Instant::now();
    let run = doctor(&sandbox, &["--start-timeout", "2"], |_| {});
    let took = started.elapsed();
    assert_eq!(run.code, Some(1), "{run:?}");
    // Well under the default 15 s: the flag's 2 s, and closing the server.
    assert!(took < Duration::from_secs(12), "doctor took {took:?}");
    let problem = problem_of(&run.stdout, "hangs");
    assert!(
        problem.contains("hangs: did not start and list its tools within 2 s; fix: "),
        "{problem}"
    );
    assert!(problem.contains("startupTimeout"), "{problem}");
    assert!(problem.contains("| loading the model..."), "{problem}");
    assert!(run.stdout.contains("  ok       fine: "), "{}", run.stdout);

    let machine = doctor(&sandbox, &["--start-timeout", "2", "--json"], |_| {});
    let report: serde_json::Value = serde_json::from_str(&machine.stdout).unwrap();
    let finding = &report["findings"][0];
    assert_eq!(finding["problem"]["kind"], "startTimeout", "{report:#}");
    assert_eq!(finding["problem"]["timeoutMs"], 2000, "{report:#}");
    assert_eq!(finding["problem"]["stderr"], "loading the model...");
    let fine = &report["servers"][1];
    assert_eq!(fine["status"], "ok", "{report:#}");
    assert!(fine["toolCount"].as_u64().unwrap() > 0, "{report:#}");
    assert_eq!(fine["transport"], "stdio", "{report:#}");
    assert!(fine["startMs"].is_u64(), "{report:#}");
}

#[test]
fn the_filesystem_server_given_a_missing_folder_says_create_the_folder() {
    let sandbox = Sandbox::new();
    let server = common::deps().join("node/node_modules/.bin/mcp-server-filesystem");
    let missing = sandbox.dir.path().join("notes");
    sandbox.write_config(&json!({"mcpServers": {
        "files": {"command": server, "args": [missing]}
    }}));
    let run = doctor(&sandbox, &["--start-timeout", "90"], |_| {});
    assert_eq!(run.code, Some(1), "{run:?}");
    let problem = problem_of(&run.stdout, "files");
    assert!(problem.contains("files: failed to start: "), "{problem}");
    assert!(
        problem.contains(&format!(
            "fix: create the folder {}, or correct the path",
            missing.display()
        )),
        "{problem}"
    );
    assert!(
        problem.contains("None of the specified directories are accessible"),
        "the server's own words: {problem}"
    );

    std::fs::create_dir(&missing).unwrap();
    let run = doctor(&sandbox, &["--start-timeout", "90"], |_| {});
    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(run.stdout.contains("  ok       files: "), "{}", run.stdout);
}

#[test]
fn http_401_says_check_the_token_and_404_says_check_the_url() {
    let sandbox = Sandbox::new();
    let denied = answering("401 Unauthorized");
    let absent = answering("404 Not Found");
    sandbox.write_config(&json!({"mcpServers": {
        "denied": {"type": "http", "url": format!("http://{denied}/mcp"),
                   "headers": {"Authorization": "Bearer ${TOOLBRIDGE_TEST_TOKEN}"}},
        "absent": {"url": format!("http://{absent}/mpc")}
    }}));
    let run = doctor(&sandbox, &[], |c| {
        c.env("TOOLBRIDGE_TEST_TOKEN", "tok-SECRET-4321");
    });
    assert_eq!(run.code, Some(1), "{run:?}");
    let problem = problem_of(&run.stdout, "denied");
    assert!(problem.contains("HTTP 401"), "{problem}");
    assert!(problem.contains("fix: check the token"), "{problem}");
    let problem = problem_of(&run.stdout, "absent");
    assert!(problem.contains("HTTP 404"), "{problem}");
    assert!(problem.contains("fix: check the URL"), "{problem}");
    assert!(!run.stdout.contains("SECRET") && !run.stderr.contains("SECRET"));

    let machine = doctor(&sandbox, &["--json"], |c| {
        c.env("TOOLBRIDGE_TEST_TOKEN", "tok-SECRET-4321");
    });
    let report: serde_json::Value = serde_json::from_str(&machine.stdout).unwrap();
    let statuses: Vec<&serde_json::Value> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| &f["problem"]["httpStatus"])
        .collect();
    assert_eq!(statuses, [&json!(401), &json!(404)], "{report:#}");
}

/// A server may print its own environment; what doctor shows of it must
/// not hold the config's values.
#[test]
fn a_servers_stderr_is_shown_without_the_configs_secrets() {
    const KEY: &str = "key-SECRET-8765";
    let sandbox = Sandbox::new();
    sandbox.write_config(&json!({"mcpServers": {
        "echoes": {
            "command": "sh",
            "args": ["-c", "echo \"invalid key: $API_KEY\" >&2; exit 1"],
            "env": {"API_KEY": "${TOOLBRIDGE_TEST_KEY}"}
        }
    }}));
    for args in [&[][..], &["--json"][..]] {
        let run = doctor(&sandbox, args, |c| {
            c.env("TOOLBRIDGE_TEST_KEY", KEY);
        });
        assert_eq!(run.code, Some(1), "{run:?}");
        assert!(run.stdout.contains("invalid key: ***"), "{}", run.stdout);
        assert!(
            !run.stdout.contains(KEY) && !run.stderr.contains(KEY),
            "doctor leaks {KEY}: {run:?}"
        );
    }
}

#[test]
fn doctor_shows_what_the_system_can_sandbox_and_each_servers_sandbox() {
    let sandbox = Sandbox::new();
    sandbox.write_config(&json!({"mcpServers": {
        "boxed": {"command": "${TOOLBRIDGE_TEST_BIN}", "args": ["example-server"],
                  "sandbox": {"network": "none"}},
        "open": {"command": "${TOOLBRIDGE_TEST_BIN}", "args": ["example-server"],
                 "sandbox": false}
    }}));
    let bin = |c: &mut Command| {
        c.env("TOOLBRIDGE_TEST_BIN", common::toolbridge());
    };
    let run = doctor(&sandbox, &[], bin);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(
        run.stdout.contains("sandbox: Landlock ABI "),
        "{}",
        run.stdout
    );
    let line = |name: &str| {
        run.stdout
            .lines()
            .find(|l| l.contains(&format!("ok       {name}:")))
            .unwrap_or_else(|| panic!("{name} not ok in {}", run.stdout))
            .to_owned()
    };
    assert!(
        line("boxed").ends_with("sandbox: write 0 paths, network none"),
        "{}",
        run.stdout
    );
    assert!(line("open").ends_with("sandbox: off"), "{}", run.stdout);

    let run = doctor(&sandbox, &["--json"], bin);
    let report: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert!(report["sandbox"]["landlockAbi"].as_u64().unwrap() >= 1);
    assert_eq!(report["sandbox"]["unavailable"], serde_json::Value::Null);
    let of = |name: &str| {
        report["servers"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["name"] == name)
            .unwrap()["sandbox"]
            .clone()
    };
    assert_eq!(of("boxed"), "write 0 paths, network none");
    assert_eq!(of("open"), "off");
}
