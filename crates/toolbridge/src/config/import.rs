//! Importing the servers of other MCP clients' config files: Claude Desktop
//! (`claude_desktop_config.json`), Cursor (`mcp.json`), Claude Code
//! (`.mcp.json`, `~/.claude.json`), Windsurf, Cline, all with `mcpServers`;
//! VS Code's `mcp.json` (`servers`) and `settings.json` (`"mcp":
//! {"servers": ...}`), Zed's `settings.json` (`context_servers`); all read
//! as JSONC (comments and trailing commas).
//!
//! What only makes sense beside the imported file is made to mean the same
//! in toolbridge's config: `${workspaceFolder}` becomes the folder it stood
//! for (the one holding `.vscode/`, else the file's own folder), and the
//! `inputs` the imported servers use (`${input:ID}`) are carried into the
//! config's own `inputs`, so their prompts and `password` flags stay.

use std::{
    fs,
    path::{Path, PathBuf},
};

use serde_json::Value;

use super::{
    document::parse_object,
    edit::edit,
    error::ConfigError,
    fields::Source,
    jsonc,
    layout::{Layout, detect},
    record::ServerRecord,
};

/// What [`import`] did.
#[derive(Debug, Default)]
#[non_exhaustive]
pub struct ImportReport {
    /// Where the servers were in the imported file: `mcpServers`,
    /// `servers` or `mcp.servers`.
    pub found_in: String,
    /// Servers added to the config.
    pub added: Vec<String>,
    /// Servers whose record was replaced (only with `force`).
    pub replaced: Vec<String>,
    /// Servers not imported because the config already has the name.
    pub skipped: Vec<String>,
    /// Servers not imported because their record is not valid, and why.
    pub invalid: Vec<ConfigError>,
    /// The folder `${workspaceFolder}` was replaced with, when an imported
    /// server used it.
    pub workspace: Option<PathBuf>,
    /// The ids of the `inputs` added to the config (used by the imported
    /// servers, not declared there yet).
    pub inputs: Vec<String>,
    /// Why the inputs the imported servers use could not be added to the
    /// config (the servers were imported all the same; toolbridge then asks
    /// for each input without its description, or reads
    /// `TOOLBRIDGE_INPUT_<ID>`).
    pub inputs_error: Option<ConfigError>,
}

/// The servers of another application's config file, read and checked:
/// what [`import_servers`] merges into a config. The settings page shows
/// them before the user picks which to add.
#[derive(Debug)]
#[non_exhaustive]
pub struct Importable {
    /// Where the servers were in the file: `mcpServers`, `servers`,
    /// `mcp.servers` or `context_servers`.
    pub found_in: String,
    /// The valid servers in the file's order: name and record as it will
    /// be written (`${workspaceFolder}` replaced when the folder is known).
    pub servers: Vec<(String, Value)>,
    /// The servers that cannot be imported, and why.
    pub invalid: Vec<ConfigError>,
    /// The folder `${workspaceFolder}` was replaced with, when a server
    /// used it.
    pub workspace: Option<PathBuf>,
    /// The file's `inputs` declarations (VS Code's), if any.
    declared_inputs: Option<Value>,
}

/// Merges the servers of `from` into the config file at `config`, through
/// [`edit`](super::edit) (locked, atomic). A name the config already has is
/// skipped, or replaced when `force` is true. Records are copied as they
/// are, unknown fields included; invalid ones are reported, not imported.
pub fn import(config: &Path, from: &Path, force: bool) -> Result<ImportReport, ConfigError> {
    let text = fs::read_to_string(from).map_err(|source| ConfigError::Read {
        path: from.to_path_buf(),
        source,
    })?;
    let importable = importable(from, &text, super::file::workspace_of(from))?;
    import_servers(config, importable, None, force)
}

/// The servers `text` holds, read as the file `from` (whose name tells
/// VS Code's and Zed's `settings.json` apart, and names it in errors);
/// `workspace` is the folder `${workspaceFolder}` stands for, when known
/// (a file uploaded to the settings page has none: it is left as written).
pub fn importable(
    from: &Path,
    text: &str,
    workspace: Option<PathBuf>,
) -> Result<Importable, ConfigError> {
    let text = jsonc::strip(text);
    let root = parse_object(from, &text)?;
    let layout = detect(from, &text, &root)?;
    let top = Source {
        path: from,
        text: &text,
        servers_at: &[],
    };
    let Some((keys, Value::Object(servers))) =
        layout.and_then(|layout| Some((layout.keys(), layout.lookup(&root)?)))
    else {
        return Err(top.invalid(
            None,
            None,
            &[],
            "no MCP servers found; expected \"mcpServers\", \"servers\", \
             \"mcp\": {\"servers\": ...} or \"context_servers\"",
        ));
    };
    let mut found = Importable {
        found_in: keys.join("."),
        servers: Vec::new(),
        invalid: Vec::new(),
        workspace: None,
        declared_inputs: root.get("inputs").cloned(),
    };
    let src = Source {
        path: from,
        text: &text,
        servers_at: keys,
    };
    for (name, record) in servers {
        let is_extension = |obj: &serde_json::Map<String, Value>| {
            !obj.contains_key("command") && !obj.contains_key("url")
        };
        if layout == Some(Layout::Zed) && record.as_object().is_some_and(is_extension) {
            found.invalid.push(src.invalid(
                Some(name),
                None,
                &[],
                "is provided by a Zed extension, which toolbridge cannot start",
            ));
            continue;
        }
        match ServerRecord::parse(&src, name, record) {
            Ok(_) => {
                let mut record = record.clone();
                if let Some(folder) = &workspace
                    && replace_workspace_folder(&mut record, folder)
                {
                    found.workspace = Some(folder.clone());
                }
                found.servers.push((name.clone(), record));
            }
            Err(error) => found.invalid.push(error),
        }
    }
    Ok(found)
}

/// Merges `found`'s servers (only those named in `chosen`, when given)
/// into the config file at `config`, as [`import`] does.
pub fn import_servers(
    config: &Path,
    found: Importable,
    chosen: Option<&[String]>,
    force: bool,
) -> Result<ImportReport, ConfigError> {
    let mut report = ImportReport {
        found_in: found.found_in,
        invalid: found.invalid,
        workspace: found.workspace,
        ..ImportReport::default()
    };
    let valid: Vec<(String, Value)> = found
        .servers
        .into_iter()
        .filter(|(name, _)| chosen.is_none_or(|chosen| chosen.contains(name)))
        .collect();
    let used_inputs = declared_inputs_used(found.declared_inputs.as_ref(), &valid);

    edit(config, |doc| {
        for (name, record) in valid {
            if !doc.contains(&name) {
                doc.put_server(&name, record)?;
                report.added.push(name);
            } else if force {
                doc.put_server(&name, record)?;
                report.replaced.push(name);
            } else {
                report.skipped.push(name);
            }
        }
        Ok(())
    })?;
    let imported = !report.added.is_empty() || !report.replaced.is_empty();
    if imported && !used_inputs.is_empty() {
        // Apart from the servers: an edit of the servers alone keeps a
        // commented file's comments, one of `inputs` may not be possible.
        let mut carried = Vec::new();
        match edit(config, |doc| {
            carried = doc.add_inputs(&used_inputs);
            Ok(())
        }) {
            Ok(()) => report.inputs = carried,
            Err(error) => report.inputs_error = Some(error),
        }
    }
    Ok(report)
}

/// Replaces `${workspaceFolder}` in every string of `value` with `folder`;
/// returns whether there was any.
fn replace_workspace_folder(value: &mut Value, folder: &Path) -> bool {
    const VARIABLE: &str = "${workspaceFolder}";
    match value {
        Value::String(text) if text.contains(VARIABLE) => {
            *text = text.replace(VARIABLE, &folder.to_string_lossy());
            true
        }
        Value::Array(items) => items.iter_mut().fold(false, |any, item| {
            replace_workspace_folder(item, folder) | any
        }),
        Value::Object(map) => map.values_mut().fold(false, |any, item| {
            replace_workspace_folder(item, folder) | any
        }),
        _ => false,
    }
}

/// The entries of `inputs` (VS Code's declarations) that a server of
/// `servers` uses as `${input:ID}`, in declaration order.
fn declared_inputs_used(inputs: Option<&Value>, servers: &[(String, Value)]) -> Vec<Value> {
    let Some(Value::Array(inputs)) = inputs else {
        return Vec::new();
    };
    let texts: Vec<String> = servers.iter().map(|(_, r)| r.to_string()).collect();
    inputs
        .iter()
        .filter(|input| {
            input.get("id").and_then(Value::as_str).is_some_and(|id| {
                let reference = format!("${{input:{id}}}");
                texts.iter().any(|text| text.contains(&reference))
            })
        })
        .cloned()
        .collect()
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use serde_json::json;

    use super::*;
    use crate::config::{Config, TransportKind};

    struct Dirs {
        _dir: tempfile::TempDir,
        config: PathBuf,
        root: PathBuf,
    }

    fn dirs() -> Dirs {
        let dir = tempfile::tempdir().unwrap();
        Dirs {
            config: dir.path().join("config.json"),
            root: dir.path().to_path_buf(),
            _dir: dir,
        }
    }

    fn write(dirs: &Dirs, name: &str, text: &str) -> PathBuf {
        let path = dirs.root.join(name);
        fs::write(&path, text).unwrap();
        path
    }

    fn saved(path: &Path) -> Value {
        serde_json::from_str(&jsonc::strip(&fs::read_to_string(path).unwrap())).unwrap()
    }

    #[test]
    fn claude_desktop_servers_are_added_with_their_unknown_fields() {
        let d = dirs();
        let from = write(
            &d,
            "claude_desktop_config.json",
            r#"{
  "globalShortcut": "Ctrl+Space",
  "mcpServers": {
    "filesystem": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"]},
    "time": {"command": "uvx", "args": ["mcp-server-time"], "env": {"TZ": "UTC"}, "autoApprove": []}
  }
}"#,
        );
        let report = import(&d.config, &from, false).unwrap();
        assert_eq!(report.found_in, "mcpServers");
        assert_eq!(report.added, ["filesystem", "time"]);
        assert!(
            report.skipped.is_empty() && report.replaced.is_empty() && report.invalid.is_empty()
        );
        assert_eq!(
            saved(&d.config)["mcpServers"]["time"],
            json!({"command": "uvx", "args": ["mcp-server-time"], "env": {"TZ": "UTC"}, "autoApprove": []})
        );
        assert!(
            saved(&d.config).get("globalShortcut").is_none(),
            "only servers are imported"
        );
    }

    #[test]
    fn claude_code_and_cursor_typed_servers_are_imported() {
        let d = dirs();
        let from = write(
            &d,
            ".mcp.json",
            r#"{"mcpServers": {
                "local": {"type": "stdio", "command": "srv", "args": [], "env": {}},
                "remote": {"type": "http", "url": "https://h/mcp", "headers": {"Authorization": "Bearer ${TOKEN}"}},
                "old": {"type": "sse", "url": "https://h/sse"}
            }}"#,
        );
        let report = import(&d.config, &from, false).unwrap();
        assert_eq!(report.added, ["local", "remote", "old"]);
        let config = Config::load(&d.config).unwrap();
        let kinds: Vec<TransportKind> = config.listing().iter().map(|l| l.transport).collect();
        assert_eq!(
            kinds,
            [
                TransportKind::Stdio,
                TransportKind::Http,
                TransportKind::Sse
            ]
        );
    }

    #[test]
    fn vs_code_mcp_json_with_comments_is_imported() {
        let d = dirs();
        let from = write(
            &d,
            "mcp.json",
            r#"{
  // Inputs are prompted by VS Code.
  "inputs": [{"type": "promptString", "id": "key", "password": true}],
  "servers": {
    /* the clock */
    "clock": {"type": "stdio", "command": "uvx", "args": ["mcp-server-time",],},
    "api": {"type": "http", "url": "https://h/mcp", "headers": {"X-Key": "${env:API_KEY}"}},
  },
}"#,
        );
        let report = import(&d.config, &from, false).unwrap();
        assert_eq!(report.found_in, "servers");
        assert_eq!(report.added, ["clock", "api"]);
        assert_eq!(
            saved(&d.config)["mcpServers"]["clock"],
            json!({"type": "stdio", "command": "uvx", "args": ["mcp-server-time"]})
        );
    }

    /// Regression (issue 24, item 5): `${workspaceFolder}` was copied as is
    /// (then meaning toolbridge's config folder) and `inputs` were dropped
    /// without a word.
    #[test]
    fn a_vs_code_workspace_keeps_its_folder_and_inputs() {
        let d = dirs();
        let vscode = d.root.join("project/.vscode");
        fs::create_dir_all(&vscode).unwrap();
        let from = vscode.join("mcp.json");
        fs::write(
            &from,
            r#"{
  "inputs": [
    {"type": "promptString", "id": "api-key", "description": "The API key", "password": true},
    {"type": "promptString", "id": "unused"}
  ],
  "servers": {
    "files": {"type": "stdio", "command": "${workspaceFolder}/bin/srv",
              "args": ["--root", "${workspaceFolder}"], "env": {"KEY": "${input:api-key}"}}
  }
}"#,
        )
        .unwrap();
        fs::write(&d.config, "{\n  // mine\n  \"mcpServers\": {}\n}\n").unwrap();
        let report = import(&d.config, &from, false).unwrap();
        let project = std::path::absolute(d.root.join("project")).unwrap();
        assert_eq!(report.workspace.as_deref(), Some(project.as_path()));
        let saved = saved(&d.config);
        let files = &saved["mcpServers"]["files"];
        let folder = project.display().to_string();
        assert_eq!(files["command"], format!("{folder}/bin/srv"));
        assert_eq!(files["args"], json!(["--root", folder]));
        assert!(report.inputs_error.is_none(), "{:?}", report.inputs_error);
        assert_eq!(report.inputs, ["api-key"]);
        assert_eq!(
            saved["inputs"],
            json!([{"type": "promptString", "id": "api-key", "description": "The API key",
                    "password": true}])
        );
        // Only the inputs and the server were written: the comment stays.
        assert!(fs::read_to_string(&d.config).unwrap().contains("// mine"));
        let config = Config::load(&d.config).unwrap();
        assert_eq!(config.server_names(), ["files"]);
    }

    #[test]
    fn vs_code_settings_json_mcp_servers_are_imported() {
        let d = dirs();
        let from = write(
            &d,
            "settings.json",
            r#"{
  "editor.fontSize": 14, // a comment
  "mcp": {
    "servers": {
      "fetch": {"command": "uvx", "args": ["mcp-server-fetch"]}
    }
  }
}"#,
        );
        let report = import(&d.config, &from, false).unwrap();
        assert_eq!(report.found_in, "mcp.servers");
        assert_eq!(report.added, ["fetch"]);
    }

    #[test]
    fn zed_servers_are_imported_and_extension_servers_reported() {
        let d = dirs();
        let from = write(
            &d,
            "settings.json",
            r#"{
  // Zed
  "context_servers": {
    "old": {"command": {"path": "srv", "args": ["-v"], "env": {}}, "settings": {}},
    "flat": {"source": "custom", "command": "srv", "args": []},
    "ext": {"source": "extension", "settings": {}}
  }
}"#,
        );
        let report = import(&d.config, &from, false).unwrap();
        assert_eq!(report.found_in, "context_servers");
        assert_eq!(report.added, ["old", "flat"]);
        assert_eq!(report.invalid.len(), 1);
        assert!(
            report.invalid[0]
                .to_string()
                .contains("server \"ext\": is provided by a Zed extension"),
            "{}",
            report.invalid[0]
        );
        let config = Config::load(&d.config).unwrap();
        assert_eq!(config.server_names(), ["old", "flat"]);
    }

    #[test]
    fn name_clashes_are_skipped_unless_forced() {
        let d = dirs();
        fs::write(
            &d.config,
            r#"{"mcpServers": {"time": {"command": "mine"}, "keep": {"command": "k"}}}"#,
        )
        .unwrap();
        let from = write(
            &d,
            "other.json",
            r#"{"mcpServers": {"time": {"command": "theirs"}, "new": {"command": "n"}}}"#,
        );
        let report = import(&d.config, &from, false).unwrap();
        assert_eq!(report.added, ["new"]);
        assert_eq!(report.skipped, ["time"]);
        assert_eq!(saved(&d.config)["mcpServers"]["time"]["command"], "mine");

        let report = import(&d.config, &from, true).unwrap();
        assert!(report.added.is_empty());
        assert_eq!(report.replaced, ["time", "new"]);
        let servers = saved(&d.config)["mcpServers"].clone();
        assert_eq!(servers["time"]["command"], "theirs");
        let names: Vec<&String> = servers.as_object().unwrap().keys().collect();
        assert_eq!(names, ["time", "keep", "new"], "replaced in place");
    }

    #[test]
    fn invalid_records_are_reported_and_the_rest_imported() {
        let d = dirs();
        let from = write(
            &d,
            "x.json",
            "{\"mcpServers\": {\n  \"bad\": {\"command\": \"x\", \"args\": \"oops\"},\n  \"good\": {\"command\": \"g\"}\n}}",
        );
        let report = import(&d.config, &from, false).unwrap();
        assert_eq!(report.added, ["good"]);
        assert_eq!(report.invalid.len(), 1);
        let error = &report.invalid[0];
        assert_eq!(error.server(), Some("bad"));
        assert_eq!(error.path(), from);
        assert_eq!(error.line_col(), Some((2, 35)));
    }

    #[test]
    fn a_file_without_servers_or_with_bad_json_changes_nothing() {
        let d = dirs();
        let original = "{\"mcpServers\": {\"a\": {\"command\": \"a\"}}}";
        fs::write(&d.config, original).unwrap();

        let none = write(&d, "none.json", "{\"editor.fontSize\": 14}");
        let error = import(&d.config, &none, false).unwrap_err();
        assert!(
            error.to_string().contains("no MCP servers found"),
            "{error}"
        );

        let broken = write(
            &d,
            "broken.json",
            "{\n  \"mcpServers\": {\n    \"a\" {}\n  }\n}",
        );
        let error = import(&d.config, &broken, false).unwrap_err();
        assert!(matches!(error, ConfigError::Syntax { .. }), "{error:?}");
        assert_eq!(error.path(), broken);
        assert_eq!(error.line_col(), Some((3, 9)));

        let error = import(&d.config, &d.root.join("missing.json"), false).unwrap_err();
        assert!(matches!(error, ConfigError::Read { .. }));
        assert_eq!(fs::read_to_string(&d.config).unwrap(), original);
    }
}
