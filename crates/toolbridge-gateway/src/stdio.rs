//! The gateway over stdin/stdout (`toolbridge serve --stdio [--profile
//! NAME]`): one client, the program that started it.
//!
//! A line that is not JSON at all is answered with a JSON-RPC parse error
//! (-32700, id `null`, as JSON-RPC 2.0 says) and the session goes on. rmcp's
//! line transport drops such a line without a word (it answers -32600 only
//! to JSON that is not a message), which leaves the client waiting for an
//! answer that never comes. So the lines pass through `screen` on their
//! way to rmcp, and rmcp's output and the parse errors are written to stdout
//! by one writer (`write_lines`), a whole line at a time.

use rmcp::ServiceExt as _;
use tokio::{
    io::{AsyncBufReadExt as _, AsyncRead, AsyncWrite, AsyncWriteExt as _, BufReader},
    sync::mpsc,
};

use crate::{Gateway, GatewayError, profile::ViewName, session::Session};

/// Bytes buffered between the screen, rmcp and the writer.
const PIPE: usize = 64 * 1024;

/// Serves one client, with `view` (every server, or a profile), on
/// stdin/stdout until it closes them.
pub async fn serve(gateway: Gateway, view: ViewName) -> Result<(), GatewayError> {
    let (screened, rmcp_in) = tokio::io::duplex(PIPE);
    let (rmcp_out, answers) = tokio::io::duplex(PIPE);
    let (errors, error_lines) = mpsc::unbounded_channel();
    tokio::spawn(screen(tokio::io::stdin(), screened, errors));
    let writer = tokio::spawn(write_lines(answers, error_lines, tokio::io::stdout()));
    let session = Session::new(gateway.clone(), view.clone());
    let service = crate::request_spans::Traced::new(session, gateway, view)
        .serve((rmcp_in, rmcp_out))
        .await
        .map_err(|e| GatewayError::Stdio(e.to_string()))?;
    let served = service
        .waiting()
        .await
        .map_err(|e| GatewayError::Stdio(e.to_string()));
    // rmcp's end of the pipe is closed: the writer drains it and stops.
    let _ = writer.await;
    served.map(drop)
}

/// Passes each line of `input` that is JSON on to `rmcp`; for one that is
/// not, sends a parse error to `errors`. Ends with `input`, closing `rmcp`'s
/// input (the session ends).
async fn screen(
    input: impl AsyncRead + Unpin,
    mut rmcp: impl AsyncWrite + Unpin,
    errors: mpsc::UnboundedSender<String>,
) {
    let mut lines = BufReader::new(input).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        let text = line.trim_start_matches('\u{feff}').trim_end_matches('\r');
        if !text.trim().is_empty()
            && let Err(e) = serde_json::from_str::<serde::de::IgnoredAny>(text)
        {
            let _ = errors.send(parse_error(&e));
            continue;
        }
        if rmcp.write_all(line.as_bytes()).await.is_err() || rmcp.write_all(b"\n").await.is_err() {
            break;
        }
    }
    let _ = rmcp.shutdown().await;
}

/// The JSON-RPC answer to a line that is not JSON.
fn parse_error(error: &serde_json::Error) -> String {
    serde_json::json!({
        "jsonrpc": "2.0",
        "id": null,
        "error": {
            "code": -32700,
            "message": format!(
                "Parse error: the line is not JSON ({error}); send one JSON-RPC message per line"
            ),
        },
    })
    .to_string()
}

/// Writes rmcp's lines (`answers`) and the parse errors to `output`, each
/// line whole, until rmcp's output ends.
async fn write_lines(
    answers: impl AsyncRead + Unpin,
    mut errors: mpsc::UnboundedReceiver<String>,
    mut output: impl AsyncWrite + Unpin,
) {
    let mut answers = BufReader::new(answers).lines();
    loop {
        let line = tokio::select! {
            answer = answers.next_line() => match answer {
                Ok(Some(line)) => line,
                _ => break,
            },
            Some(error) = errors.recv() => error,
        };
        let written = async {
            output.write_all(line.as_bytes()).await?;
            output.write_all(b"\n").await?;
            output.flush().await
        };
        if written.await.is_err() {
            return;
        }
    }
    while let Ok(error) = errors.try_recv() {
        let _ = output.write_all(format!("{error}\n").as_bytes()).await;
    }
    let _ = output.flush().await;
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 32's fifteenth finding: an unparseable line got no answer.
    #[tokio::test]
    async fn a_line_that_is_not_json_gets_a_parse_error_and_the_rest_goes_on() {
        let input: &[u8] = b"not json\n{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n{oops\n";
        let (to_rmcp, mut rmcp_side) = tokio::io::duplex(PIPE);
        let (errors, mut received) = mpsc::unbounded_channel();
        screen(input, to_rmcp, errors).await;
        let mut passed = String::new();
        tokio::io::AsyncReadExt::read_to_string(&mut rmcp_side, &mut passed)
            .await
            .unwrap();
        assert_eq!(
            passed,
            "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n"
        );
        for _ in 0..2 {
            let error: serde_json::Value =
                serde_json::from_str(&received.recv().await.unwrap()).unwrap();
            assert_eq!(error["id"], serde_json::Value::Null);
            assert_eq!(error["error"]["code"], -32700);
        }
    }
}
