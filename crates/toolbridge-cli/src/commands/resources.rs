//! `toolbridge resources list|templates|read`: the resources of the
//! configured servers, their templates, and one resource's contents (text
//! to stdout; a blob to a file with `--save DIR`).

use std::{
    path::{Path, PathBuf},
    process::ExitCode,
    time::Duration,
};

use anyhow::Context as _;
use base64::Engine as _;
use toolbridge::{
    format::{flatten::block_text, names::replace_unsafe},
    pool::CallOptions,
    rmcp_model::{ContentBlock, ReadResourceResult, ResourceContents},
};

use crate::{
    commands::call::extension,
    context::Context,
    listing::{self, Failures, one_line},
    outcome::{Failure, Outcome, exit},
};

#[derive(Debug, clap::Subcommand)]
pub enum ResourcesCommand {
    /// List the resources of every enabled server (or of --server NAME...).
    List(ListArgs),
    /// List the resource templates of every enabled server (or of --server NAME...).
    Templates(ListArgs),
    /// Read one resource: text to stdout, a blob to a file with --save DIR.
    Read(ReadArgs),
}

#[derive(Debug, clap::Args)]
pub struct ListArgs {
    /// Only these servers; without it, every enabled server.
    #[arg(long = "server", value_name = "NAME")]
    pub servers: Vec<String>,
    /// Print MCP's own JSON, one array, each item with its `serverId`.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, clap::Args)]
pub struct ReadArgs {
    /// The server's name in the config.
    pub server: String,
    /// The resource's URI (as `resources list` shows it, or a template's
    /// filled in).
    pub uri: String,
    /// Write binary contents to files in DIR (created if needed), named
    /// after the URI, and print their paths.
    #[arg(long, value_name = "DIR", conflicts_with = "json")]
    pub save: Option<PathBuf>,
    /// Seconds the read may take, the server's start included (default: the
    /// server's `timeout`, else 120).
    #[arg(long, value_name = "SECS", value_parser = crate::timeout::parse)]
    pub timeout: Option<Duration>,
    /// Print the raw MCP result (`contents`, blobs in base64).
    #[arg(long)]
    pub json: bool,
}

pub async fn run(command: ResourcesCommand, ctx: &Context) -> Outcome {
    match command {
        ResourcesCommand::List(args) => list(args, ctx).await,
        ResourcesCommand::Templates(args) => templates(args, ctx).await,
        ResourcesCommand::Read(args) => read(args, ctx).await,
    }
}

async fn list(args: ListArgs, ctx: &Context) -> Outcome {
    let servers = ctx.servers()?;
    let mut failures = Failures::default();
    let chosen = listing::chosen(servers, &args.servers, &mut failures);
    let listed = listing::items(servers.pool.list_resources_of(&chosen).await, &mut failures);
    listing::print(&listed, args.json, |server, resource| {
        item_line(
            server,
            &resource.uri,
            resource.title.as_deref().unwrap_or(&resource.name),
            resource.mime_type.as_deref(),
            resource.description.as_deref(),
        )
    })?;
    failures.outcome()
}

async fn templates(args: ListArgs, ctx: &Context) -> Outcome {
    let servers = ctx.servers()?;
    let mut failures = Failures::default();
    let chosen = listing::chosen(servers, &args.servers, &mut failures);
    let listed = listing::items(
        servers.pool.list_resource_templates_of(&chosen).await,
        &mut failures,
    );
    listing::print(&listed, args.json, |server, template| {
        item_line(
            server,
            &template.uri_template,
            template.title.as_deref().unwrap_or(&template.name),
            template.mime_type.as_deref(),
            template.description.as_deref(),
        )
    })?;
    failures.outcome()
}

/// `server  uri  name (mime) — description`, the parts it has.
fn item_line(
    server: &str,
    uri: &str,
    name: &str,
    mime: Option<&str>,
    description: Option<&str>,
) -> String {
    let mut line = format!("{server}  {uri}  {}", one_line(name));
    if let Some(mime) = mime {
        line.push_str(&format!(" ({mime})"));
    }
    if let Some(description) = description.map(one_line).filter(|d| !d.is_empty()) {
        line.push_str(&format!(" — {description}"));
    }
    line
}

async fn read(args: ReadArgs, ctx: &Context) -> Outcome {
    let servers = ctx.servers()?;
    if let Some(error) = servers.unresolved(&args.server) {
        return Err(Failure::usage(anyhow::anyhow!("{error}")));
    }
    let options = CallOptions {
        timeout: args.timeout,
        ..CallOptions::default()
    };
    let result = servers
        .pool
        .read_resource(&args.server, &args.uri, &options)
        .await?;
    if args.json {
        crate::output::json(&result)?;
    } else {
        let text = contents_text(&result, args.save.as_deref())
            .map_err(|e| Failure::new(exit::CONNECTION, e))?;
        crate::output::text(&text)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// What `read` prints: each text content as is (ending with a newline);
/// each blob written to `save` (its path printed), or without it one line
/// saying what it is and how to save it.
fn contents_text(result: &ReadResourceResult, save: Option<&Path>) -> anyhow::Result<String> {
    let mut out = String::new();
    for contents in &result.contents {
        match contents {
            ResourceContents::TextResourceContents { text, .. } => out.push_str(text),
            ResourceContents::BlobResourceContents {
                uri,
                mime_type,
                blob,
                ..
            } => {
                let bytes = base64::engine::general_purpose::STANDARD
                    .decode(blob.trim())
                    .with_context(|| format!("the contents of {uri} are not valid base64"))?;
                match save {
                    Some(dir) => {
                        let name = file_name(uri, mime_type.as_deref());
                        let path = crate::saved_file::write_new(dir, &name, &bytes)?;
                        out.push_str(&path.display().to_string());
                    }
                    None => {
                        // The flattener's words for it, which give the size:
                        // "[Resource: uri (mime, N bytes)]".
                        let described = block_text(&ContentBlock::resource(contents.clone()));
                        out.push_str(&format!(
                            "{described} binary data; add --save DIR to write it to a file"
                        ));
                    }
                }
            }
            _ => out.push_str("[Resource contents of an unknown kind; see --json]"),
        }
        if !out.ends_with('\n') {
            out.push('\n');
        }
    }
    Ok(out)
}

/// A file name for the blob at `uri`: the URI's last segment, made safe
/// (no path separators, no leading dot), with the MIME type's extension.
fn file_name(uri: &str, mime: Option<&str>) -> String {
    let path = uri.split(['?', '#']).next().unwrap_or(uri);
    let last = path.rsplit('/').find(|s| !s.is_empty()).unwrap_or("");
    let last = last.rsplit(':').next().unwrap_or(last);
    let (stem, own_extension) = match last.rsplit_once('.') {
        Some((stem, ext)) if !stem.is_empty() => (stem, Some(ext)),
        _ => (last, None),
    };
    let stem = match replace_unsafe(stem) {
        stem if stem.is_empty() => "resource".to_owned(),
        stem => stem,
    };
    let extension = match (mime, own_extension) {
        (Some(mime), _) => extension(mime).to_owned(),
        (None, Some(ext)) if !replace_unsafe(ext).is_empty() => replace_unsafe(ext),
        _ => "bin".to_owned(),
    };
    format!("{stem}.{extension}")
}

#[cfg(test)]
mod tests {
    use super::file_name;

    #[test]
    fn a_blobs_file_is_named_after_its_uri_and_never_leaves_the_folder() {
        assert_eq!(
            file_name("test://static-binary", Some("image/png")),
            "static-binary.png"
        );
        assert_eq!(file_name("file:///data/report.pdf", None), "report.pdf");
        assert_eq!(
            file_name(
                "demo://resource/dynamic/blob/3?x=1",
                Some("application/octet-stream")
            ),
            "3.bin"
        );
        assert_eq!(file_name("file:///../../etc/passwd", None), "passwd.bin");
        assert_eq!(file_name("x:", Some("image/png")), "resource.png");
        assert_eq!(file_name("file:///a/..", None), "_.bin");
    }
}
