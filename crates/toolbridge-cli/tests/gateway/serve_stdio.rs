//! `toolbridge serve --stdio` as the program that starts it sees it, on raw
//! lines: a line that is not JSON gets a JSON-RPC parse error (-32700, id
//! null) and the session goes on (issue 32's fifteenth finding: it was
//! dropped without an answer, and the client waited for one forever).

use crate::common;

use std::{
    io::{BufRead as _, BufReader, Write as _},
    process::{Command, Stdio},
    sync::mpsc,
    time::Duration,
};

use common::{tempdir, toolbridge};
use serde_json::{Value, json};

#[test]
fn an_unparseable_line_gets_a_parse_error_and_the_session_goes_on() {
    let home = tempdir();
    let config = home.path().join("config.json");
    std::fs::write(
        &config,
        json!({ "mcpServers": { "example": { "command": toolbridge(), "args": ["example-server"] } } })
            .to_string(),
    )
    .unwrap();
    let mut child = Command::new(toolbridge())
        .arg("--config")
        .arg(&config)
        .args(["serve", "--stdio"])
        .env("HOME", home.path())
        .env("XDG_CONFIG_HOME", home.path().join("config"))
        .env("XDG_CACHE_HOME", home.path().join("cache"))
        .env("XDG_DATA_HOME", home.path().join("data"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn toolbridge serve --stdio");
    let (tx, lines) = mpsc::channel::<Value>();
    let stdout = child.stdout.take().expect("stdout");
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if let Ok(message) = serde_json::from_str(&line) {
                let _ = tx.send(message);
            }
        }
    });
    let mut stdin = child.stdin.take().expect("stdin");
    let next = || {
        lines
            .recv_timeout(Duration::from_secs(30))
            .expect("an answer within 30 s")
    };
    let initialize = json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": { "name": "raw", "version": "1" } } });
    writeln!(stdin, "this is not json").unwrap();
    writeln!(stdin, "{initialize}").unwrap();
    let error = next();
    assert_eq!(error["id"], Value::Null, "{error}");
    assert_eq!(error["error"]["code"], -32700, "{error}");
    assert!(
        error["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("not JSON")),
        "{error}"
    );
    let initialized = next();
    assert_eq!(initialized["id"], 1, "{initialized}");
    assert!(
        initialized["result"]["serverInfo"].is_object(),
        "{initialized}"
    );
    writeln!(
        stdin,
        "{}",
        json!({ "jsonrpc": "2.0", "method": "notifications/initialized" })
    )
    .unwrap();
    // Mid-session too, and the next request is answered.
    writeln!(stdin, "{{\"jsonrpc\": \"2.0\", \"id\": 2, \"method\": ").unwrap();
    writeln!(
        stdin,
        "{}",
        json!({ "jsonrpc": "2.0", "id": 3, "method": "ping" })
    )
    .unwrap();
    // Two answers, in either order: the parse error comes from the line
    // reader and the ping's answer from the session, and JSON-RPC lets
    // answers come in any order (under load the pong can be first).
    let (first, second) = (next(), next());
    let (error, pong) = match first["id"] {
        Value::Null => (first, second),
        _ => (second, first),
    };
    assert_eq!(
        (error["id"].clone(), error["error"]["code"].clone()),
        (Value::Null, json!(-32700)),
        "{error}"
    );
    assert_eq!(pong["id"], 3, "{pong}");
    assert!(pong.get("result").is_some(), "{pong}");
    drop(stdin);
    let status = child.wait().expect("wait");
    assert!(status.success(), "{status:?}");
}
