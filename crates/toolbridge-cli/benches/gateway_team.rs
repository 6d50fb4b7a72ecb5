//! The gateway for a team against the gateway with all of it off (issue 27,
//! "Performance"): calls per second at 64 in flight, the same run,
//! interleaved rounds whose order alternates, medians.
//!
//! - `team`: `toolbridge serve` with a profile (`/mcp/team`), a
//!   JWT-authenticated client (the gateway an OAuth resource server,
//!   `"oauth": {"issuer", "jwksUri"}`: this process is the issuer, with an
//!   ES256 key of its own, its JWKS served on 127.0.0.1, and signs one
//!   access token for the resource `/mcp/team`, `sub` `bench`, that
//!   `toolbridge bench` sends as its bearer token), one rule (`"rules":
//!   [{"clients": ["bench"], "allow": ["*"]}]`), a rate limit (`"limits":
//!   {"client": {"perSecond": 1000000, "burst": 1000000}}`) and tracing on,
//!   its spans batched to an OTLP/HTTP sink in this process (it answers 200
//!   and counts the requests and bytes);
//! - `off`: the same gateway at `/mcp` with the admin token, nothing else.
//!
//! Both in front of `toolbridge example-server` over stdio; the client is
//! `toolbridge bench ... --concurrency 64` (2026-07-28, stateless).
//! A build that does not know `rules` and `limits` yet (they come with the
//! rights branch) refuses them in the config: the bench then says so and
//! measures the team gateway without them.
//!
//! Prints each configuration's median calls/s and `RATIO team/off=<x>`,
//! the median of the per-round ratios (goal: at least 0.9).
//!
//! `cargo bench -p toolbridge-cli --bench gateway_team [-- --rounds 7 --conc 20000]`

mod common;

use std::{
    io::BufRead as _,
    os::unix::process::CommandExt as _,
    path::Path,
    process::{Child, Command, Stdio},
    sync::{
        Arc,
        atomic::{AtomicU64, Ordering},
    },
    time::Duration,
};

use aws_lc_rs::{
    rand::SystemRandom,
    signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair, KeyPair as _},
};
use base64::{Engine as _, engine::general_purpose::URL_SAFE_NO_PAD};
use common::*;
use serde_json::{Value, json};

/// The admin token of both gateways.
const ADMIN: &str = "bench-admin-token-0b5e";

/// A `toolbridge serve`, killed with its process group on drop.
struct Served {
    child: Child,
    url: String,
}

impl Served {
    /// `toolbridge --config CONFIG serve`; `Err` with its stderr when it
    /// stops before listening.
    // The child is waited for in `Drop`.
    #[allow(clippy::zombie_processes)]
    fn start(config: &Path, home: &Path) -> Result<Served, String> {
        let mut child = Command::new(toolbridge_exe())
            .arg("--config")
            .arg(config)
            .args(["-q", "serve", "--listen", "127.0.0.1:0"])
            .env("TOOLBRIDGE_GATEWAY_TOKEN", ADMIN)
            .env("HOME", home)
            .env("XDG_CACHE_HOME", home.join("cache"))
            .env("XDG_DATA_HOME", home.join("data"))
            .env("XDG_CONFIG_HOME", home.join("config"))
            .env_remove("TOOLBRIDGE_CONFIG")
            .env_remove("OTEL_EXPORTER_OTLP_ENDPOINT")
            .env_remove("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .process_group(0)
            .spawn()
            .expect("spawn toolbridge serve");
        let stderr = child.stderr.take().expect("stderr");
        let (tx, rx) = std::sync::mpsc::channel::<Result<String, String>>();
        std::thread::spawn(move || {
            let mut seen = Vec::new();
            for line in std::io::BufReader::new(stderr)
                .lines()
                .map_while(Result::ok)
            {
                if let Some(i) = line.find("listening on http://") {
                    let _ = tx.send(Ok(line[i + "listening on ".len()..].trim().to_owned()));
                }
                seen.push(line);
            }
            let _ = tx.send(Err(seen.join("\n")));
        });
        match rx.recv_timeout(Duration::from_secs(60)) {
            Ok(Ok(url)) => Ok(Served { child, url }),
            other => {
                kill_group(&mut child);
                Err(match other {
                    Ok(Err(log)) => log,
                    _ => "no `listening on` within 60 s".into(),
                })
            }
        }
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        kill_group(&mut self.child);
    }
}

fn kill_group(child: &mut Child) {
    // SAFETY: killpg only sends a signal.
    unsafe { libc::killpg(child.id() as i32, libc::SIGKILL) };
    let _ = child.wait();
}

/// An OTLP/HTTP sink: 200 to every POST, counting requests and bytes.
#[derive(Default)]
struct Sink {
    requests: AtomicU64,
    bytes: AtomicU64,
}

async fn start_sink(sink: Arc<Sink>) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind the sink");
    let addr = listener.local_addr().expect("addr");
    let app = axum::Router::new().route(
        "/v1/traces",
        axum::routing::post(move |body: axum::body::Bytes| {
            let sink = sink.clone();
            async move {
                sink.requests.fetch_add(1, Ordering::Relaxed);
                sink.bytes.fetch_add(body.len() as u64, Ordering::Relaxed);
                ""
            }
        }),
    );
    tokio::spawn(async move { axum::serve(listener, app).await });
    format!("http://{addr}")
}

/// The bench's own OAuth issuer: an ES256 key pair, its public half served
/// as a JWKS at `{url}/jwks` (fetches counted), and access tokens signed
/// with the private half.
struct Issuer {
    url: String,
    pkcs8: Vec<u8>,
    fetches: Arc<AtomicU64>,
}

/// The key's `kid` in the JWKS and the tokens.
const KID: &str = "bench-es256";

async fn start_issuer() -> Issuer {
    let pkcs8 =
        EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &SystemRandom::new())
            .expect("make an ES256 key")
            .as_ref()
            .to_vec();
    let pair = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &pkcs8).expect("the key");
    // An uncompressed P-256 point: 0x04, then x and y, 32 bytes each.
    let point = pair.public_key().as_ref();
    assert_eq!(
        (point.len(), point[0]),
        (65, 4),
        "not an uncompressed point"
    );
    let jwks = json!({ "keys": [{
        "kty": "EC", "crv": "P-256", "alg": "ES256", "use": "sig", "kid": KID,
        "x": URL_SAFE_NO_PAD.encode(&point[1..33]),
        "y": URL_SAFE_NO_PAD.encode(&point[33..]),
    }] });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind the issuer");
    let addr = listener.local_addr().expect("addr");
    let fetches = Arc::new(AtomicU64::new(0));
    let counted = fetches.clone();
    let app = axum::Router::new().route(
        "/jwks",
        axum::routing::get(move || {
            let (jwks, counted) = (jwks.clone(), counted.clone());
            async move {
                counted.fetch_add(1, Ordering::Relaxed);
                axum::Json(jwks)
            }
        }),
    );
    tokio::spawn(async move { axum::serve(listener, app).await });
    Issuer {
        url: format!("http://{addr}"),
        pkcs8,
        fetches,
    }
}

impl Issuer {
    /// An access token of `sub` for the resource `aud`, valid for an hour.
    fn access_token(&self, sub: &str, aud: &str, scope: &str) -> String {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .expect("clock")
            .as_secs();
        let mut header = jsonwebtoken::Header::new(jsonwebtoken::Algorithm::ES256);
        header.kid = Some(KID.into());
        let claims = json!({
            "iss": self.url, "sub": sub, "aud": aud, "scope": scope,
            "iat": now, "nbf": now, "exp": now + 3600,
        });
        jsonwebtoken::encode(
            &header,
            &claims,
            &jsonwebtoken::EncodingKey::from_ec_der(&self.pkcs8),
        )
        .expect("sign the access token")
    }
}

fn write(path: &Path, value: &Value) {
    std::fs::write(path, value.to_string()).expect("write config");
}

/// `toolbridge bench` of `echo` through `url` with `token`: calls/s.
fn bench(home: &Path, url: &str, token: &str, calls: u64, in_flight: u64) -> f64 {
    let config = home.join(format!("client-{}.json", token.len()));
    write(
        &config,
        &json!({ "mcpServers": { "gw": {
            "url": url, "headers": { "Authorization": format!("Bearer {token}") },
        } } }),
    );
    let out = Command::new(toolbridge_exe())
        .arg("--config")
        .arg(&config)
        .args(["-q", "bench", "gw", "echo", "--args"])
        .arg(Value::Object(echo_args()).to_string())
        .args(["--calls", &calls.to_string()])
        .args(["--concurrency", &in_flight.to_string(), "--json"])
        .env("HOME", home)
        .env("XDG_CACHE_HOME", home.join("cache"))
        .env("XDG_DATA_HOME", home.join("data"))
        .env("XDG_CONFIG_HOME", home.join("config"))
        .env_remove("TOOLBRIDGE_CONFIG")
        .stdin(Stdio::null())
        .output()
        .expect("run toolbridge bench");
    let report: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "bench printed no report ({e}): {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    assert_eq!(report["errors"], 0, "calls failed through {url}: {report}");
    report["callsPerSec"].as_f64().expect("callsPerSec")
}

fn main() {
    let opts = Options::from_args(Options {
        rounds: 7,
        seq_calls: 0,
        conc_calls: 20_000,
        in_flight: 64,
        multi_thread: true,
        only: Vec::new(),
    });
    let rt = runtime(true);
    let sink = Arc::new(Sink::default());
    let sink_url = rt.block_on(start_sink(sink.clone()));
    let issuer = rt.block_on(start_issuer());
    let home = tempfile::tempdir().expect("tempdir");
    let home = home.path();
    let server = json!({ "ex": { "command": toolbridge_exe(), "args": ["example-server"] } });
    let profiles = json!({ "team": { "servers": ["ex"] } });
    let team_dir = home.join("team");
    let off_dir = home.join("off");
    for dir in [&team_dir, &off_dir] {
        std::fs::create_dir_all(dir).expect("mkdir");
    }
    let team_config = team_dir.join("config.json");
    let tracing = json!({ "otlpEndpoint": sink_url });
    let oauth = json!({ "issuer": issuer.url, "jwksUri": format!("{}/jwks", issuer.url) });
    let with_rights = json!({
        "tracing": tracing,
        "oauth": oauth,
        "rules": [{ "clients": ["bench"], "allow": ["*"] }],
        "limits": { "client": { "perSecond": 1_000_000, "burst": 1_000_000 } },
    });
    let write_team = |gateway: &Value| {
        write(
            &team_config,
            &json!({ "toolbridge": { "gateway": gateway }, "mcpServers": server, "profiles": profiles }),
        );
    };
    let mut on = vec![
        "a profile",
        "a JWT-authenticated client",
        "tracing to an OTLP sink",
    ];
    write_team(&with_rights);
    let team = match Served::start(&team_config, &team_dir) {
        Ok(team) => {
            on.extend(["a rule", "a rate limit"]);
            team
        }
        Err(e) if e.contains("no setting \"rules\"") || e.contains("no setting \"limits\"") => {
            println!(
                "NOTE: this build refuses toolbridge.gateway.rules/limits (they come with the \
                 rights branch); the team gateway is measured without them"
            );
            write_team(&json!({ "tracing": tracing, "oauth": oauth }));
            Served::start(&team_config, &team_dir).expect("the team gateway")
        }
        Err(e) => panic!("the team gateway: {e}"),
    };
    let off_config = off_dir.join("config.json");
    write(
        &off_config,
        &json!({ "mcpServers": server, "profiles": profiles }),
    );
    let off = Served::start(&off_config, &off_dir).expect("the gateway with all off");
    let team_url = team.url.replace("/mcp", "/mcp/team");
    // The resource of `/mcp/team` is the address the gateway listens on
    // and the path: the token's `aud`.
    let client_token = issuer.access_token("bench", &team_url, "tools.call");
    println!(
        "gateway team benchmark: {} rounds interleaved, {} echo calls at {} in flight per \
         gateway per round; team: {}",
        opts.rounds,
        opts.conc_calls,
        opts.in_flight,
        on.join(", ")
    );
    // Warm both: servers started, caches filled.
    bench(home, &team_url, &client_token, 500, opts.in_flight);
    bench(home, &off.url, ADMIN, 500, opts.in_flight);
    let (mut team_rates, mut off_rates, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
    for round in 0..opts.rounds {
        let measure = |which: usize| match which {
            0 => bench(
                home,
                &team_url,
                &client_token,
                opts.conc_calls,
                opts.in_flight,
            ),
            _ => bench(home, &off.url, ADMIN, opts.conc_calls, opts.in_flight),
        };
        let (t, o) = if round % 2 == 0 {
            let t = measure(0);
            (t, measure(1))
        } else {
            let o = measure(1);
            (measure(0), o)
        };
        println!("round {round}: team {t:.0} calls/s, off {o:.0} calls/s");
        team_rates.push(t);
        off_rates.push(o);
        ratios.push(t / o);
    }
    println!();
    println!("{:<6} {:>14}", "", "calls/s p50");
    println!("{:<6} {:>14.0}", "team", median(&team_rates));
    println!("{:<6} {:>14.0}", "off", median(&off_rates));
    println!(
        "OTLP sink: {} exports, {} KiB of spans",
        sink.requests.load(Ordering::Relaxed),
        sink.bytes.load(Ordering::Relaxed) / 1024
    );
    println!(
        "issuer: {} fetches of its JWKS",
        issuer.fetches.load(Ordering::Relaxed)
    );
    println!();
    println!("RATIO team/off={:.3}", median(&ratios));
}
