//! Elicitation on the command line: a server's request for input asked on
//! the terminal, one prompt per field with the schema's default filled in;
//! without a terminal declined, unless `--accept-defaults` accepts it with
//! the schema's defaults (SEP-1034).
//!
//! Prompts go to stderr and answers come from stdin, so stdout keeps only
//! the command's output. A server's text is shown with its control
//! characters neutralised. Enter keeps the default, Ctrl-D cancels.

use std::{
    io::{BufRead, IsTerminal, Write},
    sync::Mutex,
};
use toolbridge::lock::LockUnpoisoned as _;

use futures::future::BoxFuture;
use serde_json::Value;
use toolbridge::{
    pool::{ElicitationHandler, FieldKind, Form, FormField, RequestOrigin},
    rmcp_model::{ElicitRequestParams, ElicitResult, ElicitationAction, ErrorData, JsonObject},
};

use crate::terminal::neutralise;

/// One form on the terminal at a time: two servers asking at once would
/// interleave their prompts.
static TERMINAL: Mutex<()> = Mutex::new(());

/// The command line's elicitation handler.
#[derive(Debug, Clone, Copy)]
pub struct TerminalElicitation {
    /// `--accept-defaults`: accept with the defaults, without asking.
    accept_defaults: bool,
    /// `-q`: no notes on stderr.
    quiet: bool,
}

impl TerminalElicitation {
    /// The handler for `--accept-defaults` and `-q`.
    pub fn new(accept_defaults: bool, quiet: bool) -> Self {
        TerminalElicitation {
            accept_defaults,
            quiet,
        }
    }

    fn note(&self, message: &str) {
        if !self.quiet {
            eprintln!("toolbridge: {}", crate::terminal::for_stderr(message));
        }
    }

    /// Accepts `form` with its defaults, or declines when a required field
    /// has none.
    fn with_defaults(&self, server: &str, form: &Form) -> ElicitResult {
        let answer = form.defaults();
        let missing = form.missing_required(&answer);
        if missing.is_empty() {
            return accept(answer);
        }
        self.note(&format!(
            "declined server \"{server}\"'s request for input: --accept-defaults has no value \
             for the required field(s) {}; run on a terminal to answer them",
            missing.join(", ")
        ));
        ElicitResult::new(ElicitationAction::Decline)
    }
}

fn accept(answer: JsonObject) -> ElicitResult {
    ElicitResult::new(ElicitationAction::Accept).with_content(Value::Object(answer))
}

/// Whether a person can be asked: stdin and stderr are a terminal.
fn interactive() -> bool {
    std::io::stdin().is_terminal() && std::io::stderr().is_terminal()
}

impl ElicitationHandler for TerminalElicitation {
    fn elicit(
        &self,
        origin: RequestOrigin,
        params: ElicitRequestParams,
    ) -> BoxFuture<'_, Result<ElicitResult, ErrorData>> {
        Box::pin(async move {
            let server = origin.server;
            match params {
                ElicitRequestParams::FormElicitationParams {
                    message,
                    requested_schema,
                    ..
                } => {
                    let form = Form::from_schema(&requested_schema);
                    if self.accept_defaults {
                        return Ok(self.with_defaults(&server, &form));
                    }
                    if !interactive() {
                        self.note(&format!(
                            "declined server \"{server}\"'s request for input (\"{message}\"): \
                             there is no terminal to ask on; --accept-defaults accepts the \
                             schema's defaults"
                        ));
                        return Ok(ElicitResult::new(ElicitationAction::Decline));
                    }
                    // The terminal blocks; the runtime has one thread.
                    tokio::task::spawn_blocking(move || ask_form(&server, &message, &form))
                        .await
                        .map_err(|e| ErrorData::internal_error(e.to_string(), None))
                }
                ElicitRequestParams::UrlElicitationParams { message, url, .. } => {
                    if !interactive() {
                        self.note(&format!(
                            "declined server \"{server}\"'s request to open {url}: there is no \
                             terminal to ask on"
                        ));
                        return Ok(ElicitResult::new(ElicitationAction::Decline));
                    }
                    tokio::task::spawn_blocking(move || ask_url(&server, &message, &url))
                        .await
                        .map_err(|e| ErrorData::internal_error(e.to_string(), None))
                }
                _ => Ok(ElicitResult::new(ElicitationAction::Decline)),
            }
        })
    }

    fn url_mode(&self) -> bool {
        true
    }
}

/// Reads one line from stdin, without its line end; `None` at end of input.
fn read_line() -> Option<String> {
    let mut line = String::new();
    match std::io::stdin().lock().read_line(&mut line) {
        Ok(0) | Err(_) => None,
        Ok(_) => Some(line.trim_end_matches(['\r', '\n']).to_owned()),
    }
}

/// Writes `text` on stderr without a line end (a prompt).
fn prompt(text: &str) {
    let mut stderr = std::io::stderr().lock();
    let _ = write!(stderr, "{text}");
    let _ = stderr.flush();
}

/// Asks each field of `form`, then whether to send the answers.
fn ask_form(server: &str, message: &str, form: &Form) -> ElicitResult {
    let _turn = TERMINAL.lock_unpoisoned();
    eprintln!(
        "\nServer \"{}\" asks: {}\n(Enter keeps the value in [brackets]; Ctrl-D cancels)",
        neutralise(server),
        neutralise(message)
    );
    let mut answer = JsonObject::new();
    for field in &form.fields {
        match ask_field(field) {
            Asked::Value(value) => {
                answer.insert(field.name.clone(), value);
            }
            Asked::Skipped => {}
            Asked::Cancelled => return cancelled(),
        }
    }
    loop {
        prompt(&format!(
            "Send these answers to \"{}\"? [Y/n] ",
            neutralise(server)
        ));
        match read_line().map(|l| l.trim().to_lowercase()) {
            None => return cancelled(),
            Some(l) if l.is_empty() || l == "y" || l == "yes" => return accept(answer),
            Some(l) if l == "n" || l == "no" => {
                return ElicitResult::new(ElicitationAction::Decline);
            }
            Some(_) => eprintln!("  answer y or n"),
        }
    }
}

fn cancelled() -> ElicitResult {
    eprintln!();
    ElicitResult::new(ElicitationAction::Cancel)
}

enum Asked {
    Value(Value),
    Skipped,
    Cancelled,
}

/// Asks one field until the answer fits it.
fn ask_field(field: &FormField) -> Asked {
    let label = neutralise(field.title.as_deref().unwrap_or(&field.name)).into_owned();
    if let Some(description) = &field.description {
        eprintln!("  {}", neutralise(description));
    }
    let choices = match &field.kind {
        FieldKind::Choice(choices) | FieldKind::MultiChoice(choices) => choices.as_slice(),
        _ => &[],
    };
    for (i, choice) in choices.iter().enumerate() {
        eprintln!("    {}) {}", i + 1, neutralise(&choice.label));
    }
    let hint = match &field.kind {
        FieldKind::Boolean => " (y/n)",
        FieldKind::Number { integer: true, .. } => " (whole number)",
        FieldKind::Number { .. } => " (number)",
        FieldKind::Choice(_) => " (number or value)",
        FieldKind::MultiChoice(_) => " (numbers or values, comma-separated)",
        FieldKind::Text { .. } => "",
    };
    let required = if field.required { " *" } else { "" };
    let default = field.default.as_ref().map(|d| shown(field, d));
    loop {
        let shown_default = default
            .as_deref()
            .map(|d| format!(" [{}]", neutralise(d)))
            .unwrap_or_default();
        prompt(&format!("  {label}{required}{hint}{shown_default}: "));
        let Some(line) = read_line() else {
            return Asked::Cancelled;
        };
        if line.trim().is_empty() {
            match (&field.default, field.required) {
                (Some(default), _) => return Asked::Value(default.clone()),
                (None, false) => return Asked::Skipped,
                (None, true) => {
                    eprintln!("  a value is required");
                    continue;
                }
            }
        }
        match field.parse(&line) {
            Ok(value) => return Asked::Value(value),
            Err(why) => eprintln!("  {why}"),
        }
    }
}

/// A default as the user would type it.
fn shown(field: &FormField, default: &Value) -> String {
    match (default, &field.kind) {
        (Value::Bool(true), _) => "y".to_owned(),
        (Value::Bool(false), _) => "n".to_owned(),
        (Value::String(s), _) => s.clone(),
        (Value::Array(items), _) => items
            .iter()
            .map(|i| i.as_str().map_or_else(|| i.to_string(), str::to_owned))
            .collect::<Vec<_>>()
            .join(", "),
        (other, _) => other.to_string(),
    }
}

/// Shows the URL a server wants opened; accepted once the user says so.
fn ask_url(server: &str, message: &str, url: &str) -> ElicitResult {
    let _turn = TERMINAL.lock_unpoisoned();
    eprintln!(
        "\nServer \"{}\" asks you to open a link: {}\n  {}",
        neutralise(server),
        neutralise(message),
        neutralise(url)
    );
    loop {
        prompt("Open it in your browser and press Enter when done, or n to decline: ");
        match read_line().map(|l| l.trim().to_lowercase()) {
            None => return cancelled(),
            Some(l) if l.is_empty() || l == "y" || l == "yes" => {
                return ElicitResult::new(ElicitationAction::Accept);
            }
            Some(l) if l == "n" || l == "no" => {
                return ElicitResult::new(ElicitationAction::Decline);
            }
            Some(_) => eprintln!("  press Enter, or answer n"),
        }
    }
}
