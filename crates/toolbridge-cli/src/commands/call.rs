//! `toolbridge call SERVER TOOL`: call one tool and print its result: what a
//! model is given (the library's flattening), the raw MCP result with
//! `--json`, and with `--save DIR` the images, audio and binary resources as
//! files.

use std::{
    io::{IsTerminal, Write},
    path::{Path, PathBuf},
    process::ExitCode,
    time::Duration,
};

use anyhow::Context as _;
use base64::Engine as _;
use tokio::sync::broadcast::{Receiver, error::RecvError};
use toolbridge::{
    format::{flatten::block_text, flatten_content},
    pool::CallOptions,
    rmcp_model::{CallToolResult, ContentBlock, ProgressNotificationParam, ResourceContents},
};

use crate::{
    context::Context,
    outcome::{Failure, Outcome, exit},
};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The server's name in the config.
    pub server: String,
    /// The tool's name.
    pub tool: String,
    /// Arguments: a JSON object, @FILE to read it from a file, or - for stdin.
    #[arg(long, value_name = "JSON|@FILE|-")]
    pub args: Option<String>,
    /// Seconds the whole call may take, the server's start included;
    /// progress never extends it (default: the server's `timeout`, else 120,
    /// restarted by progress up to 10 minutes).
    #[arg(long, value_name = "SECS", value_parser = crate::timeout::parse)]
    pub timeout: Option<Duration>,
    /// Print the raw MCP result instead of the flattened text.
    #[arg(long)]
    pub json: bool,
    /// Write images, audio and binary resources to files in DIR (created if
    /// needed), named by their item's position and type (`2.png`), and print
    /// their paths in place of `[Image: image/png]`.
    #[arg(long, value_name = "DIR", conflicts_with = "json")]
    pub save: Option<PathBuf>,
}

pub async fn run(args: Args, ctx: &Context) -> Outcome {
    // Read before the servers open: until then Ctrl-C ends a read of stdin.
    let arguments =
        crate::json_input::tool_arguments(args.args.as_deref()).map_err(Failure::usage)?;
    if let Some(limit) = args.timeout {
        // The whole command is bounded, closing the server included.
        ctx.end_by(tokio::time::Instant::now() + limit);
    }
    let servers = ctx.servers()?;
    if let Some(error) = servers.unresolved(&args.server) {
        return Err(Failure::usage(anyhow::anyhow!("{error}")));
    }
    let options = CallOptions {
        timeout: args.timeout,
        call_id: None,
        ..CallOptions::default()
    };
    let call = servers
        .pool
        .call_tool(&args.server, &args.tool, arguments, options);
    let result = if !ctx.quiet && std::io::stderr().is_terminal() {
        let watch = servers.pool.watch_progress(&args.server)?;
        with_progress_line(call, watch).await?
    } else {
        call.await?
    };
    if args.json {
        crate::output::json(&result)?;
    } else if let Some(dir) = &args.save {
        let text = save_binaries(&result, dir).map_err(|e| Failure::new(exit::CONNECTION, e))?;
        crate::output::line(&text)?;
    } else {
        // The same text `exec` and the adapters give a model.
        crate::output::line(&flatten_content(&result))?;
    }
    Ok(if result.is_error == Some(true) {
        ExitCode::from(exit::TOOL_ERROR)
    } else {
        ExitCode::SUCCESS
    })
}

/// Awaits `call`, showing the server's progress notifications on one
/// stderr line (a terminal's), rewritten as they come and cleared at the end.
async fn with_progress_line<T>(
    call: impl Future<Output = T>,
    mut progress: Receiver<ProgressNotificationParam>,
) -> T {
    let mut call = std::pin::pin!(call);
    let mut shown = false;
    let result = loop {
        tokio::select! {
            result = &mut call => break result,
            update = progress.recv() => match update {
                Ok(update) => {
                    let mut err = std::io::stderr().lock();
                    let _ = write!(err, "\r\x1b[2K{}", progress_text(&update));
                    let _ = err.flush();
                    shown = true;
                }
                Err(RecvError::Lagged(_)) => {}
                Err(RecvError::Closed) => break call.await,
            },
        }
    };
    if shown {
        let mut err = std::io::stderr().lock();
        let _ = write!(err, "\r\x1b[2K");
        let _ = err.flush();
    }
    result
}

/// One progress notification as a line: its message, then how far
/// (`40/100 (40%)`, or the count alone without a total). Control characters
/// from the server are left out: this goes to a terminal.
fn progress_text(update: &ProgressNotificationParam) -> String {
    let number = |n: f64| {
        if n.fract() == 0.0 && n.abs() < 1e15 {
            format!("{n:.0}")
        } else {
            format!("{n:.2}")
        }
    };
    let how_far = match update.total {
        Some(total) if total > 0.0 => format!(
            "{}/{} ({:.0}%)",
            number(update.progress),
            number(total),
            (update.progress / total * 100.0).clamp(0.0, 100.0)
        ),
        _ => number(update.progress),
    };
    let message: String = update
        .message
        .as_deref()
        .unwrap_or("")
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    let message = message.trim();
    if message.is_empty() {
        format!("progress: {how_far}")
    } else {
        format!("{message}: {how_far}")
    }
}

/// The flattened text of `result`, with each image, audio item and binary
/// resource written to `dir` and its path standing where its placeholder
/// would be.
fn save_binaries(result: &CallToolResult, dir: &Path) -> anyhow::Result<String> {
    if result.content.is_empty() {
        return Ok(flatten_content(result));
    }
    let mut lines = Vec::with_capacity(result.content.len());
    for (index, block) in result.content.iter().enumerate() {
        let binary = match block {
            ContentBlock::Image(image) => Some((&image.data, image.mime_type.as_str())),
            ContentBlock::Audio(audio) => Some((&audio.data, audio.mime_type.as_str())),
            ContentBlock::Resource(resource) => match &resource.resource {
                ResourceContents::BlobResourceContents {
                    blob, mime_type, ..
                } => Some((blob, mime_type.as_deref().unwrap_or(""))),
                _ => None,
            },
            _ => None,
        };
        let Some((data, mime)) = binary else {
            lines.push(block_text(block));
            continue;
        };
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(data.trim())
            .with_context(|| format!("item {} ({mime}) is not valid base64", index + 1))?;
        let name = format!("{}.{}", index + 1, extension(mime));
        let path = crate::saved_file::write_new(dir, &name, &bytes)?;
        lines.push(path.display().to_string());
    }
    Ok(lines.join("\n"))
}

/// The usual file extension for a MIME type; `bin` when there is none.
pub(crate) fn extension(mime: &str) -> &str {
    let essence = mime.split(';').next().unwrap_or("").trim();
    match essence {
        "image/jpeg" => "jpg",
        "image/svg+xml" => "svg",
        "audio/mpeg" => "mp3",
        "audio/wav" | "audio/x-wav" | "audio/wave" => "wav",
        "text/plain" => "txt",
        _ => match essence.split_once('/') {
            Some((_, sub))
                if !sub.is_empty()
                    && sub.len() <= 8
                    && sub.chars().all(|c| c.is_ascii_alphanumeric()) =>
            {
                sub
            }
            _ => "bin",
        },
    }
}

#[cfg(test)]
mod tests {
    use super::{extension, progress_text};
    use toolbridge::rmcp_model::{NumberOrString, ProgressNotificationParam, ProgressToken};

    fn update(progress: f64, total: Option<f64>, message: Option<&str>) -> String {
        let mut update =
            ProgressNotificationParam::new(ProgressToken(NumberOrString::Number(1)), progress);
        update.total = total;
        update.message = message.map(str::to_owned);
        progress_text(&update)
    }

    #[test]
    fn progress_shows_the_message_and_how_far() {
        assert_eq!(update(400.0, Some(5000.0), None), "progress: 400/5000 (8%)");
        assert_eq!(
            update(3.0, Some(4.0), Some("indexing files")),
            "indexing files: 3/4 (75%)"
        );
        assert_eq!(update(0.25, None, Some("working")), "working: 0.25");
        // A server cannot move the cursor or recolour the terminal.
        assert_eq!(
            update(1.0, Some(2.0), Some("\x1b[2J\x1b[31mred\r\n")),
            "[2J [31mred: 1/2 (50%)"
        );
    }

    #[test]
    fn extensions_follow_the_mime_type() {
        for (mime, ext) in [
            ("image/png", "png"),
            ("image/jpeg", "jpg"),
            ("audio/wav", "wav"),
            ("audio/mpeg", "mp3"),
            ("application/pdf", "pdf"),
            ("application/octet-stream", "bin"),
            ("text/plain; charset=utf-8", "txt"),
            ("", "bin"),
            ("../../etc", "bin"),
        ] {
            assert_eq!(extension(mime), ext, "{mime}");
        }
    }
}
