//! Server log messages on the real binary's stderr, `[server] level:
//! logger: message`, at the level `--log-level`, `-v`/`-vv` or `-q` chose,
//! never on stdout. The server is `py_sdk_server.py` (Python `mcp` 2.3.0, on
//! 2026-07-28, where a request gets log messages only when its `_meta` asks
//! for a level); its `chatty` tool logs once at debug, info, warning and
//! error.

use crate::common;

use common::*;
use serde_json::json;

fn setup() -> Sandbox {
    let sandbox = Sandbox::new();
    sandbox.write_config(&json!({ "mcpServers": {
        "py": { "command": python(), "args": [test_server("py_sdk_server.py")] },
    }}));
    sandbox
}

/// `toolbridge FLAGS call py chatty`, with its own home and config folders;
/// the server log lines it printed on stderr.
fn chatty(sandbox: &Sandbox, flags: &[&str]) -> Vec<String> {
    let home = sandbox.dir.path().join("home");
    let mut args = flags.to_vec();
    args.extend(["call", "py", "chatty"]);
    let run = sandbox.run_with(&args, |cmd| {
        cmd.env("HOME", &home)
            .env("XDG_CONFIG_HOME", home.join(".config"));
    });
    assert_eq!(run.code, Some(0), "{flags:?}: {}", run.stderr);
    assert_eq!(run.stdout, "said it all\n", "{flags:?}: logs on stdout");
    run.stderr
        .lines()
        .filter(|l| l.starts_with("[py]"))
        .map(str::to_owned)
        .collect()
}

fn line(level: &str) -> String {
    format!("[py] {level}: chatty: {level} from chatty")
}

#[test]
fn server_logs_show_on_stderr_from_warning_by_default() {
    let sandbox = setup();
    assert_eq!(chatty(&sandbox, &[]), [line("warning"), line("error")]);
}

#[test]
fn verbosity_and_log_level_choose_the_least_severe_message_shown() {
    let sandbox = setup();
    assert_eq!(
        chatty(&sandbox, &["-v"]),
        [line("info"), line("warning"), line("error")]
    );
    assert_eq!(
        chatty(&sandbox, &["-vv"]),
        [line("debug"), line("info"), line("warning"), line("error")]
    );
    assert_eq!(chatty(&sandbox, &["--log-level", "error"]), [line("error")]);
    assert!(chatty(&sandbox, &["-q"]).is_empty(), "-q shows none");
}
