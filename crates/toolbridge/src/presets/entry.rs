//! Presets to config entries and back.

use serde_json::{Map, Value, json};

use super::{
    catalog::all,
    model::{Preset, PresetError, PresetSandbox, Registry, Transport},
};

/// The `mcpServers` entry for `preset` (the value under the server's name).
///
/// The API key is stored as given when `api_key` is `Some`; otherwise the entry
/// holds a reference the config expands at start-up: `${VAR}` when the preset
/// needs the key, `${VAR:-}` (empty when unset) when the key is optional.
/// Stdio servers get the key in `env` (they do not inherit toolbridge's
/// environment), remote servers in their headers. `extra_args` are appended to
/// the preset's arguments.
pub fn to_config_entry(
    preset: &Preset,
    api_key: Option<&str>,
    extra_args: &[String],
) -> Result<Value, PresetError> {
    let key_value = match (preset.api_key_env_var, api_key) {
        (None, Some(_)) => {
            return Err(PresetError::NoApiKey {
                preset: preset.id.to_owned(),
            });
        }
        (None, None) => None,
        (Some(var), Some(key)) => {
            if key.contains("${") {
                return Err(PresetError::KeyNotStorable {
                    preset: preset.id.to_owned(),
                    var: var.to_owned(),
                });
            }
            Some((var, key.to_owned()))
        }
        (Some(var), None) if preset.requires_api_key => Some((var, format!("${{{var}}}"))),
        (Some(var), None) => Some((var, format!("${{{var}:-}}"))),
    };

    match preset.transport {
        Transport::Stdio => {
            let mut entry = Map::new();
            entry.insert("command".into(), json!(preset.command.unwrap_or_default()));
            let args: Vec<&str> = preset
                .args
                .iter()
                .copied()
                .chain(extra_args.iter().map(String::as_str))
                .collect();
            entry.insert("args".into(), json!(args));
            let mut env = Map::new();
            for (k, v) in preset.extra_env {
                env.insert((*k).into(), json!(v));
            }
            if let Some((var, value)) = key_value {
                env.insert(var.into(), json!(value));
            }
            if !env.is_empty() {
                entry.insert("env".into(), Value::Object(env));
            }
            if preset.sandbox == PresetSandbox::WritesItsFolders {
                entry.insert("sandbox".into(), json!({ "write": extra_args }));
            }
            Ok(Value::Object(entry))
        }
        Transport::Http => {
            if !extra_args.is_empty() {
                return Err(PresetError::ExtraArgsForRemote {
                    preset: preset.id.to_owned(),
                });
            }
            let mut headers = Map::new();
            for (name, template) in preset.headers {
                let value = match &key_value {
                    Some((var, value)) => template.replace(&format!("${{{var}}}"), value),
                    None => (*template).to_owned(),
                };
                headers.insert((*name).into(), json!(value));
            }
            let mut entry = Map::new();
            entry.insert("type".into(), json!("http"));
            entry.insert("url".into(), json!(preset.url.unwrap_or_default()));
            if !headers.is_empty() {
                entry.insert("headers".into(), Value::Object(headers));
            }
            Ok(Value::Object(entry))
        }
    }
}

/// The preset a configured server was made from, recognised by its package
/// (an argument such as `tavily-mcp@0.2` or `mcp-server-time==2026.*`, or a
/// command named after the package) or by its URL.
///
/// This works for entries written by hand or imported from other clients too,
/// which is why it does not rely on a marker in the config.
pub fn find_by_launch(
    command: Option<&str>,
    args: &[String],
    url: Option<&str>,
) -> Option<&'static Preset> {
    if let Some(url) = url {
        let url = url.trim_end_matches('/');
        return all()
            .iter()
            .find(|p| p.url.is_some_and(|u| u.trim_end_matches('/') == url));
    }
    let program = command.map(|c| {
        let base = c.rsplit(['/', '\\']).next().unwrap_or(c);
        base.strip_suffix(".exe").unwrap_or(base)
    });
    all().iter().find(|p| {
        let Some(package) = p.package else {
            return false;
        };
        let named = |s: &str| package_name(s, package.registry).is_some_and(|n| n == package.name);
        program.is_some_and(|c| c == package.name) || args.iter().any(|a| named(a))
    })
}

/// The package name in a package spec (`@scope/name@2026` → `@scope/name`,
/// `name==2026.*` → `name`); PyPI names are normalised (lowercase, `-`).
fn package_name(spec: &str, registry: Registry) -> Option<String> {
    match registry {
        Registry::Npm => {
            let at = if let Some(rest) = spec.strip_prefix('@') {
                rest.find('@').map(|i| i + 1)
            } else {
                spec.find('@')
            };
            let name = at.map_or(spec, |i| &spec[..i]);
            (!name.is_empty()).then(|| name.to_owned())
        }
        Registry::Pypi => {
            let end = spec
                .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')))
                .unwrap_or(spec.len());
            let name = &spec[..end];
            (!name.is_empty()).then(|| name.to_ascii_lowercase().replace(['_', '.'], "-"))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::presets::get;

    fn strings(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn keyless_stdio_preset_becomes_command_and_args() {
        let entry = to_config_entry(get("memory").unwrap(), None, &[]).unwrap();
        assert_eq!(
            entry,
            json!({"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory@2026"]})
        );
    }

    #[test]
    fn required_key_is_stored_as_a_reference_by_default() {
        let entry = to_config_entry(get("tavily").unwrap(), None, &[]).unwrap();
        assert_eq!(entry["env"], json!({"TAVILY_API_KEY": "${TAVILY_API_KEY}"}));
    }

    #[test]
    fn given_key_is_stored_as_is() {
        let entry = to_config_entry(get("tavily").unwrap(), Some("tvly-123"), &[]).unwrap();
        assert_eq!(entry["env"], json!({"TAVILY_API_KEY": "tvly-123"}));
    }

    #[test]
    fn optional_key_reference_has_an_empty_default() {
        let entry = to_config_entry(get("context7").unwrap(), None, &[]).unwrap();
        assert_eq!(
            entry["env"],
            json!({"CONTEXT7_API_KEY": "${CONTEXT7_API_KEY:-}"})
        );
    }

    #[test]
    fn extra_env_and_extra_args_are_kept() {
        let extra = strings(&["--flag"]);
        let entry = to_config_entry(get("zai-vision").unwrap(), None, &extra).unwrap();
        assert_eq!(
            entry,
            json!({
                "command": "npx",
                "args": ["-y", "@z_ai/mcp-server@0.1", "--flag"],
                "env": {"Z_AI_MODE": "ZHIPU", "Z_AI_API_KEY": "${Z_AI_API_KEY}"}
            })
        );
    }

    #[test]
    fn the_filesystem_preset_writes_only_its_folders() {
        let folders = strings(&["/srv/docs", "/srv/notes"]);
        let entry = to_config_entry(get("filesystem").unwrap(), None, &folders).unwrap();
        assert_eq!(
            entry["sandbox"],
            json!({"write": ["/srv/docs", "/srv/notes"]})
        );
        let other = to_config_entry(get("memory").unwrap(), None, &[]).unwrap();
        assert!(other.get("sandbox").is_none(), "{other}");
    }

    #[test]
    fn remote_preset_puts_the_key_in_its_bearer_header() {
        let preset = get("zhipu-web-search").unwrap();
        let by_ref = to_config_entry(preset, None, &[]).unwrap();
        assert_eq!(
            by_ref,
            json!({
                "type": "http",
                "url": "https://open.bigmodel.cn/api/mcp/web_search_prime/mcp",
                "headers": {"Authorization": "Bearer ${Z_AI_API_KEY}"}
            })
        );
        let by_value = to_config_entry(preset, Some("k1"), &[]).unwrap();
        assert_eq!(by_value["headers"]["Authorization"], "Bearer k1");
    }

    #[test]
    fn mistakes_are_errors() {
        assert!(matches!(
            to_config_entry(get("memory").unwrap(), Some("k"), &[]),
            Err(PresetError::NoApiKey { .. })
        ));
        assert!(matches!(
            to_config_entry(get("tavily").unwrap(), Some("a${B}"), &[]),
            Err(PresetError::KeyNotStorable { .. })
        ));
        assert!(matches!(
            to_config_entry(get("zhipu-web-search").unwrap(), None, &strings(&["x"])),
            Err(PresetError::ExtraArgsForRemote { .. })
        ));
    }

    #[test]
    fn every_preset_is_recognised_from_its_own_entry() {
        for preset in all() {
            let entry = to_config_entry(preset, None, &[]).unwrap();
            let args: Vec<String> = entry["args"]
                .as_array()
                .map(|a| {
                    a.iter()
                        .filter_map(|v| v.as_str())
                        .map(String::from)
                        .collect()
                })
                .unwrap_or_default();
            let found = find_by_launch(entry["command"].as_str(), &args, entry["url"].as_str());
            assert_eq!(found.map(|p| p.id), Some(preset.id));
        }
    }

    #[test]
    fn hand_written_entries_are_recognised() {
        let time = find_by_launch(Some("uvx"), &strings(&["mcp-server-time"]), None);
        assert_eq!(time.map(|p| p.id), Some("time"));
        let pinned = find_by_launch(Some("npx"), &strings(&["-y", "tavily-mcp@0.2.22"]), None);
        assert_eq!(pinned.map(|p| p.id), Some("tavily"));
        let installed = find_by_launch(Some("/usr/local/bin/mcp-server-git"), &[], None);
        assert_eq!(installed.map(|p| p.id), Some("git"));
        let slash = find_by_launch(
            None,
            &[],
            Some("https://open.bigmodel.cn/api/mcp/web_search_prime/mcp/"),
        );
        assert_eq!(slash.map(|p| p.id), Some("zhipu-web-search"));
        assert!(find_by_launch(Some("node"), &strings(&["server.js"]), None).is_none());
    }

    #[test]
    fn package_names_are_taken_from_specs() {
        assert_eq!(
            package_name("@scope/pkg@1.2", Registry::Npm).as_deref(),
            Some("@scope/pkg")
        );
        assert_eq!(
            package_name("@scope/pkg", Registry::Npm).as_deref(),
            Some("@scope/pkg")
        );
        assert_eq!(package_name("pkg@1", Registry::Npm).as_deref(), Some("pkg"));
        assert_eq!(
            package_name("Mcp_Server.Time>=1", Registry::Pypi).as_deref(),
            Some("mcp-server-time")
        );
    }
}
