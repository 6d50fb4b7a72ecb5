//! Fixtures of the gateway's interop and replica tests: `toolbridge serve`
//! started as a real process, HAProxy in front of replicas, and MCP over
//! plain HTTP for the steps a test must see one by one (status codes, the
//! `Mcp-Session-Id` header).

#![allow(dead_code)]

use std::{
    io::BufRead,
    net::TcpListener,
    os::unix::process::CommandExt,
    path::{Path, PathBuf},
    process::{Child, Command, Stdio},
    sync::{Arc, Mutex},
    time::Duration,
};

use serde_json::{Value, json};

use crate::common::{Listening, poll_async, root, toolbridge, wait_until};

/// The bearer token every gateway of these tests requires.
pub const TOKEN: &str = "interop-test-token-7f3a";

/// One `toolbridge serve` over HTTP, in its own process group (killed on drop).
pub struct Gateway {
    child: Child,
    /// `http://127.0.0.1:PORT/mcp`, from the gateway's `listening on` line.
    pub url: String,
    /// Everything the gateway wrote on stderr so far.
    pub stderr: Arc<Mutex<Vec<String>>>,
}

impl Gateway {
    /// `toolbridge --config CONFIG serve --listen 127.0.0.1:0 EXTRA...` with
    /// `$TOOLBRIDGE_GATEWAY_TOKEN` set to [`TOKEN`]; see [`Gateway::start_with`].
    pub fn start(config: &Path, home: &Path, extra: &[&str]) -> Gateway {
        Gateway::start_with(config, home, extra, Some(TOKEN))
    }

    /// `toolbridge --config CONFIG serve --listen 127.0.0.1:0 EXTRA...`
    /// (a `--listen` in `extra` replaces it) requiring `token` (none: a
    /// loopback gateway asks for none), with the home, config, cache and
    /// data folders under `home`; waits (60 s at most) for its `listening
    /// on` line.
    // The child is waited for in `Drop`, which clippy cannot see.
    #[allow(clippy::zombie_processes)]
    pub fn start_with(config: &Path, home: &Path, extra: &[&str], token: Option<&str>) -> Gateway {
        Gateway::start_with_env(config, home, extra, token, &[])
    }

    /// [`Gateway::start_with`], with the variables `env` set too.
    // The child is waited for in `Drop`, which clippy cannot see.
    #[allow(clippy::zombie_processes)]
    pub fn start_with_env(
        config: &Path,
        home: &Path,
        extra: &[&str],
        token: Option<&str>,
        env: &[(&str, &str)],
    ) -> Gateway {
        let mut command = Command::new(toolbridge());
        command.envs(env.iter().copied());
        command
            .arg("--config")
            .arg(config)
            .arg("serve")
            .args(match extra.contains(&"--listen") {
                true => &[][..],
                false => &["--listen", "127.0.0.1:0"][..],
            })
            .args(extra)
            .env_remove("TOOLBRIDGE_GATEWAY_TOKEN");
        if let Some(token) = token {
            command.env("TOOLBRIDGE_GATEWAY_TOKEN", token);
        }
        let mut child = command
            .env("HOME", home)
            .env("XDG_CONFIG_HOME", home.join("config"))
            .env("XDG_CACHE_HOME", home.join("cache"))
            .env("XDG_DATA_HOME", home.join("data"))
            .env_remove("TOOLBRIDGE_CONFIG")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .process_group(0)
            .spawn()
            .expect("spawn toolbridge serve");
        let stderr = Arc::new(Mutex::new(Vec::new()));
        let (tx, rx) = std::sync::mpsc::channel::<String>();
        let err = child.stderr.take().expect("stderr");
        let lines = stderr.clone();
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(err).lines().map_while(Result::ok) {
                if let Some(i) = line.find("listening on http://") {
                    let _ = tx.send(line[i + "listening on ".len()..].trim().to_owned());
                }
                lines.lock().unwrap().push(line);
            }
        });
        match rx.recv_timeout(Duration::from_secs(60)) {
            Ok(url) => Gateway { child, url, stderr },
            Err(_) => {
                kill_group(child.id());
                let _ = child.wait();
                panic!(
                    "toolbridge serve never said `listening on`; stderr:\n{}",
                    stderr.lock().unwrap().join("\n")
                );
            }
        }
    }

    /// Waits (90 s at most) until the gateway lists every tool in `names`:
    /// its upstreams have started. On a loaded machine a server can miss
    /// its first start (rmcp gives `server/discover` 10 s) and be started
    /// again on a later request.
    pub fn wait_for_tools(&self, names: &[&str]) {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        let listed = std::sync::Mutex::new(Vec::new());
        let ready = runtime.block_on(async {
            let client = tokio::sync::Mutex::new(RawClient::new(&self.url));
            client.lock().await.initialize().await;
            let (client, listed) = (&client, &listed);
            poll_async(Duration::from_secs(90), || async move {
                let answer = client.lock().await.request("tools/list", json!({})).await;
                let names_now = answer.tool_names().unwrap_or_default();
                let all = names.iter().all(|n| names_now.iter().any(|l| l == n));
                *listed.lock().unwrap() = names_now;
                all.then_some(())
            })
            .await
            .is_some()
        });
        let listed = listed.into_inner().unwrap();
        assert!(
            ready,
            "the gateway never listed all of {names:?} (last: {listed:?}); its log:\n{}",
            self.log()
        );
    }

    /// What the gateway wrote on stderr so far, for a failure's message.
    pub fn log(&self) -> String {
        self.stderr.lock().unwrap().join("\n")
    }

    /// The gateway's process id (also its process group's).
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// `127.0.0.1:PORT`
    pub fn addr(&self) -> String {
        self.url
            .trim_start_matches("http://")
            .trim_end_matches("/mcp")
            .to_owned()
    }

    /// Its `/metrics` page (Prometheus text), asked with the token.
    pub async fn metrics(&self) -> String {
        reqwest::Client::new()
            .get(format!("http://{}/metrics", self.addr()))
            .bearer_auth(TOKEN)
            .send()
            .await
            .expect("GET /metrics")
            .text()
            .await
            .expect("metrics text")
    }

    /// Kills the gateway and everything it started (SIGKILL to its process
    /// group), as a crashed replica, and reaps it.
    pub fn kill(&mut self) {
        kill_group(self.child.id());
        let _ = self.child.wait();
    }
}

impl Drop for Gateway {
    fn drop(&mut self) {
        self.kill();
    }
}

fn kill_group(pid: u32) {
    // SAFETY: killpg only sends a signal.
    unsafe { libc::killpg(pid as i32, libc::SIGKILL) };
}

/// A config file with `servers` (a `mcpServers` object) in `dir`.
pub fn write_config(dir: &Path, servers: Value) -> PathBuf {
    let path = dir.join("config.json");
    std::fs::write(&path, json!({ "mcpServers": servers }).to_string()).expect("write config");
    path
}

/// A port nobody listens on right now.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("free port")
}

/// The HAProxy binary: `$HAPROXY`, the one on `$PATH` or in /usr/sbin, or
/// the one `scripts/setup-test-deps.sh` unpacked into .deps/haproxy.
pub fn haproxy_binary() -> PathBuf {
    let candidates = std::env::var_os("HAPROXY")
        .map(PathBuf::from)
        .into_iter()
        .chain(
            std::env::var_os("PATH")
                .map(|p| {
                    std::env::split_paths(&p)
                        .map(|d| d.join("haproxy"))
                        .collect::<Vec<_>>()
                })
                .unwrap_or_default(),
        )
        .chain([
            PathBuf::from("/usr/sbin/haproxy"),
            root().join(".deps/haproxy/usr/sbin/haproxy"),
        ]);
    for candidate in candidates {
        if candidate.is_file() {
            return candidate;
        }
    }
    panic!("haproxy is missing: run scripts/setup-test-deps.sh (the README's test command does)")
}

/// HAProxy in the foreground (killed on drop) with the config `deploy/kubernetes/haproxy.cfg`
/// ships, pointing at `replicas`.
pub struct Haproxy {
    child: Child,
    /// `http://127.0.0.1:PORT/mcp`
    pub url: String,
    _dir: tempfile::TempDir,
}

impl Haproxy {
    /// Starts HAProxy on a free port in front of `replicas` (`ADDR:PORT`
    /// each) with deploy/kubernetes/haproxy.cfg, and waits (30 s at most) until it
    /// accepts connections and sees every replica healthy.
    #[allow(clippy::zombie_processes)]
    pub fn start(replicas: &[String]) -> Haproxy {
        let dir = tempfile::tempdir().expect("tempdir");
        let port = free_port();
        let template = std::fs::read_to_string(root().join("deploy/kubernetes/haproxy.cfg"))
            .expect("deploy/kubernetes/haproxy.cfg");
        // The shipped file's `use-server` lines name replica1..replica8: the
        // ones the test does not run are there, switched off.
        let servers: String = (0..replicas.len().max(8))
            .map(|i| match replicas.get(i) {
                Some(addr) => format!("    server replica{} {addr} check\n", i + 1),
                None => format!("    server replica{} 127.0.0.1:9 disabled\n", i + 1),
            })
            .collect();
        // The shipped file names Kubernetes-style replicas; the test swaps in
        // its own listen address and servers, and a stats socket to ask
        // whether the replicas are up.
        let stats = dir.path().join("stats.sock");
        let mut config = String::new();
        for line in template.lines() {
            // `server` and `server-template`
            if line.trim_start().starts_with("server") {
                continue;
            }
            if line.trim_start().starts_with("bind ") {
                config.push_str(&format!("    bind 127.0.0.1:{port}\n"));
                continue;
            }
            config.push_str(line);
            config.push('\n');
            if line.starts_with("global") {
                config.push_str(&format!(
                    "    stats socket {} mode 600 level admin\n",
                    stats.display()
                ));
            }
            if line.starts_with("backend mcp") {
                config.push_str(&servers);
            }
        }
        let cfg = dir.path().join("haproxy.cfg");
        std::fs::write(&cfg, &config).expect("write haproxy.cfg");
        let child = Command::new(haproxy_binary())
            .arg("-db")
            .arg("-f")
            .arg(&cfg)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()
            .expect("spawn haproxy");
        let proxy = Haproxy {
            child,
            url: format!("http://127.0.0.1:{port}/mcp"),
            _dir: dir,
        };
        let ok = wait_until(Duration::from_secs(30), || {
            let up = proxy.replicas_up(&stats);
            up.len() == replicas.len()
        });
        assert!(
            ok,
            "haproxy did not see every replica up in 30 s (config:\n{config})"
        );
        proxy
    }

    /// The names of the replicas HAProxy's health checks see up.
    fn replicas_up(&self, stats: &Path) -> Vec<String> {
        use std::io::{Read, Write};
        let Ok(mut socket) = std::os::unix::net::UnixStream::connect(stats) else {
            return Vec::new();
        };
        if socket.write_all(b"show stat\n").is_err() {
            return Vec::new();
        }
        let mut answer = String::new();
        let _ = socket.read_to_string(&mut answer);
        // CSV: pxname,svname,...,status (18th column)
        answer
            .lines()
            .filter(|l| l.starts_with("mcp,replica"))
            .filter(|l| l.split(',').nth(17) == Some("UP"))
            .map(|l| l.split(',').nth(1).unwrap_or("").to_owned())
            .collect()
    }
}

impl Drop for Haproxy {
    fn drop(&mut self) {
        kill_group(self.child.id());
        let _ = self.child.wait();
    }
}

/// What one MCP POST answered.
#[derive(Debug)]
pub struct Answer {
    pub status: u16,
    /// The `Mcp-Session-Id` response header, if any.
    pub session: Option<String>,
    /// The JSON-RPC response (from a JSON body or the SSE event carrying it).
    pub body: Option<Value>,
    /// The response's headers (`WWW-Authenticate`, `Retry-After`...).
    pub headers: reqwest::header::HeaderMap,
}

impl Answer {
    /// Header `name` as text; empty when absent.
    pub fn header(&self, name: &str) -> &str {
        self.headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
    }

    /// The tool names of an answer to `tools/list`, in its order; `None`
    /// when it holds no tool list.
    pub fn tool_names(&self) -> Option<Vec<String>> {
        let tools = self.body.as_ref()?.pointer("/result/tools")?.as_array()?;
        Some(
            tools
                .iter()
                .filter_map(|t| t["name"].as_str().map(str::to_owned))
                .collect(),
        )
    }
}

/// A 2025-11-25 client speaking MCP over plain HTTP, step by step.
pub struct RawClient {
    http: reqwest::Client,
    /// Where requests go.
    pub url: String,
    /// The session the client holds, once initialised.
    pub session: Option<String>,
    next_id: u64,
    /// The bearer token it sends.
    token: String,
}

impl RawClient {
    /// A client of `url` sending the bearer [`TOKEN`].
    pub fn new(url: &str) -> RawClient {
        RawClient::with_token(url, TOKEN)
    }

    /// A client of `url` sending the bearer `token`.
    pub fn with_token(url: &str, token: &str) -> RawClient {
        RawClient {
            // A connection per request. Over a kept-alive connection,
            // HAProxy (`http-reuse safe`, its default) sends a request on
            // the server connection the previous one used; when that
            // replica has just died it closes the client's connection
            // without an answer, for the client to retry, as browsers do.
            // reqwest does not retry a POST, and a replica dying is what
            // the replica test does.
            http: reqwest::Client::builder()
                .pool_max_idle_per_host(0)
                .build()
                .expect("an HTTP client"),
            url: url.to_owned(),
            session: None,
            next_id: 1,
            token: token.to_owned(),
        }
    }

    /// A client of `url` sending the bearer `token` that keeps its
    /// connection open between requests, as most clients do.
    pub fn keep_alive(url: &str, token: &str) -> RawClient {
        RawClient {
            http: reqwest::Client::new(),
            ..RawClient::with_token(url, token)
        }
    }

    /// `initialize` then `notifications/initialized`; keeps the new session.
    pub async fn initialize(&mut self) -> Answer {
        self.initialize_with(json!({})).await
    }

    /// [`RawClient::initialize`], declaring `capabilities`.
    pub async fn initialize_with(&mut self, capabilities: Value) -> Answer {
        self.session = None;
        let answer = self
            .request(
                "initialize",
                json!({
                    "protocolVersion": "2025-11-25",
                    "capabilities": capabilities,
                    "clientInfo": { "name": "replica-test", "version": "1" },
                }),
            )
            .await;
        assert_eq!(answer.status, 200, "initialize: {answer:?}");
        self.session = answer.session.clone();
        assert!(self.session.is_some(), "no Mcp-Session-Id: {answer:?}");
        let notified = self
            .post(json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }))
            .await;
        assert_eq!(notified.status, 202, "initialized: {notified:?}");
        answer
    }

    /// Sends the request `method` with `params` and reads its answer.
    pub async fn request(&mut self, method: &str, params: Value) -> Answer {
        let id = self.next_id;
        self.next_id += 1;
        self.post(json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }))
            .await
    }

    /// Sends the notification `method` with `params`.
    pub async fn notify(&self, method: &str, params: Value) -> Answer {
        self.post(json!({ "jsonrpc": "2.0", "method": method, "params": params }))
            .await
    }

    /// `tools/call` of `name` with `arguments`.
    pub async fn call(&mut self, name: &str, arguments: Value) -> Answer {
        self.request(
            "tools/call",
            json!({ "name": name, "arguments": arguments }),
        )
        .await
    }

    /// A stateless (2026-07-28) request `method` with `params` (its
    /// `_meta` and the `Mcp-Method` / `Mcp-Name` headers added), outside
    /// any session.
    pub async fn stateless(&mut self, method: &str, params: Value) -> Answer {
        self.stateless_declaring(method, params, json!({})).await
    }

    /// [`stateless`](Self::stateless) from a client that declares
    /// `capabilities` (`{"elicitation": {}}`, say) in its `_meta`.
    pub async fn stateless_declaring(
        &mut self,
        method: &str,
        mut params: Value,
        capabilities: Value,
    ) -> Answer {
        params["_meta"] = json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": { "name": "raw-client", "version": "1" },
            "io.modelcontextprotocol/clientCapabilities": capabilities,
        });
        let id = self.next_id;
        self.next_id += 1;
        let name = params["name"].as_str().map(str::to_owned);
        let message = json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params });
        let mut request = self
            .http
            .post(&self.url)
            .bearer_auth(&self.token)
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json")
            .header("mcp-protocol-version", "2026-07-28")
            .header("mcp-method", method)
            .timeout(Duration::from_secs(30))
            .json(&message);
        if let Some(name) = name {
            request = request.header("mcp-name", name);
        }
        answer(request, &message).await
    }

    async fn post(&self, message: Value) -> Answer {
        let mut request = self
            .http
            .post(&self.url)
            .bearer_auth(&self.token)
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json")
            .timeout(Duration::from_secs(30))
            .json(&message);
        if let Some(session) = &self.session {
            request = request
                .header("mcp-session-id", session)
                .header("mcp-protocol-version", "2025-11-25");
        }
        answer(request, &message).await
    }
}

/// The answer to `request`, which sent `message`.
async fn answer(request: reqwest::RequestBuilder, message: &Value) -> Answer {
    let response = request.send().await.expect("POST to the gateway");
    let status = response.status().as_u16();
    let session = response
        .headers()
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let sse = response
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|t| t.starts_with("text/event-stream"));
    let headers = response.headers().clone();
    let text = response.text().await.unwrap_or_default();
    let id = message.get("id").cloned();
    let body = if sse {
        text.lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .filter_map(|d| serde_json::from_str::<Value>(d.trim()).ok())
            .find(|v| id.is_some() && v.get("id") == id.as_ref())
    } else {
        serde_json::from_str(&text).ok()
    };
    Answer {
        status,
        session,
        body,
        headers,
    }
}

/// The uid another local user's processes run as in these tests.
pub const OTHER_UID: u32 = 65534;

/// Sends the raw HTTP/1.1 `request` to `addr` (`127.0.0.1:PORT`) from a
/// process of uid [`OTHER_UID`], as any local account can (bash's
/// `/dev/tcp`, nothing installed); the whole answer. The test runs as root
/// (CI does) to start that process.
pub fn as_other_user(addr: &str, request: &str) -> String {
    let (host, port) = addr.rsplit_once(':').expect("ADDR:PORT");
    let output = Command::new("/bin/bash")
        .arg("-c")
        .arg(format!(
            "exec 3<>/dev/tcp/{host}/{port} && printf '%s' \"$REQUEST\" >&3 && cat <&3"
        ))
        .env("REQUEST", request)
        .uid(OTHER_UID)
        .gid(OTHER_UID)
        .current_dir("/")
        .output()
        .unwrap_or_else(|e| {
            panic!("cannot run a process as uid {OTHER_UID} (the test needs root): {e}")
        });
    assert!(
        output.status.success(),
        "the other user's client failed: {output:?}"
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// `request`'s raw text: `method path`, the gateway's Host, `headers`,
/// `body` (JSON).
pub fn http_text(addr: &str, method: &str, path: &str, headers: &[&str], body: &str) -> String {
    let mut text = format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\n",
        body.len()
    );
    for header in headers {
        text.push_str(header);
        text.push_str("\r\n");
    }
    text.push_str("\r\n");
    text.push_str(body);
    text
}

pub fn status_of(answer: &str) -> &str {
    answer.get(9..12).unwrap_or(answer)
}

/// A config with the built-in example server (its tool `echo` keeps its
/// name: one upstream) and profiles `ops` and `dev` of it, plus
/// `toolbridge` settings, in `dir`.
pub fn example_config(dir: &Path, settings: Value) -> PathBuf {
    let path = dir.join("config.json");
    let config = json!({
        "toolbridge": settings,
        "mcpServers": { "example": { "command": toolbridge(), "args": ["example-server"] } },
        "profiles": { "ops": { "servers": ["example"] }, "dev": { "servers": ["example"] } },
    });
    std::fs::write(&path, config.to_string()).expect("write config");
    path
}

/// A remote MCP server that needs an OAuth sign-in: a gateway over the
/// example server (tool `echo`) that is the resource server of a real
/// authorization server ([`issuer`]); a client without a token gets its
/// 401 with a bearer challenge naming its metadata.
pub struct Protected {
    /// The authorization server.
    pub issuer: Listening,
    /// The gateway; its `url` is the server's.
    pub gateway: Gateway,
    _dir: tempfile::TempDir,
}

impl Protected {
    /// Starts both, and waits until the gateway serves `echo`.
    pub fn start() -> Protected {
        let issuer = issuer();
        let dir = tempfile::tempdir().expect("tempdir");
        let config = example_config(
            dir.path(),
            json!({ "gateway": { "oauth": { "issuer": format!("http://127.0.0.1:{}", issuer.port) } } }),
        );
        let gateway = Gateway::start(&config, dir.path(), &[]);
        gateway.wait_for_tools(&["echo"]);
        Protected {
            issuer,
            gateway,
            _dir: dir,
        }
    }

    /// `http://127.0.0.1:PORT`, the authorization server's issuer.
    pub fn issuer_url(&self) -> String {
        format!("http://127.0.0.1:{}", self.issuer.port)
    }
}

/// tests/oauth/browser.sh: a user in a browser, with curl. Given an
/// authorization URL of [`issuer`], it walks the provider's own login and
/// consent forms and follows the redirect back to toolbridge's loopback
/// listener. `$BROWSER` of `toolbridge auth login`.
pub fn oauth_browser() -> PathBuf {
    root().join("crates/toolbridge-cli/tests/oauth/browser.sh")
}

/// Signs in at the authorization URL `url` as [`oauth_browser`] does.
pub fn walk_sign_in(url: &str) {
    run_oauth_browser(url, false);
}

/// Declines the sign-in at `url`: the login page's "Cancel", so the
/// provider sends the browser back with `access_denied`.
pub fn decline_sign_in(url: &str) {
    run_oauth_browser(url, true);
}

fn run_oauth_browser(url: &str, decline: bool) {
    let mut command = Command::new(oauth_browser());
    if decline {
        command.env("OAUTH_DECLINE", "1");
    } else {
        command.env_remove("OAUTH_DECLINE");
    }
    let output = command
        .arg(url)
        .stdin(Stdio::null())
        .output()
        .expect("run tests/oauth/browser.sh");
    assert!(
        output.status.success(),
        "browser.sh failed on {url}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
}

/// The authorization server of the OAuth tests (panva's `oidc-provider`,
/// .deps/oidc, with tests/oauth/issuer.mjs), on a port of its own.
pub fn issuer() -> Listening {
    let script = root().join("crates/toolbridge-cli/tests/oauth/issuer.mjs");
    let deps = root().join(".deps/oidc");
    assert!(
        deps.join("node_modules/oidc-provider").exists(),
        "oidc-provider is missing: run scripts/setup-test-deps.sh"
    );
    Listening::start(
        "node",
        &[script.to_string_lossy().into_owned()],
        &[("OIDC_DEPS", &deps.to_string_lossy())],
    )
}

/// An access token of `issuer` for `resource` with `scope` (space-separated;
/// client_credentials, RFC 8707).
pub async fn access_token(issuer: &Listening, resource: &str, scope: &str) -> String {
    let form = url::form_urlencoded::Serializer::new(String::new())
        .extend_pairs([
            ("grant_type", "client_credentials"),
            ("client_id", "gateway-client"),
            ("client_secret", "test-secret"),
            ("resource", resource),
            ("scope", scope),
        ])
        .finish();
    let response = reqwest::Client::new()
        .post(issuer.url("/token"))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(form)
        .send()
        .await
        .expect("POST /token");
    let status = response.status();
    let body: Value = response.json().await.expect("token JSON");
    assert!(status.is_success(), "{body}");
    body["access_token"]
        .as_str()
        .unwrap_or_else(|| panic!("no access_token in {body}"))
        .to_owned()
}

/// The text of `tool`'s result, called by an rmcp `client` with `args`;
/// panics naming the tool when it fails or gives no answer within 60 s.
pub async fn call_text<H: rmcp::ClientHandler>(
    client: &rmcp::service::RunningService<rmcp::RoleClient, H>,
    tool: &str,
    args: Value,
) -> String {
    let params = rmcp::model::CallToolRequestParams::new(tool.to_owned())
        .with_arguments(args.as_object().cloned().unwrap_or_default());
    let result = tokio::time::timeout(Duration::from_secs(60), client.call_tool(params))
        .await
        .unwrap_or_else(|_| panic!("{tool} gave no answer within 60 s"))
        .unwrap_or_else(|e| panic!("{tool}: {e}"));
    result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect()
}
