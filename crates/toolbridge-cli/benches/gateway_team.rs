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
//! `-- --only FEATURE[,FEATURE...]` (`profile`, `jwt`, `rule`, `limit`,
//! `trace`, or `each` for all five) measures instead the gateway with all
//! off against gateways that have just that one feature on, each its own
//! `toolbridge serve`, in the same interleaved rounds, and prints
//! `RATIO FEATURE/off` for each, so each feature's cost is known apart:
//!
//! - `profile`: the all-off gateway's config, called at `/mcp/team`;
//! - `jwt`: the OAuth resource server, the JWT client at `/mcp`;
//! - `rule`: the JWT client and the rule: rules narrow named-token and
//!   OAuth clients only (the admin token is the gateway's owner), so the
//!   rule is measured with the JWT client, and `jwt` with it (the rule's
//!   own cost is `RATIO rule/jwt`);
//! - `limit`: the rate limit, the admin token at `/mcp` (limits count
//!   every client);
//! - `trace`: tracing to the sink, the admin token at `/mcp`.
//!
//! `cargo bench -p toolbridge-cli --bench gateway_team [-- --rounds 7 --conc 20000] [--only each]`

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

/// One `toolbridge bench` run through one gateway.
#[derive(Debug, Clone, Copy)]
struct Sample {
    calls_per_sec: f64,
    /// CPU time per call, in µs, of the gateway and its upstream (the
    /// example server, its child) together.
    served_us: f64,
    /// CPU time per call, in µs, of the client (`toolbridge bench`).
    client_us: f64,
}

impl Sample {
    /// CPU per call of the whole path: client, gateway and upstream.
    fn total_us(&self) -> f64 {
        self.served_us + self.client_us
    }
}

/// CPU time (user and system) process `pid` has used so far, from
/// `/proc/PID/stat`; zero once it is gone.
fn cpu_of(pid: u32) -> Duration {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // After the command's name, `(...)`: field 3 on; utime and stime are
    // fields 14 and 15, in clock ticks.
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .map_or("", |(_, rest)| rest)
        .split_whitespace()
        .collect();
    let ticks: u64 = [11, 12]
        .iter()
        .filter_map(|&i| fields.get(i)?.parse::<u64>().ok())
        .sum();
    // SAFETY: sysconf only reads a constant.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as f64;
    Duration::from_secs_f64(ticks as f64 / hz)
}

/// CPU time of process `pid` and its children (the gateway's upstream).
fn cpu_of_tree(pid: u32) -> Duration {
    let mut total = cpu_of(pid);
    let tasks = std::fs::read_dir(format!("/proc/{pid}/task"))
        .into_iter()
        .flatten();
    for task in tasks.flatten() {
        let children = std::fs::read_to_string(task.path().join("children")).unwrap_or_default();
        for child in children.split_whitespace().filter_map(|c| c.parse().ok()) {
            total += cpu_of(child);
        }
    }
    total
}

/// CPU time of this process's children that ended and were waited for
/// (each `toolbridge bench`).
fn cpu_of_ended_children() -> Duration {
    // SAFETY: getrusage writes into the struct we pass and nothing else.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let rc = unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage) };
    assert_eq!(rc, 0, "getrusage failed");
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    tv(usage.ru_utime) + tv(usage.ru_stime)
}

/// `toolbridge bench` of `echo` through `m`: calls/s, and the CPU per call
/// of the gateway (with its upstream) and of the client.
fn bench(home: &Path, m: &Measured, calls: u64, in_flight: u64) -> Sample {
    let config = home.join(format!("client-{}.json", m.label));
    write(
        &config,
        &json!({ "mcpServers": { "gw": {
            "url": m.url, "headers": { "Authorization": format!("Bearer {}", m.token) },
        } } }),
    );
    let gateway = m.served.child.id();
    let (served_before, client_before) = (cpu_of_tree(gateway), cpu_of_ended_children());
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
    let per_call = |d: Duration| d.as_secs_f64() * 1e6 / calls as f64;
    let served_us = per_call(cpu_of_tree(gateway).saturating_sub(served_before));
    let client_us = per_call(cpu_of_ended_children().saturating_sub(client_before));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "bench printed no report ({e}): {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    assert_eq!(
        report["errors"], 0,
        "calls failed through {}: {report}",
        m.url
    );
    Sample {
        calls_per_sec: report["callsPerSec"].as_f64().expect("callsPerSec"),
        served_us,
        client_us,
    }
}

/// The five features of the goal, as `--only` names them.
const FEATURES: [&str; 5] = ["profile", "jwt", "rule", "limit", "trace"];

/// A gateway measured: its label in the rounds and the table, where
/// `toolbridge bench` calls it, with which bearer token.
struct Measured {
    label: &'static str,
    url: String,
    token: String,
    served: Served,
}

/// The config of a gateway with `gateway` as its `toolbridge.gateway`
/// settings (none: all off), in front of the example server, with the
/// `team` profile; written into `home/label`.
fn config(
    home: &Path,
    label: &str,
    gateway: Option<&Value>,
) -> (std::path::PathBuf, std::path::PathBuf) {
    let dir = home.join(label);
    std::fs::create_dir_all(&dir).expect("mkdir");
    let mut config = json!({
        "mcpServers": { "ex": { "command": toolbridge_exe(), "args": ["example-server"] } },
        "profiles": { "team": { "servers": ["ex"] } },
    });
    if let Some(gateway) = gateway {
        config["toolbridge"] = json!({ "gateway": gateway });
    }
    let path = dir.join("config.json");
    write(&path, &config);
    (path, dir)
}

/// The gateways `features` name, each all off but that one.
fn features_alone(
    home: &Path,
    features: &[&'static str],
    tracing: &Value,
    oauth: &Value,
    issuer: &Issuer,
) -> Vec<Measured> {
    let rule = json!([{ "clients": ["bench"], "allow": ["*"] }]);
    let limit = json!({ "client": { "perSecond": 1_000_000, "burst": 1_000_000 } });
    features
        .iter()
        .map(|&label| {
            let gateway = match label {
                "profile" => None,
                "jwt" => Some(json!({ "oauth": oauth })),
                "rule" => Some(json!({ "oauth": oauth, "rules": rule })),
                "limit" => Some(json!({ "limits": limit })),
                "trace" => Some(json!({ "tracing": tracing })),
                other => unreachable!("no feature {other}"),
            };
            let (path, dir) = config(home, label, gateway.as_ref());
            let served =
                Served::start(&path, &dir).unwrap_or_else(|e| panic!("the {label} gateway: {e}"));
            let url = match label {
                "profile" => served.url.replace("/mcp", "/mcp/team"),
                _ => served.url.clone(),
            };
            let token = match label {
                // The resource of `/mcp`: the address the gateway listens
                // on and the path.
                "jwt" | "rule" => issuer.access_token("bench", &url, "tools.call"),
                _ => ADMIN.to_owned(),
            };
            Measured {
                label,
                url,
                token,
                served,
            }
        })
        .collect()
}

/// The features `--only` names, in [`FEATURES`]' order (`each`: all five;
/// `rule` brings `jwt`, its baseline); empty without `--only`.
fn named_features(only: &[String]) -> Vec<&'static str> {
    for word in only {
        assert!(
            word == "each" || FEATURES.contains(&word.as_str()),
            "--only takes {} or each, not {word:?}",
            FEATURES.join(", ")
        );
    }
    let named = |f: &str| only.iter().any(|w| w == f || w == "each");
    FEATURES
        .into_iter()
        .filter(|&f| named(f) || (f == "jwt" && named("rule")))
        .collect()
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
    let features = named_features(&opts.only);
    let rt = runtime(true);
    let sink = Arc::new(Sink::default());
    let sink_url = rt.block_on(start_sink(sink.clone()));
    let issuer = rt.block_on(start_issuer());
    let home = tempfile::tempdir().expect("tempdir");
    let home = home.path();
    let tracing = json!({ "otlpEndpoint": sink_url });
    let oauth = json!({ "issuer": issuer.url, "jwksUri": format!("{}/jwks", issuer.url) });
    let (off_config, off_dir) = config(home, "off", None);
    let off = Served::start(&off_config, &off_dir).expect("the gateway with all off");
    let off = Measured {
        label: "off",
        url: off.url.clone(),
        token: ADMIN.to_owned(),
        served: off,
    };
    let mut measured = Vec::new();
    if features.is_empty() {
        let with_rights = json!({
            "tracing": tracing,
            "oauth": oauth,
            "rules": [{ "clients": ["bench"], "allow": ["*"] }],
            "limits": { "client": { "perSecond": 1_000_000, "burst": 1_000_000 } },
        });
        let mut on = vec![
            "a profile",
            "a JWT-authenticated client",
            "tracing to an OTLP sink",
        ];
        let (team_config, team_dir) = config(home, "team", Some(&with_rights));
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
                let (team_config, team_dir) = config(
                    home,
                    "team",
                    Some(&json!({ "tracing": tracing, "oauth": oauth })),
                );
                Served::start(&team_config, &team_dir).expect("the team gateway")
            }
            Err(e) => panic!("the team gateway: {e}"),
        };
        let team_url = team.url.replace("/mcp", "/mcp/team");
        // The resource of `/mcp/team` is the address the gateway listens
        // on and the path: the token's `aud`.
        let token = issuer.access_token("bench", &team_url, "tools.call");
        println!(
            "gateway team benchmark: {} rounds interleaved, {} echo calls at {} in flight per \
             gateway per round; team: {}",
            opts.rounds,
            opts.conc_calls,
            opts.in_flight,
            on.join(", ")
        );
        measured.push(Measured {
            label: "team",
            url: team_url,
            token,
            served: team,
        });
        measured.push(off);
    } else {
        println!(
            "gateway team benchmark, each feature alone: {} rounds interleaved, {} echo calls at \
             {} in flight per gateway per round; off, and off with one of: {}",
            opts.rounds,
            opts.conc_calls,
            opts.in_flight,
            features.join(", ")
        );
        measured.push(off);
        measured.extend(features_alone(home, &features, &tracing, &oauth, &issuer));
    }
    // Warm them all: servers started, caches filled.
    for m in &measured {
        bench(home, m, 500, opts.in_flight);
    }
    let mut samples: Vec<Vec<Sample>> = vec![Vec::new(); measured.len()];
    for round in 0..opts.rounds {
        // The order turns each round: with two, it alternates.
        let n = measured.len();
        for k in 0..n {
            let i = (k + round) % n;
            samples[i].push(bench(home, &measured[i], opts.conc_calls, opts.in_flight));
        }
        let line: Vec<String> = measured
            .iter()
            .zip(&samples)
            .map(|(m, s)| format!("{} {:.0} calls/s", m.label, s[round].calls_per_sec))
            .collect();
        println!("round {round}: {}", line.join(", "));
    }
    let p50 = |s: &[Sample], f: fn(&Sample) -> f64| median(&s.iter().map(f).collect::<Vec<_>>());
    println!();
    println!(
        "{:<8} {:>12} {:>22} {:>18} {:>16}",
        "", "calls/s p50", "gateway+upstream CPU", "client CPU", "all CPU"
    );
    for (m, s) in measured.iter().zip(&samples) {
        println!(
            "{:<8} {:>12.0} {:>17.1} µs/call {:>13.1} µs/call {:>11.1} µs/call",
            m.label,
            p50(s, |s| s.calls_per_sec),
            p50(s, |s| s.served_us),
            p50(s, |s| s.client_us),
            p50(s, Sample::total_us),
        );
    }
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
    let samples_of = |label: &str| {
        let i = measured.iter().position(|m| m.label == label)?;
        Some(&samples[i])
    };
    // The medians of the per-round ratios of `num` to `den`: calls/s (the
    // goal's measure), and the CPU the whole path spends per call, `den`'s
    // over `num`'s: what calls/s would be on cores nothing else uses, which
    // the load of a shared machine moves far less.
    let ratio = |num: &str, den: &str| {
        if let (Some(n), Some(d)) = (samples_of(num), samples_of(den)) {
            let rate: Vec<f64> = n
                .iter()
                .zip(d)
                .map(|(n, d)| n.calls_per_sec / d.calls_per_sec)
                .collect();
            let cpu: Vec<f64> = n
                .iter()
                .zip(d)
                .map(|(n, d)| d.total_us() / n.total_us())
                .collect();
            let served: Vec<f64> = n
                .iter()
                .zip(d)
                .map(|(n, d)| n.served_us - d.served_us)
                .collect();
            println!(
                "RATIO {num}/{den}={:.3}  (CPU: {:.3}; the gateway's {:+.1} µs per call)",
                median(&rate),
                median(&cpu),
                median(&served)
            );
        }
    };
    for m in &measured {
        if m.label != "off" {
            ratio(m.label, "off");
        }
    }
    ratio("rule", "jwt");
}
