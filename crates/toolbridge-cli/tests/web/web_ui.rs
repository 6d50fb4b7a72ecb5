//! The settings page in real headless Chromium (issue 14's browser tests).
//!
//! Each test starts its own `toolbridge serve --listen 127.0.0.1:0` (a temp
//! config with the example server, temp home and XDG folders, no token: a
//! loopback gateway without `$TOOLBRIDGE_GATEWAY_TOKEN` needs none) and runs
//! one scenario of `tests/web/scenarios.cjs` with Node, which drives its own
//! Chromium (`@sparticuz/chromium` + `puppeteer-core`, pinned in
//! scripts/setup-test-deps.sh into .deps/web). The script asserts what the
//! user sees and fails on any console error; this side checks the config
//! file the page wrote.

use crate::common;
use crate::gateway_support;

use std::{
    path::{Path, PathBuf},
    process::{Command, Stdio},
    sync::OnceLock,
};

use common::{root, tempdir, toolbridge};
use gateway_support::{Gateway, write_config};
use serde_json::{Value, json};

/// The example server (`example`: echo, tiny_image, tiny_audio, slow) as
/// a `mcpServers` object.
static EXAMPLE: std::sync::LazyLock<Value> = std::sync::LazyLock::new(
    || json!({ "example": { "command": toolbridge(), "args": ["example-server"] } }),
);

/// The browser test packages (`scripts/setup-test-deps.sh` installs them).
fn web_deps() -> PathBuf {
    let deps = root().join(".deps/web");
    assert!(
        deps.join("node_modules/puppeteer-core/package.json")
            .exists()
            && deps
                .join("node_modules/@sparticuz/chromium/package.json")
                .exists(),
        "the browser test packages are missing from {}: run scripts/setup-test-deps.sh \
         (the README's test command does)",
        deps.display()
    );
    deps
}

fn scenarios_script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/web/scenarios.cjs")
}

/// Unpacks Chromium into `$TMPDIR` once per test binary, before the tests
/// (which run in parallel) launch it: they would race on the unpacking.
fn prepare_chromium() {
    static PREPARED: OnceLock<Result<(), String>> = OnceLock::new();
    let prepared = PREPARED.get_or_init(|| {
        let output = Command::new("node")
            .arg(scenarios_script())
            .arg("prepare")
            .env("WEB_DEPS", web_deps())
            .output()
            .map_err(|e| format!("could not run node: {e}"))?;
        if output.status.success() {
            Ok(())
        } else {
            Err(String::from_utf8_lossy(&output.stderr).into_owned())
        }
    });
    if let Err(why) = prepared {
        panic!("Chromium could not be unpacked:\n{why}");
    }
}

/// One `toolbridge serve` for the page (`gateway_support`'s, killed with
/// its process group on drop), with its config and home in a temp folder.
struct Served {
    gateway: Gateway,
    /// `http://127.0.0.1:PORT/`, the page.
    base: String,
    /// The config file the page edits.
    config: PathBuf,
    _home: tempfile::TempDir,
}

impl Served {
    /// Serves a config whose servers are `servers` (a `mcpServers` object),
    /// requiring `token` when given.
    fn start(servers: Value, token: Option<&str>) -> Served {
        let home = tempdir();
        let config = write_config(home.path(), servers);
        let gateway = Gateway::start_with(&config, home.path(), &[], token);
        Served {
            base: format!("http://{}/", gateway.addr()),
            gateway,
            config,
            _home: home,
        }
    }

    /// A config with the example server (`example`: echo, tiny_image,
    /// tiny_audio, slow).
    fn with_example() -> Served {
        Served::start(EXAMPLE.clone(), None)
    }

    fn log(&self) -> String {
        self.gateway.log()
    }

    /// The config file's servers now.
    fn servers(&self) -> Value {
        let text = std::fs::read_to_string(&self.config).expect("read config");
        let config: Value = serde_json::from_str(&text).expect("the config is JSON");
        config["mcpServers"].clone()
    }

    /// Runs `scenario` in Chromium against this gateway; the facts it
    /// printed. Fails with the script's message and the gateway's log.
    fn run(&self, scenario: &str) -> Value {
        self.run_with(scenario, &[])
    }

    /// [`Served::run`] with more environment for the script.
    fn run_with(&self, scenario: &str, env: &[(&str, &str)]) -> Value {
        prepare_chromium();
        let started = std::time::Instant::now();
        let output = Command::new("node")
            .arg(scenarios_script())
            .arg(scenario)
            .env("WEB_DEPS", web_deps())
            .env("BASE_URL", &self.base)
            .env("CONFIG", &self.config)
            .env("TOOLBRIDGE", toolbridge())
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .output()
            .expect("run node");
        let stdout = String::from_utf8_lossy(&output.stdout);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            output.status.success(),
            "scenario {scenario} failed after {:.1} s:\n{stderr}\n--- the gateway's log:\n{}",
            started.elapsed().as_secs_f64(),
            self.log()
        );
        eprintln!(
            "scenario {scenario}: {:.1} s",
            started.elapsed().as_secs_f64()
        );
        let last = stdout.lines().last().unwrap_or("{}");
        serde_json::from_str(last)
            .unwrap_or_else(|e| panic!("scenario {scenario} printed no JSON ({e}): {stdout}"))
    }
}

#[test]
fn a_server_is_added_edited_and_removed_through_the_form() {
    let served = Served::with_example();
    let facts = served.run("servers_form");
    assert_eq!(facts["added"]["args"], json!(["example-server"]));
    assert_eq!(
        facts["edited"]["args"],
        json!(["example-server", "--edited"])
    );
    assert_eq!(facts["nameShownOnEdit"], "web-added");
    let servers = served.servers();
    assert!(servers.get("web-added").is_none(), "{servers}");
    assert!(servers.get("example").is_some(), "{servers}");
}

#[test]
fn invalid_input_is_explained_at_the_field_and_nothing_is_written() {
    let served = Served::with_example();
    let before = std::fs::read(&served.config).unwrap();
    let facts = served.run("invalid_input");
    assert_eq!(std::fs::read(&served.config).unwrap(), before);
    assert!(
        facts["message"].as_str().is_some_and(|m| !m.is_empty()),
        "{facts}"
    );
}

#[test]
fn a_server_is_disabled_and_enabled_again() {
    let served = Served::with_example();
    served.run("disable_enable");
    let example = &served.servers()["example"];
    assert!(example["disabled"] != json!(true), "{example}");
    assert_eq!(example["args"], json!(["example-server"]));
}

#[test]
fn a_preset_is_added_with_its_key() {
    let served = Served::with_example();
    let facts = served.run("preset_with_key");
    // By default a reference, as the CLI writes it; the key only when asked,
    // and then the file is readable by its owner only.
    assert_eq!(
        facts["reference"]["env"]["TAVILY_API_KEY"], "${TAVILY_API_KEY}",
        "{facts}"
    );
    assert_eq!(
        facts["keyed"]["env"]["TAVILY_API_KEY"], "tvly-web-test-key",
        "{facts}"
    );
    assert_eq!(facts["mode"], "600", "{facts}");
    let servers = served.servers();
    assert!(servers.get("tavily").is_some() && servers.get("tavily-keyed").is_some());
}

#[test]
fn a_tool_returning_an_image_and_one_returning_audio_are_rendered() {
    let served = Served::with_example();
    let facts = served.run("tool_media");
    assert!(
        facts["tiny_image"]["img"]
            .as_array()
            .is_some_and(|widths| widths.iter().any(|w| w.as_u64() > Some(0))),
        "{facts}"
    );
    assert!(facts["tiny_audio"]["audio"].as_u64() > Some(0), "{facts}");
}

#[test]
fn withheld_tools_are_shown_with_their_diff_and_approved_from_the_page() {
    // The rug server is pinned benign by a first `tools`, then pulls the
    // rug (tests/servers/rug_pull.py) before the gateway starts.
    let home = tempdir();
    let switch = home.path().join("pulled");
    let config = write_config(
        home.path(),
        json!({ "rug": {
            "command": common::python(),
            "args": [common::test_server("rug_pull.py")],
            "env": { "RUG_PULL_FILE": switch },
        } }),
    );
    let pinned = Command::new(toolbridge())
        .arg("--config")
        .arg(&config)
        .arg("tools")
        .env("HOME", home.path())
        .env("XDG_CONFIG_HOME", home.path().join("config"))
        .env("XDG_CACHE_HOME", home.path().join("cache"))
        .env("XDG_DATA_HOME", home.path().join("data"))
        .stdin(Stdio::null())
        .output()
        .expect("run toolbridge tools");
    assert!(
        pinned.status.success(),
        "{}",
        String::from_utf8_lossy(&pinned.stderr)
    );
    std::fs::write(&switch, "").expect("pull the rug");
    let gateway = Gateway::start_with(&config, home.path(), &[], None);
    let served = Served {
        base: format!("http://{}/", gateway.addr()),
        gateway,
        config,
        _home: home,
    };
    let facts = served.run("withheld_tools");
    assert_eq!(facts["shown"]["title"], "Withheld tools", "{facts}");
    let headings = facts["shown"]["headings"].to_string();
    assert!(
        headings.contains("add") && headings.contains("changed"),
        "{facts}"
    );
    assert!(
        headings.contains("send_report") && headings.contains("new"),
        "{facts}"
    );
    assert!(
        facts["shown"]["diffs"].to_string().contains("id_rsa"),
        "{facts}"
    );
    assert_eq!(facts["before"], json!(["echo"]), "{facts}");
    assert_eq!(
        facts["after"],
        json!(["add", "echo", "send_report"]),
        "{facts}"
    );
    assert_eq!(facts["regionLeft"], false, "{facts}");
}

#[test]
fn the_language_switch_shows_chinese_and_japanese_and_is_remembered() {
    let served = Served::with_example();
    let facts = served.run("languages");
    assert_ne!(facts["navEn"], facts["navZh"]);
    assert_ne!(facts["navZh"], facts["navJa"]);
}

#[test]
fn a_server_is_added_with_the_keyboard_alone() {
    let served = Served::with_example();
    served.run("keyboard_add");
    let added = &served.servers()["web-keys"];
    assert_eq!(added["command"], toolbridge(), "{added}");
    assert_eq!(added["args"], json!(["example-server"]), "{added}");
}

#[test]
fn a_gateway_with_a_token_opens_the_page_only_after_signing_in_with_it() {
    let token = "web-ui-test-token-5d1c";
    let served = Served::start(EXAMPLE.clone(), Some(token));
    let facts = served.run_with("token_login", &[("TOKEN", token)]);
    assert_eq!(facts["landed"], "/", "{facts}");
    assert_eq!(served.servers()["example"]["disabled"], true);
}

#[test]
fn a_dialog_open_when_the_user_goes_back_closes_with_its_view() {
    Served::with_example().run("dialog_and_back");
}

#[test]
fn every_view_in_every_language_shows_without_console_errors() {
    let served = Served::with_example();
    let facts = served.run("all_views");
    assert_eq!(
        facts["visited"].as_array().map(Vec::len),
        Some(18),
        "{facts}"
    );
}

#[test]
fn no_view_scrolls_sideways_at_360_pixels() {
    let served = Served::with_example();
    served.run("narrow");
}

#[test]
fn each_servers_card_shows_its_sandbox() {
    let served = Served::start(
        json!({
            "example": { "command": toolbridge(), "args": ["example-server"] },
            "boxed": { "command": toolbridge(), "args": ["example-server"],
                       "sandbox": { "write": ["/tmp/boxed"], "network": "none",
                                    "memoryMb": 512, "processes": 32 } },
            "open": { "command": toolbridge(), "args": ["example-server"], "sandbox": false },
            "remote": { "url": "https://example.com/mcp", "disabled": true },
        }),
        None,
    );
    let facts = served.run("servers_sandbox");
    let en = &facts["en"];
    assert_eq!(en["example"]["sandbox"], "Sandbox: default", "{facts}");
    assert_eq!(en["open"]["sandbox"], "Sandbox: off", "{facts}");
    assert_eq!(
        en["boxed"]["sandbox"],
        "Sandbox: reads 0 more paths, writes 1, network none, memory 512 MB, at most 32 processes",
        "{facts}"
    );
    // A remote server has no sandbox (it runs elsewhere).
    assert_eq!(en["remote"]["sandbox"], Value::Null, "{facts}");
    // This system sandboxes every one of them: no card says it cannot.
    for name in ["example", "boxed", "open"] {
        assert!(
            en[name]["unavailable"]
                .as_array()
                .is_some_and(|errors| errors
                    .iter()
                    .all(|e| !e.as_str().unwrap_or("").contains("sandbox"))),
            "{facts}"
        );
    }
    assert_eq!(facts["zh"]["example"]["sandbox"], "沙箱：默认", "{facts}");
    assert_eq!(facts["zh"]["open"]["sandbox"], "沙箱：关闭", "{facts}");
}
