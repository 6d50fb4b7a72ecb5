//! `toolbridge resources`, `prompts` and `complete` (issue 12), run as the
//! real binary against servers nobody here wrote: the conformance suite's
//! reference server (streamable HTTP, one for this whole binary) and
//! server-everything (stdio); `catalog_server.py` for a read that never
//! answers. Human output by default, MCP's JSON with `--json`, and the
//! exit codes of `call`.

use crate::common;

use base64::Engine as _;
use common::{Run, Sandbox, python, reference::reference_url, test_server};
use serde_json::{Value, json};

/// A sandbox whose config has the reference server (`ref`),
/// server-everything (`everything`), the built-in example server
/// (`example`, no resources or prompts) and `catalog_server.py` (`cat`).
fn sandbox() -> Sandbox {
    let sandbox = Sandbox::new();
    let everything = common::everything_js().to_string_lossy().into_owned();
    sandbox.write_config(&json!({
        "mcpServers": {
            "ref": { "type": "http", "url": reference_url() },
            "everything": { "command": "node", "args": [everything, "stdio"] },
            "example": { "command": common::toolbridge(), "args": ["example-server"] },
            "cat": { "command": python(), "args": [test_server("catalog_server.py")] },
        }
    }));
    sandbox
}

/// Runs `toolbridge args...` in `sandbox` with its own HOME and config
/// folder.
fn run(sandbox: &Sandbox, args: &[&str]) -> Run {
    let home = sandbox.dir.path().join("home");
    sandbox.run_with(args, |command| {
        command
            .env("HOME", &home)
            .env("XDG_CONFIG_HOME", home.join(".config"));
    })
}

fn json_of(run: &Run) -> Value {
    serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("{e}: {run:?}"))
}

#[test]
fn resources_are_listed_and_read_from_the_reference_server() {
    let sandbox = sandbox();
    let listed = run(&sandbox, &["resources", "list", "--server", "ref"]);
    assert_eq!(listed.code, Some(0), "{listed:?}");
    assert!(
        listed.stdout.lines().any(|l| l
            == "ref  test://static-text  Static Text Resource (text/plain) — A static text \
                resource for testing"),
        "{listed:?}"
    );
    let listed = run(
        &sandbox,
        &["resources", "list", "--server", "ref", "--json"],
    );
    let items = json_of(&listed);
    let text = items
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["uri"] == "test://static-text")
        .unwrap_or_else(|| panic!("{items}"));
    assert_eq!(text["serverId"], "ref");
    assert_eq!(text["mimeType"], "text/plain");

    let templates = run(&sandbox, &["resources", "templates", "--server", "ref"]);
    assert_eq!(templates.code, Some(0), "{templates:?}");
    assert!(
        templates
            .stdout
            .starts_with("ref  test://template/{id}/data  Resource Template"),
        "{templates:?}"
    );

    let read = run(
        &sandbox,
        &["resources", "read", "ref", "test://static-text"],
    );
    assert_eq!(read.code, Some(0), "{read:?}");
    assert_eq!(
        read.stdout,
        "This is the content of the static text resource.\n"
    );
}

#[test]
fn a_binary_resource_is_described_or_saved_to_a_file() {
    let sandbox = sandbox();
    let described = run(
        &sandbox,
        &["resources", "read", "ref", "test://static-binary"],
    );
    assert_eq!(described.code, Some(0), "{described:?}");
    assert_eq!(
        described.stdout,
        "[Resource: test://static-binary (image/png, 70 bytes)] binary data; add --save DIR to write it to a file\n",
        "{described:?}"
    );
    let dir = sandbox.dir.path().join("saved");
    let saved = run(
        &sandbox,
        &[
            "resources",
            "read",
            "ref",
            "test://static-binary",
            "--save",
            dir.to_str().unwrap(),
        ],
    );
    assert_eq!(saved.code, Some(0), "{saved:?}");
    let path = dir.join("static-binary.png");
    assert_eq!(saved.stdout, format!("{}\n", path.display()));
    assert!(std::fs::read(&path).unwrap().starts_with(b"\x89PNG"));
    // --json: the contents as the server sent them, base64 and all.
    let raw = run(
        &sandbox,
        &["resources", "read", "ref", "test://static-binary", "--json"],
    );
    let result = json_of(&raw);
    let blob = result["contents"][0]["blob"].as_str().unwrap();
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(blob)
        .unwrap();
    assert_eq!(bytes, std::fs::read(&path).unwrap());
    assert_eq!(result["contents"][0]["mimeType"], "image/png");
}

#[test]
fn unknown_resources_prompts_and_missing_features_exit_2_naming_the_server() {
    let sandbox = sandbox();
    let unknown = run(&sandbox, &["resources", "read", "ref", "test://nope"]);
    assert_eq!(unknown.code, Some(2), "{unknown:?}");
    assert!(
        unknown
            .stderr
            .starts_with("toolbridge: server \"ref\" has no resource \"test://nope\""),
        "{unknown:?}"
    );
    let unknown = run(&sandbox, &["prompts", "get", "ref", "nope"]);
    assert_eq!(unknown.code, Some(2), "{unknown:?}");
    assert!(
        unknown.stderr.starts_with(
            "toolbridge: server \"ref\" has no prompt \"nope\"; its prompts are test_simple_prompt"
        ),
        "{unknown:?}"
    );
    let none = run(&sandbox, &["prompts", "get", "example", "anything"]);
    assert_eq!(none.code, Some(2), "{none:?}");
    assert!(
        none.stderr
            .starts_with("toolbridge: server \"example\" offers no prompts"),
        "{none:?}"
    );
    // Among others, a server without resources simply has none.
    let listed = run(
        &sandbox,
        &[
            "resources",
            "list",
            "--server",
            "example",
            "--server",
            "ref",
        ],
    );
    assert_eq!(listed.code, Some(0), "{listed:?}");
    assert!(
        listed.stdout.lines().all(|l| l.starts_with("ref  ")),
        "{listed:?}"
    );
}

#[test]
fn prompts_are_listed_and_got_as_role_and_text() {
    let sandbox = sandbox();
    let listed = run(&sandbox, &["prompts", "list", "--server", "ref"]);
    assert_eq!(listed.code, Some(0), "{listed:?}");
    assert!(
        listed.stdout.lines().any(|l| l
            == "ref  test_prompt_with_arguments(arg1, arg2) — A prompt with required arguments"),
        "{listed:?}"
    );
    let got = run(
        &sandbox,
        &[
            "prompts",
            "get",
            "ref",
            "test_prompt_with_arguments",
            "--args",
            r#"{"arg1": "one", "arg2": 2}"#,
        ],
    );
    assert_eq!(got.code, Some(0), "{got:?}");
    assert_eq!(
        got.stdout,
        "user: Prompt with arguments: arg1='one', arg2='2'\n"
    );
    let image = run(
        &sandbox,
        &["prompts", "get", "ref", "test_prompt_with_image"],
    );
    assert_eq!(
        image.stdout,
        "user: [Image: image/png]\nuser: Please analyze the image above.\n"
    );
    let raw = run(
        &sandbox,
        &["prompts", "get", "ref", "test_prompt_with_image", "--json"],
    );
    let result = json_of(&raw);
    assert_eq!(result["messages"][0]["content"]["type"], "image");
    assert_eq!(result["messages"][0]["content"]["mimeType"], "image/png");
}

#[test]
fn completion_prints_one_value_per_line() {
    let sandbox = sandbox();
    let names = run(
        &sandbox,
        &[
            "complete",
            "everything",
            "--prompt",
            "completable-prompt",
            "name",
            "",
            "--context",
            r#"{"department": "Sales"}"#,
        ],
    );
    assert_eq!(names.code, Some(0), "{names:?}");
    assert_eq!(names.stdout, "David\nEve\nFrank\n");
    let raw = run(
        &sandbox,
        &[
            "complete",
            "everything",
            "--prompt",
            "completable-prompt",
            "department",
            "S",
            "--json",
        ],
    );
    assert_eq!(
        json_of(&raw)["completion"]["values"],
        json!(["Sales", "Support"])
    );
    let template = run(
        &sandbox,
        &[
            "complete",
            "ref",
            "--resource",
            "test://template/{id}/data",
            "id",
            "1",
        ],
    );
    assert_eq!(template.code, Some(0), "{template:?}");
    assert_eq!(template.stdout, "");
    let neither = run(&sandbox, &["complete", "ref", "id", "1"]);
    assert_eq!(neither.code, Some(2), "{neither:?}");
}

#[test]
fn a_read_past_its_timeout_exits_4() {
    let sandbox = sandbox();
    let read = run(
        &sandbox,
        &[
            "resources",
            "read",
            "cat",
            "file:///r/silent",
            "--timeout",
            "1",
        ],
    );
    assert_eq!(read.code, Some(4), "{read:?}");
    assert!(
        read.stderr.starts_with(
            "toolbridge: resources/read request to server \"cat\" timed out after 1 s"
        ),
        "{read:?}"
    );
}
