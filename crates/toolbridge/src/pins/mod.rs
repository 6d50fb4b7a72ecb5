//! Trust on first use of tool definitions.
//!
//! The first time toolbridge sees a server's tools it pins each one: the
//! hash of its definition's canonical JSON ([`canonical`]), kept per server
//! under [`PinOptions::dir`] (`store`). From then on a tool whose
//! definition differs from its pin, or a tool the pinned server did not
//! have, is *withheld*: the pool leaves it out of every listing it hands
//! out and refuses to call it ([`PoolError::Withheld`](crate::pool::PoolError::Withheld)),
//! until [`Pool::approve_tools`](crate::pool::Pool::approve_tools) (`toolbridge
//! tools approve`) pins the definition as it is now. This answers the "rug
//! pull": a server that shows a benign description to be approved and
//! changes it later.
//!
//! Policy ([`PinPolicy`], config `pin`): `block` (the default) withholds,
//! `warn` lists the tool anyway and warns, `off` neither pins nor checks.
//!
//! Bounded work: a listing is checked once (the verdict is kept until the
//! listing or the pins file changes, so listing from the cache costs one
//! `stat`), and a withheld change is reported once per definition: a
//! server whose definitions change on every listing gets its tools
//! withheld each time, one report per new definition, and no client is
//! told its list changed (only an approval does that).

pub mod canonical;
mod server;
mod store;

use std::{fmt, path::PathBuf, sync::Arc};

use serde::Serialize;

pub(crate) use server::{ApproveError, ServerPins};

/// What pinning does for a server (config `pin`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum PinPolicy {
    /// Pin on first sight; withhold a changed or new tool until approved.
    #[default]
    Block,
    /// Pin on first sight; list a changed or new tool anyway, and warn.
    Warn,
    /// No pinning.
    Off,
}

impl PinPolicy {
    /// The policy a config value names.
    pub fn parse(value: &str) -> Option<Self> {
        match value {
            "block" => Some(PinPolicy::Block),
            "warn" => Some(PinPolicy::Warn),
            "off" => Some(PinPolicy::Off),
            _ => None,
        }
    }

    /// Its config spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            PinPolicy::Block => "block",
            PinPolicy::Warn => "warn",
            PinPolicy::Off => "off",
        }
    }
}

/// Whether a withheld tool is new or changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ChangeKind {
    /// A tool the server did not have when it was pinned.
    Added,
    /// A tool whose definition differs from its pin.
    Changed,
}

impl ChangeKind {
    /// `added` or `changed`.
    pub fn as_str(self) -> &'static str {
        match self {
            ChangeKind::Added => "added",
            ChangeKind::Changed => "changed",
        }
    }
}

/// A tool held back because its definition is not the pinned one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Withheld {
    /// The server's config name.
    pub server: String,
    /// The tool's name on the server.
    pub tool: String,
    /// New, or changed.
    pub change: ChangeKind,
    /// The pin of the definition the server gives now.
    pub hash: String,
}

impl Withheld {
    /// The command that approves it.
    pub fn approve_command(&self) -> String {
        approve_command(&self.server, Some(&self.tool))
    }
}

impl fmt::Display for Withheld {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let why = match self.change {
            ChangeKind::Added => "is new on a server whose tools are pinned",
            ChangeKind::Changed => "changed its definition since it was pinned",
        };
        write!(
            f,
            "tool \"{}\" of server \"{}\" {why}; it is withheld until approved: see \
             `toolbridge tools diff {}`, then `{}`",
            self.tool,
            self.server,
            shell_word(&self.server),
            self.approve_command()
        )
    }
}

/// `toolbridge tools approve SERVER [TOOL]`, quoted for a shell.
pub fn approve_command(server: &str, tool: Option<&str>) -> String {
    let mut command = format!("toolbridge tools approve {}", shell_word(server));
    if let Some(tool) = tool {
        command.push(' ');
        command.push_str(&shell_word(tool));
    }
    command
}

/// `word` as one shell word: as it is when it is plain, else single-quoted.
fn shell_word(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./:@%+=,".contains(c));
    if plain {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

/// One withheld change with both definitions: `toolbridge tools diff`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PinDiff {
    /// The server's config name.
    pub server: String,
    /// The tool's name.
    pub tool: String,
    /// New, or changed.
    pub change: ChangeKind,
    /// The pinned definition (`null` for a new tool, or when the
    /// definitions file is gone).
    pub before: Option<serde_json::Value>,
    /// The definition the server gives now.
    pub after: serde_json::Value,
}

impl PinDiff {
    /// A unified diff of the pinned definition and the current one, for a
    /// person: the description as its lines, the schemas and annotations as
    /// indented JSON with keys in order. Hidden characters show as
    /// `<U+200B>`, so that an invisible change is visible.
    pub fn readable(&self) -> String {
        let before = self
            .before
            .as_ref()
            .map(readable_definition)
            .unwrap_or_default();
        let after = readable_definition(&self.after);
        let header = format!(
            "server \"{}\", tool \"{}\": {}\n",
            self.server,
            self.tool,
            match self.change {
                ChangeKind::Added => "new on a pinned server",
                ChangeKind::Changed => "changed since it was pinned",
            }
        );
        let diff = similar::TextDiff::from_lines(&before, &after);
        let before_label = match self.change {
            ChangeKind::Added => "(not pinned)",
            ChangeKind::Changed => "pinned",
        };
        format!(
            "{header}{}",
            diff.unified_diff()
                .context_radius(3)
                .header(before_label, "now")
        )
    }
}

/// The definition `value` as lines a person reads and a line diff compares.
fn readable_definition(value: &serde_json::Value) -> String {
    let mut out = String::new();
    let Some(object) = value.as_object() else {
        return out;
    };
    let mut field = |key: &str, text: String| {
        out.push_str(key);
        out.push_str(":\n");
        for line in text.lines() {
            out.push_str("  ");
            out.push_str(&show_hidden(line));
            out.push('\n');
        }
    };
    for key in ["name", "title", "description"] {
        if let Some(text) = object.get(key).and_then(|v| v.as_str()) {
            field(key, text.to_owned());
        }
    }
    for key in ["inputSchema", "outputSchema", "annotations"] {
        if let Some(value) = object.get(key) {
            // Through the canonical text: keys in order, whatever order the
            // server sent them in.
            let sorted: serde_json::Value =
                serde_json::from_str(&canonical::canonical_json(value)).unwrap_or_default();
            field(
                key,
                serde_json::to_string_pretty(&sorted).unwrap_or_default(),
            );
        }
    }
    out
}

/// `text` with each hidden character written as `<U+XXXX>`.
fn show_hidden(text: &str) -> std::borrow::Cow<'_, str> {
    if !crate::hidden_chars::contains_hidden(text) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        match crate::hidden_chars::kind_of(c) {
            Some(_) => out.push_str(&format!("<U+{:04X}>", u32::from(c))),
            None => out.push(c),
        }
    }
    std::borrow::Cow::Owned(out)
}

/// Something pinning saw, for an audit trail (the gateway logs each).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PinEvent {
    /// A definition not seen before was withheld (or, under `warn`, listed
    /// with a warning).
    Withheld(Withheld),
    /// A definition was approved (pinned as it is now).
    Approved(Withheld),
    /// A server was pinned for the first time, with this many tools.
    FirstPinned {
        /// The server's config name.
        server: String,
        /// How many tools were pinned.
        tools: usize,
    },
}

/// What hears of each [`PinEvent`].
pub type PinHook = Arc<dyn Fn(&PinEvent) + Send + Sync>;

/// Where pins are kept, and who hears of what pinning sees.
#[derive(Clone)]
pub struct PinOptions {
    /// The pins folder (`$XDG_DATA_HOME/toolbridge/pins`).
    pub dir: PathBuf,
    /// Told of each [`PinEvent`] (default: nobody; each is logged anyway).
    pub on_event: Option<PinHook>,
}

impl fmt::Debug for PinOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PinOptions")
            .field("dir", &self.dir)
            .field("on_event", &self.on_event.as_ref().map(|_| "Fn"))
            .finish()
    }
}

impl PinOptions {
    /// Pins kept in `dir`.
    pub fn in_dir(dir: impl Into<PathBuf>) -> Self {
        PinOptions {
            dir: dir.into(),
            on_event: None,
        }
    }

    /// The user's pins: `$XDG_DATA_HOME/toolbridge/pins`, else
    /// `~/.local/share/toolbridge/pins`; `None` without either variable.
    /// Pins are state the user cannot recreate (their approvals), so they
    /// live with the data, not the cache.
    pub fn user_default() -> Option<Self> {
        Some(Self::in_dir(crate::config::user_data_dir()?.join("pins")))
    }

    /// Tells the hook (if any) about `event`.
    pub(crate) fn emit(&self, event: PinEvent) {
        if let Some(hook) = &self.on_event {
            hook(&event);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_readable_diff_shows_the_changed_line_and_hidden_characters() {
        let diff = PinDiff {
            server: "s".into(),
            tool: "add".into(),
            change: ChangeKind::Changed,
            before: Some(
                serde_json::json!({"name": "add", "description": "Adds two numbers.",
                "inputSchema": {"type": "object", "properties": {"a": {"type": "number"}}}}),
            ),
            after: serde_json::json!({"name": "add", "description": "Adds two numbers.\u{200b}",
                "inputSchema": {"properties": {"a": {"type": "number"}}, "type": "object"}}),
        };
        let text = diff.readable();
        assert!(
            text.starts_with("server \"s\", tool \"add\": changed"),
            "{text}"
        );
        assert!(text.contains("-  Adds two numbers.\n"), "{text}");
        assert!(text.contains("+  Adds two numbers.<U+200B>\n"), "{text}");
        // Reordered keys are not a difference.
        assert!(!text.contains("+    \"type\""), "{text}");
    }

    #[test]
    fn the_approve_command_is_quoted_for_a_shell() {
        assert_eq!(
            approve_command("files", Some("read_file")),
            "toolbridge tools approve files read_file"
        );
        assert_eq!(
            approve_command("my server", Some("it's")),
            r"toolbridge tools approve 'my server' 'it'\''s'"
        );
        assert_eq!(approve_command("s", None), "toolbridge tools approve s");
    }
}
