//! The settings page's Doctor API (`/api/doctor`) on the real binary
//! (`toolbridge serve`) with a temp config and real servers: each server's
//! findings with their fixes, and installing a launcher only after an
//! explicit confirmation.

use crate::common;
use crate::gateway_support;
use crate::web_api_client;

use common::toolbridge;
use gateway_support::{Gateway, write_config};
use serde_json::{Value, json};
use web_api_client::Api;

fn start(servers: Value) -> (Gateway, Api, tempfile::TempDir) {
    let home = tempfile::tempdir().expect("tempdir");
    let config = write_config(home.path(), servers);
    let gateway = Gateway::start(&config, home.path(), &[]);
    let api = Api::new(&gateway.addr());
    (gateway, api, home)
}

#[test]
fn doctor_reports_a_missing_command_with_its_fix_and_a_working_server_as_ok() {
    let (_gateway, api, _home) = start(json!({
        "ex": {"command": toolbridge(), "args": ["example-server"]},
        "missing": {"command": "toolbridge-test-no-such-command", "args": ["x"]},
        "off": {"command": "also-missing", "disabled": true},
    }));
    let reply = api.post("/doctor", json!({}));
    assert_eq!(reply.status, 200, "{reply:?}");
    let servers = reply.json["servers"].as_array().expect("servers");
    let status = |name: &str| {
        servers
            .iter()
            .find(|s| s["name"] == name)
            .map(|s| s["status"].clone())
    };
    assert_eq!(status("ex"), Some(json!("ok")), "{reply:?}");
    assert_eq!(status("missing"), Some(json!("problem")), "{reply:?}");
    assert_eq!(status("off"), Some(json!("disabled")), "{reply:?}");
    let findings = reply.json["findings"].as_array().expect("findings");
    assert_eq!(findings.len(), 1, "{reply:?}");
    let finding = &findings[0];
    assert_eq!(finding["server"], "missing");
    assert_eq!(finding["problem"]["kind"], "commandNotFound");
    assert_eq!(
        finding["problem"]["command"],
        "toolbridge-test-no-such-command"
    );
    assert!(
        finding["fix"].as_str().is_some_and(|f| !f.is_empty()),
        "{finding}"
    );
    assert!(
        reply.json["launchers"]
            .as_array()
            .is_some_and(|l| !l.is_empty())
    );
}

#[test]
fn installing_a_launcher_is_refused_without_an_explicit_confirmation() {
    let (_gateway, api, _home) = start(json!({
        "ex": {"command": toolbridge(), "args": ["example-server"]},
    }));
    for body in [
        json!({"command": "npx"}),
        json!({"command": "npx", "confirm": false}),
        json!({"command": "npx", "confirm": "yes"}),
    ] {
        let reply = api.post("/doctor/install", body.clone());
        assert_eq!(reply.status, 400, "{body}: {reply:?}");
        let message = reply.json["error"]["message"].as_str().unwrap_or_default();
        assert!(
            message.contains("confirm") || body["confirm"].is_string(),
            "{body}: {reply:?}"
        );
    }
    // Without the page's header nothing runs either, confirmed or not.
    let reply = api.send(
        "POST",
        "/doctor/install",
        Some(json!({"command": "npx", "confirm": true})),
        &[],
    );
    assert_eq!(reply.status, 403, "{reply:?}");
    // What would run can be read first, without running anything.
    let plan = api.get("/doctor/install/npx");
    assert_eq!(plan.status, 200, "{plan:?}");
    assert_eq!(plan.json["command"], "npx");
    assert_eq!(plan.json["software"], "Node.js");
    assert!(
        plan.json["downloadUrl"]
            .as_str()
            .is_some_and(|u| u.starts_with("https://"))
    );
    assert_eq!(api.get("/doctor/install/rm").field(), Some("command"));
    // Only launchers toolbridge knows how to install: never an arbitrary
    // program, even confirmed.
    let reply = api.post("/doctor/install", json!({"command": "rm", "confirm": true}));
    assert_eq!(reply.status, 422, "{reply:?}");
    assert_eq!(reply.field(), Some("command"));
}

/// Issue 29: a failure is data beside its English sentence, so the page
/// can say it in its reader's language: a server that exits before its
/// handshake is `{"kind": "exited", "code": 3}`, in Doctor's finding
/// (`reasonKind`) and on its card (`errorKind`, once a use failed); each
/// of Doctor's servers carries the `ref` the page's sign-in addresses it by.
#[test]
fn a_start_failure_is_said_as_a_kind_beside_its_english() {
    let (_gateway, api, _home) = start(json!({
        "quits": {"command": "sh", "args": ["-c", "exit 3"]},
    }));
    let reply = api.post("/doctor", json!({}));
    assert_eq!(reply.status, 200, "{reply:?}");
    let finding = &reply.json["findings"][0];
    assert_eq!(finding["problem"]["kind"], "startFailed", "{reply:?}");
    assert!(
        finding["problem"]["reason"]
            .as_str()
            .is_some_and(|r| r.contains("exited with status 3")),
        "{finding}"
    );
    assert_eq!(
        finding["problem"]["reasonKind"],
        json!({"kind": "exited", "code": 3}),
        "{finding}"
    );
    let reference = reply.json["servers"][0]["ref"].as_str().unwrap_or_default();
    assert!(reference.starts_with('~'), "{reply:?}");
    assert_eq!(
        api.get(&format!("/servers/{reference}")).json["name"],
        "quits"
    );

    // The card, once a use of the server failed.
    api.get("/tools/quits");
    let card = api.get("/servers/quits");
    assert_eq!(card.json["status"], "failed", "{card:?}");
    assert!(
        card.json["error"]
            .as_str()
            .is_some_and(|e| e.contains("server \"quits\"") && e.contains("exited with status 3")),
        "{card:?}"
    );
    assert_eq!(
        card.json["errorKind"],
        json!({"kind": "exited", "code": 3}),
        "{card:?}"
    );
}
