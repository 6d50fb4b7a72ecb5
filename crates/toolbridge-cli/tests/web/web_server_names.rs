//! Issue 32's fifteenth finding, on the page's side and the CLI's: new
//! server names follow the rule (printable, no bidi or zero-width
//! characters, at most 64 characters, not `.` or `..`), and the odd names
//! already in a config (`.`, `..`, a bidi override, one of a megabyte) can
//! still be edited, disabled and removed through the page's API, which
//! addresses servers by the `ref` its listing gives (a browser resolves `.`
//! and `..` in a URL away, and a megabyte is past any URL limit).

use crate::common;
use crate::gateway_support;
use crate::web_api_client;

use common::{Sandbox, toolbridge};
use gateway_support::Gateway;
use serde_json::{Value, json};
use web_api_client::Api;

fn example() -> Value {
    json!({ "command": toolbridge(), "args": ["example-server"] })
}

#[test]
fn odd_names_already_in_a_config_can_be_edited_disabled_and_removed_from_the_page() {
    let huge = "m".repeat(1 << 20);
    let odd = [
        ".".to_owned(),
        "..".to_owned(),
        "evil\u{202E}gnp.exe".to_owned(),
        huge,
    ];
    let home = tempfile::tempdir().expect("tempdir");
    let config = home.path().join("config.json");
    let servers: serde_json::Map<String, Value> =
        odd.iter().map(|name| (name.clone(), example())).collect();
    std::fs::write(&config, json!({ "mcpServers": servers }).to_string()).unwrap();
    let gateway = Gateway::start(&config, home.path(), &[]);
    let api = Api::new(&gateway.addr());

    let listed = api.get("/servers");
    assert_eq!(
        listed.status,
        200,
        "{}",
        &listed.text[..listed.text.len().min(300)]
    );
    for name in &odd {
        let shown = &name[..name.len().min(12)];
        let view = listed.json["servers"]
            .as_array()
            .and_then(|all| all.iter().find(|s| s["name"] == *name.as_str()))
            .unwrap_or_else(|| panic!("{shown:?} is not listed"));
        let reference = view["ref"]
            .as_str()
            .unwrap_or_else(|| panic!("{shown:?} has no ref"))
            .to_owned();
        // The reference fits a URL path segment as it is.
        assert!(
            reference.len() < 40
                && reference
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '~'),
            "{reference}"
        );

        let disabled = api.post(&format!("/servers/{reference}/disable"), json!({}));
        assert_eq!(
            disabled.status,
            200,
            "disable {shown:?}: {}",
            disabled.text.len()
        );
        assert_eq!(disabled.json["enabled"], false, "disable {shown:?}");
        let edited = api.put(
            &format!("/servers/{reference}"),
            json!({ "name": name, "transport": "stdio", "command": toolbridge(),
                    "args": ["example-server", "--verbose"] }),
        );
        assert_eq!(
            edited.status,
            200,
            "edit {shown:?}: {}",
            &edited.text[..edited.text.len().min(300)]
        );
        assert_eq!(
            edited.json["args"],
            json!(["example-server", "--verbose"]),
            "edit {shown:?}"
        );
        let removed = api.delete(&format!("/servers/{reference}"));
        assert_eq!(
            removed.status,
            204,
            "remove {shown:?}: {}",
            &removed.text[..removed.text.len().min(300)]
        );
    }
    let left: Value = serde_json::from_str(&std::fs::read_to_string(&config).unwrap()).unwrap();
    assert_eq!(left["mcpServers"], json!({}), "every odd server removed");
}

#[test]
fn a_new_server_name_from_the_page_follows_the_rule() {
    let home = tempfile::tempdir().expect("tempdir");
    let config = home.path().join("config.json");
    std::fs::write(
        &config,
        json!({ "mcpServers": { "ok": example() } }).to_string(),
    )
    .unwrap();
    let before = std::fs::read(&config).unwrap();
    let gateway = Gateway::start(&config, home.path(), &[]);
    let api = Api::new(&gateway.addr());
    for (name, why) in [
        ("git\u{200B}hub", "zero-width"),
        ("evil\u{202E}gnp", "bidirectional"),
        ("..", "path segment"),
        (&*"n".repeat(65), "65 characters"),
    ] {
        let form = json!({ "name": name, "transport": "stdio", "command": toolbridge() });
        let added = api.post("/servers", form.clone());
        assert!(
            (400..500).contains(&added.status),
            "add {name:?}: {added:?}"
        );
        assert_eq!(added.field(), Some("name"), "{added:?}");
        assert!(
            added.text.contains(why) && added.text.contains("64 printable"),
            "{added:?}"
        );
        // Renaming an existing server to it is refused the same way.
        let renamed = api.put("/servers/ok", form);
        assert_eq!(
            renamed.field(),
            Some("name"),
            "rename to {name:?}: {renamed:?}"
        );
    }
    assert_eq!(std::fs::read(&config).unwrap(), before, "nothing written");
}

#[test]
fn servers_add_and_import_refuse_a_name_against_the_rule_and_say_it() {
    let sandbox = Sandbox::new();
    sandbox.write_config(&json!({ "mcpServers": {} }));
    for name in ["bad\u{2066}name", ".", &"z".repeat(65)] {
        let run = sandbox.run(&["servers", "add", name, "--command", "echo"]);
        assert_ne!(run.code, Some(0), "{name:?}: {run:?}");
        assert!(
            run.stderr.contains("1 to 64 printable characters"),
            "{name:?}: {}",
            run.stderr
        );
    }
    let other = sandbox.dir.path().join("claude.json");
    std::fs::write(
        &other,
        json!({ "mcpServers": { "in\u{200D}visible": { "command": "echo" } } }).to_string(),
    )
    .unwrap();
    let run = sandbox.run(&["servers", "import", &other.to_string_lossy()]);
    assert!(
        run.stderr.contains("1 to 64 printable characters"),
        "{run:?}"
    );
    assert_eq!(
        sandbox.read_config()["mcpServers"],
        json!({}),
        "nothing imported"
    );
}

/// A key given as a bare argument (issue 32's fifteenth finding) is masked
/// in `servers list` and on the page, and the page's `ref` works for it.
#[test]
fn a_bare_key_argument_is_masked_in_the_listing_and_on_the_page() {
    let key = "sk-live-9Zq4Rw7Tx2Vb5Nm8Kp3L";
    let sandbox = Sandbox::new();
    sandbox.write_config(&json!({ "mcpServers": {
        "keyed": { "command": "npx", "args": ["-y", "some-server", key] },
    } }));
    let run = sandbox.run(&["servers", "list", "--json"]);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(!run.stdout.contains(key), "{}", run.stdout);
    assert!(run.stdout.contains("some-server"), "{}", run.stdout);
    let gateway = Gateway::start(&sandbox.config(), sandbox.dir.path(), &[]);
    let listed = Api::new(&gateway.addr()).get("/servers");
    assert_eq!(listed.status, 200, "{listed:?}");
    assert!(!listed.text.contains(key), "{}", listed.text);
    assert_eq!(
        listed.json["servers"][0]["args"][2], "***",
        "{}",
        listed.text
    );
}
