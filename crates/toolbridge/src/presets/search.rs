//! Finding presets by words: the Presets view's search box.

use super::{catalog::all, model::Preset};

/// The presets matching every word of `query` (case-insensitive) in their
/// id, name, provider, description or tool names, in catalogue order. An
/// empty query matches all.
pub fn search(query: &str) -> impl Iterator<Item = &'static Preset> {
    let words: Vec<String> = query.split_whitespace().map(str::to_lowercase).collect();
    all().iter().filter(move |p| {
        words.iter().all(|word| {
            [p.id, p.name, p.provider, p.description]
                .into_iter()
                .chain(p.tools.iter().copied())
                .any(|text| text.to_lowercase().contains(word.as_str()))
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(query: &str) -> Vec<&'static str> {
        search(query).map(|p| p.id).collect()
    }

    #[test]
    fn words_match_names_descriptions_and_tools() {
        assert_eq!(ids("").len(), all().len());
        assert!(ids("TAVILY").contains(&"tavily"));
        // A tool name only the memory server lists.
        assert_eq!(ids("create_entities"), ["memory"]);
        // Every word must match.
        assert!(ids("tavily create_entities").is_empty());
    }
}
