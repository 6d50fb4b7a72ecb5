//! Which configured servers came from which preset: the Presets view shows
//! "added as NAME" by each preset already in the config file.

use super::{entry::find_by_launch, model::Preset};
use crate::config::Config;

/// Each server of `config` recognised as a preset (by its package or URL,
/// see [`find_by_launch`]), with that preset, in file order.
pub fn configured(config: &Config) -> Vec<(String, &'static Preset)> {
    config
        .records()
        .iter()
        .filter_map(|record| {
            find_by_launch(
                record.command.as_deref(),
                &record.args,
                record.url.as_deref(),
            )
            .map(|preset| (record.name.clone(), preset))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn servers_made_from_presets_are_recognised_by_name() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.json");
        std::fs::write(
            &path,
            r#"{"mcpServers": {
                "mine": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory@2026"]},
                "other": {"command": "node", "args": ["server.js"]}
            }}"#,
        )
        .unwrap();
        let config = Config::load(&path).unwrap();
        let found: Vec<_> = configured(&config)
            .into_iter()
            .map(|(name, preset)| (name, preset.id))
            .collect();
        assert_eq!(found, [("mine".to_owned(), "memory")]);
    }
}
