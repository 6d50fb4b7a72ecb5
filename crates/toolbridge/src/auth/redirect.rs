//! [`RedirectListener`]: the loopback HTTP listener the authorization
//! server sends the browser back to (`http://127.0.0.1:PORT/callback`, RFC
//! 8252 §7.3). It answers the one request with the code and state, and
//! shows the user a page saying they can close it.

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

    /// Waits for the browser's request to the callback path and returns its
    /// full URL (query included). Requests for other paths (a favicon) get
    /// 404 and the wait goes on.
    pub async fn accept(&self) -> std::io::Result<String> {
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
            let failed = target.contains("error=");
            let page = if failed {
                "Signing in failed; toolbridge says why. You can close this tab."
            } else {
                "Signed in. You can close this tab and go back to toolbridge."
            };
            let _ = respond(&mut stream, "200 OK", page).await;
            let base = self.redirect_uri.trim_end_matches(CALLBACK_PATH);
            return Ok(format!("{base}{target}"));
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
        let landed = listener.accept().await.unwrap();
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
}
