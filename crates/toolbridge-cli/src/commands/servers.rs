//! `toolbridge servers list|add|remove|enable|disable|import`: show and edit
//! the config file. Data (the list) goes to stdout, messages to stderr.

use std::{
    io::{self, Write},
    path::Path,
};

use anyhow::{Context, bail};
use toolbridge::config::{self, Config, ImportReport, NewServer, NewTarget, ServerListing};

use crate::cli::{AddArgs, Cli, Failure, Outcome, ServersCommand};

mod test;

/// Runs one `servers` subcommand against the config at `--config` (or the
/// default location). Every failure of the config-editing subcommands is a
/// usage or config error: exit 2.
pub fn run(cli: &Cli, command: &ServersCommand) -> Outcome {
    let path = config::locate(cli.config.as_deref());
    let say = Messages { quiet: cli.quiet };
    let result = match command {
        ServersCommand::Test(args) => {
            return super::run_with_pool(cli, |ctx| test::run(ctx, args));
        }
        ServersCommand::List { json } => list(&path, *json, &say),
        ServersCommand::Add(args) => add(&path, args, &say),
        ServersCommand::Remove { name } => remove(&path, name, &say),
        ServersCommand::Enable { name } => set_disabled(&path, name, false, &say),
        ServersCommand::Disable { name } => set_disabled(&path, name, true, &say),
        ServersCommand::Import { file, force } => import(&path, file, *force, &say),
    };
    match result {
        Ok(()) => Ok(0),
        Err(error) if is_broken_pipe(&error) => Ok(0),
        Err(error) => Err(Failure::usage(error)),
    }
}

pub use test::TestArgs;

/// Messages for the user on stderr, silenced by `-q`.
struct Messages {
    quiet: bool,
}

impl Messages {
    fn say(&self, message: impl std::fmt::Display) {
        if !self.quiet {
            eprintln!("{message}");
        }
    }
}

fn list(path: &Path, json: bool, say: &Messages) -> anyhow::Result<()> {
    let config = Config::load_or_builtin(path, super::example_spec())?;
    if config.is_builtin() {
        say.say(format_args!(
            "no config file at {}; using the built-in example server",
            path.display()
        ));
    }
    let listing = config.listing();
    let mut stdout = io::stdout().lock();
    if json {
        serde_json::to_writer_pretty(&mut stdout, &listing)?;
        writeln!(stdout)?;
    } else if listing.is_empty() {
        say.say(format_args!(
            "no servers in {}; add one with `toolbridge servers add`",
            path.display()
        ));
    } else {
        write_table(&mut stdout, &listing)?;
    }
    stdout.flush()?;
    Ok(())
}

/// One line per server: name, transport, status, then the command or URL
/// and the masked details.
fn write_table(out: &mut impl Write, listing: &[ServerListing]) -> io::Result<()> {
    let rows: Vec<[String; 4]> = listing
        .iter()
        .map(|server| {
            let transport = if server.auto_detect {
                "auto".to_string()
            } else {
                server.transport.to_string()
            };
            let status = if server.enabled {
                "enabled"
            } else {
                "disabled"
            };
            [
                server.name.clone(),
                transport,
                status.to_string(),
                target(server),
            ]
        })
        .collect();
    let header = ["NAME", "TRANSPORT", "STATUS", "TARGET"].map(String::from);
    let widths: Vec<usize> = (0..3)
        .map(|col| {
            std::iter::once(&header)
                .chain(&rows)
                .map(|row| row[col].chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    for row in std::iter::once(&header).chain(&rows) {
        writeln!(
            out,
            "{:w0$}  {:w1$}  {:w2$}  {}",
            row[0],
            row[1],
            row[2],
            row[3],
            w0 = widths[0],
            w1 = widths[1],
            w2 = widths[2],
        )?;
    }
    Ok(())
}

fn target(server: &ServerListing) -> String {
    let mut parts = Vec::new();
    if let Some(command) = &server.command {
        let mut line = shell_word(command);
        for arg in &server.args {
            line.push(' ');
            line.push_str(&shell_word(arg));
        }
        parts.push(line);
    }
    if let Some(url) = &server.url {
        parts.push(url.clone());
    }
    let pairs = |map: &std::collections::BTreeMap<String, String>, sep: &str| {
        map.iter()
            .map(|(k, v)| format!("{k}{sep}{v}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    if !server.env.is_empty() {
        parts.push(format!("[env {}]", pairs(&server.env, "=")));
    }
    if !server.headers.is_empty() {
        parts.push(format!("[headers {}]", pairs(&server.headers, ": ")));
    }
    if let Some(cwd) = &server.cwd {
        parts.push(format!("[cwd {cwd}]"));
    }
    if server.timeout != config::DEFAULT_CALL_TIMEOUT.as_secs_f64() {
        parts.push(format!("[timeout {}s]", server.timeout));
    }
    if server.builtin {
        parts.push("[built-in]".to_string());
    }
    parts.join("  ")
}

/// `word`, single-quoted when it has spaces or quotes, so the command line
/// reads unambiguously.
fn shell_word(word: &str) -> String {
    if !word.is_empty()
        && !word
            .chars()
            .any(|c| c.is_whitespace() || "'\"\\$`".contains(c))
    {
        return word.to_string();
    }
    format!("'{}'", word.replace('\'', r"'\''"))
}

fn add(path: &Path, args: &AddArgs, say: &Messages) -> anyhow::Result<()> {
    let args = args.clone();
    let target = match (args.url, args.command) {
        (Some(url), _) => NewTarget::Remote {
            url,
            transport: args.transport.map(Into::into),
            headers: args.headers,
        },
        (None, command) => {
            let (command, command_args) = match command {
                Some(command) => (command, args.args),
                None => {
                    let mut argv = args.argv.into_iter();
                    let Some(command) = argv.next() else {
                        bail!("give the server's program: --command CMD, or -- CMD ARGS...");
                    };
                    (command, argv.collect())
                }
            };
            // A relative --cwd means relative to where the user is now; the
            // config file would read it relative to its own directory.
            let cwd = args
                .cwd
                .map(|dir| {
                    std::path::absolute(&dir).with_context(|| format!("--cwd {}", dir.display()))
                })
                .transpose()?;
            NewTarget::Stdio {
                command,
                args: command_args,
                env: args.env,
                cwd,
            }
        }
    };
    let server = NewServer {
        target,
        timeout: args.timeout,
        disabled: args.disabled,
    };
    let created = config::edit(path, |doc| {
        doc.add_server(&args.name, server.to_record())?;
        Ok(!doc.existed())
    })?;
    if created {
        say.say(format_args!(
            "created {} (the built-in example server is used only while no config file exists)",
            path.display()
        ));
    }
    say.say(format_args!(
        "added server \"{}\" to {}",
        args.name,
        path.display()
    ));
    Ok(())
}

fn remove(path: &Path, name: &str, say: &Messages) -> anyhow::Result<()> {
    require_file(path, name)?;
    config::edit(path, |doc| doc.remove_server(name).map(drop))?;
    say.say(format_args!(
        "removed server \"{name}\" from {}",
        path.display()
    ));
    Ok(())
}

fn set_disabled(path: &Path, name: &str, disabled: bool, say: &Messages) -> anyhow::Result<()> {
    require_file(path, name)?;
    config::edit(path, |doc| doc.set_disabled(name, disabled))?;
    let done = if disabled { "disabled" } else { "enabled" };
    say.say(format_args!(
        "{done} server \"{name}\" in {}",
        path.display()
    ));
    Ok(())
}

/// Editing a server needs a config file; without one only the built-in
/// example server exists, and it cannot be edited.
fn require_file(path: &Path, name: &str) -> anyhow::Result<()> {
    if !path.exists() {
        bail!(
            "unknown server \"{name}\": there is no config file at {} (only the built-in \
             example server exists); add a server with `toolbridge servers add`",
            path.display()
        );
    }
    Ok(())
}

fn import(path: &Path, from: &Path, force: bool, say: &Messages) -> anyhow::Result<()> {
    let report = config::import(path, from, force)?;
    say_import(&report, path, from, say);
    Ok(())
}

fn say_import(report: &ImportReport, path: &Path, from: &Path, say: &Messages) {
    let names = |names: &[String]| names.join(", ");
    let from = from.display();
    if !report.added.is_empty() {
        say.say(format_args!(
            "added from {from} ({}): {}",
            report.found_in,
            names(&report.added)
        ));
    }
    if !report.replaced.is_empty() {
        say.say(format_args!("replaced: {}", names(&report.replaced)));
    }
    if !report.skipped.is_empty() {
        say.say(format_args!(
            "skipped, already in {}: {} (use --force to replace)",
            path.display(),
            names(&report.skipped)
        ));
    }
    for error in &report.invalid {
        // Invalid records are worth seeing even with -q: they were dropped.
        eprintln!("not imported: {error}");
    }
    if report.added.is_empty() && report.replaced.is_empty() {
        say.say("nothing imported");
    }
}

fn is_broken_pipe(error: &anyhow::Error) -> bool {
    error.chain().any(|cause| {
        cause
            .downcast_ref::<io::Error>()
            .is_some_and(|e| e.kind() == io::ErrorKind::BrokenPipe)
            || cause
                .downcast_ref::<serde_json::Error>()
                .and_then(serde_json::Error::io_error_kind)
                == Some(io::ErrorKind::BrokenPipe)
    })
}
