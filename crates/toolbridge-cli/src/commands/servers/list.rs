//! `toolbridge servers list [--json]`: the servers of the config file, with
//! secrets masked.

use std::{path::Path, process::ExitCode};

use toolbridge::config::{self, ServerListing};

use crate::{context::Context, outcome::Outcome};

pub fn run(path: &Path, json: bool, ctx: &Context) -> Outcome {
    let config = ctx.load_config()?;
    if config.is_builtin() {
        ctx.say(format_args!(
            "no config file at {}; using the built-in example server",
            path.display()
        ));
    }
    let listing = config.listing();
    if json {
        crate::output::json(&listing)?;
    } else if listing.is_empty() {
        ctx.say(format_args!(
            "no servers in {}; add one with `toolbridge servers add`",
            path.display()
        ));
    } else {
        crate::output::text(&table(&listing))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// One line per server: name, transport, status, then the command or URL
/// and the masked details.
fn table(listing: &[ServerListing]) -> String {
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
    let mut out = String::new();
    for row in std::iter::once(&header).chain(&rows) {
        out.push_str(&format!(
            "{:w0$}  {:w1$}  {:w2$}  {}\n",
            row[0],
            row[1],
            row[2],
            row[3],
            w0 = widths[0],
            w1 = widths[1],
            w2 = widths[2],
        ));
    }
    out
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
    if let Some(sandbox) = &server.sandbox {
        let shown = match sandbox {
            serde_json::Value::Bool(false) => "off".to_owned(),
            serde_json::Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        match &server.sandbox_unavailable {
            Some(why) => parts.push(format!(
                "[sandbox {shown}: cannot be sandboxed on this system: {why}; it does not start \
                 unless its \"sandbox\" is false]"
            )),
            None => parts.push(format!("[sandbox {shown}]")),
        }
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
