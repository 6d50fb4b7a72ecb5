//! The web page's sign-in on the real binary: with a token configured, a
//! browser opens `/login?token=TOKEN`, gets a session cookie (not the
//! token) and that cookie opens the page and `/api` (not `/mcp`); a foreign
//! Origin is refused even with it; the token never shows in the gateway's
//! log or answers. And `toolbridge ui`, which starts the gateway and opens
//! the page with `$BROWSER`.

mod common;
mod gateway_support;

use std::{
    io::{BufRead as _, BufReader},
    os::unix::process::CommandExt as _,
    path::Path,
    process::{Child, Command, Stdio},
    time::Duration,
};

use common::wait_until;
use gateway_support::{Gateway, TOKEN, write_config};
use reqwest::{StatusCode, header};
use serde_json::json;

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

/// Signs in at `base` (`http://ADDR`) with `token`: the answer's status
/// and its `name=value` session cookie, if any.
async fn login(base: &str, token: &str) -> (StatusCode, Option<String>, reqwest::Response) {
    let response = client()
        .get(
            url::Url::parse_with_params(&format!("{base}/login"), [("token", token)])
                .expect("url")
                .as_str(),
        )
        .send()
        .await
        .expect("GET /login");
    let cookie = response
        .headers()
        .get(header::SET_COOKIE)
        .and_then(|c| c.to_str().ok())
        .map(str::to_owned);
    (response.status(), cookie, response)
}

/// Everything an answer shows: status, headers and body.
async fn shown(response: reqwest::Response) -> String {
    let headers = format!("{:?}", response.headers());
    format!("{headers}\n{}", response.text().await.unwrap_or_default())
}

#[tokio::test]
async fn the_page_needs_the_token_or_a_session_opened_with_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let gateway = Gateway::start(&example_config(dir.path()), dir.path(), &["-v"]);
    let base = format!("http://{}", gateway.addr());
    let mut seen = String::new();

    // Nothing: 401 on the page and the API.
    for path in ["/", "/api/presets", "/assets/app.js"] {
        let response = client().get(format!("{base}{path}")).send().await.unwrap();
        assert_eq!(response.status(), StatusCode::UNAUTHORIZED, "{path}");
        seen.push_str(&shown(response).await);
    }

    // A wrong token: 401 and no cookie.
    let (status, cookie, response) = login(&base, "not-the-token").await;
    assert_eq!((status, &cookie), (StatusCode::UNAUTHORIZED, &None));
    seen.push_str(&shown(response).await);

    // The right one: a cookie that is not the token, and on to the page.
    let (status, cookie, response) = login(&base, TOKEN).await;
    assert_eq!(status, StatusCode::SEE_OTHER);
    assert_eq!(
        response.headers().get(header::LOCATION).unwrap(),
        "/",
        "{response:?}"
    );
    let cookie = cookie.expect("a session cookie");
    for attribute in ["HttpOnly", "SameSite=Strict", "Path=/"] {
        assert!(cookie.contains(attribute), "{cookie}");
    }
    let session = cookie.split(';').next().unwrap().to_owned();
    seen.push_str(&shown(response).await);

    let with_cookie = |method: reqwest::Method, path: &str| {
        client()
            .request(method, format!("{base}{path}"))
            .header(header::COOKIE, &session)
    };
    let page = with_cookie(reqwest::Method::GET, "/").send().await.unwrap();
    assert_eq!(page.status(), StatusCode::OK);
    let html = page.text().await.unwrap();
    assert!(html.contains("<title>toolbridge</title>"), "{html}");
    let api = with_cookie(reqwest::Method::GET, "/api/presets?q=memory")
        .send()
        .await
        .unwrap();
    assert_eq!(api.status(), StatusCode::OK);
    seen.push_str(&shown(api).await);

    // Writes still need the page's header...
    let write = with_cookie(reqwest::Method::POST, "/api/presets/memory")
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(write.status(), StatusCode::FORBIDDEN);
    let write = with_cookie(reqwest::Method::POST, "/api/presets/memory")
        .header("X-Toolbridge-Request", "1")
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(write.status(), StatusCode::CREATED);
    seen.push_str(&shown(write).await);

    // ...a foreign page is refused even with the cookie...
    let foreign = with_cookie(reqwest::Method::GET, "/api/presets")
        .header(header::ORIGIN, "http://evil.example.com")
        .send()
        .await
        .unwrap();
    assert_eq!(foreign.status(), StatusCode::FORBIDDEN);
    let foreign = with_cookie(reqwest::Method::POST, "/api/presets/time")
        .header(header::ORIGIN, "http://evil.example.com")
        .header("X-Toolbridge-Request", "1")
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(foreign.status(), StatusCode::FORBIDDEN);

    // ...and MCP clients still need the bearer token.
    let mcp = with_cookie(reqwest::Method::POST, "/mcp")
        .header(header::ACCEPT, "application/json, text/event-stream")
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}))
        .send()
        .await
        .unwrap();
    assert_eq!(mcp.status(), StatusCode::UNAUTHORIZED);
    // A made-up session is nothing.
    let forged = client()
        .get(format!("{base}/api/presets"))
        .header(header::COOKIE, "toolbridge-session-1=00ff")
        .send()
        .await
        .unwrap();
    assert_eq!(forged.status(), StatusCode::UNAUTHORIZED);

    assert!(!seen.contains(TOKEN), "an answer holds the token:\n{seen}");
    let log = gateway.log();
    assert!(log.contains("opened a page session"), "{log}");
    assert!(!log.contains(TOKEN), "the log holds the token:\n{log}");
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

#[tokio::test]
async fn ui_with_a_token_opens_the_sign_in_address_which_leads_to_the_page() {
    let dir = tempfile::tempdir().expect("tempdir");
    let token = "ui-test-token-93c1";
    let ui = Ui::start(dir.path(), Some(token));
    let url = ui.opened_url();
    assert_eq!(url, ui.printed);
    assert!(url.contains(&format!("/login?token={token}")), "{url}");

    let signed_in = client().get(&url).send().await.expect("GET /login");
    assert_eq!(signed_in.status(), StatusCode::SEE_OTHER);
    let cookie = signed_in
        .headers()
        .get(header::SET_COOKIE)
        .and_then(|c| c.to_str().ok())
        .and_then(|c| c.split(';').next())
        .expect("a session cookie")
        .to_owned();
    let base = url.split("/login").next().unwrap();
    let page = client()
        .get(format!("{base}/"))
        .header(header::COOKIE, cookie)
        .send()
        .await
        .expect("GET the page");
    assert_eq!(page.status(), StatusCode::OK);
    assert!(
        page.text()
            .await
            .unwrap()
            .contains("<title>toolbridge</title>")
    );
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
