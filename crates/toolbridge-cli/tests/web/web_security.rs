//! The web page's sign-in on the real binary and the attacks of issue 32,
//! written as an attacker runs them: with a token configured, the page signs
//! in at `/api/session` and gets a session id (not the token, not a cookie)
//! that it sends in a header to `/api` (not `/mcp`); a page on another port
//! of the host gets nothing it could replay; a foreign Origin is refused even
//! with a session; the token never shows in the gateway's log or answers.
//! A second local user (uid 65534, raw sockets) cannot use a loopback
//! gateway without a token, unless given a client token (MCP only then). Doctor is a POST, one at a time. And `toolbridge
//! ui`, which starts the gateway and opens the page with `$BROWSER`.

use crate::common;
use crate::gateway_support;
use crate::web_api_client;

use std::{
    io::{BufRead as _, BufReader},
    os::unix::process::CommandExt as _,
    path::Path,
    process::{Child, Command, Stdio},
    time::Duration,
};

use common::wait_until;
use gateway_support::{
    Gateway, OTHER_UID, TOKEN, as_other_user, http_text, status_of, write_config,
};
use reqwest::{StatusCode, header};
use serde_json::json;
use web_api_client::AsyncApi;

/// A client that shows each answer as it comes (no redirects followed, no
/// cookies kept: the test carries them).
fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("client")
}

fn example_config(dir: &Path) -> std::path::PathBuf {
    write_config(
        dir,
        json!({ "example": { "command": common::toolbridge(), "args": ["example-server"] } }),
    )
}

/// Signs in at `base` (`http://ADDR`) as the page does, with `body`
/// (`{"token": T}` or `{"code": C}`): the status, the session id if any,
/// and the `Set-Cookie` headers of the answer.
async fn sign_in(base: &str, body: serde_json::Value) -> (StatusCode, Option<String>, Vec<String>) {
    let response = client()
        .post(format!("{base}/api/session"))
        .json(&body)
        .send()
        .await
        .expect("POST /api/session");
    let status = response.status();
    let cookies = set_cookies(&response);
    let session = response
        .json::<serde_json::Value>()
        .await
        .ok()
        .and_then(|v| v["session"].as_str().map(str::to_owned));
    (status, session, cookies)
}

fn set_cookies(response: &reqwest::Response) -> Vec<String> {
    response
        .headers()
        .get_all(header::SET_COOKIE)
        .iter()
        .filter_map(|c| c.to_str().ok())
        .map(str::to_owned)
        .collect()
}

/// A request to `base` (`http://ADDR`) as the page sends it holding
/// `session`: no token, exactly the `headers` given, `body` as JSON.
async fn as_page(
    base: &str,
    session: &str,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: Option<serde_json::Value>,
) -> reqwest::Response {
    let mut all = vec![("X-Toolbridge-Session", session)];
    all.extend_from_slice(headers);
    raw(base, method, path, &all, body).await
}

/// A request to `base` with exactly `headers` (no token), `body` as JSON.
async fn raw(
    base: &str,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: Option<serde_json::Value>,
) -> reqwest::Response {
    let method = reqwest::Method::from_bytes(method.as_bytes()).expect("method");
    let mut request = client().request(method, format!("{base}{path}"));
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    if let Some(body) = body {
        request = request.json(&body);
    }
    request.send().await.expect("request to the gateway")
}

/// Everything an answer shows: status, headers and body.
async fn shown(response: reqwest::Response) -> String {
    let headers = format!("{:?}", response.headers());
    format!("{headers}\n{}", response.text().await.unwrap_or_default())
}

#[tokio::test]
async fn the_page_needs_the_token_or_a_session_opened_with_it_and_can_sign_out() {
    let dir = tempfile::tempdir().expect("tempdir");
    let gateway = Gateway::start(&example_config(dir.path()), dir.path(), &["-v"]);
    let base = format!("http://{}", gateway.addr());
    let mut seen = String::new();

    // Nothing: the API and MCP refuse (the page's files are the same for
    // everyone and say nothing).
    for path in ["/api/presets", "/api/servers", "/metrics"] {
        let response = client().get(format!("{base}{path}")).send().await.unwrap();
        assert_eq!(response.status(), StatusCode::UNAUTHORIZED, "{path}");
        seen.push_str(&shown(response).await);
    }
    let page = client().get(format!("{base}/")).send().await.unwrap();
    assert_eq!(page.status(), StatusCode::OK);
    assert!(
        page.text()
            .await
            .unwrap()
            .contains("<title>toolbridge</title>")
    );
    // `/healthz` without a token says it is up, and nothing about servers.
    let health = client()
        .get(format!("{base}/healthz"))
        .send()
        .await
        .unwrap();
    assert_eq!(health.status(), StatusCode::OK);
    assert_eq!(health.text().await.unwrap(), r#"{"status":"ok"}"#);

    // A wrong token: 401 and no session.
    let (status, session, cookies) = sign_in(&base, json!({ "token": "not-the-token" })).await;
    assert_eq!((status, &session), (StatusCode::UNAUTHORIZED, &None));
    assert!(cookies.is_empty(), "{cookies:?}");
    // The right one: a session id that is not the token, and no cookie.
    let (status, session, cookies) = sign_in(&base, json!({ "token": TOKEN })).await;
    assert_eq!(status, StatusCode::CREATED);
    assert!(cookies.is_empty(), "a sign-in set cookies: {cookies:?}");
    let session = session.expect("a session id");
    assert_ne!(session, TOKEN);

    let api = as_page(&base, &session, "GET", "/api/presets?q=memory", &[], None).await;
    assert_eq!(api.status(), StatusCode::OK);
    seen.push_str(&shown(api).await);

    // Writes still need the page's header...
    let write = as_page(
        &base,
        &session,
        "POST",
        "/api/presets/memory",
        &[],
        Some(json!({})),
    )
    .await;
    assert_eq!(write.status(), StatusCode::FORBIDDEN);
    let write = as_page(
        &base,
        &session,
        "POST",
        "/api/presets/memory",
        &[("X-Toolbridge-Request", "1")],
        Some(json!({})),
    )
    .await;
    assert_eq!(write.status(), StatusCode::CREATED);
    seen.push_str(&shown(write).await);

    // ...a foreign page is refused even with the session...
    let evil = ("Origin", "http://evil.example.com");
    let foreign = as_page(&base, &session, "GET", "/api/presets", &[evil], None).await;
    assert_eq!(foreign.status(), StatusCode::FORBIDDEN);

    // ...MCP clients still need the bearer token...
    let mcp = as_page(
        &base,
        &session,
        "POST",
        "/mcp",
        &[("Accept", "application/json, text/event-stream")],
        Some(json!({"jsonrpc": "2.0", "id": 1, "method": "ping"})),
    )
    .await;
    assert_eq!(mcp.status(), StatusCode::UNAUTHORIZED);
    // ...and a made-up session is nothing.
    let forged = as_page(&base, "00ff", "GET", "/api/presets", &[], None).await;
    assert_eq!(forged.status(), StatusCode::UNAUTHORIZED);

    // Signing out ends the session.
    let out = as_page(&base, &session, "DELETE", "/api/session", &[], None).await;
    assert_eq!(out.status(), StatusCode::NO_CONTENT);
    let after = as_page(&base, &session, "GET", "/api/presets", &[], None).await;
    assert_eq!(after.status(), StatusCode::UNAUTHORIZED);

    assert!(!seen.contains(TOKEN), "an answer holds the token:\n{seen}");
    let log = gateway.log();
    assert!(log.contains("opened a page session"), "{log}");
    assert!(log.contains("closed a page session"), "{log}");
    assert!(!log.contains(TOKEN), "the log holds the token:\n{log}");
}

/// A web server on another port of 127.0.0.1, as any local page or dev
/// server is: it answers 200 to every request and keeps the `Cookie`
/// headers it was sent. Browsers send a host's cookies to every port.
struct OtherPort {
    addr: std::net::SocketAddr,
    cookies: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
}

impl OtherPort {
    async fn start() -> OtherPort {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let cookies = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let kept = cookies.clone();
        tokio::spawn(async move {
            use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
            while let Ok((mut socket, _)) = listener.accept().await {
                let mut request = Vec::new();
                let mut buffer = [0u8; 4096];
                while !request.windows(4).any(|w| w == b"\r\n\r\n") {
                    match socket.read(&mut buffer).await {
                        Ok(0) | Err(_) => break,
                        Ok(n) => request.extend_from_slice(&buffer[..n]),
                    }
                }
                for line in String::from_utf8_lossy(&request).lines() {
                    if let Some((name, value)) = line.split_once(':')
                        && name.eq_ignore_ascii_case("cookie")
                    {
                        kept.lock().unwrap().push(value.trim().to_owned());
                    }
                }
                let _ = socket
                    .write_all(
                        b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok",
                    )
                    .await;
            }
        });
        OtherPort { addr, cookies }
    }
}

/// The attack of issue 32: a page on another port of the host gets the
/// browser's cookies for the host (ports do not count) and replays them.
/// The browser's side is played by a cookie jar that keeps what the gateway
/// sets, through every way the page signs in (the old `/login?token=`
/// address and `/api/session`), and sends it to the other port as browsers
/// do. The other port must get nothing that opens the API.
#[tokio::test]
async fn a_page_on_another_port_gets_nothing_that_opens_the_api() {
    let dir = tempfile::tempdir().expect("tempdir");
    let gateway = Gateway::start(&example_config(dir.path()), dir.path(), &[]);
    let base = format!("http://{}", gateway.addr());
    let other = OtherPort::start().await;

    let mut jar: Vec<String> = Vec::new();
    let login = client()
        .get(
            url::Url::parse_with_params(&format!("{base}/login"), [("token", TOKEN)])
                .expect("url")
                .as_str(),
        )
        .send()
        .await
        .expect("GET /login");
    jar.extend(set_cookies(&login));
    let (status, session, cookies) = sign_in(&base, json!({ "token": TOKEN })).await;
    jar.extend(cookies);
    if let Some(session) = &session {
        jar.extend(set_cookies(
            &as_page(&base, session, "GET", "/api/servers", &[], None).await,
        ));
    }

    // The browser visits the other port: it sends the host's cookies.
    let sent: Vec<String> = jar
        .iter()
        .filter_map(|c| c.split(';').next())
        .map(str::to_owned)
        .collect();
    let mut visit = client().get(format!("http://{}/", other.addr));
    if !sent.is_empty() {
        visit = visit.header(header::COOKIE, sent.join("; "));
    }
    assert_eq!(visit.send().await.unwrap().status(), StatusCode::OK);
    let received = other.cookies.lock().unwrap().clone();
    assert!(
        received.is_empty(),
        "another port of the host received the gateway's cookies: {received:?}"
    );
    // The page did sign in (its session is in its own origin's storage).
    assert_eq!(status, StatusCode::CREATED);
    let session = session.expect("a session");
    let page = as_page(&base, &session, "GET", "/api/servers", &[], None).await;
    assert_eq!(page.status(), StatusCode::OK);

    // Whatever that page holds, replayed: nothing opens the API, and the
    // page's origin-scoped session id, sent as a cookie, is no session.
    for cookie in received
        .iter()
        .cloned()
        .chain([format!(
            "toolbridge-session-{}={session}",
            other.addr.port()
        )])
        .chain([format!(
            "toolbridge-session-{}={session}",
            gateway.addr().rsplit(':').next().unwrap()
        )])
    {
        let replayed = raw(
            &base,
            "POST",
            "/api/servers",
            &[("Cookie", &cookie), ("X-Toolbridge-Request", "1")],
            Some(json!({ "name": "pwn", "transport": "stdio", "command": "true" })),
        )
        .await;
        assert_eq!(replayed.status(), StatusCode::UNAUTHORIZED, "{cookie}");
    }
    // A page on another loopback port may not call the API even with the
    // session id it cannot have: the Origin is not the gateway's own.
    let other_origin = format!("http://{}", other.addr);
    let cross = as_page(
        &base,
        &session,
        "POST",
        "/api/presets/memory",
        &[("Origin", &other_origin), ("X-Toolbridge-Request", "1")],
        Some(json!({})),
    )
    .await;
    assert_eq!(cross.status(), StatusCode::FORBIDDEN);
    let text = std::fs::read_to_string(dir.path().join("config.json")).unwrap_or_default();
    assert!(!text.contains("pwn"), "{text}");
}

/// `toolbridge ui` with a `$BROWSER` that writes the URL it is given to a
/// file; killed (its process group) on drop.
struct Ui {
    child: Child,
    /// The URL `ui` printed on stdout.
    printed: String,
    /// Where the browser script writes the URL it was opened with.
    opened: std::path::PathBuf,
}

impl Ui {
    #[allow(clippy::zombie_processes)] // waited for in Drop
    fn start(dir: &Path, token: Option<&str>) -> Ui {
        let opened = dir.join("opened");
        let browser = dir.join("browser");
        common::script(
            &browser,
            &format!(
                "printf '%s\\n' \"$1\" > {0}.tmp && mv {0}.tmp {0}",
                opened.display()
            ),
        );
        let mut command = Command::new(common::toolbridge());
        command
            .arg("--config")
            .arg(example_config(dir))
            .args(["ui", "--listen", "127.0.0.1:0"])
            .env("BROWSER", format!("{} %s", browser.display()))
            .env("HOME", dir)
            .env("XDG_CONFIG_HOME", dir.join("config"))
            .env("XDG_CACHE_HOME", dir.join("cache"))
            .env("XDG_DATA_HOME", dir.join("data"))
            .env_remove("TOOLBRIDGE_CONFIG")
            .env_remove("TOOLBRIDGE_GATEWAY_TOKEN")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .process_group(0);
        if let Some(token) = token {
            command.env("TOOLBRIDGE_GATEWAY_TOKEN", token);
        }
        let mut child = command.spawn().expect("spawn toolbridge ui");
        let stdout = child.stdout.take().expect("stdout");
        // The first line on stdout is the page's address.
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut line = String::new();
            let _ = BufReader::new(stdout).read_line(&mut line);
            let _ = tx.send(line);
        });
        let printed = rx
            .recv_timeout(Duration::from_secs(60))
            .unwrap_or_default()
            .trim()
            .to_owned();
        Ui {
            child,
            printed,
            opened,
        }
    }

    /// The URL the browser was opened with (waits up to 30 s).
    fn opened_url(&self) -> String {
        assert!(
            wait_until(Duration::from_secs(30), || self.opened.exists()),
            "the browser was never started (printed: {:?})",
            self.printed
        );
        std::fs::read_to_string(&self.opened)
            .expect("opened")
            .trim()
            .to_owned()
    }
}

impl Drop for Ui {
    fn drop(&mut self) {
        // SAFETY: killpg only sends a signal.
        unsafe { libc::killpg(self.child.id() as i32, libc::SIGKILL) };
        let _ = self.child.wait();
    }
}

#[tokio::test]
async fn ui_opens_the_page_in_the_browser() {
    let dir = tempfile::tempdir().expect("tempdir");
    let ui = Ui::start(dir.path(), None);
    let url = ui.opened_url();
    assert_eq!(url, ui.printed);
    assert!(
        url.starts_with("http://127.0.0.1:") && url.ends_with('/'),
        "{url}"
    );
    let page = client().get(&url).send().await.expect("GET the page");
    assert_eq!(page.status(), StatusCode::OK);
    assert!(
        page.text()
            .await
            .unwrap()
            .contains("<title>toolbridge</title>")
    );
}

/// `toolbridge ui` with a token opens the page with a one-time code, never
/// the token: the browser's command line (`/proc/PID/cmdline`) is readable
/// by every local user. The code opens one session, once.
#[tokio::test]
async fn ui_with_a_token_opens_the_page_with_a_one_time_code_not_the_token() {
    let dir = tempfile::tempdir().expect("tempdir");
    let token = "ui-test-token-93c1";
    let ui = Ui::start(dir.path(), Some(token));
    let url = ui.opened_url();
    assert_eq!(url, ui.printed);
    assert!(
        !url.contains(token),
        "the browser was given the token: {url}"
    );
    let (base, code) = url.split_once("/#code=").expect("a sign-in code in {url}");

    let (status, session, _) = sign_in(base, json!({ "code": code })).await;
    assert_eq!(status, StatusCode::CREATED);
    let session = session.expect("a session");
    let api = as_page(base, &session, "GET", "/api/servers", &[], None).await;
    assert_eq!(api.status(), StatusCode::OK);
    // Used: useless.
    let (again, none, _) = sign_in(base, json!({ "code": code })).await;
    assert_eq!((again, none), (StatusCode::UNAUTHORIZED, None));
    let page = client()
        .get(format!("{base}/"))
        .send()
        .await
        .expect("GET the page");
    assert_eq!(page.status(), StatusCode::OK);
}

#[test]
fn ui_refuses_an_address_off_loopback() {
    let dir = tempfile::tempdir().expect("tempdir");
    let output = Command::new(common::toolbridge())
        .arg("--config")
        .arg(example_config(dir.path()))
        .args(["ui", "--no-open", "--listen", "0.0.0.0:0"])
        .env("HOME", dir.path())
        .env("XDG_CONFIG_HOME", dir.path().join("config"))
        .env("XDG_CACHE_HOME", dir.path().join("cache"))
        .env("XDG_DATA_HOME", dir.path().join("data"))
        .env_remove("BROWSER")
        .output()
        .expect("run toolbridge ui");
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("loopback only"),
        "{output:?}"
    );
}

/// Issue 32's third attack: on loopback without a token (the default of
/// `serve` and `ui`), another local user adds a stdio server through the
/// page's API and has it run, or calls a tool over `/mcp`: both run
/// commands as the gateway's user. The gateway serves its own user only.
#[tokio::test]
async fn another_local_user_cannot_add_run_or_call_anything_without_the_token() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = example_config(dir.path());
    let gateway = gateway_support::Gateway::start_with(&config, dir.path(), &[], None);
    let addr = gateway.addr();
    let marker = dir.path().join("ran-as-the-gateway");
    let add = json!({
        "name": "pwn",
        "transport": "stdio",
        "command": "touch",
        "args": [marker.display().to_string()],
    })
    .to_string();

    let added = as_other_user(
        &addr,
        &http_text(
            &addr,
            "POST",
            "/api/servers",
            &["X-Toolbridge-Request: 1"],
            &add,
        ),
    );
    assert_eq!(status_of(&added), "403", "{added}");
    assert!(added.contains(&format!("uid {OTHER_UID}")), "{added}");
    let doctor = as_other_user(
        &addr,
        &http_text(
            &addr,
            "POST",
            "/api/doctor",
            &["X-Toolbridge-Request: 1"],
            "{}",
        ),
    );
    assert_eq!(status_of(&doctor), "403", "{doctor}");
    let initialize = json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": { "protocolVersion": "2025-11-25", "capabilities": {},
                    "clientInfo": { "name": "intruder", "version": "1" } },
    })
    .to_string();
    let mcp = as_other_user(
        &addr,
        &http_text(
            &addr,
            "POST",
            "/mcp",
            &["Accept: application/json, text/event-stream"],
            &initialize,
        ),
    );
    assert_eq!(status_of(&mcp), "403", "{mcp}");
    let page = as_other_user(&addr, &http_text(&addr, "GET", "/api/servers", &[], ""));
    assert_eq!(status_of(&page), "403", "{page}");
    // `/healthz` says the gateway is up, to anyone.
    let health = as_other_user(&addr, &http_text(&addr, "GET", "/healthz", &[], ""));
    assert_eq!(status_of(&health), "200", "{health}");

    let text = std::fs::read_to_string(&config).expect("config");
    assert!(
        !text.contains("pwn"),
        "the other user added a server: {text}"
    );
    assert!(!marker.exists(), "the other user's command ran");
    // The gateway's own user is served as before.
    let own = raw(&format!("http://{addr}"), "GET", "/api/servers", &[], None).await;
    assert_eq!(own.status(), StatusCode::OK);
}

/// On the same loopback gateway without an admin token, a named client
/// token (issue 27) lets another local user in, to MCP only: its call
/// works, the page's API still answers 403 with that token.
#[tokio::test]
async fn another_local_user_with_a_client_token_reaches_mcp_only() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = example_config(dir.path());
    let gateway = gateway_support::Gateway::start_with(&config, dir.path(), &[], None);
    let addr = gateway.addr();
    let made = Command::new(common::toolbridge())
        .arg("--config")
        .arg(&config)
        .args(["serve", "token", "create", "colleague"])
        .output()
        .expect("serve token create");
    assert!(made.status.success(), "{made:?}");
    let token = String::from_utf8_lossy(&made.stdout).trim().to_owned();
    let bearer = format!("Authorization: Bearer {token}");
    let initialize = json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": { "protocolVersion": "2025-11-25", "capabilities": {},
                    "clientInfo": { "name": "colleague", "version": "1" } },
    })
    .to_string();
    let mcp = as_other_user(
        &addr,
        &http_text(
            &addr,
            "POST",
            "/mcp",
            &["Accept: application/json, text/event-stream", &bearer],
            &initialize,
        ),
    );
    assert_eq!(status_of(&mcp), "200", "{mcp}");
    let api = as_other_user(
        &addr,
        &http_text(&addr, "GET", "/api/servers", &[&bearer], ""),
    );
    assert_eq!(status_of(&api), "403", "{api}");
    let wrong = as_other_user(
        &addr,
        &http_text(
            &addr,
            "POST",
            "/mcp",
            &[
                "Accept: application/json, text/event-stream",
                "Authorization: Bearer tbc_0",
            ],
            &initialize,
        ),
    );
    assert_eq!(status_of(&wrong), "403", "{wrong}");
}

/// Issue 32's fifth attack: `GET /api/doctor` started every configured
/// server, so an `<img src>` on any page did it; 30 at once started 201
/// processes. Doctor is a POST now (a GET gets 405 and starts nothing) and
/// runs one at a time (409 while one runs).
#[test]
fn doctor_starts_nothing_on_a_get_and_runs_one_at_a_time() {
    let dir = tempfile::tempdir().expect("tempdir");
    let starts = dir.path().join("starts");
    let config = write_config(
        dir.path(),
        json!({ "slow": {
            "command": "sh",
            "args": ["-c", format!(
                "echo started >> {}; sleep 1; exec {} example-server",
                starts.display(),
                common::toolbridge()
            )],
        } }),
    );
    let gateway = Gateway::start(&config, dir.path(), &[]);
    gateway.wait_for_tools(&["echo"]);
    let started = || {
        std::fs::read_to_string(&starts)
            .unwrap_or_default()
            .lines()
            .count()
    };
    let before = started();
    let api = AsyncApi::new(&gateway.addr());
    let runtime = tokio::runtime::Runtime::new().expect("runtime");

    // What an <img src=".../api/doctor"> sends (the token aside: the
    // loopback attack needs none).
    let get = runtime.block_on(api.get("/doctor"));
    assert_eq!(get.status, 405, "{get:?}");
    assert_eq!(started(), before, "a GET started the servers");

    let runs = runtime.block_on(futures::future::join_all(
        (0..4).map(|_| api.post("/doctor", json!({}))),
    ));
    let statuses: Vec<u16> = runs.iter().map(|r| r.status).collect();
    let ran = statuses.iter().filter(|s| **s == 200).count();
    assert!(ran >= 1, "{statuses:?}");
    assert!(
        statuses.iter().all(|s| *s == 200 || *s == 409),
        "{statuses:?}"
    );
    assert!(
        statuses.contains(&409),
        "four doctors at once all ran: {statuses:?}"
    );
    assert_eq!(started(), before + ran, "{statuses:?}");
}

/// Issue 32's sixth finding: a server's env secret was masked in
/// `/api/servers` and `/api/doctor` but shown in clear in the errors of
/// every other endpoint. A server that echoes its key (and the secret
/// argument after `--api-key`) on stderr and exits: every error that
/// carries its stderr shows it scrubbed.
#[test]
fn a_servers_secrets_never_show_in_the_errors_of_any_endpoint() {
    const KEY: &str = "sk-live-0123456789abcdef";
    const ARG: &str = "argsecret-a1b2c3d4e5";
    let dir = tempfile::tempdir().expect("tempdir");
    let config = write_config(
        dir.path(),
        json!({ "leaky": {
            "command": "sh",
            "args": ["-c", "echo \"starting with key $API_KEY and $*\" >&2; exit 3",
                     "sh", "--api-key", ARG],
            "env": { "API_KEY": KEY },
        } }),
    );
    let gateway = Gateway::start(&config, dir.path(), &[]);
    let api = AsyncApi::new(&gateway.addr());
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let replies = runtime.block_on(async {
        vec![
            api.get("/tools/leaky").await,
            api.get("/resources").await,
            api.get("/prompts").await,
            api.get("/resources/read?server=leaky&uri=test%3A%2F%2Fx")
                .await,
            api.post("/tools/leaky/echo/call", json!({ "arguments": {} }))
                .await,
            api.post("/prompts/get", json!({ "server": "leaky", "name": "p" }))
                .await,
            api.post("/servers/leaky/test", json!({})).await,
            api.get("/servers").await,
        ]
    });
    let mut all = String::new();
    for reply in &replies {
        all.push_str(&reply.text);
        all.push('\n');
    }
    assert!(
        !all.contains(KEY) && !all.contains(ARG),
        "a secret in an error:\n{all}"
    );
    // The errors do carry the server's stderr (scrubbed): the test sees
    // the text the secret would have been in.
    assert!(
        replies[0].text.contains("starting with key ***"),
        "{:?}",
        replies[0]
    );
    let log = gateway.log();
    assert!(!log.contains(KEY) && !log.contains(ARG), "{log}");
}

/// Issue 32's eleventh finding: a secret added through the page's server
/// form left an existing 0644 config readable by every local user. The
/// file that gains a secret becomes 0600.
#[test]
fn a_config_that_gains_a_secret_through_the_page_becomes_owner_only() {
    use std::os::unix::fs::PermissionsExt as _;
    let dir = tempfile::tempdir().expect("tempdir");
    let config = example_config(dir.path());
    std::fs::set_permissions(&config, std::fs::Permissions::from_mode(0o644)).unwrap();
    let gateway = Gateway::start(&config, dir.path(), &[]);
    let api = AsyncApi::new(&gateway.addr());
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let added = runtime.block_on(api.post(
        "/servers",
        json!({
            "name": "keyed",
            "transport": "stdio",
            "command": common::toolbridge(),
            "args": ["example-server"],
            "env": [{ "key": "API_KEY", "value": "sk-live-0123456789abcdef" }],
        }),
    ));
    assert_eq!(added.status, 201, "{added:?}");
    let text = std::fs::read_to_string(&config).unwrap();
    assert!(text.contains("sk-live-0123456789abcdef"), "{text}");
    let mode = std::fs::metadata(&config).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "the config holding a key is {mode:o}");
}

/// The MCP Apps sandbox document (`/assets/app-sandbox.html`) has a policy
/// of its own: an opaque origin even opened on its own (`sandbox
/// allow-scripts`), inline scripts for apps, no network, framed by the page
/// only; the page and its other files keep theirs (no inline script, never
/// framed).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_app_sandbox_is_opaque_offline_and_framed_by_the_page_only() {
    let dir = tempfile::tempdir().expect("tempdir");
    let gateway = Gateway::start(&example_config(dir.path()), dir.path(), &[]);
    let base = format!("http://{}", gateway.addr());
    let headers = |response: &reqwest::Response| {
        let get = |name: header::HeaderName| {
            response
                .headers()
                .get(name)
                .and_then(|v| v.to_str().ok())
                .unwrap_or_default()
                .to_owned()
        };
        (
            get(header::CONTENT_SECURITY_POLICY),
            get(header::X_FRAME_OPTIONS),
        )
    };

    // Public like the page's other files: no token, no session.
    let sandbox = client()
        .get(format!("{base}/assets/app-sandbox.html"))
        .send()
        .await
        .unwrap();
    assert_eq!(sandbox.status(), StatusCode::OK);
    let (csp, frames) = headers(&sandbox);
    let directives: Vec<&str> = csp.split(';').map(str::trim).collect();
    for wanted in [
        "sandbox allow-scripts",
        "script-src 'self' 'unsafe-inline'",
        "connect-src 'none'",
        "form-action 'none'",
        "frame-ancestors 'self'",
        "default-src 'none'",
    ] {
        assert!(directives.contains(&wanted), "{wanted} missing from {csp}");
    }
    assert!(!csp.contains("allow-same-origin"), "{csp}");
    assert_eq!(frames, "SAMEORIGIN");
    let text = sandbox.text().await.unwrap();
    assert!(text.contains("/assets/app-sandbox.js"), "{text}");

    for path in ["/", "/assets/app.js", "/assets/app-sandbox.js"] {
        let response = client().get(format!("{base}{path}")).send().await.unwrap();
        assert_eq!(response.status(), StatusCode::OK, "{path}");
        let (csp, frames) = headers(&response);
        assert!(csp.contains("script-src 'self';"), "{path}: {csp}");
        assert!(csp.contains("frame-ancestors 'none'"), "{path}: {csp}");
        assert_eq!(frames, "DENY", "{path}");
    }
}
