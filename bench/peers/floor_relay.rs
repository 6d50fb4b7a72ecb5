//! The floor of the clients benchmark (clients.py): the cheapest relay from
//! MCP over HTTP to `toolbridge example-server` over a pipe that can exist
//! on this machine. One HTTP/1.1 hop, a thread per connection blocking on
//! its socket (no event loop, no allocation beyond the bodies), one child
//! whose stdout a thread reads and hands each answer to the request with
//! its JSON-RPC id. It knows only what the benchmark sends: a POST carries
//! one message; a notification is answered 202; `initialize` gets an
//! `Mcp-Session-Id`; every answer is `application/json`; GET is 405 (no
//! server-to-client stream) and DELETE 200. No auth, no checks: a floor.
//! std only, so the script builds it with `rustc -O` in a second.
//!
//!     floor-relay PORT TOOLBRIDGE_EXE

use std::{
    collections::HashMap,
    io::{BufRead, BufReader, Read, Write},
    net::{TcpListener, TcpStream},
    process::{Command, Stdio},
    sync::{Arc, Mutex, mpsc},
    thread,
};

type Waiting = Arc<Mutex<HashMap<String, mpsc::Sender<String>>>>;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let listener = TcpListener::bind(("127.0.0.1", args[1].parse::<u16>().expect("port")))
        .expect("bind 127.0.0.1");
    let mut child = Command::new(&args[2])
        .arg("example-server")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("start the example server");
    let stdin = Arc::new(Mutex::new(child.stdin.take().expect("stdin")));
    let waiting: Waiting = Arc::default();
    let stdout = child.stdout.take().expect("stdout");
    let answers = waiting.clone();
    thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if let Some(id) = json_id(&line) {
                if let Some(to) = answers.lock().unwrap().remove(&id) {
                    let _ = to.send(line);
                }
            }
        }
        std::process::exit(1);
    });
    for stream in listener.incoming().flatten() {
        let _ = stream.set_nodelay(true);
        let (stdin, waiting) = (stdin.clone(), waiting.clone());
        thread::spawn(move || {
            let _ = serve(stream, &stdin, &waiting);
        });
    }
}

fn serve(
    stream: TcpStream,
    stdin: &Mutex<std::process::ChildStdin>,
    waiting: &Waiting,
) -> std::io::Result<()> {
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut writer = stream;
    let mut line = String::new();
    loop {
        line.clear();
        if reader.read_line(&mut line)? == 0 {
            return Ok(());
        }
        let method = line.split(' ').next().unwrap_or("").to_owned();
        let mut length = 0;
        loop {
            line.clear();
            reader.read_line(&mut line)?;
            if line == "\r\n" || line.is_empty() {
                break;
            }
            if let Some((name, value)) = line.split_once(':') {
                if name.eq_ignore_ascii_case("content-length") {
                    length = value.trim().parse().unwrap_or(0);
                }
            }
        }
        let mut body = vec![0; length];
        reader.read_exact(&mut body)?;
        let body = String::from_utf8_lossy(&body).replace('\n', " ");
        let answer = match method.as_str() {
            "POST" => match json_id(&body) {
                None => {
                    writeln!(stdin.lock().unwrap(), "{body}")?;
                    "HTTP/1.1 202 Accepted\r\ncontent-length: 0\r\n\r\n".to_owned()
                }
                Some(id) => {
                    let (to, from) = mpsc::channel();
                    waiting.lock().unwrap().insert(id, to);
                    writeln!(stdin.lock().unwrap(), "{body}")?;
                    let Ok(result) = from.recv() else {
                        return Ok(());
                    };
                    let session = if body.contains("\"initialize\"") {
                        "mcp-session-id: floor\r\n"
                    } else {
                        ""
                    };
                    format!(
                        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n{session}\
                         content-length: {}\r\n\r\n{result}",
                        result.len()
                    )
                }
            },
            "DELETE" => "HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n".to_owned(),
            _ => "HTTP/1.1 405 Method Not Allowed\r\nallow: POST\r\ncontent-length: 0\r\n\r\n"
                .to_owned(),
        };
        writer.write_all(answer.as_bytes())?;
    }
}

/// The message's `"id"` as written (a number or a string), if it has one:
/// the benchmark's messages have no other key named `id`.
fn json_id(message: &str) -> Option<String> {
    let at = message.find("\"id\"")? + 4;
    let rest = message[at..].trim_start().strip_prefix(':')?.trim_start();
    let end = if let Some(quoted) = rest.strip_prefix('"') {
        quoted.find('"')? + 2
    } else {
        rest.find(|c: char| !(c.is_ascii_digit() || c == '-'))?
    };
    Some(rest[..end].to_owned())
}
