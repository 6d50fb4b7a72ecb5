//! `toolbridge skills list|get`: the skills the configured servers serve
//! (SEP-2640), and one skill loaded, its files verified against its entry.
//!
//! `list` reads no skill file. `get` reads the skill's `SKILL.md` and
//! prints it once it matches the entry (size, digest, frontmatter); with
//! `--save DIR` it also reads every other file the entry lists, each
//! checked, and writes the skill to `DIR/SERVER/SKILL-PATH/` only when all
//! of them passed (a skill's identity is its server and its URI, so the
//! server is in the path).

use std::{
    path::{Path, PathBuf},
    process::ExitCode,
    time::Duration,
};

use anyhow::Context as _;
use serde_json::json;
use toolbridge::{
    pool::{CallOptions, SkillFile},
    rmcp_model::{Skill, SkillResources},
};

use crate::{
    context::Context,
    listing::{self, Failures, one_line},
    outcome::{Failure, Outcome},
};

#[derive(Debug, clap::Subcommand)]
pub enum SkillsCommand {
    /// List the skills of every enabled server (or of --server NAME...); reads no skill file.
    List(ListArgs),
    /// Load one skill: print its SKILL.md once verified, or save all its files with --save.
    Get(GetArgs),
}

#[derive(Debug, clap::Args)]
pub struct ListArgs {
    /// Only these servers; without it, every enabled server.
    #[arg(long = "server", value_name = "NAME")]
    pub servers: Vec<String>,
    /// Print MCP's own JSON, one array, each skill entry with its `serverId`.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, clap::Args)]
pub struct GetArgs {
    /// The server's name in the config.
    pub server: String,
    /// The skill's name, or the URI of its SKILL.md.
    pub skill: String,
    /// Read every file of the skill, each verified, and write them to
    /// DIR/SERVER/SKILL-PATH/ (nothing is written if one fails).
    #[arg(long, value_name = "DIR")]
    pub save: Option<PathBuf>,
    /// Seconds each request may take, the server's start included (default:
    /// the server's `timeout`, else 120).
    #[arg(long, value_name = "SECS", value_parser = crate::timeout::parse)]
    pub timeout: Option<Duration>,
    /// Print `{"serverId", "skill", "text"}`: the entry as MCP spells it and
    /// the verified SKILL.md.
    #[arg(long)]
    pub json: bool,
}

pub async fn run(command: SkillsCommand, ctx: &Context) -> Outcome {
    match command {
        SkillsCommand::List(args) => list(args, ctx).await,
        SkillsCommand::Get(args) => get(args, ctx).await,
    }
}

async fn list(args: ListArgs, ctx: &Context) -> Outcome {
    let servers = ctx.servers()?;
    let mut failures = Failures::default();
    let chosen = listing::chosen(servers, &args.servers, &mut failures);
    let listed = listing::items(servers.pool.list_skills_of(&chosen).await, &mut failures);
    listing::print(&listed, args.json, skill_line)?;
    failures.outcome()
}

/// `server  name  uri (N files) — description`.
fn skill_line(server: &str, skill: &Skill) -> String {
    let files = match &skill.resources {
        SkillResources::Files(files) => format!("{} files", files.len()),
        _ => "dynamic".to_owned(),
    };
    let mut line = format!("{server}  {}  {} ({files})", skill.name(), skill.uri);
    if !skill.frontmatter.description.trim().is_empty() {
        line.push_str(&format!(" — {}", one_line(&skill.frontmatter.description)));
    }
    line
}

async fn get(args: GetArgs, ctx: &Context) -> Outcome {
    let servers = ctx.servers()?;
    if let Some(error) = servers.unresolved(&args.server) {
        return Err(Failure::usage(anyhow::anyhow!("{error}")));
    }
    let options = CallOptions {
        timeout: args.timeout,
        ..CallOptions::default()
    };
    let pool = &servers.pool;
    let loaded = pool.load_skill(&args.server, &args.skill, &options).await?;
    if let Some(dir) = &args.save {
        let files = pool.read_skill_files(&loaded, &options).await?;
        let target = save(dir, &args.server, &loaded.entry.uri, &files).map_err(Failure::usage)?;
        eprintln!(
            "toolbridge: saved skill {} ({} files) to {}",
            loaded.entry.uri,
            files.len(),
            target.display()
        );
    }
    if args.json {
        crate::output::json(&json!({
            "serverId": loaded.server,
            "skill": loaded.entry,
            "text": loaded.text,
        }))?;
    } else if args.save.is_none() {
        crate::output::text(&loaded.text)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// The folder of skill `uri` of `server` below `dir`: `SERVER/SKILL-PATH`
/// (the URI without `skill://` and `/SKILL.md`; another scheme is a first
/// folder of its own), or `None` if a segment is not a plain name.
fn skill_dir(dir: &Path, server: &str, uri: &str) -> Option<PathBuf> {
    let (scheme, rest) = uri.split_once("://")?;
    let path = rest.strip_suffix("/SKILL.md")?;
    let mut target = dir.join(plain(server)?);
    if scheme != "skill" {
        target.push(plain(scheme)?);
    }
    for segment in path.split('/') {
        target.push(plain(segment)?);
    }
    Some(target)
}

fn plain(segment: &str) -> Option<&str> {
    (!matches!(segment, "" | "." | "..") && !segment.contains(['/', '\\', '\0'])).then_some(segment)
}

/// Writes `files` (verified) to the skill's folder below `dir`, all or
/// nothing: into a new folder beside it, renamed into place. A folder
/// already there is left alone (an error says so).
fn save(dir: &Path, server: &str, uri: &str, files: &[SkillFile]) -> anyhow::Result<PathBuf> {
    let target = skill_dir(dir, server, uri)
        .with_context(|| format!("cannot save skill {uri}: its URI is not a plain path"))?;
    if target.exists() {
        anyhow::bail!(
            "{} already exists; remove it, or choose another folder with --save",
            target.display()
        );
    }
    let parent = target.parent().expect("below dir");
    std::fs::create_dir_all(parent)
        .with_context(|| format!("cannot create {}", parent.display()))?;
    let partial = parent.join(format!(".toolbridge-skill-{}", std::process::id()));
    let written = (|| -> anyhow::Result<()> {
        for file in files {
            let path = file
                .path
                .split('/')
                .try_fold(partial.clone(), |p, s| plain(s).map(|s| p.join(s)))
                .with_context(|| format!("cannot save {}: not a plain path", file.uri))?;
            let folder = path.parent().expect("below partial");
            std::fs::create_dir_all(folder)
                .with_context(|| format!("cannot create {}", folder.display()))?;
            crate::saved_file::write_exclusive(&path, &file.bytes)?;
        }
        std::fs::rename(&partial, &target)
            .with_context(|| format!("cannot move the skill into {}", target.display()))
    })();
    if written.is_err() {
        let _ = std::fs::remove_dir_all(&partial);
    }
    written.map(|()| target)
}
