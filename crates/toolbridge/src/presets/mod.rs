//! Curated real MCP servers ("presets"), the spec's `OFFICIAL_MCP_PRESETS`.
//!
//! A [`Preset`] says how to launch a published server (an npm package through
//! `npx -y`, a PyPI package through `uvx`, or a remote streamable-HTTP URL),
//! which tools it lists, and which API key it needs. [`to_config_entry`] turns
//! one into an `mcpServers` entry; [`find_by_launch`] recognises a configured
//! server that came from a preset, so `doctor` can check its key; [`search`]
//! finds presets by words; [`add`] adds one to a config file (the CLI's
//! `presets add` and the web page's Presets view); [`configured`] says which
//! configured servers came from a preset.
//!
//! The catalogue pins each package to one major version, so a breaking release
//! never reaches a user unannounced; `scripts/check-presets.py` checks that
//! every package still exists and that the tool lists are still right.

#[cfg(feature = "client")]
mod add;
mod catalog;
#[cfg(feature = "client")]
mod configured;
mod entry;
mod model;
mod search;

#[cfg(feature = "client")]
pub use add::{AddError, AddPreset, Added, KeyPlace, add};
pub use catalog::all;
#[cfg(feature = "client")]
pub use configured::configured;
pub use entry::{find_by_launch, to_config_entry};
pub use model::{Category, Package, Preset, PresetError, PresetSandbox, Registry, Transport};
pub use search::search;

/// The preset with this id.
pub fn get(id: &str) -> Result<&'static Preset, PresetError> {
    all()
        .iter()
        .find(|p| p.id == id)
        .ok_or_else(|| PresetError::Unknown { id: id.to_owned() })
}

/// The presets of one category, in catalogue order.
pub fn by_category(category: Category) -> impl Iterator<Item = &'static Preset> {
    all().iter().filter(move |p| p.category == category)
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::*;

    #[test]
    fn catalogue_has_at_least_15_presets_and_every_category() {
        assert!(all().len() >= 15, "only {} presets", all().len());
        for category in Category::ALL {
            assert!(
                by_category(category).next().is_some(),
                "no {category} preset"
            );
        }
    }

    #[test]
    fn ids_and_tool_names_are_unique() {
        let mut ids = HashSet::new();
        for p in all() {
            assert!(ids.insert(p.id), "duplicate id {}", p.id);
            assert!(!p.tools.is_empty(), "{} lists no tools", p.id);
            let tools: HashSet<_> = p.tools.iter().collect();
            assert_eq!(tools.len(), p.tools.len(), "{} repeats a tool", p.id);
        }
    }

    #[test]
    fn stdio_presets_launch_their_pinned_package() {
        for p in all().iter().filter(|p| p.transport == Transport::Stdio) {
            let package = p
                .package
                .unwrap_or_else(|| panic!("{} has no package", p.id));
            let (command, spec) = match package.registry {
                Registry::Npm => ("npx", format!("{}@{}", package.name, package.version)),
                Registry::Pypi => ("uvx", format!("{}=={}", package.name, package.version)),
            };
            assert_eq!(p.command, Some(command), "{}", p.id);
            assert!(
                p.args.contains(&spec.as_str()),
                "{}: {:?} lacks {spec}",
                p.id,
                p.args
            );
            assert!(p.url.is_none() && p.headers.is_empty(), "{}", p.id);
        }
    }

    #[test]
    fn remote_presets_send_their_key_in_a_header() {
        let remote: Vec<_> = all()
            .iter()
            .filter(|p| p.transport == Transport::Http)
            .collect();
        assert!(!remote.is_empty());
        for p in remote {
            assert!(p.url.is_some_and(|u| u.starts_with("https://")), "{}", p.id);
            assert!(p.command.is_none() && p.package.is_none(), "{}", p.id);
            let var = p
                .api_key_env_var
                .unwrap_or_else(|| panic!("{} has no key", p.id));
            let reference = format!("${{{var}}}");
            assert!(
                p.headers
                    .iter()
                    .any(|(k, v)| *k == "Authorization" && *v == format!("Bearer {reference}")),
                "{}: {:?}",
                p.id,
                p.headers
            );
        }
    }

    #[test]
    fn presets_that_need_a_key_name_its_variable() {
        for p in all().iter().filter(|p| p.requires_api_key) {
            assert!(p.api_key_env_var.is_some(), "{}", p.id);
        }
    }

    #[test]
    fn json_has_the_spec_field_names() {
        let json = serde_json::to_value(get("zhipu-web-search").unwrap()).unwrap();
        for field in [
            "id",
            "name",
            "provider",
            "category",
            "description",
            "tools",
            "transportType",
            "command",
            "args",
            "url",
            "headers",
            "requiresApiKey",
            "apiKeyEnvVar",
            "linkedProviderIds",
            "extraEnv",
            "documentationUrl",
            "icon",
            "package",
        ] {
            assert!(json.get(field).is_some(), "missing {field}");
        }
        assert_eq!(json["category"], "search");
        assert_eq!(json["transportType"], "http");
        let vision = serde_json::to_value(get("zai-vision").unwrap()).unwrap();
        assert_eq!(
            vision["extraEnv"],
            serde_json::json!({"Z_AI_MODE": "ZHIPU"})
        );
        assert_eq!(vision["package"]["registry"], "npm");
        assert_eq!(
            serde_json::to_value(get("playwright").unwrap()).unwrap()["category"],
            "web-reading"
        );
    }

    #[test]
    fn categories_parse_from_their_names() {
        for c in Category::ALL {
            assert_eq!(c.as_str().parse::<Category>(), Ok(c));
        }
        assert!("web_reading".parse::<Category>().is_err());
        assert!(matches!(get("nope"), Err(PresetError::Unknown { .. })));
    }
}
