//! [`Layout`]: where a config file keeps its servers, which depends on the
//! application that owns the file.
//!
//! | layout | key | files |
//! |---|---|---|
//! | `McpServers` | `mcpServers` | Claude Desktop, Claude Code (`.mcp.json`, `~/.claude.json`), Cursor, Windsurf, Cline, toolbridge |
//! | `VsCode` | `servers` | VS Code's `mcp.json` (`.vscode/mcp.json`, the user `mcp.json`) |
//! | `VsCodeSettings` | `mcp.servers` | VS Code's `settings.json` |
//! | `Zed` | `context_servers` | Zed's `settings.json` |

use std::path::Path;

use serde_json::{Map, Value};

use super::{error::ConfigError, fields::Source, span::Step};
use crate::json_kind::kind_of;

/// Where a file keeps its servers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Layout {
    /// `mcpServers`.
    McpServers,
    /// `servers` (VS Code's `mcp.json`).
    VsCode,
    /// `mcp.servers` (VS Code's `settings.json`).
    VsCodeSettings,
    /// `context_servers` (Zed's `settings.json`).
    Zed,
}

impl Layout {
    /// Every layout, in the order they are looked for.
    pub(crate) const ALL: [Layout; 4] = [
        Layout::McpServers,
        Layout::VsCode,
        Layout::VsCodeSettings,
        Layout::Zed,
    ];

    /// The keys leading to the servers object.
    pub(crate) fn keys(self) -> &'static [&'static str] {
        match self {
            Layout::McpServers => &["mcpServers"],
            Layout::VsCode => &["servers"],
            Layout::VsCodeSettings => &["mcp", "servers"],
            Layout::Zed => &["context_servers"],
        }
    }

    /// The keys joined with `.`, as messages show them.
    pub(crate) fn dotted(self) -> String {
        self.keys().join(".")
    }

    /// The application that reads this layout, for messages.
    pub(crate) fn application(self) -> &'static str {
        match self {
            Layout::McpServers => "the application",
            Layout::VsCode | Layout::VsCodeSettings => "VS Code",
            Layout::Zed => "Zed",
        }
    }

    /// Keys toolbridge could write into an entry that this layout's
    /// application does not read (`mcpServers` files are read by several
    /// applications, most of which read them all).
    pub(crate) fn unread_keys(self) -> &'static [&'static str] {
        match self {
            Layout::McpServers => &[],
            Layout::VsCode | Layout::VsCodeSettings => &["timeout", "disabled"],
            Layout::Zed => &["timeout", "disabled", "cwd"],
        }
    }

    /// The layout of a file that has no servers yet, from its name: Zed's
    /// `settings.json` (under a `zed` folder), VS Code's `settings.json`,
    /// VS Code's `mcp.json` (in `.vscode/` or VS Code's `User` folder);
    /// anything else is `mcpServers`.
    pub(crate) fn for_new_file(path: &Path) -> Layout {
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        let parent = |n: usize| {
            path.ancestors()
                .nth(n)
                .and_then(Path::file_name)
                .and_then(|n| n.to_str())
                .unwrap_or_default()
                .to_ascii_lowercase()
        };
        match name {
            "settings.json" if (1..=2).any(|n| parent(n) == "zed") => Layout::Zed,
            "settings.json" => Layout::VsCodeSettings,
            "mcp.json" if parent(1) == ".vscode" || parent(1) == "user" => Layout::VsCode,
            _ => Layout::McpServers,
        }
    }

    /// The servers object in `root`, unless missing or `null`.
    pub(crate) fn lookup(self, root: &Map<String, Value>) -> Option<&Value> {
        let (first, rest) = self.keys().split_first()?;
        let mut value = root.get(*first)?;
        for key in rest {
            value = value.get(key)?;
        }
        Some(value).filter(|value| !value.is_null())
    }

    /// The servers object in `root`, created (with its parents) when missing.
    pub(crate) fn lookup_mut(
        self,
        root: &mut Map<String, Value>,
    ) -> Option<&mut Map<String, Value>> {
        let mut map = root;
        for key in self.keys() {
            let slot = map.entry(*key).or_insert(Value::Null);
            if slot.is_null() {
                *slot = Value::Object(Map::new());
            }
            map = slot.as_object_mut()?;
        }
        Some(map)
    }

    /// `record` (as toolbridge writes it, for `mcpServers`) in the shape this
    /// layout's application reads: VS Code wants `type` on every server;
    /// Zed has no `type` and marks its own servers `"source": "custom"`.
    pub(crate) fn shape(self, record: Value) -> Value {
        let Value::Object(fields) = record else {
            return record;
        };
        let mut out = Map::new();
        match self {
            Layout::McpServers => return Value::Object(fields),
            Layout::VsCode | Layout::VsCodeSettings => {
                if !fields.contains_key("type") {
                    let kind = if fields.contains_key("command") {
                        "stdio"
                    } else {
                        "http"
                    };
                    out.insert("type".to_string(), Value::from(kind));
                }
            }
            Layout::Zed => {
                out.insert("source".to_string(), Value::from("custom"));
            }
        }
        for (key, value) in fields {
            if self == Layout::Zed && key == "type" {
                continue;
            }
            out.insert(key, value);
        }
        Value::Object(out)
    }
}

/// The layout `root` uses (`None` when it has no servers), checking that the
/// servers are an object and that only one layout is present.
pub(crate) fn detect(
    path: &Path,
    text: &str,
    root: &Map<String, Value>,
) -> Result<Option<Layout>, ConfigError> {
    let src = Source {
        path,
        text,
        servers_at: &[],
    };
    let present: Vec<Layout> = Layout::ALL
        .into_iter()
        .filter(|layout| layout.lookup(root).is_some())
        .collect();
    let steps = |layout: Layout| -> Vec<Step<'static>> {
        layout.keys().iter().map(|key| Step::Key(key)).collect()
    };
    if let [first, second, ..] = present[..] {
        return Err(src.invalid(
            None,
            Some(second.keys()[0]),
            &steps(second),
            format!(
                "has both \"{}\" and \"{}\"; move every server into one of them",
                first.dotted(),
                second.dotted()
            ),
        ));
    }
    let Some(&layout) = present.first() else {
        return Ok(None);
    };
    match layout.lookup(root) {
        Some(Value::Object(_)) | None => Ok(Some(layout)),
        Some(other) => Err(src.invalid(
            None,
            Some(layout.keys()[layout.keys().len() - 1]),
            &steps(layout),
            format!(
                "\"{}\" must be an object mapping server names to servers, not {}",
                layout.dotted(),
                kind_of(other)
            ),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_file_gets_the_layout_its_application_reads() {
        for (path, layout) in [
            ("/h/.config/zed/settings.json", Layout::Zed),
            ("/h/.config/Code/User/settings.json", Layout::VsCodeSettings),
            ("/p/.vscode/mcp.json", Layout::VsCode),
            ("/h/.config/Code/User/mcp.json", Layout::VsCode),
            ("/h/.cursor/mcp.json", Layout::McpServers),
            ("/h/.config/toolbridge/config.json", Layout::McpServers),
        ] {
            assert_eq!(Layout::for_new_file(Path::new(path)), layout, "{path}");
        }
    }
}
