//! [`RedirectListener`]: the loopback HTTP listener the authorization
//! server sends the browser back to (`http://127.0.0.1:PORT/callback`, RFC
//! 8252 §7.3). It answers the one request with the code and the state
//! toolbridge sent, and shows the user a page saying they can close it.
//!
//! Any local program can reach the port: a request to the callback with
//! another `state` (a forged redirect, or a stale tab of another sign-in)
//! is answered 400 and ignored, and the wait for the real one goes on; it
//! can neither end the sign-in nor make the page say "Signed in".

use std::{net::Ipv4Addr, time::Duration};

use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::{TcpListener, TcpStream},
};

/// The path the browser comes back to.
const CALLBACK_PATH: &str = "/callback";
/// The most of a request head read (a browser's is a few KiB).
const MAX_HEAD: usize = 16 * 1024;
/// How long one connection may take to send its request head.
const READ_TIMEOUT: Duration = Duration::from_secs(10);

/// A listener on 127.0.0.1 waiting for the authorization redirect.
pub struct RedirectListener {
    /// Bound on 127.0.0.1.
    listener: TcpListener,
    /// `http://127.0.0.1:PORT/callback`.
    redirect_uri: String,
}

impl RedirectListener {
    /// Listens on 127.0.0.1: on `port` when it is given and free (a client
    /// registered with that redirect URI keeps working), else on a port
    /// the system picks.
    pub async fn bind(port: Option<u16>) -> std::io::Result<Self> {
        let listener = match port {
            Some(port) => match TcpListener::bind((Ipv4Addr::LOCALHOST, port)).await {
                Ok(listener) => listener,
                Err(_) => TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await?,
            },
            None => TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await?,
        };
        let port = listener.local_addr()?.port();
        Ok(RedirectListener {
            listener,
            redirect_uri: format!("http://127.0.0.1:{port}{CALLBACK_PATH}"),
        })
    }

    /// The redirect URI to register and send.
    pub fn redirect_uri(&self) -> &str {
        &self.redirect_uri
    }

    /// Waits for the browser's request to the callback path carrying
    /// `state` (the one sent to the authorization server; `None`: any) and
    /// returns its full URL (query included). Requests for other paths (a
    /// favicon) get 404, callbacks with another state 400, and the wait
    /// goes on.
    pub async fn accept(&self, state: Option<&str>) -> std::io::Result<String> {
        let base = self.redirect_uri.trim_end_matches(CALLBACK_PATH);
        loop {
            let (mut stream, _) = self.listener.accept().await?;
            let Ok(Ok(target)) = tokio::time::timeout(READ_TIMEOUT, read_target(&mut stream)).await
            else {
                continue;
            };
            if target.split('?').next() != Some(CALLBACK_PATH) {
                let _ = respond(&mut stream, "404 Not Found", "Not found.").await;
                continue;
            }
            let url = format!("{base}{target}");
            let given = url::Url::parse(&url).ok().and_then(|u| {
                u.query_pairs()
                    .find(|(k, _)| k == "state")
                    .map(|(_, v)| v.into_owned())
            });
            if let Some(state) = state
                && given.as_deref() != Some(state)
            {
                tracing::info!("ignored a sign-in callback whose state is not this sign-in's");
                let _ = respond(
                    &mut stream,
                    "400 Bad Request",
                    "This is not the sign-in toolbridge is waiting for; it was ignored.",
                )
                .await;
                continue;
            }
            let failed = target.contains("error=");
            let page = if failed {
                "Signing in failed; toolbridge says why. You can close this tab."
            } else {
                "Signed in. You can close this tab and go back to toolbridge."
            };
            let _ = respond(&mut stream, "200 OK", page).await;
            return Ok(url);
        }
    }
}

/// The request target of a `GET` (`/callback?code=...&state=...`).
async fn read_target(stream: &mut TcpStream) -> std::io::Result<String> {
    let mut head = Vec::new();
    let mut buf = [0u8; 2048];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < MAX_HEAD {
        let n = stream.read(&mut buf).await?;
        if n == 0 {
            break;
        }
        head.extend_from_slice(&buf[..n]);
    }
    let text = String::from_utf8_lossy(&head);
    let mut parts = text.lines().next().unwrap_or_default().split_whitespace();
    match (parts.next(), parts.next()) {
        (Some("GET"), Some(target)) if target.starts_with('/') => Ok(target.to_owned()),
        _ => Err(std::io::Error::other("not a GET request")),
    }
}

async fn respond(stream: &mut TcpStream, status: &str, text: &str) -> std::io::Result<()> {
    let body =
        format!("<!doctype html><meta charset=utf-8><title>toolbridge</title><p>{text}</p>\n");
    let response = format!(
        "HTTP/1.1 {status}\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {}\r\n\
         Cache-Control: no-store\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(response.as_bytes()).await?;
    stream.shutdown().await
}

#[cfg(test)]
mod tests {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    use super::*;

    async fn get(uri: &str, path: &str) -> String {
        let addr = uri
            .trim_start_matches("http://")
            .trim_end_matches(CALLBACK_PATH);
        let mut stream = TcpStream::connect(addr).await.unwrap();
        stream
            .write_all(format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\n\r\n").as_bytes())
            .await
            .unwrap();
        let mut answer = String::new();
        stream.read_to_string(&mut answer).await.unwrap();
        answer
    }

    #[tokio::test]
    async fn the_browser_lands_on_the_callback_and_other_paths_are_not_found() {
        let listener = RedirectListener::bind(None).await.unwrap();
        let uri = listener.redirect_uri().to_owned();
        assert!(uri.starts_with("http://127.0.0.1:"), "{uri}");
        let browser = tokio::spawn({
            let uri = uri.clone();
            async move {
                let favicon = get(&uri, "/favicon.ico").await;
                let callback = get(&uri, "/callback?code=c1&state=s1").await;
                (favicon, callback)
            }
        });
        let landed = listener.accept(Some("s1")).await.unwrap();
        assert_eq!(landed, format!("{uri}?code=c1&state=s1"));
        let (favicon, callback) = browser.await.unwrap();
        assert!(favicon.starts_with("HTTP/1.1 404"), "{favicon}");
        assert!(callback.starts_with("HTTP/1.1 200"), "{callback}");
        assert!(callback.contains("Signed in"), "{callback}");
    }

    #[tokio::test]
    async fn a_registered_port_is_reused_when_free() {
        let first = RedirectListener::bind(None).await.unwrap();
        let port = first.listener.local_addr().unwrap().port();
        // Taken: another port.
        let second = RedirectListener::bind(Some(port)).await.unwrap();
        assert_ne!(second.redirect_uri(), first.redirect_uri());
        drop(first);
        let third = RedirectListener::bind(Some(port)).await.unwrap();
        assert_eq!(
            third.redirect_uri(),
            format!("http://127.0.0.1:{port}/callback")
        );
    }

    /// Issue 32's fourteenth finding: a forged callback (wrong `state`) was
    /// answered "Signed in" and ended the real sign-in. It is refused and
    /// the real callback, after it, is the one taken.
    #[tokio::test]
    async fn a_forged_callback_is_ignored_and_the_real_one_still_lands() {
        let listener = RedirectListener::bind(None).await.unwrap();
        let uri = listener.redirect_uri().to_owned();
        let attacker = tokio::spawn({
            let uri = uri.clone();
            async move {
                let forged = get(&uri, "/callback?code=evil&state=guessed").await;
                let stateless = get(&uri, "/callback?code=evil").await;
                let real = get(&uri, "/callback?code=good&state=s%201").await;
                (forged, stateless, real)
            }
        });
        let landed = listener.accept(Some("s 1")).await.unwrap();
        assert_eq!(landed, format!("{uri}?code=good&state=s%201"));
        let (forged, stateless, real) = attacker.await.unwrap();
        for refused in [&forged, &stateless] {
            assert!(refused.starts_with("HTTP/1.1 400"), "{refused}");
            assert!(!refused.contains("Signed in"), "{refused}");
        }
        assert!(real.contains("Signed in"), "{real}");
    }
}
