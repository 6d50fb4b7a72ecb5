//! `toolbridge skills list|get` (SEP-2640, issue 25), run as the real binary
//! against a server nobody here wrote: FastMCP 4's own skills support
//! (`tests/servers/skills_server.py` over streamable HTTP, serving a copy of
//! `tests/servers/skills`). The library's rules (lazy reads, verification
//! of a changed file) are tested in the library's `test_skills`; a server
//! whose files do not match their entry, through this binary, by the
//! conformance suite's `sep-2640-client-verify-*` (scripts/conformance.sh).

use crate::common;
use crate::gateway_support;

use std::path::Path;

use common::{Listening, Run, Sandbox, deps, test_server};
use serde_json::{Value, json};

/// The skills server over a copy of the fixture skills, and the copy.
fn skills_server() -> (Listening, tempfile::TempDir) {
    let skills = tempfile::tempdir().unwrap();
    let from = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../toolbridge/tests/servers/skills/release-notes");
    let to = skills.path().join("release-notes");
    std::fs::create_dir_all(to.join("references")).unwrap();
    for file in ["SKILL.md", "references/STYLE.md"] {
        std::fs::copy(from.join(file), to.join(file)).unwrap();
    }
    let python = deps().join("py-tb-fastmcp/bin/python");
    let server = Listening::start(
        &python.to_string_lossy(),
        &[
            test_server("skills_server.py"),
            skills.path().to_string_lossy().into_owned(),
            "http".to_owned(),
        ],
        &[("PYTHONUNBUFFERED", "1")],
    );
    (server, skills)
}

fn sandbox(server: &Listening) -> Sandbox {
    let sandbox = Sandbox::new();
    sandbox.write_config(&json!({
        "mcpServers": {
            "docs": { "type": "http", "url": format!("http://127.0.0.1:{}/mcp", server.port) },
            "example": { "command": common::toolbridge(), "args": ["example-server"] },
        }
    }));
    sandbox
}

fn run(sandbox: &Sandbox, args: &[&str]) -> Run {
    let home = sandbox.dir.path().join("home");
    sandbox.run_with(args, |command| {
        command
            .env("HOME", &home)
            .env("XDG_CONFIG_HOME", home.join(".config"));
    })
}

#[test]
fn skills_are_listed_printed_and_saved_verified_into_a_folder_per_server() {
    let (server, skills) = skills_server();
    let sandbox = sandbox(&server);

    let listed = run(&sandbox, &["skills", "list"]);
    assert_eq!(listed.code, Some(0), "{listed:?}");
    assert_eq!(
        listed.stdout.trim(),
        "docs  release-notes  skill://release-notes/SKILL.md (2 files) — Write release notes \
         from merged changes",
        "the example server has no skills: {listed:?}"
    );
    let as_json = run(&sandbox, &["skills", "list", "--server", "docs", "--json"]);
    assert_eq!(as_json.code, Some(0), "{as_json:?}");
    let entries: Value = serde_json::from_str(&as_json.stdout).unwrap();
    assert_eq!(entries[0]["serverId"], "docs", "{entries}");
    assert_eq!(entries[0]["frontmatter"]["license"], "MIT", "{entries}");
    assert_eq!(entries[0]["resources"].as_array().unwrap().len(), 2);

    let skill_md = std::fs::read_to_string(skills.path().join("release-notes/SKILL.md")).unwrap();
    let printed = run(&sandbox, &["skills", "get", "docs", "release-notes"]);
    assert_eq!(printed.code, Some(0), "{printed:?}");
    assert_eq!(printed.stdout.trim_end(), skill_md.trim_end());

    let out = sandbox.dir.path().join("out");
    let out_arg = out.to_string_lossy().into_owned();
    let saved = run(
        &sandbox,
        &["skills", "get", "docs", "release-notes", "--save", &out_arg],
    );
    assert_eq!(saved.code, Some(0), "{saved:?}");
    let folder = out.join("docs/release-notes");
    assert_eq!(
        std::fs::read_to_string(folder.join("SKILL.md")).unwrap(),
        skill_md
    );
    assert_eq!(
        std::fs::read(folder.join("references/STYLE.md")).unwrap(),
        std::fs::read(skills.path().join("release-notes/references/STYLE.md")).unwrap()
    );
    // Never over a skill saved before.
    let again = run(
        &sandbox,
        &["skills", "get", "docs", "release-notes", "--save", &out_arg],
    );
    assert_eq!(again.code, Some(2), "{again:?}");
    assert!(again.stderr.contains("already exists"), "{again:?}");
}

#[test]
fn unknown_skills_and_servers_without_them_exit_2_naming_the_server() {
    let (server, _skills) = skills_server();
    let sandbox = sandbox(&server);

    let unknown = run(&sandbox, &["skills", "get", "docs", "pdf-processing"]);
    assert_eq!(unknown.code, Some(2), "{unknown:?}");
    assert!(
        unknown.stderr.starts_with(
            "toolbridge: server \"docs\" has no skill \"pdf-processing\"; its only skill is \
             release-notes"
        ),
        "{unknown:?}"
    );
    let none = run(&sandbox, &["skills", "get", "example", "anything"]);
    assert_eq!(none.code, Some(2), "{none:?}");
    assert!(
        none.stderr
            .starts_with("toolbridge: server \"example\" offers no skills"),
        "{none:?}"
    );
}

#[test]
fn the_gateway_serves_each_upstreams_skills_under_its_own_uri_verified_through_it() {
    // Two upstreams serving the same skill at the same URI.
    let (one, one_skills) = skills_server();
    let (two, _two_skills) = skills_server();
    let home = tempfile::tempdir().unwrap();
    let config = gateway_support::write_config(
        home.path(),
        json!({
            "a": { "type": "http", "url": format!("http://127.0.0.1:{}/mcp", one.port) },
            "b": { "type": "http", "url": format!("http://127.0.0.1:{}/mcp", two.port) },
        }),
    );
    let gateway = gateway_support::Gateway::start_with(&config, home.path(), &[], None);
    let sandbox = Sandbox::new();
    sandbox
        .write_config(&json!({ "mcpServers": { "gw": { "type": "http", "url": gateway.url } } }));

    let listed = run(&sandbox, &["skills", "list", "--json"]);
    assert_eq!(listed.code, Some(0), "{listed:?}");
    let entries: Value = serde_json::from_str(&listed.stdout).unwrap();
    let uris: Vec<&str> = entries
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["uri"].as_str().unwrap())
        .collect();
    assert_eq!(
        uris,
        [
            "skill://a/release-notes/SKILL.md",
            "skill://b/release-notes/SKILL.md"
        ],
        "{entries}"
    );
    let files: Vec<&str> = entries[1]["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["uri"].as_str().unwrap())
        .collect();
    assert!(
        files.contains(&"skill://b/release-notes/references/STYLE.md"),
        "{files:?}"
    );

    // The name alone is ambiguous now; the URI loads it, every file read
    // through the gateway and verified against the digests the upstream gave.
    let ambiguous = run(&sandbox, &["skills", "get", "gw", "release-notes"]);
    assert_eq!(ambiguous.code, Some(2), "{ambiguous:?}");
    assert!(
        ambiguous.stderr.contains(
            "has 2 skills named \"release-notes\" (skill://a/release-notes/SKILL.md, \
             skill://b/release-notes/SKILL.md)"
        ),
        "{ambiguous:?}"
    );
    let out = sandbox.dir.path().join("out");
    let saved = run(
        &sandbox,
        &[
            "skills",
            "get",
            "gw",
            "skill://b/release-notes/SKILL.md",
            "--save",
            &out.to_string_lossy(),
        ],
    );
    assert_eq!(saved.code, Some(0), "{saved:?}");
    let folder = out.join("gw/b/release-notes");
    assert_eq!(
        std::fs::read(folder.join("references/STYLE.md")).unwrap(),
        std::fs::read(one_skills.path().join("release-notes/references/STYLE.md")).unwrap()
    );
    assert!(folder.join("SKILL.md").is_file(), "{saved:?}");
}

#[test]
fn the_example_server_with_skill_serves_one_skill_verified_with_no_network() {
    // `example-server --skill`: the skill and its SKILL.md are in the
    // binary, so this needs no folder, no Python and no network.
    let sandbox = Sandbox::new();
    sandbox.write_config(&json!({
        "mcpServers": {
            "example": { "command": common::toolbridge(), "args": ["example-server", "--skill"] },
        }
    }));
    let listed = run(&sandbox, &["skills", "list", "--json"]);
    assert_eq!(listed.code, Some(0), "{listed:?}");
    let entries: Value = serde_json::from_str(&listed.stdout).unwrap();
    assert_eq!(entries.as_array().map(Vec::len), Some(1), "{entries}");
    assert_eq!(entries[0]["serverId"], "example", "{entries}");
    assert_eq!(
        entries[0]["uri"], "skill://toolbridge-example/SKILL.md",
        "{entries}"
    );
    // `get` verifies the file's size, digest and frontmatter against the
    // entry before it prints it.
    let printed = run(
        &sandbox,
        &["skills", "get", "example", "toolbridge-example"],
    );
    assert_eq!(printed.code, Some(0), "{printed:?}");
    assert!(
        printed
            .stdout
            .starts_with("---\nname: toolbridge-example\n"),
        "{printed:?}"
    );
    assert!(
        printed.stdout.contains("`echo` returns `text`"),
        "{printed:?}"
    );
    // Its tools are the example server's, unchanged.
    let tools = run(&sandbox, &["tools", "--server", "example"]);
    assert_eq!(tools.code, Some(0), "{tools:?}");
    assert!(tools.stdout.contains("echo"), "{tools:?}");
}
