//! What `tools`, `resources list`, `resources templates` and `prompts list` share:
//! which servers to ask, the failures of some (reported, the others still
//! listed), and the JSON shape (each item as MCP spells it, with the
//! `serverId` it came from, as `tools` has).

use std::{process::ExitCode, sync::Arc};

use serde::Serialize;
use toolbridge::pool::Listing;

use crate::{
    context::Servers,
    outcome::{Failure, Outcome},
};

/// The failures of a listing of several servers, printed as they come; the
/// worst exit code is kept for the end.
#[derive(Debug, Default)]
pub struct Failures {
    worst: Option<u8>,
}

impl Failures {
    /// Prints `failure` and remembers its exit code.
    pub fn add(&mut self, failure: Failure) {
        failure.print();
        self.worst = Some(self.worst.map_or(failure.code, |w| w.max(failure.code)));
    }

    /// Success, or the worst failure's exit code.
    pub fn outcome(self) -> Outcome {
        match self.worst {
            Some(code) => Err(Failure::new(
                code,
                anyhow::anyhow!("some servers could not be listed (see above)"),
            )),
            None => Ok(ExitCode::SUCCESS),
        }
    }
}

/// The servers to list: `requested` (`--server`), else every enabled
/// server. Servers whose config entry could not be resolved are reported
/// as failures and left out.
pub fn chosen(servers: &Servers, requested: &[String], failures: &mut Failures) -> Vec<String> {
    if requested.is_empty() {
        for (_, error) in &servers.unresolved {
            failures.add(Failure::usage(anyhow::anyhow!("{error}")));
        }
        return servers.pool.active_server_names();
    }
    let mut chosen = Vec::new();
    for server in requested {
        match servers.unresolved(server) {
            Some(error) => failures.add(Failure::usage(anyhow::anyhow!("{error}"))),
            None => chosen.push(server.clone()),
        }
    }
    chosen
}

/// The items of the servers that answered, each paired with its server;
/// the failures reported.
pub fn items<T>(listing: Listing<T>, failures: &mut Failures) -> Vec<(String, Arc<Vec<T>>)> {
    for (_, error) in listing.failures {
        failures.add(Failure::from(error));
    }
    listing.servers
}

/// Prints `servers`' items: MCP's JSON with `--json` (see [`json`]), else
/// one `line` per item.
pub fn print<T: Serialize>(
    servers: &[(String, Arc<Vec<T>>)],
    as_json: bool,
    line: impl Fn(&str, &T) -> String,
) -> Result<(), Failure> {
    if as_json {
        return json(servers);
    }
    for (server, items) in servers {
        for item in items.iter() {
            crate::output::line(&line(server, item))?;
        }
    }
    Ok(())
}

/// The items as one JSON array: each item's own MCP JSON with `serverId`.
pub fn json<T: Serialize>(servers: &[(String, Arc<Vec<T>>)]) -> Result<(), Failure> {
    let mut array = Vec::new();
    for (server, items) in servers {
        for item in items.iter() {
            let mut value = serde_json::to_value(item)
                .map_err(|e| Failure::new(crate::outcome::exit::CONNECTION, e))?;
            if let Some(object) = value.as_object_mut() {
                object.insert("serverId".to_owned(), server.clone().into());
            }
            array.push(value);
        }
    }
    crate::output::json(&array)
}

/// `text` on one line (a description's line breaks made spaces).
pub fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}
