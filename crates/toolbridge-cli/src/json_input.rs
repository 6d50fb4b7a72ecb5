//! JSON a command reads: `--args JSON|@FILE|-` (`call`, `bench`) and
//! `--input FILE|-` (`exec`). The one reader of stdin and input files.

use std::io::Read;

use anyhow::Context as _;
use serde_json::{Map, Value};
use toolbridge::json_kind::kind_of;

/// Where a command's input comes from.
#[derive(Debug, Clone, Copy)]
enum Source<'a> {
    /// `-`: all of stdin.
    Stdin,
    /// A file's path.
    File(&'a str),
    /// The argument's own text.
    Inline(&'a str),
}

impl Source<'_> {
    /// Reads the source's text and parses it as JSON; `what` names the
    /// input in errors ("--args", "the response").
    fn read_json(self, what: &str) -> anyhow::Result<Value> {
        let (text, origin) = match self {
            Source::Stdin => {
                let mut text = String::new();
                std::io::stdin()
                    .read_to_string(&mut text)
                    .with_context(|| format!("reading {what} from stdin"))?;
                (text, "stdin".to_owned())
            }
            Source::File(path) => {
                let text = std::fs::read_to_string(path)
                    .with_context(|| format!("reading {what} file {path}"))?;
                (text, path.to_owned())
            }
            Source::Inline(text) => (text.to_owned(), what.to_owned()),
        };
        serde_json::from_str(&text).with_context(|| format!("{origin} is not valid JSON"))
    }
}

/// `--input FILE|-`: a provider's response, from a file or stdin.
pub fn response(input: &str) -> anyhow::Result<Value> {
    let source = if input == "-" {
        Source::Stdin
    } else {
        Source::File(input)
    };
    source.read_json("the response")
}

/// `--args JSON|@FILE|-`: a tool's arguments, inline, from a file or from
/// stdin. They must be a JSON object; none given is `None`.
pub fn tool_arguments(raw: Option<&str>) -> anyhow::Result<Option<Map<String, Value>>> {
    let Some(raw) = raw else { return Ok(None) };
    let source = match raw.strip_prefix('@') {
        _ if raw == "-" => Source::Stdin,
        Some(path) => Source::File(path),
        None => Source::Inline(raw),
    };
    let origin = match source {
        Source::Stdin => "stdin",
        Source::File(path) => path,
        Source::Inline(_) => "--args",
    };
    match source.read_json("--args")? {
        Value::Object(map) => Ok(Some(map)),
        other => anyhow::bail!(
            "{origin} must be a JSON object of arguments, got {}",
            kind_of(&other)
        ),
    }
}
