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
use gateway_support::{Gateway, Protected, write_config};
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
    /// Its home and XDG folders (the token store is under `data`).
    home: tempfile::TempDir,
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
            home,
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
fn a_profile_is_made_with_a_live_preview_saved_and_deleted_in_the_profiles_view() {
    let served = Served::with_example();
    let facts = served.run("profiles_editor");
    assert_eq!(
        facts["saved"],
        json!({"servers": ["example"], "tools": ["example__echo", "example__tiny_*", "!example__tiny_audio"],
               "rename": {"example__echo": "say"},
               "descriptions": {"example__tiny_image": "A very small picture."}}),
        "{facts}"
    );
    assert_eq!(facts["echo"][2], "taken by example__echo", "{facts}");
    assert!(
        facts["url"]
            .as_str()
            .is_some_and(|u| u == format!("{}mcp/web-dev", served.base)),
        "{facts}"
    );
    let config: Value =
        serde_json::from_str(&std::fs::read_to_string(&served.config).expect("read config"))
            .expect("the config is JSON");
    assert_eq!(config["profiles"], json!({}), "{config}");
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
        home,
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
    assert_eq!(
        facts["pinned"],
        json!(["add", "echo", "send_report"]),
        "{facts}"
    );
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
    // 7 views (the Profiles view among them) x 3 languages.
    assert_eq!(
        facts["visited"].as_array().map(Vec::len),
        Some(21),
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

/// The example server and server-everything (stdio), as a `mcpServers`
/// object.
fn example_and_everything() -> Value {
    json!({
        "example": { "command": toolbridge(), "args": ["example-server"] },
        "everything": { "command": "node", "args": [common::everything_js(), "stdio"] },
    })
}

/// The tool names the gateway's `tools/list` gives an MCP client, polled
/// (the config watcher reloads about once a second) until `done` holds
/// of them or 60 s pass; the last list.
fn mcp_tools_until(served: &Served, done: impl Fn(&[String]) -> bool) -> Vec<String> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async {
        let client = tokio::sync::Mutex::new(gateway_support::RawClient::new(&served.gateway.url));
        client.lock().await.initialize().await;
        let client = &client;
        let list = || async move {
            let answer = client.lock().await.request("tools/list", json!({})).await;
            answer.tool_names().unwrap_or_default()
        };
        let done = &done;
        let met = common::poll_async(std::time::Duration::from_secs(60), || async move {
            let names = list().await;
            done(&names).then_some(names)
        })
        .await;
        match met {
            Some(names) => names,
            None => list().await,
        }
    })
}

fn has_tiny_audio(names: &[String]) -> bool {
    names.iter().any(|n| n.ends_with("tiny_audio"))
}

#[test]
fn the_search_narrows_one_list_of_the_tools_of_two_servers() {
    let served = Served::start(example_and_everything(), None);
    let facts = served.run("tools_search");
    let strings = |key: &str| -> Vec<String> {
        facts[key]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|v| v.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default()
    };
    let (all, echo, of_example, tiny) = (
        strings("all"),
        strings("echo"),
        strings("echoOfExample"),
        strings("tinyImage"),
    );
    assert!(all.contains(&"example/tiny_audio".to_owned()), "{facts}");
    assert!(all.contains(&"everything/echo".to_owned()), "{facts}");
    // Both servers' echo, and fewer than all.
    assert!(
        echo.contains(&"example/echo".to_owned()) && echo.contains(&"everything/echo".to_owned()),
        "{facts}"
    );
    assert!(echo.len() < all.len(), "{facts}");
    assert!(!echo.contains(&"example/tiny_audio".to_owned()), "{facts}");
    assert_eq!(
        facts["echoCount"],
        format!("{} of {} tools", echo.len(), all.len()),
        "{facts}"
    );
    assert_eq!(of_example, ["example/echo"], "{facts}");
    assert_eq!(facts["navLabel"], "Tools of example", "{facts}");
    assert!(
        tiny.contains(&"example/tiny_image".to_owned())
            && tiny.contains(&"everything/get-tiny-image".to_owned()),
        "{facts}"
    );
    assert!(!tiny.contains(&"example/echo".to_owned()), "{facts}");
    // A word's start, as it is typed, finds the tool.
    let prefix = strings("prefix");
    assert!(
        prefix.contains(&"example/echo".to_owned())
            && prefix.contains(&"everything/echo".to_owned()),
        "{facts}"
    );
}

#[test]
fn a_tools_switch_takes_it_out_of_the_gateways_tools_list_and_back() {
    let served = Served::with_example();
    let before = mcp_tools_until(&served, has_tiny_audio);
    assert!(has_tiny_audio(&before), "{before:?}");

    let off = served.run_with("tool_switch", &[("SWITCH", "off")]);
    assert_eq!(off["after"], false, "{off}");
    assert_eq!(off["offShown"], true, "{off}");
    assert_eq!(
        served.servers()["example"]["disabledTools"],
        json!(["tiny_audio"])
    );
    let listed = mcp_tools_until(&served, |names| !has_tiny_audio(names));
    assert!(
        !has_tiny_audio(&listed),
        "still listed over MCP: {listed:?}"
    );
    assert!(listed.iter().any(|n| n.ends_with("echo")), "{listed:?}");

    // The switched-off tool is still in the page's list (from the config),
    // and its switch brings it back.
    let on = served.run_with("tool_switch", &[("SWITCH", "on")]);
    assert_eq!(on["after"], true, "{on}");
    assert_eq!(on["offShown"], false, "{on}");
    assert_eq!(
        served.servers()["example"],
        json!({ "command": toolbridge(), "args": ["example-server"] })
    );
    let listed = mcp_tools_until(&served, has_tiny_audio);
    assert!(has_tiny_audio(&listed), "not listed again: {listed:?}");
}

#[test]
fn a_slow_tools_progress_bar_moves_in_the_try_it_pane() {
    let served = Served::with_example();
    let facts = served.run("tool_progress");
    let value = |step: &str| facts[step]["value"].as_f64().unwrap_or(0.0);
    assert!(value("first") > 0.0, "{facts}");
    assert!(value("later") > value("first"), "{facts}");
    assert_eq!(facts["later"]["max"], 3000.0, "{facts}");
    assert_eq!(facts["barLeft"], false, "{facts}");
    // The pane is beside the list: Run is within the first 800 px.
    assert!(facts["runBottom"].as_f64() < Some(800.0), "{facts}");
}

#[test]
fn an_elicitation_is_answered_in_a_form_on_the_page() {
    let served = Served::start(example_and_everything(), None);
    let facts = served.run("tool_elicitation");
    assert_eq!(facts["title"], "everything asks", "{facts}");
    assert!(
        facts["message"]
            .as_str()
            .is_some_and(|m| m.contains("Please provide inputs")),
        "{facts}"
    );
    let result = facts["result"].as_str().unwrap_or_default();
    assert!(result.contains("Name: Ada Lovelace"), "{facts}");
    // The schema's defaults fill what the form left alone.
    assert!(result.contains("Favorite Integer: 42"), "{facts}");
}

#[test]
fn axe_finds_no_serious_or_critical_violation_in_the_tools_view() {
    let served = Served::with_example();
    let facts = served.run("tools_axe");
    let found = facts["found"].as_object().expect("found");
    assert_eq!(found.len(), 4, "{facts}");
    for (view, violations) in found {
        assert_eq!(violations, &json!([]), "{view}: {facts}");
    }
}

#[test]
fn compatibility_is_said_in_words_on_demand_not_as_a_warning_on_every_tool() {
    let served = Served::with_example();
    let facts = served.run("tool_compat");
    assert_eq!(facts["closed"], true, "{facts}");
    assert_eq!(facts["visible"], true, "{facts}");
    let sentences: Vec<&str> = facts["sentences"]
        .as_array()
        .map(|s| s.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    assert_eq!(sentences.len(), 3, "{facts}");
    let forms = [
        "takes the tool as the server wrote it.",
        "small change(s) to its schema.",
        "change(s) so it is accepted.",
        "cannot take this tool",
    ];
    for (sentence, provider) in sentences.iter().zip(["OpenAI", "Anthropic", "Gemini"]) {
        assert!(sentence.starts_with(provider), "{sentence}: {facts}");
        assert!(
            forms.iter().any(|f| sentence.contains(f)),
            "{sentence}: {facts}"
        );
    }
    // The changes made for a provider: the library's English sentence, the
    // kind's sentence in Chinese and Japanese, one for one.
    let changes = &facts["changes"];
    let english = changes["en"].as_array().expect("the changes in English");
    assert!(
        !english.is_empty(),
        "echo has no change for any provider: {facts}"
    );
    for lang in ["zh", "ja"] {
        let said = changes[lang].as_array().expect("the changes");
        assert_eq!(said.len(), english.len(), "{facts}");
        for (said, english) in said.iter().zip(english) {
            let said = said.as_str().unwrap_or_default();
            assert_ne!(said, english.as_str().unwrap_or_default(), "{facts}");
            assert!(
                said.chars().any(|c| ('\u{4e00}'..='\u{9fff}').contains(&c)
                    || ('\u{3040}'..='\u{30ff}').contains(&c)),
                "{lang}: {said}: {facts}"
            );
        }
    }
    // The example server's tools can all be sent: no warning in the list.
    let list = facts["listText"].as_str().unwrap_or_default();
    assert!(
        !list.contains("refused") && !list.contains("not sent"),
        "{facts}"
    );
}

/// The MCP Apps SDK's folder (`scripts/setup-test-deps.sh`: .deps/ext-apps).
fn ext_apps_deps() -> PathBuf {
    let deps = root().join(".deps/ext-apps");
    assert!(
        deps.join("node_modules/@modelcontextprotocol/ext-apps/package.json")
            .exists(),
        "the MCP Apps SDK is missing from {}: run scripts/setup-test-deps.sh",
        deps.display()
    );
    deps
}

#[test]
fn an_mcp_app_renders_and_its_buttons_tool_call_reaches_the_server() {
    let clicks = tempdir();
    let served = Served::start(
        json!({ "apps": {
            "command": "node",
            "args": [common::test_server("apps_server.mjs"), ext_apps_deps(), clicks.path()],
        }}),
        None,
    );
    let facts = served.run("mcp_app");
    // The tool says it has an app; the tools for apps only say so.
    assert!(
        facts["badges"]
            .as_str()
            .is_some_and(|b| b.contains("MCP App")),
        "{facts}"
    );
    assert_eq!(
        facts["appOnlyBadge"],
        json!(["record_click", "record_teardown"]),
        "{facts}"
    );
    // Framed by the sandbox document, scripts only: never the page's origin.
    assert_eq!(
        facts["framed"],
        json!({ "sandbox": "allow-scripts", "src": "/assets/app-sandbox.html" }),
        "{facts}"
    );
    assert_eq!(facts["innerSandbox"], "allow-scripts", "{facts}");
    assert_eq!(facts["origins"]["sandbox"], "null", "{facts}");
    assert_eq!(facts["origins"]["app"], "null", "{facts}");
    assert_eq!(facts["origins"]["appReachesPage"], false, "{facts}");
    // The handshake as the SDK's App class took it: the gateway as host, the
    // tool, inline, tool calls offered.
    assert_eq!(
        facts["host"],
        format!(
            "Host: toolbridge {}; tool counter; inline; server tools yes",
            env!("CARGO_PKG_VERSION")
        ),
        "{facts}"
    );
    // The app was given the tool's result, and its button's call came back.
    assert_eq!(facts["greeting"], "The counter has 0 click(s).", "{facts}");
    assert_eq!(
        facts["counted"], "The server counted 1 click(s).",
        "{facts}"
    );
    // A model-only tool is not the app's to call: refused, never run.
    assert!(
        facts["refused"]
            .as_str()
            .is_some_and(|r| r.starts_with("Refused: ")
                && r.contains("tool \"reset\" of server \"apps\" is for the model only")),
        "{facts}"
    );
    // The server itself recorded the click and, when the tool ran again
    // and when the view was left, each app's last call before it was torn
    // down; nothing else.
    let recorded = std::fs::read_to_string(clicks.path().join("clicks.txt")).unwrap_or_default();
    assert_eq!(recorded, "click 1\nteardown\nteardown\n", "{facts}");
    assert_eq!(facts["left"], 0, "{facts}");
    assert_eq!(facts["again"], "The counter has 1 click(s).", "{facts}");
    assert_eq!(
        facts["violations"],
        json!({ "page": [], "app": [] }),
        "{facts}"
    );
}

/// The TypeScript SDK's folder (`scripts/setup-test-deps.sh`: .deps/node).
fn node_deps() -> String {
    root().join(".deps/node").display().to_string()
}

#[test]
fn the_home_shows_the_url_copies_each_config_and_lists_a_connected_sdk_client() {
    let served = Served::with_example();
    let facts = served.run_with("home_connect", &[("NODE_DEPS", &node_deps())]);
    let url = facts["url"].as_str().expect("the URL");
    assert_eq!(
        facts["claudeCode"],
        format!("claude mcp add --transport http toolbridge {url}"),
        "{facts}"
    );
    assert_eq!(
        facts["vscode"]["servers"]["toolbridge"]["type"], "http",
        "{facts}"
    );
    assert_eq!(
        facts["vscode"]["servers"]["toolbridge"]["url"], url,
        "{facts}"
    );
    assert_eq!(facts["copiedUrl"], url, "{facts}");
    let row = &facts["row"];
    assert!(
        row[0]
            .as_str()
            .is_some_and(|n| n.starts_with("web-ui-ts-client")),
        "{facts}"
    );
    assert_eq!(row[1], "7.1.0", "{facts}");
    assert_eq!(row[3], "/mcp", "{facts}");
    assert_eq!(row[4], "1", "{facts}");
}

#[test]
fn a_slow_tools_progress_bar_moves_on_the_activity_view() {
    let served = Served::with_example();
    let facts = served.run_with("activity_progress", &[("NODE_DEPS", &node_deps())]);
    let seen = facts["seen"].as_array().expect("progress values");
    assert!(seen.len() >= 2, "{facts}");
    assert_eq!(facts["recent"][3], "ok", "{facts}");
    // The client as its clientInfo names it.
    assert!(
        facts["recent"][1]
            .as_str()
            .is_some_and(|c| c.starts_with("web-ui-slow-client")),
        "{facts}"
    );
}

#[test]
fn home_activity_logs_servers_and_presets_in_every_language_at_1280_and_390_pixels() {
    let served = Served::with_example();
    let facts = served.run("live_views");
    // 5 views x 3 languages x 2 widths, each with a header of one row.
    let rows = facts["rows"].as_object().expect("the rows");
    assert_eq!(rows.len(), 30, "{facts}");
    assert!(rows.values().all(|r| r == 1), "{facts}");
}

#[test]
fn at_390_pixels_the_navigation_is_a_menu_used_with_the_keyboard() {
    let served = Served::with_example();
    let facts = served.run("nav_menu");
    assert_eq!(facts["closed"]["menu"], "false", "{facts}");
    assert_eq!(facts["closed"]["shown"], 0, "{facts}");
    assert_eq!(facts["open"]["shown"], facts["open"]["links"], "{facts}");
    assert_eq!(facts["followed"]["hash"], "#/servers", "{facts}");
    assert_eq!(facts["escaped"]["focused"], "menu", "{facts}");
    assert_eq!(facts["wide"]["menu"], Value::Null, "{facts}");
    assert_eq!(facts["labels"]["en"], "Menu", "{facts}");
    assert_ne!(facts["labels"]["zh"], "Menu", "{facts}");
    assert_ne!(facts["labels"]["ja"], "Menu", "{facts}");
}

#[test]
fn doctors_fixes_and_preset_descriptions_are_in_the_pages_language() {
    let served = Served::start(
        json!({
            "example": { "command": toolbridge(), "args": ["example-server"] },
            "missing": { "command": "toolbridge-no-such-command-29", "args": [] },
            "keyless": { "command": toolbridge(), "args": ["example-server"],
                         "env": { "WEB_UI_KEY": "${WEB_UI_UNSET_KEY_29B}" } },
        }),
        None,
    );
    let facts = served.run("server_messages");
    let shown = &facts["shown"];
    assert_eq!(
        shown["en"]["missing"],
        json!(["Fix: install \"toolbridge-no-such-command-29\" or put its directory on PATH"]),
        "{facts}"
    );
    let zh = shown["zh"]["keyless"].to_string();
    assert!(
        zh.contains("WEB_UI_UNSET_KEY_29B") && zh.contains("启动"),
        "{facts}"
    );
    let ja = shown["ja"]["missing"].to_string();
    assert!(
        ja.contains("toolbridge-no-such-command-29") && ja.contains("インストール"),
        "{facts}"
    );
    let descriptions = &facts["descriptions"];
    assert_eq!(
        descriptions["en"], "Current time and conversion between IANA time zones.",
        "{facts}"
    );
    assert_eq!(
        descriptions["zh"], "当前时间以及 IANA 时区之间的换算。",
        "{facts}"
    );
    assert_eq!(
        descriptions["ja"], "現在時刻と IANA タイムゾーン間の変換。",
        "{facts}"
    );
}

#[test]
fn a_form_error_the_server_finds_is_in_the_pages_language() {
    let served = Served::with_example();
    let before = std::fs::read(&served.config).unwrap();
    let facts = served.run("form_errors_in_each_language");
    assert_eq!(std::fs::read(&served.config).unwrap(), before);
    // The field's hint, then the server's message.
    let said = |lang: &str| facts["said"][lang].as_str().unwrap_or_default().to_owned();
    assert!(
        said("en").ends_with("give the program to run (npx, uvx, a path...)"),
        "{facts}"
    );
    assert!(
        said("zh").ends_with("请填写要运行的程序（npx、uvx、一个路径……）"),
        "{facts}"
    );
    assert!(
        said("ja").ends_with("実行するプログラムを指定してください（npx、uvx、パスなど）"),
        "{facts}"
    );
}

#[test]
fn presets_are_a_grid_at_1280_pixels_narrowed_by_search_and_category() {
    let served = Served::with_example();
    let facts = served.run("presets_grid");
    assert!(facts["columns"].as_u64() >= Some(2), "{facts}");
    assert!(
        facts["searched"].as_array().is_some_and(|s| !s.is_empty()),
        "{facts}"
    );
    assert_eq!(facts["vision"], json!(["Vision"]), "{facts}");
}

#[test]
fn a_server_with_an_unset_variable_says_why_and_is_served_once_the_value_is_set_on_the_page() {
    let served = Served::start(
        json!({
            "example": { "command": toolbridge(), "args": ["example-server"] },
            "keyed": { "command": toolbridge(), "args": ["example-server"],
                       "env": { "WEB_UI_KEY": "${WEB_UI_UNSET_KEY_29}" } },
        }),
        None,
    );
    let facts = served.run_with("servers_unset_variable", &[("NODE_DEPS", &node_deps())]);
    let reason = facts["reason"].as_str().unwrap_or_default();
    assert!(
        reason.contains("\"env\"") && reason.contains("not set"),
        "{facts}"
    );
    assert_eq!(facts["mode"], "600", "{facts}");
    assert_eq!(served.servers()["keyed"]["env"]["WEB_UI_KEY"], "s3cret-29");
    // Two servers: the gateway prefixes the tools with their server.
    assert!(
        facts["tools"].to_string().contains("keyed__echo"),
        "{facts}"
    );
    assert_eq!(facts["reasonAfter"], false, "{facts}");
}

#[test]
fn a_servers_log_message_shows_live_in_the_logs_view() {
    let served = Served::start(
        json!({ "whisper": {
            "command": common::python(),
            "args": [root().join("crates/toolbridge-cli/tests/interop/logging_server.py")],
        } }),
        None,
    );
    let facts = served.run_with("logs_live", &[("NODE_DEPS", &node_deps())]);
    let line = facts["line"].as_str().unwrap_or_default();
    assert!(line.contains("whisper") && line.contains("info"), "{facts}");
    assert!(
        facts["card"]
            .as_str()
            .is_some_and(|c| c.starts_with("whisper")),
        "{facts}"
    );
}

#[test]
fn a_long_config_path_stays_within_390_pixels() {
    let home = tempdir();
    let dir = home
        .path()
        .join("averylongfoldernamefortheconfigurationoftoolbridgewithoutanyhyphen0123456789");
    std::fs::create_dir_all(&dir).expect("the config folder");
    let config = write_config(&dir, EXAMPLE.clone());
    let gateway = Gateway::start_with(&config, home.path(), &[], None);
    let served = Served {
        base: format!("http://{}/", gateway.addr()),
        gateway,
        config,
        home,
    };
    let facts = served.run("long_config_path");
    assert!(
        facts["text"]
            .as_str()
            .is_some_and(|t| t.contains("0123456789")),
        "{facts}"
    );
}

#[test]
fn another_apps_config_is_imported_from_the_page_the_chosen_servers_only() {
    let served = Served::with_example();
    let facts = served.run("import_servers");
    assert_eq!(facts["foreignStatus"], 403, "{facts}");
    let shown = &facts["shown"];
    assert_eq!(
        shown["imported-echo"],
        json!({"checked": true, "disabled": false}),
        "{facts}"
    );
    assert_eq!(
        shown["example"],
        json!({"checked": false, "disabled": true}),
        "{facts}"
    );
    assert_eq!(
        shown["remote-docs"],
        json!({"checked": true, "disabled": false}),
        "{facts}"
    );
    assert_eq!(facts["masked"], true, "{facts}");
    let servers = served.servers();
    assert_eq!(
        servers["imported-echo"]["args"],
        json!(["example-server"]),
        "{servers}"
    );
    assert!(servers.get("remote-docs").is_none(), "{servers}");
    // The config's own server is left as it was.
    assert_eq!(
        servers["example"]["args"],
        json!(["example-server"]),
        "{servers}"
    );
}

/// Issue 29: a remote server that needs an OAuth sign-in (a real
/// oidc-provider in front of it) is signed in from its card: the provider's
/// login in the tab the click opened, and the card turns to Running without
/// a restart of `serve`; the tokens are where `toolbridge auth` keeps them.
#[test]
fn a_remote_server_is_signed_in_from_its_card_and_turns_running() {
    let protected = Protected::start();
    let served = Served::start(json!({ "gw": { "url": protected.gateway.url } }), None);
    let facts = served.run_with("remote_sign_in", &[("ISSUER", &protected.issuer_url())]);
    assert_eq!(facts["status"], "Running", "{facts}");
    assert_eq!(facts["backAt"], "/callback", "{facts}");
    assert_signed_in_once(&served);
}

/// The sign-in left one tokens file where `toolbridge auth` keeps them.
fn assert_signed_in_once(served: &Served) {
    let tokens = served.home.path().join("data/toolbridge/oauth/tokens");
    let kept = std::fs::read_dir(&tokens)
        .map(|entries| entries.count())
        .unwrap_or(0);
    assert_eq!(kept, 1, "no tokens file in {}", tokens.display());
}

/// Issue 29: the library's failure on a server's card is said in the
/// page's language: in English the library's own sentence, in Chinese and
/// Japanese the page's, naming the command (it was English in all three).
#[test]
fn a_servers_failure_on_its_card_is_in_the_pages_language() {
    let served = Served::start(
        json!({ "missing": { "command": "toolbridge-no-such-command-29c", "args": [] } }),
        None,
    );
    let facts = served.run("failure_on_card");
    let said = |lang: &str| facts["said"][lang].as_str().unwrap_or_default().to_owned();
    let error = facts["error"].as_str().unwrap_or_default();
    assert!(
        error.contains("command \"toolbridge-no-such-command-29c\" not found on PATH"),
        "{facts}"
    );
    assert_eq!(said("en"), error, "{facts}");
    assert_eq!(facts["errorKind"]["kind"], "commandNotFound", "{facts}");
    let zh = said("zh");
    assert!(
        zh.contains("toolbridge-no-such-command-29c") && zh.contains("找不到命令"),
        "{facts}"
    );
    let ja = said("ja");
    assert!(
        ja.contains("toolbridge-no-such-command-29c") && ja.contains("見つかりません"),
        "{facts}"
    );
    for other in [&zh, &ja] {
        assert!(!other.contains("not found"), "{facts}");
    }
}

/// Issue 29: Doctor's sign-in finding has the Servers view's Sign in: the
/// provider's login in the tab the click opened, and Doctor then finds the
/// server working; the finding's problem is said in Chinese and Japanese.
#[test]
fn doctors_sign_in_finding_signs_in_from_the_doctor_view() {
    let protected = Protected::start();
    let served = Served::start(json!({ "gw": { "url": protected.gateway.url } }), None);
    let facts = served.run_with("doctor_sign_in", &[("ISSUER", &protected.issuer_url())]);
    let problem = |lang: &str| {
        facts["problems"][lang]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    };
    assert!(
        problem("en").contains("run `toolbridge auth login gw`"),
        "{facts}"
    );
    assert!(problem("zh").contains("需要你登录"), "{facts}");
    assert!(problem("ja").contains("サインインが必要"), "{facts}");
    assert_eq!(facts["status"], "OK", "{facts}");
    assert_eq!(facts["backAt"], "/callback", "{facts}");
    assert_signed_in_once(&served);
}
