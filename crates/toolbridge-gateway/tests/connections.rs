//! The gateway's accept loop (`http::serve`, src/connections.rs) as a
//! client sees it on raw sockets on 127.0.0.1: TCP_NODELAY on every
//! accepted socket (issue 31: without it every client that reads a response
//! in two segments waited ~40 ms per call), and the limits of issue 32: a
//! header timeout against slowloris, an idle timeout, a connection cap
//! answered with 503 while the open connections go on. Nothing here times
//! the server: every wait is bounded by a deadline and asserts an event.

use std::{
    net::SocketAddr,
    os::fd::{AsRawFd, BorrowedFd},
    time::Duration,
};

use axum::{Router, routing::get};
use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::TcpStream,
    time::{Instant, timeout},
};
use tokio_util::sync::CancellationToken;
use toolbridge_gateway::{ConnectionLimits, http};

/// Far longer than anything here takes on a loaded machine.
const DEADLINE: Duration = Duration::from_secs(20);

/// A gateway's accept loop serving `/ok` (an instant answer) and `/slow`
/// (one that takes `slow`), with `limits`; stopped when dropped.
struct Served {
    addr: SocketAddr,
    stop: CancellationToken,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Served {
    fn drop(&mut self) {
        self.stop.cancel();
        self.task.abort();
    }
}

async fn serve(limits: ConnectionLimits, slow: Duration) -> Served {
    let router = Router::new().route("/ok", get(|| async { "ok" })).route(
        "/slow",
        get(move || async move {
            tokio::time::sleep(slow).await;
            "slow"
        }),
    );
    let listener = http::bind("127.0.0.1:0".parse().expect("address"))
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("local address");
    let stop = CancellationToken::new();
    let task = tokio::spawn({
        let stop = stop.clone();
        async move {
            http::serve(listener, router, limits, stop)
                .await
                .expect("serve");
        }
    });
    Served { addr, stop, task }
}

fn limits(max_connections: usize, header: Duration, idle: Duration) -> ConnectionLimits {
    ConnectionLimits {
        max_connections,
        header_timeout: header,
        idle_timeout: idle,
    }
}

/// One keep-alive request for `path` on `stream`; returns the status line
/// and the body.
async fn get_on(stream: &mut TcpStream, path: &str) -> (String, String) {
    let request = format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
    stream
        .write_all(request.as_bytes())
        .await
        .expect("write a request");
    timeout(DEADLINE, read_response(stream))
        .await
        .expect("an answer before the deadline")
}

async fn read_response(stream: &mut TcpStream) -> (String, String) {
    let mut data = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        if let Some(end) = find(&data, b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&data[..end]).into_owned();
            let length: usize = head
                .lines()
                .find_map(|l| {
                    let (name, value) = l.split_once(':')?;
                    name.eq_ignore_ascii_case("content-length")
                        .then(|| value.trim().parse().ok())?
                })
                .expect("a Content-Length");
            while data.len() < end + 4 + length {
                let n = stream.read(&mut chunk).await.expect("read the body");
                assert!(n > 0, "the connection closed inside a body: {head}");
                data.extend_from_slice(&chunk[..n]);
            }
            let status = head.lines().next().unwrap_or_default().to_owned();
            let body = String::from_utf8_lossy(&data[end + 4..end + 4 + length]).into_owned();
            return (status, body);
        }
        let n = stream.read(&mut chunk).await.expect("read a response");
        assert!(n > 0, "the connection closed before an answer");
        data.extend_from_slice(&chunk[..n]);
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// Waits (at most [`DEADLINE`]) for the server to close `stream`: a read of
/// 0 bytes or a reset. Returns how long that took.
async fn closed_by_server(stream: &mut TcpStream) -> Duration {
    let start = Instant::now();
    let mut chunk = [0u8; 1024];
    match timeout(DEADLINE, stream.read(&mut chunk)).await {
        Err(_) => panic!("the server kept the connection open past {DEADLINE:?}"),
        Ok(Ok(0) | Err(_)) => start.elapsed(),
        Ok(Ok(n)) => panic!(
            "unexpected bytes from the server: {:?}",
            String::from_utf8_lossy(&chunk[..n])
        ),
    }
}

/// The server's end of the connection `client` opened to `server`: the
/// socket among this process's descriptors (the server runs in the test
/// process) whose local address is `server` and peer is `client`.
fn accepted_socket(server: SocketAddr, client: SocketAddr) -> std::net::TcpStream {
    for entry in std::fs::read_dir("/proc/self/fd").expect("/proc/self/fd") {
        let Ok(fd) = entry
            .expect("an fd entry")
            .file_name()
            .to_string_lossy()
            .parse()
        else {
            continue;
        };
        // SAFETY: the descriptor is only duplicated, right away; one that
        // was closed since the listing makes the duplication fail, which is
        // skipped.
        let borrowed = unsafe { BorrowedFd::borrow_raw(fd) };
        let Ok(owned) = borrowed.try_clone_to_owned() else {
            continue;
        };
        let socket = std::net::TcpStream::from(owned);
        if socket.local_addr().ok() == Some(server) && socket.peer_addr().ok() == Some(client) {
            return socket;
        }
    }
    panic!("no socket of this process is the server's end of {client} -> {server}");
}

/// Issue 31: every accepted socket has TCP_NODELAY, so no response waits
/// for the client's delayed ACK of its previous segment.
#[tokio::test]
async fn accepted_sockets_have_tcp_nodelay() {
    let served = serve(ConnectionLimits::default(), Duration::ZERO).await;
    for _ in 0..3 {
        let mut client = TcpStream::connect(served.addr).await.expect("connect");
        // An answer: the connection was accepted and set up.
        assert_eq!(get_on(&mut client, "/ok").await.0, "HTTP/1.1 200 OK");
        let server_end = accepted_socket(served.addr, client.local_addr().expect("local"));
        assert!(
            server_end.nodelay().expect("read TCP_NODELAY"),
            "the gateway's accepted socket (fd {}) has Nagle's algorithm on",
            server_end.as_raw_fd()
        );
    }
}

/// A client that sends its headers a line every 100 ms (slowloris) is
/// closed once the header timeout passes, though bytes keep coming.
#[tokio::test]
async fn a_client_dribbling_its_headers_is_closed_after_the_header_timeout() {
    let header = Duration::from_millis(500);
    let served = serve(limits(16, header, Duration::from_secs(60)), Duration::ZERO).await;
    let mut client = TcpStream::connect(served.addr).await.expect("connect");
    client
        .write_all(b"GET /ok HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        .await
        .expect("write");
    let start = Instant::now();
    let mut ticks = tokio::time::interval(Duration::from_millis(100));
    let mut closed = false;
    let mut chunk = [0u8; 256];
    // At most 200 lines (20 s): the server must close long before.
    for line in 0..200 {
        ticks.tick().await;
        if client
            .write_all(format!("X-Slow-{line}: a\r\n").as_bytes())
            .await
            .is_err()
        {
            closed = true;
            break;
        }
        match timeout(Duration::from_millis(1), client.read(&mut chunk)).await {
            Ok(Ok(0)) | Ok(Err(_)) => {
                closed = true;
                break;
            }
            Ok(Ok(n)) => panic!(
                "an answer to unfinished headers: {:?}",
                String::from_utf8_lossy(&chunk[..n])
            ),
            Err(_) => {}
        }
    }
    assert!(closed, "the dribbling client was never closed");
    let took = start.elapsed();
    assert!(
        took >= header - Duration::from_millis(100),
        "closed after {took:?}, before the header timeout"
    );
}

/// A connection that sends nothing at all is closed at the header timeout
/// too: its first request's head never started.
#[tokio::test]
async fn a_silent_new_connection_is_closed_after_the_header_timeout() {
    let header = Duration::from_millis(300);
    let served = serve(limits(16, header, Duration::from_secs(60)), Duration::ZERO).await;
    let mut client = TcpStream::connect(served.addr).await.expect("connect");
    let took = closed_by_server(&mut client).await;
    assert!(took >= header - Duration::from_millis(100), "{took:?}");
}

/// A keep-alive connection with no request for the idle timeout is closed;
/// one that keeps making requests, each sooner than that, is not; a
/// request that takes longer than both timeouts is answered.
#[tokio::test]
async fn idle_connections_are_closed_and_busy_ones_are_not() {
    let idle = Duration::from_millis(400);
    let served = serve(
        limits(16, Duration::from_millis(300), idle),
        Duration::from_millis(1500),
    )
    .await;

    let mut active = TcpStream::connect(served.addr).await.expect("connect");
    let start = Instant::now();
    let mut ticks = tokio::time::interval(Duration::from_millis(100));
    // Twelve requests 100 ms apart: 1.2 s, three idle timeouts.
    for _ in 0..12 {
        ticks.tick().await;
        assert_eq!(get_on(&mut active, "/ok").await.0, "HTTP/1.1 200 OK");
    }
    assert!(start.elapsed() > idle * 2);

    // Slower than both timeouts, yet answered: a request in progress is
    // not timed.
    let (status, body) = get_on(&mut active, "/slow").await;
    assert_eq!(
        (status.as_str(), body.as_str()),
        ("HTTP/1.1 200 OK", "slow")
    );

    // Now idle: closed, not before the idle timeout.
    let took = closed_by_server(&mut active).await;
    assert!(took >= idle - Duration::from_millis(100), "{took:?}");
}

/// Past the cap a new connection is answered 503 (saying why and what to
/// change) and closed, while the connections already open keep working;
/// once one closes, a new connection is served again.
#[tokio::test]
async fn past_the_connection_cap_a_new_connection_gets_503_and_open_ones_go_on() {
    let cap = 4;
    let served = serve(
        limits(cap, Duration::from_secs(10), Duration::from_secs(60)),
        Duration::ZERO,
    )
    .await;
    let mut open = Vec::new();
    for _ in 0..cap {
        let mut client = TcpStream::connect(served.addr).await.expect("connect");
        assert_eq!(get_on(&mut client, "/ok").await.0, "HTTP/1.1 200 OK");
        open.push(client);
    }
    for _ in 0..3 {
        let mut extra = TcpStream::connect(served.addr).await.expect("connect");
        let (status, body) = get_on(&mut extra, "/ok").await;
        assert_eq!(status, "HTTP/1.1 503 Service Unavailable", "{body}");
        assert!(
            body.contains("4 connections") && body.contains("--max-connections"),
            "{body}"
        );
        closed_by_server(&mut extra).await;
    }
    for client in &mut open {
        assert_eq!(get_on(client, "/ok").await.0, "HTTP/1.1 200 OK");
    }
    drop(open.pop());
    // The closed connection's slot comes back once the server has seen the
    // close: poll, at most 200 tries.
    let mut served_again = false;
    for _ in 0..200 {
        let mut client = TcpStream::connect(served.addr).await.expect("connect");
        let (status, _) = get_on(&mut client, "/ok").await;
        if status == "HTTP/1.1 200 OK" {
            served_again = true;
            break;
        }
        assert_eq!(status, "HTTP/1.1 503 Service Unavailable");
        tokio::task::yield_now().await;
    }
    assert!(
        served_again,
        "a freed slot was never given to a new connection"
    );
}

/// 48 slowloris connections under the cap do not keep a well-behaved client
/// from being served, over new connections and a kept one.
#[tokio::test]
async fn a_well_behaved_client_is_served_during_a_slowloris_flood() {
    let served = serve(
        limits(64, Duration::from_secs(5), Duration::from_secs(60)),
        Duration::ZERO,
    )
    .await;
    let mut flood = Vec::new();
    for i in 0..48 {
        let mut attacker = TcpStream::connect(served.addr).await.expect("connect");
        attacker
            .write_all(format!("GET /ok HTTP/1.1\r\nX-Flood-{i}: ").as_bytes())
            .await
            .expect("write");
        flood.push(attacker);
    }
    let mut kept = TcpStream::connect(served.addr).await.expect("connect");
    for _ in 0..20 {
        assert_eq!(get_on(&mut kept, "/ok").await.0, "HTTP/1.1 200 OK");
        let mut fresh = TcpStream::connect(served.addr).await.expect("connect");
        assert_eq!(get_on(&mut fresh, "/ok").await.0, "HTTP/1.1 200 OK");
    }
    // The flood is still there: nothing answered it.
    let mut chunk = [0u8; 64];
    for attacker in &mut flood {
        assert!(
            timeout(Duration::from_millis(1), attacker.read(&mut chunk))
                .await
                .is_err(),
            "an attacker's half-sent request got an answer or a close"
        );
    }
}
